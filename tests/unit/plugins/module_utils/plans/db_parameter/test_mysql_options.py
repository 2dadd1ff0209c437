# -*- coding: utf-8 -*-
"""MySQL / MariaDB option names checked against the server's --verbose --help (recorded here;
the same against the installed server: test_mysql_options_server.py beside this file)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import mysql
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import db_parameter_plan, digest, put

# The shape of mariadbd --no-defaults --verbose --help: options, then the variables table.
HELP = '''Usage: mariadbd [OPTIONS]

  -a, --ansi          Use ANSI SQL syntax instead of MySQL syntax.
  --innodb-buffer-pool-size=#
                      The size of the memory buffer InnoDB uses to cache data
  --innodb-buffer-pool-load-at-startup
                      Load the buffer pool from a file named @@innodb_buffer_pool_filename
  --skip-name-resolve Only use IP numbers
  --log-bin[=name]    Log update queries in binary format.

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}                             Value (after reading options)
------------------------------------------------------------ -------------
innodb-buffer-pool-size                                      134217728
innodb-flush-method                                          O_DIRECT
max-connections                                              151
''' + ''.join('filler-option-%d                                             0\n' % n for n in range(100)) + '''
To see what variables a running server is using, type
'SELECT * FROM INFORMATION_SCHEMA.GLOBAL_VARIABLES' instead of 'mysqld --verbose --help'.
'''


def test_the_help_text_gives_options_and_variables():
    known = mysql.server_options(HELP)
    assert {'ansi', 'innodb_buffer_pool_size', 'innodb_buffer_pool_load_at_startup', 'skip_name_resolve', 'log_bin',
            'innodb_flush_method', 'max_connections'} <= known
    assert 'to' not in known and 'variables' not in known and 'usage' not in known


@pytest.mark.parametrize('key, problem', [
    ('innodb_buffer_pool_size', None), ('max_connections', None), ('skip_log_bin', None), ('enable_ansi', None),
    ('maximum_max_connections', None), ('skip_name_resolve', None),
    ('innodb_bufer_pool_size', "did you mean 'innodb_buffer_pool_size'"),
    ('innodb_buffer_pool', 'the beginning of innodb_buffer_pool_load_at_startup, innodb_buffer_pool_size'),
    ('max_conections', "did you mean 'max_connections'"), ('frobnicate', 'does not know the option frobnicate'),
])
def test_an_option_is_its_whole_name_or_a_modifier_of_one(key, problem):
    found = mysql.option_problem(key, mysql.server_options(HELP))
    assert found is None if problem is None else problem in found


def test_the_module_asks_the_installed_server_and_refuses_before_writing(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/mysql/my.cnf', '[mysqld]\ninnodb_buffer_pool_size = 1G\n')
    path = root + '/etc/mysql/my.cnf'
    calls = []

    def runner(argv, data=None, environ=None):
        calls.append(argv)
        return 0, HELP, ''
    before = digest(root)
    with pytest.raises(InputError) as caught:
        db_parameter_plan('mysql', {'max_conections': 500}, registry.Context(runner=runner), path=path,
                          read_live=False, find_server=lambda major: '/usr/sbin/mariadbd').run()
    assert "params 'max_conections'" in str(caught.value) and "did you mean 'max_connections'" in str(caught.value)
    assert calls == [['/usr/sbin/mariadbd', '--no-defaults', '--verbose', '--help']]
    assert digest(root) == before
    # another root than / is not the system the installed server runs: not asked
    other = db_parameter_plan('mysql', {'max_conections': 500}, registry.Context(runner=runner, check_mode=True),
                              path='/etc/mysql/my.cnf', root=root, read_live=False,
                              find_server=lambda major: '/usr/sbin/mariadbd').run()
    assert other.settings[0].status == 'drift' and len(calls) == 1
