# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import host_facts
from ansible_collections.dbhost.tuning.tests.unit.helpers import put


@pytest.fixture
def tree(tmp_path):
    root = str(tmp_path)
    put(root, 'proc/meminfo', 'MemTotal:       65536000 kB\nHugePages_Total:       4\nHugepagesize:       2048 kB\n')
    for size, total in ((2048, 4), (1048576, 0)):
        base = 'sys/kernel/mm/hugepages/hugepages-%dkB/' % size
        put(root, base + 'nr_hugepages', '%d\n' % total)
        put(root, base + 'free_hugepages', '%d\n' % total)
        put(root, base + 'surplus_hugepages', '0\n')
        put(root, base + 'resv_hugepages', '0\n')
    for node, cpus in ((0, '0-3'), (1, '4-7')):
        base = 'sys/devices/system/node/node%d/' % node
        put(root, base + 'cpulist', cpus + '\n')
        put(root, base + 'meminfo', 'Node %d MemTotal:       32768000 kB\n' % node)
        put(root, base + 'distance', '10 21\n' if node == 0 else '21 10\n')
        put(root, base + 'hugepages/hugepages-2048kB/nr_hugepages', '%d\n' % (4 if node == 0 else 0))
    put(root, 'sys/devices/system/cpu/online', '0-7\n')
    put(root, 'sys/devices/system/cpu/offline', '\n')
    put(root, 'sys/kernel/mm/transparent_hugepage/enabled', 'always madvise [never]\n')
    put(root, 'sys/kernel/mm/transparent_hugepage/defrag', '[always] defer madvise never\n')
    put(root, 'proc/sys/kernel/sem', '250\t32000\t100\t128\n')
    put(root, 'proc/sys/kernel/shmmni', '4096\n')
    put(root, 'sys/block/sda/queue/scheduler', 'none [mq-deadline] kyber\n')
    put(root, 'sys/block/sda/queue/rq_affinity', '1\n')
    put(root, 'sys/block/sda/device/wwid', 'naa.5000c500a1b2c3d4\n')
    put(root, 'sys/block/sda/device/model', 'ST4000NM0033\n')
    put(root, 'sys/block/sda/dev', '8:0\n')
    put(root, 'sys/block/sda/sda1/partition', '1\n')
    put(root, 'sys/block/dm-0/dm/name', 'data\n')
    os.makedirs(os.path.join(root, 'sys/block/dm-0/slaves/sda'))
    put(root, 'proc/self/mountinfo',
        '29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n'
        '40 29 253:0 / /u01/my\\040data rw,noatime shared:2 - xfs /dev/mapper/data rw,attr2,inode64\n')
    return root


def test_linux_facts_from_a_fake_tree(tree):
    facts = host_facts.gather(tree, system_name='Linux')
    assert facts['memory']['total_bytes'] == 65536000 * 1024
    assert facts['memory']['hugepage_default_bytes'] == 2 * 1024 * 1024
    assert facts['hugepages']['2097152']['total'] == 4
    assert facts['hugepages']['2097152']['nodes'] == {'0': 4, '1': 0}
    assert facts['hugepages']['1073741824']['total'] == 0
    assert facts['numa']['nodes']['1'] == {'cpus': '4-7', 'memory_bytes': 32768000 * 1024, 'distances': [21, 10]}
    assert facts['numa']['online_cpus'] == '0-7'
    assert facts['transparent_hugepage'] == {'enabled': 'never', 'defrag': 'always'}
    assert facts['shm'] == {'kernel.sem': '250 32000 100 128', 'kernel.shmmni': '4096'}
    sda = facts['block_devices']['sda']
    assert sda['queue'] == {'scheduler': 'mq-deadline', 'rq_affinity': '1'}
    assert sda['wwid'] == 'naa.5000c500a1b2c3d4' and sda['partitions'] == ['sda1']
    assert facts['block_devices']['dm-0']['slaves'] == ['sda']
    assert facts['mounts'][1]['mount_point'] == '/u01/my data'
    assert facts['mounts'][1]['options'] == ['rw', 'noatime'] and facts['mounts'][1]['fstype'] == 'xfs'


def test_subset_and_unknown_subset(tree):
    assert sorted(host_facts.gather(tree, ['memory'], system_name='Linux')) == ['memory', 'system']
    with pytest.raises(ValueError) as error:
        host_facts.gather(tree, ['memroy'], system_name='Linux')
    assert 'memroy' in str(error.value)


