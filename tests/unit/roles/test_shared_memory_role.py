# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared_memory role through ansible-playbook on a fake host whose limits exceed the
vendor's minimums (shmall and shmmax at ULONG_MAX, memlock unlimited, a larger huge page
pool): one module call, nothing lowered, every record ok, not one byte written; and the
sizing exported as shared_memory_settings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.tests.unit.helpers import ULONG, digest, generous_oracle_host, run_role


def variables(root, **extra):
    values = {'shared_memory_engine': 'oracle', 'shared_memory_size': '40%', 'shared_memory_root': root,
              'shared_memory_group': 'dba', 'shared_memory_transparent_hugepage': ''}
    values.update(extra)
    return values


def test_apply_on_a_generous_host_lowers_nothing(tmp_path):
    root = generous_oracle_host(str(tmp_path / 'root'))
    before = digest(root)
    result = run_role(tmp_path, 'shared_memory', variables(root))
    statuses = dict((s['name'], (s['status'], s['comparison'])) for s in result['settings'])
    assert statuses == {
        'kernel.shmall': ('ok', 'minimum'), 'kernel.shmmax': ('ok', 'minimum'), 'kernel.shmmni': ('ok', 'minimum'),
        'vm.hugetlb_shm_group': ('ok', 'exact'), 'hugepages-2048kB': ('ok', 'minimum'),
        'oracle soft memlock': ('ok', 'minimum'), 'oracle hard memlock': ('ok', 'minimum')}
    assert result['changed'] is False
    assert digest(root) == before
    live = dict((s['name'], s['live']) for s in result['settings'])
    assert live['kernel.shmmax'] == ULONG and live['hugepages-2048kB'] == 30000
    # One module call for the whole role, with each kind's own part where it used to be.
    assert [p['kind'] for p in result['plans']] == ['kernel_params', 'hugepages', 'resource_limits']
    assert [s['name'] for s in result['hugepages']['settings']] == ['hugepages-2048kB']
    sizing = result['exported']['shared_memory_settings']
    assert sizing['hugepages'] == [{'size': 2097152, 'count': 13240}]
    assert sizing['kernel_params']['vm.hugetlb_shm_group'] == 54322


def test_check_mode_on_a_stock_host_reports_drift_and_writes_nothing(tmp_path):
    root = generous_oracle_host(str(tmp_path / 'root'))
    for key, value in (('kernel/shmmax', '8388608'), ('kernel/shmall', '2097152'), ('vm/nr_hugepages', '0')):
        with open('%s/proc/sys/%s' % (root, key), 'w') as handle:
            handle.write(value + '\n')
    before = digest(root)
    result = run_role(tmp_path, 'shared_memory', variables(root), check=True)
    drifted = sorted(s['name'] for s in result['settings'] if s['status'] == 'drift')
    assert 'kernel.shmmax' in drifted and 'kernel.shmall' in drifted
    assert result['changed'] is True
    assert digest(root) == before
