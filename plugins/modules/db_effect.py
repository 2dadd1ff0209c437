#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: db_effect
short_description: Check that a running database gets the huge pages, locked memory, CPUs, NUMA node and direct I/O tuned for it
version_added: 0.1.0
description:
  - Read-only. Finds the processes of a systemd service (its C(MainPID) and every process of its cgroup, from
    the cgroup's C(cgroup.procs) under C(/sys/fs/cgroup)) and answers, from their own C(/proc) files, whether
    the database really gets what the other modules set up for it.
  - V(huge_pages) - the service's shared memory (SysV segments, C(/dev/shm), memfd, shared anonymous and
    hugetlb mappings, from the main process's C(/proc/<pid>/smaps)) is in huge pages, and, with
    O(huge_pages_bytes), at least that much of it. PostgreSQL with C(huge_pages=try) and a short pool, or
    MariaDB whose large pages did not fit, shows here as not in huge pages.
  - V(engine_huge_pages) - the engine's own setting, asked of the engine where it can answer, together with what
    its shared memory got (as V(huge_pages) reads it). PostgreSQL - C(SHOW huge_pages) and
    C(SHOW shared_memory_size_in_huge_pages) through the socket the service listens on, as the user the server runs
    as, and C(postgres -C huge_pages) with the server's own command line (what its configuration gives now).
    MariaDB/MySQL - C(SHOW GLOBAL VARIABLES LIKE 'large_pages') through its socket as root, and
    C(my_print_defaults) of the server's groups. Oracle - C(use_large_pages) of the spfile or pfile of the
    instance in the main process's environment (C(ORACLE_SID), C(ORACLE_HOME)). Ok when the engine asks for
    huge pages and has them; a setting that falls back to normal pages silently when the pool is short
    (PostgreSQL C(try), MariaDB C(large_pages), Oracle C(TRUE)) is named in the detail, and the live value says
    C(fell back to normal pages) when it did. Needs O(engine).
  - V(memlock) - every process's soft C(Max locked memory) (C(/proc/<pid>/limits)) is at least O(memlock).
  - V(cpus) - every process's C(Cpus_allowed_list) is O(cpus).
  - V(mems) - the shared memory's pages (C(/proc/<pid>/numa_maps), per node) are all on the nodes O(mems), and
    every process is held to those nodes (C(Mems_allowed_list), or a C(bind) memory policy).
  - V(direct_io) - the engine's data files open under O(direct_io_paths) were opened with C(O_DIRECT)
    (the C(flags) of C(/proc/<pid>/fdinfo/<fd>)); the detail gives the mounts' live options. PostgreSQL opens
    its data files without C(O_DIRECT) whatever its settings, so this check is V(unsupported) for it.
  - A record is V(ok) when the database gets it. When it does not, it is V(pending_restart) if the main process
    started before one of O(changed_by) last changed (the detail names the file, both times and the service to
    restart), else V(drift). It is V(unsupported), with the reason, when the service is not running or its
    processes cannot be read; that never fails a drift check.
  - The M(dbhost.tuning.host_state) module (C(tune.yml), C(drift.yml)) makes these checks for the service named by
    C(shared_memory_service), C(processor_sets_service) and each C(direct_io_databases) item's C(service).
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/db_effect.yml
options:
  service:
    description: The systemd service that runs the database (V(postgresql@15-main.service), V(mariadb.service)).
    type: str
    required: true
  checks:
    description: What to check; each needs its option (V(memlock) needs O(memlock), and so on).
    type: list
    elements: str
    required: true
    choices: [huge_pages, engine_huge_pages, memlock, cpus, mems, direct_io]
  engine:
    description: The database engine; needed by V(direct_io), which names its data files, and V(engine_huge_pages).
    type: str
    choices: [oracle, postgresql, mysql]
  huge_pages_bytes:
    description: What the engine allocates in huge pages, in bytes; at least this much must be in huge pages.
    type: int
  memlock:
    description: The memlock limit the service must run with, as systemd's C(LimitMEMLOCK=) takes it (bytes, V(infinity)).
    type: str
  cpus:
    description: The CPUs the service must run on (V(0-3), or V(node:1) for the CPUs of NUMA node 1).
    type: str
  mems:
    description: The NUMA nodes its memory must be on (V(1), V(0-1)).
    type: str
  direct_io_paths:
    description: The folders (mount points) whose data files must be opened with C(O_DIRECT).
    type: list
    elements: path
    default: []
  changed_by:
    description:
      - The files that carry the settings (a unit drop-in, the huge page sysctl file, the database's configuration).
        A process started before the newest of them changed reports V(pending_restart) instead of V(drift).
    type: list
    elements: path
    default: []
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root]
# END options
attributes:
  check_mode:
    description: Reads only, in check mode or not.
  diff_mode:
    support: none
    description: Edits no file, so there is no diff.
  platform:
    platforms: [linux]
    description: Linux; elsewhere every record is V(unsupported) with the reason.
notes:
  - The processes are read under O(root)'s C(/proc) and C(/sys/fs/cgroup); the service is found with C(systemctl show).
seealso:
  - name: The /proc filesystem
    description: The kernel's description of smaps, numa_maps, limits, status and fdinfo.
    link: https://docs.kernel.org/filesystems/proc.html
'''

EXAMPLES = r'''
- name: Does PostgreSQL get its huge pages and its locked memory?
  dbhost.tuning.db_effect:
    service: postgresql@15-main.service
    checks: [huge_pages, memlock]
    memlock: infinity
    changed_by: [/etc/sysctl.d/90-dbhost-tuning-hugepages.conf]

- name: MariaDB on node 1, its InnoDB files opened with O_DIRECT
  dbhost.tuning.db_effect:
    service: mariadb.service
    engine: mysql
    checks: [cpus, mems, direct_io]
    cpus: node:1
    mems: '1'
    direct_io_paths: [/var/lib/mysql]
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/db_effect.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: Always false., returned: always, type: bool}
restart_required: {description: True when a record is V(pending_restart)., returned: always, type: bool}
reboot_required: {description: Always false., returned: always, type: bool}
settings:
  description: One record per check.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The service and the check., type: str, sample: postgresql@15-main.service shared memory in huge pages}
    target: {description: 'The processes read (the main pid and how many more), or the service when none could be.', type: str, sample: pid 812
        and 6 more}
    desired: {description: What the database should get., type: str, sample: in huge pages (144 MiB)}
    live: {description: What it gets., type: str, sample: 0 MiB of 144.2 MiB in huge pages}
    persisted: {description: Always null (a running process has nothing persisted)., type: str}
    status: {description: 'V(ok), V(drift), V(pending_restart) or V(unsupported).', type: str, sample: drift}
    detail: {description: 'How it was read and what was found (the largest segment and its page size, the pids below the limit...).', type: str}
    source: {description: On whose word the desired value stands., type: str}
    reason: {description: 'Why the record is not V(ok): V(the running database does not get it), the start and change times for V(pending_restart),
        the first words of the detail for V(unsupported); null when V(ok).', type: str}
    comparison: {description: Always V(exact)., type: str}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = AnsibleModule(argument_spec=registry.spec('db_effect'),
                           supports_check_mode=True)
    registry.run(module, 'db_effect')


if __name__ == '__main__':
    main()
