# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One desired state per host: compiled profiles, one owner per key, the merge rule and refusal."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile import block_queue
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError
from ansible_collections.dbhost.tuning.tests.unit.helpers import role_defaults, with_defaults

GIB = 1024 ** 3
HUGE_2M = 2 * 1024 * 1024


def facts(ram):
    return {'system': 'Linux', 'memory': {'total_bytes': ram, 'page_size': 4096, 'hugepage_default_bytes': HUGE_2M},
            'hugepages': {HUGE_2M: {'total': 0}}, 'mounts': []}


@pytest.fixture
def root(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'passwd').write_text(u'oracle:x:54321:54322::/home/oracle:/bin/sh\n'
                                             u'postgres:x:110:118::/var/lib/postgresql:/bin/sh\n'
                                             u'mysql:x:111:119::/var/lib/mysql:/bin/false\n')
    (tmp_path / 'etc' / 'group').write_text(u'dba:x:54322:\n')
    return str(tmp_path)


def inputs(root, engine, size='40%', **extra):
    shm = {'shared_memory_engine': engine, 'shared_memory_size': size, 'shared_memory_root': root,
           'shared_memory_user': ''}
    shm.update(extra.pop('shared_memory', {}))
    kernel = {'kernel_params_profile': engine, 'kernel_params_mode': 'minimum', 'kernel_params_root': root}
    kernel.update(extra.pop('kernel_params', {}))
    return {'kernel_params': kernel, 'shared_memory': shm}


def by_key(state):
    return dict(((r['kind'], r['key']), r) for r in state.records)


# Worked by hand from the vendors' rules (see _sizing.py): 40 % of RAM as shared memory, 2M huge pages,
# a 1 % margin rounded up; shmmax = max(RAM/2, segment); shmall = ceil(max(shmmax, pool) / 4096);
# Oracle memlock = max(90 % of RAM in KB, pool in KB).
@pytest.mark.parametrize('engine, ram, pages, shmmax, memlock, user', [
    ('oracle', 64 * GIB, 13240, 32 * GIB, 60397977, 'oracle'),
    ('oracle', 1024 * GIB, 211814, 512 * GIB, 966367641, 'oracle'),
    ('postgresql', 64 * GIB, 13240, 32 * GIB, 13240 * 2048, 'postgres'),
    ('postgresql', 1024 * GIB, 211814, 512 * GIB, 211814 * 2048, 'postgres'),
    ('mysql', 64 * GIB, 13240, 32 * GIB, 'unlimited', 'mysql'),
    ('mysql', 1024 * GIB, 211814, 512 * GIB, 'unlimited', 'mysql'),
])
def test_compiled_state_per_engine(root, engine, ram, pages, shmmax, memlock, user):
    state = desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(root, engine)), facts(ram))
    records = by_key(state)
    assert records[('hugepages', 'vm.nr_hugepages')]['desired'] == pages
    assert records[('hugepages', 'vm.nr_hugepages')]['comparison'] == 'minimum'
    assert records[('kernel_params', 'kernel.shmmax')] == dict(records[('kernel_params', 'kernel.shmmax')],
                                                               desired=str(shmmax), comparison='minimum',
                                                               owner='shared_memory')
    assert records[('kernel_params', 'kernel.shmmni')]['owner'] == 'shared_memory'
    assert records[('kernel_params', 'vm.hugetlb_shm_group')]['comparison'] == 'exact'
    assert records[('resource_limits', '%s soft memlock' % user)]['desired'] == str(memlock)
    assert records[('resource_limits', '%s hard memlock' % user)]['comparison'] == 'minimum'
    # every record names its source
    assert all(r['source'] for r in state.records)
    # one owner per key
    keys = [(r['kind'], r['key']) for r in state.records]
    assert len(keys) == len(set(keys))
    profile = [r for r in state.records if r['owner'] == 'kernel_params']
    if engine == 'oracle':
        assert records[('kernel_params', 'kernel.sem')]['comparison'] == 'minimum'
        assert records[('kernel_params', 'net.ipv4.ip_local_port_range')]['comparison'] == 'exact'
    elif engine == 'postgresql':
        assert [r['key'] for r in profile] == ['vm.overcommit_memory']
    else:
        assert [r['key'] for r in profile] == ['fs.aio-max-nr']
    # the sysctl calls carry exactly the keys their role owns
    calls = dict((c.owner, c.kwargs) for c in state.calls if c.kind == 'kernel_params')
    assert set(calls['shared_memory']['params']) == {'kernel.shmmax', 'kernel.shmall', 'kernel.shmmni',
                                                     'vm.hugetlb_shm_group'}
    assert not set(calls['shared_memory']['params']) & set(calls['kernel_params']['params'])


