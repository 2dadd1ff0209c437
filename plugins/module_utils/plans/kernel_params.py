# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: plan and apply kernel parameters (Linux, FreeBSD, SunOS).

The module file only parses options and calls KernelParams(...).run(); keeping the
logic here lets one module later run several kinds of setting in one round trip.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import sys

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import etc_system
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_keys
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, PathError, confine, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, OK, PENDING_REBOOT, UNSUPPORTED, Result, Setting, decide_status)
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import InputError  # noqa: F401 (re-exported)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan

HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.'

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


# The kernel's built-in values of keys whose default is a constant of the kernel's ABI:
# what a key has at boot when no sysctl file sets it.  A minimum that this default
# already meets is then met at boot too, with nothing to persist.  64-bit kernels.
#   kernel.sem: SEMMSL SEMMNS SEMOPM SEMMNI, include/uapi/linux/sem.h (since Linux 3.19)
#   kernel.shmmax, kernel.shmall: SHMMAX = SHMALL = ULONG_MAX - 2^24, include/uapi/linux/shm.h (since 3.16)
#   kernel.shmmni: SHMMNI, include/uapi/linux/shm.h
#   kernel.msgmni, msgmax, msgmnb: MSGMNI, MSGMAX, MSGMNB, include/uapi/linux/msg.h
#   fs.aio-max-nr: aio_max_nr in fs/aio.c (0x10000)
#   vm.hugetlb_shm_group: sysctl_hugetlb_shm_group in mm/hugetlb.c (0, no group)
KERNEL_DEFAULTS_64BIT = {
    'vm.hugetlb_shm_group': '0',
    'kernel.sem': '32000 1024000000 500 32000',
    'kernel.shmmax': '18446744073692774399',
    'kernel.shmall': '18446744073692774399',
    'kernel.shmmni': '4096',
    'kernel.msgmni': '32000',
    'kernel.msgmax': '8192',
    'kernel.msgmnb': '16384',
    'fs.aio-max-nr': '65536',
}


KERNEL_DEFAULT_SOURCE = "the kernel's (or systemd's) built-in boot value (no sysctl file sets it)"


# What systemd as PID 1 sets at every boot before any sysctl file is read (src/core/main.c,
# bump_file_max_and_nr_open, systemd 240 and later): fs.file-max to LONG_MAX.
SYSTEMD_BOOT_VALUES_64BIT = {
    'fs.file-max': '9223372036854775807',
}


def kernel_default(key, root='/'):
    """The value ``key`` has at boot when no file sets it, or None when that is not a constant."""
    if sys.maxsize <= 2 ** 32:
        return None
    name = sysctl.validate_name(key).replace('/', '.')
    if name in SYSTEMD_BOOT_VALUES_64BIT and os.path.isdir(os.path.join(root, 'run', 'systemd', 'system')):
        return SYSTEMD_BOOT_VALUES_64BIT[name]
    return KERNEL_DEFAULTS_64BIT.get(name)


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
        want = self.normalize(desired)
        if live is None:
            return want
        return compare.value_to_write(self.normalize(live), want, self.comparison(key, desired))


