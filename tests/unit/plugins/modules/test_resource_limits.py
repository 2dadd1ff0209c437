# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""resource_limits: limits.d, systemd drop-ins (with recorded systemctl output) and /etc/project."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import resource_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import resource_limits as plan_module
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import session_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd as _systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, make_plan, put, read, records

OURS = '/etc/security/limits.d/90-dbhost-tuning.conf'
DROPIN = '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf'
LIMITS_HEADER = session_limits.LIMITS_HEADER + '\n'
DROPIN_HEADER = plan_module.DROPIN_HEADER + '\n'
UNIT = '[Unit]\nDescription=PostgreSQL\n[Service]\nExecStart=/usr/bin/postgres\nLimitNOFILE=1024:524288\n'

# The kernel's layout (fs/proc/base.c, proc_pid_limits): each row padded to fixed columns.
PROC_LIMITS = ''.join('%-25s %-20s %-20s %-10s\n' % row for row in [
    ('Limit', 'Soft Limit', 'Hard Limit', 'Units'),
    ('Max open files', '1024', '524288', 'files'),
    ('Max locked memory', '8388608', '8388608', 'bytes'),
])


pytestmark = pytest.mark.usefixtures('linux')


def exists(root, path):
    return os.path.exists(os.path.join(root, path.lstrip('/')))


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/etc/security/limits.conf', '# defaults\n*  soft  core  0\n')
    os.makedirs(os.path.join(base, 'etc', 'security', 'limits.d'))
    put(base, '/lib/systemd/system/postgresql.service', UNIT)
    return base


LIMITS = [{'domain': 'postgres', 'type': '-', 'item': 'memlock', 'value': 'unlimited'},
          {'domain': '@dba', 'type': 'hard', 'item': 'nofile', 'value': 65536}]


