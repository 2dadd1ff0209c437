# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: db_parameter for Oracle (a pfile, or the spfile through sqlplus).

The instance starts from its spfile when there is one (ORACLE_HOME/dbs/spfile<SID>.ora,
spfile.ora, or the SPFILE parameter of the pfile), else from the pfile
(formats/oracle_pfile.py: IFILE followed, the instance's own SID.name entries win over
*.name).  A pfile is edited in place like the other engines' files (FileStore); the
spfile is binary and is changed only with ALTER SYSTEM ... SCOPE=SPFILE through
``sqlplus / as sysdba`` (SpfileStore).  The live side is v$parameter (and
v$spparameter for what the spfile holds).  Every change waits for a restart.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, PENDING_RESTART, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile as pfile
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import (
    NOT_PERSISTED, Engine, LiveValue, Persisted, plain_value)

# Oracle parameters that only a restart changes (ISSYS_MODIFIABLE = FALSE); used for the
# wording when v$parameter cannot be asked.  Every pfile or SCOPE=SPFILE change waits for
# a restart anyway.
ORACLE_STATIC = frozenset([
    'filesystemio_options', 'disk_asynch_io', 'use_large_pages', 'sga_max_size', 'memory_max_target',
    'processes', 'sessions', 'db_block_size', 'db_name', 'control_files', 'lock_sga', 'pre_page_sga',
    'compatible', 'cluster_database', 'audit_trail', 'db_files', 'db_writer_processes', 'dbwr_io_slaves',
    'large_pool_size', 'java_pool_size', 'instance_number', 'remote_login_passwordfile', 'spfile',
    'undo_management', 'shared_servers', 'log_buffer', 'memory_target', 'sga_target',
])


