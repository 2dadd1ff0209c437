# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sizing edges: shared memory without huge pages has a cap; vm.hugetlb_shm_group 0 only when
asked by name; the page size of the tree being tuned; exact pool with keep_higher refused;
the shm sysctl file names its role; MySQL records cite the MySQL/MariaDB documentation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import host_facts, platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.shm import SizingError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.tests.unit.helpers import SMAPS_4K, generous_oracle_host, put, read
from ansible_collections.dbhost.tuning.tests.unit.helpers import shm_sized, with_defaults

pytestmark = pytest.mark.usefixtures('linux')

GIB = 1024 ** 3
HUGE_2M = 2 * 1024 * 1024
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * GIB, 'page_size': 4096, 'hugepage_default_bytes': HUGE_2M},
         'hugepages': {HUGE_2M: {'total': 0}}, 'mounts': []}


@pytest.fixture
def accounts(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/passwd', 'oracle:x:54321:54322::/home/oracle:/bin/sh\nroot:x:0:0::/root:/bin/sh\n'
                             'dbroot:x:1001:0::/home/dbroot:/bin/sh\nmysql:x:111:119::/var/lib/mysql:/bin/false\n')
    put(root, '/etc/group', 'root:x:0:\ndba:x:54322:\nmysql:x:119:\n')
    return root


def compile_shm(root, **variables):
    shm = {'shared_memory_engine': 'oracle', 'shared_memory_size': '40%', 'shared_memory_root': root}
    shm.update(variables)
    state = desired.compile_state(['shared_memory'], with_defaults({'shared_memory': shm}), FACTS)
    return dict(((r['kind'], r['key']), r) for r in state.records), state


# ------------------------------------------------------------------ the cap without huge pages
def test_shared_memory_without_huge_pages_is_capped():
    with pytest.raises(SizingError) as error:
        shm_sized('postgresql', 64 * GIB, 4096, '85%', use_hugepages=False)
    assert 'without huge pages is more than the cap of 80% of RAM' in str(error.value)
    assert 'shared_memory_cap' in str(error.value)
    assert shm_sized('postgresql', 64 * GIB, 4096, '75%', use_hugepages=False)['kernel_params']
    assert shm_sized('postgresql', 64 * GIB, 4096, '85%', use_hugepages=False, shared_memory_cap='90%')
    # FreeBSD and SunOS have no pool: the same cap
    with pytest.raises(SizingError):
        shm_sized('postgresql', 64 * GIB, 4096, '95%', system='FreeBSD')


def test_the_role_refuses_above_the_cap_before_anything(accounts):
    with pytest.raises(InputError) as error:
        compile_shm(accounts, shared_memory_size='90%', shared_memory_hugepages=False)
    assert 'cap of 80% of RAM' in str(error.value)
    records, dummy = compile_shm(accounts, shared_memory_size='90%', shared_memory_hugepages=False,
                                 shared_memory_cap='95%')
    assert ('kernel_params', 'kernel.shmmax') in records


# ------------------------------------------------------------------ vm.hugetlb_shm_group 0
@pytest.mark.parametrize('user', ['root', 'dbroot'])
def test_a_primary_group_of_gid_0_is_refused(accounts, user):
    with pytest.raises(InputError) as error:
        compile_shm(accounts, shared_memory_user=user)
    assert 'gid 0' in str(error.value) and 'shared_memory_group' in str(error.value)


def test_gid_0_named_in_shared_memory_group_is_taken_and_said(accounts):
    records, dummy = compile_shm(accounts, shared_memory_user='dbroot', shared_memory_group='root')
    record = records[('kernel_params', 'vm.hugetlb_shm_group')]
    assert record['desired'] == '0' and 'gid 0 (the root group), asked by name' in record['source']


def test_gid_0_without_huge_pages_needs_no_group(accounts):
    records, dummy = compile_shm(accounts, shared_memory_user='dbroot', shared_memory_hugepages=False)
    assert ('kernel_params', 'vm.hugetlb_shm_group') not in records


# ------------------------------------------------------------------ contradictions
def test_exact_pool_with_keep_higher_is_refused(accounts):
    with pytest.raises(InputError) as error:
        compile_shm(accounts, shared_memory_hugepages_comparison='exact', shared_memory_keep_higher=True)
    assert 'contradict' in str(error.value)


# ------------------------------------------------------------------ sources and header
def test_mysql_records_cite_mysql_and_mariadb(accounts):
    records, dummy = compile_shm(accounts, shared_memory_engine='mysql', shared_memory_user='mysql')
    for key in ('kernel.shmmax', 'kernel.shmall', 'kernel.shmmni'):
        source = records[('kernel_params', key)]['source']
        assert 'MySQL Reference Manual' in source and 'MariaDB' in source and 'Oracle' not in source.split(':')[0]


