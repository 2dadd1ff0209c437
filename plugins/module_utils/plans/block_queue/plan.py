# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply block-device queue attributes (Linux).

Devices are selected by kernel name or glob, stable identifier (WWID/WWN, serial, model,
vendor), mount point, and for device-mapper devices also their underlying devices
(``slaves/``): plans/block_queue/entries.py and devices.py.  Values are checked against
what each device accepts, written live where they differ, read back, and persisted as
udev rules keyed by a stable identifier (formats/udev.py).

The module file only parses options and calls BlockQueue(...).run().
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import FAILED, UNSUPPORTED, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import udev
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import LivePlusFile, Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue.devices import Tree
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue.entries import (
    Entry, Unsupported, check_value, meets, to_persist, unsupported_why)

DEFAULT_FILE = '/etc/udev/rules.d/61-dbhost-tuning.rules'
HEADER = ('# Managed by dbhost.tuning.block_queue: block queue attributes of selected devices.\n'
          '# Rules are keyed by a stable identifier (device-mapper UUID, WWID, serial, loop backing file);\n'
          '# KERNEL=="name" only where a device has none. Local edits to managed attributes are overwritten.')

# Every rule we write starts with these matches: the disk itself (not its partitions),
# when it appears and when it changes (a device-mapper table load, a loop attach).
COMMON_TOKENS = (
    udev.Token('ACTION', None, '==', 'add|change'),
    udev.Token('SUBSYSTEM', None, '==', 'block'),
    udev.Token('ENV', 'DEVTYPE', '==', 'disk'),
)

# Switching the scheduler resets nr_requests and replaces iosched/*: it goes first.
FIRST = ('scheduler',)

UNSUPPORTED_WHY = {
    'sunos': 'SunOS has no per-device block queue attributes (no sysfs, no rq_affinity); queue depth and '
             'throttles are driver settings (sd.conf, ssd_max_throttle in /etc/system)',
    'freebsd': 'FreeBSD has no per-device block queue attributes like these (no sysfs, no rq_affinity); '
               'CAM tunes queue depth per device with camcontrol tags',
}


# The udev match of a disk's rule: tokens, what identifier they use, a warning (no stable one),
# and the disks that share it (the paths of one multipath LUN).
UdevKey = namedtuple('UdevKey', 'tokens kind warning shared')


# What read_persisted() finds: our udev rules file (host path, text) and what it gives each chosen disk
# ({disk: {attribute: value}}; NONE off Linux).
RulesFile = namedtuple('RulesFile', 'path text values')
RulesFile.NONE = RulesFile(*[None] * 3)


class Selection(object):
    """The desired state: the system, and on Linux the sysfs tree, the chosen disks
    ({disk: {'attributes', 'sources', 'notes', 'entries'}}, see select()) and their udev keys ({disk: UdevKey})."""

    def __init__(self, system, tree=None, chosen=None, keys=None):
        self.system = system
        self.tree = tree
        self.chosen = chosen or {}
        self.keys = keys or {}


