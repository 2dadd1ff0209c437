# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/vm/verify.py on the evidence of a real run of the reboot scenario (recorded from
the VM lab: fixtures/vm/evidence.json), and on copies of it with one thing made wrong:
the judge must pass the real run and fail each wrong prediction or binding, naming it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib.util
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SPEC = importlib.util.spec_from_file_location('vm_verify', os.path.join(CHECKOUT, 'tests', 'vm', 'verify.py'))
verify = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(verify)


@pytest.fixture
def recorded():
    with open(os.path.join(HERE, '..', 'fixtures', 'vm', 'evidence.json')) as handle:
        data = json.load(handle)
    # JSON has no tuples: the scenario passes (file, value) pairs.
    data['expect']['shadowed'] = {name: tuple(pair) for name, pair in data['expect']['shadowed'].items()}
    return data


def judge(data):
    return verify.check(data['evidence'], data['expect'])


def record(records, name):
    return next(entry for entry in records if entry['name'] == name)


def test_the_recorded_run_passes(recorded):
    passed, failed = judge(recorded)
    assert failed == []
    assert len(passed) > 50


def test_reads_asks_for_every_pseudo_file_and_parameter(recorded):
    asked = verify.reads(recorded['evidence']['before'])
    assert '/proc/sys/vm/overcommit_ratio' in asked['files']
    assert '/sys/block/vdb/queue/scheduler' in asked['files']
    assert '/sys/kernel/mm/transparent_hugepage/enabled' in asked['files']
    assert asked['show'] == ['huge_pages', 'shared_buffers']


def failures(data):
    return '\n'.join(judge(data)[1])


def test_a_postgres_process_off_the_node_fails(recorded):
    recorded['evidence']['observed']['postgres_processes'][-1]['Cpus_allowed_list'] = '0-3'
    assert "Cpus_allowed_list / Mems_allowed_list: ('0-3', '1')" in failures(recorded)


def test_memory_not_bound_fails(recorded):
    for process in recorded['evidence']['observed']['postgres_processes']:
        process['Mems_allowed_list'] = '0-1'
    assert "('2-3', '0-1')" in failures(recorded)


def test_huge_pages_on_the_other_node_fail(recorded):
    huge = recorded['evidence']['observed']['postmaster_huge']
    huge['numa_maps'] = [line.replace('N1=', 'N0=') for line in huge['numa_maps']]
    assert "nodes its huge pages are on: ['N0']" in failures(recorded)


def test_postgres_without_huge_pages_fails(recorded):
    recorded['evidence']['observed']['postmaster_huge'] = {'smaps': [], 'numa_maps': []}
    assert 'postmaster smaps: 0 kB mapped in 2048 kB pages' in failures(recorded)


def test_a_pool_on_the_wrong_node_fails(recorded):
    nodes = recorded['evidence']['observed']['nodes']
    nodes['node0']['hugepages']['hugepages-2048kB']['nr'] = 73
    nodes['node1']['hugepages']['hugepages-2048kB']['nr'] = 0
    text = failures(recorded)
    assert 'node0 hugepages-2048kB after the reboot: 73 (wanted 0)' in text
    assert 'hugepages node1/hugepages-2048kB: persisted before the reboot = live after it: 0 (wanted 73)' in text


def test_a_wrong_prediction_fails(recorded):
    # The drift check said ours would win at boot; the system shows the other file's value.
    entry = record(recorded['evidence']['before'], 'vm.overcommit_ratio')
    entry.update(status='ok', persisted='90', detail='')
    text = failures(recorded)
    assert "kernel_params vm.overcommit_ratio: persisted before the reboot = live after it: '80' (wanted '90')" in text
    assert 'vm.overcommit_ratio: predicted shadowed by /etc/sysctl.d/99-zz-site.conf' in text


def test_a_shadowing_file_not_named_fails(recorded):
    record(recorded['evidence']['before'], 'postgres soft memlock')['detail'] = 'another file wins'
    assert 'postgres soft memlock: predicted shadowed by /etc/security/limits.d/99-site.conf' in failures(recorded)


def test_a_login_limit_other_than_predicted_fails(recorded):
    recorded['evidence']['login'] = {'soft': '149504', 'hard': '149504'}
    text = failures(recorded)
    assert "postgres soft memlock: observed after the reboot: '149504' (wanted '65536')" in text
    assert 'ulimit -Sl / -Hl of a postgres login' in text


def test_a_setting_lost_at_reboot_fails(recorded):
    files = recorded['evidence']['observed']['files']
    files['/sys/block/vdb/queue/read_ahead_kb'] = '128'
    text = failures(recorded)
    assert "block_queue vdb/queue/read_ahead_kb: persisted before the reboot = live after it: '128' (wanted '64')" in text


def test_a_mount_option_lost_fails(recorded):
    mount = recorded['evidence']['observed']['mounts']['/var/lib/postgresql']
    mount['options'] = ['rw', 'relatime']
    text = failures(recorded)
    assert '/var/lib/postgresql in /proc/mounts has noatime (rw,relatime)' in text
    assert "mount_options noatime: persisted before the reboot = live after it: 'not in /proc/mounts'" in text


