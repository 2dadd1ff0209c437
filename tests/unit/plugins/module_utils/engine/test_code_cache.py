# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""engine/code_cache.py: the digest that names the code, the copy kept on the host (whole or absent,
used only when nobody else may have written it), and the import hook that serves it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import importlib
import importlib.util
import os
import stat
import sys
import time

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import code_cache

FILES = {
    'zz_probe/__init__.py': b'',
    'zz_probe/first.py': b'VALUE = 1\n',
    'zz_probe/inner/__init__.py': b'from . import second\n',
    'zz_probe/inner/second.py': b'from ..first import VALUE\nDOUBLE = VALUE * 2\n',
}
HASH = code_cache.digest(FILES)


def _tree(folder):
    found = {}
    for top, dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(top, name)
            with open(path, 'rb') as handle:
                found[os.path.relpath(path, folder)] = handle.read()
    return found


@pytest.fixture
def served():
    """Removes the finder and the probe modules a test imported, so that no other test imports through them."""
    before = list(sys.meta_path)
    yield
    sys.meta_path[:] = before
    for name in [name for name in sys.modules if name.startswith(code_cache.PREFIX + '.zz_probe')]:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_the_digest_names_every_path_and_content():
    assert code_cache.digest(dict(FILES)) == HASH
    assert code_cache.digest(dict(FILES, **{'zz_probe/first.py': b'VALUE = 2\n'})) != HASH
    renamed = dict(FILES)
    renamed['zz_probe/third.py'] = renamed.pop('zz_probe/first.py')
    assert code_cache.digest(renamed) != HASH
    # a path's end and a content's start cannot trade bytes
    assert code_cache.digest({'a.py': b'xy'}) != code_cache.digest({'a.py\0': b'y'})


def test_source_files_reads_the_python_files_and_no_pyc(tmp_path):
    for name, content in FILES.items():
        path = tmp_path.joinpath(*name.split('/'))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (tmp_path / 'zz_probe' / '__pycache__').mkdir()
    (tmp_path / 'zz_probe' / '__pycache__' / 'first.cpython-311.pyc').write_bytes(b'x')
    (tmp_path / 'zz_probe' / 'notes.txt').write_text('x')
    assert code_cache.source_files(str(tmp_path)) == FILES


def test_the_module_utils_the_action_plugin_reads_are_the_checkout_s():
    from ansible_collections.dbhost.tuning.plugins.action import host_state as action
    top = os.path.join(action.COLLECTION_ROOT, 'plugins', 'module_utils')
    assert action.Code.files == code_cache.source_files(top)
    assert action.Code.digest == code_cache.digest(action.Code.files)
    assert 'engine/code_cache.py' in action.Code.files and 'state/registry.py' in action.Code.files


def test_pack_and_unpack_give_the_same_files_and_pack_is_repeatable():
    text = code_cache.pack(FILES)
    assert text == code_cache.pack(dict(FILES))
    assert code_cache.unpack(text, HASH) == FILES


def _sent(files):
    return code_cache.pack(files), code_cache.digest(files)


@pytest.mark.parametrize('sent, message', [
    ((code_cache.pack(FILES), 'f' * 64), 'does not have the digest ' + 'f' * 64),
    (('not base64 !', HASH), 'not a zip in base64'),
    (_sent({'../escape.py': b''}), 'not a relative .py file: ../escape.py'),
    (_sent({'/etc/x.py': b''}), 'not a relative .py file: /etc/x.py'),
    (_sent({'zz/notes.txt': b''}), 'not a relative .py file: zz/notes.txt'),
])
def test_unpack_refuses_code_that_is_not_what_its_digest_names(sent, message):
    with pytest.raises(code_cache.CacheError, match=message.replace('.', r'\.')):
        code_cache.unpack(*sent)


def test_store_keeps_the_sources_and_their_pyc_in_a_folder_of_this_user_alone(tmp_path):
    root = str(tmp_path / 'cache' / 'code')
    assert code_cache.lookup(root, HASH) is None
    folder = code_cache.store(root, HASH, FILES)
    assert folder == os.path.join(root, HASH)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert code_cache.source_files(folder) == FILES
    for name in FILES:
        assert os.path.isfile(importlib.util.cache_from_source(os.path.join(folder, *name.split('/'))))
    assert os.listdir(root) == [HASH]    # nothing half-written beside it
    assert code_cache.lookup(root, HASH) == folder


