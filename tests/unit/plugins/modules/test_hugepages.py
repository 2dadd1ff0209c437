# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hugepages against fake /sys trees, including a kernel that allocates fewer pages than asked.

The seam is _hugepages.Kernel: FakeKernel below keeps the fake tree's files as the real
kernel keeps its pools, but allocates at most ``free_pages`` more pages per pool (what
contiguous free memory allows); compacting memory (which it records by writing the
real compact_memory file of the fake tree) frees ``freed_by_compaction`` more.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import hugepages
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import hugepages as _hugepages
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'
TMPFILES_FILE = '/etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf'
G2M = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'
G1G = '/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages'
N1_1G = '/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages'
N0_2M = '/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages'
SYSCTL_HEADER = _hugepages.SYSCTL_HEADER + '\n'
TMPFILES_HEADER = _hugepages.TMPFILES_HEADER + '\n'

MEMINFO = '''MemTotal:       65536000 kB
MemFree:        40000000 kB
MemAvailable:   50000000 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
'''


pytestmark = pytest.mark.usefixtures('linux')


RealKernel = _hugepages.Kernel


class FakeKernel(RealKernel):
    """Allocates at most ``free_pages[path]`` more pages per pool until memory is compacted."""

    def __init__(self, root, free_pages=None, freed_by_compaction=0):
        RealKernel.__init__(self, root)
        self.free_pages = dict(free_pages or {})
        self.freed_by_compaction = freed_by_compaction
        self.writes = []
        self.compactions = 0

    def _system_path(self, local_path):
        return '/' + os.path.relpath(local_path, self.root)

    def write_count(self, local_path, count):
        path = self._system_path(local_path)
        self.writes.append((path, count))
        current = self.read_count(local_path)
        if count > current and path in self.free_pages:
            granted = min(count - current, self.free_pages[path])
            self.free_pages[path] -= granted
            count = current + granted
        RealKernel.write_count(self, local_path, count)

    def compact(self):
        RealKernel.compact(self)  # writes the fake tree's /proc/sys/vm/compact_memory
        self.compactions += 1
        for path in self.free_pages:
            self.free_pages[path] += self.freed_by_compaction


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/proc/meminfo', MEMINFO)
    put(base, '/proc/sys/vm/compact_memory', '')
    for path in (G2M, G1G, N0_2M, N1_1G, N1_1G.replace('1048576kB', '2048kB'),
                 N0_2M.replace('2048kB', '1048576kB')):
        put(base, path, '0\n')
    put(base, '/sys/devices/system/node/node0/meminfo', 'Node 0 MemTotal:       32768000 kB\n')
    put(base, '/sys/devices/system/node/node1/meminfo', 'Node 1 MemTotal:       32768000 kB\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    os.makedirs(os.path.join(base, 'etc', 'tmpfiles.d'))
    return base


@pytest.fixture
def kernel(root, monkeypatch):
    """The module's main() gets the fake kernel through the Kernel seam."""
    made = FakeKernel(root)
    monkeypatch.setattr(_hugepages, 'Kernel', lambda root_path: made)
    return made


PAGES = [{'count': 512}, {'size': '1G', 'count': 4, 'node': 1}]


def test_check_mode_changes_nothing_and_reports_drift(root, kernel, run_module):
    before = digest(root)
    result = run_module(hugepages, {'pages': PAGES, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before and kernel.writes == []
    assert result['changed'] is True
    rec = records(result)
    assert rec['hugepages-2048kB']['status'] == 'drift'
    assert (rec['hugepages-2048kB']['desired'], rec['hugepages-2048kB']['live']) == (512, 0)
    assert rec['node1/hugepages-1048576kB']['target'] == TMPFILES_FILE
    assert [d['before_header'] for d in result['diff']] == [SYSCTL_FILE, TMPFILES_FILE]
    assert result['diff'][0]['after'] == SYSCTL_HEADER + 'vm.nr_hugepages = 512\n'
    assert result['diff'][1]['after'] == TMPFILES_HEADER + 'w %s - - - - 4\n' % N1_1G


def test_apply_reads_back_persists_and_is_idempotent(root, kernel, run_module):
    result = run_module(hugepages, {'pages': PAGES, 'root': root})
    assert result['changed'] is True and 'failed' not in result
    assert read(root, G2M) == '512\n' and read(root, N1_1G) == '4\n'
    assert read(root, SYSCTL_FILE) == SYSCTL_HEADER + 'vm.nr_hugepages = 512\n'
    assert read(root, TMPFILES_FILE) == TMPFILES_HEADER + 'w %s - - - - 4\n' % N1_1G
    rec = records(result)
    for name in ('hugepages-2048kB', 'node1/hugepages-1048576kB'):
        assert rec[name]['status'] == 'changed'
        assert rec[name]['live'] == rec[name]['desired'] == rec[name]['persisted']
    assert result['compacted'] is False
    kernel.writes[:] = []
    again = run_module(hugepages, {'pages': PAGES, 'root': root})
    assert again['changed'] is False and kernel.writes == []
    assert [s['status'] for s in again['settings']] == ['ok', 'ok']


def test_short_allocation_compacts_retries_then_fails(root, kernel, run_module):
    kernel.free_pages = {G2M: 300}
    kernel.freed_by_compaction = 100
    result = run_module(hugepages, {'pages': [{'size': '2M', 'count': 512}], 'root': root})
    assert result['failed'] is True
    assert 'requested 512, allocated 400' in result['msg']
    rec = records(result)['hugepages-2048kB']
    assert rec['status'] == 'failed' and rec['live'] == 400 and rec['desired'] == 512
    assert rec['detail'].startswith('requested 512, allocated 400 (after compacting memory)')
    assert kernel.compactions == 1 and kernel.writes == [(G2M, 512), (G2M, 512)]
    assert read(root, '/proc/sys/vm/compact_memory') == '1\n'
    assert result['compacted'] is True
    # Boot has the least fragmented memory: the request is persisted all the same.
    assert rec['persisted'] == 512 and 'vm.nr_hugepages = 512' in read(root, SYSCTL_FILE)


def test_short_allocation_recovered_by_compaction_is_changed(root, kernel, run_module):
    kernel.free_pages = {G2M: 300}
    kernel.freed_by_compaction = 1000
    result = run_module(hugepages, {'pages': [{'count': 512}], 'root': root})
    assert 'failed' not in result
    rec = records(result)['hugepages-2048kB']
    assert rec['status'] == 'changed' and rec['live'] == 512 and result['compacted'] is True


def test_short_allocation_with_warn_is_still_failed_record_but_task_goes_on(root, kernel, run_module, monkeypatch):
    from ansible.module_utils.basic import AnsibleModule
    warned = []
    # module.warn() lands in the result or on the controller's display depending on what
    # else the test process imported: record the call itself.
    monkeypatch.setattr(AnsibleModule, 'warn', lambda self, message: warned.append(message))
    kernel.free_pages = {N1_1G: 1}
    result = run_module(hugepages, {'pages': [{'size': 1073741824, 'count': 4, 'node': 1}],
                                    'root': root, 'on_short': 'warn', 'compact': False})
    assert 'failed' not in result
    assert result['changed'] is True  # one page was allocated
    rec = records(result)['node1/hugepages-1048576kB']
    assert rec['status'] == 'failed' and rec['live'] == 1
    assert rec['detail'].startswith('requested 4, allocated 1;')
    assert any('requested 4, allocated 1' in w for w in warned)
    assert kernel.compactions == 0
    # A second run still reports it: never hidden, and nothing new allocated -> not changed.
    again = run_module(hugepages, {'pages': [{'size': 1073741824, 'count': 4, 'node': 1}],
                                   'root': root, 'on_short': 'warn', 'compact': False})
    assert records(again)['node1/hugepages-1048576kB']['status'] == 'failed'
    assert again['changed'] is False


def test_kernel_refusal(root, run_module, monkeypatch):
    class Refusing(FakeKernel):
        def write_count(self, local_path, count):
            raise OSError(22, 'Invalid argument')
    monkeypatch.setattr(_hugepages, 'Kernel', lambda root_path: Refusing(root))
    result = run_module(hugepages, {'pages': [{'count': 8}], 'root': root})
    assert result['failed'] is True and 'refused by the kernel' in result['msg']
    assert records(result)['hugepages-2048kB']['status'] == 'failed'


def test_kernel_refusal_keeps_the_count_asked_in_the_file(root, run_module, monkeypatch):
    """Unlike LivePlusFile's kinds (a refused value is left out of their file), the pool's file is planned
    before the live write and keeps the count asked for: the next boot allocates it (HugePages' docstring)."""
    class Refusing(FakeKernel):
        def write_count(self, local_path, count):
            raise OSError(22, 'Invalid argument')
    monkeypatch.setattr(_hugepages, 'Kernel', lambda root_path: Refusing(root))
    result = run_module(hugepages, {'pages': [{'count': 8}], 'root': root})
    assert result['failed'] is True
    assert 'vm.nr_hugepages = 8' in read(root, SYSCTL_FILE)


def test_shrinking_pools_are_written_before_growing_ones(root, kernel, run_module):
    put(root, N0_2M, '100\n')
    run_module(hugepages, {'pages': [{'count': 50, 'node': 1}, {'count': 10, 'node': 0}], 'root': root})
    assert [path for path, count in kernel.writes] == [N0_2M, N0_2M.replace('node0', 'node1')]


def test_other_file_wins_at_boot_is_shadowed(root, kernel, run_module):
    put(root, '/etc/sysctl.conf', 'vm.nr_hugepages = 64\n')
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root})
    assert result['failed'] is True and 'shadowed at boot' in result['msg']
    rec = records(result)['hugepages-2048kB']
    assert rec['status'] == 'shadowed' and rec['persisted'] == 64 and '/etc/sysctl.conf' in rec['detail']
    assert read(root, G2M) == '16\n'


def test_keeps_comments_and_other_lines(root, kernel, run_module):
    put(root, SYSCTL_FILE, '# mine\nvm.swappiness = 1\nvm.nr_hugepages=8\n')
    put(root, TMPFILES_FILE, '# mine\nw %s - - - - 2\n' % G1G)
    run_module(hugepages, {'pages': [{'count': 16}, {'size': '1G', 'count': 3}], 'root': root})
    assert read(root, SYSCTL_FILE) == '# mine\nvm.swappiness = 1\nvm.nr_hugepages=16\n'
    assert read(root, TMPFILES_FILE) == '# mine\nw %s - - - - 3\n' % G1G


def test_lost_at_reboot_is_drift(root, kernel, run_module):
    put(root, G2M, '16\n')
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root}, check_mode=True)
    rec = records(result)['hugepages-2048kB']
    assert rec['status'] == 'drift' and rec['live'] == 16 and rec['persisted'] is None


