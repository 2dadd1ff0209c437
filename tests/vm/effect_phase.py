# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The effect phase of the reboot scenario (issue 40): does drift.yml tell what the running
databases really get?  Run by run_scenario.py after the reboot, once TuneD's checks are done and
TuneD is stopped, on the tuned VM; each case changes the system by hand (as an admin or another
tool would), runs scripts/drift-check and keeps the effect rows (kind db_effect):

  pg-try        PostgreSQL with huge_pages = try and its node's pool emptied, then started:
                it runs in 4 kB pages            -> "shared memory in huge pages" drift, and
                "huge page setting of the engine" drift: huge_pages = try, fell back; the
                kernel's side, the pool node1/hugepages-2048kB: drift, short of what is asked
  pg-sized      the pool back to its size, huge_pages = on, the service restarted -> both ok
  maria-before  MariaDB running buffered (a site file: innodb_flush_method = fsync), then
                tune.yml with a direct_io_databases item asking O_DIRECT, no restart
                                                 -> "data files with O_DIRECT" pending_restart
  maria-after   mariadb.service restarted        -> ok; and the module db_effect asked for
                MariaDB's own setting (engine_huge_pages): large_pages = OFF, none asked -> drift
  maria-large   a site file adding large_pages = 1, restarted: the free pages are PostgreSQL's
                pool's margin only, so MariaDB falls back silently -> drift, "fell back"
  maria-forced  a drop-in starting mariadbd with --innodb-flush-method=fsync, restarted
                after the change                 -> drift
