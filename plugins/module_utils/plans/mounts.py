# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: mount options, persisted (fstab, vfstab) and live, with remount.

The file formats:

- Linux ``/etc/fstab`` (fstab(5)): six whitespace-separated fields
  ``spec file vfstype mntops freq passno``; the last three may be missing;
  spaces in a field are written ``\\040``; ``#`` starts a comment line.
- Solaris ``/etc/vfstab`` (vfstab(4)): seven fields ``device-to-mount device-to-fsck
  mount-point FS-type fsck-pass mount-at-boot mount-options``; ``-`` stands for an
  empty field, in particular for "no options".

Only the options field of the one matching line is ever re-rendered; every other
byte of the file (spacing, tabs, comments, other lines, line ends) is kept.

The live options come from ``/proc/self/mountinfo`` on Linux (per-mount and
per-super-block options, mount points escaped as ``\\040``) and ``/etc/mnttab`` on
SunOS (tab-separated: special, mount point, type, options, time).

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    CHANGED, FAILED, OK, PENDING_REBOOT, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan


# ---------------------------------------------------------------------------- options

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

# Linux options only mount(8) and the boot scripts read; the mount table never shows them.
LINUX_USERSPACE = frozenset(['defaults', 'auto', 'noauto', 'user', 'nouser', 'users', 'owner', 'group',
                             'nofail', '_netdev', 'loop'])
LINUX_USERSPACE_PREFIXES = ('x-', 'X-', 'comment=', 'loop=', 'offset=', 'sizelimit=', 'encryption=',
                            'uhelper=', 'helper=')


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
        return FstabFile(text)

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
        return VfstabFile(text)

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


# ---------------------------------------------------------------------------- file formats

_BLANKS = ' \t'
# fstab(5) escapes a space in a field as mountinfo does.
unescape = _mountinfo.unescape


def normalize_path(path):
    if len(path) > 1:
        path = path.rstrip('/') or '/'
    return path


class Entry(object):
    """One mount line of a file: where its fields are, so one field can be replaced."""

    def __init__(self, lineno, index, mount_point, fstype, options, source):
        self.lineno = lineno
        self.index = index
        self.mount_point = mount_point
        self.fstype = fstype
        self.options = options
        self.source = source


class _TableFile(object):
    """Lines kept as (lead, fields, separators, trail, eol) so that rendering an untouched
    line gives back its exact bytes."""

    mount_field = None
    type_field = None
    options_field = None
    min_fields = None
    empty_options = None

    def __init__(self, text):
        self.text = text or ''
        self.lines = []
        for raw in self.text.splitlines(True):
            body = raw.rstrip('\r\n')
            eol = raw[len(body):]
            # Fields are separated by blanks (fstab(5), vfstab(4): spaces and tabs) and by
            # nothing else: a U+00A0 inside a field stays part of it, as mount(8) reads it.
            stripped = body.strip(_BLANKS)
            if not stripped or stripped.startswith('#'):
                self.lines.append((raw, None))
                continue
            lead = body[:len(body) - len(body.lstrip(_BLANKS))]
            trail = body[len(body.rstrip(_BLANKS)):]
            parts = re.split(r'([ \t]+)', stripped)
            self.lines.append((raw, (lead, parts[0::2], parts[1::2], trail, eol)))

    def entries(self):
        found = []
        for index, (dummy, parsed) in enumerate(self.lines):
            if parsed is None:
                continue
            fields = parsed[1]
            if len(fields) <= self.type_field or len(fields) < self.min_fields:
                continue
            options = fields[self.options_field] if len(fields) > self.options_field else None
            found.append(Entry(index + 1, index, normalize_path(unescape(fields[self.mount_field])),
                               fields[self.type_field], self.split_options(options), fields[0]))
        return found

    def find(self, path):
        return [entry for entry in self.entries() if entry.mount_point == path]

    def split_options(self, field):
        if field is None or field == self.empty_options:
            return []
        return [token for token in field.split(',') if token != '']

    def options_text(self, tokens):
        return ','.join(tokens) if tokens else self.empty_options

    def render(self, changes):
        """``changes``: {line index: new option list}.  Every other line is kept byte for byte."""
        output = []
        for index, (raw, parsed) in enumerate(self.lines):
            if index not in changes:
                output.append(raw)
                continue
            lead, fields, seps, trail, eol = parsed
            fields = list(fields)
            seps = list(seps)
            text = self.options_text(changes[index])
            if len(fields) > self.options_field:
                fields[self.options_field] = text
            else:
                # fstab lines may stop after the type; add the options with the line's own separator.
                while len(fields) <= self.options_field:
                    seps.append(seps[-1] if seps else '\t')
                    fields.append(text if len(fields) == self.options_field else '-')
            body = fields[0] + ''.join(sep + field for sep, field in zip(seps, fields[1:]))
            output.append(lead + body + trail + eol)
        return ''.join(output)


