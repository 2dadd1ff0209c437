# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the shared_memory role's sysctl keys live beside the kernel_params role's.

The shared_memory role persists its keys in /etc/sysctl.d/90-dbhost-tuning-shm.conf,
the kernel_params role in /etc/sysctl.d/90-dbhost-tuning.conf.  These tests pin down
the engine behaviour that choice relies on: one file edited by two owners keeps the
other's keys, and a different value for the same key in the other file is reported
as shadowed, naming that file, instead of two roles rewriting one line in turn.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan

SHM_FILE = '/etc/sysctl.d/90-dbhost-tuning-shm.conf'
PROFILE_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'


def _root(tmp_path, live):
    for key, value in live.items():
        path = tmp_path / 'proc' / 'sys' / key.replace('.', '/')
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(u'%s\n' % value)
    (tmp_path / 'etc' / 'sysctl.d').mkdir(parents=True, exist_ok=True)
    return str(tmp_path)


def _plan(root, params, file):
    return make_plan('kernel_params', dict(params=params, file=file, root=root, mode='exact'))


def _run(root, params, file):
    return _plan(root, params, file).run(None)


def _read(root, path):
    with open(os.path.join(root, path.lstrip('/'))) as handle:
        return handle.read()


LIVE = {'kernel.shmmax': 1, 'kernel.shmall': 1, 'kernel.shmmni': 4096, 'vm.hugetlb_shm_group': 0,
        'kernel.sem': '32000 1024000000 500 32000', 'fs.aio-max-nr': 65536}


def test_two_owners_of_one_file_keep_each_others_keys(tmp_path):
    root = _root(tmp_path, LIVE)
    _run(root, {'kernel.sem': '250 32000 100 128', 'fs.aio-max-nr': 1048576}, PROFILE_FILE)
    _run(root, {'kernel.shmmax': 4294967296, 'kernel.shmall': 1059328}, PROFILE_FILE)
    text = _read(root, PROFILE_FILE)
    assert 'kernel.sem = 250 32000 100 128\n' in text
    assert 'fs.aio-max-nr = 1048576\n' in text
    assert 'kernel.shmmax = 4294967296\n' in text
    # Each owner's second run changes nothing.
    assert not _run(root, {'kernel.sem': '250 32000 100 128', 'fs.aio-max-nr': 1048576}, PROFILE_FILE).changed
    assert not _run(root, {'kernel.shmmax': 4294967296, 'kernel.shmall': 1059328}, PROFILE_FILE).changed


def test_own_file_for_shm_keys_is_idempotent_beside_the_profile(tmp_path):
    root = _root(tmp_path, LIVE)
    _run(root, {'kernel.shmmni': 8192, 'fs.aio-max-nr': 1048576}, PROFILE_FILE)
    shm = {'kernel.shmmax': 4294967296, 'kernel.shmall': 1059328, 'kernel.shmmni': 8192,
           'vm.hugetlb_shm_group': 54321}
    first = _run(root, shm, SHM_FILE)
    assert first.changed
    second = _run(root, shm, SHM_FILE)
    assert not second.changed
    assert [s.status for s in second.settings] == ['ok'] * 4
    # The same value in both files is not a conflict.
    assert 'kernel.shmmni = 8192\n' in _read(root, PROFILE_FILE)


def test_a_different_value_in_the_profile_file_is_reported_shadowed(tmp_path):
    root = _root(tmp_path, LIVE)
    # 90-dbhost-tuning.conf sorts after 90-dbhost-tuning-shm.conf ('.' > '-'), so it wins at boot.
    _run(root, {'kernel.shmmni': 8192}, PROFILE_FILE)
    plan = _plan(root, {'kernel.shmmni': 4096}, SHM_FILE)
    result = plan.run(None)
    record = result.settings[0]
    assert record.status == 'shadowed'
    assert PROFILE_FILE in record.detail
    assert 'shadowed at boot' in plan.failure_message(result)
