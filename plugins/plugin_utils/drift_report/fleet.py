# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A drift report across runs and waivers: host states and counts (waived records left out of
the drift), each record's mark against the run before it (new, fixed, still, changed), and the
hosts that came or went.

Standard library only, and no import of the collection's other files, so that scripts/drift_check.py
can load it from a checkout without Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

FAILED = 'failed'
UNREACHABLE = 'unreachable'
DRIFT = 'drift'
CLEAN = 'clean'
HOST_STATES = (FAILED, UNREACHABLE, DRIFT, CLEAN)
MARKS = ('new', 'changed', 'still', 'fixed')


def canonical(value):
    """A record value as the ledger keeps it and compares it: JSON with sorted keys."""
    return json.dumps(value, sort_keys=True, default=str, separators=(',', ':'))


def setting_keys(records):
    """One key per record of a host, stable across runs: name and target, numbered when a host has
    the same setting twice (two tasks checking it)."""
    seen = {}
    keys = []
    for record in records:
        base = str(record.get('name'))
        if record.get('target') not in (None, ''):
            base += ' @ ' + (record['target'] if isinstance(record['target'], str) else canonical(record['target']))
        seen[base] = seen.get(base, 0) + 1
        keys.append(base if seen[base] == 1 else '%s #%d' % (base, seen[base]))
    return keys


def is_waived(record):
    waiver = record.get('waiver')
    return isinstance(waiver, dict) and bool(waiver.get('active'))


def counts_as_drift(record, clean_statuses):
    return record.get('status') not in clean_statuses and not is_waived(record)


def host_state(entry, clean_statuses):
    kinds = set(error.get('kind') for error in entry.get('errors') or [])
    if FAILED in kinds:
        return FAILED
    if UNREACHABLE in kinds:
        return UNREACHABLE
    if any(counts_as_drift(record, clean_statuses) for record in entry.get('settings') or []):
        return DRIFT
    return CLEAN


def restate(report_hosts, clean_statuses):
    """Set every host's state and counts, and return the summary (drift.json's ``summary``).

    A record under an active waiver keeps its status but is not drift; ``waived`` counts it."""
    summary = {'hosts': len(report_hosts), 'settings': 0, 'drifted': 0, 'unsupported': 0, 'statuses': {}}
    summary.update((state, 0) for state in HOST_STATES)
    waived_total = 0
    for name in sorted(report_hosts):
        entry = report_hosts[name]
        settings = entry['settings']
        drifted = sum(1 for record in settings if counts_as_drift(record, clean_statuses))
        waived = sum(1 for record in settings if is_waived(record) and record.get('status') not in clean_statuses)
        counts = {'settings': len(settings), 'drifted': drifted,
                  'unsupported': sum(1 for record in settings if record.get('status') == 'unsupported')}
        if waived:
            counts['waived'] = waived
        entry['counts'] = counts
        entry['state'] = host_state(entry, clean_statuses)
        summary[entry['state']] += 1
        summary['settings'] += len(settings)
        summary['drifted'] += drifted
        summary['unsupported'] += counts['unsupported']
        waived_total += waived
        for record in settings:
            status = str(record.get('status'))
            summary['statuses'][status] = summary['statuses'].get(status, 0) + 1
    if waived_total:
        summary['waived'] = waived_total
    summary['state'] = next((state for state in HOST_STATES if summary[state]), CLEAN)
    return summary


def refresh(report):
    """Recount a whole drift.json document in place after its records changed (waivers)."""
    report['summary'] = restate(report['hosts'], tuple(report['clean_statuses']))
    return report


def _drifted(status, clean_statuses):
    return status not in clean_statuses


def mark_record(record, previous, clean_statuses):
    """The record's mark against the same setting of the same host in the run before, or None
    (ok both times, or a first run): a dict with ``mark`` and, for drift that stays, since when
    and for how many runs (``drift_since``/``drift_runs`` as the ledger counted them)."""
    drifted = _drifted(record.get('status'), clean_statuses)
    was = previous is not None and _drifted(previous['status'], clean_statuses)
    if drifted and not was:
        return {'mark': 'new'}
    if not drifted:
        return {'mark': 'fixed', 'previous_live': previous['live'], 'previous_status': previous['status']} if was else None
    mark = 'still' if canonical(record.get('live')) == canonical(previous['live']) else 'changed'
    found = {'mark': mark, 'drift_since': previous.get('drift_since'), 'drift_runs': (previous.get('drift_runs') or 1) + 1}
    if mark == 'changed':
        found['previous_live'] = previous['live']
    return found


def mark_report(report, previous_run, previous_records):
    """Mark every record of ``report`` against ``previous_records``
    ({host: {setting key: {status, live, drift_since, drift_runs}}}) of ``previous_run``
    ({run_id, finished}, None for the first run of a ledger), and say which hosts came and went."""
    clean_statuses = tuple(report['clean_statuses'])
    counts = dict((mark, 0) for mark in MARKS)
    for host, entry in report['hosts'].items():
        before = previous_records.get(host) or {}
        for key, record in zip(setting_keys(entry['settings']), entry['settings']):
            marked = mark_record(record, before.get(key), clean_statuses) if previous_run else (
                {'mark': 'new'} if _drifted(record.get('status'), clean_statuses) else None)
            if marked:
                record['since_last'] = marked
                counts[marked['mark']] += 1
            else:
                record.pop('since_last', None)
    hosts_now = set(report['hosts'])
    report['since_last'] = {
        'previous_run': previous_run.get('run_id') if previous_run else None,
        'previous_finished': previous_run.get('finished') if previous_run else None,
        'counts': counts,
        'hosts_gone': sorted(set(previous_records) - hosts_now) if previous_run else [],
        'hosts_new': sorted(hosts_now - set(previous_records)) if previous_run else [],
    }
    return report


def new_drift(report):
    """The records a ``--since-last`` verdict fails on: drift that the run before did not have,
    and not waived."""
    clean_statuses = tuple(report['clean_statuses'])
    found = []
    for host, entry in sorted(report['hosts'].items()):
        for record in entry['settings']:
            if (record.get('since_last') or {}).get('mark') == 'new' and counts_as_drift(record, clean_statuses):
                found.append((host, record))
    return found


def since_last_lines(report):
    """The run-to-run view as lines of text, for the terminal and drift-check."""
    view = report.get('since_last')
    if not view:
        return []
    counts = view['counts']
    if not view['previous_run']:
        return ['since last run: first run in this ledger (%d drifted settings, all new)' % counts['new']]
    lines = ['since last run (%s): %d new, %d changed, %d still, %d fixed' % (
        view['previous_finished'] or view['previous_run'], counts['new'], counts['changed'], counts['still'],
        counts['fixed'])]
    if view['hosts_gone']:
        lines.append('  hosts in the last run but not in this one: %s' % ', '.join(view['hosts_gone']))
    if view['hosts_new']:
        lines.append('  hosts new in this run: %s' % ', '.join(view['hosts_new']))
    for host, entry in sorted(report['hosts'].items()):
        for record in entry['settings']:
            marked = record.get('since_last')
            if not marked:
                continue
            text = '  %s %s: %s' % (host, record.get('name'), marked['mark'])
            if marked['mark'] in ('still', 'changed'):
                text += ' (drifted since %s, %d runs)' % (marked.get('drift_since'), marked.get('drift_runs') or 0)
            if 'previous_live' in marked:
                text += ', live was %s' % canonical(marked['previous_live'])
            lines.append(text)
    return lines