def test_the_folders_made_on_the_way_are_this_user_s_alone_whatever_the_umask(tmp_path):
    umask = os.umask(0o002)
    try:
        root = str(tmp_path / 'cache' / 'dbhost-tuning' / 'code')
        code_cache.store(root, HASH, FILES)
    finally:
        os.umask(umask)
    for folder in (tmp_path / 'cache', tmp_path / 'cache' / 'dbhost-tuning', tmp_path / 'cache' / 'dbhost-tuning' / 'code'):
        assert stat.S_IMODE(os.stat(str(folder)).st_mode) == 0o700
    assert code_cache.lookup(root, HASH) == os.path.join(root, HASH)


def test_every_file_of_the_copy_and_its_pyc_are_this_user_s_alone_under_an_open_umask(tmp_path):
    umask = os.umask(0)
    try:
        umask_after = None
        folder = code_cache.store(str(tmp_path / 'code'), HASH, FILES)
        umask_after = os.umask(0)
    finally:
        os.umask(umask)
    assert umask_after == 0     # the caller's umask is given back
    modes = {}
    for top, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = os.path.join(top, name)
            modes[os.path.relpath(path, folder)] = stat.S_IMODE(os.lstat(path).st_mode)
    assert any(name.endswith('.pyc') for name in modes)
    assert dict((name, mode) for name, mode in modes.items() if mode & 0o077) == {}


def test_a_copy_whose_source_was_edited_is_not_used_and_store_replaces_it(tmp_path):
    root = str(tmp_path / 'code')
    folder = code_cache.store(root, HASH, FILES)
    with open(os.path.join(folder, 'zz_probe', 'first.py'), 'ab') as handle:
        handle.write(b'import os\n')
    with pytest.raises(code_cache.CacheError, match='no longer holds the code it is named after'):
        code_cache.lookup(root, HASH)
    assert code_cache.store(root, HASH, FILES) == folder
    assert code_cache.source_files(folder) == FILES
    assert code_cache.lookup(root, HASH) == folder


@pytest.mark.parametrize('which', ['root', 'folder'])
def test_a_copy_others_may_write_is_not_used(tmp_path, which):
    root = str(tmp_path / 'code')
    folder = code_cache.store(root, HASH, FILES)
    os.chmod(root if which == 'root' else folder, 0o770)
    with pytest.raises(code_cache.CacheError, match=r'may be written by others \(mode 0770\)'):
        code_cache.lookup(root, HASH)


def test_a_root_others_may_write_is_refused_before_anything_is_written(tmp_path):
    root = tmp_path / 'code'
    root.mkdir(mode=0o700)
    os.chmod(str(root), 0o777)
    with pytest.raises(code_cache.CacheError, match='may be written by others'):
        code_cache.store(str(root), HASH, FILES)
    assert os.listdir(str(root)) == []


@pytest.mark.skipif(os.geteuid() != 0, reason='giving a folder to another user needs root')
def test_a_copy_of_another_user_is_not_used(tmp_path):
    root = str(tmp_path / 'code')
    folder = code_cache.store(root, HASH, FILES)
    os.chown(folder, 12345, 12345)
    with pytest.raises(code_cache.CacheError, match='belongs to uid 12345, not to uid 0'):
        code_cache.lookup(root, HASH)


