# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the host facts that sizing and drift reports need.

One pass over /proc and /sys (Linux), or a handful of commands (SunOS, FreeBSD); no
per-item command.  Every reader takes ``root`` so unit tests feed a fake tree, and reads
within it: every path goes through kernel_path()/confine() (engine/files.py), so a link
under <root>/proc or <root>/sys that leads out of root is refused, never read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import confine, kernel_path, read_text
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError

SUBSETS = ('memory', 'hugepages', 'numa', 'transparent_hugepage', 'shm', 'block_devices', 'mounts', 'cpusets')
SHM_KEYS = ('kernel.shmmax', 'kernel.shmall', 'kernel.shmmni', 'kernel.sem', 'vm.nr_hugepages',
            'vm.hugetlb_shm_group')
QUEUE_SKIP = frozenset(['iosched', 'iostats_passthrough'])


def _read(root, path):
    """A kernel pseudo-file's stripped text (sysfs.read_text()), read within ``root``."""
    return sysfs.read_text(confine(root, path))


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------ Linux readers
def linux_memory(root):
    info = platforms.meminfo(root)
    return {
        'total_bytes': info.get('MemTotal'),
        'page_size': platforms.page_size(),
        'hugepage_default_bytes': info.get('Hugepagesize'),
    }


def linux_hugepages(root):
    pools = {}
    base = kernel_path(root, '/sys/kernel/mm/hugepages')
    for name in _listdir(base):
        match = re.match(r'^hugepages-([0-9]+)kB\Z', name)
        if not match:
            continue
        size = int(match.group(1)) * 1024
        folder = os.path.join(base, name)
        pools[str(size)] = {
            'size_bytes': size,
            'total': _int(_read(root, os.path.join(folder, 'nr_hugepages'))),
            'free': _int(_read(root, os.path.join(folder, 'free_hugepages'))),
            'surplus': _int(_read(root, os.path.join(folder, 'surplus_hugepages'))),
            'reserved': _int(_read(root, os.path.join(folder, 'resv_hugepages'))),
            'nodes': {},
        }
    node_base = kernel_path(root, '/sys/devices/system/node')
    for node in _listdir(node_base):
        match = re.match(r'^node([0-9]+)\Z', node)
        if not match:
            continue
        for size_key, pool in pools.items():
            name = 'hugepages-%dkB' % (pool['size_bytes'] // 1024)
            count = _read(root, os.path.join(node_base, node, 'hugepages', name, 'nr_hugepages'))
            if count is not None:
                pool['nodes'][match.group(1)] = int(count)
    return pools


def linux_numa(root):
    topology = numa.read_topology(root)
    return {
        'nodes': dict((str(node), {
            'cpus': numa.render_cpu_list(info['cpus']),
            'memory_bytes': info['memory_bytes'],
            'distances': info['distances'],
        }) for node, info in topology['nodes'].items()),
        'online_cpus': numa.render_cpu_list(topology['online_cpus']),
        'offline_cpus': numa.render_cpu_list(topology['offline_cpus']),
    }


def linux_thp(root):
    base = kernel_path(root, '/sys/kernel/mm/transparent_hugepage')
    return dict((name, sysfs.read_value(confine(root, os.path.join(base, name)))) for name in ('enabled', 'defrag')
                if os.path.exists(os.path.join(base, name)))


def linux_shm(root):
    values = {}
    for key in SHM_KEYS:
        text = _read(root, kernel_path(root, '/proc/sys/' + key.replace('.', '/')))
        if text is not None:
            values[key] = ' '.join(text.split())
    return values


def _block_identifiers(root, folder):
    ids = {}
    for field, candidates in (
            ('wwid', ('wwid', 'device/wwid')),
            ('serial', ('serial', 'device/serial')),
            ('model', ('device/model',)),
            ('vendor', ('device/vendor',)),
            ('dm_name', ('dm/name',)),
            ('dm_uuid', ('dm/uuid',))):
        for candidate in candidates:
            value = _read(root, os.path.join(folder, candidate))
            if value:
                ids[field] = value
                break
    return ids


def linux_block_devices(root):
    devices = {}
    base = kernel_path(root, '/sys/block')
    for name in _listdir(base):
        folder = confine(root, os.path.join(base, name))
        queue = {}
        queue_folder = confine(root, os.path.join(folder, 'queue'))
        for attribute in _listdir(queue_folder):
            path = confine(root, os.path.join(queue_folder, attribute))
            if attribute in QUEUE_SKIP or not os.path.isfile(path):
                continue
            value = sysfs.read_value(path)
            if value is not None:
                queue[attribute] = value
        device = {
            'dev': _read(root, os.path.join(folder, 'dev')),
            'size_sectors': _int(_read(root, os.path.join(folder, 'size'))),
            'removable': _read(root, os.path.join(folder, 'removable')) == '1',
            'partitions': [p for p in _listdir(folder) if os.path.exists(os.path.join(folder, p, 'partition'))],
            'slaves': _listdir(os.path.join(folder, 'slaves')),
            'holders': _listdir(os.path.join(folder, 'holders')),
            'queue': queue,
        }
        device.update(_block_identifiers(root, folder))
        devices[name] = device
    return devices


def parse_mountinfo(text):
    """/proc/self/mountinfo -> list of {mount_point, source, fstype, options, super_options, dev}."""
    return [{
        'mount_point': mount.mount_point,
        'dev': mount.dev,
        'options': mount.options,
        'fstype': mount.fstype,
        'source': mount.source,
        'super_options': mount.super_options,
    } for mount in _mountinfo.parse(text)]


def linux_mounts(root):
    return parse_mountinfo(_read(root, kernel_path(root, '/proc/self/mountinfo')))


def linux_cpusets(root):
    sets = {}
    v1 = kernel_path(root, '/sys/fs/cgroup/cpuset')
    if os.path.isfile(os.path.join(v1, 'cpuset.cpus')):
        sets['hierarchy'] = 'v1'
        for name in [''] + [d for d in _listdir(v1) if os.path.isdir(os.path.join(v1, d))]:
            folder = os.path.join(v1, name)
            sets['/' + name] = {'cpus': _read(root, os.path.join(folder, 'cpuset.cpus')),
                                'mems': _read(root, os.path.join(folder, 'cpuset.mems'))}
        return sets
    v2 = kernel_path(root, '/sys/fs/cgroup')
    if os.path.isfile(os.path.join(v2, 'cgroup.controllers')):
        sets['hierarchy'] = 'v2'
        controllers = (_read(root, os.path.join(v2, 'cgroup.controllers')) or '').split()
        sets['cpuset_controller'] = 'cpuset' in controllers
        sets['/'] = {'cpus': _read(root, os.path.join(v2, 'cpuset.cpus.effective')),
                     'mems': _read(root, os.path.join(v2, 'cpuset.mems.effective'))}
    return sets


LINUX_READERS = {
    'memory': linux_memory,
    'hugepages': linux_hugepages,
    'numa': linux_numa,
    'transparent_hugepage': linux_thp,
    'shm': linux_shm,
    'block_devices': linux_block_devices,
    'mounts': linux_mounts,
    'cpusets': linux_cpusets,
}


# ------------------------------------------------------------------ SunOS / FreeBSD
def parse_prtconf_memory(text):
    match = re.search(r'^Memory size:\s+([0-9]+)\s+(Megabytes|Gigabytes)', text or '', re.M)
    if not match:
        return None
    return int(match.group(1)) * (1024 ** 2 if match.group(2) == 'Megabytes' else 1024 ** 3)


def parse_psrset(text):
    """``psrset -i`` output -> {set id: [cpu, ...]}."""
    sets = {}
    for line in (text or '').splitlines():
        match = re.match(r'^user processor set ([0-9]+): processors? (.*)\Z', line.strip())
        if match:
            sets[match.group(1)] = [int(c) for c in match.group(2).split()]
    return sets


def parse_project(text):
    """/etc/project -> [{name, id, comment, users, groups, attributes}] (comments skipped)."""
    projects = []
    for line in (text or '').splitlines():
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        fields = line.split(':', 5)
        if len(fields) != 6:
            continue
        projects.append({'name': fields[0], 'id': _int(fields[1]), 'comment': fields[2],
                         'users': fields[3], 'groups': fields[4], 'attributes': fields[5]})
    return projects


def sunos_facts(root, runner, subsets):
    facts = {}
    if 'memory' in subsets:
        rc, out, dummy = runner(['/usr/sbin/prtconf'])
        rc2, page, dummy = runner(['/usr/bin/pagesize'])
        facts['memory'] = {'total_bytes': parse_prtconf_memory(out) if rc == 0 else None,
                           'page_size': _int(page.strip()) if rc2 == 0 else None,
                           'hugepage_default_bytes': None}
    if 'cpusets' in subsets:
        rc, out, dummy = runner(['/usr/sbin/psrset', '-i'])
        facts['processor_sets'] = parse_psrset(out) if rc == 0 else {}
    facts['projects'] = parse_project(read_text(os.path.join(root, 'etc', 'project'), root=root))
    return facts


def freebsd_facts(root, runner, subsets):
    facts = {}
    names = ['hw.physmem', 'hw.pagesize', 'kern.ipc.shmmax', 'kern.ipc.shmall', 'kern.ipc.shm_use_phys']
    rc, out, dummy = runner(['sysctl', '-e'] + names)
    values = {}
    if rc == 0:
        for line in out.splitlines():
            key, sep, value = line.partition('=')
            if sep:
                values[key.strip()] = value.strip()
    if 'memory' in subsets:
        facts['memory'] = {'total_bytes': _int(values.get('hw.physmem')),
                           'page_size': _int(values.get('hw.pagesize')), 'hugepage_default_bytes': None}
    if 'shm' in subsets:
        facts['shm'] = dict((k, v) for k, v in values.items() if k.startswith('kern.ipc.'))
    return facts


def gather(root='/', subsets=None, runner=None, system_name=None):
    """Return the ``dbhost`` facts dict for the chosen subsets.

    Raises InputError for a root that is not an existing folder (relative, missing, a
    file: facts read from nothing would look like an empty host) and for a kernel file
    that is not in the kernel's format (numa.KernelFileError, naming the file).
    """
    root = validate.check_root(root)
    subsets = list(subsets or SUBSETS)
    unknown = [s for s in subsets if s not in SUBSETS]
    if unknown:
        raise InputError('subset: unknown subset(s): %s (known: %s)' % (', '.join(unknown), ', '.join(SUBSETS)))
    name = system_name or platforms.system()
    facts = {'system': name}
    if name == platforms.LINUX:
        for subset in subsets:
            facts[subset] = LINUX_READERS[subset](root)
    elif name == platforms.SUNOS:
        facts.update(sunos_facts(root, runner, subsets))
    elif name == platforms.FREEBSD:
        facts.update(freebsd_facts(root, runner, subsets))
    return facts
