# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the SunOS processor set: Solaris/illumos processor sets
(psrset) and resource pools (poolcfg, pooladm, poolbind); their outputs are parsed in
sunos_output.py.

A processor set made with psrset lasts until the next reboot; a pool with its own pset,
written to /etc/pooladm.conf with poolcfg and applied with pooladm -c, is applied again at
boot by svc:/system/pools.  psrset cannot change CPUs while pools are active, so one run
uses one of the two (``persist``); the pools part is in sunos_pools.py.  Every command runs
through ``runner(argv)`` -> (rc, stdout, stderr), so unit tests feed recorded output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import FAILED, OK, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.common import (
    SET_NAME, ProcessMatcher, check_cpus_exist, parse_list)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.sunos_output import (
    parse_lgrpinfo, parse_pool_info, parse_poolbind_query, parse_projects_attribs, parse_ps, parse_psrinfo,
    parse_psrset_created, parse_psrset_info, parse_psrset_query)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import sunos_placement as placement
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.sunos_pools import ResourcePool

POOL_PREFIX = 'dbhost-'
ONLINE_STATES = ('on-line', 'no-intr')
# How each kind of binding is read: the command before the pids, and its parser.
QUERIES = {'psrset': (['psrset', '-q'], parse_psrset_query), 'pool': (['poolbind', '-q'], parse_poolbind_query)}
SET_DETAIL = 'processor sets end at reboot; persist=true keeps the binding as a resource pool'


def to_bind(pids, before, target):
    """The pids not bound to ``target`` yet (every pid while there is no target)."""
    return [p for p in pids if target is None or before.get(p) != target]


# ------------------------------------------------------------------ the SunOS run
# The commands that only read: every other psrset, pooladm, poolcfg, poolbind or projmod changes the host.
_READS = (('psrset', '-i'), ('psrset', '-q'), ('poolbind', '-q'), ('poolcfg', '-c', 'info'), ('poolcfg', '-dc', 'info'))


def _changes_the_host(argv):
    if argv[0] not in ('psrset', 'pooladm', 'poolcfg', 'poolbind', 'projmod') or argv == ['pooladm']:
        return False
    return not any(tuple(argv[:len(read)]) == read for read in _READS)


# What read_persisted() finds: the pool /etc/project binds the project to (None: no project named).
ProjectNow = namedtuple('ProjectNow', 'project_pool')