class OracleEngine(Engine):
    name = 'oracle'
    INCLUDE_ERRORS = ('IFILE loop', 'IFILE nesting deeper')
    static_names = ORACLE_STATIC

    def __init__(self, plan):
        Engine.__init__(self, plan)
        self.sid = plan.oracle_sid
        if self.sid is None and plan.path:
            match = re.match(r'^init(.+)\.ora\Z', os.path.basename(plan.path))
            self.sid = match.group(1) if match else None
        self.mode = 'pfile'
        self.spfile = None
        self.entries = []
        self.sqlplus = None
        self.spfile_values = {}

    @staticmethod
    def check_options(plan):
        if plan.path is None and not (plan.oracle_home and plan.oracle_sid):
            raise InputError('engine oracle needs path (a pfile) or oracle_home and oracle_sid (an spfile)')

    def missing_path(self, path):
        if not (self.plan.oracle_home and self.plan.oracle_sid):
            return Engine.missing_path(self, path)
        return 'path %s does not exist; leave path out to use the spfile of %s' % (path, self.plan.oracle_sid)

    def default_os_user(self):
        """The owner of ORACLE_HOME (the software owner runs sqlplus / as sysdba), unless root."""
        if not self.plan.oracle_home:
            return None
        try:
            owner = os.stat(self.plan.oracle_home).st_uid
            return pwd.getpwuid(owner).pw_name if owner != 0 else None
        except (OSError, KeyError):
            return None

    @property
    def store(self):
        return 'spfile' if self.mode == 'spfile' else 'files'

    def validate_name(self, name):
        if not isinstance(name, str) or not pfile.NAME_RE.match(name):
            raise InputError('params name %r is not an Oracle parameter name%s' % (
                name, ' (give the instance with the sid option, not in the name)'
                if isinstance(name, str) and '.' in name else ''))
        if name.startswith('__'):
            raise InputError('params name %r: double-underscore parameters are the instance\'s own memory '
                             'bookkeeping and are not set by hand' % (name,))
        if name.lower() in ('ifile', 'spfile'):
            raise InputError('params name %r names a parameter file and is not managed here' % (name,))
        return name.lower()

    def desired(self, key, raw):
        values = raw if isinstance(raw, (list, tuple)) else [raw]
        if not values:
            raise InputError('params %r: the list of values is empty' % (key,))
        out = []
        for value in values:
            if isinstance(value, bool):
                out.append('TRUE' if value else 'FALSE')
                continue
            text = plain_value(value, key)
            if not text:
                raise InputError('params %r: the value is empty' % (key,))
            if "'" in text and '"' in text:
                raise InputError('params %r: %r holds both kinds of quote; no pfile can hold it' % (key, text))
            out.append(text)
        problem = pfile.value_problem(key, out)
        if problem:
            raise InputError('params %r: %s' % (key, problem))
        return out

    def show(self, value):
        return None if value is None else ','.join(value)

    def same(self, key, have, want, live=None):
        return pfile.same_values(have, want)

    def oracle_home_path(self, value):
        if value.startswith('?') and self.plan.oracle_home:
            return self.plan.oracle_home + value[1:]
        return value

    def locate(self):
        """pfile or spfile: the spfile when the instance has one, else the pfile (read here either way)."""
        plan = self.plan
        if plan.oracle_home and plan.oracle_sid:
            for name in ('spfile%s.ora' % plan.oracle_sid, 'spfile.ora'):
                candidate = os.path.join(plan.oracle_home, 'dbs', name)
                if os.path.isfile(self.local(candidate)):
                    self.spfile = candidate
                    break
            if plan.path is None and self.spfile is None:
                candidate = os.path.join(plan.oracle_home, 'dbs', 'init%s.ora' % plan.oracle_sid)
                if os.path.isfile(self.local(candidate)):
                    plan.path = candidate
        if plan.path is not None:
            self.load()
            values, entries = pfile.resolve(self.entries, 'spfile', self.sid)
            if values:
                self.spfile = self.oracle_home_path(values[0])
        if self.spfile or plan.path is None:
            self.mode = 'spfile'
        if plan.oracle_home:
            self.sqlplus = os.path.join(plan.oracle_home, 'bin', 'sqlplus')

    def load(self, override=None):
        override = override or {}
        self.files = []
        self.file_by_shown = {}
        self.entries = []
        self._visit(self.plan.path, override, [], None)

    def _visit(self, shown, override, chain, origin):
        text = self.read_included(shown, override, chain)
        if text is None:
            raise InputError('%s names the parameter file %s, which does not exist (the instance would not start)'
                             % (origin, shown))
        for entry in self.add_parsed(shown, text, pfile.parse, pfile.PfileError):
            self.entries.append(entry)
            if entry.name == 'ifile' and entry.applies_to(self.sid):
                for value in entry.values:
                    target = self.include_path(shown, self.oracle_home_path(value))
                    self._visit(target, override, chain + [shown], '%s line %d (IFILE)' % (shown, entry.line))

    def persisted(self, key):
        """The Persisted values of what the next startup reads."""
        if self.mode == 'spfile':
            found = self.spfile_values.get(key)
            return Persisted(found, self.spfile or 'spfile') if found else NOT_PERSISTED
        values, entries = pfile.resolve(self.entries, key, self.sid)
        if not entries:
            return NOT_PERSISTED
        last = entries[0]
        where = '%s line %d (%s.%s)' % (last.source, last.line, last.scope or '', key) if last.scope else \
            '%s line %d' % (last.source, last.line)
        return Persisted(values, where)

    def edits(self, key, want):
        return pfile.edits_for(self.entries, key, self.plan.sid, want)

    # -- sqlplus ------------------------------------------------------------------
    def live_unavailable(self):
        return self.sqlplus_reason()

    def sqlplus_reason(self):
        if not self.plan.oracle_home or not (self.plan.oracle_sid or self.sid):
            return 'oracle_home and oracle_sid are not given'
        if not self.plan.live_possible:
            return 'root is not / (no running instance to ask)' if self.plan.root != '/' else 'read_live is false'
        if not (os.path.isfile(self.sqlplus) and os.access(self.sqlplus, os.X_OK)):
            return 'no sqlplus at %s' % self.sqlplus
        return None

    def sqlplus_run(self, statements):
        script = '\n'.join([
            'SET HEADING OFF FEEDBACK OFF PAGESIZE 0 LINESIZE 32767 TRIMOUT ON TRIMSPOOL ON VERIFY OFF TAB OFF',
            'WHENEVER SQLERROR EXIT FAILURE',
            'WHENEVER OSERROR EXIT FAILURE',
        ] + statements + ['EXIT', ''])
        home = self.plan.oracle_home
        environ = {'ORACLE_HOME': home, 'ORACLE_SID': self.plan.oracle_sid or self.sid,
                   'LD_LIBRARY_PATH': os.path.join(home, 'lib')}
        rc, out, err = self.run_client([self.sqlplus, '-S', '-L', '/', 'as', 'sysdba'], data=script, environ=environ)
        problems = [line for line in (out or '').splitlines() if re.match(r'^\s*(ORA|SP2|ERROR)', line)]
        if rc != 0 or problems:
            raise OSError('sqlplus exited %d: %s' % (rc, ' '.join(problems or [(err or out or '').strip()])[:500]))
        return out

    def read_live(self, keys):
        names = ', '.join("'%s'" % key for key in sorted(keys))
        statements = ["SELECT 'LIVE|' || name || '|' || issys_modifiable || '|' || value FROM v$parameter "
                      "WHERE name IN (%s);" % names]
        if self.mode == 'spfile':
            statements.append("SELECT 'SPFILE|' || sid || '|' || name || '|' || value FROM v$spparameter "
                              "WHERE isspecified = 'TRUE' AND name IN (%s) ORDER BY name, sid, ordinal;" % names)
            statements.append("SELECT 'SPFILEPATH|' || value FROM v$parameter WHERE name = 'spfile';")
        out = self.sqlplus_run(statements)
        live = {}
        spfile = {}
        for line in out.splitlines():
            kind, dummy, rest = line.strip().partition('|')
            if kind == 'LIVE':
                name, modifiable, value = rest.split('|', 2)
                values = [v.strip() for v in value.split(',')] if value else []
                live[name] = LiveValue(values, static=(modifiable == 'FALSE'))
            elif kind == 'SPFILE':
                sid, name, value = rest.split('|', 2)
                spfile.setdefault(name, {}).setdefault(sid, []).append(value)
            elif kind == 'SPFILEPATH' and rest.strip():
                self.spfile = self.spfile or rest.strip()
        instance = (self.plan.oracle_sid or self.sid or '').lower()
        self.spfile_values = {}
        for name, by_sid in spfile.items():
            own = [values for sid, values in by_sid.items() if sid.lower() == instance]
            self.spfile_values[name] = own[0] if own else by_sid.get('*')
        return live

    def alter_statements(self, changes):
        statements = []
        for key, want in sorted(changes.items()):
            name = '"%s"' % key if key.startswith('_') else key
            values = ','.join(v if pfile.BARE_VALUE_RE.match(v) else "'%s'" % v.replace("'", "''") for v in want)
            statements.append("ALTER SYSTEM SET %s=%s SCOPE=SPFILE SID='%s';" % (name, values, self.plan.sid))
        return statements


