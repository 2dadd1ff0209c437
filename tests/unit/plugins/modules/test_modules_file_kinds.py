# -*- coding: utf-8 -*-
"""Only regular files are written, read and backed up, by every writing module.

Each module's BASELINE call (fake_host.py) runs for real on a fake host where the file it
writes is not a regular file: masked (a link to /dev/null), a FIFO, a socket, a device
node a link leads to, or a folder.  The task fails with a message naming the file (and,
for a mask, saying it is masked: the administrator's choice), no run waits on the FIFO
(an alarm stops a run that would hang for good), and not a byte under root changes.

Backups (``backup: true``): a link planted at every name the backup could get
(``<file>.<pid>.<date>~`` for the next seconds) is never followed: the file outside root
it leads to keeps its bytes, the links stay, and the backup is a regular file beside the
target holding the old text.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import os
import signal
import socket
import stat
import time

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('fake_host', os.path.join(HERE, 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

# Every file a module backs up: (module, its arguments' changes from BASELINE, the file).
BACKED_UP = [
    ('kernel_params', {}, '/etc/sysctl.d/90-dbhost-tuning.conf'),
    ('hugepages', {}, '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'),
    ('hugepages', {'pages': [{'size': '2M', 'count': 16, 'node': 1}]}, '/etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf'),
    ('sysfs_attr', {}, '/etc/tmpfiles.d/90-dbhost-tuning.conf'),
    ('resource_limits', {}, '/etc/security/limits.d/90-dbhost-tuning.conf'),
    ('resource_limits', {'limits': [], 'service': 'postgresql', 'service_limits': {'LimitMEMLOCK': 'infinity'}},
     '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf'),
    ('block_queue', {}, '/etc/udev/rules.d/61-dbhost-tuning.rules'),
    ('mount_options', {}, '/etc/fstab'),
    ('db_parameter', {}, fake_host.PGCONF),
    ('db_parameter', {'engine': 'mysql', 'path': fake_host.MYCNF, 'params': {'innodb_flush_method': 'O_DIRECT'}},
     fake_host.MYCNF),
    ('db_parameter', {'engine': 'oracle', 'path': fake_host.PFILE, 'params': {'filesystemio_options': 'SETALL'}},
     fake_host.PFILE),
    ('processor_set', {}, '/etc/systemd/system/postgresql.service.d/90-dbhost-tuning-cpus.conf'),
]
# What a file holds before the run, where the fake host has none (a comment every format keeps).
BEFORE = '# kept by the run\n'
# The targets the kinds test: one per writing module.
TARGETS = [(module, path) for module, changes, path in BACKED_UP if not changes]


@pytest.fixture(autouse=True)
def linux(monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)


@pytest.fixture
def no_hang():
    """A run that would wait for good (on a FIFO) is stopped by an alarm instead of hanging the suite."""
    def stop(*dummy):
        raise RuntimeError('the run waited on a file for 60 s')
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


def _args(module, changes=None, **more):
    args = dict(fake_host.BASELINE[module])
    args.update(changes or {})
    args.update(more)
    return args


def _local(root, path):
    return os.path.join(root, path.lstrip('/'))


def _fifo(local):
    os.mkfifo(local)


def _socket(local):
    # bound by its short name from its folder: a full test path is longer than AF_UNIX allows
    here = os.getcwd()
    os.chdir(os.path.dirname(local))
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(os.path.basename(local))
        server.close()
    finally:
        os.chdir(here)


def _folder(local):
    os.mkdir(local)
    fake_host.helpers.write(os.path.join(local, 'inside.conf'), 'x\n')


def _mask(local):
    os.symlink('/dev/null', local)


def _device_link(local):
    """A link (absolute, so within root) to a character device node made under root."""
    if os.geteuid() != 0:
        pytest.skip('making a device node needs root')
    root = local
    while not os.path.isdir(os.path.join(root, 'proc')):
        root = os.path.dirname(root)
    if not os.path.isdir(os.path.join(root, 'dev')):
        os.mkdir(os.path.join(root, 'dev'))
    os.mknod(os.path.join(root, 'dev', 'zero'), 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    os.symlink('/dev/zero', local)


KINDS = [('masked', _mask, 'is masked'), ('FIFO', _fifo, 'is a FIFO'), ('socket', _socket, 'is a socket'),
         ('device link', _device_link, 'is a character device'), ('folder', _folder, 'is a folder')]


@pytest.mark.parametrize('kind,make,words', KINDS, ids=[kind[0] for kind in KINDS])
@pytest.mark.parametrize('module,path', TARGETS, ids=['%s:%s' % (m, p.rsplit('/', 1)[-1]) for m, p in TARGETS])
def test_only_regular_files_are_written(tmp_path, run_module, no_hang, module, path, kind, make, words):
    root = fake_host.build(str(tmp_path / 'host'))
    local = _local(root, path)
    if os.path.lexists(local):
        os.unlink(local)
    if not os.path.isdir(os.path.dirname(local)):
        os.makedirs(os.path.dirname(local))
    make(local)
    before = fake_host.digest(root)
    result = run_module(_module(module), _args(module, root=root))
    assert result.get('failed'), result
    assert words in result['msg'] and path.rsplit('/', 1)[-1] in result['msg'], result['msg']
    assert 'Traceback' not in result['msg']
    if kind == 'masked':
        assert "administrator's choice" in result['msg']
    assert fake_host.digest(root) == before


def _plant(local, victim, seconds=8):
    """Links at every name the backup of ``local`` could get in the next ``seconds``; their names."""
    planted = []
    now = time.time()
    for offset in range(seconds):
        stamp = time.strftime('%Y-%m-%d@%H:%M:%S', time.localtime(now + offset))
        name = '%s.%d.%s~' % (local, os.getpid(), stamp)
        os.symlink(victim, name)
        planted.append(name)
    return planted


@pytest.mark.parametrize('module,changes,path', BACKED_UP, ids=['%s:%s' % (m, p.rsplit('/', 1)[-1]) for m, c, p in BACKED_UP])
def test_backup_never_follows_a_planted_link(tmp_path, run_module, module, changes, path):
    root = fake_host.build(str(tmp_path / 'host'))
    local = _local(root, path)
    if not os.path.exists(local):
        fake_host.put(root, path, BEFORE)
    old = open(local, 'rb').read()
    victim = str(tmp_path / 'victim')
    with open(victim, 'w') as handle:
        handle.write('outside root\n')
    planted = _plant(local, victim)
    result = run_module(_module(module), _args(module, changes, root=root, backup=True))
    assert not result.get('failed'), result
    assert open(victim).read() == 'outside root\n'
    assert all(os.path.islink(name) and os.readlink(name) == victim for name in planted)
    folder, name = os.path.split(local)
    backups = [os.path.join(folder, entry) for entry in os.listdir(folder)
               if entry.startswith(name + '.') and entry.endswith('~') and not os.path.islink(os.path.join(folder, entry))]
    assert len(backups) == 1, os.listdir(folder)
    assert open(backups[0], 'rb').read() == old
    assert open(local, 'rb').read() != old
