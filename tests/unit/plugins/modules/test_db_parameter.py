# -*- coding: utf-8 -*-
"""db_parameter: real-world files edited in place, check mode, idempotence, clients, bad input."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import stat

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import postgresql as dbp_postgresql
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import plain_value
from ansible_collections.dbhost.tuning.plugins.modules import db_parameter
from ansible_collections.dbhost.tuning.tests.unit.helpers import db_parameter_plan, digest, put, read, records

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'db')
HOME = '/u01/app/oracle/product/19.0.0/dbhome_1'
ORCL = HOME + '/dbs/initorcl.ora'
TEST = HOME + '/dbs/initTEST.ora'
COMMON = '/u01/app/oracle/admin/TEST/pfile/common.ora'
PGCONF = '/etc/postgresql/15/main/postgresql.conf'
PGMEM = '/etc/postgresql/15/main/conf.d/10-memory.conf'
AUTO = '/var/lib/postgresql/15/main/postgresql.auto.conf'
MYCNF = '/etc/mysql/my.cnf'
TUNING = '/etc/mysql/mysql.conf.d/tuning.cnf'


def tree(tmp_path, engine):
    root = str(tmp_path / engine)
    shutil.copytree(os.path.join(FIXTURES, engine), root)
    return root


def fixture(engine, path):
    return read(os.path.join(FIXTURES, engine), path)


class FakeRunner(object):
    """Answers client commands from recorded output; remembers what was asked."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def __call__(self, argv, data=None, environ=None):
        self.calls.append((list(argv), data, environ))
        return self.answer(list(argv), data, self)


def plan(engine, params, root='/', check_mode=False, runner=None, which=None, **options):
    # No server binary unless a test gives one: the recorded runners answer psql only.
    options.setdefault('find_server', lambda major: None)
    which = which or (lambda name: '/usr/bin/' + name if runner else None)
    return db_parameter_plan(engine, params, registry.Context(check_mode=check_mode, runner=runner, bin_path=which),
                             root=root, euid=1000, **options)


# ---------------------------------------------------------------- Oracle pfile
def test_pfile_gets_setall_like_create_pfile_writes_it(tmp_path, run_module):
    root = tree(tmp_path, 'oracle')
    result = run_module(db_parameter, {'engine': 'oracle', 'path': ORCL, 'root': root,
                                       'params': {'filesystemio_options': 'SETALL'}}, diff=True)
    assert read(root, ORCL) == fixture('oracle', ORCL) + "*.filesystemio_options='SETALL'\n"
    record = records(result)['filesystemio_options']
    assert result['changed'] is True and result['restart_required'] is True
    assert record['status'] == 'pending_restart' and record['persisted'] == 'SETALL'
    assert record['live'] is None and 'live value unknown' in record['detail']
    assert result['diff'][0]['before_header'] == ORCL
    again = run_module(db_parameter, {'engine': 'oracle', 'path': ORCL, 'root': root,
                                      'params': {'FILESYSTEMIO_OPTIONS': "'SETALL'"}})
    assert again['changed'] is False and records(again)['filesystemio_options']['status'] == 'ok'
    assert read(root, ORCL).count('filesystemio_options') == 1


def test_pfile_check_mode_changes_nothing(tmp_path, run_module):
    root = tree(tmp_path, 'oracle')
    before = digest(root)
    result = run_module(db_parameter, {'engine': 'oracle', 'path': TEST, 'root': root,
                                       'params': {'filesystemio_options': 'SETALL', 'disk_asynch_io': True}},
                        check_mode=True, diff=True)
    assert digest(root) == before
    assert result['changed'] is True
    assert set(s['status'] for s in result['settings']) == set(['drift'])
    assert sorted(d['before_header'] for d in result['diff']) == sorted([TEST, COMMON])


