# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: take one write back out of a file that others edited since.

A revert must put back only the lines the collection changed and keep every other line as
it is now, in any file kind (fstab, vfstab, postgresql.conf, my.cnf, a pfile, limits.conf,
/etc/system, /etc/project, GRUB defaults, our own files): so it works on lines, not on a
format.  The baseline keeps each write as the text before it and the text written
(engine/baseline.py, ``writes``); unapply() is a three-way merge whose base is the text
written: the changes from it back to the text before are made on the text there now, and
the changes made since (by an admin) stay.  Where both touched the same lines, the lines
there now are kept and returned as a conflict, so the record can name them.

Pure Python (difflib), no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import re

# A section's header in the sectioned formats (systemd units and drop-ins, my.cnf, TuneD profiles).
_HEADER = re.compile(r'^\s*\[[^\]]+\]\s*$')


def lines(text):
    """``text`` as lines with their ends (None, a file that is not there, has none)."""
    return (text or '').splitlines(True)


def _changes(base, other, side):
    """The hunks turning ``base`` into ``other``: (start, end, new lines, side), in base's numbering."""
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2], side) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != 'equal']


def _clusters(changes):
    """The changes grouped where they touch the same base lines (a change that only borders
    another, or two insertions at one place, is its own group)."""
    groups = []
    for change in sorted(changes, key=lambda change: (change[0], change[1], change[3] != 'revert')):
        if groups and change[0] < groups[-1][1]:
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, change[1]), members + [change])
        else:
            groups.append((change[0], change[1], [change]))
    return groups


def _headers_in_use(base, since):
    """The base lines that are section headers whose section an admin's change falls in: a
    revert keeps them, or the admin's lines would end up in no section (or another one)."""
    headers = [index for index, line in enumerate(base) if _HEADER.match(line)]
    used = set()
    for number, index in enumerate(headers):
        end = headers[number + 1] if number + 1 < len(headers) else len(base)
        if any(index < change[0] <= end and not (change[0] == end and change[1] > end) for change in since):
            used.add(index)
    return used


def _sparing(changes, base, keep):
    """The revert's changes with the header lines ``keep`` left in place (split around them)."""
    out = []
    for start, end, new, side in changes:
        spared = [index for index in range(start, end) if index in keep and base[index] not in new]
        pos = start
        for index in spared:
            out.append((pos, index, new if pos == start else [], side))
            pos = index + 1
        out.append((pos, end, [] if spared else new, side))
    return [change for change in out if change[0] < change[1] or change[2]]


def _side(base, start, end, members, side):
    """base[start:end] with ``side``'s changes in it made."""
    out, pos = [], start
    for first, last, new, who in members:
        if who != side:
            continue
        out.extend(base[pos:first])
        out.extend(new)
        pos = last
    out.extend(base[pos:end])
    return out


def unapply(current, before, after):
    """Take the write ``before`` -> ``after`` back out of ``current`` (texts; None: no file).

    Returns (text, conflicts): ``text`` is ``current`` with the lines the write changed put
    back as they were before it and every other line as it is in ``current``.  Lines only
    added by hand among the lines the write changed stay (next to the lines put back); a
    region whose written lines were changed by hand as well keeps ``current``'s lines, and
    each such region is in ``conflicts`` as (the lines written, the lines there now).  A
    section header (``[Service]``) the write added stays while a line added by hand is in
    its section."""
    base = lines(after)
    since = _changes(base, lines(current), 'since')
    changes = _sparing(_changes(base, lines(before), 'revert'), base, _headers_in_use(base, since)) + since
    out, pos, conflicts = [], 0, []
    for start, end, members in _clusters(changes):
        out.extend(base[pos:start])
        sides = set(member[3] for member in members)
        back = _side(base, start, end, members, 'revert')
        now = _side(base, start, end, members, 'since')
        if sides == set(['revert']):
            out.extend(back)
        elif sides == set(['since']) or back == now:
            out.extend(now)
        elif all(member[0] == member[1] for member in members if member[3] == 'since'):
            # lines only added by hand among the lines the write changed: the write taken back,
            # and each added line kept after it (a line added at its top is a group of its own,
            # _clusters(), kept before it)
            out.extend(back)
            out.extend(line for member in members if member[3] == 'since' for line in member[2])
        else:
            out.extend(now)
            conflicts.append((base[start:end], now))
        pos = end
    out.extend(base[pos:])
    return ''.join(out), conflicts


def edited_lines(written, current):
    """The lines changed since ``written`` was written: ['+ line', '- line', ...], in order."""
    said = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines(written), lines(current),
                                                       autojunk=False).get_opcodes():
        if tag == 'equal':
            continue
        said.extend('- ' + line.rstrip('\n') for line in lines(written)[i1:i2])
        said.extend('+ ' + line.rstrip('\n') for line in lines(current)[j1:j2])
    return said


def take_back(current, writes, existed):
    """Every write of ``writes`` ([{'before', 'after'}], oldest first) taken back out of ``current``.

    Returns (text or None, conflicts): None when the file did not exist before tuning
    (``existed`` false) and nothing but what the writes put there is left in it."""
    text = current
    conflicts = []
    for write in reversed(writes):
        text, found = unapply(text, write.get('before'), write.get('after'))
        conflicts.extend(found)
    if not existed and text == '':
        return None, conflicts
    return text, conflicts
