# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel_params role's variables -> sysctl records and calls.

The profile's keys (sizing/profiles.py, each with its vendor source) and
kernel_params_settings become one sysctl call for the role (its params are given after
merging, by state/desired.py); kernel_params_absent becomes a second call that removes
keys from the file.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_params import ValueCompare
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import PROFILE_NAMES, kernel_profile
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, flag, root_of, text

ROLE = 'kernel_params'


def compile_kernel_params(state, v, facts):
    """Add the kernel_params role's records and calls to ``state``."""
    system = facts.get('system', 'Linux')
    profile_name = v.get('kernel_params_profile', 'oracle')
    if profile_name not in PROFILE_NAMES:
        raise InputError('kernel_params_profile: %r is not one of %s' % (profile_name, ', '.join(PROFILE_NAMES)))
    mode = v.get('kernel_params_mode', 'minimum')
    if mode not in compare.COMPARISONS:
        raise InputError('kernel_params_mode: %r is not one of %s' % (mode, ', '.join(compare.COMPARISONS)))
    settings = v.get('kernel_params_settings') or {}
    if not isinstance(settings, dict):
        raise InputError('kernel_params_settings must be a dict of name: value')
    chooser = ValueCompare(mode, sysctl.normalize_value)
    wanted = {}
    for key, (value, how, source) in kernel_profile(profile_name, system).items():
        wanted[key] = (value, how if mode != compare.EXACT else compare.EXACT,
                       '%s (profile %s)' % (source, profile_name))
    for name, value in settings.items():
        key = _canonical(name, system, 'kernel_params_settings')
        if value is None:
            wanted.pop(key, None)
            continue
        value_text = text(value)
        wanted[key] = (value_text, chooser.comparison(key, sysctl.normalize_value(value_text)),
                       'kernel_params_settings')
    for key in sorted(wanted):
        value, how, source = wanted[key]
        state.add('sysctl', key, value, how, ROLE, source)
    absent = v.get('kernel_params_absent') or []
    common = dict(file=v.get('kernel_params_file') or None, root=root_of(v, 'kernel_params_root'),
                  backup=flag(v, 'kernel_params_backup', False))
    state.calls.append(Call('sysctl', ROLE, dict(
        common, apply=flag(v, 'kernel_params_apply', True), persist=flag(v, 'kernel_params_persist', True),
        fail_on_shadowed=flag(v, 'kernel_params_fail_on_shadowed', True), mode=mode)))
    if absent:
        state.calls.append(Call('sysctl', ROLE, dict(common, params=list(absent), state='absent'), label='sysctl absent'))


def _canonical(name, system, where):
    if system != 'Linux':
        return str(name)
    try:
        return sysctl.validate_name(name).replace('/', '.')
    except ValueError as exc:
        raise InputError('%s: %s' % (where, exc))
