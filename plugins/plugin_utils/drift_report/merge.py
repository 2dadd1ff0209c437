# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One drift report from the drift.json documents of several slices or shards of one run (AWX job
slices, runner shards): the hosts joined as they are (each record byte for byte as its slice wrote
it), recounted; refused when two slices checked the same host or came from different versions of
the collection, since the result would then not be one run's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import refresh

# What describes a slice's own run and history, not the hosts: set again for the merged run (each
# record keeps the waiver its slice applied; drift-check merge --waivers applies the file again to all).
RUN_KEYS = ('run_id', 'since_last', 'ledger', 'merged_from', 'waivers')


class MergeError(ValueError):
    """Slices that cannot be one report; the message names the files."""


def load_slice(path):
    """A slice's drift.json, from its path or its report folder."""
    if os.path.isdir(path):
        path = os.path.join(path, 'drift.json')
    try:
        with open(path, encoding='utf-8') as stream:
            report = json.load(stream)
    except (IOError, OSError) as exc:
        raise MergeError('cannot read the slice report %s: %s' % (path, exc))
    except ValueError as exc:
        raise MergeError('slice report %s is not JSON: %s' % (path, exc))
    if not isinstance(report, dict) or not isinstance(report.get('hosts'), dict) or 'clean_statuses' not in report:
        raise MergeError('%s is not a drift report (no hosts or clean_statuses)' % path)
    return path, report


def _same(slices, key, what):
    values = {}
    for path, report in slices:
        values.setdefault(json.dumps(report.get(key), sort_keys=True), []).append(path)
    if len(values) > 1:
        raise MergeError('the slices come from different %s: %s' % (what, '; '.join(
            '%s in %s' % (value, ', '.join(paths)) for value, paths in sorted(values.items()))))


def merge_reports(slices):
    """``slices``: (path, drift.json document) pairs; returns the merged document (without a
    run_id: history.place_in_history gives it one)."""
    if not slices:
        raise MergeError('no slice report given')
    _same(slices, 'collection_version', 'collection versions')
    _same(slices, 'schema_version', 'report schema versions')
    _same(slices, 'clean_statuses', 'clean statuses')
    owner = {}
    for path, report in slices:
        for host in report['hosts']:
            if host in owner:
                raise MergeError('host %s is in two slices, %s and %s: the slices overlap' % (host, owner[host], path))
            owner[host] = path
    first = slices[0][1]
    merged = dict((key, value) for key, value in first.items() if key not in RUN_KEYS)
    merged['hosts'] = {}
    merged['playbooks'] = []
    for path, report in slices:
        for name in report.get('playbooks') or []:
            if name not in merged['playbooks']:
                merged['playbooks'].append(name)
        for host, entry in report['hosts'].items():
            for record in entry.get('settings') or []:
                record.pop('since_last', None)
            merged['hosts'][host] = entry
    times = [report.get(key) for dummy, report in slices for key in ('started', 'finished') if report.get(key)]
    merged['started'] = min([report['started'] for dummy, report in slices if report.get('started')] or [None])
    merged['finished'] = max(times) if times else None
    merged['merged_from'] = [report.get('run_id') or path for path, report in slices]
    merged['hosts'] = dict(sorted(merged['hosts'].items()))
    return refresh(merged)