# ------------------------------------------------------------------ limits.d
def test_limits_check_mode_changes_nothing(root, run_module):
    before = digest(root)
    result = run_module(resource_limits, {'limits': LIMITS, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before and result['changed'] is True
    assert [s['status'] for s in result['settings']] == ['drift', 'drift']
    assert result['diff'][0]['after'] == (LIMITS_HEADER + 'postgres        -     memlock    unlimited\n'
                                          '@dba            hard  nofile     65536\n')


def test_limits_apply_and_idempotent(root, run_module):
    result = run_module(resource_limits, {'limits': LIMITS, 'root': root})
    assert result['changed'] is True
    rec = records(result)
    assert rec['postgres - memlock']['status'] == 'changed'
    assert rec['postgres - memlock']['persisted'] == 'unlimited'
    assert rec['postgres - memlock']['live'] is None
    assert 'running sessions are not read' in rec['postgres - memlock']['detail']
    again = run_module(resource_limits, {'limits': LIMITS, 'root': root})
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok', 'ok']


def test_limits_keep_comments_and_fix_split_soft_hard(root, run_module):
    put(root, OURS, '# mine\npostgres soft memlock 64\n* hard nproc 100 # keep\npostgres hard memlock 64\n')
    run_module(resource_limits, {'limits': LIMITS[:1], 'root': root})
    assert read(root, OURS) == '# mine\n* hard nproc 100 # keep\npostgres        -     memlock    unlimited\n'


def test_limits_same_value_spelled_differently_is_ok(root, run_module):
    put(root, OURS, 'postgres - memlock -1\n')
    result = run_module(resource_limits, {'limits': [dict(LIMITS[0], value='infinity')], 'root': root})
    assert result['changed'] is False and result['settings'][0]['status'] == 'ok'


def test_limits_later_file_shadows(root, run_module):
    put(root, '/etc/security/limits.d/99-vendor.conf', 'postgres soft memlock 64\n')
    result = run_module(resource_limits, {'limits': LIMITS[:1], 'root': root})
    assert result['failed'] is True and 'shadowed' in result['msg']
    rec = records(result)['postgres - memlock']
    assert rec['status'] == 'shadowed' and rec['persisted'] == 'soft=64 hard=unlimited'
    assert '99-vendor.conf' in rec['detail']
    # limits.conf is read first: it never shadows a limits.d file.
    put(root, '/etc/security/limits.d/99-vendor.conf', '')
    put(root, '/etc/security/limits.conf', 'postgres - memlock 64\n')
    result = run_module(resource_limits, {'limits': LIMITS[:1], 'root': root})
    assert records(result)['postgres - memlock']['status'] == 'ok'


@pytest.mark.parametrize('item, message', [
    ({'domain': 'a b', 'type': '-', 'item': 'memlock', 'value': 1}, 'limits[0].domain'),
    ({'domain': 'a', 'type': '-', 'item': 'memlocks', 'value': 1}, 'not a pam_limits item'),
    ({'domain': 'a', 'type': '-', 'item': 'memlock', 'value': 'lots'}, 'limits[0].value'),
    ({'domain': 'a', 'type': '-', 'item': 'nice', 'value': 40}, '-20 to 19'),
])
def test_limits_bad_input(root, run_module, item, message):
    before = digest(root)
    result = run_module(resource_limits, {'limits': [item], 'root': root})
    assert result['failed'] is True and message in result['msg']
    assert digest(root) == before


def test_limits_conflicting_items_and_bad_file(root, run_module):
    result = run_module(resource_limits, {'limits': [LIMITS[0], dict(LIMITS[0], type='soft')], 'root': root})
    assert result['failed'] is True and 'already given by limits[0]' in result['msg']
    result = run_module(resource_limits, {'limits': LIMITS, 'root': root, 'limits_file': '/etc/limits'})
    assert result['failed'] is True and 'not read by pam_limits' in result['msg']
    result = run_module(resource_limits, {'root': root})
    assert result['failed'] is True and 'nothing to manage' in result['msg']


# ------------------------------------------------------------------ systemd drop-in
class FakeSystemd(object):
    """Answers systemctl show from the unit's files as loaded at the last daemon-reload."""

    def __init__(self, root, main_pid=0, proc_limits=PROC_LIMITS, load_state='loaded', reload_rc=0, start_usec=0):
        self.root = root
        self.start_usec = start_usec
        self.main_pid = main_pid
        self.proc_limits = proc_limits
        self.load_state = load_state
        self.reload_rc = reload_rc
        self.calls = []
        self.loaded = self._files_value()

    def _files_value(self):
        files = [(shown, read(self.root, shown)) for shown, local in _systemd.unit_files(self.root, 'postgresql.service')]
        found = {}
        for name in ('LimitMEMLOCK', 'LimitNOFILE'):
            value, dummy = _systemd.effective_value(files, 'Service', name)
            found[name] = value
        return found

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:2] == ['systemctl', 'daemon-reload']:
            if self.reload_rc:
                return self.reload_rc, '', 'Access denied'
            self.loaded = self._files_value()
            return 0, '', ''
        if argv[:2] == ['systemctl', 'show'] and '--' not in argv:
            # the manager's own properties: its built-in defaults
            return 0, 'DefaultLimitMEMLOCK=8388608\nDefaultLimitMEMLOCKSoft=8388608\n', ''
        assert argv[:2] == ['systemctl', 'show'] and argv[-2] == '--'
        memlock = plan_module.limits.parse_systemd_limit('LimitMEMLOCK', self.loaded['LimitMEMLOCK'] or '8M')
        nofile = plan_module.limits.parse_systemd_limit('LimitNOFILE', self.loaded['LimitNOFILE'] or '1024:524288')
        lines = ['LoadState=%s' % self.load_state, 'ActiveState=%s' % ('active' if self.main_pid else 'inactive'),
                 'MainPID=%d' % self.main_pid, 'ExecMainStartTimestampMonotonic=%d' % self.start_usec,
                 'NeedDaemonReload=%s' % ('yes' if self.loaded != self._files_value() else 'no'),
                 'LimitMEMLOCK=%s' % memlock[1], 'LimitMEMLOCKSoft=%s' % memlock[0],
                 'LimitNOFILE=%s' % nofile[1], 'LimitNOFILESoft=%s' % nofile[0]]
        return 0, '\n'.join(lines) + '\n', ''

    @property
    def reloads(self):
        return sum(1 for argv in self.calls if argv[1] == 'daemon-reload')


def run_plan(root, fake, check_mode=False, **options):
    args = dict(service='postgresql', service_limits={'LimitMEMLOCK': 'infinity', 'LimitNOFILE': 65536})
    args.update(options)
    args.update(root=root)
    plan = make_plan('resource_limits', args, registry.Context(check_mode=check_mode, runner=fake),
                     systemd_running=True, proc_limits_reader=lambda pid: fake.proc_limits)
    plan.result = plan.run()
    return plan, plan.result.as_dict()


def test_service_check_mode_changes_nothing(root):
    fake = FakeSystemd(root)
    before = digest(root)
    plan, result = run_plan(root, fake, check_mode=True)
    assert digest(root) == before and fake.reloads == 0
    rec = records(result)
    assert rec['postgresql.service LimitMEMLOCK']['status'] == 'drift'
    assert rec['postgresql.service LimitMEMLOCK']['live'] == '8388608'
    assert rec['postgresql.service LimitNOFILE']['persisted'] == '1024:524288'
    assert result['diff'][0]['after'] == DROPIN_HEADER + '[Service]\nLimitMEMLOCK=infinity\nLimitNOFILE=65536\n'


def test_service_not_running_apply_reload_and_idempotent(root):
    fake = FakeSystemd(root)
    plan, result = run_plan(root, fake)
    assert read(root, DROPIN) == DROPIN_HEADER + '[Service]\nLimitMEMLOCK=infinity\nLimitNOFILE=65536\n'
    assert fake.reloads == 1
    rec = records(result)['postgresql.service LimitMEMLOCK']
    assert rec['status'] == 'changed' and rec['live'] == 'infinity' and rec['persisted'] == 'infinity'
    assert 'not running' in rec['detail']
    assert result['restart_required'] is False
    plan, again = run_plan(root, fake)
    assert again['changed'] is False and fake.reloads == 1
    assert [s['status'] for s in again['settings']] == ['ok', 'ok']


def test_service_running_needs_restart_until_process_has_the_limit(root):
    fake = FakeSystemd(root, main_pid=4242)
    plan, result = run_plan(root, fake)
    rec = records(result)['postgresql.service LimitMEMLOCK']
    assert rec['status'] == 'pending_restart' and rec['live'] == '8388608'
    assert result['restart_required'] is True and result['changed'] is True
    assert 'MainPID 4242' in rec['detail']
    # Second run: the file is right, the process still has the old limit.
    plan, again = run_plan(root, fake)
    assert again['changed'] is False and again['restart_required'] is True
    assert records(again)['postgresql.service LimitMEMLOCK']['status'] == 'pending_restart'
    # After the restart the process has the new limits.
    fake.proc_limits = PROC_LIMITS.replace('8388608              8388608', 'unlimited            unlimited') \
        .replace('1024                 524288', '65536                65536 ')
    plan, done = run_plan(root, fake)
    assert [s['status'] for s in done['settings']] == ['ok', 'ok'] and done['restart_required'] is False


def test_service_started_after_config_but_lacking_the_limit_is_failed(root):
    # Seen in podman containers: systemd loads LimitMEMLOCK=infinity, restarts the service,
    # and the process keeps 8M because the manager cannot raise its own hard limit.
    fake = FakeSystemd(root, main_pid=4242)
    run_plan(root, fake)
    fake.start_usec = int((time.monotonic() + 5) * 1e6)  # restarted after the drop-in was written
    plan, result = run_plan(root, fake)
    rec = records(result)['postgresql.service LimitMEMLOCK']
    assert rec['status'] == 'failed' and 'systemd could not apply it' in rec['detail']
    assert 'postgresql.service LimitMEMLOCK' in plan.failure_message(plan.result)
    # Started before the drop-in was written: only a restart is missing.
    fake.start_usec = int((time.monotonic() - 3600) * 1e6)
    plan, result = run_plan(root, fake)
    assert records(result)['postgresql.service LimitMEMLOCK']['status'] == 'pending_restart'


def test_service_size_spellings_compare_equal(root):
    put(root, DROPIN, '[Service]\nLimitMEMLOCK=64M\n')
    fake = FakeSystemd(root)
    plan, result = run_plan(root, fake, service_limits={'LimitMEMLOCK': 67108864})
    assert result['changed'] is False and result['settings'][0]['status'] == 'ok'


def test_service_dropin_keeps_comments_and_other_settings(root):
    put(root, DROPIN, '# tuned by hand\n[Service]\nNice=-5\nLimitMEMLOCK=1M\n\n[Unit]\nAfter=network.target\n')
    fake = FakeSystemd(root)
    run_plan(root, fake)
    assert read(root, DROPIN) == ('# tuned by hand\n[Service]\nNice=-5\nLimitMEMLOCK=infinity\nLimitNOFILE=65536\n'
                                  '\n[Unit]\nAfter=network.target\n')


def test_service_later_dropin_shadows(root):
    put(root, '/etc/systemd/system/postgresql.service.d/override.conf', '[Service]\nLimitMEMLOCK=8M\n')
    fake = FakeSystemd(root)
    plan, result = run_plan(root, fake)
    rec = records(result)['postgresql.service LimitMEMLOCK']
    assert rec['status'] == 'shadowed' and 'override.conf' in rec['detail']
    assert plan.shadowed == [('postgresql.service LimitMEMLOCK',
                              '/etc/systemd/system/postgresql.service.d/override.conf')]


def test_service_reload_failure_is_failed(root):
    fake = FakeSystemd(root, reload_rc=1)
    plan, result = run_plan(root, fake)
    assert all(s['status'] == 'failed' for s in result['settings'])
    assert 'Access denied' in result['settings'][0]['detail']


def test_service_unit_not_installed(root):
    fake = FakeSystemd(root, load_state='not-found')
    plan, result = run_plan(root, fake, service='mysql')
    assert all('not installed yet' in s['detail'] for s in result['settings'])
    assert exists(root, '/etc/systemd/system/mysql.service.d/90-dbhost-tuning.conf')


def test_service_without_systemd_reads_no_live_value(root, run_module):
    result = run_module(resource_limits, {'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': 'infinity'},
                                          'root': root})
    rec = result['settings'][0]
    assert rec['status'] == 'changed' and rec['live'] is None and 'systemd is not running' in rec['detail']


