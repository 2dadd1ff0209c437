# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BlockQueue against a fake /sys/block tree (tests/unit/fixtures/block/tree.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue.devices import Tree, parse_mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.compare import same_value
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.tests.unit.fixtures.block import fake_sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan, records

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'fixtures', 'block')

RULES = '/etc/udev/rules.d/61-dbhost-tuning.rules'


def _cases(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return yaml.safe_load(handle)


@pytest.fixture(autouse=True)
def four_k_pages(monkeypatch):
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)


@pytest.fixture
def root(tmp_path):
    fake_sysfs.build(str(tmp_path))
    return str(tmp_path)


def queue(root, disk, name):
    with open(os.path.join(root, 'sys', 'block', disk, 'queue', name)) as handle:
        return handle.read().strip()


def set_queue(root, disk, name, value):
    with open(os.path.join(root, 'sys', 'block', disk, 'queue', name), 'w') as handle:
        handle.write(value + '\n')


def rules(root):
    path = os.path.join(root, RULES.lstrip('/'))
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return handle.read()


def plan(root, devices, kernel=None, check_mode=False, runner=None, bin_path=None, **options):
    return make_plan('block_queue', dict(options, devices=devices, root=root),
                     registry.Context(check_mode, runner, bin_path, system_name='Linux'),
                     writer=kernel or fake_sysfs.FakeKernel())


# ---------------------------------------------------------------- selection
@pytest.mark.parametrize('case', _cases('selection.yml'), ids=lambda case: case['id'])
def test_selection(root, case):
    devices = [dict(item, attributes=item.get('attributes', {'rq_affinity': 1})) for item in case['devices']]
    run = plan(root, devices, allow_empty=case.get('allow_empty', False))
    before = fake_sysfs.snapshot(root)
    if 'error' in case:
        with pytest.raises(InputError) as caught:
            run.run()
        assert case['error'] in str(caught.value)
        assert fake_sysfs.snapshot(root) == before
        return
    run.validate()
    chosen = run.select(Tree(root))
    assert sorted(chosen) == sorted(case['selected'])


def test_selection_notes_say_how_a_device_was_reached(root):
    run = plan(root, [{'mount': '/u02', 'slaves': True, 'attributes': {'rq_affinity': 1}},
                      {'name': 'sda2', 'attributes': {'rq_affinity': 1}}])
    run.validate()
    chosen = run.select(Tree(root))
    assert chosen['dm-1']['notes'] == ['selected as mounted at /u02 from dm-1']
    assert chosen['sdb']['notes'] == ['selected as a device under dm-0']
    assert chosen['sda']['notes'] == ['selected as partition sda2 of sda']


def test_later_entry_overrides_earlier_one_and_says_so(root):
    result = plan(root, [{'name': 'sd*', 'attributes': {'read_ahead_kb': 128, 'rq_affinity': 2}},
                         {'name': 'sda', 'attributes': {'read_ahead_kb': 4096}}]).run()
    by_name = records(result)
    assert by_name['sda/queue/read_ahead_kb'].desired == '4096'
    assert 'devices[1] overrides devices[0] for read_ahead_kb' in by_name['sda/queue/read_ahead_kb'].detail
    assert by_name['sdd/queue/read_ahead_kb'].desired == '128'
    assert queue(root, 'sda', 'read_ahead_kb') == '4096' and queue(root, 'sde', 'read_ahead_kb') == '128'


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize('case', _cases('validation.yml'), ids=lambda case: '%s %s' % (case['device'], case['attributes']))
def test_values_refused_before_anything_is_written(root, case):
    kernel = fake_sysfs.FakeKernel()
    # A valid attribute on another device first: nothing at all may be written.
    devices = [{'name': 'sdb', 'attributes': {'rq_affinity': 2}}, {'name': case['device'], 'attributes': case['attributes']}]
    devices.reverse()
    before = fake_sysfs.snapshot(root)
    with pytest.raises(InputError) as caught:
        plan(root, devices, kernel=kernel).run()
    assert case['error'] in str(caught.value)
    assert kernel.writes == []
    assert fake_sysfs.snapshot(root) == before


