#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: kernel_params
short_description: Set kernel parameters live and persisted, and report drift between desired, live and persisted values
version_added: 0.1.0
description:
  - Manages several kernel parameters in one call (one round trip per host, not one per key).
  - Compares three values for every key - the desired one, the live one in the running kernel,
    and the persisted one that will win at the next boot - so that a value fixed by hand and
    lost at reboot shows as drift.
  - On Linux, live values are read from and written to C(/proc/sys); only keys that differ are written.
    The persisted value is the one that wins across the whole systemd-sysctl search path
    (C(/etc/sysctl.d), C(/run/sysctl.d), C(/usr/local/lib/sysctl.d), C(/usr/lib/sysctl.d), C(/lib/sysctl.d));
    a file of the same name in an earlier folder masks a later one, files apply in lexical order of their
    names, and later assignments win. systemd-sysctl reads C(/etc/sysctl.conf) only through a link in
    those folders (Debian 12's C(99-sysctl.conf); Debian 13 ships none), in the link's place; on a host
    that does not boot with systemd, C(/etc/sysctl.conf) applies last, as C(sysctl --system) applies it.
    The persisted value is the boot one; a C(sysctl --system) run by hand on a systemd host also applies
    C(/etc/sysctl.conf) once more, last, so a key that file sets gets its value until the next boot.
    When another file wins over ours with another value, the record says C(shadowed) and names that file.
  - On FreeBSD, live values go through C(sysctl) and are persisted in C(/etc/sysctl.conf).
  - On SunOS, values are persisted as C(set module:variable=value) lines in C(/etc/system); they apply at the
    next boot, so a change is reported as C(pending_reboot) with RV(reboot_required=true).
  - Values compare as the kernel sees them - C(250  32000 100 128) equals C(250 32000 100 128) - and
    C(kernel.shmmax) and C(kernel/shmmax) name the same key.
  - All input is checked before anything is written. A key the kernel refuses is reported on its own
    record, the other keys are still applied, and the task then fails naming the refused keys.
  - A key the running kernel does not have (no C(/proc/sys) entry - its module, such as C(br_netfilter) for
    C(net.bridge.*), is not loaded, or it is another kernel version's key), or one nobody can set here
    (C(/proc/sys) mounted read-only, as in a container, or an entry the kernel shows read-only) is reported
    V(unsupported) with the reason, never a failure. Its live value is left alone; with O(persist) its line
    is still written (check mode - would be), for a boot where the key exists and can be set, and the
    record's detail says so. systemd-sysctl passes over a key it cannot set without failing.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/kernel_params.yml
options:
  params:
    description:
      - Kernel parameters to manage, as a dictionary of name to value.
      - A value is an integer, a string, or a list for multi-value keys such as C(kernel.sem).
      - With O(state=absent), a list of names is also accepted.
    type: raw
    required: true
  state:
    description:
      - V(present) sets the values.
      - V(absent) removes our persisted lines for these names from O(file); it does not reset live values.
    type: str
    choices: [present, absent]
    default: present
  apply:
    description: Set the live value in the running kernel when it differs.
    type: bool
    default: true
  persist:
    description: Persist the values in O(file) so that they survive a reboot.
    type: bool
    default: true
  file:
    description:
      - The file we persist values in.
      - Defaults to C(/etc/sysctl.d/90-dbhost-tuning.conf) on Linux, C(/etc/sysctl.conf) on FreeBSD and
        C(/etc/system.d/dbhost-tuning) or C(/etc/system) on SunOS. It must be a file that is read at boot.
      - On SunOS the default is C(/etc/system.d/dbhost-tuning) where the release has that folder (Solaris 11.2 and
        later, illumos), as system(5) asks, else C(/etc/system); a file in C(/etc/system.d) is refused on a release
        without it (Solaris 10, 11.0, 11.1). The boot reads C(/etc/system.d) (C order) before C(/etc/system), so a
        different value there or in a later file is reported V(shadowed).
    type: path
  mode:
    description:
      - V(exact) makes each value exactly the desired one.
      - V(minimum) never lowers a numeric value that is already higher. Single numbers compare as numbers;
        C(kernel.sem) compares field by field; other multi-value keys (ranges such as
        C(net.ipv4.ip_local_port_range)) always compare exactly.
      - V(maximum) never raises a numeric value that is already lower, by the same rules.
      - Every record says how its value was compared in RV(settings[].comparison).
    type: str
    choices: [exact, minimum, maximum]
    default: exact
  comparisons:
    description:
      - How single keys compare, over O(mode) - V(exact), V(minimum) or V(maximum), or a list with one of
        them per field of a multi-value key (for example V([minimum, minimum, exact, minimum]) for C(kernel.sem)).
      - Each name must be one of O(params).
    type: dict
    default: {}
  root:
    description:
      - Act on a mounted image or a test tree instead of the running host.
      - Files are read and written under O(root). Live values are read and written under C(<root>/proc/sys)
        when that exists; otherwise only the persisted state is managed.
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed]
# END options
attributes:
  diff_mode:
    description: Returns the before and after text of O(file).
  platform:
    platforms: [linux, freebsd, sunos]
    description: Linux (C(/proc/sys), sysctl.d), FreeBSD (C(sysctl), C(/etc/sysctl.conf)), SunOS (C(/etc/system)).
seealso:
  - name: sysctl.d(5)
    description: Precedence of sysctl configuration files under systemd.
    link: https://www.freedesktop.org/software/systemd/man/latest/sysctl.d.html
'''

EXAMPLES = r'''
- name: Oracle preinstallation kernel parameters, never lowering a higher value
  dbhost.tuning.kernel_params:
    params:
      kernel.sem: [250, 32000, 100, 128]
      kernel.shmmni: 4096
      fs.file-max: 6815744
      fs.aio-max-nr: 1048576
      net.ipv4.ip_local_port_range: "9000 65500"
    mode: minimum

- name: Drift check only (run with --check), without failing on a shadowing file
  dbhost.tuning.kernel_params:
    params:
      kernel.shmmni: 4096
    fail_on_shadowed: false
  check_mode: true
  register: kernel_drift

- name: Remove our persisted line for a key (the live value is left alone)
  dbhost.tuning.kernel_params:
    params: [kernel.panic_on_oops]
    state: absent

- name: Solaris 9 shared memory in /etc/system (applies at next boot)
  dbhost.tuning.kernel_params:
    params:
      shmsys:shminfo_shmmax: 4294967295
      semsys:seminfo_semmni: 100
  when: ansible_facts['system'] == 'SunOS'
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/kernel_params.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: True when a value only takes effect at the next boot (SunOS)., returned: always, type: bool}
settings:
  description: One record per managed key.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'The key, in dotted form (or C(module:variable) on SunOS).', type: str, sample: kernel.shmmni}
    target: {description: The file the key is persisted in., type: str, sample: /etc/sysctl.d/90-dbhost-tuning.conf}
    desired: {description: 'The desired value, normalized; null with O(state=absent).', type: str, sample: 250 32000 100 128}
    live: {description: 'The value in the running kernel after this run (before it, in check mode); null when not read.', type: str}
    persisted: {description: 'The value that wins at the next boot, from whichever file sets it.', type: str}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(pending_reboot), V(shadowed), V(unsupported), or V(failed)
        (the kernel refused the value).', type: str, sample: ok}
    detail: {description: 'Why, in words, including the winning file for V(shadowed).', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: kernel_params.params'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
    comparison:
      description: ['How RV(settings[].desired) is meant - V(exact), V(minimum) (at least; a larger value is met and never lowered) or V(maximum)
          (at most); a list with one of them per field for a multi-value key.']
      type: raw
      sample: minimum
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of O(file), when O(backup=true) and the file changed.'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of O(file), with C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('kernel_params'),
                           supports_check_mode=True)
    registry.run(module, 'kernel_params')


if __name__ == '__main__':
    main()