class FstabFile(_TableFile):
    mount_field = 1
    type_field = 2
    options_field = 3
    min_fields = 3
    # fstab has no empty options field: "defaults" is how it says "nothing special".
    empty_options = 'defaults'

    def split_options(self, field):
        # "defaults" is kept as an option like any other: adding noatime gives "defaults,noatime".
        if field is None:
            return []
        return [token for token in field.split(',') if token != '']

    def options_text(self, tokens):
        return ','.join(tokens) if tokens else 'defaults'


class VfstabFile(_TableFile):
    mount_field = 2
    type_field = 3
    options_field = 6
    min_fields = 7
    empty_options = '-'


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
        mount_point = normalize_path(mount.mount_point)
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
        mount_point = normalize_path(fields[1])
        options = [token for token in fields[3].split(',') if token and not token.startswith('dev=')]
        mounts[mount_point] = LiveMount(mount_point, fields[2], fields[0], options)
    return mounts


# ---------------------------------------------------------------------------- the plan

class MountRequest(object):
    def __init__(self, path, present, absent):
        self.path = path
        self.present = present
        self.absent = absent
        self.entry = None
        self.new_options = None
        self.live_before = None
        self.live_after = None
        self.remount_argv = None
        self.remount_error = None
        self.remount_skipped = None