def test_two_minimums_merge_to_the_stricter_in_its_owners_file(root):
    state = desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
        root, 'oracle', kernel_params={'kernel_params_settings': {'kernel.shmmni': '>=32768'}})), facts(64 * GIB))
    record = by_key(state)[('kernel_params', 'kernel.shmmni')]
    assert record['desired'] == '32768' and record['owner'] == 'kernel_params'
    assert 'stricter minimum wins' in record['source']
    calls = dict((c.owner, c.kwargs) for c in state.calls if c.kind == 'kernel_params')
    assert calls['kernel_params']['params']['kernel.shmmni'] == '32768'
    assert 'kernel.shmmni' not in calls['shared_memory']['params']


def test_the_weaker_minimum_stays_with_the_first_owner(root):
    state = desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
        root, 'oracle', kernel_params={'kernel_params_settings': {'kernel.shmmni': '>= 100'}})), facts(64 * GIB))
    record = by_key(state)[('kernel_params', 'kernel.shmmni')]
    assert record['desired'] == '4096' and record['owner'] == 'shared_memory'
    calls = dict((c.owner, c.kwargs) for c in state.calls if c.kind == 'kernel_params')
    assert 'kernel.shmmni' not in calls['kernel_params']['params']


def test_a_users_exact_value_that_meets_the_other_roles_minimum_wins(root):
    state = desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
        root, 'oracle', kernel_params={'kernel_params_settings': {'kernel.shmmni': 32768}})), facts(64 * GIB))
    record = by_key(state)[('kernel_params', 'kernel.shmmni')]
    assert (record['desired'], record['comparison'], record['owner']) == ('32768', 'exact', 'kernel_params')
    assert 'the exact value meets the bound and wins' in record['source']
    calls = dict((c.owner, c.kwargs) for c in state.calls if c.kind == 'kernel_params')
    assert calls['kernel_params']['comparisons']['kernel.shmmni'] == 'exact'
    assert 'kernel.shmmni' not in calls['shared_memory']['params']


def test_a_users_exact_value_below_the_other_roles_minimum_is_refused(root):
    with pytest.raises(InputError) as error:
        desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
            root, 'oracle', kernel_params={'kernel_params_settings': {'kernel.shmmni': 100}})), facts(64 * GIB))
    assert 'kernel_params wants 100 and shared_memory wants >= 4096' in str(error.value)


@pytest.mark.parametrize('comparison, keep_higher, expected', [
    ('exact', False, 'exact'),
    ('exact', True, 'minimum'),
    ('minimum', False, 'minimum'),
    ('minimum', True, 'minimum'),
])
def test_keep_higher_turns_exact_limits_into_minimums(root, comparison, keep_higher, expected):
    state = desired.compile_state(['shared_memory'], with_defaults(inputs(root, 'oracle', shared_memory={
        'shared_memory_comparison': comparison, 'shared_memory_keep_higher': keep_higher})), facts(64 * GIB))
    records = by_key(state)
    assert records[('kernel_params', 'kernel.shmmax')]['comparison'] == expected
    assert records[('resource_limits', 'oracle hard memlock')]['comparison'] == expected
    # the group is an identity, never a minimum; the pool has its own comparison
    assert records[('kernel_params', 'vm.hugetlb_shm_group')]['comparison'] == 'exact'
    assert records[('hugepages', 'vm.nr_hugepages')]['comparison'] == 'minimum'


def test_two_different_exact_values_are_refused_naming_both_roles(root):
    with pytest.raises(InputError) as error:
        desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
            root, 'oracle', kernel_params={'kernel_params_settings': {'vm.hugetlb_shm_group': 1000}})), facts(64 * GIB))
    message = str(error.value)
    assert 'vm.hugetlb_shm_group' in message and 'kernel_params' in message and 'shared_memory' in message


