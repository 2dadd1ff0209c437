# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the huge page pools a hugepages plan asks for, checked
against the kernel, and the kernel's pool counts read and written.

Pools: one per page size in /sys/kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages, and
one per NUMA node and size in /sys/devices/system/node/node<N>/hugepages/.
read_pools() turns the ``pages`` option into Pool objects, refusing (InputError naming
``pages[i]``) a size the kernel has no pool for, a node that does not exist, a pool
given twice or both per node and system-wide, and pools larger than the memory.

All kernel access goes through a Kernel object (engine/sysfs underneath): the seam where
unit tests put a kernel that allocates fewer pages than asked.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import confine, kernel_path, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.shm import SizingError, human_size, parse_size

GLOBAL_POOLS = '/sys/kernel/mm/hugepages'
NODE_DIR = '/sys/devices/system/node/node%d'
NODE_POOLS = NODE_DIR + '/hugepages'
COMPACT = '/proc/sys/vm/compact_memory'
_POOL_DIR = re.compile(r'^hugepages-([0-9]+)kB\Z')
_NODE_MEMTOTAL = re.compile(r'^Node\s+[0-9]+\s+MemTotal:\s+([0-9]+)\s*kB', re.MULTILINE)
_POOL_KEYS = frozenset(['size', 'count', 'node'])
ADDRESS_SPACE = 1 << 64  # bytes


class Kernel(object):
    """Reads and writes pool counts and compacts memory under ``root``.

    Unit tests replace it with a kernel that allocates fewer pages than asked.
    """

    def __init__(self, root='/'):
        self.root = root or '/'

    def read_count(self, local_path):
        return int(sysfs.read_text(confine(self.root, local_path), strict=True))

    def write_count(self, local_path, count):
        """Write like ``echo count > nr_hugepages``; OSError carries the kernel's errno."""
        sysfs.write_text(confine(self.root, local_path), '%d\n' % count)

    def compact(self):
        """Ask the kernel to compact all zones, so that free memory becomes contiguous.

        Nothing else is dropped (no drop_caches): compaction only moves movable pages.
        """
        sysfs.write_text(rooted(self.root, COMPACT), '1\n', keep=False)


class Pool(object):
    """One huge page pool: a page size, optionally on one NUMA node, and a desired count."""

    __slots__ = ('size_kb', 'node', 'count', 'default_size', 'unsupported')

    def __init__(self, size_kb, node, count, default_size, unsupported=None):
        self.size_kb = size_kb
        self.node = node
        self.count = count
        self.default_size = default_size
        # why this host has no such pool (no pages of this size, no such NUMA node), or None
        self.unsupported = unsupported

    @property
    def folder(self):
        base = GLOBAL_POOLS if self.node is None else NODE_POOLS % self.node
        return '%s/hugepages-%dkB' % (base, self.size_kb)

    @property
    def path(self):
        return self.folder + '/nr_hugepages'

    @property
    def name(self):
        pool = 'hugepages-%dkB' % self.size_kb
        return pool if self.node is None else 'node%d/%s' % (self.node, pool)

    @property
    def by_sysctl(self):
        """The default size without a node is vm.nr_hugepages; everything else a tmpfiles line."""
        return self.node is None and self.default_size

    @property
    def bytes(self):
        return self.count * self.size_kb * 1024


def supported_sizes(root):
    """The page sizes (kB) this kernel has a pool folder for, smallest first."""
    folder = rooted(root, GLOBAL_POOLS)
    sizes = []
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        match = _POOL_DIR.match(name)
        if match:
            sizes.append(int(match.group(1)))
    return sorted(sizes)


def default_size_kb(root):
    """The default huge page size in kB (Hugepagesize in /proc/meminfo), None without one."""
    size = platforms.meminfo(root).get('Hugepagesize')
    return size // 1024 if size else None


def _size_kb(value, where):
    if isinstance(value, str):
        # Blanks around the size are forgiven, no other space (U+00A0) or control character.
        validate.check_path(value.strip(' '), where)
    try:
        size = parse_size(value, name=where)
    except SizingError as exc:
        raise InputError(str(exc))
    if size % 1024 or size < 4096 or size & (size - 1):
        # every architecture's huge page sizes are powers of two
        raise InputError('%s: %r is not a huge page size' % (where, value))
    return size // 1024


def _count(item, where):
    count = item.get('count')
    if isinstance(count, bool) or not isinstance(count, int):
        raise InputError('%s.count: %r is not a whole number of pages' % (where, count))
    if count < 0:
        raise InputError('%s.count: %d is negative' % (where, count))
    return count


class _Kernel(object):
    """What the running kernel offers, read once per plan: sizes, default size, nodes."""

    def __init__(self, root, live_available):
        self.root = root
        self.live_available = live_available
        self.sizes = supported_sizes(root)
        self.default_kb = default_size_kb(root)

    def size_kb(self, item, where):
        if item.get('size') in (None, ''):
            if self.default_kb is None:
                raise InputError('%s.size: not given, and the system has no default huge page size '
                                 '(no Hugepagesize in /proc/meminfo)' % where)
            return self.default_kb
        return _size_kb(item['size'], '%s.size' % where)

    @staticmethod
    def node(item, where):
        node = item.get('node')
        if node is None:
            return None
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            raise InputError('%s.node: %r is not a NUMA node number' % (where, node))
        return node

    def missing(self, size_kb, node):
        """Why this host has no such pool, or None: a page size the kernel (or CPU) does not offer,
        a NUMA node the machine does not have, a node without pages of that size."""
        if not self.live_available:
            return None
        if size_kb not in self.sizes:
            return 'no %s pages on this kernel (no %s/hugepages-%dkB; supported: %s)' % (
                human_size(size_kb * 1024), GLOBAL_POOLS, size_kb,
                ', '.join(human_size(s * 1024) for s in self.sizes) or 'none')
        if node is not None and not os.path.isdir(rooted(self.root, NODE_DIR % node)):
            return 'no NUMA node %d on this host (no %s)' % (node, NODE_DIR % node)
        if node is not None and not os.path.isdir(rooted(self.root, NODE_POOLS % node + '/hugepages-%dkB' % size_kb)):
            return 'NUMA node %d has no %s pool' % (node, human_size(size_kb * 1024))
        return None


