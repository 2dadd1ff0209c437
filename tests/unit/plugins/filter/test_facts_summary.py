# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""facts_summary and playbooks/facts.yml: what sizing reads in one screen, the full facts behind
dbhost_facts_full."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.dbhost.tuning.plugins.filter.facts_summary import facts_summary
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


def facts(loops=40, disks=2, virtual=30):
    queue = dict(('attr%d' % n, '0') for n in range(45))
    queue.update(scheduler='none [mq-deadline] kyber', read_ahead_kb='128', nr_requests='64', rq_affinity='1',
                 rotational='0')
    devices = dict(('loop%d' % n, {'size_sectors': 0, 'queue': dict(queue)}) for n in range(loops))
    devices.update(('vd%s' % chr(ord('a') + n), {'size_sectors': 41943040, 'queue': dict(queue)}) for n in range(disks))
    mounts = [{'mount_point': '/proc%d' % n, 'fstype': 'proc', 'source': 'proc', 'options': ['rw']}
              for n in range(virtual)]
    mounts.append({'mount_point': '/u02', 'fstype': 'xfs', 'source': '/dev/vdb', 'options': ['rw', 'noatime']})
    return {
        'system': 'Linux',
        'memory': {'total_bytes': 68719476736, 'page_size': 4096, 'hugepage_default_bytes': 2097152},
        'hugepages': {'2097152': {'total': 24576, 'free': 24576, 'reserved': 0, 'surplus': 0,
                                  'nodes': {'0': 12288, '1': 12288}}},
        'numa': {'nodes': {'0': {'cpus': '0-1', 'memory_bytes': 34359738368},
                           '1': {'cpus': '2-3', 'memory_bytes': 34359738368}}, 'online_cpus': '0-3'},
        'shm': {'kernel.shmmax': '51539607552', 'kernel.shmall': '12582912', 'kernel.shmmni': '4096'},
        'transparent_hugepage': {'enabled': 'always madvise [never]', 'defrag': '[never]'},
        'block_devices': devices, 'mounts': mounts,
        'cpusets': {'hierarchy': 'v2', '/': {'cpus': '0-3', 'mems': '0-1'}},
    }


def test_the_summary_names_what_sizing_reads():
    lines = facts_summary(facts())
    assert lines[:5] == [
        'system: Linux',
        'memory: RAM 64G (68719476736 bytes), page size 4K, default huge page 2M',
        'huge pages 2M: 24576 total, 24576 free, 0 reserved, 0 surplus (node 0: 12288, node 1: 12288)',
        'NUMA: 2 nodes (node 0: CPUs 0-1, 32G; node 1: CPUs 2-3, 32G); online CPUs 0-3',
        'shared memory: kernel.shmmax 51539607552, kernel.shmall 12582912, kernel.shmmni 4096']
    assert 'transparent huge pages: defrag never, enabled never' in lines
    assert lines[lines.index('  vda (20G): scheduler mq-deadline, read_ahead_kb 128, nr_requests 64, rq_affinity 1, '
                             'rotational 0') - 1].startswith('block devices: 2 (and 40 empty, not listed: loop0 ')
    assert 'mounts of a device: 1 (and 30 virtual file systems, not listed)' in lines
    assert '  /u02 xfs rw,noatime (/dev/vdb)' in lines
    assert lines[-1] == 'cpusets (cgroup v2): / CPUs 0-3 mems 0-1'
    assert not any('attr1' in line for line in lines)


def test_one_screen_however_many_devices():
    lines = facts_summary(facts(loops=200, disks=60, virtual=300))
    assert len(lines) <= 40
    assert '  ... and 48 more devices' in lines
    assert max(len(line) for line in lines if not line.startswith('block devices')) < 200


def test_a_subset_and_bad_input():
    assert facts_summary({'memory': {'total_bytes': 1073741824}}) == ['memory: RAM 1G (1073741824 bytes)']
    with pytest.raises(AnsibleFilterError, match='expects ansible_facts.dbhost'):
        facts_summary(None)


@pytest.mark.usefixtures('linux')
def test_the_playbook_prints_the_summary_and_the_full_facts_behind_a_flag(tmp_path):
    env = ansible_env(tmp_path)
    argv = [ansible_program('ansible-playbook'), '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable, os.path.join(CHECKOUT, 'playbooks', 'facts.yml')]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"memory: RAM ' in done.stdout and '"queue"' not in done.stdout
    assert len(done.stdout.splitlines()) < 60, done.stdout
    full = subprocess.run(argv + ['-e', 'dbhost_facts_full=true'], env=env, capture_output=True, text=True, check=False)
    assert full.returncode == 0, full.stdout + full.stderr
    assert '"total_bytes"' in full.stdout and '"memory: RAM ' not in full.stdout
