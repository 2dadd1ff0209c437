# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: TuneD's active profile, as another source of kernel settings.

What TuneD (tuned.service) applies when it starts, read the way TuneD reads it (tuned/consts.py,
profiles/loader.py, locator.py, merger.py and the sysctl, vm, disk and sysfs plugins):

- ``/etc/tuned/active_profile`` names one or more profiles, separated by whitespace; names other
  than ``[A-Za-z0-9_.-]+`` are skipped;
- a profile is the ``tuned.conf`` in a folder of that name, looked up in the profile folders from
  the last to the first (``profile_dirs`` in ``/etc/tuned/tuned-main.conf``, default
  ``/usr/lib/tuned, /etc/tuned``; TuneD 2.23 and later also ``/usr/lib/tuned/profiles`` and
  ``/etc/tuned/profiles``): ``/etc`` overrides ``/usr/lib``;
- ``include=`` in ``[main]`` (names split at ``,`` or ``;``) loads those profiles first, and the
  including one overrides them; a file already loaded is skipped in that lookup, so
  ``/etc/tuned/oracle`` may include ``oracle`` (the one in /usr/lib), and a real cycle leaves
  a name that no file is left for: TuneD then refuses the whole profile (reported, no crash);
- the file is an INI file (``=`` only, ``#`` comments also after a value, later duplicates win,
  case kept); a section is a plugin instance whose plugin is its ``type=`` or its name; units of
  the same name merge, the later profile's options winning (``replace=1`` drops the earlier's);
  ``enabled=0`` turns a unit off;
- ``[variables]`` define ``${name}``; ``${f:...}`` calls a function and ``${i:PROFILE_DIR}`` names
  the profile's folder.  A value that still holds ``${`` after the plain variables is unresolved:
  TuneD computes it when it applies it, so it is reported as such, never guessed.

``reapply_sysctl`` (tuned-main.conf, default 1): after writing its ``[sysctl]`` values, TuneD
writes again every line of the ``*.conf`` files of /run/sysctl.d and /etc/sysctl.d (a name in
/run hides the same name in /etc) and then /etc/sysctl.conf, so those win over TuneD's
``[sysctl]``; /usr/lib/sysctl.d does not.  With 0, TuneD's values win over every sysctl file.

The parse functions are pure; ``active(root)`` reads under root (engine/files).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text

ACTIVE_PROFILE = '/etc/tuned/active_profile'
MAIN_CONF = '/etc/tuned/tuned-main.conf'
# lowest precedence first, as profile_dirs lists them; the newer folders after the older
PROFILE_DIRS = ('/usr/lib/tuned', '/usr/lib/tuned/profiles', '/etc/tuned', '/etc/tuned/profiles')
SERVICE = 'tuned.service'
SERVICE_WANTS = ('/etc/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system')
# the sysctl files TuneD writes again after its own [sysctl] values (reapply_sysctl = 1)
REAPPLY_DIRS = ('/run/sysctl.d', '/etc/sysctl.d')
REAPPLY_CONF = '/etc/sysctl.conf'
THP_ENABLED = '/sys/kernel/mm/transparent_hugepage/enabled'
THP_DEFRAG = '/sys/kernel/mm/transparent_hugepage/defrag'

_SAFE_NAME = re.compile(r'^[a-zA-Z0-9_.-]+\Z')
_SECTION = re.compile(r'^\[([^\]]+)\]\s*\Z')
_VARIABLE = re.compile(r'(?<!\\)\$\{([A-Za-z_][A-Za-z0-9_]*)\}')
_TRUE = ('1', 'yes', 'true', 'on')


class TunedError(ValueError):
    """A profile TuneD cannot load (the message names the file or the profile)."""


