# -*- coding: utf-8 -*-
"""MySQL / MariaDB option names: db_parameter refuses what the installed server refuses.

The names come from the server itself (``mariadbd --no-defaults --verbose --help``); each
case's line is put into the [mysqld] group of an option file and the server reads it
(``--defaults-file=... --verbose --help``, which parses every option and starts nothing):
an option we refuse must make it log an error, an option we accept must not.  Runs where
the server is installed (scripts/install-db-servers.sh); a skip is a failure under
DBHOST_REQUIRE_DB_SERVERS=1.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import mysql
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import db_parameter_plan, digest, run, server_unavailable

CASES = [
    ('innodb_buffer_pool_size', '1G'), ('innodb-buffer-pool-size', '1G'), ('innodb_bufer_pool_size', '1G'),
    ('innodb_buffer_pool', '1G'),          # ambiguous: the server disables InnoDB
    ('innodb_flush_method', 'O_DIRECT'), ('innodb_flush_metod', 'O_DIRECT'), ('skip_name_resolve', 'ON'),
    ('skip-log-bin', 'ON'), ('enable_bar', '1'), ('max_connections', '500'), ('max_conections', '500'),
    ('large_pages', 'ON'), ('performance_schema', 'ON'),
]


@pytest.fixture(scope='module')
def server():
    binary = mysql.installed_server()
    if not binary:
        server_unavailable('no MySQL or MariaDB server installed')
    rc, out, err = run([binary, '--no-defaults', '--verbose', '--help'])
    assert rc == 0, err
    return binary, mysql.server_options(out)


@pytest.mark.parametrize('name, value', CASES, ids=['%s=%s' % case for case in CASES])
def test_we_refuse_exactly_the_options_the_server_refuses(tmp_path, server, name, value):
    binary, known = server
    ours = mysql.option_problem(mycnf.option_key(name), known)
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[mysqld]\n%s = %s\n' % (name, value))
    rc, out, err = run([binary, '--defaults-file=%s' % cnf, '--verbose', '--help'])
    refused = rc != 0 or '[ERROR]' in err
    assert (ours is not None) == refused, 'we say %r; the server (rc %d): %s' % (ours, rc, err.strip()[-300:])


def test_a_misspelt_option_is_refused_by_the_module_naming_the_closest(tmp_path, server):
    binary, known = server
    path = str(tmp_path / 'my.cnf')
    with open(path, 'w') as handle:
        handle.write('[mysqld]\ninnodb_buffer_pool_size = 1G\n')
    before = digest(str(tmp_path))
    for check_mode in (True, False):
        with pytest.raises(InputError) as caught:
            db_parameter_plan('mysql', {'innodb_bufer_pool_size': '2G'},
                              registry.Context(runner=run, check_mode=check_mode), path=path, read_live=False).run()
        assert "'innodb_bufer_pool_size'" in str(caught.value)
        assert "did you mean 'innodb_buffer_pool_size'" in str(caught.value)
    assert digest(str(tmp_path)) == before
    loose = db_parameter_plan('mysql', {'loose-innodb_bufer_pool_size': '2G'},
                              registry.Context(runner=run, check_mode=True), path=path, read_live=False).run()
    assert loose.settings[0].status == 'drift'   # the server ignores a loose- option it does not know
    db_parameter_plan('mysql', {'loose-innodb_bufer_pool_size': '2G'}, registry.Context(runner=run), path=path,
                      read_live=False).run()
    with open(path) as handle:
        assert handle.read() == '[mysqld]\ninnodb_buffer_pool_size = 1G\nloose-innodb_bufer_pool_size = 2G\n'
    rc, out, err = run([binary, '--defaults-file=%s' % path, '--verbose', '--help'])
    assert rc == 0 and '[ERROR]' not in err, err
    assert os.path.basename(binary) in ('mariadbd', 'mysqld')
