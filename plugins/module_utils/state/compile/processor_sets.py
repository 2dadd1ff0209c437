# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the processor_sets role's variables -> a processor_set record and call.

It also says which NUMA node the shared_memory role's huge pages go on when
processor_sets_shared_memory is set (compile_processor_sets returns it).

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, flag, root_of, text, role_var


def compile_processor_sets(state, v, facts):
    role = 'processor_sets'
    present = role_var(v, 'processor_sets_state') == 'present'
    cpus = role_var(v, 'processor_sets_cpus')
    service = role_var(v, 'processor_sets_service') or ''
    processes = role_var(v, 'processor_sets_processes') or []
    project = role_var(v, 'processor_sets_project') or ''
    if present and (text(cpus) == '' or not (service or processes or project)):
        raise InputError('processor_sets_cpus must name the CPUs (a CPU list or node:N), and at least one of '
                         'processor_sets_service, processor_sets_processes or processor_sets_project what to bind')
    mems = role_var(v, 'processor_sets_mems')
    args = {'name': role_var(v, 'processor_sets_name'), 'state': role_var(v, 'processor_sets_state'),
            'cpus': cpus if text(cpus) else None, 'mems': mems if mems not in (None, '', []) else None,
            'exclusive': flag(v, 'processor_sets_exclusive'), 'service': service or None,
            'service_mode': role_var(v, 'processor_sets_service_mode'),
            'processes': [dict((k, val) for k, val in p.items() if val is not None) for p in processes],
            'project': project or None, 'persist': flag(v, 'processor_sets_persist'),
            'root': root_of(v, 'processor_sets_root'), 'backup': flag(v, 'processor_sets_backup')}
    state.add('processor_set', args['name'], text(cpus), compare.EXACT, role, 'user: processor_sets_cpus')
    state.calls.append(Call('processor_set', role, args))
    if present and service and flag(v, 'processor_sets_restart_service'):
        state.restart_services.append({'owner': role, 'service': service, 'when': 'processor_set'})
    node = None
    if present and flag(v, 'processor_sets_shared_memory') and facts.get('system') == 'SunOS':
        _sunos_memory_on_the_board(state, args['root'])
        return _single_node(mems, cpus, facts.get('numa'))
    if present and flag(v, 'processor_sets_shared_memory'):
        node = _single_node(mems, cpus, facts.get('numa'))
        if node is None:
            raise InputError('processor_sets_shared_memory puts the huge pages on one node, but the set\'s memory is '
                             'not one node (processor_sets_mems %r, processor_sets_cpus %r): set processor_sets_mems '
                             'to one node' % (mems, cpus))
    return node


# illumos usr/src/uts/common/os/lgrp.c, lgrp_mem_policy_default(): shared memory over
# lgrp_shm_random_thresh (8 MB) - ISM too, which takes the default policy (vm/seg_spt.c) - is
# spread at random over every lgroup of the machine unless lgrp_mem_pset_aware is set; then
# over the lgroups of the allocating thread's processor set only (when it fits there).
PSET_AWARE = ('seed 000 (memory on the board): lgrp_mem_pset_aware = 1, so that shared memory over 8 MB is '
              'allocated on the lgroups of the allocating process\'s processor set (illumos os/lgrp.c, '
              'lgrp_mem_policy_default) instead of at random over all boards')


def _sunos_memory_on_the_board(state, root):
    """SunOS: lgrp_mem_pset_aware (next boot), for shared memory on the set's board; in the kernel_params
    module's default file (our file in /etc/system.d where the release has that folder, else /etc/system)."""
    state.add('kernel_params', 'lgrp_mem_pset_aware', '1', compare.EXACT, 'processor_sets', PSET_AWARE)
    state.calls.append(Call('kernel_params', 'processor_sets', dict(root=root, mode=compare.EXACT)))


def _single_node(mems, cpus, topology=None):
    if isinstance(mems, int) and not isinstance(mems, bool):
        return mems
    if isinstance(mems, (list, tuple)) and len(mems) == 1 and str(mems[0]).isdigit():
        return int(mems[0])
    if isinstance(mems, str) and mems.strip().isdigit():
        return int(mems)
    cpus_text = text(cpus).strip()
    if mems in (None, '', []) and cpus_text.startswith('node:') and cpus_text[5:].isdigit():
        return int(cpus_text[5:])
    if mems in (None, '', []) and topology and not cpus_text.startswith('node:'):
        # A CPU list: the set's memory is the node of its CPUs, as the processor_set plan binds it.
        try:
            wanted = set(numa.parse_cpu_list(cpus_text))
        except ValueError:
            return None
        nodes = [int(node) for node, info in topology.get('nodes', {}).items()
                 if wanted & set(numa.parse_cpu_list(info.get('cpus') or ''))]
        return nodes[0] if len(nodes) == 1 else None
    return None
