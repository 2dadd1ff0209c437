# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fstab / vfstab round trips and edits, mountinfo / mnttab, and MountOptions runs with a fake mount(8)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import stat

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import fstab
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.options import edit_options
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.platform import parse_mnttab, parse_mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import CHANGED, DRIFT, FAILED, OK, PENDING_REBOOT
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan, read

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def fixture_text(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def load_cases(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return yaml.safe_load(handle)


FSTAB = fixture_text('fstab')
VFSTAB = fixture_text('vfstab')
MOUNTINFO = fixture_text('mountinfo')
MNTTAB = fixture_text('mnttab')


def replace_line(text, lineno, new_line):
    lines = text.splitlines(True)
    lines[lineno - 1] = new_line
    return ''.join(lines)


# ---------------------------------------------------------------------------- round trips

@pytest.mark.parametrize('text', [
    FSTAB,
    FSTAB.replace('\n', '\r\n'),
    FSTAB.rstrip('\n'),
    '',
    '\n\n',
    '# only a comment',
    'proc /proc proc defaults 0 0',
], ids=['sample', 'crlf', 'no-final-newline', 'empty', 'blank-lines', 'comment-only', 'one-line'])
def test_fstab_round_trip_is_byte_identical(text):
    assert fstab.FstabFile(text).render({}) == text


@pytest.mark.parametrize('text', [VFSTAB, VFSTAB.replace('\t', '    '), VFSTAB.rstrip('\n')],
                         ids=['sample', 'spaces', 'no-final-newline'])
def test_vfstab_round_trip_is_byte_identical(text):
    assert fstab.VfstabFile(text).render({}) == text


def test_render_with_the_same_options_is_byte_identical():
    table = fstab.FstabFile(FSTAB)
    unchanged = dict((entry.index, entry.options) for entry in table.entries())
    assert table.render(unchanged) == FSTAB.replace('/dev/sdd1 /u06 ext4\n', '/dev/sdd1 /u06 ext4 defaults\n')
    table = fstab.VfstabFile(VFSTAB)
    assert table.render(dict((entry.index, entry.options) for entry in table.entries())) == VFSTAB


# ---------------------------------------------------------------------------- parsing

def test_fstab_entries():
    entries = dict((entry.mount_point, entry) for entry in fstab.FstabFile(FSTAB).entries())
    assert sorted(entries) == ['/', '/backup', '/dev/shm', '/media/cdrom0', '/mnt/Media Library',
                               '/u02', '/u03', '/u04', '/u06', 'none']
    assert entries['/'].source == 'UUID=0a3407de-014b-458b-b5c1-848e92a327a3'
    assert entries['/'].options == ['errors=remount-ro']
    assert entries['none'].fstype == 'swap'
    assert (entries['/u02'].source, entries['/u02'].fstype, entries['/u02'].lineno) == ('LABEL=ORADATA', 'xfs', 15)
    assert entries['/u02'].options == ['defaults', 'nofail', 'x-systemd.device-timeout=30']
    assert entries['/backup'].options == ['bind']
    assert entries['/mnt/Media Library'].options == ['ro', 'hard', '_netdev']
    assert entries['/u06'].options == []
    assert '/u05' not in entries  # commented out


def test_vfstab_entries():
    entries = dict((entry.mount_point, entry) for entry in fstab.VfstabFile(VFSTAB).entries())
    assert entries['/u02'].options == ['logging']
    assert entries['/u03'].options == []  # "-"
    assert entries['/u04'].fstype == 'vxfs'
    assert entries['/'].source == '/dev/dsk/c0t0d0s0'
    assert entries['-'].fstype == 'swap'


def test_mountinfo():
    table = parse_mountinfo(MOUNTINFO)
    assert table['/u03'].options == ['rw', 'relatime']
    assert table['/u03'].fstype == 'ext4'
    assert table['/u02'].options == ['rw', 'relatime', 'attr2', 'inode64', 'logbufs=8', 'logbsize=32k', 'noquota']
    assert table['/mnt/Media Library'].fstype == 'nfs4'
    assert table['/mnt/Media Library'].options[:2] == ['ro', 'relatime']
    assert table['/backup'].source == '/dev/sda1'


def test_mountinfo_stacked_mount_wins_and_optional_fields():
    text = ('40 28 8:1 / /data rw,relatime shared:1 master:2 - ext4 /dev/sda1 rw\n'
            '41 40 7:0 / /data rw,noatime - ext4 /dev/loop0 rw\n')
    table = parse_mountinfo(text)
    assert table['/data'].source == '/dev/loop0'
    assert table['/data'].options == ['rw', 'noatime']


def test_mnttab_drops_the_kernel_dev_option():
    table = parse_mnttab(MNTTAB)
    assert table['/u02'].options == ['rw', 'intr', 'largefiles', 'logging', 'xattr', 'onerror=panic']
    assert table['/u04'].fstype == 'vxfs'
    assert table['/devices'].options == []


@pytest.mark.parametrize('case', load_cases('edit_cases.yml'), ids=lambda case: case['id'])
def test_edit_options(case):
    assert edit_options(case['options'], case.get('present', []), case.get('absent', [])) == case['expected']


# ---------------------------------------------------------------------------- the file edits

def test_forcedirectio_added_to_a_vfstab_line_touching_nothing_else():
    table = fstab.VfstabFile(VFSTAB)
    u03 = table.find('/u03')[0]
    after = table.render({u03.index: ['forcedirectio']})
    assert after == replace_line(VFSTAB, 11, '/dev/dsk/c1t1d0s0\t/dev/rdsk/c1t1d0s0\t/u03\tufs\t2\tyes\tforcedirectio\n')
    u02 = table.find('/u02')[0]
    after = table.render({u02.index: ['logging', 'forcedirectio']})
    assert after == replace_line(VFSTAB, 10,
                                 '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/u02\tufs\t2\tyes\tlogging,forcedirectio\n')


def test_removing_the_last_vfstab_option_writes_a_dash():
    table = fstab.VfstabFile(VFSTAB)
    u02 = table.find('/u02')[0]
    assert table.render({u02.index: []}) == replace_line(
        VFSTAB, 10, '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/u02\tufs\t2\tyes\t-\n')


def test_fstab_edit_keeps_odd_spacing_and_trailing_blanks():
    table = fstab.FstabFile(FSTAB)
    after = table.render({table.find('/u03')[0].index: ['rw', 'noatime', 'data=ordered'],
                          table.find('/backup')[0].index: ['bind', 'ro']})
    expected = replace_line(FSTAB, 16, '/dev/mapper/vg_db-lv_redo  /u03  ext4  rw,noatime,data=ordered  0  2   \n')
    expected = replace_line(expected, 18, '   /srv/exports/backup /backup none bind,ro 0 0\n')
    assert after == expected


def test_fstab_line_without_options_gets_them_with_its_own_separator():
    table = fstab.FstabFile(FSTAB)
    after = table.render({table.find('/u06')[0].index: ['noatime']})
    assert after == replace_line(FSTAB, 22, '/dev/sdd1 /u06 ext4 noatime\n')


def test_fstab_escaped_mount_point_is_found_and_kept_escaped():
    table = fstab.FstabFile(FSTAB)
    entry = table.find('/mnt/Media Library')[0]
    after = table.render({entry.index: ['ro', 'hard', '_netdev', 'noatime']})
    assert after == replace_line(FSTAB, 20, 'nas01:/export/media /mnt/Media\\040Library nfs4 ro,hard,_netdev,noatime 0 0\n')


def test_crlf_line_end_is_kept_on_the_edited_line():
    text = 'LABEL=DATA /u02 ext4 defaults 0 2\r\nproc /proc proc defaults 0 0\r\n'
    table = fstab.FstabFile(text)
    assert table.render({0: ['defaults', 'noatime']}) == \
        'LABEL=DATA /u02 ext4 defaults,noatime 0 2\r\nproc /proc proc defaults 0 0\r\n'


# ---------------------------------------------------------------------------- runs with a fake mount(8)

# What a remount does to the fake mount table: the option replaces these.
_FAKE_GROUPS = [('noatime', 'relatime', 'strictatime', 'atime'), ('forcedirectio', 'noforcedirectio'),
                ('rw', 'ro'), ('nodev', 'dev'), ('mincache',), ('convosync',)]


def _fake_apply(options, token):
    key = token.split('=')[0]
    group = next((g for g in _FAKE_GROUPS if key in g), (key,))
    options = [have for have in options if have.split('=')[0] not in group]
    if token not in ('atime', 'dev', 'noforcedirectio'):  # defaults the tables do not show
        options.append(token)
    return options


class FakeMount(object):
    """Records the argv it is given and, like the kernel, changes the live table on remount.

    ``ignore`` lists options the fake file system accepts on remount without applying them.
    """

    def __init__(self, tree, system='Linux', rc=0, err='', ignore=(), reload_rc=0):
        self.tree = tree
        self.reload_rc = reload_rc
        self.system = system
        self.calls = []
        self.rc = rc
        self.err = err
        self.ignore = ignore

    def __call__(self, argv):
        self.calls.append(list(argv))
        if argv[0] == 'systemctl':
            return (self.reload_rc, '', 'Failed to reload daemon: Access denied') if self.reload_rc else (0, '', '')
        if self.rc:
            return self.rc, '', self.err
        path = argv[-1]
        options = argv[argv.index('-o') + 1].split(',')
        assert options[0] == 'remount'
        if self.system == 'Linux':
            self._linux(path, options[1:])
        else:
            self._sunos(path, options[1:])
        return 0, '', ''

    def _linux(self, path, tokens):
        name = os.path.join(self.tree, 'proc', 'self', 'mountinfo')
        lines = []
        for line in open(name).read().splitlines():
            fields = line.split(' ')
            if fields[4].replace('\\040', ' ') == path:
                # VFS flags are per mount (field 6); key=value options belong to the super block.
                super_field = fields.index('-', 6) + 3
                for token in tokens:
                    if token not in self.ignore:
                        field = super_field if '=' in token else 5
                        fields[field] = ','.join(_fake_apply(fields[field].split(','), token))
            lines.append(' '.join(fields))
        with open(name, 'w') as handle:
            handle.write('\n'.join(lines) + '\n')

    def _sunos(self, path, tokens):
        # UFS: every option not named reverts to its default; the kernel's own ones stay.
        name = os.path.join(self.tree, 'etc', 'mnttab')
        lines = []
        for line in open(name).read().splitlines():
            fields = line.split('\t')
            if fields[1] == path:
                options = [o for o in fields[3].split(',') if o not in ('forcedirectio',)
                           and not o.startswith(('mincache=', 'convosync='))]
                for token in tokens:
                    if token not in self.ignore and token not in options:
                        options = _fake_apply(options, token)
                fields[3] = ','.join(options)
            lines.append('\t'.join(fields))
        with open(name, 'w') as handle:
            handle.write('\n'.join(lines) + '\n')


@pytest.fixture(name='linux_tree')
def linux_tree_fixture(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    os.makedirs(str(tmp_path / 'proc' / 'self'))
    (tmp_path / 'etc' / 'fstab').write_text(FSTAB)
    (tmp_path / 'proc' / 'self' / 'mountinfo').write_text(MOUNTINFO)
    return str(tmp_path)


@pytest.fixture(name='sunos_tree')
def sunos_tree_fixture(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'vfstab').write_text(VFSTAB)
    (tmp_path / 'etc' / 'mnttab').write_text(MNTTAB)
    return str(tmp_path)


def mount_plan(tree, items, system='Linux', runner=None, check_mode=False, mount_command=None, file=None,
               **options):
    """The plan of ``items`` in ``tree``; a seam (live_root, systemd_running) among ``options`` goes to the plan."""
    seams = dict((name, options.pop(name)) for name in ('live_root', 'systemd_running') if name in options)
    context = registry.Context(check_mode, runner, lambda name, required=False: mount_command, system_name=system)
    return make_plan('mount_options', dict(options, mounts=items, root=tree, fstab=file), context, **seams)


def run(tree, items, system='Linux', runner=None, **kwargs):
    kwargs.setdefault('live_root', tree)
    plan = mount_plan(tree, items, system, runner, **kwargs)
    return plan, plan.run()


def records_by_target(result):
    """The records by (target, option): one mount point can have a line in fstab and in vfstab. Each record is
    named '<mount> <option>' (docs/USING.md), so that the rows of several mounts stay apart."""
    for setting in result.settings:
        assert setting.name.startswith(setting.target + ' '), setting.name
    return dict(((s.target, s.name[len(s.target) + 1:]), s) for s in result.settings)


def test_linux_noatime_is_persisted_remounted_and_read_back(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,noatime', '/u03']]
    assert read(linux_tree, 'etc/fstab') == replace_line(
        FSTAB, 16, '/dev/mapper/vg_db-lv_redo  /u03  ext4  rw,noatime,data=ordered  0  2   \n')
    record = records_by_target(result)[('/u03', 'noatime')]
    assert (record.status, record.live, record.persisted, record.desired) == (CHANGED, 'noatime', 'noatime', 'noatime')
    assert result.changed and not result.reboot_required
    summary = result.extra['mounts'][0]
    assert summary['live'] == 'rw,noatime' and summary['persisted'] == 'rw,noatime,data=ordered'
    assert summary['remount_command'] == ['mount', '-o', 'remount,noatime', '/u03']
    assert [d['before_header'] for d in result.diffs] == ['/etc/fstab']

    # Second run: nothing to do, nothing run.
    fake2 = FakeMount(linux_tree)
    dummy, again = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake2)
    assert fake2.calls == [] and not again.changed and not again.diffs
    assert [s.status for s in again.settings] == [OK]


def test_linux_removing_noatime_remounts_with_the_default_relatime(linux_tree):
    fake = FakeMount(linux_tree)
    run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake)
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'absent': ['noatime']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,relatime', '/u03']]
    record = records_by_target(result)[('/u03', 'noatime')]
    assert (record.status, record.live, record.persisted, record.desired) == (CHANGED, 'relatime', None, None)
    assert read(linux_tree, 'etc/fstab') == replace_line(
        FSTAB, 16, '/dev/mapper/vg_db-lv_redo  /u03  ext4  rw,data=ordered  0  2   \n')


def test_linux_several_mounts_one_write_one_remount_each(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime', 'nodev']},
                                     {'path': '/mnt/Media Library', 'present': ['noatime']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,noatime,nodev', '/u03'],
                          ['mount', '-o', 'remount,noatime', '/mnt/Media Library']]
    assert [s.status for s in result.settings] == [CHANGED, CHANGED, CHANGED]
    assert len(result.diffs) == 1


def test_linux_option_fixed_until_mount_is_pending_reboot_without_remount(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['data=writeback']}], runner=fake)
    assert fake.calls == []
    record = records_by_target(result)[('/u03', 'data')]
    assert record.status == PENDING_REBOOT
    assert 'ext4 cannot change data on remount' in record.detail
    assert result.reboot_required and result.changed
    assert 'rw,relatime,data=writeback' in read(linux_tree, 'etc/fstab')
    # The next run keeps saying so, without reporting a change.
    dummy, again = run(linux_tree, [{'path': '/u03', 'present': ['data=writeback']}], runner=FakeMount(linux_tree))
    assert [s.status for s in again.settings] == [PENDING_REBOOT] and not again.changed


def test_linux_xfs_mixed_remountable_and_not(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u02', 'present': ['noatime', 'logbufs=4']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,noatime', '/u02']]
    by_name = records_by_target(result)
    assert by_name[('/u02', 'noatime')].status == CHANGED
    assert by_name[('/u02', 'logbufs')].status == PENDING_REBOOT
    assert by_name[('/u02', 'logbufs')].live == 'logbufs=8'


