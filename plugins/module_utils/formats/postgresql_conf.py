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
# What PostgreSQL's lexer (guc-file.l) reads as one token without quotes: an integer with
# unit letters (0x hex too), a decimal number without a unit (``1.5GB`` bare is a syntax
# error: the number ends at the "G"), a word of letters, digits and _ . : / -.  Anything
# else is written quoted, which every parameter takes.
UNQUOTED_RE = re.compile(r'^(?:[-+]?(?:[0-9]+|0x[0-9A-Fa-f]+)[A-Za-z]*|[-+]?[0-9]*\.[0-9]+|'
                         r'[A-Za-z_][A-Za-z0-9_.:/-]*)\Z')
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
        elif char == '\\' and pos + 1 < len(body) and body[pos + 1] in '01234567':
            digits = re.match('[0-7]{1,3}', body[pos + 1:]).group(0)  # \ooo, as the server reads it
            out.append(chr(int(digits, 8) & 0xFF))
            pos += 1 + len(digits)
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
