# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: db_parameter for PostgreSQL.

postgresql.conf read as the server reads it (formats/postgresql_conf.py): include,
include_if_exists and include_dir followed, then postgresql.auto.conf (ALTER SYSTEM)
last in the data directory; the last setting of a name wins.  Our edit goes to the
last setting outside postgresql.auto.conf, or a new line at the end of ``path``.  The
live side is pg_settings through psql; a dynamic parameter becomes live by
pg_reload_conf() once the file holds it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import pwd
import re
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_catalog
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import (
    NOT_PERSISTED, Engine, LiveValue, Persisted, plain_value)

# Where a distribution installs the server of one major version (Debian, then PGDG's RPMs).
SERVER_BINARIES = ('/usr/lib/postgresql/%s/bin/postgres', '/usr/pgsql-%s/bin/postgres')
# The major version in the path of a configuration (/etc/postgresql/15/main, /var/lib/pgsql/15/data).
_MAJOR_IN_PATH = re.compile(r'/(?:postgresql|pgsql)/([0-9]+)(?:\.[0-9]+)?/')


def installed_server(major):
    """The postgres binary of ``major`` on this system; with None, the only one installed."""
    if major is not None:
        found = [path % major for path in SERVER_BINARIES if os.access(path % major, os.X_OK)]
    else:
        found = sorted(set(path for pattern in SERVER_BINARIES for path in glob.glob(pattern % '[0-9]*')))
        found = found if len(found) == 1 else []
    return found[0] if found else None


