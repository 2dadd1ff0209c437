# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: postgresql.conf and postgresql.auto.conf.

As the PostgreSQL documentation ("Setting Parameters via the Configuration File")
describes the format: one ``name = value`` per line (the ``=`` is optional), ``#``
starts a comment, names are case-insensitive, string values are in single quotes (a
quote inside is doubled or backslash-escaped), the last setting of a name wins, and
``include``, ``include_if_exists`` and ``include_dir`` read other files at that point
(relative paths are taken from the including file's folder; a folder's files ending in
``.conf`` and not starting with ``.`` are read in file-name order).
postgresql.auto.conf, which ALTER SYSTEM writes in the data directory, is read after
postgresql.conf and so wins over it.

Values compare with their units: ``128MB`` equals ``131072kB`` and, for
shared_buffers (counted in 8kB pages), ``16384``.  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed

INCLUDE_DIRECTIVES = ('include', 'include_if_exists', 'include_dir')
AUTO_CONF = 'postgresql.auto.conf'

_LINE_RE = re.compile(r'''^(?P<indent>[ \t]*)(?P<name>[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?)
                          (?P<sep>[ \t]*=[ \t]*|[ \t]+)''', re.X)
NAME_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?\Z')
# What PostgreSQL's lexer takes without quotes: numbers with a unit, and simple words.
UNQUOTED_RE = re.compile(r'^(?:-?[0-9]+(?:\.[0-9]+)?[A-Za-z]*|[A-Za-z_][A-Za-z0-9_.:/-]*)\Z')
_QUANTITY_RE = re.compile(r'^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*\Z')

MEMORY_UNITS = {'B': 1, 'kB': 1 << 10, 'MB': 1 << 20, 'GB': 1 << 30, 'TB': 1 << 40}
TIME_UNITS = {'us': 0.001, 'ms': 1, 's': 1000, 'min': 60000, 'h': 3600000, 'd': 86400000}

# Base units of common parameters, for comparing a bare number when no server can be
# asked (pg_settings.unit gives them for any parameter when one can).
BASE_UNITS = {
    'shared_buffers': '8kB', 'effective_cache_size': '8kB', 'wal_buffers': '8kB', 'temp_buffers': '8kB',
    'work_mem': 'kB', 'maintenance_work_mem': 'kB', 'autovacuum_work_mem': 'kB',
    'logical_decoding_work_mem': 'kB', 'huge_page_size': 'kB', 'max_stack_depth': 'kB',
    'max_wal_size': 'MB', 'min_wal_size': 'MB', 'wal_keep_size': 'MB',
    'checkpoint_timeout': 's', 'archive_timeout': 's', 'autovacuum_naptime': 's',
    'statement_timeout': 'ms', 'lock_timeout': 'ms', 'idle_in_transaction_session_timeout': 'ms',
    'log_min_duration_statement': 'ms', 'deadlock_timeout': 'ms', 'wal_writer_delay': 'ms',
    'bgwriter_delay': 'ms',
}

# Parameters of the "postmaster" context: read only at server start.
STATIC = frozenset([
    'shared_buffers', 'huge_pages', 'huge_page_size', 'max_connections', 'max_wal_senders',
    'max_worker_processes', 'max_prepared_transactions', 'max_locks_per_transaction',
    'max_pred_locks_per_transaction', 'wal_buffers', 'wal_level', 'shared_preload_libraries',
    'listen_addresses', 'port', 'unix_socket_directories', 'archive_mode', 'max_replication_slots',
    'shared_memory_type', 'dynamic_shared_memory_type', 'track_commit_timestamp', 'max_files_per_process',
    'data_directory', 'hba_file', 'ident_file', 'config_file', 'superuser_reserved_connections',
    'wal_log_hints', 'cluster_name', 'io_method', 'autovacuum_max_workers', 'wal_decode_buffer_size',
    'min_dynamic_shared_memory', 'old_snapshot_threshold', 'recovery_target', 'jit_provider',
])

_BOOL_WORDS = {'on': True, 'off': False, 'true': True, 'false': False, 'yes': True, 'no': False,
               '1': True, '0': False}

