# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for dbhost.tuning.host_state: fills ``inputs`` from the roles' variables.

Each role's variables are the names in its meta/argument_specs.yml; their defaults come
from its defaults/main.yml (the one place they are written), and any the host defines
(inventory, play or role variables) win.
The module is sent every variable that has a default, so the compile steps on the host never
write a default of their own (state/compile/common.py role_var()).

Before the module runs, every role variable the host defines is checked against its role's
argument spec, as a role's own argument validation would (types, choices, the keys of list
items), and a variable whose name is not one of the roles' but close to one
(``kernel_param_profile``, ``shared_memory_sise``) is refused with the name it probably
means: a typo never leaves a role on its defaults unnoticed. Every message names the
variable as the user set it. Nothing else runs on the controller: the host's facts are
read and the desired state is compiled by the module, on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import os
import sys

import yaml

from ansible import constants
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import code_cache
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry

display = Display()

# The roles, in the registry's order (state/registry.py).
ROLES = registry.ROLE_NAMES
# The module's options, from its argument spec in the registry.
OPTIONS = ('roles', 'inputs') + tuple(sorted(set(registry.spec('host_state')) - set(['roles', 'inputs'])))
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ROLE_VARIABLES = {}
_ROLE_SPECS = {}
_FILES = {}
_CLOSEST = {}
_VALIDATORS = {}
_KNOWN = []
# libyaml's loader where PyYAML has it: the roles' argument specs are long.
_YAML_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
# What the roles export (register, set_fact): never a typo of an input.
EXPORTED = ('shared_memory_settings', 'processor_sets_numa_node')
# The variables Ansible itself gives every host and task (groups, hostvars, inventory_hostname, playbook_dir...):
# never a misspelling of a role's, so not compared with them (a worker per host would do it again each time).
ANSIBLE_VARIABLES = frozenset(constants.INTERNAL_STATIC_VARS) | frozenset(('omit', 'environment', 'vars'))
# The playbooks' own variables, so that their misspellings are caught too.
PLAYBOOK_VARIABLES = ('dbhost_roles', 'dbhost_hosts', 'dbhost_drift_report_only', 'dbhost_code_cache',
                      'dbhost_code_cache_dir', 'dbhost_drift_allow_no_host')
# How close a name must be to a role variable to be taken for a misspelling of it (difflib ratio).
CLOSE_ENOUGH = 0.85


def _load(path):
    """A role file's YAML, parsed once per process (callers do not change it)."""
    if path not in _FILES:
        try:
            with open(path) as handle:
                _FILES[path] = yaml.load(handle, Loader=_YAML_LOADER) or {}  # a safe loader
        except (IOError, OSError):
            _FILES[path] = {}
    return _FILES[path]


def role_variables(role):
    """{variable: default} for one role: every option of its argument spec, defaults from defaults/main.yml."""
    if role not in _ROLE_VARIABLES:
        folder = os.path.join(COLLECTION_ROOT, 'roles', role)
        defaults = _load(os.path.join(folder, 'defaults', 'main.yml'))
        specs = _load(os.path.join(folder, 'meta', 'argument_specs.yml')).get('argument_specs', {})
        names = set(defaults)
        for entry in specs.values():
            names.update((entry or {}).get('options', {}) or {})
        _ROLE_VARIABLES[role] = dict((name, defaults.get(name)) for name in names if name.startswith(role + '_')
                                     and not name.endswith('_result'))
        _ROLE_VARIABLES[role]['__has_default'] = sorted(defaults)
    return _ROLE_VARIABLES[role]


def role_spec(role):
    """The options of a role's argument spec (meta/argument_specs.yml, entry point main)."""
    if role not in _ROLE_SPECS:
        folder = os.path.join(COLLECTION_ROOT, 'roles', role)
        specs = _load(os.path.join(folder, 'meta', 'argument_specs.yml')).get('argument_specs', {})
        _ROLE_SPECS[role] = ((specs.get('main') or {}).get('options') or {})
    return _ROLE_SPECS[role]


def known_variables():
    """Every input variable of every role."""
    if not _KNOWN:
        names = set(PLAYBOOK_VARIABLES)
        for role in ROLES:
            names.update(name for name in role_variables(role) if name != '__has_default')
        _KNOWN.append(frozenset(names))
    return _KNOWN[0]


def _may_reach(name, other):
    """Whether difflib's ratio of the two names can reach CLOSE_ENOUGH at all: it is at most
    real_quick_ratio, 2 * min(lengths) / (sum of lengths), written as difflib computes it."""
    total = len(name) + len(other)
    return not total or 2.0 * min(len(name), len(other)) / total >= CLOSE_ENOUGH


