# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: reading, rooting, and atomic writing of text files.

Pure Python; when an AnsibleModule is passed, its atomic_move() and backup_local()
are used so that SELinux contexts and Ansible's own conventions are kept.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import shutil
import stat
import tempfile
import time


class PathError(ValueError):
    """A path that would leave the managed root, or is otherwise unusable."""


def rooted(root, path):
    """Return ``path`` (absolute, as seen on the managed system) under ``root``.

    Raises PathError when ``path`` is relative or climbs out of ``root`` with ``..``.
    """
    if not path or not path.startswith('/'):
        raise PathError('path %r must be absolute' % (path,))
    parts = [p for p in path.split('/') if p not in ('', '.')]
    if '..' in parts:
        raise PathError('path %r must not contain ".."' % (path,))
    root = root or '/'
    return os.path.join(root, *parts) if parts else root


def read_text(path):
    """Return the file's text, or None when it does not exist."""
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'surrogateescape')
    except IOError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def _copy_metadata(source_stat, path):
    os.chmod(path, stat.S_IMODE(source_stat.st_mode))
    try:
        os.chown(path, source_stat.st_uid, source_stat.st_gid)
    except OSError as exc:
        # Not running as root: the file keeps our own owner, as Ansible does.
        if exc.errno != errno.EPERM:
            raise


def backup(path, module=None):
    """Copy ``path`` beside itself with a timestamp; return the copy's name."""
    if not os.path.exists(path):
        return None
    if module is not None:
        return module.backup_local(path)
    name = '%s.%s~' % (path, time.strftime('%Y-%m-%d@%H:%M:%S'))
    shutil.copy2(path, name)
    return name


def write_atomic(path, content, module=None, mode=0o644, make_parents=False, backup_file=False, root=None):
    """Write ``content`` to ``path`` through a temporary file in the same folder.

    An existing file keeps its owner and mode; a new one gets ``mode``.  Returns the
    backup's file name when ``backup_file`` is true and there was a file to back up.
    Nothing is left half-written: the rename is the only step that touches ``path``.
    A symlink is followed, so the link stays and its target gets the content
    (Debian's /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf); ``root``, when given,
    is a folder the target must not leave.
    """
    if os.path.islink(path):
        target = os.path.realpath(path)
        if root and not (target + os.sep).startswith(os.path.realpath(root).rstrip(os.sep) + os.sep):
            raise PathError('%s is a link to %s, outside %s' % (path, target, root))
        path = target
    folder = os.path.dirname(path) or '.'
    if make_parents and not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    backup_name = backup(path, module) if backup_file else None
    try:
        existing = os.stat(path)
    except OSError:
        existing = None
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=folder)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(content.encode('utf-8', 'surrogateescape'))
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:
            _copy_metadata(existing, tmp)
        else:
            os.chmod(tmp, mode)
        if module is not None:
            module.atomic_move(tmp, path, unsafe_writes=False)
        else:
            os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return backup_name


def remove_file(path, module=None, backup_file=False):
    """Remove ``path`` if it exists; return the backup's name, if one was made."""
    if not os.path.exists(path):
        return None
    backup_name = backup(path, module) if backup_file else None
    os.unlink(path)
    return backup_name


class FileChange(object):
    """A planned edit of one file: compute ``after``, then apply() unless in check mode.

    ``after`` of None means the file is to be removed.
    """

    def __init__(self, path, before, after, shown_path=None):
        self.path = path
        self.shown_path = shown_path or path
        self.before = before
        self.after = after

    @property
    def needed(self):
        return self.before != self.after

    def report(self, result):
        if self.needed:
            result.add_diff(self.shown_path, self.before, self.after)

    def apply(self, module=None, backup_file=False, mode=0o644, make_parents=True):
        if not self.needed:
            return None
        if self.after is None:
            return remove_file(self.path, module, backup_file)
        return write_atomic(self.path, self.after, module=module, mode=mode,
                            make_parents=make_parents, backup_file=backup_file)
