# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""After tune.yml restarts a service a role was asked to restart, the records that restart made
live are no longer listed as pending: host_state names them (restart_settings), and tune.yml's
closing message lists only what still waits."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
from types import SimpleNamespace

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def part(restart_required, *settings):
    return SimpleNamespace(restart_required=restart_required,
                           settings=[SimpleNamespace(name=name, status=status) for name, status in settings])


def call(owner, kind, label=None):
    return SimpleNamespace(owner=owner, kind=kind, label=label or kind)


def test_restart_settings_are_the_pending_records_of_the_restarted_calls():
    host = SimpleNamespace(state=SimpleNamespace(restart_services=[
        {'owner': 'shared_memory', 'service': 'oracle-db.service', 'when': 'resource_limits'},
        {'owner': 'direct_io', 'service': 'postgresql.service', 'when': 'db_parameter postgresql /etc/pg.conf'}]))
    host.ran = [
        (call('shared_memory', 'resource_limits'), None, part(
            True, ('oracle soft memlock', 'ok'), ('oracle-db.service LimitMEMLOCK', 'pending_restart'))),
        # another database's parameter waits for a restart nobody asked for: still pending
        (call('direct_io', 'db_parameter', 'db_parameter postgresql /etc/other.conf'), None, part(
            True, ('postgresql /etc/other.conf shared_buffers', 'pending_restart'))),
        (call('direct_io', 'db_parameter', 'db_parameter postgresql /etc/pg.conf'), None, part(
            False, ('postgresql /etc/pg.conf wal_sync_method', 'ok'))),
    ]
    services, settings = HostState._restarts(host)
    assert services == ['oracle-db.service']
    assert settings == ['oracle-db.service LimitMEMLOCK']


def closing_message(tmp_path, state, *extra):
    """tune.yml's closing task, as written there, on a registered result ``state``."""
    with open(os.path.join(CHECKOUT, 'playbooks', 'tune.yml')) as stream:
        (task,) = [t for t in yaml.safe_load(stream)[0]['tasks'] if t['name'].startswith('Say what still needs')]
    playbook = tmp_path / 'closing.yml'
    playbook.write_text(yaml.safe_dump([{'name': 'closing', 'hosts': 'localhost', 'gather_facts': False,
                                         'vars': {'dbhost_state': state}, 'tasks': [task]}]))
    done = subprocess.run([ansible_program('ansible-playbook'), '-i', 'localhost,', '-c', 'local', str(playbook)]
                          + list(extra), env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


STATE = {'settings': [{'name': 'oracle-db.service LimitMEMLOCK', 'status': 'pending_restart'},
                      {'name': '/u02 data=writeback', 'status': 'pending_reboot'},
                      {'name': 'vm.swappiness', 'status': 'changed'}],
         'restart_services': ['oracle-db.service'], 'restart_settings': ['oracle-db.service LimitMEMLOCK'],
         'notes': []}


@pytest.mark.usefixtures('linux')
def test_the_closing_message_leaves_out_what_the_restart_made_live(tmp_path):
    out = closing_message(tmp_path, STATE)
    assert '"pending: /u02 data=writeback"' in out
    assert 'oracle-db.service LimitMEMLOCK' not in out
    # check mode restarts nothing: the record is still pending there
    out = closing_message(tmp_path, STATE, '--check')
    assert '"pending: oracle-db.service LimitMEMLOCK"' in out
    # nothing left to say: the task is skipped
    state = dict(STATE, settings=STATE['settings'][:1])
    assert 'skipping: [localhost]' in closing_message(tmp_path, json.loads(json.dumps(state)))
