# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: one host's desired state, compiled once from every role's variables.

compile_state(inputs, facts) turns the roles' variables (the names users know from the
roles' READMEs: kernel_params_profile, shared_memory_size, ...) and the host's facts into:

- ``records``: one per setting, ``{kind, key, desired, comparison, owner, source}``;
- ``calls``: the plans to run (kind, owner role, keyword arguments of the plan class).

One setting has one owner.  When two roles plan the same key, the records are merged by
one rule: two minimums (or two maximums) keep the stricter value and the role that asked
for it; an exact value that meets the other role's bound wins; equal values keep the
first role (in ROLES order); anything else is refused,
naming both roles, before anything on the host is touched.  A merged key is planned in
its owner's call only, so it is never written to two files.

Each role's variables are compiled by its own step, state/compile/<role>.py, which the
role's entry in state/registry.py names (with the role order); this file holds the state they
fill (DesiredState, with the merge rule) and compile_state().  docs/DEVELOPING.md, "From role variable to file", maps every role
variable to the record and the file it becomes.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.db_effect import compile_effects

# The roles in merge order, and the roles a host that names none uses: both from the registry.
ROLES = registry.ROLE_NAMES
default_roles = registry.default_roles


class DesiredState(object):
    """What the compile steps fill: records (one owner per key), calls, restarts, notes, messages."""

    def __init__(self):
        self.records = []
        self.calls = []
        self.restart_services = []
        self.notes = []
        self.messages = []
        self.sizing = None   # the shared memory sizing (sizing/shm.py), exported as shared_memory_settings
        self.given = {}   # {role: {option: value}}: what other roles' compile steps give its own (Role.gives)
        self._index = {}

    def add(self, kind, key, desired, comparison, owner, source, namespace=None):
        """Add one record; merge or refuse when another role already planned ``namespace``."""
        record = {'kind': kind, 'key': key, 'desired': desired, 'comparison': comparison,
                  'owner': owner, 'source': source}
        ident = namespace or '%s:%s' % (kind, key)
        other = self._index.get(ident)
        if other is None:
            self._index[ident] = record
            self.records.append(record)
            return record
        return self._merge(other, record)

    def _merge(self, first, second):
        if first['owner'] == second['owner']:
            raise InputError('%s plans %s twice' % (first['owner'], first['key']))
        if first['kind'] != second['kind']:
            raise InputError('%s is planned by two roles as two kinds of setting: %s (%s) and %s (%s); '
                             'give it in one role only'
                             % (first['key'], first['owner'], first['kind'], second['owner'], second['kind']))
        a, b = str(first['desired']), str(second['desired'])
        if a.split() == b.split() and first['comparison'] == second['comparison']:
            first['source'] = '%s; also asked by %s' % (first['source'], second['owner'])
            return None
        how = first['comparison']
        if how != second['comparison'] and compare.EXACT in (how, second['comparison']):
            return self._merge_exact(first, second)
        if how != second['comparison'] or how == compare.EXACT:
            raise InputError(
                '%s is planned by two roles: %s wants %s and %s wants %s; give it in one role only, '
                'or the same value' % (first['key'], first['owner'], compare.describe(a, how), second['owner'],
                                       compare.describe(b, second['comparison'])))
        try:
            winner = compare.stricter(a, b, how)
        except compare.ComparisonError as exc:
            raise InputError('%s is planned by %s and %s: %s' % (first['key'], first['owner'], second['owner'], exc))
        note = 'planned by %s (%s) and %s (%s): the stricter %s wins' % (
            first['owner'], compare.describe(a, how), second['owner'], compare.describe(b, how), how)
        if winner.split() != a.split():
            # the second role owns it now; its call carries the key, the first's drops it
            self.notes.append((first['owner'], first['kind'], first['key']))
            first.update(desired=second['desired'], owner=second['owner'], source=second['source'])
        else:
            self.notes.append((second['owner'], second['kind'], second['key']))
        first['source'] = '%s; %s' % (first['source'], note)
        return None

    def _merge_exact(self, first, second):
        """An exact value and a bound: the exact value wins when it meets the bound, else refused."""
        exact, bound = (first, second) if first['comparison'] == compare.EXACT else (second, first)
        a, b = str(exact['desired']), str(bound['desired'])
        try:
            meets = compare.satisfies(a, b, bound['comparison'])
        except compare.ComparisonError:
            meets = False
        if not meets:
            raise InputError(
                '%s is planned by two roles: %s wants %s and %s wants %s; give it in one role only, '
                'or values that agree' % (first['key'], exact['owner'], a, bound['owner'],
                                          compare.describe(b, bound['comparison'])))
        note = 'planned by %s (%s) and %s (%s): the exact value meets the bound and wins' % (
            exact['owner'], a, bound['owner'], compare.describe(b, bound['comparison']))
        if exact is second:
            self.notes.append((first['owner'], first['kind'], first['key']))
            first.update(desired=second['desired'], owner=second['owner'], source=second['source'],
                         comparison=compare.EXACT)
        else:
            self.notes.append((second['owner'], second['kind'], second['key']))
        first['source'] = '%s; %s' % (first['source'], note)
        return None

    def as_list(self):
        return [dict(record) for record in self.records]


# ------------------------------------------------------------------ the whole host
def compile_state(roles, inputs, facts):
    """The host's desired state for ``roles`` from ``inputs`` ({role: {variable: value}})."""
    unknown = [role for role in roles if role not in ROLES]
    if unknown:
        raise InputError('roles: %s is not one of %s' % (', '.join(unknown), ', '.join(ROLES)))
    state = DesiredState()
    order = [role for role in ROLES if role in roles]
    # A role that gives another something (Role.gives: processor_sets' NUMA node sizes shared_memory's huge
    # pages) compiles first; the role it gives to is compiled even when not listed, once it was given something.
    giving = [role for role in order if registry.ROLES[role].gives]
    for role in giving + [role for role in order if role not in giving]:
        _compile_role(state, registry.ROLES[role], inputs, facts)
    for role in ROLES:
        if role not in order and role in state.given:
            _compile_role(state, registry.ROLES[role], inputs, facts)
    _distribute_merged(state)
    # what the running databases get of all that (read-only db_effect calls): once every role compiled
    compile_effects(state, inputs)
    return state


def _compile_role(state, role, inputs, facts):
    """Run one role's compile step; what it gives another role's (Role.gives) is kept for that one."""
    value = role.compile(state, inputs, facts)
    if role.gives and value is not None:
        target, option = role.gives
        state.given.setdefault(target, {})[option] = value


def _distribute_merged(state):
    """Give each call of a kind that takes its keys after the merge (state/hooks.py merged: kernel_params) the
    records its role owns now; a call left with nothing to do is dropped."""
    kept = []
    for call in state.calls:
        merged = registry.KINDS[call.kind].hooks.merged
        if merged is None or merged(call, [r for r in state.records if r['kind'] == call.kind and r['owner'] == call.owner]):
            kept.append(call)
    state.calls = kept
