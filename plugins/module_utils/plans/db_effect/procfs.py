# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what a running database process holds, as Linux's /proc shows it.

The formats are the kernel's (Documentation/filesystems/proc.rst: smaps, limits, stat,
fdinfo, status; Documentation/admin-guide/mm/numa_memory_policy.rst and numa(7): numa_maps).
Each parser is a pure function of a file's text; Process reads a process's files under a root,
so that tests feed recorded samples.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import kernel_path
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.common import parse_status

# The names the kernel gives shared memory that no file on disk backs (proc.rst, "smaps"; ipc/shm.c,
# mm/shmem.c, mm/memfd.c): SysV segments, POSIX shm under /dev/shm, memfd, a MAP_SHARED|MAP_ANONYMOUS
# mapping (shmem names it /dev/zero) and a MAP_HUGETLB one (hugetlbfs names it anon_hugepage).
SHARED_PREFIXES = ('/SYSV', '/dev/shm/', '/memfd:', '/dev/zero', '/anon_hugepage', '/dev/hugepages/')
# O_DIRECT as the kernel shows it in fdinfo's octal flags: the architecture's value (040000 on x86).
O_DIRECT = getattr(os, 'O_DIRECT', 0o40000)


_SMAPS_HEADER = re.compile(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+[ \t]*(.*)$', re.M)
_SMAPS_FIELD = re.compile(r'^(Size|Rss|KernelPageSize|Shared_Hugetlb|Private_Hugetlb):\s+([0-9]+) kB', re.M)


def _maybe_shared(perms, path):
    """A mapping worth reading the fields of: shared, or named as hugetlbfs names its files."""
    return perms[3:4] == 's' or path.startswith(SHARED_PREFIXES) or 'huge' in path


def parse_smaps(text, every=False):
    """/proc/PID/smaps -> [{'start', 'end', 'perms', 'path', 'size_kb', 'rss_kb', 'page_kb', 'hugetlb_kb'}].

    A mapping's header line is ``start-end perms offset dev inode [path]``; the lines after it
    are ``Field:  value kB`` (and VmFlags).  ``page_kb`` is KernelPageSize, the page size the
    kernel backs the mapping with.  Only the mappings that can be shared memory or huge pages
    have their fields read (a database's private heap is most of the file), unless ``every``.
    """
    text = text or ''
    headers = list(_SMAPS_HEADER.finditer(text))
    mappings = []
    for index, header in enumerate(headers):
        start, end, perms, path = header.group(1), header.group(2), header.group(3), header.group(4).strip()
        entry = {'start': start, 'end': end, 'perms': perms, 'path': path, 'size_kb': 0, 'rss_kb': 0,
                 'page_kb': 0, 'hugetlb_kb': 0}
        mappings.append(entry)
        if not every and not _maybe_shared(perms, path):
            continue
        stop = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        for field in _SMAPS_FIELD.finditer(text, header.end(), stop):
            name, value = field.group(1), int(field.group(2))
            if name.endswith('Hugetlb'):
                entry['hugetlb_kb'] += value
            else:
                entry[{'Size': 'size_kb', 'Rss': 'rss_kb', 'KernelPageSize': 'page_kb'}[name]] = value
    return mappings


def is_shared_memory(mapping, base_page_kb=4):
    """A mapping of shared memory the kernel made for the process (not a file on disk), or one in huge pages."""
    path = mapping['path']
    if mapping['page_kb'] > base_page_kb:
        return True
    return mapping['perms'][3:4] == 's' and path.startswith(SHARED_PREFIXES)


def parse_numa_maps(text):
    """/proc/PID/numa_maps -> [{'start', 'policy', 'path', 'nodes': {node: pages}, 'page_kb', 'huge'}].

    Each line: ``address policy`` then tokens (``file=PATH``, ``anon=N``, ``huge``,
    ``kernelpagesize_kB=N``, ``N<node>=<pages>``).  A path holding spaces (``/SYSV0052e2c1
    (deleted)``) keeps its tokens up to the next ``key=`` token.
    """
    maps = []
    for line in (text or '').splitlines():
        tokens = line.split()
        if len(tokens) < 2:
            continue
        entry = {'start': tokens[0].lstrip('0') or '0', 'policy': tokens[1], 'path': '', 'nodes': {},
                 'page_kb': 0, 'huge': False}
        in_path = False
        for token in tokens[2:]:
            key, eq, value = token.partition('=')
            if in_path and not eq:
                entry['path'] += ' ' + token
                continue
            in_path = False
            if key == 'file':
                entry['path'] = value
                in_path = True
            elif key == 'huge' and not eq:
                entry['huge'] = True
            elif key == 'kernelpagesize_kB':
                entry['page_kb'] = int(value)
            elif eq and key[:1] == 'N' and key[1:].isdigit() and value.isdigit():
                entry['nodes'][int(key[1:])] = int(value)
        maps.append(entry)
    return maps


def parse_limits(text):
    """/proc/PID/limits -> {'Max locked memory': ('65536', '65536', 'bytes'), ...} (soft, hard, unit)."""
    limits = {}
    for line in (text or '').splitlines()[1:]:
        # the limit's name is left-aligned in a 26-character column; soft, hard and unit follow
        name, rest = line[:26].strip(), line[26:].split()
        if name and len(rest) >= 2:
            limits[name] = (rest[0], rest[1], rest[2] if len(rest) > 2 else '')
    return limits


def parse_start_ticks(text):
    """/proc/PID/stat -> the process's start time in clock ticks after boot (field 22), or None.

    The command name (field 2) is in parentheses and may hold spaces and parentheses, so the
    fields are counted after its last ``)``.
    """
    rest = (text or '').rpartition(')')[2].split()
    if len(rest) < 20 or not rest[19].isdigit():
        return None
    return int(rest[19])


def parse_btime(text):
    """/proc/stat -> the boot time (``btime``, seconds since the epoch), or None."""
    for line in (text or '').splitlines():
        if line.startswith('btime '):
            return int(line.split()[1])
    return None


def parse_fdinfo_flags(text):
    """/proc/PID/fdinfo/FD -> the file's open flags (``flags:`` is octal), or None."""
    for line in (text or '').splitlines():
        name, dummy, value = line.partition(':')
        if name.strip() == 'flags':
            try:
                return int(value.strip(), 8)
            except ValueError:
                return None
    return None


def parse_cgroup_procs(text):
    """A cgroup's cgroup.procs -> the pids in it."""
    return sorted(int(word) for word in (text or '').split() if word.isdigit())


class Process(object):
    """One process's files under ``root``'s /proc (a test tree, or / for the running system)."""

    def __init__(self, pid, root='/'):
        self.pid = int(pid)
        self.root = root
        self._read = {}   # each file read once per run (smaps serves two checks)

    def path(self, *parts):
        return kernel_path(self.root, '/'.join(('/proc', str(self.pid)) + tuple(str(p) for p in parts)))

    def read(self, *parts):
        if parts not in self._read:
            self._read[parts] = sysfs.read_text(self.path(*parts), strip=False)
        return self._read[parts]

    def exists(self):
        return os.path.isdir(self.path())

    def status(self):
        text = self.read('status')
        return parse_status(text) if text is not None else None

    def open_files(self):
        """[(fd, path the link names, flags)] of the process's open files; [] when they cannot be read."""
        folder = self.path('fd')
        try:
            names = sorted(os.listdir(folder), key=lambda name: int(name) if name.isdigit() else -1)
        except OSError:
            return []
        files = []
        for name in names:
            try:
                target = os.readlink(os.path.join(folder, name))
            except OSError:
                continue
            files.append((name, target, parse_fdinfo_flags(self.read('fdinfo', name))))
        return files

    def start_time(self, clock_ticks=None):
        """The process's start, in seconds since the epoch (boot time plus its start ticks), or None."""
        ticks = parse_start_ticks(self.read('stat'))
        btime = parse_btime(sysfs.read_text(kernel_path(self.root, '/proc/stat'), strip=False))
        if ticks is None or btime is None:
            return None
        return btime + ticks / float(clock_ticks or os.sysconf('SC_CLK_TCK'))
