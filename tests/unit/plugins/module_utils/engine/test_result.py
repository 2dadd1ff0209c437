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
         'comparison': 'exact', 'source': None, 'reason': None}],
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


def test_a_read_only_drift_outside_check_mode_is_no_change():
    """A record of what the running system does not get (pmap, a later run cannot fix it by
    writing) is drift without changed, so that a rerun stays idempotent."""
    result = r.Result(check_mode=False)
    result.add(r.Setting('memory:oracle', status=r.DRIFT, detail='4G lies outside lgroup(s) 2'))
    assert not result.changed
    assert [s.name for s in result.drifted_settings()] == ['memory:oracle']


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


# (decide_status arguments, Setting arguments, reason): one record of each status.
REASON_CASES = [
    ('ok', dict(live_ok=True, persisted_ok=True, check_mode=True), {}, None),
    ('drift not persisted', dict(live_ok=True, persisted_ok=False, check_mode=True), {}, 'not persisted'),
    ('drift live differs', dict(live_ok=False, persisted_ok=True, check_mode=True), dict(live='60'), 'live differs'),
    ('drift below the minimum', dict(live_ok=False, persisted_ok=False, check_mode=True),
     dict(desired='4096', live='128', persisted='128', comparison='minimum'),
     'live below the minimum 4096, persisted below the minimum 4096'),
    ('drift above the maximum', dict(live_ok=False, persisted_ok=True, check_mode=True),
     dict(desired='10', live='60', comparison='maximum'), 'live above the maximum 10'),
    ('drift a vector', dict(live_ok=False, persisted_ok=None, check_mode=True),
     dict(desired=['250', '32000'], live='32 32', comparison=['minimum', 'minimum']), 'live differs'),
    ('changed', dict(live_ok=False, persisted_ok=False, check_mode=False),
     dict(desired='4096', live='4096', persisted='4096', comparison='minimum'),
     'was: live below the minimum 4096, not persisted'),
    ('pending restart', dict(live_ok=False, persisted_ok=True, check_mode=True, live_needs=r.PENDING_RESTART), {},
     'persisted, pending restart'),
    ('pending reboot now persisted', dict(live_ok=False, persisted_ok=False, check_mode=False,
                                          live_needs=r.PENDING_REBOOT), {}, 'persisted now, pending reboot'),
    ('shadowed', dict(live_ok=True, persisted_ok=True, check_mode=True, shadowed=True),
     dict(detail='would write /etc/sysctl.d/90-x.conf; /etc/sysctl.d/99-x.conf sets 60 and wins at boot over '
                 '/etc/sysctl.d/90-x.conf'),
     'shadowed by /etc/sysctl.d/99-x.conf (sets 60)'),
    ('shadowed, limits', dict(live_ok=None, persisted_ok=True, check_mode=True, shadowed=True),
     dict(detail='hard: /etc/security/limits.d/95-x.conf:3 gives 64, which wins over /etc/security/limits.d/90-x.conf'),
     'shadowed by /etc/security/limits.d/95-x.conf:3 (gives 64)'),
    ('unsupported', dict(live_ok=None, persisted_ok=None, check_mode=True, unsupported=True),
     dict(detail='no /proc/sys/net/core/wmem_max on this kernel (older or built without it); not set live'),
     'no /proc/sys/net/core/wmem_max on this kernel'),
]


@pytest.mark.parametrize('decide, fields, reason', [case[1:] for case in REASON_CASES],
                         ids=[case[0] for case in REASON_CASES])
def test_each_status_has_its_reason(decide, fields, reason):
    status = r.decide_status(**decide)
    setting = r.Setting('k', status=status, **fields)
    assert setting.reason == reason
    assert setting.as_dict()['status'].__class__ is str and setting.status == status
    assert r.Setting('k', status=status, reason='a kind knows better', **fields).reason == (
        'a kind knows better')


@pytest.mark.parametrize('status, detail, reason', [
    (r.FAILED, 'keyed by KERNEL=="sda"; the kernel refused \'bfq\': Invalid argument; not persisted',
     "the kernel refused 'bfq': Invalid argument"),
    (r.FAILED, 'psrset -c printed no set id', 'psrset -c printed no set id'),
    (r.FAILED, '', 'the system refused the value'),
    (r.UNSUPPORTED, '', 'not on this host'),
    (r.SHADOWED, '', 'shadowed by another source'),
    (r.DRIFT, 'would write /etc/fstab', 'would write /etc/fstab'),
    (r.CHANGED, '', 'changed'),
    (r.OK, 'anything', None),
])
def test_a_status_given_without_decide_status_still_has_a_reason(status, detail, reason):
    assert r.Setting('k', status=status, detail=detail).reason == reason


def test_a_shadowed_record_names_the_file_that_wins():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

    class Shadowed(Plan):
        def desired(self):
            return {}

        def apply(self, desired, live, persisted, module):
            self.shadowed = [('vm.swappiness', '/etc/sysctl.d/99-x.conf')]

        def render(self, result, desired, live, persisted, done):
            result.add(r.Setting('vm.swappiness', status=r.decide_status(True, True, True, shadowed=True)))
            result.add(r.Setting('vm.other', status=r.DRIFT, detail='would write /f', source='a sizing rule'))

    result = Shadowed().run()
    assert [(s.reason, s.source) for s in result.settings] == [
        ('shadowed by /etc/sysctl.d/99-x.conf', 'task option'), ('would write /f', 'a sizing rule')]


def test_describe_os_error_words():
    assert r.describe_os_error(r.HostError('writing /etc/x: disk full')) == 'writing /etc/x: disk full'
    assert r.describe_os_error(OSError(2, 'No such file or directory', '/etc/x')) == \
        '/etc/x: No such file or directory'
    assert r.describe_os_error(OSError(18, 'Invalid cross-device link', '/a', None, '/b')) == \
        '/a -> /b: Invalid cross-device link'
    assert r.describe_os_error(OSError('odd')) == 'the system refused an operation: odd'
