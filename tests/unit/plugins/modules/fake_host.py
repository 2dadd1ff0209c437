# -*- coding: utf-8 -*-
"""A small fake Linux database host under a folder: every file the modules read.

build(root) writes /proc/sys, /proc/meminfo, /sys (huge pages, transparent huge pages,
CPUs and NUMA nodes, the block devices of fixtures/block/tree.yml), /etc (sysctl.d,
tmpfiles.d, limits, fstab, udev rules, postgresql.conf, my.cnf), an Oracle pfile and a
systemd unit.  BASELINE holds arguments each module accepts on that tree, so that a bad
input test changes one thing from a call known to work.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.tests.unit import helpers
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs

PGCONF = '/etc/postgresql/16/main/postgresql.conf'
MYCNF = '/etc/mysql/my.cnf'
PFILE = '/u01/app/oracle/product/19c/dbs/initORCL.ora'
HUGE_2M = '/sys/kernel/mm/hugepages/hugepages-2048kB'

FILES = {
    '/proc/sys/kernel/sem': '32000\t1024000000\t500\t32000\n',
    '/proc/sys/kernel/shmmni': '4096\n',
    '/proc/sys/kernel/shmmax': '18446744073692774399\n',
    '/proc/sys/kernel/shmall': '18446744073692774399\n',
    '/proc/sys/kernel/panic_on_oops': '0\n',
    '/proc/sys/kernel/core_pattern': 'core\n',
    '/proc/sys/fs/file-max': '9223372036854775807\n',
    '/proc/sys/fs/aio-max-nr': '65536\n',
    '/proc/sys/vm/nr_hugepages': '0\n',
    '/proc/sys/vm/swappiness': '60\n',
    '/proc/sys/vm/overcommit_memory': '0\n',
    '/proc/sys/vm/hugetlb_shm_group': '0\n',
    '/proc/sys/vm/compact_memory': '',
    '/proc/sys/net/ipv4/ip_local_port_range': '32768\t60999\n',
    '/proc/sys/net/core/rmem_max': '212992\n',
    '/proc/meminfo': ('MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n'
                      'HugePages_Total:       0\nHugepagesize:       2048 kB\n'),
    '/proc/self/smaps': 'KernelPageSize:        4 kB\nMMUPageSize:           4 kB\n',
    '/etc/sysctl.d/10-local.conf': '# local settings\nvm.swappiness = 60\n',
    '/usr/lib/sysctl.d/50-default.conf': '# vendor\nkernel.panic_on_oops = 0\n',
    HUGE_2M + '/nr_hugepages': '0\n',
    HUGE_2M + '/free_hugepages': '0\n',
    HUGE_2M + '/surplus_hugepages': '0\n',
    HUGE_2M + '/resv_hugepages': '0\n',
    '/sys/kernel/mm/transparent_hugepage/enabled': 'always madvise [never]\n',
    '/sys/kernel/mm/transparent_hugepage/defrag': '[always] defer madvise never\n',
    '/etc/tmpfiles.d/10-local.conf': '# local\nd /run/db 0755 root root -\n',
    '/sys/devices/system/cpu/online': '0-3\n',
    '/sys/devices/system/cpu/possible': '0-3\n',
    '/sys/devices/system/node/node0/cpulist': '0-1\n',
    '/sys/devices/system/node/node0/meminfo': 'Node 0 MemTotal:        8192000 kB\n',
    '/sys/devices/system/node/node0/distance': '10 20\n',
    '/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages': '0\n',
    '/sys/devices/system/node/node1/cpulist': '2-3\n',
    '/sys/devices/system/node/node1/meminfo': 'Node 1 MemTotal:        8192000 kB\n',
    '/sys/devices/system/node/node1/distance': '20 10\n',
    '/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages': '0\n',
    '/etc/security/limits.conf': '# /etc/security/limits.conf\n*               soft    core            0\n',
    '/etc/security/limits.d/10-local.conf': '@dba            hard    nofile          65536\n',
    '/lib/systemd/system/postgresql.service': '[Service]\nExecStart=/bin/true\n',
    '/etc/fstab': ('# /etc/fstab\nUUID=0a1b2c3d / ext4 errors=remount-ro 0 1\n'
                   'LABEL=ORADATA /u01 xfs defaults 0 2\n/dev/nvme0n1p1\t/u03\txfs\tdefaults\t0 2\n'),
    PGCONF: "# postgresql.conf\nshared_buffers = 128MB\nwork_mem = 4MB\nlog_line_prefix = '%m [%p] '\n",
    MYCNF: '[mysqld]\ninnodb_flush_method = fsync\ninnodb_buffer_pool_size = 1G\n',
    PFILE: "*.db_name='ORCL'\n*.filesystemio_options='none'\n",
    '/run/db.pid': '1234\n',
    # a GRUB host (kernel_cmdline): the running command line and GRUB's defaults
    '/proc/cmdline': 'BOOT_IMAGE=/boot/vmlinuz root=UUID=0a1b2c3d ro quiet\n',
    '/etc/default/grub': 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n',
}

# Arguments each module accepts on this tree (run in check mode by the tests).
BASELINE = {
    'host_facts': {},
    'kernel_params': {'params': {'kernel.shmmni': 4096, 'fs.aio-max-nr': 1048576}},
    'hugepages': {'pages': [{'size': '2M', 'count': 16}]},
    'sysfs_attr': {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never'}},
    'resource_limits': {'limits': [{'domain': 'oracle', 'type': 'soft', 'item': 'memlock', 'value': 1048576}]},
    'block_queue': {'devices': [{'name': ['sda'], 'attributes': {'rq_affinity': 2}}]},
    'mount_options': {'path': '/u01', 'present': ['noatime']},
    'db_parameter': {'engine': 'postgresql', 'path': PGCONF, 'params': {'work_mem': '8MB'}},
    'processor_set': {'name': 'pg', 'cpus': '2-3', 'service': 'postgresql'},
    'kernel_cmdline': {'params': {'transparent_hugepage': 'never', 'nosmt': None}},
    'db_effect': {'service': 'postgresql.service', 'checks': ['memlock', 'cpus'], 'memlock': 'infinity',
                  'cpus': '2-3'},
}


put = helpers.put
digest = helpers.digest  # fake_host.digest(root): what the tests compare before and after a call


def build(root):
    fake_sysfs.build(root)
    for path, text in FILES.items():
        put(root, path, text)
    # as on every host: the baseline (engine/baseline.py) makes only its own folder in it
    os.makedirs(os.path.join(root, 'var', 'lib'), exist_ok=True)
    return root
