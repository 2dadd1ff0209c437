# -*- coding: utf-8 -*-
"""The processor_sets role on SunOS (seed 000): with processor_sets_shared_memory the set's
shared memory is asked onto its board by lgrp_mem_pset_aware = 1 in /etc/system, as illumos
os/lgrp.c (lgrp_mem_policy_default) reads it; the placement itself is read by processor_set."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults

GIB = 1024 ** 3


@pytest.fixture
def root(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    (tmp_path / 'etc' / 'passwd').write_text(u'oracle:x:100:101::/export/home/oracle:/bin/sh\n')
    (tmp_path / 'etc' / 'group').write_text(u'dba::101:\n')
    return str(tmp_path)


def compiled(root, share, system='SunOS'):
    inputs = with_defaults({
        'processor_sets': {'processor_sets_name': 'oracle', 'processor_sets_cpus': 'node:2',
                           'processor_sets_project': 'user.oracle', 'processor_sets_shared_memory': share,
                           'processor_sets_root': root},
        'shared_memory': {'shared_memory_engine': 'oracle', 'shared_memory_size': '8G', 'shared_memory_root': root,
                          'shared_memory_user': ''}})
    facts = {'system': system, 'memory': {'total_bytes': 64 * GIB, 'page_size': 8192}, 'mounts': []}
    return desired.compile_state(['processor_sets'], inputs, facts)


def kernel_calls(state):
    return [(call.owner, call.kwargs) for call in state.calls if call.kind == 'kernel_params']


def test_shared_memory_on_the_board_sets_lgrp_mem_pset_aware(root):
    state = compiled(root, True)
    owned = [(owner, kwargs.get('file'), kwargs['params']) for owner, kwargs in kernel_calls(state)]
    # no file: the module's default, /etc/system.d/dbhost-tuning where the release has it, else /etc/system
    assert ('processor_sets', None, {'lgrp_mem_pset_aware': '1'}) in owned
    record = [r for r in state.records if r['key'] == 'lgrp_mem_pset_aware'][0]
    assert 'os/lgrp.c' in record['source'] and record['owner'] == 'processor_sets'
    # the shared_memory role is compiled for the set too (its project controls)
    assert 'resource_limits' in [call.kind for call in state.calls]


def test_without_processor_sets_shared_memory_nothing_in_etc_system(root):
    state = compiled(root, False)
    assert kernel_calls(state) == []