def test_check_mode_warns_when_memory_cannot_hold_the_pages(root, kernel, run_module):
    result = run_module(hugepages, {'pages': [{'size': '1G', 'count': 60}], 'root': root}, check_mode=True)
    assert 'the kernel would allocate fewer' in records(result)['hugepages-1048576kB']['detail']


def test_apply_false_persist_false(root, kernel, run_module):
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root, 'apply': False})
    assert kernel.writes == [] and read(root, G2M) == '0\n'
    assert records(result)['hugepages-2048kB']['status'] == 'changed'
    result = run_module(hugepages, {'pages': [{'size': '1G', 'count': 1}], 'root': root, 'persist': False})
    rec = records(result)['hugepages-1048576kB']
    assert rec['target'] == G1G and 'lost at reboot' in rec['detail']
    assert not os.path.exists(os.path.join(root, TMPFILES_FILE.lstrip('/')))


@pytest.mark.parametrize('pages, message', [
    ([{'size': '3M', 'count': 1}], "'3M' is not a huge page size"),
    ([{'size': 'lots', 'count': 1}], 'pages[0].size'),
    ([{'size': 1000, 'count': 1}], 'not a huge page size'),
    ([{'count': -1}], 'negative'),
    ([{'count': 1, 'node': -1}], 'not a NUMA node number'),
    ([{'count': 1}, {'size': '2M', 'count': 2}], 'already given as pages[0]'),
    ([{'count': 1}, {'count': 2, 'node': 0}], 'both for the whole system and per node'),
    ([{'size': '1G', 'count': 100}], 'exceed the physical memory'),
    ([{'size': '1G', 'count': 40, 'node': 0}], 'on node 0 exceed its memory'),
    ([], 'non-empty list'),
])
def test_bad_input_refused_before_anything(root, kernel, run_module, pages, message):
    before = digest(root)
    result = run_module(hugepages, {'pages': pages, 'root': root})
    assert result['failed'] is True and message in result['msg']
    assert digest(root) == before and kernel.writes == []


