# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params reads another file's value as the kernel parses it (octal, hex, fields left
out or beyond, a refused line), and a file of our own name in a later sysctl.d folder as the
one that boots while ours does not exist."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

pytestmark = pytest.mark.usefixtures('linux')

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.\n'
ORACLE_SEM = '250 32000 100 128'


def host(tmp_path, files, live=None):
    root = str(tmp_path)
    values = {'kernel/sem': ORACLE_SEM, 'kernel/shmmax': '18446744073692774399', 'kernel/shmmni': '4096'}
    values.update(live or {})
    for name, value in values.items():
        put(root, '/proc/sys/' + name, value.replace(' ', '\t') + '\n')
    os.makedirs(os.path.join(root, 'etc', 'sysctl.d'), exist_ok=True)
    for path, text in files.items():
        put(root, path, text)
    return root


def run(run_module, root, params, check_mode=False, mode='minimum'):
    return run_module(kernel_params, {'params': params, 'mode': mode, 'root': root, 'fail_on_shadowed': False},
                      check_mode=check_mode)


def test_an_octal_boot_line_is_below_the_minimum(tmp_path, run_module):
    """0300 is 192 and 0100 is 64 to the kernel: the boot would lower semmsl and semopm."""
    root = host(tmp_path, {'/etc/sysctl.d/10-site.conf': 'kernel.sem = 0300 32000 0100 0200\n'})
    before = digest(root)
    check = records(run(run_module, root, {'kernel.sem': ORACLE_SEM}, check_mode=True))['kernel.sem']
    assert digest(root) == before
    assert check['status'] == 'drift'
    assert check['persisted'] == '192 32000 64 128'
    assert 'semmsl 192 < 250' in check['detail'] and 'semopm 64 < 100' in check['detail']
    applied = records(run(run_module, root, {'kernel.sem': ORACLE_SEM}))['kernel.sem']
    assert read(root, OUR_FILE) == HEADER + 'kernel.sem = 250 32000 100 128\n'
    assert applied['persisted'] == ORACLE_SEM
    again = run(run_module, root, {'kernel.sem': ORACLE_SEM})
    assert again['changed'] is False and records(again)['kernel.sem']['status'] == 'ok'


def test_a_hex_line_is_a_number(tmp_path, run_module):
    root = host(tmp_path, {'/etc/sysctl.d/10-site.conf': 'kernel.shmmax = 0x400000000\n'}, {'kernel/shmmax': '17179869184'})
    record = records(run(run_module, root, {'kernel.shmmax': 17179869184}, check_mode=True, mode='exact'))['kernel.shmmax']
    assert record['status'] == 'ok' and record['persisted'] == '17179869184'


def test_a_short_vector_keeps_the_built_in_fields_and_a_long_one_drops_the_rest(tmp_path, run_module):
    root = host(tmp_path, {'/etc/sysctl.d/10-site.conf': 'kernel.sem = 250 32000 100\n'})
    record = records(run(run_module, root, {'kernel.sem': ORACLE_SEM}, check_mode=True))['kernel.sem']
    assert record['persisted'] == '250 32000 100 32000' and record['status'] == 'ok'
    put(root, '/etc/sysctl.d/10-site.conf', 'kernel.sem = 250 32000 100 128 64\n')
    record = records(run(run_module, root, {'kernel.sem': ORACLE_SEM}, check_mode=True, mode='exact'))['kernel.sem']
    assert record['persisted'] == ORACLE_SEM and record['status'] == 'ok'


def test_a_line_the_kernel_refuses_leaves_the_built_in_value(tmp_path, run_module):
    """kernel.shmmni = 4096abc is refused: the boot keeps 4096 (SHMMNI), whatever the text says."""
    root = host(tmp_path, {'/etc/sysctl.d/99-late.conf': 'kernel.shmmni = 8192abc\n'})
    record = records(run(run_module, root, {'kernel.shmmni': 8192}, check_mode=True))['kernel.shmmni']
    assert record['persisted'] == '4096'
    # a later file's refused line still replaces ours in systemd-sysctl: shadowed, before and after the write
    assert record['status'] == 'shadowed'
    applied = records(run(run_module, root, {'kernel.shmmni': 8192}))['kernel.shmmni']
    assert applied['status'] == 'shadowed' and applied['persisted'] == '4096'
    assert '/etc/sysctl.d/99-late.conf' in applied['reason']


