# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The size filters, as Jinja sees them: names, arguments, errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.dbhost.tuning.plugins.filter.sizes import FilterModule

FILTERS = FilterModule().filters()
GIB = 1024 ** 3

# ansible_facts.dbhost as dbhost.tuning.host_facts returns it for a 64 GiB x86_64 host.
FACTS = {
    'system': 'Linux',
    'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': 2097152},
    'hugepages': {
        '2097152': {'size_bytes': 2097152, 'total': 0, 'free': 0, 'surplus': 0, 'nodes': {'0': 0}},
        '1073741824': {'size_bytes': GIB, 'total': 0, 'free': 0, 'surplus': 0, 'nodes': {'0': 0}},
    },
    'shm': {'kernel.shmmax': '18446744073692774399', 'kernel.shmall': '18446744073692774399',
            'kernel.shmmni': '4096'},
}


def test_filter_names():
    assert sorted(FILTERS) == ['human_size', 'kernel_profile', 'shm_settings', 'to_bytes', 'to_pages']


def test_to_bytes_human_size_to_pages():
    assert FILTERS['to_bytes']('48G') == 48 * GIB
    assert FILTERS['to_bytes']('40%', ram_bytes=10 * GIB) == 4 * GIB
    assert FILTERS['human_size'](48 * GIB) == '48G'
    assert FILTERS['human_size'](1000000, precision=1) == '976.6K'
    assert FILTERS['to_pages']('48G', '2M') == 24576
    assert FILTERS['to_pages']('3M', '2M', 'down') == 1


@pytest.mark.parametrize('name, args, message', [
    ('to_bytes', ('48 gigs',), "dbhost.tuning.to_bytes: to_bytes input: '48 gigs' is not a size"),
    ('to_bytes', ('40%',), 'the RAM size is not known'),
    ('human_size', ('lots',), "'lots' is not a size"),
    ('to_pages', ('3M', '2M', 'exact'), 'is not a whole number of 2M pages'),
    # an option the sizing has not is named, not passed on
    ('shm_settings', (FACTS, 'oracle', '48G', {'group_gid': 54321, 'hugepage_sise': '2M'}),
     'dbhost.tuning.shm_settings: unknown option(s) hugepage_sise: not one of hugepage_size, group_gid'),
])
def test_filter_errors_name_the_input(name, args, message):
    keywords = args[-1] if isinstance(args[-1], dict) else {}
    with pytest.raises(AnsibleFilterError) as caught:
        FILTERS[name](*args[:len(args) - bool(keywords)], **keywords)
    assert message in str(caught.value)


def test_shm_settings_from_facts_uses_the_default_huge_page_size():
    result = FILTERS['shm_settings'](FACTS, 'oracle', '48G', group_gid=54321, hugepages_cap='80%')
    assert result['hugepage_size'] == 2097152
    assert result['hugepages'] == [{'size': 2097152, 'count': 24822}]
    assert result['kernel_params'] == {'kernel.shmmax': 48 * GIB, 'kernel.shmall': 12708864,
                                       'kernel.shmmni': 4096, 'vm.hugetlb_shm_group': 54321}
    assert result['memlock_kb'] == 60397977


def test_shm_settings_other_size_and_numa_node():
    result = FILTERS['shm_settings'](FACTS, 'postgresql', '16G', group_gid=26, hugepage_size='1G',
                                     numa_node=0, hugepages_margin=0)
    assert result['hugepages'] == [{'size': GIB, 'count': 16, 'node': 0}]


def test_shm_settings_keep_higher_reads_live_values_from_the_facts():
    result = FILTERS['shm_settings'](FACTS, 'oracle', '8G', group_gid=1, keep_higher=True)
    assert result['kernel_params']['kernel.shmmax'] == 18446744073692774399


def test_shm_settings_refuses_a_size_the_kernel_lacks():
    facts = dict(FACTS, hugepages={'2097152': FACTS['hugepages']['2097152']})
    with pytest.raises(AnsibleFilterError, match=r'hugepage_size: 1G is not supported by this kernel \(supported: 2M\)'):
        FILTERS['shm_settings'](facts, 'oracle', '8G', group_gid=1, hugepage_size='1G')


def test_shm_settings_refuses_over_the_cap():
    with pytest.raises(AnsibleFilterError, match='exceed the cap of 70% of RAM'):
        FILTERS['shm_settings'](FACTS, 'oracle', '48G', group_gid=1)


def test_shm_settings_needs_the_memory_facts():
    with pytest.raises(AnsibleFilterError, match='memory.total_bytes'):
        FILTERS['shm_settings']({'system': 'Linux'}, 'oracle', '8G', group_gid=1)
    with pytest.raises(AnsibleFilterError, match='the input must be the dbhost facts'):
        FILTERS['shm_settings']('64G', 'oracle', '8G', group_gid=1)


def test_shm_settings_freebsd_and_sunos_facts():
    freebsd = {'system': 'FreeBSD', 'memory': {'total_bytes': 32 * GIB, 'page_size': 4096,
                                               'hugepage_default_bytes': None}}
    result = FILTERS['shm_settings'](freebsd, 'postgresql', '8G')
    assert result['kernel_params'] == {'kern.ipc.shmmax': 16 * GIB, 'kern.ipc.shmall': 4194304,
                                       'kern.ipc.shm_use_phys': 1}
    sunos = {'system': 'SunOS', 'memory': {'total_bytes': 64 * GIB, 'page_size': 8192,
                                           'hugepage_default_bytes': None}}
    result = FILTERS['shm_settings'](sunos, 'oracle', '20G')
    assert result['project_attributes']['project.max-shm-memory'] == '(privileged,21474836480,deny)'
    assert result['kernel_params'] == {}


def test_kernel_profile_carries_comparison_and_source():
    oracle = FILTERS['kernel_profile']('oracle')
    assert oracle['kernel.sem'] == {'value': '250 32000 100 128', 'comparison': 'minimum',
                                    'source': oracle['kernel.sem']['source']}
    assert 'Oracle Database Installation Guide' in oracle['kernel.sem']['source']
    assert oracle['net.ipv4.ip_local_port_range']['comparison'] == 'exact'
    # shmmni, shmmax and shmall belong to the shared_memory role: one owner per key
    assert not [key for key in oracle if key.startswith('kernel.shm')]
    assert FILTERS['kernel_profile']('oracle', 'SunOS') == {}
