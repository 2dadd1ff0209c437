# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift gate of playbooks/drift.yml: a drifted host fails with a short summary (how many
settings drifted, the first few with their reason), not with its whole result; the records stay
in the registered result and the reports, and the report counts the host as drifted."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.plugins.action import drift_gate as gate
from ansible_collections.dbhost.tuning.plugins.action.drift_gate import summary
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program, digest
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))

pytestmark = pytest.mark.usefixtures('linux')


def record(name, status, desired='1', live='0', persisted='0', detail='', comparison='exact'):
    return {'name': name, 'status': status, 'desired': desired, 'live': live, 'persisted': persisted,
            'detail': detail, 'comparison': comparison}


def test_summary_counts_and_names_the_first_five():
    records = [record('ok%d' % n, 'ok') for n in range(3)] + [record('vm.unsupported', 'unsupported')]
    records += [record('kernel.sem', 'drift', '250 32000 100 128', '250 32000 32 128', '250 32000 32 128',
                       comparison='minimum')]
    records += [record('key%d' % n, 'shadowed', detail='x' * 500) for n in range(6)]
    records[-6]['reason'] = 'shadowed by /etc/sysctl.d/99-x.conf'   # a record with its reason says it
    drifted, message = summary(records, 'dbhost_state')
    lines = message.splitlines()
    assert drifted == 7
    assert lines[0] == '7 of 11 settings drifted:'
    assert lines[1] == ('kernel.sem - drift: desired >= 250 32000 100 128, live 250 32000 32 128, '
                        'persisted 250 32000 32 128')
    assert lines[2].startswith('key0 - shadowed: desired 1, live 0, persisted 0 - shadowed by /etc/sysctl.d/99-x.conf '
                               '(xxx') and lines[2].endswith('...)')
    assert lines[3].startswith('key1 - shadowed: desired 1, live 0, persisted 0 (xxx')
    assert lines[6] == '... and 2 more'
    assert lines[7] == 'Every record is in dbhost_state and in the drift reports (drift.md, drift.json).'
    assert len(message) < 1200


def test_nothing_drifted_is_no_message():
    assert summary([record('a', 'ok'), record('b', 'unsupported')]) == (0, None)


def drift(tmp_path, *extra):
    root = str(tmp_path / 'host')
    fake_host.build(root)
    inventory = tmp_path / 'hosts.json'
    inventory.write_text(json.dumps({'all': {'hosts': {'db1': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
        'dbhost_roles': ['kernel_params'], 'kernel_params_root': root, 'kernel_params_profile': 'none',
        'kernel_params_mode': 'exact',
        'kernel_params_settings': {'kernel.shmmni': 8192, 'vm.swappiness': 10, 'kernel.panic_on_oops': 0}}}}}))
    before = digest(root)
    report_dir = tmp_path / 'report'
    env = ansible_env(tmp_path, ANSIBLE_CALLBACKS_ENABLED='dbhost.tuning.drift_report',
                      DBHOST_DRIFT_REPORT_DIR=str(report_dir), DBHOST_DRIFT_REPORT_TERMINAL='none')
    argv = [ansible_program('ansible-playbook'), '-i', str(inventory),
            os.path.join(CHECKOUT, 'playbooks', 'drift.yml')] + list(extra)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert digest(root) == before
    with open(str(report_dir / 'drift.json')) as stream:
        return done, json.load(stream)


def test_a_drifted_host_fails_with_a_short_summary(tmp_path):
    done, report = drift(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    fatal = [line for line in done.stdout.splitlines() if line.startswith('fatal: [db1]')]
    assert len(fatal) == 1 and len(fatal[0]) < 1000, fatal
    assert '2 of 3 settings drifted:' in fatal[0]
    assert 'kernel.shmmni - drift: desired 8192, live 4096' in fatal[0]
    assert 'vm.swappiness - drift: desired 10, live 60' in fatal[0]
    assert '"settings"' not in done.stdout   # no record dumped on the terminal
    assert 'TASK [Fail on drift]' in done.stdout
    # The report: the host drifted (the gate is not a failure), every record kept.
    assert report['hosts']['db1']['state'] == 'drift' and report['hosts']['db1']['errors'] == []
    assert len(report['hosts']['db1']['settings']) == 3


def test_report_only_passes_with_the_same_records(tmp_path):
    done, report = drift(tmp_path, '-e', 'dbhost_drift_report_only=true')
    assert done.returncode == 0, done.stdout + done.stderr
    assert report['hosts']['db1']['state'] == 'drift' and len(report['hosts']['db1']['settings']) == 3
    # The host ends before the gate (meta end_host, in the main process): no gate task runs at all.
    assert 'TASK [End a report-only run here (no gate)]' in done.stdout
    assert 'TASK [Fail on drift]' not in done.stdout


def test_the_last_line_names_only_reports_that_are_written():
    records = [record('a', 'drift')]
    assert gate.written_reports(enabled=[]) == ()
    assert gate.written_reports(enabled='ansible.posix.profile_tasks') == ()
    assert gate.written_reports(enabled=['dbhost.tuning.drift_report'], formats=None) == (
        'drift.md', 'drift.json', 'drift.xml')
    assert gate.written_reports(enabled='x, dbhost.tuning.drift_report', formats='json,junit') == (
        'drift.json', 'drift.xml')
    dummy, message = summary(records, 'dbhost_state', ())
    last = message.splitlines()[-1]
    assert last.startswith('Every record is in dbhost_state; no drift report is written by this run')
    assert 'ANSIBLE_CALLBACKS_ENABLED=dbhost.tuning.drift_report' in last and 'scripts/drift-check' in last
    dummy, message = summary(records, 'dbhost_state', ('drift.json',))
    assert message.splitlines()[-1] == 'Every record is in dbhost_state and in the drift reports (drift.json).'


def test_without_the_callback_the_gate_points_to_no_report_file(tmp_path):
    """A plain ansible-playbook run (the callback off, as by default) writes no drift.md or drift.json:
    the gate's message must not send a person looking for them."""
    root = str(tmp_path / 'host')
    fake_host.build(root)
    inventory = tmp_path / 'hosts.json'
    inventory.write_text(json.dumps({'all': {'hosts': {'db1': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
        'dbhost_roles': ['kernel_params'], 'kernel_params_root': root, 'kernel_params_profile': 'none',
        'kernel_params_settings': {'vm.swappiness': 10}}}}}))
    env = ansible_env(tmp_path)
    env.pop('DBHOST_DRIFT_REPORT_DIR', None)
    done = subprocess.run([ansible_program('ansible-playbook'), '-i', str(inventory),
                           os.path.join(CHECKOUT, 'playbooks', 'drift.yml')],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    (fatal,) = [line for line in done.stdout.splitlines() if line.startswith('fatal: [db1]')]
    assert 'no drift report is written by this run' in fatal, fatal
    assert 'in the drift reports' not in fatal
    assert not (tmp_path / 'drift-report').exists()
