# -*- coding: utf-8 -*-
"""Recorded /proc samples of database processes, in the formats the kernel documents
(Documentation/filesystems/proc.rst: smaps, limits, stat, status, fdinfo; numa(7) and
Documentation/admin-guide/mm/numa_memory_policy.rst: numa_maps), laid out as a fake root."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.tests.unit.helpers import SMAPS_4K, put


def smaps_entry(start, end, perms, path, size_kb, page_kb=4, hugetlb_kb=0, rss_kb=None):
    """One smaps mapping as proc.rst shows it (header line, then the fields)."""
    rss = size_kb if rss_kb is None else rss_kb
    return ('%s-%s %s 00000000 00:01 %d%s\n'
            'Size:             %8d kB\nKernelPageSize:   %8d kB\nMMUPageSize:      %8d kB\n'
            'Rss:              %8d kB\nPss:              %8d kB\nShared_Clean:            0 kB\n'
            'Shared_Dirty:     %8d kB\nPrivate_Clean:           0 kB\nPrivate_Dirty:           0 kB\n'
            'Referenced:       %8d kB\nAnonymous:               0 kB\nLazyFree:                0 kB\n'
            'AnonHugePages:           0 kB\nShmemPmdMapped:          0 kB\nFilePmdMapped:           0 kB\n'
            'Shared_Hugetlb:   %8d kB\nPrivate_Hugetlb:         0 kB\nSwap:                    0 kB\n'
            'SwapPss:                 0 kB\nLocked:                  0 kB\nTHPeligible:    0\n'
            'VmFlags: rd wr sh mr mw me ms sd\n'
            % (start, end, perms, 0 if not path else 3276 + len(path), '                    ' + path if path else '',
               size_kb, page_kb, page_kb, 0 if hugetlb_kb else rss, 0 if hugetlb_kb else rss,
               0 if hugetlb_kb else rss, 0 if hugetlb_kb else rss, hugetlb_kb))


PROGRAM = smaps_entry('55d0c0a00000', '55d0c0e00000', 'r-xp', '/usr/lib/postgresql/15/bin/postgres', 4096)
HEAP = smaps_entry('55d0c1a00000', '55d0c1c00000', 'rw-p', '[heap]', 2048)
SYSV = smaps_entry('7f3a2b000000', '7f3a2b001000', 'rw-s', '/SYSV0052e2c1 (deleted)', 4)
DSM = smaps_entry('7f3a2b100000', '7f3a2b200000', 'rw-s', '/dev/shm/PostgreSQL.3187204306', 1024)
# PostgreSQL's main segment: a shared anonymous mapping (shmem names it /dev/zero) in 4 kB pages...
MAIN_4K = smaps_entry('7f3a2c000000', '7f3a35000000', 'rw-s', '/dev/zero (deleted)', 147456)
# ... or a MAP_HUGETLB one (hugetlbfs names it anon_hugepage) in 2 MB pages
MAIN_2M = smaps_entry('7f3a2c000000', '7f3a35000000', 'rw-s', '/anon_hugepage (deleted)', 147456, page_kb=2048,
                      hugetlb_kb=147456)
# MariaDB's buffer pool with large_pages: a private MAP_HUGETLB mapping
MARIADB_POOL_2M = smaps_entry('7f3a40000000', '7f3a48000000', 'rw-p', '/anon_hugepage (deleted)', 131072,
                              page_kb=2048, hugetlb_kb=131072)
MARIADB_POOL_4K = smaps_entry('7f3a40000000', '7f3a48000000', 'rw-p', '', 131072)

# /proc/PID/limits as fs/proc/base.c proc_pid_limits() prints it: the name in 25 columns and a
# space, soft and hard limits in 20 columns and a space each, the unit in 10 columns.
LIMIT_ROWS = (
    ('Max cpu time', 'unlimited', 'unlimited', 'seconds'), ('Max file size', 'unlimited', 'unlimited', 'bytes'),
    ('Max data size', 'unlimited', 'unlimited', 'bytes'), ('Max stack size', '8388608', 'unlimited', 'bytes'),
    ('Max core file size', '0', 'unlimited', 'bytes'), ('Max resident set', 'unlimited', 'unlimited', 'bytes'),
    ('Max processes', '96316', '96316', 'processes'), ('Max open files', '1024', '524288', 'files'),
    ('Max locked memory', None, None, 'bytes'), ('Max address space', 'unlimited', 'unlimited', 'bytes'),
    ('Max file locks', 'unlimited', 'unlimited', 'locks'), ('Max pending signals', '96316', '96316', 'signals'),
    ('Max msgqueue size', '819200', '819200', 'bytes'), ('Max nice priority', '0', '0', ''),
    ('Max realtime priority', '0', '0', ''), ('Max realtime timeout', 'unlimited', 'unlimited', 'us'))


def limits(memlock_soft, memlock_hard=None):
    rows = [('Limit', 'Soft Limit', 'Hard Limit', 'Units')]
    for name, soft, hard, unit in LIMIT_ROWS:
        rows.append((name, soft or memlock_soft, hard or memlock_hard or memlock_soft, unit))
    return ''.join('%-25s %-20s %-20s %-10s\n' % row for row in rows)


def status(pid, name, cpus='0-3', mems='0-1'):
    return ('Name:\t%s\nUmask:\t0077\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\n'
            'Uid:\t106\t106\t106\t106\nGid:\t113\t113\t113\t113\nThreads:\t1\n'
            'Cpus_allowed:\t%s\nCpus_allowed_list:\t%s\nMems_allowed:\t00000000,00000003\n'
            'Mems_allowed_list:\t%s\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t3\n'
            % (name, pid, pid, 'f', cpus, mems))


def stat(pid, name, start_ticks):
    """/proc/PID/stat: 52 fields; the name in parentheses (here with a space and a parenthesis in it)."""
    fields = ['S', '1', str(pid), str(pid), '0', '-1', '4194560', '1710', '0', '0', '0', '12', '7', '0', '0',
              '20', '0', '1', '0', str(start_ticks), '227012608', '6612'] + ['0'] * 30
    return '%d (%s) %s\n' % (pid, name, ' '.join(fields))


BTIME = 1765000000
PROC_STAT = 'cpu  10 0 10 100 0 0 0 0 0 0\nintr 0\nctxt 100\nbtime %d\nprocesses 200\n' % BTIME


def numa_maps(lines):
    return ''.join(line + '\n' for line in lines)


NUMA_MAPS_NODE1 = numa_maps([
    '55d0c0a00000 bind:1 file=/usr/lib/postgresql/15/bin/postgres mapped=900 N1=900 kernelpagesize_kB=4',
    '55d0c1a00000 bind:1 heap anon=300 dirty=300 N1=300 kernelpagesize_kB=4',
    '7f3a2b000000 bind:1 file=/SYSV0052e2c1\\040(deleted) dirty=1 N1=1 kernelpagesize_kB=4',
    '7f3a2c000000 bind:1 file=/anon_hugepage\\040(deleted) huge dirty=72 N1=72 kernelpagesize_kB=2048',
])
NUMA_MAPS_SPLIT = numa_maps([
    '55d0c0a00000 default file=/usr/lib/postgresql/15/bin/postgres mapped=900 N0=900 kernelpagesize_kB=4',
    '7f3a2b000000 default file=/SYSV0052e2c1\\040(deleted) dirty=1 N0=1 kernelpagesize_kB=4',
    '7f3a2c000000 default file=/anon_hugepage\\040(deleted) huge dirty=72 N0=40 N1=32 kernelpagesize_kB=2048',
])

MOUNTINFO = ('22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n'
             '40 22 8:17 / /srv/data rw,noatime shared:20 - xfs /dev/sdb1 rw,attr2,inode64,noquota\n')


def process(root, pid, name, smaps='', maps='', memlock='65536', cpus='0-3', mems='0-1', start_ticks=1000,
            files=()):
    """One process under ROOT/proc/PID; FILES: (fd, path, octal flags text)."""
    put(root, 'proc/%d/smaps' % pid, smaps)
    put(root, 'proc/%d/numa_maps' % pid, maps)
    put(root, 'proc/%d/limits' % pid, limits(memlock))
    put(root, 'proc/%d/status' % pid, status(pid, name, cpus, mems))
    put(root, 'proc/%d/stat' % pid, stat(pid, name, start_ticks))
    os.makedirs(os.path.join(str(root), 'proc', str(pid), 'fd'), exist_ok=True)
    for fd, path, flags in files:
        os.symlink(path, os.path.join(str(root), 'proc', str(pid), 'fd', str(fd)))
        put(root, 'proc/%d/fdinfo/%d' % (pid, fd), 'pos:\t0\nflags:\t%s\nmnt_id:\t40\nino:\t131\n' % flags)


def host(root, pids, cgroup='/system.slice/postgresql.service'):
    """The host's side: /proc/stat (boot time), mountinfo, page size, the service's cgroup."""
    put(root, 'proc/stat', PROC_STAT)
    put(root, 'proc/self/mountinfo', MOUNTINFO)
    put(root, 'proc/self/smaps', SMAPS_4K)
    put(root, 'sys/fs/cgroup/systemd%s/cgroup.procs' % cgroup, ''.join('%d\n' % pid for pid in pids))


def systemctl(main, cgroup='/system.slice/postgresql.service', state='active'):
    """A runner answering ``systemctl show`` as systemd does, and recording the calls."""
    calls = []

    def runner(argv, **kwargs):
        calls.append(list(argv))
        return 0, 'MainPID=%d\nControlGroup=%s\nActiveState=%s\nLoadState=loaded\n' % (main, cgroup, state), ''
    runner.calls = calls
    return runner
