# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: reading, rooting, and atomic writing of text files.

Confinement: every path a module is given names a file as the managed system sees it
(``/etc/sysctl.d/x.conf``), and ``root`` says where that system is on this host.
resolve_in_root() finds the file the way a chroot to ``root`` would: every link on the
way, folders and the file itself, is followed with absolute targets taken from ``root``
(a link ``/etc/x -> /etc/real`` under ``/mnt/img`` means ``/mnt/img/etc/real``) and
relative ones from the link's folder.  A ``..`` that would climb above ``root`` is
refused (PathError naming the link), except with root ``/``, where it stays at ``/`` as
the kernel does.  Writes never create a folder through a link: a link whose target's
folder is missing is refused too.  rooted() returns a HostPath, which remembers its root,
so that read_text(), write_atomic(), remove_file() and FileChange resolve it again in
the same root right before they read or write.

Only regular files are read and written (engine/regular.py): a file masked with a link
to /dev/null, a FIFO, a socket, a device or a folder at the name is refused naming it.
Every OSError is raised as a HostError naming the file and what was being done, and
every change is noted in engine/journal.py, so that a failed run says what it changed.

Pure Python; when an AnsibleModule is passed, its atomic_move() is used so that SELinux
contexts are kept.  Backups are made by engine/regular.py (never through a link).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import stat

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import regular
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError, InputError, host_error

# As Linux's MAXSYMLINKS: more links than this on one path is a loop.
MAX_LINKS = 40


class PathError(InputError):
    """A path that would leave the managed root, or is otherwise unusable.

    An InputError: run_plan fails the task with its message, which names the path (and
    the link, when a link is the reason).
    """


class HostPath(str):
    """A path on this host that rooted() made.

    ``root`` is the folder it lies under and ``shown`` the path as the managed system
    names it; read_text(), write_atomic(), remove_file() and FileChange take the root
    from here when they are not given one.  Any string operation gives a plain str.
    """

    def __new__(cls, host, root, shown):
        self = str.__new__(cls, host)
        self.root = root
        self.shown = shown
        return self


def _root_of(root):
    root = root or '/'
    return root.rstrip('/') or '/'


def _parts(path):
    return [part for part in path.split('/') if part not in ('', '.')]


def _check_managed(path):
    if not path or not path.startswith('/'):
        raise PathError('path %r must be absolute' % (path,))
    if '..' in _parts(path):
        raise PathError('path %r must not contain ".."' % (path,))


def _resolve(root, path, follow=True):
    """Resolve ``path`` (absolute, as the managed system names it) under ``root``.

    Returns (host path, dangling): dangling is None, or the message to refuse a write
    with when a folder that a link's target needs is missing.
    """
    root = _root_of(root)
    at_top = os.path.realpath(root) == '/'
    done = []
    # A stack of (part, the link it comes from, that link's target), the next part last.
    todo = [(part, None, None) for part in reversed(_parts(path))]
    links = 0
    dangling = None
    while todo:
        part, link, target = todo.pop()
        if part == '..':
            if done:
                done.pop()
            elif not at_top:
                raise PathError('%s: the link %s -> %s leads out of %s' % (path, link, target, root))
            continue
        host = os.path.join(root, *(done + [part]))
        try:
            info = os.lstat(host)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise PathError('%s: the name %s is too long for this system (%s)' % (path, host, exc.strerror))
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise host_error('looking up', host, exc)
            if todo and link is not None and dangling is None:
                dangling = ('%s: the link %s -> %s points into %s, which does not exist under %s; no folder is made '
                            'through a link' % (path, link, target, '/' + '/'.join(done + [part]), root))
            done.append(part)
            continue
        if stat.S_ISLNK(info.st_mode) and (follow or todo):
            links += 1
            if links > MAX_LINKS:
                raise PathError('%s: too many levels of symbolic links under %s' % (path, root))
            name = '/' + '/'.join(done + [part])
            try:
                value = os.readlink(host)
            except OSError as exc:
                raise host_error('reading the link', host, exc)
            if value.startswith('/'):
                done = []
            todo.extend((p, name, value) for p in reversed(_parts(value)))
            continue
        done.append(part)
    return (os.path.join(root, *done) if done else root), dangling


