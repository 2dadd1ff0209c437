# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs_attr against fake /sys trees: choices, persistence through tmpfiles.d, check mode."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import sysfs_attr
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs as _sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sysfs_attr as _sysfs_attr
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

THP = '/sys/kernel/mm/transparent_hugepage/enabled'
DEFRAG = '/sys/kernel/mm/transparent_hugepage/defrag'
RQ = '/sys/block/sda/queue/rq_affinity'
OURS = '/etc/tmpfiles.d/90-dbhost-tuning.conf'
HEADER = _sysfs_attr.HEADER + '\n'

TREE = {
    THP: 'always [madvise] never',
    DEFRAG: 'always defer defer+madvise [madvise] never',
    RQ: '1',
    '/sys/block/sda/queue/read_ahead_kb': '128',
}


pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path, monkeypatch):
    base = str(tmp_path)
    for path, value in TREE.items():
        put(base, path, value + '\n')
    os.makedirs(os.path.join(base, 'etc', 'tmpfiles.d'))

    # A fake sysfs file keeps whatever is written; the kernel instead keeps the
    # bracketed list and moves the brackets.  This seam does what the kernel does.
    real_write = _sysfs.write_value

    def kernel_write(path, value):
        raw = _sysfs.read_raw(path)
        choices, dummy = _sysfs.parse_choice(raw)
        if choices is None:
            return real_write(path, value)
        if value not in choices:
            raise _sysfs.SysfsError(path, value, OSError(22, 'Invalid argument'))
        with open(path, 'w') as handle:
            handle.write(' '.join('[%s]' % c if c == value else c for c in choices) + '\n')
    monkeypatch.setattr(_sysfs, 'write_value', kernel_write)
    return base


def test_check_mode_changes_nothing_and_reports_drift(root, run_module):
    before = digest(root)
    result = run_module(sysfs_attr, {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never', RQ: 2},
                                     'root': root}, check_mode=True, diff=True)
    assert digest(root) == before
    assert result['changed'] is True
    rec = records(result)
    assert rec[THP]['status'] == 'drift'
    assert rec[THP]['live'] == 'madvise'
    assert rec[THP]['persisted'] is None
    assert 'choices: always madvise never' in rec[THP]['detail']
    assert rec[RQ]['live'] == '1' and rec[RQ]['desired'] == '2'
    assert result['diff'][0]['after'] == HEADER + 'w %s - - - - 2\nw %s - - - - never\n' % (RQ, THP)


def test_apply_then_idempotent(root, run_module):
    args = {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never', RQ: 2}, 'root': root}
    result = run_module(sysfs_attr, args)
    assert result['changed'] is True
    assert read(root, THP) == 'always madvise [never]\n'
    assert read(root, RQ) == '2\n'
    assert read(root, OURS) == HEADER + 'w %s - - - - 2\nw %s - - - - never\n' % (RQ, THP)
    rec = records(result)
    assert rec[THP]['status'] == 'changed' and rec[THP]['live'] == 'never' and rec[THP]['persisted'] == 'never'
    again = run_module(sysfs_attr, args)
    assert again['changed'] is False
    assert [s['status'] for s in again['settings']] == ['ok', 'ok']


def test_lost_at_reboot_is_drift(root, run_module):
    put(root, THP, 'always madvise [never]\n')
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root}, check_mode=True)
    rec = records(result)[THP]
    assert rec['status'] == 'drift' and rec['live'] == 'never' and rec['persisted'] is None


def test_keeps_comments_and_other_lines(root, run_module):
    put(root, OURS, '# mine\nd /run/db 0755 root root -\nw %s - - - - always\n' % THP)
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root}, diff=True)
    assert read(root, OURS) == '# mine\nd /run/db 0755 root root -\nw %s - - - - never\n' % THP
    assert result['diff'][0]['before_header'] == OURS


def test_earlier_file_shadows_and_fails(root, run_module):
    put(root, '/usr/lib/tmpfiles.d/10-thp.conf', 'w %s - - - - always\n' % THP)
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root})
    assert result['failed'] is True
    assert 'shadowed at boot' in result['msg']
    rec = records(result)[THP]
    assert rec['status'] == 'shadowed' and rec['persisted'] == 'always'
    assert '/usr/lib/tmpfiles.d/10-thp.conf' in rec['detail']
    quiet = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root, 'fail_on_shadowed': False})
    assert 'failed' not in quiet and records(quiet)[THP]['status'] == 'shadowed'


