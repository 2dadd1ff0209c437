# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply database parameters (Oracle, PostgreSQL, MySQL).

Each engine reads its persisted configuration the way the server does (includes,
precedence), edits only the value that wins (or adds one line where the server reads
it last), reads the live value through the database's own client when one is there,
and reports one record per parameter with the collection's common result.

The module file only declares options and calls DbParameter(...).run(); commands go
through the ``runner`` callable (argument lists, never a shell) so tests feed recorded
client output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import re
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile as pfile
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, PENDING_RESTART, UNSUPPORTED, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

ENGINES = ('oracle', 'postgresql', 'mysql')
MAX_INCLUDE_DEPTH = 10

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


class ConfigFile(object):
    """One file of the configuration, as the managed system names it and as we read it."""

    def __init__(self, shown, local, text, auto=False):
        self.shown = shown
        self.local = local
        self.text = text
        self.auto = auto


class LiveValue(object):
    """What the running server says about one parameter."""

    def __init__(self, value, static=None, unit=None, known=True, read_only=False, reason=None):
        self.reason = reason
        self.value = value
        self.static = static
        self.unit = unit
        self.known = known
        self.read_only = read_only


def _plain_value(raw, name):
    """The user's value as text; strips one pair of wrapping quotes; refuses what no file can hold."""
    if isinstance(raw, bool):
        return None  # engines spell booleans their own way
    if isinstance(raw, (int, float)):
        return str(raw)
    if not isinstance(raw, str):
        raise InputError('params %r: %r is neither a string, a number nor a boolean' % (name, raw))
    validate.check_text(raw, 'params %r' % (name,))
    for bad, what in (('\n', 'a newline'), ('\r', 'a carriage return'), ('\x00', 'a NUL byte')):
        if bad in raw:
            raise InputError('params %r: the value contains %s' % (name, what))
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in '"\'' and text[0] not in text[1:-1]:
        return text[1:-1]  # 'SETALL' given with its quotes
    for quote in ('"', "'"):
        # A value that opens or closes with a quote it never balances was cut or mistyped.
        if (text.startswith(quote) or text.endswith(quote)) and text.count(quote) % 2:
            raise InputError('params %r: quote mismatch in %r' % (name, raw))
    return text


def apply_edits(text, edits, appends):
    """Apply (start, end, new, seq) replacements right to left, then append lines."""
    text = text or ''
    for start, end, new, dummy in sorted(edits, key=lambda e: (e[0], e[1], e[3]), reverse=True):
        text = text[:start] + new + text[end:]
    if appends:
        if text and not text.endswith('\n'):
            text += '\n'
        text += ''.join(appends)
    return text


class Engine(object):
    """Common part of the three engines: files, edits and the client call."""

    name = None
    live_always_needs_restart = True
    client_name = None

    def __init__(self, plan):
        self.plan = plan
        self.root = plan.root
        self.files = []
        self.file_by_shown = {}
        self.notes = []

    # -- files ------------------------------------------------------------------
    def local(self, shown):
        try:
            return rooted(self.root, shown)
        except PathError as exc:
            raise InputError(str(exc))

    def read(self, shown, override):
        if shown in override:
            return override[shown]
        return read_text(self.write_path(shown))

    def write_path(self, shown):
        """The local file a write replaces: symlinks followed, within root.

        Debian's /etc/mysql/my.cnf is a link to /etc/alternatives/my.cnf and on to
        mariadb.cnf; renaming a new file onto the link would cut it.
        """
        for dummy in range(40):
            local = self.local(shown)
            if not os.path.islink(local):
                return local
            target = os.readlink(local)
            shown = os.path.normpath(target if target.startswith('/') else os.path.join(os.path.dirname(shown), target))
        raise InputError('%s: too many levels of symbolic links' % shown)

    def add_file(self, shown, text, auto=False):
        config = ConfigFile(shown, self.write_path(shown), text, auto)
        self.files.append(config)
        self.file_by_shown[shown] = config
        return config

    def load(self, override=None):
        raise NotImplementedError

    @staticmethod
    def include_path(including, value):
        path = value if value.startswith('/') else os.path.join(os.path.dirname(including), value)
        return os.path.normpath(path)

    # -- values -----------------------------------------------------------------
    def show(self, value):
        return value

    def is_static(self, key, live):
        if live is not None and live.static is not None:
            return live.static
        return key in self.static_names

    # -- client -----------------------------------------------------------------
    def run_client(self, argv, data=None, environ=None):
        return self.plan.run_as(argv, data=data, environ=environ)


