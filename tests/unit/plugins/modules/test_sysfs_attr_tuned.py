# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs_attr with TuneD enabled: TuneD starts after systemd-tmpfiles and writes its [vm] THP
mode and its [sysfs] entries over our tmpfiles.d line, so another value there is shadowed,
naming the profile and its file; a THP mode on the kernel command line makes TuneD leave it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import sysfs_attr
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, make_plan, put, records

pytestmark = pytest.mark.usefixtures('linux')

THP = '/sys/kernel/mm/transparent_hugepage/enabled'
DEFRAG = '/sys/kernel/mm/transparent_hugepage/defrag'
KSM = '/sys/kernel/mm/ksm/run'
OURS = '/etc/tmpfiles.d/90-dbhost-tuning.conf'
PROFILE = '/usr/lib/tuned/throughput-performance/tuned.conf'


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, THP, 'always madvise [never]\n')
    put(base, DEFRAG, 'always defer defer+madvise [madvise] never\n')
    put(base, KSM, '0\n')
    os.makedirs(os.path.join(base, 'etc', 'tmpfiles.d'))
    put(base, PROFILE, '[main]\nsummary=x\n[vm]\ntransparent_hugepages=always\n[sysfs]\n/sys/kernel/mm/ksm/run = 1\n'
                       '/sys/kernel/mm/transparent_hugepage/def* = ${f:virt_check:never:madvise}\n')
    put(base, '/etc/tuned/active_profile', 'throughput-performance\n')
    wants = os.path.join(base, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/usr/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))
    return base


def run(run_module, root, attributes, check_mode=True):
    return records(run_module(sysfs_attr, {'attributes': attributes, 'root': root, 'fail_on_shadowed': False},
                              check_mode=check_mode))


def test_tuned_vm_and_sysfs_shadow_our_tmpfiles_lines(root, run_module):
    before = digest(root)
    found = run(run_module, root, {THP: 'never', KSM: 0, DEFRAG: 'madvise'})
    assert digest(root) == before
    assert found[THP]['status'] == 'shadowed' and found[THP]['persisted'] == 'always'
    assert found[THP]['detail'] == ("would write %s; TuneD profile throughput-performance (%s) writes 'always' and "
                                    "wins at boot over %s; choices: always madvise never" % (OURS, PROFILE, OURS))
    assert found[KSM]['status'] == 'shadowed'
    assert "TuneD profile throughput-performance (%s) writes '1'" % PROFILE in found[KSM]['detail']
    # a glob of [sysfs] with a value TuneD computes: unresolved, so never taken as ours
    assert found[DEFRAG]['status'] == 'shadowed'
    assert ("TuneD profile throughput-performance (%s), a value TuneD computes when it applies it "
            "(${f:virt_check} is a TuneD function the collection does not evaluate: it runs a command or reads what "
            "the host tree does not show) writes '${f:virt_check:never:madvise}'" % PROFILE) in found[DEFRAG]['detail']
    # applied: our lines are written, still shadowed, and a second run changes nothing
    run(run_module, root, {THP: 'never'}, check_mode=False)
    after = digest(root)
    again = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root, 'fail_on_shadowed': False})
    assert again['changed'] is False and digest(root) == after
    assert records(again)[THP]['status'] == 'shadowed'


def test_the_same_value_as_tuned_is_persisted_by_it(root, run_module):
    put(root, THP, '[always] madvise never\n')
    found = run(run_module, root, {THP: 'always'})
    assert (found[THP]['status'], found[THP]['detail']) == (
        'ok', 'persisted by TuneD profile throughput-performance (%s); choices: always madvise never' % PROFILE)


def test_thp_on_the_kernel_command_line_makes_tuned_leave_it(root, run_module):
    put(root, '/etc/kernel/cmdline', 'root=/dev/vda ro transparent_hugepage=never\n')
    found = run(run_module, root, {THP: 'never'})
    assert found[THP]['status'] == 'ok'
    assert found[THP]['detail'] == 'persisted by the kernel command line (/etc/kernel/cmdline); ' \
                                   'choices: always madvise never'


def test_a_missing_profile_is_a_warning_and_shadows_nothing(root, run_module):
    put(root, '/etc/tuned/active_profile', 'nonexistent\n')
    result = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root}, check_mode=True)
    assert records(result)[THP]['status'] == 'drift'
    plan_result = make_plan('sysfs_attr', dict(attributes={THP: 'never'}, root=root),
                            registry.Context(check_mode=True)).run(None)
    assert plan_result.warnings == ['TuneD cannot load the profile nonexistent: no profile nonexistent in the profile '
                                    'folders']


