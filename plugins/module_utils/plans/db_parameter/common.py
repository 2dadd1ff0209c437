# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what the database engines of db_parameter share.

The user's value as text (plain_value), the edits of a configuration text
(apply_edits), what the running server says (LiveValue, LiveRead, live_info), and the
Engine base: the files of one configuration read within root (includes followed, links
followed when writing), the client called through the plan's runner, and the hooks an
engine fills in (locate, load, persisted, edits, same, read_live, ...).  The engines
themselves are in postgresql.py, mysql.py and oracle.py beside their formats.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text, rooted

MAX_INCLUDE_DEPTH = 10


class ConfigFile(object):
    """One file of the configuration, as the managed system names it and as we read it."""

    def __init__(self, shown, local, text, auto=False):
        self.shown = shown
        self.local = local
        self.text = text
        self.auto = auto


# What the next start-up reads for a parameter (values for Oracle's list parameters), and where
# (a file and line, the spfile); both None when no file sets it.
Persisted = namedtuple('Persisted', 'value where')
NOT_PERSISTED = Persisted(None, None)


class LiveValue(object):
    """What the running server says about one parameter."""

    def __init__(self, value, static=None, unit=None, known=True, read_only=False, reason=None):
        self.reason = reason
        self.value = value
        self.static = static
        self.unit = unit
        self.known = known
        self.read_only = read_only


class LiveRead(object):
    """The live side of a run: ``values`` {key: LiveValue}, and ``reason`` why it is unknown (or None)."""

    def __init__(self, values, reason=None):
        self.values = values
        self.reason = reason


def live_info(live, key):
    """(LiveValue, None) when the server told ``key``, else (None, 'live value unknown: why')."""
    info = live.values.get(key)
    if info is not None and info.reason:
        return None, 'live value unknown: %s' % info.reason
    if info is None or not info.known:
        if live.reason:
            return None, 'live value unknown: %s' % live.reason
        return None, 'live value unknown: the server does not report %s' % key
    return info, None


def plain_value(raw, name, keep_blanks=False):
    """The user's value as text; strips one pair of wrapping quotes; refuses what no file can hold.

    Blanks around the value are dropped, unless ``keep_blanks`` (PostgreSQL, whose quoted
    strings keep them: log_line_prefix = '%m [%p] ' ends in a space on purpose).
    """
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
    if keep_blanks and text:
        text = raw
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
    """Common part of the three engines: files, edits and the client call.

    An engine is made from the plan (DbParameter) once its options are checked, and
    reads the options it needs from it (path, root, login_*, ...).  ``store`` names how
    its configuration is changed: 'files' (edited in place) or, for Oracle, 'spfile'.
    """

    name = None
    live_always_needs_restart = True
    client_name = None
    static_names = frozenset()
    # how read_included's errors name an include loop and a chain too deep
    INCLUDE_ERRORS = ('include loop', 'includes nested deeper')

    def __init__(self, plan):
        self.plan = plan
        self.root = plan.root
        self.files = []
        self.file_by_shown = {}
        self.notes = []

    # -- options (checked before the engine is made) -----------------------------
    @staticmethod
    def check_options(plan):
        """Refuse the options this engine has no use for (the Oracle-only ones here)."""
        if plan.path is None:
            raise InputError('path is required for engine %s' % plan.engine_name)
        for option in ('oracle_home', 'oracle_sid'):
            if getattr(plan, option) is not None:
                raise InputError('%s only applies to engine oracle' % option)
        if plan.sid != '*':
            raise InputError('sid only applies to engine oracle')

    def missing_path(self, path):
        """The message when ``path`` does not exist."""
        return 'path %s does not exist%s' % (path, '' if self.root == '/' else ' under root %s' % self.root)

    def default_os_user(self):
        """The OS user the client runs as when the task runs as root and os_user is not given."""
        return None

    @property
    def store(self):
        return 'files'

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

    def read_included(self, shown, override, chain):
        """The text of ``shown`` (None: there is no such file), reached through the files of
        ``chain``; a loop or a chain deeper than MAX_INCLUDE_DEPTH is refused, in the
        words of INCLUDE_ERRORS."""
        loop, deeper = self.INCLUDE_ERRORS
        if shown in chain:
            raise InputError('%s: %s includes itself through %s' % (loop, shown, ' -> '.join(chain)))
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise InputError('%s than %d at %s' % (deeper, MAX_INCLUDE_DEPTH, shown))
        return self.read(shown, override)

    def add_parsed(self, shown, text, parse, error, auto=False):
        """add_file(), then what ``parse(text, shown)`` reads of it; the format's ``error`` becomes an InputError."""
        self.add_file(shown, text, auto)
        try:
            return parse(text, shown)
        except error as exc:
            raise InputError(str(exc))

    def locate(self):
        """Find and read the configuration the server starts from (before the live read)."""
        self.load()

    def load(self, override=None):
        """Read the configuration; ``override`` {shown path: text} stands in for files (planned texts)."""
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
    def client(self):
        return None

    def live_unavailable(self):
        """Why the server cannot be asked (None when it can)."""
        return None if self.client() else 'no %s client on PATH' % self.client_name

    def check_live(self, desired, live):
        """Refuse what the live values show to be bad input (nothing by default)."""

    def reload_changed(self, desired, live, shadowed):
        """After writing: make the running server read its files; the values read back (None: not reloaded)."""
        return None

    def run_client(self, argv, data=None, environ=None):
        return self.plan.run_as(argv, data=data, environ=environ)
