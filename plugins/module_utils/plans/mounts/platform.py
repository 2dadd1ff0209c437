# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what differs between Linux and SunOS for mount options.

The persisted file (fstab on Linux, vfstab on SunOS: formats/fstab.py), the live table
and the remount command.  The live options come from ``/proc/self/mountinfo`` on Linux
(per-mount and per-super-block options, mount points escaped as ``\\040``) and
``/etc/mnttab`` on SunOS (tab-separated: special, mount point, type, options, time).

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import fstab
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.options import LINUX_USERSPACE, LINUX_USERSPACE_PREFIXES


class Platform(object):
    """What differs between Linux and SunOS: file format, live table, remount command."""

    name = None
    default_file = None
    # Options in effect when nothing of their group is shown in the mount table.
    hidden_defaults = frozenset()
    # Defaults the mount table always shows: removing them from the file changes nothing live.
    shown_defaults = frozenset()
    # For a live check only: what contradicts an option (default: its exclusive groups).
    live_conflicts = {}
    # What to pass on remount to undo an option that was removed from the file.
    revert = {}
    # {fstype: option keys that a remount cannot change}
    fixed_until_mount = {}

    def is_userspace(self, token):
        return False

    def live_table(self):
        raise NotImplementedError


class Linux(Platform):
    name = platforms.LINUX
    default_file = '/etc/fstab'
    live_file = '/proc/self/mountinfo'
    hidden_defaults = frozenset(['exec', 'suid', 'dev', 'async', 'diratime', 'atime', 'nomand', 'nolazytime',
                                 'loud', 'symfollow', 'nodiscard', 'barrier', 'delalloc', 'acl', 'user_xattr',
                                 'auto_da_alloc', 'noiversion'])
    shown_defaults = frozenset(['rw', 'relatime'])
    live_conflicts = {'atime': ('noatime',)}
    revert = {
        'ro': 'rw', 'noatime': 'relatime', 'strictatime': 'relatime', 'nodiratime': 'diratime',
        'nosuid': 'suid', 'nodev': 'dev', 'noexec': 'exec', 'sync': 'async', 'mand': 'nomand',
        'lazytime': 'nolazytime', 'nosymfollow': 'symfollow', 'discard': 'nodiscard',
        'nobarrier': 'barrier', 'nodelalloc': 'delalloc', 'noacl': 'acl', 'nouser_xattr': 'user_xattr',
        'noauto_da_alloc': 'auto_da_alloc',
    }
    _EXT = frozenset(['data', 'journal_dev', 'journal_path', 'journal_checksum', 'nojournal_checksum',
                      'journal_async_commit', 'dax', 'noload', 'norecovery'])
    fixed_until_mount = {
        'ext2': _EXT, 'ext3': _EXT, 'ext4': _EXT,
        'xfs': frozenset(['logbufs', 'logbsize', 'logdev', 'rtdev', 'allocsize', 'sunit', 'swidth', 'su', 'sw',
                          'largeio', 'nolargeio', 'noalign', 'nouuid', 'norecovery', 'wsync', 'ikeep', 'noikeep',
                          'attr2', 'noattr2', 'swalloc', 'dax', 'filestreams', 'quota', 'noquota', 'usrquota',
                          'uquota', 'grpquota', 'gquota', 'prjquota', 'pquota', 'uqnoenforce', 'gqnoenforce',
                          'pqnoenforce', 'qnoenforce']),
        'vxfs': frozenset(['blkclear', 'qio', 'noqio', 'cluster', 'largefiles', 'nolargefiles']),
    }

    def is_userspace(self, token):
        return token in LINUX_USERSPACE or token.startswith(LINUX_USERSPACE_PREFIXES)

    @staticmethod
    def parse_file(text):
        return fstab.FstabFile(text)

    @staticmethod
    def parse_live(text):
        return parse_mountinfo(text)

    @staticmethod
    def remount_argv(mount_command, entry, new_options, live_tokens):
        """``mount -o remount,<opts> <path>``: mount(8) merges the options of the (already
        rewritten) fstab line for <path>, and the ones named here win."""
        return [mount_command, '-o', ','.join(['remount'] + live_tokens), entry.mount_point]


class SunOS(Platform):
    name = platforms.SUNOS
    default_file = '/etc/vfstab'
    live_file = '/etc/mnttab'
    hidden_defaults = frozenset(['noforcedirectio', 'setuid', 'suid', 'devices', 'exec', 'nonbmand', 'dfratime',
                                 'noquota', 'atime'])
    shown_defaults = frozenset(['rw', 'intr', 'largefiles', 'logging', 'xattr'])
    live_conflicts = {'atime': ('noatime',)}
    revert = {}
    fixed_until_mount = {
        'vxfs': frozenset(['blkclear', 'qio', 'noqio', 'cluster', 'largefiles', 'nolargefiles']),
    }

    @staticmethod
    def parse_file(text):
        return fstab.VfstabFile(text)

    @staticmethod
    def parse_live(text):
        return parse_mnttab(text)

    @staticmethod
    def remount_argv(mount_command, entry, new_options, live_tokens):
        """``mount -F <fstype> -o remount,<opts> <mount point>``.  UFS resets every option not
        named on remount to its default, so <opts> is the whole new vfstab option list."""
        return [mount_command, '-F', entry.fstype, '-o', ','.join(['remount'] + list(new_options)),
                entry.mount_point]


PLATFORMS = {platforms.LINUX: Linux, platforms.SUNOS: SunOS}


# ---------------------------------------------------------------------------- live tables

class LiveMount(object):
    def __init__(self, mount_point, fstype, source, options):
        self.mount_point = mount_point
        self.fstype = fstype
        self.source = source
        self.options = options


def _merge_options(*lists):
    merged = []
    for tokens in lists:
        for token in tokens:
            if token and token not in merged:
                merged.append(token)
    return merged


def parse_mountinfo(text):
    """{mount point: LiveMount} from /proc/self/mountinfo (proc(5)); a later line (a mount
    stacked on top) wins.  Options are the per-mount ones, then the super-block ones."""
    mounts = {}
    for mount in _mountinfo.parse(text):
        mount_point = fstab.normalize_path(mount.mount_point)
        options = _merge_options(mount.options, mount.super_options)
        mounts[mount_point] = LiveMount(mount_point, mount.fstype, mount.source, options)
    return mounts


def parse_mnttab(text):
    """{mount point: LiveMount} from Solaris /etc/mnttab (mnttab(4)): special, mount point,
    fstype, options, time, separated by tabs.  ``dev=`` is the kernel's, not an option."""
    mounts = {}
    for line in (text or '').splitlines():
        fields = line.split('\t')
        if len(fields) < 4:
            continue
        mount_point = fstab.normalize_path(fields[1])
        options = [token for token in fields[3].split(',') if token and not token.startswith('dev=')]
        mounts[mount_point] = LiveMount(mount_point, fields[2], fields[0], options)
    return mounts
