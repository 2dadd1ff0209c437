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

LivePlusFile is the one write flow of the kinds whose values live in kernel pseudo-files and
persist in one file of ours (kernel_params, sysfs_attr, block_queue): a mixin that gives them
apply() over a few hooks of their own.  Whether a run writes is not a plan's to decide: each
hands its writes to its Context's gate (engine/gate.py ``self.gate``), shut in check mode.  hugepages and mount_options keep their own apply():
their class docstrings say how their flows differ.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.gate import Gate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import SHADOWED, Result


class Plan(object):
    """Base of every kind's plan: run() over the hooks, and the failure message derived from the records."""

    # whether the run writes (engine/gate.py); a plan keeps its Context's
    gate = Gate()
    # the kind's name in the registry (state/registry.py), which the baseline's entries name; None for a plan
    # made otherwise (HostState, Revert)
    kind = None

    @property
    def check_mode(self):
        """The gate's check mode, for what a plan passes on to a step that words or decides by it."""
        return self.gate.check_mode

    @check_mode.setter
    def check_mode(self, value):
        # a plan made without a Context (Revert, from host_state) sets its check mode: its gate
        self.gate = Gate(value)

    def named(self, kind):
        """This plan, as the plan of ``kind`` (its registry name)."""
        self.kind = kind
        return self

    def run(self, module=None):
        """Check or apply this plan: the hooks in their fixed order (see the module docstring)."""
        self.validate()
        # what the baseline keeps from here on (engine/baseline.py) names this kind
        baseline.working_on(self.kind)
        desired = self.desired()
        live = self.read_live(desired)
        persisted = self.read_persisted(desired)
        done = self.apply(desired, live, persisted, module)
        # What apply() changed stays: a failure in a later plan does not take it back.
        journal.settle()
        result = Result(self.gate.check_mode)
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


# persist_value()'s answer when our file keeps what it has for a key
UNCHANGED = object()


class Outcome(object):
    """What LivePlusFile.apply() did, key by key (a key is what the kind names a live value by).

    ``changes``: {key: value, or None to remove our line} for our file; ``targets``: {key: value}
    to write live; ``before``/``after``: the live values around the writes (``before`` as read
    again right before a write, for a kind that does so); ``refused``: {key: why the system
    refused it}; ``written``: {key: the value a write replaced}; ``change``: our file's
    FileChange; ``backup_file``; and what the kind adds in applied() (``resolve_after``: key ->
    (value, file) at the next boot; ``reload``: a reload's note).
    """

    def __init__(self, live, changes, targets):
        self.changes = changes
        self.targets = targets
        self.before = dict(live)
        self.after = dict(live)
        self.refused = {}
        self.written = {}
        self.change = None
        self.backup_file = None
        self.resolve_after = None
        self.reload = None


