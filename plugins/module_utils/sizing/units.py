# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: sizes and shares, parsed and rendered (48G <-> bytes, 70% <-> 7/10, pages).

Units: sizes are binary, as the vendors and the kernel use them: K, KB, KiB and kB
(the /proc/meminfo spelling) all mean 1024 bytes; M = 1024 K and so on.

Pure Python, no Ansible import: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from fractions import Fraction

UNITS = {'': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4, 'P': 1024 ** 5, 'E': 1024 ** 6}
_UNIT_ORDER = ('E', 'P', 'T', 'G', 'M', 'K')
_SIZE = re.compile(r'^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KMGTPE]?)(?:I?B)?\Z', re.IGNORECASE)
_PERCENT = re.compile(r'^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*%\Z')


class SizingError(ValueError):
    """Bad sizing input, or a size the host cannot hold; the message names the input."""


# ------------------------------------------------------------------ parsing and rendering
def _exact_number(text):
    return Fraction(text)


def parse_size(value, ram_bytes=None, name='size'):
    """Return ``value`` in bytes (int).

    Accepts an int (bytes), a digit string, ``48G``, ``512M``, ``1.5T``, ``2048kB``,
    ``64KiB``, ``100B``, or a percentage of RAM (``40%``, needs ``ram_bytes``; the
    result is rounded down to a whole byte).  A fractional size must come to a whole
    number of bytes (``1.5K`` is 1536; ``1.3K`` is refused).
    """
    if isinstance(value, bool) or value is None:
        raise SizingError('%s: %r is not a size (use bytes, or a number with K, M, G, T, or a percentage of RAM)'
                          % (name, value))
    if isinstance(value, int):
        if value < 0:
            raise SizingError('%s: %d is negative' % (name, value))
        return value
    if isinstance(value, float):
        if value < 0 or value != int(value):
            raise SizingError('%s: %r is not a whole, non-negative number of bytes' % (name, value))
        return int(value)
    if not isinstance(value, str):
        raise SizingError('%s: %r is not a size' % (name, value))
    text = value.strip()
    percent = _PERCENT.match(text)
    if percent:
        if ram_bytes is None:
            raise SizingError('%s: %r is a percentage of RAM, but the RAM size is not known' % (name, value))
        share = _exact_number(percent.group('number'))
        if share <= 0 or share > 100:
            raise SizingError('%s: %r must be a percentage above 0 and at most 100' % (name, value))
        return int(share * int(ram_bytes) / 100)
    match = _SIZE.match(text)
    if not match:
        raise SizingError('%s: %r is not a size (examples: 48G, 512M, 1.5T, 2048kB, 17179869184, 40%%)'
                          % (name, value))
    number = _exact_number(match.group('number')) * UNITS[match.group('unit').upper()]
    if number.denominator != 1:
        raise SizingError('%s: %r is not a whole number of bytes' % (name, value))
    return int(number)


def parse_share(value, name='share'):
    """A share of a whole as a Fraction in (0, 1]: ``70%``, ``0.7``, or 70 (taken as percent)."""
    if isinstance(value, bool) or value is None:
        raise SizingError('%s: %r is not a share (use a percentage such as 70%% or a fraction such as 0.7)'
                          % (name, value))
    if isinstance(value, str):
        text = value.strip()
        percent = _PERCENT.match(text)
        try:
            share = _exact_number(percent.group('number')) / 100 if percent else _exact_number(text)
        except (ValueError, ZeroDivisionError):
            raise SizingError('%s: %r is not a share (use a percentage such as 70%% or a fraction such as 0.7)'
                              % (name, value))
    elif isinstance(value, (int, float)):
        share = Fraction(value).limit_denominator(10 ** 6)
    else:
        raise SizingError('%s: %r is not a share' % (name, value))
    if share > 1 and not (isinstance(value, str) and _PERCENT.match(value.strip())):
        share = share / 100  # a bare 70 means 70 %
    if share <= 0 or share > 1:
        raise SizingError('%s: %r must be above 0 and at most 100%%' % (name, value))
    return share


def human_size(value, precision=2):
    """Render bytes with the largest binary unit: 51539607552 -> ``48G``, 1610612736 -> ``1.5G``.

    Exact values render exactly (and parse back to the same bytes); others are
    rounded to ``precision`` decimals.
    """
    size = parse_size(value, name='human_size')
    for unit in _UNIT_ORDER:
        factor = UNITS[unit]
        if size >= factor:
            quotient = Fraction(size, factor)
            if quotient.denominator == 1:
                return '%d%s' % (quotient.numerator, unit)
            text = ('%.*f' % (int(precision), float(quotient))).rstrip('0').rstrip('.')
            return '%s%s' % (text, unit)
    return '%dB' % size


def to_pages(value, page_size, rounding='up', ram_bytes=None, name='size'):
    """How many pages of ``page_size`` hold ``value``; rounding is up, down or exact."""
    size = parse_size(value, ram_bytes=ram_bytes, name=name)
    page = parse_size(page_size, name='page_size')
    if page <= 0:
        raise SizingError('page_size: %r must be above 0' % (page_size,))
    if rounding == 'up':
        return -(-size // page)
    if rounding == 'down':
        return size // page
    if rounding == 'exact':
        if size % page:
            raise SizingError('%s: %r is not a whole number of %s pages' % (name, value, human_size(page)))
        return size // page
    raise SizingError('rounding: %r must be up, down or exact' % (rounding,))


def round_up(size, unit):
    """``size`` rounded up to a whole number of ``unit``."""
    return -(-size // unit) * unit


def power_of_two(number):
    return number > 0 and number & (number - 1) == 0


def percent_number(text):
    """The N of a text ``N%`` as an exact Fraction (``'1.5%'`` -> 3/2), or None when it is no percentage."""
    match = _PERCENT.match(str(text).strip())
    return _exact_number(match.group('number')) if match else None


def percent_text(share):
    """A share rendered as a percentage without trailing zeros: 7/10 -> ``70``, 0.125 -> ``12.5``."""
    return ('%.2f' % float(share * 100)).rstrip('0').rstrip('.')