def test_the_shm_file_names_the_shared_memory_role(tmp_path):
    root = generous_oracle_host(str(tmp_path))
    put(root, '/proc/sys/kernel/shmmni', '100\n')   # below Oracle's minimum: our file gets a line
    put(root, '/etc/sysctl.d/80-local.conf', 'vm.nr_hugepages = 30000\nvm.hugetlb_shm_group = 54322\n'
                                             'kernel.shmmni = 100\n')
    shm = {'shared_memory_engine': 'oracle', 'shared_memory_size': '40%', 'shared_memory_root': root,
           'shared_memory_group': 'dba', 'shared_memory_transparent_hugepage': ''}
    host = HostState(['shared_memory'], with_defaults({'shared_memory': shm}), facts_reader=lambda r, subsets: dict(FACTS))
    host.run()
    text = read(root, '/etc/sysctl.d/90-dbhost-tuning-shm.conf')
    assert text.startswith('# Managed by dbhost.tuning.shared_memory ')
    assert 'kernel.shmmni = 4096\n' in text


# ------------------------------------------------------------------ the tree's page size
def test_page_size_of_the_tree_from_its_running_kernel(tmp_path):
    root = str(tmp_path)
    put(root, '/proc/self/smaps', SMAPS_4K.replace('KernelPageSize:        4 kB', 'KernelPageSize:       64 kB'))
    assert platforms.page_size(root) == 65536


@pytest.mark.parametrize('configs, release, expected', [
    ({'config-6.1.0-arm64': 'CONFIG_ARM64=y\nCONFIG_ARM64_64K_PAGES=y\n'}, None, 65536),
    ({'config-6.1.0-arm64': 'CONFIG_ARM64=y\nCONFIG_ARM64_16K_PAGES=y\n'}, None, 16384),
    ({'config-6.1.0-ppc': 'CONFIG_PPC64=y\nCONFIG_PPC_64K_PAGES=y\n'}, None, 65536),
    ({'config-6.1.0-amd64': 'CONFIG_X86_64=y\n# CONFIG_PAGE_SIZE_64KB is not set\n'}, None, 4096),
    ({'config-6.1.0-a': 'CONFIG_ARM64_64K_PAGES=y\n', 'config-6.1.0-b': 'CONFIG_X86_64=y\n'}, '6.1.0-a', 65536),
    ({'config-6.1.0-a': 'CONFIG_ARM64_64K_PAGES=y\n', 'config-6.1.0-b': 'CONFIG_X86_64=y\n'}, None, None),
    ({}, None, None),
])
def test_page_size_of_the_tree_from_its_kernel_config(tmp_path, configs, release, expected):
    root = str(tmp_path)
    for name, text in configs.items():
        put(root, '/boot/' + name, text)
    if release:
        put(root, '/proc/sys/kernel/osrelease', release + '\n')
    assert platforms.page_size(root) == expected


def test_facts_of_a_64k_tree_give_a_shmall_in_64k_pages(tmp_path, monkeypatch):
    root = str(tmp_path)
    monkeypatch.setattr(platforms.os, 'sysconf', lambda name: 4096)   # the machine running this: 4K
    put(root, '/proc/meminfo', 'MemTotal:       67108864 kB\nHugepagesize:     524288 kB\n')
    put(root, '/boot/config-6.1.0-arm64', 'CONFIG_ARM64_64K_PAGES=y\n')
    put(root, '/sys/kernel/mm/hugepages/hugepages-524288kB/nr_hugepages', '0\n')
    facts = host_facts.gather(root, subsets=['memory', 'hugepages'])
    assert facts['memory']['page_size'] == 65536
    sized = shm_sized('oracle', facts['memory']['total_bytes'], facts['memory']['page_size'], '40%',
                      hugepage_size=facts['memory']['hugepage_default_bytes'], group_gid=54322,
                      supported_hugepage_sizes=list(facts['hugepages']))
    assert sized['kernel_params']['kernel.shmall'] * 65536 >= sized['kernel_params']['kernel.shmmax']
    largest = max(sized['kernel_params']['kernel.shmmax'], sized['hugepages_bytes'])
    assert sized['kernel_params']['kernel.shmall'] == -(-largest // 65536)


def test_a_tree_that_does_not_say_its_page_size_is_refused_by_name(accounts):
    facts = dict(FACTS, memory=dict(FACTS['memory'], page_size=None))
    with pytest.raises(InputError) as error:
        desired.compile_state(['shared_memory'], with_defaults({'shared_memory': {
            'shared_memory_engine': 'oracle', 'shared_memory_size': '40%', 'shared_memory_root': accounts}}), facts)
    assert 'base page size of the tuned system is not known' in str(error.value)
