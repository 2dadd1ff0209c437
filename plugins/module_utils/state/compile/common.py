# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what every role's compile step shares (Call, values, root, accounts).

A compile step (state/compile/<role>.py) takes the desired state being built (it uses its
add(), calls, messages, notes and restart_services: see state/desired.py DesiredState),
the role's variables and the host's facts, and adds its records and Calls.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text


class Call(object):
    """One plan to run: ``kind`` names the plan class (see state/host_state.py PLANS)."""

    def __init__(self, kind, owner, kwargs, label=None):
        self.kind = kind
        self.owner = owner
        self.kwargs = kwargs
        self.label = label or kind


def text(value):
    """A variable's value as the text a record compares: a list is its items joined by spaces."""
    if isinstance(value, (list, tuple)):
        return ' '.join(str(v) for v in value)
    return str(value)


def root_of(variables, name):
    """The role's root variable ``name`` (default /), refused unless an absolute path.

    An empty string is refused, not read as /: it is what an unset variable gives.
    """
    root = variables.get(name)
    if root is None:
        return '/'
    if not isinstance(root, str) or not root.startswith('/'):
        raise InputError('%s: %r is not an absolute path' % (name, root))
    return root


def passwd_entry(root, user):
    """(uid, gid) of ``user`` on the managed system, or None."""
    if root == '/':
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            return None
        return entry.pw_uid, entry.pw_gid
    fields = _etc_entry(root, 'passwd', user, 4)
    return (fields[2], fields[3]) if fields else None


def group_gid(root, group):
    """The gid of ``group`` on the managed system, or None."""
    if root == '/':
        try:
            return grp.getgrnam(group).gr_gid
        except KeyError:
            return None
    fields = _etc_entry(root, 'group', group, 3)
    return fields[2] if fields else None


def _etc_entry(root, table, name, width):
    """The line of /etc/passwd or /etc/group under ``root`` for ``name``, its fields from the
    third on as numbers; None when the file, the line or a number is missing."""
    try:
        content = read_text(os.path.join(root, 'etc', table), root=root)
    except (IOError, OSError):
        return None   # a link out of root is refused by read_text (PathError names it)
    for line in (content or '').splitlines():
        fields = line.split(':')
        if len(fields) >= width and fields[0] == name:
            try:
                return fields[:2] + [int(field) for field in fields[2:width]]
            except ValueError:
                return None
    return None