@pytest.mark.parametrize('kwargs,error', [
    ({'file': '/etc/udev/61-x.rules'}, "file '/etc/udev/61-x.rules' is not read by udev"),
    ({'file': '/etc/udev/rules.d/61-x.conf'}, 'is not read by udev'),
    ({'file': '/etc/udev/rules.d/../61-x.rules'}, 'must not contain ".."'),
    ({'apply': False, 'persist': False}, 'there is nothing to do'),
])
def test_options_refused(root, kwargs, error):
    with pytest.raises(InputError) as caught:
        plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], **kwargs).run()
    assert error in str(caught.value)


def test_devices_must_be_a_list(root):
    with pytest.raises(InputError, match='devices must be a non-empty list'):
        plan(root, []).run()
    with pytest.raises(InputError, match=r'devices\[0\] must be a dict'):
        plan(root, ['sda']).run()


def test_missing_sysfs_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match='no .*/sys/block'):
        plan(str(tmp_path), [{'name': 'sda', 'attributes': {'rq_affinity': 2}}]).run()


def test_multipath_paths_with_different_values_are_refused(root):
    with pytest.raises(InputError, match='sdb and sdc share the udev key ATTRS{wwid}=="naa.60002ac'):
        plan(root, [{'name': 'sdb', 'attributes': {'rq_affinity': 2}},
                    {'name': 'sdc', 'attributes': {'rq_affinity': 1}}]).run()


# ---------------------------------------------------------------- apply, idempotence, check mode
DATA_DISKS = [
    {'name': ['sd*', 'nvme*n1', 'vdb', 'loop0'], 'attributes': {'rq_affinity': 2, 'read_ahead_kb': 4096}},
    {'name': 'nvme0n1', 'attributes': {'scheduler': 'mq-deadline', 'nr_requests': 64}},
    {'mount': '/u02', 'slaves': True, 'attributes': {'rq_affinity': 2}},
]

COMMON = 'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", '
DATA = 'ATTR{queue/read_ahead_kb}="4096", ATTR{queue/rq_affinity}="2"'
EXPECTED_RULES = (
    '# Managed by dbhost.tuning.block_queue: block queue attributes of selected devices.\n'
    '# Rules are keyed by a stable identifier (device-mapper UUID, WWID, serial, loop backing file);\n'
    '# KERNEL=="name" only where a device has none. Local edits to managed attributes are overwritten.\n'
    + COMMON + 'ATTR{dm/uuid}=="mpath-360002ac0000000000000000a00012345", ATTR{queue/rq_affinity}="2"\n'
    + COMMON + 'ATTR{dm/uuid}=="LVM-Vx3kT9qWe1fY2gH4jK5lM6nB7vC8xZ0aQ1wE2rT3yU4iO5pA6sD7fG8hJ9kL0zX1", '
               'ATTR{queue/rq_affinity}="2"\n'
    + COMMON + 'KERNEL=="loop*", ATTR{loop/backing_file}=="/var/tmp/dbhost-bq/a.img", ' + DATA + '\n'
    + COMMON + 'ATTRS{wwid}=="eui.0025388b91c2d4e1", ATTR{queue/scheduler}="mq-deadline", '
               'ATTR{queue/nr_requests}="64", ' + DATA + '\n'
    + COMMON + 'ATTRS{wwid}=="naa.5000c500a1b2c3d4", ' + DATA + '\n'
    + COMMON + 'ATTRS{wwid}=="naa.60002ac0000000000000000a00012345", ' + DATA + '\n'
    + COMMON + 'KERNEL=="sdd", ' + DATA + '\n'
    + COMMON + 'ENV{ID_WWN_WITH_EXTENSION}=="0x50014ee2b5e6f7a8", ' + DATA + '\n'
    + COMMON + 'ATTR{serial}=="dbdata01", ' + DATA + '\n')


