# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Size filters: ``48G`` <-> bytes, pages, and the whole shared-memory sizing.

The arithmetic lives in module_utils/sizing/shm.py and units.py (unit-tested); these
filters only adapt it to Jinja and turn its errors into AnsibleFilterError.
The documentation of each filter is in the .yml file of the same name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import profiles
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import shm as sizing
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import units


def _wrap(function):
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except units.SizingError as exc:
            raise AnsibleFilterError('dbhost.tuning.%s: %s' % (function.__name__, exc))
    run.__name__ = function.__name__
    run.__doc__ = function.__doc__
    return run


def to_bytes(value, ram_bytes=None):
    """``48G`` -> 51539607552; ``40%`` of ``ram_bytes``."""
    return units.parse_size(value, ram_bytes=ram_bytes, name='to_bytes input')


def human_size(value, precision=2):
    """51539607552 -> ``48G``."""
    return units.human_size(value, precision=precision)


def to_pages(value, page_size, rounding='up', ram_bytes=None):
    """How many pages of ``page_size`` hold ``value``."""
    return units.to_pages(value, page_size, rounding=rounding, ram_bytes=ram_bytes, name='to_pages input')


# The sizing's shares and their shared_memory role variables: an option not given takes the
# role's default, read from the role's defaults/main.yml (the one place it is written).
ROLE_DEFAULTS = (('hugepages_cap', 'shared_memory_hugepages_cap'),
                 ('hugepages_margin', 'shared_memory_hugepages_margin'),
                 ('shared_memory_cap', 'shared_memory_cap'))
DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             'roles', 'shared_memory', 'defaults', 'main.yml')
_DEFAULTS = {}


def role_defaults():
    """{sizing option: the shared_memory role's default}, read once."""
    if not _DEFAULTS:
        with open(DEFAULTS_FILE) as handle:
            variables = yaml.safe_load(handle) or {}
        _DEFAULTS.update((option, variables[name]) for option, name in ROLE_DEFAULTS)
    return _DEFAULTS


def shm_settings(facts, engine, shared_memory, **options):
    """Every shared-memory setting of a host, from its ``dbhost`` facts and the database's needs."""
    for option, default in role_defaults().items():
        if options.get(option) is None:
            options[option] = default
    # the machine's own figures, where given, stand for what the facts say
    machine = dict((name, options.pop(name)) for name in ('ram_bytes', 'page_size', 'system') if name in options)
    return sizing.shm_settings_from_facts(facts, sizing.request(engine, shared_memory, **options), **machine)


def kernel_profile(name, system='Linux'):
    """A vendor's kernel parameter profile: {key: {value, comparison, source}}."""
    try:
        entries = profiles.kernel_profile(name, system)
    except KeyError:
        raise AnsibleFilterError('kernel_profile: %r is not one of %s' % (name, ', '.join(profiles.PROFILE_NAMES)))
    return dict((key, {'value': value, 'comparison': how, 'source': source})
                for key, (value, how, source) in entries.items())


class FilterModule(object):
    """dbhost.tuning size filters."""

    def filters(self):
        return {
            'to_bytes': _wrap(to_bytes),
            'human_size': _wrap(human_size),
            'to_pages': _wrap(to_pages),
            'shm_settings': _wrap(shm_settings),
            'kernel_profile': kernel_profile,
        }
