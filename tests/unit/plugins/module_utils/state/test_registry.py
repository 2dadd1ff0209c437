# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""state/registry.py is the one place kinds and roles are declared: the modules, host_state, the
desired-state compiler and the action plugin are built from it, and each kind is named as its module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired, host_state, registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put

CHECKOUT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')
MODULES = os.path.join(CHECKOUT, 'plugins', 'modules')
PREFIX = 'ansible_collections.dbhost.tuning.plugins.'


class SpecSeen(Exception):
    pass


class FakeModule(object):
    """Stands in for AnsibleModule: keeps the argument spec a module's main() gives it, then stops."""
    seen = None

    def __init__(self, argument_spec=None, **kwargs):
        FakeModule.seen = argument_spec
        raise SpecSeen()


def kind_problems(kinds, other_entries, modules):
    """What breaks "one kind, one module": a Kind without its module file, and a module (one that makes an
    AnsibleModule) that is neither a Kind nor another entry of the registry (host_state, host_facts)."""
    problems = ['kind %s has no plugins/modules/%s.py' % (name, name) for name in sorted(set(kinds) - set(modules))]
    problems.extend('plugins/modules/%s.py has no Kind in state/registry.py' % name
                    for name in sorted(set(modules) - set(kinds) - set(other_entries)))
    return problems


def _other_entries():
    return [name for name, entry in registry.MODULES.items() if not isinstance(entry, registry.Kind)]


def test_every_kind_is_named_as_an_existing_module():
    """The kinds are the modules: no list here to keep, a new kind's Kind and module file are enough."""
    assert kind_problems(registry.KINDS, _other_entries(), _modules_with_a_spec()) == []


@pytest.mark.parametrize('extra_kind, extra_module, expected', [
    ('swap', None, 'kind swap has no plugins/modules/swap.py'),
    (None, 'swap', 'plugins/modules/swap.py has no Kind in state/registry.py'),
])
def test_a_kind_without_a_module_or_a_module_without_a_kind_is_reported(extra_kind, extra_module, expected):
    kinds = list(registry.KINDS) + ([extra_kind] if extra_kind else [])
    modules = _modules_with_a_spec() + ([extra_module] if extra_module else [])
    assert kind_problems(kinds, _other_entries(), modules) == [expected]


# run_cached declares its own spec: its payload must carry no module_utils of the collection but
# engine/code_cache.py (test_run_cached.py), so it cannot import the registry
OWN_SPEC = ('run_cached.py',)


def _modules_with_a_spec():
    """Every module file whose main() makes an AnsibleModule (drift_gate is an action plugin's documentation)."""
    names = []
    for name in sorted(os.listdir(MODULES)):
        if name.endswith('.py') and name not in ('__init__.py',) + OWN_SPEC:
            with open(os.path.join(MODULES, name)) as handle:
                if 'AnsibleModule' in handle.read():
                    names.append(name[:-3])
    return names


def test_every_module_with_an_argument_spec_has_it_in_the_registry():
    assert sorted(registry.MODULES) == _modules_with_a_spec()
    assert sorted(set(registry.MODULES) - set(registry.KINDS)) == ['host_facts', 'host_state']


@pytest.mark.parametrize('name', _modules_with_a_spec())
def test_the_module_argument_spec_is_the_registry_spec(name, monkeypatch):
    module = importlib.import_module(PREFIX + 'modules.' + name)
    monkeypatch.setattr(module, 'AnsibleModule', FakeModule)
    FakeModule.seen = None
    with pytest.raises(SpecSeen):
        module.main()
    assert FakeModule.seen is registry.spec(name)