def test_apply_writes_live_reads_back_and_persists_exact_rules(root):
    kernel = fake_sysfs.FakeKernel()
    untouched = fake_sysfs.snapshot(os.path.join(root, 'sys', 'devices', 'pci0000:00', '0000:00:1f.2', 'host0'))
    result = plan(root, DATA_DISKS, kernel=kernel).run()
    assert result.changed
    assert rules(root) == EXPECTED_RULES
    by_name = records(result)
    assert set(s.status for s in result.settings) == {'changed'}
    for disk in ('sda', 'sdb', 'sdc', 'sdd', 'sde', 'nvme0n1', 'vdb', 'loop0', 'dm-0', 'dm-1'):
        assert queue(root, disk, 'rq_affinity') == '2'
        record = by_name['%s/queue/rq_affinity' % disk]
        assert (record.desired, record.live, record.persisted, record.target) == ('2', '2', '2', RULES)
    assert queue(root, 'sda', 'read_ahead_kb') == '4096'
    assert queue(root, 'dm-1', 'read_ahead_kb') == '128'  # not asked for dm-1
    # The scheduler went first, so the reset of nr_requests it causes did not undo our value.
    assert queue(root, 'nvme0n1', 'scheduler') == 'none [mq-deadline] kyber bfq'
    assert queue(root, 'nvme0n1', 'nr_requests') == '64'
    nvme_writes = [os.path.basename(path) for path, value in kernel.writes if '/nvme0n1/' in path]
    assert nvme_writes == ['scheduler', 'nr_requests', 'read_ahead_kb', 'rq_affinity']
    # Devices that were not selected are not touched.
    assert queue(root, 'loop1', 'rq_affinity') == '1'
    assert not [path for path, value in kernel.writes if '/loop1/' in path]
    assert 'keyed by KERNEL=="sdd"; warning: no stable identifier' in by_name['sdd/queue/rq_affinity'].detail
    assert "was '1'" in by_name['sda/queue/rq_affinity'].detail
    assert result.as_dict()['diff'][0]['after'] == EXPECTED_RULES
    assert untouched != fake_sysfs.snapshot(os.path.join(root, 'sys', 'devices', 'pci0000:00', '0000:00:1f.2', 'host0'))


def test_second_run_is_idempotent(root):
    plan(root, DATA_DISKS).run()
    kernel = fake_sysfs.FakeKernel()
    before = fake_sysfs.snapshot(root)
    result = plan(root, DATA_DISKS, kernel=kernel).run()
    assert not result.changed
    assert set(s.status for s in result.settings) == {'ok'}
    assert kernel.writes == []
    assert fake_sysfs.snapshot(root) == before
    assert 'diff' not in result.as_dict()


def test_check_mode_changes_nothing_and_reports_drift(root):
    kernel = fake_sysfs.FakeKernel()
    before = fake_sysfs.snapshot(root)
    result = plan(root, DATA_DISKS, kernel=kernel, check_mode=True).run()
    assert fake_sysfs.snapshot(root) == before
    assert kernel.writes == []
    assert result.changed
    assert set(s.status for s in result.settings) == {'drift'}
    record = records(result)['sda/queue/rq_affinity']
    assert (record.live, record.persisted) == ('1', None)
    assert 'would write ' + RULES in record.detail
    assert result.as_dict()['diff'][0]['after'] == EXPECTED_RULES


def test_live_fixed_by_hand_or_rule_edited_is_drift(root):
    plan(root, DATA_DISKS).run()
    set_queue(root, 'sda', 'rq_affinity', '0')
    path = os.path.join(root, RULES.lstrip('/'))
    with open(path) as handle:
        text = handle.read()
    with open(path, 'w') as handle:
        handle.write(text.replace('ATTR{serial}=="dbdata01", ATTR{queue/read_ahead_kb}="4096"',
                                  'ATTR{serial}=="dbdata01", ATTR{queue/read_ahead_kb}="128"'))
    result = plan(root, DATA_DISKS, check_mode=True).run()
    drifted = dict((s.name, s) for s in result.drifted_settings())
    assert sorted(drifted) == ['sda/queue/rq_affinity', 'vdb/queue/read_ahead_kb']
    assert (drifted['sda/queue/rq_affinity'].live, drifted['sda/queue/rq_affinity'].persisted) == ('0', '2')
    assert (drifted['vdb/queue/read_ahead_kb'].live, drifted['vdb/queue/read_ahead_kb'].persisted) == ('4096', '128')
    # Applying repairs both sides.
    result = plan(root, DATA_DISKS).run()
    assert sorted(s.name for s in result.settings if s.status == 'changed') == sorted(drifted)
    assert queue(root, 'sda', 'rq_affinity') == '2'
    assert rules(root) == EXPECTED_RULES


