# -*- coding: utf-8 -*-
"""Nothing a module writes leaves ``root``, whatever links the managed tree holds.

Every writing module runs its BASELINE call (fake_host.py) for real on a fake host in
which one file it writes, or that file's folder, has been replaced by a link: out of
root (relative, with ``..``), to a path of this host (absolute, which under ``root``
means the image's own path, as in a chroot), or to a place inside root.  A link out of
root fails the task naming the link before anything is written (not a byte changes,
inside root or out); an absolute link never touches this host's file; a link inside
root is written through and kept.  New files get their mode whatever the umask.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import os
import shutil

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.tests.unit.helpers import per_kind

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('fake_host', os.path.join(HERE, 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

SDA_QUEUE = '/sys/devices/pci0000:00/0000:00:1f.2/host0/target0:0:0/0:0:0:0/block/sda/queue/rq_affinity'

# What each module's BASELINE call writes on the fake host: persisted files, then live
# kernel files (the pseudo-files of /proc/sys and /sys under root).
WRITES = {
    'kernel_params': ['/etc/sysctl.d/90-dbhost-tuning.conf', '/proc/sys/fs/aio-max-nr'],
    'hugepages': ['/etc/sysctl.d/90-dbhost-tuning-hugepages.conf', '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'],
    'sysfs_attr': ['/etc/tmpfiles.d/90-dbhost-tuning.conf'],
    'resource_limits': ['/etc/security/limits.d/90-dbhost-tuning.conf'],
    'block_queue': ['/etc/udev/rules.d/61-dbhost-tuning.rules', SDA_QUEUE],
    'mount_options': ['/etc/fstab'],
    'db_parameter': [fake_host.PGCONF],
    'processor_set': ['/etc/systemd/system/postgresql.service.d/90-dbhost-tuning-cpus.conf'],
    'kernel_cmdline': ['/etc/default/grub.d/99-dbhost-tuning.cfg'],
}
CASES = [(module, path) for module, paths in per_kind(WRITES, writing=True) for path in paths]
IDS = ['%s:%s' % (module, path.rsplit('/', 1)[-1]) for module, path in CASES]


@pytest.fixture(autouse=True)
def linux(monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)


@pytest.fixture
def world(tmp_path):
    """(root, outside): a fake host, and a folder of this host beside it."""
    root = fake_host.build(str(tmp_path / 'host'))
    outside = tmp_path / 'outside'
    outside.mkdir()
    return root, str(outside)


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


def _run(run_module, module, root):
    args = dict(fake_host.BASELINE[module])
    args['root'] = root
    return run_module(_module(module), args)


def _local(root, path):
    return os.path.join(root, path.lstrip('/'))


def _everything(top):
    return fake_host.digest(top)


def _move_out(root, outside, path):
    """Move ``path`` (a file, or made empty when missing) to ``outside``; return its new place."""
    local = _local(root, path)
    moved = os.path.join(outside, os.path.basename(path))
    if os.path.exists(local):
        shutil.move(local, moved)
    else:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(moved, 'w') as handle:
            handle.write('# this host\n')
    return moved


def _move_folder_out(root, outside, path):
    local = os.path.dirname(_local(root, path))
    moved = os.path.join(outside, os.path.basename(local))
    if os.path.isdir(local):
        shutil.move(local, moved)
    else:
        os.makedirs(moved)
        os.makedirs(os.path.dirname(local), exist_ok=True)
    return moved


def test_every_writing_module_is_covered(tmp_path, run_module):
    # a host of its own for each module: kernel_cmdline's transparent_hugepage=never would
    # otherwise leave sysfs_attr nothing to persist
    for module, paths in sorted(WRITES.items()):
        root = fake_host.build(str(tmp_path / module))
        before = fake_host.digest(root)
        result = _run(run_module, module, root)
        assert not result.get('failed'), (module, result.get('msg'))
        assert result['changed'] is True, module
        for path in paths:
            assert os.path.isfile(_local(root, path)), (module, path)
        assert fake_host.digest(root) != before


@pytest.mark.parametrize('module, path', CASES, ids=IDS)
def test_relative_link_out_of_root_fails_naming_it(world, run_module, module, path):
    root, outside = world
    target = _move_out(root, outside, path)
    link = _local(root, path)
    os.symlink(os.path.relpath(target, os.path.dirname(link)), link)
    before = _everything(os.path.dirname(root))
    result = _run(run_module, module, root)
    assert result.get('failed') is True, result
    assert path in result['msg'] and 'leads out of' in result['msg'], result['msg']
    assert _everything(os.path.dirname(root)) == before


@pytest.mark.parametrize('module, path', CASES, ids=IDS)
def test_folder_link_out_of_root_fails_naming_it(world, run_module, module, path):
    root, outside = world
    target = _move_folder_out(root, outside, path)
    link = os.path.dirname(_local(root, path))
    os.symlink(os.path.relpath(target, os.path.dirname(link)), link)
    before = _everything(os.path.dirname(root))
    result = _run(run_module, module, root)
    assert result.get('failed') is True, result
    assert 'leads out of' in result['msg'], result['msg']
    assert _everything(os.path.dirname(root)) == before


@pytest.mark.parametrize('module, path', CASES, ids=IDS)
def test_absolute_link_never_touches_this_host(world, run_module, module, path):
    root, outside = world
    target = _move_out(root, outside, path)
    os.symlink(target, _local(root, path))
    before = fake_host.digest(outside)
    _run(run_module, module, root)
    assert fake_host.digest(outside) == before
    assert not os.path.exists(root + target) or os.path.isfile(root + target)


@pytest.mark.parametrize('module, path', [case for case in CASES if case[1].startswith('/etc/')],
                         ids=[i for i, case in zip(IDS, CASES) if case[1].startswith('/etc/')])
def test_link_inside_root_is_written_through_and_kept(tmp_path, world, run_module, module, path):
    # What the baseline writes with no link, on a second tree.
    plain = fake_host.build(str(tmp_path / 'plain'))
    assert not _run(run_module, module, plain).get('failed')
    with open(_local(plain, path)) as handle:
        expected = handle.read()
    root = world[0]
    real = '/srv/real/' + os.path.basename(path)
    local = _local(root, path)
    os.makedirs(os.path.dirname(_local(root, real)))
    if os.path.exists(local):
        shutil.move(local, _local(root, real))
    else:
        os.makedirs(os.path.dirname(local), exist_ok=True)
    os.symlink(os.path.relpath(_local(root, real), os.path.dirname(local)), local)
    result = _run(run_module, module, root)
    assert not result.get('failed'), result.get('msg')
    assert os.path.islink(local)
    with open(_local(root, real)) as handle:
        assert handle.read() == expected


@pytest.mark.parametrize('mask', [0o000, 0o002])
@pytest.mark.parametrize('module', sorted(WRITES))
def test_new_files_are_not_group_or_world_writable_whatever_the_umask(world, run_module, module, mask):
    root = world[0]
    saved = os.umask(mask)
    try:
        result = _run(run_module, module, root)
    finally:
        os.umask(saved)
    assert not result.get('failed'), result.get('msg')
    for folder, dirs, names in os.walk(root):
        for name in names + dirs:
            local = os.path.join(folder, name)
            if os.path.islink(local):
                continue
            mode = os.stat(local).st_mode & 0o7777
            assert not mode & 0o022, '%s is %o' % (local, mode)


def test_a_boot_file_read_through_an_absolute_link_is_the_image_s_file(world, run_module):
    # 99-sysctl.conf -> <this host's file> under root means that path inside the image: the
    # persisted value comes from the image, never from this host's file of the same name.
    root, outside = world
    host_file = os.path.join(outside, 'sysctl.conf')
    with open(host_file, 'w') as handle:
        handle.write('kernel.shmmni = 1111\n')
    image_file = root + host_file
    os.makedirs(os.path.dirname(image_file))
    with open(image_file, 'w') as handle:
        handle.write('kernel.shmmni = 8192\n')
    os.symlink(host_file, _local(root, '/etc/sysctl.d/95-image.conf'))
    result = run_module(_module('kernel_params'), {'params': {'kernel.shmmni': 4096}, 'root': root, 'persist': False,
                                                   'fail_on_shadowed': False}, check_mode=True)
    assert not result.get('failed'), result.get('msg')
    record = [r for r in result['settings'] if r['name'] == 'kernel.shmmni'][0]
    assert record['persisted'] == '8192', record
