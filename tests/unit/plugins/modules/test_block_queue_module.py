# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The block_queue module's main(): options, result shape, check mode, failures."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.modules import block_queue
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs


@pytest.fixture(autouse=True)
def linux_kernel(linux, monkeypatch):
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)
    kernel = fake_sysfs.FakeKernel(refuse={'nr_requests': 1023})
    monkeypatch.setattr(sysfs, 'write_value', kernel)
    return kernel


@pytest.fixture
def root(tmp_path):
    fake_sysfs.build(str(tmp_path))
    return str(tmp_path)


def args(root, **extra):
    base = {'root': root, 'devices': [
        {'name': ['sda'], 'attributes': {'rq_affinity': 2, 'scheduler': 'none', 'read_ahead_kb': 4096}},
        {'mount': ['/u03'], 'attributes': {'rq_affinity': 2}}]}
    base.update(extra)
    return base


def test_apply_then_idempotent(run_module, root):
    first = run_module(block_queue, args(root), diff=True)
    assert first['changed'] is True
    assert [(s['name'], s['status']) for s in first['settings']] == [
        ('nvme0n1/queue/rq_affinity', 'changed'), ('sda/queue/scheduler', 'changed'),
        ('sda/queue/read_ahead_kb', 'changed'), ('sda/queue/rq_affinity', 'changed')]
    assert first['restart_required'] is False and first['reboot_required'] is False
    assert first['diff'][0]['before_header'] == '/etc/udev/rules.d/61-dbhost-tuning.rules'
    assert 'ATTRS{wwid}=="eui.0025388b91c2d4e1", ATTR{queue/rq_affinity}="2"' in first['diff'][0]['after']
    assert [d['name'] for d in first['devices']] == ['nvme0n1', 'sda']
    assert first['udev'] == {'reloaded': False, 'detail': 'root is %s: udev not reloaded' % root}
    second = run_module(block_queue, args(root))
    assert second['changed'] is False
    assert set(s['status'] for s in second['settings']) == {'ok'}


def test_check_mode_touches_nothing(run_module, root, linux_kernel):
    before = fake_sysfs.snapshot(root)
    result = run_module(block_queue, args(root), check_mode=True, diff=True)
    assert fake_sysfs.snapshot(root) == before
    assert linux_kernel.writes == []
    assert result['changed'] is True
    assert set(s['status'] for s in result['settings']) == {'drift'}
    assert result['diff'][0]['after'].count('ACTION=="add|change"') == 2


def test_bad_input_fails_naming_it(run_module, root, linux_kernel):
    result = run_module(block_queue, args(root, devices=[{'name': ['sda'], 'attributes': {'scheduler': 'cfq'}}]))
    assert result['failed'] is True
    assert "devices[0].attributes.scheduler on sda: 'cfq' is not one of the choices" in result['msg']
    assert linux_kernel.writes == []


def test_selector_matching_nothing(run_module, root):
    result = run_module(block_queue, args(root, devices=[{'name': ['xvd*'], 'attributes': {'rq_affinity': 2}}]))
    assert result['failed'] is True and 'matches no block device' in result['msg']
    result = run_module(block_queue, args(root, allow_empty=True,
                                          devices=[{'name': ['xvd*'], 'attributes': {'rq_affinity': 2}}]))
    assert result.get('failed') is not True and result['settings'] == [] and result['changed'] is False


def test_refused_value_fails_the_task_with_records(run_module, root):
    result = run_module(block_queue, args(root, devices=[{'name': ['sdb'], 'attributes': {'nr_requests': 4096, 'rq_affinity': 2}}]))
    assert result['failed'] is True
    assert result['msg'].startswith('refused by the kernel: sdb/queue/nr_requests')
    assert [(s['name'], s['status']) for s in result['settings']] == [
        ('sdb/queue/nr_requests', 'failed'), ('sdb/queue/rq_affinity', 'changed')]


def test_unsupported_platform(run_module, root, monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'SunOS')
    result = run_module(block_queue, args(root))
    assert result['changed'] is False
    assert set(s['status'] for s in result['settings']) == {'unsupported'}