class MountOptions(Plan):
    """One run of the mount_options module: validate, plan, write, remount, report.

    ``mounts``: a list of {path, present, absent}.  ``live_root``: where /proc (Linux) or
    /etc/mnttab (SunOS) are read from; None when the live state is not managed (a ``root``
    other than ``/``: remounting would act on the running host, not on the image).
    ``runner(argv)`` returns (rc, stdout, stderr).
    """

    def failed_text(self, failed):
        # One line per mount point and option, whichever record it came from.
        lines = set('%s on %s (%s)' % (s.name, s.target, s.detail) for s in failed)
        return 'remount refused: %s' % ', '.join(sorted(lines))

    def __init__(self, mounts, remount=True, file=None, root='/', backup=False, check_mode=False,
                 system_name=None, runner=None, live_root='/', mount_command='mount'):
        try:
            self.platform = platforms.pick(PLATFORMS, system_name)()
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.raw_mounts = mounts
        self.remount = remount
        self.file = file or self.platform.default_file
        self.root = validate.check_root(root)
        self.backup = backup
        self.check_mode = check_mode
        self.runner = runner
        self.live_root = live_root
        self.mount_command = mount_command
        self.requests = []
        self.backup_file = None

    # ---------------------------------------------------------------- validation
    def _option_list(self, value, what):
        if value is None:
            return []
        if isinstance(value, str):
            raise InputError('%s must be a list of options, not the string %r' % (what, value))
        if not isinstance(value, (list, tuple)):
            raise InputError('%s must be a list of options' % (what,))
        vfstab = isinstance(self.platform, SunOS)
        tokens = []
        for token in value:
            validate_option(token, what, vfstab)
            if token not in tokens:
                tokens.append(token)
        return tokens

    def validate(self):
        if not isinstance(self.raw_mounts, (list, tuple)) or not self.raw_mounts:
            raise InputError('give a mount point in path (with present/absent), or a non-empty list in mounts')
        validate.check_path(self.file, 'fstab')
        try:
            local_file = rooted(self.root, self.file)
        except PathError as exc:
            raise InputError('fstab: %s' % exc)
        text = read_text(local_file)
        if text is None:
            raise InputError('fstab: %s does not exist%s' % (
                self.file, '' if self.root == '/' else ' under root %s' % self.root))
        table = self.platform.parse_file(text)
        seen = set()
        for number, item in enumerate(self.raw_mounts):
            if not isinstance(item, dict):
                raise InputError('mounts[%d] must be a dict with path, present and absent' % number)
            unknown = set(item) - set(['path', 'present', 'absent'])
            if unknown:
                raise InputError('mounts[%d]: unknown key(s) %s' % (number, ', '.join(sorted(unknown))))
            path = item.get('path')
            if not isinstance(path, str) or not path:
                raise InputError('mounts[%d]: path is required' % number)
            # A mount point may hold an ASCII space (fstab writes it \\040), no other space.
            validate.check_path(path, 'mounts[%d].path' % number)
            what = 'mount point %s' % path
            try:
                rooted('/', path)
            except PathError as exc:
                raise InputError('%s: %s' % (what, exc))
            path = normalize_path(path)
            if path in seen:
                raise InputError('mount point %s is given twice' % path)
            seen.add(path)
            present = self._option_list(item.get('present'), '%s: present' % what)
            absent = self._option_list(item.get('absent'), '%s: absent' % what)
            if not present and not absent:
                raise InputError('%s: nothing asked (present and absent are both empty)' % what)
            for index, want in enumerate(present):
                for other in present[index + 1:]:
                    if conflicts(want, other):
                        raise InputError('%s: present asks for %r and %r, which contradict each other'
                                         % (what, want, other))
                for unwanted in absent:
                    if matches_absent(unwanted, want) or matches_absent(want, unwanted):
                        raise InputError('%s: %r is both present and absent' % (what, want))
            entries = table.find(path)
            if not entries:
                raise InputError('mount point %s is not in %s' % (path, self.file))
            if len(entries) > 1:
                raise InputError('mount point %s is on several lines of %s (%s); leave one'
                                 % (path, self.file, ', '.join(str(entry.lineno) for entry in entries)))
            entry = entries[0]
            if entry.fstype == 'swap':
                raise InputError('mount point %s: line %d of %s is swap, not a mounted file system'
                                 % (path, entry.lineno, self.file))
            request = MountRequest(path, present, absent)
            request.entry = entry
            self.requests.append(request)
        return local_file, text, table

    # ---------------------------------------------------------------- live state
    def read_live(self):
        if self.live_root is None:
            return None
        text = read_text(os.path.join(self.live_root, self.platform.live_file.lstrip('/')))
        if text is None:
            return None
        return self.platform.parse_live(text)

    def live_state(self, token, live_tokens):
        """True/False when the live table says whether ``token`` is in effect; None when
        the table cannot show it."""
        if live_tokens is None or self.platform.is_userspace(token):
            return None
        if token in live_tokens:
            return True
        if '=' in token:
            return False
        if token in self.platform.hidden_defaults:
            against = self.platform.live_conflicts.get(token, conflicts_of(token))
            return not any(other in live_tokens for other in against)
        return False

    def live_ok(self, token, wanted, live_tokens):
        if wanted:
            return self.live_state(token, live_tokens)
        if live_tokens is None or self.platform.is_userspace(token):
            return None
        if token in self.platform.shown_defaults:
            return None
        return not any(matches_absent(token, have) for have in live_tokens)

    def fixed_until_mount(self, request, token):
        fstype = request.live_before.fstype if request.live_before else request.entry.fstype
        return option_key(token) in self.platform.fixed_until_mount.get(fstype, ())

    # ---------------------------------------------------------------- run
    def run(self, module=None):
        local_file, text_before, table = self.validate()
        live_table = self.read_live()

        changes = {}
        for request in self.requests:
            request.new_options = edit_options(request.entry.options, request.present, request.absent)
            if request.new_options != request.entry.options:
                changes[request.entry.index] = request.new_options
            if live_table is not None:
                request.live_before = live_table.get(request.path)
        text_after = table.render(changes) if changes else text_before

        # Persist first: on Linux, mount(8) merges the fstab line's options into the remount.
        written = False
        if not self.check_mode and text_after != text_before:
            self.backup_file = FileChange(local_file, text_before, text_after, self.file).apply(
                module, backup_file=self.backup)
            written = True

        for request in self.requests:
            self._plan_remount(request)
            if self.check_mode or not request.remount_argv:
                continue
            rc, out, err = self.runner(request.remount_argv)
            if rc != 0:
                request.remount_error = (err or out or 'exit status %d' % rc).strip()

        failed = [request for request in self.requests if request.remount_error]
        if failed and written:
            # What the system refused on remount would fail at the next mount too: take it back.
            kept = dict((index, options) for index, options in changes.items()
                        if index not in set(request.entry.index for request in failed))
            text_after = table.render(kept) if kept else text_before
            FileChange(local_file, read_text(local_file), text_after, self.file).apply(module)
        if not self.check_mode and any(request.remount_argv for request in self.requests):
            live_after = self.read_live() or {}
            for request in self.requests:
                request.live_after = live_after.get(request.path)
        else:
            for request in self.requests:
                request.live_after = request.live_before

        result = Result(self.check_mode)
        result.add_diff(self.file, text_before, text_after)
        for request in self.requests:
            for token in request.present:
                result.add(self._record(request, token, True))
            for token in request.absent:
                result.add(self._record(request, token, False))
        result.extra['mounts'] = [self._summary(request) for request in self.requests]
        if self.backup_file and text_after != text_before:
            result.extra['backup_file'] = self.backup_file
        return result

    def _plan_remount(self, request):
        """Which options a remount must name, or why no remount happens."""
        live = request.live_before
        if live is None:
            return
        tokens = []
        for token in request.present:
            if self.live_ok(token, True, live.options) is False and not self.fixed_until_mount(request, token):
                tokens.append(token)
        for token in request.absent:
            if self.live_ok(token, False, live.options) is False and not self.fixed_until_mount(request, token):
                if isinstance(self.platform, SunOS):
                    tokens.append(token)
                elif token in self.platform.revert:
                    tokens.append(self.platform.revert[token])
        if not tokens:
            return
        if not self.remount:
            request.remount_skipped = 'remount=false'
            return
        tokens = [token for token in tokens if not self.platform.is_userspace(token)]
        request.remount_argv = self.platform.remount_argv(self.mount_command, request.entry, request.new_options,
                                                          tokens)

    def _group_tokens(self, token, tokens, live=False):
        if tokens is None:
            return None
        related = [have for have in tokens if have == token or conflicts(token, have)
                   or matches_absent(token, have)]
        if not related and live:
            # The mount table leaves defaults out (noforcedirectio, exec...): name the one in effect.
            related = [default for default in sorted(conflicts_of(token) | set([token]))
                       if default in self.platform.hidden_defaults and '=' not in default][:1]
        return ','.join(related) if related else None

    def _record(self, request, token, wanted):
        name = option_key(token) if wanted else token
        desired = token if wanted else None
        entry_options = request.entry.options
        persisted_before = self._group_tokens(token, entry_options)
        persisted_after = self._group_tokens(token, request.new_options)
        if wanted:
            persisted_ok = token in entry_options and not any(conflicts(token, have) for have in entry_options)
        else:
            persisted_ok = not any(matches_absent(token, have) for have in entry_options)

        live_before = request.live_before
        live_after = request.live_after if not self.check_mode else live_before
        live_ok = self.live_ok(token, wanted, live_before.options) if live_before else None
        live_shown = self._group_tokens(token, live_after.options, live=True) if live_after else None
        persisted_shown = persisted_before if self.check_mode or request.remount_error else persisted_after

        details = []
        needs = None
        if self.live_root is None:
            details.append('live state not read (root is not /)')
        elif live_before is None:
            details.append('%s is not mounted: only %s is managed' % (request.path, self.file))
        elif self.platform.is_userspace(token):
            details.append('read by mount(8) only; the mount table does not show it')
        elif not wanted and token in self.platform.shown_defaults:
            details.append('a default the mount table shows anyway')

        if request.remount_error and (live_ok is False or not persisted_ok):
            details.append('remount refused (%s): %s; %s left as it was'
                           % (' '.join(request.remount_argv), request.remount_error, self.file))
            return Setting(name, request.path, desired, live_shown, persisted_shown, FAILED, '; '.join(details))

        if live_ok is False:
            if self.fixed_until_mount(request, token):
                needs = PENDING_REBOOT
                details.append('%s cannot change %s on remount: it takes effect at the next mount'
                               % (live_before.fstype, option_key(token)))
            elif request.remount_skipped:
                needs = PENDING_REBOOT
                details.append('remount is false: it takes effect at the next mount')
            elif self.check_mode:
                if not request.remount_argv:
                    needs = PENDING_REBOOT
                    details.append('no option undoes it on remount: it goes at the next mount')
                else:
                    details.append('would remount with %s' % ' '.join(request.remount_argv))
            elif self.live_ok(token, wanted, live_after.options if live_after else None) is not True:
                needs = PENDING_REBOOT
                if request.remount_argv:
                    details.append('remounted (%s) but the mount table still shows %s: it takes effect at '
                                   'the next mount' % (' '.join(request.remount_argv), live_shown or 'no such option'))
                else:
                    details.append('no option undoes it on remount: it goes at the next mount')
            else:
                details.append('remounted: %s' % ' '.join(request.remount_argv))
        if not persisted_ok:
            details.insert(0, '%s %s line %d' % ('would edit' if self.check_mode else 'edited', self.file,
                                                 request.entry.lineno))
        status = decide_status(live_ok, persisted_ok, self.check_mode, live_needs=needs)
        if status == OK and not details:
            details.append('in effect and in %s' % self.file)
        if status == CHANGED and not details:
            details.append('changed')
        return Setting(name, request.path, desired, live_shown, persisted_shown, status, '; '.join(details))

    def _summary(self, request):
        live_before = request.live_before
        live_after = request.live_after if not self.check_mode else live_before
        persisted = request.entry.options if (self.check_mode or request.remount_error) else request.new_options
        return {
            'path': request.path,
            'fstype': request.entry.fstype,
            'file': self.file,
            'line': request.entry.lineno,
            'persisted_before': ','.join(request.entry.options),
            'persisted': ','.join(persisted),
            'mounted': live_before is not None if self.live_root is not None else None,
            'live_before': ','.join(live_before.options) if live_before else None,
            'live': ','.join(live_after.options) if live_after else None,
            'remount_command': request.remount_argv if (request.remount_argv and not self.check_mode) else None,
            'remount_error': request.remount_error,
        }