def test_sunos_facts_from_recorded_commands(tmp_path):
    put(str(tmp_path), 'etc/project', 'system:0::::\n# comment\nuser.oracle:100::oracle::'
        'project.max-shm-memory=(privileged,8589934592,deny)\n')
    answers = {
        '/usr/sbin/prtconf': 'System Configuration:  Oracle Corporation  sun4v\nMemory size: 65536 Megabytes\n',
        '/usr/bin/pagesize': '8192\n',
        '/usr/sbin/psrset': 'user processor set 1: processors 4 5 6 7\nuser processor set 2: processor 8\n',
    }
    facts = host_facts.gather(str(tmp_path), ['memory', 'cpusets'], system_name='SunOS',
                              runner=lambda argv: (0, answers[argv[0]], ''))
    assert facts['memory'] == {'total_bytes': 65536 * 1024 ** 2, 'page_size': 8192, 'hugepage_default_bytes': None}
    assert facts['processor_sets'] == {'1': [4, 5, 6, 7], '2': [8]}
    assert facts['projects'][1]['name'] == 'user.oracle'
    assert facts['projects'][1]['attributes'] == 'project.max-shm-memory=(privileged,8589934592,deny)'


def test_freebsd_facts_one_sysctl_call(tmp_path):
    calls = []

    def runner(argv):
        calls.append(argv)
        return 0, 'hw.physmem=17179869184\nhw.pagesize=4096\nkern.ipc.shmmax=536870912\nkern.ipc.shm_use_phys=0\n', ''
    facts = host_facts.gather(str(tmp_path), ['memory', 'shm'], system_name='FreeBSD', runner=runner)
    assert len(calls) == 1
    assert facts['memory']['total_bytes'] == 17179869184
    assert facts['shm'] == {'kern.ipc.shmmax': '536870912', 'kern.ipc.shm_use_phys': '0'}


def test_linux_hugepages_skip_other_entries_and_cgroup_v2_reports_the_cpuset_controller(tree):
    put(tree, 'sys/kernel/mm/hugepages/README', 'not a pool\n')
    os.makedirs(os.path.join(tree, 'sys/kernel/mm/hugepages/hugepages-oddkB'))
    put(tree, 'sys/fs/cgroup/cgroup.controllers', 'cpu io memory cpuset pids\n')
    put(tree, 'sys/fs/cgroup/cpuset.cpus.effective', '0-7\n')
    put(tree, 'sys/fs/cgroup/cpuset.mems.effective', '0-1\n')
    facts = host_facts.gather(tree, system_name='Linux')
    assert sorted(facts['hugepages']) == ['1073741824', '2097152']
    cpusets = facts['cpusets']
    assert (cpusets['hierarchy'], cpusets['cpuset_controller']) == ('v2', True)
    assert cpusets['/'] == {'cpus': '0-7', 'mems': '0-1'}
    put(tree, 'sys/fs/cgroup/cgroup.controllers', 'cpu io memory pids\n')
    assert host_facts.gather(tree, system_name='Linux')['cpusets']['cpuset_controller'] is False


def test_parse_project_skips_comments_even_with_six_fields():
    projects = host_facts.parse_project('# user.oracle:100::oracle::project.max-shm-memory=(priv,1,deny)\n\n'
                                        'user.oracle:100::oracle::\n')
    assert [(p['name'], p['id']) for p in projects] == [('user.oracle', 100)]


def test_parse_project_gives_each_field_its_own_place():
    projects = host_facts.parse_project('group.dba:101:the dba group:oracle,grid:dba,oper:'
                                        'project.max-shm-memory=(priv,1,deny);task.final\n')
    assert projects == [{'name': 'group.dba', 'id': 101, 'comment': 'the dba group', 'users': 'oracle,grid',
                         'groups': 'dba,oper', 'attributes': 'project.max-shm-memory=(priv,1,deny);task.final'}]


@pytest.mark.parametrize('text, expected', [
    ('System Configuration:  Oracle Corporation  sun4v\nMemory size: 65536 Megabytes\n', 65536 * 1024 ** 2),
    ('System Configuration:  Oracle Corporation  sun4v\nMemory size: 2048 Gigabytes\n', 2048 * 1024 ** 3),
    ('no memory line\n', None),
])
def test_prtconf_memory_in_megabytes_or_gigabytes(text, expected):
    assert host_facts.parse_prtconf_memory(text) == expected