def test_drift_after_the_reboot_fails(recorded):
    record(recorded['evidence']['after'], 'huge_pages')['status'] = 'drift'
    assert 'drift check after the reboot: the settings not clean' in failures(recorded)


def test_no_reboot_fails(recorded):
    evidence = recorded['evidence']
    evidence['observed']['boot_id'] = evidence['observed_before']['boot_id']
    assert 'the VM rebooted' in failures(recorded)


def test_a_record_of_a_kind_it_cannot_read_fails(recorded):
    unknown = copy.deepcopy(record(recorded['evidence']['before'], 'huge_pages'))
    unknown.update(kind='somethingnew', name='x')
    recorded['evidence']['before'].append(unknown)
    assert 'somethingnew x: no way to read it back from the system' in failures(recorded)


def test_service_memlock_fails(recorded):
    service = recorded['evidence']['observed']['service']['postgresql@15-main.service']
    service['LimitMEMLOCK'] = '8388608'
    assert "LimitMEMLOCK: persisted before the reboot = live after it: '8388608'" in failures(recorded)


def revert_evidence():
    """A revert round trip as snapshot.py reports it: one sysctl, one queue attribute, a file
    the tune replaced and one it created."""
    fstab = 'UUID=1 / ext4 defaults 0 1\n/dev/vdb /var/lib/postgresql ext4 defaults 0 2\n'
    made = {'existed': False, 'folders': ['/etc/systemd/system/pg.service.d']}
    baseline = {
        'schema': 1, 'state': 'applied',
        'files': {'/etc/fstab': {'existed': True, 'content': fstab, 'mode': 420},
                  '/etc/sysctl.d/90-dbhost-tuning.conf': {'existed': False, 'folders': []},
                  '/etc/systemd/system/pg.service.d/90-dbhost-tuning.conf': made},
        'live': {'/proc/sys/kernel/sem': {'value': '32000\t1024000000\t500\t32000'},
                 '/sys/block/vdb/queue/scheduler': {'value': '[mq-deadline] none'}}}
    untuned = {'live': {'/proc/sys/kernel/sem': '32000\t1024000000\t500\t32000\n',
                        '/sys/block/vdb/queue/scheduler': '[mq-deadline] none\n'}, 'baseline': None, 'files': {}}
    tuned = {'live': {'/proc/sys/kernel/sem': '250\t32000\t100\t128\n', '/sys/block/vdb/queue/scheduler': 'mq-deadline [none]\n'},
             'baseline': baseline, 'files': {}}
    reverted = {'live': dict(untuned['live']), 'baseline': dict(baseline, state='reverted'),
                'files': {'/etc/fstab': verify._digest(fstab), '/etc/sysctl.d/90-dbhost-tuning.conf': None,
                          '/etc/systemd/system/pg.service.d/90-dbhost-tuning.conf': None},
                'folders': {'/etc/systemd/system/pg.service.d': False}}
    return {'untuned': untuned, 'tuned': tuned, 'reverted': reverted, 'exit': 0, 'second_changed': 0}


def revert_failures(revert):
    checks = verify.Checks()
    verify.check_revert(checks, revert)
    return checks.failed


def test_a_revert_back_where_it_was_passes():
    assert revert_failures(revert_evidence()) == []


@pytest.mark.parametrize('spoil, named', [
    (lambda r: r['reverted']['live'].update({'/proc/sys/kernel/sem': '250 32000 100 128\n'}), '/proc/sys/kernel/sem after'),
    (lambda r: r['reverted']['live'].update({'/sys/block/vdb/queue/scheduler': 'mq-deadline [none]\n'}),
     '/sys/block/vdb/queue/scheduler after'),
    (lambda r: r['reverted']['files'].update({'/etc/sysctl.d/90-dbhost-tuning.conf': 'ab12'}),
     '/etc/sysctl.d/90-dbhost-tuning.conf after'),
    (lambda r: r['reverted']['files'].update({'/etc/fstab': verify._digest('UUID=1 / ext4 defaults 0 1\n')}),
     '/etc/fstab after'),
    (lambda r: r['tuned']['baseline']['live'].update({'/proc/sys/kernel/sem': {'value': '250 32000 100 128'}}),
     'the baseline kept'),
    (lambda r: r['reverted']['folders'].update({'/etc/systemd/system/pg.service.d': True}),
     '/etc/systemd/system/pg.service.d (made for'),
    (lambda r: r.update({'exit': 2}), 'revert.yml exit code'),
    (lambda r: r.update({'second_changed': 1}), 'a second revert.yml'),
])
def test_a_revert_that_left_something_fails_naming_it(spoil, named):
    revert = revert_evidence()
    spoil(revert)
    failed = revert_failures(revert)
    assert failed and any(named in line for line in failed), failed


