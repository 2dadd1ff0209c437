# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: systemd-tmpfiles configuration (tmpfiles.d(5)), ``w`` lines.

A ``w`` line writes its argument into an existing file when systemd-tmpfiles-setup runs
early at boot (``systemd-tmpfiles --create --boot``, before sysinit.target), which makes
it the systemd-native way to persist a sysfs attribute:

    w /sys/kernel/mm/transparent_hugepage/enabled - - - - never

Lines are ``Type Path Mode User Group Age Argument``; ``#`` starts a comment line; the
first six fields may be quoted; the argument is the rest of the line, where ``%%`` stands
for ``%`` (``%`` starts a specifier).  Files named ``*.conf`` are read from SEARCH_DIRS; a
name in an earlier folder masks the same name in a later one (a link to /dev/null
disables it).  When several lines name the same path, the one in the file with the
lexically earliest name wins (within a file, the first line), and systemd logs the others
as conflicts: the opposite of sysctl.d, where the last one wins.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed

SEARCH_DIRS = (
    '/etc/tmpfiles.d',
    '/run/tmpfiles.d',
    '/usr/local/lib/tmpfiles.d',
    '/usr/lib/tmpfiles.d',
    '/lib/tmpfiles.d',
)

# Types that write an argument into an existing file (w, and w+ which appends).
WRITE_TYPES = ('w', 'w+')
# Types that take ownership of a path: of several such lines, only the first counts.
OWNING_TYPES = ('f', 'f+', 'F', 'd', 'D', 'e', 'v', 'q', 'Q', 'p', 'p+', 'L', 'L+', 'c', 'c+', 'b', 'b+',
                'C', 'C+', 'w', 'w+', 'x', 'X', 'r', 'R')
_MODIFIERS = '!-=~^$?'
_GLOB_CHARS = re.compile(r'[*?\[]')
_NEEDS_QUOTES = re.compile(r'[\s"\'\\]')


class Entry(object):
    """One configuration line: its type (modifiers stripped), path and argument."""

    __slots__ = ('type', 'raw_type', 'path', 'mode', 'user', 'group', 'age', 'argument', 'lineno')

    def __init__(self, raw_type, path, mode, user, group, age, argument, lineno):
        self.raw_type = raw_type
        self.type = raw_type.translate({ord(c): None for c in _MODIFIERS})
        self.path = path
        self.mode = mode
        self.user = user
        self.group = group
        self.age = age
        self.argument = argument
        self.lineno = lineno


def _next_field(line, position):
    """(field, position after it) from ``position``, honouring quotes; (None, pos) at end."""
    length = len(line)
    while position < length and line[position] in ' \t':
        position += 1
    if position >= length:
        return None, position
    field = []
    quote = None
    while position < length:
        char = line[position]
        if quote:
            if char == quote:
                quote = None
            elif char == '\\' and position + 1 < length:
                position += 1
                field.append(line[position])
            else:
                field.append(char)
        elif char in '"\'':
            quote = char
        elif char in ' \t':
            break
        elif char == '\\' and position + 1 < length:
            position += 1
            field.append(line[position])
        else:
            field.append(char)
        position += 1
    return ''.join(field), position


def unescape_argument(argument):
    """The text a ``w`` line writes: ``%%`` is a literal ``%``."""
    return None if argument is None else argument.replace('%%', '%')


def escape_argument(value):
    return value.replace('%', '%%')


def parse_line(line, lineno=0):
    """Return an Entry, or None for comments, blank and unparsable lines."""
    body = line.rstrip('\r\n')
    stripped = body.strip()
    if not stripped or stripped.startswith('#'):
        return None
    fields = []
    position = 0
    for dummy in range(6):
        field, position = _next_field(body, position)
        if field is None:
            break
        fields.append(field)
    if len(fields) < 2:
        return None
    while len(fields) < 6:
        fields.append('-')
    argument = body[position:].strip(' \t') or None
    return Entry(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], argument, lineno)


def parse(text):
    """All entries of a file's text, in order."""
    return keyed.parse(text, parse_line)