class OracleEngine(Engine):
    name = 'oracle'
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
            text = _plain_value(value, key)
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

    def detect_mode(self):
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
        if shown in chain:
            raise InputError('IFILE loop: %s includes itself through %s' % (shown, ' -> '.join(chain)))
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise InputError('IFILE nesting deeper than %d at %s' % (MAX_INCLUDE_DEPTH, shown))
        text = self.read(shown, override)
        if text is None:
            raise InputError('%s names the parameter file %s, which does not exist (the instance would not start)'
                             % (origin, shown))
        self.add_file(shown, text)
        try:
            entries = pfile.parse(text, shown)
        except pfile.PfileError as exc:
            raise InputError(str(exc))
        for entry in entries:
            self.entries.append(entry)
            if entry.name == 'ifile' and entry.applies_to(self.sid):
                for value in entry.values:
                    target = self.include_path(shown, self.oracle_home_path(value))
                    self._visit(target, override, chain + [shown], '%s line %d (IFILE)' % (shown, entry.line))

    def persisted(self, key):
        """(values, where) of what the next startup reads."""
        if self.mode == 'spfile':
            found = self.spfile_values.get(key)
            return (found, self.spfile or 'spfile') if found else (None, None)
        values, entries = pfile.resolve(self.entries, key, self.sid)
        if not entries:
            return None, None
        last = entries[0]
        where = '%s line %d (%s.%s)' % (last.source, last.line, last.scope or '', key) if last.scope else \
            '%s line %d' % (last.source, last.line)
        return values, where

    def edits(self, key, want):
        return pfile.edits_for(self.entries, key, self.plan.sid, want)

    # -- sqlplus ------------------------------------------------------------------
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


