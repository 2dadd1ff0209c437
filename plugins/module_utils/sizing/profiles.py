# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the vendors' kernel parameter profiles, each value with its rule and source.

A profile entry is ``key: (value, comparison, source)``.  ``comparison`` is how the vendor
words it: ``minimum`` for "at least" (a larger value is met and never lowered), ``exact``
for a value that is not a bound (a port range, a switch).  Size-dependent keys (shmmax,
shmall, shmmni, huge pages) are not here: the shared_memory role owns them.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ORACLE_LINUX = ('Oracle Database Installation Guide for Linux (19c, 21c, 23ai), '
                '"Minimum Parameter Settings for Installation"')
POSTGRESQL_OVERCOMMIT = ('PostgreSQL documentation, "Managing Kernel Resources", '
                         '"Linux Memory Overcommit"')
MYSQL_AIO = ('MySQL Reference Manual and MariaDB documentation, innodb_use_native_aio '
             '(asynchronous I/O requests are limited by fs.aio-max-nr)')

MINIMUM, EXACT, MAXIMUM = 'minimum', 'exact', 'maximum'
# A range (low high): its own rule, see range_comparison().
RANGE = 'range'

KERNEL_IPC = 'Linux Documentation/admin-guide/sysctl/kernel.rst (System V IPC limits: capacities)'
KERNEL_FS = 'Linux Documentation/admin-guide/sysctl/fs.rst (file-max, aio-max-nr, nr_open: capacities)'
KERNEL_NET = ('Linux Documentation/admin-guide/sysctl/net.rst and Documentation/networking/ip-sysctl.rst '
              '(buffer sizes and queue lengths: capacities)')
KERNEL_VM = ('Linux Documentation/admin-guide/sysctl/vm.rst (swappiness and the dirty thresholds: the most '
             'reclaim or write-back a database host should see)')
KERNEL_SWITCH = 'Linux Documentation/admin-guide/sysctl (a switch or a mode: exactly one value)'
HUGETLB_GROUP = 'Linux Documentation/admin-guide/sysctl/vm.rst, hugetlb_shm_group (a group id)'

LINUX_PROFILES = {
    # The values oracle-database-preinstall also sets.  The guide lists them as minimums
    # ("at least"), except the port range (a range) and panic_on_oops (a switch).
    'oracle': {
        # semmsl semmns semopm semmni, each a minimum
        'kernel.sem': ('250 32000 100 128', MINIMUM, ORACLE_LINUX),
        'kernel.panic_on_oops': ('1', EXACT, ORACLE_LINUX),
        'fs.file-max': ('6815744', MINIMUM, ORACLE_LINUX),
        'fs.aio-max-nr': ('1048576', MINIMUM, ORACLE_LINUX),
        'net.ipv4.ip_local_port_range': ('9000 65500', EXACT, ORACLE_LINUX),
        'net.core.rmem_default': ('262144', MINIMUM, ORACLE_LINUX),
        'net.core.rmem_max': ('4194304', MINIMUM, ORACLE_LINUX),
        'net.core.wmem_default': ('262144', MINIMUM, ORACLE_LINUX),
        'net.core.wmem_max': ('1048576', MINIMUM, ORACLE_LINUX),
    },
    # Strict overcommit keeps the OOM killer away from the postmaster. SysV shared memory
    # limits are no longer a concern since PostgreSQL 9.3 (POSIX/mmap shared memory).
    'postgresql': {
        'vm.overcommit_memory': ('2', EXACT, POSTGRESQL_OVERCOMMIT),
    },
    'mysql': {
        'fs.aio-max-nr': ('1048576', MINIMUM, MYSQL_AIO),
    },
    'none': {},
}

