# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: mount options, persisted (fstab, vfstab) and live, with remount.

The file formats are in formats/fstab.py, the option rules in plans/mounts/options.py,
what differs per platform in plans/mounts/platform.py.  Only the options field of the one
matching line is ever re-rendered; every other byte of the file is kept.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, check_regular, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    CHANGED, FAILED, OK, PENDING_REBOOT, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.formats.fstab import normalize_path
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.options import (
    conflicts, conflicts_of, edit_options, foreign_options, matches_absent, option_key, validate_option)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.platform import PLATFORMS, SunOS


class MountRequest(object):
    """One item of ``mounts`` as asked: a mount point, the options to ensure and to remove."""

    def __init__(self, path, present, absent):
        self.path = path
        self.present = present
        self.absent = absent


class Persisted(object):
    """The fstab (vfstab) as read: the host path, its text, the parsed table and
    {mount point: Entry} of the asked mount points."""

    def __init__(self, local_file, text, table, entries):
        self.local_file = local_file
        self.text = text
        self.table = table
        self.entries = entries


class Mount(object):
    """What apply() did for one request: the line, its new options, the live mount before
    and after, and the remount (its argv, why it failed or was skipped)."""

    def __init__(self, request, entry, live_before):
        self.path = request.path
        self.present = request.present
        self.absent = request.absent
        self.entry = entry
        self.new_options = edit_options(entry.options, request.present, request.absent)
        self.live_before = live_before
        self.live_after = None
        self.remount_argv = None
        self.remount_error = None
        self.remount_skipped = None


# live_root's default: / for the root /, else None (no live state)
FROM_ROOT = object()


def mount_list(options):
    """The mounts of a call: ``mounts``, or the one mount ``path``, ``present`` and ``absent`` name."""
    if options.mounts is not None:
        if options.present or options.absent:
            raise InputError('present and absent go inside each item of mounts, not beside it')
        return options.mounts
    return [dict(path=options.path, present=options.present, absent=options.absent)]