def test_existing_file_keeps_comments_other_rules_and_mode(root):
    path = os.path.join(root, RULES.lstrip('/'))
    existing = ('# site-local rules kept by hand\n'
                'ACTION=="add", SUBSYSTEM=="block", KERNEL=="sr0", ATTR{queue/read_ahead_kb}="0"\n'
                'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ATTRS{wwid}=="naa.5000c500a1b2c3d4", '
                'ATTR{queue/rq_affinity}="1", ATTR{device/timeout}="180"\n')
    with open(path, 'w') as handle:
        handle.write(existing)
    os.chmod(path, 0o640)
    plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2, 'scheduler': 'none'}}]).run()
    assert rules(root) == (
        '# site-local rules kept by hand\n'
        'ACTION=="add", SUBSYSTEM=="block", KERNEL=="sr0", ATTR{queue/read_ahead_kb}="0"\n'
        'ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ATTRS{wwid}=="naa.5000c500a1b2c3d4", '
        'ATTR{queue/scheduler}="none", ATTR{queue/rq_affinity}="2", ATTR{device/timeout}="180"\n')
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_backup_keeps_the_old_file(root):
    path = os.path.join(root, RULES.lstrip('/'))
    with open(path, 'w') as handle:
        handle.write('# old\n')
    run = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], backup=True)
    result = run.run()
    assert run.backup_file and os.path.exists(run.backup_file)
    assert result.as_dict()['backup_file'] == run.backup_file
    with open(run.backup_file) as handle:
        assert handle.read() == '# old\n'


def test_shared_multipath_rule_written_once(root):
    result = plan(root, [{'name': ['sdb', 'sdc'], 'attributes': {'rq_affinity': 2}}]).run()
    assert rules(root).count('naa.60002ac0000000000000000a00012345') == 1
    assert 'the same rule applies to sdc' in records(result)['sdb/queue/rq_affinity'].detail


def test_apply_false_only_persists(root):
    kernel = fake_sysfs.FakeKernel()
    result = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], kernel=kernel, apply=False).run()
    assert kernel.writes == [] and queue(root, 'sda', 'rq_affinity') == '1'
    record = records(result)['sda/queue/rq_affinity']
    assert (record.status, record.live, record.persisted) == ('changed', '1', '2')
    again = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], apply=False).run()
    assert not again.changed and records(again)['sda/queue/rq_affinity'].status == 'ok'


def test_persist_false_leaves_the_rules_alone(root):
    result = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], persist=False).run()
    assert rules(root) is None and queue(root, 'sda', 'rq_affinity') == '2'
    record = records(result)['sda/queue/rq_affinity']
    assert (record.status, record.target) == ('changed', '/sys/block/sda/queue/rq_affinity')


def test_kernel_refusal_fails_that_record_only_and_is_not_persisted(root):
    kernel = fake_sysfs.FakeKernel(refuse={'nr_requests': 1023})
    run = plan(root, [{'name': ['sda', 'sdb'], 'attributes': {'nr_requests': 2048, 'rq_affinity': 2}}], kernel=kernel)
    result = run.run()
    by_name = records(result)
    assert by_name['sda/queue/nr_requests'].status == 'failed'
    assert 'Invalid argument' in by_name['sda/queue/nr_requests'].detail
    assert by_name['sda/queue/rq_affinity'].status == 'changed'
    assert 'nr_requests' not in rules(root)
    assert 'refused by the kernel: sda/queue/nr_requests' in run.failure_message(result)


def test_value_read_back_different_is_failed(root):
    def lazy_kernel(path, value):
        pass  # accepts the write and keeps the old value
    result = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], kernel=lazy_kernel).run()
    record = records(result)['sda/queue/rq_affinity']
    assert record.status == 'failed' and "wrote '2' but sda reads back '1'" in record.detail


def test_env_key_in_a_file_read_before_persistent_storage_warns(root):
    result = plan(root, [{'name': 'sde', 'attributes': {'rq_affinity': 2}}],
                  file='/etc/udev/rules.d/60-dbhost-tuning.rules').run()
    detail = records(result)['sde/queue/rq_affinity'].detail
    assert 'ID_WWN_WITH_EXTENSION is set by 60-persistent-storage.rules, which udev reads after 60-dbhost-tuning.rules' in detail


def test_devices_result_describes_identifiers(root):
    result = plan(root, [{'name': ['sda', 'loop0'], 'attributes': {'rq_affinity': 2}}]).run()
    devices = dict((d['name'], d) for d in result.as_dict()['devices'])
    assert devices['sda']['udev_key'] == 'ATTRS{wwid}=="naa.5000c500a1b2c3d4"'
    assert devices['sda']['udev_key_kind'] == 'wwid' and devices['sda']['rotational'] is True
    assert devices['sda']['model'] == 'ST4000NM0035' and devices['sda']['vendor'] == 'SEAGATE'
    assert devices['loop0']['udev_key_kind'] == 'backing_file'
    assert devices['loop0']['backing_file'] == '/var/tmp/dbhost-bq/a.img'


