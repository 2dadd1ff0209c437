# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: how a desired value is compared with a live or boot value.

Every record says how its ``desired`` is meant (``comparison``):

- ``exact``: the value must be exactly this;
- ``minimum``: at least this (a vendor's "at least", such as Oracle's kernel.shmmax or
  memlock): a larger value is fine and is never lowered;
- ``maximum``: at most this; a smaller value is fine and is never raised.

A vector value (kernel.sem's four fields) takes either one comparison for every field
or a list with one comparison per field.  ``unlimited`` / ``infinity`` is larger than
any number.  Values that are not numbers compare exactly, whatever was asked.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

EXACT = 'exact'
MINIMUM = 'minimum'
MAXIMUM = 'maximum'
COMPARISONS = (EXACT, MINIMUM, MAXIMUM)

# Spellings of "no limit": limits.conf and ulimit say unlimited, systemd says infinity.
UNLIMITED_WORDS = frozenset(['unlimited', 'infinity'])
_INTEGER = re.compile(r'^-?[0-9]+\Z')
_SYMBOLS = {EXACT: '', MINIMUM: '>= ', MAXIMUM: '<= '}


class ComparisonError(ValueError):
    """A comparison that is not one of COMPARISONS, or does not fit the value."""


def _fields(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return str(value).split()


def _number(text):
    """int for digits (a leading minus allowed), float('inf') for unlimited, else None."""
    if text.lower() in UNLIMITED_WORDS:
        return float('inf')
    body = text[1:] if text[:1] == '-' else text
    if body.isdigit():
        return int(text)
    return None


def per_field(comparison, count):
    """The comparison of each of ``count`` fields; raises ComparisonError when it does not fit."""
    if isinstance(comparison, (list, tuple)):
        if len(comparison) != count:
            raise ComparisonError('%d comparisons for %d fields' % (len(comparison), count))
        fields = list(comparison)
    else:
        fields = [comparison or EXACT] * count
    for item in fields:
        if item not in COMPARISONS:
            raise ComparisonError('%r is not one of %s' % (item, ', '.join(COMPARISONS)))
    return fields


def validate(comparison, name='comparison'):
    """Return ``comparison`` (a string or a list of strings) or raise ComparisonError naming ``name``."""
    items = comparison if isinstance(comparison, (list, tuple)) else [comparison]
    if not items:
        raise ComparisonError('%s: an empty list' % name)
    for item in items:
        if item not in COMPARISONS:
            raise ComparisonError('%s: %r is not one of %s' % (name, item, ', '.join(COMPARISONS)))
    return list(comparison) if isinstance(comparison, (list, tuple)) else comparison


def same_value(actual, desired):
    """Compare like the kernel prints a pseudo-file: whole numbers as numbers ('01' is '1'),
    anything else as its words with single spaces; None never matches."""
    if actual is None or desired is None:
        return False
    have, want = ' '.join(str(actual).split()), ' '.join(str(desired).split())
    if _INTEGER.match(have) and _INTEGER.match(want):
        return int(have) == int(want)
    return have == want


def _field_ok(have, want, how):
    if have == want:
        return True
    have_n, want_n = _number(have), _number(want)
    if have_n is None or want_n is None:
        return False
    if how == MINIMUM:
        return have_n >= want_n
    if how == MAXIMUM:
        return have_n <= want_n
    return have_n == want_n


def satisfies(actual, desired, comparison=EXACT):
    """True when ``actual`` meets ``desired`` under ``comparison``; None ``actual`` never does."""
    have, want = _fields(actual), _fields(desired)
    if have is None or want is None:
        return False
    if len(have) != len(want):
        return False
    rules = per_field(comparison, len(want)) if isinstance(comparison, (list, tuple)) else [comparison] * len(want)
    return all(_field_ok(h, w, how) for h, w, how in zip(have, want, rules))


def value_to_write(current, desired, comparison=EXACT):
    """The value to set so that ``desired`` is met without undoing what already meets it.

    A minimum never lowers a field that is already higher; a maximum never raises one that
    is already lower; an exact field takes the desired value.  With no (or an unusable)
    current value the desired value is written as it is.
    """
    return combine(desired, [current], comparison)


def combine(desired, grants, comparison=EXACT):
    """``desired`` with each bound field widened to what any of ``grants`` already gives.

    ``grants`` are the values the host already has from its consumers (the live kernel,
    the value the next boot loads, ...); a minimum field takes the highest of the desired
    and every grant, a maximum field the lowest, an exact field the desired value; a grant
    equal to the desired value in another spelling (``unlimited`` for ``infinity``) gives
    its spelling, so the host's text is kept.  A grant that is None, has another number of
    fields or a non-numeric field is ignored for that field.  So a value written this way
    never lowers (raises) what a consumer would have had.
    """
    want = _fields(desired)
    rules = per_field(comparison, len(want)) if isinstance(comparison, (list, tuple)) else [comparison] * len(want)
    usable = [g for g in (_fields(grant) for grant in grants) if g is not None and len(g) == len(want)]
    out = []
    for index, (field, how) in enumerate(zip(want, rules)):
        best, granted = field, False
        if how != EXACT and _number(field) is not None:
            for grant in usable:
                value = grant[index]
                if _number(value) is None:
                    continue
                # beyond the best so far wins; equal to the desired value keeps the host's spelling
                if not _field_ok(best, value, how) or (not granted and _field_ok(value, best, how)):
                    best, granted = value, True
        out.append(best)
    return ' '.join(out)


def short_fields(actual, desired, comparison=EXACT, names=None):
    """['semmni 128 < 4096', ...]: the fields of ``actual`` that do not meet ``desired``.

    ``names`` names the fields (kernel.sem: semmsl semmns semopm semmni); without them a
    field is ``field N``.  [] when ``actual`` is None or has another number of fields.
    """
    have, want = _fields(actual), _fields(desired)
    if have is None or want is None or len(have) != len(want):
        return []
    rules = per_field(comparison, len(want)) if isinstance(comparison, (list, tuple)) else [comparison] * len(want)
    marks = {EXACT: '!=', MINIMUM: '<', MAXIMUM: '>'}
    out = []
    for index, (h, w, how) in enumerate(zip(have, want, rules)):
        if not _field_ok(h, w, how):
            name = names[index] if names and index < len(names) else 'field %d' % (index + 1)
            out.append('%s %s %s %s' % (name, h, marks[how], w))
    return out


_MARKS = (('>=', MINIMUM), ('<=', MAXIMUM), ('=', EXACT))


def split_marks(value):
    """``(value, comparison)`` of a value a user wrote with TuneD's marks, or ``(value, None)``.

    ``>=N`` means at least N (minimum), ``<=N`` at most N (maximum), ``=N`` exactly N.  In a
    vector each field may carry its own mark; a field without one takes the mark before it
    (``>=250 32000 =100 128``: two minimums, two exact fields), and fields before the first
    mark are exact.  The comparison is one word when every field has the same, else a list.
    A field starting with ``>`` or ``<`` without ``=`` raises ComparisonError.
    """
    tokens = _fields(value)
    if not tokens or not any(t[:1] in ('>', '<', '=') for t in tokens):
        return value, None
    values, rules, current = [], [], EXACT
    for token in tokens:
        for mark, how in _MARKS:
            if token.startswith(mark):
                current, token = how, token[len(mark):].strip()
                break
        else:
            if token[:1] in ('>', '<'):
                raise ComparisonError('%r: write >=N (at least), <=N (at most) or =N (exactly)' % (value,))
        if not token:
            continue   # a mark written apart from its number: ">= 250"
        values.append(token)
        rules.append(current)
    if not values:
        raise ComparisonError('%r: a mark without a value' % (value,))
    return ' '.join(values), rules[0] if len(set(rules)) == 1 else rules


def describe(desired, comparison=EXACT):
    """How a person reads the desired value: ``>= 250 32000 100 128``, ``<= 10``, ``4096``.

    A vector with mixed comparisons shows each field: ``>=250 32000 =100``.
    """
    if desired is None:
        return None
    fields = _fields(desired)
    if isinstance(comparison, (list, tuple)) and len(set(comparison)) > 1 and len(comparison) == len(fields):
        marks = {EXACT: '=', MINIMUM: '>=', MAXIMUM: '<='}
        return ' '.join('%s%s' % (marks[how], field) for field, how in zip(fields, comparison))
    how = comparison[0] if isinstance(comparison, (list, tuple)) and comparison else comparison
    return '%s%s' % (_SYMBOLS.get(how or EXACT, ''), ' '.join(fields) if not isinstance(desired, str) else desired)


def stricter(first, second, comparison):
    """Of two desired values under the same comparison, the one that demands more.

    Two minimums: the higher (field by field for vectors); two maximums: the lower.
    Exact values have no stricter one: raises ComparisonError unless they are equal.
    """
    a, b = _fields(first), _fields(second)
    if a == b:
        return first
    if len(a) != len(b):
        raise ComparisonError('%r and %r do not have the same number of fields' % (first, second))
    rules = per_field(comparison, len(a))
    out = []
    for x, y, how in zip(a, b, rules):
        if x == y:
            out.append(x)
            continue
        xn, yn = _number(x), _number(y)
        if how == EXACT or xn is None or yn is None:
            raise ComparisonError('%r and %r differ and neither is a bound' % (first, second))
        if how == MINIMUM:
            out.append(x if xn >= yn else y)
        else:
            out.append(x if xn <= yn else y)
    return ' '.join(out)
