# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the parameters a PostgreSQL server takes, and their values.

A Catalog is one server's list of parameters (a Setting each: context, type, unit, range,
enum values); ``catalog_for(major, described, binary)`` picks it, best source first:

1. the server's own binary, when the engine could run it (``described``: the output of
   ``postgres --describe-config``): every parameter postgresql.conf.sample lists, with its
   context, type and range in this very build.  It leaves out the units, the enum values
   and the parameters the sample does not list (developer options, application_name):
   those come from the shipped table of the same or the nearest major;
2. the shipped table of that major (pg_settings.TABLES, written by
   scripts/pg-settings-table.py from a real server of each version);
3. a major between two tables (14, 16): both merged, a name either of them knows is
   accepted and the looser range kept, so that nothing that server takes is refused;
4. a major outside the tables: the nearest table's types, and names are not refused (a
   newer server has parameters no table knows); no major at all: every table merged, and
   a name none of them knows is refused.

Values are checked the way the server parses them (guc.c parse_bool, parse_int,
parse_real, the enum lookup): a boolean word or an unambiguous prefix of one; a number
(decimal, 0x hex or 0 octal for integers; a fraction is rounded) with a unit of the
parameter's kind (memory B kB MB GB TB, time us ms s min h d, case-sensitive), converted
to the parameter's base unit and rounded before the range is checked; an enum word whole,
case-insensitive (enums that take on and off take every boolean spelling).  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_settings

TABLES = pg_settings.TABLES
# The words an enum that takes on and off also takes (guc_tables.c lists them hidden).
_HIDDEN_BOOLEANS = ('true', 'false', 'yes', 'no', '1', '0')
_NUMBER = re.compile(r'^\s*(?P<number>[-+]?(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?))'
                     r'\s*(?P<unit>[A-Za-z]*)\s*\Z')
# --describe-config's type names -> pg_settings.vartype
_DESCRIBED_TYPES = {'BOOLEAN': 'bool', 'INTEGER': 'integer', 'REAL': 'real', 'STRING': 'string', 'ENUM': 'enum'}
_KIND_WORDS = {'bool': 'a boolean', 'integer': 'an integer', 'real': 'a number', 'enum': 'one of its words',
               'string': 'a string'}


class Setting(object):
    """One parameter: context, vartype (bool, integer, real, enum, string), unit, range, words."""

    __slots__ = ('name', 'context', 'vartype', 'unit', 'low', 'high', 'enumvals', 'sample')

    def __init__(self, name, context, vartype, unit=None, low=None, high=None, enumvals=None, sample=True):
        self.name = name
        self.context = context
        self.vartype = vartype
        self.unit = unit
        self.low = low
        self.high = high
        self.enumvals = enumvals
        self.sample = sample


def _field(text):
    return None if text in ('-', '') else text


def _number(text):
    return None if text is None else float(text)


def parse_table(text):
    """{lower-case name: Setting} of a shipped table (pg_settings.TABLES[major].TABLE)."""
    found = {}
    for line in text.splitlines():
        fields = line.split(' ')
        if len(fields) != 8:
            continue
        name, context, vartype, unit, low, high, enumvals, sample = [_field(field) for field in fields]
        found[name.lower()] = Setting(name, context, vartype, unit, _number(low), _number(high),
                                      tuple(enumvals.split(',')) if enumvals else None, sample == '1')
    return found


def parse_describe(text):
    """{lower-case name: Setting} of ``postgres --describe-config`` (no units, no enum words)."""
    found = {}
    for line in (text or '').splitlines():
        fields = line.split('\t')
        if len(fields) < 7 or not fields[0]:
            continue
        vartype = _DESCRIBED_TYPES.get(fields[3], fields[3].lower())
        numeric = vartype in ('integer', 'real')
        found[fields[0].lower()] = Setting(fields[0], fields[1], vartype, None,
                                           _number(_field(fields[5])) if numeric else None,
                                           _number(_field(fields[6])) if numeric else None)
    return found