def test_a_pool_planned_as_a_sysctl_by_another_role_is_refused(root):
    with pytest.raises(InputError) as error:
        desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(
            root, 'oracle', kernel_params={'kernel_params_settings': {'vm.nr_hugepages': 10}})), facts(64 * GIB))
    assert 'two kinds' in str(error.value) and 'vm.nr_hugepages' in str(error.value)


def test_memlock_user_follows_the_engine_and_must_exist(root):
    with pytest.raises(InputError) as error:
        desired.compile_state(['shared_memory'], with_defaults(inputs(root, 'oracle', shared_memory={'shared_memory_user': 'nobody'})),
                              facts(64 * GIB))
    assert 'shared_memory_user' in str(error.value) and 'nobody' in str(error.value)


@pytest.mark.parametrize('bad, name', [
    ({'shared_memory': {'shared_memory_size': None}}, 'shared_memory_size'),
    ({'shared_memory': {'shared_memory_engine': 'db2'}}, 'shared_memory_engine'),
    ({'shared_memory': {'shared_memory_comparison': 'most'}}, 'shared_memory_comparison'),
    ({'kernel_params': {'kernel_params_profile': 'sybase'}}, 'kernel_params_profile'),
    ({'kernel_params': {'kernel_params_mode': 'loose'}}, 'kernel_params_mode'),
])
def test_bad_role_variables_are_named(root, bad, name):
    with pytest.raises(InputError) as error:
        desired.compile_state(['kernel_params', 'shared_memory'], with_defaults(inputs(root, 'oracle', **bad)), facts(64 * GIB))
    assert name in str(error.value)


def test_block_queue_devices_split_by_kind():
    entries = [{'name': ['sd*']}, {'name': 'nvme0n1', 'rotational': False},
               {'name': 'vdb', 'defaults': False, 'attributes': {'nr_requests': 64}}]
    devices = block_queue.block_queue_devices(dict(role_defaults('block_queue'), block_queue_devices=entries))
    assert devices == [
        {'name': ['sd*'], 'rotational': False, 'attributes': {'rq_affinity': 1, 'read_ahead_kb': 128, 'scheduler': 'none'}},
        {'name': ['sd*'], 'rotational': True,
         'attributes': {'rq_affinity': 1, 'read_ahead_kb': 128, 'scheduler': 'mq-deadline'}},
        {'name': 'nvme0n1', 'rotational': False, 'attributes': {'rq_affinity': 1, 'read_ahead_kb': 128, 'scheduler': 'none'}},
        {'name': 'vdb', 'attributes': {'nr_requests': 64}},
    ]


def test_default_roles_follow_the_inputs():
    assert desired.default_roles({}) == ['kernel_params']
    assert desired.default_roles({'shared_memory': {'shared_memory_size': '40%'},
                                  'block_queue': {'block_queue_devices': [{'name': 'sd*'}]},
                                  'processor_sets': {'processor_sets_cpus': '0-3'}}) == [
        'kernel_params', 'shared_memory', 'block_queue', 'processor_sets']


def test_accounts_are_read_from_the_roots_passwd_and_group(root):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import group_gid, passwd_entry
    assert passwd_entry(root, 'postgres') == (110, 118)
    assert group_gid(root, 'dba') == 54322
    assert passwd_entry(root, 'nobody') is None and group_gid(root, 'wheel') is None
    with open(os.path.join(root, 'etc', 'passwd'), 'a') as handle:
        handle.write(u'broken:x:notanumber:1::/:/bin/sh\n')
    assert passwd_entry(root, 'broken') is None
    os.remove(os.path.join(root, 'etc', 'group'))
    assert group_gid(root, 'dba') is None


def test_default_roles_need_a_value_for_each_role():
    assert desired.default_roles({'shared_memory': {'shared_memory_size': ''}}) == ['kernel_params']
    assert desired.default_roles({'direct_io': {'direct_io_mounts': [{'path': '/u02'}]}}) == [
        'kernel_params', 'direct_io']
    assert desired.default_roles({'direct_io': {'direct_io_databases': [{'engine': 'postgresql'}]}}) == [
        'kernel_params', 'direct_io']