@pytest.mark.parametrize('name', _modules_with_a_spec())
def test_no_module_writes_an_argument_spec_of_its_own(name):
    """Every argument_spec a module gives is registry.spec('<its name>'), and it takes no shared option itself.
    host_state's AnsibleModule is made in module_utils (run_module), so that run_cached makes it the same way."""
    path = os.path.join(MODULES, name + '.py')
    if name == 'host_state':
        path = os.path.join(MODULES, '..', 'module_utils', 'state', 'host_state.py')
    with open(path) as handle:
        tree = ast.parse(handle.read())
    given = [keyword.value for node in ast.walk(tree) if isinstance(node, ast.Call)
             for keyword in node.keywords if keyword.arg == 'argument_spec']
    assert [ast.dump(value) for value in given] == [ast.dump(ast.parse("registry.spec('%s')" % name).body[0].value)]
    calls = [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    assert 'shared_options' not in calls


def test_host_state_checks_its_options_with_the_spec_choices(tmp_path):
    """host_state's spec, its plan and the action plugin take the same choices and options."""
    spec = registry.spec('host_state')
    assert spec['details']['choices'] == list(registry.DETAILS) == ['desired_state', 'facts']
    assert spec['state']['choices'] == list(registry.HOST_STATES) == ['present', 'revert']
    assert spec['roles']['choices'] == list(registry.ROLE_NAMES)
    action = importlib.import_module(PREFIX + 'action.host_state')
    assert sorted(action.OPTIONS) == sorted(spec) == ['details', 'fail_on_drift', 'inputs', 'roles', 'state']
    with pytest.raises(InputError, match="details: summary is not one of desired_state, facts"):
        host_state.HostState(None, {}, details=['summary'])
    with pytest.raises(InputError, match="state must be present or revert, got 'absent'"):
        host_state.HostState(None, {}, state='absent')


@pytest.mark.parametrize('kind', sorted(registry.KINDS))
def test_the_module_builds_its_plan_through_the_registry(kind):
    """No module imports a plan class: its plan comes from the registry's factory, as host_state's do."""
    with open(os.path.join(MODULES, kind + '.py')) as handle:
        tree = ast.parse(handle.read())
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    assert not [name for name in imported if '.module_utils.plans' in name]
    assert PREFIX + 'module_utils.state' in imported


def test_host_state_and_desired_and_the_action_plugin_take_the_registry_roles():
    action = importlib.import_module(PREFIX + 'action.host_state')
    assert action.ROLES is registry.ROLE_NAMES
    assert desired.ROLES is registry.ROLE_NAMES
    assert host_state.ROLE_NAMES is registry.ROLE_NAMES
    assert desired.default_roles is registry.default_roles
    assert registry.ROLE_NAMES == ('kernel_params', 'shared_memory', 'block_queue', 'direct_io', 'processor_sets')
    for role in registry.ROLE_NAMES:
        assert os.path.isdir(os.path.join(CHECKOUT, 'roles', role)), role


def test_no_kind_or_role_table_is_written_outside_the_registry():
    for name in ('PLANS', 'PART_KEYS', 'RECORD_KINDS', 'FACT_SUBSETS', 'NOTHING_ASKED'):
        assert not hasattr(host_state, name), name


def test_options_fill_the_spec_defaults_and_refuse_an_unknown_name():
    kind = registry.KINDS['sysfs_attr']
    options = kind.options({'attributes': {'kernel/mm/ksm/run': '0'}, 'apply': None})
    assert options.apply is True and options.persist is True and options.root == '/'
    assert options.tmpfiles_file == '/etc/tmpfiles.d/90-dbhost-tuning.conf'
    assert options.attributes == {'kernel/mm/ksm/run': '0'}
    with pytest.raises(InputError, match='sysfs_attr: unknown option.s. tmpfile'):
        kind.options({'attributes': {}, 'tmpfile': '/x'})
    # a default the spec holds is never shared between two calls
    first = registry.KINDS['kernel_params'].options({'params': {}})
    first.comparisons['vm.swappiness'] = 'minimum'
    assert registry.KINDS['kernel_params'].options({'params': {}}).comparisons == {}


def test_a_module_params_and_a_compile_call_make_the_same_plan(tmp_path, linux):
    """The factory is the one path: params as a module gets them (every option, defaults filled) and the
    few a compile step gives check the same tree the same way."""
    root = str(tmp_path)
    put(root, '/sys/kernel/mm/transparent_hugepage/enabled', 'always [madvise] never\n')
    before = digest(root)
    spec = registry.spec('sysfs_attr')
    params = dict((name, rules.get('default')) for name, rules in spec.items())
    params.update(attributes={'kernel/mm/transparent_hugepage/enabled': 'never'}, root=root)
    ctx = registry.Context(check_mode=True)
    from_module = registry.plan('sysfs_attr', params, ctx).run(None)
    given = {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never'}, 'root': root}
    from_call = registry.plan('sysfs_attr', given, ctx).run(None)
    assert digest(root) == before
    assert [s.as_dict() for s in from_module.settings] == [s.as_dict() for s in from_call.settings]
    assert [(s.name, s.live, s.status) for s in from_call.settings] == [
        ('/sys/kernel/mm/transparent_hugepage/enabled', 'madvise', 'drift')]


def test_default_roles_and_facts_come_from_the_role_entries():
    assert registry.default_roles({}) == ['kernel_params']
    assert registry.default_roles({'processor_sets': {'processor_sets_cpus': [2, 3]}}) == [
        'kernel_params', 'processor_sets']
    assert registry.ROLES['direct_io'].facts == ('mounts',)
    assert registry.ROLES['processor_sets'].uses == ('shared_memory',)


def test_a_role_gives_only_to_a_role_whose_variables_it_has_sent():
    """A role's compile step gives another's (Role.gives) only one the action plugin sends it (uses)."""
    givers = dict((role.name, role.gives) for role in registry.ROLE_LIST if role.gives)
    assert givers == {'processor_sets': ('shared_memory', 'numa_node')}
    for name, (target, option) in givers.items():
        assert target in registry.ROLES[name].uses and target in registry.ROLE_NAMES
