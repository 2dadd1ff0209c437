# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: Oracle text initialization parameter files (pfile, init<SID>.ora).

The syntax follows "Rules Governing Initialization Parameter Files" in the Oracle
Database Reference:
  - ``#`` starts a comment that runs to the end of the line (outside quotes);
  - several ``name = value`` pairs may share one line, separated by spaces;
  - a parameter with several values takes them in parentheses separated by commas,
    separated by spaces or commas without parentheses, or on consecutive lines of the
    same parameter (a later, non-consecutive line replaces the earlier values);
  - a backslash at the end of a line continues the entry on the next line, and a
    backslash before any other character makes that character literal (``\\#``);
  - values with spaces or special characters are quoted with single or double quotes;
  - ``IFILE`` embeds another parameter file at that point;
  - names are case-insensitive; ``*.name`` applies to every instance and ``SID.name``
    only to instance SID, and an instance's own entry wins over the ``*`` one whatever
    their order (that is what CREATE PFILE FROM SPFILE writes and reads back).

Parsing keeps offsets into the text, so an edit replaces only the bytes of one value and
a file with no change renders back byte for byte.  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sizes

NAME_RE = re.compile(r'^_{0,2}[A-Za-z][A-Za-z0-9_#$]*\Z')
SID_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_#$]*\Z')
# Values written without quotes: numbers (with Oracle's K/M/G/T/P/E size suffix) and booleans.
BARE_VALUE_RE = re.compile(r'^(?:[0-9]+[KkMmGgTtPpEe]?|TRUE|FALSE|true|false)\Z')
# Values that may stay unquoted when an existing entry was written without quotes.
PLAIN_WORD_RE = re.compile(r'^[A-Za-z0-9_.$/:+-]+\Z')
KEYWORD_RE = re.compile(r'^[A-Za-z0-9_$#]+\Z')

_SPECIAL = ' \t\r\n=(),#"\''

# What the parameters the collection knows take, checked before anything is written.
# Source: the Oracle Database Reference, each parameter's entry ("Parameter type" and
# "Range of values"): FILESYSTEMIO_OPTIONS = { none | setall | directIO | asynch },
# DISK_ASYNCH_IO and LOCK_SGA are Boolean (TRUE or FALSE), USE_LARGE_PAGES is one of
# TRUE, FALSE, ONLY, AUTO, AUTO_ONLY; the memory sizes are "Big integer": a whole number
# with an optional K, M, G, T, P or E; keywords and booleans are case-insensitive.
# Each entry: ('enum', words), ('size', low), ('int', low, high).
VALUE_TYPES = {
    'filesystemio_options': ('enum', ('none', 'setall', 'directIO', 'asynch')),
    'disk_asynch_io': ('enum', ('TRUE', 'FALSE')),
    'lock_sga': ('enum', ('TRUE', 'FALSE')),
    'pre_page_sga': ('enum', ('TRUE', 'FALSE')),
    'use_large_pages': ('enum', ('TRUE', 'FALSE', 'ONLY', 'AUTO', 'AUTO_ONLY')),
    'db_block_size': ('enum', ('2048', '4096', '8192', '16384', '32768')),
    'sga_target': ('size', 0),
    'sga_max_size': ('size', 0),
    'memory_target': ('size', 0),
    'memory_max_target': ('size', 0),
    'pga_aggregate_target': ('size', 0),
    'pga_aggregate_limit': ('size', 0),
    'db_cache_size': ('size', 0),
    'shared_pool_size': ('size', 0),
    'large_pool_size': ('size', 0),
    'java_pool_size': ('size', 0),
    'streams_pool_size': ('size', 0),
    'db_recovery_file_dest_size': ('size', 0),
    'processes': ('int', 6, 2 ** 31 - 1),
    'sessions': ('int', 1, 2 ** 31 - 1),
    'db_writer_processes': ('int', 1, 256),
    'open_cursors': ('int', 0, 65535),
}


def value_problem(name, values):
    """Why the instance would refuse ``values`` (a list) for a known parameter ``name``, or None."""
    spec = VALUE_TYPES.get(name)
    if spec is None:
        return None
    if len(values) != 1:
        return '%s takes one value, not %d' % (name, len(values))
    text = values[0].strip()
    if spec[0] == 'enum':
        if text.lower() not in [word.lower() for word in spec[1]]:
            return '%r is not one of %s (any case)' % (values[0], ', '.join(spec[1]))
        return None
    match = sizes.SIZE_RE.match(text)
    if not match or (spec[0] == 'int' and match.group(2)):
        return '%r is not %s' % (values[0], 'a size (a whole number with an optional K, M, G, T, P or E)'
                                 if spec[0] == 'size' else 'a whole number')
    if spec[0] == 'int' and not spec[1] <= int(text) <= spec[2]:
        return '%r is out of range for %s (%d to %d)' % (values[0], name, spec[1], spec[2])
    return None


class PfileError(ValueError):
    """A parameter file that does not follow the documented syntax; names file and line."""


class Token(object):
    __slots__ = ('kind', 'value', 'start', 'end', 'line', 'quote')

    def __init__(self, kind, value, start, end, line, quote=''):
        self.kind = kind
        self.value = value
        self.start = start
        self.end = end
        self.line = line
        self.quote = quote


class Entry(object):
    """One ``[scope.]name = value[, value...]`` assignment.

    ``scope`` is None (no prefix), ``'*'`` or an instance SID; ``values`` are unquoted.
    ``value_start``/``value_end`` cover the value text (with its parentheses), and
    ``start``/``end`` the whole assignment, as offsets into the file's text.
    ``logical_start``/``logical_end`` cover its logical line (continuations included,
    the final newline included when there is one); ``alone`` tells whether the entry is
    the only thing on that logical line apart from blanks.
    """

    __slots__ = ('scope', 'name', 'values', 'quote', 'parenthesized', 'start', 'end', 'value_start',
                 'value_end', 'line', 'logical_start', 'logical_end', 'alone', 'source')

    def __init__(self, **fields):
        for slot in self.__slots__:
            setattr(self, slot, fields.get(slot))

    @property
    def applies_to_all(self):
        return self.scope in (None, '*')

    def applies_to(self, sid):
        """True when this entry is read by instance ``sid`` (None: the instance is unknown)."""
        if self.applies_to_all:
            return True
        return sid is not None and self.scope.lower() == sid.lower()

    def __repr__(self):
        return 'Entry(%s%s=%r @%s:%s)' % ('' if self.scope is None else self.scope + '.', self.name,
                                          self.values, self.source, self.line)


def tokenize(text, source='<pfile>'):
    """Yield lists of tokens, one list per logical line, with (start, end) of that line."""
    pos = 0
    length = len(text)
    line = 1
    tokens = []
    logical_start = 0
    while pos < length:
        char = text[pos]
        if char == '\\' and text.startswith('\n', pos + 1):
            pos += 2
            line += 1
            continue
        if char == '\\' and text.startswith('\r\n', pos + 1):
            pos += 3
            line += 1
            continue
        if char == '\n':
            yield tokens, logical_start, pos + 1
            tokens = []
            pos += 1
            line += 1
            logical_start = pos
            continue
        if char in ' \t\r':
            pos += 1
            continue
        if char == '#':
            end = text.find('\n', pos)
            pos = length if end < 0 else end
            continue
        if char in '=(),':
            tokens.append(Token(char, char, pos, pos + 1, line))
            pos += 1
            continue
        if char in '"\'':
            start = pos
            pos += 1
            chunks = []
            while True:
                if pos >= length or text[pos] == '\n':
                    raise PfileError('%s line %d: quote %s is not closed' % (source, line, char))
                if text[pos] == '\\' and text.startswith('\n', pos + 1):
                    pos += 2
                    line += 1
                    continue
                if text[pos] == char:
                    pos += 1
                    break
                chunks.append(text[pos])
                pos += 1
            tokens.append(Token('string', ''.join(chunks), start, pos, line, quote=char))
            continue
        start = pos
        chunks = []
        while pos < length and text[pos] not in _SPECIAL:
            if text[pos] == '\\' and pos + 1 < length:
                if text[pos + 1] == '\n' or text.startswith('\r\n', pos + 1):
                    # The continued line starts without blanks, so the word goes on there.
                    pos += 2 if text[pos + 1] == '\n' else 3
                    line += 1
                    continue
                chunks.append(text[pos + 1])
                pos += 2
                continue
            chunks.append(text[pos])
            pos += 1
        tokens.append(Token('word', ''.join(chunks), start, pos, line))
    yield tokens, logical_start, length


def _split_name(token, source):
    scope, dot, name = token.value.rpartition('.')
    if not dot:
        scope = None
    elif scope != '*' and not SID_RE.match(scope):
        raise PfileError('%s line %d: %r is not a SID prefix' % (source, token.line, scope))
    if not NAME_RE.match(name):
        raise PfileError('%s line %d: %r is not a parameter name' % (source, token.line, token.value))
    return scope, name.lower()


def _read_value(tokens, pos, name, name_token, source):
    """(values, value tokens, parenthesized, position after) of the value that starts at tokens[pos].

    ``(a, b)`` ends at its ``)``; a bare value ends at the line's end or where the next
    ``name =`` of the same line starts.  Words and strings are values, commas separate.
    """
    values, value_tokens = [], []
    parenthesized = pos < len(tokens) and tokens[pos].kind == '('
    if parenthesized:
        value_tokens.append(tokens[pos])
        pos += 1
    where = ('the list of %s' if parenthesized else 'the value of %s') % name
    while True:
        if pos >= len(tokens):
            if parenthesized:
                raise PfileError('%s line %d: "(" is not closed' % (source, name_token.line))
            break
        token = tokens[pos]
        if parenthesized and token.kind == ')':
            value_tokens.append(token)
            pos += 1
            break
        if not parenthesized and token.kind == 'word' and pos + 1 < len(tokens) and tokens[pos + 1].kind == '=':
            break  # the next parameter on the same line
        if token.kind in ('word', 'string'):
            values.append(token.value)
        elif token.kind != ',':
            raise PfileError('%s line %d: unexpected %r in %s' % (source, token.line, token.value, where))
        value_tokens.append(token)
        pos += 1
    return values, value_tokens, parenthesized, pos


def parse(text, source='<pfile>'):
    """Return the file's entries in order; raise PfileError on text Oracle would refuse."""
    entries = []
    for tokens, logical_start, logical_end in tokenize(text or '', source):
        line_entries = []
        pos = 0
        while pos < len(tokens):
            name_token = tokens[pos]
            if name_token.kind != 'word':
                raise PfileError('%s line %d: expected a parameter name, found %r'
                                 % (source, name_token.line, name_token.value))
            scope, name = _split_name(name_token, source)
            if pos + 1 >= len(tokens) or tokens[pos + 1].kind != '=':
                raise PfileError('%s line %d: expected "=" after %s' % (source, name_token.line, name_token.value))
            pos += 2
            values, value_tokens, parenthesized, pos = _read_value(tokens, pos, name, name_token, source)
            if not values:
                raise PfileError('%s line %d: %s has no value' % (source, name_token.line, name))
            first = [t for t in value_tokens if t.kind in ('word', 'string')][0]
            line_entries.append(Entry(
                scope=scope, name=name, values=values, quote=first.quote, parenthesized=parenthesized,
                start=name_token.start, end=value_tokens[-1].end, value_start=value_tokens[0].start,
                value_end=value_tokens[-1].end, line=name_token.line, logical_start=logical_start,
                logical_end=logical_end, source=source))
        for entry in line_entries:
            entry.alone = len(line_entries) == 1
        entries.extend(line_entries)
    return entries


def resolve(entries, name, sid=None):
    """The values instance ``sid`` reads for ``name``, and the entries that gave them.

    ``entries`` is the whole file in order, IFILE contents spliced in where they are
    named.  Consecutive entries of one parameter add up; a later, separate entry
    replaces the earlier ones; the instance's own ``SID.name`` wins over ``*.name``.
    Returns (values, [entries]) or (None, []).
    """
    groups = {'all': (None, []), 'sid': (None, [])}
    previous = None
    for entry in entries:
        key = (entry.name, entry.scope.lower() if entry.scope not in (None, '*') else '*')
        if entry.name == name and entry.applies_to(sid):
            kind = 'all' if entry.applies_to_all else 'sid'
            values, group = groups[kind]
            if previous == key and group:
                groups[kind] = (values + list(entry.values), group + [entry])
            else:
                groups[kind] = (list(entry.values), [entry])
        previous = key
    if groups['sid'][1]:
        return groups['sid']
    return groups['all']


def last_group(entries, name, scope):
    """The last run of consecutive entries for ``name`` written with ``scope``.

    ``scope`` '*' also matches entries without a prefix (they apply to every instance).
    """
    want = None if scope == '*' else scope.lower()
    runs = []
    previous = None
    for entry in entries:
        entry_scope = None if entry.applies_to_all else entry.scope.lower()
        key = (entry.name, entry_scope)
        if entry.name == name and entry_scope == want:
            if previous == key and runs:
                runs[-1].append(entry)
            else:
                runs.append([entry])
        previous = key
    return runs[-1] if runs else []


def quote_value(value, quote="'"):
    """Quote one value; the other quote character is used when the value holds ``quote``."""
    if quote in value:
        quote = '"' if quote == "'" else "'"
    if quote in value:
        raise PfileError('value %r holds both kinds of quote and cannot be written' % (value,))
    return '%s%s%s' % (quote, value, quote)


def format_values(values, like=None):
    """Text of ``values`` for a pfile.

    New entries follow CREATE PFILE FROM SPFILE: numbers and booleans bare, strings in
    single quotes, several values separated by commas.  When replacing ``like`` (an
    existing entry), its quote character and parentheses are kept.
    """
    quote = like.quote if like is not None and like.quote else "'"
    keep_bare = like is not None and not like.quote
    parts = []
    for value in values:
        if BARE_VALUE_RE.match(value) or (keep_bare and PLAIN_WORD_RE.match(value)):
            parts.append(value)
        else:
            parts.append(quote_value(value, quote))
    if like is not None and like.parenthesized:
        return '(%s)' % ', '.join(parts)
    return ','.join(parts)


def format_entry(scope, name, values):
    """A new line as CREATE PFILE FROM SPFILE writes it: ``*.name='value'``."""
    return '%s.%s=%s\n' % (scope, name, format_values(values))


def canonical(value):
    """Comparable form of one value: sizes in bytes, keywords upper-case, anything else as is."""
    value = value.strip()
    size = sizes.SIZE_RE.match(value)
    if size:
        return sizes.in_bytes(size)
    if KEYWORD_RE.match(value):
        return value.upper()
    return value


def same_values(have, want):
    """True when two value lists mean the same to Oracle (``1536m`` equals ``1610612736``)."""
    if have is None or want is None or len(have) != len(want):
        return False
    return all(canonical(h) == canonical(w) for h, w in zip(have, want))


def edits_for(entries, name, scope, values):
    """Edits that make ``scope.name`` hold ``values``, in the files that hold the winning run.

    Returns a list of (source, start, end, text); a source of None means "append ``text``
    as a new line to the main file" (no run exists yet).
    """
    run = last_group(entries, name, scope)
    if not run:
        return [(None, None, None, format_entry(scope, name, values))]
    first = run[0]
    edits = [(first.source, first.value_start, first.value_end, format_values(values, like=first))]
    for extra in run[1:]:
        if extra.alone:
            edits.append((extra.source, extra.logical_start, extra.logical_end, ''))
        else:
            edits.append((extra.source, extra.start, extra.end, ''))
    return edits
