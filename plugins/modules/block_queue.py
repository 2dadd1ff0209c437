#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: block_queue
short_description: Set block-device queue attributes (rq_affinity, scheduler, read_ahead_kb...) live and in udev rules
version_added: 0.1.0
description:
  - Sets queue attributes of selected block devices (C(/sys/block/<device>/queue/*)) in one call, and
    persists them as udev rules so that they come back after a reboot and when a device is plugged in again.
  - Devices are selected by kernel name or glob, by stable identifier (WWN or WWID, serial, model, vendor),
    by the mount point of a file system on them, and for device-mapper and multipath devices also by
    their underlying devices. A partition always resolves to its disk.
  - Every value is checked against what the device accepts before anything is written - the scheduler
    against the device's bracketed list, C(rq_affinity), C(nomerges) and the flags against their values,
    numbers against their ranges (C(read_ahead_kb) in whole pages, C(max_sectors_kb) up to C(max_hw_sectors_kb)),
    and read-only attributes are refused.
  - Live values are written only where they differ, the scheduler first (switching it resets C(nr_requests)),
    and read back.
  - Each device gets one rule in O(file), keyed by the most stable identifier it has, in this order -
    the device-mapper UUID (C(ATTR{dm/uuid})), the device-mapper name, the WWID from sysfs (C(ATTRS{wwid})),
    the serial from sysfs, C(ID_WWN_WITH_EXTENSION), C(ID_WWN) or C(ID_SERIAL) from the udev database,
    the backing file of a loop device (C(ATTR{loop/backing_file})) - and by kernel name (C(KERNEL==))
    only when it has none of these, with a warning in the record's detail.
    Sysfs identifiers are preferred because udev reads them itself, whatever the order of the rules files.
  - Comments, other rules and other assignments in O(file) are kept; the rule of a device is updated in place.
  - When O(file) changes, C(udevadm control --reload) is run; where udevadm is missing or udevd is not running
    (a container), the records say so and the task does not fail.
  - Three values are compared for every device and attribute - desired, live, and the one the device's rule
    sets - so that a value fixed by hand and lost at the next reboot shows as drift.
  - On SunOS and FreeBSD every record is C(unsupported), with the reason; they have no per-device queue
    attributes of this kind.
  - A known queue attribute a device does not have (C(write_cache) on a device without a cache setting, a newer
    kernel's attribute) is V(unsupported) with the reason, and gets no rule (udev would fail to write it at
    every event). Under a C(/sys) mounted read-only (a container) an attribute whose value is not met is
    V(unsupported) too, its live value left alone, and its rule is still written for the next boot. An
    unknown attribute name that the device does not have fails the task, as a misspelt name.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/block_queue.yml
options:
  devices:
    description:
      - Which devices get which attributes. Every item selects devices and gives them O(devices[].attributes).
      - Within an item, all given selectors must match (and); a list inside one selector matches any of its values (or).
      - When several items set the same attribute on the same device, the later item wins, and the record says so.
      - A device that no item selects is never touched.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - Kernel names or shell globs such as V(sd*), V(nvme*n1) or V(dm-*). A partition name selects its disk.
          - A name that does not exist fails the task. A glob skips devices without a medium (size 0),
            such as unbound loop devices.
        type: list
        elements: str
      wwn:
        description:
          - WWN or WWID, as sysfs (C(naa.5000c500a1b2c3d4)) or udev (C(0x5000c500a1b2c3d4)) writes it.
        type: list
        elements: str
      serial:
        description: Serial number or glob, from sysfs or the udev database (C(ID_SERIAL), C(ID_SERIAL_SHORT)).
        type: list
        elements: str
      model:
        description: Model glob, from C(device/model) in sysfs.
        type: list
        elements: str
      vendor:
        description: Vendor glob, from C(device/vendor) in sysfs.
        type: list
        elements: str
      mount:
        description:
          - Paths; each selects the disk under the file system that holds it (from C(/proc/self/mountinfo)).
        type: list
        elements: str
      rotational:
        description:
          - Keep only rotational (V(true)) or non-rotational (V(false)) devices of this item's selection.
          - When the selection finds devices but none of this kind, that is not an error.
        type: bool
      slaves:
        description:
          - Also select the devices under a selected device-mapper or multipath device (its C(slaves/), recursively).
        type: bool
        default: false
      allow_empty:
        description: Accept that this item selects nothing. Defaults to O(allow_empty).
        type: bool
      attributes:
        description:
          - Queue attributes and their values, for example C(rq_affinity), C(scheduler), C(nr_requests),
            C(read_ahead_kb), C(max_sectors_kb), C(nomerges), C(add_random), C(rotational), or any other
            writable file in C(queue/) by name (C(iosched/fifo_batch) for a scheduler's tunable).
        type: dict
        required: true
  apply:
    description: Set the live values in sysfs where they differ.
    type: bool
    default: true
  persist:
    description: Persist the values as udev rules in O(file).
    type: bool
    default: true
  file:
    description:
      - The udev rules file; it must be a C(*.rules) file in C(/etc/udev/rules.d), C(/run/udev/rules.d)
        or C(/usr/local/lib/udev/rules.d).
      - The default sorts after C(60-persistent-storage.rules), which sets C(ID_WWN) and C(ID_SERIAL),
        so that rules keyed by those properties match at boot too.
    type: path
    default: /etc/udev/rules.d/61-dbhost-tuning.rules
  allow_empty:
    description: Default for O(devices[].allow_empty). When false, an item that selects nothing fails the task.
    type: bool
    default: false
  reload:
    description: Run C(udevadm control --reload) when O(file) changed.
    type: bool
    default: true
  trigger:
    description:
      - After a reload, also send a C(change) event to the selected devices (C(udevadm trigger --action=change)
        for those devices only), so that udev applies the new rules to them now.
    type: bool
    default: false
  root:
    description:
      - Act on a sysfs and file tree under this folder - C(<root>/sys/block), C(<root>/etc/udev/rules.d),
        C(<root>/proc/self/mountinfo), C(<root>/run/udev/data) - instead of the running host.
      - udev is not reloaded when O(root) is not C(/).
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup]
# END options
attributes:
  diff_mode:
    description: Returns the before and after text of O(file).
  platform:
    platforms: [linux, freebsd, sunos]
    description: Linux; on FreeBSD and SunOS every record is C(unsupported), with the reason.
notes:
  - The scheduler must be one the device lists in C(queue/scheduler); load the scheduler's kernel module
    first when it is not listed.
  - Several devices with the same identifier (the paths of a multipath LUN share one WWID) share one rule,
    so they must get the same attributes.
seealso:
  - name: Queue sysfs files
    description: The kernel's description of every attribute in C(queue/).
    link: https://docs.kernel.org/block/queue-sysfs.html
  - name: udev(7)
    description: The rules file format and the order in which udev reads rules files.
    link: https://www.freedesktop.org/software/systemd/man/latest/udev.html
'''

EXAMPLES = r'''
- name: rq_affinity on every SCSI disk and the scheduler by kind, persisted in udev rules
  dbhost.tuning.block_queue:
    devices:
      - name: ["sd*", "nvme*n1"]
        attributes:
          rq_affinity: 1
      - name: ["sd*", "nvme*n1"]
        rotational: false
        attributes:
          scheduler: none
      - name: ["sd*"]
        rotational: true
        attributes:
          scheduler: mq-deadline

- name: The disk under the Oracle data file system, and the paths of a multipath LUN
  dbhost.tuning.block_queue:
    devices:
      - mount: [/u02/oradata]
        attributes:
          read_ahead_kb: 4096
      - wwn: ["0x60002ac0000000000000000a00012345"]
        slaves: true
        attributes:
          rq_affinity: 2
          nr_requests: 256

- name: Drift check only (run with --check)
  dbhost.tuning.block_queue:
    devices:
      - serial: ["S4EWNX0R*"]
        attributes:
          rq_affinity: 1
  check_mode: true
  register: block_queue_drift
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/block_queue.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per selected device and attribute.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'The device and attribute, as under C(/sys/block).', type: str, sample: sdb/queue/rq_affinity}
    target: {description: 'The udev rules file (or, with O(persist=false), the sysfs file).', type: str, sample: /etc/udev/rules.d/61-dbhost-tuning.rules}
    desired: {description: The desired value., type: str, sample: '1'}
    live: {description: 'The value in sysfs after this run (before it, in check mode).', type: str}
    persisted: {description: The value the device's rule in O(file) sets; null when it sets none., type: str}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(unsupported), or V(failed) (the kernel refused the value
        or read back another one).', type: str, sample: ok}
    detail: {description: 'Why, in words; names the udev key, warns when it is only the kernel name, and says whether udev was reloaded.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it (the item of O(devices) that gave the attribute).
        Through M(dbhost.tuning.host_state), the vendor document, sizing rule or role variable.', type: str, sample: 'task option: block_queue.devices[0]'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
devices:
  description: The selected devices, what identifies them and the udev key of their rule.
  returned: on Linux
  type: list
  elements: dict
  sample:
  - name: sdb
    dev: '8:16'
    rotational: true
    wwid: naa.5000c500a1b2c3d4
    serial: null
    model: ST4000NM0035
    vendor: SEAGATE
    dm_uuid: null
    dm_name: null
    backing_file: null
    udev_key: ATTRS{wwid}=="naa.5000c500a1b2c3d4"
    udev_key_kind: wwid
    selected_by: ['devices[0]']
udev:
  description: Whether udev was reloaded (and triggered) after O(file) changed, and why not.
  returned: when O(file) changed
  type: dict
  sample: {reloaded: false, detail: 'udevadm not found: the rules apply from the next boot or udevd start'}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of O(file), when O(backup=true) and the file changed.'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of O(file), with C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('block_queue'),
                           supports_check_mode=True)
    registry.run(module, 'block_queue')


if __name__ == '__main__':
    main()
