# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: TuneD's active profile, as another source of kernel settings.

What TuneD (tuned.service) applies when it starts, read the way TuneD reads it (tuned/consts.py,
utils/commands.py get_active_profile, daemon/daemon.py, profiles/loader.py, locator.py,
merger.py, unit.py, units/manager.py and the sysctl, vm, disk and sysfs plugins):

- ``/etc/tuned/active_profile`` names one or more profiles, separated by whitespace; names other
  than ``[A-Za-z0-9_.-]+`` are skipped; ``/etc/tuned/post_loaded_profile`` adds one more, last;
  ``profile_mode`` ``auto`` (or no active profile) makes TuneD start the profile its
  recommend rules pick (tuned_recommend.py);
- a profile is the ``tuned.conf`` in a folder of that name, looked up in the profile folders from
  the last to the first (``profile_dirs`` in ``/etc/tuned/tuned-main.conf``): ``/etc`` overrides
  ``/usr/lib``; ``include=`` in ``[main]`` (split at ``,`` or ``;``, its functions expanded but
  not the profile's variables) loads those profiles first; a file already loaded is skipped in
  that lookup; a profile missing or a cycle makes TuneD refuse all of them;
- the file is an INI file (``=`` only, ``#`` comments also after a value, later duplicates win,
  case kept); ``${i:PROFILE_DIR}`` is the profile's folder; every section but ``[main]`` is a
  unit: ``type`` (default its name), ``enabled``, ``replace``, ``drop``, ``devices``,
  ``priority``, ``cpuinfo_regex`` and ``uname_regex`` are the unit's, the rest its options;
- units of the same name merge, the later profile's winning: its options over the earlier's
  (``replace`` true drops the earlier unit, ``drop=`` names options to remove), its ``type``,
  ``enabled`` and ``devices`` always, the others when it sets them; units of type
  ``variables`` merge into the profile's variables (tuned_expand.py);
- a unit applies when it is enabled (``True``, ``true`` or ``1``), its ``cpuinfo_regex`` matches
  the TUNED HOST's ``/proc/cpuinfo`` and its ``uname_regex`` the host's ``uname`` line (system,
  node, release, version, machine), both searched line by line (``cpuinfo_string`` /
  ``uname_string`` in tuned-main.conf replace them); units apply in ``priority`` order
  (default ``default_instance_priority``), then in profile order; a block device the disk
  plugin manages goes to the first [disk] unit whose ``devices`` or
  ``devices_udev_regex`` select it (Profile.disk_units); plugins without devices (sysctl,
  vm, sysfs) ignore both.

``reapply_sysctl`` (tuned-main.conf, default 1): after each [sysctl] unit, TuneD writes again
every line of the ``*.conf`` files of /run/sysctl.d and /etc/sysctl.d (a name in /run hides the
same name in /etc) and then /etc/sysctl.conf, except keys matching ``reapply_sysctl_exclude``;
so those win over TuneD's ``[sysctl]``; /usr/lib/sysctl.d does not.

The functions here are pure; tuned_host.active(root) reads the host under root.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import fnmatch
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_devices
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_expand

ACTIVE_PROFILE = '/etc/tuned/active_profile'
PROFILE_MODE = '/etc/tuned/profile_mode'
POST_LOADED = '/etc/tuned/post_loaded_profile'
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
THP_MODES = ('always', 'never', 'madvise')        # plugin_vm.py writes no other
VM_DIRTY = ('dirty_bytes', 'dirty_background_bytes', 'dirty_ratio', 'dirty_background_ratio')
VM_DIRTY_SINCE = (2, 25)                          # the vm plugin's dirty_* options (TuneD 2.25)
# a unit's own options (profiles/unit.py); everything else is passed to its plugin
UNIT_KEYS = ('priority', 'type', 'enabled', 'replace', 'prepend', 'drop', 'devices', 'devices_udev_regex',
             'cpuinfo_regex', 'uname_regex', 'script_pre', 'script_post')

_SAFE_NAME = re.compile(r'^[a-zA-Z0-9_.-]+\Z')
_SECTION = re.compile(r'^\[([^\]]+)\]\s*\Z')
_PROFILE_DIR = re.compile(r'(?<!\\)\$\{i:PROFILE_DIR\}')
_TRUE = ('1', 'yes', 'true', 'on')
_UNIT_TRUE = ('True', 'true', '1')                 # profiles/unit.py: nothing else is true


class TunedError(ValueError):
    """A profile TuneD cannot load (the message names the file or the profile)."""


class Unevaluable(TunedError):
    """A profile whose include= the collection cannot evaluate (a function it does not run)."""


def parse(text, name='tuned.conf'):
    """{section: {option: value}} of a TuneD INI file, in file order (``=`` only, ``#`` and ``;``
    line comments, `` #`` inline comments, indented lines continue a value, later duplicates win)."""
    sections, current, option = collections.OrderedDict(), None, None
    for number, line in enumerate((text or '').splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in '#;':
            continue
        if line[:1].isspace() and option is not None:
            current[option] = (current[option] + '\n' + _uncomment(stripped)).strip()
            continue
        header = _SECTION.match(stripped)
        if header:
            current, option = sections.setdefault(header.group(1).strip(), collections.OrderedDict()), None
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


def unit_flag(value, default=False):
    """A unit's ``enabled``/``replace``/``prepend``: true only as ``True``, ``true`` or ``1`` (unit.py)."""
    return default if value is None else value in _UNIT_TRUE


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


def computed(origin, why):
    """The source of a value TuneD computes when it applies it, with why it is not known here."""
    return '%s, a value TuneD computes when it applies it (%s)' % (origin, why)


class Origin(object):
    """Where one value comes from: the profile's name and its tuned.conf (as on the system)."""

    __slots__ = ('profile', 'path')

    def __init__(self, profile, path):
        self.profile = profile
        self.path = path

    def __str__(self):
        return 'TuneD profile %s (%s)' % (self.profile, self.path)


class Unit(object):
    """One unit (plugin instance) of the merged profile: its own keys and its options
    ({option: (raw value, Origin)}); ``skipped``/``unknown`` say why it does not, or may not, apply."""

    def __init__(self, name, section, origin):
        section = collections.OrderedDict(section)
        self.name = name
        self.type = section.pop('type', name)
        self.enabled = unit_flag(section.pop('enabled', None), True)
        self.replace = unit_flag(section.pop('replace', None))
        self.prepend = unit_flag(section.pop('prepend', None))
        drop = section.pop('drop', None)
        self.drop = re.split(r'\b\s*[,;]\s*', drop) if drop is not None else None
        self.devices = section.pop('devices', '*')
        for key in ('priority', 'devices_udev_regex', 'cpuinfo_regex', 'uname_regex', 'script_pre', 'script_post'):
            setattr(self, key, section.pop(key, None))
        self.origin = origin
        self.options = collections.OrderedDict((option, (value, origin)) for option, value in section.items())
        self.skipped = self.unknown = None
        self.order = 0

    def merge(self, newer):
        """``newer`` (the same name, a later profile) over this unit, as merger.py merges them."""
        self.type, self.enabled, self.devices = newer.type, newer.enabled, newer.devices
        for key in ('priority', 'devices_udev_regex', 'cpuinfo_regex', 'uname_regex', 'script_pre', 'script_post'):
            if getattr(newer, key) is not None:
                setattr(self, key, getattr(newer, key))
        for option in newer.drop or ():
            self.options.pop(option, None)
        self.options.update(newer.options)
        self.origin = newer.origin


def load(names, locate, host=None, read=None, main_conf=None):
    """The Profile TuneD makes of the profiles ``names`` on ``host`` (tuned_host.Host or None).

    ``locate(name, skip)`` gives (path, text) of a profile's tuned.conf not in ``skip`` (paths
    already loaded), or None; ``read(path)`` the text of a file on the host (variables files).
    A profile that cannot be loaded (missing, a cycle, a file that does not parse, a failed
    assertion) makes TuneD refuse all of them: the Profile then has no unit and says why."""
    main_conf = main_conf or {}
    expander = tuned_expand.Expander(host, read)
    units, variables = collections.OrderedDict(), collections.OrderedDict()
    try:
        for unit in _load_all(names, locate, [], tuned_expand.Expander(host, read)):
            _merge(units, variables, unit)
        expander.define_all(variables)
    except (TunedError, tuned_expand.AssertionFailed) as exc:
        what = 'the collection cannot read' if isinstance(exc, Unevaluable) else 'TuneD cannot load'
        return Profile(names, [], expander, main_conf, ['%s the profile %s: %s' % (what, ' '.join(names), exc)])
    applied = _applying(units, expander, host, main_conf)
    return Profile(names, applied, expander, main_conf, list(expander.problems))


def _load_all(names, locate, loaded, functions):
    for name in names:
        found = locate(name, loaded)
        if found == '':
            continue      # locator.py: only a file already loaded (a cycle), or a "-name" not found
        if found is None:
            raise TunedError('no profile %s in the profile folders' % name)
        path, text = found
        loaded.append(path)
        folder = path.rsplit('/', 1)[0]
        sections = parse(text, path)
        for section in sections.values():
            for option in section:
                section[option] = _PROFILE_DIR.sub(lambda m: folder, section[option])
        main = sections.pop('main', {})
        if 'include' in main:
            # loader.py expands include= before any profile's variables are known: functions only
            included = functions.expand(main['include'])
            why = functions.unresolved(included)
            if why:
                raise Unevaluable('%s: include=%s names what the collection cannot evaluate (%s)' % (path, included, why))
            yield from _load_all(include_names(included), locate, loaded, functions)
        for unit_name, section in sections.items():
            yield Unit(unit_name, section, Origin(name, path))


def _merge(units, variables, unit):
    if unit.type == 'variables':
        if unit.replace:
            variables.clear()
        known = set(variables)
        for option, (value, dummy) in unit.options.items():
            variables[option] = value
        if unit.prepend:
            for option in reversed(list(unit.options)):
                if option not in known:
                    _move_to_start(variables, option)
    elif unit.replace or unit.name not in units:
        units[unit.name] = unit
    else:
        units[unit.name].merge(unit)


def _move_to_start(ordered, key):
    value = ordered.pop(key)
    rest = list(ordered.items())
    ordered.clear()
    ordered[key] = value
    ordered.update(rest)


def _applying(units, expander, host, main_conf):
    """The units TuneD creates, in the order it applies them (manager.py); skipped ones kept
    aside with the reason (``skipped``), units it may or may not apply marked ``unknown``."""
    default_priority = main_conf.get('default_instance_priority', '0')
    result = []
    for order, unit in enumerate(units.values()):
        unit.order = order
        unit.devices = expander.expand(unit.devices)
        unit.skipped = None if unit.enabled else 'enabled is not true'
        for key, read in (('cpuinfo_regex', 'cpuinfo'), ('uname_regex', 'uname')):
            regex = getattr(unit, key)
            if unit.skipped or regex is None:
                continue
            regex = expander.expand(regex)
            subject = getattr(host, read)() if host is not None else None
            if subject is None or tuned_expand.Expander.unresolved(regex):  # never guessed
                unit.unknown = ('TuneD applies [%s] only when %s matches %s, which the host tree does not show'
                                % (unit.name, '/proc/cpuinfo' if read == 'cpuinfo' else 'uname', key))
                continue
            try:
                matches = re.search(regex, subject, re.MULTILINE) is not None
            except re.error as exc:
                unit.skipped = '%s %r is no regular expression (%s)' % (key, regex, exc)
                continue
            if not matches:
                unit.skipped = "the host's %s does not match %s %r" % (read, key, regex)
        try:
            unit.priority = int(unit.priority if unit.priority is not None else default_priority)
        except ValueError:
            unit.priority = 0
        result.append(unit)
    return sorted(result, key=lambda unit: (unit.priority, unit.order))


class Profile(object):
    """The active TuneD profile as the next start of tuned.service applies it."""

    def __init__(self, names, units, expander, main_conf=None, problems=None, version=None):
        main_conf = main_conf or {}
        self.names = names
        self.all_units = units
        self.units = [unit for unit in units if not unit.skipped]
        self.expander = expander
        self.reapply_sysctl = flag(main_conf.get('reapply_sysctl'))
        self.reapply_exclude = [word.strip() for word in (main_conf.get('reapply_sysctl_exclude') or '').split(',')
                                if word.strip()]
        self.problems = problems or []
        self.version = version
        # automatic mode, when the profile TuneD's recommend rules pick is not known: the other
        # profiles it may start, and why (tuned_host.recommended); see agree()
        self.alternatives = []
        self.undecided = None

    def agree(self, ask, fallback=None):
        """``ask(profile)`` -> (value, source), or None where TuneD writes nothing (``fallback`` then:
        the boot's value without TuneD), as every profile TuneD may start answers it: the first
        profile's answer when they all give the same value; else every value one of them gives
        (``10 or 1``), which meets no desired value, and the first source, saying that the value
        is not known and why."""
        answers = [ask(profile) or fallback for profile in [self] + self.alternatives]
        values = []
        for answer in answers:
            if (answer[0] if answer else None) not in values:
                values.append(answer[0] if answer else None)
        if len(values) == 1:
            return answers[0]
        source = (answers[0] or [answer for answer in answers if answer][0])[1]
        return ' or '.join('unset' if value is None else str(value) for value in values), \
            computed(source, self.undecided)

    def value(self, raw):
        """(value, resolved): ``raw`` expanded as TuneD expands it; unresolved when it holds what
        the collection cannot evaluate (unresolved())."""
        return self.expander.value(raw)

    def unresolved(self, raw, unit=None):
        """Why the value TuneD writes for ``raw`` (of ``unit``) is not known here, or None."""
        reasons = [unit.unknown] if unit is not None and unit.unknown else []
        why = self.expander.unresolved(self.expander.expand(raw))
        return '; '.join(reasons + ([why] if why else [])) or None

    def skipped(self):
        """[(unit name, why)] of the units TuneD does not apply on this host."""
        return [(unit.name, unit.skipped) for unit in self.all_units if unit.skipped]

    def _units_of(self, plugin):
        return [unit for unit in self.units if unit.type == plugin]

    def has_unit(self, plugin):
        """Whether a unit of ``plugin`` applies."""
        return bool(self._units_of(plugin))

    def excluded(self, key):
        """Whether ``reapply_sysctl_exclude`` keeps TuneD from writing ``key`` again."""
        return any(fnmatch.fnmatch(key, pattern) for pattern in self.reapply_exclude)

    def sysctl_writes(self):
        """What TuneD writes to /proc/sys, in order: (key, raw value, Origin, Unit), and
        (None, None, None, Unit) where a [sysctl] unit writes the sysctl files again."""
        vm_dirty = self.version is None or self.version >= VM_DIRTY_SINCE
        for unit in self.units:
            if unit.type == 'sysctl':
                for option, (raw, origin) in unit.options.items():
                    yield option, re.sub(r'^"(.*)"$', r'\1', raw), origin, unit
                yield None, None, None, unit
            elif unit.type == 'vm' and vm_dirty:
                for option in VM_DIRTY:
                    if option in unit.options:
                        raw, origin = unit.options[option]
                        ratio = raw.strip().endswith('%')
                        name = option.replace('_bytes', '_ratio') if ratio else option
                        yield 'vm.' + name, raw.strip().rstrip('%') if ratio else raw, origin, unit

    def sysctl(self):
        """{key as written: (raw value, Origin)}: the last write of each key (see sysctl_writes)."""
        found = collections.OrderedDict()
        for key, raw, origin, dummy in self.sysctl_writes():
            if key is not None:
                found[key] = (raw, origin)
        return found

    def sysfs(self):
        """{/sys path or glob: (raw value, Origin, Unit)} of [sysfs] and the THP options of [vm]."""
        found = collections.OrderedDict()
        for unit in self.units:
            if unit.type == 'sysfs':
                for option, (raw, origin) in unit.options.items():
                    if option.startswith('/sys/'):
                        found[option] = (raw, origin, unit)
            elif unit.type == 'vm':
                for option in ('transparent_hugepage', 'transparent_hugepages'):
                    if option in unit.options and self._thp_mode(unit.options[option][0], unit):
                        found[THP_ENABLED] = unit.options[option] + (unit,)
                if 'transparent_hugepage.defrag' in unit.options:
                    found[THP_DEFRAG] = unit.options['transparent_hugepage.defrag'] + (unit,)
        return found

    def _thp_mode(self, raw, unit):
        expanded = self.expander.expand(raw)
        return expanded.strip() in THP_MODES or self.unresolved(raw, unit) is not None

    def sysfs_value(self, path):
        """(raw value, Origin, Unit) TuneD writes to the /sys ``path``, or None (the last match)."""
        found = None
        for pattern, item in self.sysfs().items():
            if fnmatch.fnmatchcase(path, pattern):
                found = item
        return found

    def disk_units(self, device):
        """([Unit or None], why): the [disk] unit that takes ``device`` (tuned_devices.disk_units)."""
        return tuned_devices.disk_units(self._units_of('disk'), device, self.version)

    def disk(self, device, option):
        """(raw value, Origin, Unit, why) of a [disk] option (readahead, elevator) that TuneD
        writes for ``device`` (see disk_units), or None.  ``why`` is None when that is known; else
        it says what is not, and the value is the first one TuneD may write there."""
        units, why = self.disk_units(device)
        outcomes = [unit.options[option] + (unit,) if unit is not None and option in unit.options else None
                    for unit in units]
        written = [item for item in outcomes if item is not None]
        if not written:
            return None
        same = len(written) == len(outcomes) and len(set(self.value(item[0])[0] for item in written)) == 1
        return written[0] + (None if same else why,)

    def block_queue(self, device, attribute, current=None):
        """(value, source) TuneD writes to /sys/block/<device>/queue/<attribute> when it starts (its
        [disk] readahead, elevator, or a [sysfs] entry), or None.  readahead is in KiB, or in
        512-byte sectors with an ``s`` after the number; ``>N`` writes only above ``current``."""
        option = DISK_OPTIONS.get(attribute)
        found = (self.disk(device, option) if option else None) or \
            self.sysfs_value('/sys/block/%s/queue/%s' % (getattr(device, 'name', device), attribute))
        if found is None:
            return None
        raw, origin, unit = found[:3]
        expanded, dummy = self.value(raw)
        why = '; '.join(reason for reason in (found[3] if len(found) > 3 else None, self.unresolved(raw, unit))
                        if reason)
        if why:
            return expanded, computed(origin, why)
        if option == 'readahead':
            mark = expanded.strip()[:1] if expanded.strip()[:1] in '<>' else ''
            words = expanded.strip()[len(mark):].split()
            if not words or not words[0].isdigit():
                return None  # TuneD refuses it and writes nothing
            kib = int(words[0]) // 2 if len(words) > 1 and words[1].startswith('s') else int(words[0])
            expanded = modified('%s%d' % (mark, kib), current)
            if expanded is None:
                return None
        return expanded, str(origin)


DISK_OPTIONS = {'read_ahead_kb': 'readahead', 'scheduler': 'elevator'}


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