@pytest.mark.parametrize('args, message', [
    ({'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': '64m'}}, 'LimitMEMLOCK'),
    ({'service': 'postgresql', 'service_limits': {'MemoryMax': '1G'}}, 'not a systemd resource limit'),
    ({'service': '../x', 'service_limits': {'LimitNOFILE': 1}}, 'service:'),
    ({'service': 'postgresql', 'service_limits': {'LimitNOFILE': 1}, 'dropin_name': '../x.conf'}, 'dropin_name'),
    ({'service': 'postgresql', 'service_limits': {'LimitNOFILE': 1}, 'dropin_name': 'x.txt'}, 'dropin_name'),
    ({'service': 'postgresql'}, 'together'),
])
def test_service_bad_input(root, run_module, args, message):
    before = digest(root)
    result = run_module(resource_limits, dict(args, root=root))
    assert result['failed'] is True and message in result['msg']
    assert digest(root) == before


# ------------------------------------------------------------------ /etc/project (SunOS)
ETC_PROJECT = '''system:0::::
user.root:1::::
noproject:2::::
default:3::::
group.staff:10::::
# databases
user.oracle:100:Oracle:oracle::project.max-shm-memory=(privileged,4294967296,deny);project.pool=pool_db
'''

PROJECTS = [{'name': 'user.oracle', 'attributes': {'project.max-shm-memory': '(privileged,8589934592,deny)',
                                                   'project.max-shm-ids': '(privileged,100,deny)'}},
            {'name': 'user.postgres', 'id': 101, 'comment': 'PostgreSQL', 'users': ['postgres'],
             'attributes': {'project.max-shm-memory': '(privileged,4294967296,deny)'}}]