def _merge_two(one, other):
    """One Setting that takes what either takes (types that differ: no value check)."""
    if one.vartype != other.vartype:
        return Setting(other.name, other.context, None)
    words = None
    if one.enumvals is not None and other.enumvals is not None:
        words = one.enumvals + tuple(word for word in other.enumvals if word not in one.enumvals)
    lows = [value for value in (one.low, other.low) if value is not None]
    highs = [value for value in (one.high, other.high) if value is not None]
    return Setting(other.name, other.context, other.vartype, other.unit if one.unit == other.unit else '?',
                   min(lows) if len(lows) == 2 else None, max(highs) if len(highs) == 2 else None,
                   words, one.sample or other.sample)


def merge(tables):
    """The settings of several tables together (in major order: the later context wins)."""
    merged = {}
    for table in tables:
        for key, setting in table.items():
            merged[key] = _merge_two(merged[key], setting) if key in merged else setting
    return merged


def _with_binary(described, table):
    """--describe-config's settings, completed with the table's units, words and unlisted names."""
    settings = {}
    for key, setting in described.items():
        known = table.get(key)
        if known is not None and known.vartype == setting.vartype:
            setting.unit, setting.enumvals = known.unit, known.enumvals
        else:
            setting.unit = '?'  # unknown: no unit or range check
        settings[key] = setting
    for key, known in table.items():
        if key not in settings and not known.sample:
            settings[key] = known
    return settings


class Catalog(object):
    """The parameters of one server (``settings``), where they come from, and whether
    a name they do not hold is refused (``names_checked``)."""

    def __init__(self, settings, source, names_checked=True, major=None):
        self.settings = settings
        self.source = source
        self.names_checked = names_checked
        self.major = major

    def get(self, name):
        return self.settings.get(name.lower())

    def closest(self, name):
        found = difflib.get_close_matches(name.lower(), list(self.settings), n=1, cutoff=0.6)
        return self.settings[found[0]].name if found else None

    def name_problem(self, name):
        """Why ``name`` is not a parameter of this server, or None ('a.b' custom names pass)."""
        if '.' in name or not self.names_checked or self.get(name) is not None:
            return None
        closest = self.closest(name)
        return '%s has no parameter %r%s (names checked against %s)' % (
            'PostgreSQL %d' % self.major if self.major else 'PostgreSQL', name,
            '; did you mean %r?' % closest if closest else '', self.source)

    def problem(self, name, raw, text):
        """Why the server would refuse ``name`` = ``text`` (``raw`` as the user gave it), or None."""
        problem = self.name_problem(name)
        if problem or '.' in name:
            return problem
        setting = self.get(name)
        if setting is None or setting.vartype is None:
            return None
        if setting.context == 'internal':
            return '%s is fixed when PostgreSQL is built or the cluster is made; the server refuses it in a ' \
                   'configuration file' % name
        return value_problem(setting, raw, text)


def catalog_for(major, described=None, binary=None):
    """The Catalog of PostgreSQL ``major`` (None: unknown); ``described`` the output of
    ``binary --describe-config`` when it could be run."""
    known = sorted(TABLES)
    if major in TABLES:
        table = parse_table(TABLES[major].TABLE)
        where = 'the shipped table of PostgreSQL %d, made from %s' % (major, TABLES[major].SOURCE)
    elif major is not None and known[0] < major < known[-1]:
        lower = max(m for m in known if m < major)
        upper = min(m for m in known if m > major)
        table = merge([parse_table(TABLES[lower].TABLE), parse_table(TABLES[upper].TABLE)])
        where = 'the shipped tables of PostgreSQL %d and %d (none of %d)' % (lower, upper, major)
    elif major is not None:
        nearest = min(known, key=lambda m: abs(m - major))
        table, where = parse_table(TABLES[nearest].TABLE), 'the shipped table of PostgreSQL %d' % nearest
        if not described:
            return Catalog(table, where + ' (types only: none of %d)' % major, names_checked=False, major=major)
    else:
        table = merge([parse_table(TABLES[m].TABLE) for m in known])
        where = 'the shipped tables of PostgreSQL %s (the version of this configuration is unknown)' % ', '.join(
            str(m) for m in known)
    if described:
        return Catalog(_with_binary(parse_describe(described), table),
                       '%s --describe-config, with %s' % (binary, where), major=major)
    return Catalog(table, where, major=major)


