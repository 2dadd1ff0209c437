# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for dbhost.tuning.host_state: fills ``inputs`` from the roles' variables.

Each role's variables are the names in its meta/argument_specs.yml; their defaults come
from its defaults/main.yml (the one place they are written), and any the host defines
(inventory, play or role variables) win.  Nothing else runs on the controller: the
host's facts are read and the desired state is compiled by the module, on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

ROLES = ('kernel_params', 'shared_memory', 'block_queue', 'direct_io', 'processor_sets')
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ROLE_VARIABLES = {}


def _load(path):
    try:
        with open(path) as handle:
            return yaml.safe_load(handle) or {}
    except (IOError, OSError):
        return {}


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
        unknown = sorted(set(args) - set(['roles', 'inputs', 'fail_on_drift']))
        if unknown:
            raise AnsibleActionFail('host_state: unknown option(s) %s (it takes roles, inputs and fail_on_drift)'
                                    % ', '.join(unknown))
        roles = args.get('roles')
        if roles is None and 'dbhost_roles' in task_vars:
            roles = self._value(task_vars, 'dbhost_roles')
        if roles is not None and not isinstance(roles, (list, tuple)):
            raise AnsibleActionFail('host_state: roles must be a list of role names, got %r' % (roles,))
        wanted = list(ROLES) if roles is None else list(roles)
        if 'processor_sets' in wanted and 'shared_memory' not in wanted:
            wanted.append('shared_memory')   # processor_sets_shared_memory sizes the set's huge pages
        given = args.get('inputs') or {}
        inputs = {}
        for role in wanted:
            if role not in ROLES:
                continue
            variables = role_variables(role)
            values = {}
            for name, default in variables.items():
                if name == '__has_default':
                    continue
                if name in task_vars:
                    values[name] = self._value(task_vars, name)
                elif name in variables['__has_default']:
                    values[name] = default
            values.update(given.get(role) or {})
            inputs[role] = values
        module_args = {'inputs': inputs}
        if 'fail_on_drift' in args:
            module_args['fail_on_drift'] = args['fail_on_drift']
        if roles is not None:
            module_args['roles'] = list(roles)
        result.update(self._execute_module(module_name='dbhost.tuning.host_state', module_args=module_args,
                                           task_vars=task_vars))
        return result
