# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ledger of drift runs, on SQLite and on a real PostgreSQL server started for the test (initdb,
pg_ctl; written through psql as the ledger does): runs appended and read back, each record marked
against the run before, the schema migrated, and writers running at the same time losing nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.machinery
import importlib.util
import json
import multiprocessing
import os
import shutil
import sqlite3

import pytest

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import fleet, history, ledger
from ansible_collections.dbhost.tuning.tests.unit.helpers import as_postgres, new_postgres_cluster, run, server_unavailable

CLEAN = ['ok', 'unsupported']


@pytest.fixture(scope='module')
def postgres():
    """A throwaway PostgreSQL server on a Unix socket; yields its connection string."""
    if not shutil.which('psql'):
        server_unavailable('no psql')
    bindir, base, data = new_postgres_cluster('dbhost-ledger-pg-')
    port = 20000 + (os.getpid() + 7) % 20000
    with open(os.path.join(data, 'postgresql.conf'), 'a') as handle:
        handle.write("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\nfsync = off\n" % (port, base))
    pg_ctl = as_postgres([os.path.join(bindir, 'pg_ctl'), '-D', data, '-w', '-l', os.path.join(base, 'log')])
    rc, out, err = run(pg_ctl + ['start'])
    assert rc == 0, out + err
    try:
        yield {'base': base, 'port': port}
    finally:
        run(pg_ctl + ['-m', 'fast', 'stop'])
        shutil.rmtree(base, ignore_errors=True)


_DATABASES = [0]


@pytest.fixture(params=['sqlite', 'postgresql'])
def spec(request, tmp_path):
    """A new, empty ledger of each kind."""
    if request.param == 'sqlite':
        return str(tmp_path / 'ledger.sqlite')
    server = request.getfixturevalue('postgres')
    _DATABASES[0] += 1
    name = 'ledger%d' % _DATABASES[0]
    url = 'postgresql:///%s?host=%s&port=%d&user=postgres'
    rc, out, err = run(['psql', '-X', '-q', '-d', url % ('postgres', server['base'], server['port']),
                        '-c', 'CREATE DATABASE %s' % name])
    assert rc == 0, err
    return url % (name, server['base'], server['port'])


def report(hosts, finished, run_id=None):
    """A drift.json document: hosts -> [(name, status, live)]."""
    document = {'clean_statuses': CLEAN, 'started': finished, 'finished': finished, 'run_id': run_id or 'run-' + finished,
                'collection_version': '0.2.0', 'hosts': {}}
    for host, records in hosts.items():
        document['hosts'][host] = {'errors': [], 'settings': [
            {'name': name, 'target': None, 'status': status, 'desired': 1, 'live': live, 'persisted': 1,
             'source': 'test', 'reason': None if status == 'ok' else 'differs', 'detail': None}
            for name, status, live in records]}
    fleet.refresh(document)
    return document


def marks(document):
    return dict(((host, record['name']), (record.get('since_last') or {}).get('mark'))
                for host, entry in document['hosts'].items() for record in entry['settings'])


def test_runs_are_marked_against_the_run_before(spec):
    first = history.place_in_history(report({
        'db1': [('a', 'ok', 1), ('b', 'drift', 2), ('c', 'drift', 3)],
        'db2': [('a', 'drift', 5)],
        'db3': [('a', 'ok', 1)]}, '2026-12-01T00:00:00+00:00'), ledger=spec)
    assert 'error' not in first['ledger'], first['ledger']
    assert first['since_last']['previous_run'] is None and first['since_last']['counts']['new'] == 3
    second = history.place_in_history(report({
        'db1': [('a', 'drift', 9), ('b', 'drift', 2), ('c', 'drift', 4)],
        'db2': [('a', 'ok', 1)],
        'db4': [('a', 'ok', 1)]}, '2026-12-02T00:00:00+00:00'), ledger=spec)
    assert marks(second) == {('db1', 'a'): 'new', ('db1', 'b'): 'still', ('db1', 'c'): 'changed',
                             ('db2', 'a'): 'fixed', ('db4', 'a'): None}
    view = second['since_last']
    assert view['previous_run'] == 'run-2026-12-01T00:00:00+00:00'
    assert view['hosts_gone'] == ['db3'] and view['hosts_new'] == ['db4']
    assert view['counts'] == {'new': 1, 'still': 1, 'changed': 1, 'fixed': 1}
    third = history.place_in_history(report({'db1': [('a', 'drift', 9), ('b', 'drift', 2)]},
                                            '2026-12-03T00:00:00+00:00'), ledger=spec)
    b = third['hosts']['db1']['settings'][1]['since_last']
    assert b == {'mark': 'still', 'drift_since': '2026-12-01T00:00:00+00:00', 'drift_runs': 3}
    a = third['hosts']['db1']['settings'][0]['since_last']
    assert a == {'mark': 'still', 'drift_since': '2026-12-02T00:00:00+00:00', 'drift_runs': 2}
    assert [run['drifted'] for run in third['ledger']['trend']] == [3, 3, 2]
    lines = '\n'.join(fleet.since_last_lines(third))
    assert 'db1 b: still (drifted since 2026-12-01T00:00:00+00:00, 3 runs)' in lines
    assert 'hosts in the last run but not in this one: db2, db4' in lines