def resolve_in_root(root, path, follow=True):
    """Return where ``path`` (absolute, as the managed system names it) is on this host.

    Links are followed as a chroot to ``root`` would (see the module's docstring); with
    ``follow`` false the last part is left as it is when it is a link (its folders are
    still resolved).  Raises PathError when ``path`` is relative, holds ``..``, loops, or
    a link leads out of ``root``.  The result is a HostPath remembering ``root``.
    """
    _check_managed(path)
    host, dummy = _resolve(root, path, follow)
    return HostPath(host, _root_of(root), path)


def rooted(root, path):
    """Return ``path`` (absolute, as seen on the managed system) under ``root``, links resolved.

    The same as resolve_in_root(root, path): every link on the way, the file's own
    included, is followed within ``root``; a HostPath is returned.
    """
    return resolve_in_root(root, path)


def _host_root(path, root):
    if root is None:
        root = getattr(path, 'root', None)
    return _root_of(root)


def _managed(root, path):
    """The part of host ``path`` under ``root``, as the managed system names it."""
    full = os.path.abspath(path)
    top = os.path.abspath(root)
    if top == '/':
        managed = full
    elif full == top:
        managed = '/'
    elif full.startswith(top + '/'):
        managed = full[len(top):]
    else:
        raise PathError('%s is not under %s' % (path, root))
    return managed, top


def _resolve_host(root, path):
    """(host path, dangling) for a host ``path`` under ``root``, resolved again within it.

    A HostPath of the same root is resolved again from the name the managed system
    gives it, so that the links on its way are seen (and checked) once more.
    """
    if isinstance(path, HostPath) and path.root == _root_of(root):
        return _resolve(path.root, path.shown)
    managed, top = _managed(root, path)
    return _resolve(top, managed)


def confine(root, path):
    """Host ``path`` under ``root`` with every link on it resolved within ``root``.

    For the kernel's pseudo-files (<root>/proc/sys, <root>/sys), which are read and
    written in place rather than through write_atomic(): PathError, naming the link,
    when one leads out of root.  With root ``/`` the path is returned as it is (the
    kernel resolves it the same way).
    """
    top = _root_of(root)
    if top == '/' or os.path.realpath(top) == '/':
        return path
    return _resolve_host(top, path)[0]


def _is_dev_null(host, root):
    return host == os.path.join(_root_of(root), 'dev', 'null')


def _target(path, root):
    """(host path, dangling) of ``path`` resolved within its root; MaskedError when it leads to /dev/null."""
    target, dangling = _resolve_host(_host_root(path, root), path)
    if _is_dev_null(target, _host_root(path, root)):
        raise regular.masked_error(_asked(path))
    return target, dangling


def _asked(path):
    """The file asked for, on this host, its links not followed: a HostPath's own name under its root."""
    if isinstance(path, HostPath):
        return os.path.join(path.root, path.shown.lstrip('/'))
    return str(path)


def _shown(path, target):
    """The file as messages name it: the path asked for, and where its links lead when they do."""
    name = _asked(path)
    return name if os.path.abspath(name) == target else '%s (a link to %s)' % (name, target)


def check_regular(path, root=None):
    """Refuse (FileKindError naming it) a ``path`` that is masked or is anything but a regular
    file; return its stat, or None when nothing is there.  Reads nothing."""
    target = _target(path, root)[0]
    return regular.existing(target, _shown(path, target))


def kernel_path(root, path):
    """``path`` (a kernel pseudo-file or folder as the managed system names it: /proc/meminfo,
    /sys/devices/system/cpu/online) under ``root``, every link on it resolved within root
    (confine()): PathError naming the link when one leads out of root."""
    _check_managed(path)
    top = _root_of(root)
    return confine(top, os.path.join(top, path.lstrip('/')))


def read_text(path, root=None):
    """Return the file's text, or None when it does not exist.

    The path is resolved again within its root (given, the HostPath's, else ``/``), so a
    link is never followed out of it.  A masked file (a link to /dev/null) reads as absent,
    as a boot sees it; anything else but a regular file is refused (FileKindError naming
    it); a FIFO is never waited on.  Bytes that are not
    UTF-8 are kept (surrogateescape): write_atomic() writes them back as they were.
    """
    try:
        target = _target(path, root)[0]
    except regular.MaskedError:
        # what a boot reads of a masked file: nothing (writing it is refused)
        return None
    data = regular.read_bytes(target, _shown(path, target))
    return None if data is None else data.decode('utf-8', 'surrogateescape')


