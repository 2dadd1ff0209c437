# -*- coding: utf-8 -*-
"""DbEffect on recorded /proc samples: what the running database gets, and the status it earns."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, make_plan, put
from ansible_collections.dbhost.tuning.tests.unit.helpers import records as _records
from ansible_collections.dbhost.tuning.tests.unit.plugins.module_utils.plans.db_effect import procfs_samples as s

pytestmark = pytest.mark.usefixtures('linux')

SERVICE = 'postgresql.service'
O_RDWR_CLOEXEC = '02100002'
O_RDWR_DIRECT_CLOEXEC = '02140002'


def _postgres(root, main_smaps, memlock='65536', start_ticks=1000, maps=''):
    s.host(root, [812, 813, 814])
    s.process(root, 812, 'postgres', smaps=s.PROGRAM + s.HEAP + s.SYSV + main_smaps + s.DSM, memlock=memlock,
              start_ticks=start_ticks, maps=maps)
    s.process(root, 813, 'postgres: checkpointer ', memlock=memlock, maps=maps)
    s.process(root, 814, 'postgres: walwriter ( x)', memlock=memlock, maps=maps)


def records(result):
    return dict((name, setting.as_dict()) for name, setting in _records(result).items())


def _run(root, **kwargs):
    runner = kwargs.pop('runner', None) or s.systemctl(812)
    context = registry.Context(check_mode=kwargs.pop('check_mode', True), runner=runner)
    return make_plan('db_effect', dict(dict(service=SERVICE, root=str(root)), **kwargs), context).run()


def test_shared_memory_in_4k_pages_is_drift_and_named(tmp_path):
    _postgres(tmp_path, s.MAIN_4K)
    before = digest(str(tmp_path))
    result = _run(tmp_path, checks=['huge_pages'])
    record = records(result)['%s shared memory in huge pages' % SERVICE]
    assert record['status'] == 'drift'
    assert record['live'] == '0 MiB of 145.0 MiB in huge pages'
    assert record['target'] == 'pid 812 and 2 more'
    assert '/dev/zero (deleted), 4 kB pages, 144 MiB' in record['detail']
    assert record['reason'] == 'the running database does not get it'
    assert result.changed is False and digest(str(tmp_path)) == before


def test_shared_memory_in_huge_pages_is_ok(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    record = records(_run(tmp_path, checks=['huge_pages']))['%s shared memory in huge pages' % SERVICE]
    assert record['status'] == 'ok' and record['reason'] is None
    assert record['live'] == '144 MiB of 145.0 MiB in huge pages (2048 kB pages)'


def test_expected_bytes_larger_than_what_is_in_huge_pages_is_drift(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    record = records(_run(tmp_path, checks=['huge_pages'], huge_pages_bytes=200 * 1024 * 1024))[
        '%s shared memory in huge pages' % SERVICE]
    assert record['status'] == 'drift'
    assert 'the engine allocates 200 MiB' in record['detail']


def test_mariadb_buffer_pool_private_hugetlb_counts_and_4k_fallback_is_drift(tmp_path):
    s.host(tmp_path, [900], cgroup='/system.slice/mariadb.service')
    s.process(tmp_path, 900, 'mariadbd', smaps=s.PROGRAM + s.MARIADB_POOL_2M)
    runner = s.systemctl(900, cgroup='/system.slice/mariadb.service')
    name = 'mariadb.service shared memory in huge pages'
    assert records(_run(tmp_path, service='mariadb.service', checks=['huge_pages'], runner=runner))[name][
        'status'] == 'ok'
    s.process(tmp_path, 901, 'mariadbd', smaps=s.PROGRAM + s.MARIADB_POOL_4K)
    record = records(_run(tmp_path, service='mariadb.service', checks=['huge_pages'], runner=s.systemctl(
        901, cgroup='/nowhere')))[name]
    assert record['status'] == 'drift' and record['live'] == 'no shared memory segment'


def test_memlock_below_what_the_drop_in_gives_every_process_read(tmp_path):
    _postgres(tmp_path, s.MAIN_2M, memlock='65536')
    put(tmp_path, 'proc/814/limits', s.limits('unlimited'))
    record = records(_run(tmp_path, checks=['memlock'], memlock='infinity'))['%s locked memory' % SERVICE]
    assert record['status'] == 'drift'
    assert record['live'] == '65536 (2 processes), unlimited (1 process)'
    assert 'below infinity: pid 812, 813' in record['detail']
    ok = records(_run(tmp_path, checks=['memlock'], memlock='65536'))['%s locked memory' % SERVICE]
    assert ok['status'] == 'ok'
    assert records(_run(tmp_path, checks=['memlock'], memlock='65537'))['%s locked memory' % SERVICE][
        'status'] == 'drift'


def test_started_before_the_drop_in_changed_is_pending_restart_naming_the_service(tmp_path):
    _postgres(tmp_path, s.MAIN_2M, memlock='65536', start_ticks=500)   # started at btime + 5 s
    dropin = 'etc/systemd/system/%s.d/90-dbhost-tuning.conf' % SERVICE
    put(tmp_path, dropin, '[Service]\nLimitMEMLOCK=infinity\n')
    os.utime(os.path.join(str(tmp_path), dropin), (s.BTIME + 3600, s.BTIME + 3600))
    result = _run(tmp_path, checks=['memlock'], memlock='infinity', changed_by=['/' + dropin])
    record = records(result)['%s locked memory' % SERVICE]
    assert record['status'] == 'pending_restart'
    assert record['reason'] == ('started 2025-12-06T05:46:45Z, before /%s changed (2025-12-06T06:46:40Z): '
                                'restart %s' % (dropin, SERVICE))
    assert result.restart_required is True
    # started after the change: the database simply does not get it
    os.utime(os.path.join(str(tmp_path), dropin), (s.BTIME, s.BTIME))
    assert records(_run(tmp_path, checks=['memlock'], memlock='infinity', changed_by=['/' + dropin]))[
        '%s locked memory' % SERVICE]['status'] == 'drift'


def test_cpus_of_every_process(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    assert records(_run(tmp_path, checks=['cpus'], cpus='0-3'))['%s CPUs' % SERVICE]['status'] == 'ok'
    put(tmp_path, 'proc/813/status', s.status(813, 'postgres', cpus='0-1'))
    record = records(_run(tmp_path, checks=['cpus'], cpus='0-3'))['%s CPUs' % SERVICE]
    assert record['status'] == 'drift' and record['live'] == '0-1 (1), 0-3 (2)'
    assert 'other CPUs: pid 813' in record['detail']


def test_shared_memory_pages_on_the_sets_node(tmp_path):
    _postgres(tmp_path, s.MAIN_2M, maps=s.NUMA_MAPS_NODE1)
    for pid in (812, 813, 814):
        put(tmp_path, 'proc/%d/status' % pid, s.status(pid, 'postgres', mems='1'))
    record = records(_run(tmp_path, checks=['mems'], mems='1'))['%s memory nodes' % SERVICE]
    assert record['status'] == 'ok'
    assert record['live'] == 'shared memory node 1: 144.0 MiB'
    assert 'policy bind:1' in record['detail']


def test_shared_memory_split_over_nodes_is_drift(tmp_path):
    _postgres(tmp_path, s.MAIN_2M, maps=s.NUMA_MAPS_SPLIT)
    record = records(_run(tmp_path, checks=['mems'], mems='1'))['%s memory nodes' % SERVICE]
    assert record['status'] == 'drift'
    assert record['live'] == 'shared memory node 0: 80.0 MiB, node 1: 64 MiB'
    assert 'pages on node 0' in record['detail'] and 'not bound to node 1: pid 812, 813, 814' in record['detail']


def test_direct_io_flags_of_innodb_files_and_the_mount_options(tmp_path):
    s.host(tmp_path, [900, 901], cgroup='/system.slice/mariadb.service')
    files = [(3, '/srv/data/mysql/ibdata1', O_RDWR_DIRECT_CLOEXEC), (4, '/srv/data/mysql/ib_logfile0', O_RDWR_CLOEXEC),
             (5, 'socket:[12345]', '02'), (9, '/srv/data/mysql/shop/orders.ibd', O_RDWR_DIRECT_CLOEXEC)]
    s.process(tmp_path, 900, 'mariadbd', files=files)
    s.process(tmp_path, 901, 'mariadbd')
    runner = s.systemctl(900, cgroup='/system.slice/mariadb.service')
    args = dict(service='mariadb.service', checks=['direct_io'], engine='mysql', direct_io_paths=['/srv/data'],
                runner=runner)
    record = records(_run(tmp_path, **args))['mariadb.service data files with O_DIRECT']
    assert record['status'] == 'ok' and record['live'] == '2 of 2 data files with O_DIRECT'
    assert '/srv/data mounted xfs (rw,noatime,rw,attr2,inode64,noquota)' in record['detail']
    put(tmp_path, 'proc/900/fdinfo/9', 'pos:\t0\nflags:\t%s\nmnt_id:\t40\n' % O_RDWR_CLOEXEC)
    record = records(_run(tmp_path, **args))['mariadb.service data files with O_DIRECT']
    assert record['status'] == 'drift' and record['live'] == '1 of 2 data files with O_DIRECT'
    assert 'buffered: /srv/data/mysql/shop/orders.ibd' in record['detail']
    # no folder given: InnoDB's files wherever they are, and the mounts that hold them
    args['direct_io_paths'] = []
    anywhere = records(_run(tmp_path, **args))['mariadb.service data files with O_DIRECT']
    assert anywhere['live'] == '1 of 2 data files with O_DIRECT'
    assert anywhere['detail'].startswith('open under /srv/data/mysql, /srv/data/mysql/shop; buffered: ')
    assert anywhere['detail'].endswith('/srv/data mounted xfs (rw,noatime,rw,attr2,inode64,noquota)')


def test_postgresql_direct_io_is_unsupported_with_the_reason(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    record = records(_run(tmp_path, checks=['direct_io'], engine='postgresql', direct_io_paths=['/srv/data']))[
        '%s data files with O_DIRECT' % SERVICE]
    assert record['status'] == 'unsupported'
    assert record['reason'].startswith('postgresql opens its data files without O_DIRECT')


def test_service_not_running_is_unsupported_and_every_check_said(tmp_path):
    s.host(tmp_path, [])
    result = _run(tmp_path, checks=['huge_pages', 'memlock'], memlock='infinity', runner=s.systemctl(0, state='inactive'))
    assert [(r.name, r.status, r.reason) for r in result.settings] == [
        ('%s shared memory in huge pages' % SERVICE, 'unsupported', 'service %s is not running' % SERVICE),
        ('%s locked memory' % SERVICE, 'unsupported', 'service %s is not running' % SERVICE)]
    assert result.settings[0].detail == 'service %s is not running (inactive); nothing checked' % SERVICE


def test_unreadable_process_files_are_unsupported(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    os.remove(os.path.join(str(tmp_path), 'proc/812/smaps'))
    record = records(_run(tmp_path, checks=['huge_pages']))['%s shared memory in huge pages' % SERVICE]
    assert record['status'] == 'unsupported' and record['reason'] == 'cannot read /proc/812/smaps'


def test_only_the_main_process_when_the_cgroup_cannot_be_found(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    record = records(_run(tmp_path, checks=['memlock'], memlock='65536', runner=s.systemctl(812, cgroup='/gone')))[
        '%s locked memory' % SERVICE]
    assert record['target'] == 'pid 812' and record['live'] == '65536 (1 process)'


@pytest.mark.parametrize('args, words', [
    (dict(checks=['swap']), ['checks', 'swap']),
    (dict(checks=[]), ['checks', 'none given']),
    (dict(checks=['memlock']), ['memlock is asked']),
    (dict(checks=['direct_io'], direct_io_paths=['/srv/data']), ['direct_io needs engine']),
    (dict(checks=['direct_io'], engine='oracle'), ['direct_io_paths']),
    (dict(checks=['cpus'], cpus='3-1'), ['cpus']),
    (dict(checks=['huge_pages'], service='a\nb.service'), ['service']),
    (dict(checks=['huge_pages'], engine='db2'), ['engine', 'db2']),
])
def test_bad_input_refused_naming_it(tmp_path, args, words):
    _postgres(tmp_path, s.MAIN_2M)
    with pytest.raises(InputError) as caught:
        _run(tmp_path, **args)
    for word in words:
        assert word in str(caught.value)


def test_memory_nodes_default_to_the_nodes_of_the_sets_cpus(tmp_path):
    _postgres(tmp_path, s.MAIN_2M, maps=s.NUMA_MAPS_NODE1)
    put(tmp_path, 'sys/devices/system/cpu/online', '0-3\n')
    for node, cpus in ((0, '0-1'), (1, '2-3')):
        put(tmp_path, 'sys/devices/system/node/node%d/cpulist' % node, cpus + '\n')
        put(tmp_path, 'sys/devices/system/node/node%d/distance' % node, '10 20\n' if node == 0 else '20 10\n')
    result = records(_run(tmp_path, checks=['cpus', 'mems'], cpus='node:1'))
    assert result['%s CPUs' % SERVICE]['desired'] == '2-3'
    assert result['%s CPUs' % SERVICE]['status'] == 'drift'   # the samples' processes run on 0-3
    assert result['%s memory nodes' % SERVICE]['desired'] == '1'
    assert result['%s memory nodes' % SERVICE]['status'] == 'ok'   # Mems_allowed 0-1, but bound to 1 (bind:1)


def test_the_root_cgroup_is_never_taken_for_the_services(tmp_path):
    _postgres(tmp_path, s.MAIN_2M)
    s.host(tmp_path, [1, 2, 812, 813, 814], cgroup='')   # /sys/fs/cgroup/systemd/cgroup.procs: every process
    record = records(_run(tmp_path, checks=['memlock'], memlock='65536', runner=s.systemctl(812, cgroup='/')))[
        '%s locked memory' % SERVICE]
    assert record['target'] == 'pid 812'


def test_smaps_fields_of_private_mappings_are_skipped_unless_asked():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.procfs import parse_smaps
    mappings = parse_smaps(s.HEAP + s.MAIN_4K)
    assert [(m['path'], m['size_kb']) for m in mappings] == [('[heap]', 0), ('/dev/zero (deleted)', 147456)]
    assert parse_smaps(s.HEAP, every=True)[0]['size_kb'] == 2048


def test_a_change_in_a_file_the_option_file_includes_is_pending_restart(tmp_path):
    """The server reads /etc/mysql/my.cnf and what it includes: a setting written to any of them counts."""
    s.host(tmp_path, [900], cgroup='/system.slice/mariadb.service')
    s.process(tmp_path, 900, 'mariadbd', start_ticks=500,
              files=[(3, '/var/lib/mysql/ibdata1', O_RDWR_CLOEXEC)])
    put(tmp_path, 'etc/mysql/my.cnf', '[client-server]\n!includedir /etc/mysql/mariadb.conf.d/\n')
    put(tmp_path, 'etc/mysql/mariadb.conf.d/60-site.cnf', '[mysqld]\ninnodb_flush_method = O_DIRECT\n')
    for path, when in (('etc/mysql/my.cnf', s.BTIME), ('etc/mysql/mariadb.conf.d', s.BTIME),
                       ('etc/mysql/mariadb.conf.d/60-site.cnf', s.BTIME + 3600)):
        os.utime(os.path.join(str(tmp_path), path), (when, when))
    args = dict(service='mariadb.service', checks=['direct_io'], engine='mysql', changed_by=['/etc/mysql/my.cnf'],
                runner=s.systemctl(900, cgroup='/system.slice/mariadb.service'))
    record = records(_run(tmp_path, **args))['mariadb.service data files with O_DIRECT']
    assert record['status'] == 'pending_restart'
    assert 'before /etc/mysql/mariadb.conf.d/60-site.cnf changed' in record['reason']
