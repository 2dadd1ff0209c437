# -*- coding: utf-8 -*-
"""Which PostgreSQL parameters db_parameter accepts, from which list, before anything is written.

The checks against a real server are in test_pg_catalog_server.py beside this file;
here: the choice of list (table of the major, tables around it, the server's
--describe-config), the major found from the configuration, and the module refusing a
name or a type with every file left as it was.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_catalog
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_settings
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import db_parameter_plan, digest, put

# What postgres --describe-config prints (tab-separated: name, context, group, type, default,
# min, max, description, extra), three lines of a build that knows a parameter no table has.
DESCRIBED = (
    'work_mem\tuser\tResource Usage / Memory\tINTEGER\t4096\t64\t2147483647\tSets the maximum memory.\t\n'
    'fsync\tsighup\tWrite-Ahead Log / Settings\tBOOLEAN\ton\t\t\tForces synchronization.\t\n'
    'brand_new_setting\tuser\tCustomized Options\tINTEGER\t1\t0\t10\tOnly in this build.\t\n'
)


def test_every_table_is_of_its_major_and_names_where_it_came_from():
    assert sorted(pg_catalog.TABLES) == [13, 15, 17]
    for major, table in pg_catalog.TABLES.items():
        settings = pg_catalog.parse_table(table.TABLE)
        assert len(settings) > 300, major
        assert table.SOURCE.startswith('PostgreSQL %d.' % major)
        assert settings['shared_buffers'].unit == '8kB' and settings['shared_buffers'].context == 'postmaster'
        assert settings['work_mem'].vartype == 'integer' and settings['work_mem'].low == 64
        assert settings['application_name'].sample is False and settings['work_mem'].sample is True


# What the servers themselves say differs between the majors (read from each table as shipped):
# (name, field) -> {major: value}; None: the major has no such parameter.
DIFFERENCES = {
    ('allow_alter_system', 'vartype'): {13: None, 15: None, 17: 'bool'},           # only in 17
    ('stats_temp_directory', 'vartype'): {13: 'string', 15: None, 17: None},       # removed after 13
    ('old_snapshot_threshold', 'context'): {13: 'postmaster', 15: 'postmaster', 17: None},  # removed in 17
    ('wal_compression', 'vartype'): {13: 'bool', 15: 'enum', 17: 'enum'},         # a type changed in 15
    ('wal_compression', 'enumvals'): {13: None, 15: ('pglz', 'lz4', 'zstd', 'on', 'off'),
                                      17: ('pglz', 'lz4', 'zstd', 'on', 'off')},
    ('restore_command', 'context'): {13: 'postmaster', 15: 'sighup', 17: 'sighup'},  # a context changed
    ('maintenance_work_mem', 'low'): {13: 1024, 15: 1024, 17: 64},                 # a range changed in 17
    ('force_parallel_mode', 'sample'): {13: True, 15: False, 17: None},            # unlisted in 15, then gone
    ('server_version_num', 'low'): {13: 130016, 15: 150018, 17: 170012},
    ('work_mem', 'unit'): {13: 'kB', 15: 'kB', 17: 'kB'},                          # the same in every major
}


@pytest.mark.parametrize('name, field', sorted(DIFFERENCES))
def test_each_major_table_holds_that_majors_own_values(name, field):
    found = {}
    for major in (13, 15, 17):
        setting = pg_catalog.parse_table(pg_catalog.TABLES[major].TABLE).get(name)
        found[major] = None if setting is None else getattr(setting, field)
    assert found == DIFFERENCES[(name, field)]


def test_each_major_table_is_whole_sorted_and_of_its_major():
    for major, count in ((13, 332), (15, 354), (17, 381)):
        table = pg_catalog.TABLES[major]
        lines = table.TABLE.splitlines()
        assert table.MAJOR == major and lines[0] == '' and table.TABLE.endswith(' 0\n')
        assert len(lines) - 1 == count and lines[1:] == sorted(lines[1:])
        assert all(len(line.split(' ')) == 8 for line in lines[1:])


def _table_script():
    checkout = os.path.abspath(os.path.join(os.path.dirname(pg_settings.__file__), *['..'] * 4))
    path = os.path.join(checkout, 'scripts', 'pg-settings-table.py')
    spec = importlib.util.spec_from_file_location('pg_settings_table', path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_shipped_tables_are_what_the_script_writes_from_them(tmp_path):
    """pg_settings.py is the script's output byte for byte, and a major it writes again
    replaces that one table only."""
    script = _table_script()
    with open(pg_settings.__file__) as handle:
        shipped = handle.read()
    tables = script.load_tables(pg_settings.__file__)
    assert script.render(tables) == shipped
    lines = list(tables[15][1])
    lines.remove([line for line in lines if line.startswith('work_mem ')][0])
    lines.append('zz_new_setting user bool - - - - 1')
    tables[15] = ('PostgreSQL 15.99 elsewhere', sorted(lines))
    written = tmp_path / 'pg_settings.py'
    written.write_text(script.render(tables))
    again = script.load_tables(str(written))
    assert again == tables
    assert '- work_mem' in written.read_text() and '+ zz_new_setting user bool - - - - 1' in written.read_text()


@pytest.mark.parametrize('major, name, known', [
    (13, 'stats_temp_directory', True), (15, 'stats_temp_directory', False),   # removed in 15
    (13, 'recursive_worktable_factor', False), (15, 'recursive_worktable_factor', True),
    (15, 'old_snapshot_threshold', True), (17, 'old_snapshot_threshold', False),
    (17, 'summarize_wal', True), (15, 'summarize_wal', False),
    (16, 'old_snapshot_threshold', True), (16, 'summarize_wal', True),  # 16: 15 and 17 merged
    (14, 'stats_temp_directory', True), (14, 'recursive_worktable_factor', True),
    (None, 'stats_temp_directory', True), (None, 'summarize_wal', True),  # unknown: every table
])
def test_a_name_is_known_to_the_tables_of_its_major(major, name, known):
    assert (pg_catalog.catalog_for(major).name_problem(name) is None) == known


def test_a_misspelt_name_is_refused_with_the_closest_one():
    for major in (13, 15, 16, 17, None):
        problem = pg_catalog.catalog_for(major).name_problem('wrok_mem')
        assert "no parameter 'wrok_mem'; did you mean 'work_mem'?" in problem
    assert 'PostgreSQL 16 has no parameter' in pg_catalog.catalog_for(16).name_problem('wrok_mem')
    assert 'tables of PostgreSQL 15 and 17' in pg_catalog.catalog_for(16).name_problem('wrok_mem')


def test_a_major_newer_than_every_table_refuses_no_name_but_checks_known_types():
    newer = pg_catalog.catalog_for(30)
    assert newer.name_problem('wrok_mem') is None
    assert 'is a boolean' in newer.problem('shared_buffers', True, 'on')
    assert newer.problem('io_method', 'worker', 'worker') is None


def test_merged_tables_keep_the_looser_range_and_every_enum_word():
    merged = pg_catalog.catalog_for(16).get('wal_compression')
    assert set(['pglz', 'lz4', 'zstd', 'on', 'off']) <= set(merged.enumvals)   # 15 and 17 agree
    # a type that changed between the tables is not checked at all (None), never refused
    first = pg_catalog.Setting('x', 'user', 'integer', None, 0, 10)
    second = pg_catalog.Setting('x', 'user', 'real', None, 0, 20)
    assert pg_catalog.merge([{'x': first}, {'x': second}])['x'].vartype is None
    widened = pg_catalog.merge([{'x': first}, {'x': pg_catalog.Setting('x', 'user', 'integer', None, 5, 20)}])['x']
    assert (widened.low, widened.high) == (0, 20)


def test_the_servers_own_list_wins_and_the_table_completes_it():
    catalog = pg_catalog.catalog_for(15, DESCRIBED, '/usr/lib/postgresql/15/bin/postgres')
    assert catalog.source.startswith('/usr/lib/postgresql/15/bin/postgres --describe-config')
    assert catalog.problem('brand_new_setting', '5', '5') is None          # only this build has it
    assert 'out of range' in catalog.problem('brand_new_setting', '11', '11')
    assert catalog.get('work_mem').unit == 'kB'                             # unit from the table
    assert 'out of range' in catalog.problem('work_mem', '32kB', '32kB')
    assert catalog.problem('application_name', 'x', 'x') is None           # not in the sample: from the table
    assert 'no parameter' in catalog.problem('shared_buffers', '1GB', '1GB')  # in the table's sample, not in this build
    assert 'not a boolean' in catalog.problem('fsync', 'enabled', 'enabled')


@pytest.mark.parametrize('value, quoted', [
    ('1.5GB', "'1.5GB'"),       # bare, the lexer ends the number at "G": syntax error
    ('64.0kB', "'64.0kB'"), ('1e3', "'1e3'"), ('128MB', '128MB'), ('0.9', '0.9'), ('-1', '-1'), ('0x10', '0x10'),
    ('/var/run/postgresql', "'/var/run/postgresql'"), ('on', 'on'), ('café', "'café'"), ("it's", "'it''s'"),
])
def test_values_are_quoted_unless_the_lexer_reads_them_as_one_token(value, quoted):
    assert pgconf.format_value(value) == quoted
    assert pgconf.parse('x = %s\n' % quoted)[0].value == value


def test_an_octal_escape_reads_as_the_server_reads_it():
    assert pgconf.parse("x = 'a\\101\\n'\n")[0].value == 'aA\n'


# ------------------------------------------------------------------ the module's plan
CONF = '/etc/postgresql/15/main/postgresql.conf'


def _plan(root, params, path=CONF, check_mode=False):
    return db_parameter_plan('postgresql', params, registry.Context(check_mode=check_mode), path=path, root=root,
                             read_live=False)


@pytest.fixture
def host(tmp_path):
    root = str(tmp_path)
    put(root, CONF, "shared_buffers = 128MB\nwork_mem = 4MB\n")
    put(root, '/etc/postgresql/9.6/main/postgresql.conf', 'work_mem = 4MB\n')
    put(root, '/srv/pg/postgresql.conf', "data_directory = '/srv/pgdata'\n")
    put(root, '/srv/pgdata/PG_VERSION', '13\n')
    return root


@pytest.mark.parametrize('params, said', [
    ({'wrok_mem': '8MB'}, ["params 'wrok_mem'", "did you mean 'work_mem'", 'PostgreSQL 15']),
    ({'shared_buffers': True}, ["params 'shared_buffers'", 'True is a boolean', 'amount of memory']),
    ({'shared_buffers': '1kB'}, ["params 'shared_buffers'", 'out of range']),
    ({'max_connections': '100MB'}, ["params 'max_connections'", 'takes no unit']),
    ({'wal_level': 'full'}, ["params 'wal_level'", 'minimal, replica, logical']),
    ({'block_size': 16384}, ["params 'block_size'", 'fixed when PostgreSQL is built']),
    ({'work_mem': '16MB', 'huge_pages': 'maybe'}, ["params 'huge_pages'", 'off, on, try']),
])
def test_refused_before_anything_is_touched(host, params, said):
    before = digest(host)
    for check_mode in (True, False):
        with pytest.raises(InputError) as caught:
            _plan(host, params, check_mode=check_mode).run()
        for text in said:
            assert text in str(caught.value)
    assert digest(host) == before


def test_the_major_comes_from_pg_version_in_the_data_directory(host):
    with pytest.raises(InputError) as caught:
        _plan(host, {'recursive_worktable_factor': '10'}, path='/srv/pg/postgresql.conf').run()
    assert 'PostgreSQL 13 has no parameter' in str(caught.value)   # added in 15
    result = _plan(host, {'work_mem': '8MB'}, path='/srv/pg/postgresql.conf', check_mode=True).run()
    assert result.settings[0].status == 'drift'


def test_a_major_older_than_every_table_refuses_no_name(host):
    result = _plan(host, {'checkpoint_segments': '16'}, path='/etc/postgresql/9.6/main/postgresql.conf',
                   check_mode=True).run()
    assert result.settings[0].status == 'drift'


def test_the_installed_server_is_asked_on_the_running_system(host, monkeypatch):
    calls = []

    def runner(argv, data=None, environ=None):
        calls.append(argv)
        return 0, DESCRIBED, ''
    conf = os.path.join(host, CONF.lstrip('/'))
    plan = db_parameter_plan('postgresql', {'brand_new_setting': 3}, registry.Context(runner=runner, check_mode=True),
                             path=conf, read_live=False, find_server=lambda major: '/opt/pg/bin/postgres')
    result = plan.run()
    assert calls == [['/opt/pg/bin/postgres', '--describe-config']]
    assert result.settings[0].status == 'drift'
    with pytest.raises(InputError) as caught:
        db_parameter_plan('postgresql', {'brand_new_setting': 30}, registry.Context(runner=runner, check_mode=True),
                          path=conf, read_live=False, find_server=lambda major: '/opt/pg/bin/postgres').run()
    assert 'out of range for brand_new_setting: 0 to 10' in str(caught.value)   # the build's own range


def test_without_a_major_the_only_installed_server_is_asked(tmp_path):
    put(str(tmp_path), '/conf/postgresql.conf', 'work_mem = 4MB\n')

    def runner(argv, data=None, environ=None):
        return 0, DESCRIBED, ''
    for binary in ('/usr/lib/postgresql/15/bin/postgres', '/opt/pg/bin/postgres'):
        result = db_parameter_plan('postgresql', {'brand_new_setting': 3},
                                   registry.Context(runner=runner, check_mode=True),
                                   path=str(tmp_path / 'conf/postgresql.conf'), read_live=False,
                                   find_server=lambda major: binary).run()
        assert result.settings[0].status == 'drift'
