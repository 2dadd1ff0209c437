# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what the Solaris/illumos commands behind processor sets and
resource pools print (psrinfo, psrset, poolbind, lgrpinfo, ps, projects, pooladm/poolcfg),
parsed, and the poolcfg commands that make a pool hold a set of CPUs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa

# ------------------------------------------------------------------ output parsers
_PSRINFO = re.compile(r'^\s*([0-9]+)\s+(\S+)(?:\s+since\s+(.*\S))?\s*\Z')
_PSRSET_INFO = re.compile(r'^(user|system) processor set ([0-9]+):\s*(?:empty|processors?((?:\s+[0-9]+)*))\s*\Z')
_PSRSET_CREATED = re.compile(r'^created processor set ([0-9]+)\s*\Z')
_PSRSET_QUERY = re.compile(r'^process id ([0-9]+): (?:(not bound)|([0-9]+))\s*\Z')
_PSRSET_BIND = re.compile(r'^process id ([0-9]+): was (?:not bound|[0-9]+), now (?:not bound|([0-9]+))\s*\Z')
_LGROUP = re.compile(r'^lgroup ([0-9]+) \(([^)]*)\):\s*\Z')


def parse_psrinfo(text):
    """``psrinfo`` -> {cpu: status}: ``0  on-line  since 07/15/2003 10:24:40``."""
    cpus = {}
    for line in (text or '').splitlines():
        match = _PSRINFO.match(line)
        if match:
            cpus[int(match.group(1))] = match.group(2)
    return cpus


def parse_psrset_info(text):
    """``psrset -i`` -> {set id: {'type': 'user' or 'system', 'cpus': [...]}}."""
    sets = {}
    for line in (text or '').splitlines():
        match = _PSRSET_INFO.match(line.strip())
        if match:
            sets[int(match.group(2))] = {'type': match.group(1),
                                         'cpus': [int(c) for c in (match.group(3) or '').split()]}
    return sets


def parse_psrset_created(text):
    """``psrset -c 4 5`` -> the new set's id (``created processor set 1``), or None."""
    for line in (text or '').splitlines():
        match = _PSRSET_CREATED.match(line.strip())
        if match:
            return int(match.group(1))
    return None


def parse_psrset_query(text):
    """``psrset -q PID...`` -> {pid: set id or None}: ``process id 1234: 1`` / ``: not bound``."""
    bindings = {}
    for line in (text or '').splitlines():
        match = _PSRSET_QUERY.match(line.strip())
        if match:
            bindings[int(match.group(1))] = None if match.group(2) else int(match.group(3))
            continue
        match = _PSRSET_BIND.match(line.strip())
        if match:
            bindings[int(match.group(1))] = int(match.group(2)) if match.group(2) else None
    return bindings


def parse_poolbind_query(text):
    """``poolbind -q PID...`` -> {pid: pool}: ``1234<TAB>pool_default``."""
    bindings = {}
    for line in (text or '').splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            bindings[int(parts[0])] = parts[1]
    return bindings


def parse_lgrpinfo(text):
    """``lgrpinfo -G -c`` -> {lgroup: {'kind': 'leaf'/'root'/..., 'cpus': [...]}}.

    lgrpinfo.pl (usr/src/cmd/lgrpinfo) prints ``CPU: 4`` for an lgroup with one CPU and
    ``CPUs: 0-2 5`` for more (ranges collapsed, space separated), and no CPU line at all for
    an lgroup without CPUs in the view asked for."""
    groups = {}
    current = None
    for line in (text or '').splitlines():
        match = _LGROUP.match(line.strip())
        if match:
            current = groups.setdefault(int(match.group(1)), {'kind': match.group(2), 'cpus': []})
            continue
        stripped = line.strip()
        label = next((word for word in ('CPUs:', 'CPU:') if stripped.startswith(word)), None)
        if current is not None and label:
            words = stripped[len(label):].strip()
            if words and words != 'none':
                current['cpus'] = numa.parse_cpu_list(','.join(words.split()))
    return groups


def parse_ps(text):
    """``ps -e -o pid= -o uid= -o project= -o args=`` -> [(pid, uid, project, [args])]."""
    rows = []
    for line in (text or '').splitlines():
        parts = line.split(None, 3)
        if len(parts) >= 3 and parts[0].isdigit() and parts[1].isdigit():
            rows.append((int(parts[0]), int(parts[1]), parts[2], (parts[3] if len(parts) > 3 else '').split()))
    return rows


