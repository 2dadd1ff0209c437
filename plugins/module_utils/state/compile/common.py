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
import pwd

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import accounts
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError


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
    """The role's root variable ``name`` (default /), refused unless an absolute path."""
    root = variables.get(name) or '/'
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
    return accounts.passwd_row(root, user)


def group_gid(root, group):
    """The gid of ``group`` on the managed system, or None."""
    if root == '/':
        try:
            return grp.getgrnam(group).gr_gid
        except KeyError:
            return None
    return accounts.group_row(root, group)