def read_pools(raw_pages, root, live_available):
    """The ``pages`` option as Pool objects, checked against the kernel and the memory."""
    if not isinstance(raw_pages, (list, tuple)) or not raw_pages:
        raise InputError('pages must be a non-empty list of {size, count, node}')
    kernel = _Kernel(root, live_available)
    pools = []
    seen = {}
    for index, item in enumerate(raw_pages):
        where = 'pages[%d]' % index
        if not isinstance(item, dict):
            raise InputError('%s must be a dict with size, count and node' % where)
        unknown = sorted(set(item) - _POOL_KEYS)
        if unknown:
            raise InputError('%s: unknown key(s) %s' % (where, ', '.join(unknown)))
        count = _count(item, where)
        size_kb = kernel.size_kb(item, where)
        if count * size_kb * 1024 >= ADDRESS_SPACE:
            # The kernel's count is an unsigned long; no machine has this much memory to give.
            digits = str(count)
            shown = digits if len(digits) <= 24 else '%s... (a %d-digit number)' % (digits[:6], len(digits))
            raise InputError('%s.count: %s pages of %d kB is more memory than a 64-bit address space holds'
                             % (where, shown, size_kb))
        node = kernel.node(item, where)
        pool = Pool(size_kb, node, count, size_kb == kernel.default_kb, kernel.missing(size_kb, node))
        if (size_kb, pool.node) in seen:
            raise InputError('%s: the %s pool is already given as pages[%d]'
                             % (where, pool.name, seen[(size_kb, pool.node)]))
        seen[(size_kb, pool.node)] = index
        pools.append(pool)
    _check_overlap(pools, seen)
    _check_memory(pools, root)
    return pools


def _check_overlap(pools, seen):
    """Refuse a page size given both for the whole system and per node."""
    for pool in pools:
        if pool.node is not None and (pool.size_kb, None) in seen:
            raise InputError('pages[%d] and pages[%d]: the %s pages are given both for the whole system and '
                             'per node; give one or the other' % (seen[(pool.size_kb, None)],
                                                                  seen[(pool.size_kb, pool.node)],
                                                                  human_size(pool.size_kb * 1024)))


def _check_memory(pools, root):
    """Refuse pools that cannot fit in physical memory (host, and each node)."""
    pools = [pool for pool in pools if not pool.unsupported]
    total = platforms.meminfo(root).get('MemTotal')
    wanted = sum(pool.bytes for pool in pools)
    if total and wanted > total:
        raise InputError('pages: %s of huge pages (%s) exceed the physical memory (%s)' % (
            human_size(wanted), ', '.join('%d x %s' % (p.count, human_size(p.size_kb * 1024)) for p in pools),
            human_size(total)))
    per_node = {}
    for pool in pools:
        if pool.node is not None:
            per_node[pool.node] = per_node.get(pool.node, 0) + pool.bytes
    for node, wanted in sorted(per_node.items()):
        text = read_text(rooted(root, NODE_DIR % node + '/meminfo'))
        match = _NODE_MEMTOTAL.search(text or '')
        if match and wanted > int(match.group(1)) * 1024:
            raise InputError('pages: %s of huge pages on node %d exceed its memory (%s)'
                             % (human_size(wanted), node, human_size(int(match.group(1)) * 1024)))


def room_hint(root, pool, live):
    """In check mode: a warning when the free memory cannot hold the extra pages ('' otherwise)."""
    if live is None or pool.count <= live:
        return ''
    info = platforms.meminfo(root)
    free = info.get('MemAvailable', info.get('MemFree'))
    extra = (pool.count - live) * pool.size_kb * 1024
    if free is not None and extra > free:
        return ('%d more pages need %s, more than the %s available now: the kernel would allocate fewer'
                % (pool.count - live, human_size(extra), human_size(free)))
    return ''


def per_node(root, pool):
    """'node0 38, node1 40': how the kernel spread a pool of ``pool``'s size over the NUMA nodes (each node's
    nr_hugepages), '' without node folders."""
    found = []
    base = str(kernel_path(root, '/sys/devices/system/node'))
    names = os.listdir(base) if os.path.isdir(base) else []
    for name in sorted((n for n in names if re.match(r'^node[0-9]+\Z', n)), key=lambda n: int(n[4:])):
        text = sysfs.read_text(kernel_path(root, NODE_POOLS % int(name[4:]) + '/hugepages-%dkB/nr_hugepages'
                                           % pool.size_kb))
        if text is not None and text.strip().isdigit():
            found.append('%s %s' % (name, text.strip()))
    return ', '.join(found)


def short_words(root, pool, asked, asked_where, live):
    """(detail, reason) of a pool whose count the kernel allocated short of what was asked, or (None, None)."""
    if not isinstance(live, int) or not isinstance(asked, int) or live >= asked:
        return None, None
    spread = per_node(root, pool) if pool.node is None else ''
    reason = 'short: the kernel allocated %d of the %d pages asked' % (live, asked)
    detail = '%s (%s), short by %d%s' % (reason, asked_where, asked - live,
                                         '; allocated per node: %s' % spread if spread else '')
    return detail, reason
