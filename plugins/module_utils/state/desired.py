# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: one host's desired state, compiled once from every role's variables.

compile_state(inputs, facts) turns the roles' variables (the names users know from the
roles' READMEs: kernel_params_profile, shared_memory_size, ...) and the host's facts into:

- ``records``: one per setting, ``{kind, key, desired, comparison, owner, source}``;
- ``calls``: the plans to run (kind, owner role, keyword arguments of the plan class).

One setting has one owner.  When two roles plan the same key, the records are merged by
one rule: two minimums (or two maximums) keep the stricter value and the role that asked
for it; equal values keep the first role (in ROLES order); anything else is refused,
naming both roles, before anything on the host is touched.  A merged key is planned in
its owner's call only, so it is never written to two files.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import shm as sizing
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_params import ValueCompare
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import (
    ENGINE_USERS, PROFILE_NAMES, kernel_profile)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError

ROLES = ('kernel_params', 'shared_memory', 'block_queue', 'direct_io', 'processor_sets')

# Sources of the shared_memory role's rules (the numbers are computed in sizing/shm.py).
ORACLE_SHM = 'Oracle Database Installation Guide for Linux, "Minimum Parameter Settings for Installation"'
ORACLE_HUGEPAGES = 'Oracle Database Installation Guide for Linux, "Configuring HugePages on Linux"'
ORACLE_MEMLOCK = 'Oracle Database Installation Guide for Linux, "Checking Resource Limits" (memlock at least 90% of RAM)'
POSTGRESQL_SHM = 'PostgreSQL documentation, "Managing Kernel Resources"'
MYSQL_LARGE_PAGES = 'MySQL Reference Manual, "Enabling Large Page Support"'
THP_SOURCE = 'the database vendors\' advice on transparent huge pages (shared_memory_transparent_hugepage)'
SOURCES = {
    'oracle': {'shm': ORACLE_SHM, 'hugepages': ORACLE_HUGEPAGES, 'memlock': ORACLE_MEMLOCK},
    'postgresql': {'shm': POSTGRESQL_SHM, 'hugepages': POSTGRESQL_SHM, 'memlock': POSTGRESQL_SHM},
    'mysql': {'shm': ORACLE_SHM, 'hugepages': MYSQL_LARGE_PAGES, 'memlock': MYSQL_LARGE_PAGES},
}


class Call(object):
    """One plan to run: ``kind`` names the plan class (see _host_state.PLANS)."""

    def __init__(self, kind, owner, kwargs, label=None):
        self.kind = kind
        self.owner = owner
        self.kwargs = kwargs
        self.label = label or kind


class DesiredState(object):
    def __init__(self):
        self.records = []
        self.calls = []
        self.restart_services = []
        self.notes = []
        self.messages = []
        self.sizing = None   # the shared memory sizing (sizing/shm.py), exported as shared_memory_settings
        self._index = {}

    def add(self, kind, key, desired, comparison, owner, source, namespace=None):
        """Add one record; merge or refuse when another role already planned ``namespace``."""
        record = {'kind': kind, 'key': key, 'desired': desired, 'comparison': comparison,
                  'owner': owner, 'source': source}
        ident = namespace or '%s:%s' % (kind, key)
        other = self._index.get(ident)
        if other is None:
            self._index[ident] = record
            self.records.append(record)
            return record
        return self._merge(other, record)

    def _merge(self, first, second):
        if first['owner'] == second['owner']:
            raise InputError('%s plans %s twice' % (first['owner'], first['key']))
        if first['kind'] != second['kind']:
            raise InputError('%s is planned by two roles as two kinds of setting: %s (%s) and %s (%s); '
                             'give it in one role only'
                             % (first['key'], first['owner'], first['kind'], second['owner'], second['kind']))
        a, b = str(first['desired']), str(second['desired'])
        if a.split() == b.split() and first['comparison'] == second['comparison']:
            first['source'] = '%s; also asked by %s' % (first['source'], second['owner'])
            return None
        how = first['comparison']
        if how != second['comparison'] or how == compare.EXACT:
            raise InputError(
                '%s is planned by two roles: %s wants %s and %s wants %s; give it in one role only, '
                'or the same value' % (first['key'], first['owner'], compare.describe(a, how), second['owner'],
                                       compare.describe(b, second['comparison'])))
        try:
            winner = compare.stricter(a, b, how)
        except compare.ComparisonError as exc:
            raise InputError('%s is planned by %s and %s: %s' % (first['key'], first['owner'], second['owner'], exc))
        note = 'planned by %s (%s) and %s (%s): the stricter %s wins' % (
            first['owner'], compare.describe(a, how), second['owner'], compare.describe(b, how), how)
        if winner.split() != a.split():
            # the second role owns it now; its call carries the key, the first's drops it
            self.notes.append((first['owner'], first['kind'], first['key']))
            first.update(desired=second['desired'], owner=second['owner'], source=second['source'])
        else:
            self.notes.append((second['owner'], second['kind'], second['key']))
        first['source'] = '%s; %s' % (first['source'], note)
        return None

    def as_list(self):
        return [dict(record) for record in self.records]


