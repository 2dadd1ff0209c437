# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the effect checks (db_effect) add to a drift check's host-side time, measured.

Starts a throwaway PostgreSQL cluster (initdb, pg_ctl; as the tests do), then runs host_state's
whole check (check mode, nothing changes) for ``--roles`` of this machine (default: kernel_params with
its postgresql profile and shared_memory, the drift check of a PostgreSQL host; ``--roles
shared_memory`` gives the effect checks against that role alone) with
shared_memory_service naming the cluster, in one process, alternately with and without the
effect calls (state/compile/db_effect.py compile_effects replaced by a no-op), ``--rounds``
times each, and prints the median, the spread (min-max) and the ratio.  systemd does not run
here: ``systemctl show`` of that service is answered with the postmaster's pid (every other
command runs for real), so the checks read the real processes' /proc.

    . scripts/lib.sh && python3 bench/db_effect_cost.py --rounds 30 [--roles kernel_params,shared_memory]

``--process`` runs each check as the host runs it in a drift check: the host_state module in a
process of its own (interpreter start, imports, the module's JSON out), so that the figure is the
host-side time of the drift check, not only the checks' own.  Without it, host_state runs in this
process and only the checks' time is compared.

Read ratios, not seconds: the machine is shared.  No figure here is asserted by a test.
"""

import argparse
import glob
import json
import resource
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(CHECKOUT, '.cache', 'collections'))

from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired, registry  # noqa: E402
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState  # noqa: E402
from ansible_collections.dbhost.tuning.tests.unit.helpers import run, with_defaults  # noqa: E402

SERVICE = 'dbhost-bench-postgresql.service'
EFFECT_ROWS = ('%s shared memory in huge pages' % SERVICE, '%s locked memory' % SERVICE,
               '%s huge page setting of the engine' % SERVICE)


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


# The host_state module in a process of its own, as Ansible runs it on the host: argv[1] is a JSON file
# of its arguments, argv[2] 'with' or 'without' the effect checks, argv[3] the service's systemctl show.
PROCESS = '''
import json, sys
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
args, side, shown = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
real = basic.AnsibleModule.run_command
def run_command(self, argv, *more, **kwargs):
    if list(argv[:3]) == ['systemctl', 'show', args['inputs']['shared_memory']['shared_memory_service']]:
        return 0, shown, ''
    return real(self, argv, *more, **kwargs)
basic.AnsibleModule.run_command = run_command
if side == 'without':
    from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
    desired.compile_effects = lambda state, given: None
from ansible_collections.dbhost.tuning.plugins.modules import host_state
with patch_module_args(args):
    host_state.main()
'''


def in_process(roles, inputs, runner, side):
    """(CPU s, wall s, records) of host_state run in this process."""
    start, wall = time.process_time(), time.perf_counter()
    result = HostState(roles, inputs, registry.Context(check_mode=True, runner=runner)).run()
    return time.process_time() - start, time.perf_counter() - wall, [
        (s.name, s.status, s.live if s.status != 'unsupported' else s.reason) for s in result.settings]


def as_process(roles, inputs, shown, side, work):
    """(CPU s, wall s, records) of the host_state module run as a process of its own."""
    path = os.path.join(work, 'args.json')
    with open(path, 'w') as handle:
        json.dump(dict(roles=roles, inputs=inputs, _ansible_check_mode=True), handle)
    env = dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, '.cache', 'collections'))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run([sys.executable, '-c', PROCESS, path, side, shown], capture_output=True, text=True,
                          env=env, check=False)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(done.stdout or '{}')
    if 'settings' not in result:
        raise SystemExit('host_state failed: %s %s' % (done.stdout[-2000:], done.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, [(r['name'], r['status'], r['live'] if r['status'] != 'unsupported' else r.get('reason'))
                       for r in result['settings']]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--rounds', type=int, default=20)
    parser.add_argument('--process', action='store_true',
                        help='run host_state as the host does, the module in a process of its own')
    parser.add_argument('--roles', default='kernel_params,shared_memory',
                        help='the roles of the drift check, comma-separated (default: kernel_params,shared_memory)')
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix='dbhost-bench-pg-', dir='/tmp')
    shutil.chown(base, 'postgres', 'postgres')
    main_pid, pg_ctl = start_cluster(base)

    cgroup = into_cgroup(main_pid)

    shown = 'MainPID=%d\nControlGroup=%s\nActiveState=active\nLoadState=loaded\n' % (main_pid, cgroup)

    def runner(argv, **kwargs):
        if argv[:3] == ['systemctl', 'show', SERVICE] and '-pMainPID' in argv:
            return 0, shown, ''
        return run(argv, kwargs.get('data'), kwargs.get('environ_update'))

    roles = [role for role in args.roles.split(',') if role]
    inputs = with_defaults({'shared_memory': {'shared_memory_engine': 'postgresql', 'shared_memory_size': '64M',
                                              'shared_memory_user': 'postgres', 'shared_memory_service': SERVICE},
                            'kernel_params': {'kernel_params_profile': 'postgresql'}})
    real = desired.compile_effects
    times = {'with': [], 'without': []}
    last, rows = {}, {}
    try:
        for dummy in range(args.rounds):
            for side in ('with', 'without'):
                desired.compile_effects = real if side == 'with' else (lambda state, given: None)
                cpu, wall, records = (as_process(roles, inputs, shown, side, base) if args.process
                                      else in_process(roles, inputs, runner, side))
                times[side].append((cpu, wall))
                effects = [record for record in records if record[0] in EFFECT_ROWS]
                assert bool(effects) == (side == 'with'), [record[0] for record in records]
                last[side] = effects
                rows[side] = len(records)
    finally:
        desired.compile_effects = real
        subprocess.run(pg_ctl + ['-m', 'fast', 'stop'], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
        if cgroup:
            os.rmdir('/sys/fs/cgroup/systemd' + cgroup)
    print('host_state check of %s (this machine: %d records, %d with the effect rows), %s, %d rounds each, '
          'alternating' % (', '.join(roles), rows['without'], rows['with'],
                           'the module as a process of its own' if args.process else 'in this process', args.rounds))
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
