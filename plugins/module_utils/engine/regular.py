# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: only regular files are read, written and backed up.

A configuration file the collection edits is a regular file.  Anything else at its
name is refused with a message naming it, before anything is touched:
  - a link to /dev/null masks the file (systemd's way to switch a file off): that is
    the administrator's choice, and we say so (MaskedError) rather than write through it;
  - a FIFO, a socket, a device or a folder (FileKindError): opening a FIFO would wait for
    a writer forever, writing a device would change it.
Files are opened with O_NOFOLLOW and O_NONBLOCK, and their kind taken from the open
descriptor (fstat), so a name swapped between the check and the open is not followed and
nothing ever waits on open.

Backups are made here too, by us and not by following whatever lies at the backup's
name: ``<file>.<pid>.<date>~`` (Ansible's backup_local() name) is created beside the file
with O_CREAT|O_EXCL|O_NOFOLLOW, so a link planted at that name is never followed; a half
copy (a full disk) is removed.

The temporary files of atomic writes are named ``.<file>.<pid>.<8 characters>``: a
later run removes only those whose process is gone (stale_temps()).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re
import stat
import tempfile
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError, InputError, host_error

_KINDS = ((stat.S_ISDIR, 'a folder'), (stat.S_ISFIFO, 'a FIFO (named pipe)'), (stat.S_ISSOCK, 'a socket'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'), (stat.S_ISLNK, 'a symbolic link'))
_CHUNK = 1024 * 1024
# A temporary file's name keeps at most this much of the file's name, so that it stays
# within NAME_MAX (255) with the pid and the random part.
TEMP_NAME_KEEP = 200
_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)
FOLDER_MODE = 0o755


class FileKindError(InputError):
    """Something other than a regular file is where a configuration file should be."""


class MaskedError(FileKindError):
    """The file is a link to /dev/null: masked by the administrator."""


def kind(mode):
    """'a FIFO (named pipe)', 'a folder'... for a non-regular ``mode``; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return 'not a regular file'


def masked_error(shown):
    return MaskedError('%s is masked (a link to /dev/null): that is the administrator\'s choice, so it is '
                       'neither read nor written; remove the link to let it be managed' % (shown,))


def check_kind(info, shown):
    """Raise FileKindError naming ``shown`` unless ``info`` (a stat result) is of a regular file."""
    what = kind(info.st_mode)
    if what is not None:
        raise FileKindError('%s is %s, not a regular file: refused, nothing was read or written' % (shown, what))


def existing(host, shown):
    """The stat of the regular file ``host`` (no link followed), None when nothing is there."""
    try:
        info = os.lstat(host)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise host_error('looking up', shown, exc)
    check_kind(info, shown)
    return info


def open_regular(host, shown):
    """An fd of the regular file ``host`` open for reading, or None when it does not exist."""
    try:
        fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        # A socket (ENXIO) or another kind that cannot be opened: said by its kind.
        existing(host, shown)
        if exc.errno == errno.ELOOP:
            raise FileKindError('%s is a symbolic link where a file was expected (it changed while it was read?): '
                                'refused' % (shown,))
        raise host_error('reading', shown, exc)
    try:
        check_kind(os.fstat(fd), shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd, shown):
    chunks = []
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        raise host_error('reading', shown, exc)
    return b''.join(chunks)


def read_bytes(host, shown=None):
    """The bytes of the regular file ``host``; None when it does not exist.  Never waits on open."""
    fd = open_regular(host, shown or host)
    if fd is None:
        return None
    try:
        return _read_fd(fd, shown or host)
    finally:
        os.close(fd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def backup_name(host, number=0):
    """``<file>.<pid>.<date>~`` as Ansible's backup_local() names it; ``.<n>`` before ``~`` after a clash."""
    stamp = time.strftime('%Y-%m-%d@%H:%M:%S')
    return '%s.%d.%s%s~' % (host, os.getpid(), stamp, '.%d' % number if number else '')


def make_backup(host, shown=None):
    """Copy the regular file ``host`` beside itself; return the copy's name, None when there is no file.

    The copy is created exclusively and without following a link (a name already taken,
    by a file or a planted link, is passed over for the next), gets the file's mode, owner
    and times, and is removed again when the copy fails half way (a full disk).
    """
    shown = shown or host
    source = open_regular(host, shown)
    if source is None:
        return None
    try:
        info = os.fstat(source)
        for number in range(100):
            name = backup_name(host, number)
            try:
                target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    continue
                raise host_error('making the backup of', shown, exc)
            break
        else:
            raise host_error('making the backup of', shown, OSError(errno.EEXIST, 'every backup name is taken'))
        try:
            _write_all(target, _read_fd(source, shown))
            os.fsync(target)
            _same_owner(target, info)
            os.fchmod(target, stat.S_IMODE(info.st_mode))
            os.utime(name, (info.st_atime, info.st_mtime), follow_symlinks=False)
        except (OSError, InputError) as exc:
            os.close(target)
            target = None
            remove_quietly(name)
            if isinstance(exc, InputError):
                raise
            raise host_error('making the backup of', shown, exc)
        finally:
            if target is not None:
                os.close(target)
        return name
    finally:
        os.close(source)


def _same_owner(target, info):
    """Give ``target`` (a path, or an open file's descriptor) the owner and group of ``info``."""
    try:
        os.chown(target, info.st_uid, info.st_gid)
    except OSError as exc:
        # Not running as root: the file keeps our own owner, as Ansible does.
        if exc.errno != errno.EPERM:
            raise


def remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def temp_prefix(host):
    """The start of a temporary file's name for ``host``: ``.<name>.<pid>.``."""
    return '.%s.%d.' % (os.path.basename(host)[:TEMP_NAME_KEEP], os.getpid())


def _alive(pid):
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    return True


def stale_temps(host, names):
    """The names among ``names`` (a folder's entries) that are temporary files of ``host``
    whose process is gone: ``.<name>.<pid>.<8 characters>`` with no process ``pid`` (this
    one's own included: its writes remove their temporary file), and the older
    ``.<name>.<8 characters>`` that carried no pid."""
    base = re.escape('.%s.' % os.path.basename(host)[:TEMP_NAME_KEEP])
    pattern = re.compile(base + r'(?:([0-9]+)\.)?[a-z0-9_]{8}\Z')
    found = []
    for name in names:
        match = pattern.match(name)
        if match and not (match.group(1) and _alive(int(match.group(1)))):
            found.append(name)
    return found


# ------------------------------------------------------------ the steps of an atomic write
def copy_metadata(source_stat, path):
    os.chmod(path, stat.S_IMODE(source_stat.st_mode))
    _same_owner(path, source_stat)


def make_folders(folder):
    """Create ``folder`` and its missing parents, each with FOLDER_MODE whatever the umask.

    Returns the folders made, first made first; when one cannot be made, those made
    before it are removed again and a HostError names it.
    """
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    made = []
    for path in reversed(missing):
        try:
            os.mkdir(path, FOLDER_MODE)
            os.chmod(path, FOLDER_MODE)
        except OSError as exc:
            if exc.errno == errno.EEXIST and os.path.isdir(path):
                continue
            remove_folders(made)
            if exc.errno == errno.EEXIST:
                raise HostError('making the folder %s: %s is in the way (it is not a folder)' % (path, path))
            raise host_error('making the folder', path, exc)
        made.append(path)
    return made


def remove_folders(made):
    for path in reversed(made):
        try:
            os.rmdir(path)
        except OSError:
            pass


def sync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_temp(folder, target, data, existing, mode):
    """The temporary file beside ``target`` holding ``data``, with the mode (and owner) the file is to have."""
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), dir=folder)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:
            copy_metadata(existing, tmp)
        else:
            os.chmod(tmp, mode)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return tmp


def read_only(folder):
    try:
        return bool(os.statvfs(folder).f_flag & getattr(os, 'ST_RDONLY', 1))
    except OSError:
        return False