class SpfileStore(object):
    """An Oracle instance that starts from its spfile: ALTER SYSTEM ... SCOPE=SPFILE through sqlplus.

    persisted: {key: [values]} the spfile holds for this instance (v$spparameter, read
    with the live values).
    done: {'reason': why sqlplus cannot be used (None when it can), 'target': the
    spfile's name, 'changes': {key: values to set}, 'statements': {key: ALTER SYSTEM
    statement}, 'ran': whether they were run, 'refused': why sqlplus failed (or None),
    'live': {key: LiveValue} read back after running, 'after': what the spfile holds then}.
    """

    def __init__(self, plan, engine):
        self.plan = plan
        self.engine = engine

    def read(self, desired):
        return dict(self.engine.spfile_values)

    def apply(self, desired, live, persisted, module):
        engine = self.engine
        reason = engine.sqlplus_reason() or live.reason
        if reason:
            return {'reason': reason, 'target': engine.spfile or 'spfile'}
        changes = dict((key, want) for key, want in desired.items() if not engine.same(key, persisted.get(key), want))
        done = {'reason': None, 'target': engine.spfile or 'spfile', 'changes': changes, 'ran': False,
                'statements': dict(zip(sorted(changes), engine.alter_statements(changes))),
                'refused': None, 'live': live.values}
        if changes:
            self.plan.gate.write(self._alter, desired, persisted, done)
        done['after'] = dict(engine.spfile_values)
        return done

    def _alter(self, desired, persisted, done):
        """Run the ALTER SYSTEM statements of ``done['changes']`` (noted first as what a revert cannot undo),
        then read the instance back."""
        engine, changes = self.engine, done['changes']
        journal.before('unsupported', 'db_parameter oracle spfile %s' % done['target'], root=self.plan.root,
                       detail='the spfile is changed through ALTER SYSTEM ... SCOPE=SPFILE (before: %s); a revert '
                              'does not change it back: set them again with ALTER SYSTEM' % (
                                  ', '.join('%s=%s' % (key, ','.join(persisted.get(key) or []) or '(not set)')
                                            for key in sorted(changes))))
        try:
            engine.sqlplus_run([done['statements'][key] for key in sorted(changes)])
        except OSError as exc:
            done['refused'] = str(exc)
        try:
            done['live'] = engine.read_live(set(desired))
        except OSError as exc:
            done['refused'] = done['refused'] or 'reading back: %s' % exc
        done['ran'] = True

    def render(self, result, desired, live, persisted, done):
        engine = self.engine
        result.extra['engine'] = engine.name
        result.extra['files'] = []
        if done['reason']:
            for key in sorted(desired):
                result.add(Setting(key, done['target'], engine.show(desired[key]), None, None,
                                   FAILED, 'the spfile is changed only with ALTER SYSTEM ... SCOPE=SPFILE through '
                                   'sqlplus as sysdba, and sqlplus cannot be used: %s' % done['reason']))
            return
        if done['ran']:
            result.mark_changed()
        for key in sorted(desired):
            result.add(self.record(key, desired[key], persisted, done))

    def record(self, key, want, before, done):
        engine = self.engine
        gate = self.plan.gate
        target = done['target']
        info = done['live'].get(key)
        live_value = engine.show(info.value) if info is not None else None
        persisted_now = gate.now(before.get(key), done['after'].get(key))
        details = []
        if key in done['changes']:
            statement = done['statements'][key]
            if done['refused']:
                return Setting(key, target, engine.show(want), live_value, engine.show(before.get(key)),
                               FAILED, '%s failed: %s' % (statement, done['refused']))
            if done['ran'] and not engine.same(key, persisted_now, want):
                return Setting(key, target, engine.show(want), live_value, engine.show(persisted_now),
                               FAILED, 'ran %s but the spfile reads back %r' % (statement, engine.show(persisted_now)))
            details.append(gate.did('run %s' % statement))
        if self.plan.path is not None:
            details.append('%s is left as it is: the instance starts from the spfile' % self.plan.path)
        live_ok = engine.same(key, info.value, want) if info is not None else None
        if info is None:
            details.append('live value unknown: the instance does not report %s' % key)
            if key in done['changes']:
                live_ok = False
        elif not live_ok:
            details.append('%s: the running instance keeps %r until it restarts' % (
                'static parameter' if info.static else 'set with SCOPE=SPFILE', live_value))
        status = gate.status(live_ok, engine.same(key, before.get(key), want), live_needs=PENDING_RESTART)
        return Setting(key, target, engine.show(want), live_value, engine.show(persisted_now), status,
                       '; '.join(details))