def test_the_same_run_twice_is_kept_once(spec):
    document = report({'db1': [('a', 'drift', 2)]}, '2026-12-01T00:00:00+00:00')
    history.place_in_history(dict(document), ledger=spec)
    again = history.place_in_history(dict(document), ledger=spec)
    store = ledger.open_ledger(spec)
    assert [row['n'] for row in store.query('SELECT COUNT(*) AS n FROM records')] == [1]
    assert len(again['ledger']['trend']) == 1


def test_scopes_are_separate_series(spec):
    history.place_in_history(report({'db1': [('a', 'drift', 2)]}, '2026-12-01T00:00:00+00:00'), ledger=spec, scope='eu')
    other = history.place_in_history(report({'db9': [('a', 'drift', 2)]}, '2026-12-02T00:00:00+00:00'), ledger=spec,
                                     scope='us')
    assert other['since_last']['previous_run'] is None and other['since_last']['hosts_gone'] == []


def test_schema_is_migrated_and_a_newer_one_refused(spec):
    store = ledger.open_ledger(spec)
    store.migrate(upto=1)
    assert store.version() == 1
    history.place_in_history(report({'db1': [('a', 'drift', 2)]}, '2026-12-01T00:00:00+00:00'), ledger=spec)
    assert ledger.open_ledger(spec).version() == ledger.SCHEMA_VERSION == 2
    if spec.startswith('postgresql'):
        indexes = store.query("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'records'")
    else:
        indexes = store.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records'")
    assert 'records_host_setting' in [row['name'] for row in indexes]
    store._script(['UPDATE ledger_schema SET version = 99'])
    broken = history.place_in_history(report({'db1': [('a', 'ok', 1)]}, '2026-12-02T00:00:00+00:00'), ledger=spec)
    assert 'schema version 99' in broken['ledger']['error'] and 'since_last' not in broken
    assert history.problems(broken) == [broken['ledger']['error']]


def _writer(spec, writer, runs, hosts):
    for number in range(runs):
        hosts_records = {}
        for host in range(hosts):
            hosts_records['w%d-db%d' % (writer, host)] = [('s%d' % key, 'drift' if key % 2 else 'ok', number)
                                                          for key in range(5)]
        document = report(hosts_records, '2026-12-01T00:%02d:%02d+00:00' % (writer, number),
                          run_id='w%d-r%d' % (writer, number))
        done = history.place_in_history(document, ledger=spec, scope='fleet')
        assert 'error' not in done['ledger'], done['ledger']


def test_concurrent_writers_lose_nothing(spec):
    writers, runs, hosts = 6, 4, 30
    context = multiprocessing.get_context('fork')
    processes = [context.Process(target=_writer, args=(spec, writer, runs, hosts)) for writer in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(300)
    assert [process.exitcode for process in processes] == [0] * writers
    store = ledger.open_ledger(spec)
    rows = store.query('SELECT run_id, seq, previous_run FROM runs ORDER BY seq')
    assert len(rows) == writers * runs
    assert [row['seq'] for row in rows] == list(range(1, writers * runs + 1))
    # One chain: every run follows the one written just before it.
    assert [row['previous_run'] for row in rows] == [None] + [row['run_id'] for row in rows[:-1]]
    assert store.query('SELECT COUNT(*) AS n FROM records')[0]['n'] == writers * runs * hosts * 5
    assert store.query('SELECT COUNT(*) AS n FROM run_hosts')[0]['n'] == writers * runs * hosts


def test_values_with_quotes_and_text_survive(spec):
    document = report({"db'1": [("it's", 'drift', {'a': "x'; DROP TABLE runs; --", 'b': [1, None]})]},
                      '2026-12-01T00:00:00+00:00')
    history.place_in_history(document, ledger=spec)
    store = ledger.open_ledger(spec)
    row = store.query('SELECT host, name, live FROM records')[0]
    assert row['host'] == "db'1" and row['name'] == "it's"
    assert row['live'] == '{"a":"x\'; DROP TABLE runs; --","b":[1,null]}'


def test_a_ledger_in_a_missing_folder_or_without_psql_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ledger.LedgerError, match='does not exist'):
        ledger.open_ledger(str(tmp_path / 'nowhere' / 'ledger.sqlite'))
    monkeypatch.setenv('PATH', str(tmp_path))
    monkeypatch.delenv('DBHOST_DRIFT_LEDGER_PSQL', raising=False)
    with pytest.raises(ledger.LedgerError, match='psql'):
        ledger.open_ledger('postgresql://u:secret@db/ledger')


