# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the error every layer raises for bad input.

The lowest file of the engine: it imports nothing, so that validate.py (which raises
it) and result.py (which turns it into a failed task) need not import each other.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class InputError(ValueError):
    """Bad input: refused before anything is touched; the message names the input."""