def test_linux_remount_without_effect_is_pending_reboot_not_skipped(linux_tree):
    fake = FakeMount(linux_tree, ignore=('noatime',))
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake)
    record = records_by_target(result)[('/u03', 'noatime')]
    assert fake.calls
    assert record.status == PENDING_REBOOT
    assert 'still shows relatime' in record.detail
    assert result.reboot_required


def test_linux_remount_refused_restores_the_file_and_fails(linux_tree):
    os.chmod(os.path.join(linux_tree, 'etc', 'fstab'), 0o640)
    fake = FakeMount(linux_tree, rc=32, err='mount: /u03: mount point not mounted or bad option.')
    plan, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']},
                                    {'path': '/u06', 'present': ['nodev']}], runner=fake)
    record = records_by_target(result)[('/u03', 'noatime')]
    assert record.status == FAILED and 'bad option' in record.detail
    # /u03 taken back, /u06 (not mounted, no remount) kept.
    assert read(linux_tree, 'etc/fstab') == replace_line(FSTAB, 22, '/dev/sdd1 /u06 ext4 nodev\n')
    assert stat.S_IMODE(os.stat(os.path.join(linux_tree, 'etc', 'fstab')).st_mode) == 0o640
    assert 'remount refused' in plan.failure_message(result) and '/u03' in plan.failure_message(result)
    assert records_by_target(result)[('/u06', 'nodev')].status == CHANGED


