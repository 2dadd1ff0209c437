# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared options: one argument spec (engine/options.py), one doc fragment each, and every
module that takes one lists its fragment (and takes every option its fragments document)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import json
import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.doc_fragments.common import ModuleDocFragment
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import options
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import SHARED, shared_options
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry

MODULES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'plugins', 'modules')
FRAGMENTS = {
    'dbhost.tuning.common': ModuleDocFragment.DOCUMENTATION,
    'dbhost.tuning.common.root': ModuleDocFragment.ROOT,
    'dbhost.tuning.common.backup': ModuleDocFragment.BACKUP,
    'dbhost.tuning.common.shadowed': ModuleDocFragment.SHADOWED,
}


def fragment_options(name):
    return yaml.safe_load(FRAGMENTS[name]).get('options') or {}


@pytest.mark.parametrize('option', sorted(SHARED))
def test_spec_matches_its_fragment(option):
    spec, fragment = SHARED[option]
    documented = fragment_options(fragment)[option]
    assert documented['type'] == spec['type']
    assert documented['default'] == spec['default']


def test_every_fragment_option_has_a_spec():
    for fragment in FRAGMENTS:
        for option in fragment_options(fragment):
            assert SHARED[option][1] == fragment


def test_shared_options_are_fresh_copies():
    first = shared_options('root', 'backup')
    first['root']['default'] = '/mnt'
    assert shared_options('root') == {'root': {'type': 'path', 'default': '/'}}
    assert list(first) == ['root', 'backup']


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match='not a shared option: rooot'):
        shared_options('root', 'rooot')


def module_sources():
    paths = sorted(glob.glob(os.path.join(MODULES, '*.py')))
    assert len(paths) >= 10
    return paths


@pytest.mark.parametrize('path', module_sources(), ids=os.path.basename)
def test_module_takes_what_its_fragments_document(path):
    with open(path) as handle:
        tree = ast.parse(handle.read())
    documentation = next(node.value.value for node in tree.body
                         if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == 'DOCUMENTATION')
    extends = yaml.safe_load(documentation).get('extends_documentation_fragment') or []
    kind = os.path.basename(path)[:-len('.py')]
    if kind in registry.MODULES:
        # a module whose spec is in the registry: the shared options are those of that spec
        taken = [name for name in registry.spec(kind) if name in SHARED]
    else:
        taken = [arg.value for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'shared_options'
                 for arg in node.args]
    documented = set(option for fragment in extends if fragment in FRAGMENTS for option in fragment_options(fragment))
    assert set(taken) == documented
    # and no module writes a shared option's spec by hand beside it
    own = [kw.arg for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'dict'
           for kw in node.keywords if kw.arg in SHARED]
    assert own == []


def test_infinite_ints_names_each_int_option_holding_infinity():
    spec = {'pages': {'type': 'list', 'elements': 'dict', 'options': {'count': {'type': 'int'}, 'node': {'type': 'int'}}},
            'login_port': {'type': 'int'}, 'name': {'type': 'str'}}
    params = {'pages': [{'count': 16}, {'count': float('inf'), 'node': '-Infinity'}], 'login_port': 5432,
              'name': 'inf'}
    assert options.infinite_ints(params, spec) == ['pages[1].count', 'pages[1].node']
    assert options.infinite_ints({'login_port': float('inf')}, spec) == ['login_port']
    assert options.infinite_ints({'login_port': 1e308}, spec) == []


def test_new_module_names_an_infinite_int_given_by_its_alias(capsys):
    # Read again with every option taken as it is, an alias still names its option.
    from ansible.module_utils.basic import AnsibleModule
    from ansible.module_utils.testing import patch_module_args
    spec = {'count': {'type': 'int', 'aliases': ['pages']}, 'name': {'type': 'str'}}
    with patch_module_args({'pages': float('inf'), 'name': 'x'}):
        with pytest.raises(SystemExit):
            options.new_module(AnsibleModule, argument_spec=spec, supports_check_mode=True)
    result = json.loads(capsys.readouterr().out)
    assert result['failed'] is True
    assert result['msg'] == 'count: not a finite whole number (an int option cannot be infinite)'