# ------------------------------------------------------------------ helpers
def _need(variables, name, role):
    if name not in variables:
        raise InputError('%s: the variable %s is not set' % (role, name))
    return variables[name]


def _text(value):
    if isinstance(value, (list, tuple)):
        return ' '.join(str(v) for v in value)
    return str(value)


def _root_of(variables, name):
    root = variables.get(name) or '/'
    if not isinstance(root, str) or not root.startswith('/'):
        raise InputError('%s: %r is not an absolute path' % (name, root))
    return root


def _passwd_entry(root, user):
    """(uid, gid) of ``user`` on the managed system, or None."""
    if root == '/':
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            return None
        return entry.pw_uid, entry.pw_gid
    try:
        with open(os.path.join(root, 'etc', 'passwd')) as handle:
            for line in handle:
                fields = line.rstrip('\n').split(':')
                if len(fields) >= 4 and fields[0] == user:
                    return int(fields[2]), int(fields[3])
    except (IOError, OSError, ValueError):
        return None
    return None


def _group_gid(root, group):
    if root == '/':
        try:
            return grp.getgrnam(group).gr_gid
        except KeyError:
            return None
    try:
        with open(os.path.join(root, 'etc', 'group')) as handle:
            for line in handle:
                fields = line.rstrip('\n').split(':')
                if len(fields) >= 3 and fields[0] == group:
                    return int(fields[2])
    except (IOError, OSError, ValueError):
        return None
    return None


# ------------------------------------------------------------------ kernel_params
def compile_kernel_params(state, v, facts):
    role = 'kernel_params'
    system = facts.get('system', 'Linux')
    profile_name = v.get('kernel_params_profile', 'oracle')
    if profile_name not in PROFILE_NAMES:
        raise InputError('kernel_params_profile: %r is not one of %s' % (profile_name, ', '.join(PROFILE_NAMES)))
    mode = v.get('kernel_params_mode', 'minimum')
    if mode not in compare.COMPARISONS:
        raise InputError('kernel_params_mode: %r is not one of %s' % (mode, ', '.join(compare.COMPARISONS)))
    settings = v.get('kernel_params_settings') or {}
    if not isinstance(settings, dict):
        raise InputError('kernel_params_settings must be a dict of name: value')
    chooser = ValueCompare(mode, sysctl.normalize_value)
    wanted = {}
    for key, (value, how, source) in kernel_profile(profile_name, system).items():
        wanted[key] = (value, how if mode != compare.EXACT else compare.EXACT,
                       '%s (profile %s)' % (source, profile_name))
    for name, value in settings.items():
        key = _canonical(name, system, 'kernel_params_settings')
        if value is None:
            wanted.pop(key, None)
            continue
        text = _text(value)
        wanted[key] = (text, chooser.comparison(key, sysctl.normalize_value(text)), 'kernel_params_settings')
    for key in sorted(wanted):
        value, how, source = wanted[key]
        state.add('sysctl', key, value, how, role, source)
    absent = v.get('kernel_params_absent') or []
    common = dict(file=v.get('kernel_params_file') or None, root=_root_of(v, 'kernel_params_root'),
                  backup=bool(v.get('kernel_params_backup', False)))
    state.calls.append(Call('sysctl', role, dict(
        common, apply=bool(v.get('kernel_params_apply', True)), persist=bool(v.get('kernel_params_persist', True)),
        fail_on_shadowed=bool(v.get('kernel_params_fail_on_shadowed', True)), mode=mode)))
    if absent:
        state.calls.append(Call('sysctl', role, dict(common, params=list(absent), state='absent'), label='sysctl absent'))