class PostgresqlEngine(Engine):
    name = 'postgresql'
    static_names = pgconf.STATIC
    live_always_needs_restart = False
    client_name = 'psql'

    def __init__(self, plan):
        Engine.__init__(self, plan)
        self.entries = []
        self.auto_conf = None
        self.raw_values = {}
        self.catalog = None

    def default_os_user(self):
        try:
            pwd.getpwnam('postgres')
            return 'postgres'
        except KeyError:
            return None

    def validate_name(self, name):
        if not isinstance(name, str) or not pgconf.NAME_RE.match(name):
            raise InputError('params name %r is not a PostgreSQL parameter name' % (name,))
        if name.lower() in pgconf.INCLUDE_DIRECTIVES:
            raise InputError('params name %r is an include directive, not a parameter' % (name,))
        return name.lower()

    def desired(self, key, raw):
        """The value as text; whether the server takes it is checked in locate() (check_catalog)."""
        self.raw_values[key] = raw
        if isinstance(raw, bool):
            return 'on' if raw else 'off'
        if isinstance(raw, (list, tuple)):
            raw = ','.join(str(v) for v in raw)
        return plain_value(raw, key, keep_blanks=True)

    def same(self, key, have, want, live=None):
        unit = live.unit if live is not None else None
        setting = self.catalog.get(key) if self.catalog is not None and unit is None else None
        if setting is not None and setting.unit not in (None, '?'):
            unit = setting.unit
        return pgconf.same_value(key, have, want, base_unit=unit)

    def is_static(self, key, live):
        if live is not None and live.static is not None:
            return live.static
        setting = self.catalog.get(key) if self.catalog is not None else None
        if setting is not None and setting.context:
            return setting.context == 'postmaster'
        return key in self.static_names

    # -- the server's list of parameters ------------------------------------------
    def locate(self):
        self.load()
        self.check_catalog()

    def check_catalog(self):
        """Refuse a name or a value the server would refuse (it would not start with it)."""
        major = self.major_version()
        described, binary = self.describe_config(major)
        found = re.search(r'(?:postgresql/|pgsql-)([0-9]+)', binary or '') if major is None else None
        if found:
            major = int(found.group(1))
        self.catalog = pg_catalog.catalog_for(major, described, binary)
        for key in sorted(self.plan.wanted):
            problem = self.catalog.problem(key, self.raw_values.get(key), self.plan.wanted[key])
            if problem:
                raise InputError('params %r: %s' % (key, problem))

    def major_version(self):
        """The major version of this configuration: PG_VERSION in the data directory (or beside
        the file), else the path (/etc/postgresql/15/main); None when neither says."""
        folders = [entry.value for entry in self.entries if entry.name == 'data_directory']
        folders.append(os.path.dirname(self.plan.path))
        for folder in folders:
            try:
                text = self.read(os.path.join(self.include_path(self.plan.path, folder), 'PG_VERSION'), {})
            except (InputError, OSError, UnicodeError):
                text = None
            match = re.match(r'\s*([0-9]+)', text or '')
            if match:
                return int(match.group(1))
        match = _MAJOR_IN_PATH.search(self.plan.path)
        return int(match.group(1)) if match else None

    def describe_config(self, major):
        """(output of postgres --describe-config, the binary) of the server of ``major``
        installed on the running system; (None, None) under another root or without one."""
        plan = self.plan
        if plan.root != '/' or plan.runner is None:
            return None, None
        binary = (plan.find_server or installed_server)(major)
        if not binary:
            return None, None
        try:
            rc, out, dummy = plan.runner([binary, '--describe-config'])
        except OSError:
            return None, None
        return (out, binary) if rc == 0 and out else (None, None)

    # -- files ------------------------------------------------------------------
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
                self.entries.extend(self.add_parsed(self.auto_conf, text, pgconf.parse, pgconf.ConfError, auto=True))

    def _visit(self, shown, override, chain, origin, required):
        text = self.read_included(shown, override, chain)
        if text is None:
            if required:
                raise InputError('%s includes %s, which does not exist (the server would not start)' % (origin, shown))
            return  # include_if_exists: a missing file is normal
        for entry in self.add_parsed(shown, text, pgconf.parse, pgconf.ConfError):
            where = '%s line %d' % (shown, entry.line)
            if entry.name == 'include':
                self._visit(self.include_path(shown, entry.value), override, chain + [shown], where, True)
            elif entry.name == 'include_if_exists':
                self._visit(self.include_path(shown, entry.value), override, chain + [shown], where, False)
            elif entry.name == 'include_dir':
                self._visit_dir(shown, entry.value, override, chain + [shown], where)
            else:
                self.entries.append(entry)

    def _visit_dir(self, shown, value, override, chain, where):
        folder = self.include_path(shown, value)
        local = self.local(folder)
        if not os.path.isdir(local):
            raise InputError('%s: include_dir %s is not a directory (the server would not start)' % (where, folder))
        for name in sorted(os.listdir(local)):
            if name.endswith('.conf') and not name.startswith('.') and os.path.isfile(os.path.join(local, name)):
                self._visit(os.path.join(folder, name), override, chain, where, True)

    def persisted(self, key):
        winner = self.winner(key)
        if winner is None:
            return NOT_PERSISTED
        return Persisted(winner.value, '%s line %d' % (winner.source, winner.line))

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

    # -- psql -------------------------------------------------------------------
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

    def check_live(self, desired, live):
        unknown = sorted(key for key in desired if key not in live and '.' not in key)
        if unknown:
            raise InputError('unknown PostgreSQL parameter(s), not in pg_settings: %s' % ', '.join(unknown))

    def reload_changed(self, desired, live, shadowed):
        """Reload when a dynamic parameter's live value differs; return the values read back."""
        if not (self.plan.reload and live):
            return None
        pending = [key for key in desired if key not in shadowed and self._dynamic_differs(key, live.get(key), desired)]
        if not pending:
            return None
        try:
            self._psql('SELECT pg_reload_conf()')
            for dummy in range(10):
                after = self.read_live(set(desired))
                if all(key in after and self.same(key, after[key].value, desired[key], after[key]) for key in pending):
                    break
                time.sleep(0.3)
        except OSError as exc:
            return {'__error__': 'reloading the configuration failed: %s' % exc}
        return after

    def _dynamic_differs(self, key, info, desired):
        return info is not None and info.known and not info.static and not info.read_only and \
            not self.same(key, info.value, desired[key], info)
