# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: on SunOS, whether the bound processes' shared memory lies on
the processor set's board (seed 000), read from the processes themselves with ``pmap -Ls``
against the set's leaf lgroups (``lgrpinfo -G -c``).

Binding processes moves their threads, not their memory: illumos os/lgrp.c spreads shared
memory over 8 MB (``lgrp_shm_random_thresh``; ISM takes that default policy, vm/seg_spt.c)
at random over all lgroups unless ``lgrp_mem_pset_aware`` is set, and pages already
allocated stay where they are.  So the record is ``ok`` only when pmap shows the shared
memory on the set's lgroups; ``pending_restart`` when this run (or, in check mode, the run
it stands for) binds processes (the memory follows only when the database starts again in
the set, with ``lgrp_mem_pset_aware = 1`` from /etc/system in effect); ``drift`` otherwise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    DRIFT, OK, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sunos_memory

RESTART = ('binding moves threads, not memory already allocated: start the database again in the set, with '
           'lgrp_mem_pset_aware = 1 in effect (/etc/system, next boot), for its shared memory to follow')


def read_memory(plan, groups):
    """{'lgroups', 'status', 'live', 'detail'} for the processes of ``groups``; None when there is
    no process or the machine has one lgroup with memory (nothing to place)."""
    pids = sorted(set(pid for group in groups for pid in group['pids']))
    if not pids:
        return None
    info = plan.read_lgroups()
    leaves = [lg for lg, group in info.items() if group['kind'].startswith('leaf')]
    wanted = sunos_memory.board_lgroups(info, plan.cpus)
    if len(leaves) < 2:
        return {'lgroups': wanted, 'status': OK, 'live': None,
                'detail': 'one leaf lgroup (lgrpinfo -G): all memory is local to every CPU'}
    rc, out, err = plan.runner(['pmap', '-Ls'] + [str(pid) for pid in pids])
    if rc != 0 and not (out or '').strip():
        return {'lgroups': wanted, 'status': UNSUPPORTED, 'live': None,
                'detail': 'pmap -Ls failed: %s' % ((err or '').strip() or 'exit status %d' % rc)}
    status, live, detail = sunos_memory.placement_check(out, wanted)
    if rc != 0 and (err or '').strip():
        detail += '; pmap: %s' % err.strip().splitlines()[0]
    return {'lgroups': wanted, 'status': status, 'live': live, 'detail': detail}


def binds_now(groups, target, check_mode):
    """Whether this run binds (check mode: would bind) any process of ``groups``."""
    for group in groups:
        if group.get('bound'):
            return True
        before = group.get('before') or {}
        # target None in check mode: the set is still to be made, so every process would be bound.
        if check_mode and group['pids'] and (target is None or any(before.get(pid) != target for pid in group['pids'])):
            return True
    return False


def memory_record(plan, memory, groups, target):
    """The record of read_memory()'s answer ``memory``."""
    status, detail = memory['status'], memory['detail']
    if status == DRIFT and binds_now(groups, target, plan.gate.check_mode):
        status, detail = PENDING_RESTART, '%s; %s' % (detail, RESTART)
    elif status == DRIFT:
        detail = '%s; %s' % (detail, RESTART)
    return Setting('memory:%s' % plan.name, 'pmap -Ls', {'lgroups': memory['lgroups']}, memory['live'], None,
                   status, detail)


def all_bound(live, target):
    """Every process's binding was read before any change, and each is bound to ``target`` already."""
    groups = live.get('groups')
    return groups is not None and target is not None and all(
        group['before'] is not None and all(group['before'].get(pid) == target for pid in group['pids'])
        for group in groups)