class PostgresqlEngine(Engine):
    name = 'postgresql'
    static_names = pgconf.STATIC
    live_always_needs_restart = False
    client_name = 'psql'

    def __init__(self, plan):
        Engine.__init__(self, plan)
        self.entries = []
        self.auto_conf = None

    def validate_name(self, name):
        if not isinstance(name, str) or not pgconf.NAME_RE.match(name):
            raise InputError('params name %r is not a PostgreSQL parameter name' % (name,))
        if name.lower() in pgconf.INCLUDE_DIRECTIVES:
            raise InputError('params name %r is an include directive, not a parameter' % (name,))
        return name.lower()

    def desired(self, key, raw):
        if isinstance(raw, bool):
            return 'on' if raw else 'off'
        if isinstance(raw, (list, tuple)):
            raw = ','.join(str(v) for v in raw)
        text = _plain_value(raw, key)
        problem = pgconf.value_problem(key, text)
        if problem:
            raise InputError('params %r: %s' % (key, problem))
        return text

    def same(self, key, have, want, live=None):
        return pgconf.same_value(key, have, want, base_unit=live.unit if live is not None else None)

    def load(self, override=None):
        override = override or {}
        self.files = []
        self.file_by_shown = {}
        self.entries = []
        self._visit(self.plan.path, override, [], None, required=True)
        data_directory = None
        for entry in self.entries:
            if entry.name == 'data_directory':
                data_directory = entry.value
        folder = data_directory or os.path.dirname(self.plan.path)
        self.auto_conf = os.path.normpath(os.path.join(folder, pgconf.AUTO_CONF))
        if self.auto_conf not in self.file_by_shown:
            text = self.read(self.auto_conf, override)
            if text is not None:
                self.add_file(self.auto_conf, text, auto=True)
                self.entries.extend(self._parse_into(self.auto_conf, text))

    def _parse_into(self, shown, text):
        try:
            entries = pgconf.parse(text, shown)
        except pgconf.ConfError as exc:
            raise InputError(str(exc))
        return entries

    def _visit(self, shown, override, chain, origin, required):
        if shown in chain:
            raise InputError('include loop: %s includes itself through %s' % (shown, ' -> '.join(chain)))
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise InputError('includes nested deeper than %d at %s' % (MAX_INCLUDE_DEPTH, shown))
        text = self.read(shown, override)
        if text is None:
            if required:
                raise InputError('%s includes %s, which does not exist (the server would not start)' % (origin, shown))
            return  # include_if_exists: a missing file is normal
        self.add_file(shown, text)
        for entry in self._parse_into(shown, text):
            where = '%s line %d' % (shown, entry.line)
            if entry.name == 'include':
                self._visit(self.include_path(shown, entry.value), override, chain + [shown], where, True)
            elif entry.name == 'include_if_exists':
                self._visit(self.include_path(shown, entry.value), override, chain + [shown], where, False)
            elif entry.name == 'include_dir':
                folder = self.include_path(shown, entry.value)
                local = self.local(folder)
                if not os.path.isdir(local):
                    raise InputError('%s: include_dir %s is not a directory (the server would not start)'
                                     % (where, folder))
                for name in sorted(os.listdir(local)):
                    if name.endswith('.conf') and not name.startswith('.') and \
                            os.path.isfile(os.path.join(local, name)):
                        self._visit(os.path.join(folder, name), override, chain + [shown], where, True)
            else:
                self.entries.append(entry)

    def persisted(self, key):
        winner = self.winner(key)
        if winner is None:
            return None, None
        return winner.value, '%s line %d' % (winner.source, winner.line)

    def winner(self, key, skip_auto=False):
        found = None
        for entry in self.entries:
            if entry.name == key and not (skip_auto and entry.source == self.auto_conf):
                found = entry
        return found

    def edits(self, key, want):
        ours = self.winner(key, skip_auto=True)
        if ours is None:
            return [(None, None, None, pgconf.format_entry(key, want))]
        return [pgconf.edit_for(ours, want)]

    def client(self):
        return self.plan.which('psql')

    def _psql(self, sql):
        plan = self.plan
        argv = [self.client(), '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-F', '\x1f',
                '-d', plan.login_db or 'postgres']
        if plan.login_host:
            argv += ['-h', plan.login_host]
        if plan.login_port:
            argv += ['-p', str(plan.login_port)]
        if plan.login_user:
            argv += ['-U', plan.login_user]
        argv += ['-c', sql]
        environ = {'PGCONNECT_TIMEOUT': '10'}
        if plan.login_password:
            environ['PGPASSWORD'] = plan.login_password
        rc, out, err = self.run_client(argv, environ=environ)
        if rc != 0:
            raise OSError('psql exited %d: %s' % (rc, (err or out or '').strip()[:500]))
        return out

    def read_live(self, keys):
        names = ', '.join("'%s'" % key for key in sorted(keys))
        out = self._psql('SELECT name, coalesce(unit, \'\'), context, current_setting(name) FROM pg_settings '
                         'WHERE name IN (%s)' % names)
        live = {}
        for line in out.splitlines():
            fields = line.split('\x1f')
            if len(fields) != 4:
                continue
            name, unit, context, value = fields
            live[name] = LiveValue(value, static=(context == 'postmaster'), unit=unit or None,
                                   read_only=(context == 'internal'))
        return live

    def reload(self):
        self._psql('SELECT pg_reload_conf()')


