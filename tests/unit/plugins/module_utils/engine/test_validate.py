# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError

SPACES_AND_SEPARATORS = [u'\n', u'\r', u'\t', u'\x00', u'\x1b', u'\x85', u'\xa0', u'\u2028', u'\u2029',
                         u'\u200b', u'\ufeff', u'\u3000', u'\x0b', u'\x0c']


@pytest.mark.parametrize('char', SPACES_AND_SEPARATORS)
def test_names_refuse_every_space_control_and_separator(char):
    with pytest.raises(InputError) as caught:
        validate.check_name(u'oracle' + char, 'limits[0].domain')
    assert str(caught.value).startswith('limits[0].domain: ')


@pytest.mark.parametrize('char', SPACES_AND_SEPARATORS + [u' '])
def test_a_trailing_character_is_caught_too(char):
    with pytest.raises(InputError):
        validate.check_name(u'pg' + char, 'name')


def test_a_refused_name_is_shown_in_the_message():
    # a name is no secret: the admin sees which one (a secret option shows 'the value')
    with pytest.raises(InputError) as caught:
        validate.check_name(u'ora cle', 'limits[0].domain')
    assert str(caught.value).startswith("limits[0].domain: 'ora cle' contains ")


def test_names_keep_letters_of_any_script():
    assert validate.check_name(u'bühne-ø_1.conf', 'name') == u'bühne-ø_1.conf'


@pytest.mark.parametrize('char', [u'\n', u'\x00', u'\x85', u'\u2028', u'\u2029', u'\u200b'])
def test_text_refuses_controls_and_line_separators(char):
    with pytest.raises(InputError) as caught:
        validate.check_text(u'core' + char + u'x', 'params.kernel.core_pattern')
    assert 'params.kernel.core_pattern' in str(caught.value)


def test_text_keeps_spaces_and_tabs():
    assert validate.check_text(u'250 32000\t100 128', 'params') == u'250 32000\t100 128'
    assert validate.check_text(u'a\xa0b', 'params') == u'a\xa0b'


def test_paths_allow_the_ascii_space_only():
    assert validate.check_path('/mnt/Media Library', 'path') == '/mnt/Media Library'
    for char in (u'\xa0', u'\t', u'\n', u'\u2028'):
        with pytest.raises(InputError):
            validate.check_path(u'/mnt/Media' + char + u'Library', 'path')


def test_messages_say_which_character():
    with pytest.raises(InputError) as caught:
        validate.check_name(u'x\xa0', 'name')
    assert 'U+00A0 (NO-BREAK SPACE)' in str(caught.value)
    with pytest.raises(InputError) as caught:
        validate.check_name(u'x\n', 'name')
    assert 'a newline' in str(caught.value)
    with pytest.raises(InputError) as caught:
        validate.check_text(u'x\x85', 'name')
    assert 'U+0085' in str(caught.value)


def test_secret_values_are_not_shown():
    with pytest.raises(InputError) as caught:
        validate.check_tree(u'hunter2\x00', 'login_password', secret=True)
    assert 'hunter2' not in str(caught.value) and 'login_password' in str(caught.value)


def test_root_must_be_an_absolute_existing_folder(tmp_path):
    folder = str(tmp_path)
    assert validate.check_root(folder) == folder
    assert validate.check_root(None) == '/'
    plain = os.path.join(folder, 'file')
    with open(plain, 'w') as handle:
        handle.write('x')
    for bad, why in (('relative/tree', 'not an absolute path'), (os.path.join(folder, 'missing'), 'does not exist'),
                     (plain, 'not a folder')):
        with pytest.raises(InputError) as caught:
            validate.check_root(bad)
        assert str(caught.value).startswith('root: ') and why in str(caught.value)


def test_an_empty_root_is_refused_not_taken_for_the_running_system():
    # An unset variable gives "" (root: "{{ image_root }}"); acting on / instead would tune the host.
    with pytest.raises(InputError) as caught:
        validate.check_root('')
    assert str(caught.value) == 'root: the empty string is not a folder (give / for the running system)'
    with pytest.raises(InputError) as caught:
        validate.check_params({'root': ''}, {'root': {'type': 'path'}})
    assert 'empty string' in str(caught.value)


