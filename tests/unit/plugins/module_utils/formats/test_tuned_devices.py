# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which block devices a TuneD [disk] unit applies to on the tuned host (formats/tuned.py
disk_units, read from the host tree by tuned_host.BlockDevice), against TuneD's own code on the
same tree (fixtures/tuned/device_oracle.py: TuneD's Manager, DiskPlugin, hardware Inventory and
device matchers over pyudev and libudev, from Debian's tuned and python3-pyudev packages,
downloaded with `apt-get download` and unpacked, never installed).

The oracle reads the tree as /sys and /run/udev in a mount namespace of its own (`unshare -m`,
root only: nothing is mounted outside it), so that libudev sees exactly the files the collection
reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_devices
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs
from ansible_collections.dbhost.tuning.tests.unit.fixtures.tuned import debian
from ansible_collections.dbhost.tuning.tests.unit.helpers import put

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'tuned')
# the host tree's udev database, for the disks tree.yml gives none (as udev writes it: E: properties,
# S: links under /dev, G:/Q: tags, I: when it was initialized)
UDEV = {
    'sda': ['S:disk/by-id/wwn-0x5000c500a1b2c3d4', 'S:disk/by-path/pci-0000:00:1f.2-ata-1', 'G:systemd',
            'Q:systemd', 'I:2461537'],
    'sdb': ['E:ID_BUS=scsi', 'E:ID_VENDOR=3PARdata', 'E:ID_PATH=pci-0000:00:03.0-fc-0x20', 'S:disk/by-path/pci-fc1',
            'I:2461538'],
    'sdc': ['E:ID_BUS=scsi', 'E:ID_VENDOR=3PARdata', 'E:ID_PATH=pci-0000:00:03.1-fc-0x21', 'I:2461539'],
    'sdd': ['E:ID_BUS=usb', 'E:ID_VENDOR=Generic', 'I:2461540'],
    'nvme0n1': ['E:ID_MODEL=Samsung SSD 970 EVO Plus 1TB', 'E:ID_PATH=pci-0000:3d:00.0-nvme-1',
                'S:disk/by-id/nvme-eui.0025388b91c2d4e1', 'G:systemd', 'Q:systemd', 'I:2461541'],
    'vdb': ['E:ID_PATH=pci-0000:00:05.0', 'S:disk/by-path/virtio-pci-0000:00:05.0', 'I:2461542'],
    'dm-0': ['E:DM_NAME=mpatha', 'E:DM_UUID=mpath-360002ac0000000000000000a00012345', 'S:mapper/mpatha',
             'S:disk/by-id/dm-name-mpatha', 'G:systemd', 'I:2461543'],
    'dm-1': ['E:DM_NAME=vgdata-lvora', 'E:DM_VG_NAME=vgdata', 'E:DM_LV_NAME=lvora', 'S:mapper/vgdata-lvora',
             'S:vgdata/lvora', 'I:2461544'],
    'loop0': ['E:ID_FS_TYPE=xfs', 'I:2461545'],
    'loop1': ['I:2461546'],
}
# profiles over the tree: devices= rules (shell patterns, ! rules, blanks and commas, variables),
# devices_udev_regex= on properties, links and tags, priorities, several units, [sysfs] units
PROFILES = [
    '[disk]\nelevator=none\n',
    '[disk]\ndevices=sd*, !sdc\n[fast]\ntype=disk\ndevices=nvme*,vd*\npriority=-1\n',
    '[disk]\ndevices=!sda !nvme0n1\n',
    '[disk]\ndevices=!*\n[rest]\ntype=disk\n',
    '[variables]\nmine=sd[ab]\n[disk]\ndevices=${mine} dm-1\n',
    '[disk]\ndevices_udev_regex=ID_BUS=scsi\n',
    '[a]\ntype=disk\ndevices_udev_regex=^DEVPATH=/devices/virtual/\n[b]\ntype=disk\ndevices=!dm-*\n',
    '[a]\ntype=disk\ndevices_udev_regex=DEVLINKS=.*by-(id|path)/\n[disk]\ndevices=loop*\n',
    '[a]\ntype=disk\ndevices_udev_regex=^TAGS=.*:systemd:$\npriority=5\n[b]\ntype=disk\ndevices=sd*\npriority=7\n',
    '[a]\ntype=disk\ndevices_udev_regex=DEVNAME=/dev/(vd|nvme)\n[b]\ntype=disk\ndevices=vdb\n[c]\ntype=disk\n',
    '[a]\ntype=disk\ndevices_udev_regex=ID_PATH=pci-0000:00:03\\..-fc\nenabled=0\n[b]\ntype=disk\n'
    'devices_udev_regex=DEVTYPE=disk\\nID_\n',
    '[sysfs]\ndevices=sdb\n/sys/block/sda/queue/rq_affinity=2\n[s2]\ntype=sysfs\ndevices_udev_regex=NOPE\n'
    '/sys/kernel/mm/ksm/run=0\n',
]


