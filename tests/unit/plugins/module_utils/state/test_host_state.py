# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_state on fake hosts: the whole desired state in one call, minimums never lowered."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import ULONG, digest, generous_oracle_host, put
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

GIB = 1024 ** 3
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': 2097152},
         'hugepages': {2097152: {}}, 'mounts': []}


pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def generous_host(tmp_path):
    """A host whose limits are all above what Oracle asks for a 40 % SGA on 64 GB."""
    return generous_oracle_host(str(tmp_path))


def shared_memory_inputs(root, **extra):
    values = {'shared_memory_engine': 'oracle', 'shared_memory_size': '40%', 'shared_memory_root': root,
              'shared_memory_group': 'dba', 'shared_memory_transparent_hugepage': ''}
    values.update(extra)
    return {'shared_memory': values}


def run(root, roles, inputs, check_mode=False, details=None):
    host = HostState(roles, with_defaults(inputs), registry.Context(check_mode=check_mode),
                     facts_reader=lambda r, subsets: dict(FACTS), details=details)
    result = host.run()
    return host, result, host.output(result)


def test_nothing_is_lowered_and_every_record_is_ok(generous_host):
    before = digest(generous_host)
    host, result, output = run(generous_host, ['shared_memory'], shared_memory_inputs(generous_host))
    statuses = dict((s['name'], (s['status'], s['comparison'])) for s in output['settings'])
    assert statuses == {
        'kernel.shmall': ('ok', 'minimum'), 'kernel.shmmax': ('ok', 'minimum'), 'kernel.shmmni': ('ok', 'minimum'),
        'vm.hugetlb_shm_group': ('ok', 'exact'), 'hugepages-2048kB': ('ok', 'minimum'),
        'oracle soft memlock': ('ok', 'minimum'), 'oracle hard memlock': ('ok', 'minimum')}
    assert output['changed'] is False and host.failure_message(result) is None
    assert digest(generous_host) == before   # not one byte written: no file lowers anything
    live = dict((s['name'], s['live']) for s in output['settings'])
    assert live['kernel.shmmax'] == ULONG and live['hugepages-2048kB'] == 30000
    assert set(s['owner'] for s in output['settings']) == {'shared_memory'}
    # one role: its own extras are where the role's module used to put them, at the top too, with
    # each plan's records in full (in roles, their indexes in settings)
    ours = output['roles']['shared_memory']
    assert (output['sizing'], output['compacted']) == (ours['sizing'], ours['compacted'])
    assert output['hugepages']['settings'] == [_plan_record(output['settings'][index])
                                               for index in ours['hugepages']['settings']]
    assert dict(output['hugepages'], settings=None) == dict(ours['hugepages'], settings=None)


def test_exact_is_there_for_those_who_want_the_pool_shrunk(generous_host):
    inputs = shared_memory_inputs(generous_host, shared_memory_hugepages_comparison='exact')
    host, result, output = run(generous_host, ['shared_memory'], inputs, check_mode=True)
    pool = [s for s in output['settings'] if s['name'] == 'hugepages-2048kB'][0]
    assert pool['status'] == 'drift' and pool['comparison'] == 'exact' and pool['desired'] == 13240


def test_bad_input_in_a_later_plan_touches_nothing(generous_host):
    put(generous_host, '/proc/sys/fs/aio-max-nr', '65536\n')
    before = digest(generous_host)
    inputs = shared_memory_inputs(generous_host)
    inputs['kernel_params'] = {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}
    inputs['block_queue'] = {'block_queue_devices': [{'name': 'sd*'}], 'block_queue_root': generous_host,
                             'block_queue_workload': 'batch'}
    with pytest.raises(Exception) as error:
        run(generous_host, ['kernel_params', 'shared_memory', 'block_queue'], inputs)
    assert 'block_queue_workload' in str(error.value)
    assert digest(generous_host) == before


