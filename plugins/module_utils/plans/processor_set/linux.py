# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the Linux processor set: a systemd service bound through our
drop-in (service.py), running processes bound with sched_setaffinity and, where the v1
cpuset hierarchy is mounted, moved into our cpuset ``dbhost-<name>`` so that their memory
moves to the set's NUMA nodes too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import UNSUPPORTED, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.common import (
    SET_NAME, ProcessMatcher, check_exclusive, select_cpus, select_mems, topology_report)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.isolation import isolation_record
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.procfs import CpusetV1, ProcTable
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.processes import ProcessBinding
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.service import ServiceBinding

# The two sides a Linux processor set binds: the service's unit (ServiceBinding) and running processes
# (ProcessBinding), each None when the call does not ask for it.
Bindings = namedtuple('Bindings', 'service processes')


# What read_live() finds: the unit as systemctl shows it, the processes to bind (None: none asked).
Running = namedtuple('Running', 'show processes')

# What read_persisted() finds: the service's drop-in and what its unit gets (None without a service).
Persisted = namedtuple('Persisted', 'service')


class LinuxProcessorSet(Plan):
    """One run on Linux.

    validate() checks the input against the topology (and asks systemd whether the service
    exists); desired() is {'service': {cpus, mems, mode} or None, 'processes': {cpus, mems[, cpuset]}};
    read_live() is {'show': systemctl show before, 'processes': ProcessBinding.read_live()};
    read_persisted() is {'service': ServiceBinding.read_persisted()}; desired['bind'] holds the
    (ServiceBinding, ProcessBinding) pair that does the work (either None); apply() returns
    {'service': ServiceBinding.apply(), 'processes': ProcessBinding.apply()}; render() adds
    the topology, the records and the backup file.
    """

    def __init__(self, options, context, proc='/proc', cgroup_mounts=None):
        self.args = args = options._asdict()
        self.name = args.get('name')
        self.state = args.get('state') or 'present'
        self.root = '/' if args.get('root') is None else args['root']
        self.gate = context.gate
        self.runner = context.runner
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
        self.cpuset = None

    # ------------------------------------------------------------ validation
    def validate(self):
        args = self.args
        self.root = validate.check_root(self.root)
        if not self.name or not SET_NAME.match(str(self.name)):
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
            self.show_before = ServiceBinding(self).show()
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

    def _cpuset(self):
        if self.cpuset is None:
            mount = self._mounts().get('cpuset')
            self.cpuset = CpusetV1(mount[0], mount[1], self.name) if mount else False
            if self.cpuset and not self.cpuset.usable():
                self.cpuset = False
        return self.cpuset

    # ------------------------------------------------------------ hooks
    def _service(self):
        return ServiceBinding(self) if self.service else None

    def _processes(self):
        if self.matchers or self.state == 'absent':
            return ProcessBinding(self, self._cpuset() if self.live else False)
        return None

    def desired(self):
        service, processes = self._service(), self._processes()
        return {'service': service.desired() if service else None,
                'processes': processes.desired() if processes else None,
                'bind': Bindings(service, processes)}

    def read_live(self, desired):
        processes = desired['bind'].processes
        return Running(show=self.show_before, processes=processes.read_live() if processes else None)

    def read_persisted(self, desired):
        service = desired['bind'].service
        return Persisted(service=service.read_persisted(self.show_before) if service else None)

    def apply(self, desired, live, persisted, module):
        service, processes = desired['bind']
        done = {'service': None, 'processes': None}
        if service:
            done['service'] = service.apply(persisted.service, live.show, module)
        if processes:
            done['processes'] = processes.apply(live.processes)
        return done

    def render(self, result, desired, live, persisted, done):
        service, processes = desired['bind']
        result.extra['topology'] = topology_report(self.topology)
        result.extra['cpus'] = numa.render_cpu_list(self.cpus)
        result.extra['mems'] = numa.render_cpu_list(self.mems)
        if service:
            result.add(service.record(result, persisted.service, done['service']))
        if processes:
            for setting in processes.records(live.processes, done['processes']):
                result.add(setting)
        if self.args.get('exclusive') and self.state == 'present':
            result.add(Setting(
                'exclusive', self.name, True, None, None, UNSUPPORTED,
                'Linux does not keep other processes off CPUs %s at run time: checked that CPUs %s stay for the '
                'rest of the system; use isolcpus= or systemd CPUAffinity= in system.conf to fence them'
                % (numa.render_cpu_list(self.cpus), numa.render_cpu_list(check_exclusive(self.cpus, self.topology)))))
        isolated = isolation_record(self.name, self.cpus, self.root, self.gate) if self.state == 'present' else None
        if isolated:
            result.add(isolated)
        backup_file = done['service'] and done['service']['backup_file']
        if backup_file:
            result.extra['backup_file'] = backup_file
