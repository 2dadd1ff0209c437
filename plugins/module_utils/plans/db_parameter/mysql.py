# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: db_parameter for MySQL and MariaDB.

my.cnf read as the server reads it (formats/mycnf.py): !include and !includedir
followed, only the groups the server reads for its version, the last option read wins.
Our edit goes to the option that wins, or a new line in ``mysql_section`` of ``path``
(the section added at the end when the file has none).  The live side is
@@GLOBAL.<name> through the mysql (or mariadb) client; every file change waits for a
restart.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import (
    MAX_INCLUDE_DEPTH, Engine, LiveValue, plain_value)


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
        text = plain_value(raw, key)
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

    # -- files ------------------------------------------------------------------
    def load(self, override=None):
        override = override or {}
        self.files = []
        self.file_by_shown = {}
        self.items = []
        self.notes = []
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
                self._visit_dir(shown, item, override, chain + [shown])

    def _visit_dir(self, shown, item, override, chain):
        folder = self.include_path(shown, item.path)
        local = self.local(folder)
        if not os.path.isdir(local):
            self.notes.append('%s line %d: !includedir %s does not exist' % (shown, item.line, folder))
            return
        for name in sorted(os.listdir(local)):
            if name.endswith('.cnf') and os.path.isfile(os.path.join(local, name)):
                self._visit(os.path.join(folder, name), override, chain)

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

    # -- client -----------------------------------------------------------------
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
