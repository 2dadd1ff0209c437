# -*- coding: utf-8 -*-
"""SunOS processor sets and pools: parsers on output recorded in the formats Oracle's
documentation and the illumos sources show, and the module's command paths against a
small Solaris stand-in that answers in those same formats."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Result, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import common
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import sunos_output as sol
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import make_plan

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


# ------------------------------------------------------------------ parsers
def test_psrinfo():
    assert sol.parse_psrinfo(fixture('psrinfo.txt')) == {
        0: 'on-line', 1: 'on-line', 2: 'on-line', 3: 'off-line', 4: 'on-line', 5: 'no-intr'}


def test_psrset_outputs():
    assert sol.parse_psrset_info(fixture('psrset-i.txt')) == {
        1: {'type': 'user', 'cpus': [4, 5]}, 2: {'type': 'system', 'cpus': [2]}, 3: {'type': 'user', 'cpus': []}}
    assert sol.parse_psrset_created(fixture('psrset-c.txt')) == 1
    assert sol.parse_psrset_created('psrset: cannot assign processor 4: Device busy\n') is None
    assert sol.parse_psrset_query(fixture('psrset-q.txt')) == {2012: 1, 2013: None}
    assert sol.parse_psrset_query(fixture('psrset-b.txt')) == {2013: 1, 2015: 1}


def test_poolbind_lgrpinfo_projects():
    assert sol.parse_poolbind_query(fixture('poolbind-q.txt')) == {2012: 'pool_default', 2013: 'dbhost-oracle'}
    groups = sol.parse_lgrpinfo(fixture('lgrpinfo-c.txt'))
    assert groups[1] == {'kind': 'leaf', 'cpus': [0, 1, 2]}
    assert groups[2]['cpus'] == [3, 4, 5] and groups[0]['kind'] == 'root'
    attribs = sol.parse_projects_attribs(fixture('projects-l.txt'))
    assert attribs == {'project.max-shm-memory': '(privileged,17179869184,deny)', 'project.pool': 'dbhost-oracle'}


def test_pool_info():
    config = sol.parse_pool_info(fixture('pooladm.txt'))
    assert config['system'] == 'host'
    assert config['properties']['system.bind-default'] == 'true'
    assert config['pools']['dbhost-oracle']['pset'] == 'dbhost-oracle'
    assert config['pools']['pool_default']['pset'] == 'pset_default'
    assert config['pools']['dbhost-oracle']['properties']['pool.scheduler'] == 'FSS'
    assert config['psets']['dbhost-oracle']['cpus'] == [4, 5]
    assert config['psets']['dbhost-oracle']['properties']['pset.max'] == '2'
    assert config['psets']['pset_default']['cpus'] == [0, 1, 2]
    assert config['psets']['pset_default']['cpu_status'][1] == 'on-line'
    assert sol.default_pset(config) == 'pset_default'


def test_pool_commands():
    config = sol.parse_pool_info(fixture('pooladm.txt'))
    assert sol.pool_commands(config, 'dbhost-oracle', [4, 5]) == []
    assert sol.pool_commands(config, 'dbhost-oracle', [2, 4]) == [
        'transfer to pset pset_default (cpu 5)', 'transfer to pset dbhost-oracle (cpu 2)']
    assert sol.pool_commands(config, 'dbhost-oracle', [1, 2, 4]) == [
        'modify pset dbhost-oracle (uint pset.min = 3; uint pset.max = 3)',
        'transfer to pset pset_default (cpu 5)', 'transfer to pset dbhost-oracle (cpu 1; cpu 2)']
    assert sol.pool_commands(config, 'dbhost-pg', [1]) == [
        'create pset dbhost-pg (uint pset.min = 1; uint pset.max = 1)', 'create pool dbhost-pg',
        'associate pool dbhost-pg (pset dbhost-pg)', 'transfer to pset dbhost-pg (cpu 1)']


# ------------------------------------------------------------------ a Solaris stand-in
def collapse(cpus):
    """lgrpinfo.pl's lgrp_collapse: ``0-2 5``."""
    return numa.render_cpu_list(cpus).replace(',', ' ')


