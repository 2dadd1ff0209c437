# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: sysfs attributes, including the bracketed choice format.

``none [mq-deadline] kyber`` is read as the choices (none, mq-deadline, kyber) with
mq-deadline selected; ``always madvise [never]`` likewise for transparent huge pages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re

_BRACKETED = re.compile(r'\[([^\]]+)\]')


class SysfsError(Exception):
    """A sysfs write the kernel refused; ``errno`` says why (EINVAL, EBUSY...)."""

    def __init__(self, path, value, error):
        self.path = path
        self.value = value
        self.errno = getattr(error, 'errno', None)
        Exception.__init__(self, 'writing %r to %s failed: %s' % (value, path, getattr(error, 'strerror', error)))


def is_choice(raw):
    """True for the bracketed choice format (exactly one choice in brackets)."""
    return raw is not None and len(_BRACKETED.findall(raw)) == 1


def parse_choice(raw):
    """Return (choices, selected) from ``a [b] c``; (None, raw) when not a choice list."""
    if not is_choice(raw):
        return None, raw
    choices = [word.strip('[]') for word in raw.split()]
    return choices, _BRACKETED.search(raw).group(1)


def read_raw(path):
    """The attribute's text without the trailing newline; None when absent."""
    try:
        with open(path) as handle:
            return handle.read().rstrip('\n')
    except IOError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def read_value(path):
    """The attribute's effective value: the selected choice, or the stripped text."""
    raw = read_raw(path)
    if raw is None:
        return None
    return parse_choice(raw)[1].strip()


def write_value(path, value):
    """Write one value the way ``echo value > path`` does; raise SysfsError on refusal."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, ('%s\n' % value).encode('ascii'))
        finally:
            os.close(fd)
    except (IOError, OSError) as exc:
        raise SysfsError(path, value, exc)


def is_writable(path):
    try:
        return bool(os.stat(path).st_mode & 0o222)
    except OSError:
        return False