def preview_evidence():
    """The revert's part of the evidence with a check-mode preview that agrees with the real run."""
    real = [{'name': '/etc/fstab', 'desired': 'as before tuning (120 bytes)', 'status': 'pending_reboot',
             'detail': 'restored; the mounts keep their options until they are mounted again (remount or reboot)'},
            {'name': '/proc/sys/vm/overcommit_memory', 'desired': '0', 'status': 'changed', 'detail': 'set back from 2'},
            {'name': 'mount /var/lib/postgresql', 'desired': None, 'status': 'unsupported',
             'detail': 'a revert cannot put this back: remounted'}]
    preview = [dict(record, status='drift' if record['status'] == 'changed' else record['status'],
                    detail=record['detail'] if record['status'] == 'unsupported' else 'would be ' + record['detail'])
               for record in real]
    return {'preview_exit': 0, 'preview': preview, 'records': real}


def preview_failures(revert):
    checks = verify.Checks()
    verify.check_revert_preview(checks, revert)
    return checks.failed


def test_a_preview_that_gave_the_real_records_passes():
    assert preview_failures(preview_evidence()) == []


@pytest.mark.parametrize('spoil, named', [
    # the finding of issue 43: the preview said drift where the real run then waited for a reboot
    (lambda r: r['preview'][0].update(status='drift'), '/etc/fstab: the check-mode preview'),
    (lambda r: r['preview'].pop(2), 'mount /var/lib/postgresql: the check-mode preview'),
    (lambda r: r['preview'][1].update(desired='2'), '/proc/sys/vm/overcommit_memory: the check-mode preview'),
    (lambda r: r['records'].append({'name': '/etc/security/limits.d/90-dbhost-tuning.conf', 'desired': 'absent',
                                    'status': 'pending_restart', 'detail': 'removed'}), 'limits.d/90-dbhost-tuning.conf'),
    (lambda r: r.update(preview_exit=2), 'revert.yml --check --diff exit code'),
    (lambda r: r.update(records=[], preview=[]), 'the revert has records'),
])
def test_a_preview_other_than_the_real_revert_fails_naming_the_record(spoil, named):
    revert = preview_evidence()
    spoil(revert)
    failed = preview_failures(revert)
    assert failed and any(named in line for line in failed), failed


def test_the_judge_runs_the_preview_check_when_the_evidence_has_one(recorded):
    recorded['evidence']['revert'] = dict(revert_evidence(), **preview_evidence())
    recorded['evidence']['revert']['preview'][0]['status'] = 'drift'
    passed, failed = judge(recorded)
    assert any('/etc/fstab: the check-mode preview' in line for line in failed), failed


def _effect_row(name, status):
    return {'kind': 'db_effect', 'name': name, 'status': status, 'live': '-', 'reason': None, 'persisted': None}


EFFECT_ROWS = ['postgresql@15-main.service %s' % what for what in (
    'shared memory in huge pages', 'huge page setting of the engine', 'locked memory', 'CPUs', 'memory nodes')]


def _with_effect(data):
    """The evidence with the effect phase's rows as a run that passes gives them."""
    for when in ('before', 'after'):
        data['evidence'][when].extend(_effect_row(name, 'ok') for name in EFFECT_ROWS)
    data['evidence']['effect'] = dict(
        (case, dict((name, {'status': status, 'live': 'the start, %s and the rest' % (live or '')})
                    for name, status, live in rows))
        for case, rows in _effect_phase().EXPECT.items())
    return data


def _effect_phase():
    return verify._effect_phase()   # pylint: disable=protected-access


def test_effect_phase_passes_with_the_right_statuses(recorded):
    passed, failed = judge(_with_effect(recorded))
    assert failed == []
    assert sum(1 for line in passed if line.startswith(('effect pg-', 'effect maria-'))) == 11


@pytest.mark.parametrize('case, name, status, live', [
    ('pg-try', 'postgresql@15-main.service shared memory in huge pages', 'ok', None),
    ('pg-try', 'postgresql@15-main.service huge page setting of the engine', 'drift', 'huge_pages = try, in huge'),
    ('pg-try', 'node1/hugepages-2048kB', 'drift', 'live differs'),
    ('maria-before', 'mariadb.service data files with O_DIRECT', 'drift', None),
    ('maria-large', 'mariadb.service huge page setting of the engine', 'ok', None),
    ('maria-forced', 'mariadb.service data files with O_DIRECT', 'ok', None)])
def test_effect_phase_fails_a_missed_fallback(recorded, case, name, status, live):
    data = _with_effect(recorded)
    row = data['evidence']['effect'][case][name]
    row['status'] = status
    if live:
        row['live'] = live
    failed = judge(data)[1]
    assert len(failed) == 1 and failed[0].startswith('effect %s: %s is ' % (case, name)), failed


def test_effect_phase_fails_a_false_alarm_on_the_tuned_instance(recorded):
    data = _with_effect(recorded)
    record(data['evidence']['after'], EFFECT_ROWS[2])['status'] = 'drift'
    failed = judge(data)[1]
    assert 'after the reboot: %s: \'drift\' (wanted \'ok\')' % EFFECT_ROWS[2] in failed
