# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the one platform dispatch, and memory/page-size probes.

Every module picks its platform code through pick(); no module tests
platform.system() itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import platform
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import files
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import kernel_path

LINUX = 'Linux'
SUNOS = 'SunOS'
FREEBSD = 'FreeBSD'
SUPPORTED = (LINUX, SUNOS, FREEBSD)


class UnsupportedPlatform(Exception):
    pass


def system():
    """The running platform's name as platform.system() gives it."""
    return platform.system()


def pick(table, system_name=None):
    """Return ``table[system]`` for the running (or given) platform.

    ``table`` maps platform names to anything (classes, functions, paths); a
    ``'default'`` entry answers for platforms not listed.
    """
    name = system_name or system()
    if name in table:
        return table[name]
    if 'default' in table:
        return table['default']
    raise UnsupportedPlatform('platform %s is not supported (supported: %s)'
                              % (name, ', '.join(sorted(k for k in table if k != 'default'))))


# Smallest base page size of any Linux architecture: a safe unit where the tree's is unknown.
MIN_PAGE_SIZE = 4096
_KERNEL_PAGE_SIZE = re.compile(r'^KernelPageSize:\s+([0-9]+)\s*kB', re.MULTILINE)
# Kernel build options that choose the base page size (arm64, powerpc, and the generic
# CONFIG_PAGE_SIZE_* of Linux 6.9 and later); a config without any of them builds 4K pages.
_PAGE_CONFIGS = (
    (re.compile(r'^CONFIG_(?:ARM64_64K_PAGES|PPC_64K_PAGES|PAGE_SIZE_64KB)=y', re.MULTILINE), 65536),
    (re.compile(r'^CONFIG_(?:ARM64_16K_PAGES|PAGE_SIZE_16KB)=y', re.MULTILINE), 16384),
    (re.compile(r'^CONFIG_(?:PPC_256K_PAGES|PAGE_SIZE_256KB)=y', re.MULTILINE), 262144),
)


def page_size(root='/'):
    """The base page size in bytes (4096 on x86_64, often 65536 on ppc64le/aarch64) of the
    system under ``root``, or None when that tree does not say.

    The running system: the kernel's own answer.  Another root (a mounted image, a test
    tree) is never answered by the machine running this: its running kernel's
    ``proc/self/smaps`` (KernelPageSize) when it has one mounted, else its kernel's build
    configuration (``boot/config-<release>``, the release from ``proc/sys/kernel/osrelease``
    or the only config there).
    """
    if os.path.normpath(root or '/') == '/':
        return os.sysconf('SC_PAGE_SIZE')
    smaps = sysfs.read_text(kernel_path(root, '/proc/self/smaps'))
    match = _KERNEL_PAGE_SIZE.search(smaps or '')
    if match:
        return int(match.group(1)) * 1024
    return _page_size_from_config(root)


def _page_size_from_config(root):
    boot = os.path.join(root, 'boot')
    configs = sorted(n for n in os.listdir(boot) if n.startswith('config-')) if os.path.isdir(boot) else []
    release = (sysfs.read_text(kernel_path(root, '/proc/sys/kernel/osrelease')) or '').strip()
    if release and 'config-' + release in configs:
        configs = ['config-' + release]
    if len(configs) != 1:
        return None
    try:
        text = files.read_text(os.path.join(boot, configs[0]), root=root) or ''
    except (IOError, OSError, files.PathError):
        return None
    for pattern, size in _PAGE_CONFIGS:
        if pattern.search(text):
            return size
    return MIN_PAGE_SIZE


_MEMINFO_LINE = re.compile(r'^(\S+):\s+([0-9]+)(?:\s+kB)?\s*\Z')


def parse_meminfo(text):
    """Parse /proc/meminfo into {field: value}; kB fields are returned in bytes."""
    values = {}
    for line in (text or '').splitlines():
        match = _MEMINFO_LINE.match(line)
        if not match:
            continue
        number = int(match.group(2))
        values[match.group(1)] = number * 1024 if line.rstrip().endswith('kB') else number
    return values


def meminfo(root='/'):
    """<root>/proc/meminfo parsed (parse_meminfo()); {} when it cannot be read.  A link on the
    way that leads out of root is refused (PathError), as for every file under root."""
    path = kernel_path(root, '/proc/meminfo')
    content = sysfs.read_text(path)
    return parse_meminfo(content) if content is not None else {}
