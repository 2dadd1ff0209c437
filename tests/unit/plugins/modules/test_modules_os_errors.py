# -*- coding: utf-8 -*-
"""What the system refuses ends in a clear failure, and the run changes nothing or says what it changed.

Each case makes the system say no the way a host does: a read-only bind mount, a small
tmpfs filled up (both made and removed inside the test's own folder; they need root,
which CI has, and are skipped without it), permission denied (the run drops to user
nobody), a file where a folder should be, a 300-character name.  Each asserts a message
naming the file and the operation, no traceback, and either no change under root at all
(digest) or the exact list of what the run changed before the failure.  A file write
that fails after live values were written puts them back (the journal).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms, regular

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('fake_host', os.path.join(HERE, 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
AIO = '/proc/sys/fs/aio-max-nr'
LIMITS_FILE = '/etc/security/limits.d/90-dbhost-tuning.conf'
DROPIN = '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf'


@pytest.fixture(autouse=True)
def linux(monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda: 4096)


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


def _local(root, path):
    return os.path.join(root, path.lstrip('/'))


def _mount(argv):
    if os.geteuid() != 0:
        pytest.skip('mounting needs root (CI runs the unit stage as root)')
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        pytest.skip('%s: %s' % (' '.join(argv), done.stdout.decode().strip()))


@contextlib.contextmanager
def read_only(folder):
    """``folder`` bind-mounted read-only onto itself for the block."""
    _mount(['mount', '--bind', folder, folder])
    try:
        _mount(['mount', '-o', 'remount,bind,ro', folder])
        yield
    finally:
        subprocess.run(['umount', folder], check=True)


@contextlib.contextmanager
def full_tmpfs(folder, size='64k'):
    """A small tmpfs at ``folder`` holding what the folder held, then filled up, for the block."""
    saved = folder + '.saved'
    shutil.copytree(folder, saved, symlinks=True)
    _mount(['mount', '-t', 'tmpfs', '-o', 'size=%s,mode=0755' % size, 'tmpfs', folder])
    try:
        for name in os.listdir(saved):
            shutil.copy2(os.path.join(saved, name), os.path.join(folder, name), follow_symlinks=False)
        fd = os.open(os.path.join(folder, 'filler'), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b'x' * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield
    finally:
        try:
            os.unlink(os.path.join(folder, 'filler'))
        except OSError:
            pass
        subprocess.run(['umount', folder], check=True)
        shutil.rmtree(saved)


def _failed(result, *words):
    assert result.get('failed'), result
    message = result['msg']
    assert 'Traceback' not in message and 'Errno' not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


def test_read_only_file_system_changes_nothing(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    folder = _local(root, '/etc/sysctl.d')
    before = fake_host.digest(root)
    with read_only(folder):
        result = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    _failed(result, _local(root, SYSCTL_FILE), 'Read-only file system', 'nothing was changed')
    assert fake_host.digest(root) == before
    assert fake_host.helpers.read(root, AIO) == '65536\n'


def test_full_disk_changes_nothing_and_leaves_no_half_backup(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    fake_host.put(root, SYSCTL_FILE, '# ours\nfs.aio-max-nr = 65536\n')
    folder = _local(root, '/etc/sysctl.d')
    with full_tmpfs(folder):
        before = fake_host.digest(root)
        names = sorted(os.listdir(folder))
        result = run_module(_module('kernel_params'),
                            dict(fake_host.BASELINE['kernel_params'], root=root, backup=True))
        _failed(result, _local(root, SYSCTL_FILE), 'No space left on device', 'nothing was changed')
        assert fake_host.digest(root) == before
        assert sorted(os.listdir(folder)) == names


def test_full_disk_makes_no_drop_in_folder(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    folder = _local(root, '/etc/systemd/system')
    os.makedirs(folder)
    with full_tmpfs(folder):
        before = fake_host.digest(root)
        result = run_module(_module('resource_limits'), {
            'root': root, 'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': 'infinity'}})
        _failed(result, 'postgresql.service.d', 'No space left on device', 'nothing was changed')
        assert fake_host.digest(root) == before
        assert sorted(os.listdir(folder)) == ['filler']


def test_a_failure_after_a_write_lists_exactly_what_changed(tmp_path, run_module):
    # limits.d is written first; the service's drop-in then finds a full disk
    root = fake_host.build(str(tmp_path / 'host'))
    folder = _local(root, '/etc/systemd/system')
    os.makedirs(folder)
    args = dict(fake_host.BASELINE['resource_limits'], root=root, service='postgresql',
                service_limits={'LimitMEMLOCK': 'infinity'})
    with full_tmpfs(folder):
        result = run_module(_module('resource_limits'), args)
        message = _failed(result, 'No space left on device')
        assert message.endswith('changed before the failure: wrote %s' % _local(root, LIMITS_FILE)), message
        assert result['changed'] is True
        assert 'oracle soft memlock 1048576' in ' '.join(fake_host.helpers.read(root, LIMITS_FILE).split())
        assert sorted(os.listdir(folder)) == ['filler']


def test_permission_denied_changes_nothing(run_module):
    if os.geteuid() != 0:
        pytest.skip('the run drops to user nobody, which needs root')
    top = tempfile.mkdtemp()
    try:
        os.chmod(top, 0o755)
        root = fake_host.build(os.path.join(top, 'host'))
        before = fake_host.digest(root)
        os.seteuid(65534)
        try:
            result = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
        finally:
            os.seteuid(0)
        _failed(result, _local(root, SYSCTL_FILE), 'Permission denied', 'nothing was changed')
        assert fake_host.digest(root) == before
    finally:
        shutil.rmtree(top)


def test_parent_is_a_file(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    shutil.rmtree(_local(root, '/etc/sysctl.d'))
    fake_host.put(root, '/etc/sysctl.d', 'a file where the folder should be\n')
    before = fake_host.digest(root)
    result = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    _failed(result, _local(root, '/etc/sysctl.d'), 'not a folder')
    assert fake_host.digest(root) == before


@pytest.mark.parametrize('module,changes', [
    ('kernel_params', {'file': '/etc/sysctl.d/%s.conf' % ('n' * 300)}),
    ('resource_limits', {'limits': [], 'service': 's' * 300, 'service_limits': {'LimitMEMLOCK': 'infinity'}}),
], ids=['file', 'service'])
def test_300_character_name(tmp_path, run_module, module, changes):
    root = fake_host.build(str(tmp_path / 'host'))
    before = fake_host.digest(root)
    result = run_module(_module(module), dict(fake_host.BASELINE[module], root=root, **changes))
    _failed(result, 'n' * 300 if module == 'kernel_params' else 's' * 300, 'too long')
    assert fake_host.digest(root) == before


def test_live_value_put_back_when_its_file_cannot_be_written(tmp_path, run_module, monkeypatch):
    # The disk fills between the check and the write: the live value written is put back.
    root = fake_host.build(str(tmp_path / 'host'))
    before = fake_host.digest(root)

    write_temp = regular.write_temp

    def full(folder, target, *rest):
        if target.endswith('/baseline.json'):
            return write_temp(folder, target, *rest)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(regular, 'write_temp', full)
    result = run_module(_module('kernel_params'), dict(fake_host.BASELINE['kernel_params'], root=root))
    message = _failed(result, 'writing %s: No space left on device' % _local(root, SYSCTL_FILE))
    assert message.endswith('nothing was changed; put back: %s (65536 -> 1048576)' % _local(root, AIO)), message
    assert fake_host.digest(root, skip=fake_host.helpers.BASELINE_FOLDER) == before
    # the baseline kept the live value as it was before the write, which is the value now
    kept = json.loads(fake_host.helpers.read(root, '/var/lib/dbhost-tuning/baseline.json'))
    assert kept['live'] == {AIO: dict(kept['live'][AIO], value='65536')} and kept['files'] == {}


def test_non_utf8_bytes_kept_and_shown(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    path = _local(root, '/etc/fstab')
    with open(path, 'ab') as handle:
        handle.write(b'# caf\xe9 \xff\n/dev/sdb1 /u02 xfs defaults 0 2\n')
    old = open(path, 'rb').read()
    result = run_module(_module('mount_options'), dict(fake_host.BASELINE['mount_options'], root=root), diff=True)
    assert not result.get('failed'), result
    assert open(path, 'rb').read() == old.replace(b'/u01 xfs defaults 0 2', b'/u01 xfs defaults,noatime 0 2')
    # the result is valid Unicode: the controller can print it
    assert u'# caf\ufffd \ufffd' in result['diff'][0]['after']
    again = run_module(_module('mount_options'), dict(fake_host.BASELINE['mount_options'], root=root))
    assert again['changed'] is False