def closest(name, names):
    """The known name ``name`` is most likely a misspelling of, or None."""
    key = (name, names if isinstance(names, frozenset) else tuple(sorted(names)))
    if key not in _CLOSEST:
        # Names whose length alone rules them out are left out first: the answer is the same,
        # without a SequenceMatcher for each of the roles' variables.
        candidates = [other for other in sorted(names) if _may_reach(name, other)]
        found = difflib.get_close_matches(name, candidates, n=1, cutoff=CLOSE_ENOUGH)
        _CLOSEST[key] = found[0] if found else None
    return _CLOSEST[key]


def misspelt(defined):
    """Messages for the names in ``defined`` that are not a role's variable but look like one: a
    <role>_ prefix with an unknown name, or a name close to a known one."""
    known = known_variables()
    problems = []
    for name in sorted(defined):
        # Ansible's own variables (connection settings, facts injected as ansible_*) are no role's.
        if (name in known or name in ANSIBLE_VARIABLES or name.startswith(('_', 'ansible_')) or name in EXPORTED
                or name.endswith('_result')):
            continue
        owner = [role for role in ROLES if name.startswith(role + '_')]
        guess = closest(name, known)
        if owner:
            problems.append('%s is not a variable of the %s role%s' % (
                name, owner[0], '; did you mean %s?' % guess if guess else
                ' (its variables: roles/%s/README.md, ansible-doc -t role dbhost.tuning.%s)' % (owner[0], owner[0])))
        elif guess:
            problems.append('%s is not a variable of any dbhost.tuning role; did you mean %s?' % (name, guess))
    return problems


def _validator(role):
    """The ArgumentSpecValidator of a role's argument spec, made once per process (it keeps no state
    between validations)."""
    if role not in _VALIDATORS:
        _VALIDATORS[role] = ArgumentSpecValidator(role_spec(role))
    return _VALIDATORS[role]


