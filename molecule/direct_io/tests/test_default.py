# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""direct_io: noatime live and persisted on the loop-backed ext4 mount, parameter files edited in place."""

import importlib.util
import os
import re

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    'direct_io_expect', os.path.join(SCENARIO, '..', 'direct_io', 'tests', 'direct_io_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = expect.podman_hosts(SCENARIO)


def test_noatime_is_live_in_proc_mounts(host):
    options = expect.live_options(host)
    assert 'noatime' in options
    assert 'relatime' not in options


def test_noatime_is_live_in_mountinfo(host):
    assert 'noatime' in expect.mountinfo_options(host)


def test_the_mount_is_still_our_loop_image(host):
    device = host.file(expect.STATE + '/loop').content_string.split()[0]
    line = [entry for entry in host.file('/proc/mounts').content_string.splitlines()
            if entry.split(' ')[1] == expect.MOUNT][-1]
    assert line.split(' ')[0] == device and line.split(' ')[2] == 'ext4'


def test_fstab_only_the_data_line_options_changed(host):
    before = expect.before(host, '/etc/fstab')
    assert host.file('/etc/fstab').content_string == expect.fstab_with_options(
        before, expect.MOUNT, 'defaults,nofail,noatime')


def test_fstab_owner_and_mode_kept(host):
    fstab = host.file('/etc/fstab')
    assert (fstab.user, fstab.group, fstab.mode) == ('root', 'root', 0o644)


def test_mount_reads_the_persisted_options_at_the_next_mount(host):
    """What mount(8) would use for /u02 from fstab (findmnt --fstab) includes noatime."""
    options = host.check_output('findmnt --fstab --noheadings --output OPTIONS --target %s' % expect.MOUNT)
    assert 'noatime' in options.split(',')


def test_direct_io_write_on_the_mount(host):
    path = expect.MOUNT + '/dbhost-odirect.test'
    command = host.run('dd if=/dev/zero of=%s bs=4096 count=16 oflag=direct' % path)
    host.run('rm -f %s' % path)
    assert command.rc == 0, command.stderr


def test_pfile_gets_setall_and_asynch_io_and_keeps_every_line(host):
    before = expect.before(host, expect.FILES['pfile']).splitlines()
    after = host.file(expect.FILES['pfile']).content_string.splitlines()
    assert expect.is_subsequence(before, after)
    added = [line for line in after if line not in before]
    assert len(added) == 2, added
    assert any(re.match(r"^\*\.filesystemio_options\s*=\s*'SETALL'$", line, re.I) for line in added), added
    assert any(re.match(r"^\*\.disk_asynch_io\s*=\s*'?TRUE'?$", line, re.I) for line in added), added


def test_pfile_mode_kept(host):
    assert host.file(expect.FILES['pfile']).mode == 0o640


def test_mycnf_o_direct_in_mysqld_and_nothing_else_changed(host):
    before = expect.before(host, expect.FILES['mycnf']).splitlines()
    after = host.file(expect.FILES['mycnf']).content_string.splitlines()
    assert expect.is_subsequence(before, after)
    added = [line for line in after if line not in before]
    assert len(added) == 1 and re.match(r'^innodb_flush_method\s*=\s*O_DIRECT$', added[0]), added
    assert added[0] in expect.section_of(after, 'mysqld')


def test_postgresql_conf_only_the_given_parameter(host):
    before = expect.before(host, expect.FILES['pgconf']).splitlines()
    after = host.file(expect.FILES['pgconf']).content_string.splitlines()
    active = [line for line in after if re.match(r'^\s*wal_sync_method\s*=', line)]
    assert len(active) == 1 and re.match(r"^\s*wal_sync_method\s*=\s*'?open_datasync'?(\s|#|$)", active[0]), active
    untouched = [line for line in before if 'wal_sync_method' not in line]
    assert expect.is_subsequence(untouched, [line for line in after if 'wal_sync_method' not in line])
    assert len([line for line in after if 'wal_sync_method' not in line]) == len(untouched)


def test_postgresql_auto_conf_untouched(host):
    auto = host.file(expect.VARS['dbhost_molecule_pgdata'] + '/postgresql.auto.conf')
    assert auto.content_string.endswith("work_mem = '16MB'\n")
    assert auto.mode == 0o600


def test_no_stray_temporary_files(host):
    for path in expect.FILES.values():
        folder, base = os.path.dirname(path), os.path.basename(path)
        names = host.file(folder).listdir()
        assert [name for name in names if name.startswith(('.' + base, base + '.'))] == [], folder
