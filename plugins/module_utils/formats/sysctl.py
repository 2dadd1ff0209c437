# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: sysctl names and values, the sysctl.d / sysctl.conf format,
and which file wins at boot.

The format and the precedence follow sysctl.d(5) as systemd-sysctl applies it:
``key = value`` or ``key=value`` lines, ``#`` and ``;`` comments, a leading ``-`` on a
key to ignore failures, keys with ``.`` or ``/`` separators, and glob patterns.  Files
named ``*.conf`` are read from the folders in SEARCH_DIRS; a name in an earlier folder
masks the same name in a later one (a link to /dev/null disables it); files then apply
in lexical order of their names, later assignments win, and an exact key always wins
over a glob.  systemd-sysctl reads /etc/sysctl.conf only through a sysctl.d entry that
links to it (Debian 12's 99-sysctl.conf; Debian 13 ships none), in that entry's place in
the order.  Where systemd does not apply sysctl at boot (no systemd as init), the boot
scripts run ``sysctl --system``, which applies /etc/sysctl.conf last.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed

SEARCH_DIRS = (
    '/etc/sysctl.d',
    '/run/sysctl.d',
    '/usr/local/lib/sysctl.d',
    '/usr/lib/sysctl.d',
    '/lib/sysctl.d',
)
SYSCTL_CONF = '/etc/sysctl.conf'

_NAME_CHARS = re.compile(r'^[A-Za-z0-9_.:/\-@+]+\Z')
_ASSIGNMENT = re.compile(r'^(?P<lead>\s*)(?P<key>[^=#;\s][^=]*?)(?P<sep>\s*=\s*)(?P<value>.*?)(?P<trail>\s*)\Z')
_GLOB_CHARS = re.compile(r'[*?\[]')


class SysctlNameError(ValueError):
    """A sysctl name that is not usable (empty, absolute, with ``..``, with spaces)."""


def _swap(name):
    return name.translate({ord('.'): u'/', ord('/'): u'.'})


def canonical_name(name):
    """Return the dotted form of a sysctl name: ``kernel/shmmax`` -> ``kernel.shmmax``.

    As in sysctl.d(5): when the first separator is ``/``, the name is in path form and
    dots in it are literal (``net/ipv4/conf/eth0.1/rp_filter`` ->
    ``net.ipv4.conf.eth0/1.rp_filter``).
    """
    name = (name or '').strip()
    slash, dot = name.find('/'), name.find('.')
    if slash != -1 and (dot == -1 or slash < dot):
        return _swap(name)
    return name


def proc_path(name):
    """The path of a (dotted) sysctl name below /proc/sys."""
    return _swap(canonical_name(name))


def validate_name(name):
    """Raise SysctlNameError with a message naming ``name`` when it is unusable; return canonical."""
    if not isinstance(name, str) or not name.strip():
        raise SysctlNameError('sysctl name %r is empty' % (name,))
    raw = name.strip()
    if any(c in name for c in '\r\n\t') or validate.bad_character(name.strip(' ')) is not None:
        raise SysctlNameError('sysctl name %r has characters that no sysctl name has' % (name,))
    if raw.startswith('/'):
        raise SysctlNameError('sysctl name %r is an absolute path; give the name (for example kernel.shmmax)' % (name,))
    if not _NAME_CHARS.match(raw):
        raise SysctlNameError('sysctl name %r has characters that no sysctl name has' % (name,))
    parts = proc_path(raw).split('/')
    if any(part in ('', '.', '..') for part in parts):
        raise SysctlNameError('sysctl name %r has an empty, "." or ".." component' % (name,))
    return canonical_name(raw)


def normalize_value(value):
    """A value as the kernel compares it: whitespace runs collapse to one space."""
    if isinstance(value, bool):
        return '1' if value else '0'
    if isinstance(value, (list, tuple)):
        return ' '.join(normalize_value(v) for v in value)
    return ' '.join(str(value).split())


def is_numeric(value):
    tokens = normalize_value(value).split()
    return bool(tokens) and all(re.match(r'^-?[0-9]+\Z', t) for t in tokens)


class Assignment(object):
    """One ``key = value`` line of a sysctl file."""

    __slots__ = ('key', 'raw_key', 'value', 'ignore_failure', 'glob', 'lineno')

    def __init__(self, key, raw_key, value, ignore_failure, glob, lineno):
        self.key = key
        self.raw_key = raw_key
        self.value = value
        self.ignore_failure = ignore_failure
        self.glob = glob
        self.lineno = lineno


def parse_line(line, lineno=0):
    """Return an Assignment, or None for comments, blank and unparsable lines."""
    stripped = line.strip()
    if not stripped or stripped[0] in '#;':
        return None
    match = _ASSIGNMENT.match(line)
    if not match:
        return None
    raw_key = match.group('key').strip()
    ignore = raw_key.startswith('-')
    key = canonical_name(raw_key.lstrip('-'))
    return Assignment(key, raw_key, match.group('value'), ignore, bool(_GLOB_CHARS.search(key)), lineno)


def parse(text):
    """All assignments of a file's text, in order."""
    return keyed.parse(text, parse_line)


def values_of(text):
    """{canonical key: value} of a file, later lines winning (exact keys only)."""
    values = {}
    for assignment in parse(text):
        if not assignment.glob:
            values[assignment.key] = assignment.value
    return values


def _line_key(line):
    assignment = parse_line(keyed.body(line))
    return None if assignment is None else assignment.key


def _replace_value(line, key, value):
    """The line with its value replaced, its key's spelling and spacing kept."""
    match = _ASSIGNMENT.match(keyed.body(line))
    return '%s%s%s%s\n' % (match.group('lead'), match.group('key'), match.group('sep'), value)


def render(text, changes, header=None, separator=' = '):
    """Return ``text`` with ``changes`` applied, every other line kept as it was.

    ``changes`` maps canonical keys to a value (set) or None (remove).  A key already
    present keeps its line (spelling, spacing) with the value replaced; further lines of
    the same key are dropped, since only the last one counted.  New keys are appended
    in sorted order, as ``key<separator>value`` (FreeBSD's rc.d reads ``key=value``
    words, so it passes ``=``).  ``header`` starts a file that did not exist (``text`` None).
    Every line of the result ends in a newline.
    """
    return keyed.render(text, changes, _line_key, _replace_value,
                        lambda key, value: '%s%s%s' % (key, separator, value),
                        keep=keyed.LAST, header=header + '\n' if header else None, sort_new=True,
                        unify_endings=True)


def _real(root, path):
    """Resolve one level of symlink the way the target system would (absolute links under root)."""
    if os.path.islink(path):
        target = os.readlink(path)
        if target.startswith('/'):
            if target == '/dev/null':
                return '/dev/null'
            return os.path.normpath(confd.under_root(root, target))
        return os.path.normpath(os.path.join(os.path.dirname(path), target))
    return os.path.normpath(path)


def systemd_applies_sysctl(root='/'):
    """Whether systemd-sysctl applies sysctl at boot: on the running system, when it was
    booted with systemd (/run/systemd/system, as sd_booted() checks); under another root,
    when that system's init is systemd."""
    if os.path.normpath(root or '/') == '/':
        return os.path.isdir('/run/systemd/system')
    for init in ('/sbin/init', '/usr/sbin/init'):
        local = confd.under_root(root, init)
        if os.path.islink(local) and os.path.basename(os.readlink(local)) == 'systemd':
            return True
    return False


def boot_files(root='/', extra=None):
    """The files read at boot, in the order they apply: [(path as on the system, local path)].

    ``extra`` is a path (as on the system) to include even if it does not exist yet
    (the file we are about to write).  /etc/sysctl.conf itself comes last only where
    systemd does not apply sysctl at boot; systemd-sysctl reads it only through a link.
    """
    ordered = confd.search(root, SEARCH_DIRS, extra)
    seen = set()
    result = []
    for shown, local in ordered:
        real = _real(root, local)
        if real == '/dev/null':
            continue
        seen.add(real)
        result.append((shown, local))
    conf_local = confd.under_root(root, SYSCTL_CONF)
    if os.path.normpath(conf_local) not in seen and (os.path.exists(conf_local) or extra == SYSCTL_CONF) \
            and not systemd_applies_sysctl(root):
        result.append((SYSCTL_CONF, conf_local))
    return result


def effective_values(files):
    """Resolve what each key gets at boot.

    ``files`` is an ordered list of (shown path, text).  Returns
    (exact, globs) where exact is {key: (value, path)} and globs is a list of
    (pattern, value, path) in application order.
    """
    exact = {}
    globs = []
    for shown, text in files:
        for assignment in parse(text):
            if assignment.glob:
                globs.append((assignment.key, assignment.value, shown))
            else:
                exact[assignment.key] = (assignment.value, shown)
    return exact, globs


def winner(exact, globs, key):
    """(value, path) that key gets at boot, or (None, None); exact keys beat globs."""
    if key in exact:
        return exact[key]
    found = (None, None)
    for pattern, value, path in globs:
        if fnmatch.fnmatchcase(proc_path(key), proc_path(pattern)):
            found = (value, path)
    return found