@pytest.fixture(scope='module')
def debian_packages(tmp_path_factory):
    """TuneD's and pyudev's Python packages, from Debian's tuned and python3-pyudev."""
    if not shutil.which('unshare') or os.geteuid() != 0:
        pytest.skip('the oracle mounts the host tree in a mount namespace of its own: unshare, as root')
    return debian.python_path(debian.unpack(str(tmp_path_factory.mktemp('tuned-debs')), ['tuned', 'python3-pyudev']))


@pytest.fixture
def host(tmp_path):
    """The fake sysfs tree of tests/unit/fixtures/block, a udev database entry for every disk, TuneD enabled."""
    base = str(tmp_path)
    description = fake_sysfs.build(base)
    for name, lines in UDEV.items():
        disk = description['disks'][name]
        existing = list(disk.get('udev') or [])
        put(base, '/run/udev/data/b%s' % disk['dev'], '\n'.join(existing + lines) + '\n')
    wants = os.path.join(base, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/usr/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))
    return base


def collection(base, text):
    """{unit name or None: [devices]} as the collection reads the tree, and [devices] TuneD's disk plugin manages."""
    put(base, '/etc/tuned/case/tuned.conf', text)
    put(base, '/etc/tuned/active_profile', 'case\n')
    profile = tuned_host.active(base)
    assert not profile.problems, profile.problems
    found, managed = {}, []
    for name in sorted(os.listdir(os.path.join(base, 'sys', 'block'))):
        device = tuned_host.BlockDevice(base, name)
        if tuned_devices.disk_plugin_takes(device, profile.version) == (True, None):
            managed.append(name)
        units, why = profile.disk_units(device)
        assert why is None, (name, why)
        found.setdefault(units[0].name if units[0] else None, []).append(name)
    return found, managed, profile


def oracle(packages, base, count):
    """TuneD's answers (fixtures/tuned/device_oracle.py) for the profiles case0 .. case<count - 1>."""
    requests = [{'dirs': [os.path.join(base, 'usr/lib/tuned'), os.path.join(base, 'etc/tuned')],
                 'names': ['case%d' % index]} for index in range(count)]
    script = ('mount --bind "$1/sys" /sys && mount -t tmpfs tmpfs /run && mkdir -p /run/udev && '
              'mount --bind "$1/run/udev" /run/udev && exec "$2" "$3"')
    env = dict(os.environ, PYTHONPATH=packages, SYSTEMD_DEVICE_VERIFY_SYSFS='0')
    out = subprocess.run(['unshare', '-m', '--propagation', 'private', 'sh', '-c', script, 'oracle', base,
                          sys.executable, os.path.join(FIXTURES, 'device_oracle.py')],
                         input=json.dumps(requests).encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         check=False)
    assert out.returncode == 0, out.stderr.decode(errors='replace')
    return json.loads(out.stdout.decode())


