# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: bind a systemd service to the processor set (Linux): our
drop-in's ``[Service]`` keys (CPUAffinity/NUMAPolicy/NUMAMask, or AllowedCPUs/
AllowedMemoryNodes on a cgroup v2 cpuset), what the unit's files give by systemd's rules,
and the main process as it runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, PENDING_RESTART, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.dropin import UnitDropIn

DROPIN_NAME = '90-dbhost-tuning-cpus.conf'
HEADER = '# Managed by dbhost.tuning.processor_set; the keys below are overwritten on every run.'
# Keys of the [Service] section we own in our drop-in, by service binding mode.
AFFINITY_KEYS = ('CPUAffinity', 'NUMAPolicy', 'NUMAMask')
CPUSET_KEYS = ('AllowedCPUs', 'AllowedMemoryNodes')
ALL_KEYS = AFFINITY_KEYS + CPUSET_KEYS
SHOW_PROPERTIES = ('LoadState', 'ActiveState', 'MainPID', 'NeedDaemonReload', 'DropInPaths') + ALL_KEYS


def dropin_values(mode, cpus, mems):
    """{key: value or None}: the [Service] keys of our drop-in (None removes a key)."""
    values = dict((key, None) for key in ALL_KEYS)
    if mode == 'affinity':
        values.update(CPUAffinity=numa.render_cpu_list(cpus), NUMAPolicy='bind', NUMAMask=numa.render_cpu_list(mems))
    elif mode == 'cpuset':
        values.update(AllowedCPUs=numa.render_cpu_list(cpus), AllowedMemoryNodes=numa.render_cpu_list(mems))
    return values


def render_dropin(before, mode, cpus, mems):
    """Our drop-in's text after the change; None when it should not exist.

    Other lines the user added to the file are kept; only our keys are set.
    """
    if mode is None:
        if before is None:
            return None
        after = systemd.render(before, {'Service': dict((key, None) for key in ALL_KEYS)})
        remaining = [k for section in systemd.read(after).values() for k in section]
        return after if remaining else None
    return systemd.render(before, {'Service': dropin_values(mode, cpus, mems)}, header=HEADER)


def carried_base(dropin, before):
    """The text our drop-in starts from: ours, or, while ours does not exist, the drop-in of its
    name that systemd reads in its place (/run/systemd/system/<unit>.d/...: ours masks it once
    written, so its lines are carried over, its origin named); None when neither exists."""
    if before is not None:
        return before
    base_path, base = dropin.same_name()
    if base_path is None:
        return None
    return '%s\n# Carried over from %s, which this drop-in masks (same name).\n%s' % (HEADER, base_path, base)


def show_list(value):
    """A CPU/node list from ``systemctl show`` (``0-3``, ``0 1 2 3`` on older systemd)."""
    text = (value or '').strip()
    if not text:
        return []
    try:
        return numa.parse_cpu_list(','.join(text.split()))
    except numa.CpuListError:
        return None


def persisted_from_files(files):
    """What the unit's files give for our keys, by systemd's rules, offline.

    CPUAffinity= adds up across assignments and an empty one resets it; the others take
    the last assignment.  ``files`` is [(shown path, text)] in the order they apply.
    Returns ({key: value text}, {key: shown path of the last file setting it}).
    """
    values, sources = {}, {}
    affinity = None
    for shown, text in files:
        section = systemd.read(text).get('Service', {})
        for key in ALL_KEYS:
            for value in section.get(key, []):
                sources[key] = shown
                if key == 'CPUAffinity':
                    affinity = set() if not value.strip() else (affinity or set()) | set(show_list(value) or [])
                else:
                    values[key] = value.strip()
    if affinity is not None:
        values['CPUAffinity'] = numa.render_cpu_list(affinity)
    return values, sources


def persisted_summary(values):
    shown = dict((key, values.get(key)) for key in ALL_KEYS if values.get(key) not in (None, '', 'n/a'))
    return shown or None


UnitNow = namedtuple('UnitNow', 'text values')


