# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reboot scenario on a VM of the lab (issue 20): tune, predict, reboot, observe, judge.

Run by `python3 scripts/vmlab.py run-scenario`, which boots the VM, sets DBHOST_VMLAB_STATE to its
state.json and stops the VM afterwards. Steps, each timed:
  1. prepare.sh over SSH: the data disk /dev/vdb under /var/lib/postgresql (in fstab), the
     lab key for postgres, PostgreSQL's shared_memory_size for the scenario's shared_buffers
  2. the inventory (run folder): the VM, inventory/group_vars, host_vars with that size
  3. playbooks/tune.yml: all five roles (see inventory/group_vars/all.yml)
  4. files of somebody else's: a later sysctl.d file and a limits.d line (SITE_FILES); and
     TuneD: a site profile over throughput-performance, enabled for the boot (tuned_phase.py)
  5. scripts/drift-check: the records before the reboot (the predictions), and observe.py
  6. ansible.builtin.reboot
  7. scripts/drift-check again, observe.py, `ulimit -l` of a real postgres login, TuneD's
     view; then, TuneD stopped, the effect phase (effect_phase.py): PostgreSQL and MariaDB
     changed by hand, each case judged on the effect rows of its own drift check
  8. the files of somebody else's removed, playbooks/revert.yml --check --diff (its records
     must be the real revert's), playbooks/revert.yml twice (the second changes
     nothing), a reboot, and snapshot.py (also run before tune.yml and before the revert):
     every file and live value the baseline names is back as it was before tune.yml
  9. verify.py judges; every check is printed; exit 1 when one failed
Everything read and judged is kept in .cache/vmlab/run/<name>/results/.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import effect_phase  # noqa: E402  pylint: disable=wrong-import-position
import tuned_phase  # noqa: E402  pylint: disable=wrong-import-position
import verify  # noqa: E402  pylint: disable=wrong-import-position

HOST = 'dbhost-vm'
SERVICE = 'postgresql@15-main.service'
DATA_MOUNT = '/var/lib/postgresql'
SHARED_BUFFERS = '128MB'
NODE = 1
# Somebody else's files, laid down after tune.yml and before the reboot: each must be
# predicted (shadowed, naming the file) and then win at boot.
SITE_FILES = {
    '/etc/sysctl.d/99-zz-site.conf': '# site policy, sorts after 90-dbhost-tuning.conf\nvm.overcommit_ratio = 80\n',
    '/etc/security/limits.d/99-site.conf': '# site policy, read after 90-dbhost-tuning.conf\npostgres - memlock 65536\n',
}
SHADOWED = {
    'vm.overcommit_ratio': ('/etc/sysctl.d/99-zz-site.conf', '80'),
    'postgres soft memlock': ('/etc/security/limits.d/99-site.conf', '65536'),
    'postgres hard memlock': ('/etc/security/limits.d/99-site.conf', '65536'),
}
TIMEOUT = int(os.environ.get('DBHOST_VMLAB_STEP_TIMEOUT', '1800'))


def log(message):
    sys.stderr.write('[%s] scenario: %s\n' % (time.strftime('%H:%M:%S'), message))
    sys.stderr.flush()