def test_disk_units_take_the_devices_tuned_gives_them(debian_packages, host):
    for index, text in enumerate(PROFILES):
        put(host, '/etc/tuned/case%d/tuned.conf' % index, text)
    told = oracle(debian_packages, host, len(PROFILES))
    compared = 0
    for text, answer in zip(PROFILES, told):
        assert answer['error'] is None, (text, answer)
        found, managed, profile = collection(host, text)
        if answer['disk']:      # the disk plugin looks at the devices only when a [disk] unit applies
            assert managed == answer['managed'], text
        everyone = dict((unit, devices) for unit, devices in answer['disk'].items() if devices)
        unmanaged = sorted(set(os.listdir(os.path.join(host, 'sys', 'block'))) - set(
            device for devices in everyone.values() for device in devices))
        if unmanaged:
            everyone[None] = unmanaged
        assert found == everyone, text
        # TuneD's sysfs plugin has no devices: devices= and devices_udev_regex= leave its units applying
        assert answer['sysfs'] == dict((unit.name, True) for unit in profile.units if unit.type == 'sysfs'), text
        compared += 1
    # the disk plugin manages every whole, non-removable disk whose parent is scsi, nvme or virtio,
    # or that has no parent device (device-mapper, loop): not the removable sdd
    assert told[0]['managed'] == ['dm-0', 'dm-1', 'loop0', 'loop1', 'nvme0n1', 'sda', 'sdb', 'sdc', 'sde', 'vdb']
    print('%d profiles: every block device goes to the [disk] unit TuneD gives it' % compared)


class Device(object):
    """A block device as tuned_host.BlockDevice gives it, made by hand."""

    def __init__(self, name='sda', uevent='MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk', removable='0', parent='scsi',
                 udev=None, devpath='/devices/pci0000:00/0000:00:1f.2/host0/target0:0:0/0:0:0:0/block/sda'):
        self.name = name
        self.uevent = dict(line.partition('=')[::2] for line in uevent.splitlines()) if uevent is not None else None
        self.removable = removable
        self.parent = parent
        self.udev = udev
        self.devpath = devpath


def database(properties=(), links=(), tags=(), current=(), usec=None):
    return {'E': dict(properties), 'S': list(links), 'G': list(tags), 'Q': list(current), 'I': usec}


@pytest.mark.parametrize('device, version, takes', [
    (Device(), None, True),
    (Device(parent=None), None, True),                       # device-mapper, loop: no parent device
    (Device(parent='virtio'), None, True), (Device(parent='xen'), None, True), (Device(parent='nvme'), None, True),
    (Device(parent='usb'), None, False), (Device(parent=''), None, False),   # a parent without a subsystem
    (Device(removable='1'), None, False), (Device(removable=None), None, None),
    (Device(uevent='MAJOR=8\nMINOR=1\nDEVTYPE=partition'), None, False), (Device(uevent=None), None, None),
    # MMC disks from TuneD 2.26 (plugins/plugin_disk.py); the version not known: not known
    (Device(parent='mmc'), (2, 25), False), (Device(parent='mmc'), (2, 26), True), (Device(parent='mmc'), None, None),
])
def test_the_disks_the_disk_plugin_manages(device, version, takes):
    found, why = tuned_devices.disk_plugin_takes(device, version)
    assert found is takes and (why is None) is (takes is True)