def test_persisted_by_other_file_with_same_value_is_ok(root, run_module):
    put(root, '/usr/lib/tmpfiles.d/10-thp.conf', 'w %s - - - - never\n' % THP)
    put(root, THP, 'always madvise [never]\n')
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root})
    rec = records(result)[THP]
    assert result['changed'] is False and rec['status'] == 'ok'
    assert 'persisted by /usr/lib/tmpfiles.d/10-thp.conf' in rec['detail']
    assert not os.path.exists(os.path.join(root, OURS.lstrip('/')))


def test_numbers_compare_as_numbers(root, run_module):
    put(root, RQ, '01\n')
    put(root, OURS, 'w %s - - - - 1\n' % RQ)
    result = run_module(sysfs_attr, {'attributes': {RQ: 1}, 'root': root})
    assert records(result)[RQ]['status'] == 'ok' and result['changed'] is False


def test_apply_false_and_persist_false(root, run_module):
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root, 'apply': False})
    assert read(root, THP) == 'always [madvise] never\n'
    rec = records(result)[THP]
    assert rec['status'] == 'changed' and 'apply=false' in rec['detail']
    result = run_module(sysfs_attr, {'attributes': {DEFRAG: 'never'}, 'root': root, 'persist': False})
    assert read(root, DEFRAG) == 'always defer defer+madvise madvise [never]\n'
    assert 'w %s' % DEFRAG not in read(root, OURS)
    assert records(result)[DEFRAG]['target'] is None


def test_kernel_refusal_is_failed_and_not_persisted(root, run_module, monkeypatch):
    def refuse(path, value):
        raise _sysfs.SysfsError(path, value, OSError(22, 'Invalid argument'))
    monkeypatch.setattr(_sysfs, 'write_value', refuse)
    result = run_module(sysfs_attr, {'attributes': {RQ: 7, THP: 'never'}, 'root': root})
    assert result['failed'] is True and RQ in result['msg']
    assert records(result)[RQ]['status'] == 'failed'
    assert not os.path.exists(os.path.join(root, OURS.lstrip('/')))


def test_kernel_reads_back_another_value_is_failed(root, run_module, monkeypatch):
    monkeypatch.setattr(_sysfs, 'write_value', lambda path, value: None)
    result = run_module(sysfs_attr, {'attributes': {RQ: 2}, 'root': root})
    rec = records(result)[RQ]
    assert result['failed'] is True and rec['status'] == 'failed'
    assert "reads back '1'" in rec['detail']


@pytest.mark.parametrize('attributes, message', [
    ({'../etc/passwd': 'x'}, '".."'),
    ({'kernel/mm/../../etc': 'x'}, '".."'),
    ({'/etc/passwd': 'x'}, 'outside /sys'),
    ({'/sysfoo/x': 'x'}, 'outside /sys'),
    ({'kernel/mm/transparent_hugepage': 'x'}, 'is a folder'),
    ({THP: 'sometimes'}, 'takes one of always, madvise, never'),
    ({THP: True}, 'boolean'),
    ({THP: 'a\nb'}, 'newline'),
    ({THP: '  '}, 'empty'),
    ({THP: 'never', 'kernel/mm/transparent_hugepage/enabled': 'never'}, 'both name'),
    ({}, 'non-empty'),
])
def test_bad_input_refused_before_anything(root, run_module, attributes, message):
    before = digest(root)
    result = run_module(sysfs_attr, {'attributes': attributes, 'root': root})
    assert result['failed'] is True
    assert message in result['msg']
    assert digest(root) == before


def test_bad_tmpfiles_file_refused(root, run_module):
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root, 'tmpfiles_file': '/etc/thp.conf'})
    assert result['failed'] is True and 'not read at boot' in result['msg']


def test_symlink_leaving_sys_refused(root, run_module, tmp_path):
    outside = tmp_path / 'outside'
    outside.write_text('1\n')
    os.symlink('../../outside', os.path.join(root, 'sys', 'kernel', 'escape'))
    result = run_module(sysfs_attr, {'attributes': {'kernel/escape': 2}, 'root': root})
    assert result['failed'] is True and 'resolves outside /sys' in result['msg']
    assert outside.read_text() == '1\n'


