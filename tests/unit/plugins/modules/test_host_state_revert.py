# -*- coding: utf-8 -*-
"""The baseline a first apply keeps (engine/baseline.py) and host_state's state=revert (plans/revert.py).

Per kind, on a fake host: apply with the kind's module, revert with host_state, and the
tree is byte for byte what it was (files restored, files and folders that did not exist
removed), apart from the baseline's own folder; a second revert changes nothing; a revert
in check mode changes nothing and shows the diff.  A missing or corrupt baseline fails
naming the file, with nothing touched; the first value wins; a later apply starts afresh.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import json
import os
import stat

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline, journal, sysfs
from ansible_collections.dbhost.tuning.tests.unit.helpers import BASELINE_FOLDER, digest, put, read, records, with_defaults
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

pytestmark = pytest.mark.usefixtures('linux')

KEPT = '/var/lib/dbhost-tuning/baseline.json'
AIO = '/proc/sys/fs/aio-max-nr'
SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
THP = '/sys/kernel/mm/transparent_hugepage/enabled'

# (id, module, arguments on fake_host, the role whose root names the tree for the revert)
CASES = [
    ('kernel_params', 'kernel_params', dict(fake_host.BASELINE['kernel_params'],
                                            params={'kernel.sem': '250 32000 100 128', 'fs.aio-max-nr': 1048576})),
    ('hugepages', 'hugepages', fake_host.BASELINE['hugepages']),
    ('sysfs_attr', 'sysfs_attr', {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'madvise',
                                                 'kernel/mm/transparent_hugepage/defrag': 'never'}}),
    ('resource_limits', 'resource_limits', dict(fake_host.BASELINE['resource_limits'], service='postgresql',
                                                service_limits={'LimitMEMLOCK': 'infinity'})),
    ('block_queue', 'block_queue', fake_host.BASELINE['block_queue']),
    ('mount_options', 'mount_options', fake_host.BASELINE['mount_options']),
    ('db_parameter-postgresql', 'db_parameter', fake_host.BASELINE['db_parameter']),
    ('db_parameter-mysql', 'db_parameter', {'engine': 'mysql', 'path': fake_host.MYCNF,
                                            'params': {'innodb_flush_method': 'O_DIRECT'}}),
    ('db_parameter-oracle-pfile', 'db_parameter', {'engine': 'oracle', 'path': fake_host.PFILE,
                                                   'params': {'filesystemio_options': 'SETALL'}}),
    ('processor_set', 'processor_set', fake_host.BASELINE['processor_set']),
    ('kernel_cmdline', 'kernel_cmdline', fake_host.BASELINE['kernel_cmdline']),
]


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


@pytest.fixture(autouse=True)
def kernel_choices(monkeypatch):
    """A choice attribute written as the kernel takes it: the brackets move, the choices stay."""
    write = sysfs._write

    def kernel_write(path, data):
        shown = open(path).read().strip()
        if sysfs.is_choice(shown):
            choices = sysfs.parse_choice(shown)[0]
            value = data.decode('ascii').strip()
            data = (' '.join('[%s]' % choice if choice == value else choice for choice in choices) + '\n').encode()
        write(path, data)
    monkeypatch.setattr(sysfs, '_write', kernel_write)


def _host(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    # an older unit file for the processor_set and resource_limits drop-ins to extend
    put(root, '/etc/systemd/system/postgresql.service', '[Service]\nExecStart=/usr/bin/postgres\n')
    return root


def revert(run_module, root, check_mode=False, diff=False):
    return run_module(_module('host_state'), {'state': 'revert', 'roles': ['kernel_params'],
                                              'inputs': {'kernel_params': {'kernel_params_root': root}}},
                      check_mode=check_mode, diff=diff)


def kept(root):
    return json.loads(read(root, KEPT))


@pytest.mark.parametrize('name,module,args', CASES, ids=[case[0] for case in CASES])
def test_apply_then_revert_gives_back_the_tree_byte_for_byte(tmp_path, run_module, name, module, args):
    root = _host(tmp_path)
    original = digest(root, skip=BASELINE_FOLDER)
    applied = run_module(_module(module), dict(args, root=root))
    assert not applied.get('failed'), applied
    assert applied['changed'] is True, applied
    assert digest(root, skip=BASELINE_FOLDER) != original
    assert kept(root)['state'] == 'applied'

    done = revert(run_module, root)
    assert not done.get('failed'), done
    assert done['changed'] is True
    assert digest(root, skip=BASELINE_FOLDER) == original, name
    statuses = set(record['status'] for record in done['settings'])
    assert statuses <= set(['changed', 'pending_restart', 'pending_reboot', 'ok']), done['settings']
    assert kept(root)['state'] == 'reverted'

    tree = digest(root)
    again = revert(run_module, root)
    assert again['changed'] is False, again
    assert set(record['status'] for record in again['settings']) == set(['ok'])
    assert digest(root) == tree


def test_the_baseline_holds_what_was_there_before_the_first_write(tmp_path, run_module):
    root = _host(tmp_path)
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    data = kept(root)
    assert data['schema'] == baseline.SCHEMA and data['state'] == 'applied'
    assert data['live'] == {AIO: dict(data['live'][AIO], value='65536', kind='kernel_params')}
    entry = data['files'][SYSCTL_FILE]
    assert entry['existed'] is False and entry['folders'] == [] and entry['kind'] == 'kernel_params'
    assert stat.S_IMODE(os.stat(os.path.join(root, KEPT.lstrip('/'))).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.join(root, 'var/lib/dbhost-tuning')).st_mode) == 0o700


def test_a_file_replaced_is_kept_whole_with_its_mode(tmp_path, run_module):
    root = _host(tmp_path)
    fstab = os.path.join(root, 'etc/fstab')
    os.chmod(fstab, 0o640)
    before = read(root, '/etc/fstab')
    run_module(_module('mount_options'), dict(fake_host.BASELINE['mount_options'], root=root))
    entry = kept(root)['files']['/etc/fstab']
    assert entry['existed'] is True and entry['content'] == before and entry['mode'] == 0o640
    assert entry['kind'] == 'mount_options'


def test_folders_made_are_kept_and_removed_again(tmp_path, run_module):
    root = _host(tmp_path)
    args = {'root': root, 'limits': [], 'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': 'infinity'}}
    run_module(_module('resource_limits'), args)
    dropin = '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf'
    assert kept(root)['files'][dropin]['folders'] == ['/etc/systemd/system/postgresql.service.d']
    done = revert(run_module, root)
    record = records(done)[dropin]
    assert record['status'] == 'pending_restart' and done['restart_required'] is True
    assert 'postgresql.service takes it at its next restart' in record['detail']
    assert not os.path.exists(os.path.join(root, 'etc/systemd/system/postgresql.service.d'))


def test_check_mode_apply_keeps_no_baseline(tmp_path, run_module):
    root = _host(tmp_path)
    before = digest(root)
    result = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root), check_mode=True)
    assert result['changed'] is True
    assert digest(root) == before


def test_the_first_value_wins(tmp_path, run_module):
    root = _host(tmp_path)
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    first = kept(root)
    second = run_module(_module('kernel_params'), dict(root=root, params={'fs.aio-max-nr': 2097152}))
    assert second['changed'] is True and read(root, AIO).strip() == '2097152'
    now = kept(root)
    # the values before stay the first ones; each write is added to the file's writes
    assert now['live'] == first['live']
    entry, was = now['files'][SYSCTL_FILE], first['files'][SYSCTL_FILE]
    assert dict(entry, writes=None) == dict(was, writes=None)
    assert entry['writes'][:1] == was['writes'] and len(entry['writes']) == 2
    assert entry['writes'][1]['before'] == was['writes'][0]['after']
    assert entry['writes'][1]['after'] == read(root, SYSCTL_FILE)
    revert(run_module, root)
    assert read(root, AIO) == '65536\n'
    assert not os.path.exists(os.path.join(root, SYSCTL_FILE.lstrip('/')))


def test_an_apply_after_a_revert_keeps_a_new_baseline(tmp_path, run_module):
    root = _host(tmp_path)
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    revert(run_module, root)
    put(root, AIO, '70000\n')   # changed by hand after the revert
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    data = kept(root)
    assert data['state'] == 'applied' and data['live'][AIO]['value'] == '70000'
    revert(run_module, root)
    assert read(root, AIO) == '70000\n'


def test_check_mode_revert_changes_nothing_and_shows_the_diff(tmp_path, run_module):
    root = _host(tmp_path)
    run_module(_module('mount_options'), dict(fake_host.BASELINE['mount_options'], root=root))
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    tree = digest(root)
    result = revert(run_module, root, check_mode=True, diff=True)
    assert not result.get('failed'), result
    assert result['changed'] is True
    assert digest(root) == tree
    found = records(result)
    assert found[AIO]['status'] == 'drift' and found[AIO]['live'] == '1048576' and found[AIO]['desired'] == '65536'
    assert found[SYSCTL_FILE]['status'] == 'drift' and found[SYSCTL_FILE]['desired'] == 'absent'
    diffs = dict((diff['before_header'], diff) for diff in result['diff'])
    assert diffs[SYSCTL_FILE]['after'] == '' and 'fs.aio-max-nr' in diffs[SYSCTL_FILE]['before']
    assert 'defaults,noatime' in diffs['/etc/fstab']['before'] and 'noatime' not in diffs['/etc/fstab']['after']


def test_a_drift_check_against_the_old_values_is_clean_after_a_revert(tmp_path, run_module):
    root = _host(tmp_path)
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    revert(run_module, root)
    check = run_module(_module('kernel_params'), {'root': root, 'persist': False,
                                                  'params': {'kernel.shmmni': 4096, 'fs.aio-max-nr': 65536}},
                       check_mode=True)
    assert check['changed'] is False and set(r['status'] for r in check['settings']) == set(['ok'])


def test_a_missing_baseline_is_a_clear_error_and_nothing_is_touched(tmp_path, run_module):
    root = _host(tmp_path)
    before = digest(root)
    result = revert(run_module, root)
    assert result.get('failed') and 'no baseline at %s' % os.path.join(root, KEPT.lstrip('/')) in result['msg']
    assert 'nothing was changed' in result['msg']
    assert digest(root) == before


@pytest.mark.parametrize('text,words', [
    ('{"schema": 1, "state": "applied", "files": {', 'is not valid JSON'),
    ('[]', 'is not a JSON object'),
    ('{"schema": 9, "state": "applied", "files": {}, "live": {}, "unsupported": {}}', 'has schema 9'),
    ('{"schema": 1, "state": "applied", "files": {"/etc/x": {"existed": true}}, "live": {}, "unsupported": {}}',
     'files /etc/x existed but has no content'),
], ids=['torn', 'list', 'schema', 'entry'])
def test_a_corrupt_baseline_is_a_clear_error_and_nothing_is_touched(tmp_path, run_module, text, words):
    root = _host(tmp_path)
    run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    put(root, KEPT, text)
    before = digest(root)
    for result in (revert(run_module, root),
                   run_module(_module('kernel_params'), dict(root=root, params={'fs.aio-max-nr': 2097152}))):
        assert result.get('failed'), result
        assert 'the baseline %s' % os.path.join(root, KEPT.lstrip('/')) in result['msg'] and words in result['msg']
        assert digest(root) == before


def test_an_unreadable_baseline_is_a_clear_error(tmp_path, run_module):
    root = _host(tmp_path)
    os.makedirs(os.path.join(root, KEPT.lstrip('/')))
    before = digest(root)
    result = revert(run_module, root)
    assert result.get('failed') and 'cannot be read' in result['msg'] and KEPT in result['msg']
    assert digest(root) == before


def test_what_cannot_be_put_back_is_reported_unsupported(tmp_path, run_module):
    root = _host(tmp_path)
    baseline.begin([root])
    try:
        journal.before('unsupported', 'mount /u01', root=root, detail='remounted with defaults,noatime')
    finally:
        baseline.end()
    result = revert(run_module, root)
    assert not result.get('failed'), result
    record = records(result)['mount /u01']
    assert record['status'] == 'unsupported' and 'remounted with defaults,noatime' in record['detail']
    assert result['changed'] is False


def test_host_state_keeps_the_baseline_of_every_plan(tmp_path, run_module):
    root = _host(tmp_path)
    inputs = {'kernel_params': {'kernel_params_root': root, 'kernel_params_profile': 'none',
                                'kernel_params_settings': {'fs.aio-max-nr': 1048576}}}
    result = run_module(_module('host_state'), {'roles': ['kernel_params'], 'inputs': with_defaults(inputs)})
    assert not result.get('failed'), result
    data = kept(root)
    assert data['live'][AIO]['value'] == '65536' and data['files'][SYSCTL_FILE]['existed'] is False


def test_the_reloads_on_the_running_system(monkeypatch):
    from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import revert as revert_plan
    ran = []
    monkeypatch.setattr(systemd, 'systemd_running', lambda root: True)

    def runner(argv):
        ran.append(argv)
        return (1 if 'daemon-reload' in argv else 0), '', 'no bus'
    plan = revert_plan.Revert(['/'], runner=runner, bin_path=lambda name, required=False: '/usr/bin/%s' % name)
    done = {'reloads': [], 'reload_errors': []}
    plan._reload(set([revert_plan.UDEV, revert_plan.UNITS]), done)
    assert ran == [['/usr/bin/udevadm', 'control', '--reload'], ['systemctl', 'daemon-reload']]
    assert done['reload_errors'] == ['systemctl daemon-reload failed (no bus)']
    assert revert_plan.consequence('/etc/udev/rules.d/61-dbhost-tuning.rules')[0] == revert_plan.UDEV
    assert revert_plan.consequence('/etc/fstab')[:2] == (revert_plan.UNITS, 'pending_reboot')
    assert revert_plan.consequence('/etc/sysctl.d/90-dbhost-tuning.conf') == (None, None, '')


@pytest.mark.parametrize('argv,changes', [
    (['psrset', '-c', '2', '3'], True), (['psrset', '-b', '1', '42'], True), (['pooladm', '-c'], True),
    (['poolcfg', '-c', 'create pool pg'], True), (['projmod', '-s', '-K', 'project.pool=pg', 'user.oracle'], True),
    (['psrset', '-i'], False), (['psrset', '-q', '42'], False), (['poolcfg', '-dc', 'info'], False), (['pooladm'], False),
    (['psrinfo'], False),
])
def test_sunos_commands_that_change_the_host_are_noted_for_a_revert(argv, changes):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import sunos
    assert sunos._changes_the_host(argv) is changes


def test_a_remount_is_kept_as_one_a_revert_cannot_undo(tmp_path, run_module):
    from ansible_collections.dbhost.tuning.tests.unit.plugins.module_utils.plans.mounts import test_mounts
    tree = str(tmp_path)
    put(tree, '/etc/fstab', test_mounts.FSTAB)
    put(tree, '/proc/self/mountinfo', test_mounts.MOUNTINFO)
    fstab = read(tree, '/etc/fstab')
    baseline.begin([tree])
    try:
        plan = test_mounts.mount_plan(tree, [{'path': '/u03', 'present': ['noatime']}],
                                      runner=test_mounts.FakeMount(tree), live_root=tree)
        plan.run()
    finally:
        baseline.end()
    assert read(tree, '/etc/fstab') != fstab
    note = kept(tree)['unsupported']['mount /u03']
    assert 'remounted with rw,noatime,data=ordered (before: rw,relatime' in note['detail'] and note['kind'] == 'mount_options'
    done = revert(run_module, tree)
    assert read(tree, '/etc/fstab') == fstab
    found = records(done)
    assert found['/etc/fstab']['status'] == 'pending_reboot' and done['reboot_required'] is True
    assert found['mount /u03']['status'] == 'unsupported'
    assert found['mount /u03']['detail'].startswith('a revert cannot put this back: remounted with')


def test_huge_pages_a_database_still_holds_wait_for_its_restart(tmp_path, run_module, monkeypatch):
    # The VM lab's finding: PostgreSQL holds its huge pages, so the kernel keeps the pool at
    # the pages in use when 0 is written back. That is no failure: the pool's sources are put
    # back and the pages are freed when the database releases them (a restart, or the boot).
    root = _host(tmp_path)
    applied = run_module(_module('hugepages'), dict(fake_host.BASELINE['hugepages'], root=root))
    assert not applied.get('failed'), applied
    pool = fake_host.HUGE_2M + '/nr_hugepages'
    put(root, fake_host.HUGE_2M + '/free_hugepages', '4\n')     # of the 12 pages the kernel keeps, 8 in use
    write = sysfs._write

    def held(path, data):
        if path.endswith(pool):
            data = str(max(int(data.decode().strip() or 0), 12)).encode() + b'\n'
        write(path, data)
    monkeypatch.setattr(sysfs, '_write', held)

    done = revert(run_module, root)
    assert not done.get('failed'), done
    record = next(entry for entry in done['settings'] if entry['name'] == pool)
    assert record['status'] == 'pending_restart' and record['live'] == '12', record
    assert 'the kernel keeps 12 pages when 0 is written (8 of them in use)' in record['detail']
    assert kept(root)['state'] == 'reverted'
    assert not os.path.exists(os.path.join(root, 'etc/sysctl.d/90-dbhost-tuning-hugepages.conf'))

    again = revert(run_module, root)
    assert not again.get('failed') and again['changed'] is False, again
    assert [entry['status'] for entry in again['settings'] if entry['name'] == pool] == ['pending_restart']


def test_a_folder_made_for_two_drop_ins_is_removed_by_the_first_revert(tmp_path, run_module):
    # The VM lab's finding: the processor set's and the memlock drop-in share the folder the
    # first of them made; the revert removes both files and then the folder, not on a second run.
    root = _host(tmp_path)
    original = digest(root, skip=BASELINE_FOLDER)
    for module, args in (('processor_set', fake_host.BASELINE['processor_set']),
                         ('resource_limits', {'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': 'infinity'}})):
        applied = run_module(_module(module), dict(args, root=root))
        assert not applied.get('failed') and applied['changed'], applied
    folder = os.path.join(root, 'etc/systemd/system/postgresql.service.d')
    assert len(os.listdir(folder)) == 2

    done = revert(run_module, root)
    assert not done.get('failed'), done
    assert not os.path.exists(folder)
    assert digest(root, skip=BASELINE_FOLDER) == original
    again = revert(run_module, root)
    assert again['changed'] is False, again


# A baseline kept before its entries named kinds by their registry name: each names its plan's class
# (KernelParams, DbParameter, MountOptions).  Made by applying fake_host.BASELINE's kernel_params, db_parameter
# and mount_options calls, in that order, on fake_host.build(); uid and gid left out (an entry may lack them).
CLASS_NAMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'baseline_class_names.json')


def test_a_baseline_that_names_plan_classes_is_reverted_as_one_that_names_kinds(tmp_path, run_module):
    with open(CLASS_NAMES) as handle:
        old = handle.read()
    assert set(entry['kind'] for section in baseline.SECTIONS for entry in json.loads(old)[section].values()) == \
        set(['KernelParams', 'DbParameter', 'MountOptions'])
    reverted, trees = [], []
    for name, stored in (('now', None), ('before', old)):
        root = _host(tmp_path / name)
        original = digest(root, skip=BASELINE_FOLDER)
        for module in ('kernel_params', 'db_parameter', 'mount_options'):
            assert run_module(_module(module), dict(fake_host.BASELINE[module], root=root))['changed'] is True
        assert set(entry['kind'] for entry in kept(root)['files'].values()) == \
            set(['kernel_params', 'db_parameter', 'mount_options'])
        if stored is not None:
            put(root, KEPT, stored)
        done = revert(run_module, root)
        assert not done.get('failed'), done
        assert digest(root, skip=BASELINE_FOLDER) == original, name
        reverted.append(json.loads(json.dumps(done).replace(root, 'ROOT')))
        trees.append(root)
    # the database's file waits for its restart (db_parameter's revert_waits), read from the class name too
    found = records(reverted[1])
    assert found[fake_host.PGCONF]['status'] == 'pending_restart' and reverted[1]['restart_required'] is True
    assert 'the database server reads it at its next start' in found[fake_host.PGCONF]['detail']
    assert found['/etc/fstab']['status'] == 'pending_reboot'
    assert reverted[0] == reverted[1]
    assert kept(trees[1])['state'] == 'reverted'
