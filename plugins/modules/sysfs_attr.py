#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sysfs_attr
short_description: Set sysfs attributes live and persisted, and report drift between desired, live and persisted values
version_added: 0.1.0
description:
  - Manages several attributes under C(/sys) in one call, for example transparent huge pages
    (C(kernel/mm/transparent_hugepage/enabled)) or block queue settings.
  - Compares three values per attribute - desired, live (read from C(/sys)) and persisted (what the
    next boot writes) - so that a value set by hand and lost at reboot shows as drift.
  - Attributes in the bracketed choice format (C(always madvise [never])) compare the selected word;
    a desired value that is not one of the offered choices is refused before anything is written.
    Numbers compare as numbers, other text after folding whitespace.
  - Persistence uses systemd-tmpfiles C(w) lines (C(w /sys/kernel/mm/transparent_hugepage/enabled - - - - never))
    in O(tmpfiles_file). systemd-tmpfiles-setup.service applies them early at boot, before
    C(sysinit.target), so before any database starts. This needs a host booted with systemd.
  - The persisted value is the one that wins across the whole tmpfiles.d search path
    (C(/etc/tmpfiles.d), C(/run/tmpfiles.d), C(/usr/local/lib/tmpfiles.d), C(/usr/lib/tmpfiles.d), C(/lib/tmpfiles.d)).
    Unlike sysctl.d, for tmpfiles.d the B(first) line for a path wins (the file with the lexically earliest
    name), so a file named before ours that writes another value makes the record C(shadowed), naming that file.
  - All input is checked before anything is written - paths with C(..) or outside C(/sys), folders, links
    that lead nowhere, values not among the choices. A value the kernel refuses is reported on its own record
    (and not persisted), the others are still applied, and the task then fails naming the refused attributes.
  - An attribute this kernel or hardware does not have (no such file under C(/sys)), and one nobody can set
    here (C(/sys) mounted read-only, as in a container, or an attribute the kernel shows read-only) is
    reported V(unsupported) with the reason, never a failure; its live value is left alone. Its C(w) line is
    still persisted (check mode - would be), since systemd-tmpfiles writes a C(w) line only where the file
    exists, at a boot where it does; the record's detail says so.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/sysfs_attr.yml
options:
  attributes:
    description:
      - Attributes to manage, as a dictionary of path to value.
      - A path is relative to C(/sys) (V(kernel/mm/transparent_hugepage/enabled)) or absolute below C(/sys)
        (V(/sys/block/sda/queue/rq_affinity)).
      - A value is a string or a number; booleans are refused as ambiguous.
    type: dict
    required: true
  apply:
    description: Write the live value when it differs.
    type: bool
    default: true
  persist:
    description: Persist the values as C(w) lines in O(tmpfiles_file) so that they survive a reboot.
    type: bool
    default: true
  tmpfiles_file:
    description: The tmpfiles.d file to persist in; it must be a C(*.conf) file in a tmpfiles.d folder.
    type: path
    default: /etc/tmpfiles.d/90-dbhost-tuning.conf
  root:
    description:
      - Act on a mounted image or a test tree instead of the running host.
      - Files are read and written under O(root); live values under C(<root>/sys) when it holds a sysfs
        tree, otherwise only the persisted side is managed.
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed,
  dbhost.tuning.common.linux_only]
# END options
attributes:
  diff_mode:
    description: Returns the before and after text of O(tmpfiles_file).
notes:
  - In a container, most of C(/sys) belongs to the host; a write there changes the host.
seealso:
  - name: tmpfiles.d(5)
    description: The format and precedence of systemd-tmpfiles configuration.
    link: https://www.freedesktop.org/software/systemd/man/latest/tmpfiles.d.html
'''

EXAMPLES = r'''
- name: Transparent huge pages off, now and at every boot
  dbhost.tuning.sysfs_attr:
    attributes:
      kernel/mm/transparent_hugepage/enabled: never
      kernel/mm/transparent_hugepage/defrag: never

- name: Block queue settings for one disk
  dbhost.tuning.sysfs_attr:
    attributes:
      /sys/block/sdb/queue/rq_affinity: 1
      /sys/block/sdb/queue/scheduler: mq-deadline

- name: Drift check only
  dbhost.tuning.sysfs_attr:
    attributes:
      kernel/mm/transparent_hugepage/enabled: never
  check_mode: true
  register: thp_drift
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/sysfs_attr.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per attribute.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The attribute's path as on the host., type: str, sample: /sys/kernel/mm/transparent_hugepage/enabled}
    target: {description: The tmpfiles.d file the value is persisted in; null with O(persist=false)., type: str, sample: /etc/tmpfiles.d/90-dbhost-tuning.conf}
    desired: {description: The desired value., type: str, sample: never}
    live: {description: 'The live value (the selected word for choice attributes) after this run, before it in check mode.', type: str, sample: madvise}
    persisted: {description: 'The value that the next boot writes, from whichever tmpfiles.d file wins; null when none does.', type: str}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(shadowed), V(unsupported), or V(failed) (the kernel refused
        the value, or reads back another one).', type: str, sample: ok}
    detail: {description: 'Why, in words; lists the choices of a choice attribute and the winning file when shadowed.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: sysfs_attr.attributes'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of O(tmpfiles_file), when O(backup=true) and the file
    changed.'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of O(tmpfiles_file), with
    C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('sysfs_attr'),
                           supports_check_mode=True)
    registry.run(module, 'sysfs_attr')


if __name__ == '__main__':
    main()
