# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply Linux huge page pools, and read back what
the kernel really allocated.

Pools: one per page size in /sys/kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages, and
one per NUMA node and size in /sys/devices/system/node/node<N>/hugepages/.  Writing a
count asks the kernel for that many pages; it allocates what it can find (contiguous
free memory), so the count is always read back: a short allocation is reported as
``failed`` with "requested N, allocated M", never hidden.  Before giving up, memory can
be compacted once (``1`` into /proc/sys/vm/compact_memory) and the write retried.

Persistence, chosen so that every pool survives a reboot with what systemd already runs:
- the default page size, no node: vm.nr_hugepages in a sysctl.d file (systemd-sysctl),
  resolved across the sysctl.d search path so that a file that wins is ``shadowed``;
- other sizes and per-node pools: systemd-tmpfiles ``w`` lines that write the sysfs
  count at boot (systemd-tmpfiles-setup.service, before sysinit.target), resolved
  across the tmpfiles.d search path (first file wins there).

All kernel access goes through a Kernel object: the seam where unit tests put a kernel
that allocates fewer pages than asked.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tmpfiles
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, confine, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, UNSUPPORTED, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.shm import SizingError, human_size, parse_size
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

DEFAULT_SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'
DEFAULT_TMPFILES_FILE = '/etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf'
GLOBAL_POOLS = '/sys/kernel/mm/hugepages'
NODE_POOLS = '/sys/devices/system/node/node%d/hugepages'
COMPACT = '/proc/sys/vm/compact_memory'
SYSCTL_KEY = 'vm.nr_hugepages'
SYSCTL_HEADER = '# Managed by dbhost.tuning.hugepages: the default-size huge page pool.'
TMPFILES_HEADER = ('# Managed by dbhost.tuning.hugepages: huge page pools of other sizes and per NUMA node,\n'
                   '# written by systemd-tmpfiles at boot.')
ON_SHORT = ('fail', 'warn')
_POOL_DIR = re.compile(r'^hugepages-([0-9]+)kB\Z')
_NODE_MEMTOTAL = re.compile(r'^Node\s+[0-9]+\s+MemTotal:\s+([0-9]+)\s*kB', re.MULTILINE)


class Kernel(object):
    """Reads and writes pool counts and compacts memory under ``root``.

    Unit tests replace it with a kernel that allocates fewer pages than asked.
    """

    def __init__(self, root='/'):
        self.root = root or '/'

    def read_count(self, local_path):
        with open(confine(self.root, local_path)) as handle:
            return int(handle.read().strip())

    def write_count(self, local_path, count):
        """Write like ``echo count > nr_hugepages``; OSError carries the kernel's errno."""
        fd = os.open(confine(self.root, local_path), os.O_WRONLY)
        try:
            os.write(fd, ('%d\n' % count).encode('ascii'))
        finally:
            os.close(fd)

    def compact(self):
        """Ask the kernel to compact all zones, so that free memory becomes contiguous.

        Nothing else is dropped (no drop_caches): compaction only moves movable pages.
        """
        fd = os.open(rooted(self.root, COMPACT), os.O_WRONLY)
        try:
            os.write(fd, b'1\n')
        finally:
            os.close(fd)


class Pool(object):
    """One huge page pool: a page size, optionally on one NUMA node, and a desired count."""

    __slots__ = ('size_kb', 'node', 'count', 'default_size')

    def __init__(self, size_kb, node, count, default_size):
        self.size_kb = size_kb
        self.node = node
        self.count = count
        self.default_size = default_size

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


def _size_kb(value, where):
    if isinstance(value, str):
        # Blanks around the size are forgiven, no other space (U+00A0) or control character.
        validate.check_path(value.strip(' '), where)
    try:
        size = parse_size(value, name=where)
    except SizingError as exc:
        raise InputError(str(exc))
    if size % 1024 or size < 4096:
        raise InputError('%s: %r is not a huge page size' % (where, value))
    return size // 1024


