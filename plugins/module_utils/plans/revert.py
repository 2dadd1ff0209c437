# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: revert, the host put back as its baseline says it was before tuning.

The baseline (engine/baseline.py) holds, for each root, every file the collection wrote or
removed (its content, mode and owner, or that it did not exist, with the folders made for
it) and every kernel pseudo-file it wrote (the value before).  A revert:

1. puts back, in every file, only the lines the collection's writes changed (engine/merge.py
   takes each write the baseline keeps back out of the text there now): every line an admin
   added or changed since stays byte for byte, and where an admin changed a line the
   collection wrote, the admin's line stays and the record names it (``edited since
   tuning``).  A file the collection made is removed when nothing but its lines is in it,
   and then the folders made for it, when empty; otherwise the lines left are kept and
   named.  A file nobody edited comes back whole, with its mode and owner.  An entry kept
   by a version that recorded no writes is put back whole, the text there now kept as a
   backup beside it (and said).  Atomically, through files.write_atomic;
2. runs the reloads the apply of those files runs: ``udevadm control --reload`` after udev
   rules, ``systemctl daemon-reload`` after unit drop-ins and fstab, update-grub (or
   grub-mkconfig) after a GRUB file (on the running system, when the program is there and
   systemd runs).  No ``udevadm trigger`` and no
   ``sysctl --system``: the live values are written back directly, which touches nothing
   else;
3. writes every live value back and reads it again;
4. reports what it cannot put back (``unsupported``, with why), and what waits for a
   restart (a service's drop-in, limits.d for new sessions, a database's parameter file) or
   a reboot (fstab: the mount keeps its options until it is mounted again).

A second revert finds everything as the baseline says and changes nothing.  Check mode
computes the same texts and predicts the same statuses (a pool the kernel cannot shrink
below the pages in use, a reboot or restart a file waits for), so that its records are the
real run's, ``would be`` in front of each detail and ``drift`` where the real run says
``changed``.  When every
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
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import merge
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError, host_error
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    CHANGED, DRIFT, FAILED, OK, PENDING_REBOOT, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import kernel_cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

UDEV, UNITS, BOOT = 'udev', 'systemd', 'boot loader'


def _service(key):
    """The unit a drop-in belongs to: /etc/systemd/system/postgresql.service.d/x.conf -> postgresql.service."""
    folder = os.path.basename(os.path.dirname(key))
    return folder[:-2] if folder.endswith('.d') else folder


def consequence(key, waits=None):
    """(reload or None, what waits, why) for a file put back: what its apply would run and what a
    change of it waits for; ``waits``: what the kind that wrote it says a revert cannot undo itself,
    (status, why) or None (state/hooks.py revert_waits), when its path says nothing."""
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
    if key == cmdline.GRUB_DEFAULT or key.startswith(cmdline.GRUB_DEFAULT_D + '/'):
        return BOOT, PENDING_REBOOT, ('the next boot\'s command line, once the boot loader\'s configuration is '
                                      'regenerated (update-grub); the running kernel keeps its own until the reboot')
    if key == cmdline.KERNEL_CMDLINE:
        return None, PENDING_REBOOT, ('the next boot\'s command line, once a kernel is installed (kernel-install add); '
                                      'the running kernel keeps its own until the reboot')
    if key == '/etc/system':
        return None, PENDING_REBOOT, 'read at the next boot'
    if waits:
        return (None,) + tuple(waits)
    return None, None, ''


def file_plan(entry, now):
    """What a revert makes of one file the baseline holds, whose text is ``now`` (None: absent):
    {now, want (None: remove it), whole (the text before tuning, whole), old (an entry without
    writes: put back whole, a backup kept), kept (the lines edited since tuning that stay, as
    merge.edited_lines() says them), conflicts (regions both changed: the admin's stay)}."""
    before = entry['content'] if entry['existed'] else None
    writes = entry.get('writes')
    plan = {'now': now, 'want': before, 'whole': True, 'old': False, 'kept': [], 'conflicts': []}
    if writes is None:
        plan['old'] = now is not None and now != before
        return plan
    if not writes or (now is None and entry['existed']):
        # nothing to merge with: no write recorded, or the file removed since (no line of anyone's left)
        return plan
    want, conflicts = merge.take_back(now, writes, entry['existed'])
    if want != before:
        plan.update(want=want, whole=False, kept=merge.edited_lines(before, want), conflicts=conflicts,
                    created=not entry['existed'])
    return plan


def _pool_in_use(key, after, want):
    """A huge page pool the kernel kept above the smaller size written back: pages that running
    processes (a database's shared memory) hold are freed only when they release them."""
    if not key.endswith(('/nr_hugepages', '/nr_hugepages_mempolicy', '/nr_overcommit_hugepages')):
        return False
    try:
        return int(str(want).strip()) < int(str(after).strip())
    except (TypeError, ValueError):
        return False


