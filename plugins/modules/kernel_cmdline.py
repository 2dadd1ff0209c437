#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kernel_cmdline
short_description: Set kernel boot parameters on the next boot's command line, and report drift against the running one
version_added: 0.3.0
description:
  - Manages kernel boot parameters (the kernel command line) a database host wants, for example
    C(transparent_hugepage=never), C(numa_balancing=disable), C(intel_idle.max_cstate=1) or
    C(processor.max_cstate=1), in one call, one record per parameter.
  - Compares three values per parameter - desired, live (the running kernel's command line, C(/proc/cmdline))
    and persisted (the next boot's command line, from the boot loader's configuration). The running command
    line changes only at a reboot, so a parameter that the next boot has but the running kernel has not is
    V(pending_reboot), and RV(reboot_required) is true.
  - The kernel keeps the B(last) occurrence of a parameter, so both lines are compared by their last
    occurrence of each name; the kernel takes C(-) and C(_) alike in a name.
  - Parameters whose occurrences add up instead of replacing each other are refused, since the last one is
    not the value - C(console=), C(memmap=), C(modules_load=) - and so are C(hugepages=), C(hugepagesz=) and
    C(default_hugepagesz=), which M(dbhost.tuning.hugepages) owns, and C(BOOT_IMAGE=), C(initrd=) and C(root=),
    which the boot loader sets.
  - Where C(/etc/kernel/cmdline) exists under O(root) it is the next boot's source (kernel-install, systemd-boot),
    and it is edited in place - every occurrence of a managed name removed, ours added at the end of its last line.
  - Otherwise, with C(/etc/default/grub), the parameters go into the drop-in
    C(/etc/default/grub.d/99-dbhost-tuning.cfg) as C(GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX name=value ..."),
    which GRUB's configuration sources after C(/etc/default/grub) and the drop-ins named before it. A drop-in
    named after it, or C(GRUB_CMDLINE_LINUX_DEFAULT) (which follows C(GRUB_CMDLINE_LINUX) on the line), that
    gives the same parameter another value wins at boot - the record is then V(shadowed), naming the file.
  - A parameter the next boot already has with the desired value (from another file) is not written again;
    the record says which file persists it.
  - After a change, with O(update_bootloader), the boot loader's configuration is regenerated on the running
    system (O(root=/)) - C(update-grub) when present, else C(grub-mkconfig -o /boot/grub/grub.cfg) or
    C(grub2-mkconfig -o /boot/grub2/grub.cfg) when that file exists. When none is found (or with
    C(/etc/kernel/cmdline), which a boot loader takes when a kernel is installed), the task warns with what to
    run, and the record's detail says that the boot loader was not regenerated. A command that fails fails the
    task, saying what was already written.
  - With O(update_bootloader) on the running system, where a command to regenerate GRUB's configuration is
    found, the next boot is also read where the boot loader reads it - the first entry's C(linux) line of
    C(/boot/grub/grub.cfg) (or C(/boot/grub2/grub.cfg)). A parameter whose value there differs from what
    the files give (an earlier run's C(update-grub) failed, or nobody ran it) is drift, and the next apply
    regenerates the configuration even when no file needs a change; a configuration still different after
    that is warned about. Without a C(linux) line (Boot Loader
    Specification entries) the files alone are compared.
  - Without C(/etc/kernel/cmdline) or C(/etc/default/grub) under O(root) (a container, an image without a boot
    loader), every record is V(unsupported) and nothing is written.
  - All input is checked before anything is written.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/kernel_cmdline.yml
options:
  params:
    description:
      - Boot parameters, as a dictionary of name to value (V(transparent_hugepage) to V(never)).
      - A value is a string or a number, written as C(name=value). V(null) (or the empty string) means a bare flag
        written as its name alone, such as C(nosmt) or C(nohz); C(name=) with an empty value cannot be asked for.
        A boolean is refused as ambiguous (the kernel reads C(1), C(Y), C(on) or a bare flag, depending on the
        parameter).
      - A value may not hold whitespace, quotes or shell syntax (C($), C(`), C(\), C(#), C(;), C(&), C(|),
        C(<), C(>), brackets).
      - With O(state=absent), a list of names is also accepted.
    type: raw
    required: true
  state:
    description:
      - V(present) puts the parameters on the next boot's command line.
      - V(absent) removes them from our drop-in (or from C(/etc/kernel/cmdline), where every occurrence of the name
        goes); a parameter another file sets stays, and its record says which file. The running kernel keeps its
        command line until the next reboot.
    type: str
    choices: [present, absent]
    default: present
  update_bootloader:
    description:
      - After a change, regenerate the boot loader's configuration so that the next boot takes it (on the
        running system only, O(root=/)).
      - With V(false), run it yourself before the next reboot; the records' detail says it was not run.
    type: bool
    default: true
  root:
    description:
      - Act on a mounted image or a test tree instead of the running host.
      - The boot loader's configuration is read and written under O(root), the running command line read from
        C(<root>/proc/cmdline) when there is one. The boot loader is regenerated only when O(root) is C(/).
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed,
  dbhost.tuning.common.linux_only]
# END options
attributes:
  check_mode:
    description: Nothing is written and no boot loader command runs; the records say what would be.
  diff_mode:
    description: Returns the before and after text of the drop-in (or of C(/etc/kernel/cmdline)).
notes:
  - GRUB hosts that keep boot entries as Boot Loader Specification snippets (C(GRUB_ENABLE_BLSCFG=true)) take the
    command line from C(/etc/kernel/cmdline) when it exists; create it (for example from C(grubby --info=DEFAULT))
    to manage them here.
seealso:
  - name: The kernel's command line parameters
    description: Which parameters the kernel takes, and their values.
    link: https://docs.kernel.org/admin-guide/kernel-parameters.html
  - module: dbhost.tuning.hugepages
  - module: dbhost.tuning.sysfs_attr
'''

EXAMPLES = r'''
- name: Boot parameters a database host wants
  dbhost.tuning.kernel_cmdline:
    params:
      transparent_hugepage: never
      numa_balancing: disable
      intel_idle.max_cstate: 1
      processor.max_cstate: 1
  register: boot_params

- name: Reboot when the running kernel has not got them yet
  ansible.builtin.reboot:
  when: boot_params.reboot_required

- name: A bare flag
  dbhost.tuning.kernel_cmdline:
    params:
      nosmt: null

- name: Take one off again
  dbhost.tuning.kernel_cmdline:
    params: [numa_balancing]
    state: absent

- name: Drift check only
  dbhost.tuning.kernel_cmdline:
    params:
      transparent_hugepage: never
  check_mode: true
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/kernel_cmdline.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: True when a parameter is on the next boot's command line but not on the running one., returned: always, type: bool}
settings:
  description: One record per parameter.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The parameter's name as given., type: str, sample: transparent_hugepage}
    target: {description: The file the parameter is persisted in; null where there is none., type: str, sample: /etc/default/grub.d/99-dbhost-tuning.cfg}
    desired: {description: The desired value; a bare flag's name for a flag; null with O(state=absent)., type: str, sample: never}
    live: {description: 'The value of the last occurrence on the running kernel''s command line (a bare word''s name), or null.', type: str, sample: madvise}
    persisted: {description: 'The value of the last occurrence on the next boot''s command line (after this run; before it in check mode), or
        null.', type: str, sample: never}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(pending_reboot) (the next boot has it, the running kernel
        not yet), V(shadowed), or V(unsupported).', type: str, sample: pending_reboot}
    detail: {description: 'Why, in words: the file written, whether the boot loader was regenerated (and how), the file that wins at boot when
        shadowed, the running kernel''s value while a reboot is pending.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        role variable.', type: str, sample: 'task option: kernel_cmdline.params'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(persisted now, pending reboot), V(shadowed
        by /etc/default/grub.d/99-zz.cfg (sets ''transparent_hugepage=always''))); null when V(ok).', type: str, sample: 'persisted now, pending
        reboot'}
    comparison: {description: Always V(exact)., type: str, sample: exact}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of the file written, when O(backup=true) and the file
    changed.'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of the file written, with
    C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('kernel_cmdline'),
                           supports_check_mode=True)
    registry.run(module, 'kernel_cmdline')


if __name__ == '__main__':
    main()
