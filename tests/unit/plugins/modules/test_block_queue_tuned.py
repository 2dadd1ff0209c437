# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""block_queue with TuneD enabled: TuneD's [disk] readahead and elevator (and [sysfs] entries
under /sys/block) are written when tuned.service starts, after udev's rules, so another value
there is shadowed, naming the profile, its file and the device."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.modules import block_queue
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs
from ansible_collections.dbhost.tuning.tests.unit.helpers import put, records

RULES = '/etc/udev/rules.d/61-dbhost-tuning.rules'
PROFILE = '/etc/tuned/db/tuned.conf'


@pytest.fixture(autouse=True)
def linux_kernel(linux, monkeypatch):
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)
    kernel = fake_sysfs.FakeKernel()
    monkeypatch.setattr(sysfs, 'write_value', kernel)
    return kernel


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    fake_sysfs.build(base)
    put(base, '/etc/tuned/active_profile', 'db\n')
    wants = os.path.join(base, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/usr/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))
    return base


def run(run_module, root, attributes, profile, check_mode=True):
    return run_module(block_queue, {'root': root, 'devices': [{'name': ['sda'], 'attributes': attributes}]},
                      check_mode=check_mode)


@pytest.mark.parametrize('profile, attribute, want, status, sets', [
    ('[disk]\nreadahead=>4096\n', 'read_ahead_kb', 8192, 'drift', None),       # ours above: TuneD leaves it
    ('[disk]\nreadahead=>4096\n', 'read_ahead_kb', 1024, 'shadowed', '4096'),   # TuneD raises it
    ('[disk]\nreadahead=8192 s\n', 'read_ahead_kb', 4096, 'drift', None),      # 8192 sectors = 4096 KiB
    ('[disk]\nreadahead=8192\n', 'read_ahead_kb', 4096, 'shadowed', '8192'),
    ('[disk]\ndevices=sdb,nvme*\nreadahead=8192\n', 'read_ahead_kb', 4096, 'drift', None),
    ('[disk]\ndevices=!sdb\nelevator=mq-deadline\n', 'scheduler', 'none', 'shadowed', 'mq-deadline'),
    ('[my_disks]\ntype=disk\nelevator=none\n', 'scheduler', 'none', 'drift', None),
    ('[sysfs]\n/sys/block/sd*/queue/rq_affinity=1\n', 'rq_affinity', 2, 'shadowed', '1'),
    ('[disk]\nenabled=0\nelevator=mq-deadline\n', 'scheduler', 'none', 'drift', None),
])
def test_tuned_disk_against_our_rule(run_module, root, profile, attribute, want, status, sets):
    put(root, PROFILE, profile)
    before = fake_sysfs.snapshot(root)
    result = run(run_module, root, {attribute: want}, profile)
    assert fake_sysfs.snapshot(root) == before
    record = records(result)['sda/queue/%s' % attribute]
    assert record['status'] == status
    if sets:
        assert record['detail'].endswith("TuneD profile db (%s) sets %r for sda and wins at boot over %s"
                                         % (PROFILE, sets, RULES))
        assert record['persisted'] == sets      # what the next boot gives: TuneD's, after udev's rule
    else:
        # TuneD writing the value we want is the boot's source of it: said, never a conflict
        assert 'TuneD' not in record['detail'].replace('persisted by TuneD profile db (%s)' % PROFILE, '')


def test_applied_then_still_shadowed_and_idempotent(run_module, root):
    profile = '[disk]\nelevator=mq-deadline\n'
    put(root, PROFILE, profile)
    applied = run(run_module, root, {'scheduler': 'none'}, profile, check_mode=False)
    assert records(applied)['sda/queue/scheduler']['status'] == 'shadowed'
    again = run(run_module, root, {'scheduler': 'none'}, profile, check_mode=False)
    assert again['changed'] is False and records(again)['sda/queue/scheduler']['status'] == 'shadowed'


def run_on(run_module, root, disk, attributes, check_mode=True):
    return run_module(block_queue, {'root': root, 'devices': [{'name': [disk], 'attributes': attributes}]},
                      check_mode=check_mode)


@pytest.mark.parametrize('profile, disk, status, sets', [
    # TuneD's disk plugin leaves a removable disk alone (plugins/plugin_disk.py): our rule is the boot's
    ('[disk]\nelevator=mq-deadline\n', 'sdd', 'drift', None),
    # the first unit whose devices_udev_regex matches the udev properties takes the disk
    ('[disk]\ndevices_udev_regex=ID_BUS=scsi\nelevator=mq-deadline\n', 'sda', 'shadowed', 'mq-deadline'),
    ('[disk]\ndevices_udev_regex=ID_BUS=ata\nelevator=mq-deadline\n', 'sda', 'drift', None),
    ('[a]\ntype=disk\ndevices_udev_regex=^DEVPATH=/devices/pci\nelevator=none\n[b]\ntype=disk\nelevator=mq-deadline\n',
     'sda', 'drift', 'none'),
    # device-mapper and loop devices have no parent device: TuneD manages them
    ('[disk]\ndevices=dm-*\nelevator=mq-deadline\n', 'dm-0', 'shadowed', 'mq-deadline'),
    # devices= and devices_udev_regex= mean nothing to the sysfs plugin: its paths are written
    ('[sysfs]\ndevices_udev_regex=NOTHING\ndevices=sdb\n/sys/block/sda/queue/scheduler=mq-deadline\n', 'sda',
     'shadowed', 'mq-deadline'),
])
def test_the_devices_a_disk_unit_really_applies_to(run_module, root, profile, disk, status, sets):
    put(root, PROFILE, profile)
    before = fake_sysfs.snapshot(root)
    record = records(run_on(run_module, root, disk, {'scheduler': 'none'}))['%s/queue/scheduler' % disk]
    assert fake_sysfs.snapshot(root) == before
    assert record['status'] == status and record['persisted'] == sets
    if status == 'shadowed':
        assert record['detail'].endswith("TuneD profile db (%s) sets %r for %s and wins at boot over %s"
                                         % (PROFILE, sets, disk, RULES))
    elif sets:
        # [a] takes sda and writes what we want: TuneD is the boot's source of it
        assert record['detail'].endswith('persisted by TuneD profile db (%s)' % PROFILE)
    else:
        assert 'TuneD' not in record['detail']


