# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift-check merge: slices of a real run (ansible-playbook --limit, as AWX job slices split an
inventory) merged give records byte for byte those of one unsliced run of the same hosts, one
report and one exit code; overlapping slices and mixed collection versions are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import textwrap

import jsonschema
import pytest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
DRIFT_CHECK = os.path.join(CHECKOUT, 'scripts', 'drift-check')
BIN = os.path.dirname(sys.executable)

PLAYBOOK = textwrap.dedent('''\
    - name: Drift check on test trees
      hosts: all
      gather_facts: false
      tasks:
        - name: Kernel parameters
          dbhost.tuning.kernel_params:
            params:
              kernel.shmmni: 4096
              kernel.msgmni: 100
            root: "{{ tree }}"
            file: /etc/sysctl.d/90-test.conf
    ''')


def make_tree(path, shmmni):
    os.makedirs(os.path.join(path, 'proc', 'sys', 'kernel'))
    os.makedirs(os.path.join(path, 'etc', 'sysctl.d'))
    for key, value in (('shmmni', shmmni), ('msgmni', 100)):
        with open(os.path.join(path, 'proc', 'sys', 'kernel', key), 'w') as stream:
            stream.write('%s\n' % value)
    with open(os.path.join(path, 'etc', 'sysctl.d', '90-test.conf'), 'w') as stream:
        stream.write('kernel.shmmni = 4096\nkernel.msgmni = 100\n')
    return path


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp('merge-lab')
    collections = base / 'collections' / 'ansible_collections' / 'dbhost'
    collections.mkdir(parents=True)
    os.symlink(CHECKOUT, str(collections / 'tuning'))
    lines = ['[db]']
    for number in range(1, 5):
        tree = make_tree(str(base / ('db%d' % number)), 8192 if number % 2 else 4096)
        lines.append('db%d tree=%s' % (number, tree))
    lines += ['[db:vars]', 'ansible_connection=local', 'ansible_python_interpreter=%s' % sys.executable]
    (base / 'hosts.ini').write_text('\n'.join(lines) + '\n')
    (base / 'drift.yml').write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(base / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(base / 'tmp'), PATH=BIN + os.pathsep + os.environ.get('PATH', ''))
    for name in ('ANSIBLE_CALLBACKS_ENABLED', 'DBHOST_DRIFT_REPORT_DIR', 'DBHOST_DRIFT_REPORT_FORMATS',
                 'DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS', 'AWX_ISOLATED_DATA_DIR', 'ANSIBLE_CONFIG'):
        env.pop(name, None)
    return {'base': base, 'env': env}


def drift_check(lab, *argv):
    return subprocess.run([DRIFT_CHECK] + list(argv), env=lab['env'], capture_output=True, text=True, timeout=300,
                          check=False)


def check(lab, name, *extra, **expect):
    done = drift_check(lab, '--playbook', str(lab['base'] / 'drift.yml'), '--report-dir', str(lab['base'] / name),
                       '--', '-i', str(lab['base'] / 'hosts.ini'), '-f', '2', *extra)
    assert done.returncode == expect.get('code', 3), done.stdout + done.stderr
    return str(lab['base'] / name)


def records_text(folder):
    with open(os.path.join(folder, 'drift.json')) as stream:
        report = json.load(stream)
    return dict((host, json.dumps(entry['settings'], sort_keys=True)) for host, entry in report['hosts'].items()), report


def test_merged_slices_equal_one_unsliced_run(lab):
    whole = check(lab, 'whole')
    first = check(lab, 'slice1', '--limit', 'db1,db3')
    second = check(lab, 'slice2', '--limit', 'db2,db4', code=0)
    merged = str(lab['base'] / 'merged')
    done = drift_check(lab, 'merge', '--report-dir', merged, first, second)
    assert done.returncode == 3, done.stderr
    assert 'merged 2 slice reports' in done.stderr
    whole_records, whole_report = records_text(whole)
    merged_records, merged_report = records_text(merged)
    assert sorted(merged_records) == ['db1', 'db2', 'db3', 'db4']
    assert merged_records == whole_records
    for key in ('summary', 'clean_statuses', 'schema_version', 'collection_version'):
        assert merged_report[key] == whole_report[key], key
    assert [entry['groups'] for entry in merged_report['hosts'].values()] == [['db']] * 4
    assert len(merged_report['merged_from']) == 2
    for name in ('drift.json', 'drift.xml', 'drift.md', 'drift.html'):
        assert os.path.getsize(os.path.join(merged, name)) > 0


def _slice(folder, hosts, version='0.2.0'):
    folder.mkdir()
    report = {'schema_version': 2, 'collection_version': version, 'clean_statuses': ['ok', 'unsupported'],
              'started': None, 'finished': None, 'playbooks': [],
              'hosts': dict((host, {'errors': [], 'settings': []}) for host in hosts)}
    (folder / 'drift.json').write_text(json.dumps(report))
    return str(folder)


def test_overlapping_slices_are_refused(lab, tmp_path):
    done = drift_check(lab, 'merge', '--report-dir', str(tmp_path / 'out'),
                       _slice(tmp_path / 'a', ['db1', 'db2']), _slice(tmp_path / 'b', ['db2', 'db3']))
    assert done.returncode == 1
    assert 'host db2 is in two slices' in done.stderr and 'the slices overlap' in done.stderr
    assert not (tmp_path / 'out').exists()