def parse_projects_attribs(text):
    """``projects -l NAME`` -> {attribute: value} from its ``attribs:`` lines."""
    attribs = {}
    in_attribs = False
    for line in (text or '').splitlines():
        stripped = line.strip()
        if stripped.startswith('attribs:'):
            in_attribs = True
            stripped = stripped[len('attribs:'):].strip()
        elif re.match(r'^\w+\s*:', stripped):
            in_attribs = False
        if in_attribs and stripped:
            key, sep, value = stripped.partition('=')
            attribs[key.strip()] = value.strip() if sep else ''
    return attribs


_PROPERTY_TYPES = ('int', 'uint', 'boolean', 'string', 'float', 'double')


def parse_pool_info(text):
    """``pooladm`` / ``poolcfg -c info`` / ``poolcfg -dc info`` -> the configuration:

    {'system': name, 'properties': {...},
     'pools': {name: {'properties': {...}, 'pset': name or None}},
     'psets': {name: {'properties': {...}, 'cpus': [sys_id, ...], 'cpu_status': {sys_id: status}}}}
    Entities nest by indentation: a ``pset NAME`` line inside a pool is that pool's pset.
    """
    config = {'system': None, 'properties': {}, 'pools': {}, 'psets': {}}
    entity, entity_indent, cpu, cpu_indent = None, -1, None, -1
    for raw in (text or '').splitlines():
        if not raw.strip():
            continue
        line = raw.expandtabs(8)
        indent = len(line) - len(line.lstrip())
        words = line.split()
        if cpu is not None and indent <= cpu_indent:
            cpu = None
        if words[0] == 'system' and len(words) == 2:
            config['system'] = words[1]
            entity, entity_indent = ('system', config), indent
        elif words[0] == 'pool' and len(words) == 2:
            pool = config['pools'].setdefault(words[1], {'properties': {}, 'pset': None})
            entity, entity_indent = ('pool', pool), indent
        elif words[0] == 'pset' and len(words) == 2:
            if entity is not None and entity[0] == 'pool' and indent > entity_indent:
                entity[1]['pset'] = words[1]
            else:
                pset = config['psets'].setdefault(words[1], {'properties': {}, 'cpus': [], 'cpu_status': {}})
                entity, entity_indent = ('pset', pset), indent
        elif words[0] == 'cpu' and len(words) == 1 and entity is not None and entity[0] == 'pset':
            cpu, cpu_indent = {}, indent
            entity[1].setdefault('_cpus', []).append(cpu)
        elif words[0] in _PROPERTY_TYPES and len(words) >= 2:
            value = ' '.join(words[2:])
            if cpu is not None:
                cpu[words[1]] = value
            elif entity is not None:
                entity[1]['properties'][words[1]] = value
    for pset in config['psets'].values():
        for cpu in pset.pop('_cpus', []):
            if 'cpu.sys_id' in cpu:
                sys_id = int(cpu['cpu.sys_id'])
                pset['cpus'].append(sys_id)
                pset['cpu_status'][sys_id] = cpu.get('cpu.status')
        pset['cpus'].sort()
    return config


def default_pset(config):
    for name, pset in config['psets'].items():
        if pset['properties'].get('pset.default') == 'true':
            return name
    return 'pset_default'


def pool_commands(config, name, cpus):
    """poolcfg commands that make pool and pset ``name`` hold exactly ``cpus``, in order."""
    commands = []
    size = len(cpus)
    pset = config['psets'].get(name)
    bounds = '(uint pset.min = %d; uint pset.max = %d)' % (size, size)
    if pset is None:
        commands.append('create pset %s %s' % (name, bounds))
        have = []
    else:
        have = pset['cpus']
        if pset['properties'].get('pset.min') != str(size) or pset['properties'].get('pset.max') != str(size):
            commands.append('modify pset %s %s' % (name, bounds))
    pool = config['pools'].get(name)
    if pool is None:
        commands.append('create pool %s' % name)
    if pool is None or pool.get('pset') != name:
        commands.append('associate pool %s (pset %s)' % (name, name))
    extra = [c for c in have if c not in cpus]
    if extra:
        commands.append('transfer to pset %s (%s)' % (default_pset(config), '; '.join('cpu %d' % c for c in extra)))
    missing = [c for c in cpus if c not in have]
    if missing:
        commands.append('transfer to pset %s (%s)' % (name, '; '.join('cpu %d' % c for c in missing)))
    return commands
