# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: bind a database's processes to a set of CPUs and its memory
to the NUMA nodes of those CPUs (Linux: systemd drop-in, sched_setaffinity, cpuset cgroups,
see linux.py; SunOS: processor sets and pools, see sunos.py).

The module file only declares options and calls ProcessorSet(...).run(); the plan is made
here, and bad input is refused (InputError) before anything is touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.linux import LinuxProcessorSet
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.sunos import SunOSProcessorSet


class ProcessorSet(Plan):
    """Entry point: picks the platform's plan (LinuxProcessorSet, SunOSProcessorSet) and runs
    its hooks; desired, live, persisted and done are that plan's own (see its docstring)."""

    source = 'task option: processor_set.cpus'

    failed_separator = '; '

    @property
    def failed_label(self):
        return 'processor set %s' % self.impl.name

    def __init__(self, options, context, **seams):
        """``seams``: a test's doubles, as the platform's plan names them (LinuxProcessorSet: proc, cgroup_mounts)."""
        try:
            factory = platforms.pick({platforms.LINUX: LinuxProcessorSet,
                                      platforms.SUNOS: SunOSProcessorSet}, context.system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.gate = context.gate
        self.impl = factory(options, context, **seams)

    def validate(self):
        self.impl.validate()

    def desired(self):
        return self.impl.desired()

    def read_live(self, desired):
        return self.impl.read_live(desired)

    def read_persisted(self, desired):
        return self.impl.read_persisted(desired)

    def apply(self, desired, live, persisted, module):
        return self.impl.apply(desired, live, persisted, module)

    def render(self, result, desired, live, persisted, done):
        self.impl.render(result, desired, live, persisted, done)