def test_hand_edited_pfile_is_edited_where_each_value_wins(tmp_path, run_module):
    root = tree(tmp_path, 'oracle')
    params = {'filesystemio_options': 'SETALL', 'disk_asynch_io': True, 'rollback_segments': ['rbs01', 'rbs09'],
              'control_files': ['/u02/oradata/TEST/control01.ctl', '/u04/oradata/TEST/control03.ctl'],
              'pga_aggregate_target': '1G', 'sga_target': '2048M'}
    result = run_module(db_parameter, {'engine': 'oracle', 'path': TEST, 'root': root, 'params': params})
    expected = fixture('oracle', TEST)
    expected = expected.replace('filesystemio_options = none', 'filesystemio_options = SETALL')
    expected = expected.replace('PGA_AGGREGATE_TARGET = 512M', 'PGA_AGGREGATE_TARGET = 1G')
    expected = expected.replace('rollback_segments = rbs01\nrollback_segments = rbs02\n',
                                'rollback_segments = rbs01,rbs09\n')
    expected = expected.replace('("/u02/oradata/TEST/control01.ctl", \\\n"/u03/oradata/TEST/control02.ctl")',
                                '("/u02/oradata/TEST/control01.ctl", "/u04/oradata/TEST/control03.ctl")')
    assert read(root, TEST) == expected
    assert read(root, COMMON) == fixture('oracle', COMMON).replace('disk_asynch_io=FALSE', 'disk_asynch_io=TRUE')
    by_name = records(result)
    assert by_name['sga_target']['status'] == 'ok'          # 2G is 2048M
    assert by_name['disk_asynch_io']['target'] == COMMON
    assert by_name['rollback_segments']['persisted'] == 'rbs01,rbs09'
    again = run_module(db_parameter, {'engine': 'oracle', 'path': TEST, 'root': root, 'params': params})
    assert again['changed'] is False and all(s['status'] == 'ok' for s in again['settings'])


def test_instance_entry_shadows_star_entry(tmp_path, run_module):
    root = tree(tmp_path, 'oracle')
    path = os.path.join(root, ORCL.lstrip('/'))
    with open(path, 'a') as handle:
        handle.write("orcl.filesystemio_options='ASYNCH'\n")
    result = run_module(db_parameter, {'engine': 'oracle', 'path': ORCL, 'root': root,
                                       'params': {'filesystemio_options': 'SETALL'}})
    assert result['failed'] is True and 'shadowed' in result['msg']
    record = records(result)['filesystemio_options']
    assert record['status'] == 'shadowed' and 'orcl.filesystemio_options' in record['detail']
    own = run_module(db_parameter, {'engine': 'oracle', 'path': ORCL, 'root': root, 'sid': 'orcl',
                                    'params': {'filesystemio_options': 'SETALL'}})
    assert records(own)['filesystemio_options']['status'] == 'pending_restart'
    assert read(root, ORCL).endswith("orcl.filesystemio_options='SETALL'\n*.filesystemio_options='SETALL'\n")


def write_fake_sqlplus(home, spfile_value='none', live_value='none', fail=False):
    folder = os.path.join(home, 'bin')
    os.makedirs(folder)
    script = os.path.join(folder, 'sqlplus')
    alter = 'echo "ORA-02065: illegal option for ALTER SYSTEM"; exit 1' if fail else 'touch "$0.altered"; exit 0'
    with open(script, 'w') as handle:
        handle.write('''#!/bin/sh
# Recorded answers of sqlplus -S / as sysdba for v$parameter / v$spparameter queries.
input=$(cat)
printf '%%s\\n' "ARGS $* SID=$ORACLE_SID HOME=$ORACLE_HOME" "$input" >> "$0.log"
case "$input" in
  *"ALTER SYSTEM"*) %s ;;
esac
if [ -e "$0.altered" ]; then value=SETALL; else value=%s; fi
echo "LIVE|filesystemio_options|FALSE|%s"
echo "SPFILE|*|filesystemio_options|$value"
echo "SPFILEPATH|%s/dbs/spfileorcl.ora"
''' % (alter, spfile_value, live_value, home))
    os.chmod(script, stat.S_IRWXU)
    return script


def test_spfile_through_sqlplus(tmp_path, run_module):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    sqlplus = write_fake_sqlplus(home)
    args = {'engine': 'oracle', 'oracle_home': home, 'oracle_sid': 'orcl', 'params': {'filesystemio_options': 'SETALL'}}
    check = run_module(db_parameter, args, check_mode=True)
    assert not os.path.exists(sqlplus + '.altered')
    assert records(check)['filesystemio_options']['status'] == 'drift'
    result = run_module(db_parameter, args)
    record = records(result)['filesystemio_options']
    assert result['changed'] is True and result['restart_required'] is True
    assert record['status'] == 'pending_restart' and record['persisted'] == 'SETALL' and record['live'] == 'none'
    assert record['target'] == home + '/dbs/spfileorcl.ora'
    with open(sqlplus + '.log') as handle:
        log = handle.read()
    assert "ALTER SYSTEM SET filesystemio_options='SETALL' SCOPE=SPFILE SID='*';" in log
    assert 'ARGS -S -L / as sysdba SID=orcl HOME=%s' % home in log
    assert 'WHENEVER SQLERROR EXIT FAILURE' in log
    again = run_module(db_parameter, args)
    assert again['changed'] is False and again['restart_required'] is True
    assert records(again)['filesystemio_options']['status'] == 'pending_restart'
    # the spfile is not a file a revert can write back: the baseline says so, with the value before
    with open(str(baseline.location('/'))) as handle:
        kept = json.load(handle)
    note = kept['unsupported']['db_parameter oracle spfile %s/dbs/spfileorcl.ora' % home]
    assert 'before: filesystemio_options=none' in note['detail'] and note['kind'] == 'db_parameter'


