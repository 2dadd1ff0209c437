#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: host_facts
short_description: Gather what database host sizing and drift reports need, as ansible_facts.dbhost
version_added: 0.1.0
description:
  - Reads, in one pass and without one command per item, the facts that the collection's roles size
    settings from and that drift reports show.
  - Linux - RAM, base page size, huge page sizes and pools (per NUMA node), NUMA topology, block devices with
    their queue attributes and stable identifiers, mounts with their options, shared-memory limits,
    transparent huge pages and cpusets, from C(/proc) and C(/sys).
  - SunOS - RAM (C(prtconf)), page size, processor sets (C(psrset -i)) and projects (C(/etc/project)).
  - FreeBSD - RAM, page size and C(kern.ipc) shared-memory limits from one C(sysctl) call.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/host_facts.yml
options:
  subset:
    description: Which groups of facts to gather; all by default.
    type: list
    elements: str
    choices: [memory, hugepages, numa, transparent_hugepage, shm, block_devices, mounts, cpusets]
  root:
    description:
      - Read C(/proc) and C(/sys) under this folder instead of the running host's (tests, images).
      - An absolute path to an existing folder; anything else fails the task.
extends_documentation_fragment: [dbhost.tuning.common.root]
# END options
attributes:
  check_mode:
    support: full
    description: Only reads.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to show.
  facts:
    support: full
    description: Sets C(ansible_facts.dbhost).
  platform:
    support: full
    platforms: [linux, freebsd, sunos]
    description: Linux from C(/proc) and C(/sys); SunOS and FreeBSD through a few commands.
'''

EXAMPLES = r'''
- name: Gather memory and huge page facts for sizing
  dbhost.tuning.host_facts:
    subset: [memory, hugepages]

- name: Show the RAM
  ansible.builtin.debug:
    msg: "{{ ansible_facts['dbhost']['memory']['total_bytes'] }}"
'''

RETURN = r'''
ansible_facts:
  description: Facts under the C(dbhost) key.
  returned: always
  type: dict
  contains:
    dbhost:
      description: The gathered facts.
      type: dict
      contains:
        system:
          description: The platform name.
          type: str
          sample: Linux
        memory:
          description: C(total_bytes), C(page_size), C(hugepage_default_bytes).
          type: dict
        hugepages:
          description: >-
            One pool per huge page size, keyed by the size in bytes, with C(total), C(free), C(surplus),
            C(reserved) and C(nodes) (pages per NUMA node).
          type: dict
        numa:
          description: C(nodes) (C(cpus), C(memory_bytes), C(distances) per node), C(online_cpus), C(offline_cpus).
          type: dict
        transparent_hugepage:
          description: The selected C(enabled) and C(defrag) modes.
          type: dict
        shm:
          description: Shared-memory and semaphore limits as the kernel shows them.
          type: dict
        block_devices:
          description: Per device, its queue attributes, stable identifiers, partitions, slaves and holders.
          type: dict
        mounts:
          description: Mount points with source, file system type and options.
          type: list
          elements: dict
        cpusets:
          description: The cpuset cgroup hierarchy's version and top-level sets.
          type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.host_facts import gather
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.validate import check_params
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('host_facts'), supports_check_mode=True)
    try:
        check_params(module.params, module.argument_spec)
        facts = gather(module.params['root'], module.params['subset'],
                       runner=module.run_command)
    except InputError as exc:
        module.fail_json(msg=str(exc))
    else:
        module.exit_json(changed=False, ansible_facts={'dbhost': facts})


if __name__ == '__main__':
    main()
