# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: does the running database get what was tuned for it?

One function per question, each given the service's processes (procfs.Process, the main one
first) and what was asked, each answering ``Answer(got, live, detail)``: ``got`` is True (it
does), False (it does not) or None (it cannot be known here: the detail says why).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.procfs import (
    O_DIRECT, is_shared_memory, parse_limits, parse_numa_maps, parse_smaps)

Answer = namedtuple('Answer', 'got live detail')

# The files an engine opens for its data, which its direct I/O setting opens with O_DIRECT
# (MariaDB/MySQL innodb_flush_method: the system and file-per-table tablespaces and the undo
# tablespaces; Oracle filesystemio_options: every file of the database, all on the mounts given).
DATA_FILES = {
    'mysql': re.compile(r'(^|/)(ibdata[0-9]*|undo[0-9]+|[^/]+\.ibd)\Z'),
    'oracle': re.compile(r'.'),
}


def mib(kb):
    return '%.1f MiB' % (kb / 1024.0) if kb % 1024 else '%d MiB' % (kb // 1024)


def huge_pages(main, expected_bytes=None, base_page_kb=4):
    """The main process's shared memory (SysV, /dev/shm, memfd, shared anonymous, hugetlb) in huge pages.

    Every process of a PostgreSQL or Oracle instance maps the same segments, so the main
    process's smaps answers for all.  Got: the pages of the largest segment are huge, and
    the bytes in huge pages reach ``expected_bytes`` (what the engine allocates) when given.
    """
    text = main.read('smaps')
    if text is None:
        return Answer(None, None, 'cannot read /proc/%d/smaps' % main.pid)
    segments = [m for m in parse_smaps(text) if is_shared_memory(m, base_page_kb)]
    if not segments:
        return Answer(False, 'no shared memory segment', 'pid %d maps no shared memory segment and nothing in '
                      'huge pages' % main.pid)
    total = sum(m['size_kb'] for m in segments)
    huge = [m for m in segments if m['page_kb'] > base_page_kb]
    huge_kb = sum(m['size_kb'] for m in huge)
    largest = max(segments, key=lambda m: m['size_kb'])
    sizes = sorted(set(m['page_kb'] for m in huge))
    live = '%s of %s in huge pages%s' % (mib(huge_kb), mib(total),
                                         ' (%s kB pages)' % '/'.join(str(s) for s in sizes) if sizes else '')
    detail = 'largest segment %s, %s kB pages, %s' % (largest['path'] or 'anonymous', largest['page_kb'],
                                                      mib(largest['size_kb']))
    got = largest['page_kb'] > base_page_kb
    if expected_bytes:
        detail += '; the engine allocates %s' % mib(int(expected_bytes) // 1024)
        got = got and huge_kb * 1024 >= int(expected_bytes) * 0.99
    return Answer(got, live, detail)


def _limit_bytes(value):
    """A memlock limit as systemd or /proc writes it -> bytes, or None for unlimited."""
    text = str(value).strip().lower()
    if text in ('unlimited', 'infinity'):
        return None
    units = {'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3, 't': 1024 ** 4}
    if text[-1:] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def memlock(processes, wanted):
    """Each process's soft ``Max locked memory`` (what mlock and SHM_LOCK are held to) at least ``wanted``."""
    want = _limit_bytes(wanted)
    seen, short, unread = {}, [], []
    for proc in processes:
        limits = parse_limits(proc.read('limits'))
        if 'Max locked memory' not in limits:
            unread.append(proc.pid)
            continue
        soft = limits['Max locked memory'][0]
        seen.setdefault(soft, []).append(proc.pid)
        have = _limit_bytes(soft)
        if want is None and have is not None or want is not None and have is not None and have < want:
            short.append(proc.pid)
    if not seen:
        return Answer(None, None, 'cannot read /proc/PID/limits of pid %s' % ', '.join(map(str, unread)))
    live = ', '.join('%s (%d process%s)' % (value, len(pids), 'es' if len(pids) > 1 else '')
                     for value, pids in sorted(seen.items()))
    detail = '%d process(es) read' % sum(len(p) for p in seen.values())
    if short:
        detail += '; below %s: pid %s' % (wanted, ', '.join(map(str, short[:10])))
    return Answer(not short, live, detail)


def cpus(processes, wanted):
    """Every process's Cpus_allowed_list is the set's CPUs."""
    want = numa.parse_cpu_list(wanted)
    seen, wrong = {}, []
    for proc in processes:
        status = proc.status() or {}
        if 'Cpus_allowed_list' not in status:
            continue
        have = status['Cpus_allowed_list'].strip()
        seen.setdefault(have, []).append(proc.pid)
        if numa.parse_cpu_list(have) != want:
            wrong.append(proc.pid)
    if not seen:
        return Answer(None, None, 'cannot read the status of the service\'s processes')
    live = ', '.join('%s (%d)' % (value, len(pids)) for value, pids in sorted(seen.items()))
    detail = 'Cpus_allowed_list of %d process(es)' % sum(len(p) for p in seen.values())
    if wrong:
        detail += '; other CPUs: pid %s' % ', '.join(map(str, wrong[:10]))
    return Answer(not wrong, live, detail)


def memory_nodes(main, processes, wanted, base_page_kb=4):
    """The shared memory's pages (numa_maps of the main process) all on the set's nodes, and every
    process's Mems_allowed_list within them or its memory policy binding to them."""
    want = set(numa.parse_cpu_list(wanted))
    text = main.read('numa_maps')
    if text is None:
        return Answer(None, None, 'cannot read /proc/%d/numa_maps' % main.pid)
    smaps = dict((m['start'].lstrip('0') or '0', m) for m in parse_smaps(main.read('smaps') or ''))
    maps = parse_numa_maps(text)
    shared = [e for e in maps if e['start'] in smaps and is_shared_memory(smaps[e['start']], base_page_kb)]
    pages_kb = {}
    for entry in shared or maps:
        page_kb = entry['page_kb'] or base_page_kb
        for node, pages in entry['nodes'].items():
            pages_kb[node] = pages_kb.get(node, 0) + pages * page_kb
    elsewhere = sorted(node for node, kb in pages_kb.items() if kb and node not in want)
    where = ', '.join('node %d: %s' % (node, mib(kb)) for node, kb in sorted(pages_kb.items())) or 'no page yet'
    live = '%s %s' % ('shared memory' if shared else 'memory', where)
    unbound = []
    for proc in processes:
        status = proc.status() or {}
        allowed = set(numa.parse_cpu_list(status.get('Mems_allowed_list', '').strip() or ''))
        if allowed and not allowed <= want and not _policy_binds(proc, want):
            unbound.append(proc.pid)
    detail = 'numa_maps of pid %d (policy %s)' % (main.pid, maps[0]['policy'] if maps else 'unknown')
    if elsewhere:
        detail += '; pages on node %s' % numa.render_cpu_list(elsewhere)
    if unbound:
        detail += '; not bound to node %s: pid %s' % (wanted, ', '.join(map(str, unbound[:10])))
    return Answer(not elsewhere and not unbound, live, detail)


def _policy_binds(proc, want):
    """The task's memory policy (numa_maps' first line) binds to nodes within ``want``."""
    maps = parse_numa_maps(proc.read('numa_maps') or '')
    policy = maps[0]['policy'] if maps else ''
    mode, dummy, nodes = policy.partition(':')
    return mode in ('bind', 'prefer') and bool(nodes) and set(numa.parse_cpu_list(nodes)) <= want


def under(path, folders):
    return any(path == f or path.startswith(f.rstrip('/') + '/') for f in folders)


def direct_io(processes, engine, folders):
    """The engine's data files open under ``folders`` (the direct_io mounts; empty: anywhere, for an engine whose
    data files have names of their own), each opened with O_DIRECT.  The answer's ``live`` is followed by the
    files found, for the mounts' options."""
    pattern = DATA_FILES.get(engine)
    if pattern is None:
        return Answer(None, None, '%s opens its data files without O_DIRECT whatever its settings' % engine)
    files = {}
    unread = []
    for proc in processes:
        opened = proc.open_files()
        if not opened:
            unread.append(proc.pid)
        for dummy, path, flags in opened:
            if path.startswith('/') and (not folders or under(path, folders)) and pattern.search(path):
                direct = flags is not None and bool(flags & O_DIRECT)
                files[path] = files.get(path, False) or direct
    if not files:
        if len(unread) == len(processes):
            return Answer(None, None, 'cannot read /proc/PID/fd of the service\'s processes')
        return Answer(None, None, 'no data file open%s' % (' under %s' % ', '.join(folders) if folders else ''))
    buffered = sorted(path for path, direct in files.items() if not direct)
    live = '%d of %d data files with O_DIRECT' % (len(files) - len(buffered), len(files))
    detail = 'open under %s' % ', '.join(folders or sorted(set(os.path.dirname(p) for p in files)))
    if buffered:
        detail += '; buffered: %s' % ', '.join(buffered[:5]) + (' ...' if len(buffered) > 5 else '')
    return Answer(not buffered, live, detail)


def engine_huge_pages(setting, huge):
    """The engine's own huge page setting (engine.Setting) with what its shared memory got (huge_pages's Answer):
    got when the engine asks for huge pages and has them; a setting that falls back silently is named."""
    live = '%s = %s' % (setting.name, setting.value)
    detail = 'read by %s' % setting.how
    if setting.pages is not None:
        detail += '; it needs %d huge pages' % setting.pages
    if setting.configured is not None and setting.configured.lower() != str(setting.value).lower():
        detail += '; its configuration now gives %s (read at its next start)' % setting.configured
    if setting.mode is None:
        return Answer(None, live, '%s; not a value of %s this check knows' % (detail, setting.name))
    if setting.mode == 'off':
        return Answer(False, live + ', no huge pages asked', detail + '; the engine does not ask for huge pages')
    if huge.got is None:
        return Answer(None, live, '%s; %s' % (detail, huge.detail))
    if setting.mode == 'fallback':
        detail += '; %s falls back to normal pages silently when the pool is short' % live
    if not huge.got:
        how = 'fell back to normal pages' if setting.mode == 'fallback' else 'not in huge pages'
        return Answer(False, '%s, %s: %s' % (live, how, huge.live), detail)
    return Answer(True, '%s, in huge pages: %s' % (live, huge.live), detail)
