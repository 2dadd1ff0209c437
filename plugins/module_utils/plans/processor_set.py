# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: bind a database's processes to a set of CPUs and its memory
to the NUMA nodes of those CPUs (Linux: systemd drop-in, sched_setaffinity, cpuset cgroups;
SunOS: see plans/psrset.py).

The module file only declares options and calls ProcessorSet(...).run(); the plan is made
here, and bad input is refused (InputError) before anything is touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import pwd
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo as _mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, OK, PENDING_RESTART, UNSUPPORTED, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

DROPIN_NAME = '90-dbhost-tuning-cpus.conf'
HEADER = '# Managed by dbhost.tuning.processor_set; the keys below are overwritten on every run.'
CPUSET_PREFIX = 'dbhost-'
# Keys of the [Service] section we own in our drop-in, by service binding mode.
AFFINITY_KEYS = ('CPUAffinity', 'NUMAPolicy', 'NUMAMask')
CPUSET_KEYS = ('AllowedCPUs', 'AllowedMemoryNodes')
ALL_KEYS = AFFINITY_KEYS + CPUSET_KEYS

_SET_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z')
_NODE_SPEC = re.compile(r'^node:(.*)\Z', re.DOTALL)


# ------------------------------------------------------------------ CPU and node selection
def _as_text_list(value, what):
    """A CPU or node list given as text, an integer or a list -> the kernel list text."""
    if isinstance(value, bool):
        raise InputError('%s: %r is not a list' % (what, value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ','.join(_as_text_list(item, what) for item in value)
    if isinstance(value, str):
        return value.strip()
    raise InputError('%s: %r is neither a list nor a string' % (what, value))


def parse_list(value, what):
    try:
        return numa.parse_cpu_list(_as_text_list(value, what))
    except numa.CpuListError as exc:
        raise InputError('%s: %s' % (what, exc))


def select_cpus(spec, topology):
    """``0-15,32-47`` or ``node:N`` (``node:0,2``) -> (sorted CPU list, nodes named or None).

    Refuses CPUs that do not exist or are offline, nodes that do not exist, an empty set.
    """
    if spec is None:
        raise InputError('cpus is required with state=present')
    text = _as_text_list(spec, 'cpus')
    match = _NODE_SPEC.match(text)
    nodes = None
    if match:
        nodes = parse_list(match.group(1), 'cpus (node list)')
        if not nodes:
            raise InputError('cpus %r names no NUMA node' % (text,))
        missing = [n for n in nodes if n not in topology['nodes']]
        if missing:
            raise InputError('cpus %r: NUMA node(s) %s do not exist (nodes here: %s)' % (
                text, numa.render_cpu_list(missing), numa.render_cpu_list(topology['nodes'])))
        cpus = sorted(set(c for n in nodes for c in topology['nodes'][n]['cpus']))
        online = set(topology['online_cpus'])
        cpus = [c for c in cpus if c in online]
        if not cpus:
            raise InputError('cpus %r: NUMA node(s) %s have no online CPU' % (text, numa.render_cpu_list(nodes)))
        return cpus, nodes
    cpus = parse_list(text, 'cpus')
    if not cpus:
        raise InputError('cpus is empty: a processor set needs at least one CPU')
    check_cpus_exist(cpus, topology, 'cpus')
    return cpus, None


def check_cpus_exist(cpus, topology, what):
    possible = set(topology.get('possible_cpus') or topology['online_cpus'])
    online = set(topology['online_cpus'])
    absent = [c for c in cpus if c not in possible and c not in online]
    if absent:
        raise InputError('%s: CPU(s) %s do not exist on this host (CPUs here: %s)' % (
            what, numa.render_cpu_list(absent), numa.render_cpu_list(possible | online)))
    offline = [c for c in cpus if c not in online]
    if offline:
        raise InputError('%s: CPU(s) %s are offline (online: %s)' % (
            what, numa.render_cpu_list(offline), numa.render_cpu_list(online)))


def select_mems(spec, cpus, topology):
    """The memory nodes: given, or the nodes of ``cpus``; each must exist and hold memory."""
    if spec is None or spec == '' or spec == []:
        mems = numa.nodes_of_cpus(topology, cpus)
        what = 'mems (the nodes of cpus %s)' % numa.render_cpu_list(cpus)
    else:
        mems = parse_list(spec, 'mems')
        what = 'mems'
    if not mems:
        raise InputError('%s is empty' % what)
    missing = [n for n in mems if n not in topology['nodes']]
    if missing:
        raise InputError('%s: NUMA node(s) %s do not exist (nodes here: %s)' % (
            what, numa.render_cpu_list(missing), numa.render_cpu_list(topology['nodes'])))
    empty = [n for n in mems if topology['nodes'][n].get('memory_bytes') == 0]
    if empty:
        raise InputError('%s: NUMA node(s) %s have no memory; name memory nodes in mems' % (
            what, numa.render_cpu_list(empty)))
    return mems


def check_exclusive(cpus, topology):
    rest = sorted(set(topology['online_cpus']) - set(cpus))
    if not rest:
        raise InputError('cpus %s with exclusive=true would leave no online CPU for the rest of the system'
                         % numa.render_cpu_list(cpus))
    return rest


def topology_report(topology):
    """The topology as returned to the user: lists rendered as the kernel writes them."""
    nodes = {}
    for node, info in sorted(topology['nodes'].items()):
        nodes[str(node)] = {
            'cpus': numa.render_cpu_list(info['cpus']),
            'memory_bytes': info.get('memory_bytes'),
            'distances': info.get('distances') or [],
        }
    return {
        'nodes': nodes,
        'online_cpus': numa.render_cpu_list(topology['online_cpus']),
        'offline_cpus': numa.render_cpu_list(topology.get('offline_cpus') or []),
    }


# ------------------------------------------------------------------ /proc
def parse_status(text):
    """/proc/PID/status -> {field: value text}."""
    fields = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep:
            fields[key.strip()] = value.strip()
    return fields


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
        try:
            with open(os.path.join(self.proc, *[str(p) for p in parts]), 'rb') as handle:
                return handle.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            return None

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


class ProcessMatcher(object):
    """One entry of ``processes``: every given criterion must match (pid file, user, pattern)."""

    def __init__(self, spec, index, root='/'):
        what = 'processes[%d]' % index
        if not isinstance(spec, dict):
            raise InputError('%s must be a dict with pid_file, user and/or pattern' % what)
        unknown = sorted(set(spec) - set(('pid_file', 'user', 'pattern')))
        if unknown:
            raise InputError('%s: unknown key(s) %s (use pid_file, user, pattern)' % (what, ', '.join(unknown)))
        self.pid_file = validate.check_path(spec.get('pid_file'), '%s.pid_file' % what)
        self.user = validate.check_name(spec.get('user'), '%s.user' % what)
        self.pattern_text = validate.check_text(spec.get('pattern'), '%s.pattern' % what)
        if not (self.pid_file or self.user is not None or self.pattern_text):
            raise InputError('%s needs at least one of pid_file, user, pattern' % what)
        self.local_pid_file = None
        if self.pid_file:
            try:
                self.local_pid_file = rooted(root, self.pid_file)
            except ValueError as exc:
                raise InputError('%s pid_file: %s' % (what, exc))
        self.uid = None
        if self.user is not None:
            user = str(self.user)
            try:
                self.uid = int(user) if user.isdigit() else pwd.getpwnam(user).pw_uid
            except KeyError:
                raise InputError('%s user %r does not exist' % (what, user))
        self.pattern = None
        if self.pattern_text:
            try:
                self.pattern = re.compile(self.pattern_text)
            except re.error as exc:
                raise InputError('%s pattern %r is not a regular expression: %s' % (what, self.pattern_text, exc))
        self.what = what

    def describe(self):
        parts = []
        if self.pid_file:
            parts.append('pid_file=%s' % self.pid_file)
        if self.user is not None:
            parts.append('user=%s' % self.user)
        if self.pattern_text:
            parts.append('pattern=%s' % self.pattern_text)
        return ' '.join(parts)

    def pid_from_file(self):
        text = read_text(self.local_pid_file) if self.local_pid_file else None
        words = (text or '').split()
        return int(words[0]) if words and words[0].isdigit() else None

    def matches(self, pid, status, cmdline, file_pid):
        if self.pid_file and pid != file_pid:
            return False
        if self.uid is not None:
            uids = (status.get('Uid') or '').split()
            if len(uids) < 2 or int(uids[1]) != self.uid:
                return False
        if self.pattern is not None and not self.pattern.search(' '.join(cmdline)):
            return False
        return True


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

    def _value(self, folder, name):
        try:
            with open(os.path.join(folder, name)) as handle:
                return handle.read().strip()
        except (IOError, OSError):
            return None

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
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, str(value).encode('ascii'))
        finally:
            os.close(fd)

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


# ------------------------------------------------------------------ the drop-in
def dropin_values(mode, cpus, mems):
    """{key: value or None}: the [Service] keys of our drop-in (None removes a key)."""
    values = dict((key, None) for key in ALL_KEYS)
    if mode == 'affinity':
        values.update(CPUAffinity=numa.render_cpu_list(cpus), NUMAPolicy='bind', NUMAMask=numa.render_cpu_list(mems))
    elif mode == 'cpuset':
        values.update(AllowedCPUs=numa.render_cpu_list(cpus), AllowedMemoryNodes=numa.render_cpu_list(mems))
    return values


def render_dropin(before, mode, cpus, mems):
    """Our drop-in's text after the change; None when it should not exist.

    Other lines the user added to the file are kept; only our keys are set.
    """
    if mode is None:
        if before is None:
            return None
        after = systemd.render(before, {'Service': dict((key, None) for key in ALL_KEYS)})
        remaining = [k for section in systemd.read(after).values() for k in section]
        return after if remaining else None
    return systemd.render(before, {'Service': dropin_values(mode, cpus, mems)}, header=HEADER)


def _show_list(value):
    """A CPU/node list from ``systemctl show`` (``0-3``, ``0 1 2 3`` on older systemd)."""
    text = (value or '').strip()
    if not text:
        return []
    try:
        return numa.parse_cpu_list(','.join(text.split()))
    except numa.CpuListError:
        return None


def persisted_from_files(files):
    """What the unit's files give for our keys, by systemd's rules, offline.

    CPUAffinity= adds up across assignments and an empty one resets it; the others take
    the last assignment.  ``files`` is [(shown path, text)] in the order they apply.
    Returns ({key: value text}, {key: shown path of the last file setting it}).
    """
    values, sources = {}, {}
    affinity = None
    for shown, text in files:
        section = systemd.read(text).get('Service', {})
        for key in ALL_KEYS:
            for value in section.get(key, []):
                sources[key] = shown
                if key == 'CPUAffinity':
                    affinity = set() if not value.strip() else (affinity or set()) | set(_show_list(value) or [])
                else:
                    values[key] = value.strip()
    if affinity is not None:
        values['CPUAffinity'] = numa.render_cpu_list(affinity)
    return values, sources


# ------------------------------------------------------------------ Linux
class LinuxProcessorSet(object):
    """One run on Linux: validate, plan, apply (unless check mode), report."""

    def __init__(self, args, check_mode=False, runner=None, proc='/proc', cgroup_mounts=None):
        self.args = args
        self.name = args.get('name')
        self.state = args.get('state') or 'present'
        self.root = args.get('root') or '/'
        self.check_mode = check_mode
        self.runner = runner
        self.live = self.root == '/'
        self.procs = ProcTable(proc)
        self.cgroup_mounts = cgroup_mounts
        self.service = None
        self.service_mode = None
        self.matchers = []
        self.cpus = []
        self.mems = []
        self.nodes = None
        self.topology = None
        self.show_before = None
        self.systemd_live = False
        self.backup_file = None
        self.cpuset = None

    # ------------------------------------------------------------ validation
    def validate(self):
        args = self.args
        self.root = validate.check_root(self.root)
        if not self.name or not _SET_NAME.match(str(self.name)):
            raise InputError('name %r: use letters, digits, "_", "." and "-" (at most 63), starting with a letter '
                             'or digit' % (self.name,))
        for key in ('project', 'pool'):
            if args.get(key):
                raise InputError('%s is a SunOS option; on Linux use service or processes' % key)
        self.topology = numa.read_topology(self.root)
        if not self.topology['online_cpus']:
            raise InputError('no online CPU found under %s' % os.path.join(self.root, 'sys/devices/system/cpu/online'))
        if self.state == 'present':
            self.cpus, self.nodes = select_cpus(args.get('cpus'), self.topology)
            self.mems = select_mems(args.get('mems'), self.cpus, self.topology)
            if args.get('exclusive'):
                check_exclusive(self.cpus, self.topology)
        else:
            self.cpus = list(self.topology['online_cpus'])
            self.mems = sorted(n for n, info in self.topology['nodes'].items() if info.get('memory_bytes') != 0)
        if args.get('service'):
            try:
                self.service = systemd.unit_name(args['service'])
            except systemd.UnitNameError as exc:
                raise InputError('service: %s' % exc)
            if not self.service.endswith('.service'):
                raise InputError('service %r: only .service units run processes to bind' % self.service)
        self.matchers = [ProcessMatcher(spec, index, self.root)
                         for index, spec in enumerate(args.get('processes') or [])]
        if self.state == 'present' and not self.service and not self.matchers:
            raise InputError('nothing to bind: give service and/or processes')
        self.systemd_live = self.service is not None and self.live and systemd.systemd_running('/') \
            and self.runner is not None
        if self.systemd_live:
            self.show_before = self.show()
            if self.show_before.get('LoadState') == 'not-found':
                raise InputError('service %s does not exist (systemctl show: LoadState=not-found)' % self.service)
        self.service_mode = self._service_mode()

    def _mounts(self):
        if self.cgroup_mounts is None:
            self.cgroup_mounts = self.procs.mountinfo()
        return self.cgroup_mounts

    def _v2_cpuset(self):
        unified = self._mounts().get('unified')
        if not unified:
            return False
        controllers = read_text(os.path.join(unified[0], 'cgroup.controllers')) or ''
        return 'cpuset' in controllers.split()

    def _service_mode(self):
        wanted = self.args.get('service_mode') or 'auto'
        if self.service is None or self.state == 'absent':
            return None
        if wanted == 'auto':
            # AllowedCPUs= needs the cpuset controller on the unified (v2) hierarchy that
            # systemd manages; on v1 or hybrid hosts systemd cannot set a cpuset.
            return 'cpuset' if self.live and self._v2_cpuset() and not self._mounts().get('cpuset') else 'affinity'
        if wanted == 'cpuset' and self.live and not self._v2_cpuset():
            raise InputError('service_mode=cpuset needs the cpuset controller on cgroup v2; this host has none '
                             '(use service_mode=affinity)')
        return wanted

    # ------------------------------------------------------------ systemd
    def show(self):
        props = ['LoadState', 'ActiveState', 'MainPID', 'NeedDaemonReload', 'DropInPaths'] + list(ALL_KEYS)
        argv = ['systemctl', 'show']
        for prop in props:
            argv.extend(['-p', prop])
        argv.append(self.service)
        rc, out, err = self.runner(argv)
        if rc != 0:
            raise InputError('service %s: systemctl show failed: %s' % (self.service, (err or out).strip()))
        return systemd.parse_show(out)

    def dropin_path(self):
        return '/etc/systemd/system/%s.d/%s' % (self.service, DROPIN_NAME)

    # ------------------------------------------------------------ run
    def run(self, module=None):
        self.validate()
        result = Result(self.check_mode)
        result.extra['topology'] = topology_report(self.topology)
        result.extra['cpus'] = numa.render_cpu_list(self.cpus)
        result.extra['mems'] = numa.render_cpu_list(self.mems)
        if self.service:
            result.add(self.bind_service(module, result))
        if self.matchers or self.state == 'absent':
            for setting in self.bind_processes():
                result.add(setting)
        if self.args.get('exclusive') and self.state == 'present':
            result.add(Setting(
                'exclusive', self.name, True, None, None, UNSUPPORTED,
                'Linux does not keep other processes off CPUs %s at run time: checked that CPUs %s stay for the '
                'rest of the system; use isolcpus= or systemd CPUAffinity= in system.conf to fence them'
                % (numa.render_cpu_list(self.cpus), numa.render_cpu_list(check_exclusive(self.cpus, self.topology)))))
        if self.backup_file:
            result.extra['backup_file'] = self.backup_file
        return result

    # ------------------------------------------------------------ service
    def _desired_service(self):
        if self.state == 'absent':
            return None
        return {'cpus': numa.render_cpu_list(self.cpus), 'mems': numa.render_cpu_list(self.mems),
                'mode': self.service_mode}

    def _persisted_ok(self, values):
        want = dropin_values(self.service_mode, self.cpus, self.mems) if self.state == 'present' else {}
        for key in ALL_KEYS:
            if key in CPUSET_KEYS or key in ('CPUAffinity', 'NUMAMask'):
                have = _show_list(values.get(key))
                wanted = _show_list(want.get(key))
            else:
                have = (values.get(key) or '').strip()
                wanted = want.get(key) or ''
                if have == 'n/a':
                    have = ''
                if key == 'NUMAPolicy' and have == 'default' and not wanted:
                    have = ''
            if have != wanted:
                return False
        return True

    def _persisted_summary(self, values):
        shown = dict((key, values.get(key)) for key in ALL_KEYS if values.get(key) not in (None, '', 'n/a'))
        return shown or None

    def _live_service(self, show):
        """Main PID's CPUs, allowed memory nodes and memory policy, or None when not running."""
        pid = int(show.get('MainPID') or 0) if show else 0
        if not pid:
            return None, None
        status = self.procs.status(pid)
        if status is None:
            return None, None
        live = {'pid': pid, 'cpus': status.get('Cpus_allowed_list'), 'mems': status.get('Mems_allowed_list'),
                'numa_policy': self.procs.numa_policy(pid)}
        return live, pid

    def _live_service_ok(self, live):
        if live is None:
            return None
        cpus = _show_list(live['cpus'])
        if self.state == 'absent':
            return cpus == list(self.topology['online_cpus'])
        if cpus != list(self.cpus):
            return False
        if self.service_mode == 'affinity':
            return live['numa_policy'] == 'bind:%s' % numa.render_cpu_list(self.mems)
        return _show_list(live['mems']) == list(self.mems)

    def bind_service(self, module, result):
        shown = self.dropin_path()
        local = rooted(self.root, shown)
        before = read_text(local)
        after = render_dropin(before, self.service_mode, self.cpus, self.mems)
        change = FileChange(local, before, after, shown_path=shown)
        change.report(result)

        files_before = [(s, read_text(path, root=self.root) or '') for s, path in systemd.unit_files(self.root, self.service)]
        if self.systemd_live and self.show_before.get('NeedDaemonReload') != 'yes':
            persisted_before = self.show_before
            sources = {}
        else:
            persisted_before, sources = persisted_from_files(files_before)
        file_ok = not change.needed
        persisted_ok = file_ok and self._persisted_ok(persisted_before)

        show_after = self.show_before
        details = []
        if change.needed and not self.check_mode:
            self.backup_file = change.apply(module, backup_file=bool(self.args.get('backup')))
            if self.systemd_live:
                rc, out, err = self.runner(['systemctl', 'daemon-reload'])
                if rc != 0:
                    return Setting('service:%s' % self.service, shown, self._desired_service(), None, None, FAILED,
                                   'wrote %s but systemctl daemon-reload failed: %s' % (shown, (err or out).strip()))
                show_after = self.show()
                details.append('wrote %s and reloaded systemd' % shown)
            else:
                details.append('wrote %s' % shown)
        elif change.needed:
            details.append('would %s %s' % ('remove' if after is None else 'write', shown))

        if self.systemd_live and not self.check_mode:
            persisted_now = show_after
        else:
            files_after = [(s, (after or '') if s == shown else text) for s, text in
                           [(s, read_text(path, root=self.root) or '') for s, path in
                            systemd.unit_files(self.root, self.service, extra=shown)]]
            persisted_now, sources = persisted_from_files(files_after)
        # Another drop-in that applies after ours (or the unit file) can still win.
        shadowed = False
        if not self._persisted_ok(persisted_now):
            others = [p for p in (show_after or {}).get('DropInPaths', '').split() if p != shown] if \
                self.systemd_live else sorted(set(v for k, v in sources.items() if v != shown))
            if self.check_mode and change.needed and self.systemd_live:
                pass  # systemd has not seen our file yet; nothing to conclude
            else:
                shadowed = True
                details.append('the unit still gets %s; other files setting it: %s' % (
                    self._persisted_summary(persisted_now), ', '.join(others) or 'none found'))

        live, pid = self._live_service(show_after if self.systemd_live else None)
        live_ok = self._live_service_ok(live)
        if not self.live:
            details.append('live state not read (root is %s)' % self.root)
        elif not self.systemd_live:
            details.append('systemd is not running here: live state not read')
        elif live is None:
            details.append('service is not running; the binding applies when it starts')
        elif live_ok is False:
            details.append('main PID %d runs on CPUs %s, memory %s (policy %s); a restart applies the drop-in' % (
                pid, live['cpus'], live['mems'], live['numa_policy']))
        status = decide_status(live_ok, persisted_ok, self.check_mode, live_needs=PENDING_RESTART, shadowed=shadowed)
        # In check mode the record shows what is persisted now, not what would be.
        persisted_shown = persisted_before if self.check_mode else persisted_now
        return Setting('service:%s' % self.service, shown, self._desired_service(), live,
                       self._persisted_summary(persisted_shown), status, '; '.join(details))

    # ------------------------------------------------------------ live processes
    def _cpuset(self):
        if self.cpuset is None:
            mount = self._mounts().get('cpuset')
            self.cpuset = CpusetV1(mount[0], mount[1], self.name) if mount else False
            if self.cpuset and not self.cpuset.usable():
                self.cpuset = False
        return self.cpuset

    def find_processes(self):
        """[(matcher, [pid, ...])]: every running process each matcher selects (not ourselves)."""
        own = os.getpid()
        found = []
        file_pids = [m.pid_from_file() for m in self.matchers]
        for matcher, file_pid in zip(self.matchers, file_pids):
            pids = []
            candidates = [file_pid] if matcher.pid_file else self.procs.pids()
            for pid in candidates:
                if pid is None or pid == own:
                    continue
                status = self.procs.status(pid)
                cmdline = self.procs.cmdline(pid)
                # Kernel threads have no command line: never ours to move.
                if status is None or not cmdline:
                    continue
                if matcher.matches(pid, status, cmdline, file_pid):
                    pids.append(pid)
            found.append((matcher, pids))
        return found

    def _read_process(self, pid, cpuset):
        status = self.procs.status(pid)
        if status is None:
            return None
        threads = self.procs.threads(pid) or [pid]
        thread_cpus = set()
        for tid in threads:
            tstatus = self.procs.thread_status(pid, tid) or {}
            if tstatus.get('Cpus_allowed_list') is not None:
                thread_cpus.add(tstatus['Cpus_allowed_list'])
        live = {'cpus': status.get('Cpus_allowed_list'), 'mems': status.get('Mems_allowed_list'),
                'threads': len(threads)}
        if len(thread_cpus) > 1:
            live['thread_cpus'] = sorted(thread_cpus)
        if cpuset:
            relative = self.procs.cgroups(pid).get('cpuset')
            live['cpuset'] = relative
        return live

    def _process_ok(self, live, cpuset):
        if live is None:
            return None
        cpus_ok = _show_list(live['cpus']) == list(self.cpus) and 'thread_cpus' not in live
        mems_ok = _show_list(live['mems']) == list(self.mems)
        in_set = True
        if cpuset:
            in_set = cpuset.holds(live.get('cpuset')) if self.state == 'present' else \
                not cpuset.holds(live.get('cpuset'))
        return cpus_ok, mems_ok, in_set

    def bind_processes(self):
        settings = []
        if not self.live:
            if not self.matchers:
                return settings
            settings.append(Setting('processes', self.name, None, None, None, UNSUPPORTED,
                                    'running processes are bound only on the running system (root is %s)'
                                    % self.root))
            return settings
        cpuset = self._cpuset()
        if cpuset and self.state == 'present':
            missing_cpus, missing_mems = cpuset.parent_allows(self.cpus, self.mems)
            if missing_cpus or missing_mems:
                raise InputError('the cpuset hierarchy at %s does not hold CPUs %s / nodes %s' % (
                    cpuset.mount, numa.render_cpu_list(missing_cpus) or '-', numa.render_cpu_list(missing_mems) or '-'))
        desired = {'cpus': numa.render_cpu_list(self.cpus), 'mems': numa.render_cpu_list(self.mems)}
        if cpuset:
            desired['cpuset'] = cpuset.cgroup_path if self.state == 'present' else None
        cpuset_before = cpuset.state() if cpuset else None
        seen = set()
        for matcher, pids in self.find_processes():
            if not pids:
                settings.append(Setting('processes:%s' % matcher.describe(), matcher.what, desired, None, None, OK,
                                        'no running process matches; nothing to bind'))
            for pid in pids:
                if pid in seen:
                    continue
                seen.add(pid)
                settings.append(self._bind_one(pid, matcher, cpuset, desired))
        if cpuset and self.state == 'present' and (seen or cpuset_before is not None):
            want = {'cpus': list(self.cpus), 'mems': list(self.mems), 'memory_migrate': '1'}
            status = decide_status(None, cpuset_before == want, self.check_mode)
            detail = 'cgroup v1 cpuset %s; tasks moved into it take their pages along (memory_migrate=1)' \
                % cpuset.cgroup_path
            if status != OK and not self.check_mode:
                try:
                    cpuset.ensure(self.cpus, self.mems)
                except OSError as exc:
                    status, detail = FAILED, 'setting up cpuset %s failed: %s' % (cpuset.cgroup_path, exc)
            settings.append(Setting('cpuset:%s' % cpuset.name, cpuset.folder,
                                    {'cpus': desired['cpus'], 'mems': desired['mems'], 'memory_migrate': '1'},
                                    self._cpuset_report(cpuset.state() if not self.check_mode else cpuset_before),
                                    None, status, detail))
        elif cpuset and self.state == 'absent' and cpuset_before is not None:
            status = decide_status(None, False, self.check_mode)
            detail = '%s cpuset %s' % ('would remove' if self.check_mode else 'removed', cpuset.cgroup_path)
            if not self.check_mode:
                try:
                    cpuset.remove()
                except OSError as exc:
                    status, detail = FAILED, 'removing cpuset %s failed: %s' % (cpuset.cgroup_path, exc)
            settings.append(Setting('cpuset:%s' % cpuset.name, cpuset.folder, None,
                                    self._cpuset_report(cpuset_before), None, status, detail))
        return settings

    @staticmethod
    def _cpuset_report(state):
        if state is None:
            return None
        return {'cpus': numa.render_cpu_list(state['cpus']), 'mems': numa.render_cpu_list(state['mems']),
                'memory_migrate': state['memory_migrate']}

    def _bind_one(self, pid, matcher, cpuset, desired):
        name = 'pid:%d' % pid
        cmdline = ' '.join(self.procs.cmdline(pid))[:120]
        before = self._read_process(pid, cpuset)
        checks = self._process_ok(before, cpuset)
        if before is None:
            return Setting(name, matcher.describe(), desired, None, None, OK, 'exited before it could be read')
        cpus_ok, mems_ok, in_set = checks
        live_ok = cpus_ok and mems_ok and in_set
        details = [cmdline]
        if not cpuset and not mems_ok:
            # Nothing else can change the memory nodes of a running process.
            return Setting(name, matcher.describe(), desired, before, None, UNSUPPORTED,
                           '%s; memory nodes %s differ from %s and no cpuset cgroup (v1) is available here to move it: '
                           'memory binding of a running process is not possible; bind the service instead or '
                           'restart the process under numactl' % (cmdline, before['mems'], desired['mems']))
        if live_ok or self.check_mode:
            status = decide_status(live_ok, None, self.check_mode)
            if not live_ok:
                details.append('would move it from CPUs %s, memory %s%s' % (
                    before['cpus'], before['mems'], (', cpuset %s' % before.get('cpuset')) if cpuset else ''))
            return Setting(name, matcher.describe(), desired, before, None, status, '; '.join(details))
        try:
            if cpuset:
                if self.state == 'present':
                    cpuset.ensure(self.cpus, self.mems)
                    if not in_set:
                        cpuset.move(pid)
                elif not in_set:
                    cpuset.move_out(pid)
            for tid in self.procs.threads(pid) or [pid]:
                try:
                    os.sched_setaffinity(tid, self.cpus)
                except OSError as exc:
                    if exc.errno != errno.ESRCH:  # a thread that ended meanwhile
                        raise
        except OSError as exc:
            if exc.errno == errno.ESRCH:
                return Setting(name, matcher.describe(), desired, before, None, OK, '%s; exited meanwhile' % cmdline)
            return Setting(name, matcher.describe(), desired, before, None, FAILED,
                           '%s; binding failed: %s' % (cmdline, exc))
        after = self._read_process(pid, cpuset)
        after_checks = self._process_ok(after, cpuset)
        if after is None:
            return Setting(name, matcher.describe(), desired, before, None, OK, '%s; exited meanwhile' % cmdline)
        if not all(after_checks):
            return Setting(name, matcher.describe(), desired, after, None, FAILED,
                           '%s; bound, but reads back CPUs %s, memory %s%s' % (
                               cmdline, after['cpus'], after['mems'],
                               (', cpuset %s' % after.get('cpuset')) if cpuset else ''))
        details.append('moved from CPUs %s, memory %s%s' % (
            before['cpus'], before['mems'], (', cpuset %s' % before.get('cpuset')) if cpuset else ''))
        return Setting(name, matcher.describe(), desired, after, None, decide_status(False, None, False),
                       '; '.join(details))


# ------------------------------------------------------------------ dispatch
def _sunos_class():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.psrset import SunOSProcessorSet
    return SunOSProcessorSet


class ProcessorSet(Plan):
    """Entry point: picks the platform's implementation."""

    failed_separator = '; '

    @property
    def failed_label(self):
        return 'processor set %s' % self.impl.name

    def __init__(self, args, check_mode=False, runner=None, system_name=None, **kwargs):
        try:
            factory = platforms.pick({platforms.LINUX: lambda: LinuxProcessorSet,
                                      platforms.SUNOS: _sunos_class}, system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.impl = factory()(args, check_mode=check_mode, runner=runner, **kwargs)

    def run(self, module=None):
        return self.impl.run(module)
