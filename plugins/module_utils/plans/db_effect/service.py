# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a systemd service's processes: its MainPID and every pid of its cgroup.

systemd says which (``systemctl show -p MainPID -p ControlGroup``); the cgroup's cgroup.procs is
read under /sys/fs/cgroup, whichever layout the host mounts there (cgroup v2 at the top, the
hybrid layout's ``unified`` v2 tree, or the v1 ``systemd`` named hierarchy).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import kernel_path
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.procfs import parse_cgroup_procs

CGROUP_TREES = ('/sys/fs/cgroup', '/sys/fs/cgroup/unified', '/sys/fs/cgroup/systemd')
PROPERTIES = ('MainPID', 'ControlGroup', 'ActiveState', 'LoadState')


class ServiceProcesses(object):
    """What a running service is: ``main`` (its MainPID, 0 when none), ``pids`` (its cgroup's, main first),
    ``problem`` (why it cannot be read, or None)."""

    def __init__(self, main=0, pids=None, problem=None, cgroup=None):
        self.main = main
        self.pids = list(pids or [])
        self.problem = problem
        self.cgroup = cgroup


def parse_show(text):
    """``systemctl show -p A -p B`` -> {A: value, B: value}."""
    values = {}
    for line in (text or '').splitlines():
        name, eq, value = line.partition('=')
        if eq:
            values[name] = value
    return values


def cgroup_pids(root, cgroup):
    """The pids of ``cgroup`` (systemd's ControlGroup path) from the first tree that has it, or None."""
    for tree in CGROUP_TREES:
        path = kernel_path(root, '%s/%s/cgroup.procs' % (tree, cgroup.strip('/')))
        if os.path.isfile(path):
            text = sysfs.read_text(path)
            if text is not None:
                return parse_cgroup_procs(text)
    return None


def find(service, runner, root='/'):
    """The service's processes, or a ServiceProcesses whose ``problem`` says why none can be read."""
    if runner is None:
        return ServiceProcesses(problem='no way to ask systemd here')
    try:
        rc, out, err = runner(['systemctl', 'show', service] + ['-p%s' % name for name in PROPERTIES])
    except OSError as exc:
        return ServiceProcesses(problem='systemctl cannot run: %s' % exc)
    if rc != 0:
        said = '; '.join(line.strip() for line in (err or out or '').splitlines() if line.strip())
        return ServiceProcesses(problem='systemctl show %s failed: %s' % (service, said or 'exit status %d' % rc))
    shown = parse_show(out)
    if shown.get('LoadState') == 'not-found':
        return ServiceProcesses(problem='no service %s on this host' % service)
    main = int(shown.get('MainPID') or 0) if (shown.get('MainPID') or '0').isdigit() else 0
    if not main:
        state = shown.get('ActiveState') or 'no main process'
        return ServiceProcesses(problem='service %s is not running (%s)' % (service, state))
    cgroup = shown.get('ControlGroup') or ''
    # a service's cgroup is its own, never the root one (which holds every process of the host)
    pids = cgroup_pids(root, cgroup) if cgroup.strip('/') else None
    pids = [main] + [pid for pid in (pids or []) if pid != main]
    return ServiceProcesses(main=main, pids=pids, cgroup=cgroup or None)
