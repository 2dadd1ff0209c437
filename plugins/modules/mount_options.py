#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: mount_options
short_description: Add or remove single mount options in fstab or vfstab, remount, and report desired, persisted and live options
version_added: 0.1.0
description:
  - Adds and removes single mount options on the line of a mount point in C(/etc/fstab) (Linux) or
    C(/etc/vfstab) (SunOS), keeping every other option, field, line, comment and spacing as it was.
  - Knows exclusive options - asking for C(noatime) replaces C(relatime), C(forcedirectio) replaces
    C(noforcedirectio), C(ro) replaces C(rw) - and C(key=value) options, where a new value replaces the old one.
  - Warns when an option asked for belongs only to another file system type than the line's (VxFS
    C(mincache=direct) on an ext4 line, ext4 C(data=) on XFS, UFS C(forcedirectio) on Linux); the option is still
    written as asked.
  - Compares three things for every option - the desired state, the persisted line, and the live mount
    table (C(/proc/self/mountinfo) on Linux, C(/etc/mnttab) on SunOS) - so that an option set by hand
    and lost at the next mount, or written to the file but never applied, shows as drift.
  - When the live options differ, remounts with C(mount -o remount,<options> <mount point>) on Linux
    (mount(8) merges the rewritten fstab line) and C(mount -F <fstype> -o remount,<options> <mount point>)
    on SunOS, where <options> is the whole new vfstab option list because UFS resets unnamed options on remount.
  - An option that a remount cannot change (for example ext4 C(data=), most XFS options), or that
    the mount table still does not show after the remount, is reported C(pending_reboot) with RV(reboot_required=true);
    it is never skipped silently.
  - When the system refuses the remount, the file is put back as it was for that mount point
    (an option the kernel refuses would fail at the next boot too), the records say C(failed), and the task fails.
  - Several mount points are handled in one call with O(mounts), one file write and one remount per mount point.
  - On a Linux host booted with systemd, C(systemctl daemon-reload) runs after fstab is written (and again
    if a line is put back), so that the mount units systemd makes from fstab carry the new options;
    a failed reload is a warning.
  - All input is checked before anything is touched.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/mount_options.yml
options:
  path:
    description:
      - The mount point, as written in the file's mount point field. Mutually exclusive with O(mounts).
    type: path
  present:
    description:
      - Options to ensure on O(path), one per list item (no commas). An option replaces the options of its
        exclusive group and an older value of the same key.
    type: list
    elements: str
    default: []
  absent:
    description:
      - Options to remove from O(path). A bare key such as C(mincache) removes C(mincache=) with any value.
      - Removing the last option leaves C(defaults) in fstab and C(-) in vfstab.
    type: list
    elements: str
    default: []
  mounts:
    description:
      - Several mount points in one call, each with its own O(mounts[].present) and O(mounts[].absent).
        Mutually exclusive with O(path).
    type: list
    elements: dict
    suboptions:
      path:
        description: The mount point.
        type: path
        required: true
      present:
        description: Options to ensure.
        type: list
        elements: str
        default: []
      absent:
        description: Options to remove.
        type: list
        elements: str
        default: []
  remount:
    description:
      - Remount when the live options differ from the desired ones.
      - With V(false) only the file is edited, and live differences are reported C(pending_reboot).
    type: bool
    default: true
  fstab:
    description:
      - The file that holds the mount lines. Defaults to C(/etc/fstab) on Linux and C(/etc/vfstab) on SunOS.
    type: path
  root:
    description:
      - Edit the file under this folder (a mounted image or a test tree) instead of the running host.
      - With a root other than C(/), the live mount table is neither read nor changed.
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup]
# END options
attributes:
  check_mode:
    description: Nothing changes, no remount; records say C(drift) for what would change.
  platform:
    description: Linux (fstab, mountinfo) and SunOS (vfstab, mnttab).
    platforms: [linux, sunos]
