# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: which block devices TuneD's device plugins take, as TuneD matches them.

- ``devices=`` (tuned/hardware/device_matcher.py): rules split at blanks or commas, shell
  patterns; ``!`` rules exclude; no positive rule means every device (selects());
- ``devices_udev_regex=`` (hardware/device_matcher_udev.py, plugins/base.py): when set it
  replaces ``devices``; searched (re.MULTILINE) in the device's udev properties, one
  ``NAME=value`` line each, sorted by name (udev_properties(), udev_selects());
- the disk plugin manages only some block devices (plugins/plugin_disk.py
  _device_is_supported): disk_plugin_takes().

The device itself is read under root by tuned_host.BlockDevice; these functions are pure.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import itertools
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_expand


def selects(devices, device):
    """TuneD's ``devices=`` for ``device`` (hardware/device_matcher.py): rules split at blanks or
    commas, shell patterns; ``!`` rules exclude; no positive rule means every device."""
    rules = [rule for rule in re.split(r'\s|,\s*', devices or '') if rule.strip()]
    positive = [rule for rule in rules if not rule.startswith('!')] or ['*']
    negative = [rule[1:] for rule in rules if rule.startswith('!')]
    return any(fnmatch.fnmatch(device, rule) for rule in positive) and \
        not any(fnmatch.fnmatch(device, rule) for rule in negative)


# the parents' subsystems of the block devices TuneD's disk plugin manages (plugins/plugin_disk.py
# _device_is_supported): a whole disk, not removable, with no parent device or one of these;
# mmc since TuneD 2.26
DISK_PARENTS = ('scsi', 'virtio', 'xen', 'nvme')
DISK_PARENTS_MMC_SINCE = (2, 26)
UDEV_ORDERS = 720          # the most orders of DEVLINKS and TAGS tried (6 links: every order)


def disk_plugin_takes(device, version=None):
    """(True, None) when TuneD's disk plugin (of ``version``, None when not known) manages
    ``device`` (tuned_host.BlockDevice), (False, why) when it does not, (None, why) when that is
    not known: DEVTYPE ``disk`` in the device's uevent, its ``removable`` reading ``0``, and no
    parent device or a parent of a subsystem in DISK_PARENTS (the nearest folder above it with
    a uevent, as libudev looks for it)."""
    if device.uevent is None or device.removable is None:
        return None, ('the host tree does not show /sys/block/%s/%s, which tells whether TuneD\'s disk plugin '
                      'manages it' % (device.name, 'uevent' if device.uevent is None else 'removable'))
    if device.uevent.get('DEVTYPE') != 'disk':
        return False, '%s is no whole disk (DEVTYPE %s)' % (device.name, device.uevent.get('DEVTYPE'))
    if device.removable != '0':
        return False, '%s is removable' % device.name
    parent = device.parent
    if parent == 'mmc' and version is None:
        return None, 'TuneD manages disks on mmc since 2.26, and its version is not known'
    if parent is not None and parent not in DISK_PARENTS + (('mmc',) if version and version >= DISK_PARENTS_MMC_SINCE else ()):
        return False, 'the parent device of %s is %s' % (device.name, 'of the subsystem %s' % parent if parent
                                                         else 'of no subsystem')
    return True, None


def udev_properties(device):
    """The texts TuneD matches devices_udev_regex against for ``device`` (hardware/device_matcher_udev.py:
    every udev property as ``NAME=value``, one a line, sorted by name), one text per order that
    libudev may list DEVLINKS and TAGS in (they are sets); None without a udev database entry."""
    database = device.udev
    if database is None or device.uevent is None:
        return None
    base = dict(device.uevent)
    if base.get('DEVNAME') and not base['DEVNAME'].startswith('/'):
        base['DEVNAME'] = '/dev/' + base['DEVNAME']
    base.update({'DEVPATH': device.devpath, 'SUBSYSTEM': 'block'})
    base.update(database['E'])
    if database['I']:
        base['USEC_INITIALIZED'] = database['I']
    orders = [[]]
    for key, items, join in (('DEVLINKS', ['/dev/' + link for link in database['S']], ' '),
                             ('TAGS', database['G'], ':'), ('CURRENT_TAGS', database['Q'], ':')):
        if not items:
            continue
        ways = list(itertools.islice(itertools.permutations(items), UDEV_ORDERS)) if len(items) < 7 else \
            [tuple(sorted(items)), tuple(reversed(sorted(items)))]
        orders = [order + [(key, ':%s:' % join.join(way) if join == ':' else join.join(way))]
                  for order in orders for way in ways][:UDEV_ORDERS]
    texts = []
    for order in orders:
        properties = dict(base, **dict(order))
        texts.append(''.join('%s=%s\n' % (key, properties[key]) for key in sorted(properties)))
    return texts


def udev_selects(regex, device):
    """(match, why) of ``devices_udev_regex`` for ``device``: a match found with re.MULTILINE in
    udev_properties(); None with why when the tree has no udev database entry for it, or when
    the answer depends on the order libudev lists DEVLINKS or TAGS in."""
    texts = udev_properties(device)
    if texts is None:
        return None, ('its udev properties match devices_udev_regex=%s, and the host tree has no udev database '
                      'entry for it (/run/udev/data)' % regex)
    try:
        found = set(re.search(regex, text, re.MULTILINE) is not None for text in texts)
    except re.error as exc:
        return None, 'devices_udev_regex=%s is no regular expression (%s)' % (regex, exc)
    if len(found) > 1:
        return None, ('its udev properties match devices_udev_regex=%s, which depends on the order udev lists '
                      'DEVLINKS or TAGS in' % regex)
    return found.pop(), None


def disk_units(units, device, version=None):
    """([Unit or None], why): of the [disk] ``units`` (in applying order), the one that takes
    ``device`` (tuned_host.BlockDevice, or a kernel name: then only ``devices`` is matched),
    None for none; several when that is not known, with why (what the host tree does not
    show), else one and None.

    The disk plugin manages a device only when disk_plugin_takes() it; the device then goes
    to the first unit, in applying order, whose ``devices`` (or ``devices_udev_regex``) select
    it (plugins/base.py assign_free_devices, units/manager.py create; a device that appears
    later goes the same way, plugins/hotplug.py _add_device)."""
    name = getattr(device, 'name', device)
    takes, why = disk_plugin_takes(device, version) if not isinstance(device, str) else (True, None)
    if takes is False:
        return [None], None
    unknown = [why] if why else []
    outcomes = [None] if takes is None else []
    for unit in units:
        match, reason = _selects(unit, device, name)
        if match is False:
            continue
        outcomes.append(unit)
        if match:
            break
        unknown.append('TuneD gives %s to [%s] only if %s' % (name, unit.name, reason))
    else:
        outcomes.append(None)
    return outcomes, '; '.join(unknown) or None


def _selects(unit, device, name):
    """(match, why not known) of one [disk] unit for the device: ``devices_udev_regex`` (not
    expanded: loader.py expands ``devices`` only) replaces ``devices`` when set (plugins/base.py)."""
    if unit.devices_udev_regex is not None:
        if isinstance(device, str):
            return None, 'its udev properties match devices_udev_regex=%s' % unit.devices_udev_regex
        return udev_selects(unit.devices_udev_regex, device)
    if tuned_expand.Expander.unresolved(unit.devices):
        return None, 'devices=%s selects it, which holds what the collection cannot evaluate' % unit.devices
    return selects(unit.devices, name), None
