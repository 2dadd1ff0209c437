# -*- coding: utf-8 -*-
"""DbEffect's engine check against a real MariaDB/MySQL server (a throwaway one, tests/unit/helpers.py
mysql_server): large_pages as the running server says it (SHOW GLOBAL VARIABLES through the socket it
listens on) and as its option file gives it (my_print_defaults with its own --defaults-file).

systemd does not run here, so ``systemctl show`` is answered with the server's pid; every other command
runs for real.  This machine's huge page pool is left as it is: the server started with large_pages
finds no free page (that test is skipped while the pool has free pages) and falls back to normal pages,
which is what the check must name.  scripts/test.sh installs mariadb-server first.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import (
    MYSQL_TEST_CNF, free_huge_pages, make_plan, mysql_server, run, start_mysql, stop_mysql)

pytestmark = pytest.mark.usefixtures('linux')

SERVICE = 'dbhost-test-mariadb.service'
NAME = '%s huge page setting of the engine' % SERVICE
CNF = MYSQL_TEST_CNF + '''innodb-buffer-pool-size = 32M
max_connections = 20
'''


@pytest.fixture
def server():
    with mysql_server('dbhost-my-effect-', CNF) as state:
        yield state


def _record(server, **kwargs):
    def runner(argv):
        if argv[:2] == ['systemctl', 'show']:
            return 0, 'MainPID=%d\nControlGroup=/dbhost-test-no-cgroup\nActiveState=active\n' % server['process'].pid, ''
        return run(argv)
    result = make_plan('db_effect', dict(service=SERVICE, checks=['engine_huge_pages'], engine='mysql', **kwargs),
                       registry.Context(runner=runner, check_mode=True)).run()
    return dict((s.name, s) for s in result.settings)[NAME], result


def _restart(server, extra):
    stop_mysql(server['process'])
    with open(server['cnf'], 'a') as handle:
        handle.write(extra)
    server['process'] = start_mysql(server['cnf'], server['base'])


def test_real_mariadb_without_large_pages_asks_for_none(server):
    record, result = _record(server)
    assert record.status == 'drift', record.as_dict()
    assert record.live == 'large_pages = OFF, no huge pages asked'
    assert record.desired == 'large_pages asking for huge pages, and in them'
    assert record.detail == 'read by SHOW GLOBAL VARIABLES through %s/mysqld.sock; the engine does not ask for ' \
        'huge pages' % server['base']
    assert result.changed is False


def test_real_mariadb_with_large_pages_and_no_pool_falls_back_and_is_named(server):
    if free_huge_pages():
        pytest.skip('this machine has free huge pages: the fallback to normal pages cannot be shown')
    _restart(server, 'large_pages = 1\n')
    record, dummy = _record(server)
    assert record.status == 'drift', record.as_dict()
    # the buffer pool in normal pages is a private mapping: nothing of its memory is shared or huge
    assert record.live == 'large_pages = ON, fell back to normal pages: no shared memory segment'
    assert 'large_pages = ON falls back to normal pages silently when the pool is short' in record.detail
    assert 'configuration now gives' not in record.detail


def test_real_mariadb_option_file_changed_after_start_is_pending_restart(server):
    with open(server['cnf'], 'a') as handle:
        handle.write('[mariadbd]\nlarge-pages\n')
    os.utime(server['cnf'], None)
    plain, dummy = _record(server)
    assert plain.status == 'drift'
    assert 'its configuration now gives ON (read at its next start)' in plain.detail, plain.detail
    pending, result = _record(server, changed_by=[server['cnf']])
    assert pending.status == 'pending_restart' and result.restart_required is True
    assert pending.reason.startswith('started ') and pending.reason.endswith('restart %s' % SERVICE)
