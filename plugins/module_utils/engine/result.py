# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the setting record and result builder every module returns.

Pure Python: no Ansible import, so it is unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import lock
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError  # noqa: F401 (re-exported)

OK = 'ok'
CHANGED = 'changed'
DRIFT = 'drift'
PENDING_RESTART = 'pending_restart'
PENDING_REBOOT = 'pending_reboot'
SHADOWED = 'shadowed'
UNSUPPORTED = 'unsupported'
# A value the system refused (for example EINVAL from the kernel). The statuses
# above describe a state (docs/DEVELOPING.md, the result contract); this one an
# error on one record while the others were still applied.
FAILED = 'failed'

STATUSES = (OK, CHANGED, DRIFT, PENDING_RESTART, PENDING_REBOOT, SHADOWED, UNSUPPORTED, FAILED)

# Statuses that a drift check treats as "the host matches": everything else is drift.
CLEAN_STATUSES = (OK, UNSUPPORTED)

# The past tense of the verbs a record uses for what a run did to a file or a value.
_PAST = {'write': 'wrote', 'remove': 'removed', 'enable': 'enabled', 'create': 'created', 'persist': 'persisted',
         'edit': 'edited', 'run': 'ran'}


def did(check_mode, phrase):
    """What a record says a run did: ``did(check_mode, 'write %s' % path)`` is 'would write PATH'
    in check mode and 'wrote PATH' otherwise (the first word of ``phrase`` is the verb)."""
    verb, _sep, rest = phrase.partition(' ')
    if check_mode:
        return 'would ' + phrase
    return ' '.join(word for word in (_PAST.get(verb, verb), rest) if word)


def run_plan(module, make_plan):
    """The end of every module's main(): build the plan, run it, exit with the contract.

    ``make_plan`` returns a plan object with run(module) -> Result and
    failure_message(result) -> str or None.  Bad input (InputError) fails the task
    with its message before anything was touched; a plan that ran but has failed
    records (or, say, shadowed keys the user asked to fail on) fails the task with
    the full result, so the records still reach the drift report.  A module with a
    ``fail_on_drift`` option that is true fails when any record drifted, with
    ``drift_gate: true`` in the result (drift_gate_message()).  Before the plan is
    made, every option goes through the shared checks (validate.check_params: no
    control character or line separator anywhere, no odd space in a path, a usable root).

    Outside check mode the run holds the lock of each root it manages (engine/lock.py:
    one run at a time per host) from before it reads until after its last write.  The
    system refusing something (a HostError or any OSError: a read-only file system, a
    full disk) fails the task with a message naming the file and the operation, and
    what the run changed before (engine/journal.py); live values whose file could not
    be written are put back first.  Each root's baseline (engine/baseline.py) is read
    first, a corrupt one failing the task before anything is touched, and keeps what the
    run changes (not in check mode, nor for a plan whose ``captures_baseline`` is false:
    a revert).
    """
    journal.begin()
    try:
        validate.check_params(getattr(module, 'params', None), getattr(module, 'argument_spec', None))
        plan = make_plan()
        params = getattr(module, 'params', None) or {}
        roots = plan.lock_roots() if hasattr(plan, 'lock_roots') else [params.get('root') or '/']
        check_mode = getattr(module, 'check_mode', False)
        with lock.Locks([] if check_mode else roots, who=getattr(module, '_name', None)):
            # every root's baseline read (and checked) first; outside check mode, kept up to date
            baseline.begin(roots, capture=not check_mode and getattr(plan, 'captures_baseline', True))
            try:
                result = plan.run(module)
            finally:
                baseline.end()
    except InputError as exc:
        module.fail_json(msg=_with_changes(str(exc), journal.changes()), changed=bool(journal.changes()))
    except lock.LockTimeout as exc:
        module.fail_json(msg=str(exc))
    except (HostError, IOError, OSError) as exc:
        put_back, stuck = journal.rollback()
        module.fail_json(msg='%s; %s' % (describe_os_error(exc), journal.summary(put_back, stuck)),
                         changed=bool(journal.changes()))
    # A plan may shape its own result (host_state adds each record's owner); the contract's keys stay.
    output = plan.output(result) if hasattr(plan, 'output') else result.as_dict()
    if not getattr(module, '_diff', False):
        drop_diffs(output)
    output = json_safe(output)
    # ansible-core 2.19 deprecates a warnings key in a module's result: use module.warn().
    for warning in output.pop('warnings', []):
        module.warn(warning)
    problem = plan.failure_message(result)
    if problem:
        module.fail_json(msg=_with_written(problem, output), **output)
    gate = drift_gate_message(output.get('settings'), (getattr(module, 'params', None) or {}).get('fail_on_drift'))
    if gate:
        # The drift check's gate: the task fails because of these records, and says so
        # (drift_gate), so that a report can tell drift from a failed check.
        module.fail_json(msg=gate, drift_gate=True, **output)
    module.exit_json(**output)


