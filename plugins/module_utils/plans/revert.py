# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: revert, the host put back as its baseline says it was before tuning.

The baseline (engine/baseline.py) holds, for each root, every file the collection wrote or
removed (its content, mode and owner, or that it did not exist, with the folders made for
it) and every kernel pseudo-file it wrote (the value before).  A revert:

1. puts every file back (atomically, through files.write_atomic), removes the files that did
   not exist and then the folders made for them, when empty;
2. runs the reloads the apply of those files runs: ``udevadm control --reload`` after udev
   rules, ``systemctl daemon-reload`` after unit drop-ins and fstab (on the running system,
   when the program is there and systemd runs).  No ``udevadm trigger`` and no
   ``sysctl --system``: the live values are written back directly, which touches nothing
   else;
3. writes every live value back and reads it again;
4. reports what it cannot put back (``unsupported``, with why), and what waits for a
   restart (a service's drop-in, limits.d for new sessions, a database's parameter file) or
   a reboot (fstab: the mount keeps its options until it is mounted again).

A second revert finds everything as the baseline says and changes nothing.  When every
item was put back, the baseline is marked ``reverted`` (kept, so that the second revert can
say so); the next apply starts a new one.  Check mode changes nothing and shows each file's
diff.  Nothing is captured while reverting (``captures_baseline``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import files
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError, host_error
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    CHANGED, DRIFT, FAILED, OK, PENDING_REBOOT, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

UDEV, UNITS = 'udev', 'systemd'


def _service(key):
    """The unit a drop-in belongs to: /etc/systemd/system/postgresql.service.d/x.conf -> postgresql.service."""
    folder = os.path.basename(os.path.dirname(key))
    return folder[:-2] if folder.endswith('.d') else folder


def consequence(key, kind):
    """(reload or None, what waits, why) for a file put back: what its apply would run and what a
    change of it waits for."""
    if key.startswith(('/etc/udev/rules.d/', '/run/udev/rules.d/')):
        return UDEV, None, 'the udev rules are reloaded; the devices got their values back directly'
    if key.startswith(('/etc/systemd/', '/run/systemd/')):
        return UNITS, PENDING_RESTART, '%s takes it at its next restart (after systemctl daemon-reload)' % _service(key)
    if key in ('/etc/fstab',):
        return UNITS, PENDING_REBOOT, 'the mounts keep their options until they are mounted again (remount or reboot)'
    if key == '/etc/vfstab':
        return None, PENDING_REBOOT, 'the mounts keep their options until they are mounted again (remount or reboot)'
    if key.startswith('/etc/security/limits'):
        return None, PENDING_RESTART, 'login sessions started from now on get it; running processes keep their limits'
    if key == '/etc/system':
        return None, PENDING_REBOOT, 'read at the next boot'
    if kind == 'DbParameter':
        return None, PENDING_RESTART, 'the database server reads it at its next start (or reload, for some parameters)'
    return None, None, ''


def _pool_in_use(key, after, want):
    """A huge page pool the kernel kept above the smaller size written back: pages that running
    processes (a database's shared memory) hold are freed only when they release them."""
    if not key.endswith(('/nr_hugepages', '/nr_hugepages_mempolicy', '/nr_overcommit_hugepages')):
        return False
    try:
        return int(str(want).strip()) < int(str(after).strip())
    except (TypeError, ValueError):
        return False


def _in_use_detail(root, key, after, want):
    free = sysfs.read_value(files.kernel_path(root, os.path.dirname(key) + '/free_hugepages')) \
        if key.startswith('/sys/') else None
    held = ' (%d of them in use)' % (int(after) - int(free)) if free is not None and str(free).strip().isdigit() else ''
    return ('the kernel kept %s pages after %s was written%s: pages running processes hold (a database\'s shared '
            'memory) are freed when they release them, at a restart of the database or the next boot, whose '
            'sources are put back' % (str(after).strip(), want, held))


class Revert(Plan):
    """Put every root's files and live values back as its baseline holds them."""

    captures_baseline = False

    def __init__(self, roots, check_mode=False, runner=None, bin_path=None):
        self.roots = []
        for root in roots or ['/']:
            root = baseline.root_of(root)
            if root not in self.roots:
                self.roots.append(root)
        self.check_mode = check_mode
        self.runner = runner
        self.bin_path = bin_path or (lambda name, required=False: None)
        self.loaded = {}
        self.notes = []

    def lock_roots(self):
        return list(self.roots)

    def validate(self):
        self.loaded = dict((root, baseline.load(root)) for root in self.roots)
        if not any(self.loaded.values()):
            raise InputError('no baseline at %s: dbhost.tuning has not changed this host (or it was tuned before the '
                             'baseline was kept), so there is nothing to revert; nothing was changed'
                             % ', '.join(str(baseline.location(root)) for root in self.roots))
        for root, data in self.loaded.items():
            if data is None:
                self.notes.append('no baseline at %s: nothing there to revert' % baseline.location(root))

    def desired(self):
        items = []
        for root in self.roots:
            data = self.loaded.get(root)
            if data is None:
                continue
            for section in baseline.SECTIONS:
                items.extend((root, section, key, data[section][key]) for key in sorted(data[section]))
        return items

    def read_live(self, desired):
        """What each file and pseudo-file holds now: {(root, section, key): text or None}."""
        now = {}
        for root, section, key, entry in desired:
            if section == 'files':
                now[(root, section, key)] = files.read_text(files.rooted(root, key))
            elif section == 'live':
                now[(root, section, key)] = sysfs.read_value(files.kernel_path(root, key))
        return now

    # ------------------------------------------------------------------ apply
    def apply(self, desired, live, persisted, module):
        done = {'files': {}, 'live': {}, 'reloads': [], 'reload_errors': [], 'folders': {}}
        wanted = set()
        # the files this revert removes: a folder made for one of them may hold another
        going = set(files.rooted(root, key) for root, section, key, entry in desired
                    if section == 'files' and not entry['existed'] and live[(root, section, key)] is not None)
        emptied = []
        for root, section, key, entry in desired:
            if section != 'files':
                continue
            want = entry['content'] if entry['existed'] else None
            change = files.FileChange(files.rooted(root, key), live[(root, section, key)], want, key, root=root)
            folders = self._folders_left(root, key, entry, going) if not entry['existed'] else []
            done['folders'][(root, key)] = folders
            if not (change.needed or folders):
                continue
            reload_kind = consequence(key, entry.get('kind'))[0]
            if reload_kind:
                wanted.add(reload_kind)
            if self.check_mode:
                continue
            if change.needed:
                change.tidy()
                change.apply(module, mode=entry.get('mode', 0o644))
            if change.needed and entry['existed']:
                self._restore_metadata(files.rooted(root, key), entry)
            emptied.extend(files.rooted(root, folder) for folder in folders)
            done['files'][(root, key)] = True
        # once every file is handled, innermost first
        for host in sorted(set(emptied), key=lambda path: (-path.count(os.sep), path)):
            try:
                os.rmdir(host)
            except OSError as exc:
                raise host_error('removing the folder', host, exc)
            journal.record('removed the folder %s' % host)
        if not self.check_mode:
            self._reload(wanted, done)
        for root, section, key, entry in desired:
            if section != 'live' or self.check_mode:
                continue
            now = live[(root, section, key)]
            if now is None or compare.same_value(now, entry['value']):
                continue
            host = files.kernel_path(root, key)
            try:
                sysfs.write_value(host, entry['value'])
                done['live'][(root, key)] = (sysfs.read_value(host), None)
            except sysfs.SysfsError as exc:
                done['live'][(root, key)] = (sysfs.read_value(host), str(exc))
        return done

    @staticmethod
    def _folders_left(root, key, entry, going=()):
        """The folders made for a file that did not exist, innermost first, that would be empty once
        the file and the other files this revert removes (``going``, host paths) are gone."""
        left = []
        expect = os.path.basename(key)
        for folder in reversed(entry.get('folders') or []):
            host = files.rooted(root, folder)
            if os.path.isdir(host) and not os.path.islink(host):
                removed = set(os.path.basename(path) for path in going if os.path.dirname(path) == host)
                if set(os.listdir(host)) - set([expect]) - removed:
                    break
                left.append(folder)
            expect = os.path.basename(folder)
        return left

    @staticmethod
    def _restore_metadata(host, entry):
        info = os.stat(host)
        if info.st_mode & 0o7777 != entry['mode']:
            os.chmod(host, entry['mode'])
        uid, gid = entry.get('uid', info.st_uid), entry.get('gid', info.st_gid)
        if (info.st_uid, info.st_gid) != (uid, gid) and os.geteuid() == 0:
            os.chown(host, uid, gid)

    def _reload(self, wanted, done):
        """The reloads the files put back need, on the running system only."""
        if not wanted or self.runner is None or any(os.path.realpath(root) != '/' for root in self.roots):
            return
        commands = []
        if UDEV in wanted and self.bin_path('udevadm'):
            commands.append([self.bin_path('udevadm'), 'control', '--reload'])
        if UNITS in wanted and systemd.systemd_running('/'):
            commands.append(['systemctl', 'daemon-reload'])
        for argv in commands:
            rc, out, err = self.runner(argv)
            done['reloads'].append(' '.join(argv[-2:]) if argv[0] == 'systemctl' else 'udevadm control --reload')
            if rc != 0:
                done['reload_errors'].append('%s failed (%s)' % (' '.join(argv), (err or out or 'exit status %d' % rc)
                                                                 .strip()))

    # ----------------------------------------------------------------- render
    def render(self, result, desired, live, persisted, done):
        complete = True
        for root, section, key, entry in desired:
            if section == 'files':
                setting = self._file_record(result, root, key, entry, live[(root, section, key)], done)
            elif section == 'live':
                setting = self._live_record(root, key, entry, live[(root, section, key)], done)
            else:
                setting = Setting(key, key, None, None, None, UNSUPPORTED,
                                  'a revert cannot put this back: %s' % entry['detail'])
            complete = complete and setting.status not in (FAILED, DRIFT)
            result.add(setting)
        result.warnings.extend(done['reload_errors'])
        result.extra['reloads'] = done['reloads']
        result.extra['notes'] = list(self.notes)
        result.extra['baselines'] = [str(baseline.location(root)) for root in self.roots if self.loaded.get(root)]
        if not self.check_mode and complete:
            self._mark_reverted()

    def _file_record(self, result, root, key, entry, before, done):
        want = entry['content'] if entry['existed'] else None
        folders = done['folders'].get((root, key)) or []
        needed = before != want or bool(folders)
        result.add_diff(key, before, want)
        desired = 'as before tuning (%d bytes)' % len(want) if want is not None else 'absent'
        now = 'absent' if before is None else 'present' if want is None else \
            'as before tuning' if before == want else 'changed since (%d bytes)' % len(before)
        reload_kind, waits, why = consequence(key, entry.get('kind'))
        if not needed:
            return Setting(key, key, desired, None, now, OK, 'as before tuning')
        made = ('; the folders made for it removed: %s' % ', '.join(folders)) if folders else ''
        action = 'restored' if want is not None else 'removed (it did not exist before tuning)'
        if self.check_mode:
            return Setting(key, key, desired, None, now, DRIFT, 'would be %s%s' % (action, made))
        result.mark_changed()
        detail = '%s%s%s' % (action, made, ('; ' + why) if why else '')
        return Setting(key, key, desired, None, desired, waits or CHANGED, detail)

    def _live_record(self, root, key, entry, before, done):
        want = entry['value']
        if before is None:
            return Setting(key, key, want, None, None, UNSUPPORTED,
                           '%s is not there any more (a device or a kernel module gone?): nothing to put back' % key)
        if compare.same_value(before, want):
            return Setting(key, key, want, before, None, OK, 'as before tuning')
        if self.check_mode:
            return Setting(key, key, want, before, None, DRIFT, 'would be set back from %s' % before)
        after, error = done['live'].get((root, key), (before, 'not written'))
        if not error and _pool_in_use(key, after, want):
            return Setting(key, key, want, after, None, PENDING_RESTART, _in_use_detail(root, key, after, want))
        if error or not compare.same_value(after, want):
            return Setting(key, key, want, after, None, FAILED,
                           error or 'the kernel kept %s after %s was written' % (after, want))
        return Setting(key, key, want, after, None, CHANGED, 'set back from %s' % before)

    def _mark_reverted(self):
        for root, data in self.loaded.items():
            if data is None or data['state'] == baseline.REVERTED:
                continue
            baseline.save(root, dict(data, state=baseline.REVERTED, reverted=baseline.now()))

    failed_label = 'not put back'