def backup(path, module=None):
    """Copy the regular file ``path`` beside itself (``<file>.<pid>.<date>~``); return the copy's name.

    Made by engine/regular.py: created exclusively, never through a link at that name.
    ``module`` is not used (kept for callers that pass it).
    """
    name = regular.make_backup(path, path)
    if name is not None:
        journal.record('backup %s' % name)
    return name


def remove_stale_temps(path):
    """Remove what killed writes of ``path`` left beside it; return the names removed.

    Only regular files named as write_atomic() names its temporary files and whose
    process is gone are removed (``.90-dbhost-tuning.conf.4242.k3j_x8q1``, see
    engine/regular.py stale_temps()): a run going on at the same time keeps its own;
    links, folders and every other name stay.
    """
    folder = os.path.dirname(path) or '.'
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    removed = []
    for name in sorted(regular.stale_temps(path, names)):
        full = os.path.join(folder, name)
        try:
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
            os.unlink(full)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                continue
            raise host_error('removing the stale temporary file', full, exc)
        removed.append(full)
    return removed


def _move(module, tmp, path, new_mode):
    """Rename ``tmp`` onto ``path``; a new file (``new_mode`` given) ends with that mode.

    Ansible's atomic_move() sets a new file's mode from the umask after the rename (0666
    under umask 000): the umask is set for the call so that it gives ``new_mode`` at once,
    and the mode is set again after it.
    """
    if module is None:
        os.rename(tmp, path)
    else:
        saved = os.umask(0o777 & ~new_mode) if new_mode is not None else None
        try:
            module.atomic_move(tmp, path, unsafe_writes=False)
        finally:
            if saved is not None:
                os.umask(saved)
    if new_mode is not None:
        os.chmod(path, new_mode)


def _encode(content, shown):
    try:
        return content.encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError as exc:
        raise InputError('%s: the new text holds a character that cannot be written (%s); nothing was written'
                         % (shown, exc.reason))


def write_atomic(path, content, module=None, mode=0o644, make_parents=False, backup_file=False, root=None,
                 note=True):
    """Write ``content`` to ``path`` through a temporary file in the same folder.

    ``root`` (given, or the HostPath's; else ``/``) is where the managed system is: the
    path is resolved again within it right before the write (see the module's
    docstring), so a link is followed, the link stays and its target gets the content
    (Debian's /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf), and a link out of root
    raises PathError before anything is written.  A masked file, or anything but a
    regular file at the name, is refused (engine/regular.py).
    An existing file keeps its owner and mode; a new one gets ``mode`` whatever the
    umask, and folders ``make_parents`` creates get 0755.  Temporary files killed
    writes left beside the file are removed first.  Returns the backup's file name when
    ``backup_file`` is true and there was a file to back up.  Nothing is left
    half-written: the rename is the only step that touches the file.  When the system
    refuses a step, a HostError names the file and the step, and what this call made
    (folders, backup, temporary file) is removed again.  The journal's watcher (the
    baseline) is told first; ``note`` false (the baseline's own file) skips it and the journal.
    """
    target, dangling = _target(path, root)
    if dangling:
        raise PathError(dangling)
    data = _encode(content, target)
    existing = regular.existing(target, _shown(path, target))
    folder = os.path.dirname(target)
    made = regular.make_folders(folder) if make_parents and not os.path.isdir(folder) else []
    backup_name = None
    try:
        remove_stale_temps(target)
        backup_name = regular.make_backup(target, target) if backup_file else None
        try:
            tmp = regular.write_temp(folder, target, data, existing, mode)
        except OSError as exc:
            raise host_error('writing', target, exc)
        try:
            if note:   # last step before the change: what fails earlier leaves no trace in the baseline
                journal.before('file', target, made=made, written=content)
            _move(module, tmp, target, None if existing is not None else mode)
        except OSError as exc:
            raise host_error('replacing', target, exc)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    except BaseException:
        if backup_name:
            regular.remove_quietly(backup_name)
        regular.remove_folders(made)
        raise
    if note:
        for folder_made in made:
            journal.record('made the folder %s' % folder_made)
        if backup_name:
            journal.record('backup %s' % backup_name)
        journal.record('wrote %s' % target)
        journal.settle()
    regular.sync_folder(folder)
    return backup_name