class MountOptions(Plan):
    """One run of the mount_options module: validate, plan, write, remount, report.

    Not on LivePlusFile (plans/base.py): a remount is not a live write of a value.  The file is
    written first (mount(8) merges the fstab line's options into a remount), then one command per
    mount point changes every option of it at once, and what is live is read back from the mount
    table as a whole, not key by key; a refused remount takes back the line already written, and a
    write is followed by ``systemctl daemon-reload``.  LivePlusFile writes live values one by one
    and then the file from what the system took.

    ``options``: the kind's options object (state/registry.py): ``mounts``, a list of {path,
    present, absent}, or ``path``, ``present`` and ``absent`` for one mount.  ``live_root``: where
    /proc (Linux) or /etc/mnttab (SunOS) are read from; None when the live state is not managed
    (the default for a ``root`` other than ``/``: remounting would act on the running host, not
    on the image; a test gives its tree).
    ``runner(argv)`` returns (rc, stdout, stderr).  ``systemd_running``: whether to run
    ``systemctl daemon-reload`` after the file is written (systemd makes its mount units
    from fstab; until a reload they keep the old options); default: the live host is
    booted with systemd.

    The hooks' shapes: desired is a list of MountRequest; live is {mount point: LiveMount}
    from the mount table, or None when it is not read; persisted is a Persisted; apply()
    returns {'mounts': [Mount], 'text': the file's text after, 'backup_file': path or None}.
    """

    source = 'task option: mount_options.present and absent'

    def failed_text(self, failed):
        # One line per mount point and option, whichever record it came from.
        lines = set('%s on %s (%s)' % (s.name, s.target, s.detail) for s in failed)
        return 'remount refused: %s' % ', '.join(sorted(lines))

    def __init__(self, options, context, live_root=FROM_ROOT, systemd_running=None):
        try:
            self.platform = platforms.pick(PLATFORMS, context.system_name)()
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.raw_mounts = mount_list(options)
        self.remount = options.remount
        self.file = options.fstab or self.platform.default_file
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.gate = context.gate
        self.runner = context.runner
        if live_root is FROM_ROOT:
            live_root = '/' if os.path.realpath(self.root) == '/' else None
        self.live_root = live_root
        self.mount_command = context.bin_path('mount', required=live_root is not None) or 'mount'
        if systemd_running is None:
            systemd_running = (live_root == '/' and self.runner is not None and self.platform.name == platforms.LINUX
                               and systemd.systemd_running('/'))
        self.systemd_running = systemd_running
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

    def _local_file(self):
        try:
            return rooted(self.root, self.file)
        except PathError as exc:
            raise InputError('fstab: %s' % exc)

    def validate(self):
        if not isinstance(self.raw_mounts, (list, tuple)) or not self.raw_mounts:
            raise InputError('give a mount point in path (with present/absent), or a non-empty list in mounts')
        validate.check_path(self.file, 'fstab')
        self._local_file()
        self.desired()  # every item checked (shape, path, options) before the host is read

    def desired(self):
        requests, seen = [], set()
        for number, item in enumerate(self.raw_mounts):
            request = self._request(number, item)
            if request.path in seen:
                raise InputError('mount point %s is given twice' % request.path)
            seen.add(request.path)
            requests.append(request)
        return requests

    def _request(self, number, item):
        """The MountRequest of mounts[number], or an InputError naming what is wrong with it."""
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
        return MountRequest(path, present, absent)

    # ---------------------------------------------------------------- persisted and live state
    def read_persisted(self, desired):
        local_file = self._local_file()
        check_regular(local_file)  # a masked fstab is said as such, not as missing
        text = read_text(local_file)
        if text is None:
            raise InputError('fstab: %s does not exist%s' % (
                self.file, '' if self.root == '/' else ' under root %s' % self.root))
        table = self.platform.parse_file(text)
        entries = {}
        for request in desired:
            found = table.find(request.path)
            if not found:
                raise InputError('mount point %s is not in %s' % (request.path, self.file))
            if len(found) > 1:
                raise InputError('mount point %s is on several lines of %s (%s); leave one'
                                 % (request.path, self.file, ', '.join(str(entry.lineno) for entry in found)))
            if found[0].fstype == 'swap':
                raise InputError('mount point %s: line %d of %s is swap, not a mounted file system'
                                 % (request.path, found[0].lineno, self.file))
            entries[request.path] = found[0]
        return Persisted(local_file, text, table, entries)

    def read_live(self, desired=None):
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

    def fixed_until_mount(self, mount, token):
        fstype = mount.live_before.fstype if mount.live_before else mount.entry.fstype
        return option_key(token) in self.platform.fixed_until_mount.get(fstype, ())

    # ---------------------------------------------------------------- apply
    def apply(self, desired, live, persisted, module):
        mounts = [Mount(request, persisted.entries[request.path], live.get(request.path) if live is not None else None)
                  for request in desired]
        self._refuse_ufs_only(mounts)
        changes = dict((mount.entry.index, mount.new_options) for mount in mounts
                       if mount.new_options != mount.entry.options)
        text_after = persisted.table.render(changes) if changes else persisted.text

        # Persist first: on Linux, mount(8) merges the fstab line's options into the remount.
        change = FileChange(persisted.local_file, persisted.text, text_after, self.file)
        backup_file = self.backup_file = self.gate.commit(change, module, self.backup)
        written = change.needed and self.gate.open
        reload_errors = [self._reload_units()] if written else []

        for mount in mounts:
            self._plan_remount(mount)
            if mount.remount_argv:
                self.gate.write(self._remount, mount)

        failed = set(mount.entry.index for mount in mounts if mount.remount_error)
        if failed and written:
            # What the system refused on remount would fail at the next mount too: take it back.
            kept = dict((index, options) for index, options in changes.items() if index not in failed)
            text_after = persisted.table.render(kept) if kept else persisted.text
            FileChange(persisted.local_file, read_text(persisted.local_file), text_after, self.file).apply(module)
            reload_errors.append(self._reload_units())
        live_after = None
        if self.gate.open and any(mount.remount_argv for mount in mounts):
            live_after = self.read_live() or {}   # read back after the remounts
        for mount in mounts:
            mount.live_after = live_after.get(mount.path) if live_after is not None else mount.live_before
        return {'mounts': mounts, 'text': text_after, 'backup_file': backup_file,
                'reload_errors': [error for error in reload_errors if error]}

    def _remount(self, mount):
        """Run one mount point's remount, noted first as what a revert cannot undo; its refusal in remount_error."""
        journal.before('unsupported', 'mount %s' % mount.path, root=self.root,
                       detail='remounted with %s (before: %s); a revert puts the file back but does not remount: '
                              'the mount keeps these options until it is mounted again' % (
                                  ','.join(mount.new_options), ','.join(mount.live_before.options) if mount.live_before else 'unknown'))
        rc, out, err = self.runner(mount.remount_argv)
        if rc != 0:
            mount.remount_error = (err or out or 'exit status %d' % rc).strip()
        else:
            journal.record('remounted %s' % mount.path)

    def _refuse_ufs_only(self, mounts):
        """Options only UFS has (forcedirectio: ufs_vfsops.c parses it, ZFS and the others do not)
        on a mount of another type: refused before the file is written or anything remounted."""
        for mount in mounts:
            fstype = mount.live_before.fstype if mount.live_before else mount.entry.fstype
            tokens = foreign_options(fstype, mount.present).get('ufs')
            if tokens:
                raise InputError('mount point %s: %s %s only for UFS, and %s is %s (line %d of %s); nothing was '
                                 'changed. ZFS has no direct I/O mount option: leave it out for ZFS'
                                 % (mount.path, ', '.join(tokens), 'exist' if len(tokens) > 1 else 'exists',
                                    mount.path, fstype, mount.entry.lineno, self.file))

    def _reload_units(self):
        """After a write: ``systemctl daemon-reload`` when systemd runs; its error, or None."""
        if not self.systemd_running:
            return None
        rc, out, err = self.runner(['systemctl', 'daemon-reload'])
        if rc == 0:
            return None
        return 'wrote %s but systemctl daemon-reload failed (%s): the mount units keep the old options until ' \
               'the next reload' % (self.file, (err or out or 'exit status %d' % rc).strip())

    def _plan_remount(self, mount):
        """Which options a remount must name, or why no remount happens."""
        live = mount.live_before
        if live is None:
            return
        tokens = []
        for token in mount.present:
            if self.live_ok(token, True, live.options) is False and not self.fixed_until_mount(mount, token):
                tokens.append(token)
        for token in mount.absent:
            if self.live_ok(token, False, live.options) is False and not self.fixed_until_mount(mount, token):
                if isinstance(self.platform, SunOS):
                    tokens.append(token)
                elif token in self.platform.revert:
                    tokens.append(self.platform.revert[token])
        if not tokens:
            return
        if not self.remount:
            mount.remount_skipped = 'remount=false'
            return
        tokens = [token for token in tokens if not self.platform.is_userspace(token)]
        mount.remount_argv = self.platform.remount_argv(self.mount_command, mount.entry, mount.new_options, tokens)

    # ---------------------------------------------------------------- render
    def render(self, result, desired, live, persisted, done):
        result.add_diff(self.file, persisted.text, done['text'])
        result.warnings.extend(done.get('reload_errors', []))
        for mount in done['mounts']:
            self._warn_foreign(result, mount)
            for token in mount.present:
                result.add(self._record(mount, token, True))
            for token in mount.absent:
                result.add(self._record(mount, token, False))
        result.extra['mounts'] = [self._summary(mount) for mount in done['mounts']]
        if done['backup_file'] and done['text'] != persisted.text:
            result.extra['backup_file'] = done['backup_file']

    def _warn_foreign(self, result, mount):
        """Say so when an option asked for belongs to another file system type than the line's."""
        fstype = mount.live_before.fstype if mount.live_before else mount.entry.fstype
        for owners, tokens in sorted(foreign_options(fstype, mount.present).items()):
            several = len(tokens) > 1
            result.warnings.append('%s: %s %s of %s, not of %s (line %d of %s): the mount may fail or ignore %s'
                                   % (mount.path, ', '.join(tokens), 'are options' if several else 'is an option',
                                      owners, fstype, mount.entry.lineno, self.file, 'them' if several else 'it'))

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

    def _notes(self, mount, token, wanted):
        """What the record says before any change: why the live side is not compared."""
        if self.live_root is None:
            return ['live state not read (root is not /)']
        if mount.live_before is None:
            return ['%s is not mounted: only %s is managed' % (mount.path, self.file)]
        if self.platform.is_userspace(token):
            return ['read by mount(8) only; the mount table does not show it']
        if not wanted and token in self.platform.shown_defaults:
            return ['a default the mount table shows anyway']
        return []

    def _live_detail(self, mount, token, wanted, live_shown):
        """(status needed, detail) for an option not in effect live before the run."""
        if self.fixed_until_mount(mount, token):
            return PENDING_REBOOT, '%s cannot change %s on remount: it takes effect at the next mount' % (
                mount.live_before.fstype, option_key(token))
        if mount.remount_skipped:
            return PENDING_REBOOT, 'remount is false: it takes effect at the next mount'
        if self.gate.check_mode:
            if not mount.remount_argv:
                return PENDING_REBOOT, 'no option undoes it on remount: it goes at the next mount'
            return None, 'would remount with %s' % ' '.join(mount.remount_argv)
        if self.live_ok(token, wanted, mount.live_after.options if mount.live_after else None) is not True:
            if mount.remount_argv:
                return PENDING_REBOOT, ('remounted (%s) but the mount table still shows %s: it takes effect at '
                                        'the next mount' % (' '.join(mount.remount_argv), live_shown or 'no such option'))
            return PENDING_REBOOT, 'no option undoes it on remount: it goes at the next mount'
        return None, 'remounted: %s' % ' '.join(mount.remount_argv)

    def _record(self, mount, token, wanted):
        # '<mount> <option>' (docs/USING.md): with several mounts, each one's rows stay apart
        name = '%s %s' % (mount.path, option_key(token) if wanted else token)
        desired = token if wanted else None
        entry_options = mount.entry.options
        if wanted:
            persisted_ok = token in entry_options and not any(conflicts(token, have) for have in entry_options)
        else:
            persisted_ok = not any(matches_absent(token, have) for have in entry_options)
        live_before = mount.live_before
        live_after = mount.live_after   # the gate kept back: as before
        live_ok = self.live_ok(token, wanted, live_before.options) if live_before else None
        live_shown = self._group_tokens(token, live_after.options, live=True) if live_after else None
        persisted_shown = self._group_tokens(token, self._persisted_now(mount))

        details = self._notes(mount, token, wanted)
        if mount.remount_error and (live_ok is False or not persisted_ok):
            details.append('remount refused (%s): %s; %s left as it was'
                           % (' '.join(mount.remount_argv), mount.remount_error, self.file))
            return Setting(name, mount.path, desired, live_shown, persisted_shown, FAILED, '; '.join(details))
        needs = None
        if live_ok is False:
            needs, detail = self._live_detail(mount, token, wanted, live_shown)
            details.append(detail)
        if not persisted_ok:
            details.insert(0, self.gate.did('edit %s line %d' % (self.file, mount.entry.lineno)))
        status = self.gate.status(live_ok, persisted_ok, live_needs=needs)
        if status == OK and not details:
            details.append('in effect and in %s' % self.file)
        if status == CHANGED and not details:
            details.append('changed')
        return Setting(name, mount.path, desired, live_shown, persisted_shown, status, '; '.join(details))

    def _persisted_now(self, mount):
        """The options the file holds for ``mount`` now: as before when kept back or refused, else the new ones."""
        return mount.entry.options if mount.remount_error else self.gate.now(mount.entry.options, mount.new_options)

    def _summary(self, mount):
        live_before = mount.live_before
        live_after = mount.live_after
        persisted = self._persisted_now(mount)
        return {
            'path': mount.path,
            'fstype': mount.entry.fstype,
            'file': self.file,
            'line': mount.entry.lineno,
            'persisted_before': ','.join(mount.entry.options),
            'persisted': ','.join(persisted),
            'mounted': live_before is not None if self.live_root is not None else None,
            'live_before': ','.join(live_before.options) if live_before else None,
            'live': ','.join(live_after.options) if live_after else None,
            'remount_command': self.gate.now(None, mount.remount_argv or None),
            'remount_error': mount.remount_error,
        }
