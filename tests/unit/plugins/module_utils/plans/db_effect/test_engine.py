# -*- coding: utf-8 -*-
"""The engine's own huge page setting (plans/db_effect/engine.py) on recorded /proc samples and parameter
files: Oracle's use_large_pages from the spfile or pfile of the instance the main process names, the
socket a service listens on, and what the record says for each setting.  The real PostgreSQL and MariaDB
are asked in test_plan_postgresql_server.py and test_plan_mysql_server.py."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect import engine
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.procfs import Process
from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan, put
from ansible_collections.dbhost.tuning.tests.unit.helpers import records as _records
from ansible_collections.dbhost.tuning.tests.unit.plugins.module_utils.plans.db_effect import procfs_samples as s

pytestmark = pytest.mark.usefixtures('linux')

SERVICE = 'oracle-ORCL.service'
NAME = '%s huge page setting of the engine' % SERVICE
HOME = '/u01/app/oracle/product/19.0.0/dbhome_1'
# An spfile is binary: a block header, then the parameter lines as text (Oracle Database Administrator's
# Guide, "Managing Initialization Parameters Using a Server Parameter File"); the bytes around them are kept.
SPFILE = (b'\xa2\x22\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01\x00\x00\xc8\x5e\x00\x00\x00\x00'
          b"ORCL.__sga_target=1610612736\n*.db_name='ORCL'\n*.sga_target=1536M\n%s\n\x00\x00\x00")


def _oracle(root, smaps, spfile_line=None, pfile=None, environ=True):
    s.host(str(root), [700], cgroup='/system.slice/%s' % SERVICE)
    s.process(str(root), 700, 'ora_pmon_ORCL', smaps=s.PROGRAM + smaps)
    if environ:
        put(str(root), 'proc/700/environ', 'ORACLE_SID=ORCL\0ORACLE_HOME=%s\0PATH=/usr/bin\0' % HOME)
    dbs = os.path.join(str(root), HOME.lstrip('/'), 'dbs')
    os.makedirs(dbs, exist_ok=True)
    if spfile_line is not None:
        with open(os.path.join(dbs, 'spfileORCL.ora'), 'wb') as handle:
            handle.write(SPFILE % spfile_line.encode())
    if pfile is not None:
        put(str(root), HOME + '/dbs/initORCL.ora', pfile)


def _record(root, **kwargs):
    result = make_plan('db_effect',
                       dict(service=SERVICE, checks=['engine_huge_pages'], engine='oracle', root=str(root), **kwargs),
                       registry.Context(check_mode=True, runner=s.systemctl(700, cgroup='/system.slice/%s' % SERVICE))).run()
    return _records(result)[NAME]


def test_oracle_use_large_pages_only_in_huge_pages_is_ok(tmp_path):
    _oracle(tmp_path, s.MAIN_2M, "*.use_large_pages='ONLY'")
    record = _record(tmp_path)
    assert record.status == 'ok' and record.reason is None
    assert record.desired == 'use_large_pages asking for huge pages, and in them'
    assert record.live == 'use_large_pages = ONLY, in huge pages: 144 MiB of 144 MiB in huge pages (2048 kB pages)'
    assert record.detail == 'read by %s/dbs/spfileORCL.ora' % HOME


def test_oracle_default_true_fell_back_is_drift_and_named(tmp_path):
    _oracle(tmp_path, s.MAIN_4K, '*.processes=300')
    record = _record(tmp_path)
    assert record.status == 'drift'
    assert record.live == 'use_large_pages = TRUE, fell back to normal pages: 0 MiB of 144 MiB in huge pages'
    assert record.detail == ('read by %s/dbs/spfileORCL.ora (not set: the default); use_large_pages = TRUE falls '
                             'back to normal pages silently when the pool is short' % HOME)


def test_oracle_true_in_huge_pages_is_ok_and_the_fallback_still_named(tmp_path):
    _oracle(tmp_path, s.MAIN_2M, None, pfile="*.use_large_pages=TRUE\nORCL.use_large_pages=auto\n")
    record = _record(tmp_path)
    assert record.status == 'ok'
    assert record.live.startswith('use_large_pages = AUTO, in huge pages: ')
    assert record.detail.endswith('use_large_pages = AUTO falls back to normal pages silently when the pool is short')
    assert 'initORCL.ora' in record.detail


def test_oracle_false_asks_for_none(tmp_path):
    _oracle(tmp_path, s.MAIN_4K, '*.use_large_pages=FALSE')
    record = _record(tmp_path)
    assert (record.status, record.live) == ('drift', 'use_large_pages = FALSE, no huge pages asked')


@pytest.mark.parametrize('spfile, environ, words', [
    ('*.use_large_pages=ONLY', False, 'pid 700 has no ORACLE_SID and ORACLE_HOME in its environment'),
    (None, True, 'instance ORCL has no spfile or pfile under %s/dbs' % HOME),
    ('*.use_large_pages=SOMETIMES', True, 'not a value of use_large_pages this check knows'),
])
def test_oracle_unreadable_is_unsupported_with_the_reason(tmp_path, spfile, environ, words):
    _oracle(tmp_path, s.MAIN_2M, spfile, environ=environ)
    record = _record(tmp_path)
    assert record.status == 'unsupported' and words in record.detail, record.as_dict()


def test_a_server_asked_through_its_socket_only_on_the_running_system(tmp_path):
    s.host(str(tmp_path), [812])
    s.process(str(tmp_path), 812, 'postgres', smaps=s.PROGRAM + s.MAIN_2M)
    result = make_plan('db_effect',
                       dict(service='postgresql.service', checks=['engine_huge_pages'], engine='postgresql', root=str(tmp_path)),
                       registry.Context(check_mode=True, runner=s.systemctl(812))).run()
    record = _records(result)['postgresql.service huge page setting of the engine']
    assert record.status == 'unsupported'
    assert record.detail == 'postgresql is asked through its socket, on the running system only (root is %s)' \
        % tmp_path


def test_listening_sockets_are_the_processes_listening_ones(tmp_path):
    root = str(tmp_path)
    s.process(root, 812, 'postgres', files=[(3, 'socket:[3001]', '02'), (4, 'socket:[3002]', '02'),
                                            (5, '/var/lib/postgresql/15/main/base/1/1259', '02')])
    s.process(root, 813, 'postgres: walwriter', files=[(3, 'socket:[3003]', '02')])
    # /proc/net/unix (net/unix/af_unix.c unix_seq_show): Num RefCount Protocol Flags Type St Inode Path
    put(root, 'proc/812/net/unix', (
        'Num       RefCount Protocol Flags    Type St Inode Path\n'
        '0000000000000000: 00000002 00000000 00010000 0001 01 3001 /var/run/postgresql/.s.PGSQL.5432\n'
        '0000000000000000: 00000003 00000000 00000000 0001 03 3002 /var/run/postgresql/.s.PGSQL.5432\n'
        '0000000000000000: 00000002 00000000 00010000 0001 01 3003 @/tmp/.abstract\n'
        '0000000000000000: 00000002 00000000 00010000 0001 01 4000 /run/other.sock\n'
        '0000000000000000: 00000002 00000000 00010000 0002 01 3003\n'))
    processes = [Process(812, root), Process(813, root)]
    assert engine.listening_sockets(processes) == ['/var/run/postgresql/.s.PGSQL.5432']


@pytest.mark.parametrize('engine_name, value, mode', [
    ('postgresql', 'on', 'strict'), ('postgresql', 'try', 'fallback'), ('postgresql', 'off', 'off'),
    ('mysql', 'ON', 'fallback'), ('mysql', 'OFF', 'off'), ('oracle', "'ONLY'", 'strict'),
    ('oracle', 'auto_only', 'strict'), ('oracle', 'TRUE', 'fallback'), ('oracle', 'FALSE', 'off'),
    ('postgresql', 'maybe', None)])
def test_each_engines_words(engine_name, value, mode):
    assert engine.mode(engine_name, value) == mode


def test_engine_check_needs_the_engine(tmp_path):
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
    with pytest.raises(InputError, match='checks: engine_huge_pages needs engine'):
        make_plan('db_effect', dict(service=SERVICE, checks=['engine_huge_pages'], root=str(tmp_path)),
                  registry.Context(runner=s.systemctl(700))).run()
