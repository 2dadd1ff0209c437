#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: hugepages
short_description: Size Linux huge page pools, read back what the kernel really allocated, and persist them
version_added: 0.1.0
description:
  - Sets the number of huge pages per page size (for example 2M and 1G), for the whole system or on one NUMA
    node, in one call.
  - After writing a count it reads back what the kernel really allocated. The kernel can only allocate pages
    from free contiguous memory, so it may allocate fewer than asked. On a short allocation, with
    O(compact=true), the module writes C(1) to C(/proc/sys/vm/compact_memory) (and drops nothing else - no
    page cache is thrown away) and retries the write once.
  - A pool that is still short is reported with status C(failed) and the detail C(requested N, allocated M),
    whatever O(on_short) says, so that a drift check always sees it. O(on_short) only decides whether the task
    then fails (V(fail)) or goes on with a warning (V(warn)). The pages the kernel did allocate are kept.
  - Compares three values per pool - desired (requested), live (allocated) and persisted (what the next boot
    requests) - so a pool sized by hand and lost at reboot shows as drift.
  - Persistence, so that every pool survives a reboot - the default page size for the whole system goes to
    C(vm.nr_hugepages) in O(sysctl_file), applied by systemd-sysctl at boot; the persisted value is the one that
    wins across the sysctl.d search path, and a file that wins over ours with another value makes the record
    C(shadowed).
  - Non-default sizes and per-node pools cannot be set by sysctl. They are persisted as systemd-tmpfiles
    C(w) lines in O(tmpfiles_file) (for example C(w /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages - - - - 4)),
    which systemd-tmpfiles-setup.service writes early at boot, before C(sysinit.target) and so before any database
    starts. This uses what every systemd host already runs - no extra service or script is installed. The
    persisted value is resolved across the tmpfiles.d search path, where the first file wins.
  - The kernel command line (C(hugepagesz=1G hugepages=N)) is not managed. It is the most reliable way to get
    many 1G pages on a host whose memory is fragmented, because it allocates before anything else runs.
    Use it through the boot loader if runtime allocation keeps coming up short.
  - A count persisted for boot is written even when the live allocation came up short, because memory is
    least fragmented at boot.
  - All input is checked before anything is written - sizes that are no huge page size (not a power of two),
    negative counts, pools that would not fit in physical memory (host or node), and a size given both
    for the whole system and per node.
  - A pool this host does not have - a page size the kernel (or CPU) does not offer, a NUMA node the machine
    does not have, a node without pages of that size - is reported V(unsupported) with the reason, never a
    failure; nothing is allocated for it and no line is persisted for a pool that is not there. The other
    pools are applied.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/hugepages.yml
options:
  pages:
    description: The pools to size.
    type: list
    elements: dict
    required: true
    suboptions:
      size:
        description:
          - The huge page size - V(2M), V(1G), V(2048kB), or a number of bytes.
          - Omitted, the system default size (C(Hugepagesize) in C(/proc/meminfo)).
        type: raw
      count:
        description: The number of pages wanted in the pool.
        type: int
        required: true
      node:
        description:
          - A NUMA node number. The pool is then the node's own
            (C(/sys/devices/system/node/node<N>/hugepages/hugepages-<kB>kB/nr_hugepages)).
          - Omitted, the pool is system-wide and the kernel spreads the pages over the nodes.
        type: int
  comparison:
    description:
      - V(exact) makes each pool exactly O(pages[].count) pages, shrinking a larger pool.
      - V(minimum) asks for at least that many (what Oracle, PostgreSQL and MySQL document) - a larger live
        or persisted pool is met, kept and never shrunk.
    type: str
    choices: [exact, minimum]
    default: exact
  on_short:
    description:
      - What a short allocation does to the task after the retry. The record says C(failed) in both cases.
      - V(fail) fails the task, naming each short pool with the counts requested and allocated.
      - V(warn) adds a warning and lets the play go on.
    type: str
    choices: [fail, warn]
    default: fail
  compact:
    description: On a short allocation, compact memory once and retry the write.
    type: bool
    default: true
  apply:
    description: Change the live pools when they differ.
    type: bool
    default: true
  persist:
    description: Persist the counts so that they survive a reboot (see the description for how).
    type: bool
    default: true
  sysctl_file:
    description: The sysctl.d file that persists C(vm.nr_hugepages) for the default size; it must be read at boot.
    type: path
    default: /etc/sysctl.d/90-dbhost-tuning-hugepages.conf
  tmpfiles_file:
    description: The tmpfiles.d file that persists the other sizes and per-node pools.
    type: path
    default: /etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf
  root:
    description:
      - Act on a mounted image or a test tree instead of the running host.
      - Files, C(/proc/meminfo) and C(/sys) are read (and written) under O(root). When O(root) has no
        C(/sys/kernel/mm/hugepages), only the persisted side is managed.
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed,
  dbhost.tuning.common.linux_only]