@pytest.fixture
def sunos(root, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    put(root, '/etc/project', ETC_PROJECT)
    return root


def test_projects_check_mode_changes_nothing(sunos, run_module):
    before = digest(sunos)
    result = run_module(resource_limits, {'projects': PROJECTS, 'root': sunos}, check_mode=True, diff=True)
    assert digest(sunos) == before and result['changed'] is True
    rec = records(result)
    assert rec['project user.oracle project.max-shm-memory']['status'] == 'drift'
    assert rec['project user.oracle project.max-shm-memory']['persisted'] == '(privileged,4294967296,deny)'
    assert rec['project user.postgres id']['status'] == 'drift'
    assert result['diff'][0]['before_header'] == '/etc/project'


def test_projects_apply_keeps_others_and_is_idempotent(sunos, run_module):
    result = run_module(resource_limits, {'projects': PROJECTS, 'root': sunos})
    assert read(sunos, '/etc/project') == ETC_PROJECT.replace(
        'project.max-shm-memory=(privileged,4294967296,deny);project.pool=pool_db',
        'project.max-shm-memory=(privileged,8589934592,deny);project.pool=pool_db;'
        'project.max-shm-ids=(privileged,100,deny)') + \
        'user.postgres:101:PostgreSQL:postgres::project.max-shm-memory=(privileged,4294967296,deny)\n'
    assert all(s['status'] == 'changed' for s in result['settings'])
    assert 'new tasks' in result['settings'][0]['detail']
    again = run_module(resource_limits, {'projects': PROJECTS, 'root': sunos})
    assert again['changed'] is False and all(s['status'] == 'ok' for s in again['settings'])


def test_projects_normalized_values_are_ok(sunos, run_module):
    result = run_module(resource_limits, {'projects': [{'name': 'user.oracle', 'attributes': {
        'project.max-shm-memory': '( PRIVILEGED, 4294967296, deny )'}}], 'root': sunos})
    assert result['changed'] is False and result['settings'][0]['status'] == 'ok'


def test_projects_remove_attribute(sunos, run_module):
    run_module(resource_limits, {'projects': [{'name': 'user.oracle', 'attributes': {'project.pool': None}}],
                                 'root': sunos})
    assert 'project.pool' not in read(sunos, '/etc/project')


@pytest.mark.parametrize('projects, message', [
    ([{'name': 'user.new', 'attributes': {}}], 'give its id'),
    ([{'name': 'user.new', 'id': 100}], 'already used by project user.oracle'),
    ([{'name': 'user.oracle', 'id': 200}], 'changing a project id is refused'),
    ([{'name': '9lives', 'id': 300}], 'must start with a letter'),
    ([{'name': 'p', 'id': 300, 'attributes': {'project.max-shm-memory': '8589934592'}}], 'resource control value'),
    ([{'name': 'p', 'id': 300, 'comment': 'a:b'}], 'without ":"'),
    ([{'name': 'p', 'id': 300}, {'name': 'p', 'id': 301}], 'given twice'),
])
def test_projects_bad_input(sunos, run_module, projects, message):
    before = digest(sunos)
    result = run_module(resource_limits, {'projects': projects, 'root': sunos,
                                          'limits': [LIMITS[0]]})
    assert result['failed'] is True and message in result['msg']
    assert digest(sunos) == before


def test_platform_parts_unsupported(sunos, run_module):
    before = digest(sunos)
    result = run_module(resource_limits, {'limits': LIMITS[:1], 'service': 'pg', 'service_limits': {'LimitNOFILE': 1},
                                          'root': sunos})
    assert [s['status'] for s in result['settings']] == ['unsupported', 'unsupported']
    assert digest(sunos) == before


def test_projects_on_linux_unsupported(root, run_module):
    result = run_module(resource_limits, {'projects': PROJECTS[:1], 'root': root})
    assert result['settings'][0]['status'] == 'unsupported'
    assert not exists(root, '/etc/project')


def test_backup_of_every_edited_file(root, run_module):
    put(root, OURS, '# old\n')
    result = run_module(resource_limits, {'limits': LIMITS[:1], 'root': root, 'backup': True})
    with open(result['backup_file']) as handle:
        assert handle.read() == '# old\n'


# ------------------------------------------------------------------ minimum (the vendors' "at least")
ORACLE_MEMLOCK = [{'domain': 'oracle', 'type': 'soft', 'item': 'memlock', 'value': 60397977},
                  {'domain': 'oracle', 'type': 'hard', 'item': 'memlock', 'value': 60397977}]


@pytest.mark.parametrize('existing', ['oracle - memlock unlimited\n', 'oracle - memlock 70000000\n',
                                      'oracle soft memlock 60397977\noracle hard memlock unlimited\n'])
def test_minimum_memlock_met_elsewhere_is_ok_and_never_lowered(root, run_module, existing):
    put(root, '/etc/security/limits.conf', existing)
    before = digest(root)
    result = run_module(resource_limits, {'limits': ORACLE_MEMLOCK, 'comparison': 'minimum', 'root': root})
    assert result['changed'] is False and digest(root) == before
    assert [(s['status'], s['comparison']) for s in result['settings']] == [('ok', 'minimum')] * 2
    assert not exists(root, OURS)


def test_minimum_memlock_below_is_raised(root, run_module):
    put(root, '/etc/security/limits.conf', 'oracle - memlock 1024\n')
    result = run_module(resource_limits, {'limits': ORACLE_MEMLOCK, 'comparison': 'minimum', 'root': root})
    assert [s['status'] for s in result['settings']] == ['changed', 'changed']
    assert read(root, OURS) == LIMITS_HEADER + ('oracle          soft  memlock    60397977\n'
                                                'oracle          hard  memlock    60397977\n')
    again = run_module(resource_limits, {'limits': ORACLE_MEMLOCK, 'comparison': 'minimum', 'root': root})
    assert again['changed'] is False


def test_exact_memlock_replaces_unlimited(root, run_module):
    put(root, OURS, 'oracle - memlock unlimited\n')
    result = run_module(resource_limits, {'limits': ORACLE_MEMLOCK, 'root': root})
    assert [(s['status'], s['comparison'], s['persisted']) for s in result['settings']] == [
        ('changed', 'exact', '60397977')] * 2


def test_minimum_service_limit_met_by_infinity_is_kept(root, run_module):
    put(root, '/etc/systemd/system/postgresql.service.d/50-local.conf', '[Service]\nLimitMEMLOCK=infinity\n')
    result = run_module(resource_limits, {'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': '6291456'},
                                          'comparison': 'minimum', 'root': root})
    record = result['settings'][0]
    assert record['status'] == 'ok' and record['persisted'] == 'infinity' and record['comparison'] == 'minimum'
    assert not exists(root, DROPIN)


