# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the effect checks (db_effect) add to a drift check's host-side time, measured.

Starts a throwaway PostgreSQL cluster (initdb, pg_ctl; as the tests do), then runs host_state's
whole check (check mode, nothing changes) for the shared_memory role of this machine with
shared_memory_service naming the cluster, in one process, alternately with and without the
effect calls (state/compile/db_effect.py compile_effects replaced by a no-op), ``--rounds``
times each, and prints the median, the spread (min-max) and the ratio.  systemd does not run
here: ``systemctl show`` of that service is answered with the postmaster's pid (every other
command runs for real), so the checks read the real processes' /proc.

    . scripts/lib.sh && python3 bench/db_effect_cost.py --rounds 30

Read ratios, not seconds: the machine is shared.  No figure here is asserted by a test.
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(CHECKOUT, '.cache', 'collections'))

from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired  # noqa: E402
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState  # noqa: E402
from ansible_collections.dbhost.tuning.tests.unit.helpers import run, with_defaults  # noqa: E402

SERVICE = 'dbhost-bench-postgresql.service'
EFFECT_ROWS = ('%s shared memory in huge pages' % SERVICE, '%s locked memory' % SERVICE)


def as_postgres(argv):
    return (['runuser', '-u', 'postgres', '--'] + argv) if os.geteuid() == 0 else argv


def start_cluster(base):
    bindir = os.path.dirname(sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))[-1])
    data = os.path.join(base, 'data')
    subprocess.run(as_postgres([os.path.join(bindir, 'initdb'), '-D', data, '-A', 'trust', '--no-sync']),
                   check=True, capture_output=True)
    with open(os.path.join(data, 'postgresql.conf'), 'a') as handle:
        handle.write("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\nshared_buffers = 32MB\n"
                     "huge_pages = try\n" % (20000 + os.getpid() % 20000, base))
    pg_ctl = as_postgres([os.path.join(bindir, 'pg_ctl'), '-D', data, '-w', '-l', os.path.join(base, 'log')])
    subprocess.run(pg_ctl + ['start'], check=True, capture_output=True)
    with open(os.path.join(data, 'postmaster.pid')) as handle:
        return int(handle.readline()), pg_ctl


def into_cgroup(main_pid):
    """The cluster's processes in a cgroup of their own (v1 name=systemd, as systemd would hold them), or ''."""
    folder = '/sys/fs/cgroup/systemd/dbhost-bench-pg-%d' % os.getpid()
    try:
        os.mkdir(folder)
    except OSError:
        return ''
    for name in os.listdir('/proc'):
        try:
            with open('/proc/%s/stat' % name) as handle:
                ppid = int(handle.read().rpartition(')')[2].split()[1])
            if int(name) == main_pid or ppid == main_pid:
                with open(os.path.join(folder, 'cgroup.procs'), 'w') as handle:
                    handle.write(name)
        except (OSError, ValueError, IndexError):
            continue
    return '/' + os.path.basename(folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--rounds', type=int, default=20)
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix='dbhost-bench-pg-', dir='/tmp')
    shutil.chown(base, 'postgres', 'postgres')
    main_pid, pg_ctl = start_cluster(base)

    cgroup = into_cgroup(main_pid)

    def runner(argv, **kwargs):
        if argv[:3] == ['systemctl', 'show', SERVICE] and '-pMainPID' in argv:
            return 0, 'MainPID=%d\nControlGroup=%s\nActiveState=active\nLoadState=loaded\n' % (main_pid, cgroup), ''
        return run(argv, kwargs.get('data'), kwargs.get('environ_update'))

    inputs = with_defaults({'shared_memory': {'shared_memory_engine': 'postgresql', 'shared_memory_size': '64M',
                                              'shared_memory_user': 'postgres', 'shared_memory_service': SERVICE}})
    real = desired.compile_effects
    times = {'with': [], 'without': []}
    last = {}
    try:
        for dummy in range(args.rounds):
            for side in ('with', 'without'):
                desired.compile_effects = real if side == 'with' else (lambda state, given: None)
                start = time.process_time()
                wall = time.perf_counter()
                state = HostState(['shared_memory'], inputs, check_mode=True, runner=runner)
                result = state.run()
                times[side].append((time.process_time() - start, time.perf_counter() - wall))
                effects = [s for s in result.settings if s.name in EFFECT_ROWS]
                assert len(effects) == (2 if side == 'with' else 0), [s.name for s in result.settings]
                last[side] = [(s.name, s.status, s.live) for s in effects]
    finally:
        desired.compile_effects = real
        subprocess.run(pg_ctl + ['-m', 'fast', 'stop'], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
        if cgroup:
            os.rmdir('/sys/fs/cgroup/systemd' + cgroup)
    print('host_state check of shared_memory (this machine), %d rounds each, alternating' % args.rounds)
    medians = {}
    for side in ('without', 'with'):
        cpu = [c * 1000 for c, w in times[side]]
        wall = [w * 1000 for c, w in times[side]]
        medians[side] = statistics.median(cpu)
        print('%-8s effect checks: CPU median %.1f ms (min %.1f, max %.1f); wall median %.1f ms (min %.1f, max %.1f)'
              % (side, medians[side], min(cpu), max(cpu), statistics.median(wall), min(wall), max(wall)))
    print('with / without (CPU medians): %.3f' % (medians['with'] / medians['without']))
    for name, status, live in last['with']:
        print('  %s: %s (%s)' % (name, status, live))


if __name__ == '__main__':
    main()
