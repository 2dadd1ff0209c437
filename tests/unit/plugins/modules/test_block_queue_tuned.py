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