def test_check_params_checks_each_path_of_a_list_of_paths():
    # db_effect's direct_io_paths: a list whose elements are paths, each named by its index
    spec = {'direct_io_paths': {'type': 'list', 'elements': 'path'}, 'names': {'type': 'list', 'elements': 'str'}}
    validate.check_params({'direct_io_paths': ['/u01', '/u 02']}, spec)
    with pytest.raises(InputError, match=r'direct_io_paths\[1\]: .*NO-BREAK SPACE'):
        validate.check_params({'direct_io_paths': ['/u01', u'/u\xa002']}, spec)
    validate.check_params({'names': [u'a\xa0b']}, spec)   # text, not a path: a no-break space is allowed


def test_check_params_walks_suboptions_and_paths():
    spec = {'mounts': {'type': 'list', 'elements': 'dict', 'options': {'path': {'type': 'path'},
                                                                       'present': {'type': 'list'}}},
            'login_password': {'type': 'str', 'no_log': True}}
    validate.check_params({'mounts': [{'path': '/u 01', 'present': ['noatime']}]}, spec)
    with pytest.raises(InputError) as caught:
        validate.check_params({'mounts': [{'path': u'/u\xa001', 'present': []}]}, spec)
    assert str(caught.value).startswith('mounts[0].path: ')
    with pytest.raises(InputError) as caught:
        validate.check_params({'mounts': [{'path': '/u01', 'present': [u'noatime\u2028']}]}, spec)
    assert str(caught.value).startswith('mounts[0].present[0]: ')
    with pytest.raises(InputError) as caught:
        validate.check_params({'login_password': 'se\ncret'}, spec)
    assert 'se\ncret' not in str(caught.value)


def test_dict_keys_refuse_tabs_and_controls():
    with pytest.raises(InputError) as caught:
        validate.check_tree({u'kernel.shmmni\t': 1}, 'params')
    assert 'params' in str(caught.value) and 'a tab' in str(caught.value)


# ------------------------------------------------------------------ CPU lists from kernel files
def _system(tmp_path, online='0-3', node_cpus='0-3'):
    base = tmp_path / 'sys' / 'devices' / 'system'
    (base / 'cpu').mkdir(parents=True)
    (base / 'cpu' / 'online').write_text(online + '\n')
    (base / 'node' / 'node0').mkdir(parents=True)
    (base / 'node' / 'node0' / 'cpulist').write_text(node_cpus + '\n')
    return str(tmp_path)


@pytest.mark.parametrize('online, node_cpus, bad_file', [
    ('0-3,x', '0-3', 'cpu/online'),
    ('0-3', '3-0', 'node/node0/cpulist'),
    ('0-3\n', '0-3;4', 'node/node0/cpulist'),
    ('0-99999999999', '0-3', 'cpu/online'),
])
def test_malformed_kernel_cpu_list_is_an_input_error_naming_the_file(tmp_path, online, node_cpus, bad_file):
    root = _system(tmp_path, online, node_cpus)
    with pytest.raises(numa.KernelFileError) as caught:
        numa.read_topology(root)
    assert isinstance(caught.value, InputError)
    assert bad_file in str(caught.value)


def test_cpu_numbers_stop_at_65535():
    # above any kernel's CONFIG_NR_CPUS: a bigger number is a typo, not a range to expand
    assert numa.parse_cpu_list('65535') == [65535]
    with pytest.raises(numa.CpuListError, match='beyond any kernel'):
        numa.parse_cpu_list('65536')


@pytest.mark.parametrize('value', [float('inf'), float('-inf'), float('nan'), 'inf', '-inf', '+INF', 'nan', ' NaN ',
                                   '1e309', '-1e309', '1e309MB', '1_0e400kB', '.5e999'])
def test_a_number_that_is_not_finite_is_refused_naming_the_option(value):
    with pytest.raises(InputError, match=r'^params\.work_mem: .* is not a finite number'):
        validate.check_params({'params': {'work_mem': value}}, {'params': {'type': 'dict'}})


@pytest.mark.parametrize('value', [1e308, '1e308', '8MB', '-1', 'infinity', 'unlimited', 'information', '0x10', 'na n',
                                   'SETALL', 5, True])
def test_finite_numbers_and_words_pass(value):
    assert validate.check_finite(value, 'params.x') == value
    validate.check_params({'params': {'x': value}}, {'params': {'type': 'dict'}})


def test_a_secret_non_finite_value_is_not_shown():
    with pytest.raises(InputError) as raised:
        validate.check_params({'password': 'nan'}, {'password': {'no_log': True}})
    assert 'nan' not in str(raised.value).split(':', 1)[1].replace('finite number', '')
