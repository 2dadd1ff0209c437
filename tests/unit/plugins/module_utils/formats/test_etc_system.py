# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import etc_system

FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sysctl', 'solaris-system')


def sample():
    with open(FIXTURE) as handle:
        return handle.read()


def test_parse_sees_set_lines_only():
    values = etc_system.parse(sample())
    assert {k: v for k, (v, dummy) in values.items()} == {
        'shmsys:shminfo_shmmax': '4294967295',
        'semsys:seminfo_semmni': '100',
        'noexec_user_stack': '1',
    }


def test_round_trip_is_byte_identical():
    assert etc_system.render(sample(), {}) == sample()


def test_render_changes_only_the_named_lines():
    text = sample()
    after = etc_system.render(text, {'semsys:seminfo_semmni': '1024', 'shmsys:shminfo_shmmni': '256'})
    before_lines, after_lines = text.splitlines(), after.splitlines()
    assert after_lines[:len(before_lines)] == [
        'set semsys:seminfo_semmni = 1024' if line == 'set semsys:seminfo_semmni = 100' else line
        for line in before_lines]
    assert after_lines[len(before_lines):] == ['set shmsys:shminfo_shmmni=256']


def test_render_removes_and_keeps_bit_operations():
    after = etc_system.render(sample(), {'noexec_user_stack': None, 'rlim_fd_cur': '1024'})
    assert 'set noexec_user_stack=1' not in after
    assert 'set rlim_fd_cur | 0x100' in after  # or-ing lines are never rewritten
    assert after.endswith('set rlim_fd_cur=1024\n')


@pytest.mark.parametrize('value, normalized', [('0x10', '16'), ('010', '8'), ('16', '16'), ('"abc"', '"abc"')])
def test_values_compare_by_number(value, normalized):
    assert etc_system.normalize_value(value) == normalized


@pytest.mark.parametrize('name', ['shm sys', '../x', 'a:b:c', '', 'set x'])
def test_bad_names(name):
    with pytest.raises(etc_system.EtcSystemNameError):
        etc_system.validate_name(name)


# ------------------------------------------------------------------ issue 45
def test_set_keyword_is_case_insensitive():
    """system(5): ``SET`` and ``Set`` are set lines too; the symbol keeps its case."""
    text = '* tuned by hand\nSET shmsys:shminfo_shmmni = 100\nSet noexec_user_stack=1\n'
    assert etc_system.parse(text) == {'shmsys:shminfo_shmmni': ('100', 2), 'noexec_user_stack': ('1', 3)}
    assert etc_system.render(text, {'shmsys:shminfo_shmmni': '256'}) == \
        '* tuned by hand\nSET shmsys:shminfo_shmmni = 256\nSet noexec_user_stack=1\n'
    # One line per key, not a second "set" line that a later reader would have to reconcile.
    assert etc_system.render(text, {'noexec_user_stack': None}) == '* tuned by hand\nSET shmsys:shminfo_shmmni = 100\n'


@pytest.mark.parametrize('path, has_system_d, message', [
    ('/etc/system', False, None),
    ('/etc/system', True, None),
    ('/etc/system.d/dbhost-tuning', True, None),
    ('/etc/system.d/dbhost-tuning', False, 'this release has no /etc/system.d'),
    ('/etc/system.d/.hidden', True, 'plain file name'),
    ('/etc/system.d/sub/file', True, 'not read at boot'),
    ('/etc/sysctl.conf', True, 'not read at boot'),
])
def test_system_d_files_where_the_release_has_them(path, has_system_d, message):
    reason = etc_system.check_file(path, has_system_d)
    assert (reason is None) if message is None else (message in reason)
