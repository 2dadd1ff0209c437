# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the SunOS processor set: Solaris/illumos processor sets
(psrset) and resource pools (poolcfg, pooladm, poolbind); their outputs are parsed in
sunos_output.py.

A processor set made with psrset lasts until the next reboot; a pool with its own pset,
written to /etc/pooladm.conf with poolcfg and applied with pooladm -c, is applied again at
boot by svc:/system/pools.  psrset cannot change CPUs while pools are active, so one run
uses one of the two (``persist``).  Every command runs through ``runner(argv)`` ->
(rc, stdout, stderr), so unit tests feed recorded output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import FAILED, OK, Setting, decide_status
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.common import (
    SET_NAME, ProcessMatcher, check_cpus_exist, parse_list)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.sunos_output import (
    parse_lgrpinfo, parse_pool_info, parse_poolbind_query, parse_projects_attribs, parse_ps, parse_psrinfo,
    parse_psrset_created, parse_psrset_info, parse_psrset_query, pool_commands)

POOL_PREFIX = 'dbhost-'
ONLINE_STATES = ('on-line', 'no-intr')


# ------------------------------------------------------------------ the SunOS run
class SunOSProcessorSet(Plan):
    """psrset (persist=false) or a resource pool (persist=true); see the module docs.

    validate() reads the CPUs (psrinfo, lgrpinfo for node:N) and the project; desired() is
    {'cpus': CPU list text, 'persist': bool}; read_live() is {'pools_active': bool} and, for
    psrset, {'sets': psrset -i, 'set_id': ours or None} (refusing psrset while pools are active
    and CPUs another set holds); nothing persisted is read apart (the pool configuration is
    read, changed and read back within apply(), command by command); apply() runs the commands
    (only the reading ones in check mode) and returns the Settings they lead to; render() adds
    the topology and those Settings.
    """

    def __init__(self, args, check_mode=False, runner=None, **kwargs):
        self.args = args
        self.name = args.get('name')
        self.state = args.get('state') or 'present'
        self.root = args.get('root') or '/'
        self.persist = args.get('persist', True) is not False
        self.check_mode = check_mode
        self.runner = runner
        self.pool = POOL_PREFIX + str(self.name)
        self.cpus = []
        self.matchers = []
        self.project = args.get('project')
        self.online = []
        self.topology = None

    def run_ok(self, argv, what=None):
        rc, out, err = self.runner(argv)
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
        if self.state == 'present' or spec is not None:
            self.cpus = self._select(spec)
            rest = [c for c in self.online if c not in self.cpus]
            if not rest:
                raise InputError('cpus %s would leave no online CPU for the rest of the system (a processor set '
                                 'is exclusive on SunOS)' % numa.render_cpu_list(self.cpus))
        self.matchers = [ProcessMatcher(spec, index, '/') for index, spec in enumerate(self.args.get('processes') or [])]
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
            groups = parse_lgrpinfo(self.run_ok(['lgrpinfo', '-c'], 'lgrpinfo -c'))
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

    # ------------------------------------------------------------ hooks
    def desired(self):
        return {'cpus': numa.render_cpu_list(self.cpus), 'persist': self.persist}

    def read_live(self, desired):
        active = self._pools_active()
        if not self.persist and active:
            raise InputError('the pools facility is active, and psrset cannot change processor sets then: '
                             'use persist=true (a pool), or disable pools with pooladm -d')
        live = {'pools_active': active}
        if not self.persist:
            live['sets'] = parse_psrset_info(self.run_ok(['psrset', '-i'], 'psrset -i'))
            live['set_id'] = self._find_set(live['sets'])
            if self.state == 'present':
                self._check_free(live['sets'], live['set_id'])
        return live

    def apply(self, desired, live, persisted, module):
        records = []
        if self.persist:
            self.run_pools(records, live['pools_active'])
        else:
            self.run_psrset(records, live['sets'], live['set_id'])
        return records

    def render(self, result, desired, live, persisted, done):
        result.extra['topology'] = {
            'nodes': dict((str(n), {'cpus': numa.render_cpu_list(i['cpus']), 'memory_bytes': None, 'distances': []})
                          for n, i in self.topology['nodes'].items()),
            'online_cpus': numa.render_cpu_list(self.online),
            'offline_cpus': numa.render_cpu_list(self.topology['offline_cpus'])}
        result.extra['cpus'] = desired['cpus']
        result.extra['mems'] = ''
        for setting in done:
            result.add(setting)

    # ------------------------------------------------------------ psrset
    def _find_set(self, sets):
        for set_id, info in sorted(sets.items()):
            if info['type'] == 'user' and info['cpus'] == self.cpus:
                return set_id
        return None

    def _check_free(self, sets, set_id):
        """Refuse CPUs that another processor set holds."""
        taken = dict((c, sid) for sid, info in sets.items() if sid != set_id for c in info['cpus'])
        clash = sorted(c for c in self.cpus if c in taken)
        if clash:
            raise InputError('cpus %s: CPU(s) %s already belong to processor set(s) %s (psrset -i)' % (
                numa.render_cpu_list(self.cpus), numa.render_cpu_list(clash), ', '.join(str(taken[c]) for c in clash)))

    def run_psrset(self, records, sets, set_id):
        desired = {'cpus': numa.render_cpu_list(self.cpus)}
        name = 'psrset:%s' % self.name
        if self.state == 'absent':
            if set_id is None:
                records.append(Setting(name, 'psrset', None, None, None, OK, 'no user processor set holds CPUs %s'
                                       % desired['cpus']))
                return
            status = decide_status(None, False, self.check_mode)
            if not self.check_mode:
                self.run_ok(['psrset', '-d', str(set_id)])
            records.append(Setting(name, 'psrset', None, {'id': set_id, 'cpus': desired['cpus']}, None, status,
                                   '%s processor set %d' % ('would remove' if self.check_mode else 'removed', set_id)))
            return
        created = set_id is None
        detail = 'processor sets end at reboot; persist=true keeps the binding as a resource pool'
        if created and not self.check_mode:
            set_id = parse_psrset_created(self.run_ok(['psrset', '-c'] + [str(c) for c in self.cpus]))
            if set_id is None:
                records.append(Setting(name, 'psrset', desired, None, None, FAILED, 'psrset -c printed no set id'))
                return
            sets = parse_psrset_info(self.run_ok(['psrset', '-i', str(set_id)]))
        live = {'id': set_id, 'cpus': numa.render_cpu_list(sets[set_id]['cpus'])} if set_id in sets else None
        status = decide_status(not created, None, self.check_mode)
        if live is not None and live['cpus'] != desired['cpus']:
            status, detail = FAILED, 'processor set %d reads back CPUs %s' % (set_id, live['cpus'])
        records.append(Setting(name, 'psrset', desired, live, None, status,
                               ('would create a processor set; ' if created and self.check_mode else '') + detail))
        if status == FAILED:
            return
        for what, pids in self._processes():
            self._bind_psrset(records, what, pids, set_id)

    def _bind_psrset(self, records, what, pids, set_id):
        if not pids:
            records.append(Setting('processes:%s' % what, what, None, None, None, OK, 'no running process matches'))
            return
        before = parse_psrset_query(self.run_ok(['psrset', '-q'] + [str(p) for p in pids]))
        todo = [p for p in pids if set_id is None or before.get(p) != set_id]
        after = before
        if todo and not self.check_mode:
            self.run_ok(['psrset', '-b', str(set_id)] + [str(p) for p in todo])
            after = parse_psrset_query(self.run_ok(['psrset', '-q'] + [str(p) for p in pids]))
        for pid in pids:
            live_ok = before.get(pid) == set_id if set_id is not None else False
            status = decide_status(live_ok, None, self.check_mode)
            if not self.check_mode and after.get(pid) != set_id:
                status = FAILED
            how = 'read back' if not todo or self.check_mode else 'set with psrset -b'
            detail = '%s; processor set binding %s' % (what, how)
            if self.project and what.startswith('project='):
                detail += '; new processes of the project are bound only through a pool (persist=true)'
            records.append(Setting('pid:%d' % pid, what, {'set': set_id}, {'set': after.get(pid)}, None, status, detail))

    # ------------------------------------------------------------ pools
    def run_pools(self, records, active):
        name = 'pool:%s' % self.pool
        desired = {'cpus': numa.render_cpu_list(self.cpus), 'pset': self.pool} if self.state == 'present' else None
        if not active:
            if self.state == 'absent':
                records.append(Setting(name, '/etc/pooladm.conf', None, None, None, OK, 'the pools facility is not active'))
                return
            records.append(Setting('pools', 'svc:/system/pools', 'enabled', 'disabled', None,
                                   decide_status(False, None, self.check_mode),
                                   '%s the pools facility (pooladm -e)' % ('would enable' if self.check_mode else 'enabled')))
            if self.check_mode:
                records.append(Setting(name, '/etc/pooladm.conf', desired, None, None, decide_status(False, False, True),
                                       'would create pool and pset %s with CPUs %s' % (self.pool, desired['cpus'])))
                return
            self.run_ok(['pooladm', '-e'])
        # The file applied at boot; made from the running configuration when missing.
        rc, out, err = self.runner(['poolcfg', '-c', 'info'])
        if rc != 0:
            if self.check_mode:
                static = {'system': None, 'properties': {}, 'pools': {}, 'psets': {}}
            else:
                self.run_ok(['pooladm', '-s'])
                static = parse_pool_info(self.run_ok(['poolcfg', '-c', 'info']))
        else:
            static = parse_pool_info(out)
        dynamic = parse_pool_info(self.run_ok(['poolcfg', '-dc', 'info'], 'poolcfg -dc info'))
        if self.state == 'absent':
            commands = [cmd for cmd, present in (('destroy pool %s' % self.pool, self.pool in static['pools']),
                                                 ('destroy pset %s' % self.pool, self.pool in static['psets']))
                        if present]
        else:
            commands = pool_commands(static, self.pool, self.cpus)
        live_before = self._pool_live(dynamic)
        persisted_ok = not commands
        want_live = None if self.state == 'absent' else desired['cpus']
        live_ok = (live_before is None) if want_live is None else (live_before or {}).get('cpus') == want_live
        details = []
        dynamic_after = dynamic
        if (commands or not live_ok) and not self.check_mode:
            for command in commands:
                self.run_ok(['poolcfg', '-c', command])
            self.run_ok(['pooladm', '-c'])
            dynamic_after = parse_pool_info(self.run_ok(['poolcfg', '-dc', 'info']))
            details.append('poolcfg: %s; applied with pooladm -c' % '; '.join(commands) if commands else
                           'applied /etc/pooladm.conf with pooladm -c')
        elif commands:
            details.append('would run poolcfg: %s; then pooladm -c' % '; '.join(commands))
        live_after = self._pool_live(dynamic_after)
        status = decide_status(live_ok, persisted_ok, self.check_mode)
        if not self.check_mode and (live_after or {}).get('cpus') != want_live and \
                not (want_live is None and live_after is None):
            status = FAILED
            details.append('the running configuration reads back %s' % (live_after,))
        persisted = {'cpus': numa.render_cpu_list(static['psets'][self.pool]['cpus'])} \
            if self.pool in static['psets'] and not commands else None
        records.append(Setting(name, '/etc/pooladm.conf', desired, live_after if not self.check_mode else live_before,
                               persisted, status, '; '.join(details)))
        if status == FAILED or self.state == 'absent':
            if self.state == 'absent' and self.project:
                self._project_attribute(records)
            return
        if self.project:
            self._project_attribute(records)
        for what, pids in self._processes():
            self._bind_pool(records, what, pids)

    def _pool_live(self, dynamic):
        pset = dynamic['psets'].get(self.pool)
        if pset is None or self.pool not in dynamic['pools']:
            return None
        return {'cpus': numa.render_cpu_list(pset['cpus']), 'sys_id': pset['properties'].get('pset.sys_id')}

    def _project_attribute(self, records):
        have = self.project_attribs.get('project.pool')
        want = self.pool if self.state == 'present' else None
        ok = have == want or (want is None and have != self.pool)
        status = decide_status(None, ok, self.check_mode)
        if not ok and not self.check_mode:
            if want:
                self.run_ok(['projmod', '-s', '-K', 'project.pool=%s' % want, self.project])
            else:
                self.run_ok(['projmod', '-r', '-K', 'project.pool=%s' % self.pool, self.project])
        records.append(Setting('project:%s' % self.project, '/etc/project', want, None, have if ok or self.check_mode
                               else want, status, 'project.pool makes new processes of the project start in the pool'))

    def _bind_pool(self, records, what, pids):
        if not pids:
            records.append(Setting('processes:%s' % what, what, None, None, None, OK, 'no running process matches'))
            return
        before = parse_poolbind_query(self.run_ok(['poolbind', '-q'] + [str(p) for p in pids]))
        todo = [p for p in pids if before.get(p) != self.pool]
        after = before
        if todo and not self.check_mode:
            if what.startswith('project='):
                self.run_ok(['poolbind', '-p', self.pool, '-i', 'project', self.project])
            else:
                self.run_ok(['poolbind', '-p', self.pool, '-i', 'pid'] + [str(p) for p in todo])
            after = parse_poolbind_query(self.run_ok(['poolbind', '-q'] + [str(p) for p in pids]))
        for pid in pids:
            status = decide_status(before.get(pid) == self.pool, None, self.check_mode)
            if not self.check_mode and after.get(pid) != self.pool:
                status = FAILED
            records.append(Setting('pid:%d' % pid, what, {'pool': self.pool}, {'pool': after.get(pid)}, None, status,
                                   '%s; %s' % (what, 'bound with poolbind' if pid in todo and not self.check_mode else
                                               'pool binding read back with poolbind -q')))
