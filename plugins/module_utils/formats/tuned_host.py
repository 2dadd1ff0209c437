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
Block devices are read as TuneD's hardware inventory reads them through libudev
(tuned/hardware/inventory.py, plugins/plugin_disk.py): BlockDevice.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_expand
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_recommend

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
    enabled, or no profile to apply).  In automatic mode the profile is the one TuneD's recommend
    rules pick on this host (formats/tuned_recommend.py); when that is not known, the Profile is
    the first it may pick, with the others in ``alternatives`` and why in ``undecided``."""
    if not enabled(root, tuned.SERVICE_WANTS, tuned.SERVICE):
        return None
    read = reader(root)
    main_conf = tuned.parse_main_conf(read(tuned.MAIN_CONF))
    post = tuned.profile_names(read(tuned.POST_LOADED))[:1]
    names = tuned.profile_names(read(tuned.ACTIVE_PROFILE))
    mode = (read(tuned.PROFILE_MODE) or '').strip()
    if mode not in ('', 'auto', 'manual'):
        problem = 'TuneD refuses to start: %s holds %r (neither auto nor manual)' % (tuned.PROFILE_MODE, mode)
        return tuned.Profile(names + post, [], tuned_expand.Expander(None), main_conf, [problem])
    if mode == 'auto' or (mode == '' and not names):
        # daemon.py _get_startup_profile: automatic mode, or no profile and no mode
        return recommended(root, read, main_conf, post)
    if not names and not post:
        return None
    return load(root, read, main_conf, names + post)


def recommended(root, read, main_conf, post):
    """The Profile of the profile TuneD's recommend rules pick (see active())."""
    texts = [(path, read(path)) for path in recommend_files(root)]
    facts = recommend_facts(root, read)
    candidates, why = tuned_recommend.recommend([(path, text) for path, text in texts if text is not None], facts,
                                                tuned.flag(main_conf.get('recommend_command')))
    profiles = [load(root, read, main_conf, tuned.profile_names(name) + post) if name is not None else
                tuned.Profile([], [], tuned_expand.Expander(None), main_conf, []) for name in candidates]
    first = profiles[0]
    first.alternatives, first.undecided = profiles[1:], why
    if why:
        first.problems.insert(0, 'TuneD starts in automatic mode (%s): %s' % (tuned.PROFILE_MODE, why))
    return first


def recommend_facts(root, read):
    """What TuneD's recommend rules are matched against on the host under root."""
    def readable(path):
        try:
            return read(path)
        except InputError:
            return None       # a folder, a device: TuneD reads nothing of it
    return tuned_recommend.Facts(readable, os.path.realpath(root) == '/', syspurpose_module(root),
                                 lambda path: os.path.exists(confd.under_root(root, path)))


def recommend_files(root):
    """The recommend files TuneD reads, in its order (profile_recommender.py recommend)."""
    files = {}
    for folder in tuned_recommend.RECOMMEND_DIRS:
        local = confd.under_root(root, folder)
        for name in sorted(os.listdir(local)) if os.path.isdir(local) else ():
            files[name] = '%s/%s' % (folder, name)
    return [tuned_recommend.RECOMMEND_CONF] + [files[name] for name in sorted(files)]


def syspurpose_module(root):
    return any(glob.glob(confd.under_root(root, pattern)) for pattern in tuned_recommend.SYSPURPOSE_MODULE)


def load(root, read, main_conf, names):
    """The Profile TuneD makes of the profiles ``names`` on the host under root."""
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


class BlockDevice(object):
    """One block device under ``<root>/sys/block`` as TuneD's hardware inventory sees it (pyudev
    over libudev): its uevent, its ``removable`` attribute, the subsystem of its parent device
    and its udev database entry (``/run/udev/data/b<major>:<minor>``).  What the tree does not
    show stays None, so that the disk plugin's choice is said unknown rather than guessed
    (formats/tuned.py disk_plugin_takes and udev_selects)."""

    def __init__(self, root, name):
        self.name = name
        self.root = root
        try:
            self.folder = rooted(root, '/sys/block/' + name)
            self.top = rooted(root, '/sys')
        except PathError:
            self.folder = self.top = None
        self.uevent = self._uevent(self.folder)
        self.removable = self._attribute('removable')
        self.parent = self._parent()
        self.udev = self._database()

    def _attribute(self, name):
        text = self._read(os.path.join(self.folder, name)) if self.folder else None
        return text.strip() if text is not None else None

    def _read(self, local):
        try:
            return read_text(local, root=self.root)
        except (IOError, OSError, PathError):
            return None

    def _uevent(self, folder):
        text = self._read(os.path.join(folder, 'uevent')) if folder else None
        if text is None:
            return None
        return dict(line.partition('=')[::2] for line in text.splitlines() if '=' in line)

    def _parent(self):
        """The subsystem of the nearest folder above the device that is a device (has a ``uevent``),
        as libudev's parent lookup walks up the path: its ``subsystem`` link's name, '' without one;
        None when there is no such folder (or the tree does not show the device's own uevent)."""
        if self.uevent is None:
            return None
        folder = os.path.dirname(self.folder)
        while folder.startswith(self.top + os.sep):
            if os.path.isfile(os.path.join(folder, 'uevent')):
                link = os.path.join(folder, 'subsystem')
                return os.path.basename(os.readlink(link)) if os.path.islink(link) else ''
            folder = os.path.dirname(folder)
        return None

    @property
    def devpath(self):
        return self.folder[len(self.top):] if self.folder else None

    def _database(self):
        """{'E': {name: value}, 'S': [links], 'G': [tags], 'Q': [tags], 'I': usec} or None."""
        if not self.uevent or not self.uevent.get('MAJOR'):
            return None
        text = reader(self.root)('/run/udev/data/b%s:%s' % (self.uevent.get('MAJOR'), self.uevent.get('MINOR')))
        if text is None:
            return None
        found = {'E': {}, 'S': [], 'G': [], 'Q': [], 'I': None}
        for line in text.splitlines():
            kind, value = line[:2], line[2:]
            if kind == 'E:' and '=' in value:
                name, dummy, value = value.partition('=')
                found['E'][name] = value
            elif kind in ('S:', 'G:', 'Q:'):
                found[kind[0]].append(value)
            elif kind == 'I:':
                found['I'] = value
        return found
