# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: Linux processes and cpuset cgroups as /proc and the v1
cpuset hierarchy show them (the processor_set plan reads and moves processes with these).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.common import parse_status

CPUSET_PREFIX = 'dbhost-'


def parse_numa_policy(text):
    """The memory policy from /proc/PID/numa_maps: ``bind:0``, ``default``, ... or None.

    Every mapping shows its own policy or, without one, the task's; the first mapping
    (the program's text) has none of its own, so it shows the task's policy.
    """
    for line in (text or '').splitlines():
        fields = line.split()
        if len(fields) >= 2:
            return fields[1]
    return None


def parse_proc_cgroup(text):
    """/proc/PID/cgroup -> {controller: path}; the v2 entry is under key ''."""
    paths = {}
    for line in (text or '').splitlines():
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(','):
            paths[controller] = parts[2]
    return paths


def parse_mountinfo_cgroups(text):
    """Cgroup mounts from /proc/self/mountinfo: {'cpuset': (mount point, cgroup root) or
    None for v1, 'unified': (mount point, cgroup root) or None for cgroup2}."""
    found = {'cpuset': None, 'unified': None}
    for mount in _mountinfo.parse(text):
        if mount.fstype == 'cgroup' and 'cpuset' in mount.super_options and found['cpuset'] is None:
            found['cpuset'] = (mount.mount_point, mount.root)
        elif mount.fstype == 'cgroup2' and found['unified'] is None:
            found['unified'] = (mount.mount_point, mount.root)
    return found


class ProcTable(object):
    """Processes as /proc shows them (``proc`` is a folder so that tests can fake it)."""

    def __init__(self, proc='/proc'):
        self.proc = proc

    def _read(self, *parts):
        return sysfs.read_text(os.path.join(self.proc, *[str(p) for p in parts]), strip=False)

    def pids(self):
        try:
            names = os.listdir(self.proc)
        except OSError:
            return []
        return sorted(int(name) for name in names if name.isdigit())

    def status(self, pid):
        text = self._read(pid, 'status')
        return parse_status(text) if text is not None else None

    def cmdline(self, pid):
        text = self._read(pid, 'cmdline')
        if not text:
            return []
        return [part for part in text.split('\0') if part != '']

    def threads(self, pid):
        try:
            return sorted(int(t) for t in os.listdir(os.path.join(self.proc, str(pid), 'task')) if t.isdigit())
        except OSError:
            return []

    def thread_status(self, pid, tid):
        text = self._read(pid, 'task', tid, 'status')
        return parse_status(text) if text is not None else None

    def cgroups(self, pid):
        return parse_proc_cgroup(self._read(pid, 'cgroup'))

    def numa_policy(self, pid):
        return parse_numa_policy(self._read(pid, 'numa_maps'))

    def mountinfo(self):
        return parse_mountinfo_cgroups(self._read('self', 'mountinfo'))


# ------------------------------------------------------------------ cpuset cgroups
class CpusetV1(object):
    """Our cpuset ``dbhost-<name>`` in the v1 cpuset hierarchy.

    ``mount`` is where the hierarchy is mounted, ``cgroup_root`` the cgroup path that
    mount shows (``/`` on a host; the container's own cgroup inside a container).
    """

    def __init__(self, mount, cgroup_root, name):
        self.mount = mount
        self.cgroup_root = cgroup_root.rstrip('/') or ''
        self.name = CPUSET_PREFIX + name
        self.folder = os.path.join(mount, self.name)
        self.cgroup_path = '%s/%s' % (self.cgroup_root, self.name)

    def usable(self):
        return os.path.isfile(os.path.join(self.mount, 'cpuset.cpus')) and os.access(self.mount, os.W_OK)

    def exists(self):
        return os.path.isdir(self.folder)

    @staticmethod
    def _value(folder, name):
        return sysfs.read_text(os.path.join(folder, name))

    def _list(self, folder, name):
        return numa.cpu_list_from_file(self._value(folder, name), os.path.join(folder, name))

    def state(self):
        """{'cpus': [...], 'mems': [...], 'memory_migrate': '1'} or None when absent."""
        if not self.exists():
            return None
        return {
            'cpus': self._list(self.folder, 'cpuset.cpus'),
            'mems': self._list(self.folder, 'cpuset.mems'),
            'memory_migrate': self._value(self.folder, 'cpuset.memory_migrate'),
        }

    def parent_allows(self, cpus, mems):
        """CPUs and nodes the parent cpuset does not hold (a child must be a subset)."""
        have_cpus = set(self._list(self.mount, 'cpuset.cpus'))
        have_mems = set(self._list(self.mount, 'cpuset.mems'))
        return sorted(set(cpus) - have_cpus), sorted(set(mems) - have_mems)

    @staticmethod
    def _write(path, value):
        # a cpuset's files are not kept for a revert: processes.py notes the binding as one a revert cannot undo
        sysfs.write_text(path, str(value), keep=False)

    def ensure(self, cpus, mems):
        """Create or update the cpuset; memory_migrate first so that moved tasks take their pages."""
        if not self.exists():
            os.mkdir(self.folder, 0o755)
        state = self.state()
        # Widen before narrowing is not needed: cpus and mems are independent files, and
        # a cpuset must have both set before tasks can join it.
        if state['memory_migrate'] != '1':
            self._write(os.path.join(self.folder, 'cpuset.memory_migrate'), '1')
        if state['cpus'] != list(cpus):
            self._write(os.path.join(self.folder, 'cpuset.cpus'), numa.render_cpu_list(cpus))
        if state['mems'] != list(mems):
            self._write(os.path.join(self.folder, 'cpuset.mems'), numa.render_cpu_list(mems))

    def holds(self, cgroup_path):
        return cgroup_path == self.cgroup_path

    def move(self, pid):
        """Move the whole process (every thread) into the cpuset."""
        self._write(os.path.join(self.folder, 'cgroup.procs'), pid)

    def move_out(self, pid):
        self._write(os.path.join(self.mount, 'cgroup.procs'), pid)

    def remove(self):
        """Move any task left back to the parent, then remove the cpuset."""
        if not self.exists():
            return
        text = self._value(self.folder, 'cgroup.procs') or ''
        for word in text.split():
            try:
                self.move_out(int(word))
            except OSError as exc:
                if exc.errno != errno.ESRCH:
                    raise
        os.rmdir(self.folder)
