# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what every role's compile step shares (Call, values, flags, root, accounts).

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
    """One plan to run: ``kind`` names the kind (state/registry.py KINDS), ``kwargs`` its module's options;
    ``source``: on whose word every record of the call stands, for a call whose records the desired state
    does not hold (kernel_params_absent's keys, which are removed)."""

    def __init__(self, kind, owner, kwargs, label=None, source=None):
        self.kind = kind
        self.owner = owner
        self.kwargs = kwargs
        self.label = label or kind
        self.source = source


def text(value):
    """A variable's value as the text a record compares: a list is its items joined by spaces."""
    if isinstance(value, (list, tuple)):
        return ' '.join(str(v) for v in value)
    return str(value)


# Ansible's boolean spellings (ansible.module_utils.parsing.convert_bool, the rules argument_specs
# apply to a role's bool options): a string is compared lower-cased and stripped.
TRUE_WORDS = frozenset(('y', 'yes', 'on', '1', 'true', 't'))
FALSE_WORDS = frozenset(('n', 'no', 'off', '0', 'false', 'f'))


def to_flag(value, name):
    """``value`` as a bool by Ansible's boolean rules; anything else is refused, naming ``name``.

    ``-e kernel_params_apply=false`` and ``kernel_params_apply=no`` in an INI inventory arrive as
    strings: each means what it says, and a word that is neither (``maybe``) is an error, never true.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, bytes):
        value = value.decode('utf-8', 'replace')
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise InputError('%s: %r is not a boolean (true/false, yes/no, on/off, 1/0)' % (name, value))


def role_var(variables, name):
    """The role variable ``name``, which has a default in its role's defaults/main.yml.

    That file is the one place a default is written: host_state's action plugin sends every
    role variable that has one, with the host's value where it sets one. A missing name means
    the module was called without the action plugin and with incomplete ``inputs``: it is
    refused, never given a second, possibly different, default here.
    """
    if name not in variables:
        raise InputError('%s: not given; host_state takes every variable of a role, with its default from the '
                         "role's defaults/main.yml, through its action plugin" % name)
    return variables[name]


def flag(variables, name):
    """The role variable ``name`` as a bool (Ansible's rules, see to_flag)."""
    return to_flag(role_var(variables, name), name)


def root_of(variables, name):
    """The role's root variable ``name``, refused unless an absolute path.

    An empty string is refused, not read as /: it is what an unset variable gives.
    """
    root = role_var(variables, name)
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
