# -*- coding: utf-8 -*-
"""The effect checks compiled from the roles' calls: one read-only db_effect call per tuned service."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.plans import hugepages, resource_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.platform import Linux as LinuxMounts
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import service as cpus_service
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile import db_effect
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

GIB = 1024 ** 3
HUGE_2M = 2 * 1024 * 1024
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': HUGE_2M},
         'hugepages': {HUGE_2M: {'total': 0}}, 'mounts': [{'mount_point': '/srv/data', 'fstype': 'xfs'}],
         'numa': {'nodes': {'0': {'cpus': '0-1'}, '1': {'cpus': '2-3'}}}}


def _inputs(root='/', **extra):
    inputs = {
        'shared_memory': {'shared_memory_engine': 'postgresql', 'shared_memory_size': '1G', 'shared_memory_root': root,
                          'shared_memory_user': 'nobody', 'shared_memory_group': 'nogroup',
                          'shared_memory_service': 'postgresql@15-main.service'},
        'processor_sets': {'processor_sets_cpus': 'node:1', 'processor_sets_service': 'postgresql@15-main.service',
                           'processor_sets_root': root},
        'direct_io': {'direct_io_root': root, 'direct_io_mounts': [{'path': '/srv/data', 'options': ['noatime']}],
                      'direct_io_databases': [
                          {'engine': 'mysql', 'path': '/etc/mysql/my.cnf', 'service': 'mariadb.service',
                           'params': {'innodb_flush_method': 'O_DIRECT'}},
                          {'engine': 'mysql', 'path': '/etc/mysql/other.cnf', 'service': 'other.service',
                           'params': {'innodb_flush_method': 'fsync'}},
                          {'engine': 'postgresql', 'path': '/etc/postgresql/15/main/postgresql.conf'}]}}
    for role, values in extra.items():
        inputs[role].update(values)
    return with_defaults(inputs)


def _effects(state):
    return [(c.owner, c.label, c.kwargs) for c in state.calls if c.kind == 'db_effect']


def test_each_tuned_service_gets_its_checks_owned_by_its_role():
    state = desired.compile_state(['shared_memory', 'processor_sets', 'direct_io'], _inputs(), FACTS)
    service = 'postgresql@15-main.service'
    memlock = [c.kwargs['service_limits']['LimitMEMLOCK'] for c in state.calls if c.kind == 'resource_limits'][0]
    assert _effects(state) == [
        ('shared_memory', 'db_effect %s' % service, {
            'checks': ['huge_pages', 'engine_huge_pages', 'memlock'], 'engine': 'postgresql', 'memlock': memlock,
            'service': service,
            'changed_by': ['/etc/systemd/system/%s.d/90-dbhost-tuning.conf' % service,
                           '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf']}),
        ('processor_sets', 'db_effect %s' % service, {
            'checks': ['cpus', 'mems'], 'cpus': 'node:1', 'mems': None, 'service': service,
            'changed_by': ['/etc/systemd/system/%s.d/90-dbhost-tuning-cpus.conf' % service]}),
        ('direct_io', 'db_effect mysql mariadb.service', {
            'checks': ['direct_io'], 'engine': 'mysql', 'direct_io_paths': [], 'service': 'mariadb.service',
            'changed_by': ['/etc/mysql/my.cnf', '/etc/mysql', '/etc/fstab']})]
    records = dict((r['key'], r) for r in state.records if r['kind'] == 'db_effect')
    assert sorted(records) == sorted([
        '%s shared memory in huge pages' % service, '%s huge page setting of the engine' % service,
        '%s locked memory' % service, '%s CPUs' % service,
        '%s memory nodes' % service, 'mariadb.service data files with O_DIRECT'])
    assert records['%s locked memory' % service]['owner'] == 'shared_memory'
    engine_record = records['%s huge page setting of the engine' % service]
    assert engine_record['desired'] == 'huge_pages asking for huge pages, and in them'
    assert engine_record['source'] == 'role variable: shared_memory_engine postgresql (shared_memory_service %s)' \
        % service
    assert records['mariadb.service data files with O_DIRECT']['source'] == \
        'user: direct_io_databases[0].params (innodb_flush_method)'


def test_no_service_or_another_root_checks_nothing(tmp_path):
    assert _effects(desired.compile_state(['shared_memory', 'processor_sets', 'direct_io'], _inputs(
        shared_memory={'shared_memory_service': ''}, processor_sets={'processor_sets_service': '',
                                                                     'processor_sets_processes': [{'user': 'x'}]},
        direct_io={'direct_io_databases': []}), FACTS)) == []


def test_the_files_named_are_the_plans_own():
    assert db_effect.HUGEPAGES_FILE == hugepages.DEFAULT_SYSCTL_FILE
    assert db_effect.UNIT_FOLDER % ('x.service', resource_limits.DEFAULT_DROPIN_NAME) == \
        '/etc/systemd/system/x.service.d/90-dbhost-tuning.conf'
    assert db_effect.CPUS_DROPIN == cpus_service.DROPIN_NAME
    assert db_effect.FSTAB == LinuxMounts.default_file