def render_pool_info(config):
    lines = ['system %s' % config['system'], '        string  system.comment',
             '        int     system.version 1', '        boolean system.bind-default true', '']
    for name, pool in sorted(config['pools'].items()):
        lines += ['        pool %s' % name, '                boolean pool.active true',
                  '                boolean pool.default %s' % ('true' if name == 'pool_default' else 'false'),
                  '                pset    %s' % pool['pset'], '']
    for name, pset in sorted(config['psets'].items()):
        lines += ['        pset %s' % name, '                int     pset.sys_id %s' % pset['sys_id'],
                  '                boolean pset.default %s' % ('true' if name == 'pset_default' else 'false'),
                  '                uint    pset.min %d' % pset['min'], '                uint    pset.max %d' % pset['max'],
                  '                uint    pset.size %d' % len(pset['cpus']), '']
        for cpu in pset['cpus']:
            lines += ['                cpu', '                        int     cpu.sys_id %d' % cpu,
                      '                        string  cpu.status on-line', '']
    return '\n'.join(lines) + '\n'


class Solaris(object):
    """Answers the commands the module runs, in the documented output formats."""

    MUTATING = ('psrset -c', 'psrset -b', 'psrset -d', 'pooladm -e', 'pooladm -s', 'pooladm -c', 'poolcfg -f',
                'poolcfg -c create', 'poolcfg -c modify', 'poolcfg -c associate', 'poolcfg -c transfer',
                'poolcfg -c destroy', 'projmod', 'poolbind -p')

    def __init__(self, cpus=6, offline=(3,), pools=False):
        self.cpus = dict((c, 'off-line' if c in offline else 'on-line') for c in range(cpus))
        self.sets = {}
        self.bindings = {}
        self.pools_active = pools
        base = {'system': 'host', 'pools': {'pool_default': {'pset': 'pset_default'}},
                'psets': {'pset_default': {'sys_id': -1, 'min': 1, 'max': 65536,
                                           'cpus': [c for c in self.cpus if c not in offline]}}}
        self.dynamic = copy.deepcopy(base) if pools else None
        self.static = copy.deepcopy(base) if pools else None
        self.pool_bindings = {}
        self.processes = [(2012, 100, 'user.oracle', 'ora_pmon_ORCL'), (2013, 100, 'user.oracle', 'ora_dbw0_ORCL'),
                          (2100, 0, 'system', '/usr/sbin/cron')]
        self.project_pool = None
        self.calls = []
        self.poolcfg_files = []
        self.poolcfg_fails = ()
        self.busy_cpus = ()
        # The boards, as lgrpinfo -G shows them (every CPU of each leaf lgroup).
        self.lgroups = {1: [0, 1, 2], 2: [3, 4, 5]}
        # The SGA as pmap -Ls shows it: [(lgroup or None, Kbytes)]; on board 2 (CPUs 3-5) by default.
        self.sga = [(2, 4194304), (None, 262144)]

    def mutations(self):
        return [c for c in self.calls if any(c.startswith(m) for m in self.MUTATING)]

    def __call__(self, argv):
        self.calls.append(' '.join(argv[:2] + ['FILE'] if argv[:2] == ['poolcfg', '-f'] else argv))
        cmd, args = argv[0], argv[1:]
        handler = getattr(self, 'do_' + cmd)
        return handler(args)

    def do_psrinfo(self, args):
        return 0, ''.join('%d\t%-8s  since 07/15/2003 10:24:40\n' % (c, s) for c, s in sorted(self.cpus.items())), ''

    def do_lgrpinfo(self, args):
        """lgrpinfo.pl's -c output: without -G the caller's view, where CPUs in a processor set
        other than the caller's (pset_default) are missing (LGRP_VIEW_CALLER)."""
        taken = set(c for cpus in self.sets.values() for c in cpus)
        if self.dynamic:
            taken |= set(c for name, pset in self.dynamic['psets'].items() if name != 'pset_default'
                         for c in pset['cpus'])
        lines = []
        for lgroup, cpus in [(0, sorted(c for cpus in self.lgroups.values() for c in cpus))] + \
                sorted(self.lgroups.items()):
            lines.append('lgroup %d (%s):' % (lgroup, 'root' if lgroup == 0 else 'leaf'))
            shown = cpus if '-G' in args else [c for c in cpus if c not in taken]
            if shown:
                lines.append('\t%s %s' % ('CPU:' if len(shown) == 1 else 'CPUs:', collapse(shown)))
        return 0, '\n'.join(lines) + '\n', ''

    def do_pmap(self, args):
        """pmap -Ls PID...: the SGA (ISM) on the lgroups of self.sga, in pmap.c's -L format."""
        assert args[0] == '-Ls'
        out = ''
        for pid in args[1:]:
            out += '%s:\t%s\n' % (pid, dict((p, a) for p, u, j, a in self.processes)[int(pid)])
            out += '         Address       Bytes Pgsz Mode   Lgrp Mapped File\n'
            address = 0x380000000
            for lgroup, kbytes in self.sga:
                out += '%016X %10dK 256M rwxsR-%s [ ism shmid=0x2e ]\n' % (
                    address, kbytes, '   -' if lgroup is None else '%4d' % lgroup)
                address += kbytes * 1024
            out += '         total  %11dK\n' % sum(k for l, k in self.sga)
        return 0, out, ''

    def do_ps(self, args):
        return 0, ''.join('%6d %5d %s %s\n' % row for row in self.processes), ''

    def do_projects(self, args):
        if args[-1] != 'user.oracle':
            return 1, '', 'projects: project "%s" does not exist\n' % args[-1]
        text = 'user.oracle\n\tprojid : 100\n\tattribs: project.max-shm-memory=(privileged,17179869184,deny)\n'
        if self.project_pool:
            text += '\t         project.pool=%s\n' % self.project_pool
        return 0, text, ''

    def do_projmod(self, args):
        if args[0] == '-s':
            self.project_pool = args[2].split('=', 1)[1]
        else:
            self.project_pool = None
        return 0, '', ''

    # psrset ---------------------------------------------------------
    def _info(self, set_id):
        cpus = self.sets[set_id]
        body = ' empty' if not cpus else (' processors ' if len(cpus) > 1 else ' processor ') + \
            ' '.join(str(c) for c in cpus)
        return 'user processor set %d:%s\n' % (set_id, body)

    def do_psrset(self, args):
        if self.pools_active and args[0] in ('-c', '-a', '-d'):
            return 1, '', 'psrset: cannot create processor set: Operation not supported\n'
        if args[0] == '-i':
            ids = [int(a) for a in args[1:]] or sorted(self.sets)
            return 0, ''.join(self._info(i) for i in ids), ''
        if args[0] == '-c':
            # psrset.c: pset_create() and ``created processor set N`` first, then each CPU
            # assigned in the order given; a CPU that cannot move fails alone (exit 1).
            set_id = max(self.sets or [0]) + 1
            self.sets[set_id] = []
            out, err = 'created processor set %d\n' % set_id, ''
            for cpu in args[1:]:
                if int(cpu) in self.busy_cpus:
                    err += 'psrset: cannot assign processor %s: Device busy\n' % cpu
                    continue
                self.sets[set_id].append(int(cpu))
                out += 'processor %s: was not assigned, now %d\n' % (cpu, set_id)
            return (1 if err else 0), out, err
        if args[0] == '-d':
            del self.sets[int(args[1])]
            return 0, 'removed processor set %s\n' % args[1], ''
        if args[0] == '-q':
            return 0, ''.join('process id %s: %s\n' % (p, self.bindings.get(int(p), 'not bound')) for p in args[1:]), ''
        if args[0] == '-b':
            out = ''
            for pid in args[2:]:
                old = self.bindings.get(int(pid))
                self.bindings[int(pid)] = int(args[1])
                out += 'process id %s: was %s, now %s\n' % (pid, 'not bound' if old is None else old, args[1])
            return 0, out, ''
        raise AssertionError(args)

    # pools ----------------------------------------------------------
    def do_pooladm(self, args):
        if not args:
            if not self.pools_active:
                return 1, '', "pooladm: couldn't open pools state file: Facility is not active\n"
            return 0, render_pool_info(self.dynamic), ''
        if args == ['-e']:
            self.pools_active = True
            self.dynamic = {'system': 'host', 'pools': {'pool_default': {'pset': 'pset_default'}},
                            'psets': {'pset_default': {'sys_id': -1, 'min': 1, 'max': 65536,
                                                       'cpus': [c for c, s in self.cpus.items() if s == 'on-line']}}}
            return 0, '', ''
        if args == ['-s']:
            self.static = copy.deepcopy(self.dynamic)
            return 0, '', ''
        if args == ['-c']:
            self.dynamic = copy.deepcopy(self.static)
            for number, (name, pset) in enumerate(sorted(self.dynamic['psets'].items())):
                if name != 'pset_default':
                    pset['sys_id'] = number + 1
            return 0, '', ''
        raise AssertionError(args)

    def do_poolcfg(self, args):
        dynamic = args[0] == '-dc'
        config = self.dynamic if dynamic else self.static
        if config is None:
            return 1, '', 'poolcfg: cannot load configuration from /etc/pooladm.conf: No such file or directory\n'
        if args[0] == '-f':
            # poolcfg.y: every command of the file is run on the configuration in memory, and
            # pool_conf_commit() writes it once, after the last one succeeded.
            with open(args[1]) as handle:
                self.poolcfg_files.append(handle.read())
            edited = copy.deepcopy(config)
            for command in self.poolcfg_files[-1].splitlines():
                if command in self.poolcfg_fails:
                    return 1, '', 'poolcfg: cannot process command: %s\n' % command
                self._poolcfg(edited, command)
            self.static = edited
            return 0, '', ''
        if args[1] == 'info':
            return 0, render_pool_info(config), ''
        return self._poolcfg(config, args[1])

    def _poolcfg(self, config, command):
        match = re.match(r'^create pset (\S+) \(uint pset.min = (\d+); uint pset.max = (\d+)\)$', command)
        if match:
            config['psets'][match.group(1)] = {'sys_id': -2, 'min': int(match.group(2)), 'max': int(match.group(3)),
                                               'cpus': []}
            return 0, '', ''
        match = re.match(r'^modify pset (\S+) \(uint pset.min = (\d+); uint pset.max = (\d+)\)$', command)
        if match:
            config['psets'][match.group(1)].update(min=int(match.group(2)), max=int(match.group(3)))
            return 0, '', ''
        match = re.match(r'^create pool (\S+)$', command)
        if match:
            config['pools'][match.group(1)] = {'pset': 'pset_default'}
            return 0, '', ''
        match = re.match(r'^associate pool (\S+) \(pset (\S+)\)$', command)
        if match:
            config['pools'][match.group(1)]['pset'] = match.group(2)
            return 0, '', ''
        match = re.match(r'^transfer to pset (\S+) \((.*)\)$', command)
        if match:
            for cpu in [int(part.split()[1]) for part in match.group(2).split(';')]:
                for pset in config['psets'].values():
                    if cpu in pset['cpus']:
                        pset['cpus'].remove(cpu)
                config['psets'][match.group(1)]['cpus'] = sorted(config['psets'][match.group(1)]['cpus'] + [cpu])
            return 0, '', ''
        match = re.match(r'^destroy (pool|pset) (\S+)$', command)
        if match:
            if match.group(1) == 'pset':
                config['psets']['pset_default']['cpus'] = sorted(
                    config['psets']['pset_default']['cpus'] + config['psets'][match.group(2)]['cpus'])
            del config[match.group(1) + 's'][match.group(2)]
            return 0, '', ''
        raise AssertionError(command)

    def do_poolbind(self, args):
        if args[0] == '-q':
            return 0, ''.join('%s\t%s\n' % (p, self.pool_bindings.get(int(p), 'pool_default')) for p in args[1:]), ''
        pool, kind, ids = args[1], args[3], args[4:]
        if kind == 'project':
            for pid, uid, project, cmd in self.processes:
                if project == ids[0]:
                    self.pool_bindings[pid] = pool
        else:
            for pid in ids:
                self.pool_bindings[int(pid)] = pool
        return 0, '', ''


