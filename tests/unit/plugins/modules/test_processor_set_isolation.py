# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""processor_set against isolcpus= and nohz_full=: a set whose CPUs the running or the next boot's
kernel command line isolates from load balancing is shadowed, the detail naming the CPUs, the
parameter and where it is set; nohz_full= is said; without either parameter there is no record."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import processor_set
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, records, write

pytestmark = pytest.mark.usefixtures('linux')

GRUB = 'the kernel command line (/etc/default/grub (GRUB_CMDLINE_LINUX + GRUB_CMDLINE_LINUX_DEFAULT))'
PROC = 'the kernel command line (/proc/cmdline)'


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    write(os.path.join(base, 'sys/devices/system/cpu/online'), '0-7\n')
    write(os.path.join(base, 'sys/devices/system/cpu/possible'), '0-7\n')
    for node, cpus in ((0, '0-3'), (1, '4-7')):
        folder = os.path.join(base, 'sys/devices/system/node/node%d' % node)
        write(os.path.join(folder, 'cpulist'), cpus + '\n')
        write(os.path.join(folder, 'meminfo'), 'Node %d MemTotal:  8388608 kB\n' % node)
        write(os.path.join(folder, 'distance'), '10 20\n' if node == 0 else '20 10\n')
    write(os.path.join(base, 'lib/systemd/system/postgresql.service'), '[Service]\nExecStart=/bin/true\n')
    put(base, '/proc/cmdline', 'BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet\n')
    return base


def run(run_module, root, cpus='node:1', check_mode=True):
    result = run_module(processor_set, {'name': 'pg', 'cpus': cpus, 'service': 'postgresql', 'root': root},
                        check_mode=check_mode)
    return result, records(result)


def test_no_isolation_parameter_no_record(run_module, root):
    result, found = run(run_module, root)
    assert 'isolated CPUs' not in found and not result.get('failed')


def test_isolcpus_with_flags_overlapping_the_set_at_boot_is_shadowed(run_module, root):
    put(root, '/etc/default/grub', 'GRUB_CMDLINE_LINUX="isolcpus=domain,managed_irq,2-5 nohz_full=2-5"\n')
    before = digest(root)
    result, found = run(run_module, root)
    assert digest(root) == before
    record = found['isolated CPUs']
    assert (record['status'], record['desired'], record['live'], record['persisted']) == ('shadowed', '4-7', '', '4-5')
    assert record['target'] == GRUB and record['reason'] == 'shadowed: CPUs 4-5 isolated by isolcpus='
    assert record['detail'] == (
        "CPUs 4-5 of the set are isolated by isolcpus=domain,managed_irq,2-5 in %s (at boot): the scheduler does not "
        "balance the set's processes across them, each stays on the CPU it is placed on; CPUs 4-5 of the set run "
        "without the scheduler tick (%s, at boot): meant for one busy task per CPU" % (GRUB, GRUB))
    # a real run still writes the drop-in, and the record stays
    applied, found = run(run_module, root, check_mode=False)
    assert applied['settings'][0]['status'] == 'changed' and found['isolated CPUs']['status'] == 'shadowed'
    again, found = run(run_module, root, check_mode=False)
    assert again['changed'] is False and found['isolated CPUs']['status'] == 'shadowed'


def test_running_isolcpus_without_flags_and_a_range_list(run_module, root):
    put(root, '/proc/cmdline', 'ro isolcpus=1,6-7 quiet\n')
    result, found = run(run_module, root)
    record = found['isolated CPUs']
    assert (record['status'], record['live'], record['target']) == ('shadowed', '6-7', PROC)
    assert record['detail'].startswith('CPUs 6-7 of the set are isolated by isolcpus=1,6-7 in %s (running)' % PROC)


def test_isolation_outside_the_set_is_ok_and_said(run_module, root):
    put(root, '/etc/kernel/cmdline', 'root=/dev/vda1 isolcpus=nohz,domain,0-1\n')
    result, found = run(run_module, root)
    record = found['isolated CPUs']
    assert (record['status'], record['live'], record['persisted']) == ('ok', '', '')
    assert record['detail'] == ('isolcpus=nohz,domain,0-1 in the kernel command line (/etc/kernel/cmdline) (at boot) '
                                "isolates CPUs 0-1, none of the set's")


def test_nohz_only_and_isolcpus_without_domain_are_no_conflict(run_module, root):
    put(root, '/proc/cmdline', 'ro nohz_full=4-7 isolcpus=managed_irq,4-7\n')
    result, found = run(run_module, root)
    record = found['isolated CPUs']
    assert record['status'] == 'ok' and record['reason'] is None
    assert record['detail'] == ('CPUs 4-7 of the set run without the scheduler tick (%s, running): meant for one '
                                'busy task per CPU' % PROC)


def test_a_list_the_kernel_cannot_read_is_said(run_module, root):
    put(root, '/proc/cmdline', 'ro isolcpus=fast,4-7\n')
    result, found = run(run_module, root)
    record = found['isolated CPUs']
    assert record['status'] == 'ok'
    assert record['detail'].startswith('%s, running: isolcpus=fast,4-7' % PROC)


def test_what_tuned_adds_to_the_boot_entries_is_read(run_module, root):
    put(root, '/etc/tuned/bootcmdline', 'TUNED_BOOT_CMDLINE="skew_tick=1 isolcpus=managed_irq,domain,4-7 nohz_full=4-7"\n'
                                        'TUNED_BOOT_INITRD_ADD=""\n')
    result, found = run(run_module, root)
    record = found['isolated CPUs']
    label = 'the kernel command line (/etc/tuned/bootcmdline (TUNED_BOOT_CMDLINE))'
    assert (record['status'], record['target'], record['persisted']) == ('shadowed', label, '4-7')
    assert record['detail'].startswith('CPUs 4-7 of the set are isolated by isolcpus=managed_irq,domain,4-7 in %s '
                                       '(at boot)' % label)
