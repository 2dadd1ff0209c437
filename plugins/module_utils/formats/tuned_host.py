# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what TuneD reads of the host it runs on, read under root.

TuneD decides whether a unit applies from the host it runs on (tuned/units/manager.py):
``cpuinfo_regex`` is searched in ``/proc/cpuinfo`` and ``uname_regex`` in ``os.uname()``
joined by blanks (system, node, release, version, machine), unless tuned-main.conf sets
``cpuinfo_string`` / ``uname_string``.  Modules run on the tuned host, so both are read from
``<root>/proc`` there: ``/proc/sys/kernel/{ostype,hostname,osrelease,version,arch}`` give
the uname line (``arch`` since Linux 6.1; on the running system, root ``/``, ``os.uname()``
is the same host's).  Never the controller's: a tree that does not show them gives None,
and the unit is reported as undecided.

The TuneD version installed (its tuned/version.py) says which options its plugins know.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_expand

# what a unit's cpuinfo_regex / uname_regex are matched against, read on the tuned host
UNAME_FILES = ('ostype', 'hostname', 'osrelease', 'version', 'arch')
VERSION_FILES = ('/usr/lib/python3*/site-packages/tuned/version.py', '/usr/lib/python3/dist-packages/tuned/version.py',
                 '/usr/lib/python3*/dist-packages/tuned/version.py')


def reader(root):
    """read(path): the text of the host's ``path`` under root, or None."""
    def read(path):
        try:
            return read_text(confd.under_root(root, path), root=root)
        except (IOError, OSError, PathError):
            return None
    return read


def enabled(root, wants_folders, service):
    """Whether ``service`` starts at boot (a link in a *.wants folder of a system unit folder)."""
    for folder in wants_folders:
        local = confd.under_root(root, folder)
        if not os.path.isdir(local):
            continue
        for name in os.listdir(local):
            if name.endswith('.wants') and os.path.lexists(os.path.join(local, name, service)):
                return not confd.is_masked(confd.under_root(root, '/etc/systemd/system/' + service))
    return False


class Host(object):
    """The TuneD host's /proc/cpuinfo, uname line and TuneD version, read once."""

    def __init__(self, root, main_conf=None):
        self.root = root
        self.read = reader(root)
        self.main_conf = main_conf or {}
        self._cache = {}

    def cpuinfo(self, raw=False):
        """What cpuinfo_regex is searched in (``cpuinfo_string`` first, unless ``raw``: the
        functions read /proc/cpuinfo itself), or None when the tree does not show it."""
        if not raw and self.main_conf.get('cpuinfo_string') is not None:
            return self.main_conf['cpuinfo_string']
        if 'cpuinfo' not in self._cache:
            self._cache['cpuinfo'] = self.read('/proc/cpuinfo') or None
        return self._cache['cpuinfo']

    def uname(self):
        """``uname_string``, else the uname line TuneD builds, or None when not shown under root."""
        if self.main_conf.get('uname_string') is not None:
            return self.main_conf['uname_string']
        if 'uname' not in self._cache:
            words = [self.read('/proc/sys/kernel/' + name) for name in UNAME_FILES]
            if all(word is not None for word in words):
                self._cache['uname'] = ' '.join(word.strip() for word in words)
            elif os.path.realpath(self.root) == '/' and hasattr(os, 'uname'):
                self._cache['uname'] = ' '.join(os.uname())
            else:
                self._cache['uname'] = None
        return self._cache['uname']

    def tuned_version(self):
        """(major, minor) of the TuneD installed, or None when not found."""
        for pattern in VERSION_FILES:
            for local in sorted(glob.glob(confd.under_root(self.root, pattern))):
                text = read_text(local) or ''
                major = re.search(r'^TUNED_VERSION_MAJOR\s*=\s*(\d+)', text, re.M)
                minor = re.search(r'^TUNED_VERSION_MINOR\s*=\s*(\d+)', text, re.M)
                if major and minor:
                    return int(major.group(1)), int(minor.group(1))
        return None


def active(root='/'):
    """The Profile tuned.service applies at its next start under root, or None (TuneD not
    enabled, or no profile to apply)."""
    if not enabled(root, tuned.SERVICE_WANTS, tuned.SERVICE):
        return None
    read = reader(root)
    main_conf = tuned.parse_main_conf(read(tuned.MAIN_CONF))
    names = tuned.profile_names(read(tuned.ACTIVE_PROFILE)) + tuned.profile_names(read(tuned.POST_LOADED))[:1]
    mode = (read(tuned.PROFILE_MODE) or '').strip()
    problem = None
    if mode not in ('', 'auto', 'manual'):
        problem = 'TuneD refuses to start: %s holds %r (neither auto nor manual)' % (tuned.PROFILE_MODE, mode)
    elif mode == 'auto' or (mode == '' and not names):
        # daemon.py _get_startup_profile: automatic mode, or no profile and no mode
        problem = ('TuneD starts the profile its recommend.d rules pick for this host (%s), which the collection '
                   'does not evaluate: what TuneD then sets is not read'
                   % ('%s is auto' % tuned.PROFILE_MODE if mode == 'auto' else 'no profile in %s' % tuned.ACTIVE_PROFILE))
    if problem:
        return tuned.Profile(names, [], tuned_expand.Expander(None), main_conf, [problem])
    if not names:
        return None
    folders = tuned.profile_dirs(main_conf)

    def locate(name, skip):
        """locator.py get_config: (path, text), '' (only loaded ones, or "-name" missing), or None."""
        found = '' if name.startswith('-') else None
        for folder in reversed(folders):
            path = re.sub(r'/+', '/', '%s/%s/tuned.conf' % (folder, name.lstrip('-').rsplit('/', 1)[-1]))
            if path in skip:
                found = ''
                continue
            text = read(path)
            if text is not None:
                return path, text
        return found
    host = Host(root, main_conf)
    profile = tuned.load(names, locate, host, read, main_conf)
    profile.version = host.tuned_version()
    return profile