def sunos_plan(solaris, args, check_mode=False):
    return make_plan('processor_set', args, registry.Context(check_mode, solaris, system_name='SunOS'))


def run(solaris, args, check_mode=False):
    return sunos_plan(solaris, args, check_mode).run()


def statuses(result):
    return [(s['name'], s['status']) for s in result.as_dict()['settings']]


# ------------------------------------------------------------------ psrset path
PSRSET_ARGS = {'name': 'oracle', 'cpus': '4-5', 'persist': False, 'processes': [{'pattern': '^ora_'}]}


def test_psrset_check_mode_changes_nothing():
    solaris = Solaris()
    result = run(solaris, PSRSET_ARGS, check_mode=True)
    assert solaris.mutations() == []
    assert result.changed is True
    assert statuses(result)[0] == ('psrset:oracle', 'drift')


def test_psrset_creates_binds_reads_back_then_idempotent():
    solaris = Solaris()
    result = run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == ['psrset -c 4 5', 'psrset -b 1 2012 2013']
    assert statuses(result) == [('psrset:oracle', 'changed'), ('pid:2012', 'changed'), ('pid:2013', 'changed'),
                                ('memory:oracle', 'ok')]
    record = result.as_dict()['settings'][0]
    assert record['live'] == {'id': 1, 'cpus': '4-5'}
    assert 'end at reboot' in record['detail']
    assert result.as_dict()['settings'][1]['live'] == {'set': 1}

    solaris.calls = []
    again = run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == []
    assert again.changed is False
    assert [s for n, s in statuses(again)] == ['ok', 'ok', 'ok', 'ok']


