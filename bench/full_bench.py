# -*- coding: utf-8 -*-
"""Benchmark: a full-profile drift check (every role) against a floor play and the per-key way.

The plays run side by side in one run, in check mode against this machine, for each host count
(aliases of localhost on the local connection):

  floor    bench/floor.yml: gather_facts and one ansible.builtin.ping
  ping     bench/ping.yml: one ansible.builtin.ping and no facts, the least an AnsiballZ task costs
  bare     one task of a module that Ansible sends without AnsiballZ (BARE_MODULE below, written
           into the bench's work folder), the least any module task could cost
  per-key  bench/per_key.yml: the same check written by hand, one task per setting
  ours     playbooks/drift.yml (whatever it is today) with -e dbhost_drift_report_only=true

All three read the inventory variables of bench/full_profile.yml. The bench makes what that
profile points at and removes it at the end, also on failure or Ctrl-C: a loop-backed ext4 image
mounted under /tmp/dbhost-bench, an fstab listing it, an Oracle pfile, a dummy process (and, where
systemd is PID 1, a dummy service in /run/systemd/system). Nothing else on the machine is touched:
every play runs in check mode, and the bench compares the settings it could touch before and after.

With --ssh the hosts are reached over SSH instead, through an sshd of the bench's own on
127.0.0.1 (bench/ssh_rig.py), with pipelining on and off and under Mitogen; drift.yml then runs
with the drift_report callback, as scripts/drift-check runs it.

Usage (as root; see bench/README.md):
  . scripts/lib.sh && python bench/full_bench.py [--hosts 1,10,50] [--repeat 3] [--strategy mitogen [--mitogen PATH]]
  . scripts/lib.sh && python bench/full_bench.py --ssh [--hosts 1,50,200] [--before REF]
"""

from __future__ import absolute_import, division, print_function

import argparse
import datetime
import errno
import fcntl
import glob
import hashlib
import io
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import time

import yaml

import ssh_rig  # bench/ssh_rig.py, beside this file

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
VENV = os.environ.get('DBHOST_VENV', os.path.join(ROOT, '.venv'))
VENV_PYTHON = os.path.join(VENV, 'bin', 'python')
PLAYBOOK_BIN = os.path.join(VENV, 'bin', 'ansible-playbook')
PROFILE = os.path.join(BENCH, 'full_profile.yml')
FLOOR = os.path.join(BENCH, 'floor.yml')
PER_KEY = os.path.join(BENCH, 'per_key.yml')
PING = os.path.join(BENCH, 'ping.yml')
CALLBACKS = os.path.join(BENCH, 'callback_plugins')

# What bench/full_profile.yml points at.
FIXTURE = '/tmp/dbhost-bench'
LOCK = '/tmp/dbhost-bench.lock'
IMAGE = os.path.join(FIXTURE, 'data.img')
MOUNT = os.path.join(FIXTURE, 'data')
FSTAB = os.path.join(FIXTURE, 'fstab')
PFILE = os.path.join(FIXTURE, 'initBENCH.ora')
PID_FILE = os.path.join(FIXTURE, 'dummy.pid')
WORK = os.path.join(FIXTURE, 'work')
# Way "bare": a module of Ansible's "JSON args" style, sent as it is with its arguments pasted in: no
# AnsiballZ wrapper, no module_utils. It answers as ansible.builtin.ping does; the gap between the two
# is what AnsiballZ costs one task. Written with its play into WORK (the library folder beside a
# playbook is Ansible's), not kept in the collection, where it would be no module of it.
BARE_MODULE = """#!/usr/bin/python
import json
ARGUMENTS = json.loads(\"\"\"<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>\"\"\")
print(json.dumps({'ping': ARGUMENTS.get('data', 'pong'), 'changed': False}))
"""
BARE_PLAY = """---
- name: One module task without AnsiballZ
  hosts: all
  gather_facts: false
  tasks:
    - name: One module round trip
      bare_ping:
"""
DUMMY_MARK = 'dbhost-bench-dummy'
UNIT = 'dbhost-bench-dummy.service'
UNIT_FILE = os.path.join('/run/systemd/system', UNIT)

WAYS = ('floor', 'ping', 'bare', 'per-key', 'before', 'ours', 'cold')
MITOGEN_REQUIREMENT = 'mitogen>=0.3,<0.4'
MITOGEN_TARGET = os.path.join(ROOT, '.cache', 'mitogen')

# What a check could touch, compared before and after the run (it must not change).
WATCHED_KEYS = ('kernel.sem', 'kernel.panic_on_oops', 'fs.file-max', 'fs.aio-max-nr', 'net.ipv4.ip_local_port_range',
                'net.core.rmem_default', 'net.core.rmem_max', 'net.core.wmem_default', 'net.core.wmem_max',
                'kernel.shmmax', 'kernel.shmall', 'kernel.shmmni', 'vm.hugetlb_shm_group', 'vm.nr_hugepages')
WATCHED_GLOBS = ('/etc/fstab', '/etc/sysctl.conf', '/etc/sysctl.d/*', '/etc/security/limits.conf',
                 '/etc/security/limits.d/*', '/etc/tmpfiles.d/*', '/etc/udev/rules.d/*',
                 '/etc/systemd/system/*.d/*', '/sys/kernel/mm/transparent_hugepage/enabled',
                 '/sys/kernel/mm/transparent_hugepage/defrag', '/sys/block/*/queue/rq_affinity',
                 '/sys/block/*/queue/scheduler', '/sys/block/*/queue/read_ahead_kb', FSTAB, PFILE)


def log(message):
    sys.stderr.write('[%s] %s\n' % (time.strftime('%H:%M:%S'), message))
    sys.stderr.flush()


