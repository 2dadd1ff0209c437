# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what a running database gets on SunOS, read from its own
processes with pmap: its shared memory as ISM/DISM in large pages (``pmap -xs``) and the
lgroups (boards) that memory lies on (``pmap -Ls``).

The formats are pmap's own (illumos usr/src/cmd/ptools/pmap/pmap.c; pmap(1)): a
``PID:<TAB>args`` line per process, a header, one line per mapping, a total.  ``-x``
prints Kbytes, RSS, Anon and Locked (``-`` for zero), ``-s`` the hardware page size
(``8K``, ``4M``, ``256M``, ``2G``, ``-`` with no mapping in the HAT), ``-L`` one line per
run of pages on the same lgroup with its Bytes and Lgrp (``-`` when not resident).  The
mapping's name tells ISM (``[ ism shmid=0x.. ]``, attached SHM_SHARE_MMU), DISM
(``[ dism shmid=0x.. ]``), plain System V shared memory (``[ shmid=0x.. ]``) and anonymous
memory (``[ anon ]``); the fourth mode character is ``s`` for a shared mapping.

Pure Python on recorded output: the checks take the text and give (status, live, detail).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import DRIFT, OK

_PROCESS = re.compile(r'^([0-9]+):\s')
_ADDRESS = re.compile(r'^[0-9A-Fa-f]{8,16}\Z')
_PAGE = re.compile(r'^([0-9]+)([bKMG])\Z')
_SCALE = {'b': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}


def page_bytes(text):
    """``4M`` -> 4194304; ``-`` (no HAT mapping) -> None."""
    match = _PAGE.match(text or '')
    return int(match.group(1)) * _SCALE[match.group(2)] if match else None


def kind_of(name, mode):
    """'ism', 'dism', 'shm' (System V without ISM), 'shared' (another shared mapping, such as
    PostgreSQL's anonymous mmap), or None for private memory."""
    name = (name or '').strip()
    if name.startswith('[ ism '):
        return 'ism'
    if name.startswith('[ dism '):
        return 'dism'
    if name.startswith('[ shmid='):
        return 'shm'
    if len(mode) > 3 and mode[3] == 's' and name == '[ anon ]':
        return 'shared'
    return None


def _kb(field):
    return 0 if field == '-' else int(field)


def _segments(text, fields, row):
    """{pid: [row(parts, name)]} of a pmap listing of several processes: each process's header
    line (``PID: command``), then one line per segment, ``fields`` fields and the segment's name;
    other lines (titles, totals) and lines ``row`` refuses (None) are skipped."""
    processes, rows = {}, None
    for line in (text or '').splitlines():
        match = _PROCESS.match(line)
        if match:
            rows = processes.setdefault(int(match.group(1)), [])
            continue
        parts = line.split(None, fields)
        if rows is None or len(parts) < fields or not _ADDRESS.match(parts[0]):
            continue
        made = row(parts, parts[fields].strip() if len(parts) > fields else '')
        if made is not None:
            rows.append(made)
    return processes


def parse_pmap_x(text):
    """``pmap -xs PID...`` -> {pid: [{'address', 'kbytes', 'rss', 'locked', 'page', 'mode', 'name', 'kind'}]}."""
    return _segments(text, 7, lambda parts, name: {
        'address': parts[0], 'kbytes': _kb(parts[1]), 'rss': _kb(parts[2]), 'locked': _kb(parts[4]),
        'page': page_bytes(parts[5]), 'mode': parts[6], 'name': name, 'kind': kind_of(name, parts[6])})


def parse_pmap_l(text):
    """``pmap -Ls PID...`` -> {pid: [{'address', 'bytes', 'page', 'mode', 'lgroup' (None: '-'), 'name', 'kind'}]}."""
    return _segments(text, 5, lambda parts, name: None if not parts[1].endswith('K') else {
        'address': parts[0], 'bytes': int(parts[1][:-1]) * 1024, 'page': page_bytes(parts[2]), 'mode': parts[3],
        'lgroup': None if parts[4] == '-' else int(parts[4]), 'name': name, 'kind': kind_of(name, parts[3])})