and then puts the drop-in away and stops MariaDB (prepare.sh disabled it at boot).  The tuned instance's rows of the drift checks before and
after the reboot must all be ok (no false alarm).  check(checks, evidence) judges; the
evidence is kept in results/effect.json.  Standard library only.
"""

import json
import os

PG = 'postgresql@15-main.service'
PG_CONF = '/etc/postgresql/15/main/postgresql.conf'
MARIA = 'mariadb.service'
NODE_POOL = '/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages'
SITE_CNF = '/etc/mysql/mariadb.conf.d/60-site.cnf'
# Small enough for the 2 GB VM under the postgresql profile's strict overcommit.
SITE_CNF_TEXT = ('# site policy, read after 50-server.cnf\n[mysqld]\ninnodb_flush_method = fsync\n'
                 'innodb_buffer_pool_size = 64M\nkey_buffer_size = 8M\naria_pagecache_buffer_size = 8M\n')
FORCED = '/etc/systemd/system/mariadb.service.d/99-site.conf'
FORCED_TEXT = '[Service]\nEnvironment=MYSQLD_OPTS=--innodb-flush-method=fsync\n'
# The MariaDB item beside the scenario's PostgreSQL one (inventory/group_vars/all.yml), no restart by us.
EXTRA_VARS = '''direct_io_restart: false
direct_io_databases:
  - engine: postgresql
    path: /etc/postgresql/15/main/postgresql.conf
    service: "{{ dbhost_vm_service }}"
    params:
      shared_buffers: "{{ dbhost_vm_shared_buffers }}"
      huge_pages: "on"
  - engine: mysql
    path: /etc/mysql/my.cnf
    service: mariadb.service
    params:
      innodb_flush_method: O_DIRECT
'''
LARGE_CNF = '/etc/mysql/mariadb.conf.d/61-site-large-pages.cnf'
LARGE_CNF_TEXT = '# site policy: large pages for the buffer pool\n[mysqld]\nlarge_pages = 1\n'
HUGE = '%s shared memory in huge pages' % PG
ENGINE = '%s huge page setting of the engine' % PG
DIRECT = '%s data files with O_DIRECT' % MARIA
MARIA_ENGINE = '%s huge page setting of the engine' % MARIA
POOL = 'node1/hugepages-2048kB'   # the kernel's side: the pool asked (tmpfiles.d) against what is allocated
# case: [(the row judged, the status it must have, words its live value or reason must hold, or None)]
EXPECT = {'pg-try': [(HUGE, 'drift', None), (ENGINE, 'drift', 'huge_pages = try, fell back to normal pages'),
                     (POOL, 'drift', 'short: the kernel allocated 0 of the')],
          'pg-sized': [(HUGE, 'ok', None), (ENGINE, 'ok', 'huge_pages = on, in huge pages'), (POOL, 'ok', None)],
          'maria-before': [(DIRECT, 'pending_restart', None)],
          'maria-after': [(DIRECT, 'ok', None), (MARIA_ENGINE, 'drift', 'large_pages = OFF, no huge pages asked')],
          'maria-large': [(MARIA_ENGINE, 'drift', 'large_pages = ON, fell back to normal pages')],
          'maria-forced': [(DIRECT, 'drift', None)]}


def _effects(records, kinds=('db_effect',)):
    return dict((r['name'], {k: r.get(k) for k in ('status', 'live', 'reason', 'detail', 'target', 'owner')})
                for r in records if r.get('kind') in kinds)


def _pg_restart(scenario, huge_pages, pages):
    # one command line: ssh hands the remote shell one string
    scenario.ssh(['systemctl stop %s && echo %d > %s && sed -i "s/^huge_pages *=.*/huge_pages = %s/" %s && '
                  'systemctl start %s' % (PG, pages, NODE_POOL % 1, huge_pages, PG_CONF, PG)])


def _put(scenario, path, text):
    local = os.path.join(scenario.results, 'effect-' + os.path.basename(path))
    with open(local, 'w') as handle:
        handle.write(text)
    scenario.ssh(['mkdir -p %s && cat > %s' % (os.path.dirname(path), path)], stdin=local)


def _drift(scenario, case, extra):
    dummy, records = scenario.drift_check('effect-' + case, *extra)
    return _effects(records, ('db_effect', 'hugepages'))


def _maria_engine(scenario, case):
    """The module db_effect run alone for MariaDB's own setting (no role tunes MariaDB's huge pages here)."""
    log_name = 'effect-%s-module.log' % case
    args = json.dumps({'service': MARIA, 'engine': 'mysql', 'checks': ['engine_huge_pages']})
    scenario.ansible(['ansible', 'all', '-i', scenario.inventory, '--check', '-o', '-m', 'dbhost.tuning.db_effect',
                      '-a', args], log_name)
    with open(os.path.join(scenario.results, log_name)) as handle:
        # ansible -o: one line 'HOST | SUCCESS => {json}' among the warnings
        lines = [line for line in handle if ' | SUCCESS => {' in line]
    if not lines:
        raise RuntimeError('db_effect for %s did not succeed; see %s' % (MARIA, log_name))
    return _effects([dict(r, kind='db_effect') for r in json.loads(lines[-1].split(' => ', 1)[1])['settings']])


def run(scenario, pages):
    """Every case in turn; returns {case: the effect rows of its drift check}."""
    seen = {}
    _pg_restart(scenario, 'try', 0)
    seen['pg-try'] = _drift(scenario, 'pg-try', ())
    _pg_restart(scenario, 'on', pages)
    seen['pg-sized'] = _drift(scenario, 'pg-sized', ())
    # MariaDB, disabled by prepare.sh, started here before anything tunes it, running buffered
    _put(scenario, SITE_CNF, SITE_CNF_TEXT)
    scenario.ssh(['systemctl', 'restart', MARIA])
    extra = os.path.join(scenario.results, 'effect-vars.yml')
    with open(extra, 'w') as handle:
        handle.write(EXTRA_VARS)
    rc = scenario.ansible(['ansible-playbook', '-i', scenario.inventory, '-e', '@' + extra,
                           os.path.join(scenario.root, 'playbooks', 'tune.yml')], 'effect-tune.log')
    if rc != 0:
        raise RuntimeError('tune.yml with MariaDB failed (exit %d); see effect-tune.log' % rc)
    seen['maria-before'] = _drift(scenario, 'maria-before', ('-e', '@' + extra))
    scenario.ssh(['systemctl', 'restart', MARIA])
    seen['maria-after'] = _drift(scenario, 'maria-after', ('-e', '@' + extra))
    seen['maria-after'].update(_maria_engine(scenario, 'maria-after'))
    _put(scenario, LARGE_CNF, LARGE_CNF_TEXT)
    scenario.ssh(['systemctl', 'restart', MARIA])
    seen['maria-large'] = _maria_engine(scenario, 'maria-large')
    _put(scenario, FORCED, FORCED_TEXT)
    scenario.ssh(['systemctl daemon-reload && systemctl restart %s' % MARIA])
    seen['maria-forced'] = _drift(scenario, 'maria-forced', ('-e', '@' + extra))
    # the drop-in put away, and MariaDB stopped: the rest of the scenario is PostgreSQL's
    scenario.ssh(['rm -f %s %s && systemctl daemon-reload && systemctl stop %s' % (FORCED, LARGE_CNF, MARIA)])
    with open(os.path.join(scenario.results, 'effect.json'), 'w') as handle:
        json.dump(seen, handle, indent=1, sort_keys=True)
    return seen


def check(checks, evidence):
    """The tuned instance: every effect row ok, before and after the reboot; each case: its row's status."""
    for when in ('before', 'after'):
        rows = _effects(evidence[when])
        checks.that(len(rows) >= 5, 'effect rows of the tuned PostgreSQL %s the reboot: %s' % (when, sorted(rows)))
        for name, row in sorted(rows.items()):
            checks.equal('%s the reboot: %s' % (when, name), row['status'], 'ok')
    for case, rows in sorted(EXPECT.items()):
        for name, status, live in rows:
            row = evidence.get('effect', {}).get(case, {}).get(name) or {}
            seen = '%s | %s' % (row.get('live'), row.get('reason'))
            checks.that(row.get('status') == status and (live or '') in seen,
                        'effect %s: %s is %s (wanted %s; live | reason %r%s)'
                        % (case, name, row.get('status'), status, seen, ', wanted %r in it' % live if live else ''))
