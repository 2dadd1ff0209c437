# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role variables checked on the host_state path (tune.yml, drift.yml, the roles) as the roles'
argument specs say: a misspelt name, a wrong type or choice, a bad dbhost_roles entry fail the
run before the module runs, each message naming the variable the user set; a role listed with
nothing to check says so."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.plugins.action import host_state as action
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program, digest
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))

pytestmark = pytest.mark.usefixtures('linux')


@pytest.mark.parametrize('name, expected', [
    ('kernel_param_profile', 'kernel_param_profile is not a variable of any dbhost.tuning role; '
                             'did you mean kernel_params_profile?'),
    ('shared_memory_sise', 'shared_memory_sise is not a variable of the shared_memory role; '
                           'did you mean shared_memory_size?'),
    ('kernel_params_setings', 'kernel_params_setings is not a variable of the kernel_params role; '
                              'did you mean kernel_params_settings?'),
    ('block_queue_device', 'block_queue_device is not a variable of the block_queue role; '
                           'did you mean block_queue_devices?'),
    ('dbhost_role', 'dbhost_role is not a variable of any dbhost.tuning role; did you mean dbhost_roles?'),
    ('direct_io_something_else', 'direct_io_something_else is not a variable of the direct_io role '
                                 '(its variables: roles/direct_io/README.md, ansible-doc -t role dbhost.tuning.direct_io)'),
])
def test_a_misspelt_name_is_named_with_the_closest_known_one(name, expected):
    assert action.misspelt(['inventory_hostname', 'ansible_connection', 'kernel_params_profile', name]) == [expected]


def test_what_the_roles_export_and_unrelated_names_are_no_typo():
    names = ['kernel_params_result', 'shared_memory_settings', 'processor_sets_numa_node', '__direct_io_lines',
             'ansible_check_mode', 'hostvars', 'groups', 'playbook_dir', 'db_name', 'kernel', 'oracle_home',
             'dbhost_roles', 'dbhost_drift_report_only', 'shared_memory_size']
    assert action.misspelt(names) == []


@pytest.mark.parametrize('role, values, expected', [
    ('kernel_params', {'kernel_params_profile': 'sybase'},
     'value of kernel_params_profile must be one of: oracle, postgresql, mysql, none, got: sybase'),
    ('kernel_params', {'kernel_params_apply': 'maybe'}, "argument 'kernel_params_apply' is of type str"),
    ('block_queue', {'block_queue_devices': [{'name': 'sd*', 'rotationl': True}]}, 'block_queue_devices.rotationl'),
    ('direct_io', {'direct_io_mounts': [{'options': ['noatime']}]}, 'path found in direct_io_mounts'),
])
def test_types_choices_and_item_keys_follow_the_argument_spec(role, values, expected):
    (message,) = action.spec_errors(role, values)
    assert expected in message


def test_a_required_input_of_an_unused_role_is_not_asked_for():
    assert action.spec_errors('shared_memory', {'shared_memory_engine': 'postgresql'}) == []


@pytest.mark.parametrize('roles, expected', [
    (['kernel_param'], "dbhost_roles: 'kernel_param' is not one of kernel_params, shared_memory, block_queue, "
                       "direct_io, processor_sets; did you mean kernel_params?"),
    ('kernel_params', 'dbhost_roles must be a list of role names'),
])
def test_a_bad_dbhost_roles_entry_names_dbhost_roles(roles, expected):
    with pytest.raises(Exception) as error:
        action.check_roles(roles, 'dbhost_roles')
    assert expected in str(error.value)


def test_a_shared_memory_sizing_error_names_the_variable_once():
    facts = {'system': 'Linux', 'memory': {'total_bytes': 8 * 1024 ** 3, 'page_size': 4096,
                                           'hugepage_default_bytes': 2097152},
             'hugepages': {2097152: {'total': 0}}, 'mounts': []}
    with pytest.raises(InputError) as error:
        desired.compile_state(['shared_memory'], with_defaults({'shared_memory': {
            'shared_memory_size': '48G', 'shared_memory_user': 'root', 'shared_memory_group': 'root'}}), facts)
    message = str(error.value)
    assert message.startswith('shared_memory_size: 48G is not less than the physical memory')
    assert 'shared_memory: shared_memory' not in message


def playbook(tmp_path, name, variables, *extra):
    root = str(tmp_path / 'host')
    fake_host.build(root)
    variables = dict({'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
                      'kernel_params_root': root, 'block_queue_root': root}, **variables)
    inventory = tmp_path / 'hosts.json'
    inventory.write_text(json.dumps({'all': {'hosts': {'db1': variables}}}))
    before = digest(root)
    argv = [ansible_program('ansible-playbook'), '-i', str(inventory),
            os.path.join(CHECKOUT, 'playbooks', name)] + list(extra)
    done = subprocess.run(argv, env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    return done, before == digest(root)


@pytest.mark.parametrize('name', ['tune.yml', 'drift.yml'])
def test_a_misspelt_variable_fails_the_playbook_before_anything_runs(tmp_path, name):
    done, untouched = playbook(tmp_path, name, {'dbhost_roles': ['kernel_params'],
                                                'kernel_param_profile': 'postgresql'})
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'kernel_param_profile is not a variable of any dbhost.tuning role; did you mean kernel_params_profile?' \
        in done.stdout
    assert untouched


def test_a_role_with_nothing_to_check_says_so(tmp_path):
    done, untouched = playbook(tmp_path, 'drift.yml', {'dbhost_roles': ['kernel_params', 'block_queue'],
                                                       'kernel_params_profile': 'none'})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for role in ('kernel_params', 'block_queue'):
        assert '%s: listed in the roles, but its variables ask for nothing' % role in output
    assert untouched


def test_a_registered_result_with_a_role_prefix_is_no_typo(tmp_path):
    root = str(tmp_path / 'host')
    fake_host.build(root)
    play = tmp_path / 'play.yml'
    play.write_text(json.dumps([{'hosts': 'all', 'gather_facts': False, 'tasks': [
        {'name': 'Something of the user', 'ansible.builtin.command': 'true', 'register': 'kernel_params_check',
         'changed_when': False},
        {'name': 'Check', 'dbhost.tuning.host_state': {'roles': ['kernel_params']}, 'check_mode': True}]}]))
    inventory = tmp_path / 'hosts.json'
    inventory.write_text(json.dumps({'all': {'hosts': {'db1': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'kernel_params_root': root,
        'kernel_params_profile': 'none', 'kernel_params_settings': {'kernel.shmmni': 4096}}}}}))
    done = subprocess.run([ansible_program('ansible-playbook'), '-i', str(inventory), str(play)],
                          env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
