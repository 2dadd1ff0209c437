# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the core of the keyed-line formats (sysctl.d, limits.conf, tmpfiles.d).

In each of them one line holds one setting (``key = value``, ``domain type item value``,
``w path - - - - value``); comments and lines the format does not know are kept byte for
byte.  What differs is said by the caller: how a line's key is read (``key_of(line)``,
None for a line that sets nothing), how a line is rewritten with a new value
(``replace(line, key, value)``), how a new line is written (``format_new(key, value)``),
and which of several lines of one key counts (the LAST one for sysctl.d and limits.conf,
where later lines win; the FIRST one for tmpfiles.d, where the first one wins).

Lines are kept with their endings (``split_lines``), so that a file is rendered back exactly.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

FIRST = 'first'
LAST = 'last'


def split_lines(text):
    """The lines of ``text`` with their endings kept; [] for None or ''."""
    return (text or '').splitlines(True)


def numbered_lines(text):
    """Each line of ``text`` as (number from 1, the line without its \\r/\\n ending, offset of its
    start, offset past its end): for formats that point back into the file's text."""
    offset = 0
    for number, line in enumerate(split_lines(text), 1):
        yield number, line.rstrip('\r\n'), offset, offset + len(line)
        offset += len(line)


def body(line):
    """A line without its ending (``\\n``, ``\\r\\n`` or any other line boundary)."""
    return line.splitlines()[0] if line else ''


def ending(line):
    """The ending of a line: ``\\r\\n``, ``\\n``..., or '' for a last line without one."""
    return line[len(body(line)):]


def parse(text, parse_line):
    """Every ``parse_line(line, lineno)`` of ``text`` that is not None, in order (lines numbered from 1)."""
    found = []
    for lineno, line in enumerate((text or '').splitlines(), 1):
        item = parse_line(line, lineno)
        if item is not None:
            found.append(item)
    return found


def key_values(text, separator):
    """{key: value} of the ``key<separator>value`` lines of ``text``, both sides stripped (a line
    without ``separator`` is passed over, a later line of a key wins): command output, /proc files."""
    values = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(separator)
        if sep:
            values[key.strip()] = value.strip()
    return values


def find(lines, key_of, keys=None):
    """{key: [index of each line of that key]} over ``lines``, only for ``keys`` when given."""
    where = {}
    for index, line in enumerate(lines):
        key = key_of(line)
        if key is not None and (keys is None or key in keys):
            where.setdefault(key, []).append(index)
    return where


def edit(lines, changes, key_of, replace, keep=LAST, drops=None):
    """Apply ``changes`` ({key: value, or None to remove}) to ``lines`` in place of the old lines.

    Of the lines of a changed key, the one that counts (``keep``: FIRST or LAST) is
    rewritten by ``replace(line, key, value)``; the others are dropped, and all of them
    when the value is None.  ``drops(key)`` names other keys whose lines a change of
    ``key`` replaces too (limits.conf's ``-`` replaces ``soft`` and ``hard``): those are
    dropped.  Every other line is kept as it is.

    Returns (new lines, the set of changed keys that had a line).
    """
    owner = dict((key, key) for key in changes)
    for key in changes:
        for other in (drops(key) if drops else ()):
            owner.setdefault(other, key)
    found = find(lines, key_of, changes)
    kept = dict((key, indices[0] if keep == FIRST else indices[-1]) for key, indices in found.items())
    output = []
    for index, line in enumerate(lines):
        key = key_of(line)
        if key is None or key not in owner:
            output.append(line)
            continue
        value = changes[owner[key]]
        if value is None or owner[key] != key or kept.get(key) != index:
            continue
        output.append(replace(line, key, value))
    return output, set(kept)


def append(lines, new_lines, header=None):
    """``lines`` with ``new_lines`` (without endings) added, each ending in ``\\n``.

    A last line without an ending gets one first; ``header`` (text, inserted as it is) goes
    before the new lines.  Nothing is added, not even the header, without new lines.
    """
    output = list(lines)
    if not new_lines:
        return output
    if output and not output[-1].endswith('\n'):
        output[-1] += '\n'
    if header:
        output.append(header)
    output.extend(line + '\n' for line in new_lines)
    return output


def join(lines, existed=True):
    """The text of ``lines``; None when the file did not exist and nothing is in it."""
    text = ''.join(lines)
    if not existed and not text:
        return None
    return text


def render(text, changes, key_of, replace, format_new, keep=LAST, header=None, sort_new=False, drops=None,
           unify_endings=False):
    """``text`` with ``changes`` applied: edit() the lines, then append the keys no line had.

    New keys are added in the order of ``changes`` (sorted with ``sort_new``), each as
    ``format_new(key, value)``; ``header`` (text, inserted as it is) starts a file that did
    not exist (``text`` None).  With ``unify_endings`` every line of ``text`` first ends in
    ``\n`` (the last one included), as sysctl files are rewritten.  Returns None for a file
    that did not exist and stays empty.
    """
    lines = split_lines(text)
    if unify_endings:
        lines = [body(line) + '\n' for line in lines]
    lines, found = edit(lines, changes, key_of, replace, keep=keep, drops=drops)
    added = [key for key, value in changes.items() if value is not None and key not in found]
    if sort_new:
        added.sort()
    lines = append(lines, [format_new(key, changes[key]) for key in added], header if text is None else None)
    return join(lines, existed=text is not None)
