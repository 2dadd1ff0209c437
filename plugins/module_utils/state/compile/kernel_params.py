# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel_params role's variables -> kernel_params records and calls.

The profile's keys (sizing/profiles.py, each with its vendor source) and
kernel_params_settings become one kernel_params call for the role (its params are given after
merging, by state/desired.py); kernel_params_absent becomes a second call that removes
keys from the file; kernel_params_cmdline a kernel_cmdline call (boot parameters).  kernel_params_mode applies to the profile's values only: a value the
user writes is exact unless written ``>=N`` / ``<=N`` or given a comparison in
kernel_params_comparisons.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import (
    PROFILE_NAMES, kernel_profile, profile_comparison, user_comparison)
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, flag, root_of, text, role_var

ROLE = 'kernel_params'


def compile_kernel_params(state, v, facts):
    """Add the kernel_params role's records and calls to ``state``."""
    system = facts.get('system', 'Linux')
    profile_name = role_var(v, 'kernel_params_profile')
    if profile_name not in PROFILE_NAMES:
        raise InputError('kernel_params_profile: %r is not one of %s' % (profile_name, ', '.join(PROFILE_NAMES)))
    mode = role_var(v, 'kernel_params_mode')
    if mode not in compare.COMPARISONS:
        raise InputError('kernel_params_mode: %r is not one of %s' % (mode, ', '.join(compare.COMPARISONS)))
    settings = role_var(v, 'kernel_params_settings') or {}
    if not isinstance(settings, dict):
        raise InputError('kernel_params_settings must be a dict of name: value')
    wanted = {}
    for key, (value, rule, source) in kernel_profile(profile_name, system).items():
        wanted[key] = (value, profile_comparison(key, rule, mode), '%s (profile %s)' % (source, profile_name))
    asked = _asked_comparisons(role_var(v, 'kernel_params_comparisons') or {}, system)
    for name, value in settings.items():
        key = _canonical(name, system, 'kernel_params_settings')
        if value is None:
            wanted.pop(key, None)
            continue
        wanted[key] = _user_value(key, name, value, asked.pop(key, None))
    if asked:
        raise InputError('kernel_params_comparisons: %s is not in kernel_params_settings'
                         % ', '.join(sorted(asked)))
    for key in sorted(wanted):
        value, how, source = wanted[key]
        state.add('kernel_params', key, value, how, ROLE, source)
    absent = role_var(v, 'kernel_params_absent') or []
    common = dict(file=role_var(v, 'kernel_params_file') or None, root=root_of(v, 'kernel_params_root'),
                  backup=flag(v, 'kernel_params_backup'))
    state.calls.append(Call('kernel_params', ROLE, dict(
        common, apply=flag(v, 'kernel_params_apply'), persist=flag(v, 'kernel_params_persist'),
        fail_on_shadowed=flag(v, 'kernel_params_fail_on_shadowed'), mode=mode)))
    if absent:
        state.calls.append(Call('kernel_params', ROLE, dict(common, params=list(absent), state='absent'),
                                label='kernel_params absent', source='user: kernel_params_absent'))
    _compile_cmdline(state, v, common)


def _compile_cmdline(state, v, common):
    """kernel_params_cmdline -> one kernel_cmdline record per boot parameter and one call (none when empty)."""
    params = role_var(v, 'kernel_params_cmdline') or {}
    if not isinstance(params, dict):
        raise InputError('kernel_params_cmdline must be a dict of boot parameter: value (null for a bare flag)')
    if not params:
        return
    for name, value in sorted(params.items(), key=lambda item: str(item[0])):
        shown = name if value is None or value == '' else text(value)
        state.add('kernel_cmdline', name, shown, compare.EXACT, ROLE, 'user: kernel_params_cmdline')
    state.calls.append(Call('kernel_cmdline', ROLE, dict(
        params=dict(params), root=common['root'], backup=common['backup'],
        fail_on_shadowed=flag(v, 'kernel_params_fail_on_shadowed'))))


def _asked_comparisons(comparisons, system):
    """kernel_params_comparisons as {canonical key: comparison}, each checked."""
    if not isinstance(comparisons, dict):
        raise InputError('kernel_params_comparisons must be a dict of name: minimum | maximum | exact (or a list)')
    asked = {}
    for name, how in comparisons.items():
        try:
            asked[_canonical(name, system, 'kernel_params_comparisons')] = compare.validate(
                how, 'kernel_params_comparisons %r' % (name,))
        except compare.ComparisonError as exc:
            raise InputError(str(exc))
    return asked


def _user_value(key, name, value, asked):
    """(value, comparison, source) of one kernel_params_settings entry.

    What the user wrote is exact, unless written >=N / <=N or given a comparison in
    kernel_params_comparisons (both: they must agree); kernel_params_mode never applies.
    """
    try:
        value_text, marked = compare.split_marks(text(value))
    except compare.ComparisonError as exc:
        raise InputError('kernel_params_settings %r: %s' % (name, exc))
    if asked is not None and marked is not None and user_comparison(key, asked) != user_comparison(key, marked):
        raise InputError('kernel_params_settings %r is written %r but kernel_params_comparisons says %r; '
                         'say it once' % (name, text(value), asked))
    how = asked if asked is not None else marked if marked is not None else compare.EXACT
    how = user_comparison(key, how)
    if isinstance(how, list) and len(how) != len(value_text.split()):
        raise InputError('kernel_params_settings %r: %d comparisons for the %d fields of %r'
                         % (name, len(how), len(value_text.split()), value_text))
    if isinstance(how, list) and len(set(how)) == 1:
        how = how[0]
    return value_text, how, 'user: kernel_params_settings'


def _canonical(name, system, where):
    if system != 'Linux':
        return str(name)
    try:
        return sysctl.validate_name(name).replace('/', '.')
    except ValueError as exc:
        raise InputError('%s: %s' % (where, exc))
