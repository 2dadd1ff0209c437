# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what the code around the plans knows of a kind, named by its registry entry.

host_state, the desired-state compiler and a revert treat every kind alike, except where a
kind says otherwise through the hooks of its entry in state/registry.py (``Kind(..., hooks=)``),
never by a test of its name:

- ``former``: the name a baseline kept before it named the kind (the plan's class name):
  an entry written by an older version reads as this kind (engine/baseline.py, plans/revert.py);
- ``record_keys(call, plan, setting)``: the desired-state keys a record of the plan may stand
  for besides its name and ``target name`` (the record label: a plan names some records
  otherwise than the compile step keys them), for host_state's ``source_of``;
- ``part(call, part, settings)``: where the plan's result goes in its role's part of the
  host_state result, ``(list name, entry)``; None: under the kind's name (or the call's label);
- ``revert_waits``: what a revert cannot undo itself once it puts a file of the kind back,
  ``(status, why)`` (a database reads its parameters only at its next start), when the file's
  path says nothing (plans/revert.py ``consequence``);
- ``read_only``: the kind writes nothing (db_effect): no file, no live value, nothing to revert;
- ``merged(call, owned)``: a kind whose calls take their keys from the records their role owns
  once every role's records are merged (the merge may move a key to another role's call); it
  fills the call and says whether it is still wanted (state/desired.py).

A new kind needs none of them: ``Hooks()`` is what every kind does.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import PENDING_RESTART


class Hooks(object):
    """A kind's hooks (the module docstring); each left out is what every kind does."""

    def __init__(self, former=None, record_keys=None, part=None, revert_waits=None, merged=None, read_only=False):
        self.former = former
        self.read_only = read_only
        self.record_keys = record_keys or (lambda call, plan, setting: [])
        self.part = part
        self.revert_waits = revert_waits
        self.merged = merged


def named(kinds, name):
    """The kind (of ``kinds``, the registry's) a baseline entry names: by its name, or, in a baseline kept
    before entries named kinds, by its plan's class name (``former``); None when neither."""
    if name in kinds:
        return kinds[name]
    return next((kind for kind in kinds.values() if kind.hooks.former and kind.hooks.former == name), None)


def revert_waits(kinds, name):
    """What a revert cannot undo itself in a file that the kind a baseline entry names (``name``) wrote."""
    kind = named(kinds, name)
    return kind.hooks.revert_waits if kind is not None else None


def _sysfs_keys(call, plan, setting):
    """A sysfs attribute's record is keyed by its path under /sys (the compile step's variable names it so)."""
    name = str(setting.name)
    return [name[len('/sys/'):]] if name.startswith('/sys/') else []


def _resource_limits_keys(call, plan, setting):
    """A service's limit is keyed by the service's name without ``.service``."""
    return [str(setting.name).replace('.service ', ' ', 1)]


def _block_queue_keys(call, plan, setting):
    """An attribute is keyed by the label of the devices item that gave it, which the plan names."""
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.block_queue import device_label
    index = plan.item_of(setting)
    if index is None:
        return []
    return ['%s %s' % (device_label(call.kwargs['devices'][index], index), str(setting.name).rsplit('/', 1)[-1])]


def _db_parameter_keys(call, plan, setting):
    """A parameter is keyed by its database (the call's label after the kind) and its name."""
    return ['%s %s' % (call.label[len(call.kind) + 1:], setting.name)]


def _db_parameter_part(call, part, settings):
    """Every database in the role's ``databases``: its engine, file and label beside its records."""
    return 'databases', {'engine': call.kwargs.get('engine'), 'path': call.kwargs.get('path'), 'label': call.label,
                         'changed': part.changed, 'restart_required': part.restart_required, 'settings': settings}


def _kernel_params_merged(call, owned):
    """The keys the call's role owns after the merge, with their comparisons; a call that removes keys
    (``state: absent``) keeps its own.  Wanted while it has keys."""
    if call.kwargs.get('state') != 'absent':
        call.kwargs['params'] = dict((r['key'], r['desired']) for r in owned)
        call.kwargs['comparisons'] = dict((r['key'], r['comparison']) for r in owned)
    return bool(call.kwargs.get('params'))


KERNEL_PARAMS = Hooks('KernelParams', merged=_kernel_params_merged)
HUGEPAGES = Hooks('HugePages')
RESOURCE_LIMITS = Hooks('ResourceLimits', record_keys=_resource_limits_keys)
SYSFS_ATTR = Hooks('SysfsAttributes', record_keys=_sysfs_keys)
BLOCK_QUEUE = Hooks('BlockQueue', record_keys=_block_queue_keys)
MOUNT_OPTIONS = Hooks('MountOptions')
DB_PARAMETER = Hooks('DbParameter', record_keys=_db_parameter_keys, part=_db_parameter_part, revert_waits=(
    PENDING_RESTART, 'the database server reads it at its next start (or reload, for some parameters)'))
PROCESSOR_SET = Hooks('ProcessorSet')
KERNEL_CMDLINE = Hooks('KernelCmdline')
DB_EFFECT = Hooks('DbEffect', read_only=True)
