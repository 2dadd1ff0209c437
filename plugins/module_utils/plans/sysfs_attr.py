# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply sysfs attributes, live and persisted.

Live: the attribute under <root>/sys, read and written like ``cat``/``echo``; the bracketed
choice format (``always madvise [never]``) compares the selected word, and a desired
value that is not one of the choices is refused before anything is written.
Persisted: ``w`` lines in a systemd-tmpfiles file (see _tmpfiles), applied early at boot
by systemd-tmpfiles-setup.service; the value that wins at boot is resolved across the
whole tmpfiles.d search path, so another file that wins is reported as ``shadowed``.

SysfsAttributes fills in the Plan hooks (plans/base.py): desired() is the attributes,
read_live() their values (a value not among its choices stops the run there; an attribute
this kernel or device does not have is unsupported, as is one under a read-only /sys),
read_persisted() our tmpfiles file and what wins at boot, render() the records; apply(), the
only hook that writes, is LivePlusFile's flow over read_one(), write_one() and file_text().
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.compare import same_value
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tmpfiles
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import UNCHANGED, LivePlusFile, Plan

DEFAULT_TMPFILES_FILE = '/etc/tmpfiles.d/90-dbhost-tuning.conf'
HEADER = ('# Managed by dbhost.tuning: sysfs attributes that systemd-tmpfiles writes at boot;\n'
          '# local edits to these paths are overwritten.')
# The attribute the kernel command line's transparent_hugepage= sets at boot.
THP_ENABLED = '/sys/kernel/mm/transparent_hugepage/enabled'


def sysfs_path(name):
    """``kernel/mm/x`` or ``/sys/kernel/mm/x`` -> ``/sys/kernel/mm/x``; refuses traversal."""
    if not isinstance(name, str) or not name.strip():
        raise InputError('attributes: path %r is empty' % (name,))
    raw = name.strip()
    if raw.startswith('/'):
        if raw != '/sys' and not raw.startswith('/sys/'):
            raise InputError('attributes: path %r is outside /sys' % (name,))
        raw = raw[len('/sys'):]
    parts = [part for part in raw.split('/') if part != '']
    if not parts:
        raise InputError('attributes: path %r names /sys itself, not an attribute' % (name,))
    if any(part in ('.', '..') for part in parts):
        raise InputError('attributes: path %r must not contain "." or ".." components' % (name,))
    if any(char.isspace() for char in raw) or '\x00' in raw:
        raise InputError('attributes: path %r contains whitespace' % (name,))
    validate.check_name(name.strip(' '), 'attributes')
    return '/sys/' + '/'.join(parts)


def format_value(name, value):
    if isinstance(value, bool):
        raise InputError('attribute %s: a boolean is ambiguous here; give the text the kernel takes '
                         '(for example 0, 1, never or always)' % (name,))
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise InputError('attribute %s: value %r is neither a string nor a number' % (name, value))
    if '\n' in value or '\r' in value or '\x00' in value:
        raise InputError('attributes: %s: the value contains a newline' % (name,))
    validate.check_text(value, 'attributes: %s' % (name,))
    text = ' '.join(value.split())
    if not text:
        raise InputError('attribute %s: the value is empty' % (name,))
    return text


def normalize(value):
    return None if value is None else ' '.join(str(value).split())


def tuned_writes(profile, path):
    """(value, source) TuneD's ``profile`` writes to the /sys ``path`` when it starts, or None."""
    found = profile.sysfs_value(path)
    if not found:
        return None
    expanded, dummy = profile.value(found[0])
    unknown = profile.unresolved(found[0], found[2])
    return expanded, tuned.computed(found[1], unknown) if unknown else str(found[1])


# What read_persisted() finds: our tmpfiles.d file (host path, text, its values), the next boot's command line,
# and what the next boot gives each attribute (NONE where the platform has none).
TmpfilesFile = namedtuple('TmpfilesFile', 'path text ours cmdline resolve')
TmpfilesFile.NONE = TmpfilesFile(*[None] * 5)