class MysqlEngine(Engine):
    name = 'mysql'
    static_names = mycnf.STATIC
    client_name = 'mysql'

    def __init__(self, plan):
        Engine.__init__(self, plan)
        self.items = []
        self.version = None
        self.new_section = False

    def validate_name(self, name):
        if not isinstance(name, str) or not mycnf.NAME_RE.match(name):
            raise InputError('params name %r is not a MySQL option name' % (name,))
        return mycnf.option_key(name)

    def desired(self, key, raw):
        if isinstance(raw, bool):
            return 'ON' if raw else 'OFF'
        text = _plain_value(raw, key)
        if "'" in text and '"' in text:
            raise InputError('params %r: %r holds both kinds of quote; no option file can hold it' % (key, text))
        if not text:
            raise InputError('params %r: the value is empty' % (key,))
        problem = mycnf.value_problem(key, text)
        if problem:
            raise InputError('params %r: %s' % (key, problem))
        return text

    def same(self, key, have, want, live=None):
        return have is not None and mycnf.same_value(have, want)

    def load(self, override=None):
        override = override or {}
        self.files = []
        self.file_by_shown = {}
        self.items = []
        self.new_section = False
        self._visit(self.plan.path, override, [])

    def _visit(self, shown, override, chain):
        if shown in chain:
            raise InputError('!include loop: %s includes itself through %s' % (shown, ' -> '.join(chain)))
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise InputError('!include nested deeper than %d at %s' % (MAX_INCLUDE_DEPTH, shown))
        text = self.read(shown, override)
        if text is None:
            self.notes.append('%s is included but does not exist' % shown)
            return
        self.add_file(shown, text)
        try:
            items = mycnf.parse(text, shown)
        except mycnf.CnfError as exc:
            raise InputError(str(exc))
        for item in items:
            self.items.append(item)
            if item.kind == 'include':
                self._visit(self.include_path(shown, item.path), override, chain + [shown])
            elif item.kind == 'includedir':
                folder = self.include_path(shown, item.path)
                local = self.local(folder)
                if not os.path.isdir(local):
                    self.notes.append('%s line %d: !includedir %s does not exist' % (shown, item.line, folder))
                    continue
                for name in sorted(os.listdir(local)):
                    if name.endswith('.cnf') and os.path.isfile(os.path.join(local, name)):
                        self._visit(os.path.join(folder, name), override, chain + [shown])

    def winner(self, key):
        found = None
        for item in self.items:
            if item.kind == 'option' and item.key == key and mycnf.server_reads(item.group, self.version):
                found = item
        return found

    def persisted(self, key):
        winner = self.winner(key)
        if winner is None:
            return None, None
        value = 'ON' if winner.value is None else winner.value
        return value, '%s line %d [%s]' % (winner.source, winner.line, winner.group)

    def edits(self, key, want):
        winner = self.winner(key)
        if winner is not None:
            return [mycnf.edit_for(winner, want)]
        section = self.plan.mysql_section
        point = mycnf.insert_point(self.items, section, self.plan.path)
        line = mycnf.format_option(key, want)
        if point is not None:
            return [(self.plan.path, point, point, line)]
        if self.new_section:
            return [(None, None, None, line)]
        self.new_section = True  # the following new options go under the same new header
        text = self.file_by_shown[self.plan.path].text
        gap = '\n' if text.strip() and not text.endswith('\n\n') else ''
        return [(None, None, None, '%s[%s]\n%s' % (gap, section, line))]

    def client(self):
        return self.plan.which('mysql') or self.plan.which('mariadb')

    def _query(self, sql):
        plan = self.plan
        argv = [self.client(), '-N', '-B']
        if plan.login_host and plan.login_host.startswith('/'):
            argv += ['-S', plan.login_host]  # a socket file, as psql takes a socket folder
        elif plan.login_host:
            argv += ['-h', plan.login_host]
        if plan.login_port:
            argv += ['-P', str(plan.login_port)]
        if plan.login_user:
            argv += ['-u', plan.login_user]
        argv += ['-e', sql]
        environ = {'MYSQL_PWD': plan.login_password} if plan.login_password else None
        rc, out, err = self.run_client(argv, environ=environ)
        if rc != 0:
            raise OSError('mysql exited %d: %s' % (rc, (err or out or '').strip()[:500]))
        return out.rstrip('\n')

    def read_live(self, keys):
        self.version = self._query('SELECT @@GLOBAL.version').strip() or None
        live = {}
        for key in sorted(keys):
            try:
                value = self._query('SELECT @@GLOBAL.%s' % key)
            except OSError as exc:
                live[key] = LiveValue(None, known=False, reason=str(exc))
                continue
            live[key] = LiveValue(None if value == 'NULL' else value)
        return live


ENGINE_CLASSES = {'oracle': OracleEngine, 'postgresql': PostgresqlEngine, 'mysql': MysqlEngine}