def test_two_minimums_that_cannot_be_compared_are_refused_naming_both_roles():
    state = desired.DesiredState()
    state.add('kernel_params', 'kernel.sem', '250 32000 100 128', 'minimum', 'shared_memory', 'the engine')
    with pytest.raises(InputError) as error:
        state.add('kernel_params', 'kernel.sem', '250 32000 100', 'minimum', 'kernel_params', 'kernel_params_settings')
    assert str(error.value) == ("kernel.sem is planned by shared_memory and kernel_params: '250 32000 100 128' and "
                                "'250 32000 100' do not have the same number of fields")
    assert [r['desired'] for r in state.records] == ['250 32000 100 128']


def test_one_role_planning_a_key_twice_is_refused():
    # A compile step that plans one key twice is a mistake in the collection, not a merge.
    state = desired.DesiredState()
    state.add('kernel_params', 'vm.swappiness', '10', 'exact', 'kernel_params', 'kernel_params_params')
    with pytest.raises(InputError) as error:
        state.add('kernel_params', 'vm.swappiness', '1', 'exact', 'kernel_params', 'kernel_params_params')
    assert str(error.value) == 'kernel_params plans vm.swappiness twice'
    assert [(r['key'], r['desired']) for r in state.records] == [('vm.swappiness', '10')]


def _numa_inputs(root, share):
    """processor_sets binding postgresql to node 1 (its CPUs 2-3), with or without its huge pages there."""
    return with_defaults({
        'processor_sets': {'processor_sets_cpus': 'node:1', 'processor_sets_service': 'postgresql',
                           'processor_sets_shared_memory': share, 'processor_sets_root': root},
        'shared_memory': {'shared_memory_engine': 'postgresql', 'shared_memory_size': '40%',
                          'shared_memory_root': root, 'shared_memory_user': ''}})


def _numa_facts():
    return dict(facts(64 * GIB), numa={'nodes': {'0': {'cpus': '0-1'}, '1': {'cpus': '2-3'}}})


def _compiled(state):
    return ([(call.kind, call.owner, call.label, call.kwargs) for call in state.calls], state.as_list(),
            state.sizing)


@pytest.mark.parametrize('roles', [['processor_sets'], ['shared_memory', 'processor_sets'],
                                   ['processor_sets', 'shared_memory']])
def test_the_processor_set_node_sizes_shared_memory_listed_or_not(root, roles):
    """processor_sets_shared_memory: the set's one NUMA node is the huge page pools' node, and shared_memory
    is compiled for it even when not listed; the same desired state whichever way the roles are listed."""
    state = desired.compile_state(roles, _numa_inputs(root, True), _numa_facts())
    pages = [call.kwargs['pages'] for call in state.calls if call.kind == 'hugepages']
    assert pages == [[{'size': HUGE_2M, 'count': 13240, 'node': 1}]]
    assert state.sizing['hugepages'] == [{'size': HUGE_2M, 'count': 13240, 'node': 1}]
    assert [call.kind for call in state.calls] == ['processor_set', 'kernel_params', 'hugepages', 'resource_limits',
                                                   'sysfs_attr']
    assert _compiled(state) == _compiled(desired.compile_state(['processor_sets'], _numa_inputs(root, True),
                                                               _numa_facts()))


def test_without_processor_sets_shared_memory_shared_memory_is_not_compiled_unless_listed(root):
    state = desired.compile_state(['processor_sets'], _numa_inputs(root, False), _numa_facts())
    assert [call.kind for call in state.calls] == ['processor_set'] and state.sizing is None
    listed = desired.compile_state(['shared_memory', 'processor_sets'], _numa_inputs(root, False), _numa_facts())
    assert [call.kwargs['pages'] for call in listed.calls if call.kind == 'hugepages'] == [
        [{'size': HUGE_2M, 'count': 13240}]]


def test_compile_state_names_no_role():
    """Which role feeds which is the registry's (Role.gives), not a branch of compile_state."""
    import ast
    with open(desired.__file__.replace('.pyc', '.py')) as handle:
        tree = ast.parse(handle.read())
    body = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == 'compile_state')
    strings = [node.value for node in ast.walk(body) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert not set(strings) & set(desired.ROLES)
    assert not hasattr(desired.DesiredState(), 'numa_node')
