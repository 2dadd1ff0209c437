# -*- coding: utf-8 -*-
"""Every module over the bad inputs of bad_inputs.yml, against one fake host.

For each case: the task fails, the message names the option (and what is wrong with
it: every string of the case's ``names``), and no byte under the fake root changes.
Each module's baseline call is first shown to work on the same tree, so that a case
fails because of what it changes, not because the tree lacks something.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import os
import shutil

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('fake_host', os.path.join(HERE, 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

# Every module that takes input: host_facts and every kind of the registry, so that a new kind
# cannot be left out of the corpus (test_every_module_has_enough_cases then asks for its cases).
MODULES = ('host_facts',) + tuple(sorted(registry.KINDS))
MIN_CASES = 10

with open(os.path.join(HERE, 'bad_inputs.yml')) as _handle:
    CORPUS = yaml.safe_load(_handle)

CASES = [(module, case) for module in MODULES for case in CORPUS.get(module) or []]


pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture(autouse=True)
def kernel_stub(monkeypatch):
    """4 KiB pages, and no write reaches a sysfs file."""
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)

    def no_kernel_write(path, value):
        raise AssertionError('bad input reached a sysfs write of %s' % path)
    monkeypatch.setattr(sysfs, 'write_value', no_kernel_write)


@pytest.fixture
def host(tmp_path):
    return fake_host.build(str(tmp_path / 'host'))


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


def _substitute(value, root):
    if isinstance(value, str):
        return value.replace('{root}', root)
    if isinstance(value, list):
        return [_substitute(item, root) for item in value]
    if isinstance(value, dict):
        return dict((_substitute(key, root), _substitute(item, root)) for key, item in value.items())
    return value


def _arguments(module, case, root):
    args = dict(fake_host.BASELINE[module])
    for option in case.get('drop') or []:
        args.pop(option, None)
    args['root'] = root
    args.update(_substitute(case.get('args') or {}, root))
    return args


def test_every_module_has_enough_cases():
    assert sorted(CORPUS) == sorted(MODULES)
    for module in MODULES:
        ids = [case['id'] for case in CORPUS[module]]
        assert len(ids) >= MIN_CASES, module
        assert len(ids) == len(set(ids)), module
        for case in CORPUS[module]:
            assert case.get('names'), (module, case['id'])


@pytest.mark.parametrize('module', MODULES)
def test_baseline_call_works_on_the_fake_host(host, run_module, module):
    before = fake_host.digest(host)
    result = run_module(_module(module), _arguments(module, {}, host), check_mode=True)
    assert not result.get('failed'), result.get('msg')
    assert fake_host.digest(host) == before


@pytest.mark.parametrize('module, case', CASES, ids=['%s-%s' % (module, case['id']) for module, case in CASES])
def test_bad_input_fails_naming_the_option_and_touches_nothing(host, run_module, module, case):
    for path in case.get('remove') or []:
        local = os.path.join(host, path.lstrip('/'))
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        else:
            os.unlink(local)
    for path, text in (case.get('files') or {}).items():
        fake_host.put(host, path, text)
    before = fake_host.digest(host)
    result = run_module(_module(module), _arguments(module, case, host), check_mode=bool(case.get('check_mode')))
    assert result.get('failed') is True, result
    message = result['msg']
    for name in case['names']:
        assert name in message, 'expected %r in the message %r' % (name, message)
    assert fake_host.digest(host) == before