def sh(*argv, **kwargs):
    """Run a command of the bench's own set-up (not measured); raise on failure."""
    return subprocess.run(list(argv), check=kwargs.pop('check', True), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, **kwargs)


def busy_cpu():
    """CPU seconds the whole machine has been busy (user, nice, system, irq, softirq, steal) since boot."""
    with open('/proc/stat') as handle:
        fields = [int(value) for value in handle.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / float(os.sysconf('SC_CLK_TCK'))


def mounted(path):
    with open('/proc/self/mounts') as handle:
        return any(line.split()[1] == path for line in handle if len(line.split()) > 1)


def systemd_running():
    return os.path.isdir('/run/systemd/system')


def snapshot():
    """{name: content} of every setting and file a check could touch."""
    state = {}
    for key in WATCHED_KEYS:
        try:
            with open('/proc/sys/' + key.replace('.', '/')) as handle:
                state['sysctl ' + key] = ' '.join(handle.read().split())
        except (IOError, OSError):
            pass
    for pattern in WATCHED_GLOBS:
        for path in sorted(glob.glob(pattern)):
            if path.startswith(WORK) or not os.path.isfile(path):
                continue
            try:
                with open(path, 'rb') as handle:
                    state[path] = hashlib.sha256(handle.read()).hexdigest()
            except (IOError, OSError):
                pass
    return state


class Fixture(object):
    """What bench/full_profile.yml points at; torn down in reverse, step by step, whatever happened."""

    def __init__(self):
        self.lock = None
        self.loop = None
        self.mount = False
        self.dummy = None
        self.unit = False
        self.overrides = {}

    def _lock(self):
        self.lock = open(LOCK, 'w')
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (IOError, OSError):
            raise SystemExit('another full_bench.py run holds %s; wait for it to end' % LOCK)

    def _clean_stale(self):
        """Leftovers of a run that was killed without a chance to clean up (kill -9, power cut)."""
        if os.path.isfile(UNIT_FILE):
            log('removing a stale %s' % UNIT_FILE)
            sh('systemctl', 'stop', UNIT, check=False)
            os.unlink(UNIT_FILE)
            sh('systemctl', 'daemon-reload', check=False)
        try:
            with open(PID_FILE) as handle:
                pid = int(handle.read().split()[0])
            with open('/proc/%d/cmdline' % pid, 'rb') as handle:
                if DUMMY_MARK.encode() in handle.read():
                    log('stopping a stale dummy process %d' % pid)
                    os.kill(pid, signal.SIGTERM)
        except (IOError, OSError, ValueError, IndexError):
            pass
        if mounted(MOUNT):
            log('unmounting a stale %s' % MOUNT)
            sh('umount', MOUNT)
        if os.path.exists(IMAGE):
            for line in sh('losetup', '-j', IMAGE, check=False).stdout.splitlines():
                device = line.split(':', 1)[0]
                log('detaching a stale %s' % device)
                sh('losetup', '-d', device, check=False)
        if os.path.isdir(FIXTURE):
            shutil.rmtree(FIXTURE)

    def set_up(self):
        self._lock()
        self._clean_stale()
        os.makedirs(FIXTURE, mode=0o700)
        os.makedirs(MOUNT)
        os.makedirs(WORK)
        # A throwaway ext4 image on a loop device, mounted without noatime.
        with open(IMAGE, 'wb') as handle:
            handle.truncate(64 * 1024 * 1024)
        sh('mkfs.ext4', '-q', '-F', '-L', 'dbhostbench', IMAGE)
        self.loop = sh('losetup', '--find', '--show', IMAGE).stdout.strip()
        if not self.loop.startswith('/dev/loop'):
            raise RuntimeError('losetup gave %r, not a loop device' % self.loop)
        sh('mount', '-t', 'ext4', '-o', 'relatime', self.loop, MOUNT)
        self.mount = True
        with open(FSTAB, 'w') as handle:
            handle.write('# fstab of the full-profile benchmark (a throwaway loop image)\n'
                         '%s %s ext4 loop,relatime 0 0\n' % (IMAGE, MOUNT))
        with open(PFILE, 'w') as handle:
            handle.write("# pfile of the full-profile benchmark\n*.db_name='BENCH'\n*.sga_target=4G\n"
                         "*.filesystemio_options='none'\n*.disk_asynch_io=TRUE\n")
        # The database process the processor set binds: in its own session, so that a Ctrl-C
        # reaches the plays, not it; stopped by its pid at the end.
        self.dummy = subprocess.Popen([sys.executable, '-c', 'import time\nwhile True:\n    time.sleep(3600)',
                                       DUMMY_MARK], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        with open(PID_FILE, 'w') as handle:
            handle.write('%d\n' % self.dummy.pid)
        if systemd_running():
            with open(UNIT_FILE, 'w') as handle:
                handle.write('[Unit]\nDescription=full_bench.py dummy database service\n\n'
                             '[Service]\nExecStart=/bin/sleep infinity\n')
            self.unit = True
            sh('systemctl', 'daemon-reload')
            sh('systemctl', 'start', UNIT)
            self.overrides['processor_sets_service'] = UNIT
        log('fixture: %s on %s at %s, %s, %s, dummy pid %d%s'
            % (IMAGE, self.loop, MOUNT, FSTAB, PFILE, self.dummy.pid, ', service ' + UNIT if self.unit else ''))

    def tear_down(self):
        problems = []

        def step(what, action):
            try:
                action()
            except Exception as error:  # pylint: disable=broad-except
                problems.append('%s: %s' % (what, getattr(error, 'stderr', None) or error))

        if self.unit:
            def unit():
                sh('systemctl', 'stop', UNIT, check=False)
                os.unlink(UNIT_FILE)
                sh('systemctl', 'daemon-reload')
                self.unit = False
            step('dummy service', unit)
        if self.dummy is not None:
            def dummy():
                self.dummy.terminate()
                try:
                    self.dummy.wait(10)
                except subprocess.TimeoutExpired:
                    self.dummy.kill()
                    self.dummy.wait()
                self.dummy = None
            step('dummy process', dummy)
        if self.mount:
            def unmount():
                for attempt in range(10):
                    if sh('umount', MOUNT, check=False).returncode == 0 or not mounted(MOUNT):
                        break
                    time.sleep(1)   # a play's worker may still be leaving the mount
                else:
                    sh('umount', MOUNT)
                self.mount = False
            step('unmount ' + MOUNT, unmount)
        if self.loop:
            def detach():
                if not self.mount:
                    sh('losetup', '-d', self.loop)
                    self.loop = None
            step('losetup -d %s' % self.loop, detach)
        if not self.mount and not self.loop and os.path.isdir(FIXTURE):
            step('remove ' + FIXTURE, lambda: shutil.rmtree(FIXTURE))
        if self.lock is not None:
            self.lock.close()
            self.lock = None
        for problem in problems:
            log('CLEAN-UP FAILED: %s (finish it by hand: umount %s; losetup -d <device>; rm -rf %s)'
                % (problem, MOUNT, FIXTURE))
        if not problems:
            log('fixture removed: no mount, loop device, dummy process or service left')
        return not problems


def on_signal(number, frame):
    raise SystemExit(128 + number)


def collections_path(ref, workdir, name='collections', source_tree=False):
    """(ANSIBLE_COLLECTIONS_PATH, the collection's folder, commit) where dbhost.tuning is this checkout (or
    REF of it) and ansible.posix is found.

    The collection is installed as the README installs it, ansible-galaxy collection build then install:
    with MANIFEST.json and FILES.json, without galaxy.yml. That matters under Mitogen, whose planner lists
    every installed collection in each task's worker; a source tree's galaxy.yml is parsed (YAML, and
    ansible-core's schema for it, YAML too) every time, a built one's MANIFEST.json is read as JSON.
    SOURCE_TREE keeps the checkout (a symlink) or the git archive of REF as it is, as before this option.
    """
    top = os.path.join(workdir, name)
    target = os.path.join(top, 'ansible_collections', 'dbhost', 'tuning')
    commit = None
    source = ROOT
    if ref:
        commit = sh('git', '-C', ROOT, 'rev-parse', '--verify', ref + '^{commit}').stdout.strip()
        archive = subprocess.run(['git', '-C', ROOT, 'archive', '--format=tar', commit], check=True,
                                 stdout=subprocess.PIPE).stdout
        source = target if source_tree else os.path.join(workdir, name + '-source')
        os.makedirs(source)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(source)
    if source_tree:
        if not ref:
            os.makedirs(os.path.dirname(target))
            os.symlink(ROOT, target)
    else:
        built = os.path.join(workdir, name + '-build')
        galaxy = os.path.join(VENV, 'bin', 'ansible-galaxy')
        sh(galaxy, 'collection', 'build', '--force', '--output-path', built, source)
        tarballs = glob.glob(os.path.join(built, 'dbhost-tuning-*.tar.gz'))
        if len(tarballs) != 1:
            raise SystemExit('ansible-galaxy collection build of %s left %r in %s' % (source, tarballs, built))
        sh(galaxy, 'collection', 'install', '--force', '--no-deps', '-p', top, tarballs[0],
           env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=top))
        shutil.rmtree(built)
        if source != ROOT:
            shutil.rmtree(source)
    paths = [top, os.path.join(ROOT, '.cache', 'collections')]
    paths += [path for path in os.environ.get('ANSIBLE_COLLECTIONS_PATH', '').split(os.pathsep) if path]
    if not any(os.path.isdir(os.path.join(path, 'ansible_collections', 'ansible', 'posix')) for path in paths):
        raise SystemExit('ansible.posix is not installed (the per-key way needs it): run bash scripts/venv.sh --test')
    return os.pathsep.join(paths), target, commit


def mitogen_strategy_plugins(where):
    """(strategy folder, folder to put on PYTHONPATH, version) of Mitogen for Ansible.

    WHERE is a folder holding the ansible_mitogen and mitogen packages (a ``pip install --target``
    folder, a venv's site-packages). Without it, mitogen 0.3.x is installed once into
    .cache/mitogen with the venv's pip: never into the venv itself, and it is no requirement of
    the collection or of its tests.
    """
    if not where:
        where = MITOGEN_TARGET
        if not os.path.isdir(os.path.join(where, 'ansible_mitogen')):
            log('installing %s into %s (not into the venv)' % (MITOGEN_REQUIREMENT, where))
            subprocess.run([VENV_PYTHON, '-m', 'pip', 'install', '--quiet', '--no-deps', '--target', where,
                            MITOGEN_REQUIREMENT], check=True)
    where = os.path.abspath(where)
    folder = os.path.join(where, 'ansible_mitogen', 'plugins', 'strategy')
    if not os.path.isfile(os.path.join(folder, 'mitogen_linear.py')):
        raise SystemExit('no ansible_mitogen/plugins/strategy/mitogen_linear.py under %s' % where)
    probe = [VENV_PYTHON, '-c', 'import sys; sys.path.insert(0, sys.argv[1]); import mitogen; '
                                'print(".".join(map(str, mitogen.__version__)))', where]
    version = subprocess.run(probe, stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout.strip()
    return folder, where, version or '?'


def write_inventory(workdir, hosts, overrides, rig=None):
    """An inventory of HOSTS aliases of this machine: on the local connection, or over SSH to RIG's sshd."""
    folder = os.path.join(workdir, 'inventory-%d%s' % (hosts, '-ssh' if rig else ''))
    if os.path.isdir(folder):
        return folder
    group_vars = os.path.join(folder, 'group_vars', 'all')
    os.makedirs(group_vars)
    os.symlink(PROFILE, os.path.join(group_vars, '00-full_profile.yml'))
    with open(os.path.join(group_vars, '10-this_machine.yml'), 'w') as handle:
        handle.write('---\n# What full_bench.py found on this machine (a dummy service where systemd runs).\n')
        yaml.safe_dump(overrides or {}, handle, default_flow_style=False)
    aliases = ['bench%03d' % index for index in range(1, hosts + 1)]
    names = dict((alias, rig.host_vars(alias) if rig else None) for alias in aliases)
    common = {'ansible_python_interpreter': VENV_PYTHON}
    if not rig:
        common['ansible_connection'] = 'local'
    with open(os.path.join(folder, 'hosts.yml'), 'w') as handle:
        yaml.safe_dump({'all': {'hosts': names, 'vars': common}}, handle, default_flow_style=False)
    return folder


def run_play(way, playbook, inventory, env, forks, logfile, rig=None):
    """One ansible-playbook run: (rc, wall s, CPU s of it and its children, counts per host, others' CPUs,
    the hosts' CPU s).

    Others' CPUs: what the rest of the machine kept busy meanwhile (the machine's busy CPU seconds
    less the play's own, over the wall time), in CPUs - the noise this run had to share with.
    Over SSH (RIG), the play's CPU includes its ControlPersist masters (ended and reaped after the
    play, see bench/ssh_rig.py); the hosts' CPU is the sshd's and its sessions' (None locally,
    where the modules run in the play's own process tree).
    """
    counts = logfile[:-len('.log')] + '.counts.json'
    for stale in (counts, counts + '.calls'):
        if os.path.exists(stale):
            os.unlink(stale)
    argv = [PLAYBOOK_BIN, '-i', inventory, '-f', str(forks), playbook]
    env = dict(env, DBHOST_BENCH_COUNTS=counts)
    if way == 'cold':
        # every host without the collection's code (run_cached): a folder of its own, empty, per host
        cold = os.path.join(os.path.dirname(logfile), 'code-cold')
        shutil.rmtree(cold, ignore_errors=True)
        argv += ['-e', 'dbhost_code_cache_dir=%s/{{ inventory_hostname }}' % cold]
    if way in DRIFT_WAYS:
        argv += ['-e', 'dbhost_drift_report_only=true']
        if rig:
            # Over SSH, as scripts/drift-check runs it: with the drift_report callback (its reports
            # next to the log, its table of every setting of every host in the log).
            env.update({'ANSIBLE_CALLBACKS_ENABLED': env['ANSIBLE_CALLBACKS_ENABLED'] + ',dbhost.tuning.drift_report',
                        'DBHOST_DRIFT_REPORT_DIR': logfile[:-len('.log')] + '.report'})
    with open(logfile, 'w') as out:
        out.write('# %s\n' % ' '.join(argv))
        out.flush()
        if rig:
            rig.settle()
        target_before = rig.cpu() if rig else 0.0
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        busy_before = busy_cpu()
        start = time.time()
        # Its own process group, so that on Ctrl-C or a kill the bench ends the play and its workers
        # (by that group's id) before it unmounts anything.
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, cwd=WORK, start_new_session=True)
        try:
            rc = child.wait()
        except BaseException:
            for number, grace in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(child.pid, number)
                except OSError as error:
                    if error.errno == errno.ESRCH:
                        break
                try:
                    child.wait(grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            raise
        wall = time.time() - start
        if rig:
            out.write('# %d ControlPersist master(s) ended after the play\n' % rig.settle())
        busy = busy_cpu() - busy_before
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    target = rig.cpu() - target_before if rig else None
    others = max(0.0, busy - cpu - (target or 0.0)) / wall if wall > 0 else 0.0
    try:
        with open(counts) as handle:
            per_host = json.load(handle)
    except (IOError, OSError, ValueError):
        per_host = {}
    return rc, wall, cpu, per_host, others, target


def spread(values):
    values = sorted(values)
    if not values:
        return '?'
    if values[0] == values[-1]:
        return '%d' % values[0]
    return '%d-%d' % (values[0], values[-1])


def summarise(runs, hosts):
    """Best run (by wall) of the ones that succeeded, and per-host counts."""
    good = [run for run in runs if run['rc'] == 0] or runs
    best_wall = min(run['wall'] for run in good)
    best_cpu = min(run['cpu'] for run in good)
    targets = [run['target'] for run in good if run.get('target') is not None]
    counts = good[0]['counts']
    bench_hosts = ['bench%03d' % index for index in range(1, hosts + 1)]
    row = {
        'ok': sum(1 for run in runs if run['rc'] == 0), 'runs': len(runs), 'wall': best_wall, 'cpu': best_cpu,
        'target': min(targets) if targets else None,
        'rcs': sorted(set(run['rc'] for run in runs)),
        'round_trips': spread(counts.get(host, {}).get('round_trips', 0) for host in bench_hosts),
        'tasks': spread(counts.get(host, {}).get('tasks', 0) for host in bench_hosts),
        'skipped': spread(counts.get(host, {}).get('skipped', 0) for host in bench_hosts),
        'records': spread(sum(counts.get(host, {}).get('records', {}).values()) for host in bench_hosts),
        'modules': counts.get('bench001', {}).get('modules', {}),
        'statuses': counts.get('bench001', {}).get('records', {}),
        'load': '%.1f-%.1f' % (min(run['load'] for run in runs), max(run['load'] for run in runs)),
        'others': '%.2f-%.2f' % (min(run['others'] for run in runs), max(run['others'] for run in runs)),
        'trips_max': max([counts.get(host, {}).get('round_trips', 0) for host in bench_hosts] or [0]),
    }
    return row


def write_bare(work):
    """The play of way "bare" and its module, written into work; the play's path."""
    os.makedirs(os.path.join(work, 'bare', 'library'), exist_ok=True)
    for name, text in (('library/bare_ping.py', BARE_MODULE), ('bare.yml', BARE_PLAY)):
        with open(os.path.join(work, 'bare', name), 'w') as handle:
            handle.write(text)
    return os.path.join(work, 'bare', 'bare.yml')


def ratio(top, bottom):
    return top / bottom if bottom > 0 else float('nan')


# the ways that run drift.yml: report only, records counted
DRIFT_WAYS = ('ours', 'before', 'cold')
LABELS = {'floor': 'floor', 'ping': 'ping only', 'bare': 'bare module', 'per-key': 'per-key', 'ours': 'drift.yml',
          'before': 'drift.yml@before', 'cold': 'drift.yml, code not on the hosts'}


def _cell(value, digits=2):
    return '-' if value is None else '%.*f' % (digits, value)


def _targets(table, ssh):
    """Lines saying which of the issue's targets each cell meets (reported, never asserted)."""
    lines = []
    top = max(hosts for hosts, dummy, dummy in table)
    for hosts, mode, rows in table:
        if 'ours' not in rows or 'floor' not in rows:
            continue
        floor, ours = rows['floor'], rows['ours']
        checks = ['round trips/host %s %s 2' % (ours['round_trips'], '<=' if ours['trips_max'] <= 2 else '>')]
        limits = []
        if ssh and hosts == top:
            cpu_limit = 0.3 if mode.startswith('mitogen') else 0.5
            limits = [('wall drift/floor', ratio(ours['wall'], floor['wall']), 1.0, 'low'),
                      ('CPU drift/floor', ratio(ours['cpu'], floor['cpu']), cpu_limit, 'low')]
        elif not ssh and hosts == 50:
            limits = [('wall drift/floor', ratio(ours['wall'], floor['wall']), 1.5, 'low'),
                      ('CPU drift/floor', ratio(ours['cpu'], floor['cpu']), 1.5, 'low')]
            if 'per-key' in rows:
                limits.append(('CPU per-key/drift', ratio(rows['per-key']['cpu'], ours['cpu']), 5, 'high'))
        for name, value, limit, better in limits:
            met = value <= limit if better == 'low' else value >= limit
            # Three decimals where two would print the limit itself (0.503x read "0.50x NOT met").
            shown = '%.3fx' % value if round(value, 2) == limit else '%.2fx' % value
            checks.append('%s %s %s' % (name, shown, 'met' if met else 'NOT met (target %s %sx)'
                                        % ('<=' if better == 'low' else '>=', limit)))
        if ssh and hosts == top and 'ping' in rows:
            # What one ping, the least module task, costs against the same floor: a CPU target
            # below it is out of reach for any play that runs a module on each host.
            checks.append('one ping CPU/floor %.2fx' % ratio(rows['ping']['cpu'], floor['cpu']))
        lines.append('- %d hosts%s: %s' % (hosts, ', ' + mode if mode else '', '; '.join(checks)))
    return lines


def markdown(meta, table, ssh=False):
    """TABLE: [(hosts, mode, {way: summarised row})], MODE '' locally, 'pipelining on' ... over SSH."""
    lines = ['Full-profile drift check, check mode, %s, %s' % (meta['date'], meta['machine']), '',
             '`%s`' % meta['command'], '']
    for key in ('collection', 'before', 'drift playbook', 'ansible', 'connection', 'strategy', 'forks', 'repeat',
                'load'):
        if meta.get(key):
            lines.append('- %s: %s' % (key, meta[key]))
    lines += ['', '| hosts | mode | way | wall s | controller CPU s | controller CPU/host s | hosts\' CPU/host s '
                  '| round trips/host | tasks/host | records/host | ok runs | load before a run | others\' CPUs |',
              '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|']
    for hosts, mode, rows in table:
        for way in WAYS:
            if way not in rows:
                continue
            row = rows[way]
            status = '%d/%d' % (row['ok'], row['runs']) + ('' if row['ok'] == row['runs'] else ' (rc %s)' % row['rcs'])
            lines.append('| %d | %s | %s | %.2f | %.2f | %.3f | %s | %s | %s | %s | %s | %s | %s |'
                         % (hosts, mode or 'local', LABELS[way], row['wall'], row['cpu'], row['cpu'] / hosts,
                            _cell(None if row['target'] is None else row['target'] / hosts, 3), row['round_trips'],
                            row['tasks'], row['records'] if way in DRIFT_WAYS else '-', status, row['load'],
                            row['others']))
    lines += ['', '| hosts | mode | drift/floor wall | drift/floor CPU | per-key/drift wall | per-key/drift CPU '
                  '| before/after CPU | ping/floor CPU | bare/floor CPU | drift/ping CPU | code not on the hosts/floor CPU |',
              '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for hosts, mode, rows in table:
        if 'ours' not in rows:
            continue
        ours, floor, per_key, older = rows['ours'], rows.get('floor'), rows.get('per-key'), rows.get('before')
        ping, bare, cold = rows.get('ping'), rows.get('bare'), rows.get('cold')
        lines.append('| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            hosts, mode or 'local',
            _cell(floor and ratio(ours['wall'], floor['wall'])) + ('x' if floor else ''),
            _cell(floor and ratio(ours['cpu'], floor['cpu'])) + ('x' if floor else ''),
            _cell(per_key and ratio(per_key['wall'], ours['wall'])) + ('x' if per_key else ''),
            _cell(per_key and ratio(per_key['cpu'], ours['cpu'])) + ('x' if per_key else ''),
            _cell(older and ratio(older['cpu'], ours['cpu'])) + ('x' if older else ''),
            _cell(ping and floor and ratio(ping['cpu'], floor['cpu'])) + ('x' if ping and floor else ''),
            _cell(bare and floor and ratio(bare['cpu'], floor['cpu'])) + ('x' if bare and floor else ''),
            _cell(ping and ratio(ours['cpu'], ping['cpu'])) + ('x' if ping else ''),
            _cell(cold and floor and ratio(cold['cpu'], floor['cpu'])) + ('x' if cold and floor else '')))
    lines += ['', 'Targets (reported, not asserted): drift.yml at most 2 module round trips per host; '
              + ('at the largest host count over SSH at most 1.0x the floor\'s wall and 0.5x its controller CPU '
                 '(0.3x under Mitogen).' if ssh else 'at 50 hosts at most 1.5x the floor in wall and CPU, and at '
                 'least 5x less CPU than per-key.')]
    lines += _targets(table, ssh)
    lines += ['', 'Module round trips of one host (bench001), by module:']
    for hosts, mode, rows in table[:1]:
        for way in WAYS:
            if way in rows:
                modules = ', '.join('%s %d' % item for item in sorted(rows[way]['modules'].items(),
                                                                      key=lambda i: (-i[1], i[0])))
                lines.append('- %s: %s' % (LABELS[way], modules or 'none'))
        if 'ours' in rows:
            statuses = ', '.join('%s %d' % item for item in sorted(rows['ours']['statuses'].items()))
            lines.append('- records of drift.yml by status: %s' % (statuses or 'none'))
    return '\n'.join(lines) + '\n'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ssh', action='store_true',
                        help='reach the hosts over SSH through an sshd of the bench\'s own on 127.0.0.1 (ControlPersist '
                             'on), with pipelining on and off; default hosts then 1,50,200, and Mitogen at 200')
    parser.add_argument('--hosts', help='comma-separated host counts (default 1,10,50; 1,50,200 with --ssh)')
    parser.add_argument('--repeat', type=int, help='runs per way and host count; the best is kept (default 3; 1 with --ssh)')
    parser.add_argument('--strategy', choices=('linear', 'mitogen'), default='linear',
                        help='linear (Ansible default) or mitogen (mitogen_linear, from --mitogen); local mode')
    parser.add_argument('--pipelining', default='on,off',
                        help='with --ssh: comma-separated on, off (default on,off); none to run the Mitogen cells only')
    parser.add_argument('--mitogen-hosts', default='200',
                        help='with --ssh: host counts measured under the Mitogen strategy too (default 200; none)')
    parser.add_argument('--per-key-max-hosts', type=int,
                        help='skip the per-key way above this host count (default: none locally, 50 with --ssh, where '
                             '200 hosts of per-key take about an hour of 2 CPUs)')
    parser.add_argument('--mitogen', metavar='PATH',
                        help='folder holding the ansible_mitogen and mitogen packages (default .cache/mitogen, '
                             'where mitogen 0.3.x is installed with pip --target when missing)')
    parser.add_argument('--ssh-args', metavar='ARGS',
                        help="with --ssh: Ansible's ssh_args for every play instead of its default "
                             "(-C -o ControlMaster=auto -o ControlPersist=60s), e.g. without -C, the ssh "
                             "compression of every payload")
    parser.add_argument('--forks', type=int, default=5, help="ansible-playbook -f (default 5, Ansible's default)")
    parser.add_argument('--ways', default='floor,ping,per-key,ours',
                        help='comma-separated subset of floor,ping,bare,per-key,ours,cold (default floor,ping,'
                             'per-key,ours); bare: one module sent without AnsiballZ, the least a module task '
                             'could cost; cold: drift.yml with every host lacking the collection\'s code (an empty '
                             'dbhost_code_cache_dir of its own), the first run after an install or upgrade')
    parser.add_argument('--playbook', help='the drift playbook of "ours" (default playbooks/drift.yml of the '
                                           'collection under test)')
    parser.add_argument('--ref', help='measure the collection as committed at this git ref (git archive) instead '
                                      'of the working tree, e.g. the "before" of a change')
    parser.add_argument('--before', metavar='REF',
                        help='also run drift.yml of the collection as committed at REF, interleaved with the '
                             'others: the before and after of a change in one run')
    parser.add_argument('--source-tree', action='store_true',
                        help='put the checkout (or the git archive of --ref/--before) on the collections path as '
                             'it is, instead of installing it as the README does (ansible-galaxy collection build '
                             'and install); Mitogen then parses its galaxy.yml in every task')
    parser.add_argument('--no-warm-up', dest='warm_up', action='store_false',
                        help='skip the untimed 1-host run of each way first')
    parser.add_argument('--output', help='markdown file for the table (default .benchmarks/full_bench-<time>.md; '
                                         'the logs go next to it)')
    args = parser.parse_args()
    args.hosts_list = [int(value) for value in (args.hosts or ('1,50,200' if args.ssh else '1,10,50')).split(',')
                       if value.strip()]
    args.repeat = args.repeat or (1 if args.ssh else 3)
    args.ways_list = [way for way in WAYS if way in args.ways.split(',') or (way == 'before' and args.before)]
    if args.per_key_max_hosts is None:
        args.per_key_max_hosts = 50 if args.ssh else max(args.hosts_list or [0])
    modes = [value.strip() for value in args.pipelining.split(',') if value.strip()]
    mitogen_hosts = [] if not args.ssh or args.mitogen_hosts in ('', 'none') else \
        [int(value) for value in args.mitogen_hosts.split(',') if value.strip()]
    if modes == ['none'] and args.ssh and mitogen_hosts:
        modes = []   # the Mitogen cells only
    elif not set(modes) <= set(('on', 'off')) or not modes:
        parser.error('--pipelining takes on, off or both (none with Mitogen hosts)')
    if args.ssh_args is not None and not args.ssh:
        parser.error('--ssh-args goes with --ssh')
    if not args.hosts_list or min(args.hosts_list) < 1 or args.repeat < 1 or not args.ways_list:
        parser.error('--hosts, --repeat and --ways need at least one valid value')
    # What runs, in order: (mode label, strategy, pipelining or None, host counts).
    if args.ssh:
        args.modes = [('pipelining ' + value, 'linear', value == 'on', args.hosts_list) for value in modes]
        if mitogen_hosts:
            args.modes.append(('mitogen', 'mitogen', None, mitogen_hosts))
    else:
        args.modes = [('' if args.strategy == 'linear' else 'mitogen', args.strategy, None, args.hosts_list)]
    return args


def preflight(args):
    if os.geteuid() != 0:
        raise SystemExit('full_bench.py runs as root (loop device, mount, reading every setting)')
    for tool in ('losetup', 'mkfs.ext4', 'mount', 'umount', 'findmnt', 'taskset'):
        if shutil.which(tool) is None:
            raise SystemExit('%s is missing (util-linux, e2fsprogs)' % tool)
    if not os.access(PLAYBOOK_BIN, os.X_OK):
        raise SystemExit('%s is missing: run bash scripts/venv.sh --test first' % PLAYBOOK_BIN)
    if args.ssh and ssh_rig.missing_tools():
        raise SystemExit(ssh_rig.missing_tools())
    with open(PROFILE) as handle:
        profile = yaml.safe_load(handle)
    if not str(profile.get('direct_io_fstab', '')).startswith(FIXTURE + '/'):
        raise SystemExit('%s does not point at %s, which this bench makes' % (PROFILE, FIXTURE))


def base_env(paths):
    env = dict((key, value) for key, value in os.environ.items()
               if not key.startswith('ANSIBLE_') or key in ('ANSIBLE_FORCE_COLOR',))
    env.update({
        'PATH': os.path.join(VENV, 'bin') + os.pathsep + os.environ.get('PATH', ''),
        'ANSIBLE_CONFIG': os.path.join(WORK, 'ansible.cfg'),
        'ANSIBLE_COLLECTIONS_PATH': paths,
        'ANSIBLE_CALLBACK_PLUGINS': CALLBACKS,
        'ANSIBLE_CALLBACKS_ENABLED': 'bench_counter',
        'ANSIBLE_LOCALHOST_WARNING': 'false',
        'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'false',
        'ANSIBLE_NOCOLOR': 'true',
        'ANSIBLE_FORCE_COLOR': 'false',
    })
    return env


def mode_env(env, strategy, pipelining, args):
    """(env, description) of one mode: the strategy's plugins, pipelining over SSH."""
    env = dict(env)
    if pipelining is not None:
        env['ANSIBLE_PIPELINING'] = 'true' if pipelining else 'false'
    if strategy != 'mitogen':
        return env, 'linear (Ansible default)'
    folder, where, version = mitogen_strategy_plugins(args.mitogen)
    # On PYTHONPATH too: bench_counter imports ansible_mitogen before the strategy is loaded.
    pythonpath = [where] + [path for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path]
    env.update({'ANSIBLE_STRATEGY_PLUGINS': folder, 'ANSIBLE_STRATEGY': 'mitogen_linear',
                'PYTHONPATH': os.pathsep.join(pythonpath)})
    return env, 'mitogen_linear (mitogen %s)' % version


def describe(args, commit, playbook, collection, ansible_version, strategies, before_commit):
    dirty = sh('git', '-C', ROOT, 'status', '--porcelain', '--', 'playbooks', 'roles', 'plugins', check=False).stdout
    head = sh('git', '-C', ROOT, 'rev-parse', '--short', 'HEAD', check=False).stdout.strip()
    if commit:
        described = '%s as committed at %s (%s)' % ('dbhost.tuning', args.ref, commit[:12])
    else:
        described = 'dbhost.tuning working tree at %s%s' % (
            head, ', with uncommitted changes in playbooks/roles/plugins' if dirty.strip() else '')
    described += (', the source tree on the collections path' if args.source_tree
                  else ', built and installed (ansible-galaxy collection build, install)')
    with open(playbook, 'rb') as handle:
        book_digest = hashlib.sha256(handle.read()).hexdigest()[:12]
    ssh_args = args.ssh_args if args.ssh_args is not None else \
        "Ansible's default, -C -o ControlMaster=auto -o ControlPersist=60s"
    connection = ('ssh to an sshd of the bench\'s own on 127.0.0.1, one ControlPersist master per host '
                  '(ssh_args: %s)' % ssh_args) if args.ssh else 'local'
    return {
        'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M %Z').strip(),
        'machine': '%s, %d CPUs, %s' % (platform.node() or 'this machine', os.cpu_count() or 0, platform.release()),
        'command': ' '.join(['python', os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:]),
        'collection': described,
        'before': before_commit and 'drift.yml@before: dbhost.tuning as committed at %s (%s)'
                                    % (args.before, before_commit[:12]),
        'drift playbook': '%s (sha256 %s)' % (os.path.relpath(playbook, collection) if playbook.startswith(collection)
                                              else playbook, book_digest),
        'ansible': ansible_version,
        'connection': connection,
        'strategy': '; '.join(strategies), 'forks': args.forks,
        'repeat': '%d run(s) per cell, best kept (wall and CPU each)%s'
                  % (args.repeat, ', after an untimed 1-host warm-up of each way' if args.warm_up else ''),
    }