RELOAD = ['systemctl', 'daemon-reload']


def test_linux_systemd_reloads_the_mount_units_after_writing_fstab(linux_tree):
    # systemd makes its .mount units from fstab: reload after the write, before the remount.
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, systemd_running=True)
    assert fake.calls == [RELOAD, ['mount', '-o', 'remount,noatime', '/u03']]
    assert result.changed and result.warnings == []
    # Nothing written: no reload, no remount.
    again = FakeMount(linux_tree)
    run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=again, systemd_running=True)
    assert again.calls == []


def test_linux_systemd_check_mode_reloads_nothing(linux_tree):
    before = read(linux_tree, 'etc/fstab')
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, systemd_running=True,
                        check_mode=True)
    assert fake.calls == [] and result.changed and read(linux_tree, 'etc/fstab') == before


def test_linux_systemd_reload_failure_is_a_warning_naming_the_file(linux_tree):
    fake = FakeMount(linux_tree, reload_rc=1)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, systemd_running=True)
    assert fake.calls == [RELOAD, ['mount', '-o', 'remount,noatime', '/u03']]
    assert records_by_target(result)[('/u03', 'noatime')].status == CHANGED
    assert result.warnings == ['wrote /etc/fstab but systemctl daemon-reload failed (Failed to reload daemon: '
                               'Access denied): the mount units keep the old options until the next reload']


