# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import result as r


@pytest.mark.parametrize('kwargs, status', [
    (dict(live_ok=True, persisted_ok=True, check_mode=False), r.OK),
    (dict(live_ok=None, persisted_ok=True, check_mode=True), r.OK),
    (dict(live_ok=False, persisted_ok=True, check_mode=True), r.DRIFT),
    (dict(live_ok=True, persisted_ok=False, check_mode=True), r.DRIFT),
    (dict(live_ok=False, persisted_ok=False, check_mode=False), r.CHANGED),
    (dict(live_ok=False, persisted_ok=False, check_mode=False, live_needs=r.PENDING_RESTART), r.PENDING_RESTART),
    (dict(live_ok=False, persisted_ok=False, check_mode=True, live_needs=r.PENDING_RESTART), r.DRIFT),
    (dict(live_ok=False, persisted_ok=True, check_mode=True, live_needs=r.PENDING_RESTART), r.PENDING_RESTART),
    (dict(live_ok=False, persisted_ok=False, check_mode=False, live_needs=r.PENDING_REBOOT), r.PENDING_REBOOT),
    (dict(live_ok=True, persisted_ok=True, check_mode=False, shadowed=True), r.SHADOWED),
    (dict(live_ok=False, persisted_ok=False, check_mode=False, unsupported=True), r.UNSUPPORTED),
])
def test_status_rules(kwargs, status):
    assert r.decide_status(**kwargs) == status


def test_result_flags_follow_records_and_diffs():
    result = r.Result(check_mode=False)
    result.add(r.Setting('a', status=r.OK))
    assert result.as_dict() == {'changed': False, 'settings': [
        {'name': 'a', 'target': None, 'desired': None, 'live': None, 'persisted': None, 'status': 'ok', 'detail': '',
         'comparison': 'exact'}],
        'restart_required': False, 'reboot_required': False}
    # A pending restart alone does not make a run "changed" (idempotence while it waits).
    result.add(r.Setting('b', status=r.PENDING_RESTART))
    assert result.restart_required and not result.changed
    result.add_diff('/f', 'x\n', 'x\n')
    assert not result.changed and 'diff' not in result.as_dict()
    result.add_diff('/f', None, 'y\n')
    assert result.changed
    assert result.as_dict()['diff'] == [{'before_header': '/f', 'after_header': '/f', 'before': '', 'after': 'y\n'}]


def test_check_mode_drift_means_changed():
    result = r.Result(check_mode=True)
    result.add(r.Setting('a', status=r.DRIFT))
    assert result.changed
    assert [s.name for s in result.drifted_settings()] == ['a']


def test_unknown_status_refused():
    with pytest.raises(ValueError):
        r.Setting('a', status='fine')


def test_a_setting_shows_its_record_when_printed():
    record = r.Setting('kernel.shmmni', '/etc/sysctl.d/x.conf', '4096', '4096', '4096', 'ok', '')
    assert repr(record) == 'Setting(%r)' % (record.as_dict(),)


def test_drift_gate_message_counts_and_names_the_drifted_records():
    records = [{'name': 'vm.swappiness', 'status': 'ok'}, {'name': 'kernel.shmmax', 'status': 'drift'},
               {'name': 'nr_hugepages', 'status': 'unsupported'}, {'name': 'kernel.sem', 'status': 'shadowed'}]
    assert r.drift_gate_message(records, True) == '2 setting(s) drifted: kernel.shmmax, kernel.sem'
    assert r.drift_gate_message(records, False) is None
    assert r.drift_gate_message(records[:1] + records[2:3], True) is None
    assert r.drift_gate_message(None, True) is None


def test_describe_os_error_words():
    assert r.describe_os_error(r.HostError('writing /etc/x: disk full')) == 'writing /etc/x: disk full'
    assert r.describe_os_error(OSError(2, 'No such file or directory', '/etc/x')) == \
        '/etc/x: No such file or directory'
    assert r.describe_os_error(OSError(18, 'Invalid cross-device link', '/a', None, '/b')) == \
        '/a -> /b: Invalid cross-device link'
    assert r.describe_os_error(OSError('odd')) == 'the system refused an operation: odd'
