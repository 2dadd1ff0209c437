# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: every kind of setting and every role, declared once.

A KIND is named as its module (plugins/modules/<kind>.py) and is that name everywhere: the
``kind`` of a desired-state record (state/desired.py), of a compile step's Call, of a
host_state record and plan.  Its entry holds:

- ``spec``: the module's argument spec (the module passes this very object to AnsibleModule);
- ``plan``: the factory ``plan(options, context) -> Plan``, the one way a plan is made, by the
  module (from its params) and by host_state (from a compile step's Call);
- ``internal``: options a compile step may give that the module does not take;
- ``constraints``: AnsibleModule's ``mutually_exclusive``, ``required_together``,
  ``required_one_of``, ``required_if``, ``required_by`` of the module's options, checked by
  ``Kind.check()`` whenever a plan is made: a module's params and a compile step's Call meet
  the same check and fail with the same message, naming the kind and the options, before
  anything is touched.

The modules that are no kind (host_state, host_facts) have their argument spec here too
(MODULES holds every module's, the kinds' among them), so that every module's spec has one
source: ``spec(name)`` for any of them.

A ROLE's entry holds its compile step ``compile(state, inputs, facts)`` (state/compile/<role>.py),
the host facts it needs (engine/host_facts.py subsets), why a listed role can plan nothing
(``nothing_asked``), whether a host that names no roles uses it (``wanted``, from the role's
variables), the roles whose variables it reads too (``uses``: the action plugin sends them), and
what its compile step gives another role's (``gives``: processor_sets' NUMA node, shared_memory's
``numa_node``).
ROLES is in merge order: on equal values the first role keeps a key (state/desired.py).

Plans and compile steps are imported where they are used, so that a module loads only its own
plan.  Pure Python; of Ansible only the checks AnsibleModule runs for its constraints
(ansible.module_utils.common.validation), so that they word a failure as the modules always did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
from collections import namedtuple

from ansible.module_utils.common.validation import (
    check_mutually_exclusive, check_required_by, check_required_if, check_required_one_of, check_required_together)

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import shared_options
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import run_plan

PREFIX = 'ansible_collections.dbhost.tuning.plugins.module_utils.'


class Context(object):
    """What plans need from the module: check mode and the ways to run commands."""

    def __init__(self, check_mode=False, runner=None, bin_path=None, db_runner=None):
        self.check_mode = check_mode
        self.runner = runner
        self.bin_path = bin_path or (lambda name, required=False: None)
        self.db_runner = db_runner or runner

    @classmethod
    def of(cls, module):
        """A module's context: its check mode, run_command (a database client's in ``/``), get_bin_path."""
        def db_runner(argv, data=None, environ=None):
            return module.run_command(argv, data=data, environ_update=environ or {}, cwd='/')
        return cls(module.check_mode, module.run_command, module.get_bin_path, db_runner)


class ModuleEntry(object):
    """One module's argument spec, from ``spec()`` (a function: specs that name a plan's defaults import it late)."""

    def __init__(self, name, spec):
        self.name = name
        self._spec = spec
        self._made = None

    @property
    def spec(self):
        """The module's argument spec: made once, then always this same object."""
        if self._made is None:
            self._made = self._spec()
        return self._made


# The constraints a kind may declare, with their check, in the order AnsibleModule checks them.
CONSTRAINTS = (('mutually_exclusive', check_mutually_exclusive), ('required_together', check_required_together),
               ('required_one_of', check_required_one_of), ('required_if', check_required_if),
               ('required_by', check_required_by))


