# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real ansible-playbook runs with the drift_report callback and scripts/drift-check.

Four inventory hosts run with forks 4: two on the local connection with test trees as `root`
(one matching, one drifted), one whose task fails on bad input, and one ssh host on a closed
loopback port (unreachable). kernel_params runs in check mode on the trees, so nothing is written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
import xmlschema

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
FIXTURES = os.path.join(CHECKOUT, 'tests', 'unit', 'fixtures', 'drift')
DRIFT_CHECK = os.path.join(CHECKOUT, 'scripts', 'drift-check')
DRIFT_CHECK_PY = os.path.join(CHECKOUT, 'scripts', 'drift_check.py')
BIN = os.path.dirname(sys.executable)
ANSIBLE_PLAYBOOK = os.path.join(BIN, 'ansible-playbook')

PLAYBOOK = textwrap.dedent('''\
    - name: Drift check on test trees
      hosts: all
      gather_facts: false
      tasks:
        - name: Kernel parameters in a loop
          dbhost.tuning.kernel_params:
            params: "{{ {item: 100} }}"
            root: "{{ tree }}"
            file: /etc/sysctl.d/90-test.conf
          loop: [kernel.msgmni]

        - name: Bad input
          dbhost.tuning.kernel_params:
            params:
              ../etc/passwd: 1
            root: "{{ tree }}"
          when: broken | default(false) | bool

        # The gate: the module fails on its own drifted records (drift_gate), as drift.yml's host_state does.
        - name: Kernel parameters
          dbhost.tuning.kernel_params:
            params:
              kernel.shmmni: 4096
            root: "{{ tree }}"
            file: /etc/sysctl.d/90-test.conf
            fail_on_drift: "{{ not (dbhost_drift_report_only | default(false) | bool) }}"
    ''')


def load_drift_check():
    loader = importlib.machinery.SourceFileLoader('drift_check', DRIFT_CHECK_PY)
    spec = importlib.util.spec_from_loader('drift_check', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def make_tree(path, live, persisted):
    os.makedirs(os.path.join(path, 'proc', 'sys', 'kernel'))
    os.makedirs(os.path.join(path, 'etc', 'sysctl.d'))
    for key, value in live.items():
        with open(os.path.join(path, 'proc', 'sys', 'kernel', key), 'w') as stream:
            stream.write('%s\n' % value)
    with open(os.path.join(path, 'etc', 'sysctl.d', '90-test.conf'), 'w') as stream:
        stream.write('# kept by hand\n' + ''.join('kernel.%s = %s\n' % item for item in sorted(persisted.items())))
    return path


def tree_digest(path):
    digest = hashlib.sha256()
    for folder, dummy, files in sorted(os.walk(path)):
        for name in sorted(files):
            full = os.path.join(folder, name)
            digest.update(full.encode())
            with open(full, 'rb') as stream:
                digest.update(stream.read())
    return digest.hexdigest()


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp('drift-lab')
    collections = base / 'collections' / 'ansible_collections' / 'dbhost'
    collections.mkdir(parents=True)
    os.symlink(CHECKOUT, str(collections / 'tuning'))
    good = {'shmmni': 4096, 'msgmni': 100}
    trees = {
        'clean': make_tree(str(base / 'clean'), good, good),
        'drifted': make_tree(str(base / 'drifted'), {'shmmni': 8192, 'msgmni': 100}, good),
        'broken': make_tree(str(base / 'broken'), good, good),
    }
    inventory = base / 'hosts.ini'
    inventory.write_text(textwrap.dedent('''\
        [local]
        clean tree={clean}
        drifted tree={drifted}
        broken tree={broken} broken=true
        [local:vars]
        ansible_connection=local
        ansible_python_interpreter={python}
        [remote]
        down ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh tree=/nonexistent
        [remote:vars]
        ansible_ssh_common_args=-o ConnectTimeout=3 -o StrictHostKeyChecking=no
        ''').format(python=sys.executable, **trees))
    playbook = base / 'drift.yml'
    playbook.write_text(PLAYBOOK)
    broken_playbook = base / 'broken.yml'
    broken_playbook.write_text('- hosts: all\n  tasks: [\n')
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': str(base / 'collections'),
        'ANSIBLE_HOST_KEY_CHECKING': 'False',
        'ANSIBLE_RETRY_FILES_ENABLED': 'False',
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_LOCAL_TEMP': str(base / 'tmp'),
        'PATH': BIN + os.pathsep + env.get('PATH', ''),
    })
    for name in ('ANSIBLE_CALLBACKS_ENABLED', 'DBHOST_DRIFT_REPORT_DIR', 'DBHOST_DRIFT_REPORT_FORMATS',
                 'DBHOST_DRIFT_REPORT_TERMINAL', 'AWX_ISOLATED_DATA_DIR', 'ANSIBLE_CONFIG'):
        env.pop(name, None)
    return {'base': base, 'inventory': str(inventory), 'playbook': str(playbook),
            'broken_playbook': str(broken_playbook), 'env': env, 'trees': trees}