def _canonical(name, system, where):
    if system != 'Linux':
        return str(name)
    try:
        return sysctl.validate_name(name).replace('/', '.')
    except ValueError as exc:
        raise InputError('%s: %s' % (where, exc))


# ------------------------------------------------------------------ shared_memory
def compile_shared_memory(state, v, facts, numa_node=None):
    role = 'shared_memory'
    system = facts.get('system', 'Linux')
    if system not in ('Linux', 'FreeBSD', 'SunOS'):
        raise InputError('dbhost.tuning.shared_memory supports Linux, FreeBSD and SunOS; this host is %s' % system)
    engine = v.get('shared_memory_engine', 'oracle')
    if engine not in sizing.ENGINES:
        raise InputError('shared_memory_engine: %r is not one of %s' % (engine, ', '.join(sizing.ENGINES)))
    size = v.get('shared_memory_size')
    if size in (None, ''):
        raise InputError('shared_memory_size must be set: the database\'s shared memory (48G, 40%...)')
    root = _root_of(v, 'shared_memory_root')
    user = v.get('shared_memory_user') or ENGINE_USERS[engine]
    group = v.get('shared_memory_group') or ''
    gid = None
    if system != 'FreeBSD':
        entry = _passwd_entry(root, user)
        if entry is None:
            raise InputError('shared_memory_user %r does not exist on this host; create it first, or set '
                             'shared_memory_user (default for engine %s: %s)' % (user, engine, ENGINE_USERS[engine]))
        gid = entry[1]
        if group and system == 'Linux':
            gid = _group_gid(root, group)
            if gid is None:
                raise InputError('shared_memory_group %r does not exist on this host' % (group,))
    how = v.get('shared_memory_comparison', compare.MINIMUM)
    if how not in (compare.MINIMUM, compare.EXACT):
        raise InputError('shared_memory_comparison: %r is not one of minimum, exact' % (how,))
    pool_how = v.get('shared_memory_hugepages_comparison', compare.MINIMUM)
    if pool_how not in (compare.MINIMUM, compare.EXACT):
        raise InputError('shared_memory_hugepages_comparison: %r is not one of minimum, exact' % (pool_how,))
    node = numa_node if numa_node is not None else v.get('shared_memory_numa_node')
    try:
        shm = sizing.shm_settings_from_facts(
            facts, engine, size, group_gid=gid, hugepage_size=v.get('shared_memory_hugepage_size') or None,
            hugepages_cap=v.get('shared_memory_hugepages_cap', '70%'),
            hugepages_margin=v.get('shared_memory_hugepages_margin', '1%'),
            use_hugepages=bool(v.get('shared_memory_hugepages', True)), numa_node=node,
            etc_system=bool(v.get('shared_memory_etc_system', False)))
    except sizing.SizingError as exc:
        raise InputError('shared_memory: %s' % exc)
    sources = SOURCES[engine]
    backup = bool(v.get('shared_memory_backup', False))
    fail_on_shadowed = bool(v.get('shared_memory_fail_on_shadowed', True))
    params, comparisons = {}, {}
    for key in sorted(shm['kernel_params']):
        value = str(shm['kernel_params'][key])
        rule = compare.EXACT if key in ('vm.hugetlb_shm_group', 'kern.ipc.shm_use_phys') or system == 'SunOS' else how
        state.add('sysctl', key, value, rule, role, '%s: %s' % (sources['shm'], shm['explain'].get(key, '')))
        params[key], comparisons[key] = value, rule
    sysctl_file = {'Linux': v.get('shared_memory_sysctl_file') or '/etc/sysctl.d/90-dbhost-tuning-shm.conf',
                   'FreeBSD': '/etc/sysctl.conf', 'SunOS': '/etc/system'}[system]
    if params:
        state.calls.append(Call('sysctl', role, dict(file=sysctl_file, root=root, backup=backup, mode=compare.EXACT,
                                                     fail_on_shadowed=fail_on_shadowed)))
    if system == 'Linux':
        for pool in shm['hugepages']:
            name = 'vm.nr_hugepages' if pool.get('node') is None else 'hugepages node%s %s' % (pool['node'], pool['size'])
            state.add('hugepages', name, pool['count'], pool_how, role,
                      '%s: %s' % (sources['hugepages'], shm['explain'].get('vm.nr_hugepages', '')),
                      namespace='sysctl:vm.nr_hugepages' if pool.get('node') is None else None)
        if shm['hugepages']:
            state.calls.append(Call('hugepages', role, dict(
                pages=[dict(p) for p in shm['hugepages']], on_short=v.get('shared_memory_hugepages_on_short', 'fail'),
                root=root, backup=backup, comparison=pool_how, fail_on_shadowed=fail_on_shadowed)))
        _memlock(state, v, shm, user, how, sources, dict(root=root, backup=backup, fail_on_shadowed=fail_on_shadowed))
        _thp(state, v, dict(root=root, backup=backup, fail_on_shadowed=fail_on_shadowed))
    elif system == 'SunOS':
        project = v.get('shared_memory_project') or 'user.%s' % user
        for name, value in sorted(shm['project_attributes'].items()):
            state.add('project', '%s %s' % (project, name), value, compare.EXACT, role, sources['shm'])
        state.calls.append(Call('limits', role, dict(projects=[{
            'name': project, 'id': int(v.get('shared_memory_project_id', 100)), 'comment': 'dbhost.tuning shared memory',
            'users': [user], 'attributes': shm['project_attributes']}], root=root, backup=backup)))
    return shm