def test_mixed_collection_versions_are_refused(lab, tmp_path):
    done = drift_check(lab, 'merge', '--report-dir', str(tmp_path / 'out'),
                       _slice(tmp_path / 'a', ['db1']), _slice(tmp_path / 'b', ['db2'], version='0.3.0'))
    assert done.returncode == 1
    assert 'different collection versions' in done.stderr and '"0.3.0"' in done.stderr, done.stderr


def test_merge_of_clean_slices_is_clean_and_of_nothing_is_usage(lab, tmp_path):
    done = drift_check(lab, 'merge', '--report-dir', str(tmp_path / 'out'), _slice(tmp_path / 'a', ['db1']),
                       _slice(tmp_path / 'b', ['db2']))
    assert done.returncode == 0, done.stderr
    done = drift_check(lab, 'merge', '--report-dir', str(tmp_path / 'out'))
    assert done.returncode == 1 and 'SLICE' in done.stderr


def test_a_real_run_keeps_its_ledger_and_waivers_through_the_callback(lab, tmp_path):
    """drift-check --ledger --waivers: the callback (not drift-check) writes the ledger in the real run."""
    ledger = str(tmp_path / 'ledger.sqlite')
    waivers = tmp_path / 'waivers.yml'
    waivers.write_text('waivers:\n  - {hosts: db1, setting: kernel.shmmni, reason: r, owner: o, expires: 2099-12-31}\n')
    first = check(lab, 'ledger1', code=3)
    done = drift_check(lab, '--from-report', first, '--ledger', ledger)
    assert done.returncode == 3, done.stderr
    done = drift_check(lab, '--playbook', str(lab['base'] / 'drift.yml'), '--report-dir', str(tmp_path / 'two'),
                       '--ledger', ledger, '--waivers', str(waivers), '--since-last',
                       '--', '-i', str(lab['base'] / 'hosts.ini'), '-f', '2')
    # db3's drift is still there, not new; db1's is waived: --since-last passes.
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'since last run' in done.stdout and 'waived: 1 drifted setting accepted by a waiver' in done.stdout
    dummy, report = records_text(str(tmp_path / 'two'))
    assert report['since_last']['counts'] == {'new': 0, 'changed': 0, 'still': 2, 'fixed': 0}
    shmmni = [record for record in report['hosts']['db1']['settings'] if record['name'] == 'kernel.shmmni']
    assert shmmni[0]['waiver']['active'] is True and shmmni[0]['since_last']['mark'] == 'still'
    assert report['hosts']['db1']['state'] == 'clean' and report['hosts']['db3']['state'] == 'drift'
    assert [run['drifted'] for run in report['ledger']['trend']] == [2, 1]
    # The written report, with its ledger, marks and waivers, keeps to the shipped JSON Schema.
    with open(os.path.join(CHECKOUT, 'docs', 'drift-report.schema.json')) as stream:
        schema = json.load(stream)
    problems = sorted(error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(report))
    assert problems == []


def test_the_awx_merge_playbook_merges_real_slices(lab, tmp_path):
    """examples/awx/drift-merge.yml, run as the workflow's merge node runs it, on two real slices
    written where the slices' {job_id} folders would be."""
    root = tmp_path / 'reports'
    for job_id, limit in (('101', 'db1,db3'), ('102', 'db2,db4')):
        env = dict(lab['env'], JOB_ID=job_id, ANSIBLE_CALLBACKS_ENABLED='dbhost.tuning.drift_report',
                   DBHOST_DRIFT_REPORT_DIR=str(root / 'slices' / '{job_id}'), DBHOST_DRIFT_REPORT_TERMINAL='none')
        done = subprocess.run([os.path.join(BIN, 'ansible-playbook'), str(lab['base'] / 'drift.yml'), '--check',
                               '-i', str(lab['base'] / 'hosts.ini'), '--limit', limit], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (root / 'slices' / job_id / 'drift.json').exists()
    done = subprocess.run([os.path.join(BIN, 'ansible-playbook'), os.path.join(CHECKOUT, 'examples', 'awx', 'drift-merge.yml'),
                           '-e', 'drift_collection_dir=%s drift_reports_root=%s' % (CHECKOUT, root)],
                          env=lab['env'], capture_output=True, text=True, timeout=300, check=False)
    # Two hosts drifted: the merge node fails with drift-check's verdict.
    assert done.returncode == 2 and 'exit 3' in done.stdout, done.stdout + done.stderr
    runs = os.listdir(str(root / 'runs'))
    assert len(runs) == 1 and sorted(os.listdir(str(root / 'slices'))) == []
    run_dir = root / 'runs' / runs[0]
    assert sorted(name for name in os.listdir(str(run_dir))) == ['101', '102', 'drift.html', 'drift.json', 'drift.md',
                                                                 'drift.xml']
    merged, report = records_text(str(run_dir))
    assert sorted(merged) == ['db1', 'db2', 'db3', 'db4'] and report['ledger']['trend'][0]['drifted'] == 2
