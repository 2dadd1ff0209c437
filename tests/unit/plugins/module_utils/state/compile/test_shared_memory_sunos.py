# -*- coding: utf-8 -*-
"""The shared_memory role on SunOS (seed 001): project controls as minimums sized for the
whole shared memory, and for PostgreSQL shared_memory_type = sysv, so that its buffers are ISM."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

GIB = 1024 ** 3
PGCONF = '/var/postgres/15/data/postgresql.conf'


@pytest.fixture
def root(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'passwd').write_text(u'postgres:x:90:90::/var/postgres:/bin/sh\n'
                                             u'oracle:x:100:101::/export/home/oracle:/bin/sh\n')
    (tmp_path / 'etc' / 'group').write_text(u'postgres::90:\ndba::101:\n')
    return str(tmp_path)


def sunos_facts(ram=64 * GIB):
    return {'system': 'SunOS', 'memory': {'total_bytes': ram, 'page_size': 8192}, 'mounts': []}


def compiled(root, engine='postgresql', **shm):
    inputs = {'shared_memory': dict({'shared_memory_engine': engine, 'shared_memory_size': '20G',
                                     'shared_memory_root': root, 'shared_memory_user': ''}, **shm)}
    return desired.compile_state(['shared_memory'], with_defaults(inputs), sunos_facts())


def calls(state, kind):
    return [call.kwargs for call in state.calls if call.kind == kind]


def test_postgresql_gets_shared_memory_type_sysv_and_a_project_sized_for_it(root):
    state = compiled(root, shared_memory_postgresql_conf=PGCONF)
    assert calls(state, 'db_parameter') == [{'engine': 'postgresql', 'path': PGCONF, 'root': root,
                                             'params': {'shared_memory_type': 'sysv'}, 'backup': False}]
    project = calls(state, 'resource_limits')[0]
    assert project['comparison'] == 'minimum'
    # with sysv the whole 20G is one System V segment: the project control holds it
    assert project['projects'][0]['attributes']['project.max-shm-memory'] == '(privileged,%d,deny)' % (20 * GIB)
    assert not state.messages


def test_without_a_postgresql_conf_a_note_says_what_is_missing(root):
    state = compiled(root)
    assert calls(state, 'db_parameter') == []
    assert any('shared_memory_type = sysv' in note for note in state.messages)


@pytest.mark.parametrize('engine, shm', [('postgresql', {'shared_memory_hugepages': False}),
                                         ('oracle', {})])
def test_no_shared_memory_type_for_oracle_or_without_large_pages(root, engine, shm):
    state = compiled(root, engine=engine, shared_memory_postgresql_conf=PGCONF, **shm)
    assert calls(state, 'db_parameter') == []
