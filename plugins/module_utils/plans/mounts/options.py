# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: mount options as tokens: which contradict which, input checks, edits.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError

# Options of which at most one may be in effect: asking for one removes the others
# from the persisted line.  An option may sit in several groups.
EXCLUSIVE_GROUPS = (
    # VFS (Linux) and generic
    ('rw', 'ro'),
    ('atime', 'noatime', 'relatime', 'strictatime'),
    ('relatime', 'norelatime'),
    ('strictatime', 'nostrictatime'),
    ('diratime', 'nodiratime'),
    ('suid', 'nosuid'),
    ('dev', 'nodev'),
    ('exec', 'noexec'),
    ('sync', 'async'),
    ('lazytime', 'nolazytime'),
    ('mand', 'nomand'),
    ('iversion', 'noiversion'),
    ('symfollow', 'nosymfollow'),
    ('silent', 'loud'),
    ('auto', 'noauto'),
    ('user', 'nouser'),
    # ext4 / xfs
    ('acl', 'noacl'),
    ('user_xattr', 'nouser_xattr'),
    ('discard', 'nodiscard'),
    ('barrier', 'nobarrier'),
    ('delalloc', 'nodelalloc'),
    ('auto_da_alloc', 'noauto_da_alloc'),
    ('block_validity', 'noblock_validity'),
    ('dioread_lock', 'dioread_nolock'),
    ('grpid', 'bsdgroups', 'nogrpid', 'sysvgroups'),
    ('inode32', 'inode64'),
    ('attr2', 'noattr2'),
    ('largeio', 'nolargeio'),
    ('ikeep', 'noikeep'),
    # Solaris UFS, VxFS
    ('forcedirectio', 'noforcedirectio'),
    ('logging', 'nologging'),
    ('largefiles', 'nolargefiles'),
    ('setuid', 'nosetuid'),
    ('devices', 'nodevices'),
    ('xattr', 'noxattr'),
    ('intr', 'nointr'),
    ('dfratime', 'nodfratime'),
    ('nbmand', 'nonbmand'),
    ('quota', 'noquota'),
    ('qio', 'noqio'),
)

# Operations, not options: they cannot be persisted as "an option to ensure".
NOT_OPTIONS = frozenset(['remount', 'bind', 'rbind', 'move', 'rmove', 'make-shared', 'make-private'])

# Characters no mount option of Linux, Solaris or VxFS holds; a shell or a boot script
# would read them as the end of a command, a redirection or a quote.
SHELL_CHARACTERS = frozenset(';&|$`<>"\'(){}*?!')

# Linux options only mount(8) and the boot scripts read; the mount table never shows them.
LINUX_USERSPACE = frozenset(['defaults', 'auto', 'noauto', 'user', 'nouser', 'users', 'owner', 'group',
                             'nofail', '_netdev', 'loop'])
LINUX_USERSPACE_PREFIXES = ('x-', 'X-', 'comment=', 'loop=', 'offset=', 'sizelimit=', 'encryption=',
                            'uhelper=', 'helper=')


def option_key(token):
    """``mincache`` for ``mincache=direct``; the token itself for a flag."""
    return token.split('=', 1)[0]


def conflicts_of(token):
    """Tokens that cannot be in effect together with ``token`` (same group, or same key)."""
    found = set()
    for group in EXCLUSIVE_GROUPS:
        if token in group:
            found.update(group)
    found.discard(token)
    return found


def conflicts(token, other):
    """Does ``other`` contradict ``token`` (another member of its group, or the same key
    with another value)?"""
    if token == other:
        return False
    if '=' in token or '=' in other:
        return option_key(token) == option_key(other)
    return other in conflicts_of(token)


def matches_absent(absent_token, token):
    """Does the option ``token`` fall under an ``absent`` entry?  ``mincache`` covers any
    ``mincache=...``; ``mincache=direct`` only that value."""
    if token == absent_token:
        return True
    return '=' not in absent_token and option_key(token) == absent_token and '=' in token


