# -*- coding: utf-8 -*-
"""Vector keys (kernel.sem) against every value a consumer already has: the live kernel,
the value systemd-sysctl loads at the next boot from every sysctl.d folder, and the value
it would load without our line.  A minimum never lowers any field of any of them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_backends import LinuxBackend
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

pytestmark = pytest.mark.usefixtures('linux')

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.\n'
ORACLE_SEM = '250 32000 100 128'


def host(tmp_path, live_sem, files):
    root = str(tmp_path)
    put(root, '/proc/sys/kernel/sem', live_sem.replace(' ', '\t') + '\n')
    os.makedirs(os.path.join(root, 'etc', 'sysctl.d'), exist_ok=True)
    for path, text in files.items():
        put(root, path, text)
    return root


def sem_minimum(root, check_mode=False, run_module=None, mode='minimum', value=ORACLE_SEM):
    return run_module(kernel_params, {'params': {'kernel.sem': value}, 'mode': mode, 'root': root},
                      check_mode=check_mode)


def test_issue_layout_keeps_semmni_from_an_earlier_file(tmp_path, run_module):
    """Live 250 32000 50 128 and 80-local.conf 250 16000 100 4096: our 90- file wins at
    boot, so it must carry semmni 4096 (not the live 128) and semmns 32000."""
    root = host(tmp_path, '250 32000 50 128', {'/etc/sysctl.d/80-local.conf': 'kernel.sem = 250 16000 100 4096\n'})
    before = digest(root)
    check = sem_minimum(root, check_mode=True, run_module=run_module)
    assert digest(root) == before
    record = records(check)['kernel.sem']
    assert record['status'] == 'drift'
    assert 'live: semopm 50 < 100' in record['detail']
    assert 'at boot (/etc/sysctl.d/80-local.conf): semmns 16000 < 32000' in record['detail']
    applied = sem_minimum(root, run_module=run_module)
    assert read(root, OUR_FILE) == HEADER + 'kernel.sem = 250 32000 100 4096\n'
    # live: only what the desired value asks is raised
    assert read(root, '/proc/sys/kernel/sem') == '250 32000 100 128'
    assert records(applied)['kernel.sem']['persisted'] == '250 32000 100 4096'
    again = sem_minimum(root, run_module=run_module)
    assert again['changed'] is False and records(again)['kernel.sem']['status'] == 'ok'


def test_our_earlier_line_that_lowers_a_field_is_rewritten(tmp_path, run_module):
    root = host(tmp_path, '250 32000 100 128', {
        '/etc/sysctl.d/80-local.conf': 'kernel.sem = 250 16000 100 4096\n',
        OUR_FILE: HEADER + 'kernel.sem = 250 32000 100 128\n'})
    check = sem_minimum(root, check_mode=True, run_module=run_module)
    record = records(check)['kernel.sem']
    assert record['status'] == 'drift'
    assert 'semmni 128 < 4096' in record['detail'] and '/etc/sysctl.d/80-local.conf' in record['detail']
    sem_minimum(root, run_module=run_module)
    assert read(root, OUR_FILE) == HEADER + 'kernel.sem = 250 32000 100 4096\n'
    assert sem_minimum(root, run_module=run_module)['changed'] is False


def test_our_line_is_removed_when_the_boot_value_without_it_meets_the_minimum(tmp_path, run_module):
    root = host(tmp_path, '250 32000 100 128', {
        '/usr/lib/sysctl.d/30-vendor.conf': 'kernel.sem = 500 64000 200 4096\n',
        OUR_FILE: HEADER + 'fs.aio-max-nr = 1048576\nkernel.sem = 250 32000 100 128\n'})
    result = sem_minimum(root, run_module=run_module)
    assert read(root, OUR_FILE) == HEADER + 'fs.aio-max-nr = 1048576\n'
    record = records(result)['kernel.sem']
    assert record['persisted'] == '500 64000 200 4096'
    assert 'removed it' in record['detail']
    again = sem_minimum(root, run_module=run_module)
    assert again['changed'] is False and records(again)['kernel.sem']['status'] == 'ok'


def test_a_host_that_already_grants_more_gets_nothing_written(tmp_path, run_module):
    root = host(tmp_path, '500 64000 200 4096', {'/etc/sysctl.d/60-dba.conf': 'kernel.sem = 500 64000 200 4096\n'})
    before = digest(root)
    result = sem_minimum(root, run_module=run_module)
    assert digest(root) == before
    assert result['changed'] is False
    record = records(result)['kernel.sem']
    assert record['status'] == 'ok' and 'persisted by /etc/sysctl.d/60-dba.conf' in record['detail']


def test_exact_is_enforced_field_by_field(tmp_path, run_module):
    root = host(tmp_path, '500 64000 200 4096', {'/etc/sysctl.d/60-dba.conf': 'kernel.sem = 500 64000 200 4096\n'})
    result = sem_minimum(root, run_module=run_module, mode='exact')
    assert read(root, OUR_FILE) == HEADER + 'kernel.sem = 250 32000 100 128\n'
    assert read(root, '/proc/sys/kernel/sem') == '250 32000 100 128'
    assert records(result)['kernel.sem']['status'] == 'changed'


def test_a_later_file_that_wins_is_shadowed_and_named_per_field(tmp_path, run_module):
    root = host(tmp_path, '250 32000 100 128', {'/etc/sysctl.d/95-late.conf': 'kernel.sem = 250 32000 100 64\n'})
    result = run_module(kernel_params, {'params': {'kernel.sem': ORACLE_SEM}, 'mode': 'minimum', 'root': root,
                                        'fail_on_shadowed': False})
    record = records(result)['kernel.sem']
    assert record['status'] == 'shadowed' and '/etc/sysctl.d/95-late.conf' in record['detail']
    assert 'semmni 64 < 128' in record['detail']


@pytest.mark.parametrize('layout, expected', [
    # masking: a name in /etc masks the same name in /usr/lib
    ({'/usr/lib/sysctl.d/50-a.conf': 'kernel.sem = 1 2 3 4\n', '/etc/sysctl.d/50-a.conf': 'kernel.sem = 5 6 7 8\n'},
     ('5 6 7 8', '/etc/sysctl.d/50-a.conf')),
    # order by file name across folders, later assignments win, an exact key beats a glob
    ({'/usr/lib/sysctl.d/70-b.conf': 'kernel.sem = 1 2 3 4\n', '/run/sysctl.d/20-a.conf': 'kernel.sem = 5 6 7 8\n',
      '/etc/sysctl.d/99-z.conf': 'kernel.se* = 9 9 9 9\n'}, ('1 2 3 4', '/usr/lib/sysctl.d/70-b.conf')),
    # a link to /dev/null disables the name everywhere
    ({'/usr/lib/sysctl.d/70-b.conf': 'kernel.sem = 1 2 3 4\n', '/etc/sysctl.d/70-b.conf': '@/dev/null',
      '/usr/lib/sysctl.d/10-a.conf': 'kernel.sem = 5 6 7 8\n'}, ('5 6 7 8', '/usr/lib/sysctl.d/10-a.conf')),
])
def test_boot_value_resolved_across_the_sysctl_d_folders(tmp_path, layout, expected):
    root = str(tmp_path)
    for path, text in layout.items():
        if text.startswith('@'):
            local = os.path.join(root, path.lstrip('/'))
            os.makedirs(os.path.dirname(local), exist_ok=True)
            os.symlink(text[1:], local)
        else:
            put(root, path, text)
    resolve = LinuxBackend(root).persisted_resolver(OUR_FILE, None)
    assert resolve('kernel.sem') == expected


@pytest.mark.parametrize('desired, grants, comparison, expected', [
    ('250 32000 100 128', ['250 32000 50 128', '250 16000 100 4096'], 'minimum', '250 32000 100 4096'),
    ('250 32000 100 128', [None, '1 2 3'], 'minimum', '250 32000 100 128'),
    ('250 32000 100 128', ['999 1 1 1'], ['exact', 'minimum', 'minimum', 'minimum'], '250 32000 100 128'),
    ('10', ['60', '30'], 'maximum', '10'),
    ('10', ['5', '30'], 'maximum', '5'),
    ('10', ['5'], 'exact', '10'),
    ('1024', ['unlimited'], 'minimum', 'unlimited'),
])
def test_combine_field_by_field(desired, grants, comparison, expected):
    assert compare.combine(desired, grants, comparison) == expected


def test_short_fields_names_each_low_field():
    assert compare.short_fields('250 16000 50 4096', ORACLE_SEM, 'minimum', ('semmsl', 'semmns', 'semopm', 'semmni')) \
        == ['semmns 16000 < 32000', 'semopm 50 < 100']
    assert compare.short_fields('1 2', '1 3', 'exact') == ['field 2 2 != 3']


def test_the_module_reads_marks_in_values(tmp_path, run_module):
    root = host(tmp_path, '500 64000 200 4096', {'/etc/sysctl.d/60-dba.conf': 'kernel.sem = 500 64000 200 4096\n'})
    before = digest(root)
    result = run_module(kernel_params, {'params': {'kernel.sem': '>=250 32000 100 128'}, 'root': root})
    assert digest(root) == before and result['changed'] is False
    record = records(result)['kernel.sem']
    assert (record['status'], record['comparison'], record['desired']) == ('ok', 'minimum', ORACLE_SEM)
    refused = run_module(kernel_params, {'params': {'kernel.sem': '>=250 32000 100 128'}, 'root': root,
                                         'comparisons': {'kernel.sem': 'exact'}})
    assert refused['failed'] is True and 'say it once' in refused['msg']
    assert digest(root) == before
