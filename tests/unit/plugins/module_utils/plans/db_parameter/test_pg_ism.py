# -*- coding: utf-8 -*-
"""Seed 001 on SunOS: shared_memory_type = sysv written (restart pending), then ISM read from
pmap -xs of the postmaster; recorded psql and pmap answers (tests/unit/fixtures/sunos/README.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_ism
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import db_parameter_plan

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'fixtures', 'sunos')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


class Server(object):
    """psql and pmap of a PostgreSQL 15 server on Solaris, as recorded; restart() starts it
    again with what the file says."""

    def __init__(self, tmp_path, running_type='mmap', pmap='pmap-xs-postgres-mmap.txt', pid=2209):
        self.data = str(tmp_path / 'data')
        os.makedirs(self.data)
        self.conf = str(tmp_path / 'postgresql.conf')
        with open(self.conf, 'w') as handle:
            handle.write("# PostgreSQL 15 on Solaris 11.4\ndata_directory = '%s'\nshared_buffers = 1GB\n" % self.data)
        self.settings = {'shared_memory_type': ('', 'postmaster', running_type)}
        self.start(pid, pmap, started=1733580000)
        self.calls = []
        self.psql_down = False

    def start(self, pid, pmap, started=None):
        # miscinit.c: the postmaster's pid, the data directory, its start time (epoch seconds), ...
        started = int(time.time()) + 5 if started is None else started
        with open(os.path.join(self.data, 'postmaster.pid'), 'w') as handle:
            handle.write('%d\n%s\n%d\n5432\n/tmp\n*\n  5432001    27\nready   \n' % (pid, self.data, started))
        self.pid, self.pmap = pid, pmap

    def restart(self, pid, pmap):
        with open(self.conf) as handle:
            wanted = 'sysv' if 'shared_memory_type = sysv' in handle.read() else 'mmap'
        self.settings['shared_memory_type'] = ('', 'postmaster', wanted)
        self.start(pid, pmap)

    def __call__(self, argv, data=None, environ=None):
        self.calls.append(list(argv))
        if argv[0] == 'pmap':
            return (0, fixture(self.pmap), '') if argv[2] == str(self.pid) else \
                (1, '', 'pmap: cannot examine %s: no such process\n' % argv[2])
        if self.psql_down:
            return 2, '', 'psql: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed\n'
        sql = argv[argv.index('-c') + 1]
        rows = ['\x1f'.join((name,) + row) for name, row in sorted(self.settings.items()) if "'%s'" % name in sql]
        return 0, ''.join(row + '\n' for row in rows), ''


def run(server, check_mode=False, system='SunOS', params=None):
    return db_parameter_plan('postgresql', params or {'shared_memory_type': 'sysv'},
                             registry.Context(runner=server, bin_path=lambda name: '/usr/bin/' + name,
                                              system_name=system, check_mode=check_mode), path=server.conf, euid=1000,
                             find_server=lambda major: None, base_page=8192).run()


def by_name(result):
    return dict((s.name, s) for s in result.settings)


def test_sysv_written_restart_pending_then_ism_after_restart(tmp_path):
    server = Server(tmp_path)
    check = by_name(run(server, check_mode=True))
    assert check['shared_memory_type'].status == 'drift'
    assert check[pg_ism.NAME].status == 'pending_restart'
    assert 'shared_memory_type = mmap until it restarts' in check[pg_ism.NAME].detail
    assert "shared_memory_type" not in open(server.conf).read()

    result = run(server)
    records = by_name(result)
    assert records['shared_memory_type'].status == 'pending_restart' and result.restart_required is True
    assert open(server.conf).read().endswith("shared_memory_type = sysv\n")
    ism = records[pg_ism.NAME]
    assert ism.status == 'pending_restart' and ism.target == 'pmap -xs 2209'
    assert ism.live['ism_bytes'] == 8192 and 'the main segment is not ISM' in ism.detail
    assert ['pmap', '-xs', '2209'] in server.calls

    server.restart(2377, 'pmap-xs-postgres-sysv.txt')
    again = run(server)
    records = by_name(again)
    assert again.changed is False
    assert records['shared_memory_type'].status == 'ok'
    assert records[pg_ism.NAME].status == 'ok' and records[pg_ism.NAME].live['page_sizes'] == ['4M', '256M']


def test_sysv_running_but_no_large_pages_is_drift(tmp_path):
    server = Server(tmp_path, running_type='sysv', pmap='pmap-xs-postgres-sysv-8k.txt', pid=2411)
    with open(server.conf, 'a') as handle:
        handle.write('shared_memory_type = sysv\n')
    result = run(server)
    record = by_name(result)[pg_ism.NAME]
    assert record.status == 'drift' and 'all in 8K pages' in record.detail
    assert result.changed is False


def test_sysv_running_but_segment_not_ism_is_drift(tmp_path):
    """The server says sysv, yet pmap shows the buffers outside ISM: drift, not pending_restart."""
    server = Server(tmp_path, running_type='sysv')
    with open(server.conf, 'a') as handle:
        handle.write('shared_memory_type = sysv\n')
    record = by_name(run(server))[pg_ism.NAME]
    assert record.status == 'drift'


def test_postmaster_gone_is_unsupported_with_why(tmp_path):
    server = Server(tmp_path)
    os.remove(os.path.join(server.data, 'postmaster.pid'))
    record = by_name(run(server))[pg_ism.NAME]
    assert record.status == 'unsupported' and 'postmaster.pid not read' in record.detail


def test_no_ism_record_off_sunos_or_without_sysv(tmp_path):
    server = Server(tmp_path)
    assert pg_ism.NAME not in by_name(run(server, system='Linux'))
    assert pg_ism.NAME not in by_name(run(server, params={'shared_memory_type': 'mmap'}))
    assert not [c for c in server.calls if c[0] == 'pmap']


def test_postmaster_pid_first_and_third_lines():
    assert pg_ism.postmaster_pid('2377\n/var/postgres/15/data\n1733580000\n5432\n') == (2377, 1733580000)
    assert pg_ism.postmaster_pid('') == (None, None) and pg_ism.postmaster_pid('x\n') == (None, None)


def test_without_psql_the_start_time_tells_a_pending_restart(tmp_path):
    """psql unreachable (on SunOS it cannot run as postgres under root): postmaster.pid's start
    time against the configuration's mtime still tells pending_restart from drift."""
    server = Server(tmp_path)
    server.psql_down = True
    records = by_name(run(server))
    assert records[pg_ism.NAME].status == 'pending_restart'
    assert 'changed after the postmaster started' in records[pg_ism.NAME].detail
    server.start(2209, 'pmap-xs-postgres-mmap.txt')  # started again after the write, still mmap
    assert by_name(run(server))[pg_ism.NAME].status == 'drift'


def test_a_tree_under_root_is_not_the_running_server(tmp_path):
    server = Server(tmp_path)
    result = db_parameter_plan('postgresql', {'shared_memory_type': 'sysv'},
                               registry.Context(runner=None, bin_path=lambda name: None, system_name='SunOS',
                                                check_mode=True), path=server.conf, root='/', euid=1000,
                               find_server=lambda major: None).run()
    record = by_name(result)[pg_ism.NAME]
    assert record.status == 'unsupported' and 'on the host itself only' in record.detail


def test_the_platform_is_the_running_one_when_not_given(tmp_path, monkeypatch):
    """Through the module (registry), system_name is not given: the running platform decides."""
    server = Server(tmp_path)
    monkeypatch.setattr(pg_ism.platforms, 'system', lambda: 'SunOS')
    assert pg_ism.NAME in by_name(run(server, system=None))
    monkeypatch.setattr(pg_ism.platforms, 'system', lambda: 'Linux')
    assert pg_ism.NAME not in by_name(run(server, system=None))
