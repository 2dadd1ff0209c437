# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the udev rules format and the udev database.

A rules file is a list of lines.  A rule is one logical line (a trailing backslash
continues it) made of comma-separated ``KEY[{attribute}] OP "value"`` tokens, where OP
is one of ``==`` and ``!=`` (match) or ``=``, ``+=``, ``-=``, ``:=`` (assignment).
Comments (``#``) and blank lines are kept as they are.  parse() keeps the original text
of every line, so that render() rewrites only the rules it was asked to change.

Match values are shell-style patterns in which ``|`` separates alternatives, so an
identifier is only usable as a key when it has none of ``*?[]|`` and no quote or
backslash (see safe_match_value()).

The udev database (``/run/udev/data/b<major>:<minor>``) holds one ``X:value`` record
per line; ``E:NAME=value`` lines are the device's properties (ID_WWN, ID_SERIAL...).

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Where udev reads rules files; a name in an earlier folder masks the same name later,
# and all files are processed in the lexical order of their names (udev(7)).
RULES_DIRS = ('/etc/udev/rules.d', '/run/udev/rules.d', '/usr/local/lib/udev/rules.d',
              '/usr/lib/udev/rules.d', '/lib/udev/rules.d')

# The rules file that imports ID_WWN / ID_SERIAL from the disk (ata_id, scsi_id...);
# a rule that matches those properties must be in a file sorted after it.
PERSISTENT_STORAGE_RULES = '60-persistent-storage.rules'

MATCH_OPS = ('==', '!=')
ASSIGN_OPS = ('=', '+=', '-=', ':=')

_TOKEN = re.compile(
    r'\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)'
    r'(?:\{(?P<attr>[^}]*)\})?'
    r'\s*(?P<op>==|!=|\+=|-=|:=|=)\s*'
    r'(?P<prefix>e?)"(?P<value>(?:[^"\\]|\\.)*)"'
    r'\s*(?P<sep>,|$)')
_UNSAFE_MATCH = re.compile(r'[*?\[\]|"\\\n\r]')
_UNSAFE_VALUE = re.compile(r'["\\\n\r]')


class RulesError(ValueError):
    """A rule line that cannot be read as udev tokens."""


class Token(object):
    """One ``KEY{attr}OP"value"`` item of a rule."""

    __slots__ = ('key', 'attr', 'op', 'value')

    def __init__(self, key, attr, op, value):
        self.key = key
        self.attr = attr
        self.op = op
        self.value = value

    @property
    def is_match(self):
        return self.op in MATCH_OPS

    @property
    def name(self):
        """``ATTR{queue/rq_affinity}`` or ``ACTION``: the key with its attribute."""
        return '%s{%s}' % (self.key, self.attr) if self.attr is not None else self.key

    def render(self):
        return '%s%s"%s"' % (self.name, self.op, self.value)

    def __eq__(self, other):
        return isinstance(other, Token) and (self.key, self.attr, self.op, self.value) == (
            other.key, other.attr, other.op, other.value)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.key, self.attr, self.op, self.value))

    def __repr__(self):
        return 'Token(%s)' % self.render()


class Line(object):
    """One logical line: ``text`` as read (continuations included) and its tokens.

    ``tokens`` is None for comments, blank lines and lines that are not rules.
    """

    __slots__ = ('text', 'tokens', 'dirty')

    def __init__(self, text, tokens=None):
        self.text = text
        self.tokens = tokens
        self.dirty = False

    @property
    def is_rule(self):
        return self.tokens is not None

    def render(self):
        if self.tokens is not None and self.dirty:
            return ', '.join(token.render() for token in self.tokens)
        return self.text


def parse_tokens(text):
    """Return the tokens of one rule's text; raise RulesError when it is not a rule."""
    tokens = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise RulesError('cannot read udev rule at %r' % (text[position:position + 40],))
        value = match.group('value')
        tokens.append(Token(match.group('key'), match.group('attr'), match.group('op'), value))
        position = match.end()
        if match.group('sep') == ',':
            while position < len(text) and text[position] in ' \t':
                position += 1
    if not tokens:
        raise RulesError('empty udev rule')
    return tokens


def _logical_lines(text):
    """Join backslash-continued physical lines; yield each logical line's raw text."""
    pending = []
    for physical in (text or '').splitlines():
        pending.append(physical)
        if physical.endswith('\\') and not physical.lstrip().startswith('#'):
            continue
        yield '\n'.join(pending)
        pending = []
    if pending:
        yield '\n'.join(pending)


