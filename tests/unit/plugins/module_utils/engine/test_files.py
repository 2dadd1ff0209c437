# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import files
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.gate import Gate


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
    with pytest.raises(HostError, match=r'replacing .*/f\.conf: No space left on device'):
        files.write_atomic(path, 'new\n')
    assert open(path).read() == 'old\n'
    assert os.listdir(str(tmp_path)) == ['f.conf']


def test_file_change_reports_and_applies(tmp_path):
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Result
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


# ---------------------------------------------------------------- confinement
def _tree(tmp_path):
    """A managed root with /etc/sysctl.d, and a host file outside it."""
    root = tmp_path / 'root'
    (root / 'etc' / 'sysctl.d').mkdir(parents=True)
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'x.conf').write_text('host\n')
    return str(root), outside


def test_rooted_keeps_paths_without_links():
    assert isinstance(files.rooted('/mnt/img', '/etc/x'), files.HostPath)
    assert files.rooted('/mnt/img', '/etc/x').root == '/mnt/img'
    assert files.rooted('/mnt/img/', '/etc/x') == '/mnt/img/etc/x'
    assert files.rooted(None, '/etc/x') == '/etc/x'
    assert files.rooted('/mnt/img', '/') == '/mnt/img'


def test_relative_link_out_of_root_is_refused_naming_it(tmp_path):
    root, outside = _tree(tmp_path)
    os.symlink('../../../outside/x.conf', os.path.join(root, 'etc/sysctl.d/90-dbhost-tuning.conf'))
    with pytest.raises(files.PathError) as caught:
        files.rooted(root, '/etc/sysctl.d/90-dbhost-tuning.conf')
    assert 'the link /etc/sysctl.d/90-dbhost-tuning.conf -> ../../../outside/x.conf leads out of' in str(caught.value)
    # An InputError: run_plan fails the task with this message.
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError
    assert isinstance(caught.value, InputError)
    with pytest.raises(files.PathError):
        files.write_atomic(os.path.join(root, 'etc/sysctl.d/90-dbhost-tuning.conf'), 'new\n', root=root)
    assert (outside / 'x.conf').read_text() == 'host\n'


def test_folder_link_out_of_root_is_refused(tmp_path):
    root, outside = _tree(tmp_path)
    os.rmdir(os.path.join(root, 'etc/sysctl.d'))
    os.symlink('../../outside', os.path.join(root, 'etc/sysctl.d'))
    with pytest.raises(files.PathError) as caught:
        files.rooted(root, '/etc/sysctl.d/x.conf')
    assert 'the link /etc/sysctl.d -> ../../outside' in str(caught.value)
    # A lexical join would have been written through the folder link.
    lexical = os.path.join(root, 'etc/sysctl.d/x.conf')
    with pytest.raises(files.PathError):
        files.write_atomic(lexical, 'new\n', root=root, make_parents=True)
    with pytest.raises(files.PathError):
        files.FileChange(lexical, 'host\n', 'new\n', root=root).apply()
    with pytest.raises(files.PathError):
        files.read_text(lexical, root=root)
    assert (outside / 'x.conf').read_text() == 'host\n'
    assert sorted(os.listdir(str(outside))) == ['x.conf']


def test_absolute_link_means_the_same_path_under_root(tmp_path):
    root, outside = _tree(tmp_path)
    os.makedirs(os.path.join(root, 'etc/real'))
    with open(os.path.join(root, 'etc/real/x.conf'), 'w') as handle:
        handle.write('image\n')
    os.symlink('/etc/real/x.conf', os.path.join(root, 'etc/sysctl.d/x.conf'))
    local = files.rooted(root, '/etc/sysctl.d/x.conf')
    assert local == os.path.join(root, 'etc/real/x.conf')
    assert files.read_text(local) == 'image\n'
    files.FileChange(local, 'image\n', 'new\n').apply()
    assert os.path.islink(os.path.join(root, 'etc/sysctl.d/x.conf'))
    assert files.read_text(os.path.join(root, 'etc/real/x.conf')) == 'new\n'


def test_absolute_link_to_a_host_path_never_touches_the_host(tmp_path):
    root, outside = _tree(tmp_path)
    host_file = str(outside / 'x.conf')
    link = os.path.join(root, 'etc/sysctl.d/90-dbhost-tuning.conf')
    os.symlink(host_file, link)
    local = files.rooted(root, '/etc/sysctl.d/90-dbhost-tuning.conf')
    assert local == root + host_file
    assert files.read_text(local) is None
    assert files.read_text(link, root=root) is None
    with pytest.raises(files.PathError) as caught:
        files.FileChange(local, None, 'new\n').apply()
    message = str(caught.value)
    assert '/etc/sysctl.d/90-dbhost-tuning.conf -> %s' % host_file in message and 'no folder is made' in message
    assert (outside / 'x.conf').read_text() == 'host\n'
    assert not os.path.exists(root + host_file)


