# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the error every layer raises for bad input.

The lowest file of the engine: it imports nothing, so that validate.py (which raises
it) and result.py (which turns it into a failed task) need not import each other.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class InputError(ValueError):
    """Bad input: refused before anything is touched; the message names the input."""


class HostError(Exception):
    """An operation on the host failed (the system said no: a read-only file system, a full
    disk, permission denied...).  The message names the file and the operation; run_plan()
    fails the task with it and with what the run changed before (engine/journal.py)."""


def host_error(operation, shown, exc):
    """A HostError for ``exc`` (an OSError) met while doing ``operation`` on ``shown``.

    ``operation`` is a verb phrase (``writing``, ``making the folder``), ``shown`` the file as
    the managed system names it: 'writing /etc/fstab: No space left on device'.
    """
    reason = getattr(exc, 'strerror', None) or str(exc)
    return HostError('%s %s: %s' % (operation, shown, reason))
