# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params with TuneD enabled: the active profile's [sysctl] is read like any other boot
source, so a key TuneD sets differently at boot is shadowed, naming the profile and its file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, make_plan, put, read, records

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
PORTS = 'net.ipv4.ip_local_port_range'
ORACLE = '/usr/lib/tuned/oracle/tuned.conf'
THROUGHPUT = '/usr/lib/tuned/throughput-performance/tuned.conf'
NO_REAPPLY = ', reapply_sysctl = 0 in /etc/tuned/tuned-main.conf'

pytestmark = pytest.mark.usefixtures('linux')


def enable_tuned(root, profile):
    put(root, '/etc/tuned/active_profile', profile + '\n')
    wants = os.path.join(root, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/usr/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/proc/sys/net/ipv4/ip_local_port_range', '32768\t60999\n')
    put(base, '/proc/sys/vm/swappiness', '60\n')
    put(base, '/proc/sys/kernel/shmmni', '4096\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    put(base, THROUGHPUT, '[main]\nsummary=Broadly applicable tuning\n\n[sysctl]\nvm.swappiness=10\n'
                          'kernel.sched_min_granularity_ns = 10000000   # a comment\n[vm]\ntransparent_hugepages=always\n')
    put(base, ORACLE, '#\n# tuned configuration\n#\n[main]\nsummary=Optimize for Oracle RDBMS\n'
                      'include=throughput-performance\n\n[sysctl]\nvm.swappiness = 1\n'
                      'net.ipv4.ip_local_port_range = 9000 65499\nkernel.shmmni = 4096\n')
    enable_tuned(base, 'oracle')
    return base


def check(run_module, root, params, check_mode=True):
    result = run_module(kernel_params, {'params': params, 'root': root}, check_mode=check_mode)
    return result, records(result)


def _checked(root, params):
    """The plan's own result of a check-mode run (the module's is built from it)."""
    return make_plan('kernel_params', dict(params=params, root=root), registry.Context(check_mode=True)).run(None)


def test_reapply_sysctl_0_tuned_wins_shadowed_naming_profile_and_file(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', '# Global tuned configuration file.\ndaemon = 1\nreapply_sysctl = 0\n')
    before = digest(root)
    result, found = check(run_module, root, {PORTS: '1024 65000', 'kernel.shmmni': 4096})
    assert digest(root) == before
    record = found[PORTS]
    assert record['status'] == 'shadowed' and record['persisted'] == '9000 65499'
    assert record['detail'].startswith("TuneD profile oracle (%s)%s sets '9000 65499' and wins at boot over %s; "
                                       % (ORACLE, NO_REAPPLY, OUR_FILE))
    # a key TuneD sets to the desired value: persisted by TuneD, nothing to write
    assert found['kernel.shmmni']['status'] == 'ok'
    assert found['kernel.shmmni']['detail'] == 'persisted by TuneD profile oracle (%s)%s' % (ORACLE, NO_REAPPLY)
    assert _checked(root, {PORTS: '1024 65000'}).warnings == []

    applied = run_module(kernel_params, {'params': {PORTS: '1024 65000'}, 'root': root, 'fail_on_shadowed': False})
    assert records(applied)[PORTS]['status'] == 'shadowed'
    assert read(root, OUR_FILE).endswith('%s = 1024 65000\n' % PORTS)
    after = digest(root)
    again = run_module(kernel_params, {'params': {PORTS: '1024 65000'}, 'root': root, 'fail_on_shadowed': False})
    assert again['changed'] is False and digest(root) == after
    failing = run_module(kernel_params, {'params': {PORTS: '1024 65000'}, 'root': root})
    assert failing['failed'] and 'TuneD profile oracle' in failing['msg']


def test_reapply_sysctl_1_sysctl_d_wins_over_tuned(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 1\n')
    # systemd-sysctl lets this /usr/lib file win over ours, but TuneD writes /etc/sysctl.d again after it
    put(root, '/usr/lib/sysctl.d/99-late.conf', 'vm.swappiness = 30\n')
    result, found = check(run_module, root, {PORTS: '1024 65000', 'vm.swappiness': 5})
    # before our write, TuneD's value is what the boot ends with
    assert found[PORTS]['status'] == 'drift' and found[PORTS]['persisted'] == '9000 65499'
    assert found[PORTS]['detail'].startswith('persisted by TuneD profile oracle (%s); ' % ORACLE)
    # /usr/lib/sysctl.d is not written again: TuneD's 1 wins over the late file
    assert found['vm.swappiness']['detail'].startswith('persisted by TuneD profile oracle (%s)' % ORACLE)
    run_module(kernel_params, {'params': {PORTS: '1024 65000', 'vm.swappiness': 5}, 'root': root})
    result, found = check(run_module, root, {PORTS: '1024 65000', 'vm.swappiness': 5})
    assert (found[PORTS]['status'], found[PORTS]['persisted']) == ('ok', '1024 65000')
    assert (found['vm.swappiness']['status'], found['vm.swappiness']['persisted']) == ('ok', '5')
    assert result['changed'] is False


def test_reapply_sysctl_exclude_keeps_tunes_value(root, run_module):
    # reapply_sysctl_exclude (TuneD 2.26, plugin_sysctl.py): those keys are not written again
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 1\nreapply_sysctl_exclude = net.ipv4.*\n')
    args = {'params': {PORTS: '1024 65000', 'vm.swappiness': 5}, 'root': root, 'fail_on_shadowed': False}
    run_module(kernel_params, args)
    found = records(run_module(kernel_params, args, check_mode=True))
    assert (found[PORTS]['status'], found[PORTS]['persisted']) == ('shadowed', '9000 65499')
    assert (found['vm.swappiness']['status'], found['vm.swappiness']['persisted']) == ('ok', '5')


def test_reapply_default_is_1_and_a_key_only_in_usr_lib_loses_to_tuned(root, run_module):
    # no tuned-main.conf: reapply_sysctl defaults to 1, and /usr/lib/sysctl.d is not written again
    args = {'params': {'vm.swappiness': 5}, 'root': root, 'file': '/usr/lib/sysctl.d/90-ours.conf',
            'fail_on_shadowed': False}
    run_module(kernel_params, args)
    record = records(run_module(kernel_params, args, check_mode=True))['vm.swappiness']
    assert (record['status'], record['live'], record['persisted']) == ('shadowed', '5', '1')
    assert record['detail'] == ("TuneD profile oracle (%s) sets '1' and wins at boot over /usr/lib/sysctl.d/90-ours.conf"
                                % ORACLE)


def test_two_include_levels_etc_overrides_usr_lib_and_the_including_profile_wins(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    # /etc/tuned/oracle extends the one in /usr/lib by including its own name
    put(root, '/etc/tuned/oracle/tuned.conf', '[main]\ninclude = oracle\n[sysctl]\nvm.swappiness=3\n')
    put(root, '/etc/tuned/db/tuned.conf', '[main]\ninclude=oracle\n[sysctl]\nkernel.shmmni=32768\n')
    put(root, '/etc/tuned/active_profile', 'db\n')
    put(root, '/proc/sys/net/ipv4/ip_local_port_range', '9000 65499\n')
    put(root, '/proc/sys/kernel/sched_min_granularity_ns', '10000000\n')
    result, found = check(run_module, root, {'vm.swappiness': 10, PORTS: '9000 65499', 'kernel.shmmni': 4096,
                                             'kernel.sched_min_granularity_ns': 10000000})
    assert found['vm.swappiness']['detail'].startswith(
        "TuneD profile oracle (/etc/tuned/oracle/tuned.conf)%s sets '3' and wins" % NO_REAPPLY)
    assert found[PORTS]['status'] == 'ok'
    assert found[PORTS]['detail'] == 'persisted by TuneD profile oracle (%s)%s' % (ORACLE, NO_REAPPLY)
    assert found['kernel.shmmni']['detail'].startswith(
        "TuneD profile db (/etc/tuned/db/tuned.conf)%s sets '32768'" % NO_REAPPLY)
    # two levels down: throughput-performance, with its inline comment dropped
    assert found['kernel.sched_min_granularity_ns']['detail'] == 'persisted by TuneD profile throughput-performance ' \
        '(%s)%s' % (THROUGHPUT, NO_REAPPLY)


def test_an_etc_profile_replaces_the_usr_lib_one_of_the_same_name(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    put(root, '/etc/tuned/oracle/tuned.conf', '[main]\nsummary=local\n[sysctl]\nvm.swappiness = 7\n')
    result, found = check(run_module, root, {PORTS: '1024 65000', 'vm.swappiness': 7})
    # nothing of /usr/lib/tuned/oracle is read: no port range from TuneD
    assert found[PORTS]['status'] == 'drift' and 'TuneD' not in found[PORTS]['detail']
    assert found['vm.swappiness']['detail'] == 'persisted by TuneD profile oracle (/etc/tuned/oracle/tuned.conf)%s' \
        % NO_REAPPLY


@pytest.mark.parametrize('profiles, message', [
    ({'/etc/tuned/a/tuned.conf': '[main]\ninclude=${f:exec:/bin/pick}\n[sysctl]\nvm.swappiness=1\n'},
     'the collection cannot read the profile a: /etc/tuned/a/tuned.conf: include=${f:exec:/bin/pick} names what the '
     'collection cannot evaluate (${f:exec} is a TuneD function the collection does not evaluate: it runs a command '
     'or reads what the host tree does not show)'),
    ({'/etc/tuned/a/tuned.conf': '[main]\ninclude=gone\n[sysctl]\nvm.swappiness=1\n'},
     'TuneD cannot load the profile a: no profile gone in the profile folders'),
    ({}, 'TuneD cannot load the profile a: no profile a in the profile folders'),
    ({'/etc/tuned/a/tuned.conf': 'vm.swappiness=1\n'},
     "TuneD cannot load the profile a: /etc/tuned/a/tuned.conf line 1: 'vm.swappiness=1' comes before any [section]"),
])
def test_a_profile_tuned_cannot_load_is_a_warning_and_sets_nothing(root, run_module, profiles, message):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    for path, text in profiles.items():
        put(root, path, text)
    put(root, '/etc/tuned/active_profile', 'a\n')
    before = digest(root)
    result, found = check(run_module, root, {'vm.swappiness': 5})
    assert digest(root) == before
    # the plan's own result holds the warning (the module hands it to module.warn)
    plan_result = _checked(root, {'vm.swappiness': 5})
    assert plan_result.warnings == [message]
    assert found['vm.swappiness']['status'] == 'drift' and 'TuneD' not in found['vm.swappiness']['detail']


def test_variables_resolved_and_unresolved(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    put(root, '/etc/tuned/v/tuned.conf', '[variables]\nlow=9000\n[sysctl]\nnet.ipv4.ip_local_port_range=${low} 65499\n'
                                         'vm.swappiness=${f:exec:/usr/bin/compute}\nkernel.shmmni=${undefined}\n')
    put(root, '/etc/tuned/active_profile', 'v')
    put(root, '/proc/sys/net/ipv4/ip_local_port_range', '9000 65499\n')
    result, found = check(run_module, root, {PORTS: '9000 65499', 'vm.swappiness': 10, 'kernel.shmmni': 4096})
    assert found[PORTS]['status'] == 'ok'
    record = found['vm.swappiness']
    assert record['status'] == 'shadowed'
    assert record['detail'] == ("TuneD profile v (/etc/tuned/v/tuned.conf)%s, a value TuneD computes when it applies "
                                "it (${f:exec} is a TuneD function the collection does not evaluate: it runs a command "
                                "or reads what the host tree does not show) sets '${f:exec:/usr/bin/compute}' and wins "
                                "at boot over %s" % (NO_REAPPLY, OUR_FILE))
    assert found['kernel.shmmni']['status'] == 'shadowed'
    assert '(${undefined} is left as text (no variable of that name defined before it): TuneD writes it as it is)' in \
        found['kernel.shmmni']['detail']


@pytest.mark.parametrize('tuned_value, ours, boot', [
    ('>8192', 4096, '8192'),     # 8192 is above our 4096 at boot: TuneD writes it
    ('>8192', 16384, '16384'),   # our 16384 at boot is above 8192: TuneD leaves it
    ('<2048', 4096, '2048'),
    ('<2048', 1024, '1024'),
])
def test_assignment_modifiers(root, run_module, tuned_value, ours, boot):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    put(root, '/etc/tuned/m/tuned.conf', '[sysctl]\nkernel.shmmni=%s\n' % tuned_value)
    put(root, '/etc/tuned/active_profile', 'm')
    args = {'params': {'kernel.shmmni': ours}, 'root': root, 'fail_on_shadowed': False}
    run_module(kernel_params, args)
    record = records(run_module(kernel_params, args, check_mode=True))['kernel.shmmni']
    assert (record['status'], record['persisted']) == ('ok' if boot == str(ours) else 'shadowed', boot)


def test_tuned_not_enabled_or_disabled_unit_is_not_read(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    os.remove(os.path.join(root, 'etc/systemd/system/multi-user.target.wants/tuned.service'))
    found = check(run_module, root, {PORTS: '1024 65000'})[1]
    # not TuneD's value: the kernel's built-in range (net/ipv4/af_inet.c) boots
    assert 'TuneD' not in found[PORTS]['detail'] and found[PORTS]['persisted'] == '32768 60999'
    enable_tuned_again = os.path.join(root, 'etc/systemd/system/multi-user.target.wants/tuned.service')
    os.symlink('/usr/lib/systemd/system/tuned.service', enable_tuned_again)
    put(root, '/etc/tuned/oracle/tuned.conf', '[main]\ninclude=oracle\n[sysctl]\nenabled=false\n')
    found = check(run_module, root, {PORTS: '1024 65000'})[1]
    # not TuneD's value: the kernel's built-in range (net/ipv4/af_inet.c) boots
    assert 'TuneD' not in found[PORTS]['detail'] and found[PORTS]['persisted'] == '32768 60999'


STOCK = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'tuned', 'profiles', '2.25.1',
                     'throughput-performance', 'tuned.conf')
CPUINFO = {'x86_64': 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU\n\n',
           'aarch64': 'processor\t: 0\nCPU implementer\t: 0x43\nCPU architecture: 8\nCPU part\t: 0x0af\n\n'}


def stock_host(root, machine):
    """A host tree of ``machine`` running stock throughput-performance (TuneD 2.25.1's file)."""
    with open(STOCK) as handle:
        put(root, THROUGHPUT, handle.read())
    put(root, '/etc/tuned/active_profile', 'throughput-performance\n')
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 1\n')
    put(root, '/proc/cpuinfo', CPUINFO[machine])
    for name, value in (('ostype', 'Linux'), ('hostname', 'db1'), ('osrelease', '6.1.0'), ('version', '#1 SMP'),
                        ('arch', machine)):
        put(root, '/proc/sys/kernel/' + name, value + '\n')
    put(root, '/proc/sys/kernel/numa_balancing', '1\n')


@pytest.mark.parametrize('machine, shadowed', [('x86_64', False), ('aarch64', True)])
def test_numa_balancing_is_shadowed_only_where_tuned_applies_its_thunderx_unit(root, run_module, machine, shadowed):
    stock_host(root, machine)
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    before = digest(root)
    result, found = check(run_module, root, {'kernel.numa_balancing': 1})
    assert digest(root) == before
    record = found['kernel.numa_balancing']
    # Intel: [sysctl.thunderx] is skipped (uname and cpuinfo do not match): no false alarm
    assert (record['status'], record['persisted']) == (('shadowed', '0') if shadowed else ('drift', None))
    if shadowed:
        assert record['detail'].startswith("TuneD profile throughput-performance (%s)%s sets '0' and wins at boot"
                                           % (THROUGHPUT, NO_REAPPLY))
    else:
        assert 'TuneD' not in record['detail']


def test_numa_balancing_on_thunderx_with_reapply_sysctl_our_file_wins_again(root, run_module):
    stock_host(root, 'aarch64')
    found = check(run_module, root, {'kernel.numa_balancing': 1})[1]
    # TuneD writes 0, then writes /etc/sysctl.d again: our line gives 1 after TuneD
    assert found['kernel.numa_balancing']['status'] == 'drift'
    applied = records(run_module(kernel_params, {'params': {'kernel.numa_balancing': 1}, 'root': root}))
    assert applied['kernel.numa_balancing']['status'] == 'changed'
    again = check(run_module, root, {'kernel.numa_balancing': 1})[1]['kernel.numa_balancing']
    assert (again['status'], again['persisted']) == ('ok', '1')
    assert again['detail'] == ''


def test_automatic_mode_reads_the_profile_the_recommend_rules_pick(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    put(root, '/etc/tuned/profile_mode', 'auto\n')
    put(root, '/etc/tuned/active_profile', 'throughput-performance\n')   # TuneD writes it again at start
    put(root, '/etc/tuned/recommend.d/40-db.conf', '[oracle]\n/etc/oratab=.*:Y$\n[throughput-performance]\n')
    put(root, '/etc/oratab', 'db1:/u01/app/oracle:Y\n')
    before = digest(root)
    result, found = check(run_module, root, {PORTS: '1024 65000', 'kernel.shmmni': 4096})
    assert digest(root) == before
    assert found[PORTS]['status'] == 'shadowed' and found[PORTS]['persisted'] == '9000 65499'
    assert found[PORTS]['detail'].startswith("TuneD profile oracle (%s)%s sets '9000 65499' and wins at boot over %s"
                                             % (ORACLE, NO_REAPPLY, OUR_FILE))
    assert _checked(root, {PORTS: '1024 65000'}).warnings == []
    # the rule no longer matches: TuneD starts throughput-performance, which leaves the ports alone
    put(root, '/etc/oratab', 'db1:/u01/app/oracle:N\n')
    result, found = check(run_module, root, {PORTS: '1024 65000'})
    assert found[PORTS]['status'] == 'drift' and 'TuneD' not in found[PORTS]['detail']
    applied = run_module(kernel_params, {'params': {PORTS: '1024 65000'}, 'root': root})
    assert records(applied)[PORTS]['status'] == 'changed' and records(applied)[PORTS]['persisted'] == '1024 65000'
    after = digest(root)
    again = run_module(kernel_params, {'params': {PORTS: '1024 65000'}, 'root': root})
    assert again['changed'] is False and digest(root) == after and records(again)[PORTS]['status'] == 'ok'


def test_automatic_mode_a_rule_the_collection_cannot_evaluate(root, run_module):
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')
    put(root, '/etc/tuned/profile_mode', 'auto\n')
    put(root, '/etc/tuned/recommend.d/50-tuned.conf', '[throughput-performance]\nvirt=\n\n[oracle]\nvirt=.+\n')
    rules = '/etc/tuned/recommend.d/50-tuned.conf'
    why = ('the recommend rules TuneD starts from pick one of throughput-performance, oracle, balanced: '
           '[throughput-performance] in %s: virt= matches the output of virt-what, a command the collection does not '
           'run; [oracle] in %s: virt= matches the output of virt-what, a command the collection does not run'
           % (rules, rules))
    before = digest(root)
    result, found = check(run_module, root, {'vm.swappiness': 10, 'kernel.shmmni': 4096, PORTS: '32768 60999'})
    assert digest(root) == before
    # throughput-performance sets 10, oracle 1, balanced (none here: TuneD refuses it) nothing, and no file
    # sets it: not known, so never taken as met; with our line, balanced would give our 10
    record = found['vm.swappiness']
    assert record['status'] == 'shadowed' and record['persisted'] == '10 or 1 or unset'
    assert record['detail'] == ("TuneD profile throughput-performance (%s)%s, a value TuneD computes when it applies "
                                "it (%s) sets '10 or 1' and wins at boot over %s"
                                % (THROUGHPUT, NO_REAPPLY, why, OUR_FILE))
    # oracle's 4096 is the kernel's built-in value: whichever profile starts, the boot gives 4096
    assert found['kernel.shmmni']['status'] == 'ok' and found['kernel.shmmni']['persisted'] == '4096'
    assert 'TuneD' not in found['kernel.shmmni']['detail']
    warnings = _checked(root, {'vm.swappiness': 10}).warnings
    assert warnings[0] == 'TuneD starts in automatic mode (/etc/tuned/profile_mode): %s' % why