def write_values(text):
    """{path: text written} for the ``w`` lines of one file; the first line of a path wins."""
    values = {}
    for entry in parse(text):
        if entry.path not in values:
            values[entry.path] = unescape_argument(entry.argument) if entry.type in WRITE_TYPES else None
    return dict((path, value) for path, value in values.items() if value is not None)


def _quote_path(path):
    if _NEEDS_QUOTES.search(path):
        return '"%s"' % path.replace('\\', '\\\\').replace('"', '\\"')
    return path


def format_write(path, value):
    """One ``w`` line (without newline)."""
    return 'w %s - - - - %s' % (_quote_path(path), escape_argument(value))


def _line_path(line):
    entry = parse_line(line)
    return None if entry is None else entry.path


def _rewrite(line, path, value):
    return format_write(path, value) + ('\r\n' if line.endswith('\r\n') else '\n')


def render(text, changes, header=None):
    """Return ``text`` with ``changes`` ({path: value, or None to remove}) applied.

    The first line of a path (the one systemd applies) is rewritten in place as a ``w``
    line; other lines of that path in this file are dropped (systemd would only log them as
    conflicts).  Every other line is kept byte for byte.  New paths are appended in sorted
    order; ``header`` starts a file that did not exist (``text`` None).
    """
    return keyed.render(text, changes, _line_path, _rewrite, format_write, keep=keyed.FIRST,
                        header=header.rstrip('\n') + '\n' if header else None, sort_new=True)


def boot_files(root='/', extra=None):
    """The files systemd-tmpfiles reads, in the order it reads them: [(shown, local)].

    ``extra`` is a path (as on the system) to include even if it does not exist yet.
    """
    return [(shown, local) for shown, local in confd.search(root, SEARCH_DIRS, extra) if not confd.is_masked(local)]


def boot_texts(root, ours, text):
    """[(path as on the system, text)] systemd-tmpfiles reads at boot, our file ``ours`` holding
    ``text``; while ours does not exist (None), the file of its name in a later folder (/run,
    /usr/local/lib, /usr/lib) boots in its place, shown by its own path."""
    return confd.texts_in_place(root, boot_files(root, extra=ours), ours, text, SEARCH_DIRS)


def base_text(root, ours, text, header):
    """The text our file is written from: its own, or while it does not exist, the lines of the file
    of its name in a later folder (which ours masks once written, so they are carried over), or None."""
    if text is not None:
        return text
    path, found = confd.same_name(root, ours, SEARCH_DIRS)
    return None if path is None else confd.carried_over(header, path, found)


def effective_writes(files):
    """{path: (value, shown file)} that boot applies; ``files`` is [(shown, text)] in order.

    As systemd-tmpfiles does: among the lines that take ownership of a path (``w``, ``f``,
    ``d``... but not ``z``, ``a``, ``t``, ``h``...), the first one wins and a later one with
    other fields is ignored as a duplicate; so a later ``w`` line for a path that an
    earlier ``f`` line claims gives (None, that file).  Glob lines (``w /sys/block/sd*/...``)
    apply after the exact ones, each pattern's first line only, so a matching glob
    overrides the exact value.  Use ``resolve()`` for one path.
    """
    exact = {}
    globs = []
    seen_patterns = set()
    for shown, text in files:
        for entry in parse(text):
            if entry.type not in OWNING_TYPES:
                continue
            value = unescape_argument(entry.argument) if entry.type in WRITE_TYPES else None
            if _GLOB_CHARS.search(entry.path):
                if entry.path not in seen_patterns:
                    seen_patterns.add(entry.path)
                    globs.append((entry.path, value, shown))
            elif entry.path not in exact:
                exact[entry.path] = (value, shown)
    return exact, globs


def resolve(exact, globs, path):
    """(value, shown file) written to ``path`` at boot, or (None, None) when nothing is."""
    found = exact.get(path, (None, None))
    for pattern, value, shown in globs:
        if fnmatch.fnmatchcase(path, pattern):
            found = (value, shown)
    return found
