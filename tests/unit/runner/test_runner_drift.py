# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check under ansible-runner, for real, against this machine (local connection).

The example private data folder runner/ is copied to a temporary folder and run with
`ansible-runner run DIR -p drift.yml`: once with a small playbook that checks a test tree
(so the outcome is known), once as shipped (the collection's drift.yml on localhost).
Both must leave the reports in artifacts/<ident>/drift-report.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import xmlschema

from ansible_collections.dbhost.tuning.tests.unit.helpers import digest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
RUNNER_EXAMPLE = os.path.join(CHECKOUT, 'runner')
BIN = os.path.dirname(sys.executable)
ANSIBLE_RUNNER = os.path.join(BIN, 'ansible-runner')
SCHEMA = os.path.join(CHECKOUT, 'tests', 'unit', 'fixtures', 'drift', 'junit.xsd')

TINY_PLAYBOOK = textwrap.dedent('''\
    ---
    - name: Drift check of a test tree
      hosts: all
      gather_facts: false
      tasks:
        - name: Kernel parameters
          dbhost.tuning.kernel_params:
            params:
              kernel.shmmni: 4096
              kernel.msgmni: 100
            root: {root}
            file: /etc/sysctl.d/90-test.conf
    ''')


@pytest.fixture()
def private_data_dir(tmp_path):
    target = tmp_path / 'runner'
    shutil.copytree(RUNNER_EXAMPLE, str(target), ignore=shutil.ignore_patterns('artifacts'))
    return target


@pytest.fixture()
def runner_env(tmp_path):
    collections = tmp_path / 'collections' / 'ansible_collections' / 'dbhost'
    collections.mkdir(parents=True)
    os.symlink(CHECKOUT, str(collections / 'tuning'))
    env = dict(os.environ)
    for name in ('ANSIBLE_CALLBACKS_ENABLED', 'DBHOST_DRIFT_REPORT_DIR', 'DBHOST_DRIFT_REPORT_FORMATS',
                 'AWX_ISOLATED_DATA_DIR', 'ANSIBLE_CONFIG'):
        env.pop(name, None)
    env.update({'ANSIBLE_COLLECTIONS_PATH': str(tmp_path / 'collections'), 'ANSIBLE_LOCAL_TEMP': str(tmp_path / 'tmp'),
                'PATH': BIN + os.pathsep + env.get('PATH', '')})
    return env


def run_runner(folder, env, ident):
    done = subprocess.run([ANSIBLE_RUNNER, 'run', str(folder), '-p', 'drift.yml', '--ident', ident],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    return done, folder / 'artifacts' / ident


def test_runner_writes_reports_into_its_artifacts(private_data_dir, runner_env, tmp_path):
    tree = tmp_path / 'tree'
    (tree / 'proc' / 'sys' / 'kernel').mkdir(parents=True)
    (tree / 'etc' / 'sysctl.d').mkdir(parents=True)
    (tree / 'proc' / 'sys' / 'kernel' / 'shmmni').write_text('8192\n')
    (tree / 'proc' / 'sys' / 'kernel' / 'msgmni').write_text('100\n')
    (tree / 'etc' / 'sysctl.d' / '90-test.conf').write_text('kernel.shmmni = 4096\nkernel.msgmni = 100\n')
    before = digest(str(tree))
    (private_data_dir / 'project' / 'drift.yml').write_text(TINY_PLAYBOOK.format(root=tree))

    done, artifacts = run_runner(private_data_dir, runner_env, 'tiny')

    # The example runs report-only: ansible-runner's own rc stays 0 and the verdict is in the report.
    assert done.returncode == 0, done.stdout + done.stderr
    assert (artifacts / 'rc').read_text().strip() == '0'
    reports = artifacts / 'drift-report'
    assert sorted(os.listdir(str(reports))) == ['drift.html', 'drift.json', 'drift.md', 'drift.xml']
    with open(str(reports / 'drift.json')) as stream:
        report = json.load(stream)
    assert report['summary']['state'] == 'drift'
    assert [(r['name'], r['live'], r['status']) for r in report['hosts']['localhost']['settings']] == [
        ('kernel.msgmni', '100', 'ok'), ('kernel.shmmni', '8192', 'drift')]
    xmlschema.XMLSchema(SCHEMA).validate(str(reports / 'drift.xml'))
    assert '| localhost | kernel.shmmni | 4096 | 8192 | 4096 | **drift** |' in (reports / 'drift.md').read_text()
    # The job log (artifacts/<ident>/stdout) ends with the drifted settings only (terminal: drift).
    stdout = (artifacts / 'stdout').read_text()
    assert 'kernel.shmmni' in stdout.split('DRIFT REPORT')[1] and 'kernel.msgmni' not in stdout.split('DRIFT REPORT')[1]
    # The run was in check mode: not a byte changed.
    assert digest(str(tree)) == before
    # The verdict from the artifacts: 3 for drift.
    verdict = subprocess.run([os.path.join(CHECKOUT, 'scripts', 'drift-check'), '--from-report', str(reports)],
                             env=runner_env, capture_output=True, text=True, timeout=60, check=False)
    assert verdict.returncode == 3, verdict.stderr


@pytest.mark.skipif(not os.path.exists(os.path.join(CHECKOUT, 'playbooks', 'drift.yml')),
                    reason='playbooks/drift.yml is not in this checkout')
def test_runner_example_as_shipped_checks_this_machine(private_data_dir, runner_env):
    done, artifacts = run_runner(private_data_dir, runner_env, 'shipped')
    assert done.returncode == 0, done.stdout + done.stderr
    with open(str(artifacts / 'drift-report' / 'drift.json')) as stream:
        report = json.load(stream)
    assert list(report['hosts']) == ['localhost']
    localhost = report['hosts']['localhost']
    # This machine may or may not match the profile, but it was reached and every task ran.
    assert localhost['state'] in ('clean', 'drift'), localhost['errors']
    assert localhost['settings'], 'the drift playbook reported no setting'
    assert all(record['module'].startswith('dbhost.tuning.') for record in localhost['settings'])
    assert os.path.exists(str(artifacts / 'drift-report' / 'drift.xml'))
    assert os.path.exists(str(artifacts / 'drift-report' / 'drift.md'))