def test_a_password_is_never_shown():
    store = ledger.PostgresLedger('postgresql://drift:s3cret@db.example.invalid:5432/ledger', psql='/bin/false')
    assert 's3cret' not in store.describe() and 'drift' in store.describe()


def test_sqlite_ledger_is_a_plain_sqlite_file(tmp_path):
    path = str(tmp_path / 'ledger.sqlite')
    history.place_in_history(report({'db1': [('a', 'drift', 2)]}, '2026-12-01T00:00:00+00:00'), ledger=path)
    with sqlite3.connect(path) as connection:
        assert connection.execute('SELECT host, name, status, drift_runs FROM records').fetchall() == [('db1', 'a', 'drift', 1)]


def test_drift_check_keeps_a_postgresql_ledger(postgres, tmp_path, capsys, monkeypatch):
    """drift-check --from-report --ledger postgresql://...: checked before anything, appended, marked."""
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS', 'DBHOST_DRIFT_LEDGER_SCOPE'):
        monkeypatch.delenv(name, raising=False)
    checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
    loader = importlib.machinery.SourceFileLoader('drift_check_pg', os.path.join(checkout, 'scripts', 'drift_check.py'))
    drift_check = importlib.util.module_from_spec(importlib.util.spec_from_loader('drift_check_pg', loader))
    loader.exec_module(drift_check)
    url = 'postgresql:///postgres?host=%s&port=%d&user=postgres' % (postgres['base'], postgres['port'])
    codes = []
    for day, live in ((1, 2), (2, 2), (3, 5)):
        folder = tmp_path / ('run%d' % day)
        folder.mkdir()
        document = report({'db1': [('a', 'drift', live)]}, '2026-11-0%dT00:00:00+00:00' % day, run_id='pg-cli-%d' % day)
        (folder / 'drift.json').write_text(json.dumps(document))
        codes.append(drift_check.main(['--from-report', str(folder), '--ledger', url, '--ledger-scope', 'cli',
                                       '--since-last']))
        written = json.loads((folder / 'drift.json').read_text())
    # new (3), the same drift again (0 with --since-last), another live value: changed, not new (0).
    assert codes == [3, 0, 0]
    assert written['hosts']['db1']['settings'][0]['since_last'] == {
        'mark': 'changed', 'drift_since': '2026-11-01T00:00:00+00:00', 'drift_runs': 3, 'previous_live': 2}
    assert 'db1 a: changed (drifted since 2026-11-01T00:00:00+00:00, 3 runs), live was 2' in capsys.readouterr().err
    bad = 'postgresql:///nosuchdb?host=%s&port=%d&user=postgres' % (postgres['base'], postgres['port'])
    assert drift_check.main(['--from-report', str(tmp_path / 'run1'), '--ledger', bad]) == 1
    assert 'nosuchdb' in capsys.readouterr().err


def _run_ids(store, scope):
    return [row['run_id'] for row in store.query("SELECT run_id FROM runs WHERE scope = '%s' ORDER BY seq" % scope)]


