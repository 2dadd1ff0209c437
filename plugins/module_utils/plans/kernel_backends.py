# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: where kernel parameters live on each platform, for KernelParams.

One backend per platform (BACKENDS, picked by engine/platforms.py): how names are checked
and values normalized, how the live value is read and written (Linux: <root>/proc/sys;
FreeBSD: sysctl(8); SunOS: not read, the next boot's), which files are read at boot and
which value wins there, and how our file is rendered.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import sys

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import journal
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import confine, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import PENDING_REBOOT
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import etc_system
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import modules_load
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_keys
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_values
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host

HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.'


# The kernel's built-in values of keys whose default is a constant of the kernel's ABI:
# what a key has at boot when no sysctl file sets it.  A minimum that this default
# already meets is then met at boot too, with nothing to persist.  64-bit kernels.
#   kernel.sem: SEMMSL SEMMNS SEMOPM SEMMNI, include/uapi/linux/sem.h (since Linux 3.19)
#   kernel.shmmax, kernel.shmall: SHMMAX = SHMALL = ULONG_MAX - 2^24, include/uapi/linux/shm.h (since 3.16)
#   kernel.shmmni: SHMMNI, include/uapi/linux/shm.h
#   kernel.msgmni, msgmax, msgmnb: MSGMNI, MSGMAX, MSGMNB, include/uapi/linux/msg.h
#   fs.aio-max-nr: aio_max_nr in fs/aio.c (0x10000)
#   vm.hugetlb_shm_group: sysctl_hugetlb_shm_group in mm/hugetlb.c (0, no group)
#   net.ipv4.ip_local_port_range: inet_init_net in net/ipv4/af_inet.c (32768 60999), per
#     network namespace
KERNEL_DEFAULTS_64BIT = {
    'net.ipv4.ip_local_port_range': '32768 60999',
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


class LinuxBackend(object):
    """Live values in <root>/proc/sys; persisted across systemd-sysctl's search path."""

    default_file = '/etc/sysctl.d/90-dbhost-tuning.conf'
    separator = ' = '
    live_needs = None

    def __init__(self, root, runner=None):
        self.root = root
        self.proc = os.path.join(root, 'proc', 'sys')
        self.live_available = os.path.isdir(self.proc)
        self._early_modules = None
        self._tuned = False

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

    def missing_reason(self, key):
        """Why the running kernel has no ``key`` (no /proc/sys entry), or None when it has it."""
        if os.path.isfile(self._proc_file(key)):
            return None
        return sysctl_keys.why_missing(key, '/proc/sys/' + sysctl.proc_path(key))

    def read_only_reason(self, key):
        """Why nobody can set ``key`` here, or None: /proc/sys mounted read-only (a container),
        or an entry the kernel shows read-only (mode 0444, as some net.core keys are inside a
        container's network namespace: even root cannot write them)."""
        return sysfs.read_only_reason(self._proc_file(key), '/proc/sys/' + sysctl.proc_path(key))

    def read_live(self, key):
        text = sysfs.read_text(self._proc_file(key))
        return None if text is None else sysctl.normalize_value(text)

    def write_live(self, key, value):
        """Write like ``sysctl -w``; raise OSError with the kernel's errno on refusal."""
        sysfs.write_text(self._proc_file(key), value)

    def boot_files(self, our_file, our_text):
        """[(path, text)] systemd-sysctl reads, our file holding ``our_text``; while our file does
        not exist (None), the file of its name in a later folder (/run, /usr/local/lib, /usr/lib)
        is what boots in its place."""
        return confd.texts_in_place(self.root, sysctl.boot_files(self.root, extra=our_file), our_file, our_text,
                                    sysctl.SEARCH_DIRS)

    def same_name(self, our_file):
        """(path, text) of the file of our file's name that boots while ours does not exist: the
        first of the later sysctl.d folders holding it (sysctl.d(5): the same name in an earlier
        folder masks it, so writing ours hides it), or (None, None)."""
        return confd.same_name(self.root, our_file, sysctl.SEARCH_DIRS)

    def boot_module_note(self, key):
        """Why ``key`` is not set at boot although a file sets it: its /proc/sys entry comes with a
        module (sysctl_keys.MODULE_KEYS) that nothing loads before systemd-sysctl runs.  None when
        it needs no module, or the module is built in, loaded early (formats/modules_load.py), or a
        udev rule runs sysctl when it loads."""
        module = sysctl_keys.module_of(key)
        if module is None:
            return None
        early = self._modules_at_boot()
        if module in early['builtin'] or self._built_in(module) or \
                modules_load.loaded_by(module, early['listed'], early['deps']) or \
                modules_load.udev_sysctl_rule(self.root, module):
            return None
        return ('its /proc/sys entry comes with the %s module: systemd-sysctl cannot set it at boot unless %s is loaded '
                'early (list it in /etc/modules-load.d/*.conf)' % (module, module))

    def _built_in(self, module):
        """A module built into the running kernel: /sys/module/<name> without an initstate."""
        folder = confine(self.root, os.path.join(self.root, 'sys', 'module', module))
        return os.path.isdir(folder) and not os.path.exists(os.path.join(folder, 'initstate'))

    def _modules_at_boot(self):
        """{'listed': {module: file}, 'deps', 'builtin'}: what the next boot loads early."""
        if self._early_modules is None:
            listed = modules_load.boot_listed(self.root)
            line = cmdline.next_boot(self.root)
            for name in modules_load.parse_cmdline(line.params if line else []):
                listed.setdefault(name, cmdline.label(line))
            release = sysfs.read_text(confine(self.root, os.path.join(self.proc, 'kernel', 'osrelease')))
            deps, builtin = modules_load.kernel_tables(self.root, release) if release and '/' not in release else ({}, set())
            self._early_modules = {'listed': listed, 'deps': deps, 'builtin': builtin}
        return self._early_modules

    # Linux: a key no file sets boots with the kernel's built-in value (kernel_default()).
    builtin_defaults = True

    def persisted_resolver(self, our_file, our_text):
        """key -> (value, source) the next boot gives, were our file to hold ``our_text``: the one
        reading of the boot for every plan (kernel_params, hugepages' vm.nr_hugepages).

        systemd-sysctl keeps one value per key, the last file's (src/sysctl/sysctl.c: a later
        assignment replaces an earlier one), and writes it once; the kernel then parses that text
        (formats/sysctl_values.py) on top of the built-in value.  So the value is what the kernel
        stores, in decimal: ``0300`` is 192, fields a line leaves out keep the built-in value, a
        line the kernel refuses leaves the built-in value (or what it stored before the refused
        field), and the source stays the file whose line was written."""
        exact, globs = sysctl.effective_values(self.boot_files(our_file, our_text))
        after_tuned = self.tuned_resolver(our_file, our_text)

        def resolve(key):
            value, source = sysctl.winner(exact, globs, key)
            default = kernel_default(key, self.root) if self.builtin_defaults else None
            if value is None:
                if default is not None:
                    value, source = default, KERNEL_DEFAULT_SOURCE
            else:
                value = self.kernel_reads(key, value, default)
            return after_tuned(key, value, source)
        return resolve

    def kernel_reads(self, key, text, before):
        """What /proc/sys/<key> holds once ``text`` is written over ``before`` (formats/sysctl_values.py);
        the running kernel's value tells the shape of a key the table does not know."""
        shape = self.read_live(key) if self.live_available and sysctl_keys.known(key) is None else None
        return sysctl_values.write(key, text, before, shape=shape).value

    def tuned_profile(self):
        """The TuneD profile tuned.service applies at boot (formats/tuned.py), or None; read once."""
        if self._tuned is False:
            self._tuned = tuned_host.active(self.root)
        return self._tuned

    def tuned_problems(self):
        profile = self.tuned_profile()
        return list(profile.problems) if profile else []

    def tuned_resolver(self, our_file, our_text):
        """(key, value, source) -> (value, source) once TuneD has started after systemd-sysctl: its
        writes in the order it makes them (formats/tuned.py sysctl_writes: each applying [sysctl]
        unit, then, with reapply_sysctl, the lines of /run and /etc sysctl files written again);
        in automatic mode, as every profile TuneD may start writes them (formats/tuned.py agree).
        plans/hugepages.py resolves vm.nr_hugepages with it too."""
        profile = self.tuned_profile()
        if profile is None or not any(one.has_unit('sysctl') or one.has_unit('vm')
                                      for one in [profile] + profile.alternatives):
            return lambda key, value, source: (value, source)
        reapplied = self._reapplied(our_file, our_text) if profile.reapply_sysctl else {}
        resolvers = dict((id(one), self._profile_resolver(one, reapplied)) for one in [profile] + profile.alternatives)

        def resolve(key, value, source):
            return profile.agree(lambda one: resolvers[id(one)](key, value, source))
        return resolve

    def _profile_resolver(self, profile, reapplied):
        """(key, value, source) -> (value, source) after the writes of one TuneD profile."""
        writes = [(sysctl.canonical_name(key) if key else None, raw, origin, unit)
                  for key, raw, origin, unit in profile.sysctl_writes()]
        why = '' if profile.reapply_sysctl else ', reapply_sysctl = 0 in %s' % tuned.MAIN_CONF

        def resolve(key, value, source):
            for name, raw, origin, unit in writes:
                if name is None:
                    if key in reapplied and not profile.excluded(key):
                        text, source = reapplied[key]
                        value = self.kernel_reads(key, text, value)
                    continue
                if name != key:
                    continue
                expanded, dummy = profile.value(raw)
                unknown = profile.unresolved(raw, unit)
                written = expanded if unknown else tuned.modified(expanded, value)
                if written is not None:
                    # TuneD writes its text to /proc/sys as it is: the kernel parses it
                    value = sysctl.normalize_value(written) if unknown else self.kernel_reads(key, written, value)
                    source = tuned.computed('%s%s' % (origin, why), unknown) if unknown else '%s%s' % (origin, why)
            return value, source
        return resolve

    def _reapplied(self, our_file, our_text):
        """{key: (value, file)} TuneD writes again after its [sysctl] (exact keys only: it writes a
        line's name as a /proc/sys path, so globs and ``-`` names come to nothing)."""
        files = [(shown, local) for shown, local in confd.search(self.root, tuned.REAPPLY_DIRS, our_file)
                 if not confd.is_masked(local)]
        files.append((tuned.REAPPLY_CONF, confd.under_root(self.root, tuned.REAPPLY_CONF)))
        found = {}
        for shown, text in confd.texts_at_boot(self.root, files, our_file, our_text):
            for assignment in sysctl.parse(text):
                if not assignment.glob and not assignment.ignore_failure:
                    found[assignment.key] = (assignment.value, shown)
        return found

    def values_of(self, text):
        return sysctl.values_of(text)

    def render(self, text, changes, header=HEADER):
        return sysctl.render(text, changes, header=header, separator=self.separator)


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

    def missing_reason(self, key):
        return None if self.read_live(key) is not None else sysctl_keys.why_missing(key, 'sysctl %s' % key)

    @staticmethod
    def read_only_reason(key):
        return None

    @staticmethod
    def boot_module_note(key):
        return None

    @staticmethod
    def tuned_profile():
        return None

    @staticmethod
    def kernel_reads(key, text, before):
        """FreeBSD's sysctl(8) and rc.d read /etc/sysctl.conf: its value is compared as written."""
        return sysctl.normalize_value(text)

    def read_live(self, key):
        rc, out, dummy = self.runner(['sysctl', '-n', key])
        return sysctl.normalize_value(out) if rc == 0 else None

    def write_live(self, key, value):
        journal.before('unsupported', 'sysctl %s' % key, root=self.root,
                       detail='set with sysctl(8) (before: %s); a revert puts the files back, not this live value: '
                              'it returns to the file\'s value at the next boot' % self.read_live(key))
        rc, out, err = self.runner(['sysctl', '%s=%s' % (key, value)])
        if rc != 0:
            raise OSError(errno.EINVAL, (err or out).strip() or 'sysctl exited %d' % rc)

    def boot_files(self, our_file, our_text):
        return confd.texts_at_boot(self.root, [(shown, rooted(self.root, shown)) for shown in self.files], our_file,
                                   our_text)


class SunOSBackend(object):
    """Persisted as ``set module:variable=value`` in /etc/system, or in a file of /etc/system.d
    where the release has that folder (Solaris 11.2 and later, illumos since 2019), read at
    the next boot.  By default our own file there, as system(5) and Oracle's 11.4 tuning guide
    ask, else /etc/system.  At boot the files of /etc/system.d (C order, no dot files) are read
    first and /etc/system last: the last setting of a key wins (system(5)).

    The running kernel's value is not read (that needs mdb -k); a change is reported
    pending_reboot with reboot_required.
    """

    live_available = False
    live_needs = PENDING_REBOOT

    def __init__(self, root, runner=None):
        self.root = root

    @property
    def default_file(self):
        return etc_system.OWN_FILE if self._has_system_d() else etc_system.ETC_SYSTEM

    def _has_system_d(self):
        return os.path.isdir(rooted(self.root, etc_system.SYSTEM_D))

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
        reason = etc_system.check_file(path, self._has_system_d())
        if reason:
            raise InputError(reason)

    @staticmethod
    def missing_reason(key):
        return None

    @staticmethod
    def same_name(our_file):
        return None, None

    def read_live(self, key):
        return None

    def persisted_resolver(self, our_file, our_text):
        """key -> (value at the next boot, the file it comes from), every file read in boot order."""
        values = {}
        for shown, text in self.boot_texts(our_file, our_text):
            for key, (value, dummy) in etc_system.parse(text).items():
                values[key] = (value, shown)
        return lambda key: values.get(key, (None, None))

    def boot_texts(self, our_file, our_text):
        """[(file, text)] as the boot reads them: /etc/system.d/* in C order, then /etc/system."""
        shown = []
        if self._has_system_d():
            folder = rooted(self.root, etc_system.SYSTEM_D)
            shown = [etc_system.SYSTEM_D + '/' + name for name in os.listdir(folder)
                     if not name.startswith('.') and os.path.isfile(os.path.join(folder, name))]
        if our_file != etc_system.ETC_SYSTEM and our_file not in shown:
            shown.append(our_file)
        order = sorted(shown) + [etc_system.ETC_SYSTEM]
        return [(path, our_text if path == our_file else read_text(rooted(self.root, path))) for path in order]

    def values_of(self, text):
        return dict((key, value) for key, (value, dummy) in etc_system.parse(text).items())

    def render(self, text, changes, header=None):
        return etc_system.render(text, changes)


BACKENDS = {
    platforms.LINUX: LinuxBackend,
    platforms.FREEBSD: FreeBSDBackend,
    platforms.SUNOS: SunOSBackend,
}
