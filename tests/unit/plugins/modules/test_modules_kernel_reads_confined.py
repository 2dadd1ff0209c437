# -*- coding: utf-8 -*-
"""Reads of <root>/proc and <root>/sys stay under root, like every write.

A link planted at <root>/proc/meminfo or <root>/sys/devices/system/cpu/online that leads
out of root (relative, with ``..``) is refused naming the link, by the readers
(platforms.meminfo, numa.read_topology, host_facts) and by the modules that size or
check from them: hugepages is not sized from an outside MemTotal and writes nothing,
processor_set does not accept CPUs that only the outside file lists.  An absolute link
means the image's own path (as in a chroot), never this host's file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import host_facts, numa, platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('fake_host', os.path.join(HERE, 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

MEMINFO = '/proc/meminfo'
ONLINE = '/sys/devices/system/cpu/online'
# What the outside files say: a machine far larger than the fake host.
OUTSIDE = {MEMINFO: 'MemTotal:       999999999 kB\nHugepagesize:       2048 kB\n', ONLINE: '0-40\n'}


@pytest.fixture(autouse=True)
def linux(monkeypatch):
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda: 4096)


def _world(tmp_path, path, absolute=False):
    """A fake host whose ``path`` is a link to a file outside root holding OUTSIDE[path]."""
    root = fake_host.build(str(tmp_path / 'host'))
    outside = tmp_path / 'outside'
    outside.mkdir()
    victim = outside / os.path.basename(path)
    victim.write_text(OUTSIDE[path])
    local = os.path.join(root, path.lstrip('/'))
    os.unlink(local)
    if absolute:
        os.symlink(str(victim), local)
    else:
        os.symlink(os.path.relpath(str(victim), os.path.dirname(local)), local)
    return root


def test_meminfo_link_out_of_root_is_refused(tmp_path):
    root = _world(tmp_path, MEMINFO)
    with pytest.raises(PathError, match='meminfo.*leads out of'):
        platforms.meminfo(root)
    with pytest.raises(PathError, match='leads out of'):
        host_facts.gather(root, ['memory'])


def test_meminfo_absolute_link_is_the_images_own_path(tmp_path):
    root = _world(tmp_path, MEMINFO, absolute=True)
    # <root>/<tmp>/outside/meminfo does not exist: nothing is read, and never this host's file
    assert platforms.meminfo(root) == {}


def test_online_cpus_link_out_of_root_is_refused(tmp_path):
    root = _world(tmp_path, ONLINE)
    with pytest.raises(PathError, match='online.*leads out of'):
        numa.read_topology(root)
    with pytest.raises(PathError, match='leads out of'):
        host_facts.gather(root, ['numa'])


def test_block_device_and_shm_reads_are_confined(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'shmmni').write_text(u'1\n')
    local = os.path.join(root, 'proc/sys/kernel/shmmni')
    os.unlink(local)
    os.symlink(os.path.relpath(str(outside / 'shmmni'), os.path.dirname(local)), local)
    with pytest.raises(PathError, match='shmmni'):
        host_facts.gather(root, ['shm'])


def _module(name):
    return importlib.import_module('ansible_collections.dbhost.tuning.plugins.modules.%s' % name)


@pytest.mark.parametrize('module,path,args', [
    ('hugepages', MEMINFO, {'pages': [{'count': 16}]}),
    ('processor_set', ONLINE, {'name': 'pg', 'cpus': '30-40', 'service': 'postgresql'}),
])
def test_modules_refuse_reads_out_of_root(tmp_path, run_module, module, path, args):
    root = _world(tmp_path, path)
    before = fake_host.digest(root)
    result = run_module(_module(module), dict(args, root=root))
    assert result.get('failed'), result
    assert 'leads out of' in result['msg'] and os.path.basename(path) in result['msg'], result['msg']
    assert fake_host.digest(root) == before
