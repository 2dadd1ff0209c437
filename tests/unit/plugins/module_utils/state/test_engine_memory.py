# -*- coding: utf-8 -*-
"""What the engine allocates, read from its configuration: the size shared_memory_size: engine stands on."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired, engine_memory
from ansible_collections.dbhost.tuning.tests.unit.helpers import put, with_defaults

MIB = 1024 * 1024
GIB = 1024 * MIB


def _debian_mariadb(root):
    put(root, '/etc/mysql/my.cnf', '[client-server]\nsocket = /run/mysqld/mysqld.sock\n\n'
                                   '!includedir /etc/mysql/conf.d/\n!includedir /etc/mysql/mariadb.conf.d/\n')
    put(root, '/etc/mysql/conf.d/mysql.cnf', '[mysql]\n')
    put(root, '/etc/mysql/mariadb.conf.d/50-client.cnf', '[client]\nkey_buffer_size = 1G\n')
    put(root, '/etc/mysql/mariadb.conf.d/50-server.cnf',
        '[server]\n\n[mysqld]\nuser = mysql\ninnodb_buffer_pool_size = 128M\n'
        '#key_buffer_size = 16M\n[mariadb]\n')
    put(root, '/etc/mysql/mariadb.conf.d/90-tuned.cnf',
        '[mariadb-10.11]\ninnodb_buffer_pool_size = 256M\nkey_buffer_size = 32M\n')


def test_mariadb_the_pool_log_buffers_and_caches_from_the_files_the_server_reads(tmp_path):
    root = str(tmp_path)
    _debian_mariadb(root)
    found = engine_memory.read('mysql', root)
    # 256M (the last file wins) + 2 x 16M (default) + 32M ([client] is not the server's) + 128M (default)
    assert found['bytes'] == (256 + 2 * 16 + 32 + 128) * MIB
    assert found['source'] == (
        'engine: innodb_buffer_pool_size 256M + 2 x innodb_log_buffer_size 16M (default) + key_buffer_size 32M + '
        'aria_pagecache_buffer_size 128M (default) = 448M (/etc/mysql/my.cnf, /etc/mysql/conf.d/mysql.cnf, '
        '/etc/mysql/mariadb.conf.d/50-client.cnf, /etc/mysql/mariadb.conf.d/50-server.cnf, '
        '/etc/mysql/mariadb.conf.d/90-tuned.cnf; bench/README.md, MariaDB large_pages)')


def test_mariadb_without_its_option_file_says_what_to_give(tmp_path):
    with pytest.raises(InputError) as caught:
        engine_memory.read('mysql', str(tmp_path))
    assert 'no /etc/mysql/my.cnf' in str(caught.value) and 'shared_memory_engine_config' in str(caught.value)


def test_mariadb_a_size_it_cannot_read_is_named(tmp_path):
    put(str(tmp_path), '/etc/my.cnf', '[mysqld]\ninnodb_buffer_pool_size = lots\n')
    with pytest.raises(InputError) as caught:
        engine_memory.read('mysql', str(tmp_path), '/etc/my.cnf')
    assert '/etc/my.cnf line 2 innodb_buffer_pool_size' in str(caught.value)


SPFILE = (b'\xa2\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x04\x3d\x8a\x00\x00'
          b'*.audit_file_dest=\'/u01/app/oracle/admin/ORCL/adump\'\n*.compatible=\'19.0.0\'\n'
          b'*.db_name=\'ORCL\'\n*.sga_target=6G\nORCL.sga_max_size=8G\n*.pga_aggregate_target=2G\n'
          b'\x00\x00\x00\x00\xa2\x00\x00\x00')


def test_oracle_every_instance_of_oratab_its_spfile_first(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/oratab', '# comment\nORCL:/u01/app/oracle/product/19c:Y\nTEST:/u01/app/oracle/product/19c:N\n'
                             '*:/u01/app/oracle/product/19c:N\n')
    with open(_mk(tmp_path, 'u01/app/oracle/product/19c/dbs/spfileORCL.ora'), 'wb') as handle:
        handle.write(SPFILE)
    put(root, '/u01/app/oracle/product/19c/dbs/initTEST.ora', "*.db_name='TEST'\n*.sga_target=1536M\n")
    found = engine_memory.read('oracle', root)
    assert found['bytes'] == 8 * GIB + 1536 * MIB
    assert found['source'] == ('engine: the SGA of ORCL 8G (/u01/app/oracle/product/19c/dbs/spfileORCL.ora) + '
                               'TEST 1.5G (/u01/app/oracle/product/19c/dbs/initTEST.ora) = 9.5G')


def _mk(tmp_path, path):
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    return str(target)


def test_oracle_memory_target_only_is_refused_with_the_reason(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/oratab', 'ORCL:/u01/db:Y\n')
    put(root, '/u01/db/dbs/initORCL.ora', '*.memory_target=8G\n')
    with pytest.raises(InputError) as caught:
        engine_memory.read('oracle', root)
    assert 'sets neither sga_max_size nor sga_target' in str(caught.value)


def test_postgresql_needs_one_cluster_or_its_folder(tmp_path):
    with pytest.raises(InputError) as caught:
        engine_memory.read('postgresql', str(tmp_path), runner=lambda argv, **kw: (0, '', ''))
    assert 'no PostgreSQL clusters under /etc/postgresql' in str(caught.value)


def test_postgresql_runs_postgres_c_as_its_user_and_takes_its_count(tmp_path, monkeypatch):
    calls = []

    def runner(argv, **kwargs):
        calls.append(argv)
        return 0, '38\n', ''
    monkeypatch.setattr(engine_memory, '_pg_binary', lambda root, config: '/usr/lib/postgresql/15/bin/postgres')
    found = engine_memory.read('postgresql', '/', '/etc/postgresql/15/main', runner)
    assert found == {'pages': 38, 'source': 'engine: postgres -C shared_memory_size_in_huge_pages -D '
                                            '/etc/postgresql/15/main = 38 huge pages'}
    assert calls[0][-5:] == ['/usr/lib/postgresql/15/bin/postgres', '-D', '/etc/postgresql/15/main', '-C',
                             'shared_memory_size_in_huge_pages']


FACTS = {'system': 'Linux', 'memory': {'total_bytes': 8 * GIB, 'page_size': 4096, 'hugepage_default_bytes': 2 * MIB},
         'hugepages': {2 * MIB: {'total': 0}}, 'mounts': []}


def _inputs(root, size, engine='mysql'):
    return with_defaults({'shared_memory': {'shared_memory_engine': engine, 'shared_memory_size': size,
                                            'shared_memory_root': root, 'shared_memory_user': 'nobody',
                                            'shared_memory_group': 'nogroup'}})


def test_the_pool_is_sized_from_the_engine_and_the_source_says_so(tmp_path):
    facts = dict(FACTS, engine_memory={'bytes': 448 * MIB, 'source': 'engine: what mariadbd takes = 448M'})
    state = desired.compile_state(['shared_memory'], _inputs('/', 'engine'), facts)
    pool = [r for r in state.records if r['kind'] == 'hugepages'][0]
    assert pool['desired'] == 227   # 448M in 2M pages (224) and the 1 % margin, rounded up
    assert '[shared memory: engine: what mariadbd takes = 448M]: ceil(' in pool['source']
    assert state.sizing['shared_memory_source'] == 'engine: what mariadbd takes = 448M'
    user = desired.compile_state(['shared_memory'], _inputs('/', '512M'), facts)
    assert '[shared memory: user: shared_memory_size 512M]' in [
        r for r in user.records if r['kind'] == 'hugepages'][0]['source']


def test_postgresql_pages_become_bytes_of_the_default_huge_page_size():
    facts = dict(FACTS, engine_memory={'pages': 38, 'source': 'engine: postgres -C ... = 38 huge pages'})
    state = desired.compile_state(['shared_memory'], _inputs('/', 'engine', 'postgresql'), facts)
    assert [r for r in state.records if r['kind'] == 'hugepages'][0]['desired'] == 39   # 38 and the 1 % margin


def test_an_engine_that_cannot_be_read_fails_with_why():
    facts = dict(FACTS, engine_memory={'error': 'shared_memory_size engine: no /etc/mysql/my.cnf to read'})
    with pytest.raises(InputError) as caught:
        desired.compile_state(['shared_memory'], _inputs('/', 'engine'), facts)
    assert str(caught.value) == 'shared_memory_size engine: no /etc/mysql/my.cnf to read'
