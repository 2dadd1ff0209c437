# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply block-device queue attributes (Linux).

Devices are selected by kernel name or glob, stable identifier (WWID/WWN, serial, model,
vendor), mount point, and for device-mapper devices also their underlying devices
(``slaves/``).  Values are checked against what each device accepts, written live where
they differ, read back, and persisted as udev rules keyed by a stable identifier.

The module file only parses options and calls BlockQueue(...).run().
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import udev
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, confine, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

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

SELECTOR_KEYS = ('name', 'wwn', 'serial', 'model', 'vendor', 'mount')
ENTRY_KEYS = SELECTOR_KEYS + ('rotational', 'slaves', 'allow_empty', 'attributes')

_ATTRIBUTE_NAME = re.compile(r'^[a-z0-9_]+(/[a-z0-9_]+)?\Z')
_INTEGER = re.compile(r'^-?[0-9]+\Z')

# Attributes with a known set of values (Documentation/ABI/stable/sysfs-block).
ALLOWED_VALUES = {
    'rq_affinity': ('0', '1', '2'),
    'nomerges': ('0', '1', '2'),
    'add_random': ('0', '1'),
    'rotational': ('0', '1'),
    'iostats': ('0', '1'),
    'iostats_passthrough': ('0', '1'),
    'io_poll': ('0', '1'),
    'stable_writes': ('0', '1'),
    'write_cache': ('write back', 'write through'),
}
# Attributes that take an integer, with their lowest accepted value.
MINIMUM = {
    'nr_requests': 4,        # BLKDEV_MIN_RQ
    'read_ahead_kb': 0,
    'max_sectors_kb': 1,     # raised below to the page size
    'wbt_lat_usec': -1,
    'io_poll_delay': -1,
    'discard_max_bytes': 0,
    'write_zeroes_unmap_max_bytes': 0,
    'io_timeout': 1,
}


def _as_text(value, where):
    if isinstance(value, bool):
        raise InputError('%s: %r is a boolean; give 0 or 1' % (where, value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        validate.check_text(value, where)
        text = ' '.join(value.split())
        if not text:
            raise InputError('%s: the value is empty' % where)
        if not udev.safe_assign_value(text):
            raise InputError('%s: %r has a quote, backslash or newline' % (where, value))
        return text
    raise InputError('%s: %r is neither a number nor a string' % (where, value))


def _as_list(value, where):
    if value is None:
        return []
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError('%s must be a string or a non-empty list of strings' % where)
    items = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int)) or not str(item).strip():
            raise InputError('%s: %r is not a usable value' % (where, item))
        # Models, vendors, serials and mount points may hold the ASCII space (the udev
        # rule matches them quoted), no other space, control or separator character.
        validate.check_path(str(item).strip(' '), where)
        items.append(str(item).strip())
    return items


def normalize_wwn(value):
    """Compare WWNs as the udev and sysfs forms write them: 0x5000c5..., naa.5000c5..."""
    value = (value or '').strip().lower()
    for prefix in ('0x', 'naa.', 'eui.', 'wwn-0x'):
        if value.startswith(prefix):
            return value[len(prefix):]
    return value


def same_value(actual, desired):
    """Values compare as the kernel prints them: numbers as numbers, words with single spaces."""
    if actual is None or desired is None:
        return False
    actual, desired = ' '.join(str(actual).split()), ' '.join(str(desired).split())
    if _INTEGER.match(actual) and _INTEGER.match(desired):
        return int(actual) == int(desired)
    return actual == desired


def parse_mountinfo(text):
    """[(mount_point, 'major:minor', source)] from /proc/self/mountinfo, in file order."""
    return [(mount.mount_point, mount.dev, mount.source) for mount in _mountinfo.parse(text)]


