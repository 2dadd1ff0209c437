# -*- coding: utf-8 -*-
"""Values the database servers would refuse are refused before they are written."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile as pfile
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_catalog

PG15 = pg_catalog.catalog_for(15)  # the shipped table; test_pg_catalog_server.py
#                                    holds the same checks to the real server


@pytest.mark.parametrize('name, value', [
    ('work_mem', '4MB'), ('work_mem', '4096'), ('work_mem', '1GB'), ('work_mem', '64kB'), ('work_mem', '2 MB'),
    ('shared_buffers', '16384'), ('shared_buffers', '1.5GB'), ('shared_buffers', '128kB'),
    ('maintenance_work_mem', '1TB'), ('effective_cache_size', '48GB'), ('wal_buffers', '-1'),
    ('autovacuum_work_mem', '-1'), ('max_wal_size', '4GB'), ('huge_page_size', '0'),
    ('checkpoint_timeout', '5min'), ('checkpoint_timeout', '300'), ('statement_timeout', '0'),
    ('statement_timeout', '10 s'), ('log_min_duration_statement', '-1'), ('deadlock_timeout', '1s'),
    ('huge_pages', 'try'), ('huge_pages', 'on'), ('huge_pages', 'OFF'), ('huge_pages', 'true'),
    ('wal_level', 'replica'), ('wal_level', 'Logical'), ('synchronous_commit', 'remote_apply'),
    ('synchronous_commit', 'off'), ('wal_compression', 'lz4'), ('wal_sync_method', 'fdatasync'),
    ('fsync', 'on'), ('fsync', 'yes'), ('fsync', '0'), ('fsync', 't'), ('fsync', 'of'), ('jit', 'FALSE'),
    ('max_connections', '200'), ('effective_io_concurrency', '200'), ('random_page_cost', '1.1'),
    ('checkpoint_completion_target', '0.9'), ('random_page_cost', '4'),
    ('max_connections', '100.5'),  # the server rounds a fraction (postgres -C max_connections: 100)
    ('log_line_prefix', '%m [%p] # '), ('search_path', '"$user", public'), ('my.custom', 'a # b'),
])
def test_postgresql_accepts_what_the_server_takes(name, value):
    assert PG15.problem(name, value, value) is None


@pytest.mark.parametrize('name, value, why', [
    ('work_mem', '4MB # c', 'not a memory value'),
    ('work_mem', '4mb', 'case-sensitive'),
    ('work_mem', '4 M', 'not a memory value'),
    ('work_mem', '10ms', 'not a memory value'),
    ('work_mem', 'lots', 'not a memory value'),
    ('work_mem', '32', 'out of range'),
    ('work_mem', '-1', 'out of range'),
    ('shared_buffers', '-5', 'out of range'),
    ('shared_buffers', '1GB; 2GB', 'not a memory value'),
    ('checkpoint_timeout', '5', 'out of range'),
    ('checkpoint_timeout', '2d', 'out of range'),
    ('checkpoint_timeout', '5MB', 'not a time value'),
    ('huge_pages', 'maybe', 'off, on, try'),
    ('huge_pages', 'on # why', 'not one of'),
    ('huge_pages', 'of', 'not one of'),             # enums take no boolean prefixes
    ('synchronous_commit', 'tr', 'not one of'),
    ('wal_compression', 'ye', 'not one of'),
    ('wal_level', 'full', 'minimal'),
    ('fsync', 'o', 'not a boolean'),
    ('fsync', 'enabled', 'not a boolean'),
    ('max_connections', '0', 'out of range'),
    ('max_connections', '100.5MB', 'takes no unit'),
    ('shared_buffers', True, 'is a boolean'),
    ('wrok_mem', '4MB', "did you mean 'work_mem'"),
    ('block_size', '16384', 'fixed when PostgreSQL is built'),
    ('random_page_cost', 'cheap', 'not a number'),
    ('checkpoint_completion_target', '1.5', 'out of range'),
])
def test_postgresql_refuses_what_the_server_refuses(name, value, why):
    problem = PG15.problem(name, value, ('on' if value else 'off') if isinstance(value, bool) else value)
    assert problem is not None and why in problem


@pytest.mark.parametrize('value', ["it's", 'C:\\temp\\new', "a\\'b", 'trailing\\', '# not a comment', "''"])
def test_postgresql_quoted_values_read_back_as_written(value):
    text = 'x = %s\n' % pgconf.format_value(value)
    assert pgconf.parse(text)[0].value == value


def test_postgresql_value_keeps_the_quotes_of_the_line_it_replaces():
    quoted, bare = pgconf.parse("shared_buffers = '64MB'\nwork_mem = 4MB\n")
    assert (quoted.quoted, bare.quoted) == (True, False)
    assert pgconf.format_value('128MB', like=quoted) == "'128MB'"
    assert pgconf.format_value('8MB', like=bare) == '8MB'


@pytest.mark.parametrize('name, value', [
    ('innodb_flush_method', 'O_DIRECT'), ('innodb_flush_method', 'o_direct'), ('innodb_flush_method', 'fsync'),
    ('innodb_flush_method', 'O_DIRECT_NO_FSYNC'), ('innodb_flush_method', 'O_DSYNC'),
    ('innodb_flush_method', 'littlesync'), ('innodb_flush_method', 'nosync'),
    ('innodb_buffer_pool_size', '48G'), ('innodb_buffer_pool_size', '512m'), ('innodb_buffer_pool_size', '134217728'),
    ('max_allowed_packet', '64M'), ('large_pages', 'ON'), ('large_pages', '1'), ('large_pages', 'true'),
    ('innodb_file_per_table', 'OFF'), ('max_connections', '500'), ('innodb_flush_log_at_trx_commit', '2'),
    ('innodb_doublewrite', 'DETECT_ONLY'), ('log_error', '/var/log/mysql/error.log'), ('sql_mode', 'a # b'),
    ('max_connections', '1'), ('max_connections', '100000'),   # both ends of the range are in it
    ('innodb_buffer_pool_size', '18446744073709551615'), ('innodb_io_capacity', '18446744073709551615'),
])
def test_mysql_accepts_what_the_server_takes(name, value):
    assert mycnf.value_problem(name, value) is None


@pytest.mark.parametrize('name, value, why', [
    ('innodb_flush_method', 'O_DIRECT # fast', 'not one of'),
    ('innodb_flush_method', 'direct', 'O_DIRECT_NO_FSYNC'),
    ('innodb_flush_method', 'O_DIRECT,fsync', 'not one of'),
    ('innodb_buffer_pool_size', '48 G', 'not a size'),
    ('innodb_buffer_pool_size', '1.5G', 'not a size'),
    ('innodb_buffer_pool_size', '48GB', 'not a size'),
    ('innodb_buffer_pool_size', '-1', 'not a size'),
    ('innodb_buffer_pool_size', '1K', 'out of range'),
    ('max_allowed_packet', '2G', 'out of range'),
    ('large_pages', 'yes please', 'not a boolean'),
    ('large_pages', 'enabled', 'not a boolean'),
    ('max_connections', '10K', 'not a whole number'),
    ('max_connections', '0', 'out of range'),
    ('max_connections', '100001', 'out of range'),
    ('innodb_buffer_pool_size', '18446744073709551616', 'out of range'),   # 2**64: above an unsigned 64-bit
    ('innodb_buffer_pool_size', '16E', 'out of range'),
    ('innodb_flush_log_at_trx_commit', '3', 'not one of'),
])
def test_mysql_refuses_what_the_server_refuses(name, value, why):
    problem = mycnf.value_problem(name, value)
    assert problem is not None and why in problem


@pytest.mark.parametrize('value', ['say "hi"', "it's", 'C:\\x', 'a # b', 'tab\there'])
def test_mysql_quoted_values_read_back_as_written(value):
    text = '[mysqld]\nx = %s\n' % mycnf.format_value(value)
    assert [item.value for item in mycnf.parse(text) if item.kind == 'option'] == [value]


def test_mysql_value_with_the_existing_lines_quote_switches_quote():
    like = [item for item in mycnf.parse('[mysqld]\nx = "a"\n') if item.kind == 'option'][0]
    assert mycnf.format_value('say "hi"', like=like) == "'say \"hi\"'"


@pytest.mark.parametrize('name, values', [
    ('filesystemio_options', ['SETALL']), ('filesystemio_options', ['setall']), ('filesystemio_options', ['directIO']),
    ('filesystemio_options', ['ASYNCH']), ('filesystemio_options', ['none']), ('disk_asynch_io', ['TRUE']),
    ('disk_asynch_io', ['false']), ('use_large_pages', ['ONLY']), ('sga_target', ['48G']), ('sga_target', ['0']),
    ('pga_aggregate_target', ['10737418240']), ('processes', ['1500']), ('db_block_size', ['8192']),
    ('processes', ['6']), ('open_cursors', ['0']), ('db_writer_processes', ['256']),   # the bounds themselves
    ('control_files', ['/u02/a.ctl', '/u03/b.ctl']), ('db_name', ['orcl']),
])
def test_oracle_accepts_what_the_instance_takes(name, values):
    assert pfile.value_problem(name, values) is None


@pytest.mark.parametrize('name, values, why', [
    ('filesystemio_options', ['SETALL # direct'], 'not one of'),
    ('filesystemio_options', ['direct'], 'directIO'),
    ('filesystemio_options', ['SETALL', 'ASYNCH'], 'one value'),
    ('disk_asynch_io', ['yes'], 'TRUE, FALSE'),
    ('use_large_pages', ['MAYBE'], 'AUTO_ONLY'),
    ('sga_target', ['48 G'], 'not a size'),
    ('sga_target', ['48GB'], 'not a size'),
    ('sga_target', ['-1'], 'not a size'),
    ('processes', ['2'], 'out of range'),
    ('processes', ['5'], 'out of range for processes (6 to 2147483647)'),
    ('processes', ['1K'], 'not a whole number'),
    ('db_block_size', ['1000'], 'not one of'),
])
def test_oracle_refuses_what_the_instance_refuses(name, values, why):
    problem = pfile.value_problem(name, values)
    assert problem is not None and why in problem


def test_mysql_value_absent_from_the_file_is_never_the_same():
    assert mycnf.same_value('O_DIRECT', 'o_direct')
    assert not mycnf.same_value('O_DIRECT', 'O_DIRECT', have_present=False)


def test_mysql_value_with_both_quotes_cannot_be_written():
    with pytest.raises(mycnf.CnfError, match='both kinds of quote'):
        mycnf.format_value('it\'s "x"')


def test_postgresql_entry_shows_where_it_was_read():
    entry = pgconf.parse('work_mem = 64MB\n', 'postgresql.conf')[0]
    assert repr(entry).startswith("Entry(work_mem='64MB' @postgresql.conf:")