class HugePages(Plan):
    """One run of the hugepages module: validate, plan, apply (unless check mode), report."""

    def failed_records(self, result):
        # A short allocation is a failed record too; it is worded by extra_problems().
        return [s for s in result.failed_settings() if s.detail.startswith('the kernel refused')]

    def extra_problems(self, result):
        if self.short and self.on_short == 'fail':
            return ['short huge page allocation: %s' % '; '.join(
                '%s requested %d, allocated %d' % item for item in self.short)]
        return []

    def __init__(self, pages, on_short='fail', compact=True, apply=True, persist=True,
                 sysctl_file=None, tmpfiles_file=None, root='/', backup=False, fail_on_shadowed=True,
                 check_mode=False, system_name=None, kernel=None, comparison='exact'):
        if comparison not in (compare.EXACT, compare.MINIMUM):
            raise InputError('comparison: %r is not one of exact, minimum' % (comparison,))
        # exact: the pool is exactly the count (a larger pool is shrunk); minimum: at least
        # the count (Oracle, PostgreSQL and MySQL size the pool they need: a larger one is kept).
        self.comparison = comparison
        self.raw_pages = pages
        self.on_short = on_short
        self.compact = compact
        self.apply_live = apply
        self.persist = persist
        self.sysctl_file = sysctl_file or DEFAULT_SYSCTL_FILE
        self.tmpfiles_file = tmpfiles_file or DEFAULT_TMPFILES_FILE
        self.root = validate.check_root(root)
        self.backup = backup
        self.fail_on_shadowed = fail_on_shadowed
        self.check_mode = check_mode
        self.supported = platforms.pick({platforms.LINUX: True, 'default': False}, system_name)
        self.kernel = kernel or Kernel(self.root)
        self.live_available = os.path.isdir(rooted(self.root, GLOBAL_POOLS))
        self.pools = []
        self.shadowed = []
        self.short = []
        self.backup_files = []
        self.compacted = False

    # ---------------------------------------------------------------- validation
    def supported_sizes(self):
        folder = rooted(self.root, GLOBAL_POOLS)
        sizes = []
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            match = _POOL_DIR.match(name)
            if match:
                sizes.append(int(match.group(1)))
        return sorted(sizes)

    def default_size_kb(self):
        size = platforms.meminfo(self.root).get('Hugepagesize')
        return size // 1024 if size else None

    def _check_files(self):
        for option, path in (('sysctl_file', self.sysctl_file), ('tmpfiles_file', self.tmpfiles_file)):
            validate.check_path(path, option)
            try:
                rooted(self.root, path)
            except PathError as exc:
                raise InputError('%s: %s' % (option, exc))
        folder, name = os.path.dirname(self.sysctl_file), os.path.basename(self.sysctl_file)
        if self.sysctl_file != sysctl.SYSCTL_CONF and (folder not in sysctl.SEARCH_DIRS or not name.endswith('.conf')):
            raise InputError('sysctl_file %r is not read at boot: use a *.conf file in one of %s, or %s'
                             % (self.sysctl_file, ', '.join(sysctl.SEARCH_DIRS), sysctl.SYSCTL_CONF))
        folder, name = os.path.dirname(self.tmpfiles_file), os.path.basename(self.tmpfiles_file)
        if folder not in tmpfiles.SEARCH_DIRS or not name.endswith('.conf'):
            raise InputError('tmpfiles_file %r is not read at boot: use a *.conf file in one of %s'
                             % (self.tmpfiles_file, ', '.join(tmpfiles.SEARCH_DIRS)))

    def validate(self):
        if self.on_short not in ON_SHORT:
            raise InputError('on_short must be one of %s, not %r' % (', '.join(ON_SHORT), self.on_short))
        if not isinstance(self.raw_pages, (list, tuple)) or not self.raw_pages:
            raise InputError('pages must be a non-empty list of {size, count, node}')
        self._check_files()
        if self.root == '/' and self.supported and not self.live_available:
            raise InputError('this kernel has no huge page support (no %s)' % GLOBAL_POOLS)
        supported = self.supported_sizes()
        default_kb = self.default_size_kb()
        pools = []
        seen = {}
        for index, item in enumerate(self.raw_pages):
            where = 'pages[%d]' % index
            if not isinstance(item, dict):
                raise InputError('%s must be a dict with size, count and node' % where)
            unknown = sorted(set(item) - set(['size', 'count', 'node']))
            if unknown:
                raise InputError('%s: unknown key(s) %s' % (where, ', '.join(unknown)))
            count = item.get('count')
            if isinstance(count, bool) or not isinstance(count, int):
                raise InputError('%s.count: %r is not a whole number of pages' % (where, count))
            if count < 0:
                raise InputError('%s.count: %d is negative' % (where, count))
            if item.get('size') in (None, ''):
                if default_kb is None:
                    raise InputError('%s.size: not given, and the system has no default huge page size '
                                     '(no Hugepagesize in /proc/meminfo)' % where)
                size_kb = default_kb
            else:
                size_kb = _size_kb(item['size'], '%s.size' % where)
            if self.live_available and size_kb not in supported:
                raise InputError('%s.size: %s pages are not supported by this kernel (no %s/hugepages-%dkB; '
                                 'supported: %s)' % (where, human_size(size_kb * 1024), GLOBAL_POOLS, size_kb,
                                                     ', '.join(human_size(s * 1024) for s in supported) or 'none'))
            node = item.get('node')
            if node is not None:
                if isinstance(node, bool) or not isinstance(node, int) or node < 0:
                    raise InputError('%s.node: %r is not a NUMA node number' % (where, node))
                if self.live_available:
                    node_dir = rooted(self.root, '/sys/devices/system/node/node%d' % node)
                    if not os.path.isdir(node_dir):
                        raise InputError('%s.node: NUMA node %d does not exist (no %s)'
                                         % (where, node, '/sys/devices/system/node/node%d' % node))
                    if not os.path.isdir(rooted(self.root, NODE_POOLS % node + '/hugepages-%dkB' % size_kb)):
                        raise InputError('%s.node: node %d has no %s pool' % (where, node, human_size(size_kb * 1024)))
            pool = Pool(size_kb, node, count, size_kb == default_kb)
            if (size_kb, node) in seen:
                raise InputError('%s: the %s pool is already given as pages[%d]' % (where, pool.name, seen[(size_kb, node)]))
            seen[(size_kb, node)] = index
            pools.append(pool)
        for pool in pools:
            if pool.node is not None and (pool.size_kb, None) in seen:
                raise InputError('pages[%d] and pages[%d]: the %s pages are given both for the whole system and '
                                 'per node; give one or the other' % (seen[(pool.size_kb, None)],
                                                                      seen[(pool.size_kb, pool.node)],
                                                                      human_size(pool.size_kb * 1024)))
        self._check_memory(pools)
        self.pools = pools

    def _check_memory(self, pools):
        """Refuse pools that cannot fit in physical memory (host, and each node)."""
        total = platforms.meminfo(self.root).get('MemTotal')
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
            text = read_text(rooted(self.root, '/sys/devices/system/node/node%d/meminfo' % node))
            match = _NODE_MEMTOTAL.search(text or '')
            if match and wanted > int(match.group(1)) * 1024:
                raise InputError('pages: %s of huge pages on node %d exceed its memory (%s)'
                                 % (human_size(wanted), node, human_size(int(match.group(1)) * 1024)))

    # ---------------------------------------------------------------- persisted side
    def _sysctl_resolver(self, text):
        files = []
        for shown, local in sysctl.boot_files(self.root, extra=self.sysctl_file):
            files.append((shown, text if shown == self.sysctl_file else (read_text(local, root=self.root) or '')))
        exact, globs = sysctl.effective_values(files)

        def resolve(pool):
            value, shown = sysctl.winner(exact, globs, SYSCTL_KEY)
            return _as_count(value), shown
        return resolve

    def _tmpfiles_resolver(self, text):
        files = []
        for shown, local in tmpfiles.boot_files(self.root, extra=self.tmpfiles_file):
            files.append((shown, text if shown == self.tmpfiles_file else (read_text(local, root=self.root) or '')))
        exact, globs = tmpfiles.effective_writes(files)

        def resolve(pool):
            value, shown = tmpfiles.resolve(exact, globs, pool.path)
            return _as_count(value), shown
        return resolve

    def _resolver(self, sysctl_text, tmpfiles_text):
        by_sysctl = self._sysctl_resolver(sysctl_text or '')
        by_tmpfiles = self._tmpfiles_resolver(tmpfiles_text or '')
        return lambda pool: (by_sysctl if pool.by_sysctl else by_tmpfiles)(pool)

    def _meets(self, value, pool):
        if value is None:
            return False
        return value >= pool.count if self.comparison == compare.MINIMUM else value == pool.count

    def _count_to_write(self, pool, live):
        """The count to persist: a minimum keeps a larger live pool instead of shrinking it at boot."""
        if self.comparison == compare.MINIMUM and live is not None and live > pool.count:
            return live
        return pool.count

    def _target(self, pool):
        if not self.persist:
            return pool.path
        return self.sysctl_file if pool.by_sysctl else self.tmpfiles_file

    # ---------------------------------------------------------------- run
    def read_live(self):
        live = {}
        for pool in self.pools:
            if not self.live_available:
                live[pool.name] = None
                continue
            try:
                live[pool.name] = self.kernel.read_count(rooted(self.root, pool.path))
            except (IOError, OSError, ValueError):
                live[pool.name] = None
        return live

    def _allocate(self, pool, live_before):
        """Write the pool's count and read back; compact once and retry when short.

        Returns (allocated, error, compacted) where error is the kernel's refusal or None.
        """
        local = rooted(self.root, pool.path)
        try:
            self.kernel.write_count(local, pool.count)
        except (IOError, OSError) as exc:
            return live_before, exc.strerror or str(exc), False
        allocated = self.kernel.read_count(local)
        compacted = False
        if allocated < pool.count and self.compact:
            try:
                self.kernel.compact()
                compacted = True
                self.compacted = True
                self.kernel.write_count(local, pool.count)
            except (IOError, OSError):
                pass
            allocated = self.kernel.read_count(local)
        return allocated, None, compacted

    def run(self, module=None):
        self.validate()
        result = Result(self.check_mode)
        if not self.supported:
            for pool in self.pools:
                result.add(Setting(pool.name, None, pool.count, None, None, UNSUPPORTED,
                                   'huge page pools are managed on Linux only'))
            return result
        live_before = self.read_live()

        sysctl_local = rooted(self.root, self.sysctl_file)
        tmpfiles_local = rooted(self.root, self.tmpfiles_file)
        sysctl_before = read_text(sysctl_local)
        tmpfiles_before = read_text(tmpfiles_local)
        resolve_before = self._resolver(sysctl_before, tmpfiles_before)
        ours_sysctl = sysctl.values_of(sysctl_before)
        ours_tmpfiles = tmpfiles.write_values(tmpfiles_before)

        sysctl_changes = {}
        tmpfiles_changes = {}
        for pool in self.pools:
            if not self.persist or self._meets(resolve_before(pool)[0], pool):
                continue
            count = str(self._count_to_write(pool, live_before[pool.name]))
            if pool.by_sysctl:
                if not self._meets(_as_count(ours_sysctl.get(SYSCTL_KEY)), pool):
                    sysctl_changes[SYSCTL_KEY] = count
            elif not self._meets(_as_count(ours_tmpfiles.get(pool.path)), pool):
                tmpfiles_changes[pool.path] = count

        to_write = [pool for pool in self.pools
                    if self.apply_live and self.live_available and not self._meets(live_before[pool.name], pool)]
        live_after = dict(live_before)
        outcome = {}
        if not self.check_mode:
            # Shrinking pools first frees memory for the ones that grow.
            for pool in sorted(to_write, key=lambda p: (live_before[p.name] or 0) < p.count):
                allocated, error, compacted = self._allocate(pool, live_before[pool.name])
                live_after[pool.name] = allocated
                outcome[pool.name] = (error, compacted)

        sysctl_after = sysctl.render(sysctl_before, sysctl_changes, header=SYSCTL_HEADER) \
            if sysctl_changes else sysctl_before
        tmpfiles_after = tmpfiles.render(tmpfiles_before, tmpfiles_changes, header=TMPFILES_HEADER) \
            if tmpfiles_changes else tmpfiles_before
        for local, shown, before, after in ((sysctl_local, self.sysctl_file, sysctl_before, sysctl_after),
                                            (tmpfiles_local, self.tmpfiles_file, tmpfiles_before, tmpfiles_after)):
            change = FileChange(local, before, after, shown_path=shown)
            change.report(result)
            if not self.check_mode and change.needed:
                backup_file = change.apply(module, backup_file=self.backup)
                if backup_file:
                    self.backup_files.append(backup_file)
        resolve_after = self._resolver(sysctl_after, tmpfiles_after)

        for pool in self.pools:
            result.add(self._record(pool, live_before, live_after, outcome, resolve_before, resolve_after,
                                    sysctl_changes, tmpfiles_changes))
            if live_after[pool.name] != live_before[pool.name]:
                result.mark_changed()
        if self.short and self.on_short == 'warn':
            result.warnings.append('short huge page allocation: %s' % '; '.join(
                '%s requested %d, allocated %d' % item for item in self.short))
        result.extra['compacted'] = self.compacted
        if self.backup_files:
            result.extra['backup_file'] = self.backup_files[0] if len(self.backup_files) == 1 else self.backup_files
        return result

    def _record(self, pool, live_before, live_after, outcome, resolve_before, resolve_after,
                sysctl_changes, tmpfiles_changes):
        target = self._target(pool)
        live_now = live_before[pool.name] if self.check_mode else live_after[pool.name]
        persisted_now = (resolve_before if self.check_mode else resolve_after)(pool)[0]
        details = []
        error, compacted = outcome.get(pool.name, (None, False))
        changed_file = (pool.by_sysctl and sysctl_changes) or (not pool.by_sysctl and pool.path in tmpfiles_changes)
        if changed_file:
            details.append('%s %s' % ('would persist it in' if self.check_mode else 'persisted it in', target))
        if error:
            details.insert(0, 'the kernel refused %d pages: %s' % (pool.count, error))
            return Setting(pool.name, target, pool.count, live_now, persisted_now, FAILED, '; '.join(details),
                           comparison=self.comparison)
        if pool.name in outcome and not self._meets(live_after[pool.name], pool):
            self.short.append((pool.name, pool.count, live_after[pool.name]))
            details.insert(0, 'requested %d, allocated %d%s' % (
                pool.count, live_after[pool.name], ' (after compacting memory)' if compacted else ''))
            return Setting(pool.name, target, pool.count, live_now, persisted_now, FAILED, '; '.join(details),
                           comparison=self.comparison)

        live_ok = None
        if not self.live_available:
            details.append('live value not read: no %s under %s' % (GLOBAL_POOLS, self.root))
        elif self.apply_live:
            live_ok = self._meets(live_before[pool.name], pool)
            if self.check_mode and not live_ok:
                details.append(self._room_hint(pool, live_before[pool.name]))
        else:
            details.append('live value not managed (apply=false)')
        persisted_ok = None
        shadowed = False
        if self.persist:
            persisted_ok = self._meets(resolve_before(pool)[0], pool)
            after_value, after_file = resolve_after(pool)
            ours = self.sysctl_file if pool.by_sysctl else self.tmpfiles_file
            if not self._meets(after_value, pool) and after_file and after_file != ours:
                shadowed = True
                details.append('%s sets %s and wins at boot over %s' % (after_file, after_value, ours))
                self.shadowed.append((pool.name, after_file))
            elif persisted_ok and resolve_before(pool)[1] and resolve_before(pool)[1] != ours:
                details.append('persisted by %s' % resolve_before(pool)[1])
        else:
            details.append('not persisted (persist=false): lost at reboot')
        status = decide_status(live_ok, persisted_ok, self.check_mode, shadowed=shadowed)
        return Setting(pool.name, target, pool.count, live_now, persisted_now, status,
                       '; '.join(d for d in details if d), comparison=self.comparison)

    def _room_hint(self, pool, live):
        """In check mode: warn when the free memory cannot hold the extra pages."""
        if live is None or pool.count <= live:
            return ''
        info = platforms.meminfo(self.root)
        free = info.get('MemAvailable', info.get('MemFree'))
        extra = (pool.count - live) * pool.size_kb * 1024
        if free is not None and extra > free:
            return ('%d more pages need %s, more than the %s available now: the kernel would allocate fewer'
                    % (pool.count - live, human_size(extra), human_size(free)))
        return ''


def _as_count(value):
    if value is None:
        return None
    text = str(value).strip()
    return int(text) if re.match(r'^[0-9]+\Z', text) else text
