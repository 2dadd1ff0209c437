# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the items of block_queue's ``devices`` option, checked.

How devices are selected (kernel name or glob, WWID/WWN, serial, model, vendor, mount
point), what they get, the checks of attribute names and values that need no device, and,
given a device, what it accepts (check_value) and cannot have here (unsupported_why).

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import udev

SELECTOR_KEYS = ('name', 'wwn', 'serial', 'model', 'vendor', 'mount')
ENTRY_KEYS = SELECTOR_KEYS + ('rotational', 'slaves', 'allow_empty', 'attributes')

_ATTRIBUTE_NAME = re.compile(r'^[a-z0-9_]+(/[a-z0-9_]+)?\Z')
INTEGER = re.compile(r'^-?[0-9]+\Z')

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


def meets(actual, desired, how=None):
    """compare.same_value, or for a number under a bound (``minimum``/``maximum``) the bound met."""
    if how in (None, compare.EXACT) or actual is None or desired is None or \
            not (INTEGER.match(str(actual).strip()) and INTEGER.match(str(desired).strip())):
        return compare.same_value(actual, desired)
    return compare.satisfies(str(actual).strip(), str(desired).strip(), how)


def to_persist(desired, grants, how=None):
    """The value a rule gets: a bound keeps the most any of ``grants`` (live, the rule now) already gives."""
    if how in (None, compare.EXACT) or not INTEGER.match(str(desired).strip()):
        return desired
    usable = [str(g).strip() for g in grants if g is not None and INTEGER.match(str(g).strip())]
    return int(compare.combine(str(desired).strip(), usable, how))


class Entry(object):
    """One item of ``devices``: how devices are selected and what they get."""

    def __init__(self, index, raw, allow_empty_default):
        where = 'devices[%d]' % index
        self.index = index
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
            if not INTEGER.match(value):
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


# Why an attribute cannot be set here, and whether its udev rule is still written.
Unsupported = namedtuple('Unsupported', 'why persisted')


def unsupported_why(device, name, value, how):
    """Unsupported(why, persisted) when the device or container cannot have ``name`` set now, else None.

    A known attribute the device (or this kernel) does not have gets no rule: udev would fail
    to write it at every event.  Under a read-only /sys (a container) the rule is still
    written, for a boot where it applies.  A value already met needs no write at all."""
    path = device.attribute(name)
    raw = sysfs.read_raw(path)
    if raw is None:
        if name in ALLOWED_VALUES or name in MINIMUM or name == 'scheduler':
            return Unsupported('%s has no queue attribute %s on this kernel or driver' % (device.name, name), False)
        return None
    if not meets(sysfs.parse_choice(raw)[1].strip(), value, how) and sysfs.mounted_read_only(path):
        return Unsupported('read-only /sys (mounted read-only, as in a container)', True)
    return None


def check_value(device, name, value, where, page_kb):
    """Refuse (InputError naming ``where``) a value ``device`` does not accept; ``page_kb`` the page size in KiB."""
    disk = device.name
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
        return
    if name == 'scheduler' and value != raw.strip():
        raise InputError('%s: %s offers no other scheduler than %r' % (where, disk, raw.strip()))
    if name in ALLOWED_VALUES:
        return
    if INTEGER.match(raw.strip()) and not INTEGER.match(value):
        raise InputError('%s: %r is not an integer, and %s holds one' % (where, value, path))
    if name == 'read_ahead_kb' and int(value) % page_kb:
        raise InputError('%s: %s is not a multiple of the page size (%d KiB); the kernel would round it'
                         % (where, value, page_kb))
    if name == 'max_sectors_kb':
        highest = sysfs.read_value(device.attribute('max_hw_sectors_kb'))
        if int(value) < page_kb or (highest and INTEGER.match(highest) and int(value) > int(highest)):
            raise InputError('%s: %s is outside what %s accepts (%d to %s)'
                             % (where, value, disk, page_kb, highest))