def measure(args, books, envs, fixture, rig, logs):
    """Every mode, host count, repeat and way, interleaved; returns [(hosts, mode, {way: row})]."""
    table = []
    for label, dummy, dummy, hosts_list in args.modes:
        tag = label.replace(' ', '-') or 'local'
        ways = args.ways_list
        if args.warm_up:
            inventory = write_inventory(WORK, 1, fixture.overrides, rig)
            for way in ways:
                result = run_play(way, books[way], inventory, envs[label][way], args.forks,
                                  os.path.join(logs, 'warm-up-%s-%s.log' % (tag, way)), rig)
                log('warm-up %s %-7s rc %d, %.1f s' % (label, way, result[0], result[1]))
        for hosts in hosts_list:
            inventory = write_inventory(WORK, hosts, fixture.overrides, rig)
            cell = [way for way in ways if way != 'per-key' or hosts <= args.per_key_max_hosts]
            runs = dict((way, []) for way in cell)
            for repeat in range(args.repeat):
                for way in cell:   # interleaved, so that the machine's noise falls on every way alike
                    logfile = os.path.join(logs, '%s-%s-%dhosts-%d.log' % (way, tag, hosts, repeat + 1))
                    load = os.getloadavg()[0]
                    rc, wall, cpu, counts, others, target = run_play(way, books[way], inventory, envs[label][way],
                                                                     args.forks, logfile, rig)
                    runs[way].append({'rc': rc, 'wall': wall, 'cpu': cpu, 'counts': counts, 'load': load,
                                      'others': others, 'target': target})
                    log('%3d hosts %s %-7s run %d: rc %d, wall %.2f s, CPU %.2f s%s, load %.2f before, others %.2f '
                        'CPUs%s' % (hosts, label, way, repeat + 1, rc, wall, cpu,
                                    '' if target is None else ', hosts {0:.2f} s'.format(target), load, others,
                                    '' if rc == 0 else ' - see ' + logfile))
            table.append((hosts, label, dict((way, summarise(runs[way], hosts)) for way in cell)))
    return table