def test_spfile_refused_by_the_instance_fails_the_task(tmp_path, run_module):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    write_fake_sqlplus(home, fail=True)
    result = run_module(db_parameter, {'engine': 'oracle', 'oracle_home': home, 'oracle_sid': 'orcl',
                                       'params': {'filesystemio_options': 'SETALL'}})
    assert result['failed'] is True and 'ORA-02065' in result['msg']
    assert records(result)['filesystemio_options']['status'] == 'failed'


def test_spfile_without_sqlplus_says_so(tmp_path, run_module):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    with open(os.path.join(home, 'dbs', 'spfileorcl.ora'), 'wb') as handle:
        handle.write(b'\x00binary spfile')
    result = run_module(db_parameter, {'engine': 'oracle', 'oracle_home': home, 'oracle_sid': 'orcl',
                                       'params': {'filesystemio_options': 'SETALL'}})
    record = records(result)['filesystemio_options']
    assert result['failed'] is True and record['status'] == 'failed'
    assert 'no sqlplus at %s/bin/sqlplus' % home in record['detail']
    assert record['target'] == home + '/dbs/spfileorcl.ora'


def test_pfile_pointing_to_an_spfile_uses_the_spfile(tmp_path):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    pfile_path = os.path.join(home, 'dbs', 'initorcl.ora')
    with open(pfile_path, 'w') as handle:
        handle.write("SPFILE='+DATA/ORCL/spfileorcl.ora'\n")
    result = plan('oracle', {'filesystemio_options': 'SETALL'}, path=pfile_path, oracle_home=home,
                  oracle_sid='orcl', read_live=False).run()
    record = result.settings[0]
    assert record.status == 'failed' and record.target == '+DATA/ORCL/spfileorcl.ora'
    with open(pfile_path) as handle:
        assert handle.read() == "SPFILE='+DATA/ORCL/spfileorcl.ora'\n"


def test_pfile_live_value_from_v_parameter(tmp_path):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    path = os.path.join(home, 'dbs', 'initorcl.ora')
    with open(path, 'w') as handle:
        handle.write("*.filesystemio_options='SETALL'\n*.disk_asynch_io=FALSE\n")
    write_fake_sqlplus(home, live_value='SETALL')
    result = db_parameter_plan('oracle', {'filesystemio_options': 'setall'},
                               registry.Context(runner=lambda argv, data=None, environ=None: _run(argv, data, environ)),
                               path=path, oracle_home=home, oracle_sid='orcl', euid=1000).run()
    record = result.settings[0]
    assert (record.status, record.live, record.persisted) == ('ok', 'SETALL', 'SETALL')


