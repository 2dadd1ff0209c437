# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what the processor set plans of every platform share: the
set's name, CPU and NUMA node selection, the topology as reported, and which processes
an entry of ``processes`` selects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pwd
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed

SET_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z')
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


# ------------------------------------------------------------------ processes
def parse_status(text):
    """/proc/PID/status -> {field: value text}."""
    return keyed.key_values(text, ':')


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