STOCK = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'tuned', 'profiles', '2.22.1',
                     'throughput-performance', 'tuned.conf')


@pytest.mark.parametrize('machine, cpuinfo', [
    ('x86_64', 'processor\t: 0\nvendor_id\t: GenuineIntel\n\n'),
    ('aarch64', 'processor\t: 0\nCPU implementer\t: 0x43\nCPU part\t: 0x0af\n\n'),   # ThunderX2
])
def test_a_site_profile_over_stock_throughput_performance_wins_with_always(root, run_module, machine, cpuinfo):
    """The site's [vm] (a unit added after the stock [vm.thunderx], TuneD 2.22) writes last: THP
    always after every boot, on Intel and on ThunderX alike; never taken from the thunderx unit."""
    with open(STOCK) as handle:
        put(root, PROFILE, handle.read())
    put(root, '/etc/tuned/site/tuned.conf', '[main]\ninclude=throughput-performance\n[variables]\nmode=always\n'
                                            'thp=${mode}\n[vm]\ntransparent_hugepages=${thp}\n')
    put(root, '/etc/tuned/active_profile', 'site\n')
    put(root, '/proc/cpuinfo', cpuinfo)
    for name, value in (('ostype', 'Linux'), ('hostname', 'db1'), ('osrelease', '6.1.0'), ('version', '#1 SMP'),
                        ('arch', machine)):
        put(root, '/proc/sys/kernel/' + name, value + '\n')
    found = run(run_module, root, {THP: 'never'})
    assert found[THP]['status'] == 'shadowed' and found[THP]['persisted'] == 'always'
    assert found[THP]['detail'].startswith("would write %s; TuneD profile site (/etc/tuned/site/tuned.conf) writes "
                                           "'always'" % OURS)


def test_automatic_mode_when_the_recommended_profile_is_not_known(root, run_module):
    # stock rules on a host whose system-release-cpe says server: virt-what decides between
    # throughput-performance (THP always) and virtual-guest (none here: TuneD refuses it, writes nothing)
    put(root, '/etc/tuned/profile_mode', 'auto\n')
    put(root, '/etc/system-release-cpe', 'cpe:/o:redhat:enterprise_linux:7.9:ga:server\n')
    put(root, '/usr/lib/tuned/recommend.d/50-tuned.conf',
        '[throughput-performance]\nvirt=\nsystem=.*server.*\n\n[virtual-guest]\nvirt=.+\n\n[balanced]\n')
    put(root, '/usr/lib/tuned/virtual-guest/tuned.conf', '[sysfs]\n/sys/kernel/mm/ksm/run = 1\n')
    before = digest(root)
    found = run(run_module, root, {THP: 'never', KSM: 1})
    assert digest(root) == before
    assert found[THP]['status'] == 'shadowed' and found[THP]['persisted'] == 'always or unset'
    assert "a value TuneD computes when it applies it (the recommend rules TuneD starts from pick one of " \
           "throughput-performance, virtual-guest, balanced: [throughput-performance] in " \
           "/usr/lib/tuned/recommend.d/50-tuned.conf: virt= matches" in found[THP]['detail']
    # both profiles write 1 to ksm/run, balanced (not installed: TuneD refuses it) nothing: not known now;
    # with our line written, every profile gives 1: no conflict, our line is what is missing
    assert found[KSM]['status'] == 'drift' and found[KSM]['persisted'] == '1 or unset'
    # no server in system-release-cpe and no virt rule left: TuneD starts balanced whatever virt-what says
    put(root, '/etc/system-release-cpe', 'cpe:/o:redhat:enterprise_linux:9::baseos\n')
    put(root, '/usr/lib/tuned/recommend.d/50-tuned.conf',
        '[throughput-performance]\nvirt=\nsystem=.*server.*\n\n[balanced]\n')
    put(root, '/usr/lib/tuned/balanced/tuned.conf', '[main]\nsummary=balanced\n')
    found = run(run_module, root, {THP: 'never', KSM: 1})
    assert found[THP]['status'] == 'drift' and 'TuneD' not in found[THP]['detail']