class Kind(ModuleEntry):
    """One kind of setting: its module's argument spec, its plan factory, the options only compile steps
    give, the constraints between its options."""

    def __init__(self, name, spec, plan, internal=(), constraints=None, read_only=False):
        super(Kind, self).__init__(name, spec)
        self.read_only = read_only   # writes nothing (db_effect): no file, no live value, nothing to revert
        self.factory = plan
        self.internal = tuple(internal)
        self.constraints = dict(constraints or {})
        unknown = sorted(set(self.constraints) - set(rule for rule, check in CONSTRAINTS))
        if unknown:
            raise ValueError('%s: not a constraint: %s' % (name, ', '.join(unknown)))
        self._options = None

    def options(self, values):
        """The options object of a call: every option of the spec, a value left out or None taking the
        spec's default; a name the kind does not take is refused, naming it."""
        names = sorted(set(self.spec) | set(self.internal))
        if self._options is None:
            self._options = namedtuple('%s_options' % self.name, names)
        unknown = sorted(name for name in values if name not in names)
        if unknown:
            raise InputError('%s: unknown option(s) %s' % (self.name, ', '.join(unknown)))
        merged = dict((name, copy.deepcopy(self.spec.get(name, {}).get('default'))) for name in names)
        merged.update((name, value) for name, value in values.items() if value is not None)
        return self._options(**merged)

    def check(self, options):
        """Refuse an options object that breaks one of the kind's constraints, naming the kind and the
        options.  An option counts as given when its value is not None, its default included: the same
        for a module's params (every option, defaults filled) and a compile step's few."""
        given = dict((name, value) for name, value in options._asdict().items() if value is not None)
        for rule, check in CONSTRAINTS:
            try:
                check(self.constraints.get(rule), given)
            except TypeError as exc:
                raise InputError('%s: %s' % (self.name, exc))

    def plan(self, values, context):
        """The plan of a call (a module's params, or a compile step's Call kwargs), its constraints met."""
        options = self.options(values)
        self.check(options)
        return self.factory(options, context)


def _given(items):
    """List items with the suboptions the user left out (None) dropped: the plans want only what was given."""
    return [dict((key, value) for key, value in item.items() if value is not None) for item in items or []]


def _kwargs(options, *dropped):
    """The options as keyword arguments of a plan whose parameters are named as the options."""
    return dict((name, value) for name, value in options._asdict().items()
                if name not in dropped and name != 'fail_on_drift')


