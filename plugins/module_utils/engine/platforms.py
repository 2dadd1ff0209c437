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


def page_size():
    """The base page size in bytes (4096 on x86_64, often 65536 on ppc64le/aarch64)."""
    return os.sysconf('SC_PAGE_SIZE')


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