@pytest.mark.parametrize('host, wanted', [
    ('LimitMEMLOCK=1G', '1073741824'),
    ('LimitMEMLOCK=1073741824', '1G'),
    ('LimitMEMLOCK=1G:infinity', '1073741824'),
    ('LimitMEMLOCK=infinity', 'infinity'),
])
def test_minimum_service_limit_equal_in_another_spelling_is_ok_and_kept(root, run_module, host, wanted):
    # The unit's own file says it one way, the desired value another: equal is met under
    # a minimum, nothing is written, and the unit keeps its spelling.
    put(root, '/etc/systemd/system/postgresql.service.d/50-local.conf', '[Service]\n%s\n' % host)
    before = digest(root)
    result = run_module(resource_limits, {'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': wanted},
                                          'comparison': 'minimum', 'root': root})
    assert result['changed'] is False and digest(root) == before
    record = result['settings'][0]
    assert (record['status'], record['comparison']) == ('ok', 'minimum')
    assert read(root, '/etc/systemd/system/postgresql.service.d/50-local.conf') == '[Service]\n%s\n' % host
    assert not exists(root, DROPIN)


@pytest.mark.parametrize('host, wanted', [('unlimited', 'infinity'), ('infinity', 'unlimited'), ('-1', 'unlimited'),
                                          ('unlimited', -1)])
