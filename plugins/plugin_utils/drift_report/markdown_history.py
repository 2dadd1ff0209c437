# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.md's parts that come from the ledger and the waivers: a record's status with its mark
and waiver, and the sections "Since the last run" and "Waivers"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.history import problems


def status_suffix(record):
    """What follows a record's status in the table: its mark against the last run and its waiver."""
    parts = []
    marked = record.get('since_last')
    if marked:
        text = marked['mark']
        if marked.get('drift_since'):
            text += ' since %s, %d runs' % (marked['drift_since'], marked.get('drift_runs') or 0)
        parts.append(text)
    waiver = record.get('waiver')
    if waiver:
        parts.append(('waived until %s (%s)' if waiver['active'] else 'waiver EXPIRED %s (%s)') % (
            waiver['expires'], waiver['owner']))
    return ' (%s)' % '; '.join(parts) if parts else ''


def _cell(text):
    return str(text).replace('|', '\\|')


def history_markdown(report):
    lines = []
    for problem in problems(report):
        lines.extend(['**Not complete:** %s' % _cell(problem), ''])
    view = report.get('since_last')
    if view:
        counts = view['counts']
        lines.extend(['## Since the last run', ''])
        if view['previous_run']:
            lines.append('Against the run of %s: %d new, %d changed, %d still, %d fixed.' % (
                view['previous_finished'] or view['previous_run'], counts['new'], counts['changed'], counts['still'],
                counts['fixed']))
        else:
            lines.append('First run in this ledger: every drifted setting is new (%d).' % counts['new'])
        if view['hosts_gone']:
            lines.append('')
            lines.append('Hosts in the last run but not in this one: %s.' % ', '.join(view['hosts_gone']))
        if view['hosts_new']:
            lines.append('')
            lines.append('Hosts new in this run: %s.' % ', '.join(view['hosts_new']))
        lines.append('')
    section = report.get('waivers')
    if section and section.get('waivers'):
        waived = report['summary'].get('waived', 0)
        lines.extend(['## Waivers (%s)' % _cell(section.get('file')), '',
                      '%d drifted setting%s waived (not counted as drift); an expired waiver waives nothing.' % (
                          waived, '' if waived == 1 else 's'), '',
                      '| line | hosts | setting | owner | expires | state | matched | reason |',
                      '|---|---|---|---|---|---|---|---|'])
        for waiver in section['waivers']:
            state = 'in force' if waiver['active'] else '**EXPIRED**'
            lines.append('| %d | %s | %s | %s | %s | %s | %d | %s |' % (
                waiver['line'], _cell(waiver['hosts']), _cell(waiver['setting']), _cell(waiver['owner']),
                waiver['expires'], state, waiver['matched'], _cell(waiver['reason'])))
        lines.append('')
    return lines
