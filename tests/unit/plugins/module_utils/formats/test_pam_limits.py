# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pam_limits resolution (formats/pam_limits.py) over pam_limits_cases.yml, and the
accounts it is given (engine/accounts.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import accounts
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import pam_limits
from ansible_collections.dbhost.tuning.tests.unit.helpers import put

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'pam_limits_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)


def _account(user):
    if 'uid' not in user:
        return None
    return accounts.Account(user['name'], user['uid'], user['gid'], user.get('groups') or {})


@pytest.mark.parametrize('case', CASES, ids=[case['id'] for case in CASES])
def test_resolution(case):
    files = [tuple(pair) for pair in case['files']]
    resolved = pam_limits.resolve(files, _account(case['user']), case['item'], name=case['user']['name'])
    assert resolved.effective() == (case['soft'], case['hard'])
    assert (resolved.stopped[0] if resolved.stopped else None) == case.get('stopped')
    for side, path in (case.get('from') or {}).items():
        assert resolved.side(side).path == path


def test_inherited_sides_and_the_cap():
    files = [('/etc/security/limits.conf', 'oracle soft memlock unlimited\n')]
    resolved = pam_limits.resolve(files, None, 'memlock', name='oracle')
    # soft set, hard inherited: the inherited hard caps the soft one
    assert resolved.effective((64, 8192)) == (8192, 8192)
    assert resolved.effective() == ('unlimited', None)
    assert pam_limits.resolve([('/f', '')], None, 'memlock', name='oracle').effective((64, 128)) == (64, 128)


def test_hard_set_alone_lowers_the_inherited_soft():
    files = [('/etc/security/limits.conf', 'oracle hard memlock 2048\n')]
    resolved = pam_limits.resolve(files, None, 'memlock', name='oracle')
    assert resolved.effective(('unlimited', 'unlimited')) == (2048, 2048)
    assert resolved.effective((1024, 'unlimited')) == (1024, 2048)


@pytest.mark.parametrize('item, text, value', [
    ('memlock', '18014398509481983', 'unlimited'),
    ('memlock', '18014398509481982', 18014398509481982),
    ('cpu', '307445734561825860', 'unlimited'),
    ('nofile', 'unlimited', 'unlimited'),
    ('nice', '-1', -1),
    ('nice', 'x', None),
    ('memlock', '-', 'unlimited'),
    ('memlock', '-5', 'unlimited'),
    ('nproc', '-1', 'unlimited'),               # strtoull negates in unsigned arithmetic: RLIM_INFINITY
    ('nproc', '-2', 18446744073709551614),
    ('nproc', '+12', 12),
    ('nproc', '99999999999999999999999', 'unlimited'),   # beyond unsigned long: strtoull gives ULLONG_MAX
    ('nproc', 'abc', None),
])
def test_values_as_pam_limits_reads_them(item, text, value):
    assert pam_limits.read_value(item, text) == value


def test_nofile_unlimited_is_nr_open():
    assert pam_limits.read_value('nofile', 'unlimited', nr_open=1048576) == 1048576


def test_account_from_the_tree(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/passwd', 'root:x:0:0::/root:/bin/sh\noracle:x:1001:1001::/home/oracle:/bin/sh\n')
    put(root, '/etc/group', 'root:x:0:\noinstall:x:1001:\ndba:x:1002:grid,oracle\nasm:x:1003:grid\n')
    account = accounts.lookup(root, 'oracle')
    assert (account.uid, account.gid, sorted(account.groups)) == (1001, 1001, ['dba', 'oinstall'])
    assert account.in_gid(1002) and not account.in_gid(1003)
    assert accounts.lookup(root, 'nobody') is None


def test_account_tables_never_read_out_of_root(tmp_path):
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'passwd').write_text('oracle:x:1001:1001::/:/bin/sh\n')
    root = tmp_path / 'root'
    (root / 'etc').mkdir(parents=True)
    os.symlink(str(outside / 'passwd'), str(root / 'etc' / 'passwd'))
    assert accounts.lookup(str(root), 'oracle') is None


def test_account_of_the_running_system():
    account = accounts.lookup('/', 'root')
    assert account.uid == 0 and account.gid == 0 and 'root' in account.groups
