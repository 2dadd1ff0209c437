# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the baseline, what a host held before the collection first changed it.

Kept on the host, under the managed root, at ``<root>/var/lib/dbhost-tuning/baseline.json``
(folder 0700, file 0600, written atomically through files.write_atomic, so a kill leaves the
old or the new file, never half of one).  It survives reboots and is read by a revert
(plans/revert.py), which puts every file and live value back.

What is kept, each the first time the collection changes it (the first value wins: a later
apply with other values never replaces an entry):

- ``files``: every file written or removed, by its name on the managed system: its whole
  content, mode and owner, or that it did not exist (and which of its folders did not); and
  ``writes``, every write of it, in order, as the text before it and the text written (None:
  removed), so that a revert takes back only the lines the collection changed
  (engine/merge.py) and keeps what an admin changed since.  An entry without ``writes``
  (kept by a version before them) is put back whole, the text there kept as a backup;
- ``live``: every kernel pseudo-file written (``/proc/sys/...``, ``/sys/...``): its value;
- ``unsupported``: what a revert cannot put back (a remount, Oracle's spfile, processes bound
  to CPUs), with why.

Capture needs no code in the kinds: run_plan() calls begin() with the run's roots, which
loads every root's baseline first (a corrupt or unreadable one is a BaselineError naming the
file, before anything is touched) and makes the capture engine/journal.py's watcher; every
writer tells the journal before it changes anything (files.write_atomic and remove_file,
sysfs.write_text, the few plans that run a command), and the capture saves the new entry
before the change is made.  plans/base.py Plan.run() says which kind is running
(working_on()), so that each entry names its kind by its registry name (``db_parameter``); an
entry kept by an earlier version names the plan's class (``DbParameter``), which a revert reads
as that kind (state/hooks.py ``former``).

``state`` is ``applied`` until a revert succeeds, then ``reverted``; the entries stay, so a
second revert finds the host as they say and changes nothing.  The first change after a
revert starts a new baseline (the host was back at its old values, which may have been
changed since by hand): it then holds what the host had at that apply.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import files
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import regular
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError, InputError, host_error

SCHEMA = 1
FOLDER = '/var/lib/dbhost-tuning'
PATH = FOLDER + '/baseline.json'
FILE_MODE = 0o600
FOLDER_MODE = 0o700
APPLIED, REVERTED = 'applied', 'reverted'
SECTIONS = ('files', 'live', 'unsupported')

# The capture of the run going on, or None (check mode, a revert, no run).
_CURRENT = [None]


class BaselineError(InputError):
    """A baseline that cannot be read or is not one; the message names its file."""


def root_of(root):
    return os.path.abspath(root or '/')


def place(root):
    """The root whose /var/lib keeps the baseline of ``root``: itself (unit tests move /'s away)."""
    return root


def location(root):
    """Where the baseline of ``root`` is on this host (links resolved within root)."""
    return files.rooted(place(root_of(root)), PATH)


def empty():
    return {'schema': SCHEMA, 'state': APPLIED, 'created': now(), 'files': {}, 'live': {}, 'unsupported': {}}


def now():
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())


def _entry_problem(section, entry):
    if not isinstance(entry, dict):
        return 'is not a mapping'
    if section == 'files':
        if not isinstance(entry.get('existed'), bool):
            return 'has no existed: true/false'
        if entry['existed'] and not (isinstance(entry.get('content'), str) and isinstance(entry.get('mode'), int)):
            return 'existed but has no content and mode'
        if not entry['existed'] and not isinstance(entry.get('folders', []), list):
            return 'folders is not a list'
        if not _writes_ok(entry.get('writes', [])):
            return 'writes is not a list of {before, after} texts'
    elif section == 'live' and not isinstance(entry.get('value'), str):
        return 'has no value'
    elif section == 'unsupported' and not isinstance(entry.get('detail'), str):
        return 'has no detail'
    return None


def _writes_ok(writes):
    texts = (str, type(None))
    return isinstance(writes, list) and all(
        isinstance(write, dict) and isinstance(write.get('before'), texts) and isinstance(write.get('after'), texts)
        for write in writes)


def check(data, shown):
    """Refuse (BaselineError naming ``shown``) anything but a baseline of this schema."""
    def refuse(why):
        raise BaselineError('the baseline %s %s; nothing was changed (move it away only if the host is as it was '
                            'before tuning)' % (shown, why))
    if not isinstance(data, dict):
        refuse('is not a JSON object')
    if data.get('schema') != SCHEMA:
        refuse('has schema %r, this collection reads schema %d' % (data.get('schema'), SCHEMA))
    if data.get('state') not in (APPLIED, REVERTED):
        refuse('has state %r (applied or reverted expected)' % (data.get('state'),))
    for section in SECTIONS:
        entries = data.get(section)
        if not isinstance(entries, dict):
            refuse('has no %s mapping' % section)
        for key, entry in entries.items():
            if section != 'unsupported' and (not key.startswith('/') or '..' in key.split('/')):
                refuse('names %r in %s, not an absolute path' % (key, section))
            problem = _entry_problem(section, entry)
            if problem:
                refuse('is corrupt: %s %s %s' % (section, key, problem))
    return data


