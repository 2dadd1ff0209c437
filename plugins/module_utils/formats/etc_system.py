# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the Solaris /etc/system format, as system(4) documents it, and
the files of /etc/system.d (Solaris 11.2 and later, illumos since 2019), which hold the same
lines and are read before /etc/system.

``set [module:]symbol = value`` lines set kernel variables at boot; ``set symbol | value``
and ``set symbol & value`` or/and bits into them (kept as they are, never rewritten);
lines starting with ``*`` or ``#`` are comments; ``forceload:``, ``exclude:``,
``moddir:``, ``rootfs:`` and ``rootdev:`` lines are kept untouched.  Values are
decimal, ``0x`` hexadecimal, ``0`` octal, or a quoted string.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ETC_SYSTEM = '/etc/system'
# Solaris 11.2 and later, and illumos since 2019 (illumos 9696), read the files of /etc/system.d
# before /etc/system; system(5) and Oracle's Solaris 11.4 tuning guide ("/etc/system.d/ Directory
# Files") ask for a file of one's own there instead of edits to /etc/system.
SYSTEM_D = '/etc/system.d'
# Our own file there (system(5): a site prefix for files no package delivers).
OWN_FILE = SYSTEM_D + '/dbhost-tuning'
_FILE_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.:-]*\Z')


def check_file(path, has_system_d):
    """None when ``path`` is a file the kernel reads at boot: /etc/system, or a plain file
    name under /etc/system.d where the release has that folder; else the reason it is not."""
    if path == ETC_SYSTEM:
        return None
    folder, sep, name = path.rpartition('/')
    if folder != SYSTEM_D:
        return 'file %r is not read at boot on SunOS: use %s or a file in %s' % (path, ETC_SYSTEM, SYSTEM_D)
    if not _FILE_NAME.match(name):
        return 'file %r: give a plain file name in %s (letters, digits, "_", ".", ":", "-")' % (path, SYSTEM_D)
    if not has_system_d:
        return ('file %r: this release has no %s (Solaris 10, 11.0 and 11.1 read only %s): use %s'
                % (path, SYSTEM_D, ETC_SYSTEM, ETC_SYSTEM))
    return None


# system(5): the keywords are case-insensitive (``SET`` and ``Set`` work too); the variable
# name is a kernel symbol and keeps its case.
_SET = re.compile(r'^(?P<lead>\s*[Ss][Ee][Tt]\s+)(?P<key>[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?)'
                  r'(?P<sep>\s*=\s*)(?P<value>\S+)(?P<trail>\s*)\Z')
_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)?\Z')


class EtcSystemNameError(ValueError):
    pass


def validate_name(name):
    """``shmsys:shminfo_shmmax`` or ``maxusers``; anything else is refused with its name."""
    if not isinstance(name, str) or not _NAME.match(name.strip(' ')):
        raise EtcSystemNameError('%r is not an /etc/system variable name (module:variable or variable)' % (name,))
    return name.strip(' ')


def normalize_value(value):
    """Numbers compare by value (``0x10`` equals ``16``); strings compare as written."""
    text = ' '.join(str(value).split())
    try:
        if re.match(r'^0[xX][0-9a-fA-F]+\Z', text):
            return str(int(text, 16))
        if re.match(r'^0[0-7]+\Z', text):
            return str(int(text, 8))
        if re.match(r'^-?[0-9]+\Z', text):
            return str(int(text))
    except ValueError:
        pass
    return text


def parse(text):
    """{key: (value, lineno)} of plain ``set key = value`` lines; the last one wins."""
    values = {}
    for lineno, line in enumerate((text or '').splitlines(), 1):
        stripped = line.lstrip()
        if not stripped or stripped[0] in '*#':
            continue
        match = _SET.match(line)
        if match:
            values[match.group('key')] = (match.group('value'), lineno)
    return values


def render(text, changes):
    """Apply {key: value or None}; other lines, comments and spacing are kept."""
    lines = (text or '').splitlines()
    last_index = {}
    for index, line in enumerate(lines):
        match = _SET.match(line)
        if match and not line.lstrip().startswith(('*', '#')) and match.group('key') in changes:
            last_index[match.group('key')] = index
    output = []
    for index, line in enumerate(lines):
        match = _SET.match(line)
        if not match or match.group('key') not in changes:
            output.append(line)
            continue
        value = changes[match.group('key')]
        if value is None or last_index[match.group('key')] != index:
            continue
        output.append('%s%s%s%s%s' % (match.group('lead'), match.group('key'), match.group('sep'),
                                      value, match.group('trail')))
    for key in sorted(k for k, v in changes.items() if v is not None and k not in last_index):
        output.append('set %s=%s' % (key, changes[key]))
    return '\n'.join(output) + '\n' if output else ''
