# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply Linux huge page pools, and read back what
the kernel really allocated.

The pools and their checks are in plans/hugepage_pools.py.  Writing a count asks the
kernel for that many pages; it allocates what it can find (contiguous free memory), so
the count is always read back: a short allocation is reported as ``failed`` with
"requested N, allocated M", never hidden.  Before giving up, memory can be compacted
once (``1`` into /proc/sys/vm/compact_memory) and the write retried.

Persistence, chosen so that every pool survives a reboot with what systemd already runs:
- the default page size, no node: vm.nr_hugepages in a sysctl.d file (systemd-sysctl),
  resolved across the sysctl.d search path so that a file that wins is ``shadowed``;
- other sizes and per-node pools: systemd-tmpfiles ``w`` lines that write the sysfs
  count at boot (systemd-tmpfiles-setup.service, before sysinit.target), resolved
  across the tmpfiles.d search path (first file wins there).

HugePages fills in the Plan hooks (plans/base.py): desired() is the pools, read_live()
their counts, read_persisted() the two files and what wins at boot, apply() the only
hook that writes, render() the records.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tmpfiles
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_backends import LinuxBackend
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.hugepage_pools import (
    GLOBAL_POOLS, Kernel, read_pools, room_hint, short_words)

DEFAULT_SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'
DEFAULT_TMPFILES_FILE = '/etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf'
SYSCTL_KEY = 'vm.nr_hugepages'
SYSCTL_HEADER = '# Managed by dbhost.tuning.hugepages: the default-size huge page pool.'
TMPFILES_HEADER = ('# Managed by dbhost.tuning.hugepages: huge page pools of other sizes and per NUMA node,\n'
                   '# written by systemd-tmpfiles at boot.')
ON_SHORT = ('fail', 'warn')


# What read_persisted() finds: our two files ((shown, host path) of the sysctl and the tmpfiles file), their
# texts, the next boot's command line, and what the next boot gives each pool (NONE off Linux).
PoolFiles = namedtuple('PoolFiles', 'files texts cmdline resolve')
PoolFiles.NONE = PoolFiles(*[None] * 4)


