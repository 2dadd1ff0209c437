# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply resource limits in one call.

Three places, because a limit set in one does not reach a process started through another:
- pam_limits (limits.d) for login sessions (Linux);
- a systemd drop-in (``[Service]`` ``Limit*=``) for a database started by systemd, which
  pam_limits never reaches (Linux);
- /etc/project resource controls for a Solaris/illumos project (SunOS).
Each part's records come from the same Result; a part the platform cannot have is
reported ``unsupported`` without touching anything.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import limits
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import project as project_db
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import project_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.dropin import UnitDropIn
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import service_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.session_limits import SessionLimits

DEFAULT_LIMITS_FILE = '/etc/security/limits.d/90-dbhost-tuning.conf'
DEFAULT_DROPIN_NAME = '90-dbhost-tuning.conf'
DROPIN_HEADER = '# Managed by dbhost.tuning.resource_limits; local edits to these settings are overwritten.'
_DROPIN_NAME = re.compile(r'^[A-Za-z0-9_.@-]+\.conf\Z')
_PLATFORM_PARTS = {
    platforms.LINUX: ('limits', 'service'),
    platforms.SUNOS: ('projects',),
    'default': (),
}
# The option of each part, named in a record's source.
_OPTION_OF = {'limits': 'limits', 'service': 'service_limits', 'projects': 'projects'}
_UNSUPPORTED_WHY = {
    'limits': 'pam_limits files are managed on Linux only (on SunOS use projects)',
    'service': 'systemd service drop-ins are managed on Linux only',
    'projects': '/etc/project exists on Solaris and illumos only',
}


UnitShown = namedtuple('UnitShown', 'show show_error defaults')

# What read_persisted() finds of each part the call asks for (None for the others).
Parts = namedtuple('Parts', 'limits service projects')


class ServiceDone(object):
    """What the service part did: our drop-in (``dropin``, its FileChange ``change``, ``changes``
    {Limit*: value written}), systemd's reload (``reloaded``, ``reload_error``), what systemctl
    show gives after it (``show``, ``show_error``) and the running process's limits (``running``)."""

    def __init__(self, dropin, change, changes, show, show_error):
        self.dropin = dropin
        self.change = change
        self.changes = changes
        self.reloaded = False
        self.reload_error = None
        self.show = show
        self.show_error = show_error
        self.running = None


