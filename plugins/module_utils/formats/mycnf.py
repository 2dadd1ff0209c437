# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: MySQL and MariaDB option files (my.cnf).

The format as the MySQL manual ("Using Option Files") describes it: ``[group]`` lines
(group names are case-insensitive), ``name`` or ``name = value`` lines with blanks
around both trimmed, values optionally in single or double quotes (useful when they
hold ``#``), the escapes ``\\b \\t \\n \\r \\\\ \\s`` in values, ``#`` and ``;`` comment
lines and ``#`` comments after a value, and ``!include FILE`` / ``!includedir DIR``
(the files of DIR ending in ``.cnf``).  Dashes and underscores are the same in option
names, and a ``loose-`` prefix only asks the program to ignore an option it does not know.
The server reads the groups [mysqld] and [server] and [mysqld-X.Y] for its own
version X.Y (MariaDB adds [mariadb], [mariadbd], [mariadb-X.Y] and [client-server]);
when an option appears several times, the last one read wins.  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sizes

SERVER_GROUPS = ('mysqld', 'server', 'mariadb', 'mariadbd', 'client-server', 'galera')
VERSIONED_GROUP_RE = re.compile(r'^(?:mysqld|mariadb|mariadbd)-([0-9]+\.[0-9]+)\Z')
NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_-]*\Z')
GROUP_RE = re.compile(r'^[A-Za-z0-9_.-]+\Z')
PLAIN_RE = re.compile(r'^[A-Za-z0-9_./:+,=@-]+\Z')
_BOOL_WORDS = {'on': True, 'off': False, 'true': True, 'false': False, '1': True, '0': False,
               'yes': True, 'no': False}
_ESCAPES = {'b': '\b', 't': '\t', 'n': '\n', 'r': '\r', '\\': '\\', 's': ' '}

# Options the server reads only at start (SET GLOBAL refuses them).
STATIC = frozenset([
    'innodb_flush_method', 'innodb_buffer_pool_instances', 'innodb_log_files_in_group', 'innodb_page_size',
    'large_pages', 'innodb_use_native_aio', 'innodb_read_io_threads', 'innodb_write_io_threads',
    'innodb_data_file_path', 'innodb_log_group_home_dir', 'innodb_data_home_dir', 'bind_address', 'port',
    'socket', 'datadir', 'lower_case_table_names', 'performance_schema', 'skip_name_resolve', 'back_log',
    'open_files_limit', 'thread_handling', 'innodb_doublewrite_files', 'innodb_numa_interleave',
    'innodb_log_file_size', 'innodb_doublewrite', 'server_id', 'log_bin', 'tmpdir', 'user',
])


# What the options the collection knows take, checked before anything is written (keys
# as option_key() spells them).  Sources: the MySQL Reference Manual, "InnoDB Startup
# Options and System Variables" and "Server System Variables" (each variable's type,
# range and valid values), and the MariaDB Knowledge Base pages of the same variables;
# innodb_flush_method takes fsync, O_DSYNC, littlesync, nosync, O_DIRECT and
# O_DIRECT_NO_FSYNC on Unix (MySQL and MariaDB), unbuffered, async_unbuffered and normal
# on Windows, enum words compare case-insensitively.  Sizes are whole numbers with an
# optional K, M, G (T, P, E) suffix, any case ("Specifying Program Options": option
# values); booleans are ON, OFF, TRUE, FALSE, 1 or 0, any case ("Using Options to Enable
# or Disable Plugins" / "Program Option Modifiers").
# Each entry: ('size', low, high), ('int', low, high), ('bool',) or ('enum', words).
_MAX_SIZE = 2 ** 64 - 1
BOOL_WORDS = ('on', 'off', 'true', 'false', '1', '0')
VALUE_TYPES = {
    'innodb_flush_method': ('enum', ('fsync', 'O_DSYNC', 'littlesync', 'nosync', 'O_DIRECT', 'O_DIRECT_NO_FSYNC',
                                     'unbuffered', 'async_unbuffered', 'normal')),
    'innodb_flush_log_at_trx_commit': ('enum', ('0', '1', '2')),
    'innodb_doublewrite': ('enum', ('ON', 'OFF', 'TRUE', 'FALSE', '1', '0', 'DETECT_AND_RECOVER', 'DETECT_ONLY')),
    'innodb_buffer_pool_size': ('size', 5 * 1024 * 1024, _MAX_SIZE),
    'innodb_buffer_pool_chunk_size': ('size', 1024 * 1024, _MAX_SIZE),
    'innodb_log_file_size': ('size', 1024 * 1024, _MAX_SIZE),
    'innodb_redo_log_capacity': ('size', 8 * 1024 * 1024, _MAX_SIZE),
    'innodb_log_buffer_size': ('size', 256 * 1024, _MAX_SIZE),
    'key_buffer_size': ('size', 0, _MAX_SIZE),
    'max_allowed_packet': ('size', 1024, 1024 ** 3),
    'tmp_table_size': ('size', 1024, _MAX_SIZE),
    'max_heap_table_size': ('size', 16384, _MAX_SIZE),
    'sort_buffer_size': ('size', 32768, _MAX_SIZE),
    'join_buffer_size': ('size', 128, _MAX_SIZE),
    'read_buffer_size': ('size', 8192, 2147479552),
    'read_rnd_buffer_size': ('size', 1, 2147483647),
    'binlog_cache_size': ('size', 4096, _MAX_SIZE),
    'thread_stack': ('size', 131072, _MAX_SIZE),
    'max_connections': ('int', 1, 100000),
    'innodb_buffer_pool_instances': ('int', 1, 64),
    'innodb_io_capacity': ('int', 100, _MAX_SIZE),
    'innodb_io_capacity_max': ('int', 100, _MAX_SIZE),
    'innodb_read_io_threads': ('int', 1, 64),
    'innodb_write_io_threads': ('int', 1, 64),
    'innodb_log_files_in_group': ('int', 1, 100),
    'table_open_cache': ('int', 1, 524288),
    'open_files_limit': ('int', 0, _MAX_SIZE),
    'thread_cache_size': ('int', 0, 16384),
    'back_log': ('int', 1, 65535),
    'server_id': ('int', 0, 2 ** 32 - 1),
    'sync_binlog': ('int', 0, 2 ** 32 - 1),
    'large_pages': ('bool',),
    'innodb_file_per_table': ('bool',),
    'innodb_use_native_aio': ('bool',),
    'innodb_numa_interleave': ('bool',),
    'innodb_adaptive_hash_index': ('bool',),
    'skip_name_resolve': ('bool',),
    'performance_schema': ('bool',),
}


