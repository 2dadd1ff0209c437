# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BlockQueue on devices and containers that cannot have an attribute: unsupported, with the reason.

A known queue attribute a device does not have (sdb has no write_cache) is never set and gets
no udev rule (udev would fail to write it at every event); a /sys mounted read-only (a
container) leaves the live value alone and still writes the rule for the next boot. Either
way the record says so, and the run does not fail.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan, records

RULES = '/etc/udev/rules.d/61-dbhost-tuning.rules'
SDB = [{'name': 'sdb', 'attributes': {'rq_affinity': 2, 'write_cache': 'write through'}}]


@pytest.fixture(autouse=True)
def four_k_pages(monkeypatch):
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)


@pytest.fixture
def root(tmp_path):
    fake_sysfs.build(str(tmp_path))
    return str(tmp_path)


def plan(root, devices, kernel=None, check_mode=False, runner=None, bin_path=None, **options):
    return make_plan('block_queue', dict(options, devices=devices, root=root),
                     registry.Context(check_mode, runner, bin_path, system_name='Linux'),
                     writer=kernel or fake_sysfs.FakeKernel())


def rules(root):
    path = os.path.join(root, RULES.lstrip('/'))
    return open(path).read() if os.path.exists(path) else None


def test_missing_attribute_is_unsupported_without_a_rule(root):
    kernel = fake_sysfs.FakeKernel()
    before = fake_sysfs.snapshot(root)
    check = plan(root, SDB, kernel=kernel, check_mode=True).run()
    assert fake_sysfs.snapshot(root) == before and kernel.writes == []
    record = records(check)['sdb/queue/write_cache']
    assert (record.status, record.desired, record.live, record.persisted) == (
        'unsupported', 'write through', None, None)
    assert record.detail.startswith('sdb has no queue attribute write_cache on this kernel or driver; not set live; '
                                    'no rule written: udev would fail to write it at every event')
    assert records(check)['sdb/queue/rq_affinity'].status == 'drift'
    assert check.changed

    applied = plan(root, SDB).run()
    assert not applied.failed_settings()
    assert records(applied)['sdb/queue/write_cache'].status == 'unsupported'
    assert records(applied)['sdb/queue/rq_affinity'].status == 'changed'
    text = rules(root)
    assert 'ATTR{queue/rq_affinity}="2"' in text and 'write_cache' not in text
    assert not os.path.exists(os.path.join(root, 'sys', 'block', 'sdb', 'queue', 'write_cache'))

    after = fake_sysfs.snapshot(root)
    again = plan(root, SDB).run()
    assert not again.changed and fake_sysfs.snapshot(root) == after
    assert dict((s.name, s.status) for s in again.settings) == {
        'sdb/queue/rq_affinity': 'ok', 'sdb/queue/write_cache': 'unsupported'}


def test_unknown_attribute_name_is_still_bad_input(root):
    with pytest.raises(InputError) as error:
        plan(root, [{'name': 'sda', 'attributes': {'no_such_thing': 1}}]).run()
    assert 'sda has no queue attribute no_such_thing' in str(error.value)


def test_read_only_sys_keeps_the_rule_for_the_next_boot(root, monkeypatch):
    sys_root = os.path.join(root, 'sys')
    monkeypatch.setattr(sysfs, 'mounted_read_only', lambda path: os.path.realpath(path).startswith(sys_root))
    devices = [{'name': 'sda', 'attributes': {'rq_affinity': 2, 'read_ahead_kb': 128}}]
    kernel = fake_sysfs.FakeKernel()
    before = fake_sysfs.snapshot(root)
    check = plan(root, devices, kernel=kernel, check_mode=True).run()
    assert fake_sysfs.snapshot(root) == before
    record = records(check)['sda/queue/rq_affinity']
    assert (record.status, record.live) == ('unsupported', '1')
    assert record.detail.startswith('read-only /sys (mounted read-only, as in a container); not set live; '
                                    'would write it to %s for a boot where it can be set' % RULES)
    # already met: nothing to write live, so not unsupported (only the rule is missing)
    assert records(check)['sda/queue/read_ahead_kb'].status == 'drift'
    applied = plan(root, devices, kernel=kernel).run()
    assert kernel.writes == [] and not applied.failed_settings()
    assert records(applied)['sda/queue/rq_affinity'].status == 'unsupported'
    assert ('; wrote it to %s for a boot where it can be set;' % RULES) in records(applied)['sda/queue/rq_affinity'].detail
    assert 'ATTR{queue/rq_affinity}="2"' in rules(root)
    again = plan(root, devices, kernel=kernel).run()
    assert not again.changed
    assert ('not set live; persisted by %s;' % RULES) in records(again)['sda/queue/rq_affinity'].detail


def test_write_refused_with_erofs_is_unsupported_not_failed(root):
    def refuse(path, value):
        raise sysfs.SysfsError(path, value, OSError(errno.EROFS, 'Read-only file system'))
    result = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], kernel=refuse).run()
    record = records(result)['sda/queue/rq_affinity']
    assert record.status == 'unsupported' and not result.failed_settings()
    assert record.detail.startswith('read-only /sys (Read-only file system); not set live; wrote it to')
    assert 'ATTR{queue/rq_affinity}="2"' in rules(root)