# END options
attributes:
  check_mode:
    description: >-
      Nothing on the host changes; records say C(drift) for what would change, and the detail warns when the
      memory available now cannot hold the extra pages.
  diff_mode:
    description: Returns the before and after text of O(sysctl_file) and O(tmpfiles_file).
notes:
  - In a container, C(/sys/kernel/mm/hugepages) and C(vm.nr_hugepages) are the host's - a write changes the host.
  - A database only uses huge pages allocated before it maps its shared memory - restart it after growing the pool.
seealso:
  - module: dbhost.tuning.kernel_params
  - name: HugeTLB Pages
    description: The kernel's documentation of the pools, per-node pools and compaction.
    link: https://docs.kernel.org/admin-guide/mm/hugetlbpage.html
'''

EXAMPLES = r'''
- name: 4 GiB of default-size (2M) pages for PostgreSQL shared memory
  dbhost.tuning.hugepages:
    pages:
      - count: 2048

- name: 1G pages for an Oracle SGA on NUMA node 1, go on with a warning if the kernel gives fewer
  dbhost.tuning.hugepages:
    pages:
      - size: 1G
        count: 48
        node: 1
    on_short: warn
  register: hugepages_result

- name: Drift check only
  dbhost.tuning.hugepages:
    pages:
      - size: 2M
        count: 2048
  check_mode: true
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/hugepages.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per pool.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'The pool, C(hugepages-<kB>kB), or C(node<N>/hugepages-<kB>kB) for a node''s pool.', type: str, sample: hugepages-2048kB}
    target: {description: The file the count is persisted in (O(sysctl_file) or O(tmpfiles_file)); the pool's sysfs path with O(persist=false).,
      type: str, sample: /etc/sysctl.d/90-dbhost-tuning-hugepages.conf}
    desired: {description: The number of pages requested., type: int, sample: 2048}
    live: {description: 'The number of pages the kernel has allocated after this run (before it, in check mode).', type: int, sample: 2048}
    persisted: {description: 'The count the next boot requests, from whichever file wins; null when none sets it.', type: int, sample: 2048}
    status: {description: 'V(ok), V(changed), V(drift) (check mode: would change), V(shadowed), V(unsupported), or V(failed) (the kernel refused
        the count, or allocated fewer pages than requested).', type: str, sample: changed}
    detail: {description: 'Why, in words - for a short pool C(requested N, allocated M), and whether memory was compacted.', type: str, sample: 'requested
        2048, allocated 1536 (after compacting memory)'}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: hugepages.pages'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
compacted: {description: Whether memory was compacted during this run., returned: always, type: bool}
backup_file: {returned: changed and backup requested, type: raw, description: 'The backup of the edited file (a list when both files changed),
    with O(backup=true).'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of the edited files, with
    C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import new_module
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = new_module(AnsibleModule, argument_spec=registry.spec('hugepages'),
                        supports_check_mode=True)
    registry.run(module, 'hugepages')


if __name__ == '__main__':
    main()
