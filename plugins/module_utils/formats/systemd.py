# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: systemd unit files and drop-ins (parse, render, precedence).

The format follows systemd.syntax(7): ``[Section]`` headers, ``Key=Value`` lines, ``#`` and
``;`` comments, and a trailing backslash that continues a line (replaced by a space).
A key may be given several times: for most settings the last one wins, for list settings
the values add up and an empty assignment resets the list; ``read()`` keeps every value so
that each caller can apply the rule its key follows.

Which files make up a unit follows systemd.unit(5): the unit file is the first one found
along SEARCH_DIRS; drop-ins are read from ``<unit>.d/``, from the truncated-name folders
of a name with dashes (``foo-bar-.service.d/``, ``foo-.service.d/``) and from the type
folder (``service.d/``), in every search folder; a drop-in name found first (higher
folder, more specific name) masks the same name elsewhere; a link to /dev/null masks; the
drop-ins then apply in lexical order of their file names, after the unit file.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed

SEARCH_DIRS = (
    '/etc/systemd/system',
    '/run/systemd/system',
    '/usr/local/lib/systemd/system',
    '/usr/lib/systemd/system',
    '/lib/systemd/system',
)

UNIT_TYPES = ('service', 'socket', 'device', 'mount', 'automount', 'swap', 'target', 'path',
              'timer', 'slice', 'scope')

_UNIT_NAME = re.compile(r'^[A-Za-z0-9:_.\\@-]+\.(%s)\Z' % '|'.join(UNIT_TYPES))
_SECTION = re.compile(r'^\s*\[(?P<name>[^\]]+)\]\s*\Z')
_ASSIGNMENT = re.compile(r'^(?P<lead>\s*)(?P<key>[A-Za-z0-9_-]+)(?P<sep>\s*=\s*)(?P<value>.*?)\s*\Z')


class UnitNameError(ValueError):
    """A unit name that systemd would not accept, or that would leave its folder."""