@pytest.mark.parametrize('pages, name, reason', [
    ([{'size': '16M', 'count': 1}], 'hugepages-16384kB',
     'no 16M pages on this kernel (no /sys/kernel/mm/hugepages/hugepages-16384kB; supported: 2M, 1G)'),
    ([{'count': 1, 'node': 7}], 'node7/hugepages-2048kB',
     'no NUMA node 7 on this host (no /sys/devices/system/node/node7)'),
    ([{'count': 1, 'node': 2}], 'node2/hugepages-2048kB', 'NUMA node 2 has no 2M pool'),
])
def test_a_pool_the_host_lacks_is_unsupported(root, kernel, run_module, pages, name, reason):
    """A page size the kernel does not offer, a NUMA node the machine does not have: unsupported,
    nothing allocated, no line persisted for a pool that is not there; the other pools are applied."""
    put(root, '/sys/devices/system/node/node2/cpulist', '4-5\n')
    pages = pages + [{'size': '1G', 'count': 1}]
    before = digest(root)
    check = run_module(hugepages, {'pages': pages, 'root': root}, check_mode=True)
    assert digest(root) == before and kernel.writes == [] and not check.get('failed')
    record = records(check)[name]
    assert (record['status'], record['live'], record['persisted']) == ('unsupported', None, None)
    assert record['detail'] == reason + '; not set live; not persisted'
    assert records(check)['hugepages-1048576kB']['status'] == 'drift'
    applied = run_module(hugepages, {'pages': pages, 'root': root})
    assert not applied.get('failed') and applied['changed'] is True
    assert records(applied)[name]['status'] == 'unsupported'
    assert records(applied)['hugepages-1048576kB']['status'] == 'changed'
    assert read(root, TMPFILES_FILE).count('nr_hugepages') == 1 and name not in read(root, TMPFILES_FILE)
    after = digest(root)
    again = run_module(hugepages, {'pages': pages, 'root': root})
    assert again['changed'] is False and digest(root) == after
    assert records(again)[name]['status'] == 'unsupported'