def drop_diffs(output):
    """The contract outside diff mode (no ``--diff``): no ``diff`` in the result, neither its own nor
    that of a plan whose whole result is kept under a key of it (host_state's call of one role)."""
    output.pop('diff', None)
    for value in output.values():
        if isinstance(value, dict):
            value.pop('diff', None)


def json_safe(value):
    """``value`` with every string valid Unicode: a file's bytes that are not UTF-8 are read
    and written as they are (surrogateescape), but shown in the result (a diff, a record)
    as U+FFFD, which the controller can decode and print."""
    if isinstance(value, str):
        try:
            value.encode('utf-8')
        except UnicodeEncodeError:
            try:
                return value.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')
            except UnicodeEncodeError:
                return value.encode('utf-8', 'replace').decode('utf-8')
        return value
    if isinstance(value, dict):
        return dict((json_safe(key), json_safe(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def _with_written(problem, output):
    """A run that failed after writing (a shadowed setting fails once its file is written) says
    what it wrote and keeps (``written`` in the result too), so the admin knows what is on disk."""
    written = journal.changes()
    if not written:
        return problem
    output['written'] = written
    return '%s; written before this failure, and kept: %s' % (problem, ', '.join(written))


def _with_changes(message, changes):
    """Bad input found after something was changed (a later plan of host_state) says what was."""
    if not changes:
        return message
    return '%s; %s' % (message, journal.summary())


def describe_os_error(exc):
    """The words for a failure the system gave: a HostError's own, or an OSError's file and reason."""
    if isinstance(exc, HostError):
        return str(exc)
    names = ' -> '.join(str(name) for name in (getattr(exc, 'filename', None), getattr(exc, 'filename2', None))
                        if name is not None)
    reason = getattr(exc, 'strerror', None) or str(exc)
    return '%s: %s' % (names, reason) if names else 'the system refused an operation: %s' % reason


def drift_gate_message(records, fail_on_drift):
    """The failure message of a drift check that fails on drift, or None.

    ``records`` are the result's settings (dicts); a record whose status is not one of
    CLEAN_STATUSES has drifted.
    """
    if not fail_on_drift:
        return None
    drifted = [record.get('name') for record in records or [] if record.get('status') not in CLEAN_STATUSES]
    if not drifted:
        return None
    return '%d setting(s) drifted: %s' % (len(drifted), ', '.join(str(name) for name in drifted))


class Decision(str):
    """A status as decide_status() gives it: the status itself (a str, equal to the constant),
    which also remembers what decided it, so that Setting derives the record's reason from
    the same facts (reason_for) without every kind repeating them."""

    def __new__(cls, status, live_ok=None, persisted_ok=None, live_needs=None, shadowed=False, unsupported=False):
        decision = str.__new__(cls, status)
        decision.facts = dict(live_ok=live_ok, persisted_ok=persisted_ok, live_needs=live_needs, shadowed=shadowed,
                              unsupported=unsupported)
        return decision


def decide_status(live_ok, persisted_ok, check_mode, live_needs=None, shadowed=False, unsupported=False):
    """Return the status of one record; the rules live here and nowhere else.

    live_ok / persisted_ok: True when that side already matches the desired value,
    None when that side is not managed or cannot be known (it then does not count).
    live_needs: None when the live side can be changed now, else PENDING_RESTART or
    PENDING_REBOOT when only a restart or reboot can bring the live value in line.
    shadowed: the persisted value that wins at boot/restart comes from another
    source than ours and does not match, whatever we write.

    The status is a Decision (a str equal to one of STATUSES) that keeps these facts for
    reason_for().
    """
    return Decision(_status(live_ok, persisted_ok, check_mode, live_needs, shadowed, unsupported),
                    live_ok, persisted_ok, live_needs, shadowed, unsupported)


def _status(live_ok, persisted_ok, check_mode, live_needs, shadowed, unsupported):
    if unsupported:
        return UNSUPPORTED
    if shadowed:
        return SHADOWED
    if live_ok is not False and persisted_ok is not False:
        return OK
    if live_ok is False and live_needs and persisted_ok is not False:
        # Nothing left to apply: only the restart or reboot brings the live side in line.
        return live_needs
    if check_mode:
        return DRIFT
    if live_ok is False and live_needs:
        return live_needs
    return CHANGED


# The clause of a detail that says why a failed or shadowed record is so, found by these words.
_FAILED_WORDS = ('refused', 'failed', 'reads back', 'cannot', 'could not', 'not allowed')
_SHADOWED_WORDS = ('wins', 'shadow', 'overrides', 'masks')
# '/etc/sysctl.d/99-x.conf sets '60' and wins at boot over ...', 'limits: F:3 gives 64, which wins over ...'
_WINNER = re.compile(r'^(?:\w+: )?(?P<who>.+?) (?P<verb>sets|writes|gives) (?P<value>.+?),? (?:and |which )?wins\b')


def _clauses(detail):
    return [part.strip() for part in (detail or '').split('; ') if part.strip()]


def _first_with(detail, words):
    for clause in _clauses(detail):
        if any(word in clause for word in words):
            return clause
    return None


def _short(clause):
    """A clause without its closing parenthesis: 'no /proc/sys/x on this kernel (older ...)' -> '... kernel'."""
    if clause.endswith(')') and ' (' in clause:
        clause = clause[:clause.rindex(' (')]
    return clause


def _side(side, value, desired, comparison, changed=False):
    """Why one side (live or persisted) does not meet the desired value, in a few words.

    ``changed``: the record shows the values after the change, so they say nothing of before."""
    if side == 'persisted' and (changed or value in (None, '')):
        return 'not persisted'
    scalar = desired is not None and not isinstance(desired, (dict, list, tuple))
    if scalar and comparison == 'minimum':
        return '%s below the minimum %s' % (side, desired)
    if scalar and comparison == 'maximum':
        return '%s above the maximum %s' % (side, desired)
    return '%s differs' % side


def reason_for(status, detail='', desired=None, live=None, persisted=None, comparison='exact', live_ok=None,
               persisted_ok=None, live_needs=None, shadowed=False, unsupported=False):
    """The short reason of a record that is not ``ok`` (None for ``ok``): derived here for every kind.

    From what decided the status (live_ok, persisted_ok, live_needs, shadowed, unsupported: see
    decide_status) and the record's own detail, values and comparison.  ``changed`` says what was
    wrong before the change (``was: not persisted``); ``unsupported`` and ``failed`` take the clause
    of the detail that says why; ``shadowed`` names the winner when the detail does.
    """
    if status == OK:
        return None
    if status == UNSUPPORTED:
        clauses = _clauses(detail)
        return _short(clauses[0]) if clauses else 'not on this host'
    if status == FAILED:
        clause = _first_with(detail, _FAILED_WORDS) or (_clauses(detail) or [None])[-1]
        return clause or 'the system refused the value'
    if status == SHADOWED:
        clause = _first_with(detail, _SHADOWED_WORDS)
        winner = _WINNER.match(clause or '')
        if winner:
            return 'shadowed by %s (%s %s)' % winner.group('who', 'verb', 'value')
        return 'shadowed: %s' % clause if clause else 'shadowed by another source'
    parts = []
    if live_ok is False and status not in (PENDING_RESTART, PENDING_REBOOT):
        parts.append(_side('live', live, desired, comparison, status == CHANGED))
    if persisted_ok is False:
        parts.append(_side('persisted', persisted, desired, comparison, status == CHANGED))
    if status in (PENDING_RESTART, PENDING_REBOOT):
        pending = 'pending %s' % status.split('_', 1)[1]
        return '%s, %s' % ('persisted now' if persisted_ok is False else 'persisted', pending)
    if not parts:
        # A status given without decide_status: the detail's first clause says what happens.
        clauses = _clauses(detail)
        parts.append(clauses[0] if clauses else ('would change' if status == DRIFT else 'changed'))
    reason = ', '.join(parts)
    return 'was: %s' % reason if status == CHANGED and (live_ok is False or persisted_ok is False) else reason


class Setting(object):
    """One managed item: {name, target, desired, live, persisted, status, detail, comparison, source, reason}.

    ``comparison`` says how ``desired`` is meant (see engine/compare.py): ``exact``, ``minimum``
    (at least: a larger live or persisted value is met and never lowered) or ``maximum``;
    a vector value may carry one comparison per field.

    ``source`` is on whose word the desired value stands (a vendor document and section, a
    sizing rule, a role variable, a task option); the plan or host_state fills it in.
    ``reason`` is why a record is not ``ok``, in a few words (None for ``ok``): given by a kind
    that knows better, else derived by reason_for() from what decide_status() decided.
    """

    __slots__ = ('name', 'target', 'desired', 'live', 'persisted', 'status', 'detail', 'comparison', 'source',
                 'reason')

    def __init__(self, name, target=None, desired=None, live=None, persisted=None, status=OK, detail='',
                 comparison='exact', source=None, reason=None):
        if status not in STATUSES:
            raise ValueError('unknown status %r for setting %r' % (status, name))
        self.name = name
        self.target = target
        self.desired = desired
        self.live = live
        self.persisted = persisted
        self.status = str(status)
        self.detail = detail
        self.comparison = comparison
        self.source = source
        if reason is None and status != OK:
            reason = reason_for(self.status, detail, desired, live, persisted, comparison,
                                **getattr(status, 'facts', {}))
        self.reason = reason

    def as_dict(self):
        return dict((slot, getattr(self, slot)) for slot in self.__slots__)

    def __repr__(self):
        return 'Setting(%r)' % (self.as_dict(),)


class Result(object):
    """Collects records, diffs and flags, and renders the module result."""

    def __init__(self, check_mode=False):
        self.check_mode = check_mode
        self.settings = []
        self.diffs = []
        self.warnings = []
        self.changed = False
        self.restart_required = False
        self.reboot_required = False
        self.extra = {}

    def add(self, setting):
        """Add a record.  ``changed`` follows what was (or, in check mode, would be)
        done: CHANGED and, in check mode, DRIFT set it; a pending status alone does not,
        so that a second run while a restart is still pending stays idempotent.  Outside
        check mode a DRIFT record is a read-only check of the running system's answer (the
        database did not get it) that no write of this run changes: it leaves ``changed``
        alone, so that a rerun stays idempotent.  Modules call mark_changed() or add_diff()
        for the writes behind a pending status."""
        self.settings.append(setting)
        if setting.status == CHANGED or (setting.status == DRIFT and self.check_mode):
            self.changed = True
        if setting.status == PENDING_RESTART:
            self.restart_required = True
        if setting.status == PENDING_REBOOT:
            self.reboot_required = True
        return setting

    def add_diff(self, path, before, after):
        """Record a file diff; only a real difference is recorded."""
        if before == after:
            return
        self.diffs.append({
            'before_header': path,
            'after_header': path,
            'before': before if before is not None else '',
            'after': after if after is not None else '',
        })
        # Ansible's convention: in check mode ``changed`` means "would change".
        self.changed = True

    def mark_changed(self):
        self.changed = True

    def failed_settings(self):
        return [s for s in self.settings if s.status == FAILED]

    def drifted_settings(self):
        return [s for s in self.settings if s.status not in CLEAN_STATUSES]

    def as_dict(self):
        result = {
            'changed': self.changed,
            'settings': [s.as_dict() for s in self.settings],
            'restart_required': self.restart_required,
            'reboot_required': self.reboot_required,
        }
        if self.diffs:
            result['diff'] = self.diffs
        if self.warnings:
            result['warnings'] = list(self.warnings)
        result.update(self.extra)
        return result
