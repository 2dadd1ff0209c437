# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the disks under <root>/sys/block, as block_queue sees them.

A Device is what sysfs and the udev database say about one disk (identifiers, the most
stable udev key); the Tree knows every disk, its partitions and device numbers, and which
disk holds a mounted file system.  Reads only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, confine, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import udev
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue.entries import normalize_wwn


def parse_mountinfo(text):
    """[(mount_point, 'major:minor', source)] from /proc/self/mountinfo, in file order."""
    return [(mount.mount_point, mount.dev, mount.source) for mount in _mountinfo.parse(text)]


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

    def _exists(self, path):
        try:
            return os.path.lexists(rooted(self.root, path))
        except PathError:
            return False

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
        if point == '/' and wanted != '/' and not self._exists(path):
            # Every path falls under /: a mistyped or absent mount point would tune the root disk.
            raise InputError('mount %s: no such path, and no file system is mounted there (only / holds it; '
                             'give mount: / to mean the root disk)' % path)
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