class Entry(object):
    """One item of ``devices``: how devices are selected and what they get."""

    def __init__(self, index, raw, allow_empty_default):
        where = 'devices[%d]' % index
        self.where = where
        if not isinstance(raw, dict):
            raise InputError('%s must be a dict with selectors and attributes' % where)
        unknown = sorted(set(raw) - set(ENTRY_KEYS))
        if unknown:
            raise InputError('%s: unknown key(s) %s (known: %s)' % (where, ', '.join(unknown), ', '.join(ENTRY_KEYS)))
        self.names = _as_list(raw.get('name'), where + '.name')
        self.wwns = [normalize_wwn(v) for v in _as_list(raw.get('wwn'), where + '.wwn')]
        self.serials = _as_list(raw.get('serial'), where + '.serial')
        self.models = _as_list(raw.get('model'), where + '.model')
        self.vendors = _as_list(raw.get('vendor'), where + '.vendor')
        self.mounts = _as_list(raw.get('mount'), where + '.mount')
        # Device names and WWNs hold no space; models, vendors, serials and mount points
        # may hold the ASCII one (the udev rule matches them quoted), no other.
        for key, values in (('name', self.names), ('wwn', self.wwns)):
            for value in values:
                validate.check_name(value, '%s.%s' % (where, key))
        for mount in self.mounts:
            if not mount.startswith('/'):
                raise InputError('%s.mount: %r is not an absolute path' % (where, mount))
        for name in self.names:
            if '/' in name or name in ('.', '..'):
                raise InputError('%s.name: %r is not a kernel device name or glob' % (where, name))
        if not any((self.names, self.wwns, self.serials, self.models, self.vendors, self.mounts)):
            raise InputError('%s selects nothing: give at least one of %s' % (where, ', '.join(SELECTOR_KEYS)))
        self.rotational = raw.get('rotational')
        if self.rotational is not None and not isinstance(self.rotational, bool):
            raise InputError('%s.rotational must be true or false' % where)
        self.slaves = raw.get('slaves', False)
        self.allow_empty = raw.get('allow_empty')
        if self.allow_empty is None:
            self.allow_empty = allow_empty_default
        attributes = raw.get('attributes')
        if not isinstance(attributes, dict) or not attributes:
            raise InputError('%s.attributes must be a non-empty dict of queue attribute: value' % where)
        self.attributes = {}
        for name, value in attributes.items():
            name = str(name)
            if name.startswith('queue/'):
                name = name[len('queue/'):]
            if not _ATTRIBUTE_NAME.match(name):
                raise InputError('%s.attributes: %r is not a queue attribute name (for example rq_affinity, '
                                 'iosched/fifo_batch)' % (where, name))
            self.attributes[name] = _as_text(value, '%s.attributes.%s' % (where, name))
            self._check_static(name, self.attributes[name])

    def _check_static(self, name, value):
        where = '%s.attributes.%s' % (self.where, name)
        if name in ALLOWED_VALUES and value not in ALLOWED_VALUES[name]:
            raise InputError('%s: %r is not one of %s' % (where, value, ', '.join(ALLOWED_VALUES[name])))
        if name in MINIMUM:
            if not _INTEGER.match(value):
                raise InputError('%s: %r is not an integer' % (where, value))
            if int(value) < MINIMUM[name]:
                raise InputError('%s: %s is below the lowest value %d' % (where, value, MINIMUM[name]))

    def describe(self):
        parts = []
        for key, values in (('name', self.names), ('wwn', self.wwns), ('serial', self.serials),
                            ('model', self.models), ('vendor', self.vendors), ('mount', self.mounts)):
            if values:
                parts.append('%s=%s' % (key, '|'.join(values)))
        return ' '.join(parts)