def _in_use_detail(after, in_use, want):
    """Why a huge page pool stays above ``want``: the same words before (check mode) and after the write."""
    held = ' (%s of them in use)' % in_use if in_use is not None else ''
    return ('the kernel keeps %s pages when %s is written%s: pages running processes hold (a database\'s shared '
            'memory) are freed when they release them, at a restart of the database or the next boot, whose '
            'sources are put back' % (str(after).strip(), want, held))


def _in_use_now(root, key, after):
    """The pages of a pool in use once written down to ``after``: all but the free ones."""
    if not key.startswith('/sys/'):
        return None
    free = sysfs.read_value(files.kernel_path(root, os.path.dirname(key) + '/free_hugepages'))
    return int(after) - int(free) if free is not None and str(free).strip().isdigit() else None


def _count(root, path):
    value = sysfs.read_value(files.kernel_path(root, path))
    return int(str(value).strip()) if value is not None and str(value).strip().isdigit() else None


def _pool_kept(root, key, now, want):
    """(pages kept, of them in use) of a huge page pool when ``want`` is written, when more than
    ``want``, else None.  The kernel never frees pages in use or reserved, counted over the whole
    pool of that page size, a node's write included (mm/hugetlb.c set_max_huge_pages: a node's
    count is made a total, and the total goes no lower than reserved + total - free); a database
    reserves its whole shared memory at mmap() and faults in only what it touched."""
    if not key.endswith(('/nr_hugepages', '/nr_hugepages_mempolicy')):
        return None
    try:
        now, want = int(str(now).strip()), int(str(want).strip())
        if key.startswith('/sys/'):
            own = os.path.dirname(key)
            pool = '/sys/kernel/mm/hugepages/' + os.path.basename(own) if key.startswith('/sys/devices/') else own
            total, free = _count(root, pool + '/nr_hugepages'), _count(root, pool + '/free_hugepages')
            reserved, own_free = _count(root, pool + '/resv_hugepages') or 0, _count(root, own + '/free_hugepages')
        else:
            meminfo = files.read_text(files.kernel_path(root, '/proc/meminfo')) or ''
            fields = dict((name.strip(), value.strip()) for name, value in
                          (line.split(':', 1) for line in meminfo.splitlines() if ':' in line))
            total, free = int(fields['HugePages_Total']), int(fields['HugePages_Free'])
            reserved, own_free = int(fields.get('HugePages_Rsvd', 0)), free
        others = total - now   # the other nodes' pages (none for the whole pool's own file)
        kept = max(want + others, reserved + total - free) - others
        return (kept, now - own_free) if kept > want else None
    except (TypeError, ValueError, KeyError):
        return None


_SHOWN = 12


def _edited_note(plan):
    """What a record says of the lines edited since tuning that the revert keeps (a list of 0 or 1 phrases)."""
    if plan['old']:
        return ['put back whole: this baseline, kept by an older version, holds no record of the lines tuning '
                'wrote; the text there now is kept as a backup beside it']
    if not plan['kept']:
        return []
    shown = plan['kept'][:_SHOWN]
    more = ' (and %d more)' % (len(plan['kept']) - _SHOWN) if len(plan['kept']) > _SHOWN else ''
    clash = ('; of them, where tuning wrote a line an admin changed since, the admin\'s is kept: %s'
             % ' | '.join(line.rstrip('\n') for region in plan['conflicts'] for line in region[1])) \
        if plan['conflicts'] else ''
    return ['edited since tuning, kept as it is now: %s%s%s' % (' | '.join(shown), more, clash)]


def _action(plan, folders):
    """What a revert does to a file, as a past participle (check mode puts ``would be`` in front)."""
    made = ('; the folders made for it removed: %s' % ', '.join(folders)) if folders else ''
    if plan['want'] is None:
        return 'removed (it did not exist before tuning)' + made
    if plan['whole']:
        return 'restored'
    if plan.get('created'):
        return 'emptied of the lines tuning wrote and kept: it holds lines edited since tuning' + made
    return 'put back line by line: the lines tuning changed are as before it, every other line as it is now'


