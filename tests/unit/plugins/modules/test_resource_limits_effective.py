# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""resource_limits compares with the limit the session really gets (issue 19 item 1):
pam_limits' order and precedence, a group or ``*`` line that already grants more, and the
domain and value checks of limits.conf(5) (issue 24 item 6)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import resource_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import resource_limits as plan_module
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import session_limits
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules.test_resource_limits import FakeSystemd, run_plan

OURS = '/etc/security/limits.d/90-dbhost-tuning.conf'
HEADER = session_limits.LIMITS_HEADER + '\n'
MEMLOCK = '60397977'
ORACLE = [{'domain': 'oracle', 'type': side, 'item': 'memlock', 'value': MEMLOCK} for side in ('soft', 'hard')]

pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/etc/passwd', 'root:x:0:0::/root:/bin/sh\noracle:x:1001:1001::/home/oracle:/bin/sh\n'
                             'grid:x:1002:1001::/home/grid:/bin/sh\n')
    put(base, '/etc/group', 'root:x:0:\noinstall:x:1001:\ndba:x:1002:oracle\n')
    put(base, '/etc/security/limits.conf', '# defaults\n')
    os.makedirs(os.path.join(base, 'etc', 'security', 'limits.d'))
    return base


def _run(run_module, root, check_mode=False, limits=None, comparison='minimum'):
    return run_module(resource_limits, {'limits': limits or ORACLE, 'comparison': comparison, 'root': root},
                      check_mode=check_mode, diff=True)


@pytest.mark.parametrize('path, text, source', [
    ('/etc/security/limits.d/50-dba.conf', '@dba - memlock unlimited\n', '@dba (group line)'),
    ('/etc/security/limits.conf', '* - memlock unlimited\n', '* (wildcard line)'),
    ('/etc/security/limits.d/10-oinstall.conf', '@oinstall - memlock 70000000\n', '@oinstall (group line)'),
    ('/etc/security/limits.d/99-late.conf', 'oracle - memlock 60397978\n', 'oracle (user line)'),
    ('/etc/security/limits.conf', '1000:1999 - memlock infinity\n', '1000:1999 (user line)'),
])
def test_a_host_that_grants_more_gets_no_line(root, run_module, path, text, source):
    """Issue 19 item 1: a user line would win over the group's or the wildcard's and lower it."""
    put(root, path, text)
    for check_mode in (True, False):
        before = digest(root)
        result = _run(run_module, root, check_mode=check_mode)
        assert digest(root) == before and result['changed'] is False
        for record in result['settings']:
            assert record['status'] == 'ok'
            assert 'met by %s in %s line 1' % (source, path) in record['detail']
    assert not os.path.exists(os.path.join(root, OURS.lstrip('/')))


def test_a_group_line_does_not_count_for_a_user_outside_the_group(root, run_module):
    put(root, '/etc/security/limits.d/50-dba.conf', '@dba - memlock unlimited\n')
    limits = [dict(item, domain='grid') for item in ORACLE]
    result = _run(run_module, root, limits=limits)
    assert [s['status'] for s in result['settings']] == ['changed', 'changed']
    assert read(root, OURS) == HEADER + ('grid            soft  memlock    60397977\n'
                                         'grid            hard  memlock    60397977\n')


def test_only_the_short_side_is_written(root, run_module):
    put(root, '/etc/security/limits.conf', '@dba hard memlock unlimited\n* soft memlock 64\n')
    result = _run(run_module, root)
    assert read(root, OURS) == HEADER + 'oracle          soft  memlock    60397977\n'
    rec = records(result)
    assert rec['oracle soft memlock']['status'] == 'changed'
    assert rec['oracle hard memlock']['status'] == 'ok' and rec['oracle hard memlock']['persisted'] == 'unlimited'
    again = _run(run_module, root)
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok', 'ok']


def test_a_dash_line_never_lowers_the_higher_side(root, run_module):
    put(root, '/etc/security/limits.conf', '@dba hard memlock unlimited\n* soft memlock 64\n')
    result = _run(run_module, root, limits=[{'domain': 'oracle', 'type': '-', 'item': 'memlock', 'value': MEMLOCK}])
    assert read(root, OURS) == HEADER + 'oracle          -     memlock    unlimited\n'
    assert records(result)['oracle - memlock']['persisted'] == 'unlimited'


def test_soft_above_the_hard_limit_counts_as_the_hard_one(root, run_module):
    # soft unlimited from the group, hard 1024 from limits.conf: the session gets 1024 for both
    put(root, '/etc/security/limits.conf', 'oracle hard memlock 1024\n@dba soft memlock unlimited\n')
    result = _run(run_module, root, check_mode=True)
    rec = records(result)
    assert rec['oracle soft memlock']['status'] == 'drift' and rec['oracle soft memlock']['persisted'] == '1024'
    assert 'soft unlimited is lowered to it' in rec['oracle soft memlock']['detail']