def _plain(value):
    """``value`` with Ansible's tagged str, int, float, dict and list subclasses (what templating
    returns) turned into the plain types: the validator deep-copies what it checks, and a tagged
    value copies slowly; a value of any other type is kept as it is."""
    if isinstance(value, dict):
        return dict((_plain(key), _plain(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    for kind in (bool, str, int, float):
        if isinstance(value, kind):
            return kind(value)   # the same object for a plain str, int, float or bool
    return value


def spec_errors(role, values):
    """The role's argument spec applied to ``values`` (the variables the host defines): one message
    per wrong type, choice or list item key, each naming the variable."""
    result = _validator(role).validate(_plain(values))
    messages = []
    for error in result.errors:
        message = str(error)
        if message.startswith('missing required arguments:') and ' found in ' not in message:
            continue   # a required input of a role the host does not use; the module says it when it does
        messages.append(message)
    return messages


def check_roles(roles, source):
    """``roles`` (a task's roles, or dbhost_roles) must be a list of the collection's role names."""
    if not isinstance(roles, (list, tuple)):
        raise AnsibleActionFail('host_state: %s must be a list of role names (%s), got %r'
                                % (source, ', '.join(ROLES), roles))
    for entry in roles:
        if entry not in ROLES:
            guess = closest(str(entry), ROLES) if isinstance(entry, str) else None
            raise AnsibleActionFail('host_state: %s: %r is not one of %s%s' % (
                source, entry, ', '.join(ROLES), '; did you mean %s?' % guess if guess else ''))


class Code(object):
    """The collection's module_utils as run_cached names them (their digest) and sends them (packed), each
    worked out once per controller process: preload() reads and digests them in the main process, before
    the workers fork; one that meets a host without them packs them."""

    files = None
    digest = None
    _packed = None

    @classmethod
    def load(cls):
        cls.files = code_cache.source_files(os.path.join(COLLECTION_ROOT, 'plugins', 'module_utils'))
        cls.digest = code_cache.digest(cls.files)

    @classmethod
    def packed(cls):
        if cls._packed is None:
            cls._packed = code_cache.pack(cls.files)
        return cls._packed


def _list_collections_for_mitogen():
    """Under the Mitogen strategy, its planner lists the installed collections (list_collection_dirs) in the
    forked worker of every task whose module is a collection's, which imports each collection's package and
    parses its meta/runtime.yml and galaxy.yml again for every host. Listed once here, in the main process,
    the packages are imported already in every worker forked from it."""
    if 'ansible_mitogen' not in sys.modules:
        return
    try:
        from ansible.collections.list import list_collection_dirs
        for dummy in list_collection_dirs():
            pass
    except Exception as error:  # pylint: disable=broad-except
        # only a saving: Mitogen's planner does the same work, and reports the error, in the worker
        display.vvv('host_state: listing the collections ahead of Mitogen failed: %s' % error)


def preload():
    """Parse every role's defaults and argument spec now. Ansible's strategies import this plugin in
    their main process before they fork a worker per host and task, so the workers inherit them
    parsed: a run reads the roles' YAML once, not once per host."""
    for role in ROLES:
        role_variables(role)
        _validator(role)
    known_variables()
    Code.load()
    _list_collections_for_mitogen()


preload()


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def _value(self, task_vars, name):
        return self._templar.template(task_vars[name])

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = dict(self._task.args)
        unknown = sorted(set(args) - set(OPTIONS))
        if unknown:
            raise AnsibleActionFail('host_state: unknown option(s) %s (it takes %s and %s)'
                                    % (', '.join(unknown), ', '.join(OPTIONS[:-1]), OPTIONS[-1]))
        roles, source = args.get('roles'), 'roles'
        if roles is None and 'dbhost_roles' in task_vars:
            roles, source = self._value(task_vars, 'dbhost_roles'), 'dbhost_roles'
        if roles is not None:
            check_roles(roles, source)
        given = args.get('inputs') or {}
        if not isinstance(given, dict):
            raise AnsibleActionFail('host_state: inputs must be a dict of role: {variable: value}, got %r' % (given,))
        # A registered task result (a dict with changed or failed) is never an input, whatever its name.
        names = [name for name, value in task_vars.items()
                 if not (isinstance(value, dict) and ('changed' in value or 'failed' in value))]
        problems = misspelt(set(names).union(*[set(part or {}) for part in given.values()]))
        wanted = list(ROLES) if roles is None else list(roles)
        for role in list(wanted):
            # a role whose compile step reads another's variables (processor_sets_shared_memory sizes
            # the set's huge pages with shared_memory's) gets them sent too
            wanted.extend(other for other in registry.ROLES[role].uses if other not in wanted)
        inputs = {}
        for role in wanted:
            if role not in ROLES:
                continue
            variables = role_variables(role)
            values, defined = {}, {}
            for name, default in variables.items():
                if name == '__has_default':
                    continue
                if name in task_vars:
                    values[name] = defined[name] = self._value(task_vars, name)
                elif name in variables['__has_default']:
                    values[name] = default
            defined.update(given.get(role) or {})
            values.update(given.get(role) or {})
            problems.extend(spec_errors(role, defined))
            inputs[role] = values
        if problems:
            raise AnsibleActionFail('host_state: %s' % '; '.join(problems))
        module_args = {'inputs': inputs}
        for option in OPTIONS[2:]:   # roles and inputs: as filled above
            if option in args:
                module_args[option] = args[option]
        if roles is not None:
            module_args['roles'] = list(roles)
        result.update(self._run_module(module_args, task_vars))
        if display.verbosity < 3:
            # The module echoes the inputs filled here (every role variable) as its invocation: Ansible copies and
            # walks that for every host on the controller, and shows it only from -vvv on, where it is kept.
            result.pop('invocation', None)
        return result

    def _run_module(self, module_args, task_vars):
        """host_state's result: through run_cached, from the copy of the code the host keeps (sending it
        when the host has none), or, with dbhost_code_cache false, from the host_state module itself."""
        cached = self._value(task_vars, 'dbhost_code_cache') if 'dbhost_code_cache' in task_vars else True
        try:
            cached = boolean(cached, strict=True)
        except TypeError:
            raise AnsibleActionFail('host_state: dbhost_code_cache must be true or false, got %r' % (cached,))
        if not cached:
            return self._execute_module(module_name='dbhost.tuning.host_state', module_args=module_args,
                                        task_vars=task_vars)
        runner_args = {'module': 'host_state', 'module_args': module_args, 'code_hash': Code.digest}
        if 'dbhost_code_cache_dir' in task_vars:
            runner_args['cache_dir'] = self._value(task_vars, 'dbhost_code_cache_dir')
        result = self._execute_module(module_name='dbhost.tuning.run_cached', module_args=runner_args,
                                      task_vars=task_vars)
        if result.get('code_missing') is True:
            display.vv('host_state: %s has no copy of the collection code %s; sending it'
                       % (task_vars.get('inventory_hostname'), Code.digest[:12]))
            runner_args['code'] = Code.packed()
            result = self._execute_module(module_name='dbhost.tuning.run_cached', module_args=runner_args,
                                          task_vars=task_vars)
        try:
            return code_cache.unpack_result(result)
        except (TypeError, ValueError) as error:
            raise AnsibleActionFail('host_state: the result run_cached returned cannot be read (%s): %.200r'
                                    % (error, result.get(code_cache.PACKED)))