def remove_file(path, module=None, backup_file=False, root=None):
    """Remove ``path`` if it exists; return the backup's name, if one was made.

    Resolved within ``root`` as write_atomic() does: a link's target is removed, the
    link stays.
    """
    target = _target(path, root)[0]
    remove_stale_temps(target)
    if regular.existing(target, _shown(path, target)) is None:
        return None
    journal.before('file', target)
    backup_name = backup(target, module) if backup_file else None
    try:
        os.unlink(target)
    except OSError as exc:
        raise host_error('removing', target, exc)
    journal.record('removed %s' % target)
    journal.settle()
    return backup_name


def check_writable(path, content='', root=None):
    """Before live values are changed: refuse (HostError naming it) a file that could not be written.

    The file's folder (or the nearest one that exists) must be writable, on a file system
    mounted read-write with room for ``content``; the name must not be masked or be
    anything but a regular file.  A write can still fail (the disk fills meanwhile):
    the journal then puts the live values back.
    """
    target, dangling = _target(path, root)
    if dangling:
        raise PathError(dangling)
    regular.existing(target, _shown(path, target))
    folder = os.path.dirname(target)
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        if os.path.lexists(folder):
            raise HostError('writing %s: %s is in the way (it is not a folder)' % (target, folder))
        folder = os.path.dirname(folder)
    # the effective user's rights (a run may have dropped from root)
    effective = os.access in getattr(os, 'supports_effective_ids', ())
    if not (os.access(folder, os.W_OK, effective_ids=True) if effective else os.access(folder, os.W_OK)):
        error = errno.EROFS if regular.read_only(folder) else errno.EACCES
        raise host_error('writing', target, OSError(error, os.strerror(error)))
    try:
        info = os.statvfs(folder)
    except OSError:
        return
    # the new file, its temporary copy and a backup, with a block of slack
    needed = 2 * len(content.encode('utf-8', 'surrogateescape')) + info.f_frsize
    if info.f_bavail * info.f_frsize < needed:
        raise host_error('writing', target, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))


class FileChange(object):
    """A planned edit of one file: compute ``after``, then apply() unless in check mode.

    ``after`` of None means the file is to be removed.  ``root`` (by default the
    HostPath's) is the folder the file must not leave; apply() resolves the path in it
    again.
    """

    def __init__(self, path, before, after, shown_path=None, root=None):
        self.path = path
        self.root = root if root is not None else getattr(path, 'root', None)
        self.shown_path = shown_path or path
        self.before = before
        self.after = after

    @property
    def needed(self):
        return self.before != self.after

    def report(self, result):
        """Add the diff to ``result`` when the file changes (it touches nothing: render() calls it)."""
        if self.needed:
            result.add_diff(self.shown_path, self.before, self.after)

    def tidy(self):
        """Remove the temporary files killed writes of this file left; return their names."""
        try:
            target = _resolve_host(_host_root(self.path, self.root), self.path)[0]
        except (PathError, HostError, OSError):
            # apply() says why, if it is called.
            return []
        return remove_stale_temps(target)

    def commit(self, module=None, backup_file=False):
        """What a plan's apply() does with its file, through its gate (engine/gate.py: never in check
        mode): remove the temporary files killed writes left, then apply() when needed.  The
        backup's name, or None.

        A run that was killed while writing this file left its temporary file beside it:
        the next run that plans the file (not in check mode, which changes nothing)
        removes it, as remove_stale_temps() says.
        """
        self.tidy()
        return self.apply(module, backup_file=backup_file)

    def check(self):
        """Before live values are written: refuse (HostError, naming the file) a change that
        could not be written (check_writable()).  Nothing when not needed (nor, through the
        gate, in check mode)."""
        if not self.needed:
            return
        check_writable(self.path, self.after or '', root=self.root)

    def apply(self, module=None, backup_file=False, mode=0o644, make_parents=True):
        if not self.needed:
            return None
        if self.after is None:
            return remove_file(self.path, module, backup_file, root=self.root)
        return write_atomic(self.path, self.after, module=module, mode=mode,
                            make_parents=make_parents, backup_file=backup_file, root=self.root)
