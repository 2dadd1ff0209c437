# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: CPU lists and the NUMA topology, read once from sysfs.

Shared by host facts, the huge page module and the processor set module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

_RANGE = re.compile(r'^(\d+)(?:-(\d+)(?::(\d+))?)?$')


class CpuListError(ValueError):
    pass


def parse_cpu_list(text):
    """``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11]; also the kernel's ``0-7:2`` stride form."""
    text = (text or '').strip()
    if not text:
        return []
    cpus = set()
    for part in text.split(','):
        match = _RANGE.match(part.strip())
        if not match:
            raise CpuListError('invalid CPU list element %r in %r' % (part, text))
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        step = int(match.group(3)) if match.group(3) is not None else 1
        if last < first or step < 1:
            raise CpuListError('invalid CPU range %r in %r' % (part, text))
        cpus.update(range(first, last + 1, step))
    return sorted(cpus)


def render_cpu_list(cpus):
    """[0, 1, 2, 3, 8, 10, 11] -> ``0-3,8,10-11`` (the kernel's own list format)."""
    ordered = sorted(set(int(c) for c in cpus))
    parts = []
    index = 0
    while index < len(ordered):
        start = end = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == end + 1:
            index += 1
            end = ordered[index]
        parts.append(str(start) if start == end else '%d-%d' % (start, end))
        index += 1
    return ','.join(parts)


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except IOError:
        return None


def read_topology(root='/'):
    """Return the NUMA topology under ``<root>/sys/devices/system``.

    {'nodes': {N: {'cpus': [...], 'memory_bytes': int or None, 'distances': [...]}},
     'online_cpus': [...], 'possible_cpus': [...], 'offline_cpus': [...]}
    A machine without node folders (no NUMA support) is one node 0 holding every online CPU.
    """
    base = os.path.join(root or '/', 'sys', 'devices', 'system')
    online = parse_cpu_list(_read(os.path.join(base, 'cpu', 'online')) or '')
    possible = parse_cpu_list(_read(os.path.join(base, 'cpu', 'possible')) or '') or list(online)
    offline = parse_cpu_list(_read(os.path.join(base, 'cpu', 'offline')) or '')
    nodes = {}
    node_base = os.path.join(base, 'node')
    names = sorted(os.listdir(node_base)) if os.path.isdir(node_base) else []
    for name in names:
        match = re.match(r'^node(\d+)$', name)
        if not match:
            continue
        folder = os.path.join(node_base, name)
        memory = None
        meminfo = _read(os.path.join(folder, 'meminfo')) or ''
        found = re.search(r'MemTotal:\s+(\d+)\s+kB', meminfo)
        if found:
            memory = int(found.group(1)) * 1024
        distances = [int(d) for d in (_read(os.path.join(folder, 'distance')) or '').split()]
        nodes[int(match.group(1))] = {
            'cpus': parse_cpu_list(_read(os.path.join(folder, 'cpulist')) or ''),
            'memory_bytes': memory,
            'distances': distances,
        }
    if not nodes:
        nodes[0] = {'cpus': list(online), 'memory_bytes': None, 'distances': [10]}
    return {'nodes': nodes, 'online_cpus': online, 'possible_cpus': possible, 'offline_cpus': offline}


def nodes_of_cpus(topology, cpus):
    """The NUMA nodes holding any of ``cpus``, sorted."""
    wanted = set(cpus)
    return sorted(n for n, info in topology['nodes'].items() if wanted & set(info['cpus']))
