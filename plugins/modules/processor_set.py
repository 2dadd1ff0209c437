#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: processor_set
short_description: Bind a database's processes to a set of CPUs and its memory to the NUMA nodes of those CPUs
version_added: 0.1.0
description:
  - Binds a systemd service and running processes to a set of CPUs, and their memory to NUMA nodes, and
    reports for each of them the CPUs and memory nodes they run on against the desired ones (drift when they differ).
  - Reads the NUMA topology (nodes, their CPUs, memory and distances) once from C(<root>/sys/devices/system)
    and returns it as RV(topology).
  - All input is checked before anything changes - CPUs that do not exist or are offline, an empty set,
    NUMA nodes that do not exist or have no memory, a set that leaves no CPU for the rest of the system with
    O(exclusive=true), a service that does not exist, unknown users, bad patterns.
  - On Linux, a service is bound through a drop-in C(/etc/systemd/system/<service>.d/90-dbhost-tuning-cpus.conf).
    With O(service_mode=affinity) it sets C(CPUAffinity=), C(NUMAPolicy=bind) and C(NUMAMask=); with
    O(service_mode=cpuset) it sets C(AllowedCPUs=) and C(AllowedMemoryNodes=), which needs the cpuset controller
    on cgroup v2. Other lines in that file are kept. systemd is reloaded when the file changes; the running
    service keeps its old binding until it restarts, which the record reports as C(pending_restart) with
    RV(restart_required=true). The module does not restart the service.
  - The service's persisted binding is what systemd reports (C(systemctl show)), so that another drop-in that
    overrides ours shows as C(shadowed); its live binding is read from its main PID
    (C(/proc/PID/status) C(Cpus_allowed_list) and C(Mems_allowed_list), and the memory policy in C(/proc/PID/numa_maps)).
  - On Linux, running processes matched by O(processes) are bound at once; every thread gets the CPU affinity
    (C(sched_setaffinity)). Where a cgroup v1 cpuset hierarchy is mounted, the processes are also moved into a
    cpuset C(dbhost-<name>) with C(cpuset.cpus), C(cpuset.mems) and C(cpuset.memory_migrate=1), so that their memory
    moves to the chosen nodes. Without one, the memory nodes of a running process cannot be changed; when they differ
    the record says C(unsupported) and why.
  - On SunOS, a processor set is created with C(psrset) (or, with O(persist=true), as a resource pool C(dbhost-<name>)
    with its own pset through C(poolcfg) and C(pooladm), which survives a reboot), processes and a project are bound
    to it, and the set is read back with C(psrset -i), C(psrinfo) and C(poolcfg -dc info). O(mems) is reported but
    not set on SunOS; where the bound processes' shared memory lies is read with C(pmap -Ls) against the set's
    lgroups (C(lgrpinfo -G -c)), record C(memory:<name>) - V(ok) on the set's board, V(pending_restart) when the
    processes are bound in this run, V(drift) otherwise. Shared memory over 8 MB (ISM too) follows the set only with
    C(set lgrp_mem_pset_aware=1) in C(/etc/system) and the database started in the set (illumos C(os/lgrp.c)); the
    processor_sets role writes that line with C(processor_sets_shared_memory).
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/processor_set.yml
options:
  name:
    description:
      - Name of the processor set; the cpuset (Linux) and the pool and pset (SunOS) are called C(dbhost-<name>).
    type: str
    required: true
  state:
    description:
      - V(present) binds; V(absent) removes our drop-in, gives matched processes all online CPUs back, and removes
        the cpuset (Linux) or the pool, pset or processor set (SunOS).
    type: str
    choices: [present, absent]
    default: present
  cpus:
    description:
      - The CPUs, as a CPU list such as V(0-15,32-47) (a list of integers also works), or V(node:N) for every online
        CPU of NUMA node N (V(node:0,1) for several nodes).
      - Required with O(state=present), and on SunOS with O(state=absent) and O(persist=false) (a psrset
        processor set has no name, so it is found by its CPUs).
    type: raw
  mems:
    description:
      - The NUMA nodes the memory is bound to, as a list (V(0-1), V([0, 1])).
      - Defaults to the nodes of O(cpus).
    type: raw
  exclusive:
    description:
      - Refuse a set that leaves no online CPU for the rest of the system.
      - On SunOS a processor set is always exclusive. On Linux other processes are not kept off the set; a record
        with status V(unsupported) says so.
    type: bool
    default: false
  service:
    description:
      - A systemd service to bind (Linux), for example V(postgresql@15-main) or V(oracle-db.service).
    type: str
  service_mode:
    description:
      - How the service is bound. V(affinity) uses C(CPUAffinity=), C(NUMAPolicy=bind), C(NUMAMask=).
        V(cpuset) uses C(AllowedCPUs=) and C(AllowedMemoryNodes=) (cgroup v2 with the cpuset controller).
        V(auto) picks V(cpuset) on a pure cgroup v2 host with the cpuset controller, else V(affinity).
    type: str
    choices: [auto, affinity, cpuset]
    default: auto
  processes:
    description:
      - Running processes to bind now. Each entry selects the processes that match all of its keys; a process
        selected by any entry is bound. Kernel threads and the module's own process are never selected.
    type: list
    elements: dict
    suboptions:
      pid_file:
        description: A file holding the process ID (the first word is read).
        type: path
      user:
        description: The effective user, by name or numeric ID.
        type: str
      pattern:
        description: A Python regular expression searched in the full command line (arguments joined by spaces).
        type: str
  project:
    description:
      - SunOS only. A project whose processes are bound to the set; with O(persist=true) its C(project.pool)
        attribute is set, so that new processes of the project start in the pool.
    type: str
  persist:
    description:
      - SunOS only. V(true) keeps the set across reboots as a resource pool (C(poolcfg), C(pooladm));
        V(false) uses C(psrset), which lasts until the next reboot.
    type: bool
    default: true
  root:
    description:
      - Read the topology under O(root) and edit the drop-in under it, for a mounted image or a test tree.
        Live processes and services are only read and bound when O(root=/).
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup]
# END options
attributes:
  diff_mode:
    description: Returns the before and after text of the drop-in.
  platform:
    platforms: [linux, sunos]
    description: Linux (systemd, cpusets, sched_setaffinity) and SunOS (psrset, resource pools).
