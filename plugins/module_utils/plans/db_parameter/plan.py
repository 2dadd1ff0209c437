# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply database parameters (Oracle, PostgreSQL, MySQL).

Each engine reads its persisted configuration the way the server does (includes,
precedence), edits only the value that wins (or adds one line where the server reads
it last), reads the live value through the database's own client when one is there,
and reports one record per parameter with the collection's common result.  The
engines are in postgresql.py, mysql.py and oracle.py, chosen by ENGINES; how the
configuration is changed (text files, or an Oracle spfile through sqlplus) by STORES.

The module file only declares options and calls DbParameter(...).run(); commands go
through the ``runner`` callable (argument lists, never a shell) so tests feed recorded
client output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import check_regular
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile as pfile
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import LiveRead
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.file_store import FileStore
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.mysql import MysqlEngine
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.oracle import OracleEngine, SpfileStore
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_ism
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.postgresql import PostgresqlEngine

ENGINES = ('oracle', 'postgresql', 'mysql')  # in the order an unknown engine's message names them
ENGINE_CLASSES = {'oracle': OracleEngine, 'postgresql': PostgresqlEngine, 'mysql': MysqlEngine}
# engine.store -> how the configuration is changed
STORES = {'files': FileStore, 'spfile': SpfileStore}