class ServiceBinding(object):
    """The service part of a Linux processor set run.

    ``plan`` is the LinuxProcessorSet (its validated cpus, mems, state, service, service_mode,
    topology, procs, root, live, systemd_live and gate).  The steps follow the plan's
    hooks: show() (read live, in validate), read_persisted(), apply() -> done dict
    {change, before_values, after_values, shown_after, sources, failed, details, live, pid},
    record(result, done) -> the Setting.
    """

    def __init__(self, plan):
        self.plan = plan
        self.dropin = UnitDropIn(plan.root, plan.service, DROPIN_NAME, runner=plan.runner)
        self.path = self.dropin.path

    def show(self):
        shown, error = self.dropin.show(SHOW_PROPERTIES)
        if shown is None:
            raise InputError('service %s: systemctl show failed: %s' % (self.plan.service, error))
        return shown

    def desired(self):
        plan = self.plan
        if plan.state == 'absent':
            return None
        return {'cpus': numa.render_cpu_list(plan.cpus), 'mems': numa.render_cpu_list(plan.mems),
                'mode': plan.service_mode}

    def read_persisted(self, show_before):
        """UnitNow: our drop-in's text now, what the unit gets now (systemd's view when loaded)."""
        before = self.dropin.read()
        if self.plan.systemd_live and show_before.get('NeedDaemonReload') != 'yes':
            values = show_before
        else:
            values = persisted_from_files(self.dropin.unit_texts(before))[0]
        return UnitNow(text=before, values=values)

    def persisted_ok(self, values):
        plan = self.plan
        want = dropin_values(plan.service_mode, plan.cpus, plan.mems) if plan.state == 'present' else {}
        for key in ALL_KEYS:
            if key in CPUSET_KEYS or key in ('CPUAffinity', 'NUMAMask'):
                have = show_list(values.get(key))
                wanted = show_list(want.get(key))
            else:
                have = (values.get(key) or '').strip()
                wanted = want.get(key) or ''
                if have == 'n/a':
                    have = ''
                if key == 'NUMAPolicy' and have == 'default' and not wanted:
                    have = ''
            if have != wanted:
                return False
        return True

    def apply(self, persisted, show_before, module):
        """Write our drop-in (not in check mode), reload systemd, read back what the unit gets."""
        plan = self.plan
        before = persisted.text
        base = carried_base(self.dropin, before) if plan.service_mode is not None else before
        after = render_dropin(base, plan.service_mode, plan.cpus, plan.mems)
        change = self.dropin.change(before, after)
        done = {'change': change, 'show_after': show_before, 'details': [], 'failed': None, 'backup_file': None}
        if change.needed:
            plan.gate.write(self._write, change, module, done)
            if plan.gate.check_mode:
                done['details'].append(plan.gate.did('%s %s' % ('remove' if after is None else 'write', self.path)))
            if done['failed']:
                return done
        if plan.systemd_live and plan.gate.open:
            done['values'], done['sources'] = done['show_after'], {}
        else:
            done['values'], done['sources'] = persisted_from_files(self.dropin.unit_texts(after or ''))
        done['live'], done['pid'] = self.read_live(done['show_after'] if plan.systemd_live else None)
        return done

    def _write(self, change, module, done):
        """Write (or remove) our drop-in, reload systemd and note what the unit shows after."""
        plan = self.plan
        applied = self.dropin.apply(change, module, backup=bool(plan.args.get('backup')),
                                    reload=plan.systemd_live, properties=SHOW_PROPERTIES)
        done['backup_file'] = applied.backup_file
        if applied.reload_error is not None:
            done['failed'] = 'wrote %s but systemctl daemon-reload failed: %s' % (self.path, applied.reload_error)
        elif applied.reloaded:
            if applied.shown is None:
                raise InputError('service %s: systemctl show failed: %s' % (plan.service, applied.show_error))
            done['show_after'] = applied.shown
            done['details'].append('wrote %s and reloaded systemd' % self.path)
        else:
            done['details'].append('wrote %s' % self.path)

    def read_live(self, show):
        """Main PID's CPUs, allowed memory nodes and memory policy, or None when not running."""
        pid = int(show.get('MainPID') or 0) if show else 0
        if not pid:
            return None, None
        status = self.plan.procs.status(pid)
        if status is None:
            return None, None
        live = {'pid': pid, 'cpus': status.get('Cpus_allowed_list'), 'mems': status.get('Mems_allowed_list'),
                'numa_policy': self.plan.procs.numa_policy(pid)}
        return live, pid

    def live_ok(self, live):
        plan = self.plan
        if live is None:
            return None
        cpus = show_list(live['cpus'])
        if plan.state == 'absent':
            return cpus == list(plan.topology['online_cpus'])
        if cpus != list(plan.cpus):
            return False
        if plan.service_mode == 'affinity':
            return live['numa_policy'] == 'bind:%s' % numa.render_cpu_list(plan.mems)
        return show_list(live['mems']) == list(plan.mems)

    def record(self, result, persisted, done):
        """Report the diff and return the service's Setting."""
        plan = self.plan
        done['change'].report(result)
        name = 'service:%s' % plan.service
        if done['failed']:
            return Setting(name, self.path, self.desired(), None, None, FAILED, done['failed'])
        persisted_ok = not done['change'].needed and self.persisted_ok(persisted.values)
        details = list(done['details'])
        # Another drop-in that applies after ours (or the unit file) can still win.
        shadowed = False
        if not self.persisted_ok(done['values']):
            others = [p for p in (done['show_after'] or {}).get('DropInPaths', '').split() if p != self.path] if \
                plan.systemd_live else sorted(set(v for k, v in done['sources'].items() if v != self.path))
            if not (plan.gate.check_mode and done['change'].needed and plan.systemd_live):
                # (in check mode systemd has not seen our file yet; nothing to conclude)
                shadowed = True
                details.append('the unit still gets %s; other files setting it: %s' % (
                    persisted_summary(done['values']), ', '.join(others) or 'none found'))
        live = done['live']
        live_ok = self.live_ok(live)
        if not plan.live:
            details.append('live state not read (root is %s)' % plan.root)
        elif not plan.systemd_live:
            details.append('systemd is not running here: live state not read')
        elif live is None:
            details.append('service is not running; the binding applies when it starts')
        elif live_ok is False:
            details.append('main PID %d runs on CPUs %s, memory %s (policy %s); a restart applies the drop-in' % (
                done['pid'], live['cpus'], live['mems'], live['numa_policy']))
        status = plan.gate.status(live_ok, persisted_ok, live_needs=PENDING_RESTART, shadowed=shadowed)
        # In check mode the record shows what is persisted now, not what would be.
        persisted_shown = plan.gate.now(persisted.values, done['values'])
        return Setting(name, self.path, self.desired(), live, persisted_summary(persisted_shown), status,
                       '; '.join(details))
