# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kernel command line as a persisted source: a pool or a THP mode set there is what the
next boot gives (nothing to write when it meets the desired value), and a file of ours that
asks something else after it is reported as a conflict naming the command line's source."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import hugepages, sysfs_attr
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs as _sysfs
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

pytestmark = pytest.mark.usefixtures('linux')

G2M = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'
G1G = '/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages'
THP = '/sys/kernel/mm/transparent_hugepage/enabled'
GRUB = 'the kernel command line (/etc/default/grub (GRUB_CMDLINE_LINUX + GRUB_CMDLINE_LINUX_DEFAULT))'


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/proc/meminfo', 'MemTotal:       65536000 kB\nMemFree:        40000000 kB\nHugepagesize:       2048 kB\n')
    put(base, '/proc/sys/vm/compact_memory', '')
    put(base, G2M, '1024\n')
    put(base, G1G, '8\n')
    put(base, THP, 'always madvise [never]\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    os.makedirs(os.path.join(base, 'etc', 'tmpfiles.d'))
    return base


def grub(root, line):
    put(root, '/etc/default/grub', 'GRUB_CMDLINE_LINUX="%s"\n' % line)


def test_a_pool_set_on_the_command_line_is_persisted_and_nothing_is_written(root, run_module):
    grub(root, 'hugepagesz=1G hugepages=8 hugepagesz=2M hugepages=1024')
    before = digest(root)
    result = run_module(hugepages, {'pages': [{'count': 512}, {'size': '1G', 'count': 4}], 'root': root,
                                    'comparison': 'minimum'})
    assert digest(root) == before and result['changed'] is False
    for name, count in (('hugepages-2048kB', 1024), ('hugepages-1048576kB', 8)):
        record = records(result)[name]
        assert (record['status'], record['persisted']) == ('ok', count)
        assert 'persisted by ' + GRUB in record['detail']


def test_a_smaller_pool_on_the_command_line_is_drift_and_our_file_then_conflicts(root, run_module):
    grub(root, 'hugepages=256')
    check = run_module(hugepages, {'pages': [{'count': 1024}], 'root': root}, check_mode=True)
    record = records(check)['hugepages-2048kB']
    assert (record['status'], record['persisted']) == ('drift', 256)
    applied = run_module(hugepages, {'pages': [{'count': 1024}], 'root': root})
    assert read(root, '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf').endswith('vm.nr_hugepages = 1024\n')
    record = records(applied)['hugepages-2048kB']
    assert record['persisted'] == 1024
    assert 'conflict: %s allocates 256 pages of this pool at boot' % GRUB in record['detail']


def test_exact_shrinks_a_larger_command_line_pool_and_says_so(root, run_module):
    grub(root, 'hugepages=2048')
    result = run_module(hugepages, {'pages': [{'count': 1024}], 'root': root, 'comparison': 'exact'})
    record = records(result)['hugepages-2048kB']
    assert record['status'] == 'changed' and record['persisted'] == 1024
    assert 'allocates 2048 pages' in record['detail']


def test_another_default_size_on_the_command_line_is_a_conflict(root, run_module):
    grub(root, 'default_hugepagesz=1G')
    result = run_module(hugepages, {'pages': [{'count': 1024}], 'root': root}, check_mode=True)
    assert 'default_hugepagesz=1048576kB' in records(result)['hugepages-2048kB']['detail']


@pytest.fixture
def choice_kernel(monkeypatch):
    real_write = _sysfs.write_value

    def kernel_write(path, value):
        choices, dummy = _sysfs.parse_choice(_sysfs.read_raw(path))
        if choices is None:
            return real_write(path, value)
        with open(path, 'w') as handle:
            handle.write(' '.join('[%s]' % c if c == value else c for c in choices) + '\n')
    monkeypatch.setattr(_sysfs, 'write_value', kernel_write)


def test_thp_never_on_the_command_line_needs_no_tmpfiles_line(root, run_module, choice_kernel):
    put(root, '/etc/kernel/cmdline', 'root=/dev/vda transparent_hugepage=never\n')
    before = digest(root)
    result = run_module(sysfs_attr, {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never'}, 'root': root})
    assert digest(root) == before and result['changed'] is False
    record = records(result)[THP]
    assert (record['status'], record['persisted']) == ('ok', 'never')
    assert 'persisted by the kernel command line (/etc/kernel/cmdline)' in record['detail']


def test_thp_always_on_the_command_line_is_overridden_and_reported(root, run_module, choice_kernel):
    put(root, '/proc/cmdline', 'BOOT_IMAGE=/vmlinuz transparent_hugepage=always\n')
    check = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root}, check_mode=True)
    assert records(check)[THP]['status'] == 'drift' and records(check)[THP]['persisted'] == 'always'
    applied = run_module(sysfs_attr, {'attributes': {THP: 'never'}, 'root': root})
    record = records(applied)[THP]
    assert record['persisted'] == 'never'
    assert 'conflict: the kernel command line (/proc/cmdline) sets transparent_hugepage=always' in record['detail']
    assert read(root, '/etc/tmpfiles.d/90-dbhost-tuning.conf').endswith('w %s - - - - never\n' % THP)
