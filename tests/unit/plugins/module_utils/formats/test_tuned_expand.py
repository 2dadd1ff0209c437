# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TuneD's [variables] and ${f:...} functions, and which units apply on which host, as TuneD
decides (tuned/profiles/variables.py, functions/, units/manager.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_expand
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.tests.unit.helpers import put

INTEL = 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n' \
        'microcode\t: 0xd0003a5\nflags\t\t: fpu vme de pse\n\n'
THUNDERX = 'processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm aes crc32 cpuid\n' \
           'CPU implementer\t: 0x43\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0x0af\nCPU revision\t: 2\n\n'
GRAVITON = 'processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n' \
           'CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n'


def host_tree(root, cpuinfo, machine):
    put(root, '/proc/cpuinfo', cpuinfo)
    for name, value in (('ostype', 'Linux'), ('hostname', 'db1'), ('osrelease', '6.1.0-28-' + machine),
                        ('version', '#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)'), ('arch', machine)):
        put(root, '/proc/sys/kernel/' + name, value + '\n')
    return tuned_host.Host(root)


def loaded(files, host=None, names=('p',)):
    def locate(name, skip):
        for folder in ('/etc/tuned', '/usr/lib/tuned'):
            path = '%s/%s/tuned.conf' % (folder, name)
            if path in files and path not in skip:
                return path, files[path]
        return None
    return tuned.load(list(names), locate, host, files.get)


def sysctl_values(profile):
    return dict((key, profile.value(raw)[0]) for key, (raw, dummy) in profile.sysctl().items())


def test_variables_from_variables_in_order_and_overridden_by_the_including_profile():
    files = {'/usr/lib/tuned/base/tuned.conf': '[variables]\nlow=9000\nrange=${low} 65499\nlate=${after}\nafter=1\n'
                                               '[sysctl]\nnet.ipv4.ip_local_port_range=${range}\nkernel.x=${late}\n',
             '/etc/tuned/p/tuned.conf': '[main]\ninclude=base\n[variables]\nlow=1024\n'}
    profile = loaded(files)
    # low keeps its place (base's), with the site's value: range is built from 1024
    assert sysctl_values(profile)['net.ipv4.ip_local_port_range'] == '1024 65499'
    # a variable defined after the one that uses it stays text, and TuneD writes that text
    assert profile.value('${late}') == ('${after}', False)
    assert 'no variable of that name defined before it' in profile.unresolved('${late}')


def test_include_of_a_variables_file_and_profile_dir():
    files = {'/etc/tuned/p/tuned.conf': '[variables]\ninclude=${i:PROFILE_DIR}/site.vars\nshm=${pages}\n'
                                        '[sysctl]\nkernel.shmall=${shm}\nkernel.shmmni=${f:strip:  ${mni} }\n',
             '/etc/tuned/p/site.vars': '# site values\npages = 4194304   # 16 GiB\nmni=8192\nnovalue\n'}
    profile = loaded(files)
    assert sysctl_values(profile) == {'kernel.shmall': '4194304', 'kernel.shmmni': '8192'}
    assert profile.problems == []
    missing = loaded({'/etc/tuned/p/tuned.conf': '[variables]\ninclude=/etc/tuned/none.vars\n[sysctl]\nk=1\n'})
    assert missing.problems == ['TuneD skips include=/etc/tuned/none.vars in [variables]: no such file']


@pytest.mark.parametrize('raw, value, resolved', [
    ('${f:s2kb:8192}', '4096', True),
    ('${f:kb2s:${f:strip: 64 }}', '128', True),                         # innermost first
    ('${f:regex_search_ternary:6.1.0:^6:new:old}', 'new', True),
    ('${f:log:abc}', 'abc', True),
    ('\\${f:s2kb:8}', '${f:s2kb:8}', False),                             # escaped: text for TuneD too
    ('${f:s2kb:8:9}', '${f:s2kb:8:9}', False),                           # wrong number of arguments: kept
    ('${f:exec:/bin/echo:5}', '${f:exec:/bin/echo:5}', False),           # runs a command: never guessed
    ('${f:kb2s:${f:exec:/bin/true}}', '${f:kb2s:${f:exec:/bin/true}}', False),
    ('${f:nosuch:1}', '${f:nosuch:1}', False),
])
def test_functions(raw, value, resolved):
    profile = loaded({'/etc/tuned/p/tuned.conf': '[sysctl]\nk=1\n'})
    assert profile.value(raw) == (value, resolved)


def test_unresolved_reasons_name_the_function():
    expander = tuned_expand.Expander(None)
    assert 'is a TuneD function the collection does not evaluate' in expander.unresolved('${f:virt_check:a:b}')
    assert 'is no TuneD function' in expander.unresolved('${f:nosuch:1}')
    assert expander.unresolved('4096') is None


def test_cpuinfo_check_reads_the_tuned_hosts_cpuinfo(tmp_path):
    files = {'/etc/tuned/p/tuned.conf': '[sysctl]\nkernel.numa_balancing=${f:cpuinfo_check:CPU part\\s+\\: 0x0af:0:1}\n'}
    assert sysctl_values(loaded(files, host_tree(str(tmp_path / 'x'), THUNDERX, 'aarch64'))) == {
        'kernel.numa_balancing': '0'}
    assert sysctl_values(loaded(files, host_tree(str(tmp_path / 'i'), INTEL, 'x86_64'))) == {
        'kernel.numa_balancing': '1'}
    # a tree without /proc/cpuinfo: not evaluated, said
    assert 'cpuinfo_check' in loaded(files, tuned_host.Host(str(tmp_path / 'none'))).unresolved('${f:cpuinfo_check:a:b}')


def test_a_failed_assertion_refuses_the_profile():
    profile = loaded({'/etc/tuned/p/tuned.conf': '[variables]\ncores=\n'
                                                 'check=${f:assertion_non_equal:cores are set:${cores}:}\n[sysctl]\nk=1\n'})
    assert profile.units == [] and "assertion 'cores are set' failed" in profile.problems[0]


THROUGHPUT = ('[variables]\nthunderx_cpuinfo_regex=CPU part\\s+:\\s+(0x0?516)|(0x0?af)|(0x0?a[0-3])|(0x0?b8)\\b\n'
              '[vm.thunderx]\ntype=vm\nuname_regex=aarch64\ncpuinfo_regex=${thunderx_cpuinfo_regex}\n'
              'transparent_hugepages=never\n[sysctl]\nvm.swappiness=10\n[sysctl.thunderx]\ntype=sysctl\n'
              'uname_regex=aarch64\ncpuinfo_regex=${thunderx_cpuinfo_regex}\nkernel.numa_balancing=0\n')


@pytest.mark.parametrize('cpuinfo, machine, thunderx', [
    (INTEL, 'x86_64', False), (GRAVITON, 'aarch64', False), (THUNDERX, 'aarch64', True),
])
def test_units_apply_by_the_hosts_cpuinfo_and_uname(tmp_path, cpuinfo, machine, thunderx):
    profile = loaded({'/usr/lib/tuned/throughput-performance/tuned.conf': THROUGHPUT},
                     host_tree(str(tmp_path), cpuinfo, machine), ['throughput-performance'])
    assert ('kernel.numa_balancing' in profile.sysctl()) is thunderx
    assert (profile.sysfs_value(tuned.THP_ENABLED) is not None) is thunderx
    skipped = dict(profile.skipped())
    assert sorted(skipped) == ([] if thunderx else ['sysctl.thunderx', 'vm.thunderx'])
    if machine == 'x86_64':
        assert skipped['vm.thunderx'].startswith("the host's cpuinfo does not match cpuinfo_regex") or \
            skipped['vm.thunderx'].startswith("the host's uname does not match")


def test_a_tree_without_cpuinfo_leaves_the_unit_undecided(tmp_path):
    profile = loaded({'/usr/lib/tuned/throughput-performance/tuned.conf': THROUGHPUT},
                     tuned_host.Host(str(tmp_path)), ['throughput-performance'])
    unit = [unit for unit in profile.units if unit.name == 'sysctl.thunderx'][0]
    assert 'which the host tree does not show' in profile.unresolved('0', unit)


def test_main_conf_strings_replace_the_hosts(tmp_path):
    host = host_tree(str(tmp_path), INTEL, 'x86_64')
    host.main_conf = {'uname_string': 'Linux x 6.1 #1 aarch64', 'cpuinfo_string': 'CPU part : 0x0af'}
    profile = loaded({'/usr/lib/tuned/throughput-performance/tuned.conf': THROUGHPUT}, host, ['throughput-performance'])
    assert 'kernel.numa_balancing' in profile.sysctl()


def test_uname_line_and_version_from_the_tree(tmp_path):
    host = host_tree(str(tmp_path), INTEL, 'x86_64')
    assert host.uname() == 'Linux db1 6.1.0-28-x86_64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22) x86_64'
    assert host.tuned_version() is None
    put(str(tmp_path), '/usr/lib/python3.9/site-packages/tuned/version.py',
        'TUNED_VERSION_MAJOR = 2\nTUNED_VERSION_MINOR = 25\nTUNED_VERSION_PATCH = 1\n')
    assert host.tuned_version() == (2, 25)


def test_priority_orders_the_writes_and_the_last_write_wins():
    profile = loaded({'/etc/tuned/p/tuned.conf': '[late]\ntype=sysctl\npriority=10\nk=2\n[sysctl]\nk=1\n'})
    assert [(key, raw) for key, raw, dummy, dummy in profile.sysctl_writes() if key] == [('k', '1'), ('k', '2')]
    assert profile.sysctl()['k'][0] == '2'