def test_psrset_project_binds_its_processes():
    solaris = Solaris()
    result = run(solaris, {'name': 'oracle', 'cpus': '4-5', 'persist': False, 'project': 'user.oracle'})
    assert 'psrset -b 1 2012 2013' in solaris.mutations()
    assert 'only through a pool' in result.as_dict()['settings'][1]['detail']


def test_psrset_absent_removes_the_set():
    solaris = Solaris()
    run(solaris, PSRSET_ARGS)
    result = run(solaris, {'name': 'oracle', 'cpus': '4-5', 'persist': False, 'state': 'absent'})
    assert statuses(result) == [('psrset:oracle', 'changed')]
    assert solaris.sets == {}


@pytest.mark.parametrize('args, message', [
    ({'cpus': '3-4'}, 'CPU(s) 3 are offline'),
    ({'cpus': '9'}, 'CPU(s) 9 do not exist'),
    ({'cpus': '0-2,4-5'}, 'leave no online CPU'),
    ({'cpus': ''}, 'cpus is empty'),
    ({'cpus': 'node:7'}, 'lgroup(s) 7 do not exist'),
    ({'cpus': '4', 'service': 'oracle'}, 'Linux (systemd) option'),
    ({'cpus': '4', 'project': 'user.nobody'}, "project 'user.nobody' does not exist"),
    ({'state': 'absent'}, 'cpus is required with state=absent and persist=false'),
])
def test_sunos_bad_input_refused_before_any_change(args, message):
    solaris = Solaris()
    with pytest.raises(common.InputError, match=re.escape(message).replace('\\.', '.')):
        run(solaris, dict({'name': 'oracle', 'persist': False, 'processes': [{'pattern': 'x'}]}, **args))
    assert solaris.mutations() == []


