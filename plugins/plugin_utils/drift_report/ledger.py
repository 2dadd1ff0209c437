# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ledger of drift runs: every run's records appended to a database, SQLite (a file path,
nothing to start) or PostgreSQL (a postgresql:// connection string, through the psql client, so
that no driver is needed unless a PostgreSQL ledger is asked for).

Both take the same SQL text: the schema, its migrations and the append script below run unchanged on
either; only the lock differs (SQLite's BEGIN IMMEDIATE, PostgreSQL's transaction advisory lock), and
it serializes the writers, so that runs written at the same time to one ledger are all kept, each
counted from the run before it. Written by the drift_report callback or scripts/drift-check on the
controller, never by a host. Standard library only; no import of the collection's other files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import sqlite3
import subprocess

# The schema's versions, each a list of statements that may run again without harm (a migration
# interrupted or raced by another writer repeats safely). ledger_schema holds the version reached.
MIGRATIONS = (
    (1, (
        'CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, scope TEXT NOT NULL, '
        'previous_run TEXT, started TEXT, finished TEXT, recorded_by TEXT, state TEXT NOT NULL, '
        'hosts INTEGER NOT NULL, settings INTEGER NOT NULL, drifted INTEGER NOT NULL, waived INTEGER NOT NULL, '
        'collection_version TEXT)',
        'CREATE TABLE IF NOT EXISTS run_hosts (run_id TEXT NOT NULL, host TEXT NOT NULL, state TEXT NOT NULL, '
        'PRIMARY KEY (run_id, host))',
        'CREATE TABLE IF NOT EXISTS records (run_id TEXT NOT NULL, host TEXT NOT NULL, setting_key TEXT NOT NULL, '
        'name TEXT NOT NULL, target TEXT, status TEXT NOT NULL, desired TEXT, live TEXT, persisted TEXT, '
        'source TEXT, reason TEXT, time TEXT, drift_since TEXT, drift_runs INTEGER NOT NULL, waiver TEXT, '
        'PRIMARY KEY (run_id, host, setting_key))',
    )),
    # A setting's history (since when has db42 drifted on vm.swappiness) without reading every run.
    (2, ('CREATE INDEX IF NOT EXISTS records_host_setting ON records (host, setting_key)',
         'CREATE INDEX IF NOT EXISTS runs_scope_seq ON runs (scope, seq)')),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
BATCH = 400
# PostgreSQL advisory lock key of every writer of a ledger (any number; the same in every writer).
PG_LOCK = 4141041


class LedgerError(Exception):
    """A ledger that cannot be used; the message names it."""


def sql_literal(value):
    """A value as an SQL literal that SQLite and PostgreSQL read alike (standard strings)."""
    if value is None:
        return 'NULL'
    if isinstance(value, bool):
        return '1' if value else '0'
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace('\x00', '').replace("'", "''") + "'"


def _json(value):
    return None if value is None else json.dumps(value, sort_keys=True, default=str, separators=(',', ':'))


def _text(value):
    if value is None or isinstance(value, str):
        return value
    return _json(value)


def migration_sql(current, upto=SCHEMA_VERSION):
    statements = ['CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)']
    for version, steps in MIGRATIONS:
        if current < version <= upto:
            statements.extend(steps)
    statements.append('DELETE FROM ledger_schema')
    statements.append('INSERT INTO ledger_schema (version) VALUES (%d)' % upto)
    return statements


def _incoming_rows(report, keys_of):
    clean = tuple(report['clean_statuses'])
    time = report.get('finished') or report.get('started')
    for host, entry in sorted(report['hosts'].items()):
        for key, record in zip(keys_of(entry['settings']), entry['settings']):
            yield '(%s)' % ', '.join(sql_literal(value) for value in (
                host, key, str(record.get('name')), _text(record.get('target')), str(record.get('status')),
                _json(record.get('desired')), _json(record.get('live')), _json(record.get('persisted')),
                _text(record.get('source')), _text(record.get('reason')), time, _json(record.get('waiver')),
                0 if record.get('status') in clean else 1))


def append_sql(report, scope, keys_of, recorded_by):
    """The statements that append one run (after the lock is taken): the run, its hosts, and its
    records, each drifted record counted on from the same record of the scope's run before."""
    run = sql_literal(report['run_id'])
    summary = report['summary']
    given = ', '.join('%s AS c%d' % (sql_literal(value), index) for index, value in enumerate((
        scope, report.get('started'), report.get('finished'), recorded_by, summary['state'], summary['hosts'],
        summary['settings'], summary['drifted'], summary.get('waived', 0), report.get('collection_version'))))
    statements = [
        'INSERT INTO runs (run_id, seq, previous_run, scope, started, finished, recorded_by, state, hosts, settings, '
        'drifted, waived, collection_version) SELECT * FROM (SELECT %s AS run_id, COALESCE(MAX(seq), 0) + 1 AS seq, '
        '(SELECT last.run_id FROM runs last WHERE last.scope = %s ORDER BY last.seq DESC LIMIT 1) AS previous_run '
        'FROM runs) candidate CROSS JOIN (SELECT %s) given '
        'WHERE NOT EXISTS (SELECT 1 FROM runs WHERE run_id = %s)' % (run, sql_literal(scope), given, run),
        'CREATE TEMP TABLE incoming (host TEXT, setting_key TEXT, name TEXT, target TEXT, status TEXT, desired TEXT, '
        'live TEXT, persisted TEXT, source TEXT, reason TEXT, time TEXT, waiver TEXT, drifted INTEGER)',
    ]
    rows = list(_incoming_rows(report, keys_of))
    for start in range(0, len(rows), BATCH):
        statements.append('INSERT INTO incoming VALUES ' + ', '.join(rows[start:start + BATCH]))
    statements.extend([
        'INSERT INTO records (run_id, host, setting_key, name, target, status, desired, live, persisted, source, '
        'reason, time, drift_since, drift_runs, waiver) SELECT %s, i.host, i.setting_key, i.name, i.target, i.status, '
        'i.desired, i.live, i.persisted, i.source, i.reason, i.time, '
        'CASE WHEN i.drifted = 0 THEN NULL WHEN p.drift_runs > 0 THEN p.drift_since ELSE i.time END, '
        'CASE WHEN i.drifted = 0 THEN 0 WHEN p.drift_runs > 0 THEN p.drift_runs + 1 ELSE 1 END, i.waiver '
        'FROM incoming i LEFT JOIN records p ON p.run_id = (SELECT previous_run FROM runs WHERE run_id = %s) '
        'AND p.host = i.host AND p.setting_key = i.setting_key '
        # SQLite reads the ON of an upsert after a join as the join's unless a WHERE comes between.
        'WHERE 1 = 1 ON CONFLICT (run_id, host, setting_key) DO NOTHING' % (run, run),
        'DROP TABLE incoming',
    ])
    for host, entry in sorted(report['hosts'].items()):
        statements.append('INSERT INTO run_hosts (run_id, host, state) VALUES (%s, %s, %s) '
                          'ON CONFLICT (run_id, host) DO NOTHING' % (run, sql_literal(host), sql_literal(entry['state'])))
    return statements


class Ledger(object):
    """What both kinds of ledger do; a backend gives _script (statements in one locked
    transaction) and query (rows as dicts)."""

    def __init__(self, spec):
        self.spec = spec
        self._ready = False

    def version(self):
        raise NotImplementedError

    def _script(self, statements):
        raise NotImplementedError

    def query(self, sql):
        raise NotImplementedError

    def migrate(self, upto=SCHEMA_VERSION):
        current = self.version()
        if current > SCHEMA_VERSION:
            raise LedgerError('ledger %s has schema version %d; this collection knows up to %d: update the collection'
                              % (self.describe(), current, SCHEMA_VERSION))
        if current < upto:
            self._script(migration_sql(current, upto))
        self._ready = True

    def append(self, report, scope, keys_of, recorded_by):
        """Append one drift.json document (with its run_id); a run already there is left as it is."""
        if not self._ready:
            self.migrate()
        self._script(append_sql(report, scope, keys_of, recorded_by))

    def previous(self, run_id):
        """The run before ``run_id`` in its scope ({run_id, finished}) and its records
        ({host: {setting key: {status, live, drift_since, drift_runs}}}), or (None, {})."""
        rows = self.query('SELECT p.run_id, p.finished FROM runs r JOIN runs p ON p.run_id = r.previous_run '
                          'WHERE r.run_id = %s' % sql_literal(run_id))
        if not rows:
            return None, {}
        previous = rows[0]
        found = {}
        for row in self.query('SELECT host FROM run_hosts WHERE run_id = %s' % sql_literal(previous['run_id'])):
            found[row['host']] = {}
        for row in self.query('SELECT host, setting_key, status, live, drift_since, drift_runs FROM records '
                              'WHERE run_id = %s' % sql_literal(previous['run_id'])):
            found.setdefault(row['host'], {})[row['setting_key']] = {
                'status': row['status'], 'live': json.loads(row['live']) if row['live'] is not None else None,
                'drift_since': row['drift_since'], 'drift_runs': row['drift_runs']}
        return previous, found

    def trend(self, scope, limit=60):
        """The scope's last runs, oldest first: run_id, finished, state, hosts, settings, drifted, waived."""
        rows = self.query('SELECT run_id, seq, finished, state, hosts, settings, drifted, waived FROM runs '
                          'WHERE scope = %s ORDER BY seq DESC LIMIT %d' % (sql_literal(scope), limit))
        return list(reversed(rows))

    def prune(self, scope, keep_runs):
        """Remove the runs of ``scope`` older than its ``keep_runs`` last ones, with their records and
        hosts; returns {'runs': removed, 'records': removed, 'kept': runs left}.  The marks of the next
        run need only the last run (each record carries its drift_since and drift_runs forward), so
        nothing a later run shows is lost; another scope's runs are never touched."""
        if isinstance(keep_runs, bool) or not isinstance(keep_runs, int) or keep_runs < 1:
            raise LedgerError('keep runs: %r is not a whole number of runs of at least 1 (the last run is what '
                              'the next one is marked against)' % (keep_runs,))
        if not self._ready:
            self.migrate()
        old = self.query('SELECT r.run_id, (SELECT COUNT(*) FROM records c WHERE c.run_id = r.run_id) AS n '
                         'FROM runs r WHERE %s ORDER BY r.seq' % _older_runs(scope, keep_runs))
        for start in range(0, len(old), BATCH):
            listed = ', '.join(sql_literal(row['run_id']) for row in old[start:start + BATCH])
            self._script(['DELETE FROM %s WHERE run_id IN (%s)' % (table, listed)
                          for table in ('records', 'run_hosts', 'runs')])
        kept = self.query('SELECT COUNT(*) AS n FROM runs WHERE scope = %s' % sql_literal(scope))[0]['n']
        return {'runs': len(old), 'records': sum(row['n'] for row in old), 'kept': kept}

    def describe(self):
        return self.spec


def _older_runs(scope, keep_runs):
    """SQL condition on ``r`` (runs): a run of ``scope`` before its ``keep_runs`` last ones."""
    return ('r.scope = %s AND r.seq < (SELECT MIN(kept.seq) FROM (SELECT seq FROM runs WHERE scope = %s '
            'ORDER BY seq DESC LIMIT %d) kept)' % (sql_literal(scope), sql_literal(scope), keep_runs))


class SqliteLedger(Ledger):
    def __init__(self, spec):
        super(SqliteLedger, self).__init__(spec)
        self.path = os.path.abspath(os.path.expanduser(spec[len('sqlite://'):] if spec.startswith('sqlite://') else spec))
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise LedgerError('ledger %s: the folder %s does not exist' % (self.path, folder))

    def describe(self):
        return self.path

    def _connect(self):
        # A writer waits up to 5 minutes for another's transaction; isolation_level None: the
        # scripts say BEGIN and COMMIT themselves.
        connection = sqlite3.connect(self.path, timeout=300, isolation_level=None)
        connection.row_factory = sqlite3.Row
        return connection

    def version(self):
        try:
            rows = self.query('SELECT version FROM ledger_schema')
        except LedgerError as exc:
            if 'no such table' in str(exc):
                return 0
            raise
        return max([row['version'] for row in rows] or [0])

    def _script(self, statements):
        connection = None
        try:
            connection = self._connect()
            connection.executescript('BEGIN IMMEDIATE;\n' + ';\n'.join(statements) + ';\nCOMMIT;')
        except sqlite3.Error as exc:
            raise LedgerError('ledger %s: %s' % (self.path, exc))
        finally:
            if connection is not None:
                connection.close()

    def query(self, sql):
        connection = None
        try:
            connection = self._connect()
            return [dict(row) for row in connection.execute(sql).fetchall()]
        except sqlite3.Error as exc:
            raise LedgerError('ledger %s: %s' % (self.path, exc))
        finally:
            if connection is not None:
                connection.close()


class PostgresLedger(Ledger):
    """A PostgreSQL ledger through psql: every write is one psql run of one transaction."""

    def __init__(self, spec, psql=None):
        super(PostgresLedger, self).__init__(spec)
        self.psql = psql or os.environ.get('DBHOST_DRIFT_LEDGER_PSQL') or shutil.which('psql')
        if not self.psql:
            raise LedgerError('a PostgreSQL ledger needs the psql client (Debian: postgresql-client), '
                              'which is not on PATH')

    def describe(self):
        # Never print a password given in the connection string.
        head, sep, tail = self.spec.partition('@')
        if sep and ':' in head.split('//', 1)[-1]:
            return head.split('//', 1)[0] + '//' + head.split('//', 1)[-1].split(':', 1)[0] + ':***@' + tail
        return self.spec

    def _psql(self, arguments, stdin=None):
        command = [self.psql, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', self.spec] + arguments
        env = dict(os.environ, PGAPPNAME='dbhost-drift-ledger', PGCONNECT_TIMEOUT=os.environ.get('PGCONNECT_TIMEOUT', '30'))
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise LedgerError('ledger %s: psql: %s' % (self.describe(), (done.stderr or done.stdout).strip()))
        return done.stdout

    def version(self):
        found = self._psql(['-A', '-t', '-c', "SELECT to_regclass('ledger_schema') IS NOT NULL"]).strip()
        if found != 't':
            return 0
        return int(self._psql(['-A', '-t', '-c', 'SELECT COALESCE(MAX(version), 0) FROM ledger_schema']).strip())

    def _script(self, statements):
        self._psql(['-f', '-'], 'BEGIN;\nSELECT pg_advisory_xact_lock(%d);\n' % PG_LOCK
                   + ';\n'.join(statements) + ';\nCOMMIT;\n')

    def query(self, sql):
        out = self._psql(['-A', '-t', '-c', "SELECT COALESCE(json_agg(row_to_json(t)), '[]'::json) FROM (%s) t" % sql])
        return json.loads(out)


def open_ledger(spec):
    """The ledger a spec names: a postgresql:// or postgres:// connection string, else a SQLite file."""
    if not spec or not str(spec).strip():
        raise LedgerError('no ledger given')
    spec = str(spec).strip()
    if spec.startswith(('postgresql://', 'postgres://')):
        return PostgresLedger(spec)
    return SqliteLedger(spec)
