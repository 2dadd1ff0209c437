# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel parameters the collection knows, with their type and range.

kernel_params checks a value against the running kernel when it can read it; an offline
root (no <root>/proc/sys), FreeBSD without a runner and SunOS (whose running kernel is
not read) cannot, and a value persisted unchecked would be refused at the next boot, or
worse, taken.  The keys below are checked against their type and range whatever the
kernel shows: every key the vendor profiles set (sizing/profiles.py, and
sizing/shm.py for the shared_memory role) and their neighbours.

Ranges are those of a 64-bit kernel, the widest any kernel accepts: a 32-bit kernel, or
a floor that depends on the kernel build (net.core.*mem_*), is still refused by the
kernel itself when the value is applied live.  Sources, per group below:
Linux Documentation/admin-guide/sysctl/kernel.rst, vm.rst, fs.rst, net.rst and
Documentation/networking/ip-sysctl.rst, with the limits from the handlers they
document (ipc/ipc_sysctl.c, kernel/sysctl.c, mm/, fs/file_table.c, fs/file.c, fs/aio.c,
net/core/sysctl_net_core.c, net/ipv4/sysctl_net_ipv4.c); FreeBSD sys/kern/sysv_shm.c
and sysv_sem.c; the Oracle Solaris Tunable Parameters Reference Manual (/etc/system).

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

INT_MAX = 2 ** 31 - 1
INT_MIN = -2 ** 31
UINT_MAX = 2 ** 32 - 1
LONG_MAX = 2 ** 63 - 1
ULONG_MAX = 2 ** 64 - 1
# IPCMNI_EXTEND_SHIFT: the highest ipc_mni (the ipcmni_extend boot option); 32768 without it.
IPC_MNI_MAX = 1 << 24

_INTEGER = re.compile(r'-?[0-9]+\Z')


class KeyValueError(ValueError):
    """A value outside what a known key takes; the message says what it takes."""


class Key(object):
    """One known key: its type as the kernel declares it, one (low, high) range per field.

    ``ordered``: the fields must not decrease (a range such as ip_local_port_range).
    ``max_length``: a string key's longest value.  ``fields``: the names of a vector's
    fields, as the kernel's documentation names them (said in drift details).
    """

    __slots__ = ('kind', 'ranges', 'ordered', 'max_length', 'fields')

    def __init__(self, kind, ranges=None, ordered=False, max_length=None, fields=None):
        self.kind = kind
        self.ranges = ranges or []
        self.ordered = ordered
        self.max_length = max_length
        self.fields = fields

    def describe(self):
        if self.kind == 'string':
            return 'a string of at most %d characters' % self.max_length
        spans = ['%d..%d' % span for span in self.ranges]
        if len(self.ranges) == 1:
            return '%s in %s' % (self.kind, spans[0])
        order = ', not decreasing' if self.ordered else ''
        return '%s: %d integers (%s)%s' % (self.kind, len(self.ranges), ', '.join(spans), order)


def _ulong(low=0, high=ULONG_MAX):
    return Key('unsigned long', [(low, high)])


def _int(low=0, high=INT_MAX):
    return Key('int', [(low, high)])


def _vector(*ranges, **options):
    return Key('vector of int', list(ranges), ordered=options.get('ordered', False), fields=options.get('fields'))