# What the parameters the collection knows take, checked before anything is written.
# The syntax is that of the PostgreSQL documentation, "Setting Parameters" (Parameter
# Names and Values): a boolean is on, off, true, false, yes, no, 1, 0 (case-insensitive)
# or an unambiguous prefix of one; a memory value is a number with one of the units B,
# kB, MB, GB, TB (case-sensitive; 1024-based), a time one of us, ms, s, min, h, d, and a
# number without a unit counts in the parameter's base unit (BASE_UNITS); an enumerated
# value is one of the parameter's words, case-insensitive.  The words and ranges are
# those of each parameter's entry in the chapters "Resource Consumption", "Write Ahead
# Log", "Connections and Authentication", "Query Planning" and "Client Connection
# Defaults"; the enums that pg_settings lists with a boolean spelling (huge_pages,
# synchronous_commit, wal_compression) take the boolean words too.
# Each entry: (kind, low, high) for memory, time, int and real ("-1" where the
# documentation gives -1 a meaning is in the range), ('bool',), ('enum', words).
_BOOL_ALIASES = tuple(_BOOL_WORDS)
VALUE_TYPES = {
    'shared_buffers': ('memory', 128 * 1024, None),
    'effective_cache_size': ('memory', 8 * 1024, None),
    'wal_buffers': ('memory', -1, None),
    'temp_buffers': ('memory', 800 * 1024, None),
    'work_mem': ('memory', 64 * 1024, None),
    'maintenance_work_mem': ('memory', 1024 * 1024, None),
    'autovacuum_work_mem': ('memory', -1, None),
    'logical_decoding_work_mem': ('memory', 64 * 1024, None),
    'huge_page_size': ('memory', 0, None),
    'max_stack_depth': ('memory', 100 * 1024, None),
    'max_wal_size': ('memory', 2 * 1024 * 1024, None),
    'min_wal_size': ('memory', 2 * 1024 * 1024, None),
    'wal_keep_size': ('memory', 0, None),
    'checkpoint_timeout': ('time', 30 * 1000, 86400 * 1000),
    'archive_timeout': ('time', 0, None),
    'autovacuum_naptime': ('time', 1000, None),
    'statement_timeout': ('time', 0, None),
    'lock_timeout': ('time', 0, None),
    'idle_in_transaction_session_timeout': ('time', 0, None),
    'log_min_duration_statement': ('time', -1, None),
    'deadlock_timeout': ('time', 1, None),
    'wal_writer_delay': ('time', 1, 10000),
    'bgwriter_delay': ('time', 10, 10000),
    'max_connections': ('int', 1, 262143),
    'superuser_reserved_connections': ('int', 0, 262143),
    'max_worker_processes': ('int', 0, 262143),
    'max_parallel_workers': ('int', 0, 1024),
    'max_parallel_workers_per_gather': ('int', 0, 1024),
    'max_parallel_maintenance_workers': ('int', 0, 1024),
    'max_locks_per_transaction': ('int', 10, 2147483647),
    'max_prepared_transactions': ('int', 0, 262143),
    'max_wal_senders': ('int', 0, 262143),
    'max_replication_slots': ('int', 0, 262143),
    'max_files_per_process': ('int', 64, 2147483647),
    'effective_io_concurrency': ('int', 0, 1000),
    'maintenance_io_concurrency': ('int', 0, 1000),
    'autovacuum_max_workers': ('int', 1, 262143),
    'port': ('int', 1, 65535),
    'random_page_cost': ('real', 0, None),
    'seq_page_cost': ('real', 0, None),
    'checkpoint_completion_target': ('real', 0, 1),
    'fsync': ('bool',),
    'full_page_writes': ('bool',),
    'wal_log_hints': ('bool',),
    'autovacuum': ('bool',),
    'jit': ('bool',),
    'track_io_timing': ('bool',),
    'huge_pages': ('enum', ('try',) + _BOOL_ALIASES),
    'shared_memory_type': ('enum', ('mmap', 'sysv', 'windows')),
    'dynamic_shared_memory_type': ('enum', ('posix', 'sysv', 'windows', 'mmap')),
    'wal_level': ('enum', ('minimal', 'replica', 'logical', 'archive', 'hot_standby')),
    'wal_sync_method': ('enum', ('fsync', 'fdatasync', 'open_sync', 'open_datasync', 'fsync_writethrough')),
    'synchronous_commit': ('enum', ('local', 'remote_write', 'remote_apply') + _BOOL_ALIASES),
    'wal_compression': ('enum', ('pglz', 'lz4', 'zstd') + _BOOL_ALIASES),
    'io_method': ('enum', ('sync', 'worker', 'io_uring')),
}
_NUMBER_WITH_UNIT = re.compile(r'\s*(-?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*\Z')
_REAL = re.compile(r'\s*-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*\Z')
_INTEGER_TEXT = re.compile(r'\s*-?[0-9]+\s*\Z')


