# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the ``Limit*=`` value systemd gives a service, resolved as
systemd resolves it.

1. The unit's own files (formats/systemd.py unit_files: the unit file found first along
   /etc/systemd/system, /run/systemd/system, /usr/local/lib/systemd/system,
   /usr/lib/systemd/system, /lib/systemd/system, then its drop-ins by file name, a name in
   an earlier folder masking the same name in later ones): the last valid
   ``[Service] LimitX=`` wins.  A value systemd cannot parse (or a soft limit above the
   hard one) is ignored by systemd with a warning, and so here.
2. Else the manager's default ``[Manager] DefaultLimitX=`` from system.conf (the first of
   /etc, /run, /usr/local/lib, /usr/lib /systemd/system.conf: systemd 254 and later look in
   all four, older ones read /etc only, and distributions ship it in /etc) and then the
   system.conf.d drop-ins in those folders, by file name (systemd-system.conf(5)).
3. Else systemd's built-in default, which only the running manager can tell:
   ``systemctl show -p DefaultLimitX`` (read where systemd runs).

Where systemd runs, ``systemctl show -p LimitX UNIT`` is what it has loaded: the plan
compares it with the files (a difference means a daemon-reload is due; on Debian 12's
systemd 252 and 13's 257 a daemon-reload reads system.conf.d again too).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import limits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import pam_limits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd

MANAGER_FILES = ('/etc/systemd/system.conf', '/run/systemd/system.conf', '/usr/local/lib/systemd/system.conf',
                 '/usr/lib/systemd/system.conf')
MANAGER_DIRS = ('/etc/systemd/system.conf.d', '/run/systemd/system.conf.d', '/usr/local/lib/systemd/system.conf.d',
                '/usr/lib/systemd/system.conf.d', '/lib/systemd/system.conf.d')
UNIT, MANAGER, BUILT_IN = 'unit', 'manager', 'built-in'


class Source(object):
    """What gives a service its limit: ``pair`` ((soft, hard) or None), ``text`` as written,
    ``path`` of the file, ``origin`` (UNIT, MANAGER, BUILT_IN or None: unknown)."""

    __slots__ = ('pair', 'text', 'path', 'origin')

    def __init__(self, pair=None, text=None, path=None, origin=None):
        self.pair = pair
        self.text = text
        self.path = path
        self.origin = origin

    def describe(self, name):
        if self.origin == UNIT:
            return '%s=%s in %s' % (name, self.text, self.path)
        if self.origin == MANAGER:
            return 'the manager default Default%s=%s in %s (no file of the unit sets %s)' % (
                name, self.text, self.path, name)
        if self.origin == BUILT_IN:
            return 'systemd\'s built-in default %s (systemctl show -p Default%s; no file sets it)' % (
                limits.show_pair(self.pair), name)
        return 'no file sets %s' % name


def manager_files(root):
    """[(path as on the system, local path)] of the manager configuration, in the order systemd reads it."""
    found = []
    for shown in MANAGER_FILES:
        local = confd.under_root(root, shown)
        if confd.is_masked(local):
            break
        if read_text(local, root=root) is not None:
            found.append((shown, local))
            break
    found.extend((shown, local) for shown, local in confd.search(root, MANAGER_DIRS) if not confd.is_masked(local))
    return found


def manager_texts(root):
    return [(shown, read_text(local, root=root) or '') for shown, local in manager_files(root)]


def last_valid(files, section, key, name):
    """Source of the last assignment of ``key`` in ``section`` that systemd accepts for limit ``name``."""
    found = Source()
    for path, text in files:
        for value in systemd.read(text).get(section, {}).get(key, []):
            try:
                pair = limits.parse_systemd_limit(name, value)
            except limits.LimitsValueError:
                continue   # systemd: "Failed to parse resource value, ignoring"
            found = Source(pair, value, path)
    return found


def resolve(unit_texts, manager, name, built_in=None):
    """Source of limit ``name`` for a service whose files are ``unit_texts`` ([(path, text)]
    in order), with the manager configuration ``manager`` ([(path, text)]) and ``built_in``
    (the running manager's default pair, or None)."""
    source = last_valid(unit_texts, 'Service', name, name)
    if source.pair is not None:
        source.origin = UNIT
        return source
    source = last_valid(manager, 'Manager', 'Default' + name, name)
    if source.pair is not None:
        source.origin = MANAGER
        return source
    if built_in is not None:
        return Source(built_in, limits.show_pair(built_in), None, BUILT_IN)
    return Source()


def _higher(first, second):
    norm = [pam_limits.UNLIMITED if value == limits.INFINITY else value for value in (first, second)]
    return first if pam_limits.above(norm[0], norm[1]) else second


def to_write(text, want, have):
    """The value to write under the minimum rule: each side the higher of the desired one
    and what the service has now (``have``, a pair or None), so neither side is lowered
    (and the hard one at least the soft one)."""
    if have is None or not isinstance(have, tuple):
        return text
    soft, hard = _higher(have[0], want[0]), _higher(have[1], want[1])
    hard = _higher(soft, hard)   # systemd ignores a soft limit above the hard one
    if (soft, hard) == tuple(want):
        return text
    return str(soft) if soft == hard else '%s:%s' % (soft, hard)


def manager_defaults(runner, names):
    """{name: (soft, hard)} of the running manager's ``DefaultLimitX`` (systemctl show), {} when it cannot say."""
    argv = ['systemctl', 'show']
    for name in names:
        for prop in limits.show_properties('Default' + name):
            argv.extend(['-p', prop])
    rc, out, dummy = runner(argv)
    if rc != 0:
        return {}
    shown = systemd.parse_show(out)
    found = {}
    for name in names:
        pair = limits.from_show(shown, 'Default' + name)
        if pair is not None:
            found[name] = pair
    return found