def unit_name(name, default_type='service'):
    """Return ``name`` with a type suffix (``postgresql`` -> ``postgresql.service``).

    Raises UnitNameError for names with ``/``, ``..``, spaces or an unknown suffix.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnitNameError('unit name %r is empty' % (name,))
    # Blanks around the name are forgiven; a newline or U+00A0 there is not.
    name = name.strip(' ')
    if '/' in name or '..' in name:
        raise UnitNameError('unit name %r must not contain "/" or ".."' % (name,))
    if not any(name.endswith('.' + kind) for kind in UNIT_TYPES):
        name = '%s.%s' % (name, default_type)
    if not _UNIT_NAME.match(name) or name.startswith('.'):
        raise UnitNameError('unit name %r has characters that no systemd unit name has' % (name,))
    return name


class Line(object):
    """One logical line: ``kind`` is blank, comment, section, assignment or other.

    ``raw`` holds the physical lines (several when continued with a backslash).
    """

    __slots__ = ('kind', 'raw', 'section', 'key', 'value')

    def __init__(self, kind, raw, section=None, key=None, value=None):
        self.kind = kind
        self.raw = raw
        self.section = section
        self.key = key
        self.value = value


def parse(text):
    """Split ``text`` into Line objects; joining every ``raw`` gives ``text`` back."""
    physical = (text or '').splitlines(True)
    lines = []
    section = None
    index = 0
    while index < len(physical):
        first = physical[index]
        stripped = first.strip()
        if not stripped:
            lines.append(Line('blank', [first], section))
            index += 1
            continue
        if stripped[0] in '#;':
            lines.append(Line('comment', [first], section))
            index += 1
            continue
        match = _SECTION.match(first.rstrip('\r\n'))
        if match:
            section = match.group('name')
            lines.append(Line('section', [first], section))
            index += 1
            continue
        raw = [first]
        # A trailing backslash continues the line; comment lines inside are skipped.
        continued = first.rstrip('\r\n').endswith('\\')
        while continued and index + len(raw) < len(physical):
            following = physical[index + len(raw)]
            raw.append(following)
            if following.strip()[:1] not in ('#', ';'):
                continued = following.rstrip('\r\n').endswith('\\')
        index += len(raw)
        logical = ''
        for part in raw:
            body = part.rstrip('\r\n')
            if part is not first and body.strip()[:1] in ('#', ';'):
                continue
            if body.endswith('\\'):
                logical += body[:-1] + ' '
            else:
                logical += body
        match = _ASSIGNMENT.match(logical)
        if match and section is not None:
            lines.append(Line('assignment', raw, section, match.group('key'), match.group('value')))
        else:
            lines.append(Line('other', raw, section))
    return lines


def read(text):
    """{section: {key: [values in file order]}}; an empty value is kept (it resets)."""
    found = {}
    for line in parse(text):
        if line.kind == 'assignment':
            found.setdefault(line.section, {}).setdefault(line.key, []).append(line.value)
    return found


def last_value(text, section, key):
    """The value the last assignment of ``key`` in ``section`` gives, or None."""
    values = read(text).get(section, {}).get(key)
    return values[-1] if values else None


def _value_lines(key, value, template=None):
    values = value if isinstance(value, (list, tuple)) else [value]
    lead, sep = '', '='
    if template is not None:
        match = _ASSIGNMENT.match(template.raw[0].rstrip('\r\n').rstrip('\\'))
        if match:
            lead, sep = match.group('lead'), match.group('sep')
    return ['%s%s%s%s\n' % (lead, key, sep, item) for item in values]


def render(text, changes, header=None):
    """Return ``text`` with ``changes`` applied; every other line is kept byte for byte.

    ``changes`` is {section: {key: value}} where value is a string (one line), a list
    (one line per item, in order) or None (remove every line of that key in that
    section).  The last existing line of a key is replaced in place (keeping its
    indentation and spacing around ``=``) and earlier lines of the same key in that
    section are dropped, so the key ends with exactly the given value(s).  Keys not yet
    present go at the end of the section's last block; sections not present are added
    at the end.  ``header`` (a comment) starts a file that did not exist (``text`` None).
    Returns None when ``text`` was None and nothing is to be written.
    """
    lines = parse(text)
    last = {}
    for position, line in enumerate(lines):
        if line.kind == 'assignment' and line.key in changes.get(line.section, {}):
            last[(line.section, line.key)] = position
    output = []
    for position, line in enumerate(lines):
        wanted = changes.get(line.section, {}) if line.kind == 'assignment' else {}
        if line.kind != 'assignment' or line.key not in wanted:
            output.append(list(line.raw))
            continue
        value = wanted[line.key]
        if value is None or last[(line.section, line.key)] != position:
            output.append([])
            continue
        output.append(_value_lines(line.key, value, line))
    # Keys that are new: after the last non-blank line of the section's last block.
    for section in changes:
        new_lines = []
        for key in sorted(changes[section]):
            value = changes[section][key]
            if value is not None and (section, key) not in last:
                new_lines.extend(_value_lines(key, value))
        if not new_lines:
            continue
        block_positions = [p for p, line in enumerate(lines) if line.section == section]
        if block_positions:
            insert_at = block_positions[-1]
            while insert_at > 0 and lines[insert_at].kind == 'blank' and lines[insert_at - 1].section == section:
                insert_at -= 1
            target = output[insert_at]
            if target and not target[-1].endswith('\n'):
                target[-1] += '\n'
            output[insert_at] = target + new_lines
        else:
            flat = [part for chunk in output for part in chunk]
            block = []
            if flat and not flat[-1].endswith('\n'):
                block.append('\n')
            if flat and flat[-1].strip():
                block.append('\n')
            if text is None and header and not flat:
                block.append(header.rstrip('\n') + '\n')
            block.append('[%s]\n' % section)
            output.append(block + new_lines)
    rendered = ''.join(part for chunk in output for part in chunk)
    if text is None and not rendered:
        return None
    return rendered


# ------------------------------------------------------------------ precedence
def dropin_dir_names(unit):
    """Drop-in folder names for ``unit``, most specific first.

    ``foo-bar-baz.service`` -> foo-bar-baz.service.d, foo-bar-.service.d, foo-.service.d,
    service.d; a template instance ``a@b.service`` also reads ``a@.service.d``.
    """
    stem, dot, kind = unit.rpartition('.')
    names = ['%s.d' % unit]
    if '@' in stem:
        names.append('%s@.%s.d' % (stem.split('@', 1)[0], kind))
    pieces = stem.split('-')
    for end in range(len(pieces) - 1, 0, -1):
        prefix = '-'.join(pieces[:end]) + '-'
        names.append('%s.%s.d' % (prefix, kind))
    names.append('%s.d' % kind)
    return names


def unit_file(root, unit):
    """(shown path, local path) of the unit file that systemd loads, or (None, None)."""
    candidates = [unit]
    stem, dot, kind = unit.rpartition('.')
    if '@' in stem and not stem.endswith('@'):
        candidates.append('%s@.%s' % (stem.split('@', 1)[0], kind))
    for name in candidates:
        for folder in SEARCH_DIRS:
            local = confd.under_root(root, os.path.join(folder, name))
            if os.path.lexists(local):
                if confd.is_masked(local):
                    return (os.path.join(folder, name), None)
                return (os.path.join(folder, name), local)
    return (None, None)


def unit_files(root, unit, extra=None):
    """Files that make up ``unit``, in the order they apply: [(shown path, local path)].

    The unit file first (when there is one), then the drop-ins by file name.  ``extra``
    is a drop-in path (as on the system) to count even if it does not exist yet.
    """
    folders = [os.path.join(folder, dir_name) for folder in SEARCH_DIRS for dir_name in dropin_dir_names(unit)]
    ordered = []
    shown, local = unit_file(root, unit)
    if local is not None:
        ordered.append((shown, local))
    ordered.extend((shown, local) for shown, local in confd.search(root, folders, extra) if not confd.is_masked(local))
    return ordered


def effective_value(files, section, key):
    """(value, shown path) that the last assignment of ``key`` across ``files`` gives.

    ``files`` is an ordered list of (shown path, text).  (None, None) when no file sets it.
    """
    found = (None, None)
    for shown, text in files:
        values = read(text).get(section, {}).get(key)
        if values:
            found = (values[-1], shown)
    return found


# ------------------------------------------------------------------ systemctl
def parse_show(text):
    """``systemctl show -p A -p B unit`` output as {property: value}."""
    return keyed.key_values(text, '=')


def systemd_running(root='/'):
    """True when systemd is the running init (sd_booted(3): /run/systemd/system exists)."""
    return (root or '/') == '/' and os.path.isdir('/run/systemd/system')