def test_what_the_host_tree_does_not_show_is_said_unknown(run_module, root):
    # vdb has no udev database entry in the tree: whether [fast] takes it is not known, and the
    # value is said to be TuneD's choice with the reason, never guessed either way
    put(root, PROFILE, '[fast]\ntype=disk\ndevices_udev_regex=ID_PATH=virtio\nelevator=mq-deadline\n[disk]\n')
    record = records(run_on(run_module, root, 'vdb', {'scheduler': 'none'}))['vdb/queue/scheduler']
    assert record['status'] == 'shadowed' and record['persisted'] == 'mq-deadline'
    assert ("TuneD profile db (%s), a value TuneD computes when it applies it (TuneD gives vdb to [fast] only if its "
            "udev properties match devices_udev_regex=ID_PATH=virtio, and the host tree has no udev database entry "
            "for it (/run/udev/data)) sets 'mq-deadline' for vdb" % PROFILE) in record['detail']
    # the same where both units would write the same: known whichever takes it
    put(root, PROFILE, '[fast]\ntype=disk\ndevices_udev_regex=ID_PATH=virtio\nelevator=none\n[disk]\nelevator=none\n')
    record = records(run_on(run_module, root, 'vdb', {'scheduler': 'none'}))['vdb/queue/scheduler']
    assert record['status'] == 'drift' and record['persisted'] == 'none'
    assert record['detail'].endswith('persisted by TuneD profile db (%s)' % PROFILE)
    # a tree without the disk's removable attribute: whether the disk plugin manages it is not known
    os.remove(os.path.join(root, 'sys', 'block', 'vdb', 'removable'))
    put(root, PROFILE, '[disk]\nelevator=mq-deadline\n')
    record = records(run_on(run_module, root, 'vdb', {'scheduler': 'none'}))['vdb/queue/scheduler']
    assert record['status'] == 'shadowed'
    assert "(the host tree does not show /sys/block/vdb/removable, which tells whether TuneD's disk plugin manages " \
           "it) sets 'mq-deadline' for vdb" in record['detail']


def test_a_udev_matched_unit_applied_then_idempotent(run_module, root):
    put(root, PROFILE, '[disk]\ndevices_udev_regex=ID_WWN=0x5000c500a1b2c3d4\nreadahead=4096\n')
    applied = run_on(run_module, root, 'sda', {'read_ahead_kb': 8192}, check_mode=False)
    record = records(applied)['sda/queue/read_ahead_kb']
    assert record['status'] == 'shadowed' and record['persisted'] == '4096' and record['live'] == '8192'
    after = fake_sysfs.snapshot(root)
    again = run_on(run_module, root, 'sda', {'read_ahead_kb': 8192}, check_mode=False)
    assert again['changed'] is False and fake_sysfs.snapshot(root) == after
    assert records(again)['sda/queue/read_ahead_kb']['status'] == 'shadowed'
    # a regex on another disk's identifier: sda is not TuneD's, our rule persists it
    put(root, PROFILE, '[disk]\ndevices_udev_regex=ID_WWN=0x50014ee2b5e6f7a8\nreadahead=4096\n')
    record = records(run_on(run_module, root, 'sda', {'read_ahead_kb': 8192}, check_mode=False))['sda/queue/read_ahead_kb']
    assert record['status'] == 'ok' and record['persisted'] == '8192'


def test_automatic_mode_the_recommended_profile_and_an_undecided_one(run_module, root):
    put(root, '/etc/tuned/profile_mode', 'auto\n')
    put(root, PROFILE, '[disk]\nelevator=mq-deadline\n')
    put(root, '/etc/tuned/other/tuned.conf', '[disk]\ndevices=sdb\nelevator=mq-deadline\n')
    put(root, '/etc/tuned/recommend.d/50-site.conf', '[db]\n/etc/hostname=^db\n[other]\n')
    put(root, '/etc/hostname', 'db7\n')
    record = records(run_on(run_module, root, 'sda', {'scheduler': 'none'}))['sda/queue/scheduler']
    assert record['status'] == 'shadowed' and record['persisted'] == 'mq-deadline'
    put(root, '/etc/hostname', 'app3\n')     # [other] starts: its unit leaves sda alone
    record = records(run_on(run_module, root, 'sda', {'scheduler': 'none'}))['sda/queue/scheduler']
    assert record['status'] == 'drift' and 'TuneD' not in record['detail']
    # which one starts hangs on virt-what: both values are shown, never met, with why
    put(root, '/etc/tuned/recommend.d/50-site.conf', '[db]\nvirt=\n[other]\n')
    before = fake_sysfs.snapshot(root)
    record = records(run_on(run_module, root, 'sda', {'scheduler': 'none'}))['sda/queue/scheduler']
    assert fake_sysfs.snapshot(root) == before
    assert record['status'] == 'shadowed' and record['persisted'] == 'mq-deadline or unset'
    assert ("a value TuneD computes when it applies it (the recommend rules TuneD starts from pick one of db, other: "
            "[db] in /etc/tuned/recommend.d/50-site.conf: virt= matches the output of virt-what, a command the "
            "collection does not run) sets 'mq-deadline or none' for sda") in record['detail']   # over our rule
