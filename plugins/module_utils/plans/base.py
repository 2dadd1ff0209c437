# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what every kind's plan shares.

A plan (KernelParams, HugePages, SysfsAttributes, ResourceLimits, BlockQueue,
MountOptions, DbParameter, ProcessorSet, and HostState over all of them) is made from
a module's options, refuses bad input in its constructor or validate(), and has
run(module) -> Result.  run_plan() (engine/result.py) ends every module with it, and
HostState runs several in one process.

Why a task fails is derived here, from the records, in one way for every kind:
the records whose status is ``failed`` (the system refused a value), then what the
kind adds (extra_problems(): a short huge page allocation, say), then the keys
another source shadows when the user asked to fail on that (``shadowed`` holds
(name, winner) pairs, ``fail_on_shadowed`` the option).  A kind says only how it
words them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import SHADOWED, Result


class Plan(object):
    """Base of every kind's plan: run() over the hooks, and the failure message derived from the records."""

    check_mode = False

    def run(self, module=None):
        """Check or apply this plan: the hooks in their fixed order (see the module docstring)."""
        self.validate()
        # what the baseline keeps from here on (engine/baseline.py) names this kind
        baseline.working_on(type(self).__name__)
        desired = self.desired()
        live = self.read_live(desired)
        persisted = self.read_persisted(desired)
        done = self.apply(desired, live, persisted, module)
        # What apply() changed stays: a failure in a later plan does not take it back.
        journal.settle()
        result = Result(self.check_mode)
        self.render(result, desired, live, persisted, done)
        self.explain(result)
        return result

    # On whose word a record's desired value stands when the module is called directly:
    # the task option that gave it ('task option: kernel_params.params').  host_state puts
    # the desired state's own source (a vendor document, a sizing rule, a role variable) in its place.
    source = 'task option'

    def source_of(self, setting):
        """The source of a record the kind left without one (a kind with several options words it per record)."""
        return self.source

    def explain(self, result):
        """Give every record its source (where the kind left none) and a shadowed one the file that wins."""
        winners = dict((str(name), winner) for name, winner in self.shadowed)
        for setting in result.settings:
            if setting.source is None:
                setting.source = self.source_of(setting)
            winner = winners.get(str(setting.name))
            if setting.status == SHADOWED and winner and winner not in str(setting.reason):
                setting.reason = 'shadowed by %s' % winner

    def validate(self):
        """Refuse bad input with an InputError naming it (nothing to refuse by default)."""

    def desired(self):
        raise NotImplementedError('%s.desired' % type(self).__name__)

    def read_live(self, desired):
        """The live values (none by default: a kind with only files)."""
        return {}

    def read_persisted(self, desired):
        """What the persisted files hold (none by default: a live-only kind)."""
        return {}

    def apply(self, desired, live, persisted, module):
        raise NotImplementedError('%s.apply' % type(self).__name__)

    def render(self, result, desired, live, persisted, done):
        raise NotImplementedError('%s.render' % type(self).__name__)

    # 'refused by the kernel: kernel.shmmni (Invalid argument)'
    failed_label = 'refused by the kernel'
    failed_separator = ', '
    # 'shadowed at boot: vm.swappiness by /etc/sysctl.d/99-local.conf'
    shadowed_label = 'shadowed at boot'
    shadowed = ()
    fail_on_shadowed = False

    def failed_records(self, result):
        """The records that make the task fail (by default every ``failed`` one)."""
        return result.failed_settings()

    @staticmethod
    def describe_failed(setting):
        return '%s (%s)' % (setting.name, setting.detail)

    def failed_text(self, failed):
        return '%s: %s' % (self.failed_label, self.failed_separator.join(self.describe_failed(s) for s in failed))

    def extra_problems(self, result):
        """What else makes this kind's task fail, as phrases (none by default)."""
        return []

    def failure_message(self, result):
        """The message that fails the task, or None when it succeeded."""
        problems = []
        failed = self.failed_records(result)
        if failed:
            problems.append(self.failed_text(failed))
        problems.extend(self.extra_problems(result))
        if self.shadowed and self.fail_on_shadowed:
            problems.append('%s: %s' % (self.shadowed_label, ', '.join('%s by %s' % pair for pair in self.shadowed)))
        return '; '.join(problems) or None
