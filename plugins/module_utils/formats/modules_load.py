# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel modules a boot loads early, and which sysctl keys need one.

Some sysctl keys have a /proc/sys entry only once a kernel module is loaded (MODULE_KEYS in
formats/sysctl_keys.py).  systemd-sysctl runs early at boot and passes over a key that does
not exist yet, so such a key is set at boot only when its module is loaded before it:

- listed in modules-load.d(5): ``*.conf`` files in SEARCH_DIRS (a name in an earlier folder
  masks the same name in a later one, a link to /dev/null disables it), one module name per
  line, ``#`` and ``;`` comments; systemd-modules-load.service runs before
  systemd-sysctl.service;
- listed in Debian's ``/etc/modules`` (one module per line, arguments after the name);
- named by ``modules_load=`` or ``rd.modules_load=`` on the kernel command line (commas);
- brought in as a dependency of one of those (``modules.dep`` of the running kernel);
- built into the kernel (``modules.builtin``), when it is always there.

Module names compare with ``-`` and ``_`` alike, as modprobe does.  ``parse_*`` are pure;
``boot_listed`` reads under root through engine/confd.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text

SEARCH_DIRS = (
    '/etc/modules-load.d',
    '/run/modules-load.d',
    '/usr/local/lib/modules-load.d',
    '/usr/lib/modules-load.d',
    '/lib/modules-load.d',
)
ETC_MODULES = '/etc/modules'
CMDLINE_NAMES = ('modules_load', 'rd.modules_load')
MODULE_FOLDERS = ('/lib/modules', '/usr/lib/modules')


def module_name(name):
    """A module name as modprobe compares it: ``-`` and ``_`` alike."""
    return (name or '').strip().replace('-', '_')


def parse(text):
    """[module] of a modules-load.d file or /etc/modules: the first word of each line that is
    not blank or a comment (``#``, ``;``)."""
    names = []
    for line in (text or '').splitlines():
        words = line.split()
        if words and words[0][0] not in '#;':
            names.append(module_name(words[0]))
    return names


def parse_cmdline(params):
    """[module] that ``modules_load=`` / ``rd.modules_load=`` name in [(name, value)] params."""
    names = []
    for name, value in params:
        if name in CMDLINE_NAMES and value:
            names.extend(module_name(item) for item in value.split(',') if item.strip())
    return names


def _module_of_path(path):
    base = os.path.basename(path.strip())
    return module_name(base.split('.ko')[0])


def parse_modules_dep(text):
    """{module: set of modules it needs} of a ``modules.dep`` (``path: path path``)."""
    deps = {}
    for line in (text or '').splitlines():
        head, sep, tail = line.partition(':')
        if sep:
            deps[_module_of_path(head)] = set(_module_of_path(path) for path in tail.split())
    return deps


def parse_builtin(text):
    """The modules of a ``modules.builtin`` (one .ko path per line)."""
    return set(_module_of_path(line) for line in (text or '').splitlines() if line.strip())


def _read(root, path):
    try:
        return read_text(confd.under_root(root, path), root=root)
    except (IOError, OSError, PathError):
        return None


def boot_listed(root='/'):
    """{module: the file that lists it} of modules-load.d and /etc/modules under root."""
    listed = {}
    for shown, local in confd.search(root, SEARCH_DIRS):
        if confd.is_masked(local):
            continue
        for name in parse(_read(root, shown)):
            listed.setdefault(name, shown)
    for name in parse(_read(root, ETC_MODULES)):
        listed.setdefault(name, ETC_MODULES)
    return listed


def kernel_tables(root, release):
    """(modules.dep as {module: deps}, modules.builtin as a set) of kernel ``release`` under root."""
    for folder in MODULE_FOLDERS:
        base = '%s/%s' % (folder, release)
        dep = _read(root, base + '/modules.dep')
        builtin = _read(root, base + '/modules.builtin')
        if dep is not None or builtin is not None:
            return parse_modules_dep(dep), parse_builtin(builtin)
    return {}, set()


def loaded_by(module, listed, deps):
    """The listed module that loads ``module`` (itself, or one that depends on it), or None."""
    if module in listed:
        return module
    for name in sorted(listed):
        if module in deps.get(name, ()):
            return name
    return None


UDEV_RULES_DIRS = ('/etc/udev/rules.d', '/run/udev/rules.d', '/usr/local/lib/udev/rules.d', '/usr/lib/udev/rules.d',
                   '/lib/udev/rules.d')


def udev_sysctl_rule(root, module):
    """The udev rules file that runs sysctl when ``module`` is loaded (``SUBSYSTEM=="module"``,
    ``KERNEL=="<module>"``, a RUN with sysctl in it), or None: with one, the keys are set
    whenever the module comes, early or late."""
    wanted = 'KERNEL=="%s"' % module
    for shown, local in confd.search(root, UDEV_RULES_DIRS, suffix='.rules'):
        if confd.is_masked(local):
            continue
        for line in (_read(root, shown) or '').splitlines():
            if line.lstrip().startswith('#'):
                continue
            squeezed = line.replace(' ', '')
            if 'SUBSYSTEM=="module"' in squeezed and wanted in squeezed and 'RUN' in squeezed and 'sysctl' in line:
                return shown
    return None