def test_debian_99_sysctl_link_inside_root_is_followed_and_kept(tmp_path):
    root, dummy = _tree(tmp_path)
    with open(os.path.join(root, 'etc/sysctl.conf'), 'w') as handle:
        handle.write('old\n')
    link = os.path.join(root, 'etc/sysctl.d/99-sysctl.conf')
    os.symlink('../sysctl.conf', link)
    local = files.rooted(root, '/etc/sysctl.d/99-sysctl.conf')
    assert local == os.path.join(root, 'etc/sysctl.conf')
    change = files.FileChange(local, files.read_text(local), 'new\n', shown_path='/etc/sysctl.d/99-sysctl.conf')
    change.apply()
    assert os.readlink(link) == '../sysctl.conf'
    assert files.read_text(os.path.join(root, 'etc/sysctl.conf')) == 'new\n'
    # The lexical path to the link, with the root given, gives the same.
    files.write_atomic(link, 'newer\n', root=root)
    assert os.path.islink(link) and files.read_text(os.path.join(root, 'etc/sysctl.conf')) == 'newer\n'


def test_dotdot_in_a_link_inside_root_and_a_chain(tmp_path):
    root, outside = _tree(tmp_path)
    os.makedirs(os.path.join(root, 'usr/lib/sysctl.d'))
    with open(os.path.join(root, 'usr/lib/sysctl.d/50.conf'), 'w') as handle:
        handle.write('vendor\n')
    # /etc/a -> /etc/b (absolute), /etc/b -> ../usr/lib/sysctl.d/../sysctl.d/50.conf (relative with ..)
    os.symlink('../usr/lib/sysctl.d/../sysctl.d/50.conf', os.path.join(root, 'etc/b'))
    os.symlink('/etc/b', os.path.join(root, 'etc/a'))
    os.symlink('../a', os.path.join(root, 'etc/sysctl.d/c.conf'))
    local = files.rooted(root, '/etc/sysctl.d/c.conf')
    assert local == os.path.join(root, 'usr/lib/sysctl.d/50.conf')
    files.write_atomic(os.path.join(root, 'etc/sysctl.d/c.conf'), 'chained\n', root=root)
    assert files.read_text(local) == 'chained\n'
    for name in ('etc/a', 'etc/b', 'etc/sysctl.d/c.conf'):
        assert os.path.islink(os.path.join(root, name))
    # A chain whose last link climbs out is refused, naming that link.
    os.symlink('../../../outside/x.conf', os.path.join(root, 'etc/d'))
    os.symlink('/etc/d', os.path.join(root, 'etc/sysctl.d/e.conf'))
    with pytest.raises(files.PathError) as caught:
        files.rooted(root, '/etc/sysctl.d/e.conf')
    assert 'the link /etc/d -> ../../../outside/x.conf' in str(caught.value)
    assert (outside / 'x.conf').read_text() == 'host\n'


def test_link_loop_is_refused(tmp_path):
    root, dummy = _tree(tmp_path)
    os.symlink('b', os.path.join(root, 'etc/a'))
    os.symlink('a', os.path.join(root, 'etc/b'))
    with pytest.raises(files.PathError) as caught:
        files.rooted(root, '/etc/a')
    assert 'too many levels of symbolic links' in str(caught.value)


def test_follow_false_keeps_the_last_link(tmp_path):
    root, dummy = _tree(tmp_path)
    os.symlink('/dev/null', os.path.join(root, 'etc/sysctl.d/masked.conf'))
    local = files.resolve_in_root(root, '/etc/sysctl.d/masked.conf', follow=False)
    assert local == os.path.join(root, 'etc/sysctl.d/masked.conf') and os.path.islink(local)
    assert files.rooted(root, '/etc/sysctl.d/masked.conf') == os.path.join(root, 'dev/null')


def test_root_slash_follows_links_and_stays_at_the_top(tmp_path):
    # With root /, a .. above / stays at /, as the kernel does.
    link = tmp_path / 'up'
    os.symlink('../' * 40 + 'etc', str(link))
    assert files.rooted('/', str(link)) == '/etc'
    target = tmp_path / 'real.conf'
    target.write_text('old\n')
    os.symlink('real.conf', str(tmp_path / 'link.conf'))
    files.write_atomic(str(tmp_path / 'link.conf'), 'new\n')
    assert target.read_text() == 'new\n' and os.path.islink(str(tmp_path / 'link.conf'))


