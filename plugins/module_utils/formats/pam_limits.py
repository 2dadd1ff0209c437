# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the limit a user's login session really gets from pam_limits.

The rules are those of Linux-PAM's pam_limits (modules/pam_limits/pam_limits.c, and
limits.conf(5)):

- /etc/security/limits.conf is read first, then every /etc/security/limits.d/*.conf in
  byte order of the file names (formats/limits.py boot_files gives that list);
- a line is ``domain type item value``; ``#`` starts a comment; the type, item and value
  are read in lower case; a line with fewer than four fields sets nothing, except
  ``<domain> -`` (two fields), which, when the domain applies, ends the reading: the session
  then gets no limit from any file;
- which lines apply to the user, and with what weight (a lower one wins):
  the user's own name or a uid range (``1000``-style ``:1000``, ``1000:2000``, ``1000:``)
  weigh 0; ``@group`` (primary or supplementary group), ``@:gid`` (any of the user's gids)
  and ``@min:max`` / ``@min:`` (the primary gid only) weigh 1; ``*`` weighs 4; ``%`` and
  ``%group`` apply to maxlogins only;
- a line applies to a side (soft or hard) when its weight is not above the weight of what
  set that side so far, so a later line of the same weight wins and a user's line is never
  undone by a group or ``*`` line; ``-`` sets soft, then hard, and stops at soft when soft
  was set by a weightier line (the hard side then keeps what it had);
- values: ``unlimited``, ``infinity``, ``-1`` and ``-`` mean no limit (except for priority
  and nice); a number is read as strtoull(3) reads it (leading digits, anything after them
  ignored; too large means no limit); sizes are in KB and cpu in minutes, and a size whose
  bytes (cpu whose seconds) would not fit means no limit; ``nofile unlimited`` is
  fs.nr_open;
- at the end the soft limit is lowered to the hard one when above it; a side no line sets
  keeps the value the session inherited.

Values are returned in limits.conf's own units (KB, minutes), as ints or ``unlimited``.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

USER, GROUP, ALL_GROUP, ALL, DEFAULT, NONE = 0, 1, 2, 3, 4, 6
UNLIMITED = 'unlimited'
RLIM_INFINITY = 2 ** 64 - 1
KB_ITEMS = ('fsize', 'data', 'stack', 'core', 'rss', 'memlock', 'as', 'msgqueue')
RLIMIT_ITEMS = KB_ITEMS + ('cpu', 'nproc', 'nofile', 'locks', 'sigpending', 'nice', 'rtprio')
_UNLIMITED_WORDS = ('-1', '-', 'unlimited', 'infinity')
_WEIGHT_NAMES = {USER: 'user', GROUP: 'group', DEFAULT: 'wildcard'}


class Side(object):
    """What set one side of a limit: ``value`` and the line it came from."""

    __slots__ = ('value', 'path', 'lineno', 'domain', 'weight')

    def __init__(self, value, path, lineno, domain, weight):
        self.value = value
        self.path = path
        self.lineno = lineno
        self.domain = domain
        self.weight = weight

    def where(self):
        """``@dba in /etc/security/limits.d/50-dba.conf line 3`` (for a record's detail)."""
        return '%s (%s line) in %s line %d' % (self.domain, _WEIGHT_NAMES.get(self.weight, 'other'),
                                               self.path, self.lineno)


class Resolved(object):
    """The outcome for one item: ``soft`` and ``hard`` (Side or None: inherited), and
    ``stopped`` ((path, lineno) of an applying ``<domain> -`` line, or None)."""

    def __init__(self):
        self.soft = None
        self.hard = None
        self.stopped = None

    def side(self, name):
        return self.soft if name == 'soft' else self.hard

    def effective(self, inherited=(None, None)):
        """(soft, hard) as the session gets them: soft lowered to hard, unset sides inherited
        (``inherited`` is (soft, hard), None where unknown); None where unknown."""
        if self.stopped is not None:
            return tuple(inherited)
        soft = self.soft.value if self.soft is not None else inherited[0]
        hard = self.hard.value if self.hard is not None else inherited[1]
        if self.soft is None and self.hard is None:
            return (soft, hard)
        if soft is not None and hard is not None and above(soft, hard):
            soft = hard
        return (soft, hard)


def above(first, second):
    """True when limit ``first`` is above ``second`` (ints or ``unlimited``)."""
    if first == second:
        return False
    if first == UNLIMITED:
        return True
    if second == UNLIMITED:
        return False
    return first > second


def _strtoull(text):
    """strtoull(text, base 10) as C reads it: (value, whether any digit was read)."""
    match = re.match(r'^\s*([+-]?)([0-9]*)', text)
    digits = match.group(2)
    if not digits:
        return 0, False
    value = int(digits)
    if value > RLIM_INFINITY:
        return RLIM_INFINITY, True   # ERANGE, not checked by pam_limits
    if match.group(1) == '-' and value:
        value = RLIM_INFINITY + 1 - value   # negation in unsigned arithmetic
    return value, True


def read_value(item, text, nr_open=None):
    """The value a line gives ``item`` (int in limits.conf units or ``unlimited``), or None
    when pam_limits skips the line ("wrong limit value")."""
    text = text.lower()
    if item in ('nice', 'priority'):
        match = re.match(r'^\s*[+-]?[0-9]+', text)
        return int(match.group(0)) if match else None
    if text in _UNLIMITED_WORDS:
        value = RLIM_INFINITY
    else:
        value, digits = _strtoull(text)
        if not digits:
            return None
    if item in KB_ITEMS and value != RLIM_INFINITY and value >= RLIM_INFINITY // 1024:
        value = RLIM_INFINITY
    if item == 'cpu' and value != RLIM_INFINITY and value >= RLIM_INFINITY // 60:
        value = RLIM_INFINITY
    if item == 'nofile' and value == RLIM_INFINITY and nr_open is not None:
        return nr_open
    return UNLIMITED if value == RLIM_INFINITY else value


def _range(domain):
    """pam_limits' parse_uid_range: ('none',), ('one', id), ('mm', min, max), ('min', min) or ('error',)."""
    if ':' not in domain:
        return ('none',)
    body = domain[1:] if domain[:1] in '@%' else domain
    low, dummy, high = body.partition(':')
    if low == '':
        return ('one', int(high)) if high.isdigit() else ('error',)
    if not low.isdigit():
        return ('error',)
    if high == '':
        return ('min', int(low))
    return ('mm', int(low), int(high)) if high.isdigit() else ('error',)


def _in_range(found, number, exact_match):
    kind = found[0]
    if kind == 'one':
        return exact_match(found[1])
    if kind == 'mm':
        return number is not None and found[1] <= number <= found[2]
    if kind == 'min':
        return number is not None and number >= found[1]
    return False


def weight(domain, account, name):
    """The weight with which a line of ``domain`` applies to ``account`` (or to the user
    ``name`` when the account is unknown), or None when it does not apply."""
    if domain == name:
        return USER
    found = _range(domain)
    if found[0] == 'error':
        return None
    if domain.startswith('@'):
        if found[0] == 'none':
            return GROUP if account is not None and account.in_group(domain[1:]) else None
        gid = account.gid if account is not None else None
        if _in_range(found, gid, lambda wanted: account is not None and account.in_gid(wanted)):
            return GROUP
        return None
    if domain.startswith('%'):
        return ALL if domain == '%' else ALL_GROUP   # maxlogins only: a limit item ignores them
    if found[0] == 'none':
        return DEFAULT if domain == '*' else None
    uid = account.uid if account is not None else None
    return USER if _in_range(found, uid, lambda wanted: uid == wanted) else None


def _stops(domain, account, name):
    """Whether a ``<domain> -`` line ends the reading for this user: the user's name, a
    group or gid range that applies, or a uid range that holds the uid (``*`` and a ``%``
    without a range never do)."""
    if domain == name:
        return True
    if domain.startswith('@'):
        return weight(domain, account, name) is not None
    found = _range(domain)
    uid = account.uid if account is not None else None
    return found[0] not in ('none', 'error') and _in_range(found, uid, lambda wanted: uid == wanted)


def _fields(line):
    """(domain, type, item, value) of a line with at least four fields, (domain, '-') of a
    two-field ``-`` line, or None."""
    body = line.lstrip().split('#', 1)[0]
    fields = body.split()
    if len(fields) >= 4:
        return fields[0], fields[1].lower(), fields[2].lower(), fields[3]
    if len(fields) == 2 and fields[1].lower().startswith('-'):
        return fields[0], '-'
    return None


def resolve(files, account, item, name=None, nr_open=None):
    """Resolved ``item`` for the user of ``account`` over ``files`` ([(path, text)] in the
    order pam_limits reads them).  ``name`` is the user's name when ``account`` is None
    (a user the tree does not know: only that name's lines and ``*`` apply)."""
    name = account.name if account is not None else name
    result = Resolved()
    for path, text in files:
        for lineno, line in enumerate((text or '').splitlines(), 1):
            fields = _fields(line)
            if fields is None:
                continue
            if len(fields) == 2:
                if _stops(fields[0], account, name):
                    result.stopped = (path, lineno)
                    return result
                continue
            applies = weight(fields[0], account, name)
            if applies is None:
                continue
            domain, kind, line_item, text_value = fields
            if line_item != item or kind not in ('soft', 'hard', '-') or applies in (ALL, ALL_GROUP):
                continue
            value = read_value(item, text_value, nr_open)
            if value is None:
                continue
            for side in (('soft', 'hard') if kind == '-' else (kind,)):
                current = result.side(side)
                if current is not None and current.weight < applies:
                    break   # pam_limits returns here: a '-' line stops at a weightier soft side
                setattr(result, side, Side(value, path, lineno, domain, applies))
    return result
