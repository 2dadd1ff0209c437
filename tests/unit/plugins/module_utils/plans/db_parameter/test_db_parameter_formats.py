# -*- coding: utf-8 -*-
"""Oracle pfile, postgresql.conf and my.cnf parsers on real-world samples and the documented rules."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import apply_edits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile as pfile
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'fixtures', 'db')
DBS = 'oracle/u01/app/oracle/product/19.0.0/dbhome_1/dbs'


def fixture(path):
    with open(os.path.join(FIXTURES, path)) as handle:
        return handle.read()


# ---------------------------------------------------------------- Oracle pfile
def test_create_pfile_sample_parses_with_instance_and_star_entries():
    entries = pfile.parse(fixture(DBS + '/initorcl.ora'), 'initorcl.ora')
    assert len(entries) == 31
    cache = [e for e in entries if e.name == '__db_cache_size'][0]
    assert (cache.scope, cache.values) == ('orcl', ['1207959552'])
    base = [e for e in entries if e.name == '__oracle_base'][0]
    assert base.values == ['/u01/app/oracle']  # the trailing "#ORACLE_BASE set from environment" is a comment
    assert pfile.resolve(entries, 'control_files', 'orcl')[0] == [
        '/u01/app/oracle/oradata/ORCL/control01.ctl', '/u01/app/oracle/oradata/ORCL/control02.ctl']
    assert pfile.resolve(entries, 'dispatchers', 'orcl')[0] == ['(PROTOCOL=TCP) (SERVICE=orclXDB)']
    assert pfile.resolve(entries, '__db_cache_size', 'orcl')[0] == ['1207959552']
    assert pfile.resolve(entries, '__db_cache_size', 'orcl2') == (None, [])


def test_hand_edited_sample_follows_every_documented_rule():
    entries = pfile.parse(fixture(DBS + '/initTEST.ora'), 'initTEST.ora')
    by_name = dict((e.name, e) for e in entries)
    # several parameters on one line, names case-insensitive
    assert by_name['sga_target'].values == ['2G'] and by_name['pga_aggregate_target'].values == ['512M']
    assert not by_name['sga_target'].alone
    # parenthesised list over a backslash continuation
    control = by_name['control_files']
    assert control.parenthesized
    assert control.values == ['/u02/oradata/TEST/control01.ctl', '/u03/oradata/TEST/control02.ctl']
    # consecutive lines of one parameter add up
    assert pfile.resolve(entries, 'rollback_segments', 'TEST')[0] == ['rbs01', 'rbs02']
    # a backslash escapes a special character; quotes keep blanks
    assert by_name['db_domain'].values == ['example#test.com']
    assert by_name['nls_territory'].values == ['CZECH REPUBLIC'] and by_name['nls_territory'].quote == "'"
    assert by_name['ifile'].values == ['/u01/app/oracle/admin/TEST/pfile/common.ora']


@pytest.mark.parametrize('text, name, sid, values', [
    ('a = x\nb = 1\na = y\n', 'a', None, ['y']),                       # separate later line replaces
    ('a = x\na = y\n', 'a', None, ['x', 'y']),                         # consecutive lines add up
    ('a = x, y z\n', 'a', None, ['x', 'y', 'z']),                      # commas or blanks without parentheses
    ("orcl.a='mine'\n*.a='all'\n", 'a', 'orcl', ['mine']),             # the instance's own entry wins
    ("orcl.a='mine'\n*.a='all'\n", 'a', 'other', ['all']),
    ("*.A='x' # comment 'with quote\n", 'a', None, ['x']),
    ('a = "it\'s"\n', 'a', None, ["it's"]),
    ('a = (x,\\\ny)\n', 'a', None, ['x', 'y']),
    ('a = pre\\\nfix\n', 'a', None, ['prefix']),                       # the continued line has no leading blank
])
def test_resolution_rules(text, name, sid, values):
    assert pfile.resolve(pfile.parse(text), name, sid)[0] == values


def test_a_file_ending_in_a_word_without_newline_is_read_to_its_end():
    assert pfile.resolve(pfile.parse('*.processes = 300'), 'processes')[0] == ['300']
    assert pfile.resolve(pfile.parse('db_name = orcl\nopen_cursors=300'), 'open_cursors')[0] == ['300']


def test_last_group_is_the_last_run_of_consecutive_lines():
    entries = pfile.parse('a = x\nb = 1\na = y\na = z\n')
    assert [(entry.values, entry.line) for entry in pfile.last_group(entries, 'a', '*')] == [(['y'], 3), (['z'], 4)]
    assert [(entry.values, entry.line) for entry in pfile.last_group(entries, 'b', '*')] == [(['1'], 2)]
    assert pfile.last_group(entries, 'c', '*') == []


@pytest.mark.parametrize('text, message', [
    ("a = 'x\n", 'quote'),
    ('a = "x\n', 'quote'),
    ('a x\n', 'expected "="'),
    ('a\n', 'expected "="'),
    ('a =\n', 'no value'),
    ('a = (x, y\n', 'not closed'),
    ('9a = 1\n', 'not a parameter name'),
    ('bad-sid!.a = 1\n', 'SID prefix'),
    ("= 1\n", 'expected a parameter name'),
    ("a = 'x", 'quote'),                  # the file ends inside the quote
])
def test_pfile_errors_name_the_line(text, message):
    with pytest.raises(pfile.PfileError) as error:
        pfile.parse('# first\n' + text, 'init.ora')
    assert message in str(error.value) and 'init.ora line 2' in str(error.value)


def test_pfile_value_formatting_follows_create_pfile():
    assert pfile.format_entry('*', 'filesystemio_options', ['SETALL']) == "*.filesystemio_options='SETALL'\n"
    assert pfile.format_entry('*', 'disk_asynch_io', ['TRUE']) == '*.disk_asynch_io=TRUE\n'
    assert pfile.format_entry('orcl', 'sga_target', ['1536m']) == 'orcl.sga_target=1536m\n'
    assert pfile.format_entry('*', 'control_files', ['/a', '/b']) == "*.control_files='/a','/b'\n"
    assert pfile.format_values(["it's"]) == '"it\'s"'
    with pytest.raises(pfile.PfileError):
        pfile.format_values(['both \' and "'])


def test_pfile_values_compare_as_oracle_reads_them():
    assert pfile.same_values(['1536m'], ['1610612736'])
    assert pfile.same_values(['setall'], ['SETALL'])
    assert pfile.same_values(['TRUE'], ['true'])
    assert not pfile.same_values(['/u01/A'], ['/u01/a'])
    assert not pfile.same_values(['a'], ['a', 'b'])
    assert not pfile.same_values(None, ['a'])


# ---------------------------------------------------------------- postgresql.conf
def test_postgresql_conf_sample_parses():
    entries = pgconf.parse(fixture('postgresql/etc/postgresql/15/main/postgresql.conf'), 'postgresql.conf')
    values = dict((e.name, e.value) for e in entries)
    assert values['shared_buffers'] == '128MB'
    assert values['effective_io_concurrency'] == '200'          # "=" is optional
    assert values['log_line_prefix'] == '%m [%p] %q%u@%d '      # quoted, with the comment after it
    assert values['search_path'] == '"$user", public'
    assert values['application_name'] == "it's ok"               # doubled quote
    assert values['include_dir'] == 'conf.d'
    assert 'huge_pages' not in values and 'listen_addresses' not in values   # commented defaults


@pytest.mark.parametrize('name, have, want, unit, same', [
    ('shared_buffers', '128MB', '131072kB', None, True),
    ('shared_buffers', '16384', '128MB', None, True),        # 8kB pages
    ('shared_buffers', '16384', '128MB', '8kB', True),
    ('work_mem', '4096', '4MB', 'kB', True),
    ('shared_buffers', '1GB', '1024MB', None, True),
    ('shared_buffers', '1GB', '1000MB', None, False),
    ('statement_timeout', '1min', '60s', None, True),
    ('statement_timeout', '1min', '60000', 'ms', True),
    ('huge_pages', 'on', 'On', None, True),
    ('fsync', 'on', 'true', None, True),
    ('fsync', 'off', 'true', None, False),
    ('huge_pages', 'try', 'on', None, False),
    ('search_path', '"$user", public', '"$user",public', None, False),
    ('anything', None, 'x', None, False),
])
def test_postgresql_values_compare_with_units(name, have, want, unit, same):
    assert pgconf.same_value(name, have, want, base_unit=unit) is same


@pytest.mark.parametrize('text, message', [
    ("work_mem = '4MB\n", 'quote is not closed'),
    ('work_mem = 4MB extra\n', 'unexpected'),
    ('work_mem =\n', 'no value'),
    ('- = 1\n', 'syntax error'),
    ('work_mem = 4"MB\n', 'stray quote'),
])
def test_postgresql_errors_name_the_line(text, message):
    with pytest.raises(pgconf.ConfError) as error:
        pgconf.parse('# x\n' + text, 'postgresql.conf')
    assert message in str(error.value) and 'line 2' in str(error.value)


def test_postgresql_value_formatting():
    assert pgconf.format_entry('huge_pages', 'on') == 'huge_pages = on\n'
    assert pgconf.format_entry('shared_buffers', '4GB') == 'shared_buffers = 4GB\n'
    assert pgconf.format_entry('archive_command', "cp '%p' /a") == "archive_command = 'cp ''%p'' /a'\n"
    assert pgconf.format_entry('archive_command', '') == "archive_command = ''\n"


# ---------------------------------------------------------------- my.cnf
def test_mycnf_sample_parses_groups_and_directives():
    items = mycnf.parse(fixture('mysql/etc/mysql/my.cnf'), 'my.cnf')
    options = [(i.group, i.key, i.value) for i in items if i.kind == 'option']
    assert ('client', 'port', '3306') in options
    assert ('mysqld', 'skip_external_locking', None) in options
    assert ('mysqld', 'innodb_buffer_pool_size', '1G') in options      # dashes, trailing comment
    assert ('mysqld', 'log_error', '/var/log/mysql/error.log') in options   # quotes taken off
    assert ('mysqld-8.0', 'innodb_numa_interleave', '1') in options   # loose- prefix
    assert ('mysqldump', 'quick', None) in options
    assert [(i.kind, i.path) for i in items if i.kind.startswith('include')] == [
        ('includedir', '/etc/mysql/conf.d/'), ('includedir', '/etc/mysql/mysql.conf.d/')]


@pytest.mark.parametrize('group, version, reads', [
    ('mysqld', None, True), ('server', '8.0.36', True), ('mysqld-8.0', '8.0.36', True),
    ('mysqld-5.7', '8.0.36', False), ('mysqld-8.0', None, True), ('client', None, False),
    ('mysqldump', None, False), ('mariadb-10.11', '10.11.6-MariaDB', True),
])
def test_mycnf_server_groups(group, version, reads):
    assert mycnf.server_reads(group, version) is reads


@pytest.mark.parametrize('text, message', [
    ('port = 3306\n', 'before any [group]'),
    ('[mysqld]\nlog_error = "/var/log\n', 'not closed'),
    ('[mysqld\n', 'bad group'),
    ('[mysqld]\n!includes /x\n', 'bad directive'),
    ('[mysqld]\nbad name = 1\n', 'not an option name'),
    ('[mysqld]\n= 1\n', "my.cnf line 2: '' is not an option name"),   # a value without a name
])
def test_mycnf_errors(text, message):
    with pytest.raises(mycnf.CnfError) as error:
        mycnf.parse(text, 'my.cnf')
    assert message in str(error.value)


@pytest.mark.parametrize('have, want, same', [
    ('1G', '1073741824', True), ('1024M', '1G', True), ('O_DIRECT', 'o_direct', True), (None, 'ON', True),
    ('1', 'ON', True), ('OFF', '0', True), ('2', '1', False), ('fsync', 'O_DIRECT', False),
])
def test_mycnf_values_compare(have, want, same):
    assert mycnf.same_value(have, want) is same


# ---------------------------------------------------------------- edits
def test_apply_edits_without_edits_is_byte_identical_for_every_sample():
    for folder, names, files in os.walk(FIXTURES):
        for name in files:
            with open(os.path.join(folder, name), 'rb') as handle:
                raw = handle.read().decode('utf-8')
            assert apply_edits(raw, [], []) == raw


def test_apply_edits_keeps_insert_order_at_one_point():
    text = 'a\nb\n'
    assert apply_edits(text, [(2, 2, 'x\n', 1), (2, 2, 'y\n', 2)], ['z\n']) == 'a\nx\ny\nb\nz\n'
    assert apply_edits('a', [], ['z\n']) == 'a\nz\n'


@pytest.mark.parametrize('newline', ['\n', '\r\n'])
def test_pfile_error_after_a_continued_line_names_its_own_line(newline):
    text = 'a = (x, \\' + newline + 'y)' + newline + 'b x' + newline
    with pytest.raises(pfile.PfileError) as error:
        pfile.parse(text, 'init.ora')
    assert 'init.ora line 3' in str(error.value)


def _option_edits(text, value):
    items = [i for i in mycnf.parse(text, 'my.cnf') if i.kind == 'option']
    return items, [apply_edits(text, [mycnf.edit_for(i, value)[1:] + (1,)], []) for i in items]


def test_mycnf_group_line_may_end_in_a_comment():
    items, edited = _option_edits('[mysqld]  # the server\nport = 3306\n[client];x\nport = 1\n', '3307')
    assert [(i.group, i.key, i.value) for i in items] == [('mysqld', 'port', '3306'), ('client', 'port', '1')]
    assert edited == ['[mysqld]  # the server\nport = 3307\n[client];x\nport = 1\n',
                      '[mysqld]  # the server\nport = 3306\n[client];x\nport = 3307\n']


def test_mycnf_empty_value_before_a_comment_is_replaced_where_it_stands():
    text = '[mysqld]\nsql_mode =  # set below\n'
    items, edited = _option_edits(text, 'STRICT_ALL_TABLES')
    assert (items[0].value, items[0].value_start, items[0].value_end) == ('', text.index('#'), text.index('#'))
    assert edited == ['[mysqld]\nsql_mode =  STRICT_ALL_TABLES# set below\n']


def test_mycnf_escaped_quote_does_not_close_a_quoted_value():
    text = '[mysqld]\ninit_connect = "SET NAMES \\"utf8mb4\\""  # c\n'
    items, edited = _option_edits(text, 'SET NAMES latin1')
    assert items[0].value.startswith('SET NAMES ') and items[0].value.endswith('utf8mb4\\"')
    assert text[items[0].value_start:items[0].value_end] == '"SET NAMES \\"utf8mb4\\""'
    assert edited == ['[mysqld]\ninit_connect = "SET NAMES latin1"  # c\n']


@pytest.mark.parametrize('text, values, edited', [
    # a quoted value continued with a backslash at the end of the line
    ("a = 'x\\\ny'\nb = 2\n", ['xy'], "a = 'z'\nb = 2\n"),
    # a word continued over a CRLF line end (the file from a Windows editor)
    ('a = x\\\r\ny\r\nb = 2\r\n', ['xy'], 'a = z\r\nb = 2\r\n'),
])
def test_pfile_continued_values_are_read_whole_and_replaced_whole(text, values, edited):
    entries = pfile.parse(text, 'init.ora')
    assert [(e.name, e.values, e.line) for e in entries] == [('a', values, 1), ('b', ['2'], 3)]
    edits = pfile.edits_for(entries, 'a', '*', ['z'])
    assert apply_edits(text, [edit[1:] + (1,) for edit in edits], []) == edited
