# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the block_queue role's variables -> block_queue records and one call.

block_queue_devices items and the role's defaults (scheduler per kind of device, rq_affinity,
read_ahead_kb per workload) become the block_queue module's ``devices``; each attribute is
one record, compared exactly.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import READ_AHEAD_RULES
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call, flag, root_of, text, to_flag, role_var


SELECTOR_KEYS = ('name', 'wwn', 'serial', 'model', 'vendor', 'mount', 'rotational', 'slaves', 'allow_empty')


def read_ahead_rule(v):
    """(read_ahead_kb, comparison, source) of the workload: its rule from sizing/profiles.py
    READ_AHEAD_RULES (dss: at least, a larger read-ahead is kept; oltp: at most), unless the
    value is written with a mark (``=4096`` exact, ``>=``, ``<=``)."""
    workload = role_var(v, 'block_queue_workload')
    read_ahead = role_var(v, 'block_queue_read_ahead_kb')
    if not isinstance(read_ahead, dict):
        raise InputError('block_queue_read_ahead_kb must be a dict of workload: read_ahead_kb, got %r' % (read_ahead,))
    if workload not in read_ahead:
        raise InputError('block_queue_workload: %r is not one of %s' % (workload, ', '.join(sorted(read_ahead))))
    try:
        value, marked = compare.split_marks(text(read_ahead[workload]))
    except compare.ComparisonError as exc:
        raise InputError('block_queue_read_ahead_kb %s: %s' % (workload, exc))
    rule, source = READ_AHEAD_RULES.get(workload, (compare.EXACT, 'block_queue_read_ahead_kb'))
    if marked is not None:
        rule, source = marked, 'block_queue_read_ahead_kb %s, as written' % workload
    if isinstance(rule, list):
        rule = rule[0]
    return int(value) if value.isdigit() else value, (rule, source)


def block_queue_devices(v):
    """The block_queue module's ``devices`` from block_queue_devices and the role's defaults.

    An item without its own scheduler and without ``rotational`` becomes two items, one per
    kind of device, each with its scheduler (the module does not count a kind that finds no
    device as an empty selection).  ``defaults: false`` takes the item's attributes only.
    """
    read_ahead_kb, dummy = read_ahead_rule(v)
    common = {'rq_affinity': role_var(v, 'block_queue_rq_affinity'), 'read_ahead_kb': read_ahead_kb}
    schedulers = {False: role_var(v, 'block_queue_scheduler_nonrotational'),
                  True: role_var(v, 'block_queue_scheduler_rotational')}
    return [device for dummy, device in _devices_by_item(v, common, schedulers)]


def _devices_by_item(v, common, schedulers):
    """(index of the block_queue_devices item, device) pairs: an item may give two devices."""
    out = []
    for index, item in enumerate(role_var(v, 'block_queue_devices') or []):
        if not isinstance(item, dict):
            raise InputError('block_queue_devices[%d] must be a dict' % index)
        item = _item_flags(item, index)
        selector = dict((k, item[k]) for k in SELECTOR_KEYS if k in item)
        own = item.get('attributes') or {}
        if not item['defaults']:
            kinds = [(None, own)]
        elif 'scheduler' in own or 'rotational' in item:
            merged = dict(common, scheduler=schedulers[item.get('rotational', False)])
            merged.update(own)
            kinds = [(None, merged)]
        else:
            kinds = []
            for rotational in (False, True):
                merged = dict(common, scheduler=schedulers[rotational])
                merged.update(own)
                kinds.append((rotational, merged))
        for rotational, attributes in kinds:
            device = dict(selector)
            if rotational is not None:
                device['rotational'] = rotational
            device['attributes'] = dict((k, val) for k, val in attributes.items() if val is not None)
            out.append((index, device))
    return out


def _item_flags(item, index):
    """A block_queue_devices item with its true/false keys as bools (Ansible's rules; "false" is false)."""
    item = dict(item)
    for key in ('rotational', 'slaves', 'allow_empty', 'defaults'):
        if item.get(key) is not None:
            item[key] = to_flag(item[key], 'block_queue_devices[%d].%s' % (index, key))
        elif key in item:
            del item[key]
    item.setdefault('defaults', True)
    return item


def device_label(device, index):
    """How the desired state keys a device of the block_queue module's ``devices``: its selectors."""
    label = ','.join(text(device.get(k)) for k in ('name', 'wwn', 'serial', 'model', 'vendor', 'mount')
                     if k in device) or 'devices[%d]' % index
    if 'rotational' in device:
        label += ' (%s)' % ('rotational' if device['rotational'] else 'non-rotational')
    return label


def compile_block_queue(state, v, facts):
    role = 'block_queue'
    devices = block_queue_devices(v)
    if not devices:
        return
    items = [index for index, dummy in _devices_by_item(v, {}, {False: None, True: None})]
    dummy, (rule, rule_source) = read_ahead_rule(v)
    # an item's own read_ahead_kb is the user's value: exact, for every device then
    own = any('read_ahead_kb' in (item.get('attributes') or {}) for item in role_var(v, 'block_queue_devices') or []
              if isinstance(item, dict))
    comparisons = {} if own or rule == compare.EXACT else {'read_ahead_kb': rule}
    for index, device in enumerate(devices):
        label = device_label(device, index)
        for name, value in sorted(device['attributes'].items()):
            state.add('block_queue', '%s %s' % (label, name), text(value), comparisons.get(name, compare.EXACT), role,
                      rule_source if name in comparisons else
                      'block_queue_devices[%d] and the role defaults (rq_affinity: Linux block queue documentation)'
                      % items[index])
    state.calls.append(Call('block_queue', role, dict(
        devices=devices, apply=flag(v, 'block_queue_apply'), persist=flag(v, 'block_queue_persist'),
        file=role_var(v, 'block_queue_rules_file') or None, allow_empty=flag(v, 'block_queue_allow_empty'),
        reload=flag(v, 'block_queue_reload'), trigger=flag(v, 'block_queue_trigger'),
        backup=flag(v, 'block_queue_backup'), root=root_of(v, 'block_queue_root'), comparisons=comparisons)))