def _memlock(state, v, shm, user, how, sources, common):
    role = 'shared_memory'
    if shm['memlock_kb'] is None:
        return
    value = str(shm['memlock_kb'])
    for side in ('soft', 'hard'):
        state.add('limits', '%s %s memlock' % (user, side), value, how, role,
                  '%s: %s' % (sources['memlock'], shm['explain'].get('memlock', '')))
    kwargs = dict(limits_list=[{'domain': user, 'type': side, 'item': 'memlock', 'value': value}
                               for side in ('soft', 'hard')],
                  limits_file=v.get('shared_memory_limits_file') or None, comparison=how, **common)
    service = v.get('shared_memory_service') or ''
    if service:
        kwargs.update(service=service, service_limits={'LimitMEMLOCK': shm['limit_memlock']})
        state.add('service_limits', '%s LimitMEMLOCK' % service, shm['limit_memlock'], how, role, sources['memlock'])
        if v.get('shared_memory_service_restart'):
            state.restart_services.append({'owner': role, 'service': service, 'when': 'limits'})
    state.calls.append(Call('limits', role, kwargs))


def _thp(state, v, common):
    role = 'shared_memory'
    attributes = {}
    for name, var in (('kernel/mm/transparent_hugepage/enabled', 'shared_memory_transparent_hugepage'),
                      ('kernel/mm/transparent_hugepage/defrag', 'shared_memory_transparent_hugepage_defrag')):
        value = v.get(var, 'never' if var.endswith('hugepage') else '')
        if value:
            attributes[name] = value
            state.add('sysfs', name, value, compare.EXACT, role, THP_SOURCE)
    if attributes:
        state.calls.append(Call('sysfs', role, dict(
            attributes=attributes, apply=bool(v.get('shared_memory_transparent_hugepage_apply', True)),
            tmpfiles_file=v.get('shared_memory_tmpfiles_file') or None, **common)))