def _run(argv, data, environ):
    import subprocess
    env = dict(os.environ)
    env.update(environ or {})
    proc = subprocess.run(argv, input=data, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


# ---------------------------------------------------------------- PostgreSQL
def test_postgresql_unchanged_values_leave_every_file_byte_identical(tmp_path, run_module):
    root = tree(tmp_path, 'postgresql')
    before = digest(root)
    result = run_module(db_parameter, {'engine': 'postgresql', 'path': PGCONF, 'root': root,
                                       'params': {'shared_buffers': '2048MB', 'work_mem': '32768kB',
                                                  'effective_io_concurrency': 200, 'port': '5432'},
                                       'fail_on_shadowed': False})
    assert digest(root) == before and result['changed'] is False
    by_name = records(result)
    assert by_name['shared_buffers']['status'] == 'ok' and PGMEM in by_name['shared_buffers']['detail']
    assert by_name['work_mem']['status'] == 'ok' and by_name['work_mem']['persisted'] == '32MB'
    assert result['files'] == [PGCONF, PGMEM, AUTO]


def test_postgresql_auto_conf_shadows(tmp_path, run_module):
    root = tree(tmp_path, 'postgresql')
    result = run_module(db_parameter, {'engine': 'postgresql', 'path': PGCONF, 'root': root,
                                       'params': {'work_mem': '64MB', 'huge_pages': 'on'}})
    assert result['failed'] is True and AUTO in result['msg']
    by_name = records(result)
    assert by_name['work_mem']['status'] == 'shadowed' and AUTO in by_name['work_mem']['detail']
    assert by_name['huge_pages']['status'] == 'pending_restart'
    assert read(root, PGMEM) == fixture('postgresql', PGMEM).replace('work_mem = 16384', 'work_mem = 64MB')
    assert read(root, PGCONF) == fixture('postgresql', PGCONF) + 'huge_pages = on\n'
    assert read(root, AUTO) == fixture('postgresql', AUTO)


def pg_answer(settings, reloads):
    """Recorded psql output: name, unit, context, current_setting(name), \\x1f-separated."""
    def answer(argv, data, runner):
        sql = argv[argv.index('-c') + 1]
        if 'pg_reload_conf' in sql:
            reloads.append(True)
            settings.update(runner.after_reload)
            return 0, 't\n', ''
        rows = ['\x1f'.join((name,) + row) for name, row in sorted(settings.items()) if "'%s'" % name in sql]
        return 0, ''.join(row + '\n' for row in rows), ''
    return answer


def test_postgresql_live_static_and_dynamic(tmp_path):
    root = tree(tmp_path, 'postgresql')
    conf = os.path.join(root, PGCONF.lstrip('/'))
    # point data_directory at the copy so that the test tree is the whole configuration
    with open(conf) as handle:
        text = handle.read().replace("'/var/lib/postgresql/15/main'", "'%s/var/lib/postgresql/15/main'" % root)
    text = text.replace("'/etc/postgresql/15/main/local.conf'", "'%s/etc/postgresql/15/main/local.conf'" % root)
    with open(conf, 'w') as handle:
        handle.write(text)
    os.remove(os.path.join(root, AUTO.lstrip('/')))
    settings = {'shared_buffers': ('8kB', 'postmaster', '128MB'), 'work_mem': ('kB', 'user', '4MB'),
                'block_size': ('', 'internal', '8192')}
    reloads = []
    runner = FakeRunner(pg_answer(settings, reloads))
    runner.after_reload = {'work_mem': ('kB', 'user', '64MB')}
    params = {'shared_buffers': '4GB', 'work_mem': '65536'}
    result = plan('postgresql', params, path=conf, runner=runner, login_host='/var/run/postgresql',
                  login_port=5433).run()
    by_name = dict((s.name, s) for s in result.settings)
    assert by_name['shared_buffers'].status == 'pending_restart' and by_name['shared_buffers'].live == '128MB'
    assert 'static parameter' in by_name['shared_buffers'].detail
    assert by_name['work_mem'].status == 'changed' and by_name['work_mem'].live == '64MB'
    assert reloads == [True] and result.restart_required is True
    argv = runner.calls[0][0]
    assert argv[:4] == ['/usr/bin/psql', '-X', '-A', '-t'] and argv[argv.index('-h') + 1] == '/var/run/postgresql'
    assert argv[argv.index('-p') + 1] == '5433'
    again = plan('postgresql', params, path=conf, runner=runner).run()
    assert again.changed is False and reloads == [True]
    assert [s.status for s in again.settings] == ['pending_restart', 'ok']
    with pytest.raises(InputError) as error:
        plan('postgresql', {'shared_bufers': '1GB'}, path=conf, runner=runner).run()
    assert 'shared_bufers' in str(error.value)
    # An internal parameter in postgresql.conf stops the server at start ("parameter
    # "block_size" cannot be changed", then FATAL): refused before anything is written.
    with pytest.raises(InputError) as error:
        plan('postgresql', {'block_size': '16384'}, path=conf, runner=runner, check_mode=True).run()
    assert 'block_size is fixed when PostgreSQL is built' in str(error.value)


def test_postgresql_runs_psql_as_postgres_when_root(tmp_path, monkeypatch):
    root = tree(tmp_path, 'postgresql')
    conf = os.path.join(root, PGCONF.lstrip('/'))
    runner = FakeRunner(lambda argv, data, fake: (2, '', 'psql: error: connection to server failed'))
    monkeypatch.setattr(dbp_postgresql.pwd, 'getpwnam', lambda name: name)
    result = db_parameter_plan('postgresql', {'huge_pages': 'on'},
                               registry.Context(runner=runner, bin_path=lambda name: '/usr/bin/psql',
                                                system_name='Linux', check_mode=True), path=conf, euid=0,
                               find_server=lambda major: None, fail_on_shadowed=False).run()
    assert runner.calls[0][0][:4] == ['runuser', '-u', 'postgres', '--']
    record = result.settings[0]
    assert record.live is None and 'connection to server failed' in record.detail and record.status == 'drift'


# ---------------------------------------------------------------- MySQL
def test_mysql_edits_where_the_server_reads_last(tmp_path, run_module):
    root = tree(tmp_path, 'mysql')
    params = {'innodb_flush_method': 'O_DIRECT', 'max_connections': 600, 'innodb-buffer-pool-size': '1024M',
              'skip_external_locking': 'ON', 'innodb_numa_interleave': 'ON'}
    result = run_module(db_parameter, {'engine': 'mysql', 'path': MYCNF, 'root': root, 'params': params})
    assert read(root, MYCNF) == fixture('mysql', MYCNF).replace(
        'log_error = "/var/log/mysql/error.log"\n',
        'log_error = "/var/log/mysql/error.log"\ninnodb_flush_method = O_DIRECT\n')
    assert read(root, TUNING) == fixture('mysql', TUNING).replace('max_connections = 500', 'max_connections = 600')
    by_name = records(result)
    assert by_name['innodb_flush_method']['status'] == 'pending_restart'
    assert by_name['innodb_buffer_pool_size']['status'] == 'ok'
    assert by_name['skip_external_locking']['status'] == 'ok'
    assert by_name['innodb_numa_interleave']['status'] == 'ok'     # [mysqld-8.0] loose-innodb_numa_interleave = 1
    again = run_module(db_parameter, {'engine': 'mysql', 'path': MYCNF, 'root': root, 'params': params})
    assert again['changed'] is False


def test_mysql_new_section_and_live_values(tmp_path):
    path = str(tmp_path / 'my.cnf')
    with open(path, 'w') as handle:
        handle.write('[client]\nuser = backup\n')
    answers = {'SELECT @@GLOBAL.version': '8.0.36', 'SELECT @@GLOBAL.innodb_flush_method': 'fsync',
               'SELECT @@GLOBAL.innodb_buffer_pool_size': '1073741824'}

    def answer(argv, data, fake):
        sql = argv[-1]
        if sql in answers:
            return 0, answers[sql] + '\n', ''
        return 1, '', "ERROR 1193 (HY000) at line 1: Unknown system variable '%s'" % sql.split('.')[-1]
    runner = FakeRunner(answer)
    result = plan('mysql', {'innodb_flush_method': 'O_DIRECT', 'innodb_buffer_pool_size': '1G',
                            'nosuch': 1}, path=path, runner=runner, login_user='root', login_password='s3cret').run()
    with open(path) as handle:
        assert handle.read() == ('[client]\nuser = backup\n\n[mysqld]\ninnodb_buffer_pool_size = 1G\n'
                                 'innodb_flush_method = O_DIRECT\nnosuch = 1\n')
    by_name = dict((s.name, s) for s in result.settings)
    assert by_name['innodb_flush_method'].status == 'pending_restart'
    assert by_name['innodb_flush_method'].live == 'fsync'
    assert by_name['innodb_buffer_pool_size'].live == '1073741824'
    assert by_name['nosuch'].live is None and 'Unknown system variable' in by_name['nosuch'].detail
    argv, data, environ = runner.calls[0]
    assert argv[:3] == ['/usr/bin/mysql', '-N', '-B'] and 's3cret' not in argv and environ == {'MYSQL_PWD': 's3cret'}


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize('args, message', [
    ({'engine': 'db2', 'path': ORCL}, 'value of engine must be one of'),
    ({'path': ORCL, 'params': {'filesystemio_options': 'SET\nALL'}}, 'newline'),
    ({'path': ORCL, 'params': {'filesystemio_options': "'SETALL"}}, 'quote mismatch'),
    ({'path': ORCL, 'params': {'filesystemio_options': 'SETALL"'}}, 'quote mismatch'),
    ({'path': HOME + '/dbs/../../../../etc/passwd'}, 'must not contain ".."'),
    ({'path': 'dbs/initorcl.ora'}, 'must be absolute'),
    ({'path': HOME + '/dbs/initnone.ora'}, 'does not exist'),
    ({'path': ORCL, 'params': {}}, 'non-empty dict'),
    ({'path': ORCL, 'params': {'FILESYSTEMIO_OPTIONS': 'SETALL', 'filesystemio_options': 'SETALL'}}, 'both mean'),
    ({'path': ORCL, 'params': {'*.filesystemio_options': 'SETALL'}}, 'sid option'),
    ({'path': ORCL, 'params': {'__db_cache_size': 1}}, 'double-underscore'),
    ({'path': ORCL, 'params': {'ifile': '/x'}}, 'names a parameter file'),
    ({'path': ORCL, 'params': {'filesystemio_options': None}}, 'has no value'),
    ({'path': ORCL, 'params': {'filesystemio_options': ''}}, 'empty'),
    ({'path': ORCL, 'params': {'x': 'a\'b"c'}}, 'both kinds of quote'),
    ({'path': ORCL, 'sid': 'a b'}, 'sid'),
    ({'path': ORCL, 'oracle_sid': 'or;cl'}, 'oracle_sid'),
    ({}, 'needs path'),
    ({'engine': 'postgresql', 'path': ORCL, 'oracle_home': HOME}, 'only applies to engine oracle'),
    ({'engine': 'postgresql'}, 'path is required'),
    ({'engine': 'postgresql', 'path': ORCL, 'params': {'include_dir': 'x'}}, 'include directive'),
    ({'engine': 'mysql', 'path': ORCL, 'params': {'innodb flush': 'x'}}, 'not a MySQL option name'),
    ({'engine': 'mysql', 'path': ORCL, 'mysql_section': 'my sqld'}, 'mysql_section'),
    ({'path': ORCL, 'login_port': 70000}, 'login_port'),
    ({'path': ORCL, 'os_user': '-oracle'}, 'os_user'),
])
def test_bad_input_is_refused_before_anything_changes(tmp_path, run_module, args, message):
    root = tree(tmp_path, 'oracle')
    before = digest(root)
    full = {'engine': 'oracle', 'root': root, 'params': {'filesystemio_options': 'SETALL'}}
    full.update(args)
    result = run_module(db_parameter, full)
    assert result['failed'] is True and message in result['msg']
    assert digest(root) == before


@pytest.mark.parametrize('engine, path, content, message', [
    ('oracle', ORCL, "*.db_name='orcl\n", 'quote'),
    ('oracle', ORCL, "IFILE='/u01/missing.ora'\n", 'does not exist'),
    ('oracle', ORCL, "IFILE='%s'\n" % ORCL, 'IFILE loop: %s includes itself through %s' % (ORCL, ORCL)),
    ('postgresql', PGCONF, "include 'missing.conf'\n", 'does not exist'),
    ('postgresql', PGCONF, "include '%s'\n" % PGCONF, 'include loop: %s includes itself through %s' % (PGCONF, PGCONF)),
    ('mysql', MYCNF, '!include %s\n' % MYCNF, '!include loop: %s includes itself through %s' % (MYCNF, MYCNF)),
    ('postgresql', PGCONF, "shared_buffers = '1GB\n", 'not closed'),
    ('mysql', MYCNF, 'port = 3306\n', 'before any [group]'),
])
def test_bad_files_are_refused_naming_file_and_line(tmp_path, run_module, engine, path, content, message):
    root = tree(tmp_path, engine)
    local = os.path.join(root, path.lstrip('/'))
    with open(local) as handle:
        text = handle.read()
    with open(local, 'w') as handle:
        handle.write(content + text)
    before = digest(root)
    result = run_module(db_parameter, {'engine': engine, 'path': path, 'root': root, 'params': {'port': 1}})
    assert result['failed'] is True and message in result['msg'] and path in result['msg']
    assert digest(root) == before


def test_backup_and_mode_kept(tmp_path, run_module):
    root = tree(tmp_path, 'oracle')
    local = os.path.join(root, ORCL.lstrip('/'))
    os.chmod(local, 0o640)
    result = run_module(db_parameter, {'engine': 'oracle', 'path': ORCL, 'root': root, 'backup': True,
                                       'params': {'filesystemio_options': 'SETALL'}})
    assert stat.S_IMODE(os.stat(local).st_mode) == 0o640
    with open(result['backup_file']) as handle:
        assert handle.read() == fixture('oracle', ORCL)


def test_postgresql_value_shadowed_by_auto_conf_is_not_waited_for_after_reload(tmp_path):
    conf = str(tmp_path / 'postgresql.conf')
    with open(conf, 'w') as handle:
        handle.write('work_mem = 4MB\nmaintenance_work_mem = 64MB\n')
    with open(str(tmp_path / 'postgresql.auto.conf'), 'w') as handle:
        handle.write("# Do not edit this file manually!\nmaintenance_work_mem = '96MB'\n")
    settings = {'work_mem': ('kB', 'user', '4MB'), 'maintenance_work_mem': ('kB', 'user', '96MB')}
    reloads = []
    runner = FakeRunner(pg_answer(settings, reloads))
    runner.after_reload = {'work_mem': ('kB', 'user', '8MB')}
    run = plan('postgresql', {'work_mem': '8MB', 'maintenance_work_mem': '128MB'}, path=conf, runner=runner)
    result = run.run()
    by_name = dict((s.name, s) for s in result.settings)
    assert by_name['work_mem'].status == 'changed' and by_name['work_mem'].live == '8MB'
    assert by_name['maintenance_work_mem'].status == 'shadowed' and by_name['maintenance_work_mem'].live == '96MB'
    assert 'postgresql.auto.conf line 2' in by_name['maintenance_work_mem'].detail
    assert reloads == [True] and len(runner.calls) == 3   # read, reload, read back once
    assert 'shadowed' in run.failure_message(result)


def test_mysql_missing_includedir_is_a_warning(tmp_path, run_module):
    path = str(tmp_path / 'my.cnf')
    with open(path, 'w') as handle:
        handle.write('[mysqld]\ninnodb_flush_method = O_DIRECT\n!includedir %s/missing.d\n' % tmp_path)
    result = run_module(db_parameter, {'engine': 'mysql', 'path': path, 'read_live': False,
                                       'params': {'innodb_flush_method': 'O_DIRECT'}})
    assert result['changed'] is False and records(result)['innodb_flush_method']['status'] == 'ok'
    assert 'deprecations' not in result   # warnings go through module.warn(), not the result dict
    # module.warn() answers to the controller's display once controller code is imported in this
    # process (other tests do), so the warning itself is checked on the plan's result.
    planned = db_parameter_plan('mysql', {'innodb_flush_method': 'O_DIRECT'}, path=path, read_live=False).run()
    assert planned.warnings == ['%s line 3: !includedir %s/missing.d does not exist' % (path, tmp_path)]


def test_mysql_notes_describe_the_files_once_after_an_edit(tmp_path):
    # An edit reads the files again with the new text; the notes are of that reading, not both.
    path = str(tmp_path / 'my.cnf')
    with open(path, 'w') as handle:
        handle.write('[mysqld]\ninnodb_flush_method = fsync\n!includedir %s/missing.d\n' % tmp_path)
    planned = db_parameter_plan('mysql', {'innodb_flush_method': 'O_DIRECT'}, path=path, read_live=False)
    result = planned.run()
    note = '%s line 3: !includedir %s/missing.d does not exist' % (path, tmp_path)
    assert result.changed and result.warnings == [note]
    assert planned.engine.notes == [note]
    with open(path) as handle:
        assert handle.read() == '[mysqld]\ninnodb_flush_method = O_DIRECT\n!includedir %s/missing.d\n' % tmp_path


def test_pfile_with_the_instance_down_says_why_live_is_unknown(tmp_path):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'bin'))
    os.makedirs(os.path.join(home, 'dbs'))
    sqlplus = os.path.join(home, 'bin', 'sqlplus')
    with open(sqlplus, 'w') as handle:
        handle.write('#!/bin/sh\ncat >/dev/null\necho "ERROR:"\necho "ORA-01034: ORACLE not available"\nexit 1\n')
    os.chmod(sqlplus, stat.S_IRWXU)
    path = os.path.join(home, 'dbs', 'initorcl.ora')
    with open(path, 'w') as handle:
        handle.write("*.db_name='orcl'\n")
    result = db_parameter_plan('oracle', {'filesystemio_options': 'SETALL'}, registry.Context(runner=_run), path=path,
                               oracle_home=home, oracle_sid='orcl', euid=1000).run()
    record = result.settings[0]
    assert record.status == 'pending_restart' and record.live is None
    assert 'ORA-01034' in record.detail
    with open(path) as handle:
        assert handle.read() == "*.db_name='orcl'\n*.filesystemio_options='SETALL'\n"


