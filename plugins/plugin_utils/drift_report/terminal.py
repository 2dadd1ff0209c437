# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tables printed at the end of the run: one per host, each line with the state that colours it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.records import DRIFT, UNSUPPORTED, is_clean, is_unsupported
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.text import clip, desired_text, display_names, format_value, plural, reason_text


def _unsupported_count(counts):
    """', 2 unsupported' for the terminal's count lines; nothing when there is none."""
    return ', %d unsupported' % counts['unsupported'] if counts.get('unsupported') else ''


def render_terminal(report, mode='full'):
    """Plain-text tables per host for the end of the run; returns (line, state) pairs."""
    lines = []
    summary = report['summary']
    lines.append(('drift report: %s (%s: %d clean, %d drift, %d failed, %d unreachable; '
                  '%d of %d settings drifted%s)' % (
                      summary['state'], plural(summary['hosts'], 'host'), summary['clean'], summary['drift'], summary['failed'],
                      summary['unreachable'], summary['drifted'], summary['settings'], _unsupported_count(summary)),
                  summary['state']))
    for host, entry in sorted(report['hosts'].items()):
        lines.append(('', None))
        lines.append(('%s: %s (%d settings, %d drifted%s)' % (
            host, entry['state'], entry['counts']['settings'], entry['counts']['drifted'],
            _unsupported_count(entry['counts'])), entry['state']))
        for error in entry['errors']:
            lines.append(('  %s in task %r: %s' % (error['kind'], error['task'], clip(format_value(error['msg']), 200)),
                          error['kind']))
        # The drift view keeps the unsupported rows: what is not applied here is never left out.
        rows = [(name, record) for record, name in zip(entry['settings'], display_names(entry['settings']))
                if mode == 'full' or not is_clean(record['status']) or is_unsupported(record['status'])]
        if rows:
            lines.extend(_terminal_table(rows))
    return lines


def _why(record):
    """The last text column: why a row is not ok (its reason), and for an ok row what makes it so
    (its detail: 'met by FILE', 'in effect and in /etc/fstab'), so that no row is a bare value."""
    if record.get('status') == 'ok':
        return format_value(record.get('detail') or '')
    return reason_text(record)


def _terminal_table(rows):
    """One host's table: a reason / detail column, a source column of numbers that the lines
    under the table spell out (a vendor document's title once, however many rows)."""
    sources = []
    for dummy, record in rows:
        if record.get('source') and record['source'] not in sources:
            sources.append(record['source'])
    header = ('setting', 'desired', 'live', 'persisted', 'status', 'reason / detail') + (
        ('source',) if sources else ())
    cells = [header]
    for name, record in rows:
        row = tuple(clip(format_value(value)) for value in (
            name, desired_text(record), record.get('live'), record.get('persisted'), record['status']))
        row += (clip(_why(record), 100),)
        if sources:
            row += ('[%d]' % (sources.index(record['source']) + 1) if record.get('source') else '-',)
        cells.append(row)
    widths = [max(len(row[column]) for row in cells) for column in range(len(cells[0]))]
    lines = []
    for index, row in enumerate(cells):
        text = '  ' + '  '.join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        status = None if index == 0 else rows[index - 1][1]['status']
        state = UNSUPPORTED if is_unsupported(status) else None if status is None or is_clean(status) else DRIFT
        lines.append((text, state))
    for number, source in enumerate(sources, 1):
        lines.append(('  [%d] %s' % (number, clip(format_value(source), 200)), None))
    return lines