notes:
  - The huge pages of a database bound here are put on the same node with M(dbhost.tuning.hugepages)
    (C(pages) with C(node)); the C(dbhost.tuning.processor_sets) role does both.
seealso:
  - name: systemd.exec(5)
    description: CPUAffinity=, NUMAPolicy=, NUMAMask= for services.
    link: https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html
  - name: cpuset(7)
    description: cpusets, memory_migrate.
    link: https://man7.org/linux/man-pages/man7/cpuset.7.html
  - name: psrset(8)
    description: Solaris processor sets.
    link: https://docs.oracle.com/cd/E88353_01/html/E72487/psrset-8.html
'''

EXAMPLES = r'''
- name: Bind the Oracle service and its running processes to NUMA node 1 (CPUs and memory)
  dbhost.tuning.processor_set:
    name: oracle
    cpus: node:1
    service: oracle-db
    processes:
      - user: oracle
        pattern: '^ora_'
  register: oracle_binding

- name: Bind PostgreSQL to CPUs 8-15, memory on node 0, refusing a set that takes every CPU
  dbhost.tuning.processor_set:
    name: pg
    cpus: 8-15
    mems: 0
    exclusive: true
    service: postgresql@15-main

- name: Drift check only
  dbhost.tuning.processor_set:
    name: oracle
    cpus: node:1
    service: oracle-db
  check_mode: true

- name: Solaris - a pool on board 1 that survives a reboot, for the oracle project
  dbhost.tuning.processor_set:
    name: oracle
    cpus: 16-31
    project: user.oracle
    persist: true
  when: ansible_facts['system'] == 'SunOS'
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/processor_set.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: The service must restart to run on the new CPUs., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per bound item - the service, each matched process, the cpuset, the pool or set.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'V(service:<unit>), V(pid:<pid>), V(cpuset:dbhost-<name>), V(processes:<match>) when nothing matches, V(psrset:<name>),
        V(pool:dbhost-<name>), V(project:<name>).', type: str, sample: 'service:postgresql.service'}
    target: {description: 'The drop-in, the matching rule, the cpuset folder, or the pool.', type: str}
    desired:
      description: The CPUs and memory nodes asked for (C(cpus), C(mems)).
      type: dict
      sample: {cpus: '1', mems: '0'}
    live: {description: 'What runs now - C(cpus) (Cpus_allowed_list), C(mems) (Mems_allowed_list), C(numa_policy), C(pid), C(cpuset); null when
        not running or not read.', type: dict}
    persisted: {description: What systemd (or the pool configuration) will apply at the next start., type: dict}
    status: {description: 'V(ok), V(changed), V(drift) (check mode), V(pending_restart) (the drop-in is in place, the running service still has
        the old binding), V(shadowed) (another drop-in wins), V(unsupported), V(failed).', type: str}
    detail: {description: 'Why, in words.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: processor_set.cpus'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
topology:
  description: The NUMA topology used.
  returned: always
  type: dict
  sample:
    nodes:
      '0':
        cpus: 0-1
        memory_bytes: 25769803776
        distances: [10]
    online_cpus: 0-1
    offline_cpus: ''
cpus: {description: 'The CPUs chosen, as a CPU list.', returned: always, type: str, sample: '1'}
mems: {description: 'The memory nodes chosen, as a list.', returned: always, type: str, sample: '0'}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of the drop-in, when O(backup=true) and it changed.'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('processor_set'),
                           supports_check_mode=True)
    registry.run(module, 'processor_set')


if __name__ == '__main__':
    main()