class DbParameter(Plan):
    """One run of the db_parameter module: the Plan hooks over one engine and its store.

    validate(): the options, then each name and value in the engine's spelling (kept
    for desired()), then that ``path`` exists; nothing is read but that.
    desired(): {key: value} (a list of values for Oracle).
    read_live(desired): the engine finds and reads its configuration (which file, or
    the Oracle spfile, decides what to ask), then asks the running server: a LiveRead
    (``values`` {key: LiveValue}, ``reason`` why they are unknown).
    read_persisted / apply / render: the engine's store (STORES[engine.store]), whose
    docstring says what persisted and done hold; apply writes only outside check mode.
    """

    source = 'task option: db_parameter.params'

    failed_label = 'not applied'
    shadowed_label = 'shadowed'

    def __init__(self, options, context, euid=None, find_server=None, base_page=None):
        """``euid``, ``find_server`` and ``base_page``: a test's doubles (None: this host's)."""
        self.engine_name = options.engine
        self.raw_params = options.params
        self.path = options.path
        self.backup = options.backup
        self.root = validate.check_root(options.root)
        self.oracle_home = options.oracle_home
        self.oracle_sid = options.oracle_sid
        self.sid = options.sid or '*'
        self.mysql_section = (options.mysql_section or 'mysqld').lower()
        self.read_live_option = options.read_live
        self.reload = options.reload
        self.os_user = options.os_user
        self.login_user = options.login_user
        self.login_password = options.login_password
        self.login_host = options.login_host
        self.login_port = options.login_port
        self.login_db = options.login_db
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        # a database client runs as its module would (engine/... db_runner: in /, with an environment)
        self.runner = context.db_runner
        self.which = context.bin_path
        self.euid = os.geteuid() if euid is None else euid
        self.system_name = context.system_name
        # major version (or None) -> the server binary installed for it, or None; a test's seam
        # (None: the engine looks where the distributions install it)
        self.find_server = find_server
        # The base page size ISM is compared with (None: this host's, os.sysconf); a test's seam.
        self.base_page = base_page
        self.wanted = {}
        self.engine = None
        self.shadowed = []
        self.backup_files = []

    @property
    def live_possible(self):
        return self.read_live_option and self.root == '/' and self.runner is not None

    # ------------------------------------------------------------------ validation
    def validate(self):
        if self.engine_name not in ENGINES:
            raise InputError('engine %r is not one of %s' % (self.engine_name, ', '.join(ENGINES)))
        if not isinstance(self.raw_params, dict) or not self.raw_params:
            raise InputError('params must be a non-empty dict of name: value')
        engine_class = ENGINE_CLASSES[self.engine_name]
        self._check_options(engine_class)
        self.engine = engine_class(self)
        self.wanted = self._check_params()
        if self.path is not None:
            # a masked file, a FIFO or a folder is said as such, not as missing
            check_regular(self.engine.write_path(self.path))
        if self.path is not None and not os.path.isfile(self.engine.write_path(self.path)):
            raise InputError(self.engine.missing_path(self.path))

    def _check_options(self, engine_class):
        for option in ('path', 'oracle_home'):
            value = validate.check_rooted(self.root, getattr(self, option), option)
            if value is not None:
                setattr(self, option, os.path.normpath(value))
        if self.oracle_sid is not None and not pfile.SID_RE.match(self.oracle_sid):
            raise InputError('oracle_sid %r is not an instance name' % (self.oracle_sid,))
        if self.sid != '*' and not pfile.SID_RE.match(self.sid):
            raise InputError("sid %r is neither '*' nor an instance name" % (self.sid,))
        if not mycnf.GROUP_RE.match(self.mysql_section):
            raise InputError('mysql_section %r is not an option group name' % (self.mysql_section,))
        engine_class.check_options(self)
        if self.login_port is not None and (isinstance(self.login_port, bool) or not (
                isinstance(self.login_port, int) and 0 < self.login_port < 65536)):
            raise InputError('login_port %r is not a TCP port' % (self.login_port,))
        for option in ('os_user', 'login_user', 'login_host', 'login_db', 'oracle_sid', 'sid', 'mysql_section'):
            validate.check_name(getattr(self, option), option)
        for option in ('os_user', 'login_user', 'login_host', 'login_db'):
            value = getattr(self, option)
            if value is not None and (not value or re.search(r'[\s\x00]', value) or value.startswith('-')):
                raise InputError('%s %r is not usable (empty, blanks or a leading dash)' % (option, value))

    def _check_params(self):
        """{key: value} in the engine's spelling, from params."""
        wanted = {}
        for name, raw in self.raw_params.items():
            key = self.engine.validate_name(name)
            if key in wanted:
                raise InputError('params %r and another name both mean %r' % (name, key))
            if raw is None:
                raise InputError('params %r has no value' % (name,))
            wanted[key] = self.engine.desired(key, raw)
        return wanted

    # ------------------------------------------------------------------ commands
    def default_os_user(self):
        if self.os_user or self.euid != 0:
            return self.os_user
        return self.engine.default_os_user()

    def run_as(self, argv, data=None, environ=None):
        user = self.default_os_user()
        if user and self.euid == 0:
            switch = platforms.pick({platforms.LINUX: ['runuser', '-u', user, '--'], 'default': None},
                                    self.system_name)
            if switch is None:
                raise OSError('cannot switch to OS user %s on this platform: run the task with become_user' % user)
            argv = switch + list(argv)
        return self.runner(argv, data=data, environ=environ)

    # ------------------------------------------------------------------ hooks
    def desired(self):
        return dict(self.wanted)

    def read_live(self, desired):
        self.engine.locate()
        if not self.live_possible:
            if self.root != '/':
                return LiveRead({}, 'root is %s, not the running system' % self.root)
            return LiveRead({}, 'read_live is false' if not self.read_live_option else 'no command runner')
        reason = self.engine.live_unavailable()
        if reason:
            return LiveRead({}, reason)
        try:
            values = self.engine.read_live(set(desired))
        except OSError as exc:
            return LiveRead({}, str(exc))
        self.engine.check_live(desired, values)
        return LiveRead(values)

    def store(self):
        """How this run changes the configuration (the engine knows once it has located it)."""
        return STORES[self.engine.store](self, self.engine)

    def read_persisted(self, desired):
        return self.store().read(desired)

    def apply(self, desired, live, persisted, module):
        return self.store().apply(desired, live, persisted, module)

    def render(self, result, desired, live, persisted, done):
        self.store().render(result, desired, live, persisted, done)
        if pg_ism.wanted(self, desired):
            result.add(pg_ism.ism_record(self, live, self.base_page))
