# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the Solaris/illumos project database, /etc/project (project(4)).

One project per line: ``name:id:comment:user-list:group-list:attributes``.  Lists are
comma-separated; attributes are separated by ``;`` and are ``name`` or ``name=value``;
resource controls take a list of ``(privilege,value,action)`` tuples, for example
``project.max-shm-memory=(privileged,8589934592,deny)``.  Lines starting with ``#`` and
name-service lines (``+``, ``+name``, ``-name``) are kept as they are.

Values compare normalized: case, spaces and leading zeros do not matter, ``priv`` is
``privileged`` (libproject's build_rctlblk takes both), and the tuples of a resource
control compare as a set.  A control's value is written in plain decimal: libproject reads
it with strtoull(..., 10) and rejects any trailing character (setproject.c), so the control
would fail at login or newtask; a size with a unit (``8G``, binary as projmod(1M) scales it)
is converted for the byte controls and refused for the others.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate

ETC_PROJECT = '/etc/project'
MAX_PROJECT_ID = 2147483647  # MAXPROJID
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_.-]*\Z')
_ATTRIBUTE_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_.,-]*\Z')
_MEMBER = re.compile(r'^!?(\*|[A-Za-z0-9_.][A-Za-z0-9_.-]*)\Z')
_TUPLE = re.compile(r'\(([^()]*)\)')
# Resource controls (resource_controls(5)); other attributes such as project.pool are plain.
_RCTL_NAME = re.compile(r'^(project|task|process|zone)\.(max-|cpu-)')


class ProjectError(ValueError):
    """A project entry that /etc/project cannot hold; the message names it."""


class Project(object):
    """One project line."""

    __slots__ = ('name', 'id', 'comment', 'users', 'groups', 'attributes')

    def __init__(self, name, id_, comment='', users=None, groups=None, attributes=None):
        self.name = name
        self.id = id_
        self.comment = comment
        self.users = list(users or [])
        self.groups = list(groups or [])
        # Ordered [(name, value or None)], as in the file.
        self.attributes = list(attributes or [])

    def attribute(self, name):
        for key, value in self.attributes:
            if key == name:
                return value
        return None

    def has_attribute(self, name):
        return any(key == name for key, dummy in self.attributes)

    def set_attribute(self, name, value):
        for index, (key, dummy) in enumerate(self.attributes):
            if key == name:
                self.attributes[index] = (name, value)
                return
        self.attributes.append((name, value))

    def remove_attribute(self, name):
        self.attributes = [(key, value) for key, value in self.attributes if key != name]

    def copy(self):
        return Project(self.name, self.id, self.comment, self.users, self.groups, self.attributes)


def _split_list(text):
    return [item for item in text.split(',') if item != ''] if text else []


def _split_attributes(text):
    attributes = []
    for part in text.split(';') if text else []:
        if part == '':
            continue
        name, sep, value = part.partition('=')
        attributes.append((name, value if sep else None))
    return attributes


def parse_line(line):
    """A Project, or None for comments, blank and name-service lines."""
    body = line.rstrip('\r\n')
    if not body.strip() or body.lstrip().startswith('#') or body[:1] in ('+', '-'):
        return None
    fields = body.split(':')
    if len(fields) != 6:
        return None
    name, id_text, comment, users, groups, attributes = fields
    if not re.match(r'^[0-9]+\Z', id_text.strip()):
        return None
    return Project(name, int(id_text), comment, _split_list(users), _split_list(groups),
                   _split_attributes(attributes))


def parse(text):
    projects = []
    for line in (text or '').splitlines():
        project = parse_line(line)
        if project is not None:
            projects.append(project)
    return projects


def format_line(project):
    attributes = ';'.join(name if value is None else '%s=%s' % (name, value) for name, value in project.attributes)
    fields = (project.name, project.id, project.comment, ','.join(project.users), ','.join(project.groups),
              attributes)
    return '%s:%d:%s:%s:%s:%s' % fields


def render(text, changes):
    """Return ``text`` with ``changes`` ({name: Project, or None to remove}) applied.

    A changed project's line is rewritten in place; other lines are kept byte for byte;
    new projects are appended in the given order.
    """
    lines = (text or '').splitlines(True)
    output = []
    done = set()
    for line in lines:
        project = parse_line(line)
        if project is None or project.name not in changes:
            output.append(line)
            continue
        if project.name in done or changes[project.name] is None:
            continue
        done.add(project.name)
        ending = line[len(line.rstrip('\r\n')):] or '\n'
        output.append(format_line(changes[project.name]) + ending)
    added = [name for name in changes if changes[name] is not None and name not in done]
    if added:
        if output and not output[-1].endswith('\n'):
            output[-1] += '\n'
        output.extend(format_line(changes[name]) + '\n' for name in added)
    rendered = ''.join(output)
    if text is None and not rendered:
        return None
    return rendered


# ------------------------------------------------------------------ values
_PRIVILEGES = {'basic': 'basic', 'priv': 'privileged', 'privileged': 'privileged'}
_UNITS = {'': 0, 'k': 1, 'm': 2, 'g': 3, 't': 4, 'p': 5, 'e': 6}
_SIZE = re.compile(r'^([0-9]+)\s*([kmgtpe]?)b?\Z', re.IGNORECASE)
# Controls whose value is a number of bytes (resource_controls(5)): a unit converts.
_BYTE_CONTROL = re.compile(r'(memory|swap|-size|address-space|qbytes)\Z')


