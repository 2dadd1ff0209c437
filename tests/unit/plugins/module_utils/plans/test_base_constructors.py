# -*- coding: utf-8 -*-
"""No plan restates its kind's options one by one: every plan class (plans/ and HostState) takes
at most six parameters, a kind's plan takes the kind's options object and the run's Context
first (state/registry.py), and so does the sizing (sizing/shm.py) its request and machine.

A new option is then written in the registry's spec and read where it is used, never added
to a constructor's list and to the factory that spreads it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import inspect
import pkgutil

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils import plans
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import shm
from ansible_collections.dbhost.tuning.plugins.module_utils.state import host_state, registry

MOST = 6
# the plans that are no kind's: they take what they act on (roots, roles and inputs), not a kind's options
NOT_A_KIND = ('Revert', 'HostState')


def parameters(function):
    """The parameters a caller gives (``self`` left out; *args and **keywords count one each)."""
    names = list(inspect.signature(function).parameters)
    return names[1:] if names and names[0] == 'self' else names


def plan_classes():
    """Every class that is a Plan (the base left out), defined in plans/ or state/host_state.py."""
    modules = [importlib.import_module(found.name)
               for found in pkgutil.walk_packages(plans.__path__, plans.__name__ + '.')] + [host_state]
    found = {}
    for module in modules:
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Plan) and value.__module__ == module.__name__:
                found[name] = value
    found.pop('Plan')
    return found


PLANS = plan_classes()


def test_every_kind_has_a_plan_class_walked():
    # The walk finds the kinds' plans (one per kind, ProcessorSet's platform plans besides), or the
    # tests below prove nothing.
    assert set(['KernelParams', 'HugePages', 'ResourceLimits', 'SysfsAttributes', 'BlockQueue', 'MountOptions',
                'DbParameter', 'ProcessorSet', 'LinuxProcessorSet', 'SunOSProcessorSet', 'KernelCmdline', 'DbEffect',
                'Revert', 'HostState']) <= set(PLANS)


@pytest.mark.parametrize('name', sorted(PLANS))
def test_no_plan_constructor_takes_over_six_parameters(name):
    assert len(parameters(PLANS[name].__init__)) <= MOST, parameters(PLANS[name].__init__)


@pytest.mark.parametrize('name', sorted(set(PLANS) - set(NOT_A_KIND)))
def test_a_kinds_plan_takes_its_options_and_the_context(name):
    assert parameters(PLANS[name].__init__)[:2] == ['options', 'context']


@pytest.mark.parametrize('kind', sorted(registry.KINDS))
def test_each_factory_hands_the_options_object_to_its_plan(kind):
    # made as the module makes it: the plan holds no option the spec does not have
    factory = registry.KINDS[kind].factory
    assert parameters(factory)[:2] == ['options', 'ctx']
    assert len(parameters(factory)) <= 3


@pytest.mark.parametrize('function', [shm.shm_settings, shm.shm_settings_from_facts, shm.check_inputs],
                         ids=lambda function: function.__name__)
def test_the_sizing_takes_a_request_not_its_options_one_by_one(function):
    assert len(parameters(function)) <= MOST


def test_the_count_sees_a_long_constructor():
    class Long(Plan):
        def __init__(self, engine, params, path, backup, root, oracle_home, oracle_sid):
            pass
    assert len(parameters(Long.__init__)) == 7 > MOST
    assert parameters(shm.shm_settings) == ['machine', 'wanted']