# ------------------------------------------------------------------ kinds
def _kernel_params_spec():
    return dict(
        params=dict(type='raw', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        apply=dict(type='bool', default=True),
        persist=dict(type='bool', default=True),
        file=dict(type='path'),
        mode=dict(type='str', default='exact', choices=['exact', 'minimum', 'maximum']),
        comparisons=dict(type='dict', default={}),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _kernel_params_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_params import KernelParams
    return KernelParams(check_mode=ctx.check_mode, runner=ctx.runner, **_kwargs(options))


def _hugepages_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import hugepages
    return dict(
        pages=dict(type='list', elements='dict', required=True, options=dict(
            size=dict(type='raw'),
            count=dict(type='int', required=True),
            node=dict(type='int'),
        )),
        on_short=dict(type='str', default='fail', choices=['fail', 'warn']),
        comparison=dict(type='str', default='exact', choices=['exact', 'minimum']),
        compact=dict(type='bool', default=True),
        apply=dict(type='bool', default=True),
        persist=dict(type='bool', default=True),
        sysctl_file=dict(type='path', default=hugepages.DEFAULT_SYSCTL_FILE),
        tmpfiles_file=dict(type='path', default=hugepages.DEFAULT_TMPFILES_FILE),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _hugepages_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.hugepages import HugePages
    return HugePages(check_mode=ctx.check_mode, **_kwargs(options))


def _resource_limits_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import resource_limits
    return dict(
        limits=dict(type='list', elements='dict', default=[], options=dict(
            domain=dict(type='str', required=True),
            type=dict(type='str', required=True, choices=['soft', 'hard', '-']),
            item=dict(type='str', required=True),
            value=dict(type='raw', required=True),
        )),
        limits_file=dict(type='path', default=resource_limits.DEFAULT_LIMITS_FILE),
        service=dict(type='str'),
        service_limits=dict(type='dict'),
        dropin_name=dict(type='str', default=resource_limits.DEFAULT_DROPIN_NAME),
        projects=dict(type='list', elements='dict', default=[], options=dict(
            name=dict(type='str', required=True),
            id=dict(type='int'),
            comment=dict(type='str'),
            users=dict(type='list', elements='str'),
            groups=dict(type='list', elements='str'),
            attributes=dict(type='dict'),
        )),
        comparison=dict(type='str', default='exact', choices=['exact', 'minimum']),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _resource_limits_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.resource_limits import ResourceLimits
    return ResourceLimits(limits_list=options.limits, check_mode=ctx.check_mode, runner=ctx.runner,
                          **_kwargs(options, 'limits'))


def _sysfs_attr_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sysfs_attr
    return dict(
        attributes=dict(type='dict', required=True),
        apply=dict(type='bool', default=True),
        persist=dict(type='bool', default=True),
        tmpfiles_file=dict(type='path', default=sysfs_attr.DEFAULT_TMPFILES_FILE),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _sysfs_attr_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.sysfs_attr import SysfsAttributes
    return SysfsAttributes(check_mode=ctx.check_mode, **_kwargs(options))


def _block_queue_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue import plan
    selector = dict(type='list', elements='str')
    return dict(
        devices=dict(type='list', elements='dict', required=True, options=dict(
            name=selector, wwn=selector, serial=selector, model=selector, vendor=selector, mount=selector,
            rotational=dict(type='bool'),
            slaves=dict(type='bool', default=False),
            allow_empty=dict(type='bool'),
            attributes=dict(type='dict', required=True),
        )),
        apply=dict(type='bool', default=True),
        persist=dict(type='bool', default=True),
        file=dict(type='path', default=plan.DEFAULT_FILE),
        allow_empty=dict(type='bool', default=False),
        reload=dict(type='bool', default=True),
        trigger=dict(type='bool', default=False),
        **shared_options('root', 'backup', 'fail_on_drift'))


def _block_queue_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue.plan import BlockQueue
    return BlockQueue(_given(options.devices), check_mode=ctx.check_mode, runner=ctx.runner, bin_path=ctx.bin_path,
                      **_kwargs(options, 'devices'))


def _mount_options_spec():
    return dict(
        path=dict(type='path'),
        present=dict(type='list', elements='str', default=[]),
        absent=dict(type='list', elements='str', default=[]),
        mounts=dict(type='list', elements='dict', options=dict(
            path=dict(type='path', required=True),
            present=dict(type='list', elements='str', default=[]),
            absent=dict(type='list', elements='str', default=[]),
        )),
        remount=dict(type='bool', default=True),
        fstab=dict(type='path'),
        **shared_options('root', 'backup', 'fail_on_drift'))


def _mount_options_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.plan import MountOptions
    if options.mounts is not None:
        if options.present or options.absent:
            raise InputError('present and absent go inside each item of mounts, not beside it')
        mounts = options.mounts
    else:
        mounts = [dict(path=options.path, present=options.present, absent=options.absent)]
    live_root = '/' if os.path.realpath(options.root) == '/' else None
    return MountOptions(mounts, remount=options.remount, file=options.fstab, root=options.root, backup=options.backup,
                        check_mode=ctx.check_mode, live_root=live_root, runner=ctx.runner,
                        mount_command=ctx.bin_path('mount', required=live_root is not None) or 'mount')


def _db_parameter_spec():
    return dict(
        engine=dict(type='str', required=True, choices=['oracle', 'postgresql', 'mysql']),
        path=dict(type='path'),
        params=dict(type='dict', required=True),
        sid=dict(type='str', default='*'),
        oracle_home=dict(type='path'),
        oracle_sid=dict(type='str'),
        mysql_section=dict(type='str', default='mysqld'),
        read_live=dict(type='bool', default=True),
        reload=dict(type='bool', default=True),
        os_user=dict(type='str'),
        login_user=dict(type='str'),
        login_password=dict(type='str', no_log=True),
        login_host=dict(type='str'),
        login_port=dict(type='int'),
        login_db=dict(type='str', default='postgres'),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _db_parameter_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.plan import DbParameter
    return DbParameter(check_mode=ctx.check_mode, runner=ctx.db_runner, which=ctx.bin_path, **_kwargs(options))


def _processor_set_spec():
    return dict(
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        cpus=dict(type='raw'),
        mems=dict(type='raw'),
        exclusive=dict(type='bool', default=False),
        service=dict(type='str'),
        service_mode=dict(type='str', default='auto', choices=['auto', 'affinity', 'cpuset']),
        processes=dict(type='list', elements='dict', options=dict(
            pid_file=dict(type='path'),
            user=dict(type='str'),
            pattern=dict(type='str'),
        )),
        project=dict(type='str'),
        persist=dict(type='bool', default=True),
        **shared_options('root', 'backup', 'fail_on_drift'))


def _processor_set_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.plan import ProcessorSet
    args = options._asdict()
    args['processes'] = _given(options.processes)
    return ProcessorSet(args, check_mode=ctx.check_mode, runner=ctx.runner)


def _kernel_cmdline_spec():
    return dict(
        params=dict(type='raw', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        update_bootloader=dict(type='bool', default=True),
        **shared_options('root', 'backup', 'fail_on_shadowed', 'fail_on_drift'))


def _kernel_cmdline_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_cmdline import KernelCmdline
    return KernelCmdline(check_mode=ctx.check_mode, runner=ctx.runner, bin_path=ctx.bin_path, **_kwargs(options))


def _db_effect_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect import plan
    return dict(
        service=dict(type='str', required=True),
        checks=dict(type='list', elements='str', required=True, choices=list(plan.CHECKS)),
        engine=dict(type='str', choices=list(plan.ENGINES)),
        huge_pages_bytes=dict(type='int'),
        memlock=dict(type='str'),
        cpus=dict(type='str'),
        mems=dict(type='str'),
        direct_io_paths=dict(type='list', elements='path', default=[]),
        changed_by=dict(type='list', elements='path', default=[]),
        **shared_options('root', 'fail_on_drift'))


def _db_effect_plan(options, ctx):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.plan import DbEffect
    return DbEffect(check_mode=ctx.check_mode, runner=ctx.runner, db_runner=ctx.db_runner, **_kwargs(options))


KINDS = dict((kind.name, kind) for kind in (
    Kind('kernel_params', _kernel_params_spec, _kernel_params_plan, internal=('header',)),
    Kind('hugepages', _hugepages_spec, _hugepages_plan),
    Kind('resource_limits', _resource_limits_spec, _resource_limits_plan,
         constraints=dict(required_together=[('service', 'service_limits')])),
    Kind('sysfs_attr', _sysfs_attr_spec, _sysfs_attr_plan),
    Kind('block_queue', _block_queue_spec, _block_queue_plan, internal=('comparisons',)),
    Kind('mount_options', _mount_options_spec, _mount_options_plan,
         constraints=dict(mutually_exclusive=[('path', 'mounts')], required_one_of=[('path', 'mounts')])),
    Kind('db_parameter', _db_parameter_spec, _db_parameter_plan),
    Kind('processor_set', _processor_set_spec, _processor_set_plan,
         constraints=dict(required_if=[('state', 'present', ('cpus',))])),
    Kind('kernel_cmdline', _kernel_cmdline_spec, _kernel_cmdline_plan),
    Kind('db_effect', _db_effect_spec, _db_effect_plan, read_only=True),
))


def plan(kind, values, context):
    """The plan of one call of ``kind``: its options (a module's params, a compile step's kwargs) and context."""
    return KINDS[kind].plan(values, context)


def run(module, kind):
    """The end of ``kind``'s module: run_plan (exit_json or fail_json) with the plan made from the
    module's params and context (Context.of)."""
    run_plan(module, lambda: plan(kind, module.params, Context.of(module)))


# ------------------------------------------------------------------ roles
# gives: None, or (role, option): what the compile step returns (when not None) goes to that role's
# compile step as that keyword (state.given); the giving role compiles first, and the role it gives to
# is compiled even when not listed once it has been given something (state/desired.py compile_state)
Role = namedtuple('Role', 'name compile facts nothing_asked wanted uses gives')


def _compile_kernel_params(state, inputs, facts):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.kernel_params import compile_kernel_params
    compile_kernel_params(state, inputs.get('kernel_params', {}), facts)


def _compile_shared_memory(state, inputs, facts):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.shared_memory import compile_shared_memory
    state.sizing = compile_shared_memory(state, inputs.get('shared_memory', {}), facts,
                                         **state.given.get('shared_memory', {}))


def _compile_block_queue(state, inputs, facts):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.block_queue import compile_block_queue
    compile_block_queue(state, inputs.get('block_queue', {}), facts)


def _compile_direct_io(state, inputs, facts):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.direct_io import compile_direct_io
    compile_direct_io(state, inputs.get('direct_io', {}), facts)


def _compile_processor_sets(state, inputs, facts):
    from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.processor_sets import (
        compile_processor_sets)
    return compile_processor_sets(state, inputs.get('processor_sets', {}), facts)   # the set's one NUMA node


def _has_cpus(variables):
    value = variables.get('processor_sets_cpus') or ''
    return bool(' '.join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value))


ROLE_LIST = (
    Role('kernel_params', _compile_kernel_params, facts=(),
         nothing_asked='kernel_params_profile is none and kernel_params_settings is empty',
         wanted=lambda v: True, uses=(), gives=None),
    Role('shared_memory', _compile_shared_memory, facts=('memory', 'hugepages'), nothing_asked=None,
         wanted=lambda v: v.get('shared_memory_size') not in (None, ''), uses=(), gives=None),
    Role('block_queue', _compile_block_queue, facts=(), nothing_asked='block_queue_devices is empty',
         wanted=lambda v: bool(v.get('block_queue_devices')), uses=(), gives=None),
    Role('direct_io', _compile_direct_io, facts=('mounts',),
         nothing_asked='direct_io_mounts and direct_io_databases are empty, or no mount has an option for its '
                       'file system type',
         wanted=lambda v: bool(v.get('direct_io_mounts') or v.get('direct_io_databases')), uses=(), gives=None),
    # its set's one NUMA node sizes shared_memory's huge pages (processor_sets_shared_memory)
    Role('processor_sets', _compile_processor_sets, facts=('memory', 'hugepages', 'numa'), nothing_asked=None,
         wanted=_has_cpus, uses=('shared_memory',), gives=('shared_memory', 'numa_node')),
)
ROLES = dict((role.name, role) for role in ROLE_LIST)
ROLE_NAMES = tuple(role.name for role in ROLE_LIST)


def default_roles(variables):
    """The roles a host uses when it names none: every role whose required input it has."""
    return [role.name for role in ROLE_LIST if role.wanted(variables.get(role.name) or {})]


# ------------------------------------------------------------------ the modules that are no kind
# host_state's choices: the parts of its result left out unless named (details), what it does (state);
# state/host_state.py checks them with these same tuples
DETAILS = ('desired_state', 'facts')
HOST_STATES = ('present', 'revert')


def _host_state_spec():
    return dict(
        roles=dict(type='list', elements='str', choices=list(ROLE_NAMES)),
        inputs=dict(type='dict', required=True),
        state=dict(type='str', choices=list(HOST_STATES), default='present'),
        details=dict(type='list', elements='str', choices=list(DETAILS), default=[]),
        **shared_options('fail_on_drift'))


def _host_facts_spec():
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine.host_facts import SUBSETS
    return dict(
        subset=dict(type='list', elements='str', choices=list(SUBSETS)),
        **shared_options('root'))


# Every module's argument spec, by module name: the kinds', host_state's and host_facts'.
MODULES = dict(KINDS, host_state=ModuleEntry('host_state', _host_state_spec),
               host_facts=ModuleEntry('host_facts', _host_facts_spec))


def spec(name):
    """The argument spec of the module ``name`` (a kind, host_state or host_facts; the same object on every call)."""
    return MODULES[name].spec