def test_psrset_refuses_cpus_of_another_set():
    solaris = Solaris()
    solaris.sets[1] = [5]
    with pytest.raises(common.InputError, match=r'CPU\(s\) 5 already belong to processor set\(s\) 1'):
        run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == []


def test_psrset_refused_while_pools_are_active():
    solaris = Solaris(pools=True)
    with pytest.raises(common.InputError, match='use persist=true'):
        run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == []


def test_node_selects_the_leaf_lgroup():
    solaris = Solaris(offline=())
    result = run(solaris, dict(PSRSET_ARGS, cpus='node:2'))
    assert result.as_dict()['cpus'] == '3-5'
    assert result.as_dict()['topology']['nodes']['2']['cpus'] == '3-5'
    assert 'psrset -c 3 4 5' in solaris.mutations()


# ------------------------------------------------------------------ pools path
POOL_ARGS = {'name': 'oracle', 'cpus': '4-5', 'persist': True, 'project': 'user.oracle'}


def test_pool_check_mode_changes_nothing():
    solaris = Solaris(pools=False)
    result = run(solaris, POOL_ARGS, check_mode=True)
    assert solaris.mutations() == []
    assert statuses(result) == [('pools', 'drift'), ('pool:dbhost-oracle', 'drift')]


def test_pool_enables_facility_writes_config_applies_and_binds_project():
    solaris = Solaris(pools=False)
    result = run(solaris, POOL_ARGS)
    assert solaris.mutations() == [
        'pooladm -e', 'pooladm -s', 'poolcfg -f FILE', 'pooladm -c',
        'projmod -s -K project.pool=dbhost-oracle user.oracle',
        'poolbind -p dbhost-oracle -i project user.oracle',
    ]
    assert statuses(result) == [('pools', 'changed'), ('pool:dbhost-oracle', 'changed'),
                                ('project:user.oracle', 'changed'), ('pid:2012', 'changed'), ('pid:2013', 'changed'),
                                ('memory:oracle', 'ok')]
    assert solaris.poolcfg_files == [
        'create pset dbhost-oracle (uint pset.min = 2; uint pset.max = 2)\n'
        'create pool dbhost-oracle\n'
        'associate pool dbhost-oracle (pset dbhost-oracle)\n'
        'transfer to pset dbhost-oracle (cpu 4; cpu 5)\n']
    pool = result.as_dict()['settings'][1]
    assert pool['live']['cpus'] == '4-5'
    assert solaris.dynamic['psets']['pset_default']['cpus'] == [0, 1, 2]

    solaris.calls = []
    again = run(solaris, POOL_ARGS)
    assert solaris.mutations() == []
    assert again.changed is False
    assert all(s == 'ok' for n, s in statuses(again))
    assert again.as_dict()['settings'][0]['persisted'] == {'cpus': '4-5'}


