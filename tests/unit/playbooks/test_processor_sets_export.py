# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The processor_sets role exports the shared_memory part of its host_state call as the
shared_memory role would (shared_memory_result, shared_memory_settings): in the result's roles a
record is its index in settings, and the export holds the records themselves. The role's own
task runs in ansible-playbook on a result of host_state from a fake host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program, generous_oracle_host, put
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
EXPORT = "Export the shared memory part under the shared_memory role's names"
GIB = 1024 ** 3
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': 2097152},
         'hugepages': {2097152: {}}, 'mounts': []}

pytestmark = pytest.mark.usefixtures('linux')


def _export_task():
    with open(os.path.join(CHECKOUT, 'roles', 'processor_sets', 'tasks', 'main.yml')) as handle:
        tasks = yaml.safe_load(handle)
    return [task for task in tasks if task.get('name', '').startswith(EXPORT)][0]


def test_the_export_holds_the_shared_memory_records(tmp_path):
    root = generous_oracle_host(str(tmp_path / 'host'))
    put(root, '/proc/sys/fs/aio-max-nr', '65536\n')   # a kernel_params record drifts: records of both roles
    inputs = {'kernel_params': {'kernel_params_profile': 'mysql', 'kernel_params_root': root},
              'shared_memory': {'shared_memory_engine': 'oracle', 'shared_memory_size': '40%',
                                'shared_memory_root': root, 'shared_memory_group': 'dba',
                                'shared_memory_transparent_hugepage': ''}}
    host = HostState(['kernel_params', 'shared_memory'], with_defaults(inputs), registry.Context(check_mode=True),
                     facts_reader=lambda r, subsets: dict(FACTS))
    result = json.loads(json.dumps(host.output(host.run())))
    out = tmp_path / 'export.json'
    playbook = tmp_path / 'export.yml'
    playbook.write_text(yaml.safe_dump([{
        'hosts': 'localhost', 'gather_facts': False, 'vars': {'processor_sets_result': result},
        'tasks': [_export_task(), {'name': 'Save', 'ansible.builtin.copy': {
            'content': '{{ {"result": shared_memory_result, "settings": shared_memory_settings} | to_json }}',
            'dest': str(out)}}]}]))
    done = subprocess.run([ansible_program('ansible-playbook'), '-i', 'localhost,', '-c', 'local', '-e', 'ansible_python_interpreter=' + sys.executable,
                           str(playbook)],
                          env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    exported = json.loads(out.read_text())
    part = result['roles']['shared_memory']
    mine = [record for record in result['settings'] if record['owner'] == 'shared_memory']
    assert exported['result']['settings'] == mine and len(mine) == len(part['settings'])
    assert len(mine) < len(result['settings'])
    for key in ('kernel_params', 'hugepages', 'resource_limits'):
        assert exported['result'][key]['settings'] == [result['settings'][i] for i in part[key]['settings']]
        assert [record['owner'] for record in exported['result'][key]['settings']] == \
            ['shared_memory'] * len(part[key]['settings'])
        assert dict(exported['result'][key], settings=None) == dict(part[key], settings=None)
    assert exported['result']['changed'] is part['changed'] and exported['result']['sizing'] == part['sizing']
    assert exported['result']['compacted'] is part['compacted']
    assert exported['settings'] == part['sizing']