# ------------------------------------------------------------------ block_queue
SELECTOR_KEYS = ('name', 'wwn', 'serial', 'model', 'vendor', 'mount', 'rotational', 'slaves', 'allow_empty')


def block_queue_devices(v):
    """The block_queue module's ``devices`` from block_queue_devices and the role's defaults.

    An item without its own scheduler and without ``rotational`` becomes two items, one per
    kind of device, each with its scheduler (the module does not count a kind that finds no
    device as an empty selection).  ``defaults: false`` takes the item's attributes only.
    """
    workload = v.get('block_queue_workload', 'oltp')
    read_ahead = v.get('block_queue_read_ahead_kb') or {'oltp': 128, 'dss': 4096}
    if workload not in read_ahead:
        raise InputError('block_queue_workload: %r is not one of %s' % (workload, ', '.join(sorted(read_ahead))))
    common = {'rq_affinity': v.get('block_queue_rq_affinity', 1), 'read_ahead_kb': read_ahead[workload]}
    schedulers = {False: v.get('block_queue_scheduler_nonrotational', 'none'),
                  True: v.get('block_queue_scheduler_rotational', 'mq-deadline')}
    out = []
    for index, item in enumerate(v.get('block_queue_devices') or []):
        if not isinstance(item, dict):
            raise InputError('block_queue_devices[%d] must be a dict' % index)
        selector = dict((k, item[k]) for k in SELECTOR_KEYS if k in item)
        own = item.get('attributes') or {}
        if not item.get('defaults', True):
            kinds = [(None, own)]
        elif 'scheduler' in own or 'rotational' in item:
            merged = dict(common, scheduler=schedulers[bool(item.get('rotational', False))])
            merged.update(own)
            kinds = [(None, merged)]
        else:
            kinds = []
            for rotational in (False, True):
                merged = dict(common, scheduler=schedulers[rotational])
                merged.update(own)
                kinds.append((rotational, merged))
        for rotational, attributes in kinds:
            device = dict(selector)
            if rotational is not None:
                device['rotational'] = rotational
            device['attributes'] = dict((k, val) for k, val in attributes.items() if val is not None)
            out.append(device)
    return out


def compile_block_queue(state, v, facts):
    role = 'block_queue'
    devices = block_queue_devices(v)
    if not devices:
        return
    for index, device in enumerate(devices):
        label = ','.join(_text(device.get(k)) for k in ('name', 'wwn', 'serial', 'model', 'vendor', 'mount')
                         if k in device) or 'devices[%d]' % index
        if 'rotational' in device:
            label += ' (%s)' % ('rotational' if device['rotational'] else 'non-rotational')
        for name, value in sorted(device['attributes'].items()):
            state.add('block_queue', '%s %s' % (label, name), _text(value), compare.EXACT, role,
                      'block_queue_devices[%d] and the role defaults (rq_affinity: Linux block queue documentation)'
                      % index)
    state.calls.append(Call('block_queue', role, dict(
        devices=devices, apply=bool(v.get('block_queue_apply', True)), persist=bool(v.get('block_queue_persist', True)),
        file=v.get('block_queue_rules_file') or None, allow_empty=bool(v.get('block_queue_allow_empty', False)),
        reload=bool(v.get('block_queue_reload', True)), trigger=bool(v.get('block_queue_trigger', False)),
        backup=bool(v.get('block_queue_backup', False)), root=_root_of(v, 'block_queue_root'))))