notes:
  - Options that mount(8) alone reads (C(nofail), C(_netdev), C(x-systemd.*), C(defaults), ...) are only
    compared in the file; the mount table never shows them.
  - A mount point on several lines of the file is refused, so that the wrong line is never edited.
  - On Linux, mount(8) merges the rewritten fstab line into the remount, so the line's other options
    (for example C(rw) from C(defaults)) apply too, as with any C(mount -o remount) of a mount point.
seealso:
  - name: fstab(5)
    description: The Linux fstab format.
    link: https://man7.org/linux/man-pages/man5/fstab.5.html
  - name: vfstab(4)
    description: The Solaris vfstab format.
    link: https://docs.oracle.com/cd/E19253-01/816-5174/6mbb98ujo/index.html
  - name: mount_ufs(1M)
    description: UFS options such as forcedirectio, and remount.
    link: https://docs.oracle.com/cd/E19253-01/816-5166/6mbb1kqb1/index.html
'''

EXAMPLES = r'''
- name: No access-time updates on the Oracle data mount, persisted and live
  dbhost.tuning.mount_options:
    path: /u02
    present: [noatime]

- name: UFS direct I/O for Oracle data files on Solaris (vfstab and remount)
  dbhost.tuning.mount_options:
    path: /u02/oradata
    present: [forcedirectio]
  when: ansible_facts['system'] == 'SunOS'

# /u02 must be a VxFS file system here: mincache and convosync are VxFS options, and the
# module warns when an option belongs to another type than the line's (ext4, xfs...).
- name: Several mounts in one call (one round trip)
  dbhost.tuning.mount_options:
    mounts:
      - path: /u02
        present: [mincache=direct, convosync=direct]
      - path: /u03
        present: [noatime]
        absent: [nodiratime]
  register: mounts_result

- name: Drift check only, file untouched and no remount
  dbhost.tuning.mount_options:
    path: /u02
    present: [noatime]
  check_mode: true
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/mount_options.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether the file was edited or a remount changed live options (in check mode, would be).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: True when an option only takes effect at the next mount., returned: always, type: bool}
settings:
  description: One record per asked option and mount point.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'The mount point and the option (its key for a C(key=value) option), so that the records of several mount points stay
        apart.', type: str, sample: /u02 noatime}
    target: {description: The mount point., type: str, sample: /u02}
    desired: {description: The option as asked; null for an option asked absent., type: str, sample: noatime}
    live: {description: 'The options of the same group or key in the mount table after this run (before it, in check mode); null when none is
        shown, the mount point is not mounted, or the live state is not read.', type: str, sample: noatime}
    persisted: {description: 'The options of the same group or key in the file after this run (before it, in check mode).', type: str, sample: noatime}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(pending_reboot) (persisted; the live mount gets it at the
        next mount), or V(failed) (the remount was refused).', type: str, sample: changed}
    detail: {description: 'Why, in words, including the remount command.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: mount_options.present and absent'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
mounts:
  description: One summary per mount point, with the whole option lists.
  returned: always
  type: list
  elements: dict
  contains:
    path: {description: The mount point., type: str}
    fstype: {description: The file system type on the file's line., type: str}
    file: {description: The file edited., type: str}
    line: {description: The line number of the mount point in the file., type: int}
    persisted_before: {description: The options field before this run (empty for vfstab's C(-))., type: str}
    persisted: {description: 'The options field after this run (in check mode, as it is now; the diff shows the change).', type: str}
    mounted: {description: Whether the mount point is in the mount table; null when the live state is not read., type: bool}
    live_before: {description: The live options before this run., type: str}
    live: {description: The live options after this run., type: str}
    remount_command: {description: 'The remount command that was run, as an argument list; null when none was run.', type: list, elements: str}
    remount_error: {description: What the remount printed when it failed., type: str}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of the file, when O(backup=true) and the file changed.'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of the file, with C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('mount_options'),
                           supports_check_mode=True)
    registry.run(module, 'mount_options')


if __name__ == '__main__':
    main()
