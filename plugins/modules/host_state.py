#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: host_state
short_description: Check or apply a database host's whole desired state in one call
version_added: 0.2.0
description:
  - Compiles the variables of the collection's roles (C(kernel_params_*), C(shared_memory_*), C(block_queue_*),
    C(direct_io_*), C(processor_sets_*), as each role's README documents them) into one desired state for the
    host, and checks or applies all of it in this one call, one module round trip per host.
  - Reads what sizing needs (RAM, page and huge page sizes, mounts) on the host itself, so the play needs no
    C(gather_facts).
  - One setting has one owner. When two roles plan the same key, two minimums (or two maximums) keep the stricter
    value and the role that asked for it, equal values are merged, and anything else is refused before anything
    is touched, naming both roles. A key is planned in its owner's file only.
  - Every input is checked before anything is touched - when not in check mode, every plan first runs in check
    mode, then for real.
  - The action plugin of the same name fills O(inputs) from the roles' defaults and the host's variables, so a
    task names only O(roles) (or nothing).
  - The action plugin checks every role variable the host defines against its role's C(meta/argument_specs.yml)
    (types, choices, the keys of list items) before the module runs, and refuses a variable whose name has a role's
    prefix but is not one of its variables, or is close to a known one (C(kernel_param_profile)), naming the variable
    it probably means. Every message names the variable as it was set.
  - The action plugin runs this module through M(dbhost.tuning.run_cached), which keeps the collection's code on
    the host between runs (C(/var/cache/dbhost-tuning/code) for root), so that a run neither sends nor compiles it
    again; the result is the same. C(dbhost_code_cache=false) runs this module itself, C(dbhost_code_cache_dir) moves
    the copies.
  - For each database service the roles tune on the running system (C(shared_memory_service),
    C(processor_sets_service), a C(direct_io_databases) item's C(service)), it also checks what the running
    service gets of it, as M(dbhost.tuning.db_effect) does (read-only) - its shared memory in huge pages, its
    locked memory, CPUs and NUMA nodes, its data files opened with C(O_DIRECT); those records are owned by the
    role that tuned the service, with kind C(db_effect).
  - A role listed in O(roles) whose variables ask for nothing (C(block_queue) without C(block_queue_devices)) is
    reported in a warning, since it checked nothing.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/host_state.yml
options:
  roles:
    description:
      - The roles whose settings the host uses, in any order.
      - Default (from the action plugin) - C(dbhost_roles) when the host defines it, else every role whose required
        input the host has (C(kernel_params) always; C(shared_memory) with C(shared_memory_size); C(block_queue) with
        C(block_queue_devices); C(direct_io) with C(direct_io_mounts) or C(direct_io_databases); C(processor_sets) with
        C(processor_sets_cpus)).
    type: list
    elements: str
    choices: [kernel_params, shared_memory, block_queue, direct_io, processor_sets]
  inputs:
    description:
      - "The roles' variables, as C({role: {variable: value}}), with the names the roles document."
      - Filled by the action plugin from each role's C(defaults/main.yml) and the host's variables.
    type: dict
    required: true
  state:
    description:
      - V(present) checks or applies the desired state. The first time a file or a live value is changed, what the
        host held is kept in the baseline, C(<root>/var/lib/dbhost-tuning/baseline.json) (mode 0600), under the root
        of the role that changed it; a later apply never replaces what it holds.
      - V(revert) puts the host back as the baseline of each role's root says it was before tuning - files restored,
        files and folders that did not exist removed, live values written back - runs C(udevadm control --reload)
        and C(systemctl daemon-reload) where rules or drop-ins were put back, and reports what waits for a restart
        or a reboot. What a revert cannot put back (a remount, the Oracle spfile, processes bound to CPUs) is
        reported with status C(unsupported). The other variables play no part.
      - After a complete revert the baseline is kept, marked reverted, so that a second revert changes nothing;
        the next apply starts a new one. Without a baseline, or with one that cannot be read, the task fails
        naming the file before anything is touched.
    type: str
    choices: [present, revert]
    default: present
  details:
    description:
      - Parts of the result left out unless named here, since every record of RV(settings) already carries its
        desired value, comparison, owner, kind and source.
      - V(desired_state) adds RV(desired_state), the compiled desired state, one entry per key.
      - V(facts) adds RV(facts), what was read from the host for sizing (every mount of the host among them).
      - Left out, they cost nothing; a drift check over many hosts is quicker without them, since Ansible walks and
        copies every value of each host's result on the controller.
    version_added: 0.3.0
    type: list
    elements: str
    choices: [desired_state, facts]
    default: []
extends_documentation_fragment: [dbhost.tuning.common]
# END options
attributes:
  platform:
    platforms: [linux, freebsd, sunos]
    description: Linux; SunOS and FreeBSD for the settings their roles support.
notes:
  - The single-kind modules (M(dbhost.tuning.kernel_params), M(dbhost.tuning.hugepages), ...) run the same plans,
    one kind per call.
'''

EXAMPLES = r'''
- name: Drift check of everything the host uses, in one round trip
  dbhost.tuning.host_state:
  check_mode: true
  register: dbhost_state

- name: Apply two roles' settings
  dbhost.tuning.host_state:
    roles: [kernel_params, shared_memory]

- name: Put the host back as it was before tuning
  dbhost.tuning.host_state:
    state: revert
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/host_state.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Whether a service must restart to pick up a change., returned: always, type: bool}
reboot_required: {description: Whether a reboot is needed to pick up a change., returned: always, type: bool}
settings:
  description: One record per managed setting, from every plan, with its owner role and kind.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The setting., type: str}
    target: {description: Where it is persisted (file) or what it applies to., type: raw}
    desired: {description: 'The wanted value; see RV(settings[].comparison) for how it is meant.', type: raw}
    live: {description: The running value., type: raw}
    persisted: {description: What the next boot or restart loads., type: raw}
    status: {description: 'ok, changed, drift, pending_restart, pending_reboot, shadowed, unsupported or failed.', type: str}
    detail: {description: 'Why, in words.', type: str}
    source: {description: 'On whose word the desired value stands - the vendor document and section, or the sizing rule with its arithmetic, or
        the role variable (C(user: kernel_params_settings)); the same as the record of RV(desired_state) it comes from (O(details=[desired_state])).',
      type: str, sample: 'user: kernel_params_settings'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
    comparison: {description: 'exact, minimum or maximum (or one per field).', type: raw}
    owner: {description: The role that owns the setting., type: str}
    kind: {description: 'The kind of plan that manages it (sysctl, hugepages, limits, sysfs, block_queue, mounts, db_parameter, processor_set;
        revert for every record of O(state=revert), whose names are the files and kernel pseudo-files put back).', type: str}
desired_state: {description: 'The compiled desired state, one entry per setting - kind, key, desired, comparison, owner, source.', returned: when
    O(details) has V(desired_state), type: list, elements: dict}
roles:
  description: ['Per role, its part of the result - changed, restart_required, reboot_required, settings, the role''s extras (sizing, devices,
      mounts...), and each of its plans'' own results under the plan''s module name (hugepages, resource_limits, mount_options...; databases for
      db_parameter).', 'Every C(settings) list in here (the role''s and each plan''s) holds the indexes of those records in RV(settings), not
      the records again, and a plan''s diff is only in the result''s C(diff). A role''s records are C(settings | selectattr(''owner'', ''eq'',
      role)); a plan''s are C(indexes | map(''extract'', result.settings)).', 'A call for one role (the role''s own task, O(roles) of one name)
      also returns that role''s extras and each of its plans'' results at the top level, there with the records and the diff in full.']
  returned: always
  type: dict
plans: {description: 'The plans that ran, in order, with their owner role and whether they changed anything.', returned: always, type: list, elements: dict}
restart_services: {description: 'Services a role was asked to restart (shared_memory_service_restart, processor_sets_restart_service, direct_io_restart)
    and that need it now.', returned: always, type: list, elements: str}
restart_settings: {description: The names of the V(pending_restart) records that restarting RV(restart_services) makes live (C(playbooks/tune.yml)
    restarts them and lists only the other pending records)., returned: always, type: list, elements: str}
notes: {description: What the roles have to say that is not a setting (a mount with no direct I/O option)., returned: always, type: list, elements: str}
facts: {description: What was read from the host for sizing., returned: when O(details) has V(facts), type: dict}
reloads: {description: 'The reloads a revert ran (C(udevadm control --reload), C(systemctl daemon-reload)).', returned: when O(state=revert),
  type: list, elements: str}
baselines: {description: The baseline files a revert read., returned: when O(state=revert), type: list, elements: str}
backups:
  description: ['The copies a revert kept of files it put back whole from a baseline older than the record of each write (it cannot tell the collection''s
      lines from an admin''s there), when the file had changed since.']
  returned: when O(state=revert) changed such a file
  type: list
  elements: str
written:
  description: ['The files a run wrote before it failed (a shadowed setting fails once its file is written); they are kept, and the failure message
      names them too. Every module returns it on such a failure.']
  returned: when the task failed after writing
  type: list
  elements: str
# END returns
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import run_module


def main():
    run_module(AnsibleModule)


if __name__ == '__main__':
    main()
