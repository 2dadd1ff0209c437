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