def test_missing_default_size(root, kernel, run_module):
    put(root, '/proc/meminfo', 'MemTotal: 1000 kB\n')
    result = run_module(hugepages, {'pages': [{'count': 1}], 'root': root})
    assert result['failed'] is True and 'no default huge page size' in result['msg']


@pytest.mark.parametrize('option, path', [('sysctl_file', '/etc/hp.conf'), ('tmpfiles_file', '/etc/x/y.conf'),
                                          ('sysctl_file', '/etc/sysctl.d/../x.conf')])
def test_bad_files_refused(root, kernel, run_module, option, path):
    result = run_module(hugepages, {'pages': [{'count': 1}], 'root': root, option: path})
    assert result['failed'] is True and option in result['msg']


def test_offline_image_persists_only(tmp_path, run_module):
    image = str(tmp_path)
    put(image, '/proc/meminfo', MEMINFO)
    result = run_module(hugepages, {'pages': [{'count': 16}, {'size': '1G', 'count': 2}], 'root': image})
    assert 'failed' not in result
    assert read(image, SYSCTL_FILE).endswith('vm.nr_hugepages = 16\n')
    assert 'w %s - - - - 2' % G1G in read(image, TMPFILES_FILE)
    assert all(s['live'] is None for s in result['settings'])


def test_other_platforms_unsupported(root, kernel, run_module, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'FreeBSD')
    before = digest(root)
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root})
    assert [s['status'] for s in result['settings']] == ['unsupported']
    assert digest(root) == before


def test_default_kernel_reads_and_writes_the_tree(root):
    kernel = _hugepages.Kernel(root)
    local = os.path.join(root, G2M.lstrip('/'))
    kernel.write_count(local, 7)
    assert kernel.read_count(local) == 7 and read(root, G2M) == '7\n'


@pytest.mark.skipif(not os.path.isdir('/sys/kernel/mm/hugepages'), reason='no huge page support on this kernel')
def test_real_host_check_mode_reads_pools_and_changes_nothing(run_module):
    # The real kernel, in check mode only: the pools and /etc stay as they are.
    with open('/proc/sys/vm/nr_hugepages') as handle:
        before = handle.read()
    existed = [os.path.exists(path) for path in (SYSCTL_FILE, TMPFILES_FILE)]
    result = run_module(hugepages, {'pages': [{'count': int(before) + 1}]}, check_mode=True)
    rec = result['settings'][0]
    assert rec['live'] == int(before) and rec['desired'] == int(before) + 1 and rec['status'] == 'drift'
    with open('/proc/sys/vm/nr_hugepages') as handle:
        assert handle.read() == before
    assert [os.path.exists(path) for path in (SYSCTL_FILE, TMPFILES_FILE)] == existed