def test_spfile_with_a_pfile_given_leaves_the_pfile(tmp_path, run_module):
    home = str(tmp_path / 'dbhome')
    os.makedirs(os.path.join(home, 'dbs'))
    write_fake_sqlplus(home)
    with open(os.path.join(home, 'dbs', 'spfileorcl.ora'), 'wb') as handle:
        handle.write(b'\x00binary spfile')
    pfile_path = os.path.join(home, 'dbs', 'initorcl.ora')
    with open(pfile_path, 'w') as handle:
        handle.write("*.filesystemio_options='none'\n")
    result = run_module(db_parameter, {'engine': 'oracle', 'path': pfile_path, 'oracle_home': home,
                                       'oracle_sid': 'orcl', 'params': {'filesystemio_options': 'SETALL'}})
    record = records(result)['filesystemio_options']
    assert record['status'] == 'pending_restart' and record['target'] == home + '/dbs/spfileorcl.ora'
    assert 'is left as it is' in record['detail']
    with open(pfile_path) as handle:
        assert handle.read() == "*.filesystemio_options='none'\n"


@pytest.mark.parametrize('raw, text', [
    ("'SETALL'", 'SETALL'), ('"SETALL"', 'SETALL'), ('"$user", public', '"$user", public'), ("it's", "it's"),
    (' 4GB ', '4GB'), (8192, '8192'),
])
def test_values_taken_as_given_or_unquoted_once(raw, text):
    assert plain_value(raw, 'x') == text