def value_problem(key, value):
    """Why mysqld would refuse ``value`` for a known option ``key``, or None."""
    spec = VALUE_TYPES.get(key)
    if spec is None:
        return None
    text = value.strip()
    kind = spec[0]
    if kind == 'bool':
        if text.lower() not in BOOL_WORDS:
            return '%r is not a boolean (ON, OFF, TRUE, FALSE, 1 or 0)' % (value,)
        return None
    if kind == 'enum':
        if text.lower() not in [word.lower() for word in spec[1]]:
            return '%r is not one of %s' % (value, ', '.join(spec[1]))
        return None
    match = sizes.SIZE_RE.match(text)
    if not match or (kind == 'int' and match.group(2)):
        return '%r is not %s' % (value, 'a size (a whole number with an optional K, M or G)' if kind == 'size'
                                 else 'a whole number')
    number = sizes.in_bytes(match)
    low, high = spec[1], spec[2]
    if not low <= number <= high:
        return '%r is out of range for %s (%d to %d)' % (value, key, low, high)
    return None


class CnfError(ValueError):
    """Text mysqld would refuse to start with; the message names file and line."""


def option_key(name):
    """The option's identity: lower case, dashes as underscores, without ``loose-``."""
    key = name.strip().lower().replace('-', '_')
    if key.startswith('loose_'):
        key = key[len('loose_'):]
    return key


class Item(object):
    """One meaningful line: kind is 'group', 'option', 'include' or 'includedir'.

    For options: ``group`` (lower case), ``key`` (option_key), ``value`` (None for a bare
    ``name``), ``value_start``/``value_end`` (offsets of the value text in the file, or of
    the end of the name for a bare option), ``line_end`` (offset past the line).
    """

    __slots__ = ('kind', 'group', 'name', 'key', 'value', 'quote', 'value_start', 'value_end',
                 'line_end', 'line', 'source', 'path')

    def __init__(self, **fields):
        for slot in self.__slots__:
            setattr(self, slot, fields.get(slot))

    def __repr__(self):
        return 'Item(%s [%s] %s=%r @%s:%s)' % (self.kind, self.group, self.name, self.value, self.source, self.line)


def _unescape(text):
    out = []
    pos = 0
    while pos < len(text):
        if text[pos] == '\\' and pos + 1 < len(text):
            out.append(_ESCAPES.get(text[pos + 1], '\\' + text[pos + 1]))
            pos += 2
        else:
            out.append(text[pos])
            pos += 1
    return ''.join(out)


def _value_span(body, start, source, number):
    """(value, quote, value_start, value_end) of the value beginning at ``body[start:]``."""
    while start < len(body) and body[start] in ' \t':
        start += 1
    if start < len(body) and body[start] in '"\'':
        quote = body[start]
        pos = start + 1
        while pos < len(body):
            if body[pos] == '\\':
                pos += 2
                continue
            if body[pos] == quote:
                break
            pos += 1
        if pos >= len(body):
            raise CnfError('%s line %d: quote %s is not closed' % (source, number, quote))
        rest = body[pos + 1:].strip()
        if rest and not rest.startswith('#'):
            raise CnfError('%s line %d: unexpected %r after a quoted value' % (source, number, rest))
        return _unescape(body[start + 1:pos]), quote, start, pos + 1
    end = body.find('#', start)
    end = len(body) if end < 0 else end
    while end > start and body[end - 1] in ' \t':
        end -= 1
    return _unescape(body[start:end]), '', start, end