def test_pool_grows_and_shrinks_with_transfers():
    solaris = Solaris(pools=True)
    run(solaris, POOL_ARGS)
    solaris.calls = []
    result = run(solaris, dict(POOL_ARGS, cpus='2,4'))
    assert solaris.mutations()[:2] == ['poolcfg -f FILE', 'pooladm -c']
    assert solaris.poolcfg_files[-1] == (
        'transfer to pset pset_default (cpu 5)\ntransfer to pset dbhost-oracle (cpu 2)\n')
    assert result.as_dict()['settings'][0]['live']['cpus'] == '2,4'


def test_pool_absent_destroys_pool_and_pset_and_clears_project():
    solaris = Solaris(pools=True)
    run(solaris, POOL_ARGS)
    solaris.calls = []
    result = run(solaris, {'name': 'oracle', 'state': 'absent', 'persist': True, 'project': 'user.oracle'})
    assert solaris.mutations() == ['poolcfg -f FILE', 'pooladm -c', 'projmod -r -K project.pool=dbhost-oracle user.oracle']
    assert solaris.poolcfg_files[-1] == 'destroy pool dbhost-oracle\ndestroy pset dbhost-oracle\n'
    assert statuses(result) == [('pool:dbhost-oracle', 'changed'), ('project:user.oracle', 'changed')]
    assert 'dbhost-oracle' not in solaris.dynamic['psets']