@pytest.mark.parametrize('role, variables', [
    ('shared_memory', None),
    ('kernel_params', {'kernel_params_profile': 'mysql'}),
    ('block_queue', {'block_queue_devices': [{'name': 'sd*'}]}),
])
def test_an_empty_role_root_is_refused_not_taken_for_slash(generous_host, role, variables):
    before = digest(generous_host)
    if variables is None:
        inputs = shared_memory_inputs('')
    else:
        inputs = {role: dict(variables, **{'%s_root' % role: ''})}
    with pytest.raises(Exception) as error:
        run(generous_host, [role], inputs)
    assert '%s_root' % role in str(error.value)
    assert digest(generous_host) == before


def test_one_call_checks_two_roles_and_reports_each(generous_host):
    put(generous_host, '/proc/sys/fs/aio-max-nr', '65536\n')
    inputs = shared_memory_inputs(generous_host)
    inputs['kernel_params'] = {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}
    before = digest(generous_host)
    host, result, output = run(generous_host, ['kernel_params', 'shared_memory'], inputs, check_mode=True,
                               details=['desired_state'])
    assert digest(generous_host) == before
    aio = [s for s in output['settings'] if s['name'] == 'fs.aio-max-nr'][0]
    assert aio['status'] == 'drift' and aio['owner'] == 'kernel_params' and aio['comparison'] == 'minimum'
    assert output['roles']['kernel_params']['changed'] is True
    assert output['roles']['shared_memory']['changed'] is False
    assert [p['kind'] for p in output['plans']] == ['kernel_params', 'kernel_params', 'hugepages', 'resource_limits']
    assert len(output['desired_state']) == len(output['settings'])
    # two roles: each role's extras only under its name, none taken for the whole call's
    assert not set(['sizing', 'hugepages', 'compacted', 'kernel_params', 'resource_limits']) & set(output)


@pytest.mark.parametrize('path, text', [
    ('/etc/security/limits.d/50-dba.conf', '@dba - memlock unlimited\n'),
    ('/etc/security/limits.conf', '* - memlock unlimited\n'),
    ('/etc/security/limits.d/20-site.conf', '@dba soft memlock 70000000\n* hard memlock infinity\n'),
])
def test_memlock_a_group_or_wildcard_grants_is_never_lowered(generous_host, path, text):
    """Issue 19 item 1: a user line would win over @dba or * and lower unlimited to the sizing."""
    put(generous_host, '/etc/security/limits.conf', '# no user line\n')
    put(generous_host, path, text)
    put(generous_host, '/etc/systemd/system/oracle.service', '[Service]\nExecStart=/bin/true\n')
    put(generous_host, '/etc/systemd/system.conf.d/50-db.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n')
    before = digest(generous_host)
    host, result, output = run(generous_host, ['shared_memory'],
                               shared_memory_inputs(generous_host, shared_memory_service='oracle'))
    records = dict((s['name'], s) for s in output['settings'])
    for name in ('oracle soft memlock', 'oracle hard memlock', 'oracle.service LimitMEMLOCK'):
        assert records[name]['status'] == 'ok' and 'met by' in records[name]['detail'], records[name]
    assert 'DefaultLimitMEMLOCK=infinity in /etc/systemd/system.conf.d/50-db.conf' in \
        records['oracle.service LimitMEMLOCK']['detail']
    assert output['changed'] is False and digest(generous_host) == before


def _plan_record(record):
    """A record as its plan returns it: without the owner and kind the whole result adds."""
    return dict((key, value) for key, value in record.items() if key not in ('owner', 'kind'))


def _settings_lists(part, path=()):
    """(path, list) of every settings list under a role's part of roles."""
    found = []
    for key, value in part.items():
        if key == 'settings':
            found.append((path, value))
        elif isinstance(value, dict):
            found.extend(_settings_lists(value, path + (key,)))
        elif key == 'databases':
            for index, database in enumerate(value):
                found.extend(_settings_lists(database, path + (key, index)))
    return found