# Every sysctl key the roles know, with the comparison its value is meant with and the
# source of that rule.  A profile's value (above) and the shared_memory sizing use it;
# a value a user writes is exact unless written >=N or <=N (or given a comparison in
# kernel_params_comparisons), whatever the table says.  minimum: a capacity (more is
# fine, never lowered); maximum: a behaviour knob where less is fine; exact: a switch,
# a mode, an id or a triple; range: see range_comparison().
KEY_RULES = {
    'kernel.sem': (MINIMUM, ORACLE_LINUX + '; semmsl semmns semopm semmni, each a capacity, field by field'),
    'kernel.shmmax': (MINIMUM, ORACLE_LINUX),
    'kernel.shmall': (MINIMUM, ORACLE_LINUX),
    'kernel.shmmni': (MINIMUM, ORACLE_LINUX),
    'kernel.msgmax': (MINIMUM, KERNEL_IPC),
    'kernel.msgmnb': (MINIMUM, KERNEL_IPC),
    'kernel.msgmni': (MINIMUM, KERNEL_IPC),
    'kernel.shm_rmid_forced': (EXACT, KERNEL_SWITCH),
    'kernel.panic_on_oops': (EXACT, ORACLE_LINUX + ' (a switch)'),
    'kernel.panic': (EXACT, KERNEL_SWITCH),
    'kernel.pid_max': (MINIMUM, 'Linux Documentation/admin-guide/sysctl/kernel.rst (pid_max: a capacity)'),
    'kernel.threads-max': (MINIMUM, 'Linux Documentation/admin-guide/sysctl/kernel.rst (threads-max: a capacity)'),
    'kernel.numa_balancing': (EXACT, KERNEL_SWITCH),
    'kernel.randomize_va_space': (EXACT, KERNEL_SWITCH),
    'kernel.core_pattern': (EXACT, 'Linux Documentation/admin-guide/sysctl/kernel.rst (a string)'),
    'vm.nr_hugepages': (MINIMUM, 'the shared_memory role\'s sizing (sizing/shm.py): the pool the database needs'),
    'vm.nr_overcommit_hugepages': (MINIMUM, 'Linux Documentation/admin-guide/mm/hugetlbpage.rst (a capacity)'),
    'vm.hugetlb_shm_group': (EXACT, HUGETLB_GROUP),
    'vm.swappiness': (MAXIMUM, KERNEL_VM),
    'vm.overcommit_memory': (EXACT, POSTGRESQL_OVERCOMMIT + ' (a mode)'),
    'vm.overcommit_ratio': (EXACT, POSTGRESQL_OVERCOMMIT),
    'vm.overcommit_kbytes': (EXACT, POSTGRESQL_OVERCOMMIT),
    'vm.dirty_ratio': (MAXIMUM, KERNEL_VM),
    'vm.dirty_background_ratio': (MAXIMUM, KERNEL_VM),
    'vm.dirty_bytes': (MAXIMUM, KERNEL_VM),
    'vm.dirty_background_bytes': (MAXIMUM, KERNEL_VM),
    'vm.dirty_expire_centisecs': (MAXIMUM, KERNEL_VM),
    'vm.dirty_writeback_centisecs': (MAXIMUM, KERNEL_VM),
    'vm.min_free_kbytes': (MINIMUM, 'Linux Documentation/admin-guide/sysctl/vm.rst (a reserve)'),
    'vm.max_map_count': (MINIMUM, 'Linux Documentation/admin-guide/sysctl/vm.rst (a capacity)'),
    'vm.vfs_cache_pressure': (EXACT, 'Linux Documentation/admin-guide/sysctl/vm.rst (a weight)'),
    'vm.zone_reclaim_mode': (EXACT, 'Linux Documentation/admin-guide/sysctl/vm.rst (a mode)'),
    'vm.watermark_scale_factor': (EXACT, 'Linux Documentation/admin-guide/sysctl/vm.rst (a weight)'),
    'fs.file-max': (MINIMUM, ORACLE_LINUX),
    'fs.aio-max-nr': (MINIMUM, ORACLE_LINUX + '; ' + MYSQL_AIO),
    'fs.nr_open': (MINIMUM, KERNEL_FS),
    'net.core.rmem_default': (MINIMUM, ORACLE_LINUX),
    'net.core.rmem_max': (MINIMUM, ORACLE_LINUX),
    'net.core.wmem_default': (MINIMUM, ORACLE_LINUX),
    'net.core.wmem_max': (MINIMUM, ORACLE_LINUX),
    'net.core.somaxconn': (MINIMUM, KERNEL_NET),
    'net.core.netdev_max_backlog': (MINIMUM, KERNEL_NET),
    'net.ipv4.ip_local_port_range': (RANGE, ORACLE_LINUX + ' (a range: low high)'),
    'net.ipv4.tcp_rmem': (EXACT, 'Documentation/networking/ip-sysctl.rst (min default max, a triple)'),
    'net.ipv4.tcp_wmem': (EXACT, 'Documentation/networking/ip-sysctl.rst (min default max, a triple)'),
    'kern.ipc.shmmax': (MINIMUM, 'PostgreSQL documentation, "Managing Kernel Resources", FreeBSD'),
    'kern.ipc.shmall': (MINIMUM, 'PostgreSQL documentation, "Managing Kernel Resources", FreeBSD'),
    'kern.ipc.shm_use_phys': (EXACT, 'PostgreSQL documentation, "Managing Kernel Resources", FreeBSD (a switch)'),
    'kern.ipc.semmns': (MINIMUM, 'PostgreSQL documentation, "Managing Kernel Resources", FreeBSD'),
    'shmsys:shminfo_shmmax': (MINIMUM, 'Oracle Database Installation Guide for Oracle Solaris (/etc/system)'),
    'shmsys:shminfo_shmmni': (MINIMUM, 'Oracle Database Installation Guide for Oracle Solaris (/etc/system)'),
    'semsys:seminfo_semmni': (MINIMUM, 'Oracle Database Installation Guide for Oracle Solaris (/etc/system)'),
    'semsys:seminfo_semmns': (MINIMUM, 'Oracle Database Installation Guide for Oracle Solaris (/etc/system)'),
}