class SunOSProcessorSet(Plan):
    """psrset (persist=false) or a resource pool (persist=true, sunos_pools.py); see the module docs.

    validate() reads the CPUs (psrinfo, lgrpinfo for node:N) and the project (projects -l);
    desired() is {'cpus': CPU list text, 'persist': bool}.  Every read that comes before the
    first change is done in read_live() (all of them in check mode, where apply() runs no
    command); a read that follows a change (made possible or changed by it) is done in apply(),
    right after that change.

    psrset: read_live() -> {'pools_active', 'sets': psrset -i, 'set_id': ours or None,
    'groups': read_ahead() when no psrset -c comes first} (refusing psrset while pools are
    active, and CPUs another set holds); apply() -> {'removed': psrset -d ran, 'created': the
    id psrset -c printed, 'no_id': it printed none, 'sets': psrset -i of the new set,
    'groups': bind_groups()}.  Pools: see ResourcePool.  read_persisted() -> {'project_pool':
    the project's project.pool} with a project.  render() builds every record from these.
    Both read paths end with 'memory' (sunos_placement.read_memory: where the processes'
    shared memory lies, pmap -Ls): in read_live() when nothing is left to change or in check
    mode, else in apply() after the bindings.

    A group is {'what', 'pids', 'before': bindings (None: not read yet)}; bind_groups() adds
    'bound' (the pids it bound) and 'after' (read back; ``before`` when none was bound).
    """

    def __init__(self, options, context):
        self.args = args = options._asdict()
        self.name = args.get('name')
        self.state = args.get('state') or 'present'
        self.root = '/' if args.get('root') is None else args['root']
        self.persist = args.get('persist', True) is not False
        self.gate = context.gate
        self.runner = context.runner
        self.pool = POOL_PREFIX + str(self.name)
        self.pools = ResourcePool(self)
        self.cpus = []
        self.matchers = []
        self.project = args.get('project')
        self.project_attribs = {}
        self.online = []
        self.topology = None
        self.lgroups = None

    def run_command(self, argv):
        """(rc, stdout, stderr) of ``argv``; a command that changes the host is said first."""
        if _changes_the_host(argv):
            journal.before('unsupported', 'processor_set %s: %s' % (self.name, argv[0]), root=self.root,
                           detail='%s changes the running processor sets and pools (and /etc/pooladm.conf, '
                                  '/etc/project) through its command; a revert does not undo it' % argv[0])
        return self.runner(argv)

    def run_ok(self, argv, what=None):
        rc, out, err = self.run_command(argv)
        if rc != 0:
            raise InputError('%s failed (rc=%d): %s' % (what or ' '.join(argv), rc, (err or out).strip()))
        return out

    # ------------------------------------------------------------ validation
    def validate(self):
        self.root = validate.check_root(self.root)
        if not self.name or not SET_NAME.match(str(self.name)):
            raise InputError('name %r: use letters, digits, "_", "." and "-" (at most 63)' % (self.name,))
        validate.check_name(self.project, 'project')
        if self.args.get('service'):
            raise InputError('service is a Linux (systemd) option; on SunOS bind processes or a project')
        if self.root != '/':
            raise InputError('root is not supported on SunOS: processor sets and pools are live kernel state')
        if self.runner is None:
            raise InputError('no command runner')
        status = parse_psrinfo(self.run_ok(['psrinfo'], 'psrinfo'))
        if not status:
            raise InputError('psrinfo listed no processor')
        self.online = sorted(c for c, s in status.items() if s in ONLINE_STATES)
        self.topology = {'nodes': {}, 'online_cpus': self.online, 'possible_cpus': sorted(status),
                         'offline_cpus': sorted(c for c, s in status.items() if s not in ONLINE_STATES)}
        spec = self.args.get('cpus')
        if self.state == 'absent' and spec is None and not self.persist:
            # A psrset processor set has a number, not a name: only its CPUs tell which is ours.
            raise InputError('cpus is required with state=absent and persist=false on SunOS: a processor set made '
                             'with psrset has no name, so it is found by its CPUs (psrset -i)')
        if self.state == 'present' or spec is not None:
            self.cpus = self._select(spec)
            rest = [c for c in self.online if c not in self.cpus]
            if not rest:
                raise InputError('cpus %s would leave no online CPU for the rest of the system (a processor set '
                                 'is exclusive on SunOS)' % numa.render_cpu_list(self.cpus))
        self.matchers = [ProcessMatcher(spec, index, '/')
                         for index, spec in enumerate(self.args.get('processes') or [])]
        if self.project:
            rc, out, err = self.runner(['projects', '-l', self.project])
            if rc != 0:
                raise InputError('project %r does not exist (projects -l: %s)' % (self.project, (err or out).strip()))
            self.project_attribs = parse_projects_attribs(out)
        if self.state == 'present' and not self.matchers and not self.project and not self.persist:
            raise InputError('nothing to bind: give processes and/or project')

    def _select(self, spec):
        text = str(spec).strip() if not isinstance(spec, (list, tuple)) else None
        if text and text.startswith('node:'):
            groups = self.read_lgroups()
            self.topology['nodes'] = dict((n, {'cpus': g['cpus'], 'memory_bytes': None, 'distances': []})
                                          for n, g in groups.items() if g['kind'].startswith('leaf'))
            nodes = parse_list(text[len('node:'):], 'cpus (lgroup list)')
            missing = [n for n in nodes if n not in self.topology['nodes']]
            if not nodes or missing:
                raise InputError('cpus %r: leaf lgroup(s) %s do not exist (leaf lgroups: %s)' % (
                    text, numa.render_cpu_list(missing), numa.render_cpu_list(self.topology['nodes'])))
            cpus = sorted(set(c for n in nodes for c in self.topology['nodes'][n]['cpus'] if c in self.online))
            if not cpus:
                raise InputError('cpus %r: no online CPU in lgroup(s) %s' % (text, numa.render_cpu_list(nodes)))
            return cpus
        if spec is None:
            raise InputError('cpus is required with state=present')
        cpus = parse_list(spec, 'cpus')
        if not cpus:
            raise InputError('cpus is empty: a processor set needs at least one CPU')
        check_cpus_exist(cpus, self.topology, 'cpus')
        return cpus

    def read_lgroups(self):
        """``lgrpinfo -G -c`` parsed, read once.  -G: the operating system's view of every lgroup;
        without it lgrpinfo shows the caller's view (lgrpinfo.pl: LGRP_VIEW_CALLER), where the
        CPUs a first run moved into a processor set or pool are missing from their board."""
        if self.lgroups is None:
            self.lgroups = parse_lgrpinfo(self.run_ok(['lgrpinfo', '-G', '-c'], 'lgrpinfo -G -c'))
        return self.lgroups

    def _pools_active(self):
        rc, out, err = self.runner(['pooladm'])
        return rc == 0 and bool(parse_pool_info(out)['system'])

    # ------------------------------------------------------------ processes
    def _processes(self):
        """[(what, [pid, ...])] for each matcher and the project."""
        rows = parse_ps(self.run_ok(['ps', '-e', '-o', 'pid=', '-o', 'uid=', '-o', 'project=', '-o', 'args='],
                                    'ps'))
        found = []
        for matcher in self.matchers:
            file_pid = matcher.pid_from_file()
            pids = []
            for pid, uid, project, args in rows:
                status = {'Uid': '%d %d' % (uid, uid)}
                if args and matcher.matches(pid, status, args, file_pid):
                    pids.append(pid)
            found.append((matcher.describe(), pids))
        if self.project:
            found.append(('project=%s' % self.project, [pid for pid, uid, project, args in rows
                                                        if project == self.project]))
        return found

    # ------------------------------------------------------------ bindings
    def find_groups(self):
        """ps: one group per matcher and the project, their bindings not read yet."""
        return [{'what': what, 'pids': pids, 'before': None if pids else {}} for what, pids in self._processes()]

    def query(self, kind, pids):
        argv, parse = QUERIES[kind]
        return parse(self.run_ok(argv + [str(p) for p in pids]))

    def read_ahead(self, kind, target):
        """find_groups(), then each group's bindings up to the first group to bind (all of them in
        check mode): the groups after it are read in apply(), after that binding."""
        groups = self.find_groups()
        for group in groups:
            if group['pids']:
                group['before'] = self.query(kind, group['pids'])
                if to_bind(group['pids'], group['before'], target) and self.gate.open:
                    break
        return groups

    def bind_groups(self, kind, target, groups, bind_argv):
        """Bind each group's pids not bound to ``target`` (outside check mode) and read them back;
        the bindings not read yet are read first.  ``bind_argv(what, pids)`` is the command."""
        done = []
        for group in groups:
            pids, before = group['pids'], group['before']
            if before is None:
                before = self.query(kind, pids)
            todo = to_bind(pids, before, target)
            bound, after = [], before
            if todo and self.gate.write(self.run_ok, bind_argv(group['what'], todo)) is not None:
                bound, after = todo, self.query(kind, pids)
            done.append({'what': group['what'], 'pids': pids, 'before': before, 'bound': bound, 'after': after})
        return done

    # ------------------------------------------------------------ hooks
    def desired(self):
        return {'cpus': numa.render_cpu_list(self.cpus), 'persist': self.persist}

    def project_pool(self):
        """The project's project.pool, as validate() read it."""
        return self.project_attribs.get('project.pool')

    def read_live(self, desired):
        live = self._read_live()
        target = self.pool if self.persist else live.get('set_id')
        if self.state == 'present' and 'groups' in live and (self.gate.check_mode or placement.all_bound(live, target)):
            # Nothing left to change (or check mode): the memory is read before apply() too.
            live['memory'] = placement.read_memory(self, live['groups'])
        return live

    def _read_live(self):
        active = self._pools_active()
        if not self.persist and active:
            raise InputError('the pools facility is active, and psrset cannot change processor sets then: '
                             'use persist=true (a pool), or disable pools with pooladm -d')
        if self.persist:
            return self.pools.read_live(active)
        live = {'pools_active': active}
        live['sets'] = parse_psrset_info(self.run_ok(['psrset', '-i'], 'psrset -i'))
        live['set_id'] = self._find_set(live['sets'])
        if self.state == 'present':
            self._check_free(live['sets'], live['set_id'])
            if live['set_id'] is not None or self.gate.check_mode:
                live['groups'] = self.read_ahead('psrset', live['set_id'])
        return live

    def read_persisted(self, desired):
        return ProjectNow(self.project_pool() if self.project else None)

    def apply(self, desired, live, persisted, module):
        done = self.pools.apply(live, persisted) if self.persist else self._apply_psrset(live)
        if self.state == 'present' and 'memory' not in live and self.gate.open:
            # After the bindings: where the bound processes' shared memory lies (seed 000).
            done['memory'] = placement.read_memory(self, done['groups'])
        return done

    def render(self, result, desired, live, persisted, done):
        result.extra['topology'] = {
            'nodes': dict((str(n), {'cpus': numa.render_cpu_list(i['cpus']), 'memory_bytes': None, 'distances': []})
                          for n, i in self.topology['nodes'].items()),
            'online_cpus': numa.render_cpu_list(self.online),
            'offline_cpus': numa.render_cpu_list(self.topology['offline_cpus'])}
        result.extra['cpus'] = desired['cpus']
        result.extra['mems'] = ''
        records = self.pools.records(live, persisted, done) if self.persist else self._psrset_records(live, done)
        for setting in records:
            result.add(setting)
        memory = done['memory'] if 'memory' in done else live.get('memory')
        if memory is not None:
            target = self.pool if self.persist else self._set_now(live, done)[0]
            result.add(placement.memory_record(self, memory, done['groups'] or live.get('groups') or [], target))

    # ------------------------------------------------------------ psrset
    def _find_set(self, sets):
        # psrset -i lists a set's CPUs in the order they joined it (psrset -c 5 4: ``5 4``).
        for set_id, info in sorted(sets.items()):
            if info['type'] == 'user' and set(info['cpus']) == set(self.cpus):
                return set_id
        return None

    def _check_free(self, sets, set_id):
        """Refuse CPUs that another processor set holds."""
        taken = dict((c, sid) for sid, info in sets.items() if sid != set_id for c in info['cpus'])
        clash = sorted(c for c in self.cpus if c in taken)
        if clash:
            raise InputError('cpus %s: CPU(s) %s already belong to processor set(s) %s (psrset -i)' % (
                numa.render_cpu_list(self.cpus), numa.render_cpu_list(clash), ', '.join(str(taken[c]) for c in clash)))

    @staticmethod
    def _set_now(live, done):
        """(our set id, {'id', 'cpus'} as psrset -i shows it, or None): the new set, or the one found."""
        if done['created'] is not None:
            set_id, sets = done['created'], done['sets']
        else:
            set_id, sets = live['set_id'], live['sets']
        if set_id not in sets:
            return set_id, None
        return set_id, {'id': set_id, 'cpus': numa.render_cpu_list(sets[set_id]['cpus'])}

    def _apply_psrset(self, live):
        """psrset -d; or psrset -c and the new set read back, then the processes bound."""
        done = {'removed': False, 'created': None, 'no_id': False, 'sets': None, 'groups': []}
        if self.state == 'absent':
            if live['set_id'] is not None:
                done['removed'] = self.gate.write(self.run_ok, ['psrset', '-d', str(live['set_id'])]) is not None
            return done
        if live['set_id'] is None:
            self.gate.write(self._new_set, done)
            if done['no_id']:
                return done
        set_id, now = self._set_now(live, done)
        if now is not None and now['cpus'] != numa.render_cpu_list(self.cpus):
            return done
        groups = live['groups'] if 'groups' in live else self.find_groups()
        done['groups'] = self.bind_groups('psrset', set_id, groups,
                                          lambda what, todo: ['psrset', '-b', str(set_id)] + [str(p) for p in todo])
        return done

    def _new_set(self, done):
        """psrset -c, and the new set read back into ``done`` (``no_id`` when psrset printed none)."""
        set_id = self._create_set()
        if set_id is None:
            done['no_id'] = True
            return
        done['created'] = set_id
        done['sets'] = parse_psrset_info(self.run_ok(['psrset', '-i', str(set_id)]))

    def _create_set(self):
        """psrset -c CPUS -> the new set's id (None: it printed none).  psrset.c creates the set
        first and then assigns the CPUs one by one, printing ``created processor set N`` before
        an assignment can fail ("cannot assign processor 4: Device busy"): a set left behind by
        a failed create is removed again, so that the next run does not find its CPUs taken."""
        argv = ['psrset', '-c'] + [str(c) for c in self.cpus]
        rc, out, err = self.run_command(argv)
        set_id = parse_psrset_created(out)
        if rc == 0:
            return set_id
        message = 'psrset -c %s failed (rc=%d): %s' % (' '.join(argv[2:]), rc, (err or out).strip())
        if set_id is not None:
            rc_d, out_d, err_d = self.run_command(['psrset', '-d', str(set_id)])
            message += '; the half-made processor set %d %s' % (
                set_id, 'was removed again' if rc_d == 0 else
                'could not be removed (psrset -d %d: %s)' % (set_id, (err_d or out_d).strip()))
        raise InputError(message)

    def _psrset_records(self, live, done):
        name = 'psrset:%s' % self.name
        cpus = numa.render_cpu_list(self.cpus)
        if self.state == 'absent':
            set_id = live['set_id']
            if set_id is None:
                return [Setting(name, 'psrset', None, None, None, OK, 'no user processor set holds CPUs %s' % cpus)]
            return [Setting(name, 'psrset', None, {'id': set_id, 'cpus': cpus}, None,
                            self.gate.status(None, False), self.gate.did('remove processor set %d' % set_id))]
        desired = {'cpus': cpus}
        if done['no_id']:
            return [Setting(name, 'psrset', desired, None, None, FAILED, 'psrset -c printed no set id')]
        created = live['set_id'] is None
        set_id, now = self._set_now(live, done)
        status, detail = self.gate.status(not created, None), SET_DETAIL
        if now is not None and now['cpus'] != cpus:
            status, detail = FAILED, 'processor set %d reads back CPUs %s' % (set_id, now['cpus'])
        records = [Setting(name, 'psrset', desired, now, None, status,
                           (self.gate.did('create a processor set') + '; ' if created and self.gate.check_mode else '')
                           + detail)]
        for group in done['groups']:
            records.extend(self._psrset_binding_records(group, set_id))
        return records

    def _psrset_binding_records(self, group, set_id):
        what, pids = group['what'], group['pids']
        if not pids:
            return [Setting('processes:%s' % what, what, None, None, None, OK, 'no running process matches')]
        detail = '%s; processor set binding %s' % (what, 'set with psrset -b' if group['bound'] else 'read back')
        if self.project and what.startswith('project='):
            detail += '; new processes of the project are bound only through a pool (persist=true)'
        records = []
        for pid in pids:
            live_ok = group['before'].get(pid) == set_id if set_id is not None else False
            status = self.gate.status(live_ok, None)
            if self.gate.open and group['after'].get(pid) != set_id:
                status = FAILED
            records.append(Setting('pid:%d' % pid, what, {'set': set_id}, {'set': group['after'].get(pid)}, None,
                                   status, detail))
        return records