class SysfsAttributes(LivePlusFile, Plan):
    """The sysfs_attr module's plan: each attribute's value, live and persisted."""

    source = 'task option: sysfs_attr.attributes'
    boot_where = 'it exists and can be set'

    def __init__(self, options, context):
        self.raw_attributes = options.attributes
        self.apply_live = options.apply
        self.persist = options.persist
        self.file = options.tmpfiles_file or DEFAULT_TMPFILES_FILE
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        self.supported = platforms.pick({platforms.LINUX: True, 'default': False}, context.system_name)
        self.wanted = {}
        self.choices = {}
        # path -> why this kernel or container cannot have it (no such attribute, read-only /sys)
        self.missing = {}
        self.unsupported = {}
        self.shadowed = []
        self.tuned = None
        self.backup_file = None
        sys_root = rooted(self.root, '/sys')
        # An offline image has an empty /sys: then only the persisted side is managed.
        self.live_available = self.root == '/' or any(
            os.path.isdir(os.path.join(sys_root, sub)) for sub in ('kernel', 'devices', 'block', 'class'))

    # ---------------------------------------------------------------- validation
    def _local(self, path):
        return rooted(self.root, path)

    def validate(self):
        if not isinstance(self.raw_attributes, dict) or not self.raw_attributes:
            raise InputError('attributes must be a non-empty dict of sysfs path: value')
        validate.check_rooted(self.root, self.file, 'tmpfiles_file')
        folder, base = os.path.dirname(self.file), os.path.basename(self.file)
        if folder not in tmpfiles.SEARCH_DIRS or not base.endswith('.conf'):
            raise InputError('tmpfiles_file %r is not read at boot: use a *.conf file in one of %s'
                             % (self.file, ', '.join(tmpfiles.SEARCH_DIRS)))
        wanted = {}
        for name, value in self.raw_attributes.items():
            path = sysfs_path(name)
            if path in wanted:
                raise InputError('attributes %r and another key both name %s' % (name, path))
            wanted[path] = format_value(path, value)
        self.wanted = wanted

    def desired(self):
        return self.wanted

    # ---------------------------------------------------------------- reading
    def _read_one(self, path, want, sys_root, problems):
        """The live value of one attribute, or None with why added to ``problems``."""
        local = self._local(path)
        if os.path.isdir(local):
            problems.append('%s is a folder, not an attribute' % (path,))
            return None
        if not os.path.lexists(local) and not os.path.lexists(os.path.join(self.root, path.lstrip('/'))):
            # The feature, driver or device is not there: not applicable on this host.
            # (A link that leads nowhere under root is refused below, not taken as missing.)
            self.missing[path] = 'no %s on this kernel or hardware (the feature, driver or device is not there)' % path
            return None
        if not os.path.isfile(local):
            problems.append('%s does not exist' % (path,))
            return None
        real = os.path.realpath(local)
        if real != sys_root and not real.startswith(sys_root + os.sep):
            problems.append('%s resolves outside /sys' % (path,))
            return None
        try:
            raw = sysfs.read_raw(local)
        except (IOError, OSError) as exc:
            # Write-only attributes (compact_memory...) are actions, not settings.
            problems.append('%s cannot be read (%s), so it cannot be compared: it is not a setting'
                            % (path, exc.strerror or exc))
            return None
        choices, selected = sysfs.parse_choice(raw)
        if choices is not None:
            self.choices[path] = choices
            if want not in choices:
                problems.append('%s takes one of %s, not %r' % (path, ', '.join(choices), want))
                return None
        return normalize(selected)

    def read_live(self, desired):
        """Read every attribute first; a value not among its choices stops here, a missing one is noted."""
        if not self.supported or not self.live_available:
            return dict((path, None) for path in desired)
        sys_root = os.path.realpath(self._local('/sys'))
        problems = []
        live = {}
        for path, want in sorted(desired.items()):
            live[path] = self._read_one(path, want, sys_root, problems)
        if problems:
            raise InputError('attributes: %s' % '; '.join(problems))
        return live

    def _resolver(self, text, boot_line=None):
        """path -> (value, file) that wins at boot, were our file to hold ``text``.

        THP's mode that no tmpfiles line writes is what the next boot's kernel command line
        sets (transparent_hugepage=), if it sets it: the command line is then its source.
        """
        exact, globs = tmpfiles.effective_writes(tmpfiles.boot_texts(self.root, self.file, text))

        def resolve(path):
            value, shown = tmpfiles.resolve(exact, globs, path)
            thp_on_cmdline = path == THP_ENABLED and boot_line is not None and boot_line.thp() is not None
            if value is None and shown is None and thp_on_cmdline:
                value, shown = boot_line.thp(), cmdline.label(boot_line)
            # TuneD starts after systemd-tmpfiles and writes over it, but leaves THP's mode to a
            # command line that sets it (its vm plugin)
            if self.tuned and not thp_on_cmdline:
                return self.tuned.agree(lambda profile: tuned_writes(profile, path), (value, shown))
            return value, shown
        return resolve

    def read_persisted(self, desired):
        if not self.supported:
            return TmpfilesFile.NONE
        local = rooted(self.root, self.file)
        text = read_text(local)
        boot_line = cmdline.next_boot(self.root) if THP_ENABLED in desired else None
        self.tuned = tuned_host.active(self.root)
        return TmpfilesFile(path=local, text=text, ours=tmpfiles.write_values(text), cmdline=boot_line,
                            resolve=self._resolver(text, boot_line))

    # ---------------------------------------------------------------- applying
    def applies_here(self, desired):
        return self.supported

    # a key is the attribute's /sys path
    def live_meets(self, key, value, want):
        return same_value(value, want)

    def read_one(self, key):
        try:
            return normalize(sysfs.read_value(self._local(key)))
        except (IOError, OSError):
            return None

    def write_one(self, key, value):
        sysfs.write_value(self._local(key), value)

    def read_only_reason(self, key):
        return sysfs.read_only_reason(self._local(key), key)

    def persist_value(self, key, want, live, persisted):
        """Our ``w`` line, unless the boot or our file already writes the value.  An attribute
        nobody can set here is still persisted: systemd-tmpfiles writes a ``w`` line only where
        the file exists, at a boot where it does."""
        if same_value(persisted.resolve(key)[0], want) or same_value(persisted.ours.get(key), want):
            return UNCHANGED
        return want

    def file_text(self, desired, persisted, done):
        text = persisted.text
        if not done.changes:
            return text
        return tmpfiles.render(tmpfiles.base_text(self.root, self.file, text, HEADER), done.changes, header=HEADER)

    def applied(self, desired, persisted, done):
        done.resolve_after = self._resolver(done.change.after, persisted.cmdline)

    # ---------------------------------------------------------------- reporting
    def render(self, result, desired, live, persisted, done):
        if done is None:
            for path in sorted(desired):
                result.add(Setting(path, None, desired[path], None, None, UNSUPPORTED,
                                   'sysfs exists on Linux only'))
            return
        for path in sorted(desired):
            result.add(self._record(path, desired[path], live, persisted, done))
            # what the gate kept back leaves after as before: nothing written, nothing changed
            if path in done.targets and path not in done.refused and done.after.get(path) != live.get(path):
                result.mark_changed()
        self.report_file(result, done, self.tuned.problems if self.tuned else [])

    def _record(self, path, want, live, persisted, done):
        target = self.file if self.persist else None
        live_after = done.after
        live_now = live_after.get(path)
        persisted_now = self.gate.now(persisted.resolve, done.resolve_after)(path)[0]
        if path in done.refused:
            return Setting(path, target, want, live_now, persisted_now, FAILED,
                           self.refused_detail(want, done.refused[path]))
        if path in self.unsupported:
            return Setting(path, target, want, live_now, persisted_now, UNSUPPORTED, self._unsupported_detail(path, done))
        details = ['%s: the live value is not read' % self.missing[path]] if path in self.missing else []
        live_ok = None
        if not self.live_available:
            details.append('live value not read: no sysfs under %s' % self.root)
        elif self.apply_live:
            live_ok = same_value(live.get(path), want)
            if self.gate.open and path in done.targets and not same_value(live_after.get(path), want):
                details.append('wrote %r but the kernel reads back %r' % (want, live_after.get(path)))
                return Setting(path, target, want, live_now, persisted_now, FAILED, '; '.join(details))
        else:
            details.append('live value not managed (apply=false)')
        persisted_ok, shadowed = self._persisted_state(path, want, persisted.resolve, done.resolve_after, details)
        self._cmdline_conflict(path, persisted.cmdline, done.resolve_after, details)
        status = self.gate.status(live_ok, persisted_ok, shadowed=shadowed)
        if self.choices.get(path):
            details.append('choices: %s' % ' '.join(self.choices[path]))
        if path in done.changes:
            details.insert(0, self.gate.did('write %s' % self.file))
        return Setting(path, target, want, live_now, persisted_now, status, '; '.join(details))

    def _unsupported_detail(self, path, done):
        """Why the attribute is not set here, and what became of our line for the next boot."""
        value, shown = done.resolve_after(path)
        details = self.unsupported_words(self.unsupported[path], path in done.changes,
                                         'persisted by %s' % shown if shown else None)
        if self.persist and shown and shown != self.file and not same_value(value, self.wanted.get(path)):
            details.append('%s writes %r and wins at boot over %s' % (shown, value, self.file))
        return '; '.join(details)

    def _cmdline_conflict(self, path, boot_line, resolve_after, details):
        """Say so when the kernel command line sets THP's mode to another value than a file writes after it."""
        if path != THP_ENABLED or boot_line is None or boot_line.thp() is None or not self.persist:
            return
        value, shown = resolve_after(path)
        if shown and shown != cmdline.label(boot_line) and not same_value(boot_line.thp(), value):
            details.append('conflict: %s sets transparent_hugepage=%s at boot; %s writes %r after it' % (
                cmdline.label(boot_line), boot_line.thp(), shown, value))

    def _persisted_state(self, path, want, resolve_before, resolve_after, details):
        """(persisted_ok, shadowed) of one attribute, its details added to ``details``."""
        if not self.persist:
            details.append('not persisted (persist=false): lost at reboot')
            return None, False
        persisted_ok = same_value(resolve_before(path)[0], want)
        after_value, after_file = resolve_after(path)
        if not same_value(after_value, want) and after_file and after_file != self.file:
            details.append('%s %s and wins at boot over %s' % (
                after_file, 'writes %r' % after_value if after_value is not None else
                'claims this path with another line type', self.file))
            self.shadowed.append((path, after_file))
            return persisted_ok, True
        before_file = resolve_before(path)[1]
        if before_file and before_file != self.file and persisted_ok:
            details.append('persisted by %s' % before_file)
        return persisted_ok, False
