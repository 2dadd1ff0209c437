# -*- coding: utf-8 -*-
"""Where the controller's CPU goes when playbooks/drift.yml runs over SSH, per host.

Runs drift.yml (as scripts/drift-check does: check mode, report only, the drift_report callback
enabled) against N aliases of this machine through the sshd of bench/ssh_rig.py, with the fixture
of bench/full_bench.py, once under cProfile with a CPU clock (time.process_time) in the main
ansible-playbook process and in every forked worker, and prints the controller's CPU per host
split into:

  worker (one forked process per host and task; its CPU is the worker's own):
    host_state action plugin, its own work: role variables read (defaults, argument specs),
      templated (the host's values), validated (argument specs, misspellings)
    module payload building (AnsiballZ: _configure_module)
    transfer and execution (the ssh exec, the payload over its stdin or sftp, the wait)
    result parsing (the module's JSON) and the send of the result to the main process
    the rest of the task executor (task templating, connection set-up, the skipped gate task)
  main process:
    variables of each host and task (VariableManager.get_vars), the drift_report callback,
    result processing (strategy, default stdout callback), start-up and the rest
  ssh client processes (the rusage of the play's tree less the profiled Python processes)

and the AnsiballZ payload size of each module sent. cProfile slows Python down; read the shares,
and the unprofiled run's CPU (printed too) for the absolute figure.

Usage (as root, like full_bench.py):
  . scripts/lib.sh && python bench/drift_profile.py [--hosts 20] [--pipelining on|off|mitogen] [--ref REF]
"""

from __future__ import absolute_import, division, print_function

import argparse
import glob
import io
import json
import os
import pstats
import resource
import shutil
import signal
import subprocess
import sys
import time

import full_bench  # bench/full_bench.py, beside this file
import ssh_rig

WRAPPER = r'''
import cProfile, json, os, sys, time
OUT = os.environ['DBHOST_PROFILE_DIR']
from ansible.executor.process import worker
from ansible.executor import module_common
_run = worker.WorkerProcess._run
def _profiled_run(self):
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        return _run(self)
    finally:
        profile.disable()
        profile.dump_stats(os.path.join(OUT, 'worker-%d.prof' % os.getpid()))
        times = os.times()
        with open(os.path.join(OUT, 'workers.jsonl'), 'a') as handle:
            handle.write(json.dumps([times.user + times.system, times.children_user + times.children_system]) + '\n')
worker.WorkerProcess._run = _profiled_run
_modify = module_common.modify_module
def _sized(*args, **kwargs):
    built = _modify(*args, **kwargs)
    with open(os.path.join(OUT, 'payloads.jsonl'), 'a') as handle:
        handle.write(json.dumps([kwargs.get('module_name'), len(built.b_module_data)]) + '\n')
    return built
module_common.modify_module = _sized
import ansible.plugins.action
ansible.plugins.action.modify_module = _sized
from ansible.executor import task_executor
_execute = task_executor.TaskExecutor._execute
def _values(value):
    if isinstance(value, dict):
        return 1 + sum(_values(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return 1 + sum(_values(item) for item in value)
    return 1
def _measured(self, *args, **kwargs):
    result = _execute(self, *args, **kwargs)
    try:
        size = len(json.dumps(result, default=str))
    except Exception:
        size = -1
    parts = dict((key, len(json.dumps(value, default=str))) for key, value in result.items()) if size > 0 else {}
    with open(os.path.join(OUT, 'results.jsonl'), 'a') as handle:
        handle.write(json.dumps([self._task.action, size, _values(result), parts]) + '\n')
    return result
task_executor.TaskExecutor._execute = _measured
from ansible.cli.playbook import main
sys.argv[0] = 'ansible-playbook'
main_profile = cProfile.Profile(time.process_time)
main_profile.enable()
try:
    main()
finally:
    main_profile.disable()
    main_profile.dump_stats(os.path.join(OUT, 'main.prof'))
    times = os.times()
    with open(os.path.join(OUT, 'main.json'), 'w') as handle:
        json.dump([times.user + times.system], handle)
'''


def cumulative(stats, path_part, name):
    """Cumulative seconds of the functions NAME in files whose path contains PATH_PART."""
    total = 0.0
    for (filename, dummy, function), values in stats.stats.items():
        if function == name and path_part in filename:
            total += values[3]
    return total


def cumulative_prefix(stats, path_part, prefix):
    total = 0.0
    for (filename, dummy, function), values in stats.stats.items():
        if function.startswith(prefix) and path_part in filename:
            total += values[3]
    return total


def load(paths):
    stats = None
    for path in paths:
        if stats is None:
            stats = pstats.Stats(path)
        else:
            stats.add(path)
    return stats


