# -*- coding: utf-8 -*-
"""db_parameter against a real PostgreSQL server: a throwaway cluster made with initdb.

Runs where PostgreSQL's server binaries are installed (Debian: apt-get install postgresql);
elsewhere it is skipped with the reason.  As root, the server and psql run as the
postgres user, as the module does by default.  scripts/test.sh installs postgresql first
(scripts/install-db-servers.sh) and then sets DBHOST_REQUIRE_DB_SERVERS=1, which turns a
skip into a failure.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import as_postgres, db_parameter_plan, new_postgres_cluster, run


@pytest.fixture
def cluster():
    bindir, base, data = new_postgres_cluster('dbhost-pg-')
    port = 20000 + os.getpid() % 20000
    with open(os.path.join(data, 'postgresql.conf'), 'a') as handle:
        handle.write("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\n" % (port, base))
    pg_ctl = as_postgres([os.path.join(bindir, 'pg_ctl'), '-D', data, '-w', '-l', os.path.join(base, 'log')])
    rc, out, err = run(pg_ctl + ['start'])
    assert rc == 0, out + err
    try:
        yield {'base': base, 'data': data, 'port': port, 'bindir': bindir, 'pg_ctl': pg_ctl}
    finally:
        run(pg_ctl + ['-m', 'fast', 'stop'])
        shutil.rmtree(base, ignore_errors=True)


def _plan(cluster, params, check_mode=False):
    context = registry.Context(check_mode=check_mode, runner=run,
                               bin_path=lambda name: os.path.join(cluster['bindir'], name))
    return db_parameter_plan('postgresql', params, context,
                             path=os.path.join(cluster['data'], 'postgresql.conf'), login_host=cluster['base'],
                             login_port=cluster['port'], fail_on_shadowed=False)


def _psql(cluster, sql):
    rc, out, err = run(as_postgres([os.path.join(cluster['bindir'], 'psql'), '-XAtq', '-h', cluster['base'],
                                    '-p', str(cluster['port']), '-d', 'postgres', '-c', sql]))
    assert rc == 0, err
    return out.strip()


def test_real_server_static_dynamic_shadowed_and_restart(cluster):
    conf = os.path.join(cluster['data'], 'postgresql.conf')
    with open(conf) as handle:
        original = handle.read()
    params = {'shared_buffers': '64MB', 'work_mem': '8MB', 'maintenance_work_mem': '128MB'}
    _psql(cluster, "ALTER SYSTEM SET maintenance_work_mem = '96MB'")
    _psql(cluster, 'SELECT pg_reload_conf()')

    check = _plan(cluster, params, check_mode=True).run()
    with open(conf) as handle:
        assert handle.read() == original
    assert dict((s.name, s.status) for s in check.settings) == {
        'maintenance_work_mem': 'shadowed', 'shared_buffers': 'drift', 'work_mem': 'drift'}

    result = _plan(cluster, params).run()
    by_name = dict((s.name, s) for s in result.settings)
    assert by_name['work_mem'].status == 'changed' and by_name['work_mem'].live == '8MB'
    assert by_name['shared_buffers'].status == 'pending_restart' and by_name['shared_buffers'].live == '128MB'
    assert by_name['maintenance_work_mem'].status == 'shadowed'
    assert 'postgresql.auto.conf' in by_name['maintenance_work_mem'].detail
    assert result.restart_required is True and result.changed is True
    assert _psql(cluster, 'SHOW work_mem') == '8MB'
    assert _psql(cluster, "SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'") == 't'

    again = _plan(cluster, {'shared_buffers': '65536kB', 'work_mem': '8192kB'}).run()
    assert again.changed is False
    assert [s.status for s in again.settings] == ['pending_restart', 'ok']

    rc, out, err = run(cluster['pg_ctl'] + ['-m', 'fast', 'restart'])
    assert rc == 0, out + err
    after_restart = _plan(cluster, params).run()
    assert dict((s.name, s.status) for s in after_restart.settings) == {
        'maintenance_work_mem': 'shadowed', 'shared_buffers': 'ok', 'work_mem': 'ok'}
    assert after_restart.restart_required is False and after_restart.changed is False
