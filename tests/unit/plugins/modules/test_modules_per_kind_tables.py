# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every kind of the registry has a case in every per-kind test table.

Several suites hold a table with one entry per kind of setting (the call that works on the
fake host, the files it writes, the option its records name, the kill test, the revert test,
the bad-input corpus). Their cases are data; the suites that take them per kind
(tests/unit/helpers.py ``per_kind``) run them in the registry's order, and a new kind left out
of one of them would leave its suite passing: this test fails instead, naming the kind and the
table (shown on a toy kind added to the registry's kinds).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.state import hooks, registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import per_kind

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables():
    """{table name: the kinds it has a case for}."""
    fake_host = _load('fake_host', os.path.join(HERE, 'fake_host.py'))
    confinement = _load('per_kind_confinement', os.path.join(HERE, 'test_modules_confinement.py'))
    sources = _load('per_kind_sources', os.path.join(HERE, 'test_modules_record_sources.py'))
    revert = _load('per_kind_revert', os.path.join(HERE, 'test_host_state_revert.py'))
    kill = _load('per_kind_kill', os.path.join(TESTS, 'integration', 'test_kill_writes.py'))
    with open(os.path.join(HERE, 'bad_inputs.yml')) as handle:
        corpus = yaml.safe_load(handle)
    return {
        'fake_host.BASELINE': set(fake_host.BASELINE),
        'test_modules_confinement.WRITES': set(confinement.WRITES),
        'test_modules_record_sources.OPTIONS': set(sources.OPTIONS),
        'test_host_state_revert.CASES': set(case[1] for case in revert.CASES),
        'integration/test_kill_writes.CASES': set(case[1] for case in kill.CASES),
        'bad_inputs.yml': set(name for name, cases in corpus.items() if cases),
    }


TABLES = _tables()


# The tables of what a kind writes (its files, a kill in the middle of a write, a revert): a kind that writes
# nothing (its hooks' read_only: db_effect) has no case there.
WRITING = ('test_modules_confinement.WRITES', 'test_host_state_revert.CASES', 'integration/test_kill_writes.CASES')


def missing(kinds, tables):
    """{table: the kinds of ``kinds`` (the registry's KINDS) it has no case for}, the tables that lack none left out."""
    gaps = {}
    for table, cased in tables.items():
        wanted = set(name for name, kind in kinds.items() if table not in WRITING or not kind.hooks.read_only)
        if wanted - cased:
            gaps[table] = sorted(wanted - cased)
    return gaps


@pytest.mark.parametrize('table', sorted(TABLES))
def test_every_kind_has_a_case(table):
    gaps = missing(registry.KINDS, {table: TABLES[table]})
    assert not gaps, '%s has no case for the kind(s) %s' % (table, ', '.join(gaps.get(table, [])))


@pytest.mark.parametrize('read_only', [False, True])
def test_a_toy_kind_without_cases_is_named_in_every_table_it_needs_one_in(read_only):
    toy = registry.Kind('toy_kind', dict, lambda options, ctx: None,
                        hooks=hooks.Hooks(read_only=read_only) if read_only else None)
    gaps = missing(dict(registry.KINDS, toy_kind=toy), TABLES)
    needed = sorted(table for table in TABLES if not (read_only and table in WRITING))
    assert gaps == dict((table, ['toy_kind']) for table in needed)


def test_a_suite_takes_its_cases_in_the_registry_s_order_and_only_the_writing_kinds_where_asked():
    table = dict((name, name.upper()) for name in reversed(sorted(registry.KINDS)))
    assert per_kind(table) == [(name, name.upper()) for name in registry.KINDS]
    writing = [name for name, case in per_kind(table, writing=True)]
    assert writing == [name for name in registry.KINDS if name != 'db_effect']


@pytest.mark.parametrize('table', sorted(TABLES))
def test_no_case_names_a_kind_the_registry_lacks(table):
    modules = set(registry.MODULES)
    unknown = sorted(TABLES[table] - modules)
    assert not unknown, '%s names %s, which the registry does not know' % (table, ', '.join(unknown))
