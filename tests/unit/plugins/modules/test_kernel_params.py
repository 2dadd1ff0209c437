# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import kernel_backends
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, make_plan, put, read, records

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.\n'

LIVE = {
    'kernel/sem': '32000\t1024000000\t500\t32000',
    'kernel/shmmni': '4096',
    'kernel/panic_on_oops': '0',
    'fs/file-max': '9223372036854775807',
    'fs/aio-max-nr': '65536',
    'net/ipv4/ip_local_port_range': '32768\t60999',
    'net/core/rmem_max': '212992',
}


pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    for key, value in LIVE.items():
        put(base, 'proc/sys/' + key, value + '\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    put(base, '/usr/lib/sysctl.d/50-default.conf', '# vendor\nkernel.panic_on_oops = 0\n')
    return base


PARAMS = {'kernel.sem': [250, 32000, 100, 128], 'kernel/shmmni': 4096, 'kernel.panic_on_oops': 1,
          'fs.aio-max-nr': 1048576, 'net.ipv4.ip_local_port_range': '9000  65500'}


def test_check_mode_changes_nothing_and_reports_drift(root, run_module):
    before = digest(root)
    result = run_module(kernel_params, {'params': PARAMS, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before
    assert result['changed'] is True
    by_name = records(result)
    # live fine, and no file sets it: the kernel's built-in SHMMNI (4096) applies at boot
    assert by_name['kernel.shmmni']['status'] == 'ok'
    assert by_name['kernel.shmmni']['persisted'] == '4096'
    assert "built-in boot value" in by_name['kernel.shmmni']['detail']
    assert by_name['kernel.panic_on_oops']['status'] == 'drift'
    assert by_name['kernel.panic_on_oops']['persisted'] == '0'
    assert by_name['net.ipv4.ip_local_port_range']['live'] == '32768 60999'
    assert result['diff'][0]['before'] == ''
    assert result['diff'][0]['after_header'] == OUR_FILE


def test_apply_then_idempotent(root, run_module):
    first = run_module(kernel_params, {'params': PARAMS, 'root': root})
    assert first['changed'] is True
    statuses = dict((s['name'], s['status']) for s in first['settings'])
    # kernel.shmmni is 4096 live and at boot (the kernel's own SHMMNI): nothing to write
    assert statuses == {'fs.aio-max-nr': 'changed', 'kernel.panic_on_oops': 'changed', 'kernel.sem': 'changed',
                        'kernel.shmmni': 'ok', 'net.ipv4.ip_local_port_range': 'changed'}
    assert read(root, OUR_FILE) == HEADER + (
        'fs.aio-max-nr = 1048576\n'
        'kernel.panic_on_oops = 1\n'
        'kernel.sem = 250 32000 100 128\n'
        'net.ipv4.ip_local_port_range = 9000 65500\n')
    assert read(root, '/proc/sys/kernel/sem') == '250 32000 100 128'
    assert read(root, '/proc/sys/net/ipv4/ip_local_port_range') == '9000 65500'
    assert read(root, '/proc/sys/kernel/shmmni') == '4096\n'  # already right: not written
    second = run_module(kernel_params, {'params': PARAMS, 'root': root})
    assert second['changed'] is False
    assert set(s['status'] for s in second['settings']) == {'ok'}
    assert 'diff' not in second


def test_minimum_mode_never_lowers(root, run_module):
    result = run_module(kernel_params, {'params': {'kernel.sem': '250 32000 100 128', 'fs.file-max': 6815744,
                                                   'net.ipv4.ip_local_port_range': '9000 65500'},
                                        'mode': 'minimum', 'root': root})
    by_name = records(result)
    assert by_name['kernel.sem']['live'] == '32000 1024000000 500 32000'
    assert by_name['fs.file-max']['live'] == '9223372036854775807'
    # ranges compare exactly even in minimum mode
    assert by_name['net.ipv4.ip_local_port_range']['live'] == '9000 65500'
    # kernel.sem: the live value and the kernel's built-in one both meet every field's minimum
    assert by_name['kernel.sem']['status'] == 'ok' and by_name['kernel.sem']['comparison'] == 'minimum'
    assert by_name['kernel.sem']['persisted'] == '32000 1024000000 500 32000'
    assert 'kernel.sem' not in read(root, OUR_FILE)
    # fs.file-max has no constant built-in value: the higher live value is persisted, not lowered
    assert 'fs.file-max = 9223372036854775807\n' in read(root, OUR_FILE)
    assert by_name['net.ipv4.ip_local_port_range']['comparison'] == 'exact'


def test_shadowed_by_a_later_file(root, run_module):
    with open(os.path.join(root, 'etc', 'sysctl.d', '99-other.conf'), 'w') as handle:
        handle.write('kernel.shmmni = 100\n')
    result = run_module(kernel_params, {'params': {'kernel.shmmni': 4096}, 'root': root})
    assert result['failed'] is True
    assert '99-other.conf' in result['msg'] and 'kernel.shmmni' in result['msg']
    # the failure comes after the file was written: it says so, naming it
    wrote = 'wrote %s' % os.path.join(root, OUR_FILE.lstrip('/'))
    assert 'written before this failure, and kept: ' in result['msg'] and wrote in result['msg']
    assert wrote in result['written']
    record = records(result)['kernel.shmmni']
    assert record['status'] == 'shadowed' and record['persisted'] == '100'
    assert '/etc/sysctl.d/99-other.conf' in record['detail']
    # ours is written all the same; without fail_on_shadowed the task passes and says so
    assert 'kernel.shmmni = 4096' in read(root, OUR_FILE)
    again = run_module(kernel_params, {'params': {'kernel.shmmni': 4096}, 'root': root, 'fail_on_shadowed': False})
    assert not again.get('failed') and again['changed'] is False
    assert records(again)['kernel.shmmni']['status'] == 'shadowed'


def test_our_file_masked_boot_value_ignores_it(root, run_module):
    """An admin masked our file (a link to /dev/null): boot reads the vendor's value, so what
    we would write there cannot persist; nothing is written, and the refusal says why."""
    os.symlink('/dev/null', os.path.join(root, OUR_FILE.lstrip('/')))
    before = digest(root)
    result = run_module(kernel_params, {'params': {'kernel.panic_on_oops': 1}, 'root': root, 'apply': False},
                        check_mode=True)
    assert digest(root) == before
    record = records(result)['kernel.panic_on_oops']
    assert (record['persisted'], record['status']) == ('0', 'shadowed')
    assert '/usr/lib/sysctl.d/50-default.conf' in record['detail']
    done = run_module(kernel_params, {'params': {'kernel.panic_on_oops': 1}, 'root': root, 'apply': False})
    assert done['failed'] is True and '/dev/null' in done['msg']
    assert digest(root) == before


def test_fixed_by_hand_lost_at_reboot_is_drift(root, run_module):
    run_module(kernel_params, {'params': {'kernel.panic_on_oops': 1}, 'root': root})
    os.unlink(os.path.join(root, OUR_FILE.lstrip('/')))  # live is 1, nothing persists it any more
    result = run_module(kernel_params, {'params': {'kernel.panic_on_oops': 1}, 'root': root}, check_mode=True)
    record = records(result)['kernel.panic_on_oops']
    assert (record['live'], record['persisted'], record['status']) == ('1', '0', 'drift')


def test_refused_key_reported_others_applied(root, run_module, monkeypatch):
    real_write = kernel_backends.LinuxBackend.write_live

    def write_live(self, key, value):
        if key == 'kernel.shmmni':
            raise OSError(errno.EINVAL, 'Invalid argument')
        return real_write(self, key, value)
    monkeypatch.setattr(kernel_backends.LinuxBackend, 'write_live', write_live)
    params = {'kernel.shmmni': 32768, 'fs.aio-max-nr': 1048576}
    result = run_module(kernel_params, {'params': params, 'root': root})
    assert result['failed'] is True and 'kernel.shmmni' in result['msg'] and 'fs.aio-max-nr' not in result['msg']
    by_name = records(result)
    assert by_name['kernel.shmmni']['status'] == 'failed'
    assert 'Invalid argument' in by_name['kernel.shmmni']['detail']
    assert by_name['fs.aio-max-nr']['status'] == 'changed'
    assert read(root, OUR_FILE) == HEADER + 'fs.aio-max-nr = 1048576\n'


def test_a_value_the_kernel_clamps_on_write_is_named_asked_and_read_back(root, run_module, monkeypatch):
    # fs.pipe-max-size: the kernel rounds a size up to a power-of-two number of pages (fs/pipe.c
    # round_pipe_size): 100000 bytes is stored as 131072
    put(root, 'proc/sys/fs/pipe-max-size', '1048576\n')
    real_write = kernel_backends.LinuxBackend.write_live

    def write_live(self, key, value):
        if key == 'fs.pipe-max-size':
            pages = -(-int(value) // 4096)
            return real_write(self, key, str(4096 * (1 << (pages - 1).bit_length())))
        return real_write(self, key, value)
    monkeypatch.setattr(kernel_backends.LinuxBackend, 'write_live', write_live)
    result = run_module(kernel_params, {'params': {'fs.pipe-max-size': 100000, 'fs.aio-max-nr': 1048576},
                                        'root': root})
    record = records(result)['fs.pipe-max-size']
    assert result['failed'] is True and 'fs.pipe-max-size' in result['msg']
    assert (record['status'], record['desired'], record['live']) == ('failed', '100000', '131072')
    assert record['detail'].startswith("the kernel refused '100000': clamped on write: asked '100000', read back "
                                       "'131072'; not persisted"), record['detail']
    # what the kernel would not keep is not written for the next boot either
    assert read(root, OUR_FILE) == HEADER + 'fs.aio-max-nr = 1048576\n'


def test_absent_removes_our_line_only(root, run_module):
    run_module(kernel_params, {'params': {'kernel.panic_on_oops': 1, 'fs.aio-max-nr': 1048576}, 'root': root})
    result = run_module(kernel_params, {'params': ['kernel.panic_on_oops'], 'state': 'absent', 'root': root})
    assert result['changed'] is True
    assert read(root, OUR_FILE) == HEADER + 'fs.aio-max-nr = 1048576\n'
    assert read(root, '/proc/sys/kernel/panic_on_oops') == '1'
    again = run_module(kernel_params, {'params': ['kernel.panic_on_oops'], 'state': 'absent', 'root': root})
    assert again['changed'] is False


def test_keeps_comments_owner_mode_and_backup(root, run_module):
    path = os.path.join(root, OUR_FILE.lstrip('/'))
    with open(path, 'w') as handle:
        handle.write('# local note\nkernel.shmmni=1\nvm.other = 5\n')
    os.chmod(path, 0o640)
    result = run_module(kernel_params, {'params': {'kernel.shmmni': 4096}, 'root': root, 'backup': True})
    assert read(root, OUR_FILE) == '# local note\nkernel.shmmni=4096\nvm.other = 5\n'
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)
    assert read(root, result['backup_file'][len(root):]) == '# local note\nkernel.shmmni=1\nvm.other = 5\n'


@pytest.mark.parametrize('args, message', [
    ({'params': {'../../etc/passwd': 1}}, '../../etc/passwd'),
    ({'params': {'/proc/sys/kernel/shmmni': 1}}, 'absolute'),
    ({'params': {'kernel.shmmni': '4096\nkernel.panic=1'}}, 'newline'),
    ({'params': {'kernel.shmmni': 'lots'}}, 'not numeric'),
    ({'params': {'kernel.sem': '250 32000 100'}}, 'takes 4 value'),
    ({'params': {'kernel.shmmni': True}}, 'boolean'),
    ({'params': {'kernel.shmmni': 1, 'kernel/shmmni': 2}}, 'both mean'),
    ({'params': {}}, 'non-empty'),
    ({'params': {'kernel.shmmni': 1}, 'file': '/etc/tuning.conf'}, 'not read at boot'),
    ({'params': {'kernel.shmmni': 1}, 'file': '/etc/sysctl.d/../x.conf'}, '..'),
])
def test_bad_input_fails_before_touching_anything(root, run_module, args, message):
    before = digest(root)
    args = dict(args, root=root)
    result = run_module(kernel_params, args)
    assert result['failed'] is True
    assert message in result['msg']
    assert digest(root) == before


def test_offline_root_manages_persisted_only(tmp_path, run_module):
    base = str(tmp_path)
    result = run_module(kernel_params, {'params': {'kernel.shmmni': 8192}, 'root': base})
    record = records(result)['kernel.shmmni']
    assert record['live'] is None and record['status'] == 'changed'
    assert 'live value not read' in record['detail']
    assert read(base, OUR_FILE) == HEADER + 'kernel.shmmni = 8192\n'


def test_sunos_persists_in_etc_system_pending_reboot(tmp_path, run_module, monkeypatch):
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    base = str(tmp_path)
    os.makedirs(os.path.join(base, 'etc'))
    with open(os.path.join(base, 'etc', 'system'), 'w') as handle:
        handle.write('* comment\nset shmsys:shminfo_shmmax=0x1000\nforceload: sys/shmsys\n')
    params = {'shmsys:shminfo_shmmax': 4294967295, 'semsys:seminfo_semmni': 100}
    check = run_module(kernel_params, {'params': params, 'root': base}, check_mode=True)
    assert set(s['status'] for s in check['settings']) == {'drift'}
    result = run_module(kernel_params, {'params': params, 'root': base})
    assert result['reboot_required'] is True and result['changed'] is True
    assert set(s['status'] for s in result['settings']) == {'pending_reboot'}
    assert read(base, '/etc/system') == ('* comment\nset shmsys:shminfo_shmmax=4294967295\nforceload: sys/shmsys\n'
                                         'set semsys:seminfo_semmni=100\n')
    again = run_module(kernel_params, {'params': params, 'root': base})
    assert again['changed'] is False and set(s['status'] for s in again['settings']) == {'ok'}
    bad = run_module(kernel_params, {'params': {'kernel.shmmax': 1}, 'root': base})
    assert bad['failed'] and 'kernel.shmmax' in bad['msg']


def test_freebsd_uses_sysctl_and_sysctl_conf(tmp_path):
    base = str(tmp_path)
    calls = []
    live = {'kern.ipc.shm_use_phys': '0', 'kern.ipc.shmmax': '536870912'}

    def runner(argv):
        calls.append(argv)
        if argv[:2] == ['sysctl', '-n']:
            return (0, live[argv[2]] + '\n', '') if argv[2] in live else (1, '', 'sysctl: unknown oid')
        key, value = argv[1].split('=', 1)
        live[key] = value
        return 0, '%s: 0 -> %s\n' % (key, value), ''
    os.makedirs(os.path.join(base, 'etc'))
    with open(os.path.join(base, 'etc', 'sysctl.conf'), 'w') as handle:
        handle.write('# FreeBSD\nsecurity.bsd.see_other_uids=0\n')

    def plan(params):
        made = make_plan('kernel_params', dict(params=params, root=base),
                         registry.Context(runner=runner, system_name='FreeBSD'))
        # Recorded sysctl(8) answers stand in for the running kernel of a root-less test.
        made.backend.live_available = True
        return made
    result = plan({'kern.ipc.shm_use_phys': 1}).run().as_dict()
    assert result['settings'][0]['status'] == 'changed'
    assert ['sysctl', 'kern.ipc.shm_use_phys=1'] in calls
    assert read(base, '/etc/sysctl.conf') == '# FreeBSD\nsecurity.bsd.see_other_uids=0\nkern.ipc.shm_use_phys=1\n'
    assert plan({'kern.ipc.shm_use_phys': 1}).run().as_dict()['changed'] is False
    # A key this kernel does not have is unsupported, with the reason; the line is persisted.
    missing = plan({'kern.nope': 1}).run().as_dict()['settings'][0]
    assert missing['status'] == 'unsupported'
    assert missing['detail'].startswith('no sysctl kern.nope on this kernel')
    assert ['sysctl', 'kern.nope=1'] not in calls


def test_read_only_key_is_unsupported_not_failed(root, run_module):
    path = os.path.join(root, 'proc', 'sys', 'net', 'core', 'rmem_max')
    os.chmod(path, 0o444)  # as net.core.rmem_max shows inside a container's network namespace
    before = read(root, '/proc/sys/net/core/rmem_max')
    # A read-only key that already has the value needs no write: it is like any other key
    # (here drift: no file persists it yet).
    ok = run_module(kernel_params, {'params': {'net.core.rmem_max': 212992}, 'root': root}, check_mode=True)
    assert records(ok)['net.core.rmem_max']['status'] == 'drift'
    assert records(ok)['net.core.rmem_max']['detail'] == 'would write %s' % OUR_FILE
    params = {'net.core.rmem_max': 4194304, 'kernel.shmmni': 8192}
    check = run_module(kernel_params, {'params': params, 'root': root}, check_mode=True)
    assert records(check)['net.core.rmem_max']['status'] == 'unsupported'
    result = run_module(kernel_params, {'params': params, 'root': root})
    assert not result.get('failed')
    record = records(result)['net.core.rmem_max']
    assert record['status'] == 'unsupported' and 'read-only' in record['detail']
    assert records(result)['kernel.shmmni']['status'] == 'changed'
    assert read(root, '/proc/sys/net/core/rmem_max') == before
    # persisted for a boot where it can be set, and said so
    assert 'net.core.rmem_max = 4194304\n' in read(root, OUR_FILE)
    assert record['detail'].endswith('not set live; wrote it to %s for a boot where it can be set' % OUR_FILE)


@pytest.mark.parametrize('release, has_system_d', [('Solaris 10', False), ('Solaris 11.1', False),
                                                   ('Solaris 11.4', True), ('illumos', True)])
def test_sunos_system_d_file_where_the_release_has_it(tmp_path, run_module, monkeypatch, release, has_system_d):
    """Solaris 11.2 and later and illumos (9696) have /etc/system.d, and Oracle's 11.4 tuning guide
    asks for a file there; Solaris 10, 11.0 and 11.1 read /etc/system only."""
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    base = str(tmp_path)
    os.makedirs(os.path.join(base, 'etc', 'system.d') if has_system_d else os.path.join(base, 'etc'))
    with open(os.path.join(base, 'etc', 'system'), 'w') as handle:
        handle.write('* vendor file\n')
    args = {'params': {'lgrp_mem_pset_aware': 1}, 'root': base, 'file': '/etc/system.d/dbhost-tuning'}
    result = run_module(kernel_params, args)
    if not has_system_d:
        assert result['failed'] and 'this release has no /etc/system.d' in result['msg']
        assert os.listdir(os.path.join(base, 'etc')) == ['system']
        return
    assert result['changed'] is True and result['reboot_required'] is True
    assert read(base, '/etc/system.d/dbhost-tuning') == 'set lgrp_mem_pset_aware=1\n'
    assert read(base, '/etc/system') == '* vendor file\n'
    again = run_module(kernel_params, args)
    assert again['changed'] is False and [s['status'] for s in again['settings']] == ['ok']


def _sunos_tree(base, system_d=None, etc_system='* vendor file\n'):
    os.makedirs(os.path.join(base, 'etc'))
    if system_d is not None:
        os.makedirs(os.path.join(base, 'etc', 'system.d'))
        for name, text in system_d.items():
            with open(os.path.join(base, 'etc', 'system.d', name), 'w') as handle:
                handle.write(text)
    with open(os.path.join(base, 'etc', 'system'), 'w') as handle:
        handle.write(etc_system)


@pytest.mark.parametrize('system_d, written', [(None, '/etc/system'), ({}, '/etc/system.d/dbhost-tuning')])
def test_sunos_default_file_follows_the_release(tmp_path, run_module, monkeypatch, system_d, written):
    """Without file: our own /etc/system.d file where the release has the folder, else /etc/system."""
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    base = str(tmp_path)
    _sunos_tree(base, system_d)
    result = run_module(kernel_params, {'params': {'lgrp_mem_pset_aware': 1}, 'root': base})
    assert result['settings'][0]['target'] == written and result['settings'][0]['status'] == 'pending_reboot'
    assert read(base, written).endswith('set lgrp_mem_pset_aware=1\n')


def test_sunos_etc_system_read_last_wins_over_system_d(tmp_path, run_module, monkeypatch):
    """system(5): /etc/system.d is read before /etc/system, so a line there with another value wins."""
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    base = str(tmp_path)
    _sunos_tree(base, {}, etc_system='* vendor file\nSET lgrp_mem_pset_aware = 0\n')
    args = {'params': {'lgrp_mem_pset_aware': 1}, 'root': base, 'fail_on_shadowed': False}
    record = run_module(kernel_params, args)['settings'][0]
    assert record['status'] == 'shadowed' and record['persisted'] == '0'
    assert '/etc/system' in record['detail']
    assert read(base, '/etc/system.d/dbhost-tuning') == 'set lgrp_mem_pset_aware=1\n'


def test_sunos_system_d_files_in_c_order(tmp_path, run_module, monkeypatch):
    """A later file of /etc/system.d (C order) wins over ours; a dot file is not read."""
    monkeypatch.setattr(_platform, 'system', lambda: 'SunOS')
    base = str(tmp_path)
    _sunos_tree(base, {'zz-site': 'set lgrp_mem_pset_aware=0\n', '.self-assembly': 'set lgrp_mem_pset_aware=0\n'})
    args = {'params': {'lgrp_mem_pset_aware': 1}, 'root': base, 'fail_on_shadowed': False}
    record = run_module(kernel_params, args)['settings'][0]
    assert record['status'] == 'shadowed' and '/etc/system.d/zz-site' in record['detail']
    os.remove(os.path.join(base, 'etc', 'system.d', 'zz-site'))
    again = run_module(kernel_params, args)['settings'][0]
    assert again['status'] == 'ok' and again['persisted'] == '1'
