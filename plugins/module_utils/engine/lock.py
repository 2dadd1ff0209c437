# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: one run at a time per managed root.

Two runs on one host (overlapping pipeline jobs) would each read a file, plan, and write
their own version, so that one run's change is lost.  A run that may change the host
(not check mode, which only reads) holds an exclusive flock(2) on
``<root>/run/lock/dbhost-tuning.lock`` (``<root>/.dbhost-tuning.lock`` where root has no
run/lock folder) from before it reads until its last write.  A second run waits for it,
up to LOCK_TIMEOUT seconds (the environment variable DBHOST_TUNING_LOCK_TIMEOUT changes
that), then fails naming the holder: the holder writes its pid and command into the file.

The file is removed when the lock is let go, so that a run leaves root as it found it.
A waiting run may then hold a lock on the removed file: after taking the lock, it checks
that the name still leads to the file it holds, and starts again when not.  A run killed
while holding the lock leaves the file, but the kernel lets the lock go with the process.

The folder and the file are opened without following links (a link planted at
run/lock or at the file's name is never followed out of root).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fcntl
import os
import stat
import sys
import time

LOCK_NAME = 'dbhost-tuning.lock'
FALLBACK_NAME = '.dbhost-tuning.lock'
LOCK_TIMEOUT = 60.0
TIMEOUT_VARIABLE = 'DBHOST_TUNING_LOCK_TIMEOUT'
_POLL = 0.05


class LockTimeout(Exception):
    """Another run held the lock for longer than the wait allows; the message names it."""


def timeout_seconds(environ=None):
    """The wait for the lock: DBHOST_TUNING_LOCK_TIMEOUT when it is a number >= 0, else LOCK_TIMEOUT."""
    value = (environ if environ is not None else os.environ).get(TIMEOUT_VARIABLE)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return LOCK_TIMEOUT
    return seconds if seconds >= 0 else LOCK_TIMEOUT


def _open_folder(root):
    """An fd of the folder the lock file goes in, and that file's name as shown in messages."""
    flags = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0)
    top = os.open(root, flags)
    fd = top
    try:
        for part in ('run', 'lock'):
            fd_next = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            if fd != top:
                os.close(fd)
            fd = fd_next
    except OSError:
        if fd != top:
            os.close(fd)
        return top, FALLBACK_NAME, os.path.join(root, FALLBACK_NAME)
    os.close(top)
    return fd, LOCK_NAME, os.path.join(root, 'run', 'lock', LOCK_NAME)


def _holder(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 4096).decode('utf-8', 'replace').strip()
    except OSError:
        text = ''
    return text or 'a run that has not yet said who it is'


class Lock(object):
    """The lock of one root while it is held: release() lets it go and removes the file."""

    def __init__(self, folder_fd, name, shown, fd):
        self.folder_fd = folder_fd
        self.name = name
        self.shown = shown
        self.fd = fd

    def release(self):
        if self.fd is None:
            return
        try:
            os.unlink(self.name, dir_fd=self.folder_fd)
        except OSError:
            pass
        os.close(self.fd)
        os.close(self.folder_fd)
        self.fd = None


def _try_lock(folder_fd, name):
    """An fd holding the lock of ``name``, or (None, fd of the file held by another run)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0)
    fd = os.open(name, flags, 0o644, dir_fd=folder_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, 'not a regular file')
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (IOError, OSError) as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            os.close(fd)
            raise
        return None, fd
    try:
        same = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except OSError:
        same = False
    if not same:
        # The run we waited for removed the file: the lock is on a name no longer there.
        os.close(fd)
        return None, None
    return fd, None


def acquire(root, who=None, timeout=None, sleep=time.sleep, clock=time.monotonic):
    """Hold the lock of ``root``; return a Lock, or None when root cannot hold a lock file.

    A root where the file cannot be made (a read-only image, a folder we may not write)
    is not locked: the run cannot write there either.  ``who`` is what a waiting run's
    error names (the module); the holder's pid is added.  Waits up to ``timeout`` seconds
    (timeout_seconds() by default), then raises LockTimeout naming the holder.
    """
    timeout = timeout_seconds() if timeout is None else timeout
    try:
        folder_fd, name, shown = _open_folder(root or '/')
    except OSError:
        return None
    deadline = clock() + timeout
    while True:
        try:
            fd, other = _try_lock(folder_fd, name)
        except OSError:
            os.close(folder_fd)
            return None
        if fd is not None:
            break
        if clock() >= deadline:
            holder = _holder(other) if other is not None else 'another run'
            if other is not None:
                os.close(other)
            os.close(folder_fd)
            raise LockTimeout('another dbhost.tuning run holds %s (%s); waited %g s for it (%s sets the wait); '
                              'nothing was changed' % (shown, holder, timeout, TIMEOUT_VARIABLE))
        if other is not None:
            os.close(other)
        sleep(_POLL)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, ('pid %d: %s\n' % (os.getpid(), who or ' '.join(sys.argv))).encode('utf-8', 'replace'))
    except OSError:
        # A full disk: the lock holds all the same; a waiting run cannot name us.
        pass
    return Lock(folder_fd, name, shown, fd)


class Locks(object):
    """The locks of several roots, taken in one order (so that two runs cannot wait on each other)."""

    def __init__(self, roots, who=None, timeout=None):
        self.roots = sorted(set(os.path.realpath(root or '/') for root in roots))
        self.who = who
        self.timeout = timeout
        self.held = []

    def __enter__(self):
        try:
            for root in self.roots:
                held = acquire(root, self.who, self.timeout)
                if held is not None:
                    self.held.append(held)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *dummy):
        while self.held:
            self.held.pop().release()
        return False
