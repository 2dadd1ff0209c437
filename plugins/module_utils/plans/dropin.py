# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a systemd unit drop-in that a plan owns, the one way the
plans that bind a service (processor_set, resource_limits) read, write and load it.

The flow: read() our file, render the new text (the plan's own keys), change() -> a
FileChange, apply() writes it outside check mode and, when asked, runs
``systemctl daemon-reload`` and ``systemctl show`` again; unit_texts() gives every file
of the unit as it applies, ours holding the text before or after, so the plan can tell
what the unit gets and which later file wins.  Every command runs through
``runner(argv)`` -> (rc, stdout, stderr).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd

DROPIN_FOLDER = '/etc/systemd/system'


class Applied(object):
    """What apply() did: ``written`` (the file changed), ``backup_file``, ``reloaded``
    (daemon-reload succeeded), ``reload_error`` (its message), ``shown`` / ``show_error``
    (systemctl show after the reload, or None)."""

    def __init__(self, written=False, backup_file=None):
        self.written = written
        self.backup_file = backup_file
        self.reloaded = False
        self.reload_error = None
        self.shown = None
        self.show_error = None


class UnitDropIn(object):
    """Our drop-in ``/etc/systemd/system/<unit>.d/<file_name>`` under ``root``."""

    def __init__(self, root, unit, file_name, runner=None):
        self.root = root
        self.unit = unit
        self.path = '%s/%s.d/%s' % (DROPIN_FOLDER, unit, file_name)
        self.local = rooted(root, self.path)
        self.runner = runner

    def read(self):
        """Our drop-in's text, or None when it does not exist."""
        return read_text(self.local)

    def unit_texts(self, ours):
        """[(shown path, text)] of the unit's files in the order they apply, ours holding ``ours``;
        ``ours`` None (our file does not exist): the drop-in of our name that systemd reads in its
        place (same_name()), under its own path."""
        shown_as = self.path
        if ours is None:
            shown_as, ours = self.same_name()
        return [(shown_as if shown == self.path and shown_as else shown,
                 (ours or '') if shown == self.path else (read_text(local, root=self.root) or ''))
                for shown, local in systemd.unit_files(self.root, self.unit, extra=self.path)]

    def same_name(self):
        """(path, text) of the drop-in of our file's name that systemd reads while ours does not
        exist: the first other folder holding the name (/run/systemd/system/<unit>.d, then
        /usr/local/lib..., the dash-prefix and type folders: systemd.unit(5)), which ours masks
        once written; (None, None) when there is none or it is masked."""
        name = os.path.basename(self.path)
        paths = [os.path.join(folder, dir_name, name) for folder in systemd.SEARCH_DIRS
                 for dir_name in systemd.dropin_dir_names(self.unit)]
        return confd.first_present(self.root, [shown for shown in paths if shown != self.path])

    def show(self, properties):
        """({property: value}, None) from ``systemctl show``, or (None, why it failed)."""
        argv = ['systemctl', 'show']
        for prop in properties:
            argv.extend(['-p', prop])
        argv.extend(['--', self.unit])
        rc, out, err = self.runner(argv)
        if rc != 0:
            return None, (err or out or 'systemctl show exited %d' % rc).strip()
        return systemd.parse_show(out), None

    def change(self, before, after):
        """The planned edit (``after`` None removes the file)."""
        return FileChange(self.local, before, after, shown_path=self.path)

    def apply(self, change, module, backup=False, reload=False, properties=()):
        """Write the change, then (``reload``) daemon-reload and show ``properties`` again.

        Called outside check mode only.  A failed reload is reported in the Applied, not raised.
        """
        applied = Applied(change.needed)
        applied.backup_file = change.commit(module, backup_file=backup)
        if reload:
            rc, out, err = self.runner(['systemctl', 'daemon-reload'])
            if rc != 0:
                applied.reload_error = (err or out or 'exited %d' % rc).strip()
            else:
                applied.reloaded = True
                applied.shown, applied.show_error = self.show(properties)
        return applied