KNOWN_KEYS = {
    # Documentation/admin-guide/sysctl/kernel.rst (shmall, shmmax, shmmni, sem, msgmax,
    # msgmnb, msgmni, shm_rmid_forced); limits from ipc/ipc_sysctl.c: shmmax and shmall go
    # through proc_doulongvec_minmax, shmmni, msgmni and SEMMNI stop at ipc_mni.
    'kernel.shmmax': _ulong(),
    'kernel.shmall': _ulong(),
    'kernel.shmmni': _int(0, IPC_MNI_MAX),
    'kernel.sem': _vector((0, INT_MAX), (0, INT_MAX), (0, INT_MAX), (0, IPC_MNI_MAX),
                          fields=('semmsl', 'semmns', 'semopm', 'semmni')),
    'kernel.msgmax': _int(),
    'kernel.msgmnb': _int(),
    'kernel.msgmni': _int(0, IPC_MNI_MAX),
    'kernel.shm_rmid_forced': _int(0, 1),
    # kernel.rst: panic_on_oops 0 or 1; panic is seconds (negative: reboot at once);
    # pid_max from RESERVED_PIDS + 1 to PID_MAX_LIMIT (kernel/pid.c); threads-max up to
    # FUTEX_TID_MASK (kernel/fork.c); numa_balancing 0..3; core_pattern below
    # CORENAME_MAX_SIZE (128) characters.
    'kernel.panic_on_oops': _int(0, 1),
    'kernel.panic': _int(INT_MIN, INT_MAX),
    'kernel.pid_max': _int(301, 4194304),
    'kernel.threads-max': _int(20, 0x3fffffff),
    'kernel.numa_balancing': _int(0, 3),
    'kernel.randomize_va_space': _int(0, 2),
    'kernel.core_pattern': Key('string', max_length=127),
    # Documentation/admin-guide/sysctl/vm.rst: nr_hugepages, nr_overcommit_hugepages and
    # overcommit_kbytes are unsigned long; hugetlb_shm_group a group id; swappiness
    # 0..200 (mm/vmscan.c, 0..100 before 5.8); overcommit_memory 0, 1 or 2; the ratios are
    # percentages; zone_reclaim_mode the bits 1, 2 and 4; watermark_scale_factor 1..3000.
    'vm.nr_hugepages': _ulong(),
    'vm.nr_overcommit_hugepages': _ulong(),
    'vm.hugetlb_shm_group': _int(),
    'vm.swappiness': _int(0, 200),
    'vm.overcommit_memory': _int(0, 2),
    'vm.overcommit_ratio': _int(),
    'vm.overcommit_kbytes': _ulong(),
    'vm.dirty_ratio': _int(0, 100),
    'vm.dirty_background_ratio': _int(0, 100),
    'vm.dirty_bytes': _ulong(),
    'vm.dirty_background_bytes': _ulong(),
    'vm.dirty_expire_centisecs': _int(),
    'vm.dirty_writeback_centisecs': _int(),
    'vm.min_free_kbytes': _int(),
    'vm.max_map_count': _int(),
    'vm.vfs_cache_pressure': _int(),
    'vm.zone_reclaim_mode': _int(0, 7),
    'vm.watermark_scale_factor': _int(1, 3000),
    # Documentation/admin-guide/sysctl/fs.rst: file-max up to LONG_MAX (fs/file_table.c),
    # aio-max-nr unsigned long (fs/aio.c), nr_open from BITS_PER_LONG to the
    # sysctl_nr_open_max of fs/file.c.
    'fs.file-max': _ulong(0, LONG_MAX),
    'fs.aio-max-nr': _ulong(),
    'fs.nr_open': _int(64, 2147483584),
    # Documentation/admin-guide/sysctl/net.rst (rmem_default, rmem_max, wmem_default,
    # wmem_max, somaxconn, netdev_max_backlog): int; the kernel's own floor
    # (SOCK_MIN_RCVBUF, SOCK_MIN_SNDBUF, net/core/sysctl_net_core.c) depends on its build.
    'net.core.rmem_default': _int(),
    'net.core.rmem_max': _int(),
    'net.core.wmem_default': _int(),
    'net.core.wmem_max': _int(),
    'net.core.somaxconn': _int(),
    'net.core.netdev_max_backlog': _int(),
    # Documentation/networking/ip-sysctl.rst: ip_local_port_range is 2 integers, the first
    # not above the second, each 1..65535 (net/ipv4/sysctl_net_ipv4.c); tcp_rmem and
    # tcp_wmem are 3 integers (min, default, max), each at least 1.
    'net.ipv4.ip_local_port_range': _vector((1, 65535), (1, 65535), ordered=True, fields=('low', 'high')),
    'net.ipv4.tcp_rmem': _vector((1, INT_MAX), (1, INT_MAX), (1, INT_MAX), fields=('min', 'default', 'max')),
    'net.ipv4.tcp_wmem': _vector((1, INT_MAX), (1, INT_MAX), (1, INT_MAX), fields=('min', 'default', 'max')),
    # FreeBSD sys/kern/sysv_shm.c: kern.ipc.shmmax and shmall are u_long, shm_use_phys a
    # 0/1 switch; sys/kern/sysv_sem.c: kern.ipc.semmns an int.
    'kern.ipc.shmmax': _ulong(),
    'kern.ipc.shmall': _ulong(),
    'kern.ipc.shm_use_phys': _int(0, 1),
    'kern.ipc.semmns': _int(),
    # Oracle Solaris Tunable Parameters Reference Manual (System V IPC, /etc/system):
    # shminfo_shmmax an unsigned long, shminfo_shmmni, seminfo_semmni and seminfo_semmns
    # signed integers from 0 to MAXINT.
    'shmsys:shminfo_shmmax': _ulong(),
    'shmsys:shminfo_shmmni': _int(),
    'semsys:seminfo_semmni': _int(),
    'semsys:seminfo_semmns': _int(),
}