def test_minimum_keeps_a_larger_live_and_persisted_pool(root, kernel, run_module):
    put(root, G2M, '30000\n')
    put(root, '/etc/sysctl.d/80-local.conf', 'vm.nr_hugepages = 30000\n')
    before = digest(root)
    result = run_module(hugepages, {'pages': [{'count': 13240}], 'comparison': 'minimum', 'root': root})
    record = records(result)['hugepages-2048kB']
    assert record['status'] == 'ok' and record['comparison'] == 'minimum'
    assert record['live'] == 30000 and record['desired'] == 13240
    assert result['changed'] is False and kernel.writes == [] and digest(root) == before


def test_minimum_persists_the_larger_live_pool_instead_of_shrinking_it_at_boot(root, kernel, run_module):
    put(root, G2M, '30000\n')
    result = run_module(hugepages, {'pages': [{'count': 13240}], 'comparison': 'minimum', 'root': root})
    record = records(result)['hugepages-2048kB']
    assert record['status'] == 'changed' and kernel.writes == []
    assert read(root, SYSCTL_FILE) == SYSCTL_HEADER + 'vm.nr_hugepages = 30000\n'
    again = run_module(hugepages, {'pages': [{'count': 13240}], 'comparison': 'minimum', 'root': root})
    assert again['changed'] is False and records(again)['hugepages-2048kB']['status'] == 'ok'


def test_minimum_raises_a_smaller_pool(root, kernel, run_module):
    put(root, G2M, '100\n')
    result = run_module(hugepages, {'pages': [{'count': 512}], 'comparison': 'minimum', 'root': root})
    assert records(result)['hugepages-2048kB']['status'] == 'changed'
    assert read(root, G2M) == '512\n' or read(root, G2M).strip() == '512'
    assert read(root, SYSCTL_FILE) == SYSCTL_HEADER + 'vm.nr_hugepages = 512\n'


def test_exact_shrinks_a_larger_pool(root, kernel, run_module):
    put(root, G2M, '30000\n')
    result = run_module(hugepages, {'pages': [{'count': 13240}], 'root': root})
    record = records(result)['hugepages-2048kB']
    assert record['comparison'] == 'exact' and record['status'] == 'changed'
    assert read(root, G2M).strip() == '13240'


TUNED_ORACLE = '/usr/lib/tuned/oracle/tuned.conf'


def enable_tuned(root, reapply_sysctl):
    """tuned.service enabled with a profile whose [sysctl] sets the default pool at boot."""
    put(root, '/etc/tuned/active_profile', 'oracle\n')
    wants = os.path.join(root, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/usr/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))
    put(root, TUNED_ORACLE, '[main]\nsummary=Optimize for Oracle RDBMS\n\n[sysctl]\nvm.nr_hugepages = 64\n')
    if not reapply_sysctl:
        put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 0\n')


def test_a_tuned_profile_setting_the_pool_at_boot_is_shadowed_naming_it(root, kernel, run_module):
    enable_tuned(root, reapply_sysctl=False)
    before = digest(root)
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root}, check_mode=True)
    assert digest(root) == before
    rec = records(result)['hugepages-2048kB']
    assert rec['status'] == 'shadowed' and rec['persisted'] == 64, rec
    assert 'TuneD profile oracle (%s), reapply_sysctl = 0 in /etc/tuned/tuned-main.conf' % TUNED_ORACLE \
        in rec['detail']


def test_with_reapply_sysctl_our_file_wins_over_the_tuned_profile(root, kernel, run_module):
    enable_tuned(root, reapply_sysctl=True)
    result = run_module(hugepages, {'pages': [{'count': 16}], 'root': root})
    rec = records(result)['hugepages-2048kB']
    assert not result.get('failed') and rec['status'] == 'changed' and rec['persisted'] == 16, rec


