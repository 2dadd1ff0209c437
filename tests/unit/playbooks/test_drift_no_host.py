# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/drift.yml run on no host must not pass: a misspelt inventory, a group with no
host, a dbhost_hosts or --limit that selects none of the inventory's hosts each end the run
with a non-zero exit and "no host to check", before anything runs; scripts/drift-check still
maps them to its own exit 5."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
DRIFT = os.path.join(CHECKOUT, 'playbooks', 'drift.yml')

pytestmark = pytest.mark.usefixtures('linux')


def inventory(tmp_path):
    root = str(tmp_path / 'host')
    fake_host.build(root)
    db1 = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
           'dbhost_roles': ['kernel_params'], 'kernel_params_root': root, 'kernel_params_profile': 'none',
           'kernel_params_settings': {'vm.swappiness': 10}}
    path = tmp_path / 'hosts.json'
    path.write_text(json.dumps({'all': {'children': {
        'db': {'hosts': {'db1': db1}},
        'web': {'hosts': {'web1': {'ansible_connection': 'local'}}},
        'empty': {'hosts': {}}}}}))
    return str(path)


def drift(tmp_path, *args):
    env = ansible_env(tmp_path)
    done = subprocess.run([ansible_program('ansible-playbook'), DRIFT] + list(args), cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize('args, why', [
    (['-i', 'inventroy'], 'the inventory has no host (does the -i path exist and parse?)'),
    (['-i', '{inventory}', '-e', 'dbhost_hosts=empty'], 'no host of the inventory matches empty'),
    (['-i', '{inventory}', '-e', 'dbhost_hosts=nogroup'], 'no host of the inventory matches nogroup'),
    (['-i', '{inventory}', '-e', 'dbhost_hosts=db', '--limit', 'web1'],
     'no host of the inventory matches db and --limit web1'),
])
def test_no_host_to_check_fails(tmp_path, args, why):
    path = inventory(tmp_path)
    rc, output = drift(tmp_path, *[arg.format(inventory=path) for arg in args])
    assert rc != 0, output
    assert 'dbhost.tuning.drift: no host to check: %s' % why in ' '.join(output.split()), output
    assert 'TASK [' not in output   # stopped before any task ran


def test_hosts_left_by_the_limit_are_checked(tmp_path):
    """The same pattern with a --limit that keeps a host of it runs (report only: a test tree's drift passes)."""
    rc, output = drift(tmp_path, '-i', inventory(tmp_path), '-e', 'dbhost_hosts=db', '--limit', 'db1,web1',
                       '-e', 'dbhost_drift_report_only=true')
    assert 'no host to check' not in output
    assert 'TASK [Check everything the host uses' in output and 'db1' in output and 'web1 ' not in output, output
    assert rc == 0, output


def test_drift_check_still_says_no_hosts(tmp_path):
    env = ansible_env(tmp_path)
    env['PATH'] = os.path.dirname(sys.executable) + os.pathsep + env.get('PATH', '')
    done = subprocess.run([sys.executable, os.path.join(CHECKOUT, 'scripts', 'drift_check.py'),
                           '--playbook', DRIFT, '--report-dir', str(tmp_path / 'report'), '--',
                           '-i', inventory(tmp_path), '-e', 'dbhost_hosts=nogroup'],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 5, done.stdout + done.stderr
    assert 'drift-check: no host was checked' in done.stderr


def test_a_syntax_check_with_no_inventory_passes_only_when_allowed(tmp_path):
    """ansible-lint runs ansible-playbook --syntax-check with no inventory; .ansible-lint gives it
    dbhost_drift_allow_no_host=true, which lets that check (and only a run that asks) through."""
    rc, output = drift(tmp_path, '--syntax-check')
    assert rc != 0 and 'no host to check' in output, output
    with open(os.path.join(CHECKOUT, '.ansible-lint')) as stream:
        extra = yaml.safe_load(stream)['extra_vars']
    rc, output = drift(tmp_path, '--syntax-check', '-e', json.dumps(extra))
    assert rc == 0, output
