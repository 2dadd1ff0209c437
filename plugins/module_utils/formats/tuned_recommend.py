# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the profile TuneD picks when it starts in automatic mode.

With ``profile_mode`` ``auto`` (or no profile and no mode), tuned.service starts the profile
its recommend rules pick for the host (tuned/daemon/daemon.py _get_startup_profile,
tuned/utils/profile_recommender.py, tuned/consts.py):

- ``recommend_command = 0`` in tuned-main.conf: always ``balanced``;
- else ``/etc/tuned/recommend.conf`` first, then the files of ``/usr/lib/tuned/recommend.d``
  and ``/etc/tuned/recommend.d`` (a name in /etc hides the same name in /usr/lib), by name;
  each an INI file (``=`` only, ``#`` comments, later duplicates win); a file TuneD cannot
  parse is skipped whole;
- the first section whose every option matches names the profile (``,suffix`` dropped); no
  section matching: ``balanced``.  Every option is a regular expression matched at the start
  (``re.match``, dot matching newlines), an empty one meaning ``^$``:

  ``virt``          virt-what's output: not known here (a command);
  ``system``        ``/etc/system-release-cpe`` (empty when missing);
  ``/FILE``         the file's text; no match when it does not exist;
  ``process*``      the processes running when TuneD starts: not known here;
  ``chassis_type``  the DMI chassis type (``/sys/devices/virtual/dmi/id/chassis_type`` by
                    SMBIOS number, case ignored); dmidecode when the file is missing: not known;
  ``syspurpose_role`` the ``role`` of ``/etc/rhsm/syspurpose/syspurpose.json`` when the
                    syspurpose Python module is installed, else empty.

A rule the collection cannot evaluate is never guessed: the answer is then every profile
TuneD may pick, with why (recommend()).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned

RECOMMEND_CONF = '/etc/tuned/recommend.conf'
RECOMMEND_DIRS = ('/usr/lib/tuned/recommend.d', '/etc/tuned/recommend.d')
DEFAULT_PROFILE = 'balanced'
SYSTEM_RELEASE = '/etc/system-release-cpe'
CHASSIS_TYPE = '/sys/devices/virtual/dmi/id/chassis_type'
SYSPURPOSE = '/etc/rhsm/syspurpose/syspurpose.json'
SYSPURPOSE_MODULE = ('/usr/lib/python3*/site-packages/syspurpose/files.py',
                     '/usr/lib64/python3*/site-packages/syspurpose/files.py',
                     '/usr/lib/python3/dist-packages/syspurpose/files.py')
# what the running system shows, not its files: missing from a tree that is not the running system
# says nothing of what TuneD sees at its start
VOLATILE = ('/proc/', '/sys/', '/run/', '/dev/', '/tmp/')
# SMBIOS 3.3.0 chassis types, by number, as profile_recommender.py names them
CHASSIS_TYPES = (
    '', 'Other', 'Unknown', 'Desktop', 'Low Profile Desktop', 'Pizza Box', 'Mini Tower', 'Tower', 'Portable', 'Laptop',
    'Notebook', 'Hand Held', 'Docking Station', 'All In One', 'Sub Notebook', 'Space-saving', 'Lunch Box',
    'Main Server Chassis', 'Expansion Chassis', 'Sub Chassis', 'Bus Expansion Chassis', 'Peripheral Chassis',
    'RAID Chassis', 'Rack Mount Chassis', 'Sealed-case PC', 'Multi-system', 'CompactPCI', 'AdvancedTCA', 'Blade',
    'Blade Enclosing', 'Tablet', 'Convertible', 'Detachable', 'IoT Gateway', 'Embedded PC', 'Mini PC', 'Stick PC')


ANY = object()             # what an option TuneD does not know is matched against: it always matches


class Facts(object):
    """What the rules are matched against, on the tuned host: ``read(path)`` (text or None),
    ``running`` (root is the running system), ``syspurpose_module`` (whether the syspurpose
    Python module is installed: True, False), ``exists(path)`` (a file TuneD finds but cannot
    read, a folder: TuneD matches its text as empty)."""

    def __init__(self, read, running=False, syspurpose_module=False, exists=None):
        self.read = read
        self.running = running
        self.syspurpose_module = syspurpose_module
        self.exists = exists or (lambda path: False)

    def subject(self, option):
        """(text, None) an option's regular expression is matched against, or (None, why not known)."""
        if option == 'virt':
            return None, 'virt= matches the output of virt-what, a command the collection does not run'
        if option.startswith('process'):
            return None, '%s= matches the processes running when TuneD starts' % option
        if option == 'system':
            return self.read(SYSTEM_RELEASE) or '', None
        if option.startswith('/'):
            text = self.read(option)
            text = '' if text is None and self.exists(option) else text
            if text is None and option.startswith(VOLATILE) and not self.running:
                return None, '%s= matches a file of the running system, which the host tree does not show' % option
            return text, None
        if option == 'chassis_type':
            return self._chassis()
        if option == 'syspurpose_role':
            return self._role()
        return ANY, None       # TuneD ignores an option it does not know: it matches

    def _chassis(self):
        try:
            name = CHASSIS_TYPES[int(self.read(CHASSIS_TYPE))]
        except (TypeError, ValueError, IndexError):
            name = ''
        if not name:
            return None, 'chassis_type= matches what dmidecode says when %s names no chassis type' % CHASSIS_TYPE
        return name, None

    def _role(self):
        if not self.syspurpose_module:
            return '', None
        text = self.read(SYSPURPOSE)
        if text is None:
            return '', None
        try:
            contents = json.loads(text)
        except ValueError:
            return None, 'syspurpose_role= reads %s, which is no JSON' % SYSPURPOSE
        role = contents.get('role', '') if isinstance(contents, dict) else None
        return (role, None) if isinstance(role, str) else (None, 'the role in %s is no text' % SYSPURPOSE)


def matches(option, regex, facts):
    """(True, False or None, why) of one option of a rule."""
    text, why = facts.subject(option)
    if why:
        return None, why
    if text is ANY:
        return True, None
    if text is None:
        return False, None     # a /FILE that does not exist
    try:
        flags = re.IGNORECASE if option in ('chassis_type', 'syspurpose_role') else re.S
        return re.match(regex or '^$', text, flags) is not None, None
    except re.error as exc:
        return None, '%s=%s is no regular expression (%s): TuneD fails to recommend' % (option, regex, exc)


def rules(path, text):
    """[(profile, {option: regex})] of one recommend file, in order; TunedError when TuneD's
    ConfigParser cannot read it (a line outside a section or without ``=``)."""
    sections = tuned.parse(text, path)
    defaults = sections.pop('DEFAULT', {})
    found = []
    for section, options in sections.items():
        merged = dict(defaults)
        merged.update(options)
        found.append((re.sub(r',[^,]*$', '', section), merged))
    return found


def recommend(texts, facts, recommend_command=True):
    """([profiles TuneD may start], why): one profile and None when it is known; else every
    profile it may pick, first to last, and what the collection cannot evaluate.  None among
    them: TuneD fails to start (a recommend file its ConfigParser refuses: the error is not
    caught, tuned.service stops and sets nothing)."""
    if not recommend_command:
        return [DEFAULT_PROFILE], None
    candidates, unknown = [], []
    for path, text in texts:
        try:
            sections = rules(path, text)
        except tuned.TunedError as exc:
            candidates.append(None)
            unknown.append('TuneD fails to start when it reads %s: %s' % (path, exc))
            break
        if _first_match(path, sections, facts, candidates, unknown):
            break
    else:
        if DEFAULT_PROFILE not in candidates:
            candidates.append(DEFAULT_PROFILE)
    if len(candidates) == 1:
        return candidates, unknown[0] if candidates == [None] else None
    return candidates, 'the recommend rules TuneD starts from pick one of %s: %s' % (
        ', '.join(name or '(none: TuneD fails to start)' for name in candidates), '; '.join(unknown))


def _first_match(path, sections, facts, candidates, unknown):
    """Whether a section of one file surely matches; the sections that may are added to candidates."""
    for profile, options in sections:
        results = [matches(option, regex, facts) for option, regex in options.items()]
        if any(result is False for result, dummy in results):
            continue
        if profile not in candidates:
            candidates.append(profile)
        reasons = [why for result, why in results if result is None]
        if not reasons:
            return True
        unknown.append('[%s] in %s: %s' % (profile, path, '; '.join(reasons)))
    return False