def test_a_file_of_our_name_in_run_boots_until_ours_masks_it_and_its_lines_are_carried(root, kernel, run_module):
    # sysctl.d(5): /etc's file masks /run's of the same name; while ours is absent /run's boots
    run_file = SYSCTL_FILE.replace('/etc/', '/run/')
    put(root, run_file, 'vm.nr_hugepages = 8\nvm.hugetlb_shm_group = 54322\n')
    dry = run_module(hugepages, {'pages': [{'count': 16}], 'root': root}, check_mode=True)
    assert records(dry)['hugepages-2048kB']['persisted'] == 8
    run_module(hugepages, {'pages': [{'count': 16}], 'root': root})
    assert read(root, SYSCTL_FILE) == (
        SYSCTL_HEADER + '# Lines carried over from %s, which this file masks (same name).\n' % run_file
        + 'vm.nr_hugepages = 16\nvm.hugetlb_shm_group = 54322\n')
    again = run_module(hugepages, {'pages': [{'count': 16}], 'root': root})
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok']


def test_a_tmpfiles_file_of_our_name_in_run_boots_until_ours_masks_it_and_its_lines_are_carried(
        root, kernel, run_module):
    # tmpfiles.d(5): the same rule for the pools written by systemd-tmpfiles
    run_file = TMPFILES_FILE.replace('/etc/', '/run/')
    other = N0_2M.replace('2048kB', '1048576kB')
    put(root, run_file, 'w %s - - - - 4\nw %s - - - - 2\n' % (N1_1G, other))
    dry = run_module(hugepages, {'pages': [{'size': '1G', 'count': 4, 'node': 1}], 'root': root}, check_mode=True)
    assert (records(dry)['node1/hugepages-1048576kB']['persisted'], records(dry)['node1/hugepages-1048576kB']['status']) \
        == (4, 'drift')   # persisted at boot by /run's file, not live yet
    run_module(hugepages, {'pages': [{'size': '1G', 'count': 6, 'node': 1}], 'root': root})
    assert read(root, TMPFILES_FILE) == (
        TMPFILES_HEADER + '# Lines carried over from %s, which this file masks (same name).\n' % run_file
        + 'w %s - - - - 6\nw %s - - - - 2\n' % (N1_1G, other))
    again = run_module(hugepages, {'pages': [{'size': '1G', 'count': 6, 'node': 1}], 'root': root})
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok']


def test_a_pool_the_kernel_allocated_short_of_what_was_asked_is_named_with_its_nodes(root, kernel, run_module):
    # asked at boot by our file, allocated short (fragmented memory at boot, or taken by another pool)
    put(root, SYSCTL_FILE, SYSCTL_HEADER + 'vm.nr_hugepages = 512\n')
    put(root, G2M, '300\n')
    put(root, N0_2M, '120\n')
    put(root, N1_1G.replace('1048576kB', '2048kB'), '180\n')
    before = digest(root)
    result = run_module(hugepages, {'pages': [{'count': 512}], 'root': root}, check_mode=True)
    rec = records(result)['hugepages-2048kB']
    assert (rec['status'], rec['desired'], rec['live'], rec['persisted']) == ('drift', 512, 300, 512)
    assert rec['reason'] == 'short: the kernel allocated 300 of the 512 pages asked'
    assert rec['detail'].startswith('short: the kernel allocated 300 of the 512 pages asked (asked by %s), short by '
                                    '212; allocated per node: node0 120, node1 180' % SYSCTL_FILE), rec['detail']
    assert digest(root) == before


def test_a_node_pool_allocated_short_names_the_file_that_asks_it(root, kernel, run_module):
    put(root, TMPFILES_FILE, TMPFILES_HEADER + 'w %s - - - - 4\n' % N1_1G)
    put(root, N1_1G, '1\n')
    rec = records(run_module(hugepages, {'pages': [{'size': '1G', 'count': 4, 'node': 1}], 'root': root},
                             check_mode=True))['node1/hugepages-1048576kB']
    assert rec['status'] == 'drift' and rec['reason'] == 'short: the kernel allocated 1 of the 4 pages asked'
    assert rec['detail'].startswith('short: the kernel allocated 1 of the 4 pages asked (asked by %s), short by 3'
                                    % TMPFILES_FILE) and 'per node' not in rec['detail']


def test_a_pool_not_yet_asked_is_plain_drift_not_short(root, kernel, run_module):
    put(root, G2M, '300\n')
    rec = records(run_module(hugepages, {'pages': [{'count': 512}], 'root': root}, check_mode=True))[
        'hugepages-2048kB']
    assert rec['status'] == 'drift' and 'short' not in rec['detail'] and rec['reason'] != ''
    assert not rec['reason'].startswith('short')
