# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: bind running Linux processes to the processor set: every
thread's CPU affinity (sched_setaffinity) and, where the v1 cpuset hierarchy is mounted,
the process moved into our cpuset so that its memory moves to the set's nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, OK, UNSUPPORTED, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.service import show_list

# How one process stands against the set: its CPUs, its memory nodes, and its cpuset (in it, or out of
# it for state=absent), each True when as wanted.
Checks = namedtuple('Checks', 'cpus mems cpuset')


def _cpuset_report(state):
    if state is None:
        return None
    return {'cpus': numa.render_cpu_list(state['cpus']), 'mems': numa.render_cpu_list(state['mems']),
            'memory_migrate': state['memory_migrate']}


def _where(live, cpuset):
    return (', cpuset %s' % live.get('cpuset')) if cpuset else ''


class ProcessBinding(object):
    """The processes part of a Linux processor set run.

    ``plan`` is the LinuxProcessorSet (cpus, mems, state, matchers, procs, live, root,
    gate), ``cpuset`` our CpusetV1 or False.  read_live() -> {'cpuset': state before,
    'found': [(matcher, pids, [entry])]}, an entry {pid, cmdline, before, checks} per process
    not seen before; apply(live) -> {pid: {'error', 'after', 'after_checks'}} for the processes
    moved, with 'cpuset_error' and 'cpuset_after'; records(live, done) -> Settings.
    """

    def __init__(self, plan, cpuset):
        self.plan = plan
        self.cpuset = cpuset

    def desired(self):
        plan = self.plan
        desired = {'cpus': numa.render_cpu_list(plan.cpus), 'mems': numa.render_cpu_list(plan.mems)}
        if self.cpuset:
            desired['cpuset'] = self.cpuset.cgroup_path if plan.state == 'present' else None
        return desired

    # ------------------------------------------------------------ read
    def find_processes(self):
        """[(matcher, [pid, ...])]: every running process each matcher selects (not ourselves)."""
        procs = self.plan.procs
        own = os.getpid()
        found = []
        file_pids = [m.pid_from_file() for m in self.plan.matchers]
        for matcher, file_pid in zip(self.plan.matchers, file_pids):
            pids = []
            candidates = [file_pid] if matcher.pid_file else procs.pids()
            for pid in candidates:
                if pid is None or pid == own:
                    continue
                status = procs.status(pid)
                cmdline = procs.cmdline(pid)
                # Kernel threads have no command line: never ours to move.
                if status is None or not cmdline:
                    continue
                if matcher.matches(pid, status, cmdline, file_pid):
                    pids.append(pid)
            found.append((matcher, pids))
        return found

    def read_process(self, pid):
        procs = self.plan.procs
        status = procs.status(pid)
        if status is None:
            return None
        threads = procs.threads(pid) or [pid]
        thread_cpus = set()
        for tid in threads:
            tstatus = procs.thread_status(pid, tid) or {}
            if tstatus.get('Cpus_allowed_list') is not None:
                thread_cpus.add(tstatus['Cpus_allowed_list'])
        live = {'cpus': status.get('Cpus_allowed_list'), 'mems': status.get('Mems_allowed_list'),
                'threads': len(threads)}
        if len(thread_cpus) > 1:
            live['thread_cpus'] = sorted(thread_cpus)
        if self.cpuset:
            live['cpuset'] = procs.cgroups(pid).get('cpuset')
        return live

    def process_ok(self, live):
        """The process's Checks, or None for a process gone."""
        if live is None:
            return None
        plan, cpuset = self.plan, self.cpuset
        cpus_ok = show_list(live['cpus']) == list(plan.cpus) and 'thread_cpus' not in live
        mems_ok = show_list(live['mems']) == list(plan.mems)
        in_set = True
        if cpuset:
            in_set = cpuset.holds(live.get('cpuset')) if plan.state == 'present' else \
                not cpuset.holds(live.get('cpuset'))
        return Checks(cpus_ok, mems_ok, in_set)

    def read_live(self):
        plan, cpuset = self.plan, self.cpuset
        if not plan.live:
            return None
        if cpuset and plan.state == 'present':
            missing_cpus, missing_mems = cpuset.parent_allows(plan.cpus, plan.mems)
            if missing_cpus or missing_mems:
                raise InputError('the cpuset hierarchy at %s does not hold CPUs %s / nodes %s' % (
                    cpuset.mount, numa.render_cpu_list(missing_cpus) or '-', numa.render_cpu_list(missing_mems) or '-'))
        live = {'cpuset': cpuset.state() if cpuset else None, 'found': []}
        seen = set()
        for matcher, pids in self.find_processes():
            entries = []
            for pid in pids:
                if pid in seen:
                    continue
                seen.add(pid)
                before = self.read_process(pid)
                entries.append({'pid': pid, 'cmdline': ' '.join(plan.procs.cmdline(pid))[:120],
                                'before': before, 'checks': self.process_ok(before)})
            live['found'].append((matcher, pids, entries))
        live['seen'] = bool(seen)
        return live

    # ------------------------------------------------------------ apply
    def _needs_move(self, entry):
        checks = entry['checks']
        if checks is None or (not self.cpuset and not checks.mems):
            return False
        return not all(checks)

    def _move(self, entry):
        """Bind one process; {'error': OSError or None, 'after', 'after_checks'}."""
        plan, cpuset, pid = self.plan, self.cpuset, entry['pid']
        in_set = entry['checks'].cpuset
        try:
            if cpuset:
                if plan.state == 'present':
                    cpuset.ensure(plan.cpus, plan.mems)
                    if not in_set:
                        cpuset.move(pid)
                elif not in_set:
                    cpuset.move_out(pid)
            for tid in plan.procs.threads(pid) or [pid]:
                try:
                    os.sched_setaffinity(tid, plan.cpus)
                except OSError as exc:
                    if exc.errno != errno.ESRCH:  # a thread that ended meanwhile
                        raise
        except OSError as exc:
            return {'error': exc, 'after': None, 'after_checks': None}
        after = self.read_process(pid)
        return {'error': None, 'after': after, 'after_checks': self.process_ok(after)}

    def apply(self, live):
        plan, cpuset = self.plan, self.cpuset
        done = {'moved': {}, 'cpuset_error': None, 'cpuset_after': None}
        if live is not None:
            plan.gate.write(self._bind, live, done)
        return done

    def _bind(self, live, done):
        """Move the processes that are not on the set's CPUs, then make (or remove) our cpuset."""
        plan, cpuset = self.plan, self.cpuset
        moving = any(self._needs_move(entry) for dummy, dummy2, entries in live['found'] for entry in entries)
        cpuset_changes = cpuset and (
            (plan.state == 'present' and (live['seen'] or live['cpuset'] is not None)
             and live['cpuset'] != self._cpuset_wanted()) or (plan.state == 'absent' and live['cpuset'] is not None))
        if moving or cpuset_changes:
            journal.before('unsupported', 'processor_set %s: running processes' % plan.name, root=plan.root,
                           detail='the running processes bound to the set (sched_setaffinity%s) are not unbound by a '
                                  'revert: they keep their CPUs until they restart' % (
                                      ', cpuset %s' % cpuset.folder if cpuset else ''))
        for matcher, pids, entries in live['found']:
            for entry in entries:
                if self._needs_move(entry):
                    done['moved'][entry['pid']] = self._move(entry)
        if cpuset and plan.state == 'present' and (live['seen'] or live['cpuset'] is not None):
            if live['cpuset'] != self._cpuset_wanted():
                try:
                    cpuset.ensure(plan.cpus, plan.mems)
                except OSError as exc:
                    done['cpuset_error'] = exc
            done['cpuset_after'] = cpuset.state()
        elif cpuset and plan.state == 'absent' and live['cpuset'] is not None:
            try:
                cpuset.remove()
            except OSError as exc:
                done['cpuset_error'] = exc

    def _cpuset_wanted(self):
        return {'cpus': list(self.plan.cpus), 'mems': list(self.plan.mems), 'memory_migrate': '1'}

    # ------------------------------------------------------------ records
    def records(self, live, done):
        plan = self.plan
        if live is None:
            if not plan.matchers:
                return []
            return [Setting('processes', plan.name, None, None, None, UNSUPPORTED,
                            'running processes are bound only on the running system (root is %s)' % plan.root)]
        desired = self.desired()
        settings = []
        for matcher, pids, entries in live['found']:
            if not pids:
                settings.append(Setting('processes:%s' % matcher.describe(), matcher.what, desired, None, None, OK,
                                        'no running process matches; nothing to bind'))
            for entry in entries:
                settings.append(self._record(entry, matcher, desired, done['moved'].get(entry['pid'])))
        cpuset = self.cpuset
        if cpuset and plan.state == 'present' and (live['seen'] or live['cpuset'] is not None):
            status = plan.gate.status(None, live['cpuset'] == self._cpuset_wanted())
            detail = 'cgroup v1 cpuset %s; tasks moved into it take their pages along (memory_migrate=1)' \
                % cpuset.cgroup_path
            if done['cpuset_error'] is not None:
                status, detail = FAILED, 'setting up cpuset %s failed: %s' % (cpuset.cgroup_path, done['cpuset_error'])
            settings.append(Setting('cpuset:%s' % cpuset.name, cpuset.folder,
                                    {'cpus': desired['cpus'], 'mems': desired['mems'], 'memory_migrate': '1'},
                                    _cpuset_report(plan.gate.now(live['cpuset'], done['cpuset_after'])),
                                    None, status, detail))
        elif cpuset and plan.state == 'absent' and live['cpuset'] is not None:
            status = plan.gate.status(None, False)
            detail = plan.gate.did('remove cpuset %s' % cpuset.cgroup_path)
            if done['cpuset_error'] is not None:
                status, detail = FAILED, 'removing cpuset %s failed: %s' % (cpuset.cgroup_path, done['cpuset_error'])
            settings.append(Setting('cpuset:%s' % cpuset.name, cpuset.folder, None,
                                    _cpuset_report(live['cpuset']), None, status, detail))
        return settings

    def _record(self, entry, matcher, desired, moved):
        name, cmdline, before = 'pid:%d' % entry['pid'], entry['cmdline'], entry['before']
        what = matcher.describe()
        if before is None:
            return Setting(name, what, desired, None, None, OK, 'exited before it could be read')
        live_ok = all(entry['checks'])
        if not self.cpuset and not entry['checks'].mems:
            # Nothing else can change the memory nodes of a running process.
            return Setting(name, what, desired, before, None, UNSUPPORTED,
                           '%s; memory nodes %s differ from %s and no cpuset cgroup (v1) is available here to move it: '
                           'memory binding of a running process is not possible; bind the service instead or '
                           'restart the process under numactl' % (cmdline, before['mems'], desired['mems']))
        if moved is None:
            details = [cmdline]
            if not live_ok:
                details.append('would move it from CPUs %s, memory %s%s' % (
                    before['cpus'], before['mems'], _where(before, self.cpuset)))
            return Setting(name, what, desired, before, None, self.plan.gate.status(live_ok, None),
                           '; '.join(details))
        error, after = moved['error'], moved['after']
        if error is not None:
            if error.errno == errno.ESRCH:
                return Setting(name, what, desired, before, None, OK, '%s; exited meanwhile' % cmdline)
            return Setting(name, what, desired, before, None, FAILED, '%s; binding failed: %s' % (cmdline, error))
        if after is None:
            return Setting(name, what, desired, before, None, OK, '%s; exited meanwhile' % cmdline)
        if not all(moved['after_checks']):
            return Setting(name, what, desired, after, None, FAILED, '%s; bound, but reads back CPUs %s, memory %s%s' % (
                cmdline, after['cpus'], after['mems'], _where(after, self.cpuset)))
        return Setting(name, what, desired, after, None, decide_status(False, None, False),
                       '%s; moved from CPUs %s, memory %s%s' % (cmdline, before['cpus'], before['mems'],
                                                                _where(before, self.cpuset)))
