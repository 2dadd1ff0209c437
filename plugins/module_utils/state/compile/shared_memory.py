# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the shared_memory role's variables -> kernel_params, hugepages, resource_limits
and sysfs_attr records and calls.

shared_memory_size and the host's facts go through sizing/shm.py shm_settings_from_facts
(the one place that sizes shared memory); its result, named ``shm_settings`` here as
everywhere, becomes the records and calls: the kernel parameters (one kernel_params call), the
huge page pools (``hugepages``, the hugepages module's ``pages``), memlock (limits.d and
LimitMEMLOCK), transparent huge pages (sysfs_attr) and, on SunOS, the project.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import ENGINE_USERS
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.shm import (
    ENGINES, ShmRequest, shm_settings_from_facts)
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.units import SizingError, parse_size
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import (
    Call, flag, group_gid, passwd_entry, root_of, role_var)

ROLE = 'shared_memory'
ENGINE_SIZE = 'engine'   # shared_memory_size: engine - sized from what the database allocates

# Sources of the shared_memory role's rules (the numbers are computed in sizing/shm.py).
ORACLE_SHM = 'Oracle Database Installation Guide for Linux, "Minimum Parameter Settings for Installation"'
ORACLE_HUGEPAGES = 'Oracle Database Installation Guide for Linux, "Configuring HugePages on Linux"'
ORACLE_MEMLOCK = 'Oracle Database Installation Guide for Linux, "Checking Resource Limits" (memlock at least 90% of RAM)'
POSTGRESQL_SHM = 'PostgreSQL documentation, "Managing Kernel Resources"'
MYSQL_LARGE_PAGES = ('MySQL Reference Manual, "Enabling Large Page Support"; MariaDB documentation, '
                     'system variable large_pages')
MYSQL_SHM = ('MySQL Reference Manual, "Enabling Large Page Support" (kernel.shmmax, kernel.shmall); MariaDB '
             'documentation, system variable large_pages')
THP_SOURCE = 'the database vendors\' advice on transparent huge pages (shared_memory_transparent_hugepage)'
SOURCES = {
    'oracle': {'shm': ORACLE_SHM, 'hugepages': ORACLE_HUGEPAGES, 'memlock': ORACLE_MEMLOCK},
    'postgresql': {'shm': POSTGRESQL_SHM, 'hugepages': POSTGRESQL_SHM, 'memlock': POSTGRESQL_SHM},
    'mysql': {'shm': MYSQL_SHM, 'hugepages': MYSQL_LARGE_PAGES, 'memlock': MYSQL_LARGE_PAGES},
}
SYSCTL_HEADER = ('# Managed by dbhost.tuning.shared_memory (sized by sizing/shm.py); local edits to these '
                 'keys are overwritten.')
# Where the shm keys go off Linux (on Linux: shared_memory_sysctl_file).
# SunOS: None, the kernel_params module's default - a file of its own in /etc/system.d where the
# release has that folder, else /etc/system.
SYSCTL_FILES = {'FreeBSD': '/etc/sysctl.conf', 'SunOS': None}


