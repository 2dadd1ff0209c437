# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply kernel parameters (Linux, FreeBSD, SunOS).

The module file only parses options and calls KernelParams(...).run(); keeping the
logic here lets one module later run several kinds of setting in one round trip.
Where the values live on each platform is in plans/kernel_backends.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_keys
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import UNCHANGED, LivePlusFile, Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import user_comparison
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.kernel_backends import (
    BACKENDS, HEADER, KERNEL_DEFAULT_SOURCE)

# Keys whose fields are each an upper bound, so "minimum" compares field by field.
# Other multi-value keys (net.ipv4.ip_local_port_range, net.ipv4.tcp_rmem...) are
# ranges or triples where "higher" has no meaning: they are always compared exactly.
MINIMUM_FIELDWISE_KEYS = frozenset(['kernel.sem', 'kernel/sem'])

# Keys known to be numeric, used to check values when the live value cannot be read
# (an offline root, or SunOS where the running kernel is not read).
KNOWN_NUMERIC_KEYS = frozenset([
    'kernel.sem', 'kernel.shmmni', 'kernel.shmmax', 'kernel.shmall', 'kernel.panic_on_oops',
    'fs.file-max', 'fs.aio-max-nr', 'net.ipv4.ip_local_port_range', 'net.core.rmem_default',
    'net.core.rmem_max', 'net.core.wmem_default', 'net.core.wmem_max', 'vm.nr_hugepages',
    'vm.hugetlb_shm_group', 'vm.swappiness', 'vm.overcommit_memory', 'kern.ipc.shmmax',
    'kern.ipc.shmall', 'kern.ipc.shm_use_phys', 'kern.ipc.semmns',
    'shmsys:shminfo_shmmax', 'shmsys:shminfo_shmmni', 'semsys:seminfo_semmni', 'semsys:seminfo_semmns',
])


class ValueCompare(object):
    """How desired values compare with live and persisted ones, key by key.

    ``mode`` is the default: ``minimum`` (or ``maximum``) applies to numeric scalars and to
    the keys whose fields are each a bound (kernel.sem); other vectors (ranges such as
    net.ipv4.ip_local_port_range) compare exactly.  ``per_key`` names a comparison (or
    one per field) for single keys and wins over ``mode``.
    """

    def __init__(self, mode, normalize, per_key=None):
        self.mode = mode
        self.normalize = normalize
        self.per_key = per_key or {}

    def comparison(self, key, desired):
        if key in self.per_key:
            return self.per_key[key]
        if self.mode == compare.EXACT or desired is None:
            return compare.EXACT
        fields = self.normalize(desired).split()
        if not all(sysctl.is_numeric(f) for f in fields):
            return compare.EXACT
        if len(fields) == 1 or key in MINIMUM_FIELDWISE_KEYS:
            return self.mode
        return compare.EXACT

    def satisfies(self, key, actual, desired):
        if actual is None:
            return False
        return compare.satisfies(self.normalize(actual), self.normalize(desired), self.comparison(key, desired))

    def value_to_write(self, key, live, desired):
        """A minimum never lowers, a maximum never raises: fields already beyond keep their live value."""
        return self.combine(key, desired, [live])

    def combine(self, key, desired, grants):
        """``desired`` with each bound field widened to the most any of ``grants`` (live, boot
        values) already gives: the value a minimum may write without lowering any of them."""
        return compare.combine(self.normalize(desired), [self.normalize(g) for g in grants if g is not None],
                               self.comparison(key, desired))

    def short_fields(self, key, actual, desired):
        """['semopm 50 < 100', ...] for a vector key; [] for a scalar or an unknown value."""
        if actual is None or len(self.normalize(desired).split()) < 2:
            return []
        return compare.short_fields(self.normalize(actual), self.normalize(desired), self.comparison(key, desired),
                                    sysctl_keys.field_names(key))


def canonical_decimal(value):
    """Whole-number fields without leading zeros (``0300`` -> ``300``): the text the kernel reads
    as the number it shows; other fields as they are."""
    return ' '.join(str(int(field)) if sysctl.is_numeric(field) else field for field in value.split())