def _base_unit(unit):
    """('memory', bytes) or ('time', ms) of a base unit such as 8kB, 16MB, ms, s, min."""
    match = re.match(r'^([0-9]*)([A-Za-z]+)\Z', unit or '')
    if not match:
        return None
    factor = int(match.group(1) or 1)
    if match.group(2) in pgconf.MEMORY_UNITS:
        return 'memory', factor * pgconf.MEMORY_UNITS[match.group(2)]
    if match.group(2) in pgconf.TIME_UNITS:
        return 'time', factor * pgconf.TIME_UNITS[match.group(2)]
    return None


def _parse_number(text):
    if re.match(r'^[-+]?0[xX]', text):
        return float(int(text.replace('0x', '').replace('0X', ''), 16)) * (-1 if text.startswith('-') else 1)
    if re.match(r'^[-+]?0[0-7]+\Z', text):
        return float(int(text, 8))
    return float(text)


def _shown_range(setting):
    def show(value):
        return '%d' % value if value == int(value) else '%g' % value
    unit = '' if setting.unit in (None, '?') else ' (in %s)' % setting.unit
    return '%s to %s%s' % (show(setting.low), show(setting.high), unit)


def _unit_fits(setting, unit):
    """Does a value's ``unit`` suit the parameter (none, or one of its kind)?"""
    if not unit or setting.unit == '?':
        return True
    base, given = _base_unit(setting.unit), _base_unit(unit)
    return bool(base and given and given[0] == base[0] and not unit[:1].isdigit())


def _numeric_problem(setting, text):
    match = _NUMBER.match(text)
    if not match or not _unit_fits(setting, match.group('unit')):
        base = _base_unit(setting.unit)
        if base:
            units = pgconf.MEMORY_UNITS if base[0] == 'memory' else pgconf.TIME_UNITS
            return '%r is not a %s value: a number with one of the units %s (case-sensitive), or a number of %s' % (
                text, base[0], ', '.join(sorted(units, key=units.get)), setting.unit)
        return '%r is not %s%s' % (text, _KIND_WORDS[setting.vartype],
                                   ' (%s takes no unit)' % setting.name if match else '')
    number = _parse_number(match.group('number'))
    if (setting.unit == '?' and match.group('unit')) or setting.low is None or setting.high is None:
        return None  # a unit, but the parameter's base unit is not known: not converted
    if match.group('unit'):
        number = number * _base_unit(match.group('unit'))[1] / _base_unit(setting.unit)[1]
    if setting.vartype == 'integer':
        number = round(number)  # the server rounds half to even, as round() does
    if number < setting.low or number > setting.high:
        return '%r is out of range for %s: %s' % (text, setting.name, _shown_range(setting))
    return None


def value_problem(setting, raw, text):
    """Why the server would refuse ``text`` for ``setting`` (``raw``: the user's value), or None."""
    if isinstance(raw, bool) and not (setting.vartype == 'bool' or (
            setting.vartype == 'enum' and setting.enumvals and 'on' in setting.enumvals)):
        return '%r is a boolean (YAML reads true, yes and on as one), but %s takes %s' % (
            raw, setting.name, _takes(setting))
    if setting.vartype == 'bool':
        if pgconf.as_bool_word(text) is None:
            return '%r is not a boolean (on, off, true, false, yes, no, 1 or 0)' % (text,)
        return None
    if setting.vartype == 'enum':
        if not setting.enumvals:
            return None
        word = text.strip().lower()
        words = setting.enumvals + (_HIDDEN_BOOLEANS if 'on' in setting.enumvals else ())
        if word in words:
            return None
        spelling = ' (or another boolean spelling)' if 'on' in setting.enumvals else ''
        return '%r is not one of %s%s' % (text, ', '.join(setting.enumvals), spelling)
    if setting.vartype in ('integer', 'real'):
        return _numeric_problem(setting, text)
    return None


def _takes(setting):
    if setting.vartype == 'integer' and _base_unit(setting.unit):
        return 'an amount of %s (a number in %s, or with a unit)' % (_base_unit(setting.unit)[0], setting.unit)
    if setting.vartype == 'enum' and setting.enumvals:
        return 'one of %s' % ', '.join(setting.enumvals)
    return _KIND_WORDS.get(setting.vartype, 'a value')
