# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply kernel boot parameters (the kernel command line).

Live: the running kernel's command line (``/proc/cmdline`` under root); it changes only at
a reboot, so a live value that differs while the next boot's matches is ``pending_reboot``.
Persisted: the next boot's command line (formats/cmdline.py).  Where ``/etc/kernel/cmdline``
is its source (kernel-install, systemd-boot) that file is edited in place; else, with
``/etc/default/grub``, our drop-in ``/etc/default/grub.d/99-dbhost-tuning.cfg`` appends our
words to GRUB_CMDLINE_LINUX.  A GRUB file sourced after it, or GRUB_CMDLINE_LINUX_DEFAULT
(which follows GRUB_CMDLINE_LINUX on the line), that gives the same parameter another value
wins: ``shadowed``, naming the file.  The kernel keeps the last occurrence of a parameter,
so every comparison reads the last one.  After a write, the boot loader's configuration is
regenerated (update-grub, grub-mkconfig, grub2-mkconfig) on the running system.

KernelCmdline fills in the Plan hooks (plans/base.py): validate() refuses bad names and
values and the parameters whose occurrences add up (REFUSED), read_live() the running
line, read_persisted() the next boot's sources, apply() the only hook that writes,
render() the records.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import HostError, InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    PENDING_REBOOT, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

DROPIN = '/etc/default/grub.d/99-dbhost-tuning.cfg'
HEADER = ('# Managed by dbhost.tuning: kernel boot parameters, appended to GRUB_CMDLINE_LINUX;\n'
          '# regenerate the boot loader configuration (update-grub) after editing.')
GRUB, KERNEL = 'grub', 'kernel'

_OWNED_BY_HUGEPAGES = 'owned by dbhost.tuning.hugepages (huge page pools: hugepages= counts for the hugepagesz= before it)'
_ADDS_UP = 'every occurrence adds to the others instead of replacing them'
# Parameters this kind refuses: the last occurrence is not the value, or another kind owns them.
REFUSED = {
    'hugepages': _OWNED_BY_HUGEPAGES,
    'hugepagesz': _OWNED_BY_HUGEPAGES,
    'default_hugepagesz': _OWNED_BY_HUGEPAGES,
    'console': _ADDS_UP + ' (one console each)',
    'memmap': _ADDS_UP + ' (one memory region each)',
    'modules_load': _ADDS_UP + ' (modules to load)',
    'BOOT_IMAGE': 'the boot loader sets it',
    'initrd': 'the boot loader sets it',
    'root': 'the boot loader sets it (the root file system)',
}
_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]*\Z')
# shell and command line syntax that a value in a GRUB file or on the line would change
_VALUE_REFUSES = set('"\'$`\\#;&|<>(){}')

# (command, the file it writes, or None) in the order tried: update-grub writes its own file
GRUB_COMMANDS = (('update-grub', None), ('grub-mkconfig', '/boot/grub/grub.cfg'), ('grub2-mkconfig', '/boot/grub2/grub.cfg'))


def grub_command(runner, bin_path, command_root='/'):
    """The command that regenerates GRUB's configuration on the system at ``command_root``, as an
    argument list (update-grub; else grub-mkconfig or grub2-mkconfig where the file it writes is
    there), or None.  plans/revert.py runs it too, after putting a GRUB file back."""
    if runner is None:
        return None
    for name, output in GRUB_COMMANDS:
        program = bin_path(name)
        if not program:
            continue
        if output is None:
            return [program]
        if os.path.isfile(os.path.join(command_root, output.lstrip('/'))):
            return [program, '-o', output]
    return None


def _word(name, value):
    return name if value is None else '%s=%s' % (name, value)


def shown(found):
    """How a record shows an occurrence: its value, or the bare word for a flag; None when absent."""
    if found is None:
        return None
    return found[0] if found[1] is None else found[1]


# What read_live() finds: the running kernel's command line (None where it cannot be read) and the
# last occurrence of each desired name in it.
Running = namedtuple('Running', 'line words')

# What read_persisted() finds: the file the boot loader takes the line from (mode: KERNEL or GRUB; None when
# neither), its text, how each name resolves at boot, ours, the regenerated configuration and what it lacks.
BootFiles = namedtuple('BootFiles', 'mode file path text resolve ours generated stale')
BootFiles.NONE = BootFiles(*[None] * 8)