def test_linux_systemd_reloads_again_after_taking_a_refused_line_back(linux_tree):
    fake = FakeMount(linux_tree, rc=32, err='mount: /u03: bad option.')
    run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, systemd_running=True)
    assert fake.calls == [RELOAD, ['mount', '-o', 'remount,noatime', '/u03'], RELOAD]
    assert read(linux_tree, 'etc/fstab') == FSTAB


def test_linux_systemd_is_not_reloaded_for_another_root(linux_tree):
    # The default looks at the running host only when the live root is / (here a test tree).
    plan = mount_plan(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=FakeMount(linux_tree),
                      live_root=linux_tree)
    assert plan.systemd_running is False


def test_linux_remount_false_edits_the_file_and_reports_pending(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, remount=False)
    assert fake.calls == []
    record = records_by_target(result)[('/u03', 'noatime')]
    assert record.status == PENDING_REBOOT and 'remount is false' in record.detail
    assert 'rw,noatime,data=ordered' in read(linux_tree, 'etc/fstab')


def test_linux_not_mounted_only_the_file(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u06', 'present': ['noatime']}], runner=fake)
    record = records_by_target(result)[('/u06', 'noatime')]
    assert fake.calls == []
    assert (record.status, record.live) == (CHANGED, None)
    assert 'not mounted' in record.detail
    assert result.extra['mounts'][0]['mounted'] is False


def test_linux_userspace_options_compare_in_the_file_only(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u02', 'absent': ['nofail'], 'present': ['x-systemd.automount']}],
                        runner=fake)
    assert fake.calls == []
    assert [s.status for s in result.settings] == [CHANGED, CHANGED]
    assert 'defaults,x-systemd.device-timeout=30,x-systemd.automount' in read(linux_tree, 'etc/fstab')


def test_linux_root_other_than_slash_does_not_touch_live(linux_tree):
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake, live_root=None)
    assert fake.calls == []
    record = records_by_target(result)[('/u03', 'noatime')]
    assert record.status == CHANGED and 'root is not /' in record.detail
    assert result.extra['mounts'][0]['mounted'] is None


