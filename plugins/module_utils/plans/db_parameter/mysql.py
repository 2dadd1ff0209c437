# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: db_parameter for MySQL and MariaDB.

my.cnf read as the server reads it (formats/mycnf.py): !include and !includedir
followed, only the groups the server reads for its version, the last option read wins.
Our edit goes to the option that wins in ``path`` and what it includes, or a new line in
``mysql_section`` of ``path`` (the section added at the end when the file has none).  What
the server then reads is judged over its whole chain of option files when ``path`` is one
of them or included from them (a file of conf.d edited while a later one sets the option
again is ``shadowed``, naming that file); a ``path`` outside that chain (a server started
with --defaults-file) is its own chain.  The live side is
@@GLOBAL.<name> through the mysql (or mariadb) client; every file change waits for a
restart.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import (
    NOT_PERSISTED, Engine, LiveValue, Persisted, plain_value)


# Where the distributions install the server (MariaDB's name first, then MySQL's).
SERVER_BINARIES = ('/usr/sbin/mariadbd', '/usr/sbin/mysqld', '/usr/libexec/mariadbd', '/usr/libexec/mysqld')
# The option modifiers of "Program Option Modifiers": --skip-x, --enable-x, --disable-x, --maximum-x.
OPTION_MODIFIERS = ('skip_', 'enable_', 'disable_', 'maximum_')
# The option files the server reads when started without --defaults-file, in this order
# (`my_print_defaults --help`: "Default options are read from the following files in the
# given order: /etc/my.cnf /etc/mysql/my.cnf ~/.my.cnf"; the last, a user's, is no server's).
SERVER_FILES = ('/etc/my.cnf', '/etc/mysql/my.cnf')
_HELP_OPTION = re.compile(r'^  (?:-[^ ,], )?--([A-Za-z0-9][A-Za-z0-9_-]*)')


def installed_server(dummy_major=None):
    """The mysqld (mariadbd) binary installed on this system, or None."""
    for path in SERVER_BINARIES:
        if os.access(path, os.X_OK):
            return path
    return None


def server_options(help_text):
    """The option keys (option_key spelling) ``mysqld --no-defaults --verbose --help`` lists:
    its options (``  --name``) and its variables table (after the dashed rule)."""
    keys = set()
    in_table = False
    for line in (help_text or '').splitlines():
        if line.startswith('-----'):
            in_table = True
            continue
        match = _HELP_OPTION.match(line)
        if match:
            keys.add(mycnf.option_key(match.group(1)))
        elif in_table and line.strip() and not line.startswith(' '):
            if not line.split()[0].startswith('To'):
                keys.add(mycnf.option_key(line.split()[0]))
            else:
                in_table = False
    return keys


def option_problem(key, known):
    """Why the server that lists ``known`` would refuse the option ``key``, or None.

    The whole name, or one of its modifiers before it; a prefix of a name is refused too,
    although the server takes a unique one: an ambiguous one disables a plugin (InnoDB).
    """
    if key in known or any(key.startswith(modifier) and key[len(modifier):] in known
                           for modifier in OPTION_MODIFIERS):
        return None
    longer = sorted(name for name in known if name.startswith(key))
    if longer:
        return '%s is not an option name but the beginning of %s: give the whole name' % (key, ', '.join(longer[:3]))
    closest = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return 'the server does not know the option %s%s' % (key, "; did you mean '%s'?" % closest[0] if closest else '')


class MysqlEngine(Engine):
    name = 'mysql'
    INCLUDE_ERRORS = ('!include loop', '!include nested deeper')
    static_names = mycnf.STATIC
    client_name = 'mysql'

    def __init__(self, plan):
        Engine.__init__(self, plan)
        self.items = []
        self.version = None
        self.new_section = False
        self.loose = set()
        self.server_items = []

    def validate_name(self, name):
        if not isinstance(name, str) or not mycnf.NAME_RE.match(name):
            raise InputError('params name %r is not a MySQL option name' % (name,))
        key = mycnf.option_key(name)
        if name.lower().replace('-', '_').startswith('loose_'):
            self.loose.add(key)  # the server ignores it when it does not know it: not checked
        return key

    def locate(self):
        self.load()
        self.check_names()

    def check_names(self):
        """Refuse an option the installed server does not know (it would not start: "unknown
        variable"); a prefix is refused too (an ambiguous one disables InnoDB)."""
        plan = self.plan
        if plan.root != '/' or plan.runner is None:
            return
        binary = (plan.find_server or installed_server)(None)
        if not binary:
            return
        try:
            rc, out, dummy = plan.runner([binary, '--no-defaults', '--verbose', '--help'])
        except OSError:
            return
        known = server_options(out) if rc == 0 else set()
        if len(known) < 100:
            return  # not the help text of a server
        for key in sorted(plan.wanted):
            problem = None if key in self.loose else option_problem(key, known)
            if problem:
                raise InputError('params %r: %s (options checked against %s --verbose --help; a loose- prefix '
                                 'makes the server ignore an option it does not know)' % (key, problem, binary))

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
        self.server_items = self._server_chain(override)

    def _server_chain(self, override):
        """The items the server reads from its default option files, when ``path`` is among the files
        they reach; else ``path``'s own.  The files and notes of path's chain are kept as they were."""
        own = (self.files, self.file_by_shown, self.items, self.notes)
        self.files, self.file_by_shown, self.items, self.notes = [], {}, [], []
        try:
            for top in SERVER_FILES:
                if self.read(top, override) is not None:
                    self._visit(top, override, [])
        except InputError:
            self.file_by_shown = {}   # a chain the server cannot read is not judged here
        reached = self.plan.path in self.file_by_shown
        server_items = self.items
        self.files, self.file_by_shown, self.items, self.notes = own
        return server_items if reached else self.items

    def _visit(self, shown, override, chain):
        text = self.read_included(shown, override, chain)
        if text is None:
            self.notes.append('%s is included but does not exist' % shown)
            return
        for item in self.add_parsed(shown, text, mycnf.parse, mycnf.CnfError):
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

    def winner(self, key, items=None):
        found = None
        for item in self.items if items is None else items:
            if item.kind == 'option' and item.key == key and mycnf.server_reads(item.group, self.version):
                found = item
        return found

    def persisted(self, key):
        winner = self.winner(key, self.server_items)
        if winner is None:
            return NOT_PERSISTED
        value = 'ON' if winner.value is None else winner.value
        return Persisted(value, '%s line %d [%s]' % (winner.source, winner.line, winner.group))

    def edits(self, key, want):
        winner = self.winner(key)
        if winner is not None:
            return [mycnf.edit_for(winner, want)]
        section = self.plan.mysql_section
        point = mycnf.insert_point(self.items, section, self.plan.path)
        # A loose- option stays loose: the server ignores it only with the prefix.
        line = mycnf.format_option('loose-' + key if key in self.loose else key, want)
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