def test_minimum_memlock_unlimited_in_another_spelling_is_ok_and_kept(root, run_module, host, wanted):
    put(root, '/etc/security/limits.conf', 'oracle - memlock %s\n' % host)
    before = digest(root)
    result = run_module(resource_limits, {'limits': [{'domain': 'oracle', 'type': '-', 'item': 'memlock',
                                                      'value': wanted}], 'comparison': 'minimum', 'root': root})
    assert result['changed'] is False and digest(root) == before
    assert [(s['status'], s['persisted']) for s in result['settings']] == [('ok', 'unlimited')]
    assert not exists(root, OURS)


def test_default_reader_reads_the_process_limits_through_sysfs(root):
    # The running service's limits come from the kernel's /proc/<pid>/limits, read as a
    # pseudo-file: this process's own table parses; a pid that is gone reads as nothing.
    plan = make_plan('resource_limits', dict(root=root, service='postgresql', service_limits={'LimitNOFILE': 65536}),
                     registry.Context(runner=FakeSystemd(root)), systemd_running=True)
    text = plan.read_proc_limits(os.getpid())
    assert text.startswith('Limit') and text.endswith('\n')
    found = plan._running_limits({'MainPID': str(os.getpid())})
    assert set(['LimitNOFILE', 'LimitMEMLOCK']) <= set(found)
    soft, hard = found['LimitNOFILE']
    with open('/proc/self/limits') as handle:
        row = next(line for line in handle if line.startswith('Max open files '))
    assert (str(soft), str(hard)) == tuple(row.split()[3:5])
    with open('/proc/sys/kernel/pid_max') as handle:
        gone = int(handle.read()) + 1
    assert plan.read_proc_limits(gone) is None
    assert plan._running_limits({'MainPID': str(gone)}) == {}