# Rules of the other settings the roles write, with their sources.
OTHER_RULES = {
    'memlock': (MINIMUM, 'Oracle Database Installation Guide for Linux, "Checking Resource Limits"; '
                         'MySQL Reference Manual, "Enabling Large Page Support"'),
    'LimitMEMLOCK': (MINIMUM, 'systemd.exec(5), LimitMEMLOCK= (the same limit for a service)'),
    'transparent_hugepage': (EXACT, 'the database vendors\' advice on transparent huge pages (a mode)'),
}

# block_queue read_ahead_kb per workload: (rule, source).  oltp: at most the kernel's
# default, small random reads gain nothing from more; dss: at least tuned's
# throughput-performance value, a larger read-ahead a DSS host already has is kept.
READ_AHEAD_RULES = {
    'oltp': (MAXIMUM, 'Linux include/linux/mm.h VM_READAHEAD_PAGES: at most the kernel default, 128 KiB'),
    'dss': (MINIMUM, 'tuned profile throughput-performance: at least its readahead, 4096 KiB'),
}


def key_rule(key):
    """(rule, source) of a known sysctl key, or (None, None)."""
    return KEY_RULES.get(key, (None, None))


def range_comparison(how):
    """The per-field comparison of a range (low high) asked as a minimum or maximum.

    ``>=9000 65500`` on a range means "at least this range": the low end at most 9000 and
    the high end at least 65500 (the range covers 9000..65500); ``<=`` means "within this
    range" (low at least 9000, high at most 65500); exact means exactly these two ends.
    """
    if how == MINIMUM:
        return [MAXIMUM, MINIMUM]
    if how == MAXIMUM:
        return [MINIMUM, MAXIMUM]
    return how


def user_comparison(key, how):
    """A user's comparison for ``key``, a range's single word turned into its per-field rule."""
    if KEY_RULES.get(key, (None,))[0] == RANGE and not isinstance(how, (list, tuple)):
        return range_comparison(how)
    return how


def profile_comparison(key, rule, mode):
    """The comparison of a profile's value under kernel_params_mode ``mode``.

    ``mode`` applies to the profile's bounds only: ``minimum`` (the default) keeps the
    vendor's rule, ``exact`` makes them exact, ``maximum`` makes them upper bounds.
    Switches and ranges stay exact.  A user's own values never go through here.
    """
    if rule in (EXACT, RANGE) or mode == MINIMUM:
        return EXACT if rule == RANGE else rule
    return mode


# No built-in profile outside Linux: SunOS and FreeBSD size-dependent limits are the
# shared_memory role's; kernel_params_settings still apply.
OTHER_PROFILES = {'oracle': {}, 'postgresql': {}, 'mysql': {}, 'none': {}}

PROFILE_NAMES = ('oracle', 'postgresql', 'mysql', 'none')


def kernel_profile(name, system):
    """The profile's entries for ``system`` (Linux, SunOS, FreeBSD): {key: (value, comparison, source)}."""
    table = LINUX_PROFILES if system == 'Linux' else OTHER_PROFILES
    if name not in table:
        raise KeyError(name)
    return dict(table[name])


# The database's OS user by engine (the packages' and installers' own names): Oracle's
# installation guide creates "oracle"; Debian's and the PGDG packages run PostgreSQL as
# "postgres"; MySQL's and MariaDB's packages run mysqld as "mysql".
ENGINE_USERS = {'oracle': 'oracle', 'postgresql': 'postgres', 'mysql': 'mysql'}