class Device(object):
    """What sysfs and the udev database say about one disk in <root>/sys/block."""

    def __init__(self, sys_block, root, name):
        self.name = name
        self.path = os.path.join(sys_block, name)
        self.queue = os.path.join(self.path, 'queue')
        self.root = root
        self.dev = self._read('dev')
        self.size = self._read('size')
        self.wwid = self._read('wwid') or self._read('device/wwid')
        self.serial_file = 'serial' if self._read('serial') else ('device/serial' if self._read('device/serial') else None)
        self.serial = self._read(self.serial_file) if self.serial_file else None
        self.model = self._read('device/model')
        self.vendor = self._read('device/vendor')
        self.dm_uuid = self._read('dm/uuid')
        self.dm_name = self._read('dm/name')
        self.backing_file = self._read('loop/backing_file')
        self.rotational = self._read('queue/rotational')
        self.properties = {}
        if self.dev:
            self.properties = udev.parse_db(read_text(rooted(root, '/run/udev/data/b%s' % self.dev)))

    def attribute(self, name):
        """The host path of queue attribute ``name``, links resolved within root."""
        return confine(self.root, os.path.join(self.queue, name))

    def _read(self, relative):
        try:
            value = sysfs.read_raw(os.path.join(self.path, relative))
        except (IOError, OSError):
            return None
        value = value.strip() if value is not None else None
        return value or None

    @property
    def has_medium(self):
        return self.size not in (None, '0')

    @property
    def slaves(self):
        folder = os.path.join(self.path, 'slaves')
        try:
            return sorted(os.listdir(folder))
        except OSError:
            return []

    def wwns(self):
        return [normalize_wwn(v) for v in (self.wwid, self.properties.get('ID_WWN'),
                                           self.properties.get('ID_WWN_WITH_EXTENSION')) if v]

    def serials(self):
        return [v for v in (self.serial, self.properties.get('ID_SERIAL'),
                            self.properties.get('ID_SERIAL_SHORT')) if v]

    def udev_key(self, rules_file):
        """(tokens, kind, warning): the most stable identifier udev can match this disk on."""
        if self.dm_uuid and udev.safe_match_value(self.dm_uuid):
            return [udev.Token('ATTR', 'dm/uuid', '==', self.dm_uuid)], 'dm_uuid', None
        if self.dm_name and udev.safe_match_value(self.dm_name):
            return [udev.Token('ATTR', 'dm/name', '==', self.dm_name)], 'dm_name', None
        if self.wwid and udev.safe_match_value(self.wwid):
            # ATTRS: for SCSI disks the wwid is on the parent scsi_device, for NVMe on the disk.
            return [udev.Token('ATTRS', 'wwid', '==', self.wwid)], 'wwid', None
        if self.serial and udev.safe_match_value(self.serial):
            key = 'ATTR' if self.serial_file == 'serial' else 'ATTRS'
            return [udev.Token(key, 'serial', '==', self.serial)], 'serial', None
        for prop in ('ID_WWN_WITH_EXTENSION', 'ID_WWN', 'ID_SERIAL'):
            value = self.properties.get(prop)
            if value and udev.safe_match_value(value):
                warning = None
                if not udev.sorts_after(rules_file):
                    warning = ('%s is set by %s, which udev reads after %s: this rule cannot match at boot; '
                               'name the rules file so that it sorts later' % (
                                   prop, udev.PERSISTENT_STORAGE_RULES, os.path.basename(rules_file)))
                return [udev.Token('ENV', prop, '==', value)], prop.lower(), warning
        if self.backing_file and udev.safe_match_value(self.backing_file):
            # Loop numbers are handed out first-free; the backing file is what names the data.
            return ([udev.Token('KERNEL', None, '==', 'loop*'), udev.Token('ATTR', 'loop/backing_file', '==', self.backing_file)],
                    'backing_file', None)
        warning = ('no stable identifier (no WWID, serial, device-mapper UUID or backing file): keyed by kernel name, '
                   'which can name another device after a reboot or hot-plug')
        return [udev.Token('KERNEL', None, '==', self.name)], 'kernel_name', warning

    def as_dict(self, selected_by, key_tokens, key_kind):
        return {
            'name': self.name, 'dev': self.dev, 'rotational': self.rotational == '1', 'wwid': self.wwid,
            'serial': self.serial, 'model': self.model, 'vendor': self.vendor, 'dm_uuid': self.dm_uuid,
            'dm_name': self.dm_name, 'backing_file': self.backing_file,
            'udev_key': ', '.join(token.render() for token in key_tokens), 'udev_key_kind': key_kind,
            'selected_by': selected_by,
        }