def load(root):
    """The baseline of ``root`` (a dict), or None when there is none.

    BaselineError, naming the file, when it cannot be read or is not a baseline."""
    path = location(root)
    # named as the admin knows it: the link, and where it leads (the target is not the file to move)
    asked = os.path.join(place(root_of(root)), PATH.lstrip('/'))
    shown = asked if os.path.abspath(asked) == str(path) else '%s (a link to %s)' % (asked, path)
    try:
        text = files.read_text(path)
    except (HostError, InputError, IOError, OSError) as exc:
        raise BaselineError('the baseline %s cannot be read (%s); nothing was changed' % (shown, exc))
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaselineError('the baseline %s is not valid JSON (%s); nothing was changed (move it away only if the '
                            'host is as it was before tuning)' % (shown, exc))
    return check(data, shown)


def save(root, data):
    """Write ``data`` as the baseline of ``root``: atomically, the file 0600 in a 0700 folder."""
    root = root_of(root)
    folder = files.rooted(place(root), FOLDER)
    if not os.path.isdir(folder):
        regular.make_folders(os.path.dirname(folder))
        try:
            os.mkdir(folder, FOLDER_MODE)
        except OSError as exc:
            if not os.path.isdir(folder):
                raise host_error('making the folder', folder, exc)
    if stat.S_IMODE(os.stat(folder).st_mode) != FOLDER_MODE:
        os.chmod(folder, FOLDER_MODE)
    path = location(root)
    text = json.dumps(data, indent=1, sort_keys=True) + '\n'
    files.write_atomic(path, text, mode=FILE_MODE, note=False)
    if stat.S_IMODE(os.stat(path).st_mode) != FILE_MODE:
        os.chmod(path, FILE_MODE)


def managed_name(root, host_path):
    """``host_path`` as the managed system under ``root`` names it, or None when it is not under root."""
    full = os.path.abspath(host_path)
    if root == '/':
        return full
    if full.startswith(root + '/'):
        return full[len(root):]
    return None


def file_entry(root, host_path, made=()):
    """What ``host_path`` holds now, as the baseline keeps it; ``made``: the folders on its way
    that the write made (host paths), which did not exist either."""
    info = regular.existing(host_path, host_path)
    if info is None:
        return {'existed': False, 'folders': [name for name in (managed_name(root, folder) for folder in made) if name]}
    data = regular.read_bytes(host_path, host_path) or b''
    return {'existed': True, 'content': data.decode('utf-8', 'surrogateescape'), 'mode': stat.S_IMODE(info.st_mode),
            'uid': info.st_uid, 'gid': info.st_gid}


class Capture(object):
    """The journal's watcher during a run: keeps, before each change, what the host held."""

    def __init__(self, loaded):
        # {root: baseline dict or None}, the longest root first (a path belongs to the deepest root holding it)
        self.loaded = dict((root_of(root), data) for root, data in loaded.items())
        self.order = sorted(self.loaded, key=len, reverse=True)
        self.kind = None

    def _root(self, host_path):
        for root in self.order:
            name = managed_name(root, host_path)
            if name is not None:
                return root, name
        return None, None

    def __call__(self, event, path, value=None, detail=None, root=None, made=(), written=None):
        if event == 'unsupported':
            root, key = root_of(root), path
            if root not in self.loaded:
                return
        else:
            root, key = self._root(path)
            if root is None:
                return
            if event == 'live' and value is None:
                event, detail = 'unsupported', 'its value could not be read before it was written'
        section = {'file': 'files', 'live': 'live'}.get(event, 'unsupported')
        data = self.loaded.get(root)
        if data is None or data['state'] == REVERTED:
            data = empty()
        entry = data[section].get(key)
        if entry is None:
            if event == 'file':
                entry = file_entry(root, path, made)
            elif event == 'live':
                entry = {'value': value}
            else:
                entry = {'detail': detail}
            entry['kind'] = self.kind
            entry['captured'] = now()
            if event == 'file':
                entry['writes'] = []
        elif event != 'file' or 'writes' not in entry:
            return   # the first value wins (an entry kept without writes stays a whole-file one)
        if event == 'file':
            entry = dict(entry, writes=entry['writes'] + [_write(path, written)])
        data = dict(data, **{section: dict(data[section], **{key: entry})})
        save(root, data)
        self.loaded[root] = data


def _write(host_path, written):
    """One write of ``host_path`` as the baseline keeps it: the text there now and the text written."""
    before = regular.read_bytes(host_path, host_path) if regular.existing(host_path, host_path) else None
    if isinstance(written, bytes):
        written = written.decode('utf-8', 'surrogateescape')
    return {'before': None if before is None else before.decode('utf-8', 'surrogateescape'), 'after': written}


def begin(roots, capture=True):
    """Load (and check) the baseline of each of ``roots``; with ``capture``, keep what this run changes.

    Returns {root: baseline or None}.  Called by run_plan() before the plan runs."""
    end()
    loaded = dict((root_of(root), load(root)) for root in roots)
    if capture:
        _CURRENT[0] = Capture(loaded)
        journal.watch(_CURRENT[0])
    return loaded


def working_on(kind):
    """Say which kind's plan is running (each new entry names it)."""
    if _CURRENT[0] is not None:
        _CURRENT[0].kind = kind


def end():
    _CURRENT[0] = None
    journal.watch(None)