# ------------------------------------------------------------------ direct_io
def compile_direct_io(state, v, facts):
    role = 'direct_io'
    root = _root_of(v, 'direct_io_root')
    backup = bool(v.get('direct_io_backup', False))
    fstype_options = v.get('direct_io_fstype_options') or {}
    mounted = {}
    for entry in facts.get('mounts') or []:
        mounted[entry.get('mount_point')] = entry.get('fstype')
    mounts, not_applicable, unknown = [], [], []
    for index, mount in enumerate(v.get('direct_io_mounts') or []):
        if not isinstance(mount, dict) or not mount.get('path'):
            raise InputError('direct_io_mounts[%d] must be a dict with a path' % index)
        path = mount['path'].rstrip('/') or '/'
        fstype = mount.get('fstype') or mounted.get(path)
        if fstype is None:
            unknown.append(mount['path'])
            continue
        options = mount['options'] if mount.get('options') is not None else fstype_options.get(fstype, [])
        absent = mount.get('absent') or []
        if not options and not absent:
            not_applicable.append(mount['path'])
            continue
        for option in options:
            state.add('mount', '%s %s' % (mount['path'], option), option, compare.EXACT, role,
                      'direct_io_fstype_options[%s]' % fstype if mount.get('options') is None else 'direct_io_mounts')
        mounts.append({'path': mount['path'], 'present': list(options), 'absent': list(absent)})
    if unknown:
        raise InputError('direct_io_mounts: %s is not mounted, so its file system type is unknown; give it as fstype'
                         % ', '.join(unknown))
    if not_applicable:
        state.messages.extend('%s: no direct I/O mount option for this file system type; nothing changed' % p
                              for p in not_applicable)
    if mounts:
        state.calls.append(Call('mounts', role, dict(mounts=mounts, remount=bool(v.get('direct_io_remount', True)),
                                                     file=v.get('direct_io_fstab') or None, root=root, backup=backup)))
    engine_params = v.get('direct_io_engine_params') or {}
    for index, db in enumerate(v.get('direct_io_databases') or []):
        if not isinstance(db, dict) or db.get('engine') not in ('oracle', 'postgresql', 'mysql'):
            raise InputError('direct_io_databases[%d].engine must be oracle, postgresql or mysql' % index)
        params = dict(engine_params.get(db['engine']) or {})
        params.update(db.get('params') or {})
        params = dict((k, val) for k, val in params.items() if val is not None)
        if not params:
            continue
        where = db.get('path') or db.get('oracle_sid') or 'spfile'
        for name, value in sorted(params.items()):
            state.add('db_parameter', '%s %s %s' % (db['engine'], where, name), _text(value), compare.EXACT, role,
                      'direct_io_engine_params[%s]' % db['engine'])
        kwargs = dict(engine=db['engine'], params=params, backup=backup, root=root)
        for key in ('path', 'oracle_home', 'oracle_sid', 'sid', 'os_user', 'mysql_section', 'read_live'):
            if db.get(key) is not None:
                kwargs[key] = db[key]
        state.calls.append(Call('db_parameter', role, kwargs, label='db_parameter %s %s' % (db['engine'], where)))
        if v.get('direct_io_restart') and db.get('service'):
            state.restart_services.append({'owner': role, 'service': db['service'], 'when': 'db_parameter %s %s'
                                           % (db['engine'], where)})


