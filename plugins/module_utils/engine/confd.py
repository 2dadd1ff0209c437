# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the systemd conf.d search path (systemd.syntax(7),
sysctl.d(5), tmpfiles.d(5), systemd.unit(5) drop-ins).

Files named ``*.conf`` are looked up in folders given in precedence order (for example
/etc, /run, /usr/local/lib, /usr/lib); a file name found in an earlier folder masks the
same name in every later one; the files then apply sorted by file name.  A link to
/dev/null masks a name (``is_masked``); the caller drops such entries.

Shared by the sysctl, tmpfiles, limits and systemd drop-in code; texts_at_boot() gives the
texts a boot would read, were our file to hold a given text (the "what wins at boot" check).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text


def under_root(root, path):
    """``path`` (as on the system) as seen from here when that system is mounted at ``root``.

    A lexical join: links are not resolved, so that a link that masks a file (to
    /dev/null) can still be seen as a link by the caller.
    """
    return os.path.join(root or '/', path.lstrip('/'))


def is_masked(local):
    """Whether ``local`` is a link to /dev/null (systemd's way to disable a file)."""
    return os.path.islink(local) and os.readlink(local) == '/dev/null'


def first_present(root, paths):
    """(path as on the system, its text) of the first of ``paths`` present under ``root``, in
    that order of precedence; (None, None) when none is, or when the first one there is masked
    (a link to /dev/null hides the name in every later folder too)."""
    for shown in paths:
        local = under_root(root, shown)
        if is_masked(local):
            return None, None
        text = read_text(local, root=root) if os.path.lexists(local) else None
        if text is not None:
            return shown, text
    return None, None


def same_name(root, our_file, folders):
    """(path as on the system, text) of the file of ``our_file``'s name that boots while ours does
    not exist: the first of the folders after ours in ``folders`` (their order of precedence)
    holding it, or (None, None).  A name in an earlier folder masks the same name in a later one
    (sysctl.d(5), tmpfiles.d(5)), so writing ours hides it."""
    folder, name = os.path.dirname(our_file), os.path.basename(our_file)
    if folder not in folders:
        return None, None
    later = folders[folders.index(folder) + 1:]
    return first_present(root, [os.path.join(other, name) for other in later])


def texts_in_place(root, files, ours, text, folders):
    """texts_at_boot() of ``files``, where while our file ``ours`` does not exist (``text`` None) the
    file of its name in a later folder of ``folders`` (same_name) boots in its place, shown by its
    own path."""
    shown_as = ours
    if text is None:
        shown_as, text = same_name(root, ours, folders)
    return [(shown_as if shown == ours and shown_as else shown, found)
            for shown, found in texts_at_boot(root, files, ours, text)]


def carried_over(header, path, text):
    """The text our file starts from when it is first written over ``path``, the file of its name
    in a later folder that it masks: our header, then that file's lines, their origin named."""
    return '%s\n# Lines carried over from %s, which this file masks (same name).\n%s' % (header, path, text)


def search(root, folders, extra=None, suffix='.conf'):
    """[(path as on the system, local path)] of the files found, sorted by file name.

    ``folders`` are paths as on the system, in precedence order; the first folder holding
    a name wins it.  ``extra`` is a path (as on the system) counted even if it does not
    exist yet (the file about to be written).  Masked entries are kept.
    """
    chosen = {}
    for folder in folders:
        local_folder = under_root(root, folder)
        names = os.listdir(local_folder) if os.path.isdir(local_folder) else []
        if extra and os.path.dirname(extra) == folder:
            names = list(names) + [os.path.basename(extra)]
        for name in names:
            if name.endswith(suffix) and name not in chosen:
                chosen[name] = (os.path.join(folder, name), os.path.join(local_folder, name))
    return [chosen[name] for name in sorted(chosen)]


def texts_at_boot(root, files, ours, text):
    """[(path as on the system, text)] of ``files`` ([(shown, local)] from a boot_files()):
    our file ``ours`` as holding ``text`` (what it would hold after our write), every other
    as it is now under ``root`` ('' when absent; a link out of root is refused)."""
    return [(shown, (text if shown == ours else read_text(local, root=root)) or '') for shown, local in files]
