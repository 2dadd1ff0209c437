# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role variable's default is written once: in roles/<role>/defaults/main.yml (and, as
documentation Ansible checks, in meta/argument_specs.yml, which must agree with it).

host_state's action plugin sends every variable that has a default, so the Python on the host
never needs one of its own; a second copy (``v.get('kernel_params_profile', 'oracle')``, a
``or {'oltp': 128}``, a sizing function's ``hugepages_cap='70%'``) agrees today and drifts
tomorrow. This test reads the code's syntax tree, so it fails on the copy, not on a value.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os

import pytest
import yaml

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(path)))
               for path in glob.glob(os.path.join(CHECKOUT, 'roles', '*', 'defaults', 'main.yml')))
# The sizing's parameters that a shared_memory role variable sets (plugins/filter/sizes.py
# ROLE_DEFAULTS): their default is the role's, never one written in sizing/.
SIZING_SHARES = ('hugepages_cap', 'hugepages_margin', 'shared_memory_cap')


def _yaml(*parts):
    with open(os.path.join(CHECKOUT, *parts)) as handle:
        return yaml.safe_load(handle) or {}


def role_defaults():
    out = {}
    for role in ROLES:
        out.update(_yaml('roles', role, 'defaults', 'main.yml'))
    return out


def python_files():
    return sorted(glob.glob(os.path.join(CHECKOUT, 'plugins', '**', '*.py'), recursive=True))


def _name_read(node):
    """The role variable a call reads (``x.get('NAME'...)``, ``role_var(v, 'NAME')``), or None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    args = node.args
    if isinstance(func, ast.Attribute) and func.attr == 'get' and args:
        first = args[0]
    elif isinstance(func, ast.Name) and func.id in ('role_var', 'flag') and len(args) >= 2:
        first = args[1]
    else:
        return None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _is_value(node):
    """A literal that is a value, not the empty stand-in for null (None, '', [], {}, 0, False)."""
    if isinstance(node, ast.Constant):
        return node.value not in (None, '', 0, False)
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return bool(getattr(node, 'keys', None) or getattr(node, 'elts', None))
    return isinstance(node, ast.JoinedStr)


def second_defaults(path, variables):
    """(line, variable, how) of every default for a role variable written in the Python file ``path``."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for node in ast.walk(tree):
        name = _name_read(node)
        if name in variables:
            if isinstance(node.func, ast.Attribute) and len(node.args) > 1 and not (
                    isinstance(node.args[1], ast.Constant) and node.args[1].value is None):
                found.append((node.lineno, name, '.get() with a default'))
            if isinstance(node.func, ast.Name) and node.func.id == 'flag' and len(node.args) > 2:
                found.append((node.lineno, name, 'flag() with a default'))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and _name_read(node.values[0]) in variables:
            if any(_is_value(other) for other in node.values[1:]):
                found.append((node.lineno, _name_read(node.values[0]), '"or" a literal value'))
    return found


def test_the_scan_sees_a_second_default():
    # The test must fail on the kinds of copies it is there to catch.
    variables = {'kernel_params_profile': 'oracle', 'block_queue_read_ahead_kb': {}, 'kernel_params_apply': True}
    source = ("a = v.get('kernel_params_profile', 'oracle')\n"
              "b = v.get('block_queue_read_ahead_kb') or {'oltp': 128}\n"
              "c = flag(v, 'kernel_params_apply', True)\n"
              "d = v.get('kernel_params_profile') or ''\n"
              "e = v.get('kernel_params_profile', None)\n")
    path = os.path.join(os.path.dirname(__file__), '_second_default_sample.py')
    try:
        with open(path, 'w') as handle:
            handle.write(source)
        assert [line for line, dummy, dummy2 in second_defaults(path, variables)] == [1, 2, 3]
    finally:
        os.remove(path)


@pytest.mark.parametrize('path', python_files(), ids=lambda p: os.path.relpath(p, CHECKOUT))
def test_no_role_default_is_written_in_python(path):
    found = second_defaults(path, role_defaults())
    assert not found, '%s writes role defaults again (they belong in roles/*/defaults/main.yml): %s' % (
        os.path.relpath(path, CHECKOUT), '; '.join('line %d %s: %s' % entry for entry in found))


def test_sizing_has_no_default_for_a_role_share():
    for path in glob.glob(os.path.join(CHECKOUT, 'plugins', 'module_utils', 'sizing', '*.py')):
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            arguments = node.args.args[len(node.args.args) - len(node.args.defaults):]
            for argument, default in zip(arguments, node.args.defaults):
                if argument.arg in SIZING_SHARES:
                    assert isinstance(default, ast.Constant) and default.value is None, \
                        '%s %s(): %s has a default of its own' % (os.path.basename(path), node.name, argument.arg)


@pytest.mark.parametrize('role', ROLES)
def test_argument_spec_defaults_agree_with_defaults_main(role):
    defaults = _yaml('roles', role, 'defaults', 'main.yml')
    options = _yaml('roles', role, 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    for name, spec in options.items():
        if 'default' in spec:
            assert name in defaults, '%s: a default in argument_specs.yml only' % name
            assert spec['default'] == defaults[name], '%s: argument_specs.yml says %r, defaults/main.yml %r' % (
                name, spec['default'], defaults[name])


def test_the_filter_takes_the_roles_shares():
    from ansible_collections.dbhost.tuning.plugins.filter import sizes
    shared_memory = _yaml('roles', 'shared_memory', 'defaults', 'main.yml')
    assert sizes.role_defaults() == dict((option, shared_memory[name]) for option, name in sizes.ROLE_DEFAULTS)
    documented = _yaml('plugins', 'filter', 'shm_settings.yml')['DOCUMENTATION']['options']
    for option, name in sizes.ROLE_DEFAULTS:
        assert str(documented[option]['default']) == str(shared_memory[name])


def test_the_consumers_limits_runner_takes_the_modules_defaults():
    """molecule/consumers/files/limits_plan.py makes resource_limits' plan in a container without
    Ansible, so without registry.py: its defaults are the module's spec's, and its options all of them."""
    import importlib.util
    from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
    path = os.path.join(CHECKOUT, 'molecule', 'consumers', 'files', 'limits_plan.py')
    loaded = importlib.util.spec_from_file_location('consumers_limits_plan', path)
    runner = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(runner)
    spec = registry.spec('resource_limits')
    assert runner.DEFAULTS == dict((name, rules.get('default')) for name, rules in spec.items())
