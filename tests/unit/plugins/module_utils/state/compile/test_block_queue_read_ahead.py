# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_ahead_kb by workload: dss is "at least" (a larger read-ahead a DSS host already has is
neither lowered live nor in the rule written), oltp "at most", and a value written =N is exact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile import block_queue
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put
from ansible_collections.dbhost.tuning.tests.unit.helpers import role_defaults, with_defaults

pytestmark = pytest.mark.usefixtures('linux')

RULES = '/etc/udev/rules.d/61-dbhost-tuning.rules'
READ_AHEAD = 'sys/block/sda/queue/read_ahead_kb'


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)
    root = str(tmp_path)
    fake_sysfs.build(root)
    return root


BLOCK_QUEUE_DEFAULTS = role_defaults('block_queue')


def sda_read_ahead(root):
    with open(os.path.join(root, os.path.realpath(os.path.join(root, READ_AHEAD)))) as handle:
        return handle.read().strip()


def run(root, check_mode=False, **variables):
    values = {'block_queue_root': root, 'block_queue_devices': [{'name': ['sda'], 'rotational': True}],
              'block_queue_reload': False}
    values.update(variables)
    host = HostState(['block_queue'], with_defaults({'block_queue': values}), registry.Context(check_mode=check_mode),
                     facts_reader=lambda r, subsets: {'system': 'Linux'})
    result = host.run()
    output = host.output(result)
    return dict((s['name'], s) for s in output['settings']), output


def test_rules_and_sources_per_workload():
    assert block_queue.read_ahead_rule(dict(BLOCK_QUEUE_DEFAULTS, **{'block_queue_workload': 'dss'}))[1][0] == 'minimum'
    assert block_queue.read_ahead_rule(dict(BLOCK_QUEUE_DEFAULTS, **{'block_queue_workload': 'oltp'}))[1][0] == 'maximum'
    assert 'throughput-performance' in block_queue.read_ahead_rule(dict(BLOCK_QUEUE_DEFAULTS, **{'block_queue_workload': 'dss'}))[1][1]
    assert block_queue.read_ahead_rule(dict(BLOCK_QUEUE_DEFAULTS, **{'block_queue_workload': 'dss', 'block_queue_read_ahead_kb': {
        'dss': '=4096'}})) == (4096, ('exact', 'block_queue_read_ahead_kb dss, as written'))


def test_a_dss_hosts_larger_read_ahead_is_not_lowered(tree):
    put(tree, os.path.realpath(os.path.join(tree, READ_AHEAD))[len(tree):], '8192\n')
    records, output = run(tree, block_queue_workload='dss')
    record = records['sda/queue/read_ahead_kb']
    assert record['comparison'] == 'minimum' and record['live'] == '8192'
    assert sda_read_ahead(tree) == '8192'
    with open(os.path.join(tree, RULES.lstrip('/'))) as handle:
        assert 'ATTR{queue/read_ahead_kb}="8192"' in handle.read()
    before = digest(tree)
    again, output = run(tree, block_queue_workload='dss')
    assert digest(tree) == before and output['changed'] is False
    assert set(r['status'] for r in again.values()) == {'ok'}


def test_exact_when_the_user_writes_it(tree):
    put(tree, os.path.realpath(os.path.join(tree, READ_AHEAD))[len(tree):], '8192\n')
    records, dummy = run(tree, block_queue_workload='dss', block_queue_read_ahead_kb={'dss': '=4096', 'oltp': 128})
    assert records['sda/queue/read_ahead_kb']['comparison'] == 'exact'
    assert sda_read_ahead(tree) == '4096'


def test_an_items_own_read_ahead_is_exact(tree):
    put(tree, os.path.realpath(os.path.join(tree, READ_AHEAD))[len(tree):], '8192\n')
    records, dummy = run(tree, block_queue_workload='dss', block_queue_devices=[
        {'name': ['sda'], 'rotational': True, 'attributes': {'read_ahead_kb': 1024}}])
    assert records['sda/queue/read_ahead_kb']['comparison'] == 'exact'
    assert sda_read_ahead(tree) == '1024'


def test_oltp_keeps_a_smaller_read_ahead(tree):
    put(tree, os.path.realpath(os.path.join(tree, READ_AHEAD))[len(tree):], '64\n')
    records, dummy = run(tree, block_queue_workload='oltp')
    assert records['sda/queue/read_ahead_kb']['comparison'] == 'maximum'
    assert sda_read_ahead(tree) == '64'
