# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel's pseudo-files (/proc/sys, sysfs), read and written in place,
including the bracketed choice format.

Every read or write of a kernel pseudo-file goes through here: read_text() (the stripped
text, None when it cannot be read), read_raw() and read_value() (an attribute's text and
its effective value), write_text() (one write, the kernel's refusal raised as the OSError
with its errno) and write_value() (``echo value > path``, refusal as SysfsError).

``none [mq-deadline] kyber`` is read as the choices (none, mq-deadline, kyber) with
mq-deadline selected; ``always madvise [never]`` likewise for transparent huge pages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re
import stat

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError

_BRACKETED = re.compile(r'\[([^\]]+)\]')


class SysfsError(Exception):
    """A sysfs write the kernel refused; ``errno`` says why (EINVAL, EBUSY...)."""

    def __init__(self, path, value, error):
        self.path = path
        self.value = value
        self.errno = getattr(error, 'errno', None)
        Exception.__init__(self, 'writing %r to %s failed: %s' % (value, path, getattr(error, 'strerror', error)))


def is_choice(raw):
    """True for the bracketed choice format (exactly one choice in brackets)."""
    return raw is not None and len(_BRACKETED.findall(raw)) == 1


def parse_choice(raw):
    """Return (choices, selected) from ``a [b] c``; (None, raw) when not a choice list."""
    if not is_choice(raw):
        return None, raw
    choices = [word.strip('[]') for word in raw.split()]
    return choices, _BRACKETED.search(raw).group(1)


class PseudoFileError(InputError):
    """Something other than a regular file where a kernel pseudo-file should be (a FIFO...)."""


def _open(path, flags):
    """An fd of ``path``, which must be a regular file (as every /proc and /sys file is);
    opened without waiting (O_NONBLOCK: a FIFO planted in a test tree does not hang us)."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise PseudoFileError('%s is not a regular file (%s): not read or written as a kernel value'
                              % (path, 'a folder' if stat.S_ISDIR(mode) else 'a FIFO' if stat.S_ISFIFO(mode) else
                                 'a device or socket'))
    return fd


def _read(path):
    # Bytes decoded leniently: /proc/PID/cmdline and environ hold whatever a process put there.
    fd = _open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b''.join(chunks).decode('utf-8', 'replace')


def read_text(path, strict=False, strip=True):
    """A kernel pseudo-file's text with the surrounding whitespace stripped (``strip=False``:
    as it is, for /proc/PID files such as cmdline, whose last argument may end in spaces).

    None when it cannot be read (absent, write-only, not permitted, the process gone); with
    ``strict`` the IOError/OSError is raised instead.
    """
    try:
        text = _read(path)
        return text.strip() if strip else text
    except (IOError, OSError):
        if strict:
            raise
        return None


def read_raw(path):
    """The attribute's text without the trailing newline; None when absent."""
    try:
        return _read(path).rstrip('\n')
    except IOError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def read_value(path):
    """The attribute's effective value: the selected choice, or the stripped text."""
    raw = read_raw(path)
    if raw is None:
        return None
    return parse_choice(raw)[1].strip()


def _write(path, data):
    if not stat.S_ISREG(os.stat(path).st_mode):
        # checked before O_TRUNC reaches it; _open() checks the open file again
        os.close(_open(path, os.O_RDONLY))
    fd = _open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _previous(path):
    """The value ``path`` holds now, to put back (the selected choice of a choice list); None if unreadable."""
    try:
        return parse_choice(_read(path).rstrip('\n'))[1].strip()
    except (IOError, OSError, InputError):
        return None


def write_text(path, text, keep=True):
    """Write ``text`` as it is, in one write(2), into the existing file ``path`` (truncated first,
    as the shell's ``>`` does); the kernel's refusal is raised as the OSError with its errno.

    The write is noted in engine/journal.py with the value it replaced, which is put back
    when the run fails before the file persisting it is written.  Before the write, the
    journal's watcher is told the value it replaces (the baseline keeps it for a revert);
    ``keep`` false: a trigger (compact_memory) or a write the caller reports itself as one
    a revert cannot put back, which the baseline does not keep."""
    data = text.encode('ascii')
    before = _previous(path)
    if keep:
        journal.before('live', path, value=before)
    _write(path, data)
    what = '%s (%s -> %s)' % (path, before, text.strip()) if before is not None else '%s (%s)' % (path, text.strip())
    undo = (lambda: _write(path, ('%s\n' % before).encode('ascii', 'replace'))) if before is not None else None
    journal.record(what, undo)


def write_value(path, value):
    """Write one value the way ``echo value > path`` does; raise SysfsError on refusal."""
    try:
        write_text(path, '%s\n' % value)
    except (IOError, OSError) as exc:
        raise SysfsError(path, value, exc)


def is_writable(path):
    try:
        return bool(os.stat(path).st_mode & 0o222)
    except OSError:
        return False


def mounted_read_only(path):
    """True when the file system holding ``path`` is mounted read-only (as a container's /proc/sys
    and /sys are): even root's write is refused with EROFS, whatever the file's mode."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, 'ST_RDONLY', 1))
    except OSError:
        return False


def read_only_reason(path, shown):
    """Why nobody can write the kernel pseudo-file ``path`` (``shown`` as the host names it) here,
    or None when it can be written: a read-only mount, or an entry the kernel shows read-only."""
    if mounted_read_only(path):
        top = '/' + shown.strip('/').split('/')[0]
        folder = '/proc/sys' if shown.startswith('/proc/sys/') else top
        return 'read-only %s (mounted read-only, as in a container)' % folder
    if not is_writable(path):
        return "%s is read-only in this kernel (mode 0444: a container's namespace?)" % shown
    return None