# ------------------------------------------------------------------ issue 45: project controls
# The /etc/project lines follow project(5); the privilege and value rules libproject's
# build_rctlblk applies at login/newtask (usr/src/lib/libproject/common/setproject.c).
def test_projects_minimum_keeps_a_larger_control_and_rerun_is_ok(sunos, run_module):
    put(sunos, '/etc/project', ETC_PROJECT.replace('4294967296', '17179869184'))
    before = digest(sunos)
    args = {'projects': PROJECTS[:1], 'root': sunos, 'comparison': 'minimum'}
    result = run_module(resource_limits, args)
    rec = records(result)
    assert rec['project user.oracle project.max-shm-memory']['status'] == 'ok'
    assert 'kept' in rec['project user.oracle project.max-shm-memory']['detail']
    assert rec['project user.oracle project.max-shm-ids']['status'] == 'changed'
    text = read(sunos, '/etc/project')
    assert 'project.max-shm-memory=(privileged,17179869184,deny)' in text
    assert digest(sunos) != before
    again = run_module(resource_limits, args)
    assert again['changed'] is False and all(s['status'] == 'ok' for s in again['settings'])


def test_projects_minimum_raises_a_smaller_control(sunos, run_module):
    result = run_module(resource_limits, {'projects': PROJECTS[:1], 'root': sunos, 'comparison': 'minimum'})
    assert records(result)['project user.oracle project.max-shm-memory']['status'] == 'changed'
    assert 'project.max-shm-memory=(privileged,8589934592,deny)' in read(sunos, '/etc/project')


def test_projects_exact_still_writes_the_value_given(sunos, run_module):
    put(sunos, '/etc/project', ETC_PROJECT.replace('4294967296', '17179869184'))
    run_module(resource_limits, {'projects': PROJECTS[:1], 'root': sunos})
    assert 'project.max-shm-memory=(privileged,8589934592,deny)' in read(sunos, '/etc/project')


def test_projects_priv_is_privileged(sunos, run_module):
    before = digest(sunos)
    result = run_module(resource_limits, {'projects': [{'name': 'user.oracle', 'attributes': {
        'project.max-shm-memory': '(priv,4294967296,deny)'}}], 'root': sunos})
    assert result['changed'] is False and result['settings'][0]['status'] == 'ok'
    assert digest(sunos) == before


def test_projects_units_are_written_in_plain_decimal_bytes(sunos, run_module):
    attributes = {'project.max-shm-memory': '(privileged,8G,deny)', 'project.max-locked-memory': '(priv, 512MB, deny)'}
    args = {'projects': [{'name': 'user.oracle', 'attributes': attributes}], 'root': sunos}
    result = run_module(resource_limits, args)
    assert result['changed'] is True
    line = [l for l in read(sunos, '/etc/project').splitlines() if l.startswith('user.oracle:')][0]
    assert 'project.max-shm-memory=(privileged,8589934592,deny)' in line
    assert 'project.max-locked-memory=(priv,536870912,deny)' in line
    assert not any(c in line.split(':', 5)[5] for c in 'GM ')
    assert run_module(resource_limits, args)['changed'] is False


@pytest.mark.parametrize('value, message', [
    ('(privileged,100K,deny)', 'not a number of bytes'),
    ('(privileged,8Gig,deny)', 'not a whole number'),
    ('(privileged,-1,deny)', 'not a whole number'),
    ('(privileged,0x100,deny)', 'not a whole number'),
])
def test_projects_values_libproject_would_reject_are_refused(sunos, run_module, value, message):
    before = digest(sunos)
    result = run_module(resource_limits, {'projects': [{'name': 'user.oracle', 'attributes': {
        'project.max-shm-ids': value}}], 'root': sunos})
    assert result['failed'] is True and message in result['msg'] and 'project.max-shm-ids' in result['msg']
    assert digest(sunos) == before
