# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for dbhost.tuning.drift_gate: fail a drift check with a short summary.

A task that fails prints its whole result, and a host_state result holds every record
(tens of thousands of characters for one host). So drift.yml registers host_state's
result without failing, and this gate, which runs on the controller only, fails with a
few lines a person reads at a glance: how many settings drifted and the first few with
their reason. The records stay in the registered result and in the drift reports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.compare import describe
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import CLEAN_STATUSES

SHOWN = 5            # drifted settings named in the message
DETAIL_WIDTH = 120   # characters of a record's detail shown
CALLBACK = 'dbhost.tuning.drift_report'
# The report files of the callback's formats, in the order the message names them.
REPORT_FILES = (('markdown', 'drift.md'), ('json', 'drift.json'), ('junit', 'drift.xml'))


def _text(value):
    if value is None:
        return '-'
    if isinstance(value, (list, tuple)):
        return ' '.join(str(part) for part in value)
    return ' '.join(str(value).split())


def reason(record):
    """Why one record counts as drift, in one line: its status, the values, its reason and its detail."""
    desired = record.get('desired')
    desired_text = _text(describe(_text(desired), record.get('comparison') or 'exact')) \
        if desired is not None and not isinstance(desired, dict) else _text(desired)
    words = '%s: desired %s, live %s, persisted %s' % (
        record.get('status'), desired_text, _text(record.get('live')), _text(record.get('persisted')))
    if record.get('reason'):
        words += ' - %s' % _text(record['reason'])
    detail = _text(record.get('detail')) if record.get('detail') else ''
    if detail:
        if len(detail) > DETAIL_WIDTH:
            detail = detail[:DETAIL_WIDTH - 3] + '...'
        words += ' (%s)' % detail
    return words


def written_reports(enabled=None, formats=None):
    """The report files this run writes: () when the drift_report callback is not enabled (ansible-playbook
    alone), else those of its formats (DBHOST_DRIFT_REPORT_FORMATS; drift.md and drift.json by default)."""
    if enabled is None:
        enabled = C.config.get_config_value('CALLBACKS_ENABLED') or []
    if isinstance(enabled, str):
        enabled = enabled.split(',')
    if CALLBACK not in [str(entry).strip() for entry in enabled]:
        return ()
    if formats is None:
        formats = os.environ.get('DBHOST_DRIFT_REPORT_FORMATS')
    chosen = ['json', 'junit', 'markdown'] if formats is None else [part.strip() for part in formats.split(',')]
    return tuple(file_name for kind, file_name in REPORT_FILES if kind in chosen)


def where(name, reports):
    """The message's last line: where the full records are, true to whether reports are written."""
    if reports:
        return 'Every record is in %s and in the drift reports (%s).' % (name, ', '.join(reports))
    return ('Every record is in %s; no drift report is written by this run: enable the %s callback '
            '(ANSIBLE_CALLBACKS_ENABLED=%s) or run scripts/drift-check for drift.md and drift.json.'
            % (name, CALLBACK, CALLBACK))


def summary(records, name='the registered result', reports=('drift.md', 'drift.json')):
    """(drifted count, message) for a list of records; message is None when nothing drifted. ``reports``:
    the report files this run writes (written_reports()), named in the message's last line."""
    records = [record for record in records or [] if isinstance(record, dict)]
    drifted = [record for record in records if record.get('status') not in CLEAN_STATUSES]
    if not drifted:
        return 0, None
    lines = ['%d of %d setting%s drifted:' % (len(drifted), len(records), '' if len(records) == 1 else 's')]
    for record in drifted[:SHOWN]:
        lines.append('%s - %s' % (record.get('name'), reason(record)))
    if len(drifted) > SHOWN:
        lines.append('... and %d more' % (len(drifted) - SHOWN))
    lines.append(where(name, reports))
    return len(drifted), '\n'.join(lines)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        unknown = sorted(set(args) - set(['result', 'name']))
        if unknown:
            raise AnsibleActionFail('drift_gate: unknown option(s) %s (it takes result and name)' % ', '.join(unknown))
        checked = args.get('result')
        if not isinstance(checked, dict) or not isinstance(checked.get('settings'), list):
            raise AnsibleActionFail('drift_gate: result must be the registered result of a dbhost.tuning module '
                                    '(a dict with settings), got %s' % type(checked).__name__)
        drifted, message = summary(checked['settings'], args.get('name') or 'the registered result',
                                   written_reports())
        result.update(changed=False, drifted=drifted, settings_checked=len(checked['settings']))
        if message:
            # drift_gate: the drift report counts this host as drifted, not as failed.
            result.update(failed=True, drift_gate=True, msg=message)
        else:
            result['msg'] = 'no setting drifted (%d checked)' % len(checked['settings'])
        return result
