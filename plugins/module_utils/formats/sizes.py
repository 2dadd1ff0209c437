# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a size as MySQL option files and Oracle parameter files write it.

A whole number with an optional suffix K, M, G, T, P or E, in either case, each 1024 times
the one before (``64M`` is 67108864 bytes).  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SIZE_RE = re.compile(r'^([0-9]+)([KkMmGgTtPpEe]?)\Z')
FACTORS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40, 'P': 1 << 50, 'E': 1 << 60}


def in_bytes(match):
    """The bytes of a SIZE_RE match."""
    return int(match.group(1)) * FACTORS[match.group(2).upper()]