def validate_option(token, what, vfstab=False):
    if not isinstance(token, str):
        raise InputError('%s: option %r is not a string' % (what, token))
    if token == '':
        raise InputError('%s: an option is empty' % (what,))
    for char, name in ((',', 'a comma'), ('#', 'a "#"'), ('\\', 'a backslash')):
        if char in token:
            raise InputError('%s: option %r contains %s; give each option as its own list item' % (what, token, name)
                             if char == ',' else '%s: option %r contains %s' % (what, token, name))
    # fstab and vfstab split their fields on blanks, and this module's own parser on any
    # Unicode space: no space, control or separator character of any kind (U+00A0, U+2028...).
    char = validate.bad_character(token, name=True)
    if char is not None:
        raise InputError('%s: option %r contains %s' % (what, token, validate.describe(char)))
    # Mount options are ASCII words: a letter from another script is a look-alike
    # (Cyrillic "о" in "nоatime") that the kernel and mount(8) would refuse, or take for
    # an unknown option, at the next boot.
    for char in token:
        if ord(char) > 126:
            raise InputError('%s: option %r contains %s, which is not ASCII; mount options are ASCII '
                             '(a look-alike of a Latin letter?)' % (what, token, validate.describe(char)))
    for char in token:
        if char in SHELL_CHARACTERS:
            raise InputError('%s: option %r contains %r, which no mount option holds' % (what, token, char))
    if token.startswith('='):
        raise InputError('%s: option %r has no name before "="' % (what, token))
    if token in NOT_OPTIONS:
        raise InputError('%s: %r is a mount operation, not an option to keep in the file' % (what, token))
    if vfstab and token == '-':
        raise InputError('%s: "-" is vfstab\'s empty field, not an option' % (what,))
    return token


def edit_options(tokens, present, absent):
    """Return the new option list: ``present`` ensured (an option replaces the members of its
    group and an older value of its key, in place), ``absent`` removed; all else kept in order."""
    new = list(tokens)
    for want in present:
        positions = [index for index, have in enumerate(new) if conflicts(want, have)]
        if want in new:
            new = [have for index, have in enumerate(new) if index not in positions]
        elif positions:
            new[positions[0]] = want
            new = [have for index, have in enumerate(new) if index not in positions[1:]]
        else:
            new.append(want)
    for unwanted in absent:
        new = [have for have in new if not matches_absent(unwanted, have)]
    return new


# Options that only some file system types know (mount(8) per type, mount_ufs(1M),
# mount_vxfs(1M)): on another type's line the mount fails or the option is ignored.
# Generic options (noatime, sync, ...) are in no entry and never reported.
OWN_OPTIONS = {
    'vxfs': ('mincache', 'convosync', 'qio', 'noqio', 'cio', 'delaylog', 'tmplog', 'blkclear', 'datainlog',
             'nodatainlog', 'largefiles', 'nolargefiles'),
    'ufs': ('forcedirectio', 'noforcedirectio', 'logging', 'nologging', 'largefiles', 'nolargefiles', 'onerror',
            'dfratime', 'nodfratime'),
    'ext4': ('data', 'journal_checksum', 'nojournal_checksum', 'journal_async_commit', 'delalloc', 'nodelalloc',
             'dioread_nolock', 'dioread_lock', 'auto_da_alloc', 'noauto_da_alloc', 'commit', 'stripe',
             'journal_ioprio', 'block_validity', 'noblock_validity', 'init_itable', 'noinit_itable'),
    'xfs': ('inode32', 'inode64', 'logbufs', 'logbsize', 'allocsize', 'largeio', 'nolargeio', 'ikeep', 'noikeep',
            'attr2', 'noattr2', 'swalloc', 'sunit', 'swidth', 'nouuid', 'logdev', 'rtdev', 'filestreams'),
}
# Types that take the options of another entry (ext3 journals like ext4).
SAME_OPTIONS_AS = {'ext3': 'ext4'}


def foreign_options(fstype, tokens):
    """{type: [tokens]} of ``tokens`` that belong only to other file system types than ``fstype``;
    empty when the type is not known (auto, none, or missing)."""
    fstype = SAME_OPTIONS_AS.get(fstype, fstype)
    if not fstype or fstype in ('auto', 'none', '-'):
        return {}
    found = {}
    for token in tokens:
        owners = sorted(kind for kind, keys in OWN_OPTIONS.items() if option_key(token) in keys)
        if owners and fstype not in owners:
            found.setdefault(' or '.join(owners), []).append(token)
    return found
