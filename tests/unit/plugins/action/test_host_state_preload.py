# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_state action plugin parses the roles' YAML when it is imported (in Ansible's main
process, before the workers fork), once per file: a worker reads no role file again, and what it
uses equals a fresh parse of the files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.action import host_state as action


def _fresh(role, name):
    with open(os.path.join(action.COLLECTION_ROOT, 'roles', role, *name.split('/'))) as handle:
        return yaml.safe_load(handle) or {}


@pytest.fixture
def no_file_reads(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError('a role file was read again: %r' % (args,))
    monkeypatch.setattr(action, 'open', refuse, raising=False)


@pytest.mark.parametrize('role', action.ROLES)
def test_every_role_file_is_parsed_at_import(role):
    for name in ('defaults/main.yml', 'meta/argument_specs.yml'):
        path = os.path.join(action.COLLECTION_ROOT, 'roles', role, *name.split('/'))
        assert action._FILES[path] == _fresh(role, name)


@pytest.mark.parametrize('role', action.ROLES)
def test_a_worker_reads_no_role_file_and_gets_what_the_files_say(role, no_file_reads):
    defaults = _fresh(role, 'defaults/main.yml')
    spec = _fresh(role, 'meta/argument_specs.yml')['argument_specs']['main']['options']
    variables = action.role_variables(role)
    assert action.role_spec(role) == spec
    for name in spec:
        if name.startswith(role + '_') and not name.endswith('_result'):
            assert name in variables
            assert variables[name] == defaults.get(name)
    assert variables['__has_default'] == sorted(defaults)
    assert action.misspelt(['shared_memory_sise']) == [
        'shared_memory_sise is not a variable of the shared_memory role; did you mean shared_memory_size?']


def test_ansible_own_names_are_never_taken_for_a_typo(no_file_reads):
    # Close to a role variable by spelling, but Ansible's namespace (facts, connection settings).
    assert action.misspelt(['ansible_kernel_params_profile', 'ansible_shared_memory_size', 'ansible_host']) == []
    assert action.misspelt(['kernel_params_profil']) == [
        'kernel_params_profil is not a variable of the kernel_params role; did you mean kernel_params_profile?']


def test_a_remembered_close_match_is_the_one_difflib_gives():
    known = action.known_variables()
    for name in ('shared_memory_sise', 'dbhost_role', 'oracle_home', 'kernel_param_profile'):
        first = action.closest(name, known)
        assert action.closest(name, known) == first
        assert action.closest(name, sorted(known)) == first
    assert action.closest('dbhost_role', known) == 'dbhost_roles'
    assert action.closest('oracle_home', known) is None


def test_the_length_filter_never_changes_difflibs_answer():
    # Every known name, misspelt in a few ways, and names of every length: the answer with the
    # length filter is difflib's own over every known name.
    import difflib
    known = sorted(action.known_variables())
    names = ['', 'x', 'dbhost', 'inventory_hostname', 'groups', 'omit', 'playbook_dir']
    for name in known[::7]:
        names += [name[:-1], name + 's', name[1:], name.replace('_', '', 1), name[:len(name) // 2]]
    action._CLOSEST.clear()
    for name in names:
        expected = difflib.get_close_matches(name, known, n=1, cutoff=action.CLOSE_ENOUGH)
        assert action.closest(name, known) == (expected[0] if expected else None), name


def test_a_validator_used_again_answers_as_a_new_one():
    # One ArgumentSpecValidator per role, made at import and reused for every host: its answer to
    # each input is a fresh validator's, whatever it validated before.
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    inputs = [
        ('kernel_params', {'kernel_params_profile': 'sybase'}),
        ('kernel_params', {'kernel_params_apply': 'maybe', 'kernel_params_settings': {'vm.swappiness': 10}}),
        ('kernel_params', {}),
        ('block_queue', {'block_queue_devices': [{'name': 'sd*', 'scheduler': 'none'}]}),
        ('block_queue', {'block_queue_devices': [{'nme': 'sd*'}]}),
        ('direct_io', {'direct_io_mounts': [{'path': '/data', 'fstype': 'ext4'}]}),
        ('direct_io', {'direct_io_mounts': 'not a list of dicts'}),
        ('shared_memory', {'shared_memory_size': '40%', 'shared_memory_user': 'oracle'}),
    ]
    for role, values in inputs + inputs:
        fresh = ArgumentSpecValidator(action.role_spec(role)).validate(dict(values))
        assert action.spec_errors(role, values) == [
            str(error) for error in fresh.errors
            if not (str(error).startswith('missing required arguments:') and ' found in ' not in str(error))]
    assert action._validator('kernel_params') is action._validator('kernel_params')


def test_tagged_values_are_validated_as_plain_ones():
    # What templating returns (str, int, list and dict subclasses carrying Ansible's tags) is
    # checked as the plain value it is.
    from ansible.module_utils._internal._datatag import AnsibleTagHelper
    from ansible._internal._datatag._tags import Origin
    origin = Origin(path='/inventory/hosts.yml', line_num=3)
    tagged = AnsibleTagHelper.tag({'name': AnsibleTagHelper.tag('sd*', [origin]), 'nr_requests': 256}, [origin])
    devices = AnsibleTagHelper.tag([tagged], [origin])
    assert devices.__class__ is not list and tagged.__class__ is not dict
    plain = action._plain({'block_queue_devices': devices, 'x': (1, 2.5, True, None)})
    assert plain == {'block_queue_devices': [{'name': 'sd*', 'nr_requests': 256}], 'x': (1, 2.5, True, None)}
    assert plain['block_queue_devices'].__class__ is list and plain['block_queue_devices'][0].__class__ is dict
    assert plain['block_queue_devices'][0]['name'].__class__ is str
    assert plain['x'][2].__class__ is bool
    assert action.spec_errors('block_queue', {'block_queue_devices': devices}) == \
        action.spec_errors('block_queue', {'block_queue_devices': [{'name': 'sd*', 'nr_requests': 256}]})


def test_ansible_own_variables_are_never_compared_with_the_roles(monkeypatch):
    """Every host and task has them: a worker per host would compare each with every role variable."""
    def compared(name, names):
        raise AssertionError('%s was compared with the role variables' % name)
    monkeypatch.setattr(action, 'closest', compared)
    names = ['groups', 'group_names', 'hostvars', 'inventory_hostname', 'inventory_hostname_short', 'inventory_dir',
             'inventory_file', 'omit', 'play_hosts', 'playbook_dir', 'role_names', 'environment']
    assert action.misspelt(names) == []


class _Task(object):
    """What ActionBase.run and the plugin read of a task."""

    def __init__(self, args):
        self.args = args
        self.async_val = 0
        self.check_mode = True
        self.diff = False
        self.action = 'dbhost.tuning.host_state'


class _Connection(object):
    class _shell(object):
        tmpdir = '/tmp/not-used'


class _Templar(object):
    @staticmethod
    def template(value):
        return value


def _run_plugin(monkeypatch, verbosity, args=None):
    sent = []

    def execute_module(module_name=None, module_args=None, task_vars=None):
        # run_cached, whose copy of the code the host has: what host_state was given comes back
        assert module_name == 'dbhost.tuning.run_cached' and module_args['module'] == 'host_state'
        sent.append(module_args['module_args'])
        return {'changed': False, 'settings': [], 'invocation': {'module_args': module_args['module_args']}}
    plugin = action.ActionModule(_Task(args or {}), _Connection(), None, None, _Templar())
    monkeypatch.setattr(plugin, '_execute_module', execute_module)
    monkeypatch.setattr(action.display, 'verbosity', verbosity)
    return plugin.run(task_vars={'kernel_params_profile': 'oracle'}), sent


def test_the_filled_inputs_come_back_as_the_invocation_only_from_vvv_on(monkeypatch):
    result, sent = _run_plugin(monkeypatch, 0)
    assert 'invocation' not in result and result['settings'] == []
    assert sent[0]['inputs']['kernel_params']['kernel_params_profile'] == 'oracle'
    result, sent = _run_plugin(monkeypatch, 3)
    assert result['invocation'] == {'module_args': sent[0]}


def test_details_reach_the_module_and_a_misspelt_option_is_refused(monkeypatch):
    dummy, sent = _run_plugin(monkeypatch, 0, {'roles': ['kernel_params'], 'details': ['desired_state']})
    assert sent[0]['details'] == ['desired_state'] and sent[0]['roles'] == ['kernel_params']
    with pytest.raises(action.AnsibleActionFail) as error:
        _run_plugin(monkeypatch, 0, {'detail': ['facts']})
    assert 'unknown option(s) detail' in str(error.value)