def test_prune_keeps_the_last_runs_and_what_the_next_run_is_marked_with(spec):
    for day in (1, 2, 3, 4):
        history.place_in_history(report({'db1': [('a', 'ok', 1), ('b', 'drift', 2)], 'db%d' % (day + 1): [('a', 'ok', 1)]},
                                        '2026-12-0%dT00:00:00+00:00' % day), ledger=spec, scope='eu')
    history.place_in_history(report({'db9': [('a', 'drift', 2)]}, '2026-11-30T00:00:00+00:00'), ledger=spec, scope='us')
    store = ledger.open_ledger(spec)
    assert store.prune('eu', 2) == {'runs': 2, 'records': 6, 'kept': 2}
    assert _run_ids(store, 'eu') == ['run-2026-12-03T00:00:00+00:00', 'run-2026-12-04T00:00:00+00:00']
    assert _run_ids(store, 'us') == ['run-2026-11-30T00:00:00+00:00']
    left = store.query('SELECT DISTINCT run_id FROM records UNION SELECT DISTINCT run_id FROM run_hosts')
    assert sorted(row['run_id'] for row in left) == [
        'run-2026-11-30T00:00:00+00:00', 'run-2026-12-03T00:00:00+00:00', 'run-2026-12-04T00:00:00+00:00']
    # The next run is marked against the last one, since-when carried from the first run, long pruned.
    fifth = history.place_in_history(report({'db1': [('a', 'drift', 7), ('b', 'drift', 2)]}, '2026-12-05T00:00:00+00:00'),
                                     ledger=spec, scope='eu')
    assert fifth['hosts']['db1']['settings'][1]['since_last'] == {
        'mark': 'still', 'drift_since': '2026-12-01T00:00:00+00:00', 'drift_runs': 5}
    assert fifth['hosts']['db1']['settings'][0]['since_last']['mark'] == 'new'
    assert fifth['since_last']['hosts_gone'] == ['db5']
    assert [run['run_id'] for run in fifth['ledger']['trend']] == _run_ids(store, 'eu')[-3:]
    assert store.prune('eu', 2) == {'runs': 1, 'records': 3, 'kept': 2}
    assert store.prune('eu', 5) == {'runs': 0, 'records': 0, 'kept': 2}
    assert store.prune('nosuchscope', 1) == {'runs': 0, 'records': 0, 'kept': 0}


@pytest.mark.parametrize('keep', [0, -1, True, '3', None])
def test_prune_refuses_a_count_that_is_not_at_least_one_run(tmp_path, keep):
    path = str(tmp_path / 'ledger.sqlite')
    history.place_in_history(report({'db1': [('a', 'drift', 2)]}, '2026-12-01T00:00:00+00:00'), ledger=path)
    with pytest.raises(ledger.LedgerError, match='keep runs: .* at least 1'):
        ledger.open_ledger(path).prune('default', keep)
    assert [row['n'] for row in ledger.open_ledger(path).query('SELECT COUNT(*) AS n FROM runs')] == [1]


def _drift_check_script():
    checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
    loader = importlib.machinery.SourceFileLoader('drift_check_prune', os.path.join(checkout, 'scripts', 'drift_check.py'))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader('drift_check_prune', loader))
    loader.exec_module(module)
    return module


def test_drift_check_prune(tmp_path, capsys, monkeypatch):
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_LEDGER_SCOPE'):
        monkeypatch.delenv(name, raising=False)
    drift_check = _drift_check_script()
    path = str(tmp_path / 'ledger.sqlite')
    for day in (1, 2, 3):
        history.place_in_history(report({'db1': [('a', 'drift', 2)]}, '2026-12-0%dT00:00:00+00:00' % day), ledger=path,
                                 scope='nightly')
    assert drift_check.main(['prune', '--ledger', path, '--keep-runs', '1']) == 0
    assert 'scope default: removed 0 runs (0 records), 0 kept' in capsys.readouterr().err
    monkeypatch.setenv('DBHOST_DRIFT_LEDGER', path)
    assert drift_check.main(['prune', '--ledger-scope', 'nightly', '--keep-runs', '1']) == 0
    assert 'scope nightly: removed 2 runs (2 records), 1 kept' in capsys.readouterr().err
    assert drift_check.main(['prune', '--ledger-scope', 'nightly', '--keep-runs', '0']) == 1
    assert 'keep runs: 0 is not a whole number of runs of at least 1' in capsys.readouterr().err
    assert drift_check.main(['prune', '--ledger-scope', 'nightly']) == 1
    assert '--keep-runs' in capsys.readouterr().err
    monkeypatch.delenv('DBHOST_DRIFT_LEDGER')
    assert drift_check.main(['prune', '--keep-runs', '3']) == 1
    assert 'prune needs a ledger' in capsys.readouterr().err
    assert drift_check.main(['prune', '--ledger', str(tmp_path / 'no' / 'l.sqlite'), '--keep-runs', '3']) == 1
    assert 'does not exist' in capsys.readouterr().err