def test_a_later_user_line_still_shadows(root, run_module):
    put(root, '/etc/security/limits.d/99-vendor.conf', 'oracle hard memlock 64\n')
    result = _run(run_module, root)
    assert result['failed'] is True and 'shadowed' in result['msg']
    rec = records(result)['oracle hard memlock']
    assert rec['status'] == 'shadowed' and rec['persisted'] == '64'
    assert 'oracle (user line) in /etc/security/limits.d/99-vendor.conf line 1 gives 64' in rec['detail']
    # a group line read later never shadows the user's own line
    put(root, '/etc/security/limits.d/99-vendor.conf', '@dba hard memlock 64\n')
    assert [s['status'] for s in _run(run_module, root)['settings']] == ['ok', 'ok']


def test_a_no_limit_line_before_ours_is_reported(root, run_module):
    put(root, '/etc/security/limits.d/10-free.conf', 'oracle -\n')
    result = _run(run_module, root)
    rec = records(result)['oracle soft memlock']
    assert rec['status'] == 'shadowed'
    assert 'ends pam_limits\' reading' in rec['detail'] and '10-free.conf line 1' in rec['detail']


def test_exact_is_still_exact(root, run_module):
    put(root, '/etc/security/limits.d/50-dba.conf', '@dba - memlock unlimited\n')
    result = _run(run_module, root, comparison='exact')
    assert [s['status'] for s in result['settings']] == ['changed', 'changed']
    assert [s['persisted'] for s in result['settings']] == [MEMLOCK, MEMLOCK]


@pytest.mark.parametrize('domain, item, value, message', [
    ('../etc', 'memlock', 1024, "'../etc' is not a user name"),
    ('oracle;reboot', 'memlock', 1024, "'oracle;reboot' is not a user name"),
    ('@dba/x', 'memlock', 1024, 'limits.conf(5)'),
    ('%dba', 'memlock', 1024, 'maxlogins only'),
    ('%', 'nofile', 1024, 'maxlogins only'),
    ('2000:1000', 'memlock', 1024, 'first id is above its last'),
    (':', 'memlock', 1024, 'a number on at least one side'),
    ('@1:99999999999', 'memlock', 1024, 'an id above'),
    ('1001', 'memlock', 1024, 'write :1001'),
    ('oracle', 'memlock', 10 ** 40, 'above 18014398509481982'),
    ('oracle', 'memlock', '18014398509481983', 'write unlimited'),
    ('oracle', 'nofile', 2 ** 31, 'above 2147483584'),
    ('oracle', 'cpu', 10 ** 20, 'above 307445734561825859'),
    ('oracle', 'maxlogins', 2 ** 31, 'above 2147483647'),
])
def test_domains_and_values_limits_conf_refuses(root, run_module, domain, item, value, message):
    before = digest(root)
    result = run_module(resource_limits, {'limits': [{'domain': domain, 'type': 'hard', 'item': item, 'value': value}],
                                          'root': root})
    assert result['failed'] is True and message in result['msg'] and 'limits[0].' in result['msg']
    assert digest(root) == before


@pytest.mark.parametrize('domain, item', [('@dba', 'memlock'), ('*', 'memlock'), ('1000:', 'memlock'),
                                          (':1001', 'memlock'), ('@1000:1999', 'memlock'), ('@:1002', 'memlock'),
                                          ('%', 'maxlogins'), ('%dba', 'maxlogins'), ('%:1002', 'maxsyslogins'),
                                          ('ora_cle.x-1$', 'memlock')])
def test_domains_limits_conf_accepts(root, run_module, domain, item):
    result = run_module(resource_limits, {'limits': [{'domain': domain, 'type': 'hard', 'item': item, 'value': 4}],
                                          'root': root})
    assert result.get('failed') is not True, result.get('msg')


# ------------------------------------------------------------------ systemd (issue 19 item 2)
DROPIN = '/etc/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf'
UNIT = '[Service]\nExecStart=/bin/true\n'


def _service(run_module, root, value='60G', check_mode=False, comparison='minimum', **extra):
    args = dict({'service': 'oracle-db', 'service_limits': {'LimitMEMLOCK': value}, 'comparison': comparison,
                 'root': root}, **extra)
    return run_module(resource_limits, args, check_mode=check_mode, diff=True)


@pytest.mark.parametrize('path, text, source', [
    ('/etc/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n',
     'the manager default DefaultLimitMEMLOCK=infinity in /etc/systemd/system.conf'),
    ('/etc/systemd/system.conf.d/50-db.conf', '[Manager]\nDefaultLimitMEMLOCK=64G\n',
     'the manager default DefaultLimitMEMLOCK=64G in /etc/systemd/system.conf.d/50-db.conf'),
    ('/usr/lib/systemd/system/oracle-db.service.d/10-vendor.conf', '[Service]\nLimitMEMLOCK=infinity\n',
     'LimitMEMLOCK=infinity in /usr/lib/systemd/system/oracle-db.service.d/10-vendor.conf'),
])
def test_a_service_that_gets_more_gets_no_drop_in(root, run_module, path, text, source):
    put(root, '/etc/systemd/system/oracle-db.service', UNIT)
    put(root, '/etc/systemd/system.conf', '[Manager]\n#DefaultLimitMEMLOCK=\n')
    put(root, path, text)
    for check_mode in (True, False):
        before = digest(root)
        result = _service(run_module, root, check_mode=check_mode)
        assert digest(root) == before and result['changed'] is False
        record = result['settings'][0]
        assert record['status'] == 'ok' and 'met by %s' % source in record['detail']
    assert not os.path.exists(os.path.join(root, DROPIN.lstrip('/')))