# ------------------------------------------------------------------ the hooks one by one
def walk(value):
    """The value and everything inside its dicts, lists and tuples."""
    found = [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    for item in items:
        found.extend(walk(item))
    return found


def hooks(solaris, args, check_mode=False):
    """Plan.run() hook by hook: (commands the read hooks ran, commands apply() ran, done, result)."""
    processor_set = sunos_plan(solaris, args, check_mode)
    processor_set.validate()
    desired = processor_set.desired()
    live = processor_set.read_live(desired)
    persisted = processor_set.read_persisted(desired)
    reads = list(solaris.calls)
    done = processor_set.apply(desired, live, persisted, None)
    applied = solaris.calls[len(reads):]
    result = Result(check_mode)
    processor_set.render(result, desired, live, persisted, done)
    processor_set.explain(result)
    return reads, applied, done, result


def mutating(calls):
    return [c for c in calls if any(c.startswith(m) for m in Solaris.MUTATING)]


@pytest.mark.parametrize('args, pools', [
    (dict(PSRSET_ARGS, project='user.oracle'), False),
    (POOL_ARGS, False),
    (POOL_ARGS, True),
])
def test_apply_builds_no_record_and_render_builds_them_all(args, pools):
    by_module = Solaris(pools=pools)
    expected = run(by_module, args)
    solaris = Solaris(pools=pools)
    reads, applied, done, result = hooks(solaris, args)
    assert [v for v in walk(done) if isinstance(v, Setting)] == []
    assert result.as_dict() == expected.as_dict() and result.changed is True
    assert solaris.calls == by_module.calls
    assert mutating(reads) == [] and mutating(applied) != []


@pytest.mark.parametrize('args, pools', [(PSRSET_ARGS, False), (POOL_ARGS, False), (POOL_ARGS, True)])
def test_check_mode_reads_everything_before_apply(args, pools):
    solaris = Solaris(pools=pools)
    reads, applied, done, result = hooks(solaris, args, check_mode=True)
    assert applied == [] and mutating(reads) == []
    assert result.as_dict() == run(Solaris(pools=pools), args, check_mode=True).as_dict()


def test_an_unchanged_run_reads_everything_before_apply():
    solaris = Solaris(pools=True)
    run(solaris, POOL_ARGS)
    solaris.calls = []
    reads, applied, done, result = hooks(solaris, POOL_ARGS)
    assert applied == [] and result.changed is False
    assert reads[-4:] == ['ps -e -o pid= -o uid= -o project= -o args=', 'poolbind -q 2012 2013',
                          'lgrpinfo -G -c', 'pmap -Ls 2012 2013']


def test_reads_that_follow_a_change_keep_their_place():
    """poolcfg reads wait for pooladm -e, the dynamic one for pooladm -s; the bindings for the pool and
    projmod; a second group's bindings for the first group's psrset -b (the same processes)."""
    solaris = Solaris(pools=False)
    run(solaris, POOL_ARGS)
    assert solaris.calls == [
        'psrinfo', 'projects -l user.oracle', 'pooladm', 'pooladm -e', 'poolcfg -c info', 'pooladm -s',
        'poolcfg -c info', 'poolcfg -dc info', 'poolcfg -f FILE', 'pooladm -c', 'poolcfg -dc info',
        'projmod -s -K project.pool=dbhost-oracle user.oracle', 'ps -e -o pid= -o uid= -o project= -o args=',
        'poolbind -q 2012 2013', 'poolbind -p dbhost-oracle -i project user.oracle', 'poolbind -q 2012 2013',
        'lgrpinfo -G -c', 'pmap -Ls 2012 2013']
    solaris = Solaris()
    solaris.sets[1] = [4, 5]
    result = run(solaris, dict(PSRSET_ARGS, project='user.oracle'))
    assert solaris.calls[3:] == [
        'psrset -i', 'ps -e -o pid= -o uid= -o project= -o args=', 'psrset -q 2012 2013', 'psrset -b 1 2012 2013',
        'psrset -q 2012 2013', 'psrset -q 2012 2013', 'lgrpinfo -G -c', 'pmap -Ls 2012 2013']
    assert statuses(result) == [('psrset:oracle', 'ok'), ('pid:2012', 'changed'), ('pid:2013', 'changed'),
                                ('pid:2012', 'ok'), ('pid:2013', 'ok'), ('memory:oracle', 'ok')]


# ------------------------------------------------------------------ issue 45: reruns and partial failures
def test_lgrpinfo_one_cpu_lgroup_is_read():
    """lgrpinfo.pl's lgrp_showcpus: ``CPU: 6`` for one CPU, ``CPUs: 0-2 5`` for more."""
    text = 'lgroup 3 (leaf):\n\tChildren: none, Parent: 0\n\tCPU: 6\nlgroup 4 (leaf):\n\tCPUs: 0-2 5\n'
    assert sol.parse_lgrpinfo(text) == {3: {'kind': 'leaf', 'cpus': [6]}, 4: {'kind': 'leaf', 'cpus': [0, 1, 2, 5]}}


def test_node_selection_on_a_one_cpu_board():
    solaris = Solaris(offline=())
    solaris.lgroups = {1: [0, 1, 2, 3, 4], 2: [5]}
    result = run(solaris, dict(PSRSET_ARGS, cpus='node:2'))
    assert result.as_dict()['cpus'] == '5'
    assert 'psrset -c 5' in solaris.mutations()


@pytest.mark.parametrize('persist', [False, True])
def test_node_rerun_after_the_board_moved_into_the_set(persist):
    """The second run reads the OS view (lgrpinfo -G): the board whose CPUs the first run moved
    into the set or pool still has them, so the same set is found and nothing changes."""
    solaris = Solaris(offline=(), pools=persist)
    args = dict(PSRSET_ARGS, cpus='node:2', persist=persist)
    run(solaris, args)
    assert 'lgrpinfo -G -c' in solaris.calls
    solaris.calls = []
    again = run(solaris, args)
    assert solaris.mutations() == []
    assert again.changed is False and again.as_dict()['cpus'] == '3-5'


def test_psrset_set_listed_in_another_order_is_ours():
    """psrset -i lists CPUs in the order they were assigned: ``psrset -c 5 4`` shows ``5 4``."""
    solaris = Solaris()
    solaris.sets[1] = [5, 4]
    assert sol.parse_psrset_info(solaris.do_psrset(['-i'])[1]) == {1: {'type': 'user', 'cpus': [5, 4]}}
    result = run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == ['psrset -b 1 2012 2013']
    assert statuses(result)[0] == ('psrset:oracle', 'ok')


def test_failed_psrset_create_removes_the_half_made_set_and_the_rerun_works():
    solaris = Solaris()
    solaris.busy_cpus = (5,)
    with pytest.raises(common.InputError, match=r'cannot assign processor 5: Device busy.*set 1 was removed again'):
        run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == ['psrset -c 4 5', 'psrset -d 1']
    assert solaris.sets == {}
    solaris.busy_cpus = ()
    solaris.calls = []
    result = run(solaris, PSRSET_ARGS)
    assert solaris.mutations() == ['psrset -c 4 5', 'psrset -b 1 2012 2013']
    assert statuses(result)[0] == ('psrset:oracle', 'changed')


def test_poolcfg_commands_are_one_transaction():
    """A failing later command leaves /etc/pooladm.conf as it was: nothing half changed, no pooladm -c."""
    solaris = Solaris(pools=True)
    before = copy.deepcopy(solaris.static)
    solaris.poolcfg_fails = ('transfer to pset dbhost-oracle (cpu 4; cpu 5)',)
    with pytest.raises(common.InputError, match=r'poolcfg -f \(create pset dbhost-oracle.*\) failed'):
        run(solaris, POOL_ARGS)
    assert solaris.static == before
    assert 'pooladm -c' not in solaris.mutations()
    assert not [name for name in os.listdir('/tmp') if name.startswith('dbhost-poolcfg.')]


# ------------------------------------------------------------------ issue 45: seed 000, memory on the board
SPREAD = [(1, 2097152), (2, 2097152), (None, 262144)]  # lgrp_mem_pset_aware = 0: both boards (os/lgrp.c)


@pytest.mark.parametrize('args', [PSRSET_ARGS, POOL_ARGS])
def test_memory_spread_over_boards_pending_restart_then_drift_then_ok(args):
    solaris = Solaris(pools=args['persist'])
    solaris.sga = SPREAD
    first = run(solaris, args)
    memory = first.as_dict()['settings'][-1]
    assert (memory['name'], memory['status']) == ('memory:oracle', 'pending_restart')
    assert memory['desired'] == {'lgroups': [2]} and memory['live'] == {'1': 2097152 * 1024, '2': 2097152 * 1024}
    assert '2G of 4G of shared memory lies outside lgroup(s) 2: 2G on lgroup 1' in memory['detail']
    assert 'lgrp_mem_pset_aware = 1' in memory['detail']
    # Rerun, nothing to bind any more: the memory is still where it was, which is drift now.
    solaris.calls = []
    again = run(solaris, args)
    assert solaris.mutations() == [] and again.as_dict()['settings'][-1]['status'] == 'drift'
    assert again.changed is False
    # The database started again in the set with lgrp_mem_pset_aware = 1: its SGA on board 2.
    solaris.sga = [(2, 4194304), (None, 262144)]
    solaris.calls = []
    last = run(solaris, args)
    assert last.changed is False and all(status == 'ok' for name, status in statuses(last))
    assert last.as_dict()['settings'][-1]['detail'] == 'all 4G of shared memory on lgroup(s) 2 (pmap -Ls)'


def test_memory_check_mode_reads_before_apply_and_says_pending_restart():
    solaris = Solaris()
    solaris.sga = SPREAD
    reads, applied, done, result = hooks(solaris, PSRSET_ARGS, check_mode=True)
    assert applied == [] and reads[-2:] == ['lgrpinfo -G -c', 'pmap -Ls 2012 2013']
    assert statuses(result)[-1] == ('memory:oracle', 'pending_restart')


def test_memory_on_a_machine_with_one_lgroup_is_local():
    solaris = Solaris()
    solaris.lgroups = {1: [0, 1, 2, 3, 4, 5]}
    result = run(solaris, PSRSET_ARGS)
    record = result.as_dict()['settings'][-1]
    assert record['status'] == 'ok' and 'one leaf lgroup' in record['detail']
    assert not [c for c in solaris.calls if c.startswith('pmap')]


def test_memory_not_read_without_processes():
    solaris = Solaris()
    solaris.processes = [(2100, 0, 'system', '/usr/sbin/cron')]
    result = run(solaris, PSRSET_ARGS)
    assert 'memory:oracle' not in [name for name, status in statuses(result)]
    assert not [c for c in solaris.calls if c.startswith(('pmap', 'lgrpinfo'))]


def test_memory_unreadable_is_unsupported_with_why():
    solaris = Solaris()
    solaris.do_pmap = lambda args: (1, '', 'pmap: cannot examine 2012: permission denied\n')
    record = run(solaris, PSRSET_ARGS).as_dict()['settings'][-1]
    assert record['status'] == 'unsupported' and 'permission denied' in record['detail']