class KernelCmdline(Plan):
    """The kernel_cmdline module's plan: boot parameters, live (/proc/cmdline) and at the next boot."""

    source = 'task option: kernel_cmdline.params'
    shadowed_label = 'shadowed at boot'

    def __init__(self, options, context, command_root=None):
        self.raw_params = options.params
        self.state = options.state
        self.update_bootloader = options.update_bootloader
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        self.supported = platforms.pick({platforms.LINUX: True, 'default': False}, context.system_name)
        self.runner = context.runner
        self.bin_path = context.bin_path
        # where the boot loader's commands act: the running system only (a test passes its tree)
        self.command_root = command_root or ('/' if os.path.realpath(self.root) == '/' else None)
        self.wanted = {}
        self.shadowed = []
        self.backup_file = None

    # ---------------------------------------------------------------- validation
    def validate(self):
        if self.state not in ('present', 'absent'):
            raise InputError('state: %r is not one of present, absent' % (self.state,))
        params = self.raw_params
        if self.state == 'absent' and isinstance(params, (list, tuple)):
            params = dict((name, None) for name in params)
        if not isinstance(params, dict) or not params:
            raise InputError('params must be a non-empty dict of parameter name: value'
                             + (' (or a list of names with state=absent)' if self.state == 'absent' else ''))
        wanted = {}
        for name, value in params.items():
            key = self._check_name(name)
            if key in wanted:
                raise InputError('params: %r and %r name the same parameter (the kernel takes - and _ alike)'
                                 % (wanted[key][0], name))
            wanted[key] = (name, self._check_value(name, value) if self.state == 'present' else None)
        self.wanted = wanted

    @staticmethod
    def _check_name(name):
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError('params: %r is not a kernel parameter name (letters, digits, _ - and ., not starting '
                             'with - or .)' % (name,))
        key = cmdline.name_of(name)
        if key in REFUSED:
            raise InputError('params: %s is not managed by kernel_cmdline: %s' % (name, REFUSED[key]))
        return key

    @staticmethod
    def _check_value(name, value):
        """The value's text, or None for a bare flag (None or the empty string)."""
        if isinstance(value, bool):
            raise InputError('params: %s: a boolean is ambiguous here; give the text the kernel takes (1, 0, on, '
                             'off, Y, N), or null for a bare flag such as nosmt' % (name,))
        if value is None or value == '':
            return None
        if isinstance(value, (int, float)):
            value = str(value)
        if not isinstance(value, str):
            raise InputError('params: %s: %r is neither a string nor a number' % (name, value))
        validate.check_name(value, 'params: %s' % name)
        bad = sorted(set(value) & _VALUE_REFUSES)
        if bad:
            raise InputError('params: %s: the value %r holds %s, which the boot loader\'s files would read as '
                             'syntax' % (name, value, ' '.join(bad)))
        return value

    def desired(self):
        return dict((key, value) for key, (dummy, value) in self.wanted.items())

    # ---------------------------------------------------------------- reading
    def read_live(self, desired):
        if not self.supported:
            return Running(None, {})
        line = cmdline.running(self.root)
        return Running(line, cmdline.last_words(line.params, desired) if line else {})

    def read_persisted(self, desired):
        if not self.supported:
            return BootFiles.NONE
        if cmdline.read_under(self.root, cmdline.KERNEL_CMDLINE) is not None:
            mode, path = KERNEL, cmdline.KERNEL_CMDLINE
        elif cmdline.read_under(self.root, cmdline.GRUB_DEFAULT) is not None:
            mode, path = GRUB, DROPIN
        else:
            return BootFiles.NONE
        try:
            local = rooted(self.root, path)
        except PathError as exc:
            raise InputError('%s: %s' % (path, exc))
        text = read_text(local)
        resolve, generated = self._resolve(mode, text, desired), self._generated(mode)
        return BootFiles(mode=mode, file=path, path=local, text=text, resolve=resolve,
                         ours=self._ours(mode, text, desired), generated=generated,
                         stale=self._stale(resolve, generated))

    def _generated(self, mode):
        """The first entry's line of the GRUB configuration this run would regenerate (grub.cfg), or None:
        another mode, no such file, or no regeneration by this run (update_bootloader=false, another root, no
        command to do it): a difference it could not act on is not reported as one it could."""
        if mode != GRUB or not self.update_bootloader or self.command_root is None or self.grub_command() is None:
            return None
        return cmdline.generated(self.root)

    @staticmethod
    def _stale(resolve, generated):
        """{name: its occurrence in the generated configuration} where that differs from what the files give:
        the boot loader's configuration was not regenerated since (an earlier run's update-grub failed)."""
        if generated is None:
            return {}
        words = cmdline.last_words(generated.params, resolve)
        return dict((name, words.get(name)) for name, (found, dummy) in resolve.items()
                    if shown(words.get(name)) != shown(found))

    def _ours(self, mode, text, desired):
        """{name: (name, value)} of ``desired`` that our file holds (its last occurrence)."""
        words = cmdline.dropin_words(text) if mode == GRUB else cmdline.split(
            ' '.join(line for line in (text or '').splitlines() if not line.lstrip().startswith('#')))
        return cmdline.last_words(cmdline.params(' '.join(words)), desired)

    def _resolve(self, mode, text, desired):
        """{name: (occurrence or None, the file that gives it)} at the next boot, our file holding ``text``."""
        if mode == KERNEL:
            return dict((name, (found, cmdline.KERNEL_CMDLINE if found else None))
                        for name, found in self._ours(mode, text, desired).items())
        files = [(path, body) for path, body in cmdline.grub_files(self.root) if path != DROPIN]
        if text is not None:
            files.append((DROPIN, text))
            files = [files[0]] + sorted(files[1:])
        return cmdline.grub_winners(files, desired)

    # ---------------------------------------------------------------- applying
    def _after(self, persisted, desired):
        """Our file's text after this run (the same text when nothing is to change)."""
        text, ours = persisted.text, persisted.ours
        if self.state == 'absent':
            drop = set(name for name in desired if name in ours)
            add = []
        else:
            resolve = persisted.resolve
            drop = set(name for name, value in desired.items()
                       if not self._meets(resolve.get(name, (None, None))[0], value) and
                       not self._meets(ours.get(name), value))
            add = [_word(self.wanted[name][0], desired[name]) for name in sorted(drop)]
        if not drop:
            return text
        if persisted.mode == KERNEL:
            return cmdline.edit_words(text, drop, add)
        kept = [word for word in cmdline.dropin_words(text) if cmdline.name_of(word) not in drop]
        return cmdline.render_dropin(text, kept + add, HEADER)

    @staticmethod
    def _meets(found, value):
        return found is not None and found[1] == value

    def apply(self, desired, live, persisted, module):
        if persisted.mode is None:
            return None
        after = self._after(persisted, desired)
        change = FileChange(persisted.path, persisted.text, after, shown_path=persisted.file)
        self.backup_file = self.gate.commit(change, module, self.backup)
        resolve_after = self._resolve(persisted.mode, after, desired)
        done = {'change': change, 'resolve_after': resolve_after, 'ours_after': self._ours(persisted.mode, after, desired),
                'bootloader': None, 'warning': None, 'regenerated': False, 'stale_after': {}}
        stale = self._stale(resolve_after, persisted.generated)
        if change.needed or stale:
            done['bootloader'], done['warning'], done['regenerated'] = self._regenerate(persisted, change.needed)
        if stale:
            self.gate.write(self._read_back, persisted, resolve_after, done)
        return done

    def _read_back(self, persisted, resolve_after, done):
        """What the boot loader's configuration holds once regenerated: a warning for what still differs."""
        done['stale_after'] = self._stale(resolve_after, self._generated(persisted.mode))
        if done['stale_after'] and done['regenerated']:
            done['warning'] = '%s, but %s still differs from %s for %s: the next boot does not take them' % (
                done['bootloader'], persisted.generated.source, persisted.file,
                ', '.join(sorted(done['stale_after'])))

    def _regenerate(self, persisted, wrote):
        """(what the records say of the boot loader, a warning or None, whether a command ran) after our file
        changed (WROTE), or where the generated configuration differs from it."""
        if not self.update_bootloader:
            return 'the boot loader\'s configuration is not regenerated (update_bootloader=false)', None, False
        if self.command_root is None:
            return ('root is %s: the boot loader\'s configuration is not regenerated here (run update-grub, or '
                    'what the system booting from it uses, there)' % self.root), None, False
        if persisted.mode == KERNEL:
            why = ('%s is read when a kernel is installed: the boot loader was not regenerated; run kernel-install add '
                   '<version> <kernel image> (or the tool this host boots with) before the next reboot' % cmdline.KERNEL_CMDLINE)
            return why, self.gate.now(None, why), False
        argv = self.grub_command()
        if argv is None:
            why = ('the boot loader was not regenerated: no update-grub, grub-mkconfig (with /boot/grub/grub.cfg) nor '
                   'grub2-mkconfig (with /boot/grub2/grub.cfg) found; run the one this host boots with before the '
                   'next reboot')
            return why, self.gate.now(None, why), False
        shown_argv = ' '.join(argv)
        ran = self.gate.write(self.runner, argv)
        if ran is None:
            return self.gate.did('run %s' % shown_argv), None, False
        rc, out, err = ran
        if rc != 0:
            raise HostError('%s failed (%s): the boot loader\'s configuration was not regenerated, so the next boot '
                            'does not take %s yet%s; fix the cause and run %s' % (
                                shown_argv, (err or out or '').strip() or 'exit status %d' % rc, persisted.file,
                                ', which this run already wrote' if wrote else '', shown_argv))
        return 'ran %s' % shown_argv, None, True

    def grub_command(self):
        return grub_command(self.runner, self.bin_path, self.command_root)

    # ---------------------------------------------------------------- reporting
    def render(self, result, desired, live, persisted, done):
        if done is None:
            why = ('the kernel command line is Linux\'s' if not self.supported else
                   'no boot loader configuration under %s (%s, %s): the next boot\'s command line cannot be persisted '
                   'here' % (self.root, cmdline.KERNEL_CMDLINE, cmdline.GRUB_DEFAULT))
            for name in sorted(desired):
                result.add(Setting(self.wanted[name][0], None, self._shown_desired(name), shown(live.words.get(name)),
                                   None, UNSUPPORTED, why))
            return
        done['change'].report(result)
        if done['regenerated'] and not done['change'].needed:
            result.mark_changed()   # the boot loader's configuration, regenerated
        for name in sorted(desired):
            record = self._absent(name, live, persisted, done) if self.state == 'absent' else \
                self._present(name, desired[name], live, persisted, done)
            result.add(record)
        if done['warning']:
            result.warnings.append(done['warning'])
        if self.backup_file:
            result.extra['backup_file'] = self.backup_file

    def _shown_desired(self, name):
        spelled, value = self.wanted[name]
        return None if self.state == 'absent' else shown((spelled, value))

    def _notes(self, persisted, done, changed, stale):
        notes = []
        if changed:
            notes.append(self.gate.did('write %s' % persisted.file))
        if changed or stale:
            notes.append(done['bootloader'])
        return notes

    @staticmethod
    def _stale_note(name, persisted, done):
        """What the generated configuration holds for NAME where the files give another value."""
        found = persisted.stale[name]
        holds = 'has %r' % _word(*found) if found else 'has no %s' % name
        note = '%s %s: the boot loader\'s configuration was not regenerated after %s changed' % (
            persisted.generated.source, holds, persisted.file)
        if name in done['stale_after']:
            note += ' (it still differs after this run regenerated it)'
        return note

    def _live_side(self, name, live, want, details):
        if live.line is None:
            details.append('live value not read: no %s under %s' % (cmdline.PROC_CMDLINE, self.root))
            return None
        return self._meets(live.words.get(name), want)

    def _present(self, name, want, live, persisted, done):
        spelled = self.wanted[name][0]
        details = []
        live_ok = self._live_side(name, live, want, details)
        before, dummy = persisted.resolve.get(name, (None, None))
        after, winner = done['resolve_after'].get(name, (None, None))
        stale = name in persisted.stale
        persisted_ok = self._meets(before, want) and not stale
        changed = self._meets(done['ours_after'].get(name), want) and not self._meets(persisted.ours.get(name), want)
        if stale:
            details.append(self._stale_note(name, persisted, done))
        shadowed = not self._meets(after, want) and winner is not None and winner != persisted.file
        if shadowed:
            details.append('%s %s and wins at boot over %s' % (
                winner, 'sets %r' % _word(*after) if after else 'sets the line without it', persisted.file))
            self.shadowed.append((spelled, winner))
        elif persisted_ok and winner not in (None, persisted.file):
            details.append('persisted by %s' % winner)
        status = self.gate.status(live_ok, persisted_ok, live_needs=PENDING_REBOOT, shadowed=shadowed)
        if status == PENDING_REBOOT:
            details.append('the running kernel has %s until the next reboot' % (
                _word(*live.words[name]) if name in live.words else 'no %s' % spelled))
        persisted_now = self.gate.now(before, after)
        return Setting(spelled, persisted.file, shown((spelled, want)), shown(live.words.get(name)),
                       shown(persisted_now), status, '; '.join(self._notes(persisted, done, changed, stale) + details))

    def _absent(self, name, live, persisted, done):
        spelled = self.wanted[name][0]
        details = []
        removed = name in persisted.ours
        after, winner = done['resolve_after'].get(name, (None, None))
        live_ok = None
        if after is not None:
            details.append('still set at boot by %s (%r), which is not ours to remove' % (winner, _word(*after)))
        elif live.line is not None:
            live_ok = name not in live.words
        if not removed:
            details.append('not in %s' % persisted.file)
        stale = name in persisted.stale
        if stale:
            details.append(self._stale_note(name, persisted, done))
        status = self.gate.status(live_ok, not removed and not stale, live_needs=PENDING_REBOOT)
        if status == PENDING_REBOOT:
            details.append('the running kernel has %s until the next reboot' % _word(*live.words[name]))
        persisted_now = self.gate.now(persisted.resolve.get(name, (None, None))[0], after)
        notes = [self.gate.did('remove it from %s' % persisted.file)] if removed else []
        notes += [done['bootloader']] if removed or stale else []
        return Setting(spelled, persisted.file, None, shown(live.words.get(name)), shown(persisted_now), status,
                       '; '.join(notes + details))
