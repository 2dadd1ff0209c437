# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the one place a run decides whether it writes.

A plan computes its changes the same way in check mode and out of it; every write it makes
(a file, a live value, a command that changes the host) goes through its run's Gate, which
is shut in check mode (nothing on the host changes, not a byte) and open otherwise.  The
words of a record ('would write' or 'wrote') and the status it earns ('drift' or 'changed')
come from the same gate, so that a plan never tests check mode itself.

registry.Context makes a run's gate from its check mode; a plan keeps it as ``self.gate``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import decide_status, did


class Gate(object):
    """Shut (check mode) or open: whether the writes of a run happen."""

    def __init__(self, check_mode=False):
        self.check_mode = bool(check_mode)

    @property
    def open(self):
        """True when the run writes (not in check mode)."""
        return not self.check_mode

    def write(self, action, *args, **kwargs):
        """``action(*args, **kwargs)`` (its answer) when the gate is open; None, nothing run, when shut."""
        if self.check_mode:
            return None
        return action(*args, **kwargs)

    def commit(self, change, module=None, backup=False):
        """Write a FileChange (engine/files.py) when open: the backup's name or None."""
        return self.write(change.commit, module, backup_file=backup)

    def check(self, change):
        """Refuse a FileChange that could not be written (HostError), before any live value changes;
        nothing to refuse when shut, since nothing will be written."""
        self.write(change.check)

    def now(self, before, after):
        """What holds once the run is over: ``after`` when the writes happened, ``before`` when shut."""
        return before if self.check_mode else after

    def did(self, phrase):
        """'would write X' when shut, 'wrote X' when open (engine/result.py did())."""
        return did(self.check_mode, phrase)

    def status(self, live_ok, persisted_ok, **facts):
        """A record's status (engine/result.py decide_status()): 'drift' when shut where open says 'changed'."""
        return decide_status(live_ok, persisted_ok, self.check_mode, **facts)