def test_check_mode_changes_nothing_and_reports_drift(linux_tree):
    fstab = os.path.join(linux_tree, 'etc', 'fstab')
    before = os.stat(fstab)
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime', 'data=writeback']},
                                     {'path': '/u02', 'present': ['nofail']}], runner=fake, check_mode=True)
    assert fake.calls == []
    assert read(linux_tree, 'etc/fstab') == FSTAB
    assert read(linux_tree, 'proc/self/mountinfo') == MOUNTINFO
    assert os.stat(fstab).st_mtime_ns == before.st_mtime_ns
    by_name = records_by_target(result)
    assert by_name[('/u03', 'noatime')].status == DRIFT
    assert 'would remount with mount -o remount,noatime /u03' in by_name[('/u03', 'noatime')].detail
    assert by_name[('/u03', 'data')].status == DRIFT
    assert by_name[('/u02', 'nofail')].status == OK
    assert result.changed and len(result.diffs) == 1
    assert result.extra['mounts'][0]['persisted'] == 'rw,relatime,data=ordered'


def test_check_mode_hand_remount_lost_at_next_mount_is_drift(linux_tree):
    """noatime in fstab but the live mount has relatime (remounted by hand): drift, then fixed."""
    fstab = os.path.join(linux_tree, 'etc', 'fstab')
    with open(fstab, 'w') as handle:
        handle.write(FSTAB.replace('rw,relatime,data=ordered', 'rw,noatime,data=ordered'))
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=FakeMount(linux_tree),
                        check_mode=True)
    assert [s.status for s in result.settings] == [DRIFT] and not result.diffs
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'present': ['noatime']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,noatime', '/u03']]
    assert [s.status for s in result.settings] == [CHANGED] and result.changed and not result.diffs


