# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the one parser of Linux ``/proc/self/mountinfo`` (proc(5)).

A line is::

    36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
    (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)    (10)         (11)

mount ID, parent ID, major:minor, root, mount point, per-mount options, zero or more
optional fields, the separator ``-``, file system type, source, super-block options.
The kernel writes a space, tab, newline and backslash in a path as ``\\040``, ``\\011``,
``\\012`` and ``\\134`` (a backslash and three octal digits); ``unescape`` undoes that.

Shared by host facts, the mounts, block queue and processor set modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_OCTAL_ESCAPE = re.compile(r'\\([0-7]{3})')


def unescape(field):
    """A path as the kernel writes it in mountinfo and fstab(5): ``\\040`` -> space, and so on."""
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


class MountInfo(object):
    """One line of mountinfo; paths unescaped, option fields as lists."""

    __slots__ = ('mount_id', 'parent_id', 'dev', 'root', 'mount_point', 'options', 'optional',
                 'fstype', 'source', 'super_options')

    def __init__(self, fields, dash):
        self.mount_id = fields[0]
        self.parent_id = fields[1]
        self.dev = fields[2]
        self.root = unescape(fields[3])
        self.mount_point = unescape(fields[4])
        self.options = fields[5].split(',')
        self.optional = fields[6:dash]
        tail = fields[dash + 1:]
        self.fstype = tail[0]
        self.source = unescape(tail[1])
        self.super_options = tail[2].split(',') if len(tail) > 2 else []

    def __repr__(self):
        return 'MountInfo(%s on %s type %s)' % (self.source, self.mount_point, self.fstype)


def parse(text):
    """[MountInfo] from the text of /proc/self/mountinfo, in file order (a mount stacked on
    another comes later).  Lines without the six leading fields, the separator and at
    least the type and source are skipped."""
    mounts = []
    for line in (text or '').splitlines():
        fields = line.split()
        if '-' not in fields[6:]:
            continue
        dash = fields.index('-', 6)
        if len(fields) < dash + 3:
            continue
        mounts.append(MountInfo(fields, dash))
    return mounts