def drift_check(lab, report_dir, *extra, **kwargs):
    playbook = kwargs.get('playbook', lab['playbook'])
    command = [DRIFT_CHECK, '--playbook', playbook, '--report-dir', str(report_dir)]
    command += list(kwargs.get('options', []))
    command += ['--', '-i', lab['inventory'], '-f', '4'] + list(extra)
    return subprocess.run(command, env=lab['env'], capture_output=True, text=True, timeout=300, check=False)


def read_report(folder):
    with open(os.path.join(str(folder), 'drift.json')) as stream:
        return json.load(stream)


def test_callback_with_forks_unreachable_failed_and_loops(lab):
    before = dict((name, tree_digest(path)) for name, path in lab['trees'].items())
    report_dir = lab['base'] / 'direct'
    env = dict(lab['env'], ANSIBLE_CALLBACKS_ENABLED='dbhost.tuning.drift_report',
               DBHOST_DRIFT_REPORT_DIR=str(report_dir))
    done = subprocess.run([ANSIBLE_PLAYBOOK, lab['playbook'], '-i', lab['inventory'], '-f', '4', '--check'],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    # ansible-playbook itself: a failed host (the gate and the bad input) and an unreachable one.
    assert done.returncode in (2, 4), done.stdout + done.stderr
    report = read_report(report_dir)
    hosts = report['hosts']
    assert dict((name, entry['state']) for name, entry in hosts.items()) == {
        'clean': 'clean', 'drifted': 'drift', 'broken': 'failed', 'down': 'unreachable'}
    assert report['summary']['state'] == 'failed'
    drifted = [(r['name'], r['desired'], r['live'], r['persisted'], r['status'])
               for r in hosts['drifted']['settings'] if r['status'] != 'ok']
    assert drifted == [('kernel.shmmni', '4096', '8192', '4096', 'drift')]
    # Loop items are collected with their label.
    assert [(r['name'], r.get('item'), r['task']) for r in hosts['clean']['settings']] == [
        ('kernel.msgmni', 'kernel.msgmni', 'Kernel parameters in a loop'), ('kernel.shmmni', None, 'Kernel parameters')]
    assert set(r['module'] for r in hosts['clean']['settings']) == {'dbhost.tuning.kernel_params'}
    # The gate's failure on the drifted host (drift_gate) is not a host failure; the bad input is.
    assert hosts['drifted']['errors'] == []
    assert [e['task'] for e in hosts['broken']['errors']] == ['Bad input']
    assert "'../etc/passwd'" in hosts['broken']['errors'][0]['msg']
    assert hosts['down']['settings'] == [] and hosts['down']['errors'][0]['kind'] == 'unreachable'
    xmlschema.XMLSchema(os.path.join(FIXTURES, 'junit.xsd')).validate(str(report_dir / 'drift.xml'))
    markdown = (report_dir / 'drift.md').read_text()
    assert '| drifted | kernel.shmmni | 4096 | 8192 | 4096 | **drift** |' in markdown
    assert '| down | unreachable | Kernel parameters in a loop |' in markdown
    # The terminal table is printed at the end.
    assert 'DRIFT REPORT' in done.stdout and 'drifted: drift (2 settings, 1 drifted)' in done.stdout
    # Check mode: the trees are byte for byte what they were.
    assert dict((name, tree_digest(path)) for name, path in lab['trees'].items()) == before


@pytest.mark.parametrize('limit, code, state', [
    ('clean', 0, 'clean'),
    ('clean,drifted', 3, 'drift'),
    ('clean,drifted,down', 4, 'unreachable'),
    ('all', 2, 'failed'),
])
def test_drift_check_exit_codes(lab, limit, code, state):
    report_dir = lab['base'] / ('codes-' + limit.replace(',', '-'))
    done = drift_check(lab, report_dir, '--limit', limit)
    assert done.returncode == code, done.stdout + done.stderr
    assert read_report(report_dir)['summary']['state'] == state
    assert done.stderr.rstrip().endswith('exit %d' % code)


def test_drift_check_report_only(lab):
    report_dir = lab['base'] / 'report-only'
    # Formats from the environment reach the callback; drift-check adds the JSON it decides on.
    lab = dict(lab, env=dict(lab['env'], DBHOST_DRIFT_REPORT_FORMATS='markdown'))
    done = drift_check(lab, report_dir, '--limit', 'clean,drifted', options=['--report-only'])
    assert done.returncode == 0, done.stdout + done.stderr
    assert read_report(report_dir)['summary']['state'] == 'drift'
    assert sorted(os.listdir(str(report_dir))) == ['drift.json', 'drift.md']


def test_drift_check_never_reads_a_stale_report(lab):
    report_dir = lab['base'] / 'stale'
    report_dir.mkdir()
    stale = {'summary': {'state': 'clean'}, 'hosts': {}}
    (report_dir / 'drift.json').write_text(json.dumps(stale))
    (report_dir / 'drift.md').write_text('old')
    (report_dir / 'notes.txt').write_text('mine')
    done = drift_check(lab, report_dir, playbook=lab['broken_playbook'])
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'no drift report was written' in done.stderr
    assert sorted(os.listdir(str(report_dir))) == ['notes.txt']


@pytest.mark.parametrize('case', ['missing inventory', 'broken inventory', 'limit matches nothing',
                                  'pattern matches nothing'])
def test_no_host_checked_is_its_own_exit_code_never_clean(lab, case):
    report_dir = lab['base'] / ('no-hosts-' + case.replace(' ', '-'))
    broken = lab['base'] / 'broken-inventory.ini'
    broken.write_text(u'[db\nnot an inventory = =\n')
    inventory, extra = lab['inventory'], []
    if case == 'missing inventory':
        inventory = str(lab['base'] / 'nonexist')
    elif case == 'broken inventory':
        inventory = str(broken)
    elif case == 'limit matches nothing':
        extra = ['--limit', 'no-such-host']
    else:
        extra = ['-e', 'dbhost_hosts=no-such-group']
    playbook = os.path.join(CHECKOUT, 'playbooks', 'drift.yml') if case == 'pattern matches nothing' \
        else lab['playbook']
    command = [DRIFT_CHECK, '--playbook', playbook, '--report-dir', str(report_dir), '--', '-i', inventory] + extra
    done = subprocess.run(command, env=lab['env'], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 5, done.stdout + done.stderr
    assert 'no host was checked' in done.stderr
    # the state word drift-check would print for a clean run, not any 'clean' (the checkout's path may hold one)
    assert 'drift-check: clean' not in done.stderr
    assert done.stderr.rstrip().endswith('exit 5')


def test_from_report_of_no_host_is_no_hosts(tmp_path, capsys):
    drift_check_module = load_drift_check()
    (tmp_path / 'drift.json').write_text(json.dumps({'summary': {'state': 'clean', 'hosts': 0}, 'hosts': {}}))
    assert drift_check_module.main(['--from-report', str(tmp_path)]) == 5
    assert drift_check_module.main(['--from-report', str(tmp_path), '--report-only']) == 5
    assert 'checked no host; exit 5' in capsys.readouterr().err


def test_drift_check_runs_python3_from_path(lab, tmp_path):
    # Plain Debian has python3 and no python: the wrapper runs python3 from PATH.
    with open(DRIFT_CHECK) as stream:
        assert stream.readline() == '#!/usr/bin/env bash\n'
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    os.symlink(sys.executable, str(bin_dir / 'python3'))
    env = dict(lab['env'], PATH=str(bin_dir) + os.pathsep + '/usr/bin:/bin')
    report = tmp_path / 'drift.json'
    report.write_text(json.dumps({'summary': {'state': 'clean', 'hosts': 1, 'clean': 1}, 'hosts': {'db1': {}}}))
    done = subprocess.run([DRIFT_CHECK, '--from-report', str(report)], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_drift_check_bad_usage_is_no_verdict(lab):
    done = subprocess.run([DRIFT_CHECK, '--no-such-option'], env=lab['env'],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and 'unrecognized arguments' in done.stderr
    done = subprocess.run([DRIFT_CHECK, '--playbook', '/nonexistent.yml'], env=lab['env'],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and 'no playbook at /nonexistent.yml' in done.stderr


@pytest.mark.parametrize('state, report_only, code', [
    ('clean', False, 0), ('drift', False, 3), ('unreachable', False, 4), ('failed', False, 2),
    ('drift', True, 0), ('unreachable', True, 4), ('failed', True, 2),
])
def test_from_report(tmp_path, capsys, state, report_only, code):
    drift_check_module = load_drift_check()
    report = {'summary': {'state': state, 'hosts': 1, state: 1, 'settings': 2, 'drifted': 1},
              'hosts': {'db1': {'state': state}}}
    (tmp_path / 'drift.json').write_text(json.dumps(report))
    argv = ['--from-report', str(tmp_path)] + (['--report-only'] if report_only else [])
    assert drift_check_module.main(argv) == code
    assert capsys.readouterr().err.splitlines()[-1] == 'drift-check: report %s; exit %d' % (tmp_path / 'drift.json', code)


def test_from_report_refuses_what_it_cannot_read(tmp_path, capsys):
    drift_check_module = load_drift_check()
    (tmp_path / 'drift.json').write_text('{"summary": {"state": "green"}}')
    assert drift_check_module.main(['--from-report', str(tmp_path)]) == 1
    assert 'no summary.state among clean, drift, failed, unreachable' in capsys.readouterr().err
    assert drift_check_module.main(['--from-report', str(tmp_path / 'missing')]) == 1
    (tmp_path / 'drift.json').write_text('not json')
    assert drift_check_module.main(['--from-report', str(tmp_path)]) == 1


def test_callback_env_keeps_other_callbacks_and_json(monkeypatch):
    drift_check_module = load_drift_check()
    monkeypatch.setenv('ANSIBLE_CALLBACKS_ENABLED', 'ansible.posix.profile_tasks')
    monkeypatch.setenv('DBHOST_DRIFT_REPORT_FORMATS', 'markdown')
    env = drift_check_module.callback_env('/reports')
    assert env['ANSIBLE_CALLBACKS_ENABLED'] == 'ansible.posix.profile_tasks,dbhost.tuning.drift_report'
    assert env['DBHOST_DRIFT_REPORT_FORMATS'] == 'markdown,json'
    assert env['DBHOST_DRIFT_REPORT_DIR'] == '/reports'


def _unsupported_report(state='clean', with_count=True):
    records = [{'name': 'kernel.shmmni', 'status': 'ok'},
               {'name': 'net.bridge.bridge-nf-call-iptables', 'status': 'unsupported'},
               {'name': 'vm.swappiness', 'status': 'unsupported'}]
    summary = {'state': state, 'hosts': 1, state: 1, 'settings': 3, 'drifted': 0,
               'statuses': {'ok': 1, 'unsupported': 2}}
    if with_count:
        summary['unsupported'] = 2
    return {'summary': summary, 'hosts': {'ct1': {'state': state, 'settings': records}}}


@pytest.mark.parametrize('options, code', [([], 0), (['--unsupported-as-drift'], 3),
                                           (['--unsupported-as-drift', '--report-only'], 0), (['--report-only'], 0)])
@pytest.mark.parametrize('with_count', [True, False])
def test_only_unsupported_records_are_clean_unless_asked_otherwise(tmp_path, capsys, options, code, with_count):
    drift_check_module = load_drift_check()
    (tmp_path / 'drift.json').write_text(json.dumps(_unsupported_report(with_count=with_count)))
    assert drift_check_module.main(['--from-report', str(tmp_path)] + options) == code
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ('drift-check: clean: 1 host (1 clean, 0 drift, 0 failed, 0 unreachable), '
                      '0 of 3 settings drifted, 2 unsupported')
    assert err[1] == 'drift-check:   ct1: clean, 2 unsupported (net.bridge.bridge-nf-call-iptables, vm.swappiness)'
    assert err[-1].endswith('exit %d' % code)


def test_unsupported_as_drift_never_makes_a_worse_state_milder(tmp_path):
    drift_check_module = load_drift_check()
    for state, code in (('drift', 3), ('unreachable', 4), ('failed', 2)):
        assert drift_check_module.verdict(_unsupported_report(state), unsupported_as_drift=True) == code


def test_drift_check_of_a_host_with_only_unsupported_records(lab):
    """A real run: kernel.msgmni has no /proc/sys entry in the tree (a kernel without it), our
    file already has it. The host reads clean with one unsupported setting, exit 0; counted
    as drift (exit 3) only when asked."""
    tree = make_tree(str(lab['base'] / 'partial'), {'shmmni': 4096}, {'shmmni': 4096, 'msgmni': 100})
    inventory = lab['base'] / 'partial.ini'
    inventory.write_text('partial tree=%s ansible_connection=local ansible_python_interpreter=%s\n'
                         % (tree, sys.executable))
    before = tree_digest(tree)
    for options, code in (([], 0), (['--unsupported-as-drift'], 3)):
        report_dir = lab['base'] / ('partial-%d' % code)
        command = [DRIFT_CHECK, '--playbook', lab['playbook'], '--report-dir', str(report_dir)] + options + [
            '--', '-i', str(inventory)]
        done = subprocess.run(command, env=lab['env'], capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == code, done.stdout + done.stderr
        summary = read_report(report_dir)['summary']
        assert (summary['state'], summary['drifted'], summary['unsupported']) == ('clean', 0, 1)
        assert 'drift-check:   partial: clean, 1 unsupported (kernel.msgmni)' in done.stderr
        records = read_report(report_dir)['hosts']['partial']['settings']
        assert [(r['name'], r['status']) for r in records] == [('kernel.msgmni', 'unsupported'), ('kernel.shmmni', 'ok')]
        assert records[0]['detail'].startswith('no /proc/sys/kernel/msgmni on this kernel')
        assert '<skipped message="unsupported: no /proc/sys/kernel/msgmni' in (report_dir / 'drift.xml').read_text()
    assert tree_digest(tree) == before


def test_drift_check_prints_the_reason_of_every_record_not_ok(tmp_path, capsys):
    """From the callback's own report of the recorded events: under each host that is not clean (or has
    an unsupported setting), every failed task's message and every record that is not ok, with its
    status, reason and source; the exit code stays the report's."""
    from ansible_collections.dbhost.tuning.tests.unit.plugins.callback.test_drift_report import run
    dummy, dummy, folder = run(tmp_path)
    drift_check_module = load_drift_check()
    assert drift_check_module.main(['--from-report', str(folder)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        'drift-check: failed: 5 hosts (1 clean, 2 drift, 1 failed, 1 unreachable), 5 of 11 settings drifted, 1 unsupported',
        'drift-check:   db1: clean, 1 unsupported (kernel/mm/transparent_hugepage/enabled)',
        'drift-check:     kernel/mm/transparent_hugepage/enabled: unsupported: not writable in this container '
        '(source: the database vendors\' advice on transparent huge pages (shared_memory_transparent_hugepage))',
        'drift-check:   db2: drift',
        'drift-check:     kernel.sem: drift: live below the minimum 250 32000 100 128 (source: Oracle Database '
        'Installation Guide for Linux (19c, 21c, 23ai), "Minimum Parameter Settings for Installation" (profile oracle))',
        'drift-check:     vm.swappiness: shadowed: shadowed by /etc/sysctl.d/99-local.conf (source: user: kernel_params_settings)',
        'drift-check:   db3: failed',
        "drift-check:     failed in task 'Set kernel parameters': the kernel refused: kernel.shmmni (Invalid argument)",
        'drift-check:     kernel.shmmni: failed: Invalid argument (source: user: kernel_params_settings)',
        'drift-check:   db4: unreachable',
        "drift-check:     unreachable in task 'Set kernel parameters': Task failed: Failed to connect to the host via ssh: "
        'ssh: connect to host 192.0.2.14 port 22: Connection timed out',
        'drift-check:   db5: drift',
        'drift-check:     queue/rq_affinity (sdb): drift: live differs (source: task option: sysfs_attr.attributes)',
        'drift-check:     queue/scheduler: pending_reboot: persisted, pending reboot (source: task option: sysfs_attr.attributes)',
        'drift-check: report %s; exit 2' % (folder / 'drift.json'),
    ]


def test_drift_check_reason_falls_back_to_the_detail(tmp_path, capsys):
    """A record without a reason shows its detail on one line, one with neither `-`; an ok record and a
    clean host print nothing; a record without a source says none."""
    records = [{'name': 'a', 'status': 'ok', 'reason': None, 'detail': 'fine', 'source': 'user: x'},
               {'name': 'b', 'status': 'drift', 'reason': None, 'detail': 'would write\n  5', 'source': None},
               {'name': 'c', 'status': 'changed', 'target': '/etc/x'}]
    report = {'summary': {'state': 'drift', 'hosts': 2, 'drift': 1, 'clean': 1, 'settings': 4, 'drifted': 2},
              'hosts': {'db1': {'state': 'drift', 'settings': records, 'errors': []},
                        'db2': {'state': 'clean', 'settings': [dict(records[0])], 'errors': []}}}
    (tmp_path / 'drift.json').write_text(json.dumps(report))
    drift_check_module = load_drift_check()
    assert drift_check_module.main(['--from-report', str(tmp_path), '--report-only']) == 0
    assert capsys.readouterr().err.splitlines()[1:] == [
        'drift-check:   db1: drift',
        'drift-check:     b: drift: would write 5',
        'drift-check:     c: changed: -',
        'drift-check: report %s; exit 0' % (tmp_path / 'drift.json'),
    ]
