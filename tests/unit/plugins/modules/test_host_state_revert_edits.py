# -*- coding: utf-8 -*-
"""A revert after an admin edited the files tuning wrote (plans/revert.py, engine/merge.py).

Per shared file kind, on a test tree through the modules' main(): apply, then an admin adds a
line at the top and one at the end of the file, then host_state state=revert.  The file is
then the text before tuning with the admin's two lines where the admin put them, byte for
byte; the record names the file as edited since tuning, with the lines; the check-mode
preview changes nothing and its records are the real run's.  A file the collection made
keeps only the admin's lines; a line both changed keeps the admin's; a baseline of an older
version (no ``writes``) puts the file back whole and keeps a backup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import importlib
import json
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

KEPT = '/var/lib/dbhost-tuning/baseline.json'
ETC_SYSTEM = '* /etc/system\nset shmsys:shminfo_shmmax=0x1000\nforceload: sys/shmsys\n'
ETC_PROJECT = ('system:0::::\nuser.root:1::::\ndefault:3::::\n'
               'user.oracle:100:Oracle:oracle::project.max-shm-memory=(privileged,4294967296,deny)\n')
VFSTAB = ('#device\t\tdevice\t\tmount\tFS\tfsck\tmount\tmount\n'
          '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/\tufs\t1\tno\t-\n'
          '/dev/dsk/c1t1d0s0\t/dev/rdsk/c1t1d0s0\t/u03\tufs\t2\tyes\t-\n'
          'swap\t-\t/tmp\ttmpfs\t-\tyes\t-\n')
GRUB = 'GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n'
RUNNING = 'BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0a1b ro quiet\n'

# (id, platform, module, arguments, the shared file, the admin's first line, the admin's last line)
SHARED = [
    ('fstab', 'Linux', 'mount_options', fake_host.BASELINE['mount_options'], '/etc/fstab',
     '# the backup disk, added by hand\n', '/dev/vdb1 /backup ext4 defaults 0 2\n'),
    ('vfstab', 'SunOS', 'mount_options', {'path': '/u03', 'present': ['forcedirectio']}, '/etc/vfstab',
     '# the backup disk, added by hand\n', '/dev/dsk/c2t0d0s0\t/dev/rdsk/c2t0d0s0\t/backup\tufs\t2\tyes\t-\n'),
    ('postgresql.conf', 'Linux', 'db_parameter', fake_host.BASELINE['db_parameter'], fake_host.PGCONF,
     '# tuned by hand as well\n', 'log_min_duration_statement = 250\n'),
    ('my.cnf', 'Linux', 'db_parameter', {'engine': 'mysql', 'path': fake_host.MYCNF,
                                         'params': {'innodb_flush_method': 'O_DIRECT'}}, fake_host.MYCNF,
     '# tuned by hand as well\n', 'max_connections = 500\n'),
    ('init.ora', 'Linux', 'db_parameter', {'engine': 'oracle', 'path': fake_host.PFILE,
                                           'params': {'filesystemio_options': 'SETALL'}}, fake_host.PFILE,
     '# tuned by hand as well\n', '*.processes=600\n'),
    ('limits.conf', 'Linux', 'resource_limits', dict(fake_host.BASELINE['resource_limits'],
                                                     limits_file='/etc/security/limits.conf'), '/etc/security/limits.conf',
     '# added by hand\n', '@dba             hard    nproc           16384\n'),
    ('/etc/system', 'SunOS', 'kernel_params', {'params': {'shmsys:shminfo_shmmax': 4294967295,
                                                          'semsys:seminfo_semmni': 100}}, '/etc/system',
     '* added by hand\n', 'set rlim_fd_max=65536\n'),
    ('/etc/project', 'SunOS', 'resource_limits', {'projects': [{'name': 'user.oracle', 'attributes': {
        'project.max-shm-memory': '(privileged,8589934592,deny)'}}]}, '/etc/project',
     '# added by hand\n', 'user.backup:200:Backup:backup::\n'),
]


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


def _host(tmp_path, monkeypatch, system):
    monkeypatch.setattr(platforms, 'system', lambda: system)
    root = fake_host.build(str(tmp_path / 'host'))
    put(root, '/etc/system', ETC_SYSTEM)
    put(root, '/etc/project', ETC_PROJECT)
    put(root, '/etc/vfstab', VFSTAB)
    put(root, '/etc/default/grub', GRUB)
    put(root, '/proc/cmdline', RUNNING)
    return root


def revert(run_module, root, check_mode=False):
    return run_module(_module('host_state'), {'state': 'revert', 'roles': ['kernel_params'],
                                              'inputs': {'kernel_params': {'kernel_params_root': root}}},
                      check_mode=check_mode, diff=True)


def preview_of(records):
    """What a check-mode revert and the real one must agree on, record by record: the name, what
    is written back, the status (``drift`` in check mode is ``changed``) and the detail (``would
    be`` in front in check mode)."""
    def one(record):
        detail = record['detail']
        detail = detail[len('would be '):] if detail.startswith('would be ') else detail
        status = 'changed' if record['status'] == 'drift' else record['status']
        return (record['name'], record['desired'], status, detail)
    return sorted(one(record) for record in records)


def edit(text, first, last):
    return first + text + last


def check_then_revert(run_module, root):
    """The check-mode preview (nothing touched), then the real revert; both results."""
    before = digest(root)
    preview = revert(run_module, root, check_mode=True)
    assert not preview.get('failed'), preview
    assert digest(root) == before
    done = revert(run_module, root)
    assert not done.get('failed'), done
    assert preview_of(preview['settings']) == preview_of(done['settings'])
    assert [diff['before_header'] for diff in preview.get('diff', [])] == \
        [diff['before_header'] for diff in done.get('diff', [])]
    return preview, done


@pytest.mark.parametrize('name,system,module,args,shared,first,last', SHARED, ids=[case[0] for case in SHARED])
def test_a_revert_keeps_the_lines_an_admin_added_byte_for_byte(tmp_path, monkeypatch, run_module, name, system,
                                                               module, args, shared, first, last):
    root = _host(tmp_path, monkeypatch, system)
    original = read(root, shared)
    applied = run_module(_module(module), dict(args, root=root))
    assert not applied.get('failed'), applied
    tuned = read(root, shared)
    assert tuned != original
    put(root, shared, edit(tuned, first, last))

    preview, done = check_then_revert(run_module, root)
    assert read(root, shared) == edit(original, first, last), name
    for result in (preview, done):
        record = dict((record['name'], record) for record in result['settings'])[shared]
        assert 'edited since tuning' in record['detail'] and 'line by line' in record['detail']
        assert '+ ' + first.rstrip('\n') in record['detail'] and '+ ' + last.rstrip('\n') in record['detail']
    diff = [item for item in preview['diff'] if item['before_header'] == shared][0]
    assert diff['before'] == edit(tuned, first, last) and diff['after'] == edit(original, first, last)

    tree = digest(root)
    again = revert(run_module, root)
    assert again['changed'] is False and digest(root) == tree


def test_an_admin_line_in_a_file_tuning_made_is_kept_and_the_file_stays(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    run_module(_module('kernel_cmdline'), dict(fake_host.BASELINE['kernel_cmdline'], root=root))
    dropin = '/etc/default/grub.d/99-dbhost-tuning.cfg'
    admin = 'GRUB_TIMEOUT=1\n'
    put(root, dropin, read(root, dropin) + admin)
    preview, done = check_then_revert(run_module, root)
    assert read(root, dropin) == admin
    assert read(root, '/etc/default/grub') == GRUB
    record = dict((record['name'], record) for record in done['settings'])[dropin]
    assert record['detail'].startswith('emptied of the lines tuning wrote and kept')
    assert '+ GRUB_TIMEOUT=1' in record['detail'] and record['status'] == 'pending_reboot'


def test_a_file_tuning_made_and_nobody_edited_is_removed(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    ours = '/etc/sysctl.d/90-dbhost-tuning.conf'
    assert os.path.exists(os.path.join(root, ours.lstrip('/')))
    check_then_revert(run_module, root)
    assert not os.path.exists(os.path.join(root, ours.lstrip('/')))


def test_a_line_tuning_wrote_and_an_admin_changed_since_keeps_the_admin_s(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    original = read(root, fake_host.PGCONF)
    run_module(_module('db_parameter'), dict(fake_host.BASELINE['db_parameter'], root=root))
    tuned = read(root, fake_host.PGCONF)
    assert "work_mem = '8MB'" in tuned or 'work_mem = 8MB' in tuned
    hand = tuned.replace('8MB', '16MB') + 'log_min_duration_statement = 250\n'
    put(root, fake_host.PGCONF, hand)
    preview, done = check_then_revert(run_module, root)
    text = read(root, fake_host.PGCONF)
    assert text.replace('16MB', '8MB') == tuned + 'log_min_duration_statement = 250\n'
    assert text != original
    record = dict((record['name'], record) for record in done['settings'])[fake_host.PGCONF]
    assert "the admin's is kept" in record['detail'] and '16MB' in record['detail']


def test_two_applies_then_an_edit_take_back_both_writes(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    original = read(root, fake_host.PGCONF)
    run_module(_module('db_parameter'), dict(fake_host.BASELINE['db_parameter'], root=root))
    put(root, fake_host.PGCONF, read(root, fake_host.PGCONF) + 'log_min_duration_statement = 250\n')
    run_module(_module('db_parameter'), dict(fake_host.BASELINE['db_parameter'], root=root,
                                             params={'work_mem': '8MB', 'maintenance_work_mem': '1GB'}))
    put(root, fake_host.PGCONF, read(root, fake_host.PGCONF) + 'log_lock_waits = on\n')
    check_then_revert(run_module, root)
    assert read(root, fake_host.PGCONF) == original + 'log_min_duration_statement = 250\nlog_lock_waits = on\n'


def test_a_baseline_without_writes_puts_the_file_back_whole_and_keeps_a_backup(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    original = read(root, '/etc/fstab')
    run_module(_module('mount_options'), dict(fake_host.BASELINE['mount_options'], root=root))
    data = json.loads(read(root, KEPT))
    for entry in data['files'].values():
        del entry['writes']   # as a version before writes kept it
    put(root, KEPT, json.dumps(data))
    hand = read(root, '/etc/fstab') + '/dev/vdb1 /backup ext4 defaults 0 2\n'
    put(root, '/etc/fstab', hand)
    preview, done = check_then_revert(run_module, root)
    assert read(root, '/etc/fstab') == original
    record = dict((record['name'], record) for record in done['settings'])['/etc/fstab']
    assert 'older version' in record['detail'] and 'backup' in record['detail']
    backups = glob.glob(os.path.join(root, 'etc', 'fstab.*~'))
    assert len(backups) == 1 and open(backups[0]).read() == hand
    assert done['backups'] == backups


def test_a_baseline_that_is_a_link_is_named_as_the_link_with_its_target(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    put(root, '/etc/passwd', 'root:x:0:0:root:/root:/bin/bash\n')
    link = os.path.join(root, KEPT.lstrip('/'))
    os.makedirs(os.path.dirname(link))
    os.symlink('/etc/passwd', link)
    before = digest(root)
    result = revert(run_module, root)
    assert result['failed'] is True and digest(root) == before
    assert 'the baseline %s (a link to %s) is not valid JSON' % (link, os.path.join(root, 'etc/passwd')) \
        in result['msg'], result['msg']


def test_the_preview_of_a_whole_host_is_the_real_revert(tmp_path, monkeypatch, run_module):
    # every kind applied on one host, then an admin's line in fstab: the check-mode records
    # (statuses, pending ones included, details, what is written back) and diffs are the real run's
    from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import test_host_state_revert as kinds
    root = _host(tmp_path, monkeypatch, 'Linux')
    put(root, '/etc/systemd/system/postgresql.service', '[Service]\nExecStart=/usr/bin/postgres\n')
    for dummy, module, args in kinds.CASES:
        applied = run_module(_module(module), dict(args, root=root))
        assert not applied.get('failed'), applied
    put(root, '/etc/fstab', read(root, '/etc/fstab') + '/dev/vdb1 /backup ext4 defaults 0 2\n')
    # no process holds the pool's pages: all of them free, as the kernel says then
    put(root, fake_host.HUGE_2M + '/free_hugepages', read(root, fake_host.HUGE_2M + '/nr_hugepages'))
    preview, done = check_then_revert(run_module, root)
    statuses = set(record['status'] for record in done['settings'])
    assert set(['pending_reboot', 'pending_restart', 'changed']) <= statuses, statuses
    assert preview['restart_required'] == done['restart_required'] and preview['changed'] == done['changed']
    assert preview['reboot_required'] is True and done['reboot_required'] is True
    live = [record for record in preview['settings'] if record['name'].startswith(('/proc/', '/sys/'))]
    assert live and all(record['desired'] is not None for record in live)
    drifted = set(record['name'] for record in live if record['status'] == 'drift')
    assert set(diff['before_header'] for diff in preview['diff']) >= drifted


def test_the_preview_says_the_pool_the_kernel_keeps_as_the_real_run_does(tmp_path, monkeypatch, run_module):
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
    root = _host(tmp_path, monkeypatch, 'Linux')
    run_module(_module('hugepages'), dict(fake_host.BASELINE['hugepages'], root=root))
    pool = fake_host.HUGE_2M + '/nr_hugepages'
    put(root, pool, '12\n')
    put(root, fake_host.HUGE_2M + '/free_hugepages', '4\n')     # 8 pages in use: the kernel keeps them
    write = sysfs._write

    def held(path, data):
        # the kernel frees the 4 free pages and keeps the 8 in use
        if path.endswith(pool):
            data = str(max(int(data.decode().strip() or 0), 8)).encode() + b'\n'
            write(path.replace('nr_hugepages', 'free_hugepages'), b'0\n')
        write(path, data)
    monkeypatch.setattr(sysfs, '_write', held)
    preview, done = check_then_revert(run_module, root)
    for result in (preview, done):
        record = dict((record['name'], record) for record in result['settings'])[pool]
        assert record['status'] == 'pending_restart', record
    assert 'the kernel keeps 8 pages when 0 is written (8 of them in use)' in \
        dict((record['name'], record) for record in preview['settings'])[pool]['detail']


def test_an_admin_line_in_our_drop_in_keeps_its_section(tmp_path, monkeypatch, run_module):
    root = _host(tmp_path, monkeypatch, 'Linux')
    put(root, '/etc/systemd/system/postgresql.service', '[Service]\nExecStart=/usr/bin/postgres\n')
    run_module(_module('resource_limits'), {'root': root, 'limits': [], 'service': 'postgresql',
                                            'service_limits': {'LimitMEMLOCK': 'infinity'}})
    dropin = '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf'
    assert 'LimitMEMLOCK=infinity' in read(root, dropin)
    put(root, dropin, read(root, dropin) + 'LimitNOFILE=65536\n')
    preview, done = check_then_revert(run_module, root)
    assert read(root, dropin) == '[Service]\nLimitNOFILE=65536\n'
    record = dict((record['name'], record) for record in done['settings'])[dropin]
    assert record['status'] == 'pending_restart' and '+ LimitNOFILE=65536' in record['detail']


def test_the_warning_names_the_file_and_its_lines_as_text(tmp_path, monkeypatch, run_module):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import revert as plan
    root = _host(tmp_path, monkeypatch, 'Linux')
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    ours = '/etc/sysctl.d/90-dbhost-tuning.conf'
    put(root, ours, read(root, ours) + 'net.core.somaxconn = 4096\n')
    done = plan.Revert([root], check_mode=True)
    done.validate()
    result = done.run()
    assert '%s: edited since tuning, kept as it is now: + net.core.somaxconn = 4096' % ours in result.warnings


@pytest.mark.parametrize('files,key,now,kept', [
    # the VM lab's figures: PostgreSQL reserved its 72 pages on node 1, touched 9 of them
    ({'/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages': '73\n',
      '/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages': '64\n',
      '/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages': '63\n',
      '/sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages': '64\n'},
     '/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages', '73', (72, 9)),
    # pages on the other node count in the total, not in this node's count
    ({'/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages': '20\n',
      '/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages': '12\n',
      '/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages': '0\n',
      '/sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages': '10\n'},
     '/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages', '10', None),
    ({'/proc/meminfo': 'HugePages_Total:      16\nHugePages_Free:        6\nHugePages_Rsvd:        2\n'},
     '/proc/sys/vm/nr_hugepages', '16', (12, 10)),
    ({'/proc/meminfo': 'HugePages_Total:      16\nHugePages_Free:       16\nHugePages_Rsvd:        0\n'},
     '/proc/sys/vm/nr_hugepages', '16', None),
])
def test_the_pool_the_kernel_keeps_is_predicted_over_the_whole_pool(tmp_path, files, key, now, kept):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import revert as plan
    root = str(tmp_path)
    for path, text in files.items():
        put(root, path, text)
    assert plan._pool_kept(root, key, now, '0') == kept
