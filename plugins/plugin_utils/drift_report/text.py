# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a record's values read in every report: one line of text per value, the desired value
with its comparison, a row's name and reason, the messages of a drifted or unsupported record."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.compare import describe


def plural(count, noun):
    return '%d %s%s' % (count, noun, '' if count == 1 else 's')


def clip(text, width=48):
    return text if len(text) <= width else text[:width - 3] + '...'


def format_value(value):
    """A record value as one line of text: lists joined by spaces, null as `-`."""
    if value is None:
        return '-'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return ' '.join(format_value(part) for part in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return ' '.join(str(value).split()) if '\n' in str(value) else str(value)


def desired_text(record):
    """The desired value as a person reads it: ``>= 250 32000 100 128`` for a minimum."""
    desired = record.get('desired')
    if desired is None or isinstance(desired, dict):
        return format_value(desired)
    return describe(format_value(desired), record.get('comparison') or 'exact')


def display_names(records):
    """Setting names as shown in tables: the target is added only where the same name has
    several targets on one host (the same block queue attribute on two devices)."""
    targets = {}
    for record in records:
        targets.setdefault(str(record['name']), set()).add(format_value(record.get('target')))
    names = []
    for record in records:
        name = str(record['name'])
        if len(targets[name]) > 1 and record.get('target') not in (None, ''):
            name = '%s (%s)' % (name, format_value(record['target']))
        names.append(name)
    return names


def reason_text(record):
    """Why a row is not ok: the record's reason; the detail where a module gave none; '' for ok."""
    if record.get('status') == 'ok':
        return ''
    return format_value(record.get('reason') or record.get('detail') or '-')


def unsupported_message(record):
    return 'unsupported: %s (desired %s)' % (record.get('reason') or record.get('detail') or 'not on this host',
                                             desired_text(record))


def drift_message(record):
    values = 'desired %s, live %s, persisted %s (%s)' % (
        desired_text(record), format_value(record.get('live')),
        format_value(record.get('persisted')), record.get('status'))
    return '%s: %s' % (format_value(record['reason']), values) if record.get('reason') else values