def test_trailing_words_after_a_blank_are_not_read(tmp_path, run_module):
    root = host(tmp_path, {'/etc/sysctl.d/10-site.conf': 'kernel.shmmni = 8192 # the DBA asked\n'},
                {'kernel/shmmni': '8192'})
    record = records(run(run_module, root, {'kernel.shmmni': 8192}, check_mode=True, mode='exact'))['kernel.shmmni']
    assert record['status'] == 'ok' and record['persisted'] == '8192'


@pytest.mark.parametrize('folder', ['/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d'])
def test_a_file_of_our_name_in_a_later_folder_boots_while_ours_does_not_exist(tmp_path, run_module, folder):
    """/run/sysctl.d/90-dbhost-tuning.conf sets shmmax 1G and more: it is what boots; ours, once
    written, masks it, so its other lines are carried over and nothing it gave is lost."""
    theirs = '%s/90-dbhost-tuning.conf' % folder
    root = host(tmp_path, {theirs: 'kernel.shmmax = 1073741824\nkernel.msgmax = 65536\n'},
                {'kernel/shmmax': '12884901888', 'kernel/msgmax': '65536'})
    before = digest(root)
    check = run(run_module, root, {'kernel.shmmax': 12884901888}, check_mode=True, mode='exact')
    assert digest(root) == before
    record = records(check)['kernel.shmmax']
    assert record['status'] == 'drift' and record['persisted'] == '1073741824'
    assert theirs in record['detail']
    assert 'masks %s (same name)' % theirs in record['detail']
    applied = run(run_module, root, {'kernel.shmmax': 12884901888}, mode='exact')
    text = read(root, OUR_FILE)
    assert text.startswith(HEADER) and 'kernel.msgmax = 65536\n' in text and 'kernel.shmmax = 12884901888\n' in text
    assert 'kernel.shmmax = 1073741824' not in text
    assert records(applied)['kernel.shmmax']['persisted'] == '12884901888'
    again = run(run_module, root, {'kernel.shmmax': 12884901888, 'kernel.msgmax': 65536}, mode='exact')
    assert again['changed'] is False
    assert all(item['status'] == 'ok' for item in records(again).values())


def test_a_masked_file_of_our_name_boots_nothing(tmp_path, run_module):
    root = host(tmp_path, {'/usr/lib/sysctl.d/90-dbhost-tuning.conf': 'kernel.shmmni = 100\n'})
    os.makedirs(os.path.join(root, 'run', 'sysctl.d'))
    os.symlink('/dev/null', os.path.join(root, 'run', 'sysctl.d', '90-dbhost-tuning.conf'))
    record = records(run(run_module, root, {'kernel.shmmni': 4096}, check_mode=True))['kernel.shmmni']
    assert record['persisted'] == '4096' and record['status'] == 'ok'


def test_a_number_with_leading_zeros_is_written_in_canonical_decimal(tmp_path, run_module):
    """'0300' asked for means three hundred; written as is, the kernel would read 192."""
    root = host(tmp_path, {}, {'kernel/shmmni': '4096', 'net/core/somaxconn': '128'})
    result = run(run_module, root, {'kernel.shmmni': '08192', 'net.core.somaxconn': '01024'}, mode='exact')
    assert read(root, OUR_FILE) == HEADER + 'kernel.shmmni = 8192\nnet.core.somaxconn = 1024\n'
    found = records(result)
    assert found['kernel.shmmni']['desired'] == '8192' and found['net.core.somaxconn']['desired'] == '1024'
    assert read(root, '/proc/sys/kernel/shmmni') == '8192'