def test_roles_name_each_record_by_its_index_and_repeat_none(generous_host):
    put(generous_host, '/proc/sys/fs/aio-max-nr', '65536\n')
    inputs = shared_memory_inputs(generous_host)
    inputs['kernel_params'] = {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}
    host, result, output = run(generous_host, ['kernel_params', 'shared_memory'], inputs, check_mode=True)
    records = output['settings']
    roles = output['roles']
    # a role's settings: the indexes of its own records, in order; together every record exactly once
    for name, part in roles.items():
        assert [records[index] for index in part['settings']] == [r for r in records if r['owner'] == name]
    assert sorted(sum((part['settings'] for part in roles.values()), [])) == list(range(len(records)))
    # a plan's part: the indexes of that plan's records, no record and no diff repeated
    assert [records[i]['kind'] for i in roles['shared_memory']['hugepages']['settings']] == ['hugepages']
    assert [records[i]['name'] for i in roles['kernel_params']['kernel_params']['settings']] == \
        [r['name'] for r in records if r['owner'] == 'kernel_params']
    for name, part in roles.items():
        for path, values in _settings_lists(part):
            assert all(isinstance(value, int) for value in values), (name, path, values)
        assert not any('diff' in value for value in part.values() if isinstance(value, dict)), name
    # the diff of the drifted kernel parameter is the result's, once
    assert output['diff'] and len(output['diff']) == len(set(d['after_header'] for d in output['diff']))
    assert 'diff' not in roles['kernel_params']['kernel_params']


def test_a_call_of_one_role_keeps_its_plans_records_and_diff_at_the_top(generous_host):
    put(generous_host, '/proc/sys/fs/aio-max-nr', '65536\n')
    inputs = {'kernel_params': {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}}
    host, result, output = run(generous_host, ['kernel_params'], inputs, check_mode=True)
    slim = output['roles']['kernel_params']['kernel_params']
    full = output['kernel_params']
    assert full['settings'] == [_plan_record(output['settings'][index]) for index in slim['settings']]
    assert [record['name'] for record in full['settings'] if record['status'] == 'drift'] == ['fs.aio-max-nr']
    assert full['diff'] == output['diff'] and full['changed'] is True
    assert dict(full, settings=None, diff=None) == dict(slim, settings=None, diff=None)


def test_only_a_listed_role_that_asks_for_nothing_is_said_to_check_nothing(generous_host):
    inputs = shared_memory_inputs(generous_host)
    inputs['kernel_params'] = {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}
    inputs['block_queue'] = {'block_queue_root': generous_host}
    dummy, result, output = run(generous_host, ['kernel_params', 'shared_memory', 'block_queue'], inputs,
                                check_mode=True)
    said = [w for w in output['warnings'] if 'ask for nothing' in w]
    assert said == ['block_queue: listed in the roles, but its variables ask for nothing (block_queue_devices is '
                    'empty), so it checked nothing']


def test_desired_state_and_facts_only_when_the_details_name_them(generous_host):
    put(generous_host, '/proc/sys/fs/aio-max-nr', '65536\n')
    inputs = shared_memory_inputs(generous_host)
    inputs['kernel_params'] = {'kernel_params_profile': 'mysql', 'kernel_params_root': generous_host}
    roles = ['kernel_params', 'shared_memory']
    dummy, dummy, plain = run(generous_host, roles, inputs, check_mode=True)
    assert 'desired_state' not in plain and 'facts' not in plain
    dummy, dummy, full = run(generous_host, roles, inputs, check_mode=True, details=['desired_state', 'facts'])
    assert full['facts'] == FACTS
    # every record of settings carries what its desired-state entry says: the details only repeat it
    entries = dict(((d['owner'], d['key']), d) for d in full['desired_state'])
    aio = entries[('kernel_params', 'fs.aio-max-nr')]
    record = [s for s in full['settings'] if s['name'] == 'fs.aio-max-nr'][0]
    assert (record['desired'], record['comparison'], record['source']) == \
        (aio['desired'], aio['comparison'], aio['source'])
    # the rest of the result is the same with or without them
    assert dict(full, desired_state=None, facts=None) == dict(plain, desired_state=None, facts=None)
    dummy, dummy, one = run(generous_host, roles, inputs, check_mode=True, details=['facts'])
    assert 'desired_state' not in one and one['facts'] == FACTS


def test_an_unknown_detail_is_refused_naming_it(generous_host):
    before = digest(generous_host)
    with pytest.raises(Exception) as error:
        run(generous_host, ['shared_memory'], shared_memory_inputs(generous_host), details=['desired', 'facts'])
    assert 'details: desired is not one of desired_state, facts' in str(error.value)
    assert digest(generous_host) == before
