# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation the modules share.

A module lists what it uses under ``extends_documentation_fragment`` (``dbhost.tuning.common``,
``dbhost.tuning.common.root``, ...). ansible-doc merges a fragment's option or attribute with
the module's own entry of the same name key by key, the module's keys winning: a module that
writes ``root: {description: ...}`` keeps its own words and takes ``type`` and ``default``
from here. Fragment notes come after the module's own.

The ``type`` and ``default`` of each option here are its argument spec in engine/options.py
SHARED, written by scripts/gen_docs.py (``--check`` fails while they differ); the words are
written here, once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # dbhost.tuning.common: the attributes of a module that plans and applies settings, the
    # result every such module returns, and fail_on_drift, which makes any of them a drift
    # check's gate (run_plan fails the task; the records stay in the result). A module gives
    # its own `platform` (platforms and description) and, where it says more than the text
    # here, its own descriptions.
    DOCUMENTATION = r'''
attributes:
  check_mode:
    support: full
    description: Nothing on the host changes; records say C(drift) for what would change.
  diff_mode:
    support: full
    description: With C(--diff), returns the before and after text of every file edited, or in check mode of every file that would be; without it, no C(diff).
  platform:
    support: full
options:
  fail_on_drift:
    description:
      - Fail the task when any record is not clean (its status is neither V(ok) nor V(unsupported)), with every
        record still in the result and C(drift_gate=true), so that the C(dbhost.tuning.drift_report) callback
        counts the host as drifted, not as failed. Meant for a drift check in check mode; C(playbooks/drift.yml)
        sets it on its one M(dbhost.tuning.host_state) task.
    type: bool
    default: false
notes:
  - Returns the collection's common result - RV(settings), RV(restart_required), RV(reboot_required).
  - A task that fails after it wrote files (a shadowed setting fails once its own file is written) keeps them, names
    them in its message and returns them as C(written), a list of paths.
'''

    # dbhost.tuning.common.root: each module says in its own description what O(root) means
    # for its live values; the check that O(root) is an existing folder is the same everywhere.
    ROOT = r'''
options:
  root:
    description:
      - Act on a mounted image or a test tree instead of the running host - files are read and written under O(root).
      - An absolute path to an existing folder; anything else fails the task.
    type: path
    default: /
'''

    # dbhost.tuning.common.backup
    BACKUP = r'''
options:
  backup:
    description: Keep a timestamped copy of each file before changing it.
    type: bool
    default: false
'''

    # dbhost.tuning.common.shadowed: for the modules whose files are read with others
    # (sysctl.d, tmpfiles.d, limits.d, systemd drop-ins, database include files).
    SHADOWED = r'''
options:
  fail_on_shadowed:
    description:
      - Fail the task when another file or entry wins over ours with a value that does not meet the desired one.
        Its record is C(shadowed) either way, and the detail names what wins.
    type: bool
    default: true
'''

    # dbhost.tuning.common.linux_only: the platform attribute of the modules that act on
    # Linux only (elsewhere their records are unsupported and nothing is touched).
    LINUX_ONLY = r'''
attributes:
  platform:
    platforms: [linux]
    description: On other platforms every record is C(unsupported) and nothing is touched.
'''