def test_udev_properties_as_libudev_lists_them():
    device = Device(udev=database([('ID_BUS', 'scsi')], ['disk/by-id/a', 'disk/by-path/b'], ['systemd'], ['systemd'],
                                  '123'))
    texts = tuned_devices.udev_properties(device)
    # DEVLINKS is a set in libudev: both orders
    assert len(texts) == 2 and texts[0] == (
        'CURRENT_TAGS=:systemd:\nDEVLINKS=/dev/disk/by-id/a /dev/disk/by-path/b\nDEVNAME=/dev/sda\n'
        'DEVPATH=/devices/pci0000:00/0000:00:1f.2/host0/target0:0:0/0:0:0:0/block/sda\nDEVTYPE=disk\nID_BUS=scsi\n'
        'MAJOR=8\nMINOR=0\nSUBSYSTEM=block\nTAGS=:systemd:\nUSEC_INITIALIZED=123\n')
    assert 'DEVLINKS=/dev/disk/by-path/b /dev/disk/by-id/a\n' in texts[1]
    assert tuned_devices.udev_properties(Device()) is None
    # no links, no tags: no such property; a uevent without DEVNAME gives none either
    bare = Device(uevent='MAJOR=8\nMINOR=0\nDEVTYPE=disk', udev=database(usec='5'))
    assert tuned_devices.udev_properties(bare) == [
        'DEVPATH=/devices/pci0000:00/0000:00:1f.2/host0/target0:0:0/0:0:0:0/block/sda\nDEVTYPE=disk\nMAJOR=8\n'
        'MINOR=0\nSUBSYSTEM=block\nUSEC_INITIALIZED=5\n']
    assert tuned_devices.udev_selects('^ID_BUS=scsi$', device) == (True, None)
    assert tuned_devices.udev_selects('^ID_BUS=ata', device) == (False, None)
    assert tuned_devices.udev_selects('DEVTYPE=disk\nID_BUS', device) == (True, None)      # sorted, one a line
    # what depends on the order libudev lists the links in is not known
    found, why = tuned_devices.udev_selects('^DEVLINKS=/dev/disk/by-id/', device)
    assert found is None and 'order' in why
    found, why = tuned_devices.udev_selects('ID_BUS=(', device)
    assert found is None and 'no regular expression' in why
    found, why = tuned_devices.udev_selects('ID_BUS=scsi', Device())
    assert found is None and '/run/udev/data' in why
    # more links than every order can be tried for: the sorted order and its reverse
    many = Device(udev=database(links=['l%d' % number for number in range(7)]))
    assert len(tuned_devices.udev_properties(many)) == 2
    six = Device(udev=database(links=['l%d' % number for number in range(6)]))
    assert len(tuned_devices.udev_properties(six)) == 720
    # links and tags together: at most 720 orders in all
    both = Device(udev=database(links=['l%d' % number for number in range(6)], tags=['a', 'b']))
    assert len(tuned_devices.udev_properties(both)) == 720


def test_disk_units_in_applying_order_and_what_is_not_known():
    profile = tuned.load(['p'], lambda name, skip: ('/etc/tuned/p/tuned.conf', (
        '[late]\ntype=disk\npriority=10\nelevator=none\n[early]\ntype=disk\ndevices_udev_regex=ID_BUS=scsi\n'
        'priority=-1\nelevator=mq-deadline\n[named]\ntype=disk\ndevices=${f:exec:/bin/list}\nelevator=kyber\n')))
    scsi = Device(udev=database([('ID_BUS', 'scsi')]))
    units, why = profile.disk_units(scsi)
    assert [unit.name for unit in units] == ['early'] and why is None
    assert profile.disk(scsi, 'elevator')[0] == 'mq-deadline' and profile.disk(scsi, 'elevator')[3] is None
    # no udev entry: [early] may take it; [named]'s devices= holds a function: may too; else [late]
    units, why = profile.disk_units(Device())
    assert [unit.name for unit in units] == ['early', 'named', 'late']
    assert why == ('TuneD gives sda to [early] only if its udev properties match devices_udev_regex=ID_BUS=scsi, and '
                   'the host tree has no udev database entry for it (/run/udev/data); TuneD gives sda to [named] only '
                   'if devices=${f:exec:/bin/list} selects it, which holds what the collection cannot evaluate')
    assert profile.disk(Device(), 'elevator')[0] == 'mq-deadline' and profile.disk(Device(), 'elevator')[3] == why
    assert profile.disk(Device(), 'readahead') is None
    # a kernel name alone: devices= is matched, a udev regex is not known
    units, why = profile.disk_units('sda')
    assert [unit.name for unit in units] == ['early', 'named', 'late'] and 'devices_udev_regex=ID_BUS=scsi' in why
    # a disk the plugin does not manage is no unit's
    assert profile.disk_units(Device(removable='1')) == ([None], None)
    assert profile.disk(Device(removable='1'), 'elevator') is None