def _format_value(value):
    if isinstance(value, bool):
        raise InputError('%r is a boolean, not a kernel value (YAML reads true, yes and on as one): '
                         'give 1 or 0' % (value,))
    if isinstance(value, (list, tuple)):
        return ' '.join(_format_value(v) for v in value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    raise InputError('value %r is neither a number, a string nor a list' % (value,))


# What read_persisted() finds: our file (host path, text), the text it starts from (base: a same-named file
# of a later folder while ours is missing), our keys, and how the next boot resolves a key with and without ours.
SysctlFile = namedtuple('SysctlFile', 'path text base base_path ours resolve others')
SysctlFile.NONE = SysctlFile(*[None] * 7)


class KernelParams(LivePlusFile, Plan):
    """One run of the kernel_params module, as the Plan hooks.

    Shapes (keys are canonical names, values normalized text):
    - desired: {key: value}, or {key: None} with state=absent (remove it from our file);
    - live: {key: the running kernel's value, or None where it is not read};
    - persisted: {'path': our file on this host, 'text': its text (None when absent),
      'ours': {key: value} it sets, 'resolve': key -> (value at boot, file it comes from)};
    - done: base.Outcome (``resolve_after`` as 'resolve', after our file is written).

    The flow (plan the writes, write live, read back, write our file) is LivePlusFile's;
    the backend reads and writes one live value.
    """

    source = 'task option: kernel_params.params'
    live_tree = '/proc/sys'
    refuse_unmet_readback = True
    persist_off = 'persist: false'

    def __init__(self, options, context):
        """``options``: the kind's options object (state/registry.py); ``context``: the run's (check mode,
        runner, platform)."""
        self.state = options.state
        self.apply_live = options.apply
        self.persist = options.persist
        self.mode = options.mode
        self.root = validate.check_root(options.root)
        self.backup = options.backup
        self.fail_on_shadowed = options.fail_on_shadowed
        self.gate = context.gate
        try:
            backend_class = platforms.pick(BACKENDS, context.system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.backend = backend_class(self.root, context.runner)
        # the first line of a file we create: which module or role manages it
        self.header = options.header or HEADER
        self.file = options.file or self.backend.default_file
        if self.mode not in compare.COMPARISONS:
            raise InputError('mode: %r is not one of %s' % (self.mode, ', '.join(compare.COMPARISONS)))
        self.raw_comparisons = options.comparisons or {}
        self.compare = ValueCompare(self.mode, self.backend.normalize)
        self.raw_params = options.params
        self.wanted = {}
        self.failures = []
        self.shadowed = []
        # key -> why this kernel (or container) cannot have it: no /proc/sys entry, read-only
        self.missing = {}
        self.unsupported = {}
        self.notes = {}
        self.marked = {}
        self.backup_file = None

    # ---------------------------------------------------------------- validation
    def validate(self):
        params = self.raw_params
        if self.state == 'absent' and isinstance(params, (list, tuple)):
            params = dict((name, None) for name in params)
        if not isinstance(params, dict) or not params:
            raise InputError('params must be a non-empty dict of name: value'
                             + (' (or a list of names with state=absent)' if self.state == 'absent' else ''))
        validate.check_rooted(self.root, self.file, 'file')
        self.backend.check_file(self.file)
        wanted = {}
        for name, value in params.items():
            try:
                key = self.backend.validate_name(name)
            except ValueError as exc:
                raise InputError('params: %s' % exc)
            if key in wanted:
                raise InputError('params name %r and another name both mean %r' % (name, key))
            wanted[key] = self._check_value(name, key, value) if self.state == 'present' else None
        self.wanted = wanted
        self.compare.per_key = self._per_key_comparisons(wanted)

    def _check_value(self, name, key, value):
        """The normalized value of one present param; InputError naming it when unusable."""
        if value is None:
            raise InputError('params %r has no value' % (name,))
        try:
            text = _format_value(value)
        except InputError as exc:
            raise InputError('params %r: %s' % (name, exc))
        if '\n' in text or '\r' in text:
            raise InputError('params %r: the value contains a newline' % (name,))
        validate.check_text(text, 'params %r' % (name,))
        try:
            text, marked = compare.split_marks(text)
        except compare.ComparisonError as exc:
            raise InputError('params %r: %s' % (name, exc))
        if marked is not None:
            self.marked[key] = (name, marked)
        if not text.strip():
            raise InputError('params %r: the value is empty' % (name,))
        normalized = self.backend.normalize(text)
        # Known keys are checked whether or not the live kernel can be read.
        try:
            sysctl_keys.check(key, normalized)
        except sysctl_keys.KeyValueError as exc:
            raise InputError('params %r: %s' % (name, exc))
        spec = sysctl_keys.known(key)
        return canonical_decimal(normalized) if spec is not None and spec.kind != 'string' else normalized

    def _per_key_comparisons(self, wanted):
        """comparisons and the values' own >=/<= marks, per key; a range's word made per field."""
        per_key = self._explicit_comparisons(wanted)
        for key, (name, marked) in self.marked.items():
            if key in per_key and user_comparison(key, per_key[key]) != user_comparison(key, marked):
                raise InputError('params %r is written with %r but comparisons says %r; say it once'
                                 % (name, compare.describe(wanted[key], marked), per_key[key]))
            per_key[key] = marked
        return dict((key, user_comparison(key, how)) for key, how in per_key.items())

    def _explicit_comparisons(self, wanted):
        per_key = {}
        for name, how in self.raw_comparisons.items():
            try:
                key = self.backend.validate_name(name)
                how = compare.validate(how, 'comparisons %r' % (name,))
            except ValueError as exc:
                raise InputError(str(exc) if str(exc).startswith('comparisons') else 'comparisons: %s' % exc)
            if key not in wanted:
                raise InputError('comparisons %r: not one of the params' % (name,))
            if isinstance(how, list) and wanted[key] is not None and len(how) != len(wanted[key].split()):
                raise InputError('comparisons %r: %d comparisons for the %d fields of %r'
                                 % (name, len(how), len(wanted[key].split()), wanted[key]))
            per_key[key] = how
        return per_key

    def desired(self):
        return self.wanted

    # ---------------------------------------------------------------- reading
    def read_live(self, desired):
        """Every live value, read first: a value of the wrong type for its key stops the run here.
        A key the running kernel does not have (its module not loaded, another kernel version)
        is noted in self.missing with the reason: its record says unsupported, never a failure."""
        if not self.backend.live_available:
            live = dict((key, None) for key in desired)
        else:
            self.missing = dict((key, why) for key, why in ((key, self.backend.missing_reason(key)) for key in desired)
                                if why)
            live = dict((key, None if key in self.missing else self.backend.read_live(key)) for key in desired)
        self.check_types(desired, live)
        return live

    @staticmethod
    def check_types(desired, live):
        for key, value in list(desired.items()):
            if value is None:
                continue
            reference = live.get(key)
            numeric_key = sysctl.is_numeric(reference) if reference else key in KNOWN_NUMERIC_KEYS
            if numeric_key and not sysctl.is_numeric(value):
                raise InputError('params %r: %r is not numeric, and %s takes numbers' % (key, value, key))
            if numeric_key:
                # written as canonical decimal: the kernel reads a leading 0 as octal
                desired[key] = value = canonical_decimal(value)
            if reference and numeric_key and len(reference.split()) != len(value.split()):
                raise InputError('params %r: %s takes %d value(s), got %d (%r)'
                                 % (key, key, len(reference.split()), len(value.split()), value))

    def read_persisted(self, desired):
        """Our file, and how the next boot resolves each key with it.  While our file does not
        exist, the file of its name in a later folder (``base``: /run/sysctl.d, /usr/local/lib...)
        boots in its place; ours, once written, masks it, so ours starts from its text."""
        local_file = rooted(self.root, self.file)
        text = read_text(local_file)
        base_path, base = (None, text) if text is not None else self.backend.same_name(self.file)
        managed = dict((key, None) for key in desired)
        without_ours = self.backend.render(base, managed) if base is not None and managed else base
        return SysctlFile(path=local_file, text=text, base=base, base_path=base_path,
                          ours=self.backend.values_of(base),
                          resolve=self.backend.persisted_resolver(self.file, text),
                          others=self.backend.persisted_resolver(self.file, '' if without_ours is None else without_ours))

    # ---------------------------------------------------------------- applying
    @property
    def live_available(self):
        return self.backend.live_available

    def live_meets(self, key, value, want):
        return self.compare.satisfies(key, value, want)

    def read_one(self, key):
        return self.backend.read_live(key)

    def write_one(self, key, value):
        self.backend.write_live(key, value)

    def read_only_reason(self, key):
        return self.backend.read_only_reason(key)

    def value_to_write(self, key, live, want):
        return self.compare.value_to_write(key, live, want)

    def refusal(self, exc):
        return exc.strerror or str(exc)

    def read_only_now(self, key, exc):
        return 'read-only /proc/sys (%s)' % (exc.strerror or 'EROFS')

    def file_text(self, desired, persisted, done):
        if not done.changes:
            return persisted.text
        if persisted.base_path:
            # ours masks the file of its name: its other lines are carried over, so that nothing it
            # gave at boot is lost
            carried = '%s\n# Lines carried over from %s, which this file masks (same name).\n%s' % (
                self.header, persisted.base_path, persisted.base)
            return self.backend.render(carried, done.changes, self.header)
        return self.backend.render(persisted.base, done.changes, self.header)

    def applied(self, desired, persisted, done):
        done.resolve_after = self.backend.persisted_resolver(self.file, done.change.after)

    def persist_value(self, key, want, live, persisted):
        """What our file gets for ``key``: a value, None (remove our line) or UNCHANGED.

        A key of state=absent loses our line.  A key the kernel cannot have here (missing,
        read-only /proc/sys or entry) is still persisted: the line takes effect at a boot
        where it exists and can be set (its module loaded, the same image on a host), and
        systemd-sysctl passes over a key it cannot set there without failing.
        """
        if want is None:
            return None if key in persisted.ours else UNCHANGED
        return self._persist_value(key, want, live, persisted)

    def _persist_value(self, key, want, live, persisted):
        """What our file gets for a present ``key``.

        A bound (minimum, maximum) is written field by field as the most that the desired
        value, the live value, the value the next boot loads and the value it would load
        without our line give: a field another file (or the kernel's built-in value) grants
        beyond ours is never lowered at boot.  Our line that already lowers such a field is
        rewritten, or removed when the boot value without it meets the desired one.
        """
        boot_value, boot_file = persisted.resolve(key)
        ours = persisted.ours.get(key)
        others_value, others_file = persisted.others(key)
        if not self.compare.satisfies(key, boot_value, want) and not self.compare.satisfies(key, ours, want):
            return self.compare.combine(key, want, [live.get(key), boot_value, others_value])
        if boot_file != self.file or ours is None or self.compare.comparison(key, want) == compare.EXACT:
            return UNCHANGED
        if self.compare.combine(key, want, [ours, others_value]) == self.normalize(ours):
            return UNCHANGED
        lowered = self.compare.short_fields(key, ours, self.compare.combine(key, want, [others_value]))
        grant = '%s (%s)' % (others_file, ', '.join(lowered)) if lowered else others_file
        if self.compare.satisfies(key, others_value, want):
            self.notes[key] = 'our line lowered what %s gives at boot: %s' % (grant, self.gate.did('remove it'))
            return None
        value = self.compare.combine(key, want, [live.get(key), ours, others_value])
        self.notes[key] = 'our line lowered what %s gives at boot: %s' % (grant, self.gate.did('write %s' % value))
        return value

    def normalize(self, value):
        return self.backend.normalize(value)

    # ---------------------------------------------------------------- reporting
    def render(self, result, desired, live, persisted, done):
        for key in sorted(desired):
            result.add(self._record(key, desired[key], live, persisted, done))
        # a TuneD profile that cannot be loaded sets nothing at boot; said, not guessed at
        self.report_file(result, done, getattr(self.backend, 'tuned_problems', list)())

    def _record(self, key, want, live, persisted, done):
        live_now = self.gate.now(live.get(key), done.after.get(key))
        resolve_before, resolve_after = persisted.resolve, done.resolve_after
        winner_value, winner_file = self.gate.now(resolve_before, resolve_after)(key)
        if want is None:
            removed = key in persisted.ours
            detail = self.gate.did('remove it from %s' % self.file) + '; the live value is left as it is' \
                if removed else 'not in %s' % self.file
            status = self.gate.status(None, not removed)
            return Setting(key, self.file, None, live_now, winner_value, status, detail)

        how = self.compare.comparison(key, want)
        if key in self.unsupported:
            return Setting(key, self.file, want, live_now, winner_value, UNSUPPORTED,
                           self._unsupported_detail(key, want, done), comparison=how)
        if key in done.refused:
            detail = self.refused_detail(done.targets[key], done.refused[key])
            return Setting(key, self.file, want, live_now, winner_value, FAILED, detail, comparison=how)

        details = ['%s: the live value is not read' % self.missing[key]] if key in self.missing else []
        live_ok = None
        if self.apply_live and self.backend.live_available:
            live_ok = self.compare.satisfies(key, live[key], want)
        elif not self.backend.live_available:
            details.append('live value not read (%s)' % (
                'the running kernel is read only at boot from %s' % self.file
                if self.backend.live_needs else 'no %s' % getattr(self.backend, 'proc', 'live access')))
        persisted_ok, shadowed = self._persisted_state(key, want, resolve_before, resolve_after, winner_file, details)
        if key in self.notes:
            persisted_ok = False  # met, but our line lowers what the boot would give without it
        if self.backend.live_needs and self.persist and not persisted_ok:
            # SunOS: what the running kernel has is what the old /etc/system gave it.
            live_ok = False
        status = self.gate.status(live_ok, persisted_ok, live_needs=self.backend.live_needs, shadowed=shadowed)
        if key in done.changes and not details and key not in self.notes:
            details.append(self.gate.did('write %s' % self.file))
        details.extend(self._field_details(key, want, live, live_ok, resolve_before, persisted_ok))
        if persisted.base_path and key in done.changes:
            details.append('%s masks %s (same name) once it exists, so that file\'s other lines are carried over'
                           % (self.file, persisted.base_path))
        details.extend(self._module_note(key))
        return Setting(key, self.file, want, live_now, winner_value, status, '; '.join(details), comparison=how)

    def _unsupported_detail(self, key, want, done):
        """Why the key is not set here, and what became of our line for the next boot."""
        boot_value, boot_file = done.resolve_after(key)
        persisted_by = None if not boot_file else (
            'at boot: %s' if boot_file == KERNEL_DEFAULT_SOURCE else 'persisted by %s') % boot_file
        details = self.unsupported_words(self.unsupported[key], key in done.changes, persisted_by)
        if self.persist and boot_file not in (None, self.file) and not self.compare.satisfies(key, boot_value, want):
            details.append('%s sets %r and wins at boot over %s' % (boot_file, boot_value, self.file))
        return '; '.join(details + self._module_note(key))

    def _module_note(self, key):
        """[why a persisted key of a module's may not be set at boot], or []."""
        note = getattr(self.backend, 'boot_module_note', None) if self.persist else None
        return [text for text in [note(key) if note else None] if text]

    def _field_details(self, key, want, live, live_ok, resolve_before, persisted_ok):
        """Which fields of a vector are short, live and at boot, and why our line changed."""
        details = []
        if live_ok is False:
            fields = self.compare.short_fields(key, live[key], want)
            if fields:
                details.append('live: %s' % ', '.join(fields))
        if persisted_ok is False:
            value, source = resolve_before(key)
            fields = self.compare.short_fields(key, value, want)
            if fields:
                details.append('at boot (%s): %s' % (source, ', '.join(fields)))
        if key in self.notes:
            details.append(self.notes[key])
        return details

    def _persisted_state(self, key, want, resolve_before, resolve_after, winner_file, details):
        """(persisted_ok, shadowed) of one key, its details added to ``details``; (None, False) without persist."""
        if not self.persist:
            return None, False
        persisted_ok = self.compare.satisfies(key, resolve_before(key)[0], want)
        after_value, after_file = resolve_after(key)
        if not self.compare.satisfies(key, after_value, want) and after_file and \
                after_file not in (self.file, KERNEL_DEFAULT_SOURCE):
            details.append('%s sets %r and wins at boot over %s' % (after_file, after_value, self.file))
            self.shadowed.append((key, after_file))
            return persisted_ok, True
        if winner_file == KERNEL_DEFAULT_SOURCE:
            details.append('at boot: %s' % winner_file)
        elif winner_file and winner_file != self.file:
            details.append('persisted by %s' % winner_file)
        return persisted_ok, False
