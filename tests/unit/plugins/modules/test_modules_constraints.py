# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The constraints between a kind's options (mutually_exclusive, required_if...) are its registry
entry's, and one check holds them on every path: a module called directly, a plan made by
registry.plan(), and host_state running a compile step's call.  Each fails with the same message,
naming the kind and the options, before anything on the host is touched."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import host_state, registry
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call
from ansible_collections.dbhost.tuning.plugins.module_utils.state.desired import DesiredState
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put

pytestmark = pytest.mark.usefixtures('linux')

MODULES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'plugins', 'modules')
FSTAB = '/dev/sdb1 /u02 xfs defaults 0 0\n/dev/sdc1 /u03 ext4 defaults 0 0\n'
THP = '/sys/kernel/mm/transparent_hugepage/enabled'

# (kind, options that break one of its constraints, the message)
BROKEN = [
    ('mount_options', {'path': '/u03', 'mounts': [{'path': '/u02', 'present': ['noatime']}]},
     'mount_options: parameters are mutually exclusive: path|mounts'),
    ('mount_options', {'present': ['noatime']}, 'mount_options: one of the following is required: path, mounts'),
    ('processor_set', {'name': 'db'}, 'processor_set: state is present but all of the following are missing: cpus'),
    ('resource_limits', {'service': 'postgresql'},
     'resource_limits: parameters are required together: service, service_limits'),
]


def _tree(folder):
    root = str(folder)
    put(root, '/etc/fstab', FSTAB)
    put(root, THP, 'always [madvise] never\n')
    return root


@pytest.fixture
def root(tmp_path):
    return _tree(tmp_path)


def test_the_constraints_are_the_registry_entries():
    assert registry.KINDS['mount_options'].constraints == {
        'mutually_exclusive': [('path', 'mounts')], 'required_one_of': [('path', 'mounts')]}
    assert registry.KINDS['processor_set'].constraints == {'required_if': [('state', 'present', ('cpus',))]}
    assert registry.KINDS['resource_limits'].constraints == {'required_together': [('service', 'service_limits')]}
    with pytest.raises(ValueError, match='x: not a constraint: required'):
        registry.Kind('x', dict, None, constraints={'required': []})


@pytest.mark.parametrize('kind', sorted(registry.KINDS))
def test_every_constraint_names_options_of_the_spec_and_the_module_writes_none(kind):
    spec = registry.spec(kind)
    for rule, terms in registry.KINDS[kind].constraints.items():
        for term in terms:
            names = [term[0]] + list(term[2]) if rule == 'required_if' else list(term)
            assert set(names) <= set(spec), (rule, term)
            if rule != 'required_if':
                # a default would count as given on every call: the rule would always (or never) hold
                assert [spec[name].get('default') for name in names] == [None] * len(names), (rule, term)
    with open(os.path.join(MODULES, kind + '.py')) as handle:
        tree = ast.parse(handle.read())
    given = [keyword.arg for node in ast.walk(tree) if isinstance(node, ast.Call) for keyword in node.keywords]
    assert not set(given) & set(rule for rule, check in registry.CONSTRAINTS)


@pytest.mark.parametrize('kind, options, message', BROKEN)
def test_a_module_and_a_plan_call_fail_alike_before_anything_is_touched(root, run_module, kind, options, message):
    before = digest(root)
    module = importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.' + kind)
    result = run_module(module, dict(options, root=root))
    assert result['failed'] is True and result['msg'] == message
    with pytest.raises(InputError) as error:
        registry.plan(kind, dict(options, root=root), registry.Context(check_mode=False))
    assert str(error.value) == message
    assert digest(root) == before


def _host_state(monkeypatch, calls):
    """HostState over a desired state of ``calls``, as a compile step would give them."""
    def compiled(roles, inputs, facts):
        state = DesiredState()
        state.calls = calls
        return state
    monkeypatch.setattr(host_state, 'compile_state', compiled)
    return host_state.HostState(['kernel_params'], {}, facts_reader=lambda top, subsets: {})


@pytest.mark.parametrize('kind, options, message', BROKEN)
def test_host_state_refuses_a_broken_call_before_anything_is_touched(root, monkeypatch, kind, options, message):
    def first(top):
        return Call('sysfs_attr', 'shared_memory', {'attributes': {THP[len('/sys/'):]: 'never'}, 'root': top})
    # the first call alone changes a tree like it
    other = _tree(os.path.join(os.path.dirname(root), os.path.basename(root) + '-other'))
    before = digest(other)
    _host_state(monkeypatch, [first(other)]).run(None)
    assert digest(other) != before
    before = digest(root)
    broken = Call(kind, 'direct_io', dict(options, root=root))
    with pytest.raises(InputError) as error:
        _host_state(monkeypatch, [first(root), broken]).run(None)
    assert str(error.value) == 'direct_io (%s): %s' % (kind, message)
    assert digest(root) == before
