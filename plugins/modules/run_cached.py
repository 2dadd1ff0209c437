#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: run_cached
short_description: Run host_state from a copy of the collection's code kept on the host
version_added: 0.3.0
description:
  - The M(dbhost.tuning.host_state) action plugin runs this module instead of the host_state module, unless the
    host sets C(dbhost_code_cache=false). It is not meant to be called from a playbook.
  - Its payload carries none of the collection's module_utils. It runs host_state from a copy of them kept on the
    host in a folder named after their SHA-256 (O(code_hash)), with their compiled C(.pyc) files, so that a run
    neither receives nor compiles them again.
  - When that copy is missing, the module returns RV(code_missing) and does nothing else; the action plugin then
    sends the code (O(code)) in a second round trip, and the module keeps it and runs host_state from it.
  - A copy is used only if its folder and the folder above it belong to the user the module runs as, nobody else
    may write to them, and its files still have the digest they are named after. A copy that fails this is
    replaced when the folder is this user's alone; otherwise, or when the folder cannot be written (a read-only
    file system), host_state runs from the code sent, held in memory, with a warning.
  - Storing a copy writes to the host in check mode too, outside everything the collection tunes, as Ansible
    itself writes its payload to a temporary folder of the host on every module run. A copy of other code stored
    over an hour ago is removed when a new one is stored. C(dbhost_code_cache=false) runs the host_state module
    itself, which writes nothing there.
author:
  - dbhost.tuning contributors (!UNKNOWN)
options:
  module:
    description: The module of the collection to run.
    type: str
    required: true
    choices: [host_state]
  module_args:
    description: Its arguments, as its documentation gives them.
    type: dict
    required: true
  code_hash:
    description: The SHA-256 of the collection's module_utils, every path and content in path order.
    type: str
    required: true
  code:
    description:
      - The collection's module_utils, as base64 text of a zip, sent when the host lacks them.
      - Refused unless it has the digest O(code_hash).
    type: str
  cache_dir:
    description:
      - The folder that holds the copies, one subfolder per digest.
      - Default C(/var/cache/dbhost-tuning/code) for root, else C(dbhost-tuning/code) in the user's cache folder
        (C($XDG_CACHE_HOME), or C(~/.cache)). The action plugin passes C(dbhost_code_cache_dir) when the host
        defines it.
    type: path
attributes:
  check_mode:
    support: full
    description: As host_state's; the copy of the code is kept in check mode too.
  diff_mode:
    support: full
    description: As host_state's.
  platform:
    support: full
    platforms: [linux, freebsd, sunos]
    description: Wherever host_state runs.
'''

EXAMPLES = r'''
# The host_state action plugin runs it; a playbook names host_state.
- name: Check the host's state against the roles' variables
  dbhost.tuning.host_state:
  check_mode: true
'''

RETURN = r'''
code_missing:
  description:
    - True when the host has no usable copy of the code named by O(code_hash) and O(code) was not sent. Nothing
      else was done.
  returned: when the copy is missing
  type: bool
packed_result:
  description:
    - Every key of host_state's result but C(changed), C(failed), C(msg), C(restart_required), C(reboot_required),
      C(drift_gate), C(warnings) and the others Ansible reads itself, as one JSON text. The action plugin puts them
      back, so that a task's result is host_state's as it is; one text is one value where Ansible and Mitogen walk
      every value of a module's result on the controller.
    - Not returned when host_state's arguments hold a value marked no_log, which Ansible then removes from the
      result as it does for any module.
  returned: when host_state ran
  type: str
'''

import copy

from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import code_cache

# the modules run_cached may run: (module of module_utils, its function that takes an AnsibleModule class)
TARGETS = {'host_state': ('state.host_state', 'run_module')}

SPEC = dict(
    module=dict(type='str', required=True, choices=sorted(TARGETS)),
    # no_log: the module's arguments are logged by the module itself, the code is no log line's business
    module_args=dict(type='dict', required=True, no_log=True),
    code_hash=dict(type='str', required=True),
    code=dict(type='str', no_log=True),
    cache_dir=dict(type='path'),
)


def given(params):
    """An AnsibleModule that takes params as its arguments, not this module's."""
    class Given(AnsibleModule):
        def _load_params(self):
            self.params = copy.deepcopy(params)

        def exit_json(self, **kwargs):
            AnsibleModule.exit_json(self, **self._packed(kwargs))

        def fail_json(self, msg, **kwargs):
            AnsibleModule.fail_json(self, msg, **self._packed(kwargs))

        def _packed(self, result):
            if self.no_log_values:
                # Ansible strips those values from every string of the result it prints; from a packed
                # text it could not strip them whole, so the result stays as host_state gives it
                return result
            result.setdefault('invocation', {'module_args': self.params})
            packed = code_cache.pack_result(result)
            if code_cache.PACKED in packed:
                # the invocation is in the packed text; Ansible adds its own where the key is missing
                packed['invocation'] = {}
            return packed
    return Given


def finder(module):
    """Where the code comes from: the host's copy, the copy just stored, or the code sent held in memory.
    None when the host has no copy and the code was not sent."""
    params = module.params
    root = params['cache_dir'] or code_cache.default_dir()
    problem = None
    try:
        folder = code_cache.lookup(root, params['code_hash'])
        if folder:
            return code_cache.Finder(folder=folder)
    except (code_cache.CacheError, OSError) as error:
        problem = str(error)
    if params['code'] is None:
        return None
    try:
        files = code_cache.unpack(params['code'], params['code_hash'])
    except code_cache.CacheError as error:
        module.fail_json(msg='run_cached: %s' % error)
    try:
        return code_cache.Finder(folder=code_cache.store(root, params['code_hash'], files))
    except (code_cache.CacheError, OSError) as error:
        problem = str(error)
    module.warn('run_cached: the collection code is not kept on the host (%s); it ran from the copy sent, and every '
                'run will send it again: set dbhost_code_cache_dir to a folder it can keep, or dbhost_code_cache '
                'to false' % problem)
    return code_cache.Finder(files=files)


def main():
    module = AnsibleModule(argument_spec=SPEC, supports_check_mode=True)
    source = finder(module)
    if source is None:
        module.exit_json(changed=False, code_missing=True)
    code_cache.serve(source)
    name, function = TARGETS[module.params['module']]
    target = __import__('%s.%s' % (code_cache.PREFIX, name), fromlist=[function])
    params = dict(module.params['module_args'])
    # check mode, diff, verbosity, no_log...: as the task gave them to this module
    params.update((key, value) for key, value in basic._load_params().items() if key.startswith('_ansible_'))
    params['_ansible_module_name'] = 'dbhost.tuning.' + module.params['module']
    getattr(target, function)(given(params))


if __name__ == '__main__':
    main()
