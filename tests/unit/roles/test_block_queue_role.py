# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The block_queue role against the fake /sys/block tree, through ansible-playbook:
defaults by device kind and workload, null dropping a default, defaults: false,
one module call, check mode and idempotence."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.tests.unit import helpers
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs

DEVICES = [
    {'name': ['sd*'], 'rotational': False},                      # sdb, sdc: flash LUN paths
    {'name': ['sda', 'nvme0n1']},                                # one of each kind
    {'mount': ['/u02'], 'attributes': {'scheduler': None}},      # the LVM volume: no scheduler of its own
    {'name': ['vdb'], 'defaults': False, 'attributes': {'nomerges': 2}},
]


def run_role(tmp_path, root, check=False):
    return helpers.run_role(tmp_path, 'block_queue', {'block_queue_root': root, 'block_queue_workload': 'dss',
                                                      'block_queue_devices': DEVICES}, check=check)


def test_role_defaults_by_kind_check_mode_then_apply_then_idempotent(tmp_path):
    root = str(tmp_path / 'root')
    fake_sysfs.build(root)
    rules = os.path.join(root, 'etc/udev/rules.d/61-dbhost-tuning.rules')

    drift = run_role(tmp_path, root, check=True)
    assert not os.path.exists(rules)
    assert set(s['status'] for s in drift['settings']) == {'drift'}

    applied = run_role(tmp_path, root)
    desired = dict((s['name'], s['desired']) for s in applied['settings'])
    assert desired == {
        'dm-1/queue/read_ahead_kb': '4096', 'dm-1/queue/rq_affinity': '1',
        'nvme0n1/queue/scheduler': 'none', 'nvme0n1/queue/read_ahead_kb': '4096', 'nvme0n1/queue/rq_affinity': '1',
        'sda/queue/scheduler': 'mq-deadline', 'sda/queue/read_ahead_kb': '4096', 'sda/queue/rq_affinity': '1',
        'sdb/queue/scheduler': 'none', 'sdb/queue/read_ahead_kb': '4096', 'sdb/queue/rq_affinity': '1',
        'sdc/queue/scheduler': 'none', 'sdc/queue/read_ahead_kb': '4096', 'sdc/queue/rq_affinity': '1',
        'vdb/queue/nomerges': '2',
    }
    assert drift['settings'] and [s['name'] for s in drift['settings']] == [s['name'] for s in applied['settings']]
    with open(rules) as handle:
        text = handle.read()
    assert 'ATTR{serial}=="dbdata01", ATTR{queue/nomerges}="2"\n' in text
    assert 'ATTRS{wwid}=="naa.5000c500a1b2c3d4", ATTR{queue/scheduler}="mq-deadline", ' \
           'ATTR{queue/read_ahead_kb}="4096", ATTR{queue/rq_affinity}="1"\n' in text

    again = run_role(tmp_path, root)
    assert again['changed'] is False
    assert set(s['status'] for s in again['settings']) == {'ok'}