def parse(text, name='tuned.conf'):
    """{section: {option: value}} of a TuneD INI file, in file order (``=`` only, ``#`` and ``;``
    line comments, `` #`` inline comments, indented lines continue a value, later duplicates win)."""
    sections, current, option = {}, None, None
    for number, line in enumerate((text or '').splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in '#;':
            continue
        if line[:1].isspace() and option is not None:
            current[option] = (current[option] + '\n' + _uncomment(stripped)).strip()
            continue
        header = _SECTION.match(stripped)
        if header:
            current, option = sections.setdefault(header.group(1).strip(), {}), None
            continue
        key, sep, value = stripped.partition('=')
        if not sep or not key.strip():
            raise TunedError('%s line %d: %r is neither a [section] nor option = value' % (name, number, stripped))
        if current is None:
            raise TunedError('%s line %d: %r comes before any [section]' % (name, number, stripped))
        option = key.strip()
        current[option] = _uncomment(value.strip())
    return sections


def _uncomment(value):
    """A value without an inline ``#`` comment (a ``#`` after whitespace, as ConfigParser reads it)."""
    match = re.search(r'\s#', value)
    return value[:match.start()].rstrip() if match else value


def parse_main_conf(text):
    """{option: value} of tuned-main.conf (no section header; ``#`` comments)."""
    return parse('[main]\n' + (text or ''), MAIN_CONF).get('main', {})


def flag(value, default=True):
    """A tuned-main.conf boolean (``1``, ``yes``, ``true``, ``on``), ``default`` when unset."""
    if value is None or not value.strip():
        return default
    return value.strip().lower() in _TRUE


def profile_names(text):
    """The profiles ``active_profile`` names, in order (unsafe names skipped, as TuneD does)."""
    return [name for name in (text or '').split() if _SAFE_NAME.match(name)]


def include_names(value):
    return [name for name in re.split(r'\s*[,;]\s*', (value or '').strip()) if name]


def profile_dirs(main_conf):
    """The profile folders, lowest precedence first: ``profile_dirs`` or the defaults."""
    given = main_conf.get('profile_dirs')
    if given:
        return tuple(folder.strip() for folder in given.split(',') if folder.strip())
    return PROFILE_DIRS


class Origin(object):
    """Where one value comes from: the profile's name and its tuned.conf (as on the system)."""

    __slots__ = ('profile', 'path')

    def __init__(self, profile, path):
        self.profile = profile
        self.path = path

    def __str__(self):
        return 'TuneD profile %s (%s)' % (self.profile, self.path)


def load(names, locate):
    """The merged units of the profiles ``names``: ({unit: {option: (value, Origin)}}, problems).

    ``locate(name, skip)`` gives (path, text) of a profile's tuned.conf not in ``skip`` (paths
    already loaded), or None.  A profile that cannot be loaded (missing, a cycle, a file that
    does not parse) makes TuneD refuse all of them: the units are then {} and ``problems``
    says why."""
    loaded, merged = [], {}
    try:
        for unit_name, unit, origin in _load_all(names, locate, loaded):
            _merge_unit(merged, unit_name, unit, origin)
    except TunedError as exc:
        return {}, ['TuneD cannot load the profile %s: %s' % (' '.join(names), exc)]
    return merged, []


def _load_all(names, locate, loaded):
    for name in names:
        found = locate(name, loaded)
        if found is None:
            if any(os.path.basename(os.path.dirname(path)) == name for path in loaded):
                raise TunedError('profile %s includes itself (a cycle), and no other folder has one' % name)
            raise TunedError('no profile %s in the profile folders' % name)
        path, text = found
        loaded.append(path)
        units = parse(text, path)
        includes = units.get('main', {}).pop('include', None)
        if includes:
            yield from _load_all(include_names(_expand(includes, units)), locate, loaded)
        for unit_name, unit in units.items():
            yield unit_name, unit, Origin(name, path)


def _expand(value, units):
    variables = units.get('variables', {})
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), value)


def _merge_unit(merged, unit_name, unit, origin):
    values = dict((option, (value, origin)) for option, value in unit.items())
    if flag(unit.get('replace'), default=False) or unit_name not in merged:
        merged[unit_name] = values
    else:
        merged[unit_name].update(values)


