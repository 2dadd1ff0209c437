# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waivers: known drift accepted until a date, read from a YAML file.

    waivers:
      - hosts: "db4*"              # a host pattern (fnmatch: * ? [..])
        setting: vm.swappiness     # a setting pattern: the name, or "name @ target"
        reason: the batch window needs it until the disks are replaced
        owner: dba-team
        expires: 2027-01-31        # the last day the waiver holds (UTC)

A drifted record matched by a waiver that has not expired is waived: it keeps its status, carries
the waiver, and does not make its host drift. A waiver past its date waives nothing: the record
stays drift and carries the expired waiver, so the report says why it fails. A waiver that matches
no drifted record is listed as matching nothing. PyYAML is needed only when a waiver file is given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import fnmatch

FIELDS = ('hosts', 'setting', 'reason', 'owner', 'expires')


class WaiverError(ValueError):
    """A waiver file that cannot be used; the message names the file and the line."""


def _yaml():
    try:
        import yaml
    except ImportError:
        raise WaiverError('reading a waiver file needs PyYAML (python3-yaml), which this Python does not have')
    return yaml


def _where(path, node):
    return '%s line %d' % (path, node.start_mark.line + 1)


def _scalar(path, node, field, yaml):
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise WaiverError('%s: %r must be a non-empty text' % (_where(path, node), field))
    return str(node.value).strip()


def _expiry(path, node, yaml):
    text = _scalar(path, node, 'expires', yaml)
    parts = text.split('-')
    try:
        if len(parts) != 3 or not all(part.isdigit() for part in parts):
            raise ValueError(text)
        return datetime.date(int(parts[0]), int(parts[1]), int(parts[2]))
    except ValueError:
        raise WaiverError('%s: expires %r is not a date (YYYY-MM-DD)' % (_where(path, node), text))


def _one(path, node, index, yaml):
    if not isinstance(node, yaml.MappingNode):
        raise WaiverError('%s: waiver %d is not a mapping of %s' % (_where(path, node), index, ', '.join(FIELDS)))
    fields = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        if key not in FIELDS:
            raise WaiverError('%s: waiver %d has an unknown key %r (known: %s)' % (
                _where(path, key_node), index, key, ', '.join(FIELDS)))
        if key in fields:
            raise WaiverError('%s: waiver %d gives %r twice' % (_where(path, key_node), index, key))
        fields[key] = _expiry(path, value_node, yaml) if key == 'expires' else _scalar(path, value_node, key, yaml)
    missing = [field for field in FIELDS if field not in fields]
    if missing:
        raise WaiverError('%s: waiver %d has no %s' % (_where(path, node), index, ', '.join(missing)))
    fields['line'] = node.start_mark.line + 1
    return fields


def parse_waivers(text, path='waivers'):
    """The waivers of a YAML text, each a dict of FIELDS (expires a date) and its line; every
    problem raises WaiverError naming ``path`` and the line."""
    yaml = _yaml()
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        line = ' line %d' % (mark.line + 1) if mark is not None else ''
        raise WaiverError('%s%s: not valid YAML: %s' % (path, line, getattr(exc, 'problem', None) or exc))
    if root is None:
        return []
    items = root
    if isinstance(root, yaml.MappingNode):
        found = [value for key, value in root.value if key.value == 'waivers']
        others = [key for key, value in root.value if key.value != 'waivers']
        if others:
            raise WaiverError('%s: unknown key %r; the file holds a list under "waivers"' % (
                _where(path, others[0]), others[0].value))
        if not found:
            return []
        items = found[0]
    if isinstance(items, yaml.ScalarNode) and items.value in ('', '~', 'null'):
        return []
    if not isinstance(items, yaml.SequenceNode):
        raise WaiverError('%s: the waivers must be a list' % _where(path, items))
    return [_one(path, node, index, yaml) for index, node in enumerate(items.value, 1)]


def load_waivers(path):
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except (IOError, OSError) as exc:
        raise WaiverError('cannot read the waiver file %s: %s' % (path, exc))
    return parse_waivers(text, path)


def _names(record):
    name = str(record.get('name'))
    target = record.get('target')
    return (name, '%s @ %s' % (name, target)) if target not in (None, '') else (name,)


def _public(waiver, today):
    return {'hosts': waiver['hosts'], 'setting': waiver['setting'], 'reason': waiver['reason'],
            'owner': waiver['owner'], 'expires': waiver['expires'].isoformat(), 'line': waiver['line'],
            'active': waiver['expires'] >= today}


def apply_waivers(report, waivers, today, path=None):
    """Mark the drifted records of a drift.json document that a waiver matches (the first waiver
    that matches wins) and add ``report['waivers']``; the caller recounts (fleet.refresh)."""
    clean_statuses = tuple(report['clean_statuses'])
    used = [0] * len(waivers)
    for host, entry in sorted(report['hosts'].items()):
        for record in entry['settings']:
            record.pop('waiver', None)
            if record.get('status') in clean_statuses:
                continue
            names = _names(record)
            for index, waiver in enumerate(waivers):
                if fnmatch.fnmatchcase(host, waiver['hosts']) and any(
                        fnmatch.fnmatchcase(name, waiver['setting']) for name in names):
                    record['waiver'] = _public(waiver, today)
                    used[index] += 1
                    break
    report['waivers'] = {
        'file': path,
        'today': today.isoformat(),
        'waivers': [dict(_public(waiver, today), matched=count) for waiver, count in zip(waivers, used)],
    }
    return report


def waiver_lines(report):
    """What the waivers did, as lines of text: expired ones that fail the run, ones that match nothing."""
    section = report.get('waivers')
    if not section:
        return []
    lines = []
    waived = report['summary'].get('waived', 0)
    if waived:
        lines.append('waived: %d drifted setting%s accepted by a waiver' % (waived, '' if waived == 1 else 's'))
    for waiver in section['waivers']:
        where = '%s line %d' % (section.get('file') or 'waivers', waiver['line'])
        if not waiver['active'] and waiver['matched']:
            lines.append('waiver EXPIRED on %s (%s, owner %s): hosts %s setting %s is drift again (%d setting%s)' % (
                waiver['expires'], where, waiver['owner'], waiver['hosts'], waiver['setting'], waiver['matched'],
                '' if waiver['matched'] == 1 else 's'))
        elif not waiver['matched']:
            lines.append('waiver matches nothing (%s): hosts %s setting %s%s' % (
                where, waiver['hosts'], waiver['setting'], ', expired on %s' % waiver['expires']
                if not waiver['active'] else ''))
    return lines