def result_sizes(path):
    """A line per task action: the JSON size of its result per host, its number of values (what Ansible's
    result processing walks), and its largest keys."""
    found = {}
    if os.path.exists(path):
        with open(path) as handle:
            for line in handle:
                action, size, values, parts = json.loads(line)
                found.setdefault(action, []).append((size, values, parts))
    lines = []
    for action, rows in sorted(found.items()):
        size, values, parts = max(rows, key=lambda row: row[0])
        largest = sorted(parts.items(), key=lambda item: -item[1])[:6]
        lines.append('Result of %s: %d bytes of JSON, %d values per host (largest: %s)' % (
            action, size, values, ', '.join('%s %d' % item for item in largest)))
    return lines


def run(argv, env, cwd, logfile):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    with open(logfile, 'w') as out:
        out.write('# %s\n' % ' '.join(argv))
        out.flush()
        child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = child.wait()
        except BaseException:
            os.killpg(child.pid, signal.SIGTERM)
            child.wait()
            raise
    return rc, time.time() - start, before


def split(folder, hosts, total_cpu):
    """[(part, seconds per host)] of the controller's CPU, from the profiles in FOLDER."""
    workers = load(sorted(glob.glob(os.path.join(folder, 'worker-*.prof'))))
    main = load([os.path.join(folder, 'main.prof')])
    worker_total = sum(values[2] for values in workers.stats.values())
    main_total = sum(values[2] for values in main.stats.values())
    action = cumulative(workers, 'action/host_state.py', 'run')
    execute = cumulative(workers, 'plugins/action/__init__.py', '_execute_module')
    build = cumulative(workers, 'plugins/action/__init__.py', '_configure_module')
    low = cumulative(workers, 'plugins/action/__init__.py', '_low_level_execute_command')
    parse = cumulative(workers, 'plugins/action/__init__.py', '_parse_returned_data')
    send = cumulative(workers, 'executor/process/worker.py', 'send_task_result') or \
        cumulative(workers, 'executor/task_queue_manager.py', 'send_task_result')
    templating = cumulative(workers, 'action/host_state.py', '_value')
    # Every YAML read of the plugin happens under misspelt() or spec_errors() (the first calls).
    reading = cumulative(workers, 'action/host_state.py', '_load')
    validating = cumulative(workers, 'action/host_state.py', 'spec_errors') + \
        cumulative(workers, 'action/host_state.py', 'misspelt') - reading
    get_vars = cumulative(main, 'vars/manager.py', 'get_vars')
    callback = cumulative_prefix(main, 'callback/drift_report.py', 'v2_')
    pending = cumulative(main, 'plugins/strategy/__init__.py', '_process_pending_results')
    own = action - execute
    with open(os.path.join(folder, 'main.json')) as handle:
        main_self = json.load(handle)[0]
    workers_self = workers_children = 0.0
    with open(os.path.join(folder, 'workers.jsonl')) as handle:
        for line in handle:
            own_cpu, children_cpu = json.loads(line)
            workers_self += own_cpu
            workers_children += children_cpu
    parts = [
        ('worker: host_state action plugin, its own work', own),
        ('  of which role variables read (defaults, argument specs: YAML)', reading),
        ('  of which role variables templated (the host\'s values)', templating),
        ('  of which validated (argument specs, misspellings)', validating),
        ('worker: module payload building (AnsiballZ)', build),
        ('worker: transfer and execution (ssh, payload, wait)', max(0.0, low)),
        ('worker: result parsing (module JSON)', parse),
        ('worker: result send to the main process', send),
        ('worker: rest of the task executor (task templating, connection, gate task, fork)',
         max(0.0, worker_total - action - send)),
        ('main: variables per host and task (VariableManager.get_vars)', get_vars),
        ('main: drift_report callback', callback),
        ('main: result processing (strategy, stdout callback)', max(0.0, pending - callback)),
        ('main: start-up and the rest (parsing, plugin loading, queueing, forking)',
         max(0.0, main_total - get_vars - pending)),
        ('main: interpreter start-up and imports before the profiler', max(0.0, main_self - main_total)),
        ('worker: outside the profiler (the fork\'s copy-on-write, exit)', max(0.0, workers_self - worker_total)),
        ('ssh clients the workers run (one per module run)', workers_children),
        ('ControlPersist masters (one per host) and the rest',
         max(0.0, total_cpu - main_self - workers_self - workers_children)),
    ]
    return [(name, value / hosts) for name, value in parts], worker_total, main_total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', type=int, default=20, help='host count (default 20)')
    parser.add_argument('--pipelining', choices=('on', 'off', 'mitogen'), default='on',
                        help='on, off, or mitogen: the Mitogen strategy instead (installed as full_bench.py does)')
    parser.add_argument('--mitogen', metavar='PATH', help='as full_bench.py --mitogen')
    parser.add_argument('--forks', type=int, default=5)
    parser.add_argument('--ref', help='profile the collection as committed at REF (git archive)')
    parser.add_argument('--source-tree', action='store_true',
                        help='the collection as a source tree (galaxy.yml) instead of built and installed as the '
                             'README installs it (full_bench.py --source-tree)')
    parser.add_argument('--output', help='folder for the profiles and logs (default .benchmarks/drift_profile-<time>)')
    args = parser.parse_args()
    full_bench.preflight(argparse.Namespace(ssh=True))
    output = os.path.abspath(args.output or os.path.join(full_bench.ROOT, '.benchmarks',
                                                         'drift_profile-%s' % time.strftime('%Y%m%d-%H%M%S')))
    os.makedirs(output, exist_ok=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, full_bench.on_signal)
    fixture = full_bench.Fixture()
    rig = ssh_rig.Sshd(full_bench.log)
    try:
        fixture.set_up()
        rig.start()
        rig.keep.add(fixture.dummy.pid)
        paths, collection, commit = full_bench.collections_path(args.ref, full_bench.WORK, source_tree=args.source_tree)
        with open(os.path.join(full_bench.WORK, 'ansible.cfg'), 'w') as handle:
            handle.write('# empty: Ansible defaults\n')
        if args.pipelining == 'mitogen':
            env, dummy = full_bench.mode_env(full_bench.base_env(paths), 'mitogen', None, args)
        else:
            env, dummy = full_bench.mode_env(full_bench.base_env(paths), 'linear', args.pipelining == 'on', None)
        env.update({'ANSIBLE_CALLBACKS_ENABLED': 'dbhost.tuning.drift_report',
                    'DBHOST_DRIFT_REPORT_DIR': os.path.join(output, 'report')})
        inventory = full_bench.write_inventory(full_bench.WORK, args.hosts, fixture.overrides, rig)
        playbook = os.path.join(collection, 'playbooks', 'drift.yml')
        command = ['-i', inventory, '-f', str(args.forks), playbook, '-e', 'dbhost_drift_report_only=true']
        wrapper = os.path.join(output, 'profiled_playbook.py')
        with open(wrapper, 'w') as handle:
            handle.write(WRAPPER)
        figures = {}
        for name, argv in (('plain', [full_bench.PLAYBOOK_BIN] + command),
                           ('profiled', [full_bench.VENV_PYTHON, wrapper] + command)):
            rig.settle()
            rc, wall, before = run(argv, dict(env, DBHOST_PROFILE_DIR=output), full_bench.WORK,
                                   os.path.join(output, name + '.log'))
            rig.settle()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            figures[name] = (rc, wall, cpu)
            full_bench.log('%s run: rc %d, wall %.2f s, controller CPU %.2f s (%.3f s per host)'
                           % (name, rc, wall, cpu, cpu / args.hosts))
            if rc != 0:
                raise SystemExit('ansible-playbook failed; see %s' % os.path.join(output, name + '.log'))
        parts, worker_total, main_total = split(output, args.hosts, figures['profiled'][2])
        sizes = {}
        payload_log = os.path.join(output, 'payloads.jsonl')
        # none under Mitogen, which ships modules its own way, not as AnsiballZ payloads
        with open(payload_log) if os.path.exists(payload_log) else io.StringIO() as handle:
            for line in handle:
                module, size = json.loads(line)
                sizes.setdefault(module, set()).add(size)
        lines = ['drift.yml over SSH, %d hosts, pipelining %s, %d forks, %s; load average %.2f'
                 % (args.hosts, args.pipelining, args.forks, commit[:12] if commit else 'working tree',
                    os.getloadavg()[0]),
                 'unprofiled: wall %.2f s, controller CPU %.2f s (%.3f s per host); profiled: wall %.2f s, CPU %.2f s '
                 '(workers %.2f s, main %.2f s)' % (figures['plain'][1], figures['plain'][2],
                                                    figures['plain'][2] / args.hosts, figures['profiled'][1],
                                                    figures['profiled'][2], worker_total, main_total),
                 '', '| where (profiled, CPU clock) | s per host | share |', '|---|---:|---:|']
        total = figures['profiled'][2] / args.hosts
        for name, value in parts:
            lines.append('| %s | %.4f | %.0f%% |' % (name, value, 100.0 * value / total if total else 0))
        payloads = ['%s %s bytes' % (module, '/'.join(str(size) for size in sorted(values)))
                    for module, values in sorted(sizes.items())]
        lines += ['', 'AnsiballZ payloads: ' + ', '.join(payloads)]
        lines += result_sizes(os.path.join(output, 'results.jsonl'))
        text = '\n'.join(lines) + '\n'
        with open(os.path.join(output, 'split.md'), 'w') as handle:
            handle.write(text)
        sys.stdout.write(text)
        full_bench.log('profiles in %s (python -m pstats %s/main.prof)' % (output, output))
    finally:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)
        rig.stop()
        fixture.tear_down()
        if os.path.isdir(os.path.join(output, 'report')):
            shutil.rmtree(os.path.join(output, 'report'))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        full_bench.log('interrupted; the fixture and the sshd were removed')
        sys.exit(130)