class LinuxBackend(object):
    """Live values in <root>/proc/sys; persisted across systemd-sysctl's search path."""

    default_file = '/etc/sysctl.d/90-dbhost-tuning.conf'
    separator = ' = '
    live_needs = None

    def __init__(self, root, runner=None):
        self.root = root
        self.proc = os.path.join(root, 'proc', 'sys')
        self.live_available = os.path.isdir(self.proc)

    @staticmethod
    def validate_name(name):
        return sysctl.validate_name(name)

    @staticmethod
    def normalize(value):
        return sysctl.normalize_value(value)

    def check_file(self, path):
        folder, name = os.path.dirname(path), os.path.basename(path)
        if path == sysctl.SYSCTL_CONF or (folder in sysctl.SEARCH_DIRS and name.endswith('.conf')):
            return
        raise InputError('file %r is not read at boot: use a *.conf file in one of %s, or %s'
                         % (path, ', '.join(sysctl.SEARCH_DIRS), sysctl.SYSCTL_CONF))

    def _proc_file(self, key):
        return confine(self.root, os.path.join(self.proc, sysctl.proc_path(key)))

    def live_exists(self, key):
        return os.path.isfile(self._proc_file(key))

    def live_writable(self, key):
        """False for an entry the kernel shows read-only here (mode 0444), as some net.core
        keys are inside a container's network namespace: even root cannot write them."""
        try:
            return bool(os.stat(self._proc_file(key)).st_mode & 0o222)
        except OSError:
            return False

    def read_live(self, key):
        try:
            with open(self._proc_file(key)) as handle:
                return sysctl.normalize_value(handle.read())
        except (IOError, OSError):
            return None

    def write_live(self, key, value):
        """Write like ``sysctl -w``; raise OSError with the kernel's errno on refusal."""
        fd = os.open(self._proc_file(key), os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, value.encode('ascii'))
        finally:
            os.close(fd)

    def boot_files(self, our_file, our_text):
        files = []
        for shown, local in sysctl.boot_files(self.root, extra=our_file):
            text = our_text if shown == our_file else read_text(local, root=self.root)
            files.append((shown, text or ''))
        return files

    # Linux: a key no file sets boots with the kernel's built-in value (kernel_default()).
    builtin_defaults = True

    def persisted_resolver(self, our_file, our_text):
        exact, globs = sysctl.effective_values(self.boot_files(our_file, our_text))

        def resolve(key):
            value, source = sysctl.winner(exact, globs, key)
            if value is None and self.builtin_defaults:
                default = kernel_default(key, self.root)
                if default is not None:
                    return default, KERNEL_DEFAULT_SOURCE
            return value, source
        return resolve

    def values_of(self, text):
        return sysctl.values_of(text)

    def render(self, text, changes):
        return sysctl.render(text, changes, header=HEADER, separator=self.separator)


class FreeBSDBackend(LinuxBackend):
    """Live values through sysctl(8); persisted in /etc/sysctl.conf (then sysctl.conf.local).

    /etc/rc.d/sysctl reads ``name=value`` words, so new lines have no spaces.
    """

    default_file = '/etc/sysctl.conf'
    separator = '='
    builtin_defaults = False
    files = ('/etc/sysctl.conf', '/etc/sysctl.conf.local')

    def __init__(self, root, runner=None):
        self.root = root
        self.runner = runner
        # The running kernel is only ours to read on the running system.
        self.live_available = root == '/' and runner is not None

    def check_file(self, path):
        if path not in self.files:
            raise InputError('file %r is not read at boot on FreeBSD: use one of %s' % (path, ', '.join(self.files)))

    @staticmethod
    def validate_name(name):
        name = sysctl.validate_name(name)
        if '/' in name:
            raise InputError('sysctl name %r: FreeBSD names use dots only' % (name,))
        return name

    def live_exists(self, key):
        return self.read_live(key) is not None

    @staticmethod
    def live_writable(key):
        return True

    def read_live(self, key):
        rc, out, dummy = self.runner(['sysctl', '-n', key])
        return sysctl.normalize_value(out) if rc == 0 else None

    def write_live(self, key, value):
        rc, out, err = self.runner(['sysctl', '%s=%s' % (key, value)])
        if rc != 0:
            raise OSError(errno.EINVAL, (err or out).strip() or 'sysctl exited %d' % rc)

    def boot_files(self, our_file, our_text):
        files = []
        for shown in self.files:
            text = our_text if shown == our_file else read_text(rooted(self.root, shown))
            files.append((shown, text or ''))
        return files


