# -*- coding: utf-8 -*-
"""db_parameter against a real MariaDB/MySQL server started on a throwaway data directory.

Runs where mariadbd (or mysqld) and mariadb-install-db are installed, as root (the server
runs as the mysql user, and root logs in through the unix socket); elsewhere it is skipped.
scripts/test.sh installs mariadb-server first (scripts/install-db-servers.sh) and then sets
DBHOST_REQUIRE_DB_SERVERS=1, which turns a skip into a failure.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import (
    MYSQL_CLIENT, MYSQL_TEST_CNF, db_parameter_plan, mysql_server, run, start_mysql, stop_mysql)

CNF = MYSQL_TEST_CNF + '''innodb_flush_method = fsync
innodb-buffer-pool-size = 32M   # small: a test server
max_connections = 20

[mariadb-10.6]
max_connections = 30
'''


@pytest.fixture
def server():
    with mysql_server('dbhost-my-', CNF) as state:
        yield state


def _plan(server, params, check_mode=False):
    return db_parameter_plan('mysql', params,
                             registry.Context(check_mode=check_mode, runner=run, bin_path=lambda name: MYSQL_CLIENT),
                             path=server['cnf'], login_host=os.path.join(server['base'], 'mysqld.sock'))


def test_real_server_persisted_live_and_restart(server):
    with open(server['cnf']) as handle:
        original = handle.read()
    params = {'innodb_flush_method': 'O_DIRECT', 'innodb_buffer_pool_size': '33554432', 'max_connections': 40}
    check = _plan(server, params, check_mode=True).run()
    with open(server['cnf']) as handle:
        assert handle.read() == original
    by_name = dict((s.name, s) for s in check.settings)
    assert by_name['innodb_flush_method'].status == 'drift' and by_name['innodb_flush_method'].live == 'fsync'
    assert by_name['innodb_buffer_pool_size'].status == 'ok'        # 32M is 33554432
    assert by_name['max_connections'].live == '20'                  # [mariadb-10.6] is not read by 10.11

    result = _plan(server, params).run()
    with open(server['cnf']) as handle:
        edited = handle.read()
    assert edited == original.replace('innodb_flush_method = fsync', 'innodb_flush_method = O_DIRECT').replace(
        'max_connections = 20', 'max_connections = 40')
    assert [(s.name, s.status) for s in result.settings] == [
        ('innodb_buffer_pool_size', 'ok'), ('innodb_flush_method', 'pending_restart'),
        ('max_connections', 'pending_restart')]
    assert result.restart_required is True

    again = _plan(server, params).run()
    assert again.changed is False and again.restart_required is True

    stop_mysql(server['process'])
    server['process'] = start_mysql(server['cnf'], server['base'])
    after_restart = _plan(server, params).run()
    assert [(s.status, s.live) for s in after_restart.settings] == [
        ('ok', '33554432'), ('ok', 'O_DIRECT'), ('ok', '40')]
    assert after_restart.restart_required is False and after_restart.changed is False