def main():
    args = parse_args()
    preflight(args)
    stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
    output = os.path.abspath(args.output or os.path.join(ROOT, '.benchmarks', 'full_bench-%s.md' % stamp))
    logs = output[:-3] + '.logs' if output.endswith('.md') else output + '.logs'
    os.makedirs(logs, exist_ok=True)

    # Ctrl-C raises KeyboardInterrupt even where the shell started the bench with SIGINT ignored
    # (a background job); SIGTERM and SIGHUP end it the same way, through the clean-up below.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, on_signal)
    fixture = Fixture()
    rig = ssh_rig.Sshd(log) if args.ssh else None
    clean = True
    before = None
    try:
        fixture.set_up()
        before = snapshot()
        if rig:
            rig.start()
            rig.keep.add(fixture.dummy.pid)
        paths, collection, commit = collections_path(args.ref, WORK, source_tree=args.source_tree)
        before_paths, before_commit = None, None
        if args.before:
            before_paths, dummy, before_commit = collections_path(args.before, WORK, 'collections-before',
                                                                  source_tree=args.source_tree)
        playbook = os.path.abspath(args.playbook) if args.playbook else os.path.join(collection, 'playbooks', 'drift.yml')
        with open(os.path.join(WORK, 'ansible.cfg'), 'w') as handle:
            handle.write('# empty: the bench runs with Ansible defaults, whatever ~/.ansible.cfg says\n')
        books = {'floor': FLOOR, 'ping': PING, 'bare': write_bare(WORK), 'per-key': PER_KEY, 'ours': playbook, 'cold': playbook,
                 'before': os.path.join(WORK, 'collections-before', 'ansible_collections', 'dbhost', 'tuning',
                                        'playbooks', 'drift.yml')}
        env = base_env(paths)
        if args.ssh_args is not None:
            env['ANSIBLE_SSH_ARGS'] = args.ssh_args
        envs, strategies = {}, []
        for label, strategy, pipelining, dummy in args.modes:
            mode, described = mode_env(env, strategy, pipelining, args)
            if described not in strategies:
                strategies.append(described)
            envs[label] = dict((way, dict(mode, ANSIBLE_COLLECTIONS_PATH=before_paths) if way == 'before' else mode)
                               for way in args.ways_list)
        ansible_version = sh(PLAYBOOK_BIN, '--version', env=env).stdout.splitlines()[0]
        meta = describe(args, commit, playbook, collection, ansible_version, strategies, before_commit)
        load_start = os.getloadavg()
        log('%s; %s; drift playbook %s; logs in %s' % (meta['collection'], meta['strategy'], playbook, logs))
        table = measure(args, books, envs, fixture, rig, logs)
        load_end = os.getloadavg()
        meta['load'] = ('load average %.2f at the start, %.2f at the end (1 min); per cell, the 1-min load before '
                        'each run (it includes the bench\'s own previous run) and others\' CPUs: what the rest of '
                        'the machine kept busy during a run, out of %d' % (load_start[0], load_end[0], os.cpu_count() or 0))
        text = markdown(meta, table, args.ssh)
        with open(output, 'w') as handle:
            handle.write(text)
        sys.stdout.write(text)
        log('table written to %s' % output)
    finally:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):   # a second Ctrl-C must not stop the clean-up
            signal.signal(number, signal.SIG_IGN)
        after = snapshot() if before is not None else None
        if rig:
            clean = rig.stop() and clean
        clean = fixture.tear_down() and clean
        if before is not None:
            changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name)
                             and not name.startswith(FIXTURE))
            if changed:
                log('WARNING: changed during the run (check mode should change nothing; other work on this '
                    'machine may have): %s' % ', '.join(changed))
            else:
                log('checked: no watched setting or file changed during the run')
    return 0 if clean else 1


if __name__ == '__main__':
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log('interrupted; the fixture was removed')
        sys.exit(130)
