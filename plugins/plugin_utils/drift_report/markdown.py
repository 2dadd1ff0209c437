# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.md: the report as a Markdown table for a person, drifted rows first."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.markdown_history import history_markdown, status_suffix
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.records import is_clean, is_unsupported
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.text import desired_text, display_names, format_value, plural, reason_text


def _md_cell(value):
    text = format_value(value) if not isinstance(value, str) else ' '.join(value.split())
    return text.replace('\\', '\\\\').replace('|', '\\|')


def sorted_rows(report):
    """(host, display name, record) rows: every drifted row first, then the unsupported ones, then
    the ok ones; hosts by name."""
    drifted, unsupported, clean = [], [], []
    for host, entry in sorted(report['hosts'].items()):
        for record, name in zip(entry['settings'], display_names(entry['settings'])):
            status = record['status']
            (unsupported if is_unsupported(status) else clean if is_clean(status) else drifted).append(
                (host, name, record))
    return drifted + unsupported + clean


def _error_lines(report):
    problems = [(host, entry) for host, entry in sorted(report['hosts'].items()) if entry['errors']]
    if not problems:
        return []
    lines = ['## Hosts not checked completely', '', '| host | state | task | error |', '|---|---|---|---|']
    for host, entry in problems:
        for error in entry['errors']:
            lines.append('| %s | %s | %s | %s |' % (
                _md_cell(host), error['kind'], _md_cell(error['task']), _md_cell(error['msg'] or '-')))
    lines.append('')
    return lines


def _setting_lines(rows):
    lines = ['## Settings: drifted first, then unsupported (not applicable here), then ok', '',
             '| host | setting | desired | live | persisted | status | reason | source | detail |',
             '|---|---|---|---|---|---|---|---|---|']
    for host, name, record in rows:
        status = record['status']
        status = '**%s**' % status if not is_clean(status) else '_%s_' % status if is_unsupported(status) else status
        status += status_suffix(record)
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            _md_cell(host), _md_cell(name), _md_cell(desired_text(record)), _md_cell(record.get('live')),
            _md_cell(record.get('persisted')), status, _md_cell(reason_text(record)),
            _md_cell(record.get('source') or ''), _md_cell(record.get('detail') or '')))
    return lines


def render_markdown(report):
    summary = report['summary']
    lines = [
        '# Drift report: %s' % summary['state'],
        '',
        '%s: %d clean, %d drift, %d failed, %d unreachable. %s checked, %d drifted, %d unsupported.' % (
            plural(summary['hosts'], 'host'), summary['clean'], summary['drift'], summary['failed'], summary['unreachable'],
            plural(summary['settings'], 'setting'), summary['drifted'], summary.get('unsupported', 0)),
        '',
    ]
    lines.extend(_error_lines(report))
    lines.extend(history_markdown(report))
    rows = sorted_rows(report)
    if rows:
        lines.extend(_setting_lines(rows))
    else:
        lines.append('No setting records were reported.')
    counts = ', '.join('%s %d' % (status, count) for status, count in sorted(summary['statuses'].items()))
    if counts:
        lines.extend(['', 'Statuses: %s.' % counts])
    return '\n'.join(lines) + '\n'