def test_remove_file_removes_the_target_within_root(tmp_path):
    root, outside = _tree(tmp_path)
    os.symlink('../../../outside/x.conf', os.path.join(root, 'etc/sysctl.d/x.conf'))
    with pytest.raises(files.PathError):
        files.remove_file(os.path.join(root, 'etc/sysctl.d/x.conf'), root=root)
    assert (outside / 'x.conf').read_text() == 'host\n'


def test_a_path_outside_root_is_refused(tmp_path):
    root, outside = _tree(tmp_path)
    with pytest.raises(files.PathError):
        files.write_atomic(str(outside / 'x.conf'), 'new\n', root=root)
    assert (outside / 'x.conf').read_text() == 'host\n'


# ---------------------------------------------------------------- modes
@pytest.fixture
def ansible_module():
    """A real AnsibleModule: its atomic_move() resets a new file's mode from the umask."""
    from ansible.module_utils.basic import AnsibleModule
    from ansible.module_utils.testing import patch_module_args
    with patch_module_args({}):
        return AnsibleModule(argument_spec={})


@pytest.fixture
def umask():
    saved = os.umask(0o022)
    os.umask(saved)

    def set_umask(value):
        os.umask(value)
    yield set_umask
    os.umask(saved)


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


@pytest.mark.parametrize('mask', [0o000, 0o002, 0o077])
@pytest.mark.parametrize('with_module', [False, True])
def test_new_file_gets_its_mode_whatever_the_umask(tmp_path, umask, ansible_module, mask, with_module):
    module = ansible_module if with_module else None
    umask(mask)
    files.write_atomic(str(tmp_path / 'a.conf'), 'x\n', module=module)
    files.write_atomic(str(tmp_path / 'secret.cnf'), 'x\n', module=module, mode=0o600)
    files.FileChange(files.rooted(str(tmp_path), '/d1/d2/b.conf'), None, 'x\n').apply(module)
    assert _mode(tmp_path / 'a.conf') == 0o644
    assert _mode(tmp_path / 'secret.cnf') == 0o600
    assert _mode(tmp_path / 'd1/d2/b.conf') == 0o644
    assert _mode(tmp_path / 'd1') == 0o755 and _mode(tmp_path / 'd1/d2') == 0o755


@pytest.mark.parametrize('with_module', [False, True])
def test_existing_file_keeps_mode_and_owner_under_umask_000(tmp_path, umask, ansible_module, with_module):
    path = tmp_path / 'f.conf'
    path.write_text('old\n')
    os.chmod(str(path), 0o640)
    os.chown(str(path), os.getuid(), os.getgid())
    before = os.stat(str(path))
    umask(0o000)
    files.write_atomic(str(path), 'new\n', module=ansible_module if with_module else None, mode=0o600)
    after = os.stat(str(path))
    assert path.read_text() == 'new\n'
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


# ---------------------------------------------------------------- stale temporary files
def _plant_leftovers(folder):
    (folder / 'x.conf').write_text('old\n')
    (folder / '.x.conf.abcd1234').write_text('')
    (folder / '.x.conf.k3j_x8q1').write_text('half a wri')
    (folder / '.x.conf.keep').write_text('keep\n')
    (folder / '.x.conf.abcd12345').write_text('keep\n')
    (folder / '.y.conf.abcd1234').write_text('keep\n')
    (folder / 'x.conf.abcd1234').write_text('keep\n')
    (folder / '.x.conf.dir12345').mkdir()
    os.symlink('x.conf', str(folder / '.x.conf.lnk12345'))
    return ['.x.conf.abcd12345', '.x.conf.dir12345', '.x.conf.keep', '.x.conf.lnk12345', '.y.conf.abcd1234',
            'x.conf', 'x.conf.abcd1234']


def test_remove_stale_temps_takes_only_its_own_pattern(tmp_path):
    kept = _plant_leftovers(tmp_path)
    removed = files.remove_stale_temps(str(tmp_path / 'x.conf'))
    assert sorted(os.path.basename(name) for name in removed) == ['.x.conf.abcd1234', '.x.conf.k3j_x8q1']
    assert sorted(os.listdir(str(tmp_path))) == kept


def test_write_removes_stale_temps(tmp_path):
    kept = _plant_leftovers(tmp_path)
    files.write_atomic(str(tmp_path / 'x.conf'), 'new\n')
    assert sorted(os.listdir(str(tmp_path))) == kept
    assert (tmp_path / '.x.conf.keep').read_text() == 'keep\n'