class SunOSBackend(object):
    """Persisted as ``set module:variable=value`` in /etc/system, read at the next boot.

    The running kernel's value is not read (that needs mdb -k); a change is reported
    pending_reboot with reboot_required.
    """

    default_file = etc_system.ETC_SYSTEM
    live_available = False
    live_needs = PENDING_REBOOT

    def __init__(self, root, runner=None):
        self.root = root

    @staticmethod
    def validate_name(name):
        try:
            return etc_system.validate_name(name)
        except etc_system.EtcSystemNameError as exc:
            raise InputError(str(exc))

    @staticmethod
    def normalize(value):
        if isinstance(value, (list, tuple)):
            value = ' '.join(str(v) for v in value)
        return etc_system.normalize_value(value)

    def check_file(self, path):
        if path != etc_system.ETC_SYSTEM:
            raise InputError('file %r is not read at boot on SunOS: use %s' % (path, etc_system.ETC_SYSTEM))

    def live_exists(self, key):
        return True

    def read_live(self, key):
        return None

    def persisted_resolver(self, our_file, our_text):
        values = etc_system.parse(our_text)
        return lambda key: (values[key][0], our_file) if key in values else (None, None)

    def values_of(self, text):
        return dict((key, value) for key, (value, dummy) in etc_system.parse(text).items())

    def render(self, text, changes):
        return etc_system.render(text, changes)


BACKENDS = {
    platforms.LINUX: LinuxBackend,
    platforms.FREEBSD: FreeBSDBackend,
    platforms.SUNOS: SunOSBackend,
}


