# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the effect checks of the database services the roles tune (db_effect calls).

Made from the calls the roles' compile steps already made, once they all ran
(state/desired.py compile_state): each role that tunes a service for a database checks, in
one read-only db_effect call owned by that role, that the running service gets it:

- shared_memory with ``shared_memory_service``: its shared memory in huge pages and the
  engine's own huge page setting (``shared_memory_engine``'s; both when it plans huge page
  pools) and its locked memory (the LimitMEMLOCK of its resource_limits call);
- processor_sets with ``processor_sets_service``: its CPUs and its memory's NUMA nodes;
- direct_io, each ``direct_io_databases`` item with a ``service`` whose parameters ask for
  direct I/O: its data files under ``direct_io_mounts`` opened with O_DIRECT.

The running system's processes only: a role whose root is not ``/`` (a mounted image, a test
tree) has no running database to check.  ``changed_by`` names the files that carry each
setting, so that a process started before they changed is reported pending a restart.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.engine import NAMES
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.plan import LABELS
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, role_var

KIND = 'db_effect'
# The drop-ins the plans write for a service (plans/resource_limits.py DEFAULT_DROPIN_NAME's folder,
# plans/processor_set/service.py DROPIN_NAME) and the huge page pools' sysctl file (plans/hugepages.py).
UNIT_FOLDER = '/etc/systemd/system/%s.d/%s'
CPUS_DROPIN = '90-dbhost-tuning-cpus.conf'
HUGEPAGES_FILE = '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'
FSTAB = '/etc/fstab'   # the mount_options plan's file when the role names none (plans/mounts/platform.py)
# The parameter values that make the engine open its data files with O_DIRECT.
DIRECT_IO_PARAMS = {'mysql': ('innodb_flush_method', ('O_DIRECT', 'O_DIRECT_NO_FSYNC')),
                    'oracle': ('filesystemio_options', ('SETALL', 'DIRECTIO'))}


def _live_root(kwargs):
    return (kwargs.get('root') or '/') == '/'


def _add(state, owner, service, kwargs, sources, label=None):
    """One record per check, keyed as the plan names its records, and the call."""
    desired = {'huge_pages': 'in huge pages', 'memlock': kwargs.get('memlock'), 'cpus': kwargs.get('cpus'),
               'engine_huge_pages': '%s asking for huge pages, and in them' % NAMES.get(kwargs.get('engine')),
               'mems': kwargs.get('mems') or 'the nodes of the CPUs', 'direct_io': 'O_DIRECT'}
    for check in kwargs['checks']:
        state.add(KIND, '%s %s' % (service, LABELS[check]), desired[check], compare.EXACT, owner, sources[check])
    state.calls.append(Call(KIND, owner, dict(kwargs, service=service), label=label or '%s %s' % (KIND, service)))


def _shared_memory(state, inputs):
    v = inputs.get('shared_memory') or {}
    limits = [c for c in state.calls if c.owner == 'shared_memory' and c.kind == 'resource_limits'
              and c.kwargs.get('service') and _live_root(c.kwargs)]
    if not limits:
        return
    call = limits[0]
    service = call.kwargs['service']
    dropin = UNIT_FOLDER % (service, call.kwargs.get('dropin_name') or '90-dbhost-tuning.conf')
    checks, changed_by = ['memlock'], [dropin]
    engine = v.get('shared_memory_engine')
    if any(c.owner == 'shared_memory' and c.kind == 'hugepages' for c in state.calls):
        # the engine's own setting too: huge_pages, large_pages, use_large_pages (plans/db_effect/engine.py)
        checks[:0] = ['huge_pages'] + (['engine_huge_pages'] if engine in NAMES else [])
        changed_by.append(HUGEPAGES_FILE)
    memlock = call.kwargs['service_limits']['LimitMEMLOCK']
    _add(state, 'shared_memory', service, dict(
        checks=checks, engine=engine, memlock=str(memlock), changed_by=changed_by),
        {'huge_pages': 'role variable: shared_memory_hugepages (shared_memory_service %s)' % service,
         'engine_huge_pages': 'role variable: shared_memory_engine %s (shared_memory_service %s)' % (engine, service),
         'memlock': 'sizing: LimitMEMLOCK of shared_memory_service %s' % service})


def _processor_sets(state):
    for call in state.calls:
        kwargs = call.kwargs
        if call.kind != 'processor_set' or not kwargs.get('service') or kwargs.get('state') != 'present' \
                or not _live_root(kwargs):
            continue
        mems = kwargs.get('mems')
        mems = ','.join(str(m) for m in mems) if isinstance(mems, (list, tuple)) else mems
        cpus = kwargs['cpus']
        cpus = ','.join(str(c) for c in cpus) if isinstance(cpus, (list, tuple)) else cpus
        service = kwargs['service']
        _add(state, 'processor_sets', service, dict(
            checks=['cpus', 'mems'], cpus=str(cpus), mems=None if mems in (None, '') else str(mems),
            changed_by=[UNIT_FOLDER % (service, CPUS_DROPIN)]),
            {'cpus': 'user: processor_sets_cpus', 'mems': 'user: processor_sets_mems' if mems not in (None, '')
             else 'user: processor_sets_cpus (their NUMA nodes)'})


def _direct_io(state, inputs):
    v = inputs.get('direct_io') or {}
    if not v or role_var(v, 'direct_io_root') != '/':
        return
    fstabs = [c.kwargs.get('fstab') for c in state.calls if c.owner == 'direct_io' and c.kind == 'mount_options']
    mounts = [m.get('path') for m in v.get('direct_io_mounts') or [] if isinstance(m, dict) and m.get('path')]
    engine_params = v.get('direct_io_engine_params') or {}
    for index, db in enumerate(v.get('direct_io_databases') or []):
        if not isinstance(db, dict) or not db.get('service') or db.get('engine') not in DIRECT_IO_PARAMS:
            continue
        name, direct = DIRECT_IO_PARAMS[db['engine']]
        params = dict(engine_params.get(db['engine']) or {})
        params.update(db.get('params') or {})
        # Oracle's data files are every file on the direct I/O mounts; InnoDB's have names of their own
        folders = list(mounts) if db['engine'] == 'oracle' else []
        if str(params.get(name, '')).upper() not in direct or db['engine'] == 'oracle' and not folders:
            continue
        # the file named and its folder: the setting may be written to a file included from there, and
        # every write renames a file into its folder
        path = db.get('path')
        changed_by = [p for p in [path, path and os.path.dirname(path)] + [fstab or FSTAB for fstab in fstabs] if p]
        _add(state, 'direct_io', db['service'], dict(
            checks=['direct_io'], engine=db['engine'], direct_io_paths=folders, changed_by=changed_by),
            {'direct_io': 'user: direct_io_databases[%d].params (%s)' % (index, name)},
            label='%s %s %s' % (KIND, db['engine'], db['service']))


def compile_effects(state, inputs):
    """Add a db_effect call (and its records) for each database service the roles tune on the running system."""
    _shared_memory(state, inputs)
    _processor_sets(state)
    _direct_io(state, inputs)