def _size(nbytes):
    for unit, scale in (('G', 1024 ** 3), ('M', 1024 ** 2), ('K', 1024)):
        if nbytes >= scale and nbytes % scale == 0:
            return '%d%s' % (nbytes // scale, unit)
    return '%dB' % nbytes


# ------------------------------------------------------------------ ISM (seed 001)
def ism_check(text, pid, base_page):
    """Whether the process's main shared memory is ISM/DISM in pages larger than ``base_page``.

    (status, live, detail): ok when ISM/DISM holds at least as much as every other shared
    mapping together and some of it sits in large pages; drift otherwise.  PostgreSQL with
    ``shared_memory_type = mmap`` keeps only a small System V header in ISM and its buffers in
    an anonymous shared mapping (src/backend/port/sysv_shmem.c): that is drift, not ok.
    """
    rows = parse_pmap_x(text).get(pid)
    if not rows:
        return DRIFT, None, 'pmap -xs %d printed no mapping of the process' % pid
    ism = [r for r in rows if r['kind'] in ('ism', 'dism')]
    other = [r for r in rows if r['kind'] in ('shm', 'shared')]
    ism_kb, other_kb = sum(r['kbytes'] for r in ism), sum(r['kbytes'] for r in other)
    large_kb = sum(r['kbytes'] for r in ism if r['page'] and r['page'] > base_page)
    pages = sorted(set(r['page'] for r in ism if r['page']))
    live = {'ism_bytes': ism_kb * 1024, 'large_page_bytes': large_kb * 1024, 'other_shared_bytes': other_kb * 1024,
            'page_sizes': [_size(p) for p in pages], 'kinds': sorted(set(r['kind'] for r in ism))}
    where = 'pmap -xs %d' % pid
    if not ism:
        return DRIFT, live, '%s: no ISM or DISM segment; %s of shared memory without it' % (where, _size(other_kb * 1024))
    if other_kb > ism_kb:
        return DRIFT, live, ('%s: %s of ISM/DISM but %s of other shared memory (the main segment is not ISM)'
                             % (where, _size(ism_kb * 1024), _size(other_kb * 1024)))
    if not large_kb:
        return DRIFT, live, '%s: %s of ISM/DISM, all in %s pages or not mapped' % (
            where, _size(ism_kb * 1024), _size(base_page))
    return OK, live, '%s: %s of %s in %s pages' % (where, _size(ism_kb * 1024), '/'.join(live['kinds']),
                                                   ', '.join(live['page_sizes']))


# ------------------------------------------------------------------ placement (seed 000)
def placement_check(text, lgroups):
    """Whether the shared memory the processes map lies on ``lgroups`` (the set's boards).

    Each shared mapping counts once however many of the processes map it.  (status, live,
    detail): ok when every resident byte of it is on those lgroups; drift names the bytes per
    other lgroup.
    """
    per_lgroup, seen = {}, set()
    for pid, rows in sorted(parse_pmap_l(text).items()):
        for row in rows:
            key = (row['name'], row['address'])
            if row['kind'] is None or key in seen or row['lgroup'] is None:
                continue
            seen.add(key)
            per_lgroup[row['lgroup']] = per_lgroup.get(row['lgroup'], 0) + row['bytes']
    wanted = set(lgroups)
    live = dict((str(lg), nbytes) for lg, nbytes in sorted(per_lgroup.items()))
    if not per_lgroup:
        return DRIFT, live, 'pmap -Ls shows no resident shared memory of the processes'
    off = dict((lg, nbytes) for lg, nbytes in per_lgroup.items() if lg not in wanted)
    total = sum(per_lgroup.values())
    if off:
        return DRIFT, live, ('%s of %s of shared memory lies outside lgroup(s) %s: %s' % (
            _size(sum(off.values())), _size(total), ','.join(str(lg) for lg in sorted(wanted)),
            ', '.join('%s on lgroup %d' % (_size(nbytes), lg) for lg, nbytes in sorted(off.items()))))
    return OK, live, 'all %s of shared memory on lgroup(s) %s (pmap -Ls)' % (
        _size(total), ','.join(str(lg) for lg in sorted(wanted)))


def board_lgroups(groups, cpus):
    """The leaf lgroups (``lgrpinfo -G -c`` parsed) that hold any of ``cpus``."""
    wanted = set(cpus)
    return sorted(lg for lg, info in groups.items() if info['kind'].startswith('leaf') and wanted & set(info['cpus']))
