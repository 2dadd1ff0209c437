# -*- coding: utf-8 -*-
"""Every record says on whose word its desired value stands (``source``) and, when it is not
``ok``, why (``reason``): through host_state for every role, and through each module called
directly with explicit values (the task option that gave them)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import per_kind, put, with_defaults
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

HUGE_2M = 2 * 1024 * 1024
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 16000 * 1024 * 1024, 'page_size': 4096,
                                       'hugepage_default_bytes': HUGE_2M},
         'hugepages': {HUGE_2M: {'total': 0}}, 'mounts': [],
         'numa': {'nodes': {'0': {'cpus': '0-1'}, '1': {'cpus': '2-3'}}}}

# The option of each module that gives the desired values of its BASELINE call (fake_host.py).
OPTIONS = {'kernel_params': 'params', 'hugepages': 'pages', 'sysfs_attr': 'attributes', 'resource_limits': 'limits',
           'block_queue': 'devices[0]', 'mount_options': 'present and absent', 'db_parameter': 'params',
           'processor_set': 'cpus', 'kernel_cmdline': 'params', 'db_effect': 'checks'}


@pytest.fixture(autouse=True)
def linux(monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)


@pytest.fixture
def host(tmp_path):
    root = fake_host.build(str(tmp_path))
    put(root, '/etc/passwd', 'oracle:x:54321:54322::/home/oracle:/bin/sh\n')
    put(root, '/etc/group', 'dba:x:54322:\n')
    return root


def role_inputs(root):
    """Every role, each with what makes it plan every kind it can: a vendor profile and a user's
    value, shared memory sized for Oracle, two block device entries, a mount and a database."""
    return {
        'kernel_params': {'kernel_params_root': root, 'kernel_params_profile': 'oracle',
                          'kernel_params_settings': {'vm.swappiness': 10}, 'kernel_params_absent': ['kernel.core_pattern']},
        'shared_memory': {'shared_memory_size': '40%', 'shared_memory_root': root, 'shared_memory_service': 'postgresql',
                          'shared_memory_engine': 'oracle', 'shared_memory_group': 'dba'},
        'block_queue': {'block_queue_root': root, 'block_queue_workload': 'dss',
                        'block_queue_devices': [{'name': 'sda', 'attributes': {'nr_requests': 64}},
                                                {'name': 'sdd', 'rotational': True}]},
        'direct_io': {'direct_io_root': root,
                      'direct_io_mounts': [{'path': '/u01', 'fstype': 'xfs', 'options': ['noatime']}],
                      'direct_io_databases': [{'engine': 'postgresql', 'path': fake_host.PGCONF,
                                               'params': {'wal_sync_method': 'fdatasync'}}]},
        'processor_sets': {'processor_sets_root': root, 'processor_sets_cpus': '0-1', 'processor_sets_mems': '0',
                           'processor_sets_service': 'postgresql'},
    }


def host_state(root, roles):
    plan = HostState(roles, with_defaults(role_inputs(root)), registry.Context(check_mode=True),
                     facts_reader=lambda r, subsets: dict(FACTS), details=['desired_state'])
    return plan.output(plan.run())


@pytest.mark.parametrize('roles', [['kernel_params'], ['shared_memory'], ['block_queue'], ['direct_io'],
                                   ['processor_sets'], ['kernel_params', 'shared_memory', 'block_queue', 'direct_io',
                                                        'processor_sets']], ids='+'.join)
def test_every_record_of_host_state_has_its_source_and_a_reason_when_not_ok(host, roles):
    output = host_state(host, roles)
    assert output['settings']
    by_key = dict(((d['owner'], d['key']), d['source']) for d in output['desired_state'])
    for record in output['settings']:
        assert isinstance(record['source'], str) and record['source'].strip(), record
        assert not record['source'].startswith('task option'), record
        if (record['owner'], record['name']) in by_key:
            assert record['source'] == by_key[(record['owner'], record['name'])]
        if record['status'] == 'ok':
            assert record['reason'] is None, record
        else:
            assert isinstance(record['reason'], str) and record['reason'].strip(), record
    # a single role's plans at the top hold their records in full: the same source and reason
    if len(roles) == 1:
        full = [value for key, value in output.items() if isinstance(value, dict) and 'settings' in value]
        assert full and all(isinstance(record, dict) for part in full for record in part['settings'])
        shown = dict((r['name'], (r['source'], r['reason'])) for r in output['settings'])
        for part in full:
            for record in part['settings']:
                assert (record['source'], record['reason']) == shown[record['name']]


def test_each_source_is_the_word_the_value_stands_on(host):
    output = host_state(host, ['kernel_params', 'shared_memory', 'block_queue', 'direct_io', 'processor_sets'])
    sources = dict(((r['kind'], r['name']), r['source']) for r in output['settings'])
    oracle = 'Oracle Database Installation Guide for Linux'
    assert sources[('kernel_params', 'vm.swappiness')] == 'user: kernel_params_settings'
    assert sources[('kernel_params', 'fs.aio-max-nr')].startswith(oracle) and '(profile oracle)' in sources[('kernel_params', 'fs.aio-max-nr')]
    assert sources[('kernel_params', 'kernel.core_pattern')] == 'user: kernel_params_absent'
    # the sizing rule of shared_memory, with its arithmetic
    assert sources[('kernel_params', 'kernel.shmmax')].startswith(oracle) and 'RAM' in sources[('kernel_params', 'kernel.shmmax')]
    assert 'Configuring HugePages' in sources[('hugepages', 'hugepages-2048kB')]
    assert 'Checking Resource Limits' in sources[('resource_limits', 'oracle soft memlock')]
    assert 'Checking Resource Limits' in sources[('resource_limits', 'postgresql.service LimitMEMLOCK')]
    assert 'transparent huge pages' in sources[('sysfs_attr', '/sys/kernel/mm/transparent_hugepage/enabled')]
    # two device entries: each device's attributes stand on the entry that gave them
    assert sources[('block_queue', 'sda/queue/nr_requests')].startswith('block_queue_devices[0]')
    assert sources[('block_queue', 'sdd/queue/rq_affinity')].startswith('block_queue_devices[1]')
    # the workload's rule (sizing/profiles.py READ_AHEAD_RULES), whichever item asked
    assert sources[('block_queue', 'sdd/queue/read_ahead_kb')] == sources[('block_queue', 'sda/queue/read_ahead_kb')] == \
        'tuned profile throughput-performance: at least its readahead, 4096 KiB'
    assert sources[('mount_options', '/u01 noatime')] == 'user: direct_io_mounts[0].options'
    assert sources[('db_parameter', 'wal_sync_method')] == 'user: direct_io_databases[0].params'
    assert sources[('processor_set', 'service:postgresql.service')] == 'user: processor_sets_cpus'


def test_reasons_say_why_in_a_few_words(host):
    output = host_state(host, ['kernel_params', 'shared_memory'])
    reasons = dict((r['name'], (r['status'], r['reason'])) for r in output['settings'])
    # fs.aio-max-nr: 65536 live and the kernel's 65536 at boot, the profile asks at least 1048576
    assert reasons['fs.aio-max-nr'] == ('drift', 'live below the minimum 1048576, persisted below the minimum 1048576')
    assert reasons['fs.file-max'] == ('drift', 'not persisted')
    assert reasons['vm.swappiness'] == ('drift', 'live differs, persisted differs')
    assert reasons['net.core.wmem_max'] == ('unsupported', 'no /proc/sys/net/core/wmem_max on this kernel')
    assert reasons['kernel.shmmax'] == ('ok', None)


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


@pytest.mark.parametrize('module', [kind for kind, option in per_kind(OPTIONS)])
def test_a_direct_call_names_its_task_option(run_module, host, module):
    args = dict(fake_host.BASELINE[module], root=host)
    result = run_module(_module(module), args, check_mode=True)
    assert result['settings']
    for record in result['settings']:
        assert record['source'] == 'task option: %s.%s' % (module, OPTIONS[module]), record
        assert (record['reason'] is None) == (record['status'] == 'ok'), record


def test_a_revert_stands_on_the_baseline(run_module, host):
    """host_state state=revert wants back what the first tuning run found: the baseline is the source."""
    applied = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=host))
    assert applied['changed'] is True and not applied.get('failed'), applied
    done = run_module(_module('host_state'), {'state': 'revert', 'roles': ['kernel_params'],
                                              'inputs': {'kernel_params': {'kernel_params_root': host}}},
                      check_mode=True)
    assert done['settings'] and not done.get('failed'), done
    for record in done['settings']:
        assert record['source'] == ('baseline: /var/lib/dbhost-tuning/baseline.json (as found before the first '
                                    'tuning run)'), record
        assert (record['reason'] is None) == (record['status'] == 'ok'), record
    assert any(record['status'] == 'drift' for record in done['settings'])


def test_a_key_another_tuner_sets_says_who_and_what(run_module, tmp_path):
    """The TuneD profile that wins at boot is named in the reason, with the value it sets."""
    from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import test_kernel_params_tuned as tuned_case
    root = str(tmp_path)
    put(root, '/proc/sys/net/ipv4/ip_local_port_range', '32768\t60999\n')
    put(root, '/etc/sysctl.d/README', '')
    put(root, tuned_case.ORACLE, '[main]\nsummary=Optimize for Oracle RDBMS\n\n[sysctl]\n'
                                 'net.ipv4.ip_local_port_range = 9000 65499\n')
    tuned_case.enable_tuned(root, 'oracle')
    put(root, '/etc/tuned/tuned-main.conf', 'daemon = 1\nreapply_sysctl = 0\n')
    result = run_module(_module('kernel_params'), {'params': {tuned_case.PORTS: '1024 65000'}, 'root': root,
                                                   'fail_on_shadowed': False}, check_mode=True)
    (record,) = [r for r in result['settings'] if r['name'] == tuned_case.PORTS]
    assert record['status'] == 'shadowed'
    assert record['reason'] == ("shadowed by TuneD profile oracle (%s)%s (sets '9000 65499')"
                                % (tuned_case.ORACLE, tuned_case.NO_REAPPLY))
    assert record['source'] == 'task option: kernel_params.params'