class LivePlusFile(object):
    """The mixin (before Plan: ``class Kind(LivePlusFile, Plan)``) of a kind whose values live
    in kernel pseudo-files and persist in one file of ours (kernel_params, sysfs_attr,
    block_queue): read, compare by the key's rule, write live, read back, write the file,
    report; in that order and in one way.

    apply() plans the writes (plan_writes()), refuses a file it could not write before any
    live value changes, writes the live values in live_order() (write_live()), makes our file
    from what the system took (file_text()) and commits it, then lets the kind add to the
    result (applied()).  A kind supplies: live_meets(key, value, want) (its comparison rule),
    read_one(key) / write_one(key, value), file_text(desired, persisted, done) and
    persist_value(), and the words of a record.  Its constructor sets ``missing`` ({key: why
    this kernel has no such value}), ``unsupported`` ({key: why nobody can set it here}) and
    ``backup_file``, with the options ``apply_live``, ``persist``, ``backup``, ``file``.
    """

    apply_live = True
    persist = True
    backup = False
    file = None
    # no live values to read here (an offline image): only the persisted side is managed
    live_available = True
    # where the live values are, for 'read-only /sys (...)'
    live_tree = '/sys'
    # read a value again right before writing it (a scheduler switch changes nr_requests)
    reread_before_write = False
    # a value that reads back unmet is refused, and left out of our file
    refuse_unmet_readback = False
    # 'not persisted (persist=false)'
    persist_off = 'persist=false'
    # '... wrote it to FILE for a boot where it can be set'
    boot_where = 'it can be set'

    # ---------------------------------------------------------------- the kind's hooks
    def applies_here(self, desired):
        """False on a platform that has none of this kind's values: apply() then does nothing."""
        return True

    def live_meets(self, key, value, want):
        raise NotImplementedError('%s.live_meets' % type(self).__name__)

    def read_one(self, key):
        raise NotImplementedError('%s.read_one' % type(self).__name__)

    def write_one(self, key, value):
        raise NotImplementedError('%s.write_one' % type(self).__name__)

    def read_only_reason(self, key):
        """Why nobody can set ``key`` here (a read-only mount or entry), or None."""
        return None

    def value_to_write(self, key, live, want):
        return want

    def persist_value(self, key, want, live, persisted):
        """What our file gets for ``key``: a value, None (remove our line) or UNCHANGED."""
        raise NotImplementedError('%s.persist_value' % type(self).__name__)

    def file_text(self, desired, persisted, done):
        raise NotImplementedError('%s.file_text' % type(self).__name__)

    def live_order(self, targets):
        return sorted(targets)

    def refusal(self, exc):
        """Why the system refused a write, in words."""
        return os.strerror(exc.errno) if exc.errno else str(exc)

    def read_only_now(self, key, exc):
        """What self.unsupported keeps for a key whose write met a read-only file system."""
        return 'read-only %s (%s)' % (self.live_tree, os.strerror(exc.errno))

    def applied(self, desired, persisted, done):
        """What the kind adds once our file is committed (done.resolve_after, a reload)."""

    # ---------------------------------------------------------------- the flow
    def plan_writes(self, desired, live, persisted):
        """({key: value} for our file, {key: value} to write live); notes in self.unsupported the
        keys nobody can set here (missing, read-only).  Such a key is still persisted: the line
        takes effect at a boot where it can be set.  A desired None removes our line."""
        changes, targets = {}, {}
        self.unsupported = {}
        for key, want in desired.items():
            live_now = live.get(key)
            writes_live = want is not None and self.apply_live and self.live_available
            if writes_live:
                why = self.missing.get(key)
                if why is None and not self.live_meets(key, live_now, want):
                    why = self.read_only_reason(key)
                if why:
                    self.unsupported[key] = why
            if self.persist or want is None:
                value = self.persist_value(key, want, live, persisted)
                if value is not UNCHANGED:
                    changes[key] = value
            if writes_live and key not in self.unsupported and not self.live_meets(key, live_now, want):
                targets[key] = self.value_to_write(key, live_now, want)
        return changes, targets

    def file_change(self, desired, persisted, done):
        return FileChange(persisted.path, persisted.text, self.file_text(desired, persisted, done),
                          shown_path=self.file)

    def apply(self, desired, live, persisted, module):
        if not self.applies_here(desired):
            return None
        done = Outcome(live, *self.plan_writes(desired, live, persisted))
        # A file that cannot be written fails the run before a live value changes.
        self.gate.check(self.file_change(desired, persisted, done))
        self.gate.write(self.write_live, desired, done)
        # what the system refused is not persisted either
        done.change = self.file_change(desired, persisted, done)
        done.backup_file = self.backup_file = self.gate.commit(done.change, module, self.backup)
        self.applied(desired, persisted, done)
        return done

    def write_live(self, desired, done):
        """Write each target that differs, in order, and read it back (against ``desired[key]``
        where an unmet read-back is refused)."""
        for key in self.live_order(done.targets):
            want = done.targets[key]
            if self.reread_before_write:
                current = done.before[key] = done.after[key] = self.read_one(key)
                if self.live_meets(key, current, want):
                    continue
                done.written[key] = current
            try:
                self.write_one(key, want)
            except (EnvironmentError, sysfs.SysfsError) as exc:
                if exc.errno == errno.EROFS:
                    # read-only after all (a mount the probe did not see): unsupported
                    done.written.pop(key, None)
                    self.unsupported[key] = self.read_only_now(key, exc)
                    continue
                done.refused[key] = self.refusal(exc)
                done.changes.pop(key, None)  # a value the kernel refuses now would fail at boot too
                continue
            done.after[key] = self.read_one(key)
            if self.refuse_unmet_readback and not self.live_meets(key, done.after[key], desired[key]):
                # the kernel took the write but stored another value (clamped or rounded): asked vs read back
                done.refused[key] = 'clamped on write: asked %r, read back %r' % (want, done.after[key])
                done.changes.pop(key, None)

    # ---------------------------------------------------------------- the words
    def report_file(self, result, done, warnings=()):
        """Our file's diff, its backup and the kind's warnings (a TuneD profile it cannot load)."""
        done.change.report(result)
        if self.backup_file:
            result.extra['backup_file'] = self.backup_file
        result.warnings.extend(warnings)

    @staticmethod
    def refused_detail(value, why):
        return 'the kernel refused %r: %s; not persisted' % (value, why)

    def unsupported_words(self, why, written, persisted_by=None):
        """[why, 'not set live', what became of our line for the next boot]."""
        if not self.persist:
            fate = 'not persisted (%s)' % self.persist_off
        elif written:
            fate = '%s for a boot where %s' % (self.gate.did('write it to %s' % self.file), self.boot_where)
        else:
            fate = persisted_by
        return [why, 'not set live'] + ([fate] if fate else [])
