# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: check or apply a host's whole desired state in one process.

HostState reads the facts sizing needs on the host itself (no gather_facts), compiles the
roles' variables into one desired state (_desired.compile_state), and runs every plan of
it in this one module call: one round trip per host, whatever the number of settings.

Nothing is touched before every plan has accepted its input: when not in check mode,
every plan first runs in check mode (reads only), and only then for real, so that bad
input to the fifth plan cannot leave the first four applied.

Pure Python apart from what the plans use.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import host_facts
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import engine_memory, hooks, registry
from ansible_collections.dbhost.tuning.plugins.module_utils.state.desired import compile_state
from ansible_collections.dbhost.tuning.plugins.module_utils.state.registry import Context, ROLE_NAMES, ROLES, default_roles
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.revert import Revert
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError, Result, run_plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan


def _record_keys(call, plan, setting):
    """The desired-state keys a setting of ``call`` may stand for: its name, ``target name``, and what
    the kind adds (state/hooks.py record_keys), whose plan names some settings otherwise than the
    compile step keys their records (``/sys/...``, ``postgresql.service``, a device of an item)."""
    name = str(setting.name)
    return [name, '%s %s' % (setting.target, name)] + registry.KINDS[call.kind].hooks.record_keys(call, plan, setting)


def source_of(call, plan, setting, records):
    """On whose word a setting of ``call`` (made by ``plan``) stands: the source of its desired-state record.

    Found by key (a block queue attribute by the label of the device item that gave it); else
    the one source the records of the call's owner and kind share for the same attribute, or
    for the whole call (a huge page pool per node, a process bound to a processor set).  A call
    that has a source of its own (kernel_params_absent's) stands on it; anything else on the
    call's label.
    """
    if call.source is not None:
        return call.source
    ours = [r for r in records if r['owner'] == call.owner and r['kind'] == call.kind]
    by_key = dict((str(r['key']), r['source']) for r in ours)
    for key in _record_keys(call, plan, setting):
        if key in by_key:
            return by_key[key]
    attribute = str(setting.name).rsplit('/', 1)[-1]
    same = [r for r in ours if str(r['key']).endswith(' ' + attribute)] or ours
    sources = sorted(set(r['source'] for r in same))
    if len(sources) == 1:
        return sources[0]
    return 'role %s: %s' % (call.owner, call.label)


def _role_part():
    """A role's part of the result; its settings are indexes into the result's settings."""
    return {'changed': False, 'settings': [], 'restart_required': False, 'reboot_required': False}