@pytest.mark.parametrize('raw', ["'SETALL", 'SETALL"', "'a'b'", '"x" "y'])
def test_unbalanced_quotes_are_refused(raw):
    with pytest.raises(InputError) as error:
        plain_value(raw, 'x')
    assert 'quote mismatch' in str(error.value)


def test_debian_my_cnf_symlinks_are_kept(tmp_path, run_module):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, 'etc', 'alternatives'))
    os.makedirs(os.path.join(root, 'etc', 'mysql'))
    with open(os.path.join(root, 'etc', 'mysql', 'mariadb.cnf'), 'w') as handle:
        handle.write('[mysqld]\nport = 3306\n')
    os.symlink('/etc/mysql/mariadb.cnf', os.path.join(root, 'etc', 'alternatives', 'my.cnf'))
    os.symlink('/etc/alternatives/my.cnf', os.path.join(root, 'etc', 'mysql', 'my.cnf'))
    result = run_module(db_parameter, {'engine': 'mysql', 'path': MYCNF, 'root': root,
                                       'params': {'innodb_flush_method': 'O_DIRECT'}}, diff=True)
    assert os.readlink(os.path.join(root, 'etc', 'mysql', 'my.cnf')) == '/etc/alternatives/my.cnf'
    assert os.readlink(os.path.join(root, 'etc', 'alternatives', 'my.cnf')) == '/etc/mysql/mariadb.cnf'
    assert read(root, '/etc/mysql/mariadb.cnf') == '[mysqld]\nport = 3306\ninnodb_flush_method = O_DIRECT\n'
    assert result['diff'][0]['before_header'] == MYCNF
    os.remove(os.path.join(root, 'etc', 'mysql', 'mariadb.cnf'))
    dangling = run_module(db_parameter, {'engine': 'mysql', 'path': MYCNF, 'root': root,
                                         'params': {'innodb_flush_method': 'O_DIRECT'}})
    assert dangling['failed'] is True and 'does not exist' in dangling['msg']   # not the host's file