class Tree(object):
    """The disks under <root>/sys/block, their partitions and device numbers."""

    def __init__(self, root):
        self.root = root
        self.sys_block = rooted(root, '/sys/block')
        if not os.path.isdir(self.sys_block):
            raise InputError('no %s: block devices can only be selected on a running system or a sysfs tree'
                             % self.sys_block)
        self.names = sorted(os.listdir(self.sys_block))
        self._devices = {}
        self._partitions = None

    def device(self, name):
        if name not in self._devices:
            self._devices[name] = Device(self.sys_block, self.root, name)
        return self._devices[name]

    def partitions(self):
        """{partition name: disk name} and {'major:minor': (disk, partition or None)}."""
        if self._partitions is None:
            parts, numbers = {}, {}
            for disk in self.names:
                folder = os.path.join(self.sys_block, disk)
                number = sysfs.read_raw(os.path.join(folder, 'dev'))
                if number:
                    numbers[number.strip()] = (disk, None)
                try:
                    children = os.listdir(folder)
                except OSError:
                    children = []
                for child in children:
                    if os.path.isfile(os.path.join(folder, child, 'partition')):
                        parts[child] = disk
                        number = sysfs.read_raw(os.path.join(folder, child, 'dev'))
                        if number:
                            numbers[number.strip()] = (disk, child)
            self._partitions = (parts, numbers)
        return self._partitions

    def disk_of(self, name):
        """(disk, note) for a disk or partition name; (None, None) when there is no such device."""
        if name in self.names:
            return name, None
        parts = self.partitions()[0]
        if name in parts:
            return parts[name], 'partition %s of %s' % (name, parts[name])
        return None, None

    def disk_of_mount(self, path):
        """(disk, note) for the file system that holds ``path``; raise InputError otherwise."""
        text = read_text(rooted(self.root, '/proc/self/mountinfo'))
        if text is None:
            raise InputError('cannot read %s to find the device under %s' % (rooted(self.root, '/proc/self/mountinfo'), path))
        best = None
        wanted = path.rstrip('/') or '/'
        for point, number, source in parse_mountinfo(text):
            inside = wanted == point or point == '/' or wanted.startswith(point.rstrip('/') + '/')
            if inside and (best is None or len(point) >= len(best[0])):
                best = (point, number, source)
        if best is None:
            raise InputError('mount %s: no mounted file system holds it' % path)
        point, number, source = best
        numbers = self.partitions()[1]
        if number in numbers:
            disk, part = numbers[number]
            via = 'mounted at %s from %s' % (point, part or disk)
            return disk, (via + ' (partition of %s)' % disk if part else via)
        # Btrfs and others report an anonymous device number: fall back to the source.
        if source.startswith('/dev/mapper/'):
            for name in self.names:
                if self.device(name).dm_name == source[len('/dev/mapper/'):]:
                    return name, 'mounted at %s from %s' % (point, source)
        if source.startswith('/dev/'):
            disk, note = self.disk_of(os.path.basename(source))
            if disk:
                return disk, 'mounted at %s from %s' % (point, source)
        raise InputError('mount %s: the file system at %s (%s, device %s) is not on a block device in %s'
                         % (path, point, source or 'no source', number, self.sys_block))


