# -*- coding: utf-8 -*-
"""engine/lock.py: one run at a time per root; the temporary-file sweep spares live runs.

The lock file goes in <root>/run/lock (else <root>), holds its holder's pid and command
while held, and is gone after; a second taker waits, then fails naming the holder; a link
planted at the lock's name or at run/lock is not followed; check mode takes no lock.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import os
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import files, journal, lock, regular
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import run_plan


def test_lock_file_names_its_holder_and_is_gone_after(tmp_path):
    os.makedirs(str(tmp_path / 'run' / 'lock'))
    path = str(tmp_path / 'run' / 'lock' / 'dbhost-tuning.lock')
    held = lock.acquire(str(tmp_path), who='dbhost.tuning.kernel_params')
    assert open(path).read() == 'pid %d: dbhost.tuning.kernel_params\n' % os.getpid()
    held.release()
    assert not os.path.exists(path)
    assert os.listdir(str(tmp_path / 'run' / 'lock')) == []


def test_without_run_lock_the_file_is_in_root(tmp_path):
    held = lock.acquire(str(tmp_path), who='x')
    assert os.listdir(str(tmp_path)) == ['.dbhost-tuning.lock']
    held.release()
    assert os.listdir(str(tmp_path)) == []


def test_second_taker_waits_then_names_the_holder(tmp_path):
    # The holder is another process (flock locks are per open file, so a second open in
    # this process would conflict too; a process shows the real case).
    holder = subprocess.Popen([sys.executable, '-c', '''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b'pid %d: the other run\\n' % os.getpid())
print('held', flush=True)
sys.stdin.read()
''', str(tmp_path / '.dbhost-tuning.lock')], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b'held\n'
        slept = []
        fds = _open_fds()
        with pytest.raises(lock.LockTimeout) as caught:
            lock.acquire(str(tmp_path), who='x', timeout=1, sleep=slept.append, clock=lambda: len(slept) * 0.25)
        assert len(slept) == 4
        assert _open_fds() == fds  # each try's look at the holder's file is closed again
        message = str(caught.value)
        assert 'pid %d: the other run' % holder.pid in message
        assert str(tmp_path / '.dbhost-tuning.lock') in message and 'waited 1 s' in message
        assert 'DBHOST_TUNING_LOCK_TIMEOUT' in message and 'nothing was changed' in message
    finally:
        holder.stdin.close()
        holder.wait()
    # let go: taken at once
    lock.acquire(str(tmp_path), who='x', timeout=0).release()


def _open_fds():
    # Collect garbage first: a file an earlier test left open in a reference cycle would
    # otherwise be closed by the collector in the middle of a test, between two looks.
    gc.collect()
    return sorted(os.listdir('/proc/self/fd'))


def test_a_lock_the_file_system_refuses_is_no_lock(tmp_path, monkeypatch):
    # flock failing for another reason than "held" (ENOLCK: an NFS mount without lockd) is
    # not taken for a lock: acquire says None (no lock), as for a root that cannot hold one.
    import errno

    def refuse(fd, operation):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))
    monkeypatch.setattr(lock.fcntl, 'flock', refuse)
    fds = _open_fds()
    assert lock.acquire(str(tmp_path), who='x', timeout=0) is None
    assert _open_fds() == fds


def test_a_lock_on_a_file_removed_meanwhile_is_taken_again_on_a_new_file(tmp_path, monkeypatch):
    # The run we waited for removes its file as it lets go: our flock then holds a name no
    # longer there, which locks nothing. The lock is tried again, on the file made anew.
    path = str(tmp_path / '.dbhost-tuning.lock')
    real_flock = lock.fcntl.flock
    removed = []

    def flock_then_holder_removes(fd, operation):
        real_flock(fd, operation)
        if not removed:
            removed.append(os.fstat(fd).st_ino)
            os.unlink(path)
    monkeypatch.setattr(lock.fcntl, 'flock', flock_then_holder_removes)
    slept = []
    fds = _open_fds()
    held = lock.acquire(str(tmp_path), who='x', timeout=5, sleep=slept.append, clock=lambda: 0)
    assert len(removed) == 1 and len(slept) == 1
    assert os.stat(path).st_ino == os.fstat(held.fd).st_ino
    assert open(path).read() == 'pid %d: x\n' % os.getpid()
    held.release()
    assert _open_fds() == fds and not os.path.exists(path)


def test_timeout_from_the_environment():
    assert lock.timeout_seconds({}) == 60
    assert lock.timeout_seconds({'DBHOST_TUNING_LOCK_TIMEOUT': '5'}) == 5
    assert lock.timeout_seconds({'DBHOST_TUNING_LOCK_TIMEOUT': 'soon'}) == 60
    assert lock.timeout_seconds({'DBHOST_TUNING_LOCK_TIMEOUT': '-1'}) == 60


def test_planted_links_are_not_followed(tmp_path):
    outside = tmp_path / 'outside'
    outside.mkdir()
    root = tmp_path / 'root'
    (root / 'run').mkdir(parents=True)
    os.symlink(str(outside), str(root / 'run' / 'lock'))
    os.symlink(str(outside / 'victim'), str(root / '.dbhost-tuning.lock'))
    # run/lock is a link: the root's own file is used, and a link there is not followed either
    assert lock.acquire(str(root), who='x') is None
    assert os.listdir(str(outside)) == []
    assert os.path.islink(str(root / '.dbhost-tuning.lock'))


class _Module(object):
    def __init__(self, root, check_mode):
        self.params = {'root': root}
        self.check_mode = check_mode
        self.argument_spec = {'root': {'type': 'path'}}
        self.result = None

    def fail_json(self, **kwargs):
        self.result = dict(kwargs, failed=True)
        raise SystemExit(1)

    def exit_json(self, **kwargs):
        self.result = kwargs
        raise SystemExit(0)

    def warn(self, text):
        pass


class _Plan(object):
    """Sees whether the lock is held while it runs."""

    def __init__(self, root):
        self.root = root
        self.seen = None

    def run(self, module):
        from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Result
        self.seen = sorted(os.listdir(self.root))
        return Result(module.check_mode)

    def failure_message(self, result):
        return None


@pytest.mark.parametrize('check_mode', [False, True])
def test_run_plan_holds_the_lock_outside_check_mode_only(tmp_path, check_mode):
    plan = _Plan(str(tmp_path))
    module = _Module(str(tmp_path), check_mode)
    with pytest.raises(SystemExit):
        run_plan(module, lambda: plan)
    assert plan.seen == ([] if check_mode else ['.dbhost-tuning.lock'])
    assert os.listdir(str(tmp_path)) == []


def test_sweep_spares_a_live_run_and_removes_a_dead_one(tmp_path):
    target = str(tmp_path / 'x.conf')
    sleeper = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'], stdin=subprocess.PIPE)
    done = subprocess.Popen([sys.executable, '-c', 'pass'])
    done.wait()
    try:
        live = '.x.conf.%d.abcd_123' % sleeper.pid
        dead = '.x.conf.%d.efgh_456' % done.pid
        for name in (live, dead, '.x.conf.k3j_x8q1', '.y.conf.%d.abcd_123' % done.pid):
            (tmp_path / name).write_text(u'temp')
        removed = files.remove_stale_temps(target)
        assert sorted(os.path.basename(name) for name in removed) == sorted([dead, '.x.conf.k3j_x8q1'])
        assert sorted(os.listdir(str(tmp_path))) == sorted([live, '.y.conf.%d.abcd_123' % done.pid])
    finally:
        sleeper.stdin.close()
        sleeper.wait()


def test_temp_names_carry_the_pid_and_fit_a_long_name(tmp_path):
    assert regular.temp_prefix('/etc/x.conf') == '.x.conf.%d.' % os.getpid()
    long_name = 'n' * 250
    files.write_atomic(str(tmp_path / long_name), 'text\n')
    assert open(str(tmp_path / long_name)).read() == 'text\n'
    assert os.listdir(str(tmp_path)) == [long_name]


def test_journal_lists_puts_back_and_settles():
    journal.begin()
    state = {'value': 'old'}
    journal.record('wrote /etc/a')
    journal.record('/proc/sys/x (old -> new)', lambda: state.update(value='old again'))
    put_back, stuck = journal.rollback()
    assert put_back == ['/proc/sys/x (old -> new)'] and stuck == [] and state['value'] == 'old again'
    assert journal.summary(put_back) == 'changed before the failure: wrote /etc/a; put back: /proc/sys/x (old -> new)'
    journal.record('/proc/sys/y (1 -> 2)', lambda: state.update(value='never'))
    journal.settle()
    assert journal.rollback() == ([], [])
    assert journal.changes() == ['wrote /etc/a', '/proc/sys/y (1 -> 2)']
    journal.begin()
    assert journal.summary() == 'nothing was changed'


def test_host_state_locks_every_roles_root():
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
    state = HostState(['kernel_params', 'shared_memory', 'direct_io'],
                      {'kernel_params': {'kernel_params_root': '/mnt/a'}, 'shared_memory': {'shared_memory_root': '/mnt/b'},
                       'direct_io': {}})
    assert state.lock_roots() == ['/mnt/a', '/mnt/b', '/']