def compile_shared_memory(state, v, facts, numa_node=None):
    """Add the shared_memory role's records and calls to ``state``; returns the shm_settings."""
    system = facts.get('system', 'Linux')
    if system not in ('Linux', 'FreeBSD', 'SunOS'):
        raise InputError('dbhost.tuning.shared_memory supports Linux, FreeBSD and SunOS; this host is %s' % system)
    engine = role_var(v, 'shared_memory_engine')
    if engine not in ENGINES:
        raise InputError('shared_memory_engine: %r is not one of %s' % (engine, ', '.join(ENGINES)))
    shared_memory_size, size_source = _size(v, facts)
    root = root_of(v, 'shared_memory_root')
    use_hugepages = flag(v, 'shared_memory_hugepages')
    user, gid = _account(v, system, engine, root, use_hugepages)
    comparison = _comparison(v, 'shared_memory_comparison')
    keep_higher = flag(v, 'shared_memory_keep_higher')
    if keep_higher and comparison == compare.EXACT:
        # keep_higher (older inventories) never lowers a larger value: that is the minimum rule
        comparison = compare.MINIMUM
    hugepages_comparison = _comparison(v, 'shared_memory_hugepages_comparison')
    if keep_higher and hugepages_comparison == compare.EXACT and use_hugepages and system == 'Linux':
        raise InputError('shared_memory_hugepages_comparison: exact shrinks a larger huge page pool, and '
                         'shared_memory_keep_higher: true asks never to lower what the host has; they contradict '
                         'each other: drop one (minimum keeps a larger pool)')
    if numa_node is None:
        numa_node = role_var(v, 'shared_memory_numa_node')
    try:
        shm_settings = shm_settings_from_facts(facts, ShmRequest(
            engine, shared_memory_size, group_gid=gid,
            hugepage_size=role_var(v, 'shared_memory_hugepage_size') or None,
            hugepages_cap=role_var(v, 'shared_memory_hugepages_cap'),
            hugepages_margin=role_var(v, 'shared_memory_hugepages_margin'),
            use_hugepages=use_hugepages, numa_node=numa_node,
            etc_system=flag(v, 'shared_memory_etc_system'),
            shared_memory_cap=role_var(v, 'shared_memory_cap')))
    except SizingError as exc:
        raise InputError(_as_variables(str(exc)))
    shm_settings['shared_memory_source'] = size_source
    # every record says which size it stands on: the user's, or what the engine allocates
    sources = dict((key, '%s [shared memory: %s]' % (text, size_source)) for key, text in SOURCES[engine].items())
    common = dict(root=root, backup=flag(v, 'shared_memory_backup'),
                  fail_on_shadowed=flag(v, 'shared_memory_fail_on_shadowed'))
    _kernel_params(state, v, system, shm_settings, comparison, sources, common)
    if system == 'Linux':
        _hugepages(state, v, shm_settings, hugepages_comparison, sources, common)
        _memlock(state, v, shm_settings, user, comparison, sources, common)
        _thp(state, v, common)
    elif system == 'SunOS':
        _project(state, v, shm_settings, user, sources, dict(root=root, backup=common['backup'],
                                                             comparison=comparison))
        if engine == 'postgresql' and use_hugepages:
            _postgresql_ism(state, v, dict(root=root, backup=common['backup']))
    return shm_settings


def _size(v, facts):
    """(shared_memory_size, its source): the user's size, or with ``engine`` what the engine allocates
    (state/engine_memory.py, read on the host into facts['engine_memory'] by host_state)."""
    size = v.get('shared_memory_size')
    if size in (None, ''):
        raise InputError('shared_memory_size must be set: the database\'s shared memory (48G, 40%...), or engine '
                         'to size it from what the database on the host allocates')
    if str(size).strip() != ENGINE_SIZE:
        return size, 'user: shared_memory_size %s' % size
    found = facts.get('engine_memory')
    if not found:
        raise InputError('shared_memory_size engine: the database\'s configuration was not read on this host')
    if found.get('error'):
        raise InputError(found['error'])
    if 'pages' in found:
        page = role_var(v, 'shared_memory_hugepage_size') or facts.get('memory', {}).get('hugepage_default_bytes')
        return '%d' % (found['pages'] * (parse_size(page) if page else 2 << 20)), found['source']
    return '%d' % found['bytes'], found['source']


# The sizing's argument names (sizing/shm.py, the shm_settings filter) as the role's variables.
SIZING_NAMES = {'shared_memory': 'shared_memory_size', 'engine': 'shared_memory_engine',
                'hugepage_size': 'shared_memory_hugepage_size', 'hugepages_cap': 'shared_memory_hugepages_cap',
                'hugepages_margin': 'shared_memory_hugepages_margin', 'numa_node': 'shared_memory_numa_node',
                'group_gid': 'shared_memory_group'}


def _as_variables(message):
    """A sizing error worded with the role's variables (shared_memory_size, not the filter's shared_memory)."""
    name, sep, rest = message.partition(': ')
    if sep and name in SIZING_NAMES:
        message = '%s: %s' % (SIZING_NAMES[name], rest)
    for name, variable in SIZING_NAMES.items():
        if name != 'shared_memory':
            message = message.replace('raise %s' % name, 'raise %s' % variable)
    return message