def test_the_unit_wins_over_the_manager_default(root, run_module):
    put(root, '/etc/systemd/system/oracle-db.service', UNIT + 'LimitMEMLOCK=8M\n')
    put(root, '/etc/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n')
    result = _service(run_module, root)
    assert result['settings'][0]['status'] == 'changed'
    assert read(root, DROPIN) == plan_module.DROPIN_HEADER + '\n[Service]\nLimitMEMLOCK=60G\n'


def test_a_drop_in_keeps_the_higher_side(root, run_module):
    put(root, '/etc/systemd/system/oracle-db.service', UNIT + 'LimitMEMLOCK=8M:infinity\n')
    result = _service(run_module, root)
    assert read(root, DROPIN) == plan_module.DROPIN_HEADER + '\n[Service]\nLimitMEMLOCK=%d:infinity\n' % (60 << 30)
    assert result['settings'][0]['persisted'] == '%d:infinity' % (60 << 30)
    assert _service(run_module, root)['changed'] is False


def test_exact_service_value_is_still_written(root, run_module):
    put(root, '/etc/systemd/system/oracle-db.service', UNIT)
    put(root, '/etc/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n')
    result = _service(run_module, root, comparison='exact')
    assert result['settings'][0]['status'] == 'changed'
    assert read(root, DROPIN).endswith('LimitMEMLOCK=60G\n')


def test_where_systemd_runs_its_built_in_default_and_loaded_value_count(root):
    put(root, '/lib/systemd/system/postgresql.service', '[Service]\nExecStart=/bin/true\n')
    fake = FakeSystemd(root)
    # no file sets LimitMEMLOCK: the running manager's default (8 MiB in the fake) is what the service gets
    plan, result = run_plan(root, fake, check_mode=True, service_limits={'LimitMEMLOCK': '4M'}, comparison='minimum')
    record = records(result)['postgresql.service LimitMEMLOCK']
    assert record['status'] == 'ok' and record['persisted'] == '8388608'
    assert "met by systemd's built-in default 8388608" in record['detail']
    # a file changed since the last daemon-reload: systemctl show and the files disagree, and the record says so
    put(root, '/etc/systemd/system/postgresql.service.d/50-local.conf', '[Service]\nLimitMEMLOCK=16M\n')
    plan, result = run_plan(root, fake, check_mode=True, service_limits={'LimitMEMLOCK': '4M'}, comparison='minimum')
    record = records(result)['postgresql.service LimitMEMLOCK']
    assert record['persisted'] == '16777216'
    assert 'systemd has loaded LimitMEMLOCK=8388608 but the files give 16777216' in record['detail']


@pytest.mark.parametrize('theirs', ['/run/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf',
                                    '/usr/local/lib/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf',
                                    '/usr/lib/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf'])
def test_a_drop_in_of_our_name_elsewhere_is_read_while_ours_does_not_exist(root, run_module, theirs):
    """systemd reads /run/.../90-dbhost-tuning.conf while /etc has no file of that name: it gives
    8M, not nothing; ours masks it once written, so its other lines are carried over."""
    put(root, '/etc/systemd/system/oracle-db.service', UNIT)
    put(root, '/etc/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n')
    put(root, theirs, '[Service]\nLimitMEMLOCK=8M\nLimitNOFILE=65536\n')
    before = digest(root)
    check = _service(run_module, root, check_mode=True)
    assert digest(root) == before
    record = check['settings'][0]
    assert record['status'] == 'drift' and record['persisted'] == str(8 << 20)
    _service(run_module, root)
    text = read(root, DROPIN)
    assert 'LimitNOFILE=65536\n' in text and 'LimitMEMLOCK=60G\n' in text and 'LimitMEMLOCK=8M' not in text
    assert theirs in text
    again = _service(run_module, root)
    assert again['changed'] is False and again['settings'][0]['persisted'] == str(60 << 30)
    assert run_module(resource_limits, {'service': 'oracle-db', 'service_limits': {'LimitNOFILE': 65536},
                                        'root': root}, check_mode=True)['settings'][0]['status'] == 'ok'


def test_a_masked_drop_in_of_our_name_gives_nothing(root, run_module):
    put(root, '/etc/systemd/system/oracle-db.service', UNIT + 'LimitMEMLOCK=64G\n')
    put(root, '/usr/lib/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf', '[Service]\nLimitMEMLOCK=8M\n')
    os.makedirs(os.path.join(root, 'run/systemd/system/oracle-db.service.d'))
    os.symlink('/dev/null', os.path.join(root, 'run/systemd/system/oracle-db.service.d/90-dbhost-tuning.conf'))
    record = _service(run_module, root, check_mode=True)['settings'][0]
    assert record['status'] == 'ok' and record['persisted'] == str(64 << 30)