def test_absolute_symlink_is_resolved_under_root(root, run_module, tmp_path):
    # An absolute link means the same path under root, as in a chroot: never this host's file.
    host = tmp_path.parent / ('%s-host' % tmp_path.name)
    host.write_text('1\n')
    os.symlink(str(host), os.path.join(root, 'sys', 'kernel', 'escape'))
    result = run_module(sysfs_attr, {'attributes': {'kernel/escape': 2}, 'root': root})
    assert result['failed'] is True and '/sys/kernel/escape does not exist' in result['msg']
    assert host.read_text() == '1\n'


def test_offline_image_manages_persisted_side_only(tmp_path, run_module):
    image = str(tmp_path)
    os.makedirs(os.path.join(image, 'sys'))
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': image})
    rec = records(result)[THP]
    assert rec['status'] == 'changed' and rec['live'] is None and 'no sysfs under' in rec['detail']
    assert 'w %s - - - - never' % THP in read(image, OURS)


def test_other_platforms_unsupported(root, run_module, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    before = digest(root)
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root})
    assert records(result)[THP]['status'] == 'unsupported' and result['changed'] is False
    assert digest(root) == before


def test_backup(root, run_module):
    put(root, OURS, '# old\n')
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root, 'backup': True})
    assert os.path.exists(result['backup_file'])
    with open(result['backup_file']) as handle:
        assert handle.read() == '# old\n'


REAL_THP = '/sys/kernel/mm/transparent_hugepage/enabled'


@pytest.mark.skipif(not os.path.isfile(REAL_THP), reason='no transparent huge pages on this kernel')
def test_real_host_check_mode_reads_live_and_changes_nothing(run_module, monkeypatch):
    # The real kernel and the real /etc, in check mode only: nothing may be written.
    with open(REAL_THP) as handle:
        raw = handle.read()
    selected = _sysfs.parse_choice(raw.strip())[1]
    other = [c for c in _sysfs.parse_choice(raw.strip())[0] if c != selected][0]
    existed = os.path.exists(OURS)
    result = run_module(sysfs_attr, {'attributes': {'kernel/mm/transparent_hugepage/enabled': other}},
                        check_mode=True, diff=True)
    rec = records(result)[THP]
    assert rec['live'] == selected and rec['desired'] == other and rec['status'] == 'drift'
    with open(REAL_THP) as handle:
        assert handle.read() == raw
    assert os.path.exists(OURS) == existed


def test_a_file_of_our_name_in_run_boots_until_ours_masks_it_and_its_lines_are_carried(root, run_module):
    # tmpfiles.d(5): /etc's file masks /run's of the same name; while ours is absent /run's boots
    run_file = OURS.replace('/etc/', '/run/')
    put(root, run_file, 'w %s - - - - never\nw /sys/block/sda/queue/read_ahead_kb - - - - 4096\n' % THP)
    put(root, THP, 'always madvise [never]\n')
    before = digest(root)
    dry = run_module(sysfs_attr, {'attributes': {THP: 'never', RQ: 2}, 'root': root}, check_mode=True)
    assert digest(root) == before
    found = records(dry)
    assert (found[THP]['status'], found[THP]['persisted'], found[THP]['target']) == ('ok', 'never', OURS)
    assert found[THP]['detail'].startswith('persisted by %s;' % run_file)   # the file that boots, not ours
    assert found[RQ]['status'] == 'drift' and found[RQ]['persisted'] is None
    applied = run_module(sysfs_attr, {'attributes': {THP: 'never', RQ: 2}, 'root': root})
    assert records(applied)[RQ]['status'] == 'changed' and records(applied)[RQ]['persisted'] == '2'
    assert records(applied)[THP]['persisted'] == 'never'
    assert read(root, OURS) == (
        HEADER + '# Lines carried over from %s, which this file masks (same name).\n' % run_file
        + 'w %s - - - - never\nw /sys/block/sda/queue/read_ahead_kb - - - - 4096\nw %s - - - - 2\n' % (THP, RQ))
    assert read(root, run_file).startswith('w %s - - - - never\n' % THP)
    again = run_module(sysfs_attr, {'attributes': {THP: 'never', RQ: 2}, 'root': root})
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok', 'ok']