def _account(v, system, engine, root, use_hugepages=True):
    """The database user and the gid for vm.hugetlb_shm_group (None on FreeBSD), refused if unknown.

    A gid of 0 (the user's primary group is root's) is refused unless shared_memory_group
    names that group: vm.hugetlb_shm_group 0 lets no unprivileged user create huge page
    shared memory, so it is taken only when asked for by name.
    """
    user = role_var(v, 'shared_memory_user') or ENGINE_USERS[engine]
    group = role_var(v, 'shared_memory_group') or ''
    gid = None
    if system != 'FreeBSD':
        entry = passwd_entry(root, user)
        if entry is None:
            raise InputError('shared_memory_user %r does not exist on this host; create it first, or set '
                             'shared_memory_user (default for engine %s: %s)' % (user, engine, ENGINE_USERS[engine]))
        gid = entry[1]
        if group and system == 'Linux':
            gid = group_gid(root, group)
            if gid is None:
                raise InputError('shared_memory_group %r does not exist on this host' % (group,))
        elif gid == 0 and system == 'Linux' and use_hugepages:
            raise InputError('shared_memory_user %r has gid 0 (root\'s group) as its primary group: '
                             'vm.hugetlb_shm_group 0 lets no database user create huge page shared memory. '
                             'Set shared_memory_group to the database\'s group (or to the gid 0 group by '
                             'name, to ask for it)' % (user,))
    return user, gid


def _comparison(v, name):
    comparison = role_var(v, name)
    if comparison not in (compare.MINIMUM, compare.EXACT):
        raise InputError('%s: %r is not one of minimum, exact' % (name, comparison))
    return comparison


def _kernel_params(state, v, system, shm_settings, comparison, sources, common):
    """shm_settings' kernel_params: one kernel_params record each, and the role's kernel_params call (sysctl.d,
    sysctl.conf, /etc/system)."""
    params = shm_settings['kernel_params']
    for key in sorted(params):
        exact = key in ('vm.hugetlb_shm_group', 'kern.ipc.shm_use_phys') or system == 'SunOS'
        state.add('kernel_params', key, str(params[key]), compare.EXACT if exact else comparison, ROLE,
                  '%s: %s' % (sources['shm'], shm_settings['explain'].get(key, '')))
    if system == 'Linux':
        sysctl_file = role_var(v, 'shared_memory_sysctl_file')
        if not sysctl_file:
            raise InputError('shared_memory_sysctl_file: empty; name the sysctl.d file for the kernel.shm* keys')
    else:
        sysctl_file = SYSCTL_FILES[system]
    if params:
        state.calls.append(Call('kernel_params', ROLE, dict(
            file=sysctl_file, root=common['root'], backup=common['backup'], mode=compare.EXACT,
            fail_on_shadowed=common['fail_on_shadowed'], header=SYSCTL_HEADER)))


def _hugepages(state, v, shm_settings, hugepages_comparison, sources, common):
    """shm_settings' hugepages (the pools): one record per pool and one hugepages call (Linux)."""
    hugepages = shm_settings['hugepages']
    for pool in hugepages:
        system_wide = pool.get('node') is None
        key = 'vm.nr_hugepages' if system_wide else 'hugepages node%s %s' % (pool['node'], pool['size'])
        state.add('hugepages', key, pool['count'], hugepages_comparison, ROLE,
                  '%s: %s' % (sources['hugepages'], shm_settings['explain'].get('vm.nr_hugepages', '')),
                  namespace='kernel_params:vm.nr_hugepages' if system_wide else None)
    if hugepages:
        state.calls.append(Call('hugepages', ROLE, dict(
            pages=[dict(pool) for pool in hugepages], on_short=role_var(v, 'shared_memory_hugepages_on_short'),
            root=common['root'], backup=common['backup'], comparison=hugepages_comparison,
            fail_on_shadowed=common['fail_on_shadowed'])))


