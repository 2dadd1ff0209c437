# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Size filters: ``48G`` <-> bytes, pages, and the whole shared-memory sizing.

The arithmetic lives in module_utils/_sizing.py (one place, unit-tested); these
filters only adapt it to Jinja and turn its errors into AnsibleFilterError.
The documentation of each filter is in the .yml file of the same name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.dbhost.tuning.plugins.module_utils import _sizing as sizing


def _wrap(function):
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except sizing.SizingError as exc:
            raise AnsibleFilterError('dbhost.tuning.%s: %s' % (function.__name__, exc))
    run.__name__ = function.__name__
    run.__doc__ = function.__doc__
    return run


def to_bytes(value, ram_bytes=None):
    """``48G`` -> 51539607552; ``40%`` of ``ram_bytes``."""
    return sizing.parse_size(value, ram_bytes=ram_bytes, name='to_bytes input')


def human_size(value, precision=2):
    """51539607552 -> ``48G``."""
    return sizing.human_size(value, precision=precision)


def to_pages(value, page_size, rounding='up', ram_bytes=None):
    """How many pages of ``page_size`` hold ``value``."""
    return sizing.to_pages(value, page_size, rounding=rounding, ram_bytes=ram_bytes, name='to_pages input')


def _hugepage_sizes(facts):
    pools = facts.get('hugepages') or {}
    return [int(size) for size in pools] or None


def shm_settings(facts, engine, shared_memory, group_gid=None, hugepage_size=None, hugepages_cap='70%',
                 hugepages_margin='1%', use_hugepages=True, numa_node=None, keep_higher=False,
                 etc_system=False, ram_bytes=None, page_size=None, system=None):
    """Every shared-memory setting of a host, from its ``dbhost`` facts and the database's needs."""
    if not isinstance(facts, dict):
        raise sizing.SizingError('the input must be the dbhost facts (ansible_facts.dbhost), got %r'
                                 % (type(facts).__name__,))
    memory = facts.get('memory') or {}
    system = system or facts.get('system') or sizing.LINUX
    ram = ram_bytes if ram_bytes is not None else memory.get('total_bytes')
    if ram is None:
        raise sizing.SizingError('the RAM size is not in the facts (memory.total_bytes); gather the memory subset '
                                 'with dbhost.tuning.host_facts or pass ram_bytes')
    page = page_size if page_size is not None else memory.get('page_size')
    if page is None:
        raise sizing.SizingError('the page size is not in the facts (memory.page_size); pass page_size')
    if hugepage_size in (None, '', 'default'):
        hugepage_size = memory.get('hugepage_default_bytes')
    return sizing.shm_settings(
        engine, ram, page, shared_memory, hugepage_size=hugepage_size, group_gid=group_gid,
        hugepages_cap=hugepages_cap, hugepages_margin=hugepages_margin, use_hugepages=use_hugepages,
        system=system, numa_node=numa_node, supported_hugepage_sizes=_hugepage_sizes(facts),
        current=facts.get('shm'), keep_higher=keep_higher, etc_system=etc_system)


class FilterModule(object):
    """dbhost.tuning size filters."""

    def filters(self):
        return {
            'to_bytes': _wrap(to_bytes),
            'human_size': _wrap(human_size),
            'to_pages': _wrap(to_pages),
            'shm_settings': _wrap(shm_settings),
        }