class ConfError(ValueError):
    """Text the server would refuse to start with; the message names file and line."""


class Entry(object):
    """One ``name = value`` line; offsets are into the file's text."""

    __slots__ = ('name', 'value', 'quoted', 'value_start', 'value_end', 'line', 'source')

    def __init__(self, name, value, quoted, value_start, value_end, line, source):
        self.name = name
        self.value = value
        self.quoted = quoted
        self.value_start = value_start
        self.value_end = value_end
        self.line = line
        self.source = source

    def __repr__(self):
        return 'Entry(%s=%r @%s:%s)' % (self.name, self.value, self.source, self.line)


def _unquote(body):
    out = []
    pos = 0
    escapes = {'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
    while pos < len(body):
        char = body[pos]
        if char == "'" and body.startswith("'", pos + 1):
            out.append("'")
            pos += 2
        elif char == '\\' and pos + 1 < len(body):
            out.append(escapes.get(body[pos + 1], body[pos + 1]))
            pos += 2
        else:
            out.append(char)
            pos += 1
    return ''.join(out)


def _quoted_end(line, start):
    """Index just past the closing quote of the string starting at ``line[start]``."""
    pos = start + 1
    while pos < len(line):
        if line[pos] == '\\':
            pos += 2
            continue
        if line[pos] == "'":
            if line.startswith("'", pos + 1):
                pos += 2
                continue
            return pos + 1
        pos += 1
    return -1


def parse(text, source='postgresql.conf'):
    """Return the entries of one file in order (include directives too)."""
    entries = []
    for number, body, line_offset, offset in keyed.numbered_lines(text):
        stripped = body.strip()
        if not stripped or stripped.startswith('#'):
            continue
        match = _LINE_RE.match(body)
        if not match:
            raise ConfError('%s line %d: syntax error in %r' % (source, number, stripped))
        start = match.end()
        if start < len(body) and body[start] == "'":
            end = _quoted_end(body, start)
            if end < 0:
                raise ConfError('%s line %d: quote is not closed in %r' % (source, number, stripped))
            value = _unquote(body[start + 1:end - 1])
            quoted = True
        else:
            end = start
            while end < len(body) and body[end] not in ' \t#':
                end += 1
            value = body[start:end]
            if "'" in value or '"' in value:
                raise ConfError('%s line %d: stray quote in %r' % (source, number, stripped))
            if not value:
                raise ConfError('%s line %d: %s has no value' % (source, number, match.group('name')))
            quoted = False
        rest = body[end:].strip()
        if rest and not rest.startswith('#'):
            raise ConfError('%s line %d: unexpected %r after the value of %s'
                            % (source, number, rest, match.group('name')))
        entries.append(Entry(match.group('name').lower(), value, quoted, line_offset + start,
                             line_offset + end, number, source))
    return entries


def format_value(value, like=None):
    """Text of ``value``: bare when PostgreSQL takes it bare (and ``like`` was bare), else quoted.

    In a quoted value the server reads a backslash as an escape and a doubled quote as one
    quote: both are written so that it reads back ``value`` itself.
    """
    if UNQUOTED_RE.match(value) and (like is None or not like.quoted):
        return value
    return "'%s'" % value.replace('\\', '\\\\').replace("'", "''")


def as_bool_word(value):
    """True/False for what PostgreSQL reads as a boolean (a word or an unambiguous prefix), else None."""
    text = (value or '').strip().lower()
    if not text:
        return None
    meanings = set(meaning for word, meaning in _BOOL_WORDS.items() if word.startswith(text))
    return meanings.pop() if len(meanings) == 1 else None


def _quantity_problem(name, value, kind, low, high):
    units = MEMORY_UNITS if kind == 'memory' else TIME_UNITS
    match = _NUMBER_WITH_UNIT.match(value)
    if not match or (match.group(2) and match.group(2) not in units):
        return '%r is not a %s value: a number with one of the units %s (case-sensitive), or a number in %s' % (
            value, kind, ', '.join(sorted(units, key=units.get)), BASE_UNITS.get(name, 'the base unit'))
    number = float(match.group(1))
    if number == -1 and not match.group(2) and low == -1:
        return None
    found = quantity(value, BASE_UNITS.get(name))
    # Bytes for memory, milliseconds for time (low and high are in those).
    amount = found[1] if found else number
    if amount < max(low, 0) or (high is not None and amount > high):
        return '%r is out of range for %s' % (value, name)
    return None


def value_problem(name, value):
    """Why PostgreSQL would refuse ``value`` for a known parameter ``name``, or None."""
    spec = VALUE_TYPES.get(name)
    if spec is None:
        return None
    kind = spec[0]
    if kind == 'bool':
        if as_bool_word(value) is None:
            return '%r is not a boolean (on, off, true, false, yes, no, 1 or 0)' % (value,)
        return None
    if kind == 'enum':
        words = spec[1]
        takes_bool = 'true' in words
        text = value.strip().lower()
        # Unlike a boolean parameter, an enum takes its words whole: no prefix of on/off/true
        # (postgres -C huge_pages -c huge_pages=of refuses it).
        if text in words:
            return None
        shown = [word for word in words if word not in _BOOL_ALIASES] + (['on', 'off'] if takes_bool else [])
        return '%r is not one of %s%s' % (value, ', '.join(sorted(set(shown), key=shown.index)),
                                          ' (or another boolean spelling)' if takes_bool else '')
    low, high = spec[1], spec[2]
    if kind in ('memory', 'time'):
        return _quantity_problem(name, value, kind, low, high)
    pattern = _INTEGER_TEXT if kind == 'int' else _REAL
    if not pattern.match(value):
        return '%r is not %s' % (value, 'an integer' if kind == 'int' else 'a number')
    number = float(value)
    if number < low or (high is not None and number > high):
        return '%r is out of range for %s (%s to %s)' % (value, name, low, 'any' if high is None else high)
    return None


def format_entry(name, value):
    return '%s = %s\n' % (name, format_value(value))


def quantity(value, base_unit=None):
    """(kind, number) of a value with a unit, in bytes or milliseconds; None otherwise.

    A number without a unit is counted in ``base_unit`` (pg_settings.unit, such as
    ``8kB`` or ``ms``); without one it is returned as ('number', n).
    """
    match = _QUANTITY_RE.match(value or '')
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2)
    if not unit:
        if base_unit:
            base = quantity(base_unit if base_unit[:1].isdigit() else '1' + base_unit)
            return (base[0], number * base[1]) if base else None
        return ('number', number)
    if unit in MEMORY_UNITS:
        return ('bytes', number * MEMORY_UNITS[unit])
    if unit in TIME_UNITS:
        return ('ms', number * TIME_UNITS[unit])
    return None


def as_bool(value):
    return _BOOL_WORDS.get((value or '').strip().lower())


def same_value(name, have, want, base_unit=None):
    """True when PostgreSQL reads ``have`` and ``want`` as the same setting."""
    if have is None or want is None:
        return False
    if have == want:
        return True
    base = base_unit or BASE_UNITS.get(name)
    have_q, want_q = quantity(have, base), quantity(want, base)
    if have_q and want_q:
        return have_q[0] == want_q[0] and abs(have_q[1] - want_q[1]) < 1e-6
    have_b, want_b = as_bool(have), as_bool(want)
    if have_b is not None and want_b is not None:
        return have_b == want_b
    if re.match(r'^[A-Za-z0-9_]+\Z', have) and re.match(r'^[A-Za-z0-9_]+\Z', want):
        return have.lower() == want.lower()
    return False


def edit_for(entry, value):
    """(source, start, end, text) replacing the value of ``entry``."""
    return (entry.source, entry.value_start, entry.value_end, format_value(value, like=entry))