def test_a_root_that_cannot_be_made_is_a_cache_error(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(code_cache.CacheError, match='cannot keep the code in %s' % blocker):
        code_cache.store(str(blocker / 'code'), HASH, FILES)
    assert blocker.read_text() == 'x'


def test_a_run_that_loses_the_race_to_store_uses_the_winner_s_copy(tmp_path, monkeypatch):
    root = str(tmp_path / 'code')
    real_rename = os.rename

    def other_run_first(source, target):
        real_rename(source, target)     # the other run's copy lands first...
        raise OSError(errno.ENOTEMPTY, 'Directory not empty')   # ...so this one's rename fails
    monkeypatch.setattr(code_cache.os, 'rename', other_run_first)
    folder = code_cache.store(root, HASH, FILES)
    assert folder == os.path.join(root, HASH)
    assert os.listdir(root) == [HASH]
    assert code_cache.source_files(folder) == FILES


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    root = str(tmp_path / 'code')

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(code_cache, '_write_tree', full)
    with pytest.raises(code_cache.CacheError, match='No space left on device'):
        code_cache.store(root, HASH, FILES)
    assert os.listdir(root) == []


def test_storing_removes_other_copies_stored_over_an_hour_ago_only(tmp_path):
    root = str(tmp_path / 'code')
    old = code_cache.store(root, code_cache.digest({'a.py': b'1'}), {'a.py': b'1'})
    recent = code_cache.store(root, code_cache.digest({'a.py': b'2'}), {'a.py': b'2'})
    stale_new = os.path.join(root, '.new-abandoned')
    os.mkdir(stale_new)
    hours_ago = time.time() - code_cache.KEEP_SECONDS - 60
    for path in (old, stale_new):
        os.utime(path, (hours_ago, hours_ago))
    code_cache.store(root, HASH, FILES)
    assert sorted(os.listdir(root)) == sorted([HASH, os.path.basename(recent)])


def _import_probe():
    second = importlib.import_module(code_cache.PREFIX + '.zz_probe.inner.second')
    return second, sys.modules[code_cache.PREFIX + '.zz_probe.first']


def test_the_finder_serves_the_stored_copy_with_its_pyc(tmp_path, served):
    folder = code_cache.store(str(tmp_path / 'code'), HASH, FILES)
    code_cache.serve(code_cache.Finder(folder=folder))
    code_cache.serve(code_cache.Finder(folder=folder))   # served twice: one finder
    assert sum(isinstance(entry, code_cache.Finder) for entry in sys.meta_path) == 1
    second, first = _import_probe()
    assert second.DOUBLE == 2
    assert first.__file__ == os.path.join(folder, 'zz_probe', 'first.py')
    assert first.__cached__ == importlib.util.cache_from_source(first.__file__)
    assert os.path.isfile(first.__cached__)


def test_the_finder_serves_code_held_in_memory(served):
    code_cache.serve(code_cache.Finder(files=FILES))
    second, first = _import_probe()
    assert second.DOUBLE == 2
    assert first.__file__ == '<%s>/zz_probe/first.py' % code_cache.PREFIX
    with pytest.raises(ImportError):
        importlib.import_module(code_cache.PREFIX + '.zz_probe.missing')


def test_the_finder_leaves_every_other_name_alone(tmp_path):
    finder = code_cache.Finder(files=FILES)
    assert finder.find_spec('json') is None
    assert finder.find_spec(code_cache.PREFIX + 'x') is None
    assert finder.find_spec(code_cache.PREFIX + '.zz_probe.nothing') is None


def test_a_result_packed_and_unpacked_is_the_same_and_keeps_out_what_ansible_reads():
    result = {'changed': True, 'failed': True, 'msg': 'drifted', 'drift_gate': True, 'reboot_required': False,
              'restart_required': True, 'warnings': ['w'], '_ansible_no_log': False, 'invocation': {'module_args': {}},
              'settings': [{'name': 'vm.swappiness', 'desired': 1, 'live': None, 'detail': u'caf\u00e9'}],
              'roles': {'kernel_params': {'settings': [0]}}, 'notes': []}
    packed = code_cache.pack_result(result)
    assert sorted(packed) == ['_ansible_no_log', 'changed', 'drift_gate', 'failed', 'msg', 'packed_result',
                              'reboot_required', 'restart_required', 'warnings']
    assert isinstance(packed['packed_result'], str)
    assert code_cache.unpack_result(packed) == result
    assert 'packed_result' in packed   # unpack_result makes a new dict


@pytest.mark.parametrize('result', [{'changed': False, 'code_missing': True},
                                    {'changed': False, 'settings': [{1, 2}]},
                                    {'changed': False, 'settings': [float('nan')]}],
                         ids=['nothing to pack', 'not JSON', 'not strict JSON'])
def test_a_result_with_nothing_to_pack_or_not_plain_json_is_left_as_it_is(result):
    assert code_cache.pack_result(result) is result


def test_unpack_leaves_a_result_without_a_packed_text_alone_and_refuses_one_that_is_no_object():
    result = {'changed': False, 'settings': []}
    assert code_cache.unpack_result(result) is result
    with pytest.raises(ValueError):
        code_cache.unpack_result({'changed': False, 'packed_result': '[1]'})
    with pytest.raises(ValueError):
        code_cache.unpack_result({'changed': False, 'packed_result': '{"settings": '})
