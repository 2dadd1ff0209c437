# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the direct_io role's variables -> mount and db_parameter records and calls.

direct_io_mounts (with the options per file system type) become one mounts call;
each direct_io_databases item becomes one db_parameter call (and a restart when asked).

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, flag, root_of, text, to_flag, role_var


def compile_direct_io(state, v, facts):
    role = 'direct_io'
    root = root_of(v, 'direct_io_root')
    backup = flag(v, 'direct_io_backup')
    fstype_options = role_var(v, 'direct_io_fstype_options') or {}
    mounted = {}
    for entry in facts.get('mounts') or []:
        mounted[entry.get('mount_point')] = entry.get('fstype')
    mounts, not_applicable, unknown = [], [], []
    for index, mount in enumerate(role_var(v, 'direct_io_mounts') or []):
        if not isinstance(mount, dict) or not mount.get('path'):
            raise InputError('direct_io_mounts[%d] must be a dict with a path' % index)
        path = mount['path'].rstrip('/') or '/'
        fstype = mount.get('fstype') or mounted.get(path)
        if fstype is None:
            unknown.append(mount['path'])
            continue
        options = mount['options'] if mount.get('options') is not None else fstype_options.get(fstype, [])
        absent = mount.get('absent') or []
        if not options and not absent:
            not_applicable.append(mount['path'])
            continue
        for option in options:
            state.add('mount_options', '%s %s' % (mount['path'], option), option, compare.EXACT, role,
                      'role variable: direct_io_fstype_options[%s]' % fstype if mount.get('options') is None
                      else 'user: direct_io_mounts[%d].options' % index)
        mounts.append({'path': mount['path'], 'present': list(options), 'absent': list(absent)})
    if unknown:
        raise InputError('direct_io_mounts: %s is not mounted, so its file system type is unknown; give it as fstype'
                         % ', '.join(unknown))
    if not_applicable:
        state.messages.extend('%s: no direct I/O mount option for this file system type; nothing changed' % p
                              for p in not_applicable)
    if mounts:
        state.calls.append(Call('mount_options', role, dict(
            mounts=mounts, remount=flag(v, 'direct_io_remount'), fstab=role_var(v, 'direct_io_fstab') or None,
            root=root, backup=backup)))
    engine_params = role_var(v, 'direct_io_engine_params') or {}
    restart = flag(v, 'direct_io_restart')
    for index, db in enumerate(role_var(v, 'direct_io_databases') or []):
        if not isinstance(db, dict) or db.get('engine') not in ('oracle', 'postgresql', 'mysql'):
            raise InputError('direct_io_databases[%d].engine must be oracle, postgresql or mysql' % index)
        params = dict(engine_params.get(db['engine']) or {})
        params.update(db.get('params') or {})
        params = dict((k, val) for k, val in params.items() if val is not None)
        if not params:
            continue
        where = db.get('path') or db.get('oracle_sid') or 'spfile'
        for name, value in sorted(params.items()):
            state.add('db_parameter', '%s %s %s' % (db['engine'], where, name), text(value), compare.EXACT, role,
                      'user: direct_io_databases[%d].params' % index if name in (db.get('params') or {}) else
                      'role variable: direct_io_engine_params[%s]' % db['engine'])
        kwargs = dict(engine=db['engine'], params=params, backup=backup, root=root)
        for key in ('path', 'oracle_home', 'oracle_sid', 'sid', 'os_user', 'mysql_section'):
            if db.get(key) is not None:
                kwargs[key] = db[key]
        if db.get('read_live') is not None:
            kwargs['read_live'] = to_flag(db['read_live'], 'direct_io_databases[%d].read_live' % index)
        state.calls.append(Call('db_parameter', role, kwargs, label='db_parameter %s %s' % (db['engine'], where)))
        if restart and db.get('service'):
            state.restart_services.append({'owner': role, 'service': db['service'], 'when': 'db_parameter %s %s'
                                           % (db['engine'], where)})