# ---------------------------------------------------------------- udev reload
class Recorder(object):
    def __init__(self, answers):
        self.calls = []
        self.answers = list(answers)

    def __call__(self, argv):
        self.calls.append(argv)
        return self.answers.pop(0)


def _udev(runner, bin_path, **options):
    """A plan of the running host (root /) with nothing selected: only its udev reload is called."""
    return make_plan('block_queue', dict(options, devices=[], root='/'), registry.Context(runner=runner, bin_path=bin_path))


def test_reload_and_trigger_only_the_selected_devices():
    runner = Recorder([(0, '', ''), (0, '', '')])
    run = _udev(runner, lambda name: '/usr/bin/' + name, trigger=True)
    note = run._reload(['sdb', 'sdc'])
    assert runner.calls == [['/usr/bin/udevadm', 'control', '--reload'],
                            ['/usr/bin/udevadm', 'trigger', '--action=change', '--subsystem-match=block',
                             '--sysname-match=sdb', '--sysname-match=sdc']]
    assert note['reloaded'] and note['triggered']


def test_reload_without_udevd_is_reported_not_failed():
    runner = Recorder([(1, '', 'Failed to send reload request: No such file or directory\n')])
    run = _udev(runner, lambda name: '/usr/bin/' + name)
    note = run._reload(['sda'])
    assert not note['reloaded'] and 'No such file or directory' in note['detail']


def test_reload_without_udevadm_is_reported():
    run = _udev(Recorder([]), lambda name: None)
    assert run._reload(['sda']) == {
        'reloaded': False, 'detail': 'udevadm not found: the rules apply from the next boot or udevd start'}


def test_no_reload_for_another_root(root):
    runner = Recorder([])
    result = plan(root, [{'name': 'sda', 'attributes': {'rq_affinity': 2}}], runner=runner,
                  bin_path=lambda name: '/usr/bin/udevadm').run()
    assert runner.calls == []
    assert result.as_dict()['udev']['reloaded'] is False


# ---------------------------------------------------------------- other platforms
@pytest.mark.parametrize('system,why', [('SunOS', 'SunOS has no per-device block queue attributes'),
                                        ('FreeBSD', 'FreeBSD has no per-device block queue attributes')])
def test_unsupported_platforms(tmp_path, system, why):
    run = make_plan('block_queue', dict(devices=[{'name': 'sd*', 'attributes': {'rq_affinity': 2, 'scheduler': 'none'}}],
                                        root=str(tmp_path)), registry.Context(system_name=system))
    result = run.run()
    assert [(s.name, s.status) for s in result.settings] == [
        ('name=sd*/queue/scheduler', 'unsupported'), ('name=sd*/queue/rq_affinity', 'unsupported')]
    assert all(why in s.detail for s in result.settings)
    assert not result.changed
    assert os.listdir(str(tmp_path)) == []


def test_unsupported_platform_still_validates_input(tmp_path):
    with pytest.raises(InputError, match='rq_affinity'):
        make_plan('block_queue', dict(devices=[{'name': 'sd*', 'attributes': {'rq_affinity': 5}}], root=str(tmp_path)),
                  registry.Context(system_name='SunOS')).run()


# ---------------------------------------------------------------- helpers
@pytest.mark.parametrize('actual,desired,same', [
    ('1', '1', True), ('01', '1', True), ('write  back', 'write back', True), ('none', 'None', False),
    (None, '1', False), ('-1', '-1', True)])
def test_same_value(actual, desired, same):
    assert same_value(actual, desired) is same


def test_parse_mountinfo_unescapes_spaces():
    text = '36 27 8:17 / /mnt/with\\040space rw - ext4 /dev/sdb1 rw\n'
    assert parse_mountinfo(text) == [('/mnt/with space', '8:17', '/dev/sdb1')]


def test_an_existing_path_on_the_root_file_system_selects_the_root_disk(root):
    os.makedirs(os.path.join(root, 'srv', 'pgdata'))
    run = plan(root, [{'mount': '/srv/pgdata', 'attributes': {'rq_affinity': 1}}])
    run.validate()
    chosen = run.select(Tree(root))
    assert sorted(chosen) == ['sda']
    assert chosen['sda']['notes'] == ['selected as mounted at / from sda1 (partition of sda)']