def _debian_mariadb(tmp_path):
    """Debian's layout: my.cnf includes mariadb.conf.d, where a site file sorts after 50-server.cnf."""
    root = str(tmp_path)
    put(root, '/etc/mysql/my.cnf', '[client-server]\nsocket = /run/mysqld/mysqld.sock\n'
                                   '!includedir /etc/mysql/mariadb.conf.d/\n')
    put(root, '/etc/mysql/mariadb.conf.d/50-server.cnf', '[mysqld]\nuser = mysql\ninnodb_flush_method = fsync\n')
    put(root, '/etc/mysql/mariadb.conf.d/60-site.cnf', '# site policy\n[mariadb]\ninnodb_flush_method = fsync\n')
    return root


def test_mysql_an_included_file_a_later_one_overrides_is_shadowed_naming_it(tmp_path, run_module):
    root = _debian_mariadb(tmp_path)
    server = '/etc/mysql/mariadb.conf.d/50-server.cnf'
    args = {'engine': 'mysql', 'path': server, 'root': root, 'read_live': False,
            'params': {'innodb_flush_method': 'O_DIRECT'}}
    before = digest(root)
    check = records(run_module(db_parameter, args, check_mode=True))['innodb_flush_method']
    assert digest(root) == before
    assert (check['status'], check['persisted']) == ('shadowed', 'fsync')
    assert '/etc/mysql/mariadb.conf.d/60-site.cnf line 3 [mariadb] sets \'fsync\' and wins over %s' % server \
        in check['detail'], check['detail']
    # written where it was asked, and not reported as done: the server reads 60-site.cnf's value
    result = run_module(db_parameter, args)
    assert result['failed'] is True and 'shadowed' in result['msg']
    assert read(root, server) == '[mysqld]\nuser = mysql\ninnodb_flush_method = O_DIRECT\n'
    assert records(result)['innodb_flush_method']['status'] == 'shadowed'


def test_mysql_the_servers_own_option_file_edits_the_winning_line(tmp_path, run_module):
    root = _debian_mariadb(tmp_path)
    result = run_module(db_parameter, {'engine': 'mysql', 'path': '/etc/mysql/my.cnf', 'root': root,
                                       'read_live': False, 'params': {'innodb_flush_method': 'O_DIRECT'}})
    assert records(result)['innodb_flush_method']['status'] == 'pending_restart' and not result.get('failed')
    assert read(root, '/etc/mysql/mariadb.conf.d/60-site.cnf') == \
        '# site policy\n[mariadb]\ninnodb_flush_method = O_DIRECT\n'
    assert read(root, '/etc/mysql/mariadb.conf.d/50-server.cnf') == \
        '[mysqld]\nuser = mysql\ninnodb_flush_method = fsync\n'
