# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every true/false role variable means what it says: "false", "no", 0 and false compile alike,
and a word that is not a boolean ("maybe") is refused, naming the variable.

The list of variables is read from the roles' meta/argument_specs.yml, so a new bool
variable is tested here (or fails the coverage test) without anyone remembering to.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import flag, to_flag
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', '..'))
GIB = 1024 ** 3
HUGE_2M = 2 * 1024 * 1024
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': HUGE_2M},
         'hugepages': {HUGE_2M: {'total': 0}}, 'mounts': [],
         'numa': {'nodes': {'0': {'cpus': '0-1'}, '1': {'cpus': '2-3'}}}}
FALSE_SPELLINGS = [False, 'false', 'False', 'no', 'NO', 'off', 'n', 0, '0']
TRUE_SPELLINGS = [True, 'true', 'TRUE', 'yes', 'on', 'y', 1, '1', ' True ']
NOT_BOOLEANS = ['maybe', '', 'enabled', 2, [], {}]

# Flags whose value changes nothing on Linux (the compiled state is the same for true and false).
LINUX_NO_EFFECT = {'shared_memory_etc_system'}


def bool_variables():
    """(role, path) of every bool option of every role: 'var' or 'var[].suboption'."""
    found = []
    for spec_file in sorted(glob.glob(os.path.join(CHECKOUT, 'roles', '*', 'meta', 'argument_specs.yml'))):
        role = spec_file.split(os.sep)[-3]
        with open(spec_file) as handle:
            options = yaml.safe_load(handle)['argument_specs']['main']['options']
        for name, spec in sorted(options.items()):
            if spec.get('type') == 'bool':
                found.append((role, name))
            for sub, sub_spec in sorted((spec.get('options') or {}).items()):
                if sub_spec.get('type') == 'bool':
                    found.append((role, '%s[].%s' % (name, sub)))
    return found


@pytest.fixture
def root(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'passwd').write_text(u'oracle:x:54321:54322::/home/oracle:/bin/sh\n')
    (tmp_path / 'etc' / 'group').write_text(u'dba:x:54322:\n')
    return str(tmp_path)


def base_inputs(root):
    """Inputs of every role under which each flag matters (a service to restart, a database, a mount)."""
    return {
        'kernel_params': {'kernel_params_root': root},
        'shared_memory': {'shared_memory_size': '40%', 'shared_memory_root': root, 'shared_memory_service': 'oracle-db',
                          'shared_memory_comparison': 'exact'},
        'block_queue': {'block_queue_root': root, 'block_queue_devices': [{'name': 'sd*', 'rotational': True}]},
        'direct_io': {'direct_io_root': root,
                      'direct_io_mounts': [{'path': '/u01', 'fstype': 'ext4', 'options': ['noatime']}],
                      'direct_io_databases': [{'engine': 'postgresql', 'path': '/etc/pg.conf', 'service': 'postgresql',
                                               'params': {'wal_sync_method': 'fdatasync'}}]},
        'processor_sets': {'processor_sets_root': root, 'processor_sets_cpus': '0-1', 'processor_sets_mems': '0',
                           'processor_sets_service': 'oracle-db'},
    }


def with_value(inputs, role, path, value):
    if '[].' in path:
        name, sub = path.split('[].')
        inputs[role][name][0][sub] = value
    else:
        inputs[role][path] = value
    return inputs


def compiled(root, role, path, value):
    """The whole compiled state (records, calls with their arguments, restarts) as comparable text."""
    state = desired.compile_state(list(desired.ROLES), with_defaults(with_value(base_inputs(root), role, path, value)), dict(FACTS))
    calls = [(call.kind, call.owner, call.label, sorted(call.kwargs.items())) for call in state.calls]
    return repr((state.as_list(), calls, state.restart_services, state.sizing))


def test_every_bool_variable_is_covered():
    names = [path for role, path in bool_variables()]
    assert 'kernel_params_apply' in names and 'block_queue_devices[].rotational' in names
    assert 'direct_io_databases[].read_live' in names and len(names) >= 29


@pytest.mark.parametrize('role, path', bool_variables())
def test_false_spellings_mean_false_and_true_ones_true(root, role, path):
    false_state = compiled(root, role, path, False)
    true_state = compiled(root, role, path, True)
    if path not in LINUX_NO_EFFECT:
        assert false_state != true_state, '%s changes nothing in the compiled state' % path
    for spelling in FALSE_SPELLINGS:
        assert compiled(root, role, path, spelling) == false_state, '%s=%r is not false' % (path, spelling)
    for spelling in TRUE_SPELLINGS:
        assert compiled(root, role, path, spelling) == true_state, '%s=%r is not true' % (path, spelling)


@pytest.mark.parametrize('role, path', bool_variables())
def test_a_word_that_is_not_a_boolean_is_refused_naming_the_variable(root, role, path):
    with pytest.raises(InputError) as error:
        compiled(root, role, path, 'maybe')
    shown = path.replace('[].', '[0].')
    assert shown in str(error.value) and "'maybe'" in str(error.value)


@pytest.mark.parametrize('value', NOT_BOOLEANS)
def test_to_flag_refuses_what_ansible_refuses(value):
    with pytest.raises(InputError) as error:
        to_flag(value, 'kernel_params_apply')
    assert 'kernel_params_apply' in str(error.value)


def test_unset_is_refused_not_given_a_second_default():
    # The action plugin sends every variable with a default (a null taking it): the compile
    # step never writes one of its own, so a missing or null flag is an error naming it.
    with pytest.raises(InputError, match='kernel_params_apply: not given'):
        flag({}, 'kernel_params_apply')
    with pytest.raises(InputError, match='kernel_params_apply: None is not a boolean'):
        flag({'kernel_params_apply': None}, 'kernel_params_apply')
    assert flag({'kernel_params_apply': 'no'}, 'kernel_params_apply') is False


def test_kernel_params_apply_false_as_a_string_is_no_live_write(root):
    state = desired.compile_state(['kernel_params'], with_defaults({'kernel_params': {
        'kernel_params_root': root, 'kernel_params_apply': 'false',
        'kernel_params_settings': {'kernel.sem': '250 32000 100 200'}}}), dict(FACTS))
    (call,) = state.calls
    assert call.kwargs['apply'] is False and call.kwargs['persist'] is True