class Profile(object):
    """The active TuneD profile as the next start of tuned.service applies it."""

    def __init__(self, names, units, reapply_sysctl=True, problems=None):
        self.names = names
        self.units = units
        self.reapply_sysctl = reapply_sysctl
        self.problems = problems or []
        variables = dict((name, value) for name, (value, dummy) in units.get('variables', {}).items())
        self.variables = variables

    def value(self, raw):
        """(value, resolved): plain ``${name}`` variables expanded; unresolved when ``${`` remains."""
        expanded = _VARIABLE.sub(lambda m: self.variables.get(m.group(1), m.group(0)), raw)
        return expanded, '${' not in expanded

    def has_unit(self, plugin):
        """Whether an enabled unit of ``plugin`` is in the profile."""
        return any(True for dummy in self._units_of(plugin))

    def _units_of(self, plugin):
        for unit_name in sorted(self.units):
            unit = self.units[unit_name]
            kind = unit.get('type', (unit_name, None))[0]
            if kind == plugin and flag((unit.get('enabled') or ('1', None))[0]):
                yield unit_name, unit

    def sysctl(self):
        """{key as written: (value, Origin)} of [sysctl] and the sysctl keys of [vm]."""
        found = {}
        for dummy, unit in self._units_of('sysctl'):
            for option, item in unit.items():
                if option not in ('type', 'enabled', 'replace', 'devices', 'priority', 'drop'):
                    found[option] = item
        for dummy, unit in self._units_of('vm'):
            for option in ('dirty_bytes', 'dirty_background_bytes', 'dirty_ratio', 'dirty_background_ratio'):
                if option in unit:
                    value, origin = unit[option]
                    name = option.replace('_bytes', '_ratio') if value.strip().endswith('%') else option
                    found['vm.' + name] = (value.strip().rstrip('%'), origin)
        return found

    def sysfs(self):
        """{/sys path or glob: (value, Origin)} of [sysfs] and the THP options of [vm]."""
        found = {}
        for dummy, unit in self._units_of('sysfs'):
            for option, item in unit.items():
                if option.startswith('/sys/'):
                    found[option] = item
        for dummy, unit in self._units_of('vm'):
            for option in ('transparent_hugepage', 'transparent_hugepages'):
                if option in unit:
                    found[THP_ENABLED] = unit[option]
            if 'transparent_hugepage.defrag' in unit:
                found[THP_DEFRAG] = unit['transparent_hugepage.defrag']
        return found

    def sysfs_value(self, path):
        """(value, Origin) TuneD writes to the /sys ``path``, or None (the last matching entry)."""
        found = None
        for pattern, item in self.sysfs().items():
            if fnmatch.fnmatchcase(path, pattern):
                found = item
        return found

    def disk(self, device, option):
        """(value, Origin) of a [disk] option (readahead, elevator) for ``device``, or None."""
        found = None
        for dummy, unit in self._units_of('disk'):
            if option in unit and _selects(unit.get('devices', ('*', None))[0], device):
                found = unit[option]
        return found

    def block_queue(self, device, attribute, current=None):
        """(value, source) TuneD writes to /sys/block/<device>/queue/<attribute> when it starts (its
        [disk] readahead, elevator, or a [sysfs] entry), or None.  readahead is in KiB, or in
        512-byte sectors with an ``s`` after the number; ``>N`` writes only above ``current``."""
        option = DISK_OPTIONS.get(attribute)
        found = (self.disk(device, option) if option else None) or \
            self.sysfs_value('/sys/block/%s/queue/%s' % (device, attribute))
        if found is None:
            return None
        expanded, resolved = self.value(found[0])
        if not resolved:
            return expanded, '%s, a value TuneD computes when it applies it' % found[1]
        if option == 'readahead':
            mark = expanded.strip()[:1] if expanded.strip()[:1] in '<>' else ''
            words = expanded.strip()[len(mark):].split()
            if not words or not words[0].isdigit():
                return None  # TuneD refuses it and writes nothing
            kib = int(words[0]) // 2 if len(words) > 1 and words[1].startswith('s') else int(words[0])
            expanded = modified('%s%d' % (mark, kib), current)
            if expanded is None:
                return None
        return expanded, str(found[1])


DISK_OPTIONS = {'read_ahead_kb': 'readahead', 'scheduler': 'elevator'}


def _selects(devices, device):
    """TuneD's ``devices=`` (comma list of names or globs, ``!`` negates; default all) for ``device``."""
    words = [word.strip() for word in devices.split(',') if word.strip()] or ['*']
    negated = words[0].startswith('!')
    patterns = [word.lstrip('!') for word in words]
    hit = any(fnmatch.fnmatchcase(device, pattern) for pattern in patterns)
    return hit != negated


def modified(raw, current):
    """The value TuneD writes for ``raw`` over ``current``: ``>N`` only when above it, ``<N`` only
    when below it, else ``raw``; None when it writes nothing."""
    text = (raw or '').strip()
    if len(text) < 2 or text[0] not in '<>':
        return text
    number = text[1:].strip()
    if current is None:
        return number
    try:
        higher = int(number) > int(str(current).split()[0])
        lower = int(number) < int(str(current).split()[0])
    except ValueError:
        return None
    return number if (higher if text[0] == '>' else lower) else None


# ---------------------------------------------------------------- reading under root
def _read(root, path):
    try:
        return read_text(confd.under_root(root, path), root=root)
    except (IOError, OSError, PathError):
        return None


def enabled(root):
    """Whether tuned.service starts at boot (a link in a *.wants folder of a system unit folder)."""
    for folder in SERVICE_WANTS:
        local = confd.under_root(root, folder)
        if not os.path.isdir(local):
            continue
        for name in os.listdir(local):
            if name.endswith('.wants') and os.path.lexists(os.path.join(local, name, SERVICE)):
                return not confd.is_masked(confd.under_root(root, '/etc/systemd/system/' + SERVICE))
    return False


def active(root='/'):
    """The Profile tuned.service applies at its next start under root, or None (TuneD not
    enabled, or no active profile)."""
    names = profile_names(_read(root, ACTIVE_PROFILE))
    if not names or not enabled(root):
        return None
    main_conf = parse_main_conf(_read(root, MAIN_CONF))
    folders = profile_dirs(main_conf)

    def locate(name, skip):
        for folder in reversed(folders):
            path = os.path.normpath('%s/%s/tuned.conf' % (folder, os.path.basename(name)))
            if path in skip:
                continue
            text = _read(root, path)
            if text is not None:
                return path, text
        return None
    units, problems = load(names, locate)
    return Profile(names, units, flag(main_conf.get('reapply_sysctl')), problems)
