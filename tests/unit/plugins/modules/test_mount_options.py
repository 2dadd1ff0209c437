# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mount_options main(): arguments, the result shape, check and diff mode, refusals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import mount_options
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils', 'plans',
                        'mounts', 'fixtures')


def fixture_text(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


FSTAB = fixture_text('fstab')
VFSTAB = fixture_text('vfstab')


@pytest.fixture(name='tree')
def tree_fixture(tmp_path, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'Linux')
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'fstab').write_text(FSTAB)
    return str(tmp_path)


def read(tree, name):
    with open(os.path.join(tree, name)) as handle:
        return handle.read()


def test_single_path(run_module, tree):
    result = run_module(mount_options, {'path': '/u03', 'present': ['noatime'], 'root': tree}, diff=True)
    assert result['changed'] is True
    assert result['settings'] == [{
        'name': '/u03 noatime', 'target': '/u03', 'desired': 'noatime', 'live': None, 'persisted': 'noatime',
        'status': 'changed', 'detail': 'edited /etc/fstab line 16; live state not read (root is not /)',
        'comparison': 'exact', 'source': 'task option: mount_options.present and absent', 'reason': 'was: not persisted'}]
    assert result['restart_required'] is False and result['reboot_required'] is False
    assert result['diff'][0]['before'] == FSTAB
    assert result['diff'][0]['after'] == read(tree, 'etc/fstab')
    assert 'rw,noatime,data=ordered' in read(tree, 'etc/fstab')
    assert result['mounts'][0]['remount_command'] is None
    again = run_module(mount_options, {'path': '/u03', 'present': ['noatime'], 'root': tree})
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok']
    assert 'diff' not in again


def test_mounts_list_in_one_call(run_module, tree):
    result = run_module(mount_options, {'root': tree, 'mounts': [
        {'path': '/u02', 'present': ['noatime'], 'absent': ['nofail']},
        {'path': '/u04', 'present': ['mincache=direct', 'convosync=direct']},
    ]})
    assert [(s['target'], s['name'], s['status']) for s in result['settings']] == [
        ('/u02', '/u02 noatime', 'changed'), ('/u02', '/u02 nofail', 'changed'),
        ('/u04', '/u04 mincache', 'changed'), ('/u04', '/u04 convosync', 'changed')]
    text = read(tree, 'etc/fstab')
    assert 'LABEL=ORADATA\t/u02\txfs\tdefaults,x-systemd.device-timeout=30,noatime\t0\t2\n' in text
    assert '/dev/vx/dsk/oradg/archvol\t/u04\tvxfs\tmincache=direct,convosync=direct\t0 2\n' in text


def test_check_mode_writes_nothing(run_module, tree):
    result = run_module(mount_options, {'path': '/u03', 'present': ['noatime'], 'root': tree},
                        check_mode=True, diff=True)
    assert result['changed'] is True
    assert [s['status'] for s in result['settings']] == ['drift']
    assert read(tree, 'etc/fstab') == FSTAB
    assert 'rw,noatime,data=ordered' in result['diff'][0]['after']


def test_sunos_vfstab_default_file(run_module, tmp_path, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'vfstab').write_text(VFSTAB)
    result = run_module(mount_options, {'path': '/u03', 'present': ['forcedirectio'], 'root': str(tmp_path)})
    assert result['settings'][0]['status'] == 'changed'
    lines = VFSTAB.splitlines(True)
    lines[10] = '/dev/dsk/c1t1d0s0\t/dev/rdsk/c1t1d0s0\t/u03\tufs\t2\tyes\tforcedirectio\n'
    assert read(str(tmp_path), 'etc/vfstab') == ''.join(lines)


def test_backup(run_module, tree):
    result = run_module(mount_options, {'path': '/u03', 'present': ['noatime'], 'root': tree, 'backup': True})
    assert os.path.isfile(result['backup_file'])
    with open(result['backup_file']) as handle:
        assert handle.read() == FSTAB


@pytest.mark.parametrize('args, message', [
    ({'path': '/u03', 'mounts': [{'path': '/u02', 'present': ['noatime']}]}, 'mutually exclusive'),
    ({'present': ['noatime']}, 'one of the following is required: path, mounts'),
    ({'mounts': [{'path': '/u02', 'present': ['noatime']}], 'present': ['nodev']},
     'present and absent go inside each item of mounts'),
    ({'path': '/u03', 'present': ['noatime,nodev']}, "option 'noatime,nodev' contains a comma"),
    ({'path': '/u09', 'present': ['noatime']}, 'mount point /u09 is not in /etc/fstab'),
    ({'path': '/u03', 'present': ['ro', 'rw']}, "present asks for 'ro' and 'rw'"),
    ({'mounts': [{'path': '/u02', 'present': ['noatime'], 'state': 'x'}]}, 'state'),
])
def test_bad_input(run_module, tree, args, message):
    args = dict(args, root=tree)
    result = run_module(mount_options, args)
    assert result['failed'] is True
    assert message in result['msg']
    assert read(tree, 'etc/fstab') == FSTAB