def parse(text, source='my.cnf'):
    """Return the file's items in order; options before any group are refused, as mysqld does."""
    items = []
    group = None
    for number, body, line_offset, offset in keyed.numbered_lines(text):
        stripped = body.strip()
        if not stripped or stripped[0] in '#;':
            continue
        if stripped.startswith('!include'):
            directive, dummy, path = stripped.partition(' ')
            if directive not in ('!include', '!includedir') or not path.strip():
                raise CnfError('%s line %d: bad directive %r' % (source, number, stripped))
            items.append(Item(kind=directive[1:], path=path.strip(), group=group, line=number, source=source,
                              line_end=offset))
            continue
        if stripped.startswith('['):
            close = stripped.find(']')
            name = stripped[1:close].strip() if close > 0 else ''
            rest = stripped[close + 1:].strip() if close > 0 else ''
            if not name or not GROUP_RE.match(name) or (rest and rest[0] not in '#;'):
                raise CnfError('%s line %d: bad group line %r' % (source, number, stripped))
            group = name.lower()
            items.append(Item(kind='group', group=group, name=name, line=number, source=source, line_end=offset))
            continue
        if group is None:
            raise CnfError('%s line %d: option %r before any [group]' % (source, number, stripped))
        indent = len(body) - len(body.lstrip())
        equals = body.find('=')
        hash_at = body.find('#')
        if equals >= 0 and (hash_at < 0 or equals < hash_at):
            name = body[indent:equals].strip()
            value, quote, value_start, value_end = _value_span(body, equals + 1, source, number)
        else:
            name_end = len(body) if hash_at < 0 else hash_at
            name = body[indent:name_end].strip()
            value, quote = None, ''
            value_start = value_end = indent + len(name)
        if not NAME_RE.match(name):
            raise CnfError('%s line %d: %r is not an option name' % (source, number, name))
        items.append(Item(kind='option', group=group, name=name, key=option_key(name), value=value, quote=quote,
                          value_start=line_offset + value_start, value_end=line_offset + value_end,
                          line_end=offset, line=number, source=source))
    return items


def server_reads(group, version=None):
    """True when mysqld/mariadbd reads ``group``; versioned groups count when ``version`` is unknown."""
    if group in SERVER_GROUPS:
        return True
    match = VERSIONED_GROUP_RE.match(group or '')
    if match:
        return version is None or version.startswith(match.group(1) + '.') or version == match.group(1)
    return False


def format_value(value, like=None):
    """Value text: bare when plain, else double-quoted with the manual's escapes."""
    if PLAIN_RE.match(value) and (like is None or not like.quote):
        return value
    quote = like.quote if like is not None and like.quote else '"'
    escaped = value.replace('\\', '\\\\').replace('\t', '\\t')
    if quote in escaped:
        # The other quote then: both in one value is refused before (DbParameter).
        quote = "'" if quote == '"' else '"'
    if quote in escaped:
        raise CnfError('value %r holds both kinds of quote and cannot be written' % (value,))
    return '%s%s%s' % (quote, escaped, quote)


def format_option(name, value):
    return '%s = %s\n' % (name, format_value(value))


def canonical(value):
    """Comparable form: sizes in bytes, booleans (a bare option is ON), keywords upper-case."""
    if value is None:
        return True
    value = value.strip()
    size = sizes.SIZE_RE.match(value)
    if size and size.group(2):
        return sizes.in_bytes(size)
    boolean = _BOOL_WORDS.get(value.lower())
    if boolean is not None:
        return boolean
    if size:
        return int(value)
    if re.match(r'^[A-Za-z0-9_]+\Z', value):
        return value.upper()
    return value


def same_value(have, want, have_present=True):
    if not have_present:
        return False
    return canonical(have) == canonical(want)


def edit_for(item, value):
    """(source, start, end, text) giving ``item`` the value ``value``."""
    if item.value is None:
        return (item.source, item.value_start, item.value_end, ' = %s' % format_value(value))
    return (item.source, item.value_start, item.value_end, format_value(value, like=item))


def insert_point(items, group, source):
    """Offset after the last option line of the last [group] section of ``source``, or None."""
    point = None
    current = None
    for item in items:
        if item.source != source:
            continue
        if item.kind == 'group':
            current = item.group
            if current == group:
                point = item.line_end
        elif current == group and item.kind == 'option':
            point = item.line_end
    return point
