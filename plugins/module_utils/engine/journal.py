# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what a run changed on the host, so that a failed run says it.

Every change to the host goes through a few places (engine/files.py writes, removes and
backs up files and makes folders; engine/sysfs.py writes kernel pseudo-files; a plan that
runs a command that changes the host notes it); each calls record() once the change is
made.  run_plan() starts the journal (begin()) and, when the run fails, lists what was
changed before the failure (summary()).

A live value written before the file that persists it carries an ``undo``: when the file
write fails, rollback() puts the live value back, so that the run does not leave a live
value that the next boot loses without a word.  settle() marks everything so far as
kept (the file that persists it was written, or the step needs no file).

Before a change is made, the writers tell the watcher (watch(), before()): the baseline
(engine/baseline.py) records what the host held, so that a revert can put it back.

Module state, as a run is one process; a test calls begin() to start afresh.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# [what, undo or None] in the order the changes were made; undone ones are removed.
_ENTRIES = []
# The one watcher told before each change (engine/baseline.py while a run captures), or None.
_WATCHER = [None]


def begin():
    """Start a run's journal: nothing changed yet."""
    del _ENTRIES[:]


def watch(watcher):
    """Tell ``watcher(event, path, **facts)`` before each change from now on (None: nobody)."""
    _WATCHER[0] = watcher


def before(event, path, **facts):
    """Say, before it is made, the change about to be made: ``event`` is 'file' (``path``, a
    file on this host, is about to be written with ``written`` or removed: ``written``
    None), 'live' (the kernel pseudo-file
    ``path`` held ``value``) or 'unsupported' (``path`` names what changes, ``detail`` why a
    revert cannot put it back, ``root`` the managed root).  The watcher may refuse (raise):
    the change is then not made."""
    if _WATCHER[0] is not None:
        _WATCHER[0](event, path, **facts)


def record(what, undo=None):
    """Note one change made on the host, said as ``what`` ('wrote /etc/fstab').

    ``undo``: a callable that takes the change back, for a live value whose file is still to
    be written; rollback() calls it when the run fails before settle().
    """
    _ENTRIES.append([what, undo])


def settle():
    """Keep every change so far: a failure after this point does not take them back."""
    for entry in _ENTRIES:
        entry[1] = None


def changes():
    """What the run changed, in order."""
    return [entry[0] for entry in _ENTRIES]


def rollback():
    """Take back the changes that carry an undo and were not settled, last first.

    Returns (put back, could not be put back): two lists of descriptions; what was put
    back leaves the journal, the rest stays in it.
    """
    put_back, stuck = [], []
    for entry in reversed(list(_ENTRIES)):
        what, undo = entry
        if undo is None:
            continue
        try:
            undo()
        except (IOError, OSError) as exc:
            stuck.append('%s (%s)' % (what, getattr(exc, 'strerror', None) or exc))
            entry[1] = None
            continue
        put_back.append(what)
        _ENTRIES.remove(entry)
    return put_back, stuck


def summary(put_back=(), stuck=()):
    """The words a failed run ends with: what it changed, and what it put back."""
    done = changes()
    parts = ['changed before the failure: %s' % ', '.join(done) if done else 'nothing was changed']
    if put_back:
        parts.append('put back: %s' % ', '.join(put_back))
    if stuck:
        parts.append('could not put back: %s' % ', '.join(stuck))
    return '; '.join(parts)