def _memlock(state, v, shm_settings, user, comparison, sources, common):
    """memlock_kb (limits.d, soft and hard) and limit_memlock (the service's LimitMEMLOCK): one resource_limits call."""
    if shm_settings['memlock_kb'] is None:
        return
    memlock_kb = str(shm_settings['memlock_kb'])
    limit_memlock = shm_settings['limit_memlock']
    for side in ('soft', 'hard'):
        state.add('resource_limits', '%s %s memlock' % (user, side), memlock_kb, comparison, ROLE,
                  '%s: %s' % (sources['memlock'], shm_settings['explain'].get('memlock', '')))
    kwargs = dict(limits=[{'domain': user, 'type': side, 'item': 'memlock', 'value': memlock_kb}
                          for side in ('soft', 'hard')],
                  limits_file=role_var(v, 'shared_memory_limits_file') or None, comparison=comparison, **common)
    service = role_var(v, 'shared_memory_service') or ''
    if service:
        kwargs.update(service=service, service_limits={'LimitMEMLOCK': limit_memlock})
        state.add('resource_limits', '%s LimitMEMLOCK' % service, limit_memlock, comparison, ROLE, sources['memlock'])
        if flag(v, 'shared_memory_service_restart'):
            state.restart_services.append({'owner': ROLE, 'service': service, 'when': 'resource_limits'})
    state.calls.append(Call('resource_limits', ROLE, kwargs))


def _thp(state, v, common):
    """Transparent huge pages (enabled, defrag): sysfs_attr records and one sysfs_attr call with its tmpfiles.d file."""
    attributes = {}
    for name, var in (('kernel/mm/transparent_hugepage/enabled', 'shared_memory_transparent_hugepage'),
                      ('kernel/mm/transparent_hugepage/defrag', 'shared_memory_transparent_hugepage_defrag')):
        wanted = role_var(v, var)
        if wanted:
            attributes[name] = wanted
            state.add('sysfs_attr', name, wanted, compare.EXACT, ROLE, THP_SOURCE)
    if attributes:
        state.calls.append(Call('sysfs_attr', ROLE, dict(
            attributes=attributes, apply=flag(v, 'shared_memory_transparent_hugepage_apply'),
            tmpfiles_file=role_var(v, 'shared_memory_tmpfiles_file') or None, **common)))


def _postgresql_ism(state, v, common):
    """SunOS, PostgreSQL with large pages wanted: shared_memory_type = sysv, so that the buffers are
    ISM (PostgreSQL attaches System V memory with SHM_SHARE_MMU; since 9.3 the buffers are an
    anonymous mmap otherwise, src/backend/port/sysv_shmem.c).  db_parameter then reads ISM from
    pmap -xs of the postmaster."""
    conf = role_var(v, 'shared_memory_postgresql_conf')
    if not conf:
        state.messages.append('shared_memory: PostgreSQL on SunOS gets ISM for its buffers only with '
                              'shared_memory_type = sysv; set shared_memory_postgresql_conf to have it set and '
                              'checked')
        return
    source = ('seed 001 (ISM for PostgreSQL on Solaris): shared_memory_type = sysv; PostgreSQL attaches System V '
              'shared memory with SHM_SHARE_MMU (src/include/portability/mem.h)')
    state.add('db_parameter', 'postgresql %s shared_memory_type' % conf, 'sysv', compare.EXACT, ROLE, source)
    state.calls.append(Call('db_parameter', ROLE, dict(engine='postgresql', path=conf,
                                                       params={'shared_memory_type': 'sysv'}, **common),
                            label='db_parameter postgresql %s' % conf))


def _project(state, v, shm_settings, user, sources, common):
    """SunOS: shm_settings' project_attributes, one record each, in one project (a resource_limits call)."""
    project = role_var(v, 'shared_memory_project') or 'user.%s' % user
    attributes = shm_settings['project_attributes']
    for name, value in sorted(attributes.items()):
        state.add('resource_limits', '%s %s' % (project, name), value, compare.EXACT, ROLE, sources['shm'])
    state.calls.append(Call('resource_limits', ROLE, dict(projects=[{
        'name': project, 'id': int(role_var(v, 'shared_memory_project_id')), 'comment': 'dbhost.tuning shared memory',
        'users': [user], 'attributes': attributes}], **common)))