class BlockQueue(LivePlusFile, Plan):
    """One run of the block_queue module: validate, select, plan, apply (unless check mode), report.

    The hooks' shapes: desired is a Selection; live is {(disk, attribute): value} as read
    before anything is written; persisted is {'path': host path, 'text': the rules file,
    'values': {disk: {attribute: value}}}; apply() is LivePlusFile's (base.Outcome, keyed by
    (disk, attribute), each value read again right before its write; ``reload``: udev's note).
    On SunOS and FreeBSD nothing is read: every record is ``unsupported``.
    """

    source = 'task option: block_queue.devices'
    reread_before_write = True
    _items = None   # {record name: the index in devices of the item that gave it}, filled as the records are made

    def __init__(self, options, context, writer=None):
        """``writer(path, value)``: writes one sysfs attribute (a test gives a fake kernel's)."""
        self.raw_devices = options.devices
        # {attribute: minimum | maximum | exact}: how a numeric attribute's value is met
        self.comparisons = options.comparisons or {}
        self.apply_live = options.apply
        self.persist = options.persist
        self.file = options.file or DEFAULT_FILE
        self.root = validate.check_root(options.root)
        self.allow_empty = options.allow_empty
        self.reload = options.reload
        self.trigger = options.trigger
        self.backup = options.backup
        self.gate = context.gate
        self.system_name = context.system_name or platforms.system()
        self.runner = context.runner
        self.bin_path = context.bin_path
        self.writer = writer or sysfs.write_value
        self.entries = []
        self.backup_file = None
        # (disk, attribute) -> Unsupported(why it cannot be set here, whether its rule is still written)
        self.unsupported = {}
        self.tuned = None
        # (disk, attribute) -> its file under /sys/block
        self.paths = {}

    # ---------------------------------------------------------------- validation
    def validate(self):
        if not isinstance(self.raw_devices, (list, tuple)) or not self.raw_devices:
            raise InputError('devices must be a non-empty list of selectors with attributes')
        if not self.apply_live and not self.persist:
            raise InputError('apply and persist are both false: there is nothing to do')
        validate.check_rooted(self.root, self.file, 'file')
        if os.path.dirname(self.file) not in udev.RULES_DIRS[:3] or not self.file.endswith('.rules'):
            raise InputError('file %r is not read by udev: use a *.rules file in %s'
                             % (self.file, ' or '.join(udev.RULES_DIRS[:3])))
        self.entries = [Entry(index, raw, self.allow_empty) for index, raw in enumerate(self.raw_devices)]
        for name, how in self.comparisons.items():
            if how not in compare.COMPARISONS:
                raise InputError('comparisons %r: %r is not one of %s' % (name, how, ', '.join(compare.COMPARISONS)))

    def desired(self):
        try:
            system = platforms.pick({platforms.LINUX: 'linux', platforms.SUNOS: 'sunos',
                                     platforms.FREEBSD: 'freebsd'}, self.system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        if system != 'linux':
            return Selection(system)
        tree = Tree(self.root)
        chosen = self.select(tree)
        self.check_values(tree, chosen)
        return Selection(system, tree, chosen, self._udev_keys(tree, chosen))

    # ---------------------------------------------------------------- selection
    def select(self, tree):
        """{disk: {'attributes': {...}, 'sources': {attr: entry}, 'items': {attr: its index}, 'notes': [...],
        'entries': [...]}}."""
        chosen = {}
        self._items = {}
        for entry in self.entries:
            found = self._select_entry(tree, entry)
            if entry.rotational is not None:
                found = [(disk, note) for disk, note in found
                         if (tree.device(disk).rotational == '1') == entry.rotational]
                if not found:
                    continue  # the selection found devices, none of this kind
            for disk, note in found:
                plan = chosen.setdefault(disk, {'attributes': {}, 'sources': {}, 'items': {}, 'notes': [], 'entries': []})
                if entry.where not in plan['entries']:
                    plan['entries'].append(entry.where)
                if note and note not in plan['notes']:
                    plan['notes'].append(note)
                for name, value in entry.attributes.items():
                    earlier = plan['sources'].get(name)
                    if earlier and earlier != entry.where and plan['attributes'][name] != value:
                        plan['notes'].append('%s overrides %s for %s' % (entry.where, earlier, name))
                    plan['attributes'][name] = value
                    plan['sources'][name] = entry.where
                    plan['items'][name] = entry.index
        return chosen

    @staticmethod
    def _by_name(tree, entry, notes):
        """The disks ``entry.names`` select (a glob skips devices without medium)."""
        disks = []
        for pattern in entry.names:
            if any(c in pattern for c in '*?['):
                # A glob skips devices without medium: unbound loop devices, empty drives.
                matched = [n for n in tree.names if fnmatch.fnmatchcase(n, pattern) and tree.device(n).has_medium]
            else:
                disk, note = tree.disk_of(pattern)
                if disk is None:
                    raise InputError('%s.name: no block device %r in %s' % (entry.where, pattern, tree.sys_block))
                matched = [disk]
                if note:
                    notes[disk] = 'selected as %s' % note
            disks.extend(d for d in matched if d not in disks)
        return disks

    @staticmethod
    def _by_mount(tree, entry, notes):
        disks = []
        for path in entry.mounts:
            disk, note = tree.disk_of_mount(path)
            notes.setdefault(disk, 'selected as %s' % note)
            if disk not in disks:
                disks.append(disk)
        return disks

    def _select_entry(self, tree, entry):
        candidates = None
        notes = {}
        for values, select in ((entry.names, self._by_name), (entry.mounts, self._by_mount)):
            if values:
                disks = select(tree, entry, notes)
                candidates = disks if candidates is None else [d for d in candidates if d in disks]
        for values, getter, compare in (
                (entry.wwns, lambda d: d.wwns(), lambda have, want: have == want),
                (entry.serials, lambda d: d.serials(), fnmatch.fnmatchcase),
                (entry.models, lambda d: [d.model] if d.model else [], fnmatch.fnmatchcase),
                (entry.vendors, lambda d: [d.vendor] if d.vendor else [], fnmatch.fnmatchcase)):
            if not values:
                continue
            pool = candidates if candidates is not None else tree.names
            candidates = [d for d in pool if any(compare(have, want) for have in getter(tree.device(d)) for want in values)]
        found = [(disk, notes.get(disk)) for disk in candidates]
        if entry.slaves:
            for disk, dummy in list(found):
                for below, via in self._slaves(tree, disk, set()):
                    if below not in [d for d, n in found]:
                        found.append((below, 'selected as %s' % via))
        if not found and not entry.allow_empty:
            raise InputError('%s (%s) matches no block device in %s; set allow_empty to accept that'
                             % (entry.where, entry.describe(), tree.sys_block))
        return found

    def _slaves(self, tree, disk, seen):
        """Every device below ``disk`` (recursively), as (disk, how it was reached)."""
        result = []
        for slave in tree.device(disk).slaves:
            below, note = tree.disk_of(slave)
            if below is None or below in seen:
                continue
            seen.add(below)
            result.append((below, 'a device under %s%s' % (disk, ' (%s)' % note if note else '')))
            result.extend(self._slaves(tree, below, seen))
        return result

    # ---------------------------------------------------------------- values
    def check_values(self, tree, chosen):
        """Refuse, before any write, values that a device does not accept; note what it cannot have."""
        page_kb = max((platforms.page_size(self.root) or platforms.MIN_PAGE_SIZE) // 1024, 1)
        for disk in sorted(chosen):
            device = tree.device(disk)
            for name, value in sorted(chosen[disk]['attributes'].items()):
                why = unsupported_why(device, name, value, self.comparisons.get(name))
                if why:
                    self.unsupported[(disk, name)] = why
                    continue
                where = '%s.attributes.%s on %s' % (chosen[disk]['sources'][name], name, disk)
                check_value(device, name, value, where, page_kb)

    @staticmethod
    def _rank(name):
        return name not in FIRST, name.startswith('iosched/'), name

    @classmethod
    def _order(cls, attributes):
        return sorted(attributes, key=cls._rank)

    def _udev_keys(self, tree, chosen):
        """{disk: UdevKey}; a shared key needs equal values."""
        keys, by_key = {}, {}
        for disk in sorted(chosen):
            keys[disk] = UdevKey(*tree.device(disk).udev_key(self.file), shared=[])
            by_key.setdefault(tuple(token.render() for token in keys[disk].tokens), []).append(disk)
        for signature, disks in by_key.items():
            if len(disks) < 2:
                continue
            first = chosen[disks[0]]['attributes']
            for other in disks[1:]:
                if chosen[other]['attributes'] != first:
                    raise InputError('%s and %s share the udev key %s (multipath paths of one LUN?) but are given '
                                     'different attributes: %r and %r' % (disks[0], other, ', '.join(signature),
                                                                          first, chosen[other]['attributes']))
            for disk in disks:
                keys[disk].shared.extend(disks)
        return keys

    # ---------------------------------------------------------------- live and persisted state
    def read_live(self, desired):
        live = {}
        for disk in sorted(desired.chosen):
            device = desired.tree.device(disk)
            for name in self._order(desired.chosen[disk]['attributes']):
                self.paths[(disk, name)] = device.attribute(name)
                live[(disk, name)] = self.read_one((disk, name))
        return live

    def read_persisted(self, desired):
        if desired.system != 'linux':
            return RulesFile.NONE
        local_file = rooted(self.root, self.file)
        text = read_text(local_file)
        self.tuned = tuned_host.active(self.root)  # TuneD writes [disk] when it starts, after udev's rules
        lines = udev.parse(text)
        values = dict((disk, udev.values_for(lines, desired.keys[disk].tokens, COMMON_TOKENS)) for disk in desired.chosen)
        return RulesFile(path=local_file, text=text, values=values)

    # ---------------------------------------------------------------- apply (LivePlusFile's flow)
    def applies_here(self, desired):
        return desired.system == 'linux'

    def plan_writes(self, desired, live, persisted):
        """({}, {(disk, attribute): value}): every value that can be set here is a target, and
        compared right before its write; the rules come from what the kernel took (file_text())."""
        targets = {}
        if self.apply_live:
            for disk, plan in desired.chosen.items():
                targets.update(((disk, name), value) for name, value in plan['attributes'].items()
                               if (disk, name) not in self.unsupported)
        return {}, targets

    def live_order(self, targets):
        return sorted(targets, key=lambda key: (key[0], self._rank(key[1])))

    def live_meets(self, key, value, want):
        return meets(value, want, self.comparisons.get(key[1]))

    def read_one(self, key):
        return sysfs.read_value(self.paths[key])

    def write_one(self, key, value):
        self.writer(self.paths[key], value)

    def refusal(self, exc):
        return str(exc)

    def read_only_now(self, key, exc):
        return Unsupported(LivePlusFile.read_only_now(self, key, exc), True)

    def applied(self, desired, persisted, done):
        if done.change.needed:
            done.reload = self.gate.write(self._reload, sorted(desired.chosen))

    def file_text(self, desired, persisted, done):
        """The rules file's text with every value the kernel did not refuse."""
        refused, live_before = done.refused, done.before
        before_text = persisted.text
        lines = udev.parse(before_text)
        if self.persist:
            persist_values = {}
            for disk in sorted(desired.chosen):
                # a bound keeps a larger (smaller) value the rule or the live device already has
                wanted = dict((name, to_persist(value, [live_before.get((disk, name)),
                                                        persisted.values[disk].get(name)],
                                                self.comparisons.get(name)))
                              for name, value in desired.chosen[disk]['attributes'].items()
                              if (disk, name) not in refused and self.unsupported.get((disk, name), (0, True))[1])
                shared = desired.keys[disk].shared
                if wanted:
                    persist_values.setdefault(disk if not shared else shared[0], (disk, wanted))
            for target in sorted(persist_values):
                disk, wanted = persist_values[target]
                lines = udev.set_values(lines, desired.keys[disk].tokens, COMMON_TOKENS, wanted, first=FIRST)
        if not any(line.dirty for line in lines):
            return before_text
        after_text = udev.render(lines)
        if not (before_text or '').strip():
            after_text = HEADER + '\n' + after_text
        return after_text

    def _reload(self, disks):
        """Tell udev to read the rules again; never fails the task (udevd may not run here)."""
        if self.root != '/':
            return {'reloaded': False, 'detail': 'root is %s: udev not reloaded' % self.root}
        if not self.reload:
            return {'reloaded': False, 'detail': 'reload: false: udev reads the rules at its next start'}
        udevadm = self.bin_path('udevadm')
        if not udevadm or self.runner is None:
            return {'reloaded': False, 'detail': 'udevadm not found: the rules apply from the next boot or udevd start'}
        rc, out, err = self.runner([udevadm, 'control', '--reload'])
        if rc != 0:
            return {'reloaded': False, 'detail': 'udevadm control --reload failed (%s): is systemd-udevd running here? '
                    'the rules apply from the next boot or udevd start' % ((err or out).strip() or 'rc %d' % rc)}
        note = {'reloaded': True, 'detail': 'udev rules reloaded'}
        if self.trigger:
            argv = [udevadm, 'trigger', '--action=change', '--subsystem-match=block']
            for disk in disks:
                argv.append('--sysname-match=%s' % disk)
            rc, out, err = self.runner(argv)
            note['triggered'] = rc == 0
            note['detail'] += '; %s' % ('change event sent to %s' % ', '.join(disks) if rc == 0 else
                                        'udevadm trigger failed: %s' % ((err or out).strip() or 'rc %d' % rc))
        return note

    # ---------------------------------------------------------------- render
    def render(self, result, desired, live, persisted, done):
        if desired.system != 'linux':
            self._render_unsupported(result, desired.system)
            return
        after_values = dict((disk, udev.values_for(udev.parse(done.change.after), desired.keys[disk].tokens,
                                                   COMMON_TOKENS)) for disk in desired.chosen)
        for disk in sorted(desired.chosen):
            for name in self._order(desired.chosen[disk]['attributes']):
                result.add(self._record(disk, name, desired, done, persisted.values[disk], after_values[disk]))
        result.extra['devices'] = [
            desired.tree.device(disk).as_dict(desired.chosen[disk]['entries'], desired.keys[disk].tokens,
                                              desired.keys[disk].kind) for disk in sorted(desired.chosen)]
        if done.reload:
            result.extra['udev'] = done.reload
        self.report_file(result, done, self.tuned.problems if self.tuned else [])

    @staticmethod
    def _key_notes(disk, key):
        details = ['keyed by %s' % ', '.join(token.render() for token in key.tokens)]
        if key.warning:
            details.append('warning: %s' % key.warning)
        others = [d for d in key.shared if d != disk]
        if others:
            details.append('the same rule applies to %s' % ', '.join(others))
        return details

    def _record(self, disk, name, desired, done, persisted_before, persisted_after):
        plan = desired.chosen[disk]
        want = plan['attributes'][name]
        record_name = '%s/queue/%s' % (disk, name)
        target = self.file if self.persist else '/sys/block/%s/queue/%s' % (disk, name)
        before, after = done.before[(disk, name)], done.after[(disk, name)]
        live_now = after   # what the gate kept back leaves after as before
        persisted_now = self.gate.now(persisted_before, persisted_after).get(name)
        details = list(plan['notes'])
        if self.persist:
            details.extend(self._key_notes(disk, desired.keys[disk]))
        if (disk, name) in done.refused:
            details.append(self.refused_detail(want, done.refused[(disk, name)]))
            return Setting(record_name, target, want, live_now, persisted_now, FAILED, '; '.join(details))
        if (disk, name) in self.unsupported:
            why, persisted = self.unsupported[(disk, name)]
            written = persisted and persisted_before.get(name) != persisted_after.get(name)
            details[:0] = self.unsupported_words(why, written, 'persisted by %s' % self.file if persisted else
                                                 'no rule written: udev would fail to write it at every event')
            return Setting(record_name, target, want, live_now, persisted_now, UNSUPPORTED, '; '.join(details))
        how = self.comparisons.get(name)
        live_ok = meets(before, want, how) if self.apply_live else None
        if self.apply_live and (disk, name) in done.written:
            if not meets(after, want, how):
                details.append('wrote %r but %s reads back %r' % (want, disk, after))
                return Setting(record_name, target, want, live_now, persisted_now, FAILED, '; '.join(details))
            details.append('was %r' % done.written[(disk, name)])
        persisted_ok = meets(persisted_before.get(name), want, how) if self.persist else None
        if self.persist and not persisted_ok:
            details.append(self.gate.did('write %s' % self.file))
            if done.change.needed and done.reload:
                details.append(done.reload['detail'])
        # which [disk] unit takes the device is TuneD's choice on the tuned host (formats/tuned.py disk)
        device = tuned_host.BlockDevice(self.root, disk) if self.tuned else None
        tuned_sets = self._tuned_sets(device, name, persisted_after.get(name), before) if device and self.persist else None
        shadowed = bool(tuned_sets) and not meets(tuned_sets[0], want, how)
        if shadowed:
            details.append('%s sets %r for %s and wins at boot over %s' % (tuned_sets[1], tuned_sets[0], disk, self.file))
        # what the next boot gives: TuneD writes after udev's rule (check mode: over the rule as it is now)
        tuned_now = self.gate.now(self._tuned_sets(device, name, persisted_before.get(name), before),
                                  tuned_sets) if self.tuned else tuned_sets
        if tuned_now:
            persisted_now = tuned_now[0]
            if not shadowed and meets(tuned_now[0], want, how):
                details.append('persisted by %s' % tuned_now[1])
        status = self.gate.status(live_ok, persisted_ok, shadowed=shadowed)
        self._items[record_name] = plan['items'][name]
        return Setting(record_name, target, want, live_now, persisted_now, status, '; '.join(details),
                       comparison=how or compare.EXACT, source='task option: block_queue.%s' % plan['sources'][name])

    def item_of(self, setting):
        """The index in ``devices`` of the item that gave a record its value and source (None: a record that
        names no one item), so that host_state finds the record's key by that item (state/hooks.py)."""
        return (self._items or {}).get(str(setting.name))

    def _tuned_sets(self, device, name, rule, before):
        """(value, source) TuneD writes over our rule's value (or the live one) at its start, or None;
        in automatic mode as every profile it may start writes it (formats/tuned.py agree)."""
        answer = self.tuned.agree(lambda profile: profile.block_queue(device, name, rule or before),
                                  (rule, self.file) if self.tuned.alternatives else None)
        return None if answer is None or answer[1] == self.file else answer

    def _render_unsupported(self, result, system):
        why = UNSUPPORTED_WHY[system]
        for entry in self.entries:
            for name in self._order(entry.attributes):
                result.add(Setting('%s/queue/%s' % (entry.describe(), name), None, entry.attributes[name],
                                   None, None, self.gate.status(None, None, unsupported=True), why))