def test_backup_and_mode_kept(linux_tree):
    fstab = os.path.join(linux_tree, 'etc', 'fstab')
    os.chmod(fstab, 0o600)
    dummy, result = run(linux_tree, [{'path': '/u06', 'present': ['noatime']}], runner=FakeMount(linux_tree),
                        backup=True)
    backup = result.extra['backup_file']
    assert read(linux_tree, os.path.relpath(backup, linux_tree)) == FSTAB
    assert stat.S_IMODE(os.stat(fstab).st_mode) == 0o600


def test_sunos_forcedirectio_vfstab_and_remount_with_the_whole_list(sunos_tree):
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']}], system='SunOS',
                        runner=fake, mount_command='/usr/sbin/mount')
    assert fake.calls == [['/usr/sbin/mount', '-F', 'ufs', '-o', 'remount,logging,forcedirectio', '/u02']]
    assert read(sunos_tree, 'etc/vfstab') == replace_line(
        VFSTAB, 10, '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/u02\tufs\t2\tyes\tlogging,forcedirectio\n')
    record = records_by_target(result)[('/u02', 'forcedirectio')]
    assert (record.status, record.live, record.persisted) == (CHANGED, 'forcedirectio', 'forcedirectio')
    dummy, again = run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']}], system='SunOS',
                       runner=FakeMount(sunos_tree, system='SunOS'))
    assert [s.status for s in again.settings] == [OK] and not again.changed