class Scenario:
    def __init__(self, state):
        self.state = state
        self.root = ROOT
        self.results = os.path.join(state['folder'], 'results')
        self.inventory = os.path.join(state['folder'], 'inventory')
        self.timings = []
        shutil.rmtree(self.results, ignore_errors=True)
        os.makedirs(self.results)

    def ssh(self, command, user='root', stdin=None):
        argv = ['ssh', '-i', self.state['key'], '-p', str(self.state['port']), '-o', 'StrictHostKeyChecking=no',
                '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes',
                '-o', 'ConnectTimeout=30', '%s@127.0.0.1' % user] + command
        with open(stdin, 'rb') if stdin else open(os.devnull, 'rb') as source:
            result = subprocess.run(argv, stdin=source, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    check=False, timeout=TIMEOUT)
        if result.returncode != 0:
            stderr = result.stderr.decode(errors='replace')[-2000:]
            raise RuntimeError('ssh %s@VM %s failed (exit %d): %s' % (user, ' '.join(command)[:80], result.returncode, stderr))
        return result.stdout.decode()

    def step(self, name, func, *args):
        start = time.time()
        log('%s ...' % name)
        value = func(*args)
        self.timings.append((name, time.time() - start))
        log('%s: %.0f s' % (name, time.time() - start))
        return value

    def env(self):
        return dict(os.environ, ANSIBLE_HOST_KEY_CHECKING='False', ANSIBLE_PIPELINING='True',
                    ANSIBLE_TIMEOUT='60', ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')

    def ansible(self, argv, log_name):
        with open(os.path.join(self.results, log_name), 'wb') as output:
            return subprocess.run(argv, env=self.env(), stdout=output, stderr=subprocess.STDOUT,
                                  check=False, timeout=TIMEOUT).returncode

    def prepare(self):
        out = self.ssh(['bash', '-s', SHARED_BUFFERS], stdin=os.path.join(HERE, 'prepare.sh'))
        size_mb = int(out.strip().splitlines()[-1])
        os.makedirs(os.path.join(self.inventory, 'host_vars'), exist_ok=True)
        with open(os.path.join(self.inventory, 'hosts.yml'), 'w') as handle:
            handle.write('all:\n  hosts:\n    %s:\n' % HOST)
            for key, value in (('ansible_host', '127.0.0.1'), ('ansible_port', self.state['port']),
                               ('ansible_user', 'root'), ('ansible_ssh_private_key_file', self.state['key']),
                               ('ansible_ssh_common_args', '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'),
                               ('ansible_python_interpreter', '/usr/bin/python3')):
                handle.write('      %s: %s\n' % (key, value))
        with open(os.path.join(self.inventory, 'host_vars', HOST + '.yml'), 'w') as handle:
            handle.write('# postgres -C shared_memory_size with shared_buffers=%s (prepare.sh)\n'
                         'shared_memory_size: %dM\n' % (SHARED_BUFFERS, size_mb))
        group_vars = os.path.join(self.inventory, 'group_vars')
        if os.path.lexists(group_vars):
            os.unlink(group_vars)
        os.symlink(os.path.join(HERE, 'inventory', 'group_vars'), group_vars)
        return size_mb

    def tune(self):
        rc = self.ansible(['ansible-playbook', '-i', self.inventory, os.path.join(ROOT, 'playbooks', 'tune.yml')], 'tune.log')
        if rc != 0:
            raise RuntimeError('tune.yml failed (exit %d); see %s' % (rc, os.path.join(self.results, 'tune.log')))

    def lay_site_files(self):
        for path, text in SITE_FILES.items():
            self.ssh(['sh', '-c', 'cat > %s' % path], stdin=self._local(os.path.basename(path), text))

    def _local(self, name, text):
        path = os.path.join(self.results, 'site-' + name)
        with open(path, 'w') as handle:
            handle.write(text)
        return path

    def drift_check(self, when, *extra):
        """scripts/drift-check (``extra``: more ansible-playbook arguments): (exit code, the host's records)."""
        report = os.path.join(self.results, 'drift-' + when)
        rc = self.ansible(['bash', os.path.join(ROOT, 'scripts', 'drift-check'), '--report-dir', report,
                           '--', '-i', self.inventory] + list(extra), 'drift-%s.log' % when)
        with open(os.path.join(report, 'drift.json')) as handle:
            return rc, json.load(handle)['hosts'][HOST]['settings']

    def observe(self, records, when):
        script = os.path.join(HERE, 'observe.py')
        out = self.ssh(['python3', '-', SERVICE, DATA_MOUNT, "'%s'" % json.dumps(verify.reads(records))], stdin=script)
        with open(os.path.join(self.results, 'observed-%s.json' % when), 'w') as handle:
            handle.write(out)
        return json.loads(out)

    def reboot(self):
        rc = self.ansible(['ansible', HOST, '-i', self.inventory, '-m', 'ansible.builtin.reboot',
                           '-a', 'reboot_timeout=%d connect_timeout=30' % TIMEOUT], 'reboot.log')
        if rc != 0:
            raise RuntimeError('ansible.builtin.reboot failed (exit %d); see %s' % (rc, os.path.join(self.results, 'reboot.log')))

    def snapshot(self, when):
        out = self.ssh(['python3', '-'], stdin=os.path.join(HERE, 'snapshot.py'))
        with open(os.path.join(self.results, 'snapshot-%s.json' % when), 'w') as handle:
            handle.write(out)
        return json.loads(out)

    def remove_site_files(self):
        self.ssh(['rm', '-f'] + sorted(SITE_FILES))

    def revert(self, log_name):
        """playbooks/revert.yml: (exit code, the changed count of its PLAY RECAP)."""
        rc = self.ansible(['ansible-playbook', '-i', self.inventory, os.path.join(ROOT, 'playbooks', 'revert.yml')],
                          log_name)
        with open(os.path.join(self.results, log_name)) as handle:
            recap = [line for line in handle if line.startswith(HOST) and 'changed=' in line]
        changed = int(recap[-1].split('changed=', 1)[1].split()[0]) if recap else None
        return rc, changed

    def revert_records(self, log_name, *extra):
        """playbooks/revert.yml (``extra``: --check --diff) through the json callback: (exit code,
        the records of its host_state task), so that the preview is compared with the real run."""
        argv = ['ansible-playbook', '-i', self.inventory, os.path.join(ROOT, 'playbooks', 'revert.yml')] + list(extra)
        env = dict(self.env(), ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json')
        path = os.path.join(self.results, log_name)
        with open(path, 'wb') as output, open(path + '.stderr', 'wb') as errors:
            rc = subprocess.run(argv, env=env, stdout=output, stderr=errors, check=False, timeout=TIMEOUT).returncode
        with open(path) as handle:
            plays = json.load(handle)['plays']
        task = [task for task in plays[0]['tasks'] if task['task']['name'].startswith('Put back every file')][0]
        return rc, task['hosts'][HOST].get('settings') or []

    def login_limits(self):
        # A real login: sshd's PAM session runs pam_limits, which reads limits.d.
        soft, hard = self.ssh(['ulimit -Sl; ulimit -Hl'], user='postgres').split()
        return {'soft': soft, 'hard': hard}


def expectations(size_mb):
    pages = math.ceil(size_mb / 2.0)
    pages += math.ceil(pages * 0.01)      # shared_memory_hugepages_margin: 1%
    return {
        'service': SERVICE, 'node': NODE, 'hugepages': pages, 'memlock_bytes': str(pages * 2 * 1024 * 1024),
        'login_memlock': '65536', 'data_mount': DATA_MOUNT, 'data_disk': 'vdb', 'data_disk_device': '/dev/vdb',
        'mount_options': ['noatime'],
        'queue': {'scheduler': 'mq-deadline', 'read_ahead_kb': '64', 'nr_requests': '64', 'rq_affinity': '1'},
        'shadowed': SHADOWED, 'min_records': 20,
    }


def run(scenario):
    size_mb = scenario.step('prepare (data disk, shared_memory_size)', scenario.prepare)
    untuned = scenario.step('snapshot before tune.yml', scenario.snapshot, 'untuned')
    scenario.step('tune.yml (all five roles)', scenario.tune)
    scenario.step('files of somebody else\'s', scenario.lay_site_files)
    scenario.step('TuneD: a site profile, enabled for the next boot', tuned_phase.activate, scenario)
    exit_before, before = scenario.step('drift check before the reboot', scenario.drift_check, 'before')
    observed_before = scenario.step('observe before the reboot', scenario.observe, before, 'before')
    scenario.step('reboot', scenario.reboot)
    exit_after, after = scenario.step('drift check after the reboot', scenario.drift_check, 'after')
    observed = scenario.step('observe after the reboot', scenario.observe, before + after, 'after')
    login = scenario.step('postgres login limits', scenario.login_limits)
    tuned_seen = scenario.step('TuneD after the reboot', tuned_phase.observe, scenario)
    scenario.step('remove the files of somebody else\'s', scenario.remove_site_files)
    scenario.step('TuneD stopped and disabled', tuned_phase.deactivate, scenario)
    # after TuneD's checks and without TuneD: the phase restarts the databases and runs tune.yml again
    effect = scenario.step('effect phase (what the databases get)', effect_phase.run, scenario,
                           expectations(size_mb)['hugepages'])
    tuned = scenario.step('snapshot before the revert', scenario.snapshot, 'tuned')
    preview = scenario.step('revert.yml --check --diff', scenario.revert_records, 'revert-check.json', '--check', '--diff')
    revert_exit, records = scenario.step('revert.yml', scenario.revert_records, 'revert.json')
    dummy, second_changed = scenario.step('revert.yml again', scenario.revert, 'revert-again.log')
    scenario.step('reboot after the revert', scenario.reboot)
    reverted = scenario.step('snapshot after the revert and a reboot', scenario.snapshot, 'reverted')
    evidence = {'before': before, 'after': after, 'exit_before': exit_before, 'exit_after': exit_after,
                'observed_before': observed_before, 'observed': observed, 'login': login,
                'revert': {'untuned': untuned, 'tuned': tuned, 'reverted': reverted, 'exit': revert_exit,
                           'second_changed': second_changed, 'preview_exit': preview[0], 'preview': preview[1],
                           'records': records}, 'tuned': tuned_seen, 'effect': effect}
    expect = tuned_phase.expect(expectations(size_mb))
    with open(os.path.join(scenario.results, 'evidence.json'), 'w') as handle:
        json.dump({'evidence': evidence, 'expect': expect}, handle, indent=1, sort_keys=True)
    return tuned_phase.judge(evidence, *verify.check(evidence, expect))


def main():
    with open(os.environ['DBHOST_VMLAB_STATE']) as handle:
        state = json.load(handle)
    scenario = Scenario(state)
    start = time.time()
    try:
        passed, failed = run(scenario)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as error:
        log('ERROR: %s' % error)
        log('results so far in %s' % scenario.results)
        return 1
    for line in passed:
        print('ok    ' + line)
    for line in failed:
        print('FAIL  ' + line)
    for name, seconds in scenario.timings:
        print('time  %-42s %5.0f s' % (name, seconds))
    print('%d checks passed, %d failed (%.0f s; evidence in %s)'
          % (len(passed), len(failed), time.time() - start, scenario.results))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
