# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a user account of the managed system (uid, primary gid, groups).

Under root ``/`` the system's own lookup answers (pwd and grp, so NSS sources such as LDAP
count, as they do for pam_limits); under another root the tree's etc/passwd and etc/group
are read, through files.read_text so that a link never leads out of root.

A user is in a group when the group is the user's primary group or lists the user as a
member: the rule of pam_modutil_user_in_group_nam_nam, which pam_limits uses for ``@group``.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text


class Account(object):
    """``name``, ``uid``, ``gid`` (primary) and ``groups`` ({group name: gid}, the primary one included)."""

    __slots__ = ('name', 'uid', 'gid', 'groups')

    def __init__(self, name, uid, gid, groups):
        self.name = name
        self.uid = uid
        self.gid = gid
        self.groups = dict(groups)

    def in_group(self, name):
        return name in self.groups

    def in_gid(self, gid):
        return gid == self.gid or gid in self.groups.values()

    def __repr__(self):
        return 'Account(%r, uid=%r, gid=%r, groups=%r)' % (self.name, self.uid, self.gid, sorted(self.groups))


def _table(root, name):
    """The rows of etc/<name> under ``root`` as lists of fields; [] when absent."""
    try:
        content = read_text(os.path.join(root, 'etc', name), root=root)
    except (IOError, OSError):
        return []   # unreadable, or a link out of root (refused by read_text)
    return [line.split(':') for line in (content or '').splitlines() if line and not line.startswith('#')]


def _number(text):
    return int(text) if text.isdigit() else None


def passwd_row(root, user):
    """(uid, gid) of ``user`` in the tree's etc/passwd, or None."""
    for fields in _table(root, 'passwd'):
        if len(fields) >= 4 and fields[0] == user:
            uid, gid = _number(fields[2]), _number(fields[3])
            return None if uid is None or gid is None else (uid, gid)
    return None


def group_row(root, group):
    """The gid of ``group`` in the tree's etc/group, or None."""
    for fields in _table(root, 'group'):
        if len(fields) >= 3 and fields[0] == group:
            return _number(fields[2])
    return None


def lookup(root, user):
    """The Account of ``user`` on the system at ``root``, or None when there is no such user."""
    if (root or '/') == '/':
        return _lookup_system(user)
    ids = passwd_row(root, user)
    if ids is None:
        return None
    uid, gid = ids
    groups = {}
    for fields in _table(root, 'group'):
        if len(fields) < 4 or _number(fields[2]) is None:
            continue
        members = [member.strip() for member in fields[3].split(',') if member.strip()]
        if _number(fields[2]) == gid or user in members:
            groups.setdefault(fields[0], _number(fields[2]))
    return Account(user, uid, gid, groups)


def _lookup_system(user):
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return None
    groups = {}
    for group in grp.getgrall():
        if group.gr_gid == entry.pw_gid or user in group.gr_mem:
            groups.setdefault(group.gr_name, group.gr_gid)
    return Account(user, entry.pw_uid, entry.pw_gid, groups)