class BlockQueue(Plan):
    """One run of the block_queue module: validate, select, plan, apply (unless check mode), report."""

    def __init__(self, devices, apply=True, persist=True, file=None, root='/', allow_empty=False,
                 reload=True, trigger=False, backup=False, check_mode=False, system_name=None,
                 runner=None, bin_path=None, writer=None):
        self.raw_devices = devices
        self.apply_live = apply
        self.persist = persist
        self.file = file or DEFAULT_FILE
        self.root = validate.check_root(root)
        self.allow_empty = allow_empty
        self.reload = reload
        self.trigger = trigger
        self.backup = backup
        self.check_mode = check_mode
        self.system_name = system_name or platforms.system()
        self.runner = runner
        self.bin_path = bin_path or (lambda name: None)
        self.writer = writer or sysfs.write_value
        self.backup_file = None
        self.entries = []

    # ---------------------------------------------------------------- validation
    def validate(self):
        if not isinstance(self.raw_devices, (list, tuple)) or not self.raw_devices:
            raise InputError('devices must be a non-empty list of selectors with attributes')
        if not self.apply_live and not self.persist:
            raise InputError('apply and persist are both false: there is nothing to do')
        validate.check_path(self.file, 'file')
        try:
            rooted(self.root, self.file)
        except PathError as exc:
            raise InputError('file: %s' % exc)
        if os.path.dirname(self.file) not in udev.RULES_DIRS[:3] or not self.file.endswith('.rules'):
            raise InputError('file %r is not read by udev: use a *.rules file in %s'
                             % (self.file, ' or '.join(udev.RULES_DIRS[:3])))
        self.entries = [Entry(index, raw, self.allow_empty) for index, raw in enumerate(self.raw_devices)]

    # ---------------------------------------------------------------- selection
    def select(self, tree):
        """{disk: {'attributes': {...}, 'sources': {attr: entry}, 'notes': [...], 'entries': [...]}}."""
        chosen = {}
        for entry in self.entries:
            found = self._select_entry(tree, entry)
            if entry.rotational is not None:
                found = [(disk, note) for disk, note in found
                         if (tree.device(disk).rotational == '1') == entry.rotational]
                if not found:
                    continue  # the selection found devices, none of this kind
            for disk, note in found:
                plan = chosen.setdefault(disk, {'attributes': {}, 'sources': {}, 'notes': [], 'entries': []})
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
        return chosen

    def _select_entry(self, tree, entry):
        candidates = None
        notes = {}

        def narrow(disks):
            return disks if candidates is None else [d for d in candidates if d in disks]

        if entry.names:
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
            candidates = narrow(disks)
        if entry.mounts:
            disks = []
            for path in entry.mounts:
                disk, note = tree.disk_of_mount(path)
                notes.setdefault(disk, 'selected as %s' % note)
                if disk not in disks:
                    disks.append(disk)
            candidates = narrow(disks)
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
        """Refuse, before any write, values that a device does not accept."""
        page_kb = max(platforms.page_size() // 1024, 1)
        for disk in sorted(chosen):
            device = tree.device(disk)
            for name, value in sorted(chosen[disk]['attributes'].items()):
                where = '%s.attributes.%s on %s' % (chosen[disk]['sources'][name], name, disk)
                path = device.attribute(name)
                raw = sysfs.read_raw(path)
                if raw is None:
                    raise InputError('%s: %s has no queue attribute %s' % (where, disk, name))
                if not sysfs.is_writable(path):
                    raise InputError('%s: %s is read-only' % (where, path))
                choices, selected = sysfs.parse_choice(raw)
                if choices is not None:
                    if value not in choices:
                        raise InputError('%s: %r is not one of the choices %s offers: %s'
                                         % (where, value, path, ', '.join(choices)))
                    continue
                if name == 'scheduler' and value != raw.strip():
                    raise InputError('%s: %s offers no other scheduler than %r' % (where, disk, raw.strip()))
                if name in ALLOWED_VALUES:
                    continue
                if _INTEGER.match(raw.strip()) and not _INTEGER.match(value):
                    raise InputError('%s: %r is not an integer, and %s holds one' % (where, value, path))
                if name == 'read_ahead_kb' and int(value) % page_kb:
                    raise InputError('%s: %s is not a multiple of the page size (%d KiB); the kernel would round it'
                                     % (where, value, page_kb))
                if name == 'max_sectors_kb':
                    highest = sysfs.read_value(device.attribute('max_hw_sectors_kb'))
                    if int(value) < page_kb or (highest and _INTEGER.match(highest) and int(value) > int(highest)):
                        raise InputError('%s: %s is outside what %s accepts (%d to %s)'
                                         % (where, value, disk, page_kb, highest))

    # ---------------------------------------------------------------- run
    def run(self, module=None):
        self.validate()
        try:
            system = platforms.pick({platforms.LINUX: 'linux', platforms.SUNOS: 'sunos',
                                     platforms.FREEBSD: 'freebsd'}, self.system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        if system != 'linux':
            return self._unsupported(system)
        tree = Tree(self.root)
        chosen = self.select(tree)
        self.check_values(tree, chosen)
        keys = self._udev_keys(tree, chosen)

        local_file = rooted(self.root, self.file)
        before_text = read_text(local_file)
        lines = udev.parse(before_text)
        persisted_before = {}
        for disk in chosen:
            persisted_before[disk] = udev.values_for(lines, keys[disk][0], COMMON_TOKENS)

        result = Result(self.check_mode)
        live_before, live_after, refused, written = {}, {}, {}, {}
        for disk in sorted(chosen):
            device = tree.device(disk)
            for name in self._order(chosen[disk]['attributes']):
                want = chosen[disk]['attributes'][name]
                path = device.attribute(name)
                live_before[(disk, name)] = sysfs.read_value(path)
                if not self.apply_live or self.check_mode:
                    live_after[(disk, name)] = live_before[(disk, name)]
                    continue
                # Read again right before writing: a scheduler switch changes nr_requests.
                current = sysfs.read_value(path)
                if not same_value(current, want):
                    written[(disk, name)] = current
                    try:
                        self.writer(path, want)
                    except sysfs.SysfsError as exc:
                        refused[(disk, name)] = str(exc)
                live_after[(disk, name)] = sysfs.read_value(path)

        persist_values = {}
        if self.persist:
            for disk in sorted(chosen):
                wanted = dict((name, value) for name, value in chosen[disk]['attributes'].items()
                              if (disk, name) not in refused)
                shared = keys[disk][3]
                if wanted:
                    persist_values.setdefault(disk if not shared else shared[0], (disk, wanted))
            for target in sorted(persist_values):
                disk, wanted = persist_values[target]
                lines = udev.set_values(lines, keys[disk][0], COMMON_TOKENS, wanted, first=FIRST)
        after_text = before_text
        if any(line.dirty for line in lines):
            after_text = udev.render(lines)
            if not (before_text or '').strip():
                after_text = HEADER + '\n' + after_text
        change = FileChange(local_file, before_text, after_text, shown_path=self.file)
        change.report(result)
        reload_note = None
        if change.needed and not self.check_mode:
            self.backup_file = change.apply(module, backup_file=self.backup, mode=0o644)
            reload_note = self._reload(sorted(chosen))
        persisted_after = {}
        for disk in chosen:
            persisted_after[disk] = udev.values_for(udev.parse(after_text), keys[disk][0], COMMON_TOKENS)

        for disk in sorted(chosen):
            for name in self._order(chosen[disk]['attributes']):
                result.add(self._record(disk, name, chosen[disk], keys[disk], live_before, live_after,
                                        refused, written, persisted_before[disk], persisted_after[disk],
                                        change.needed, reload_note))
        result.extra['devices'] = [
            tree.device(disk).as_dict(chosen[disk]['entries'], keys[disk][0], keys[disk][1]) for disk in sorted(chosen)]
        if reload_note:
            result.extra['udev'] = reload_note
        if self.backup_file:
            result.extra['backup_file'] = self.backup_file
        return result

    @staticmethod
    def _order(attributes):
        return sorted(attributes, key=lambda name: (name not in FIRST, name.startswith('iosched/'), name))

    def _udev_keys(self, tree, chosen):
        """{disk: (tokens, kind, warning, [disks sharing the key])}; a shared key needs equal values."""
        keys, by_key = {}, {}
        for disk in sorted(chosen):
            tokens, kind, warning = tree.device(disk).udev_key(self.file)
            signature = tuple(token.render() for token in tokens)
            by_key.setdefault(signature, []).append(disk)
            keys[disk] = [tokens, kind, warning, []]
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
                keys[disk][3] = list(disks)
        for disk in keys:
            keys[disk] = tuple(keys[disk])
        return keys

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

    def _record(self, disk, name, plan, key, live_before, live_after, refused, written, persisted_before,
                persisted_after, file_changed, reload_note):
        want = plan['attributes'][name]
        record_name = '%s/queue/%s' % (disk, name)
        target = self.file if self.persist else '/sys/block/%s/queue/%s' % (disk, name)
        live_now = live_before[(disk, name)] if self.check_mode else live_after[(disk, name)]
        persisted_now = (persisted_before if self.check_mode else persisted_after).get(name)
        tokens, kind, warning, shared = key
        details = list(plan['notes'])
        if self.persist:
            details.append('keyed by %s' % ', '.join(token.render() for token in tokens))
            if warning:
                details.append('warning: %s' % warning)
            others = [d for d in shared if d != disk]
            if others:
                details.append('the same rule applies to %s' % ', '.join(others))
        if (disk, name) in refused:
            details.append('the kernel refused %r: %s; not persisted' % (want, refused[(disk, name)]))
            return Setting(record_name, target, want, live_now, persisted_now, FAILED, '; '.join(details))
        live_ok = same_value(live_before[(disk, name)], want) if self.apply_live else None
        if self.apply_live and not self.check_mode and (disk, name) in written:
            if not same_value(live_after[(disk, name)], want):
                details.append('wrote %r but %s reads back %r' % (want, disk, live_after[(disk, name)]))
                return Setting(record_name, target, want, live_now, persisted_now, FAILED, '; '.join(details))
            details.append('was %r' % written[(disk, name)])
        persisted_ok = same_value(persisted_before.get(name), want) if self.persist else None
        if self.persist and not persisted_ok:
            details.append('%s %s' % ('would write' if self.check_mode else 'wrote', self.file))
            if file_changed and reload_note:
                details.append(reload_note['detail'])
        status = decide_status(live_ok, persisted_ok, self.check_mode)
        return Setting(record_name, target, want, live_now, persisted_now, status, '; '.join(details))

    def _unsupported(self, system):
        why = {
            'sunos': 'SunOS has no per-device block queue attributes (no sysfs, no rq_affinity); queue depth and '
                     'throttles are driver settings (sd.conf, ssd_max_throttle in /etc/system)',
            'freebsd': 'FreeBSD has no per-device block queue attributes like these (no sysfs, no rq_affinity); '
                       'CAM tunes queue depth per device with camcontrol tags',
        }[system]
        result = Result(self.check_mode)
        for entry in self.entries:
            for name in self._order(entry.attributes):
                result.add(Setting('%s/queue/%s' % (entry.describe(), name), None, entry.attributes[name],
                                   None, None, decide_status(None, None, self.check_mode, unsupported=True), why))
        return result
