# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils import _files as files


def test_rooted_joins_and_refuses_escape():
    assert files.rooted('/mnt/img', '/etc/sysctl.d/x.conf') == '/mnt/img/etc/sysctl.d/x.conf'
    assert files.rooted('/', '/etc/system') == '/etc/system'
    with pytest.raises(files.PathError):
        files.rooted('/mnt/img', '/etc/../../root/.ssh/keys')
    with pytest.raises(files.PathError):
        files.rooted('/mnt/img', 'etc/x')


def test_write_atomic_keeps_mode_and_makes_backup(tmp_path):
    path = str(tmp_path / 'f.conf')
    with open(path, 'w') as handle:
        handle.write('old\n')
    os.chmod(path, 0o600)
    backup = files.write_atomic(path, 'new\n', backup_file=True)
    assert open(path).read() == 'new\n'
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert open(backup).read() == 'old\n'
    assert sorted(os.listdir(str(tmp_path))) == sorted(['f.conf', os.path.basename(backup)])


def test_write_atomic_new_file_mode_and_parents(tmp_path):
    path = str(tmp_path / 'a' / 'b' / 'new.conf')
    assert files.write_atomic(path, 'x\n', make_parents=True, backup_file=True) is None
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_failed_write_leaves_file_and_no_temp(tmp_path, monkeypatch):
    path = str(tmp_path / 'f.conf')
    with open(path, 'w') as handle:
        handle.write('old\n')

    def broken_rename(src, dst):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(os, 'rename', broken_rename)
    with pytest.raises(OSError):
        files.write_atomic(path, 'new\n')
    assert open(path).read() == 'old\n'
    assert os.listdir(str(tmp_path)) == ['f.conf']


def test_file_change_reports_and_applies(tmp_path):
    from ansible_collections.dbhost.tuning.plugins.module_utils._result import Result
    path = str(tmp_path / 'x')
    change = files.FileChange(path, None, 'a\n', shown_path='/etc/x')
    result = Result()
    change.report(result)
    assert result.diffs[0]['after_header'] == '/etc/x'
    change.apply()
    assert files.read_text(path) == 'a\n'
    files.FileChange(path, 'a\n', None).apply()
    assert files.read_text(path) is None


def test_write_atomic_follows_a_link_and_keeps_it(tmp_path):
    target = tmp_path / 'sysctl.conf'
    target.write_text('old\n')
    link = tmp_path / '99-sysctl.conf'
    os.symlink('sysctl.conf', str(link))
    files.write_atomic(str(link), 'new\n', root=str(tmp_path))
    assert os.path.islink(str(link)) and target.read_text() == 'new\n'


def test_write_atomic_refuses_a_link_out_of_root(tmp_path):
    root = tmp_path / 'root'
    root.mkdir()
    outside = tmp_path / 'outside.conf'
    outside.write_text('keep\n')
    os.symlink(str(outside), str(root / 'x.conf'))
    with pytest.raises(files.PathError):
        files.write_atomic(str(root / 'x.conf'), 'new\n', root=str(root))
    assert outside.read_text() == 'keep\n'
