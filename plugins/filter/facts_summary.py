# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""facts_summary: ansible_facts.dbhost (the host_facts module) as a few lines a person reads in
one screen - what the roles' sizing and checks read: RAM and page sizes, huge page pools, NUMA
nodes, the shared memory limits, transparent huge pages, the disks' queues, the disk mounts and
cpusets. Loop devices with nothing attached and virtual file systems are counted, not listed.
The documentation is in facts_summary.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.units import human_size

QUEUE = ('scheduler', 'read_ahead_kb', 'nr_requests', 'rq_affinity', 'rotational')
SHM_KEYS = ('kernel.shmmax', 'kernel.shmall', 'kernel.shmmni', 'kernel.sem', 'vm.nr_hugepages', 'vm.hugetlb_shm_group')
LISTED = 12   # block devices and mounts listed before "... and N more"


def _size(value):
    try:
        return human_size(int(value))
    except (TypeError, ValueError):
        return str(value)


def _selected(text):
    """'[mq-deadline] none' -> 'mq-deadline' (the kernel marks the one in use); anything else as it is."""
    text = str(text)
    if '[' in text and ']' in text:
        return text[text.index('[') + 1:text.index(']')]
    return text


def _more(lines, total, what):
    if total > len(lines):
        lines.append('  ... and %d more %s' % (total - len(lines), what))
    return lines


def _memory(facts):
    memory = facts.get('memory') or {}
    if not memory:
        return []
    words = ['RAM %s (%s bytes)' % (_size(memory.get('total_bytes')), memory.get('total_bytes'))]
    if memory.get('page_size'):
        words.append('page size %s' % _size(memory['page_size']))
    if memory.get('hugepage_default_bytes'):
        words.append('default huge page %s' % _size(memory['hugepage_default_bytes']))
    return ['memory: ' + ', '.join(words)]


def _hugepages(facts):
    lines = []
    for size, pool in sorted((facts.get('hugepages') or {}).items(), key=lambda item: int(item[0])):
        nodes = ', '.join('node %s: %s' % (node, count) for node, count in sorted((pool.get('nodes') or {}).items()))
        lines.append('huge pages %s: %s total, %s free, %s reserved, %s surplus%s' % (
            _size(size), pool.get('total'), pool.get('free'), pool.get('reserved'), pool.get('surplus'),
            ' (%s)' % nodes if nodes else ''))
    return lines


def _numa(facts):
    numa = facts.get('numa') or {}
    nodes = numa.get('nodes') or {}
    if not nodes:
        return []
    each = '; '.join('node %s: CPUs %s, %s' % (node, entry.get('cpus'), _size(entry.get('memory_bytes')))
                     for node, entry in sorted(nodes.items(), key=lambda item: str(item[0])))
    return ['NUMA: %d node%s (%s); online CPUs %s' % (len(nodes), '' if len(nodes) == 1 else 's', each,
                                                      numa.get('online_cpus') or '-')]


def _shm(facts):
    shm = facts.get('shm') or {}
    if not shm:
        return []
    keys = [key for key in SHM_KEYS if key in shm] + sorted(key for key in shm if key not in SHM_KEYS)
    return ['shared memory: ' + ', '.join('%s %s' % (key, shm[key]) for key in keys)]


def _thp(facts):
    thp = facts.get('transparent_hugepage') or {}
    if not thp:
        return []
    return ['transparent huge pages: ' + ', '.join('%s %s' % (key, _selected(value)) for key, value in sorted(thp.items()))]


def _block_devices(facts):
    devices = facts.get('block_devices') or {}
    shown, empty = [], []
    for name, device in sorted(devices.items()):
        if not device.get('size_sectors'):
            empty.append(name)
            continue
        queue = device.get('queue') or {}
        words = ['%s %s' % (key, _selected(queue[key])) for key in QUEUE if key in queue]
        shown.append('  %s (%s): %s' % (name, _size(int(device['size_sectors']) * 512), ', '.join(words) or 'no queue'))
    if not shown and not empty:
        return []
    head = 'block devices: %d' % len(shown) + (' (and %d empty, not listed: %s)' % (
        len(empty), ' '.join(empty)) if empty else '')
    return [head] + _more(shown[:LISTED], len(shown), 'devices')


def _is_disk_mount(mount):
    return str(mount.get('source') or '').startswith('/')


def _mounts(facts):
    mounts = facts.get('mounts') or []
    disks = [mount for mount in mounts if _is_disk_mount(mount)]
    if not mounts:
        return []
    lines = ['  %s %s %s (%s)' % (mount.get('mount_point'), mount.get('fstype'), ','.join(mount.get('options') or []),
                                  mount.get('source')) for mount in disks[:LISTED]]
    head = 'mounts of a device: %d (and %d virtual file systems, not listed)' % (len(disks), len(mounts) - len(disks))
    return [head] + _more(lines, len(disks), 'mounts')


def _cpusets(facts):
    cpusets = dict(facts.get('cpusets') or {})
    if not cpusets:
        return []
    hierarchy = cpusets.pop('hierarchy', None)
    sets = ['%s CPUs %s mems %s' % (name, entry.get('cpus'), entry.get('mems'))
            for name, entry in sorted(cpusets.items()) if isinstance(entry, dict)]
    return ['cpusets%s: %s' % (' (cgroup %s)' % hierarchy if hierarchy else '', '; '.join(sets[:LISTED]) or 'none')
            + (' ... and %d more' % (len(sets) - LISTED) if len(sets) > LISTED else '')]


def facts_summary(facts):
    """The lines of the summary, in the order above."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError('facts_summary: expects ansible_facts.dbhost (a dict), got %s' % type(facts).__name__)
    lines = ['system: %s' % facts['system']] if facts.get('system') else []
    for part in (_memory, _hugepages, _numa, _shm, _thp, _block_devices, _mounts, _cpusets):
        lines.extend(part(facts))
    return lines


class FilterModule(object):
    """dbhost.tuning facts_summary filter."""

    def filters(self):
        return {'facts_summary': facts_summary}