def parse(text):
    """Parse a rules file into Line objects; lines that are not rules keep tokens None."""
    lines = []
    for raw in _logical_lines(text):
        stripped = raw.strip()
        if not stripped or stripped.startswith('#'):
            lines.append(Line(raw))
            continue
        joined = re.sub(r'\\\n\s*', ' ', raw)
        try:
            lines.append(Line(raw, parse_tokens(joined)))
        except RulesError:
            # udev itself skips a line it cannot read; keep it untouched.
            lines.append(Line(raw))
    return lines


def render(lines):
    """The file text for ``lines``: unchanged lines exactly as read, changed ones canonical."""
    if not lines:
        return ''
    return '\n'.join(line.render() for line in lines) + '\n'


def safe_match_value(value):
    """True when ``value`` can be matched literally: no pattern characters, quotes or backslashes."""
    return value is not None and value != '' and not _UNSAFE_MATCH.search(value)


def safe_assign_value(value):
    """True when ``value`` can be written between double quotes as it is."""
    return value is not None and not _UNSAFE_VALUE.search(value)


def sorts_after(file_name, other=PERSISTENT_STORAGE_RULES):
    """True when udev processes ``file_name`` after ``other`` (lexical order of base names)."""
    return file_name.rsplit('/', 1)[-1] > other


def attr_assignments(tokens, prefix='queue/'):
    """{attribute: value} of ``ATTR{<prefix>...}`` assignments, the last one winning."""
    values = {}
    for token in tokens:
        if token.key == 'ATTR' and token.op in ('=', ':=') and token.attr and token.attr.startswith(prefix):
            values[token.attr[len(prefix):]] = token.value
    return values


def parse_db(text):
    """The ``E:`` properties of a udev database file, as {name: value}."""
    properties = {}
    for line in (text or '').splitlines():
        if line.startswith('E:') and '=' in line:
            name, dummy, value = line[2:].partition('=')
            properties[name] = value
    return properties


def rule_matches(line, key_tokens, common_tokens):
    """True when ``line`` is a rule for exactly this key: it matches on every key token,
    and on nothing beyond the key and the common tokens (a rule with more conditions is
    someone else's)."""
    if not line.is_rule:
        return False
    matches = [token for token in line.tokens if token.is_match]
    allowed = set(key_tokens) | set(common_tokens)
    return all(token in matches for token in key_tokens) and all(token in allowed for token in matches)


def values_for(lines, key_tokens, common_tokens, prefix='queue/'):
    """{attribute: value} that the rules for this key assign, the last assignment winning."""
    values = {}
    for line in lines:
        if rule_matches(line, key_tokens, common_tokens):
            values.update(attr_assignments(line.tokens, prefix))
    return values


def _assignment_order(token, first):
    """Sort key that puts ``ATTR{<first>}`` assignments before the other ATTR ones."""
    if token.is_match:
        return 0
    if token.key == 'ATTR' and token.attr in first:
        return 1
    return 2


def set_values(lines, key_tokens, common_tokens, values, prefix='queue/', first=()):
    """Make the rules for this key assign ``values`` ({attribute: value}); return the lines.

    Existing assignments of these attributes in the key's rules are updated in place,
    missing ones are added to the key's first rule, or a new rule is appended.
    Assignments of attributes named in ``first`` are moved before the other ATTR
    assignments of a rule that changes (udev writes them in rule order, and switching the
    I/O scheduler resets nr_requests).
    """
    lines = list(lines)
    wanted = dict(('%s%s' % (prefix, name), value) for name, value in values.items())
    first = set('%s%s' % (prefix, name) for name in first)
    owned = [line for line in lines if rule_matches(line, key_tokens, common_tokens)]
    seen = set()
    for line in owned:
        for token in line.tokens:
            if token.key == 'ATTR' and token.op in ('=', ':=') and token.attr in wanted:
                seen.add(token.attr)
                if token.value != wanted[token.attr]:
                    token.value = wanted[token.attr]
                    line.dirty = True
    missing = [Token('ATTR', attr, '=', wanted[attr]) for attr in sorted(wanted) if attr not in seen]
    if owned:
        target = owned[0]
        if missing:
            target.tokens.extend(missing)
            target.dirty = True
    else:
        target = Line('', list(common_tokens) + list(key_tokens) + missing)
        target.dirty = True
        lines.append(target)
    for line in owned + [target]:
        if line.dirty:
            line.tokens.sort(key=lambda token: _assignment_order(token, first))
    return lines