class Revert(Plan):
    """Put every root's files and live values back as its baseline holds them."""

    captures_baseline = False

    def __init__(self, roots, check_mode=False, runner=None, bin_path=None, waits=None):
        self.roots = []
        # waits(kind): what a revert cannot undo itself in a file the kind (as the baseline names it) wrote
        self.waits = waits or (lambda kind: None)
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
        done = {'files': {}, 'live': {}, 'reloads': [], 'reload_errors': [], 'folders': {}, 'plans': {},
                'backups': {}}
        wanted = set()
        for root, section, key, entry in desired:
            if section == 'files':
                done['plans'][(root, key)] = file_plan(entry, live[(root, section, key)])
        # the files this revert removes: a folder made for one of them may hold another
        going = set(files.rooted(root, key) for (root, key), plan in done['plans'].items()
                    if plan['want'] is None and plan['now'] is not None)
        emptied = []
        for root, section, key, entry in desired:
            if section != 'files':
                continue
            plan = done['plans'][(root, key)]
            change = files.FileChange(files.rooted(root, key), plan['now'], plan['want'], key, root=root)
            folders = self._folders_left(root, key, entry, going) if plan['want'] is None else []
            done['folders'][(root, key)] = folders
            if not (change.needed or folders):
                continue
            reload_kind = consequence(key, self.waits(entry.get('kind')))[0]
            if reload_kind:
                wanted.add(reload_kind)
            if self.check_mode:
                continue
            if change.needed:
                change.tidy()
                done['backups'][(root, key)] = change.apply(module, backup_file=plan['old'], mode=entry.get('mode', 0o644))
            if change.needed and plan['whole'] and entry['existed']:
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
        """The reloads the files put back need, on the running system only (check mode: the ones it would run)."""
        if not wanted or self.runner is None or any(os.path.realpath(root) != '/' for root in self.roots):
            return
        commands = []
        if UDEV in wanted and self.bin_path('udevadm'):
            commands.append(([self.bin_path('udevadm'), 'control', '--reload'], 'udevadm control --reload'))
        if UNITS in wanted and systemd.systemd_running('/'):
            commands.append((['systemctl', 'daemon-reload'], 'systemctl daemon-reload'))
        if BOOT in wanted:
            argv = kernel_cmdline.grub_command(self.runner, self.bin_path)
            if argv is None:
                done['reload_errors'].append('the boot loader was not regenerated: no update-grub, grub-mkconfig nor '
                                             'grub2-mkconfig found; run the one this host boots with before the next '
                                             'reboot')
            else:
                commands.append((argv, ' '.join([os.path.basename(argv[0])] + argv[1:])))
        for argv, label in commands:
            done['reloads'].append(label)
            if self.check_mode:
                continue
            rc, out, err = self.runner(argv)
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
                if setting.status in (CHANGED, DRIFT):
                    # --diff shows the live value written back beside the files (a diff marks the run changed:
                    # not for a pool the kernel keeps up, which a second revert writes again)
                    result.add_diff(key, '%s\n' % str(live[(root, section, key)]).strip(),
                                    '%s\n' % str(entry['value']).strip())
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
        plan = done['plans'][(root, key)]
        want = plan['want']
        folders = done['folders'].get((root, key)) or []
        needed = before != want or bool(folders)
        result.add_diff(key, before, want)
        desired = 'absent' if want is None else 'as before tuning (%d bytes)' % len(want) if plan['whole'] else \
            'the lines tuning changed as before it, the others as now (%d bytes)' % len(want)
        now = 'absent' if before is None else 'present' if want is None else \
            'as before tuning' if before == want else 'changed since (%d bytes)' % len(before)
        edited = _edited_note(plan)
        if edited:
            result.warnings.append('%s: %s' % (key, '; '.join(edited)))
        if not needed:
            return Setting(key, key, desired, None, now, OK, '; '.join(['as before tuning'] + edited))
        waits, why = consequence(key, self.waits(entry.get('kind')))[1:]
        detail = '; '.join([_action(plan, folders)] + ([why] if why else []) + edited)
        result.mark_changed()
        if self.check_mode:
            return Setting(key, key, desired, None, now, waits or DRIFT, 'would be ' + detail)
        backup = done['backups'].get((root, key))
        if backup:
            result.extra.setdefault('backups', []).append(backup)
        return Setting(key, key, desired, None, desired, waits or CHANGED, detail)

    def _live_record(self, root, key, entry, before, done):
        want = entry['value']
        if before is None:
            return Setting(key, key, want, None, None, UNSUPPORTED,
                           '%s is not there any more (a device or a kernel module gone?): nothing to put back' % key)
        if compare.same_value(before, want):
            return Setting(key, key, want, before, None, OK, 'as before tuning')
        if self.check_mode:
            kept = _pool_kept(root, key, before, want)
            if kept is not None:
                return Setting(key, key, want, before, None, PENDING_RESTART, 'would be set back from %s; %s' % (
                    before, _in_use_detail(kept[0], kept[1] if key.startswith('/sys/') else None, want)))
            return Setting(key, key, want, before, None, DRIFT, 'would be set back from %s' % before)
        after, error = done['live'].get((root, key), (before, 'not written'))
        if not error and _pool_in_use(key, after, want):
            return Setting(key, key, want, after, None, PENDING_RESTART,
                           'set back from %s; %s' % (before, _in_use_detail(after, _in_use_now(root, key, after), want)))
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