class DbParameter(Plan):
    """One run of the db_parameter module: validate, plan, apply (unless check mode), report."""

    failed_label = 'not applied'
    shadowed_label = 'shadowed'

    def __init__(self, engine, params, path=None, backup=False, root='/', oracle_home=None, oracle_sid=None,
                 sid='*', mysql_section='mysqld', read_live=True, reload=True, os_user=None, login_user=None,
                 login_password=None, login_host=None, login_port=None, login_db=None, fail_on_shadowed=True,
                 check_mode=False, runner=None, which=None, euid=None, system_name=None):
        self.engine_name = engine
        self.raw_params = params
        self.path = path
        self.backup = backup
        self.root = validate.check_root(root)
        self.oracle_home = oracle_home
        self.oracle_sid = oracle_sid
        self.sid = sid or '*'
        self.mysql_section = (mysql_section or 'mysqld').lower()
        self.read_live = read_live
        self.reload = reload
        self.os_user = os_user
        self.login_user = login_user
        self.login_password = login_password
        self.login_host = login_host
        self.login_port = login_port
        self.login_db = login_db
        self.fail_on_shadowed = fail_on_shadowed
        self.check_mode = check_mode
        self.runner = runner
        self.which = which or (lambda name: None)
        self.euid = os.geteuid() if euid is None else euid
        self.system_name = system_name
        self.desired = {}
        self.engine = None
        self.shadowed = []
        self.backup_files = []

    @property
    def live_possible(self):
        return self.read_live and self.root == '/' and self.runner is not None

    # ------------------------------------------------------------------ validation
    def validate(self):
        if self.engine_name not in ENGINES:
            raise InputError('engine %r is not one of %s' % (self.engine_name, ', '.join(ENGINES)))
        if not isinstance(self.raw_params, dict) or not self.raw_params:
            raise InputError('params must be a non-empty dict of name: value')
        for option in ('path', 'oracle_home'):
            value = validate.check_path(getattr(self, option), option)
            if value is not None:
                try:
                    rooted(self.root, value)
                except PathError as exc:
                    raise InputError('%s: %s' % (option, exc))
                setattr(self, option, os.path.normpath(value))
        if self.oracle_sid is not None and not pfile.SID_RE.match(self.oracle_sid):
            raise InputError('oracle_sid %r is not an instance name' % (self.oracle_sid,))
        if self.sid != '*' and not pfile.SID_RE.match(self.sid):
            raise InputError("sid %r is neither '*' nor an instance name" % (self.sid,))
        if not mycnf.GROUP_RE.match(self.mysql_section):
            raise InputError('mysql_section %r is not an option group name' % (self.mysql_section,))
        if self.engine_name != 'oracle':
            if self.path is None:
                raise InputError('path is required for engine %s' % self.engine_name)
            for option in ('oracle_home', 'oracle_sid'):
                if getattr(self, option) is not None:
                    raise InputError('%s only applies to engine oracle' % option)
            if self.sid != '*':
                raise InputError('sid only applies to engine oracle')
        elif self.path is None and not (self.oracle_home and self.oracle_sid):
            raise InputError('engine oracle needs path (a pfile) or oracle_home and oracle_sid (an spfile)')
        if self.login_port is not None and not (isinstance(self.login_port, int) and 0 < self.login_port < 65536):
            raise InputError('login_port %r is not a TCP port' % (self.login_port,))
        for option in ('os_user', 'login_user', 'login_host', 'login_db', 'oracle_sid', 'sid', 'mysql_section'):
            validate.check_name(getattr(self, option), option)
        for option in ('os_user', 'login_user', 'login_host', 'login_db'):
            value = getattr(self, option)
            if value is not None and (not value or re.search(r'[\s\x00]', value) or value.startswith('-')):
                raise InputError('%s %r is not usable (empty, blanks or a leading dash)' % (option, value))
        self.engine = ENGINE_CLASSES[self.engine_name](self)
        desired = {}
        for name, raw in self.raw_params.items():
            key = self.engine.validate_name(name)
            if key in desired:
                raise InputError('params %r and another name both mean %r' % (name, key))
            if raw is None:
                raise InputError('params %r has no value' % (name,))
            desired[key] = self.engine.desired(key, raw)
        self.desired = desired
        if self.path is not None and not os.path.isfile(self.engine.write_path(self.path)):
            if not (self.engine_name == 'oracle' and self.oracle_home and self.oracle_sid):
                raise InputError('path %s does not exist%s' % (
                    self.path, '' if self.root == '/' else ' under root %s' % self.root))
            raise InputError('path %s does not exist; leave path out to use the spfile of %s'
                             % (self.path, self.oracle_sid))

    # ------------------------------------------------------------------ commands
    def default_os_user(self):
        if self.os_user or self.euid != 0:
            return self.os_user
        if self.engine_name == 'postgresql':
            try:
                pwd.getpwnam('postgres')
                return 'postgres'
            except KeyError:
                return None
        if self.engine_name == 'oracle' and self.oracle_home:
            try:
                owner = os.stat(self.oracle_home).st_uid
                return pwd.getpwuid(owner).pw_name if owner != 0 else None
            except (OSError, KeyError):
                return None
        return None

    def run_as(self, argv, data=None, environ=None):
        user = self.default_os_user()
        if user and self.euid == 0:
            switch = platforms.pick({platforms.LINUX: ['runuser', '-u', user, '--'], 'default': None},
                                    self.system_name)
            if switch is None:
                raise OSError('cannot switch to OS user %s on this platform: run the task with become_user' % user)
            argv = switch + list(argv)
        return self.runner(argv, data=data, environ=environ)

    # ------------------------------------------------------------------ run
    def run(self, module=None):
        self.validate()
        engine = self.engine
        if isinstance(engine, OracleEngine):
            engine.detect_mode()
        if engine.name != 'oracle' or engine.mode == 'pfile':
            engine.load()
        live, live_reason = self._read_live(engine)
        if isinstance(engine, OracleEngine) and engine.mode == 'spfile':
            return self._run_spfile(engine, live, live_reason)
        return self._run_files(engine, live, live_reason, module)

    def _read_live(self, engine):
        """({key: LiveValue}, reason) — reason says why the live side is unknown."""
        if not self.live_possible:
            if self.root != '/':
                return {}, 'root is %s, not the running system' % self.root
            return {}, 'read_live is false' if not self.read_live else 'no command runner'
        if isinstance(engine, OracleEngine):
            reason = engine.sqlplus_reason()
        else:
            reason = None if engine.client() else 'no %s client on PATH' % engine.client_name
        if reason:
            return {}, reason
        try:
            live = engine.read_live(set(self.desired))
        except OSError as exc:
            return {}, str(exc)
        if isinstance(engine, PostgresqlEngine):
            unknown = sorted(key for key in self.desired if key not in live and '.' not in key)
            if unknown:
                raise InputError('unknown PostgreSQL parameter(s), not in pg_settings: %s' % ', '.join(unknown))
        return live, None

    def _live_info(self, live, live_reason, key):
        info = live.get(key)
        if info is not None and info.reason:
            return None, 'live value unknown: %s' % info.reason
        if info is None or not info.known:
            if live_reason:
                return None, 'live value unknown: %s' % live_reason
            return None, 'live value unknown: the server does not report %s' % key
        return info, None

    def _run_files(self, engine, live, live_reason, module):
        result = Result(self.check_mode)
        before = dict((key, engine.persisted(key)) for key in self.desired)
        changes = {}
        written = {}
        edits = {}
        appends = []
        seq = 0
        for key in sorted(self.desired):
            want = self.desired[key]
            if engine.same(key, before[key][0], want, live.get(key)):
                continue
            changes[key] = want
            for source, start, end, text in engine.edits(key, want):
                seq += 1
                written.setdefault(key, [])
                if (source or self.path) not in written[key]:
                    written[key].append(source or self.path)
                if source is None:
                    appends.append(text)
                else:
                    edits.setdefault(source, []).append((start, end, text, seq))
        new_texts = {}
        for config in engine.files:
            if config.auto:
                continue
            after_text = apply_edits(config.text, edits.get(config.shown, []),
                                     appends if config.shown == self.path else [])
            if after_text != config.text:
                new_texts[config.shown] = after_text
        file_changes = [FileChange(engine.file_by_shown[shown].local, engine.file_by_shown[shown].text, text,
                                   shown_path=shown) for shown, text in new_texts.items()]
        for change in file_changes:
            change.report(result)
        files_read = [config.shown for config in engine.files]
        try:
            engine.load(new_texts)
        except InputError as exc:
            # Our edit made a file the server could not read: say which parameters, not
            # only the line of a text that exists nowhere yet.  Nothing is written.
            raise InputError('params %s: the new value(s) would leave a file the server cannot read, so nothing '
                             'was written (%s)' % (', '.join(repr(key) for key in sorted(changes)), exc))
        after = dict((key, engine.persisted(key)) for key in self.desired)

        # A value another file sets after ours cannot become live by a reload: not waited for.
        shadowed = set(key for key in self.desired
                       if not engine.same(key, after[key][0], self.desired[key], live.get(key)))
        reloaded = None
        if not self.check_mode:
            for change in file_changes:
                backup_name = change.apply(module, backup_file=self.backup)
                if backup_name:
                    self.backup_files.append(backup_name)
            if isinstance(engine, PostgresqlEngine) and self.reload and live:
                reloaded = self._pg_reload(engine, live, shadowed)
        for key in sorted(self.desired):
            result.add(self._record(engine, key, before[key], after[key], live, live_reason,
                                    written.get(key), reloaded))
        result.extra['engine'] = engine.name
        result.extra['files'] = files_read
        result.warnings.extend(sorted(set(engine.notes)))
        if self.backup_files:
            result.extra['backup_file'] = self.backup_files[0]
            result.extra['backup_files'] = list(self.backup_files)
        return result

    def _pg_reload(self, engine, live, shadowed):
        """Reload when a dynamic parameter's live value differs; return the values read back."""
        pending = [key for key in self.desired
                   if key not in shadowed and self._pg_dynamic_differs(engine, key, live.get(key))]
        if not pending:
            return None
        try:
            engine.reload()
            for dummy in range(10):
                after = engine.read_live(set(self.desired))
                if all(key in after and engine.same(key, after[key].value, self.desired[key], after[key])
                       for key in pending):
                    break
                time.sleep(0.3)
        except OSError as exc:
            return {'__error__': 'reloading the configuration failed: %s' % exc}
        return after

    def _pg_dynamic_differs(self, engine, key, info):
        return info is not None and info.known and not info.static and not info.read_only and \
            not engine.same(key, info.value, self.desired[key], info)

    def _record(self, engine, key, before, after, live, live_reason, written, reloaded):
        want = self.desired[key]
        shown_want = engine.show(want)
        before_value, before_where = before
        after_value, after_where = after
        persisted_value = before_value if self.check_mode else after_value
        info, unknown = self._live_info(live, live_reason, key)
        target = (written or [before_where.split(' line ')[0] if before_where else self.path])[0]
        details = []
        if written:
            details.append('%s %s' % ('would write' if self.check_mode else 'wrote', ', '.join(written)))
        if info is not None and info.read_only:
            return Setting(key, target, shown_want, engine.show(info.value), engine.show(persisted_value),
                           UNSUPPORTED, 'read-only: fixed when the server was built or initialised')
        static = engine.is_static(key, info)
        live_needs = PENDING_RESTART if (engine.live_always_needs_restart or static) else None
        live_value = info.value if info is not None else None
        live_ok = engine.same(key, live_value, want, info) if info is not None else None
        shadowed = not engine.same(key, after_value, want, info)
        if shadowed:
            if reloaded and key in reloaded:
                live_value = reloaded[key].value
            details.append('%s sets %r and wins over %s' % (after_where, engine.show(after_value), target))
            self.shadowed.append((key, after_where))
            if info is None:
                details.append(unknown)
        elif info is None:
            details.append(unknown)
            if written and live_needs:
                live_ok = False  # the running server has not read what we just wrote
            elif written:
                details.append('reload the server configuration to apply it')
        elif live_ok is False and live_needs:
            details.append('%s: the running server keeps %r until it restarts' % (
                'static parameter' if static else 'read at startup', engine.show(live_value)))
        elif live_ok is False and not self.reload:
            live_needs = PENDING_RESTART
            details.append('the running server keeps %r; reload is false, so it applies at the next reload or '
                           'restart' % (live_value,))
        elif live_ok is False and self.check_mode:
            details.append('would reload the configuration')
        elif live_ok is False:
            if reloaded is None or '__error__' in reloaded:
                details.append(reloaded['__error__'] if reloaded else 'not reloaded')
                return Setting(key, target, shown_want, engine.show(live_value), engine.show(persisted_value),
                               FAILED, '; '.join(details))
            live_value = reloaded[key].value if key in reloaded else None
            if not engine.same(key, live_value, want, reloaded.get(key)):
                details.append('the server kept %r after reloading its configuration (see its log)' % (live_value,))
                return Setting(key, target, shown_want, engine.show(live_value), engine.show(persisted_value),
                               FAILED, '; '.join(details))
            details.append('applied by reloading the configuration')
        persisted_ok = engine.same(key, before_value, want, info)
        if not shadowed and not written and before_where:
            details.append('persisted at %s' % before_where)
        status = decide_status(live_ok, persisted_ok, self.check_mode, live_needs=live_needs, shadowed=shadowed)
        return Setting(key, target, shown_want, engine.show(live_value), engine.show(persisted_value), status,
                       '; '.join(d for d in details if d))

    # ------------------------------------------------------------------ spfile
    def _run_spfile(self, engine, live, live_reason):
        result = Result(self.check_mode)
        result.extra['engine'] = engine.name
        result.extra['files'] = []
        reason = engine.sqlplus_reason() or live_reason
        if reason:
            for key in sorted(self.desired):
                result.add(Setting(key, engine.spfile or 'spfile', engine.show(self.desired[key]), None, None,
                                   FAILED, 'the spfile is changed only with ALTER SYSTEM ... SCOPE=SPFILE through '
                                   'sqlplus as sysdba, and sqlplus cannot be used: %s' % reason))
            return result
        target = engine.spfile or 'spfile'
        before = dict(engine.spfile_values)
        changes = dict((key, want) for key, want in self.desired.items()
                       if not engine.same(key, before.get(key), want))
        statements = dict(zip(sorted(changes), engine.alter_statements(changes)))
        refused = None
        if changes and not self.check_mode:
            try:
                engine.sqlplus_run([statements[key] for key in sorted(changes)])
            except OSError as exc:
                refused = str(exc)
            try:
                live = engine.read_live(set(self.desired))
            except OSError as exc:
                refused = refused or 'reading back: %s' % exc
            result.mark_changed()
        for key in sorted(self.desired):
            want = self.desired[key]
            info = live.get(key)
            live_value = engine.show(info.value) if info is not None else None
            details = []
            persisted_now = before.get(key) if self.check_mode else engine.spfile_values.get(key)
            if key in changes:
                if refused:
                    result.add(Setting(key, target, engine.show(want), live_value, engine.show(before.get(key)),
                                       FAILED, '%s failed: %s' % (statements[key], refused)))
                    continue
                if not self.check_mode and not engine.same(key, persisted_now, want):
                    result.add(Setting(key, target, engine.show(want), live_value, engine.show(persisted_now),
                                       FAILED, 'ran %s but the spfile reads back %r' % (
                                           statements[key], engine.show(persisted_now))))
                    continue
                details.append('%s %s' % ('would run' if self.check_mode else 'ran', statements[key]))
            if self.path is not None:
                details.append('%s is left as it is: the instance starts from the spfile' % self.path)
            live_ok = engine.same(key, info.value, want) if info is not None else None
            if info is None:
                details.append('live value unknown: the instance does not report %s' % key)
                if key in changes:
                    live_ok = False
            elif not live_ok:
                details.append('%s: the running instance keeps %r until it restarts' % (
                    'static parameter' if info.static else 'set with SCOPE=SPFILE', live_value))
            status = decide_status(live_ok, engine.same(key, before.get(key), want), self.check_mode,
                                   live_needs=PENDING_RESTART)
            result.add(Setting(key, target, engine.show(want), live_value, engine.show(persisted_now), status,
                               '; '.join(details)))
        return result
