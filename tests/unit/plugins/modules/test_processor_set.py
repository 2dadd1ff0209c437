# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import processor_set
from ansible_collections.dbhost.tuning.tests.unit.helpers import write

DROPIN = 'etc/systemd/system/postgresql.service.d/90-dbhost-tuning-cpus.conf'


pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    write(os.path.join(base, 'sys/devices/system/cpu/online'), '0-3\n')
    write(os.path.join(base, 'sys/devices/system/cpu/possible'), '0-3\n')
    for node, cpus in ((0, '0-1'), (1, '2-3')):
        folder = os.path.join(base, 'sys/devices/system/node/node%d' % node)
        write(os.path.join(folder, 'cpulist'), cpus + '\n')
        write(os.path.join(folder, 'meminfo'), 'Node %d MemTotal:  8388608 kB\n' % node)
        write(os.path.join(folder, 'distance'), '10 20\n' if node == 0 else '20 10\n')
    write(os.path.join(base, 'lib/systemd/system/postgresql.service'), '[Service]\nExecStart=/bin/true\n')
    return base


def test_module_check_then_apply_then_idempotent(run_module, root):
    args = {'name': 'pg', 'cpus': 'node:1', 'service': 'postgresql', 'root': root}
    dry = run_module(processor_set, args, check_mode=True, diff=True)
    assert dry['changed'] is True
    assert not os.path.exists(os.path.join(root, DROPIN))
    assert dry['diff'][0]['before_header'] == '/' + DROPIN
    applied = run_module(processor_set, args)
    assert applied['changed'] is True and applied['settings'][0]['status'] == 'changed'
    assert applied['restart_required'] is False
    with open(os.path.join(root, DROPIN)) as handle:
        assert 'CPUAffinity=2-3\nNUMAMask=1\nNUMAPolicy=bind\n' in handle.read()
    again = run_module(processor_set, args)
    assert again['changed'] is False and again['settings'][0]['status'] == 'ok'
    assert again['topology']['nodes']['1']['distances'] == [20, 10]


def test_module_fails_naming_the_bad_input(run_module, root):
    result = run_module(processor_set, {'name': 'pg', 'cpus': '2-5', 'service': 'postgresql', 'root': root})
    assert result['failed'] is True
    assert result['msg'] == 'cpus: CPU(s) 4-5 do not exist on this host (CPUs here: 0-3)'
    assert not os.path.exists(os.path.join(root, DROPIN))


def test_module_requires_cpus_when_present(run_module, root):
    result = run_module(processor_set, {'name': 'pg', 'service': 'postgresql', 'root': root})
    assert result['failed'] is True and 'cpus' in result['msg']


RUN_DROPIN = 'run/systemd/system/postgresql.service.d/90-dbhost-tuning-cpus.conf'


def test_a_dropin_of_our_name_in_run_is_what_systemd_reads_until_ours_is_written(run_module, root):
    # systemd.unit(5): the same drop-in name in /etc masks the one in /run; while ours is absent,
    # /run's binds the unit, and writing ours must keep its other lines.
    write(os.path.join(root, RUN_DROPIN), '[Service]\nCPUAffinity=0-1\nNice=5\n')
    args = {'name': 'pg', 'cpus': 'node:1', 'service': 'postgresql', 'root': root}
    dry = run_module(processor_set, args, check_mode=True)
    assert dry['changed'] is True
    assert not os.path.exists(os.path.join(root, DROPIN))
    # check mode reads what systemd reads: /run's binding
    assert dry['settings'][0]['persisted'] == {'CPUAffinity': '0-1'}
    applied = run_module(processor_set, args)
    assert applied['changed'] is True
    with open(os.path.join(root, DROPIN)) as handle:
        text = handle.read()
    assert '# Carried over from /%s, which this drop-in masks (same name).' % RUN_DROPIN in text
    assert 'Nice=5\n' in text and 'CPUAffinity=2-3\n' in text and 'CPUAffinity=0-1' not in text
    again = run_module(processor_set, args)
    assert again['changed'] is False and again['settings'][0]['status'] == 'ok'


def test_without_a_dropin_anywhere_ours_starts_empty(run_module, root):
    args = {'name': 'pg', 'cpus': 'node:1', 'service': 'postgresql', 'root': root}
    run_module(processor_set, args)
    with open(os.path.join(root, DROPIN)) as handle:
        assert 'Carried over' not in handle.read()
