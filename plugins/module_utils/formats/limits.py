# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: resource limits in their three spellings.

1. pam_limits (limits.conf(5)): ``<domain> <type> <item> <value>`` lines, ``#`` starts a
   comment anywhere on a line.  /etc/security/limits.conf is read first, then
   /etc/security/limits.d/*.conf in "C" locale order, as if concatenated; for the same
   domain and item a later line wins (a user's own line also beats group and wildcard
   lines wherever it is, which is not resolved here: domains are compared as written).
   Sizes (memlock, core, data, fsize, rss, stack, as, msgqueue) are in KB.
2. systemd ``Limit*=`` settings (systemd.exec(5)): ``soft:hard`` or one value for both,
   ``infinity``; byte limits take K, M, G, T, P, E suffixes (1024-based), LimitCPU is in
   seconds, LimitRTTIME in microseconds, LimitNICE a raw rlimit or ``+N``/``-N`` nice value.
   ``systemctl show`` reports the hard limit as ``LimitX`` and the soft one as ``LimitXSoft``,
   in bytes/seconds/microseconds or ``infinity``.
3. /proc/<pid>/limits, what a running process really has.

Every value is normalized to a (soft, hard) pair of ints or ``infinity`` so the three compare.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import pam_limits

LIMITS_CONF = '/etc/security/limits.conf'
LIMITS_D = '/etc/security/limits.d'

TYPES = ('soft', 'hard', '-')
ITEMS = ('core', 'data', 'fsize', 'memlock', 'nofile', 'rss', 'stack', 'cpu', 'nproc', 'as', 'maxlogins',
         'maxsyslogins', 'nonewprivs', 'priority', 'locks', 'sigpending', 'msgqueue', 'nice', 'rtprio', 'chroot')
# Items where -1 is a real value, not "no limit" (limits.conf(5)).
_SIGNED_ITEMS = ('priority', 'nice')
_UNLIMITED = ('unlimited', 'infinity', '-1')
INFINITY = 'infinity'


class LimitsValueError(ValueError):
    """A value that the format does not accept; the message names it."""


# ------------------------------------------------------------------ limits.conf
class Entry(object):
    __slots__ = ('domain', 'type', 'item', 'value', 'lineno')

    def __init__(self, domain, type_, item, value, lineno):
        self.domain = domain
        self.type = type_
        self.item = item
        self.value = value
        self.lineno = lineno

    @property
    def key(self):
        return (self.domain, self.type, self.item)


def parse_line(line, lineno=0):
    """An Entry, or None for comments, blank lines and lines pam_limits would skip."""
    body = line.split('#', 1)[0]
    fields = body.split()
    if len(fields) < 4:
        return None
    domain, type_, item, value = fields[:4]
    if type_ not in TYPES:
        return None
    return Entry(domain, type_, item.lower(), value, lineno)


def parse(text):
    return keyed.parse(text, parse_line)


def normalize_value(item, value):
    """A limits.conf value as pam_limits reads it: ``unlimited`` for -1/unlimited/infinity."""
    text = str(value).strip().lower()
    if item not in _SIGNED_ITEMS and text in _UNLIMITED:
        return 'unlimited'
    if re.match(r'^[+-]?[0-9]+\Z', text):
        return str(int(text))
    return text


def check_value(item, value):
    """Return the value as text, or raise LimitsValueError."""
    if isinstance(value, bool) or value is None:
        raise LimitsValueError('%r is not a limit value' % (value,))
    text = str(value).strip()
    lowered = text.lower()
    if item in _SIGNED_ITEMS:
        if not re.match(r'^[+-]?[0-9]+\Z', text) or not -20 <= int(text) <= 19:
            raise LimitsValueError('%s takes a number from -20 to 19, not %r' % (item, value))
        return str(int(text))
    if item == 'nonewprivs':
        if text not in ('0', '1'):
            raise LimitsValueError('nonewprivs takes 0 or 1, not %r' % (value,))
        return text
    if item == 'chroot':
        if not text.startswith('/') or any(c.isspace() for c in text) or '#' in text:
            raise LimitsValueError('chroot takes an absolute path, not %r' % (value,))
        return text
    if lowered in _UNLIMITED:
        return lowered
    if not re.match(r'^[0-9]+\Z', text):
        raise LimitsValueError('%s takes a whole number, unlimited, infinity or -1, not %r' % (item, value))
    if int(text) > _largest(item):
        raise LimitsValueError('%s: %s is above %d, the largest value pam_limits sets as a number for it%s'
                               % (item, text, _largest(item), '' if item == 'nofile' else ' (write unlimited for no limit)'))
    return str(int(text))


# limits.conf(5) domains: a user name, @group, %group (maxlogins only), *, % (maxlogins only),
# a uid range <min>:<max> (either end may be left out), a gid range @<min>:<max>, %:<gid>.
_ACCOUNT_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?\Z')
_ID_RANGE = re.compile(r'^(?P<low>[0-9]*):(?P<high>[0-9]*)\Z')
_ID_MAX = 2 ** 32 - 2
_LOGIN_ITEMS = ('maxlogins', 'maxsyslogins')
# The largest value pam_limits keeps as a number: a size whose bytes (a cpu time whose
# seconds) would not fit in 64 bits becomes unlimited, without a word.
_RLIM_INFINITY = 2 ** 64 - 1
_KB_ITEMS = ('fsize', 'data', 'stack', 'core', 'rss', 'memlock', 'as', 'msgqueue')
# fs.nr_open can be no higher (the kernel's sysctl_nr_open_max on 64 bits); setrlimit of a
# larger nofile fails, and pam_limits then refuses the login.
_NOFILE_MAX = 2147483584


def _largest(item):
    if item in _KB_ITEMS:
        return _RLIM_INFINITY // 1024 - 1
    if item == 'cpu':
        return _RLIM_INFINITY // 60 - 1
    if item == 'nofile':
        return _NOFILE_MAX
    if item in _LOGIN_ITEMS:
        return 2 ** 31 - 1
    return _RLIM_INFINITY - 1


def check_domain(domain, item=None):
    """Return ``domain`` when limits.conf(5) reads it as a domain for ``item``, or raise
    LimitsValueError: a user name, ``@group``, ``*``, a uid range ``min:max`` (``:uid``,
    ``min:``), a gid range ``@min:max``; ``%``, ``%group`` and ``%:gid`` for maxlogins only."""
    if not isinstance(domain, str) or not domain:
        raise LimitsValueError('%r is not a limits.conf domain' % (domain,))
    text = domain
    if text == '*':
        return domain
    if text.startswith('%'):
        if item is not None and item not in _LOGIN_ITEMS:
            raise LimitsValueError('%r: a %% domain applies to maxlogins only (limits.conf(5)); pam_limits ignores it '
                                   'for %s' % (domain, item))
        text = text[1:]
        if text == '':
            return domain
        if text.startswith(':') and text[1:].isdigit():
            return domain
    elif text.startswith('@'):
        text = text[1:]
    ranged = _ID_RANGE.match(text)
    if ranged and not domain.startswith('%'):
        low, high = ranged.group('low'), ranged.group('high')
        if not low and not high:
            raise LimitsValueError('%r: a range needs a number on at least one side of ":"' % (domain,))
        if any(part and int(part) > _ID_MAX for part in (low, high)):
            raise LimitsValueError('%r: an id above %d' % (domain, _ID_MAX))
        if low and high and int(low) > int(high):
            raise LimitsValueError('%r: the range\'s first id is above its last' % (domain,))
        return domain
    if not _ACCOUNT_NAME.match(text) or len(text) > 32:
        raise LimitsValueError('%r is not a user name, @group, %%group, *, or a uid/gid range (min:max) as '
                               'limits.conf(5) defines a domain' % (domain,))
    if text.isdigit():
        raise LimitsValueError('%r: a name of digits only is no user name; write :%s for the uid %s'
                               % (domain, text, text))
    return domain


def _format(domain, type_, item, value):
    return '%-15s %-5s %-10s %s' % (domain, type_, item, value)


def _replace_value(line, value):
    """Replace the 4th field of a line, keeping its spacing and trailing comment."""
    match = re.match(r'^(\s*\S+\s+\S+\s+\S+\s+)(\S+)(.*)\Z', line.rstrip('\r\n'))
    ending = line[len(line.rstrip('\r\n')):]
    return '%s%s%s%s' % (match.group(1), value, match.group(3), ending)


def _line_key(line):
    entry = parse_line(line)
    return None if entry is None else entry.key


def _also_replaced(key):
    """The keys whose lines a change of ``key`` replaces too: type ``-`` sets soft and hard."""
    return [(key[0], kind, key[2]) for kind in ('soft', 'hard')] if key[1] == '-' else []


def render(text, changes, header=None):
    """Return ``text`` with ``changes`` ({(domain, type, item): value or None}) applied.

    The last line of a key keeps its place and spacing with the value replaced; other
    lines of the key are dropped (only the last counted).  Setting type ``-`` also drops
    this file's ``soft`` and ``hard`` lines of that domain and item, which it replaces.
    New keys are appended in the given order; every other line is kept byte for byte.
    """
    return keyed.render(text, changes, _line_key, lambda line, key, value: _replace_value(line, value),
                        lambda key, value: _format(key[0], key[1], key[2], value),
                        keep=keyed.LAST, header=header.rstrip('\n') + '\n' if header else None,
                        drops=_also_replaced)


def boot_files(root='/', extra=None):
    """The files pam_limits reads, in order: [(shown path, local path)]."""
    base = root or '/'
    result = [(LIMITS_CONF, os.path.join(base, LIMITS_CONF.lstrip('/')))]
    folder = os.path.join(base, LIMITS_D.lstrip('/'))
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    if extra and os.path.dirname(extra) == LIMITS_D:
        names.add(os.path.basename(extra))
    for name in sorted(names, key=lambda n: n.encode('utf-8', 'surrogateescape')):
        if name.endswith('.conf') and not name.startswith('.'):
            result.append((os.path.join(LIMITS_D, name), os.path.join(folder, name)))
    return result


# The value a limits file gives one side of a limit, and that file (both None when no file does).
Effective = namedtuple('Effective', 'value path')


def effective(files, domain, item):
    """{'soft': Effective, 'hard': Effective} for a domain and item; later lines win.  A value is
    read as pam_limits reads it (formats/pam_limits.py read_value: ``0300`` is 300, ``4096kb``
    4096, a value without digits skips the line)."""
    found = {'soft': Effective(None, None), 'hard': Effective(None, None)}
    for shown, text in files:
        for entry in parse(text):
            if entry.domain != domain or entry.item != item:
                continue
            value = entry.value if item == 'chroot' else pam_limits.read_value(item, entry.value)
            if value is None:
                continue   # pam_limits: "wrong limit value", the line sets nothing
            kinds = ('soft', 'hard') if entry.type == '-' else (entry.type,)
            for kind in kinds:
                found[kind] = Effective(str(value), shown)
    return found


# ------------------------------------------------------------------ systemd Limit*=
SYSTEMD_LIMITS = {
    # name: (kind, /proc/<pid>/limits row)
    'LimitCPU': ('seconds', 'Max cpu time'),
    'LimitFSIZE': ('bytes', 'Max file size'),
    'LimitDATA': ('bytes', 'Max data size'),
    'LimitSTACK': ('bytes', 'Max stack size'),
    'LimitCORE': ('bytes', 'Max core file size'),
    'LimitRSS': ('bytes', 'Max resident set'),
    'LimitNOFILE': ('count', 'Max open files'),
    'LimitAS': ('bytes', 'Max address space'),
    'LimitNPROC': ('count', 'Max processes'),
    'LimitMEMLOCK': ('bytes', 'Max locked memory'),
    'LimitLOCKS': ('count', 'Max file locks'),
    'LimitSIGPENDING': ('count', 'Max pending signals'),
    'LimitMSGQUEUE': ('bytes', 'Max msgqueue size'),
    'LimitNICE': ('nice', 'Max nice priority'),
    'LimitRTPRIO': ('count', 'Max realtime priority'),
    'LimitRTTIME': ('usec', 'Max realtime timeout'),
}
_SIZE_UNITS = {'': 1, 'B': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4, 'P': 1024 ** 5,
               'E': 1024 ** 6}
_TIME_UNITS_USEC = {
    'us': 1, 'usec': 1, 'ms': 1000, 'msec': 1000, 's': 10 ** 6, 'sec': 10 ** 6, 'second': 10 ** 6,
    'seconds': 10 ** 6, 'm': 60 * 10 ** 6, 'min': 60 * 10 ** 6, 'minutes': 60 * 10 ** 6,
    'h': 3600 * 10 ** 6, 'hr': 3600 * 10 ** 6, 'hour': 3600 * 10 ** 6, 'hours': 3600 * 10 ** 6,
    'd': 86400 * 10 ** 6, 'day': 86400 * 10 ** 6, 'days': 86400 * 10 ** 6,
}


def _unsigned(text):
    """A whole number as systemd's safe_atou64 reads it (src/basic/parse-util.c): an optional
    ``+``, then ``0x`` hex, ``0o`` octal, ``0b`` binary, a leading ``0`` octal (``0300`` is
    192), else decimal; None for anything else.  Checked with systemd 252 and 257
    (molecule/consumers, tests/test_layouts.py)."""
    match = re.match(r'^\+?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z', text)
    if not match:
        return None
    body = match.group(1)
    prefix = body[:2].lower()
    if prefix in ('0x', '0o', '0b'):
        return int(body[2:], {'0x': 16, '0o': 8, '0b': 2}[prefix])
    return int(body, 8) if body.startswith('0') else int(body)


_SIZE_ORDER = ('E', 'P', 'T', 'G', 'M', 'K', 'B', '')
_SIZE_PART = re.compile(r'\s*([0-9]+)(?:\.([0-9]+))?\s*(E|P|T|G|M|K|B|)')


def _size(text):
    """Bytes as systemd's parse_size (base 1024) reads a ``Limit*=`` size: decimal parts, each
    with an optional fraction and K, M, G, T, P, E or B (upper case; spaces before it allowed),
    added up (``1G 512M``); a fraction of a byte is dropped; None when it is not one."""
    text = text.strip()
    if text.startswith('+'):
        text = text[1:]
    if not text:
        return None
    total, pos, last = 0, 0, -1
    while pos < len(text):
        match = _SIZE_PART.match(text, pos)
        if not match or match.end() == pos:
            return None
        whole, fraction, unit = match.group(1), match.group(2) or '', match.group(3)
        # each part's unit below the one before (``1G 512M``; systemd refuses ``512M 256M``)
        if _SIZE_ORDER.index(unit) <= last:
            return None
        last = _SIZE_ORDER.index(unit)
        factor = _SIZE_UNITS[unit]
        total += int(whole) * factor + (int(fraction) * factor // 10 ** len(fraction) if fraction else 0)
        pos = match.end()
        if not unit and pos < len(text):
            return None
    return total


def _span(text, default_unit):
    """Microseconds of a time span as systemd's parse_time reads it: parts of a number (a
    fraction allowed) and a unit, the setting's own unit when a part has none; None otherwise."""
    parts = re.findall(r'\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)', text)
    if not parts or re.sub(r'\s*[0-9]+(?:\.[0-9]+)?\s*[a-z]*', '', text).strip():
        return None
    usec = 0
    for number, unit in parts:
        factor = _TIME_UNITS_USEC.get(unit) if unit else default_unit
        if factor is None:
            return None
        usec += int(round(float(number) * factor))
    return usec


def _parse_one(name, kind, text):
    """One side of a ``Limit*=`` value as systemd's rlimit_parse_one reads it (src/basic/rlimit-util.c)."""
    text = text.strip()
    if text == INFINITY:
        return INFINITY
    if kind == 'bytes':
        number = _size(text)
        if number is None:
            raise LimitsValueError('%s: %r is not a size (a number with an optional K, M, G, T, P or E, or infinity)'
                                   % (name, text))
        return number
    if kind == 'count':
        number = _unsigned(text)
        if number is None:
            raise LimitsValueError('%s: %r is not a whole number or infinity' % (name, text))
        return number
    if kind == 'nice':
        if re.match(r'^[+-][0-9]+\Z', text):
            nice = int(text)
            if not -20 <= nice <= 19:
                raise LimitsValueError('%s: nice value %r is outside -20..19' % (name, text))
            return 20 - nice
        raw = _unsigned(text)
        if raw is not None and raw <= 40:
            return raw
        raise LimitsValueError('%s: %r is neither a nice value (+N/-N) nor a raw limit 0..40' % (name, text))
    # seconds (LimitCPU, rounded up to whole seconds) / usec (LimitRTTIME): a plain number is
    # in the setting's own unit
    usec = _span(text, 10 ** 6 if kind == 'seconds' else 1)
    if usec is None:
        raise LimitsValueError('%s: %r is not a time span' % (name, text))
    if kind == 'seconds':
        return -(-usec // 10 ** 6)
    return usec


def parse_systemd_limit(name, value):
    """(soft, hard) from a ``Limit*=`` value; raises LimitsValueError."""
    if name not in SYSTEMD_LIMITS:
        raise LimitsValueError('%s is not a systemd resource limit (one of %s)'
                               % (name, ', '.join(sorted(SYSTEMD_LIMITS))))
    if isinstance(value, bool) or value is None:
        raise LimitsValueError('%s: %r is not a limit value' % (name, value))
    text = str(value).strip()
    kind = SYSTEMD_LIMITS[name][0]
    if ':' in text:
        soft_text, hard_text = text.split(':', 1)
        if soft_text != soft_text.rstrip() or (kind in ('count', 'nice') and hard_text != hard_text.strip()):
            # systemd 252 and 257 refuse ``512 : 1024`` and ``4M :1G`` (and take ``4M: 1G``)
            raise LimitsValueError('%s: %r has blanks around ":"' % (name, text))
        soft, hard = _parse_one(name, kind, soft_text), _parse_one(name, kind, hard_text)
        if soft != INFINITY and hard != INFINITY and soft > hard:
            raise LimitsValueError('%s: the soft limit %r is above the hard limit %r' % (name, soft_text, hard_text))
        if soft == INFINITY and hard != INFINITY:
            raise LimitsValueError('%s: the soft limit infinity is above the hard limit %r' % (name, hard_text))
        return (soft, hard)
    single = _parse_one(name, kind, text)
    return (single, single)


def show_properties(name):
    """The ``systemctl show`` properties of one limit: hard, then soft."""
    return (name, name + 'Soft')


def from_show(values, name):
    """(soft, hard) from parsed ``systemctl show`` output, or None when absent."""
    hard, soft = values.get(name), values.get(name + 'Soft')
    if hard is None:
        return None
    return (_show_value(soft if soft is not None else hard), _show_value(hard))


def _show_value(text):
    text = (text or '').strip()
    if text == INFINITY or text == '18446744073709551615':
        return INFINITY
    return int(text) if re.match(r'^[0-9]+\Z', text) else text


def parse_proc_limits(text):
    """/proc/<pid>/limits as {Limit name: (soft, hard)} in systemd's units."""
    rows = dict((row, name) for name, (kind, row) in SYSTEMD_LIMITS.items())
    found = {}
    for line in (text or '').splitlines():
        for row, name in rows.items():
            if line.startswith(row + ' '):
                fields = line[len(row):].split()
                if len(fields) >= 2:
                    found[name] = (_proc_value(fields[0]), _proc_value(fields[1]))
    return found


def _proc_value(text):
    return INFINITY if text == 'unlimited' else int(text) if re.match(r'^[0-9]+\Z', text) else text


def show_pair(pair):
    """A (soft, hard) pair as text: ``65536`` when both are equal, else ``soft:hard``."""
    if pair is None:
        return None
    soft, hard = pair
    return str(soft) if soft == hard else '%s:%s' % (soft, hard)
