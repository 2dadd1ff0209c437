# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs_attr on a host that cannot have an attribute: unsupported, with the reason.

An attribute the kernel or device does not have (no such file under /sys), and /sys mounted
read-only (a container's) or an attribute the kernel shows read-only, are never a failure:
the live side is left alone, the tmpfiles line is still persisted (systemd-tmpfiles writes a
``w`` line only where the file exists), and the record says both.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import sysfs_attr
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs as _sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sysfs_attr as _sysfs_attr
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

THP = '/sys/kernel/mm/transparent_hugepage/enabled'
KSM = '/sys/kernel/mm/ksm/run'
RQ = '/sys/block/sda/queue/rq_affinity'
OURS = '/etc/tmpfiles.d/90-dbhost-tuning.conf'
HEADER = _sysfs_attr.HEADER + '\n'

pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, THP, 'always [madvise] never\n')
    put(base, RQ, '1\n')
    os.makedirs(os.path.join(base, 'etc', 'tmpfiles.d'))
    return base


def sys_tree(root):
    found = []
    for folder, dirs, names in os.walk(os.path.join(root, 'sys')):
        found.extend(os.path.relpath(os.path.join(folder, name), root) for name in dirs + names)
    return sorted(found)


def test_missing_attribute_is_unsupported_persisted_and_idempotent(root, run_module):
    attributes = {KSM: 0, RQ: 2}
    before, live_before = digest(root), sys_tree(root)
    check = run_module(sysfs_attr, {'attributes': attributes, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before and check['changed'] is True and not check.get('failed')
    record = records(check)[KSM]
    assert (record['status'], record['desired'], record['live']) == ('unsupported', '0', None)
    assert record['detail'] == ('no %s on this kernel or hardware (the feature, driver or device is not there); '
                                'not set live; would write it to %s for a boot where it exists and can be set'
                                % (KSM, OURS))
    assert records(check)[RQ]['status'] == 'drift'

    applied = run_module(sysfs_attr, {'attributes': attributes, 'root': root})
    assert not applied.get('failed') and applied['changed'] is True
    assert records(applied)[KSM]['status'] == 'unsupported'
    assert records(applied)[KSM]['detail'].endswith('not set live; wrote it to %s for a boot where it exists and '
                                                    'can be set' % OURS)
    assert sys_tree(root) == live_before and read(root, RQ) == '2\n'
    assert read(root, OURS) == HEADER + 'w %s - - - - 2\nw %s - - - - 0\n' % (RQ, KSM)

    after = digest(root)
    again = run_module(sysfs_attr, {'attributes': attributes, 'root': root})
    assert again['changed'] is False and digest(root) == after
    assert records(again)[KSM]['status'] == 'unsupported'
    assert records(again)[KSM]['detail'].endswith('not set live; persisted by %s' % OURS)
    assert records(again)[RQ]['status'] == 'ok'


def test_missing_attribute_without_persist_changes_nothing(root, run_module):
    before = digest(root)
    result = run_module(sysfs_attr, {'attributes': {KSM: 1}, 'root': root, 'persist': False})
    assert result['changed'] is False and digest(root) == before
    assert records(result)[KSM]['detail'].endswith('not set live; not persisted (persist=false)')


@pytest.mark.parametrize('how', ['mount', 'mode'])
def test_read_only_sys_is_unsupported(root, monkeypatch, run_module, how):
    if how == 'mount':
        sys_root = os.path.join(root, 'sys')
        monkeypatch.setattr(_sysfs, 'mounted_read_only', lambda path: path.startswith(sys_root))
        reason = 'read-only /sys (mounted read-only, as in a container)'
    else:
        os.chmod(os.path.join(root, THP.lstrip('/')), 0o444)
        reason = "%s is read-only in this kernel (mode 0444: a container's namespace?)" % THP
    before = digest(root)
    check = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root}, check_mode=True)
    assert digest(root) == before
    record = records(check)[THP]
    assert (record['status'], record['live']) == ('unsupported', 'madvise')
    assert record['detail'].startswith(reason + '; not set live; would write it to')
    applied = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root})
    assert not applied.get('failed') and records(applied)[THP]['status'] == 'unsupported'
    assert read(root, THP) == 'always [madvise] never\n'
    assert read(root, OURS) == HEADER + 'w %s - - - - never\n' % THP
    # the value it already has needs no write: ok, read-only or not
    ok = run_module(sysfs_attr, {'attributes': {THP: 'madvise'}, 'root': root, 'persist': False}, check_mode=True)
    assert records(ok)[THP]['status'] == 'ok'


def test_write_refused_with_erofs_is_unsupported(root, monkeypatch, run_module):
    def refuse(path, value):
        raise _sysfs.SysfsError(path, value, OSError(30, 'Read-only file system'))
    monkeypatch.setattr(_sysfs, 'write_value', refuse)
    result = run_module(sysfs_attr, {'attributes': {RQ: 2}, 'root': root})
    assert not result.get('failed')
    assert records(result)[RQ]['status'] == 'unsupported'
    assert records(result)[RQ]['detail'].startswith('read-only /sys (Read-only file system); not set live; wrote it to')
