# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the resource pool of a SunOS processor set (persist=true):
pool and pset dbhost-<name> in /etc/pooladm.conf (poolcfg), applied with pooladm -c, the
project's project.pool attribute (projmod), and running processes bound with poolbind.
sunos.py runs it; the commands' outputs are parsed in sunos_output.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import FAILED, OK, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.sunos_output import (
    parse_pool_info, pool_commands)

# The static configuration taken in check mode when there is no /etc/pooladm.conf yet.
EMPTY_CONFIG = {'system': None, 'properties': {}, 'pools': {}, 'psets': {}}
TARGET = '/etc/pooladm.conf'


class ResourcePool(object):
    """The pools part of a SunOS run.

    ``plan`` is the SunOSProcessorSet (pool, cpus, state, project, gate, runner, run_ok,
    and the process bindings: find_groups, read_ahead, bind_groups).

    read_live(active) -> {'pools_active', 'static': poolcfg -c info parsed (None: no
    /etc/pooladm.conf yet), 'dynamic': poolcfg -dc info parsed, 'groups': plan.read_ahead()};
    a key is there only when its read comes before the first change: poolcfg reads wait for
    pooladm -e, the dynamic one for pooladm -s, the bindings for poolcfg, pooladm -c and
    projmod.  In check mode nothing changes, so every read is done here.

    apply(live, persisted) -> {'enabled': pooladm -e ran, 'saved': pooladm -s ran, 'static',
    'dynamic': the configuration decided on (read here when read_live() could not),
    'commands': the poolcfg commands run, 'applied': pooladm -c ran, 'dynamic_after': read
    back (the dynamic one when nothing was applied), 'projmod': the projmod argv run or None,
    'groups': plan.bind_groups()}.

    records(live, persisted, done) -> the Settings.
    """

    def __init__(self, plan):
        self.plan = plan

    # ------------------------------------------------------------ decisions
    def want_live(self):
        return numa.render_cpu_list(self.plan.cpus) if self.plan.state == 'present' else None

    def pool_live(self, dynamic):
        """Our pool in a configuration: {'cpus', 'sys_id'}, or None."""
        pool = self.plan.pool
        pset = dynamic['psets'].get(pool)
        if pset is None or pool not in dynamic['pools']:
            return None
        return {'cpus': numa.render_cpu_list(pset['cpus']), 'sys_id': pset['properties'].get('pset.sys_id')}

    def config_change(self, static, dynamic):
        """(poolcfg commands for /etc/pooladm.conf, our pool as running, whether it runs as wanted)."""
        plan = self.plan
        if plan.state == 'absent':
            commands = [cmd for cmd, present in (('destroy pool %s' % plan.pool, plan.pool in static['pools']),
                                                 ('destroy pset %s' % plan.pool, plan.pool in static['psets']))
                        if present]
        else:
            commands = pool_commands(static, plan.pool, plan.cpus)
        live_before = self.pool_live(dynamic)
        want = self.want_live()
        live_ok = (live_before is None) if want is None else (live_before or {}).get('cpus') == want
        return commands, live_before, live_ok

    def reads_back_wrong(self, live_after):
        """Outside check mode: the running configuration is not as wanted after apply()."""
        want = self.want_live()
        return self.plan.gate.open and (live_after or {}).get('cpus') != want and \
            not (want is None and live_after is None)

    def project_change(self, have):
        """(project.pool wanted, whether the project has it already)."""
        pool = self.plan.pool
        want = pool if self.plan.state == 'present' else None
        return want, have == want or (want is None and have != pool)

    def bind_argv(self, what, todo):
        plan = self.plan
        if what.startswith('project='):
            return ['poolbind', '-p', plan.pool, '-i', 'project', plan.project]
        return ['poolbind', '-p', plan.pool, '-i', 'pid'] + [str(p) for p in todo]

    # ------------------------------------------------------------ reads
    def read_static(self):
        """/etc/pooladm.conf as poolcfg -c info reads it, or None when there is none yet."""
        rc, out, err = self.plan.runner(['poolcfg', '-c', 'info'])
        return parse_pool_info(out) if rc == 0 else None

    def read_dynamic(self):
        return parse_pool_info(self.plan.run_ok(['poolcfg', '-dc', 'info'], 'poolcfg -dc info'))

    def read_live(self, active):
        plan = self.plan
        live = {'pools_active': active}
        if not active:
            return live
        live['static'] = self.read_static()
        if live['static'] is None and plan.gate.open:
            return live
        live['dynamic'] = self.read_dynamic()
        if plan.state == 'absent':
            return live
        commands, live_before, live_ok = self.config_change(live['static'] or EMPTY_CONFIG, live['dynamic'])
        project_ok = not plan.project or self.project_change(plan.project_pool())[1]
        if plan.gate.open and (commands or not live_ok or not project_ok):
            return live   # read after apply()'s changes
        live['groups'] = plan.read_ahead('pool', plan.pool)
        return live

    # ------------------------------------------------------------ apply
    def run_commands(self, commands):
        """The poolcfg commands as one transaction: ``poolcfg -f FILE`` parses every command of
        the file and commits /etc/pooladm.conf once, only when all of them succeeded (poolcfg.y:
        pool_conf_commit after yyparse), where one ``poolcfg -c`` per command would leave the
        file half changed when a later one fails."""
        handle, path = tempfile.mkstemp(prefix='dbhost-poolcfg.', suffix='.txt')
        try:
            with os.fdopen(handle, 'w') as stream:
                stream.write(''.join(command + '\n' for command in commands))
            self.plan.run_ok(['poolcfg', '-f', path], 'poolcfg -f (%s)' % '; '.join(commands))
        finally:
            os.unlink(path)

    def apply(self, live, persisted):
        plan = self.plan
        done = {'enabled': False, 'saved': False, 'static': None, 'dynamic': None, 'commands': [], 'applied': False,
                'dynamic_after': None, 'projmod': None, 'groups': []}
        if not live['pools_active']:
            if plan.state == 'absent' or not plan.gate.write(self._enable, done):
                return done
        static = live['static'] if 'static' in live else self.read_static()
        if static is None:
            # The file applied at boot; made from the running configuration when missing.
            static = plan.gate.write(self._save, done)
        dynamic = live['dynamic'] if 'dynamic' in live else self.read_dynamic()
        done.update(static=static, dynamic=dynamic, dynamic_after=dynamic)
        commands, live_before, live_ok = self.config_change(static or EMPTY_CONFIG, dynamic)
        if commands or not live_ok:
            plan.gate.write(self._commit, commands, done)
        if self.reads_back_wrong(self.pool_live(done['dynamic_after'])):
            return done
        if plan.project:
            want, ok = self.project_change(persisted.project_pool)
            if not ok:
                done['projmod'] = plan.gate.write(self._projmod, want)
        if plan.state == 'present':
            groups = live['groups'] if 'groups' in live else plan.find_groups()
            done['groups'] = plan.bind_groups('pool', plan.pool, groups, self.bind_argv)
        return done

    def _enable(self, done):
        self.plan.run_ok(['pooladm', '-e'])
        done['enabled'] = True
        return True

    def _save(self, done):
        """pooladm -s: /etc/pooladm.conf saved from the running configuration; what it holds then."""
        self.plan.run_ok(['pooladm', '-s'])
        done['saved'] = True
        return parse_pool_info(self.plan.run_ok(['poolcfg', '-c', 'info']))

    def _commit(self, commands, done):
        """The poolcfg commands, then pooladm -c, and the running configuration read back."""
        if commands:
            self.run_commands(commands)
        self.plan.run_ok(['pooladm', '-c'])
        done.update(commands=commands, applied=True,
                    dynamic_after=parse_pool_info(self.plan.run_ok(['poolcfg', '-dc', 'info'])))

    def _projmod(self, want):
        """projmod: the project's project.pool set to ``want`` (None: removed); the command run."""
        plan = self.plan
        argv = ['projmod', '-s', '-K', 'project.pool=%s' % want, plan.project] if want else \
            ['projmod', '-r', '-K', 'project.pool=%s' % plan.pool, plan.project]
        plan.run_ok(argv)
        return argv

    # ------------------------------------------------------------ records
    def records(self, live, persisted, done):
        plan = self.plan
        name = 'pool:%s' % plan.pool
        cpus = numa.render_cpu_list(plan.cpus)
        desired = {'cpus': cpus, 'pset': plan.pool} if plan.state == 'present' else None
        records = []
        if not live['pools_active']:
            if plan.state == 'absent':
                return [Setting(name, TARGET, None, None, None, OK, 'the pools facility is not active')]
            records.append(Setting('pools', 'svc:/system/pools', 'enabled', 'disabled', None,
                                   plan.gate.status(False, None), plan.gate.did('enable the pools facility (pooladm -e)')))
            if plan.gate.check_mode:
                records.append(Setting(name, TARGET, desired, None, None, plan.gate.status(False, False),
                                       'would create pool and pset %s with CPUs %s' % (plan.pool, cpus)))
                return records
        config = self.config_record(name, desired, done)
        records.append(config)
        if config.status == FAILED:
            return records
        if plan.project:
            records.append(self.project_record(persisted.project_pool, done))
        for group in done['groups']:
            records.extend(self.binding_records(group))
        return records

    def config_record(self, name, desired, done):
        plan = self.plan
        static = done['static'] or EMPTY_CONFIG
        commands, live_before, live_ok = self.config_change(static, done['dynamic'])
        live_after = self.pool_live(done['dynamic_after'])
        details = []
        if done['applied']:
            details.append('poolcfg: %s; applied with pooladm -c' % '; '.join(commands) if commands else
                           'applied /etc/pooladm.conf with pooladm -c')
        elif commands:
            details.append('would run poolcfg: %s; then pooladm -c' % '; '.join(commands))
        status = plan.gate.status(live_ok, not commands)
        if self.reads_back_wrong(live_after):
            status = FAILED
            details.append('the running configuration reads back %s' % (live_after,))
        persisted = {'cpus': numa.render_cpu_list(static['psets'][plan.pool]['cpus'])} \
            if plan.pool in static['psets'] and not commands else None
        return Setting(name, TARGET, desired, plan.gate.now(live_before, live_after), persisted, status,
                       '; '.join(details))

    def project_record(self, have, done):
        plan = self.plan
        want, ok = self.project_change(have)
        return Setting('project:%s' % plan.project, '/etc/project', want, None, want if done['projmod'] else have,
                       plan.gate.status(None, ok),
                       'project.pool makes new processes of the project start in the pool')

    def binding_records(self, group):
        plan = self.plan
        what, pids = group['what'], group['pids']
        if not pids:
            return [Setting('processes:%s' % what, what, None, None, None, OK, 'no running process matches')]
        records = []
        for pid in pids:
            status = plan.gate.status(group['before'].get(pid) == plan.pool, None)
            if plan.gate.open and group['after'].get(pid) != plan.pool:
                status = FAILED
            records.append(Setting('pid:%d' % pid, what, {'pool': plan.pool}, {'pool': group['after'].get(pid)}, None,
                                   status, '%s; %s' % (what, 'bound with poolbind' if pid in group['bound'] else
                                                       'pool binding read back with poolbind -q')))
        return records
