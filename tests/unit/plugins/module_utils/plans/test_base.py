# -*- coding: utf-8 -*-
"""The Plan base: run() calls the hooks in their fixed order, and only apply() sees the module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan


class Recorder(Plan):
    def __init__(self, bad=False):
        self.calls = []
        self.bad = bad

    def validate(self):
        self.calls.append('validate')
        if self.bad:
            raise InputError('value: not a number')

    def desired(self):
        self.calls.append('desired')
        return {'k': '2'}

    def read_live(self, desired):
        self.calls.append(('read_live', desired))
        return {'k': '1'}

    def read_persisted(self, desired):
        self.calls.append(('read_persisted', desired))
        return {'k': None}

    def apply(self, desired, live, persisted, module):
        self.calls.append(('apply', live, persisted, module))
        return {'k': '2'}

    def render(self, result, desired, live, persisted, done):
        self.calls.append(('render', done))
        result.add(Setting('k', desired=desired['k'], live=done['k'], status='changed'))


def test_hooks_run_in_order_with_what_the_earlier_ones_returned():
    plan = Recorder()
    result = plan.run('MODULE')
    assert plan.calls == ['validate', 'desired', ('read_live', {'k': '2'}), ('read_persisted', {'k': '2'}),
                          ('apply', {'k': '1'}, {'k': None}, 'MODULE'), ('render', {'k': '2'})]
    assert [s.name for s in result.settings] == ['k']


def test_bad_input_stops_before_anything_is_read():
    plan = Recorder(bad=True)
    with pytest.raises(InputError):
        plan.run()
    assert plan.calls == ['validate']


def test_a_kind_must_fill_in_its_hooks():
    with pytest.raises(NotImplementedError, match='Plan.desired'):
        Plan().run()


def _plan_classes():
    """Every Plan subclass module_utils defines, found by importing each of its modules."""
    import importlib
    import inspect
    import pkgutil
    from ansible_collections.dbhost.tuning.plugins import module_utils
    found = {}
    for info in pkgutil.walk_packages(module_utils.__path__, module_utils.__name__ + '.'):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Plan) and value is not Plan \
                    and value.__module__ == module.__name__:
                found['%s.%s' % (info.name.split('module_utils.')[1], name)] = value
    return found


def test_every_kind_fills_in_the_hooks_and_none_has_its_own_run():
    classes = _plan_classes()
    # One class per kind, SunOS's processor sets beside Linux's; HostState runs the others.
    assert len(classes) >= 9, sorted(classes)
    for name, cls in sorted(classes.items()):
        if cls.__name__ == 'HostState':
            continue
        assert 'run' not in vars(cls), '%s has its own run()' % name
        for hook in ('desired', 'apply', 'render'):
            assert getattr(cls, hook) is not getattr(Plan, hook), '%s does not fill in %s()' % (name, hook)