def test_report_adds_the_diff_and_touches_nothing(tmp_path):
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Result
    kept = _plant_leftovers(tmp_path)
    local = files.rooted(str(tmp_path), '/x.conf')
    result = Result(check_mode=False)
    files.FileChange(local, 'old\n', 'old\n').report(result)
    files.FileChange(local, 'old\n', 'new\n').report(result)
    assert [d['after'] for d in result.as_dict()["diff"]] == ['new\n']
    assert sorted(os.listdir(str(tmp_path))) == sorted(kept + ['.x.conf.abcd1234', '.x.conf.k3j_x8q1'])


def test_stale_temps_of_a_link_are_looked_for_beside_its_target(tmp_path):
    root, dummy = _tree(tmp_path)
    etc = tmp_path / 'root' / 'etc'
    (etc / 'sysctl.conf').write_text('old\n')
    (etc / '.sysctl.conf.abcd1234').write_text('')
    os.symlink('../sysctl.conf', str(etc / 'sysctl.d' / '99-sysctl.conf'))
    files.write_atomic(str(etc / 'sysctl.d' / '99-sysctl.conf'), 'new\n', root=root)
    assert not (etc / '.sysctl.conf.abcd1234').exists()


def test_commit_writes_outside_check_mode_only_and_tidies_first(tmp_path):
    _plant_leftovers(tmp_path)
    (tmp_path / 'x.conf').write_text('old\n')
    local = files.rooted(str(tmp_path), '/x.conf')
    assert Gate(True).commit(files.FileChange(local, 'old\n', 'new\n')) is None
    assert (tmp_path / 'x.conf').read_text() == 'old\n' and (tmp_path / '.x.conf.abcd1234').exists()
    # Not needed: nothing written, but what a killed write left is removed.
    assert files.FileChange(local, 'old\n', 'old\n').commit() is None
    assert not (tmp_path / '.x.conf.abcd1234').exists() and (tmp_path / 'x.conf').read_text() == 'old\n'
    files.FileChange(local, 'old\n', 'new\n').commit()
    assert (tmp_path / 'x.conf').read_text() == 'new\n' and (tmp_path / '.x.conf.keep').exists()


def test_chown_refused_without_privilege_keeps_our_owner_other_errors_stop(tmp_path, monkeypatch):
    # Not root: chown fails with EPERM and the file keeps our owner, as Ansible does;
    # any other failure is an error.
    import errno
    path = tmp_path / 'f.conf'
    path.write_text('old\n')

    def refuse(number):
        def chown(*args):
            raise OSError(number, os.strerror(number))
        return chown
    monkeypatch.setattr(files.os, 'chown', refuse(errno.EPERM))
    files.write_atomic(str(path), 'new\n')
    assert path.read_text() == 'new\n'
    monkeypatch.setattr(files.os, 'chown', refuse(errno.EIO))
    with pytest.raises(HostError, match=r'^writing %s: Input/output error$' % re.escape(str(path))):
        files.write_atomic(str(path), 'newer\n')
    assert path.read_text() == 'new\n'
    assert sorted(os.listdir(str(tmp_path))) == ['f.conf']  # the temporary file is removed again


def test_remove_stale_temps_reports_an_unlink_it_cannot_do(tmp_path, monkeypatch):
    import errno
    _plant_leftovers(tmp_path)

    def unlink(path):
        raise OSError(errno.EACCES, 'Permission denied')
    monkeypatch.setattr(files.os, 'unlink', unlink)
    with pytest.raises(HostError, match=r'^removing the stale temporary file %s: Permission denied$'
                       % re.escape(str(tmp_path / '.x.conf.abcd1234'))):
        files.remove_stale_temps(str(tmp_path / 'x.conf'))


def test_remove_stale_temps_passes_over_one_already_gone(tmp_path, monkeypatch):
    # another run removed it between the listing and the unlink: not an error
    import errno
    _plant_leftovers(tmp_path)

    def unlink(path):
        raise OSError(errno.ENOENT, 'No such file or directory')
    monkeypatch.setattr(files.os, 'unlink', unlink)
    assert files.remove_stale_temps(str(tmp_path / 'x.conf')) == []


def test_a_read_the_system_refuses_is_a_host_error_naming_the_file(tmp_path, monkeypatch):
    # EIO half way through a file is no "empty file": the read stops with the file's name.
    import errno
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine import regular
    path = tmp_path / 'f.conf'
    path.write_text('old\n')

    def refuse(fd, size):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    with monkeypatch.context() as patch:
        patch.setattr(regular.os, 'read', refuse)
        with pytest.raises(HostError, match=r'^reading %s: Input/output error$' % re.escape(str(path))):
            regular.read_bytes(str(path))
    assert regular.read_bytes(str(path)) == b'old\n'