def test_sunos_check_mode_names_the_default_in_effect(sunos_tree):
    dummy, result = run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']}], system='SunOS',
                        runner=FakeMount(sunos_tree, system='SunOS'), check_mode=True)
    record = result.settings[0]
    assert (record.status, record.live, record.persisted) == (DRIFT, 'noforcedirectio', None)
    assert read(sunos_tree, 'etc/vfstab') == VFSTAB


def test_sunos_vxfs_direct_on_a_dash_line(sunos_tree):
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u04', 'present': ['mincache=direct', 'convosync=direct']}],
                        system='SunOS', runner=fake)
    assert fake.calls == [['mount', '-F', 'vxfs', '-o', 'remount,mincache=direct,convosync=direct', '/u04']]
    assert read(sunos_tree, 'etc/vfstab') == replace_line(
        VFSTAB, 12, '/dev/vx/dsk/oradg/datavol\t/dev/vx/rdsk/oradg/datavol\t/u04\tvxfs\t3\tyes\t'
                    'mincache=direct,convosync=direct\n')
    assert [s.status for s in result.settings] == [CHANGED, CHANGED]


def test_sunos_removing_forcedirectio(sunos_tree):
    run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']}], system='SunOS',
        runner=FakeMount(sunos_tree, system='SunOS'))
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u02', 'absent': ['forcedirectio']}], system='SunOS', runner=fake)
    assert fake.calls == [['mount', '-F', 'ufs', '-o', 'remount,logging', '/u02']]
    assert read(sunos_tree, 'etc/vfstab') == VFSTAB
    assert [s.status for s in result.settings] == [CHANGED]


def test_sunos_mount_at_boot_no_not_mounted(sunos_tree):
    """/u03 is in vfstab but not in mnttab: vfstab only."""
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u03', 'present': ['forcedirectio']}], system='SunOS', runner=fake)
    assert fake.calls == []
    assert result.settings[0].status == CHANGED
    assert '\t/u03\tufs\t2\tyes\tforcedirectio\n' in read(sunos_tree, 'etc/vfstab')


# ---------------------------------------------------------------------------- bad input

@pytest.mark.parametrize('case', load_cases('bad_inputs.yml'), ids=lambda case: case['id'])
def test_bad_input_is_refused_before_anything(case, tmp_path):
    tree = str(tmp_path)
    os.makedirs(os.path.join(tree, 'etc'))
    os.makedirs(os.path.join(tree, 'proc', 'self'))
    name = 'vfstab' if case['system'] == 'SunOS' else 'fstab'
    text = (VFSTAB if case['system'] == 'SunOS' else FSTAB) + case.get('fstab_extra', '')
    with open(os.path.join(tree, 'etc', name), 'w') as handle:
        handle.write(text)
    shutil.copy(os.path.join(FIXTURES, 'mountinfo'), os.path.join(tree, 'proc', 'self', 'mountinfo'))
    fake = FakeMount(tree)
    with pytest.raises(InputError) as caught:
        run(tree, case['mounts'], system=case['system'], runner=fake)
    assert case['error'] in str(caught.value)
    assert fake.calls == []
    assert read(tree, 'etc/' + name) == text
    assert sorted(os.listdir(os.path.join(tree, 'etc'))) == [name]


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError) as caught:
        mount_plan(str(tmp_path), [{'path': '/u02', 'present': ['noatime']}]).run()
    assert '/etc/fstab does not exist' in str(caught.value)


