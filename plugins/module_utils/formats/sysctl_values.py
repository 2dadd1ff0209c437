# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what the kernel makes of the text written to a /proc/sys entry.

systemd-sysctl (src/sysctl/sysctl.c), procps ``sysctl -w`` and TuneD write a file's value
as text; the kernel's handler parses it.  So a line's value is what the handler stores,
not its text.  The rules, from Linux kernel/sysctl.c (proc_get_long, __do_proc_dointvec,
do_proc_dointvec_minmax_conv, __do_proc_doulongvec_minmax), lib/kstrtox.c
(_parse_integer_fixup_radix), ipc/ipc_sysctl.c (proc_ipc_sem_dointvec,
proc_ipc_doulongvec_minmax) and net/ipv4/sysctl_net_ipv4.c (ipv4_local_port_range), each
checked by writing the text with systemd-sysctl and ``sysctl -w`` in a container and
reading the entry back (tests/unit/.../formats/sysctl_values_cases.yml holds what the
kernel answered; molecule/consumers asks it again):

- a field is read with base 0: ``0x``/``0X`` and a hex digit start hex, a leading ``0``
  octal (``0300`` is 192, ``099`` is refused), anything else decimal; a ``+`` is refused,
  a ``-`` is taken by int handlers without a floor (kernel.sem) and refused by the others;
- the character right after a number must be a blank (or the end): ``4096abc`` and ``1G``
  are refused, ``4096 # note`` is 4096 (what follows a blank is never read);
- a vector is read field by field into the entry itself: fewer fields leave the rest as
  they were (at boot: the kernel's built-in value), fields beyond its length are dropped,
  and a refused field keeps the fields before it (``250 abc`` sets semmsl alone) and
  refuses the write; ``net.ipv4.ip_local_port_range`` is checked whole (all or nothing);
- kernel.sem: a semmni above IPCMNI (32768) is refused with ERANGE, and the handler puts
  semmni back while the three fields before it stay;
- an int takes -2^31..2^31-1, an unsigned long 0..2^64-1; a key with a range
  (sysctl_keys.KNOWN_KEYS) refuses a field outside it.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_keys

EINVAL = 'Invalid argument'
ERANGE = 'Numerical result out of range'
_BLANKS = ' \t\n'
_HEX = re.compile(r'0[xX][0-9a-fA-F]')
_DIGITS = {8: '01234567', 10: '0123456789', 16: '0123456789abcdefABCDEF'}
_SEM = 'kernel.sem'
# The entries whose handler checks the value whole before it stores any field.
_WHOLE = frozenset(['net.ipv4.ip_local_port_range'])
# Int handlers without a floor: a negative field is stored (proc_dointvec).
_SIGNED = frozenset([_SEM])


class Stored(object):
    """What a write leaves: ``value`` (the entry's text, decimal fields, or None when it is
    not known), ``error`` (the kernel's refusal, or None), ``fields_given`` (how many fields
    the text had)."""

    __slots__ = ('value', 'error', 'fields_given')

    def __init__(self, value, error=None, fields_given=0):
        self.value = value
        self.error = error
        self.fields_given = fields_given


def read_number(text, pos):
    """(int or None, position after it) of one field at ``pos`` as proc_get_long reads it:
    blanks skipped, an optional ``-``, base 0 digits; None when no number is there or the
    next character is not a blank.  The sign is returned with the value."""
    while pos < len(text) and text[pos] in _BLANKS:
        pos += 1
    negative = text[pos:pos + 1] == '-'
    if negative:
        pos += 1
    if _HEX.match(text, pos):
        base, pos = 16, pos + 2
    elif text[pos:pos + 1] == '0':
        base = 8
    else:
        base = 10
    start = pos
    while pos < len(text) and text[pos] in _DIGITS[base]:
        pos += 1
    if pos == start or (pos < len(text) and text[pos] not in _BLANKS):
        return None, pos
    number = int(text[start:pos], base)
    return (-number if negative else number), pos


# ipc/util.h IPCMNI: the most kernel.shmmni, kernel.msgmni and semmni take (ipc_mni), unless
# the kernel was booted with ipcmni_extend.
IPCMNI = 32768
_IPCMNI_KEYS = frozenset(['kernel.shmmni', 'kernel.msgmni'])
_ANY = (-2 ** 63, sysctl_keys.ULONG_MAX)


def _limits(key, index):
    """(low, high) the handler of ``key`` stores for field ``index``; a key the table does not
    know takes any whole number (its handler is not known: the kernel itself has the last word)."""
    spec = sysctl_keys.known(key)
    if key in _IPCMNI_KEYS:
        return 0, IPCMNI
    if key in _SIGNED:
        return sysctl_keys.INT_MIN, sysctl_keys.INT_MAX
    if spec is None or not spec.ranges:
        return _ANY
    low, high = spec.ranges[min(index, len(spec.ranges) - 1)]
    if spec.kind == 'unsigned long':
        return max(low, 0), high
    return max(low, sysctl_keys.INT_MIN), min(high, sysctl_keys.INT_MAX)


def _width(key, before):
    """How many fields the entry has: the table's, else the previous (or live) value's, which a
    numeric entry the table does not know always has (numeric_entry)."""
    spec = sysctl_keys.known(key)
    if spec is not None and spec.kind != 'string' and spec.ranges:
        return len(spec.ranges)
    return len(before)


def _given(text):
    return len(text.split())


def numeric_entry(key, before=None):
    """Whether the kernel reads ``key`` as numbers: a known numeric key, or one whose value is numbers."""
    spec = sysctl_keys.known(key)
    if spec is not None:
        return spec.kind != 'string'
    fields = (before or '').split()
    return bool(fields) and all(re.match(r'^-?[0-9]+\Z', field) for field in fields)


def write(key, text, before=None, shape=None):
    """Stored: what entry ``key`` (dotted) holds after ``text`` is written to it, when it held
    ``before`` (its text, or None when not known: then fields the text leaves out are unknown).
    ``shape``: a value the entry has had (the running kernel's), for a key the table does not
    know: whether it is numbers, and how many."""
    text = '' if text is None else str(text)
    if not numeric_entry(key, before or shape):
        return Stored(' '.join(text.split()), None, _given(text))
    old = (before or '').split()
    width = _width(key, old or (shape or '').split())
    fields = list(old) + [None] * (width - len(old)) if len(old) < width else old[:width]
    stored, error, pos = list(fields), None, 0
    for index in range(width):
        rest = text[pos:]
        if index > 0 and not rest.strip():
            break
        number, pos = read_number(text, pos)
        if number is None:
            error = EINVAL
            break
        low, high = _limits(key, index)
        if not low <= number <= high:
            error = EINVAL
            break
        stored[index] = str(number)
    if key == _SEM and error is None and stored[3] is not None and not 0 <= int(stored[3]) <= IPCMNI:
        # sem_check_semmni: ERANGE, and proc_ipc_sem_dointvec puts semmni back
        stored[3], error = fields[3], ERANGE
    if key in _WHOLE and error is None and None not in stored and stored != sorted(stored, key=int):
        error = EINVAL
    if error is not None and key in _WHOLE:
        stored = fields
    value = None if any(field is None for field in stored) else ' '.join(stored)
    return Stored(value, error, _given(text))


def canonical(key, text):
    """The decimal text the kernel would store for ``text`` written whole (every field given),
    or None when it would refuse it or leave a field unknown."""
    stored = write(key, text)
    return None if stored.error is not None else stored.value
