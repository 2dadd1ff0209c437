# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pgbench on the VM lab: what huge pages and direct I/O change, measured, not asserted.

Boots a VM of the lab (scripts/vmlab.py), prepares and tunes it as the reboot scenario does
(tests/vm: PostgreSQL 15 on the data disk, all five roles: huge pages on node 1 and the
service bound there), then runs pgbench inside the VM in turn:
  tuning       (--pairs tuning) select-only (-S) before tune.yml (Debian's defaults:
               huge_pages = try with no pool, so 4 kB pages, no binding) and after it
               (huge pages on node 1, the service bound there, THP never, the queues
               set): the rounds before, then the rounds after, since tuning is one-way here
  huge pages   select-only (-S) with huge_pages = on (the pool the roles sized) and off
  WAL I/O      the TPC-B-like default with wal_sync_method = open_datasync, which with
               wal_level = minimal opens the WAL with O_DIRECT (direct), and fdatasync
               (buffered, through the page cache)
Each configuration is set with ALTER SYSTEM and a restart, checked with SHOW, and run
--rounds times, alternating, so that a change of the machine's load hits both sides.
Prints one line per run and the median TPS, the spread (lowest and highest) and the ratio
per pair. The VM is emulated (qemu TCG on a shared machine): the figures are for ratios, not
for absolute TPS.

Usage: . scripts/lib.sh && python3 bench/vm_pgbench.py [--seconds 60] [--rounds 2] [--clients 4]
       [--pairs tuning,huge,wal]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


vmlab = load('vmlab', 'scripts/vmlab.py')
scenario_module = load('run_scenario', 'tests/vm/run_scenario.py')

PSQL = ['runuser', '-u', 'postgres', '--', 'psql', '-XAtq']
PAIRS = (
    ('huge pages', ['-S'], {'huge_pages': 'on'}, {'huge_pages': 'off'}, ('on', 'off')),
    ('WAL I/O', [], {'wal_sync_method': 'open_datasync'}, {'wal_sync_method': 'fdatasync'}, ('direct', 'buffered')),
)
# Both WAL runs: wal_level = minimal (no archive, no replica), so open_datasync is O_DIRECT.
WAL_BASE = {'wal_level': 'minimal', 'max_wal_senders': '0'}


def configure(scenario, settings):
    # One -c per statement: ALTER SYSTEM cannot run inside the transaction of a multi-statement -c.
    statements = ' '.join('-c "ALTER SYSTEM SET %s = \'%s\'"' % item for item in sorted(settings.items()))
    scenario.ssh(['cd / && %s %s && systemctl restart %s' % (' '.join(PSQL), statements, scenario_module.SERVICE)])
    for name, value in settings.items():
        shown = scenario.ssh(['cd / && %s -c "SHOW %s"' % (' '.join(PSQL), name)]).strip()
        if shown != value:
            raise RuntimeError('%s is %r after the restart, not %r' % (name, shown, value))


def pgbench(scenario, options, args):
    argv = ['runuser', '-u', 'postgres', '--', 'pgbench', '-n', '-T', str(args.seconds), '-c', str(args.clients),
            '-j', '2'] + options + ['bench']
    out = scenario.ssh(['cd / && ' + ' '.join(argv)])
    match = re.search(r'tps = ([0-9.]+) \(without initial connection time\)', out)
    if not match:
        raise RuntimeError('no TPS in pgbench output:\n' + out)
    return float(match.group(1))


def summary(title, labels, tps):
    """'title: a 1.0 tps (0.9-1.1), b ... (medians of N, lowest-highest): a/b = r'."""
    medians = [statistics.median(tps[label]) for label in labels]
    return '%s: %s (medians of %d, lowest-highest): %s/%s = %.2f' % (
        title, ', '.join('%s %.1f tps (%.1f-%.1f)' % (label, median, min(tps[label]), max(tps[label]))
                         for label, median in zip(labels, medians)),
        len(tps[labels[0]]), labels[0], labels[1], medians[0] / medians[1])


def untuned_then_tuned(scenario, args):
    """Select-only rounds on the untuned host, then tune.yml, then as many rounds on the tuned one."""
    tps = {'untuned': [], 'tuned': []}
    for label in ('untuned', 'tuned'):
        if label == 'tuned':
            scenario.step('tune.yml', scenario.tune)
        for dummy in range(args.rounds):
            value = pgbench(scenario, ['-S'], args)
            tps[label].append(value)
            print('  %-10s %-9s %8.1f tps' % ('tuning', label, value))
            sys.stdout.flush()
    print(summary('tuning (select-only)', ('tuned', 'untuned'), tps))


def run(state, args):
    scenario = scenario_module.Scenario(state)
    scenario.step('prepare', scenario.prepare)
    pairs = args.pairs.split(',')
    if 'tuning' not in pairs:
        scenario.step('tune.yml', scenario.tune)
    scenario.ssh(['cd / && runuser -u postgres -- createdb bench && runuser -u postgres -- pgbench -q -i -s %d bench'
                  % args.scale])
    print('pgbench on the VM lab (qemu TCG, 4 vCPUs on 2 NUMA nodes, PostgreSQL 15 bound to node 1), '
          'scale %d, %d clients, %d s per run' % (args.scale, args.clients, args.seconds))
    if 'tuning' in pairs:
        untuned_then_tuned(scenario, args)
    for key, (title, options, first, second, labels) in zip(('huge', 'wal'), PAIRS):
        if key not in pairs:
            continue
        base = WAL_BASE if title == 'WAL I/O' else {}
        tps = {labels[0]: [], labels[1]: []}
        for dummy in range(args.rounds):
            for label, settings in ((labels[0], first), (labels[1], second)):
                configure(scenario, dict(base, **settings))
                value = pgbench(scenario, options, args)
                tps[label].append(value)
                shown = ', '.join('%s=%s' % item for item in sorted(dict(base, **settings).items()))
                print('  %-10s %-9s %8.1f tps  (%s)' % (title, label, value, shown))
                sys.stdout.flush()
        print(summary(title, labels, tps))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--seconds', type=int, default=60)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--scale', type=int, default=5)
    parser.add_argument('--name', default='bench')
    parser.add_argument('--pairs', default='huge,wal', help='what to compare: tuning, huge, wal (comma-separated)')
    args = parser.parse_args()
    start = time.time()
    with vmlab.vm(args.name, vmlab.build()) as state:
        run(state, args)
    print('total %.0f s' % (time.time() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