class HugePages(Plan):
    """The hugepages module's plan: each pool's count, live and persisted.

    Not on LivePlusFile (plans/base.py), whose flow it differs from where a pool is not a value:
    its count persists in one of two files (sysctl.d for the default size without a node,
    tmpfiles.d for the others), each with its backup; the files hold the count asked for, planned
    before the live write and kept when the kernel allocates fewer pages or refuses the write (the
    next boot allocates before memory fragments), where LivePlusFile writes what the system took
    and leaves a refused value out; a pool this host lacks is not persisted at all, where
    LivePlusFile persists a key it cannot set now; and a short allocation compacts memory and
    writes again.  Moving it there would take a switch in LivePlusFile for each of these, for
    this kind alone.
    """

    source = 'task option: hugepages.pages'

    def failed_records(self, result):
        # A short allocation is a failed record too; it is worded by extra_problems().
        return [s for s in result.failed_settings() if s.detail.startswith('the kernel refused')]

    def short_text(self):
        return 'short huge page allocation: %s' % '; '.join(
            '%s requested %d, allocated %d' % item for item in self.short)

    def extra_problems(self, result):
        return [self.short_text()] if self.short and self.on_short == 'fail' else []

    def __init__(self, options, context, kernel=None):
        comparison = options.comparison
        if comparison not in (compare.EXACT, compare.MINIMUM):
            raise InputError('comparison: %r is not one of exact, minimum' % (comparison,))
        # exact: the pool is exactly the count (a larger pool is shrunk); minimum: at least
        # the count (Oracle, PostgreSQL and MySQL size the pool they need: a larger one is kept).
        self.comparison = comparison
        self.raw_pages = options.pages
        self.on_short = options.on_short
        self.compact = options.compact
        self.apply_live = options.apply
        self.persist = options.persist
        self.sysctl_file = options.sysctl_file or DEFAULT_SYSCTL_FILE
        self.tmpfiles_file = options.tmpfiles_file or DEFAULT_TMPFILES_FILE
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        self.supported = platforms.pick({platforms.LINUX: True, 'default': False}, context.system_name)
        # the live pools' reader and writer (a test gives a fake kernel)
        self.kernel = kernel or Kernel(self.root)
        self.live_available = os.path.isdir(rooted(self.root, GLOBAL_POOLS))
        self.pools = []
        self.shadowed = []
        self.short = []
        self.backup_files = []
        self.compacted = False

    # ---------------------------------------------------------------- validation
    def _check_files(self):
        for option, path in (('sysctl_file', self.sysctl_file), ('tmpfiles_file', self.tmpfiles_file)):
            validate.check_rooted(self.root, path, option)
        folder, name = os.path.dirname(self.sysctl_file), os.path.basename(self.sysctl_file)
        if self.sysctl_file != sysctl.SYSCTL_CONF and (folder not in sysctl.SEARCH_DIRS or not name.endswith('.conf')):
            raise InputError('sysctl_file %r is not read at boot: use a *.conf file in one of %s, or %s'
                             % (self.sysctl_file, ', '.join(sysctl.SEARCH_DIRS), sysctl.SYSCTL_CONF))
        folder, name = os.path.dirname(self.tmpfiles_file), os.path.basename(self.tmpfiles_file)
        if folder not in tmpfiles.SEARCH_DIRS or not name.endswith('.conf'):
            raise InputError('tmpfiles_file %r is not read at boot: use a *.conf file in one of %s'
                             % (self.tmpfiles_file, ', '.join(tmpfiles.SEARCH_DIRS)))

    def validate(self):
        if self.on_short not in ON_SHORT:
            raise InputError('on_short must be one of %s, not %r' % (', '.join(ON_SHORT), self.on_short))
        if not isinstance(self.raw_pages, (list, tuple)) or not self.raw_pages:
            raise InputError('pages must be a non-empty list of {size, count, node}')
        self._check_files()
        if self.root == '/' and self.supported and not self.live_available:
            raise InputError('this kernel has no huge page support (no %s)' % GLOBAL_POOLS)
        self.pools = read_pools(self.raw_pages, self.root, self.live_available)

    def desired(self):
        return self.pools

    # ---------------------------------------------------------------- comparing
    def _meets(self, value, pool):
        if value is None:
            return False
        return value >= pool.count if self.comparison == compare.MINIMUM else value == pool.count

    def _count_to_write(self, pool, live):
        """The count to persist: a minimum keeps a larger live pool instead of shrinking it at boot."""
        if self.comparison == compare.MINIMUM and live is not None and live > pool.count:
            return live
        return pool.count

    def _target(self, pool):
        if not self.persist:
            return pool.path
        return self.sysctl_file if pool.by_sysctl else self.tmpfiles_file

    # ---------------------------------------------------------------- reading
    def read_live(self, desired):
        live = dict((pool.name, None) for pool in desired)
        if not (self.supported and self.live_available):
            return live
        for pool in desired:
            try:
                live[pool.name] = self.kernel.read_count(rooted(self.root, pool.path))
            except (IOError, OSError, ValueError):
                pass
        return live

    def _resolver(self, sysctl_text, tmpfiles_text, boot_line=None):
        """pool -> (count, file) that wins at boot, were our two files to hold these texts.

        A pool no file sets is what the next boot's kernel command line allocates, if it
        allocates that pool (formats/cmdline.py): then the command line is its source.
        """
        root = self.root
        tmpfiles_exact, tmpfiles_globs = tmpfiles.effective_writes(
            tmpfiles.boot_texts(root, self.tmpfiles_file, tmpfiles_text))
        # vm.nr_hugepages at boot as kernel_params reads it: one reading of sysctl.d, the kernel's
        # parse of the winning text, TuneD's [sysctl] (then sysctl.d again with reapply_sysctl)
        sysctl_boot = LinuxBackend(root).persisted_resolver(self.sysctl_file, sysctl_text)

        def resolve(pool):
            if pool.by_sysctl:
                value, shown = sysctl_boot(SYSCTL_KEY)
            else:
                value, shown = tmpfiles.resolve(tmpfiles_exact, tmpfiles_globs, pool.path)
            if value is None:
                count = self._cmdline_count(boot_line, pool)
                if count is not None:
                    return count, cmdline.label(boot_line)
            return _as_count(value), shown
        return resolve

    def _cmdline_count(self, boot_line, pool):
        """The pages the next boot's command line allocates for ``pool``, or None."""
        if boot_line is None:
            return None
        try:
            return boot_line.pool(pool.size_kb, pool.node, self._default_size_kb())
        except cmdline.CmdlineError:
            return None

    def _default_size_kb(self):
        for pool in self.pools:
            if pool.default_size:
                return pool.size_kb
        return None

    def _cmdline_notes(self, boot_line, pool, ours_value, details):
        """Say where the kernel command line asks something else than what wins at boot."""
        if boot_line is None:
            return
        try:
            asked = boot_line.pool(pool.size_kb, pool.node, self._default_size_kb())
            default_kb = boot_line.default_size_kb(self._default_size_kb())
        except cmdline.CmdlineError as exc:
            details.append('%s: %s (the kernel ignores it)' % (cmdline.label(boot_line), exc))
            return
        if asked is not None and ours_value is not None and asked != ours_value:
            details.append('conflict: %s allocates %d pages of this pool at boot; %s sets %s after it' % (
                cmdline.label(boot_line), asked, self._target(pool), ours_value))
        if pool.by_sysctl and default_kb != pool.size_kb:
            details.append('conflict: %s sets default_hugepagesz=%dkB: from the next boot %s counts pages '
                           'of that size, not %dkB' % (cmdline.label(boot_line), default_kb, SYSCTL_KEY,
                                                       pool.size_kb))

    def read_persisted(self, desired):
        """Our two files' paths and texts, and what wins at boot now."""
        if not self.supported:
            return PoolFiles.NONE
        files = [(shown, rooted(self.root, shown)) for shown in (self.sysctl_file, self.tmpfiles_file)]
        texts = [read_text(local) for shown, local in files]
        boot_line = cmdline.next_boot(self.root)
        return PoolFiles(files=files, texts=texts, cmdline=boot_line,
                         resolve=self._resolver(texts[0], texts[1], boot_line))

    # ---------------------------------------------------------------- applying
    def _file_changes(self, desired, live, persisted):
        """({key: count} for our sysctl file, {path: count} for our tmpfiles file)."""
        ours_sysctl = sysctl.values_of(persisted.texts[0])
        ours_tmpfiles = tmpfiles.write_values(persisted.texts[1])
        sysctl_changes, tmpfiles_changes = {}, {}
        for pool in desired:
            if not self.persist or pool.unsupported or self._meets(persisted.resolve(pool)[0], pool):
                continue
            count = str(self._count_to_write(pool, live[pool.name]))
            if pool.by_sysctl:
                if not self._meets(_as_count(ours_sysctl.get(SYSCTL_KEY)), pool):
                    sysctl_changes[SYSCTL_KEY] = count
            elif not self._meets(_as_count(ours_tmpfiles.get(pool.path)), pool):
                tmpfiles_changes[pool.path] = count
        return sysctl_changes, tmpfiles_changes

    def _allocate(self, pool, live_before):
        """Write the pool's count and read back; compact once and retry when short.

        Returns (allocated, error, compacted) where error is the kernel's refusal or None.
        """
        local = rooted(self.root, pool.path)
        try:
            self.kernel.write_count(local, pool.count)
        except (IOError, OSError) as exc:
            return live_before, exc.strerror or str(exc), False
        allocated = self.kernel.read_count(local)
        compacted = False
        if allocated < pool.count and self.compact:
            try:
                self.kernel.compact()
                compacted = True
                self.compacted = True
                self.kernel.write_count(local, pool.count)
            except (IOError, OSError):
                pass
            allocated = self.kernel.read_count(local)
        return allocated, None, compacted

    def _allocate_all(self, desired, live):
        """(counts after, {pool name: (refusal, compacted)}) for the pools written live."""
        live_after = dict(live)
        outcome = {}
        if self.apply_live and self.live_available:
            self.gate.write(self._allocate_pools, desired, live, live_after, outcome)
        return live_after, outcome

    def _allocate_pools(self, desired, live, live_after, outcome):
        """Write each pool that misses its count, noting in ``live_after`` and ``outcome`` what the kernel gave."""
        to_write = [pool for pool in desired if not pool.unsupported and not self._meets(live[pool.name], pool)]
        # Shrinking pools first frees memory for the ones that grow.
        for pool in sorted(to_write, key=lambda p: (live[p.name] or 0) < p.count):
            allocated, error, compacted = self._allocate(pool, live[pool.name])
            live_after[pool.name] = allocated
            outcome[pool.name] = (error, compacted)

    def _sysctl_base(self, before):
        """The text our sysctl.d file starts from: ours, or, while ours does not exist, the file of
        its name in a later folder (/run/sysctl.d, /usr/local/lib...), which boots in its place and
        which ours masks once written: its other lines are carried over, its origin named."""
        if before is not None:
            return before
        base_path, base = LinuxBackend(self.root).same_name(self.sysctl_file)
        if base_path is None:
            return None
        return confd.carried_over(SYSCTL_HEADER, base_path, base)

    def apply(self, desired, live, persisted, module):
        if not self.supported:
            return None
        sysctl_changes, tmpfiles_changes = self._file_changes(desired, live, persisted)
        sysctl_before, tmpfiles_before = persisted.texts
        afters = [sysctl.render(self._sysctl_base(sysctl_before), sysctl_changes, header=SYSCTL_HEADER)
                  if sysctl_changes else sysctl_before,
                  tmpfiles.render(tmpfiles.base_text(self.root, self.tmpfiles_file, tmpfiles_before, TMPFILES_HEADER),
                                  tmpfiles_changes, header=TMPFILES_HEADER)
                  if tmpfiles_changes else tmpfiles_before]
        changes = [FileChange(local, before, after, shown_path=shown)
                   for (shown, local), before, after in zip(persisted.files, persisted.texts, afters)]
        for change in changes:
            # A file that cannot be written fails the run before a pool changes.
            self.gate.check(change)
        live_after, outcome = self._allocate_all(desired, live)
        file_changes = []
        for change in changes:
            backup_file = self.gate.commit(change, module, self.backup)
            if backup_file:
                self.backup_files.append(backup_file)
            file_changes.append(change)
        return {'live_after': live_after, 'outcome': outcome, 'file_changes': file_changes,
                'sysctl_changes': sysctl_changes, 'tmpfiles_changes': tmpfiles_changes,
                'resolve_after': self._resolver(afters[0], afters[1], persisted.cmdline)}

    # ---------------------------------------------------------------- reporting
    def render(self, result, desired, live, persisted, done):
        if done is None:
            for pool in desired:
                result.add(Setting(pool.name, None, pool.count, None, None, UNSUPPORTED,
                                   'huge page pools are managed on Linux only'))
            return
        for change in done['file_changes']:
            change.report(result)
        for pool in desired:
            result.add(self._record(pool, live, persisted, done))
            if done['live_after'][pool.name] != live[pool.name]:
                result.mark_changed()
        if self.short and self.on_short == 'warn':
            result.warnings.append(self.short_text())
        result.extra['compacted'] = self.compacted
        if self.backup_files:
            result.extra['backup_file'] = self.backup_files[0] if len(self.backup_files) == 1 else self.backup_files

    def _record(self, pool, live, persisted, done):
        target = self._target(pool)
        live_after = done['live_after'][pool.name]
        live_now = live_after   # what the gate kept back leaves it as it was
        persisted_now = self.gate.now(persisted.resolve, done['resolve_after'])(pool)[0]
        if pool.unsupported:
            # Not on this host: nothing allocated, and no line that would name a pool it lacks.
            return Setting(pool.name, target, pool.count, live_now, persisted_now, UNSUPPORTED,
                           '%s; not set live; not persisted' % pool.unsupported, comparison=self.comparison)
        details = []
        if pool.by_sysctl and done['sysctl_changes'] or not pool.by_sysctl and pool.path in done['tmpfiles_changes']:
            details.append(self.gate.did('persist it in %s' % target))
        error, compacted = done['outcome'].get(pool.name, (None, False))
        if error:
            details.insert(0, 'the kernel refused %d pages: %s' % (pool.count, error))
        elif pool.name in done['outcome'] and not self._meets(live_after, pool):
            self.short.append((pool.name, pool.count, live_after))
            details.insert(0, 'requested %d, allocated %d%s' % (
                pool.count, live_after, ' (after compacting memory)' if compacted else ''))
        else:
            live_ok = self._live_state(pool, live, details)
            persisted_ok, shadowed = self._persisted_state(pool, persisted.resolve, done['resolve_after'], details)
            after_value, after_file = done['resolve_after'](pool)
            if self.persist and after_file and not after_file.startswith('the kernel command line'):
                self._cmdline_notes(persisted.cmdline, pool, after_value, details)
            status = self.gate.status(live_ok, persisted_ok, shadowed=shadowed)
            reason = None
            if self.gate.check_mode and live_ok is False and persisted_ok:
                # asked (at boot, by the file that persists it) and got fewer: the kernel allocated it short
                value, where = persisted.resolve(pool)
                short, reason = short_words(self.root, pool, _as_count(value), 'asked by %s' % where, live_now)
                details.insert(0, short)
            return Setting(pool.name, target, pool.count, live_now, persisted_now, status,
                           '; '.join(d for d in details if d), comparison=self.comparison, reason=reason)
        return Setting(pool.name, target, pool.count, live_now, persisted_now, FAILED, '; '.join(details),
                       comparison=self.comparison)

    def _live_state(self, pool, live, details):
        """live_ok of one pool (None when not managed), why added to ``details``."""
        if not self.live_available:
            details.append('live value not read: no %s under %s' % (GLOBAL_POOLS, self.root))
            return None
        if not self.apply_live:
            details.append('live value not managed (apply=false)')
            return None
        live_ok = self._meets(live[pool.name], pool)
        if self.gate.check_mode and not live_ok:   # nothing tried: say whether the memory has room
            details.append(room_hint(self.root, pool, live[pool.name]))
        return live_ok

    def _persisted_state(self, pool, resolve_before, resolve_after, details):
        """(persisted_ok, shadowed) of one pool, its details added to ``details``; (None, False) without persist."""
        if not self.persist:
            details.append('not persisted (persist=false): lost at reboot')
            return None, False
        persisted_ok = self._meets(resolve_before(pool)[0], pool)
        after_value, after_file = resolve_after(pool)
        ours = self.sysctl_file if pool.by_sysctl else self.tmpfiles_file
        if not self._meets(after_value, pool) and after_file and after_file != ours:
            details.append('%s sets %s and wins at boot over %s' % (after_file, after_value, ours))
            self.shadowed.append((pool.name, after_file))
            return persisted_ok, True
        before_file = resolve_before(pool)[1]
        if persisted_ok and before_file and before_file != ours:
            details.append('persisted by %s' % before_file)
        return persisted_ok, False


def _as_count(value):
    if value is None:
        return None
    text = str(value).strip()
    return int(text) if re.match(r'^[0-9]+\Z', text) else text