def test_file_path_with_dotdot_is_refused(linux_tree):
    with pytest.raises(InputError) as caught:
        mount_plan(linux_tree, [{'path': '/u02', 'present': ['noatime']}], file='/etc/../fstab').run()
    assert 'fstab:' in str(caught.value) and '".."' in str(caught.value)


def test_absent_kernel_default_is_only_compared_in_the_file(linux_tree):
    """relatime is what the kernel shows when nothing is asked: removing it from fstab changes
    nothing live, so the live side does not count (and no remount is run)."""
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u03', 'absent': ['relatime']}], runner=fake)
    assert fake.calls == []
    record = result.settings[0]
    assert record.status == CHANGED and 'a default the mount table shows anyway' in record.detail
    dummy, again = run(linux_tree, [{'path': '/u03', 'absent': ['relatime']}], runner=FakeMount(linux_tree))
    assert [s.status for s in again.settings] == [OK] and not again.changed


def test_key_value_live_value_differs(linux_tree):
    """mincache=closesync live, mincache=direct asked: remount names the new value."""
    fake = FakeMount(linux_tree)
    dummy, result = run(linux_tree, [{'path': '/u04', 'present': ['mincache=direct']}], runner=fake)
    assert fake.calls == [['mount', '-o', 'remount,mincache=direct', '/u04']]
    record = result.settings[0]
    assert (record.status, record.live, record.persisted) == (CHANGED, 'mincache=direct', 'mincache=direct')


def test_sunos_vxfs_option_fixed_until_mount(sunos_tree):
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u04', 'present': ['qio']}], system='SunOS', runner=fake)
    assert fake.calls == []
    assert result.settings[0].status == PENDING_REBOOT and result.reboot_required


def test_sunos_check_mode_runs_nothing(sunos_tree):
    fake = FakeMount(sunos_tree, system='SunOS')
    dummy, result = run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']},
                                     {'path': '/u04', 'present': ['mincache=direct']}],
                        system='SunOS', runner=fake, check_mode=True)
    assert fake.calls == []
    assert [s.status for s in result.settings] == [DRIFT, DRIFT]
    assert read(sunos_tree, 'etc/vfstab') == VFSTAB and read(sunos_tree, 'etc/mnttab') == MNTTAB


# ------------------------------------------------------------------ issue 45: UFS-only options
# A ZFS dataset with mountpoint=legacy has a vfstab line (vfstab(5), zfs(8) "Legacy Mount
# Points"); mnttab shows its live options as the kernel lists them (mnttab(5)).
ZFS_VFSTAB_LINE = 'dbpool/oradata\t-\t/u05\tzfs\t-\tyes\t-\n'
ZFS_MNTTAB_LINE = 'dbpool/oradata\t/u05\tzfs\trw,devices,setuid,nonbmand,exec,rstchown,xattr,atime,dev=4010002\t1096307280\n'


@pytest.mark.parametrize('check_mode', [False, True])
def test_sunos_forcedirectio_on_zfs_is_refused_before_anything(sunos_tree, check_mode):
    with open(os.path.join(sunos_tree, 'etc', 'vfstab'), 'a') as handle:
        handle.write(ZFS_VFSTAB_LINE)
    with open(os.path.join(sunos_tree, 'etc', 'mnttab'), 'a') as handle:
        handle.write(ZFS_MNTTAB_LINE)
    fake = FakeMount(sunos_tree, system='SunOS')
    with pytest.raises(InputError, match=r'/u05: forcedirectio exists only for UFS, and /u05 is zfs'):
        run(sunos_tree, [{'path': '/u02', 'present': ['forcedirectio']}, {'path': '/u05', 'present': ['forcedirectio']}],
            system='SunOS', runner=fake, check_mode=check_mode)
    assert fake.calls == []
    assert read(sunos_tree, 'etc/vfstab') == VFSTAB + ZFS_VFSTAB_LINE
    assert read(sunos_tree, 'etc/mnttab') == MNTTAB + ZFS_MNTTAB_LINE