class ResourceLimits(Plan):
    """One run of the resource_limits module."""

    source = 'task option: resource_limits.limits'

    failed_label = 'failed'
    shadowed_label = 'shadowed'

    def __init__(self, options, context, systemd_running=None, proc_limits_reader=None, clock=None):
        """``systemd_running``, ``proc_limits_reader`` and ``clock``: a test's doubles (None: the host's)."""
        comparison = options.comparison
        if comparison not in (compare.EXACT, compare.MINIMUM):
            raise InputError('comparison: %r is not one of exact, minimum' % (comparison,))
        # minimum: a limit at least this high (Oracle's and MySQL's memlock) is met wherever it
        # comes from, unlimited included, and is never lowered.
        self.comparison = comparison
        self.raw_limits = options.limits or []
        self.limits_file = options.limits_file or DEFAULT_LIMITS_FILE
        self.raw_service = options.service
        self.raw_service_limits = options.service_limits or {}
        self.dropin_name = options.dropin_name or DEFAULT_DROPIN_NAME
        self.raw_projects = options.projects or []
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        self.parts = platforms.pick(_PLATFORM_PARTS, context.system_name)
        self.runner = runner = context.runner
        if systemd_running is None:
            systemd_running = systemd.systemd_running(self.root) and runner is not None
        self.systemd_running = systemd_running
        self.read_proc_limits = proc_limits_reader or (lambda pid: sysfs.read_text('/proc/%d/limits' % pid, strip=False))
        # (wall clock, monotonic clock) now, in seconds.
        self.clock = clock or (lambda: (time.time(), time.monotonic()))
        self.desired_limits = []
        self.unit = None
        self.desired_service = {}
        self.desired_projects = []
        self.shadowed = []
        self.backup_files = []
        self.session = None
        self.manager = None

    # ---------------------------------------------------------------- validation
    def validate(self):
        if not self.raw_limits and not self.raw_service_limits and not self.raw_projects and not self.raw_service:
            raise InputError('nothing to manage: give limits, service with service_limits, or projects')
        self._validate_limits()
        self._validate_service()
        self.desired_projects = project_limits.validate_projects(self.raw_projects)

    def _validate_limits(self):
        if not isinstance(self.raw_limits, (list, tuple)):
            raise InputError('limits must be a list of {domain, type, item, value}')
        validate.check_rooted(self.root, self.limits_file, 'limits_file')
        if self.limits_file != limits.LIMITS_CONF and (
                os.path.dirname(self.limits_file) != limits.LIMITS_D or not self.limits_file.endswith('.conf')):
            raise InputError('limits_file %r is not read by pam_limits: use %s or a *.conf file in %s'
                             % (self.limits_file, limits.LIMITS_CONF, limits.LIMITS_D))
        seen = {}
        for index, item in enumerate(self.raw_limits):
            where = 'limits[%d]' % index
            if not isinstance(item, dict):
                raise InputError('%s must be a dict with domain, type, item and value' % where)
            unknown = sorted(set(item) - set(['domain', 'type', 'item', 'value']))
            if unknown:
                raise InputError('%s: unknown key(s) %s' % (where, ', '.join(unknown)))
            domain, kind, name = item.get('domain'), item.get('type'), item.get('item')
            validate.check_name(domain, '%s.domain' % where)
            if kind not in limits.TYPES:
                raise InputError('%s.type: %r is not one of soft, hard, -' % (where, kind))
            if name not in limits.ITEMS:
                raise InputError('%s.item: %r is not a pam_limits item (one of %s)' % (where, name, ', '.join(limits.ITEMS)))
            try:
                limits.check_domain(domain, name)
            except limits.LimitsValueError as exc:
                raise InputError('%s.domain: %s' % (where, exc))
            validate.check_text(item.get('value'), '%s.value' % where)
            try:
                value = limits.check_value(name, item.get('value'))
            except limits.LimitsValueError as exc:
                raise InputError('%s.value: %s' % (where, exc))
            sides = ('soft', 'hard') if kind == '-' else (kind,)
            for side in sides:
                if (domain, side, name) in seen:
                    raise InputError('%s: the %s %s limit of %s is already given by limits[%d]'
                                     % (where, side, name, domain, seen[(domain, side, name)]))
                seen[(domain, side, name)] = index
            self.desired_limits.append(((domain, kind, name), value))

    def _validate_service(self):
        if not self.raw_service and not self.raw_service_limits:
            return
        if not self.raw_service:
            raise InputError('service_limits needs service (the systemd unit that runs the database)')
        if not self.raw_service_limits:
            raise InputError('service %r is given without service_limits' % (self.raw_service,))
        try:
            self.unit = systemd.unit_name(self.raw_service)
        except systemd.UnitNameError as exc:
            raise InputError('service: %s' % exc)
        if not isinstance(self.dropin_name, str) or not _DROPIN_NAME.match(self.dropin_name):
            raise InputError('dropin_name %r must be a file name ending in .conf' % (self.dropin_name,))
        if not isinstance(self.raw_service_limits, dict):
            raise InputError('service_limits must be a dict such as {LimitMEMLOCK: infinity}')
        for name, value in self.raw_service_limits.items():
            try:
                pair = limits.parse_systemd_limit(name, value)
            except limits.LimitsValueError as exc:
                raise InputError('service_limits: %s' % exc)
            text = str(value).strip()
            if isinstance(value, float):
                raise InputError('service_limits: %s: %r is not a whole number' % (name, value))
            self.desired_service[name] = (text, pair)

    # ---------------------------------------------------------------- hooks
    def desired(self):
        """{'limits': [((domain, type, item), value)], 'service': {name: (text, (soft, hard))},
        'projects': [{name, id?, comment?, users?, groups?, attributes}]}; each only where the platform has it."""
        return {'limits': self.desired_limits if 'limits' in self.parts else [],
                'service': self.desired_service if 'service' in self.parts else {},
                'projects': self.desired_projects if 'projects' in self.parts else []}

    def read_live(self, desired):
        """UnitShown: systemctl show of the unit before, why it failed, the manager's defaults (None, None, {}
        when systemd is not read)."""
        if desired['service'] and self.systemd_running:
            shown, error = self._dropin().show(self._show_properties())
            return UnitShown(shown, error, service_limits.manager_defaults(self.runner, sorted(desired['service'])))
        return UnitShown(None, None, {})

    def read_persisted(self, desired):
        """Parts: our limits file's text, our drop-in's text, the /etc/project plan (None for a part not
        asked); everything that can still refuse the input is read here, before any write."""
        return Parts(limits=self._session().read() if desired['limits'] else None,
                     service=self._dropin().read() if desired['service'] else None,
                     projects=project_limits.plan_projects(self.root, self.desired_projects, self.comparison)
                     if desired['projects'] else None)

    def apply(self, desired, live, persisted, module):
        """{part: what it planned and did}; files are written (and systemd reloaded) outside check mode only."""
        done = {'limits': None, 'service': None, 'projects': None, 'backup_files': []}
        if desired['limits']:
            done['limits'] = self._apply_limits(persisted.limits, module, done)
        if desired['service']:
            done['service'] = self._apply_service(persisted.service, live, module, done)
        if desired['projects']:
            local, before, changes, plans = persisted.projects
            after = project_db.render(before, changes) if changes else before
            change = FileChange(local, before, after, shown_path=project_db.ETC_PROJECT)
            self._apply_change(change, module, done)
            done['projects'] = (change, changes, plans)
        return done

    def render(self, result, desired, live, persisted, done):
        if self.desired_limits:
            self._render_limits(result, done['limits'])
        if self.desired_service:
            self._render_service(result, live, done['service'])
        if self.desired_projects:
            self._render_projects(result, done['projects'])
        backups = done['backup_files']
        if backups:
            result.extra['backup_file'] = backups[0] if len(backups) == 1 else backups

    def _unsupported(self, result, part, names):
        for name in names:
            result.add(Setting(name, None, None, None, None, UNSUPPORTED, _UNSUPPORTED_WHY[part],
                               source='task option: resource_limits.%s' % _OPTION_OF[part]))

    def source_of(self, setting):
        name = str(setting.name)
        if name.startswith('project '):
            return 'task option: resource_limits.projects'
        if ' Limit' in name:
            return 'task option: resource_limits.service_limits'
        return self.source

    def _apply_change(self, change, module, done):
        backup_file = self.gate.commit(change, module, self.backup)
        if backup_file:
            done['backup_files'].append(backup_file)

    # ---- pam_limits (plans/session_limits.py)
    def _session(self):
        if self.session is None:
            self.session = SessionLimits(self.root, self.limits_file, self.desired_limits, self.comparison,
                                         self.gate)
        return self.session

    def _apply_limits(self, before, module, done):
        change, changes = self._session().plan(before)
        self._apply_change(change, module, done)
        return change, changes

    def _render_limits(self, result, done):
        if done is None:
            self._unsupported(result, 'limits', ['%s %s %s' % key for key, dummy in self.desired_limits])
            return
        change, changes = done
        change.report(result)
        for record in self._session().records(change, changes):
            result.add(record)
        self.shadowed.extend(self._session().shadowed)

    def _value_meets(self, have, want):
        if have is None:
            return False
        if self.comparison == compare.MINIMUM:
            return compare.satisfies(str(have), str(want), compare.MINIMUM)
        return have == want

    def _pair_meets(self, have, want):
        """(soft, hard) pairs: equal, or under minimum each side at least the desired one."""
        if have == want:
            return True
        if self.comparison != compare.MINIMUM or not isinstance(have, tuple) or not isinstance(want, tuple):
            return False
        return all(self._value_meets(h, w) for h, w in zip(have, want))

    # ---- systemd service drop-in
    def _dropin(self):
        return UnitDropIn(self.root, self.unit, self.dropin_name, runner=self.runner)

    def _show_properties(self):
        properties = ['LoadState', 'ActiveState', 'MainPID', 'NeedDaemonReload', 'ExecMainStartTimestampMonotonic']
        for name in sorted(self.desired_service):
            properties.extend(limits.show_properties(name))
        return properties

    def _running_limits(self, shown):
        """/proc/<MainPID>/limits of the running service, or None."""
        pid = (shown or {}).get('MainPID', '0')
        if not pid.isdigit() or int(pid) == 0:
            return None
        return limits.parse_proc_limits(self.read_proc_limits(int(pid)))

    def _apply_service(self, before, live, module, done):
        dropin = self._dropin()
        shown_before = live.show
        changes = {}
        # while ours does not exist, a drop-in of its name in /run or /usr/lib is read in its place;
        # ours masks it once written, so it starts from that text
        base_path, base = (None, before) if before is not None else dropin.same_name()
        for name, (text, pair) in self.desired_service.items():
            ours = service_limits.last_valid([(dropin.path, base or '')], 'Service', name, name)
            now = self._service_source(dropin.unit_texts(before), name, live)
            if self.comparison == compare.MINIMUM and self._pair_meets(now.pair, pair):
                continue  # the service already gets at least this (unit, manager default): never lowered
            if not self._pair_meets(ours.pair, pair):
                changes[name] = service_limits.to_write(text, pair, now.pair) if (
                    self.comparison == compare.MINIMUM) else text
        after = before
        if changes:
            carried = '%s\n# Carried over from %s, which this drop-in masks (same name).\n%s' % (
                DROPIN_HEADER, base_path, base) if base_path else base
            after = systemd.render(carried, {'Service': changes}, header=DROPIN_HEADER)
        change = dropin.change(before, after)
        service = ServiceDone(dropin, change, changes, shown_before, live.show_error)
        self.gate.write(self._write_dropin, service, module, done)
        service.running = self._running_limits(service.show)
        return service

    def _write_dropin(self, service, module, done):
        """Write our drop-in, reload systemd when it changed (or asks for a reload), note what it shows after."""
        shown_before = service.show
        reload = self.systemd_running and shown_before is not None and (
            service.change.needed or shown_before.get('NeedDaemonReload') == 'yes')
        applied = service.dropin.apply(service.change, module, backup=self.backup, reload=reload,
                                       properties=self._show_properties())
        if applied.backup_file:
            done['backup_files'].append(applied.backup_file)
        service.reload_error = applied.reload_error
        if applied.reloaded:
            service.reloaded, service.show, service.show_error = True, applied.shown, applied.show_error

    def _render_service(self, result, live, done):
        if done is None:
            self._unsupported(result, 'service', ['%s %s' % (self.raw_service, n) for n in sorted(self.desired_service)])
            return
        dropin, change = done.dropin, done.change
        change.report(result)
        if done.reloaded:
            result.mark_changed()
        files_before = dropin.unit_texts(change.before)
        files_after = dropin.unit_texts(change.after)
        for name in sorted(self.desired_service):
            before = self._service_source(files_before, name, live)
            after = self._service_source(files_after, name, live)
            result.add(self._service_record(name, before, after, live, done))

    def _service_source(self, unit_texts, name, live):
        """service_limits.Source of ``name`` for the unit's files ``unit_texts``."""
        if self.manager is None:
            self.manager = service_limits.manager_texts(self.root)
        return service_limits.resolve(unit_texts, self.manager, name, (live.defaults or {}).get(name))

    def _loaded_note(self, name, shown, source):
        """The cross-check: what systemd has loaded (systemctl show) against what the files give."""
        if not shown or shown.get('LoadState') != 'loaded' or source.pair is None:
            return None
        loaded = limits.from_show(shown, name)
        if loaded is None or loaded == source.pair:
            return None
        return ('systemd has loaded %s=%s but the files give %s: it takes them at the next daemon-reload'
                % (name, limits.show_pair(loaded), limits.show_pair(source.pair)))

    def _service_record(self, name, before, after, live, done):
        """The record of one Limit*= of the service: ``before``/``after`` its service_limits.Source
        with our drop-in before and after this run, ``done`` the ServiceDone."""
        text, want = self.desired_service[name]
        record_name = '%s %s' % (self.unit, name)
        shown_path, written, shown_before = done.dropin.path, done.changes.get(name), live.show
        running, show_error = done.running, done.show_error
        now = self.gate.now(before, after)
        persisted_now = now.pair
        details = []
        if written is not None:
            details.append('%s (%s=%s)' % (self.gate.did('write %s' % shown_path), name, written))
        elif now.path != shown_path and self._pair_meets(now.pair, want):
            details.append('met by %s' % now.describe(name))
        if done.reload_error:
            details.append('systemctl daemon-reload failed: %s' % done.reload_error)
            return Setting(record_name, shown_path, limits.show_pair(want), None, limits.show_pair(persisted_now),
                           FAILED, '; '.join(details), comparison=self.comparison)
        shadowed = False
        if not self._pair_meets(after.pair, want) and after.origin == service_limits.UNIT and after.path != shown_path:
            shadowed = True
            details.append('%s sets %s=%s and is read after %s' % (after.path, name, after.text, shown_path))
            self.shadowed.append((record_name, after.path))
        persisted_ok = self._pair_meets(before.pair, want)

        live = None
        live_ok = None
        live_needs = None
        shown = self.gate.now(shown_before, done.show)
        note = self._loaded_note(name, shown, now)
        if note:
            details.append(note)
        if not self.systemd_running:
            details.append('live value not read: systemd is not running%s' % (
                '' if self.root == '/' else ' (root is %s)' % self.root))
        elif show_error or shown is None:
            details.append('live value not read: systemctl show failed: %s' % show_error)
        elif shown.get('LoadState') == 'not-found':
            details.append('the unit is not installed yet; the drop-in applies once it is')
        elif running is not None and name in running:
            live = running[name]
            live_ok = self._pair_meets(live, want)
            live_needs = PENDING_RESTART
            details.append('live: the running process (MainPID %s)' % shown.get('MainPID'))
            if not live_ok and self._pair_meets(limits.from_show(shown, name), want) and self._started_after(shown):
                # systemd has loaded the value and started the process since, yet the process
                # lacks it: systemd could not raise it (no CAP_SYS_RESOURCE in a container, or
                # above the manager's own hard limit).  A restart would not help.
                details.append(
                    'systemd has loaded %s=%s and started the process after it, but the process has %s: systemd '
                    'could not apply it (raising a limit needs CAP_SYS_RESOURCE and a manager whose own hard limit '
                    'allows it)' % (name, limits.show_pair(want), limits.show_pair(live)))
                return Setting(record_name, shown_path, limits.show_pair(want), limits.show_pair(live),
                               limits.show_pair(persisted_now), FAILED, '; '.join(details), comparison=self.comparison)
            if not live_ok:
                details.append('restart %s to apply it' % self.unit)
        else:
            live = limits.from_show(shown, name)
            live_ok = self._pair_meets(live, want)
            details.append('live: what systemd gives the service when it starts (%s, not running)'
                           % shown.get('ActiveState', 'unknown'))
        status = self.gate.status(live_ok, persisted_ok, live_needs=live_needs, shadowed=shadowed)
        return Setting(record_name, shown_path, limits.show_pair(want), limits.show_pair(live),
                       limits.show_pair(persisted_now), status, '; '.join(details), comparison=self.comparison)

    def _started_after(self, shown):
        """True when the service's main process started after every file of the unit was written."""
        started = shown.get('ExecMainStartTimestampMonotonic', '')
        if not started.isdigit() or int(started) == 0:
            return False
        newest = 0.0
        for path, local in systemd.unit_files(self.root, self.unit):
            try:
                newest = max(newest, os.stat(local).st_mtime)
            except OSError:
                continue
        # The file's wall-clock time on the monotonic clock systemd reports (both CLOCK_MONOTONIC).
        wall, monotonic = self.clock()
        newest_monotonic = monotonic - (wall - newest)
        return int(started) / 1e6 > newest_monotonic + 1

    def _render_projects(self, result, done):
        if done is None:
            self._unsupported(result, 'projects', ['project %s' % p['name'] for p in self.desired_projects])
            return
        change, changes, plans = done
        change.report(result)
        for wanted, current, new in plans:
            records = project_limits.project_records(wanted, current, new, wanted['name'] in changes,
                                                     self.gate, self.comparison)
            for record in records:
                result.add(record)