class HostState(Plan):
    """One host's desired state, checked or applied in one process."""

    def __init__(self, roles, inputs, context=None, state='present', details=None, facts_reader=None):
        """``context``: the run's (registry.Context: check mode, the runners; default: none of them);
        ``facts_reader(root, subsets)``: the host's facts (default: engine/host_facts.py gather())."""
        if not isinstance(inputs, dict):
            raise InputError('inputs must be a dict of role: {variable: value}')
        self.details = list(details or [])
        # the parts of the result left out unless named (registry.DETAILS): each record of settings
        # already carries its desired value, comparison, owner, kind and source
        unknown = [name for name in self.details if name not in registry.DETAILS]
        if unknown:
            raise InputError('details: %s is not one of %s'
                             % (', '.join(map(str, unknown)), ', '.join(registry.DETAILS)))
        if state not in registry.HOST_STATES:
            raise InputError('state must be %s, got %r' % (' or '.join(registry.HOST_STATES), state))
        self.reverting = state == 'revert'
        # a revert keeps no baseline of what it changes (engine/baseline.py)
        self.captures_baseline = not self.reverting
        self.revert_plan = None
        self.inputs = inputs
        self.roles = list(roles) if roles else default_roles(inputs)
        self.ctx = context = context or Context()
        self.gate = context.gate
        self.facts_reader = facts_reader or (
            lambda root, subsets: host_facts.gather(root, subsets, runner=context.runner))
        self.state = None
        self.ran = []
        self._views = {}
        self._owners = []

    def lock_roots(self):
        """The roots this run manages, each locked for the run (engine/lock.py): every role's ``<role>_root``."""
        roots = []
        for role in self.roles:
            values = self.inputs.get(role) if isinstance(self.inputs.get(role), dict) else {}
            root = values.get('%s_root' % role) or '/'
            if isinstance(root, str) and root not in roots:
                roots.append(root)
        return roots or ['/']

    def read_facts(self):
        subsets = []
        for role in self.roles:
            subsets.extend(s for s in (ROLES[role].facts if role in ROLES else ()) if s not in subsets)
        root = '/'
        for role in ('shared_memory', 'direct_io'):
            if role in self.roles:
                role_root = self.inputs.get(role, {}).get('%s_root' % role)
                if role_root == '':
                    raise InputError('%s_root: the empty string is not a folder (give / for the running system)'
                                     % role)
                root = role_root or root
        if not os.path.isdir(root):
            raise InputError('root %r is not a folder' % (root,))
        try:
            facts = self.facts_reader(root, subsets)
        except ValueError as exc:
            raise InputError('reading the host: %s' % exc)
        self._engine_memory(facts)
        return facts

    def _engine_memory(self, facts):
        """shared_memory_size: engine - what the database allocates, read here (state/engine_memory.py); an error
        is kept for the compile step, which raises it only if it sizes shared memory."""
        v = self.inputs.get('shared_memory')
        if not isinstance(v, dict) or str(v.get('shared_memory_size')).strip() != 'engine':
            return
        try:
            facts['engine_memory'] = engine_memory.read(
                v.get('shared_memory_engine'), v.get('shared_memory_root'), v.get('shared_memory_engine_config'),
                self.ctx.runner, v.get('shared_memory_user') or None)
        except InputError as exc:
            facts['engine_memory'] = {'error': str(exc)}

    def _run_all(self, check_mode, module):
        ctx = Context(check_mode, self.ctx.runner, self.ctx.bin_path, self.ctx.db_runner, self.ctx.system_name)
        ran = []
        for call in self.state.calls:
            try:
                plan = registry.plan(call.kind, call.kwargs, ctx)
                result = plan.run(module)
            except InputError as exc:
                raise InputError('%s (%s): %s' % (call.owner, call.label, exc))
            except HostError as exc:
                raise HostError('%s (%s): %s' % (call.owner, call.label, exc))
            ran.append((call, plan, result))
        return ran

    def run(self, module=None):
        if self.reverting:
            # every root the roles manage, back to its baseline; the roles' other variables play no part
            self.revert_plan = Revert(self.lock_roots(), check_mode=self.check_mode, runner=self.ctx.runner,
                                      bin_path=self.ctx.bin_path,
                                      waits=lambda kind: hooks.revert_waits(registry.KINDS, kind))
            result = self.revert_plan.run(module)
            for setting in result.settings:
                # the value wanted back is the one the first tuning run found
                setting.source = 'baseline: %s (as found before the first tuning run)' % baseline.PATH
            return result
        facts = self.read_facts()
        self.state = compile_state(self.roles, self.inputs, facts)
        if self.check_mode:
            self.ran = self._run_all(True, module)
        else:
            self._run_all(True, module)   # every input accepted before anything is touched
            self.ran = self._run_all(False, module)
        return self.combine(facts)

    def combine(self, facts):
        result = Result(self.check_mode)
        owners = []
        per_role = dict((role, _role_part()) for role in ROLE_NAMES if role in self.roles)
        self._views = dict((role, {}) for role in per_role)
        plans = []
        for call, plan, part in self.ran:
            role = per_role.setdefault(call.owner, _role_part())
            view = self._views.setdefault(call.owner, {})
            indexes = []
            for setting in part.settings:
                setting.source = source_of(call, plan, setting, self.state.records)
                indexes.append(len(result.settings))
                result.add(setting)
                owners.append((call.owner, call.kind))
            role['settings'].extend(indexes)
            result.diffs.extend(part.diffs)
            result.warnings.extend(part.warnings)
            if part.changed:
                result.mark_changed()
            role['changed'] = role['changed'] or part.changed
            role['restart_required'] = role['restart_required'] or part.restart_required
            role['reboot_required'] = role['reboot_required'] or part.reboot_required
            result.restart_required = result.restart_required or part.restart_required
            result.reboot_required = result.reboot_required or part.reboot_required
            for key, value in part.extra.items():
                role.setdefault(key, value)
                view.setdefault(key, value)
            self._add_part(role, view, call, part, indexes)
            plans.append({'kind': call.kind, 'owner': call.owner, 'label': call.label, 'changed': part.changed,
                          'restart_required': part.restart_required, 'settings': len(part.settings)})
        self._owners = owners
        for role in self.roles:
            if role in ROLES and not any(call.owner == role for call in self.state.calls):
                result.warnings.append('%s: listed in the roles, but its variables ask for nothing (%s), so it '
                                       'checked nothing' % (role, ROLES[role].nothing_asked or 'no input'))
        if self.state.sizing is not None and 'shared_memory' in per_role:
            per_role['shared_memory']['sizing'] = self.state.sizing
            self._views['shared_memory']['sizing'] = self.state.sizing
        result.extra['roles'] = per_role
        result.extra['plans'] = plans
        result.extra['notes'] = list(self.state.messages)
        result.extra['restart_services'], result.extra['restart_settings'] = self._restarts()
        if 'desired_state' in self.details:
            result.extra['desired_state'] = self.state.as_list()
        if 'facts' in self.details:
            result.extra['facts'] = facts
        return result

    @staticmethod
    def _add_part(role, view, call, part, indexes):
        """Each plan's own result under its kind (hugepages, resource_limits...); a second plan of a
        kind (kernel_params_absent) under the kind's label; every database in databases. In the role's part
        of ``roles`` a plan's records are their indexes in the result's settings, and its diff is only the
        result's; VIEW keeps the plan's whole result, records and diff, for a call of one role.  A kind that
        lists its plans in a part of their own (state/hooks.py part: db_parameter's databases) is put there."""
        own = part.as_dict()
        own.pop('warnings', None)
        key = call.kind
        listed = registry.KINDS[call.kind].hooks.part
        if listed is not None:
            for target, settings in ((role, indexes), (view, own['settings'])):
                name, entry = listed(call, part, settings)
                target.setdefault(name, []).append(entry)
            return
        if key in role:
            key = call.label.replace(' ', '_')
        role[key] = dict((name, value) for name, value in own.items() if name != 'diff')
        role[key]['settings'] = indexes
        view[key] = own

    def _restarts(self):
        """(services, settings): the services a role asked to restart whose call needs it now, and the names
        of the pending_restart records those restarts make live (tune.yml no longer lists them as pending)."""
        wanted, covered = [], []
        for entry in self.state.restart_services:
            for call, dummy, part in self.ran:
                if call.owner != entry['owner'] or not part.restart_required:
                    continue
                if entry['when'] in (call.kind, call.label):
                    if entry['service'] not in wanted:
                        wanted.append(entry['service'])
                    covered.extend(setting.name for setting in part.settings
                                   if setting.status == 'pending_restart' and setting.name not in covered)
        return wanted, covered

    def output(self, result):
        """The module result: the contract's keys, each record with its owner role and kind."""
        output = result.as_dict()
        if self.reverting:
            for record in output['settings']:
                record.update(owner=None, kind='revert')
            output.update(dict((name, [] if name == 'desired_state' else {}) for name in self.details),
                          roles={}, restart_services=[], restart_settings=[],
                          plans=[{'kind': 'revert', 'owner': None, 'label': 'revert', 'changed': result.changed,
                                  'restart_required': result.restart_required, 'settings': len(result.settings)}])
            return output
        for record, (owner, kind) in zip(output['settings'], self._owners):
            record.update(owner=owner, kind=kind)
        if len(self.roles) == 1:
            # one role: its plans' own results and extras (mems, mounts, udev...) where the role used to find
            # them, records and diffs in full
            for key, value in self._views.get(self.roles[0], {}).items():
                output.setdefault(key, value)
        return output

    def failed_records(self, result):
        # Each plan words its own failures (extra_problems); none are counted twice.
        return []

    def extra_problems(self, result):
        if self.revert_plan is not None:
            message = self.revert_plan.failure_message(result)
            return [message] if message else []
        problems = []
        for call, plan, part in self.ran:
            message = plan.failure_message(part)
            if message:
                problems.append('%s (%s): %s' % (call.owner, call.label, message))
        return problems


def run_module(module_class):
    """host_state's module, made with module_class (AnsibleModule; run_cached gives a subclass that takes the
    arguments it was sent for host_state): its spec from the registry, its result from run_plan."""
    module = module_class(argument_spec=registry.spec('host_state'), supports_check_mode=True)
    run_plan(module, lambda: HostState(module.params['roles'], module.params['inputs'], registry.Context.of(module),
                                       module.params['state'], module.params['details']))