# ------------------------------------------------------------------ processor_sets
def compile_processor_sets(state, v, facts):
    role = 'processor_sets'
    present = v.get('processor_sets_state', 'present') == 'present'
    cpus = v.get('processor_sets_cpus', '')
    service = v.get('processor_sets_service') or ''
    processes = v.get('processor_sets_processes') or []
    project = v.get('processor_sets_project') or ''
    if present and (_text(cpus) == '' or not (service or processes or project)):
        raise InputError('processor_sets_cpus must name the CPUs (a CPU list or node:N), and at least one of '
                         'processor_sets_service, processor_sets_processes or processor_sets_project what to bind')
    mems = v.get('processor_sets_mems')
    args = {'name': v.get('processor_sets_name', 'db'), 'state': v.get('processor_sets_state', 'present'),
            'cpus': cpus if _text(cpus) else None, 'mems': mems if mems not in (None, '', []) else None,
            'exclusive': bool(v.get('processor_sets_exclusive', False)), 'service': service or None,
            'service_mode': v.get('processor_sets_service_mode', 'auto'),
            'processes': [dict((k, val) for k, val in p.items() if val is not None) for p in processes],
            'project': project or None, 'persist': bool(v.get('processor_sets_persist', True)),
            'root': _root_of(v, 'processor_sets_root'), 'backup': bool(v.get('processor_sets_backup', False))}
    state.add('processor_set', args['name'], _text(cpus), compare.EXACT, role, 'processor_sets_cpus')
    state.calls.append(Call('processor_set', role, args))
    if present and service and v.get('processor_sets_restart_service'):
        state.restart_services.append({'owner': role, 'service': service, 'when': 'processor_set'})
    node = None
    if present and v.get('processor_sets_shared_memory'):
        node = _single_node(mems, cpus)
        if node is None:
            raise InputError('processor_sets_shared_memory puts the huge pages on one node, but the set\'s memory is '
                             'not one node (processor_sets_mems %r, processor_sets_cpus %r): set processor_sets_mems '
                             'to one node' % (mems, cpus))
    return node


def _single_node(mems, cpus):
    if isinstance(mems, int) and not isinstance(mems, bool):
        return mems
    if isinstance(mems, (list, tuple)) and len(mems) == 1 and str(mems[0]).isdigit():
        return int(mems[0])
    if isinstance(mems, str) and mems.strip().isdigit():
        return int(mems)
    text = _text(cpus).strip()
    if mems in (None, '', []) and text.startswith('node:') and text[5:].isdigit():
        return int(text[5:])
    return None


# ------------------------------------------------------------------ the whole host
def default_roles(variables):
    """The roles a host uses when it names none: every role whose required input it has."""
    roles = ['kernel_params']
    if variables.get('shared_memory', {}).get('shared_memory_size') not in (None, ''):
        roles.append('shared_memory')
    if variables.get('block_queue', {}).get('block_queue_devices'):
        roles.append('block_queue')
    direct = variables.get('direct_io', {})
    if direct.get('direct_io_mounts') or direct.get('direct_io_databases'):
        roles.append('direct_io')
    if _text(variables.get('processor_sets', {}).get('processor_sets_cpus', '')):
        roles.append('processor_sets')
    return roles


def compile_state(roles, inputs, facts):
    """The host's desired state for ``roles`` from ``inputs`` ({role: {variable: value}})."""
    unknown = [role for role in roles if role not in ROLES]
    if unknown:
        raise InputError('roles: %s is not one of %s' % (', '.join(unknown), ', '.join(ROLES)))
    state = DesiredState()
    order = [role for role in ROLES if role in roles]
    numa_node = None
    if 'processor_sets' in order:
        numa_node = compile_processor_sets(state, inputs.get('processor_sets', {}), facts)
    for role in order:
        v = inputs.get(role, {})
        if role == 'kernel_params':
            compile_kernel_params(state, v, facts)
        elif role == 'shared_memory':
            state.sizing = compile_shared_memory(state, v, facts, numa_node)
        elif role == 'block_queue':
            compile_block_queue(state, v, facts)
        elif role == 'direct_io':
            compile_direct_io(state, v, facts)
    if numa_node is not None and 'shared_memory' not in order:
        state.sizing = compile_shared_memory(state, inputs.get('shared_memory', {}), facts, numa_node)
    _distribute_sysctl(state)
    return state


def _distribute_sysctl(state):
    """Give each sysctl call the keys its role owns after merging (params and comparisons)."""
    for call in state.calls:
        if call.kind != 'sysctl' or call.kwargs.get('state') == 'absent':
            continue
        owned = [r for r in state.records if r['kind'] == 'sysctl' and r['owner'] == call.owner]
        call.kwargs['params'] = dict((r['key'], r['desired']) for r in owned)
        call.kwargs['comparisons'] = dict((r['key'], r['comparison']) for r in owned)
    state.calls = [c for c in state.calls if c.kind != 'sysctl' or c.kwargs.get('params')]