def _format_value(value):
    if isinstance(value, bool):
        raise InputError('a boolean is not a kernel value; use 0 or 1')
    if isinstance(value, (list, tuple)):
        return ' '.join(_format_value(v) for v in value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    raise InputError('value %r is neither a number, a string nor a list' % (value,))


class KernelParams(Plan):
    """One run of the kernel_params module: validate, plan, apply (unless check mode), report."""

    def __init__(self, params, state='present', apply=True, persist=True, file=None, mode='exact',
                 root='/', backup=False, fail_on_shadowed=True, check_mode=False, system_name=None,
                 runner=None, comparisons=None):
        self.state = state
        self.apply_live = apply
        self.persist = persist
        self.mode = mode
        self.root = validate.check_root(root)
        self.backup = backup
        self.fail_on_shadowed = fail_on_shadowed
        self.check_mode = check_mode
        try:
            backend_class = platforms.pick(BACKENDS, system_name)
        except platforms.UnsupportedPlatform as exc:
            raise InputError(str(exc))
        self.backend = backend_class(self.root, runner)
        self.file = file or self.backend.default_file
        if mode not in compare.COMPARISONS:
            raise InputError('mode: %r is not one of %s' % (mode, ', '.join(compare.COMPARISONS)))
        self.raw_comparisons = comparisons or {}
        self.compare = ValueCompare(mode, self.backend.normalize)
        self.raw_params = params
        self.desired = {}
        self.failures = []
        self.shadowed = []
        self.read_only = set()
        self.backup_file = None

    # ---------------------------------------------------------------- validation
    def validate(self):
        params = self.raw_params
        if self.state == 'absent' and isinstance(params, (list, tuple)):
            params = dict((name, None) for name in params)
        if not isinstance(params, dict) or not params:
            raise InputError('params must be a non-empty dict of name: value'
                             + (' (or a list of names with state=absent)' if self.state == 'absent' else ''))
        validate.check_path(self.file, 'file')
        try:
            rooted(self.root, self.file)
        except PathError as exc:
            raise InputError('file: %s' % exc)
        self.backend.check_file(self.file)
        desired = {}
        for name, value in params.items():
            try:
                key = self.backend.validate_name(name)
            except ValueError as exc:
                raise InputError('params: %s' % exc)
            if key in desired:
                raise InputError('params name %r and another name both mean %r' % (name, key))
            if self.state == 'present':
                if value is None:
                    raise InputError('params %r has no value' % (name,))
                text = _format_value(value)
                if '\n' in text or '\r' in text:
                    raise InputError('params %r: the value contains a newline' % (name,))
                validate.check_text(text, 'params %r' % (name,))
                if not text.strip():
                    raise InputError('params %r: the value is empty' % (name,))
                desired[key] = self.backend.normalize(text)
                # Known keys are checked whether or not the live kernel can be read.
                try:
                    sysctl_keys.check(key, desired[key])
                except sysctl_keys.KeyValueError as exc:
                    raise InputError('params %r: %s' % (name, exc))
            else:
                desired[key] = None
        self.desired = desired
        per_key = {}
        for name, how in self.raw_comparisons.items():
            try:
                key = self.backend.validate_name(name)
                how = compare.validate(how, 'comparisons %r' % (name,))
            except ValueError as exc:
                raise InputError(str(exc) if str(exc).startswith('comparisons') else 'comparisons: %s' % exc)
            if key not in desired:
                raise InputError('comparisons %r: not one of the params' % (name,))
            if isinstance(how, list) and desired[key] is not None and len(how) != len(desired[key].split()):
                raise InputError('comparisons %r: %d comparisons for the %d fields of %r'
                                 % (name, len(how), len(desired[key].split()), desired[key]))
            per_key[key] = how
        self.compare.per_key = per_key

    def read_live_values(self):
        """Read every live value first: a key the kernel does not have stops the run here."""
        live = {}
        if not self.backend.live_available:
            return dict((key, None) for key in self.desired)
        missing = [key for key in self.desired if not self.backend.live_exists(key)]
        if missing:
            raise InputError('unknown kernel parameter(s), no %s entry: %s'
                             % ('/proc/sys' if isinstance(self.backend, LinuxBackend) and not isinstance(
                                 self.backend, FreeBSDBackend) else 'sysctl', ', '.join(sorted(missing))))
        for key in self.desired:
            live[key] = self.backend.read_live(key)
        return live

    def check_types(self, live):
        for key, value in self.desired.items():
            if value is None:
                continue
            reference = live.get(key)
            numeric_key = sysctl.is_numeric(reference) if reference else key in KNOWN_NUMERIC_KEYS
            if numeric_key and not sysctl.is_numeric(value):
                raise InputError('params %r: %r is not numeric, and %s takes numbers' % (key, value, key))
            if reference and numeric_key and len(reference.split()) != len(value.split()):
                raise InputError('params %r: %s takes %d value(s), got %d (%r)'
                                 % (key, key, len(reference.split()), len(value.split()), value))

    # ---------------------------------------------------------------- run
    def run(self, module=None):
        self.validate()
        live_before = self.read_live_values()
        self.check_types(live_before)
        local_file = rooted(self.root, self.file)
        file_before = read_text(local_file)
        ours_before = self.backend.values_of(file_before)
        resolve_before = self.backend.persisted_resolver(self.file, file_before)

        changes = {}
        live_targets = {}
        # Keys this kernel (namespace) does not let anyone set: unsupported here, said in
        # the record, neither written nor persisted.
        read_only = set(key for key, want in self.desired.items()
                        if want is not None and self.apply_live and self.backend.live_available
                        and not self.backend.live_writable(key))
        self.read_only = read_only
        for key, want in self.desired.items():
            if want is None:
                if key in ours_before:
                    changes[key] = None
                continue
            if key in read_only:
                continue
            persisted_value = resolve_before(key)[0]
            if self.persist and not self.compare.satisfies(key, persisted_value, want) and \
                    not self.compare.satisfies(key, ours_before.get(key), want):
                changes[key] = self.compare.value_to_write(key, live_before.get(key), want)
            if self.apply_live and self.backend.live_available and \
                    not self.compare.satisfies(key, live_before.get(key), want):
                live_targets[key] = self.compare.value_to_write(key, live_before.get(key), want)

        live_after = dict(live_before)
        refused = {}
        if not self.check_mode:
            for key, value in sorted(live_targets.items()):
                try:
                    self.backend.write_live(key, value)
                except (IOError, OSError) as exc:
                    refused[key] = exc.strerror or str(exc)
                    changes.pop(key, None)  # a value the kernel refuses would fail at boot too
                    continue
                live_after[key] = self.backend.read_live(key)
                if not self.compare.satisfies(key, live_after[key], self.desired[key]):
                    refused[key] = 'the kernel reads back %r' % (live_after[key],)
                    changes.pop(key, None)

        file_after = self.backend.render(file_before, changes) if changes else file_before
        change = FileChange(local_file, file_before, file_after, shown_path=self.file)
        result = Result(self.check_mode)
        change.report(result)
        if not self.check_mode and change.needed:
            self.backup_file = change.apply(module, backup_file=self.backup)
        resolve_after = self.backend.persisted_resolver(self.file, file_after)

        for key in sorted(self.desired):
            result.add(self._record(key, live_before, live_after, resolve_before, resolve_after,
                                    ours_before, live_targets, refused, changes))
        if self.backup_file:
            result.extra['backup_file'] = self.backup_file
        return result

    def _record(self, key, live_before, live_after, resolve_before, resolve_after, ours_before,
                live_targets, refused, changes):
        want = self.desired[key]
        live_now = live_before[key] if self.check_mode else live_after.get(key)
        winner_value, winner_file = (resolve_before if self.check_mode else resolve_after)(key)
        if want is None:
            removed = key in ours_before
            detail = ('%s %s; the live value is left as it is' % (
                'would remove it from' if self.check_mode else 'removed it from', self.file)) if removed else \
                'not in %s' % self.file
            status = decide_status(None, not removed, self.check_mode)
            return Setting(key, self.file, None, live_now, winner_value, status, detail)

        details = []
        how = self.compare.comparison(key, want)
        if key in self.read_only:
            satisfied = self.compare.satisfies(key, live_before[key], want)
            return Setting(key, self.file, want, live_now, winner_value, OK if satisfied else UNSUPPORTED,
                           '' if satisfied else 'read-only in this kernel (a container\'s namespace?): '
                           'cannot be set here; not written, not persisted', comparison=how)
        if key in refused:
            details.append('the kernel refused %r: %s; not persisted' % (live_targets[key], refused[key]))
            return Setting(key, self.file, want, live_now, winner_value, FAILED, '; '.join(details), comparison=how)

        live_ok = None
        if self.apply_live and self.backend.live_available:
            live_ok = self.compare.satisfies(key, live_before[key], want)
        elif not self.backend.live_available:
            details.append('live value not read (%s)' % (
                'the running kernel is read only at boot from %s' % self.file
                if self.backend.live_needs else 'no %s' % getattr(self.backend, 'proc', 'live access')))

        persisted_ok = None
        shadowed = False
        if self.persist:
            persisted_ok = self.compare.satisfies(key, resolve_before(key)[0], want)
            after_value, after_file = resolve_after(key)
            if not self.compare.satisfies(key, after_value, want) and after_file and \
                    after_file not in (self.file, KERNEL_DEFAULT_SOURCE):
                shadowed = True
                details.append('%s sets %r and wins at boot over %s' % (after_file, after_value, self.file))
                self.shadowed.append((key, after_file))
            elif winner_file == KERNEL_DEFAULT_SOURCE:
                details.append('at boot: %s' % winner_file)
            elif winner_file and winner_file != self.file:
                details.append('persisted by %s' % winner_file)

        if self.backend.live_needs and self.persist and not persisted_ok:
            # SunOS: what the running kernel has is what the old /etc/system gave it.
            live_ok = False
        status = decide_status(live_ok, persisted_ok, self.check_mode,
                               live_needs=self.backend.live_needs, shadowed=shadowed)
        if key in changes and not details:
            details.append('%s %s' % ('would write' if self.check_mode else 'wrote', self.file))
        return Setting(key, self.file, want, live_now, winner_value, status, '; '.join(details), comparison=how)