def known(key):
    """The Key of a (dotted, canonical) name, or None for a key the table does not know."""
    return KNOWN_KEYS.get(key)


def field_names(key):
    """The names of a known vector key's fields, or None."""
    spec = KNOWN_KEYS.get(key)
    return spec.fields if spec is not None else None


def check(key, value):
    """Raise KeyValueError when ``value`` (normalized text) is not what known ``key`` takes."""
    spec = KNOWN_KEYS.get(key)
    if spec is None:
        return
    if spec.kind == 'string':
        if len(value) > spec.max_length:
            raise KeyValueError('%s takes %s; %r has %d' % (key, spec.describe(), value, len(value)))
        return
    fields = value.split()
    if len(fields) != len(spec.ranges):
        raise KeyValueError('%s takes %d value(s) (%s), got %d (%r)'
                            % (key, len(spec.ranges), spec.describe(), len(fields), value))
    numbers = []
    for field, (low, high) in zip(fields, spec.ranges):
        if not _INTEGER.match(field):
            raise KeyValueError('%s takes %s; %r is not numeric (a decimal integer)' % (key, spec.describe(), field))
        number = int(field)
        if not low <= number <= high:
            raise KeyValueError('%s takes %s; %s is out of range' % (key, spec.describe(), field))
        numbers.append(number)
    if spec.ordered and numbers != sorted(numbers):
        raise KeyValueError('%s takes %s; %r decreases' % (key, spec.describe(), value))


# Keys whose /proc/sys entry exists only once a kernel module is loaded: (prefix, module).
# Without the module the running kernel has no such key; a line persisted for it is set at
# a boot where the module is loaded before systemd-sysctl runs (formats/modules_load.py says
# whether the boot does that, or a udev rule runs sysctl when the module loads).  This is the
# one table of them; where each table registers them in Linux:
#   net.bridge.*: net/bridge/br_netfilter_hooks.c (br_netfilter, split from bridge in 3.18)
#   net.netfilter.*, net.nf_conntrack_max: net/netfilter/nf_conntrack_standalone.c (nf_conntrack)
#   net.ipv4.netfilter.*: the ip_conntrack_* compatibility names nf_conntrack_ipv4 registered
#     (net/ipv4/netfilter/, CONFIG_NF_CONNTRACK_PROC_COMPAT; older kernels only)
#   net.ipv4.vs.*: net/netfilter/ipvs/ip_vs_ctl.c (ip_vs); net.sctp.*: net/sctp/sysctl.c (sctp)
#   fs.nfs.*: fs/nfs/sysctl.c (nfs); sunrpc.*: net/sunrpc/sysctl.c (sunrpc)
MODULE_KEYS = (
    ('net.bridge.', 'br_netfilter'),
    ('net.netfilter.', 'nf_conntrack'),
    ('net.nf_conntrack_max', 'nf_conntrack'),
    ('net.ipv4.netfilter.', 'nf_conntrack_ipv4'),
    ('net.ipv4.vs.', 'ip_vs'),
    ('net.sctp.', 'sctp'),
    ('fs.nfs.', 'nfs'),
    ('sunrpc.', 'sunrpc'),
)


def module_of(key):
    """The kernel module that brings ``key`` (dotted, canonical), or None."""
    for prefix, module in MODULE_KEYS:
        if key == prefix or key.startswith(prefix):
            return module
    return None


def why_missing(key, where):
    """Why a running kernel has no ``key``: its module is not loaded, or it is not one of its keys."""
    module = module_of(key)
    if module:
        return 'no %s on this kernel (it appears once the %s module is loaded)' % (where, module)
    if key in KNOWN_KEYS:
        return 'no %s on this kernel (older or built without it)' % (where,)
    return 'no %s on this kernel (a key of another kernel version, or a misspelt name?)' % (where,)
