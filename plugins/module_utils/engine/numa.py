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

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import confine, kernel_path
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError

_RANGE = re.compile(r'^([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?\Z')
# Above any kernel's CONFIG_NR_CPUS (at most 8192 on x86_64 with MAXSMP): a bigger number
# is a typo, and its range would be expanded CPU by CPU.
MAX_CPUS = 1 << 16
_NODE_NAME = re.compile(r'^node([0-9]+)\Z')


class CpuListError(ValueError):
    pass


class KernelFileError(InputError):
    """A file of /sys that is not in the kernel's format; the message names the file.

    An InputError, so a module fails with this message (nothing has been touched yet)
    instead of a traceback.
    """


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
        if last >= MAX_CPUS:
            raise CpuListError('CPU %d in %r is beyond any kernel (at most %d CPUs)' % (last, text, MAX_CPUS))
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


def cpu_list_from_file(text, path):
    """parse_cpu_list() of a kernel file's text; KernelFileError naming ``path`` when malformed."""
    try:
        return parse_cpu_list(text or '')
    except CpuListError as exc:
        raise KernelFileError('%s is not a CPU list as the kernel writes it: %s' % (path, exc))


def _read_cpu_list(path, root='/'):
    return cpu_list_from_file(sysfs.read_text(confine(root or '/', path)), path)


def read_topology(root='/'):
    """Return the NUMA topology under ``<root>/sys/devices/system``.

    {'nodes': {N: {'cpus': [...], 'memory_bytes': int or None, 'distances': [...]}},
     'online_cpus': [...], 'possible_cpus': [...], 'offline_cpus': [...]}
    A machine without node folders (no NUMA support) is one node 0 holding every online CPU.
    Every file is read within root: a link that leads out of it is refused (PathError).
    """
    root = root or '/'
    base = kernel_path(root, '/sys/devices/system')
    online = _read_cpu_list(os.path.join(base, 'cpu', 'online'), root)
    possible = _read_cpu_list(os.path.join(base, 'cpu', 'possible'), root) or list(online)
    offline = _read_cpu_list(os.path.join(base, 'cpu', 'offline'), root)
    nodes = {}
    node_base = os.path.join(base, 'node')
    names = sorted(os.listdir(node_base)) if os.path.isdir(node_base) else []
    for name in names:
        match = _NODE_NAME.match(name)
        if not match:
            continue
        folder = confine(root, os.path.join(node_base, name))
        memory = None
        meminfo = sysfs.read_text(confine(root, os.path.join(folder, 'meminfo'))) or ''
        found = re.search(r'MemTotal:\s+([0-9]+)\s+kB', meminfo)
        if found:
            memory = int(found.group(1)) * 1024
        distance_file = os.path.join(folder, 'distance')
        distance_words = (sysfs.read_text(confine(root, distance_file)) or '').split()
        if not all(re.match(r'[0-9]+\Z', word) for word in distance_words):
            raise KernelFileError('%s is not a list of NUMA distances: %r' % (distance_file, ' '.join(distance_words)))
        distances = [int(d) for d in distance_words]
        nodes[int(match.group(1))] = {
            'cpus': _read_cpu_list(os.path.join(folder, 'cpulist'), root),
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