def normalize_attribute(value):
    """Compare form of an attribute value: rctl tuples as a sorted tuple of fields."""
    if value is None:
        return None
    text = ''.join(str(value).split()).lower()
    tuples = _TUPLE.findall(text)
    if tuples and _TUPLE.sub('', text).strip(',') == '':
        normalized = []
        for item in tuples:
            fields = [str(int(f)) if re.match(r'^[0-9]+\Z', f) else f for f in item.split(',')]
            fields[0] = _PRIVILEGES.get(fields[0], fields[0])
            normalized.append(tuple(fields))
        return tuple(sorted(normalized))
    return text


def is_maximum_control(attribute):
    """``project.max-shm-memory`` and the other ``*.max-*`` controls: a ceiling, met by a higher one."""
    return bool(_RCTL_NAME.match(attribute or '')) and '.max-' in attribute


def meets_minimum(actual, desired):
    """Whether the control ``actual`` grants at least ``desired``: for each wanted
    (privilege, value, action) a tuple of the same privilege and action with a value as high."""
    have, want = normalize_attribute(actual), normalize_attribute(desired)
    if not isinstance(have, tuple) or not isinstance(want, tuple):
        return False
    for item in want:
        if not any(len(got) == len(item) and got[0] == item[0] and got[2:] == item[2:] and
                   got[1].isdigit() and item[1].isdigit() and int(got[1]) >= int(item[1]) for got in have):
            return False
    return True


def same_attribute(actual, desired):
    return actual is not None and normalize_attribute(actual) == normalize_attribute(desired)


def same_members(actual, desired):
    return sorted(actual) == sorted(desired)


def validate_name(name):
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 64:
        raise ProjectError('project name %r must start with a letter and hold only letters, digits, "_", "-" '
                           'and "." (at most 64)' % (name,))
    return name


def validate_id(name, id_):
    if isinstance(id_, bool) or not isinstance(id_, int) or not 0 <= id_ <= MAX_PROJECT_ID:
        raise ProjectError('project %s: id %r must be a whole number from 0 to %d' % (name, id_, MAX_PROJECT_ID))
    return id_


def validate_comment(name, comment):
    if not isinstance(comment, str) or ':' in comment or '\n' in comment:
        raise ProjectError('project %s: the comment must be text without ":" or a newline' % name)
    char = validate.bad_character(comment, name=False, allow='')
    if char is not None:
        raise ProjectError('project %s: the comment %r contains %s' % (name, comment, validate.describe(char)))
    return comment


def validate_members(name, field, members):
    if isinstance(members, str):
        members = [m for m in members.split(',') if m]
    if not isinstance(members, (list, tuple)):
        raise ProjectError('project %s: %s must be a list of names' % (name, field))
    for member in members:
        if not isinstance(member, str) or not _MEMBER.match(member):
            raise ProjectError('project %s: %s entry %r is not a name, "*", "!name" or "!*"' % (name, field, member))
    return list(members)


def validate_attribute(name, attribute, value):
    if not isinstance(attribute, str) or not _ATTRIBUTE_NAME.match(attribute):
        raise ProjectError('project %s: attribute name %r is not valid' % (name, attribute))
    if value is None:
        return None
    if isinstance(value, bool):
        raise ProjectError('project %s: attribute %s: a boolean is not a value' % (name, attribute))
    text = str(value).strip()
    if any(char in text for char in ';:\n'):
        raise ProjectError('project %s: attribute %s: the value must not contain ";", ":" or a newline'
                           % (name, attribute))
    char = validate.bad_character(text, name=True, allow=' ')
    if char is not None:
        raise ProjectError('project %s: attribute %s: the value %r contains %s'
                           % (name, attribute, text, validate.describe(char)))
    if text.startswith('(') or _RCTL_NAME.match(attribute):
        if not _TUPLE.findall(text) or _TUPLE.sub('', text).strip(',').strip():
            raise ProjectError('project %s: attribute %s: %r is not a resource control value such as '
                               '(privileged,8589934592,deny)' % (name, attribute, value))
        items = []
        for item in _TUPLE.findall(text):
            fields = [f.strip() for f in item.split(',')]
            if len(fields) < 3 or fields[0].lower() not in _PRIVILEGES:
                raise ProjectError('project %s: attribute %s: %r needs (privilege,value,action) with privilege '
                                   'basic or privileged' % (name, attribute, '(%s)' % item))
            fields[1] = _plain_value(name, attribute, fields[1])
            items.append('(%s)' % ','.join(fields))
        return ','.join(items)
    return text


def _plain_value(name, attribute, value):
    """A control's value in plain decimal, as libproject reads it; units converted for byte controls."""
    match = _SIZE.match(value)
    if not match:
        raise ProjectError('project %s: attribute %s: value %r is not a whole number (libproject reads plain '
                           'decimal digits; a size such as 8G is converted for byte controls)'
                           % (name, attribute, value))
    if not match.group(2) and not value[len(match.group(1)):]:
        return str(int(match.group(1)))
    if not _BYTE_CONTROL.search(attribute):
        raise ProjectError('project %s: attribute %s: value %r has a unit, but %s is not a number of bytes; '
                           'give plain decimal digits' % (name, attribute, value, attribute))
    return str(int(match.group(1)) * 1024 ** _UNITS[match.group(2).lower()])
