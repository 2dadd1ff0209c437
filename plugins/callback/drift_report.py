# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: drift_report
type: aggregate
short_description: Write drift reports (JSON, JUnit XML, Markdown) from the collection's setting records
version_added: 0.1.0
description:
  - Collects the C(settings) records that every C(dbhost.tuning) module returns
    (C({name, target, desired, live, persisted, status, detail, source, reason})) from every task result, including
    failed task results and the items of a loop, and writes them per host when the playbook ends.
  - C(drift.json) holds host -> records (each with the task name and the module, its C(source) and C(reason)),
    the state of every host (V(clean), V(drift), V(failed) or V(unreachable)) and an overall summary. Its shape
    is versioned (C(schema_version), now 2) and described by the JSON Schema C(docs/drift-report.schema.json)
    shipped with the collection.
  - C(drift.xml) is a JUnit report with one test suite per host and one test case per setting; a setting
    that drifted is a failing test case whose message gives its reason and the desired, live and persisted
    values; each test case's text names the record's source.
    A host that was unreachable or on which a task failed gets an error test case, so it never reads as clean.
  - C(drift.md) is a table for a person to read in a merge request or a job summary, drifted rows first, with
    the reason and source of each row.
  - A setting counts as clean when its status is V(ok) or V(unsupported); every other status is drift.
  - V(unsupported) records (what this platform or container cannot have, such as a key the running kernel does
    not have, a read-only C(/proc/sys) or a missing sysfs attribute) are counted apart from drift in every report,
    with their reason, and never make a host drift by themselves (C(scripts/drift-check --unsupported-as-drift) counts them as drift).
  - A host is V(failed) when any task on it failed (also when the failure was ignored or rescued, since
    the check is then incomplete), V(unreachable) when a task could not reach it, V(drift) when a record
    drifted, and V(clean) otherwise. The overall state is the worst one, in the order
    V(failed), V(unreachable), V(drift), V(clean).
  - Records are read from the results of this collection's modules (C(dbhost.tuning.*)) only, so that an echo
    of a result (C(debug), C(set_fact)) is never counted twice. A result that failed only because its records
    drifted (C(drift_gate) true, from a module's C(fail_on_drift), the gate of C(playbooks/drift.yml)) counts
    as drift, not as a failed host.
  - Prints a table per host (setting, desired, live, persisted, status; a reason column when a row is not V(ok),
    and a source column of numbers spelled out under the table) at the end of the run.
  - Results are handled in Ansible's main process; ansible-core serializes callback calls, and this plugin
    also holds its own lock, so results arriving interleaved from several forks are safe.
  - Needs enabling, for example with C(ANSIBLE_CALLBACKS_ENABLED=dbhost.tuning.drift_report).
requirements:
  - enable in configuration (C(callbacks_enabled) in C(ansible.cfg) or C(ANSIBLE_CALLBACKS_ENABLED))
options:
  output_dir:
    description:
      - Folder the reports are written to; created when missing. A relative path is relative to the
        current directory of C(ansible-playbook).
      - When not set, C(./drift-report); under ansible-runner (C(AWX_ISOLATED_DATA_DIR) set), the
        C(drift-report) folder inside the job's artifacts folder.
    type: path
    env:
      - name: DBHOST_DRIFT_REPORT_DIR
    ini:
      - section: dbhost_drift_report
        key: output_dir
  formats:
    description: Which reports to write.
    type: list
    elements: str
    choices: [json, junit, markdown]
    default: [json, junit, markdown]
    env:
      - name: DBHOST_DRIFT_REPORT_FORMATS
    ini:
      - section: dbhost_drift_report
        key: formats
  terminal:
    description:
      - What to print at the end of the run. V(full) prints every setting of every host,
        V(drift) only the settings that drifted (and the state of every host), V(none) nothing.
    type: str
    choices: [full, drift, none]
    default: full
    env:
      - name: DBHOST_DRIFT_REPORT_TERMINAL
    ini:
      - section: dbhost_drift_report
        key: terminal
'''

import datetime
import json
import os
import re
import threading
import xml.etree.ElementTree as ET

from ansible.plugins.callback import CallbackBase

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.compare import describe
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import write_atomic
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import CLEAN_STATUSES

# The version of drift.json's shape, which docs/drift-report.schema.json describes (its
# schema_version is a const): 2 added each record's source and reason.  format_version, the
# name version 1 had, stays beside it with the same number.
SCHEMA_VERSION = 2
RECORD_KEYS = ('name', 'target', 'desired', 'live', 'persisted', 'status', 'detail', 'comparison', 'owner', 'kind',
               'source', 'reason')
FILE_NAMES = {'json': 'drift.json', 'junit': 'drift.xml', 'markdown': 'drift.md'}

CLEAN = 'clean'
DRIFT = 'drift'
FAILED = 'failed'
UNREACHABLE = 'unreachable'
# Not applicable here: clean for the verdict, but counted and shown apart from ok and drift.
UNSUPPORTED = 'unsupported'
# Worst first: the overall state (and the drift-check exit code) is the first one any host has.
HOST_STATES = (FAILED, UNREACHABLE, DRIFT, CLEAN)

# Records come from the collection's own modules: anything else (a debug echo of a
# registered result, set_fact) would count them twice.
RECORD_SOURCE = 'dbhost.tuning.'

# XML 1.0 cannot carry most control characters, even escaped.
_XML_INVALID = re.compile(u'[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]')


def plural(count, noun):
    return '%d %s%s' % (count, noun, '' if count == 1 else 's')


def is_clean(status):
    return status in CLEAN_STATUSES


def is_unsupported(status):
    return status == UNSUPPORTED


def _is_record(value):
    return isinstance(value, dict) and 'name' in value and 'status' in value


def records_from_result(result):
    """The setting records in one task result: its own `settings` list and those of its loop items.

    Returns a list of (item_label, record) pairs; item_label is None outside a loop.
    """
    found = []
    if not isinstance(result, dict):
        return found
    settings = result.get('settings')
    if isinstance(settings, list):
        found.extend((None, record) for record in settings if _is_record(record))
    items = result.get('results')
    if isinstance(items, list):
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get('settings'), list):
                continue
            label = item.get('_ansible_item_label', item.get('item'))
            found.extend((label, record) for record in item['settings'] if _is_record(record))
    return found


def _message_of(result):
    if not isinstance(result, dict):
        return str(result)
    items = result.get('results')
    if isinstance(items, list):
        # A loop's own message only says that items failed; theirs say why.
        messages = ['%s: %s' % (_label(item.get('_ansible_item_label', item.get('item'))), _message_of(item))
                    for item in items if isinstance(item, dict) and (item.get('failed') or item.get('unreachable'))]
        if messages:
            return '; '.join(messages)
    for key in ('msg', 'message', 'reason', 'stderr'):
        value = result.get(key)
        if value:
            return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return ''


def _label(value):
    """A loop item label that JSON and the other reports can carry."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


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


class DriftCollector(object):
    """Gathers records and host events; knows nothing of Ansible's objects, so tests can feed it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.hosts = {}
        self.playbooks = []
        self.started = datetime.datetime.now(datetime.timezone.utc)

    def _host(self, host):
        entry = self.hosts.get(host)
        if entry is None:
            entry = self.hosts[host] = {'settings': [], 'errors': []}
        return entry

    def add_result(self, host, task, module, result, failed=False, unreachable=False, ignored=False):
        """One task result for one host; failed/unreachable say which event it came from."""
        with self._lock:
            entry = self._host(host)
            if failed and isinstance(result, dict) and result.get('drift_gate') is True:
                # Failed on its own drifted records (fail_on_drift): drift, not an error.
                failed = False
            if (module or '').startswith(RECORD_SOURCE):
                for item, record in records_from_result(result):
                    row = dict((key, record.get(key)) for key in RECORD_KEYS)
                    row['task'] = task
                    row['module'] = module
                    if item is not None:
                        row['item'] = _label(item)
                    entry['settings'].append(row)
            if unreachable or failed:
                entry['errors'].append({
                    'kind': UNREACHABLE if unreachable else FAILED,
                    'task': task,
                    'module': module,
                    'ignored': bool(ignored),
                    'msg': _message_of(result),
                })

    def add_playbook(self, name):
        with self._lock:
            self.playbooks.append(name)

    def report(self, finished=None):
        with self._lock:
            return build_report(self.hosts, self.playbooks, self.started, finished)


def host_state(entry):
    kinds = set(error['kind'] for error in entry['errors'])
    if FAILED in kinds:
        return FAILED
    if UNREACHABLE in kinds:
        return UNREACHABLE
    if any(not is_clean(record['status']) for record in entry['settings']):
        return DRIFT
    return CLEAN


def build_report(hosts, playbooks=(), started=None, finished=None):
    """The drift.json document: everything the other formats are rendered from."""
    report_hosts = {}
    summary = {'hosts': len(hosts), 'settings': 0, 'drifted': 0, 'unsupported': 0, 'statuses': {}}
    summary.update((state, 0) for state in HOST_STATES)
    for name in sorted(hosts):
        entry = hosts[name]
        state = host_state(entry)
        drifted = sum(1 for record in entry['settings'] if not is_clean(record['status']))
        unsupported = sum(1 for record in entry['settings'] if is_unsupported(record['status']))
        report_hosts[name] = {
            'state': state,
            'settings': [dict(record) for record in entry['settings']],
            'errors': [dict(error) for error in entry['errors']],
            'counts': {'settings': len(entry['settings']), 'drifted': drifted, 'unsupported': unsupported},
        }
        summary[state] += 1
        summary['settings'] += len(entry['settings'])
        summary['drifted'] += drifted
        summary['unsupported'] += unsupported
        for record in entry['settings']:
            status = str(record['status'])
            summary['statuses'][status] = summary['statuses'].get(status, 0) + 1
    summary['state'] = next((state for state in HOST_STATES if summary[state]), CLEAN)
    return {
        'schema_version': SCHEMA_VERSION,
        'format_version': SCHEMA_VERSION,
        'started': started.isoformat() if started else None,
        'finished': finished.isoformat() if finished else None,
        'playbooks': list(playbooks),
        'clean_statuses': list(CLEAN_STATUSES),
        'summary': summary,
        'hosts': report_hosts,
    }


def _display_names(records):
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


def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + '\n'


def _xml_text(value):
    return _XML_INVALID.sub(u'\ufffd', u'%s' % (value,))


def render_junit(report):
    """JUnit XML: <testsuites> with one <testsuite> per host and one <testcase> per setting."""
    def element(parent, tag, **attributes):
        node = ET.SubElement(parent, tag) if parent is not None else ET.Element(tag)
        for key, value in attributes.items():
            node.set(key, _xml_text(value))
        return node

    root = element(None, 'testsuites', name='dbhost.tuning drift')
    totals = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
    for host, entry in sorted(report['hosts'].items()):
        suite = element(root, 'testsuite', name=host, hostname=host)
        counts = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
        properties = element(suite, 'properties')
        element(properties, 'property', name='state', value=entry['state'])
        for error in entry['errors']:
            if error['kind'] == UNREACHABLE:
                name, message = 'host reachable', 'host unreachable'
            else:
                name, message = 'task succeeds: %s' % error['task'], 'task failed'
            case = element(suite, 'testcase', name=name, classname=host)
            detail = element(case, 'error', type=error['kind'],
                             message='%s: %s' % (message, format_value(error['msg'])) if error['msg'] else message)
            detail.text = _xml_text('task: %s\nmodule: %s\n%s' % (error['task'], error['module'], error['msg']))
            counts['tests'] += 1
            counts['errors'] += 1
        for record, name in zip(entry['settings'], _display_names(entry['settings'])):
            module = str(record.get('module') or '').rsplit('.', 1)[-1] or 'settings'
            case = element(suite, 'testcase', name=name, classname='%s.%s' % (host, module))
            counts['tests'] += 1
            text = 'task: %s\nmodule: %s\ntarget: %s\n' % (
                record.get('task'), record.get('module'), format_value(record.get('target')))
            if record.get('item') is not None:
                text += 'item: %s\n' % format_value(record['item'])
            if record.get('detail'):
                text += 'detail: %s\n' % record['detail']
            if record.get('reason'):
                text += 'reason: %s\n' % record['reason']
            text += 'source: %s\n' % format_value(record.get('source'))
            if is_unsupported(record['status']):
                # Not applicable on this host: skipped with the reason, never a pass nor a failure.
                skipped = element(case, 'skipped', message=unsupported_message(record))
                skipped.text = _xml_text(text + 'desired: %s\nlive: %s\npersisted: %s\n' % (
                    desired_text(record), format_value(record.get('live')), format_value(record.get('persisted'))))
                counts['skipped'] += 1
            elif not is_clean(record['status']):
                failure = element(case, 'failure', type=str(record['status']), message=drift_message(record))
                failure.text = _xml_text(text)
                counts['failures'] += 1
            else:
                out = element(case, 'system-out')
                out.text = _xml_text(text + 'value: %s\n' % format_value(record.get('live')))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def _md_cell(value):
    text = format_value(value) if not isinstance(value, str) else ' '.join(value.split())
    return text.replace('\\', '\\\\').replace('|', '\\|')


def sorted_rows(report):
    """(host, display name, record) rows: every drifted row first, then the unsupported ones, then
    the ok ones; hosts by name."""
    drifted, unsupported, clean = [], [], []
    for host, entry in sorted(report['hosts'].items()):
        for record, name in zip(entry['settings'], _display_names(entry['settings'])):
            status = record['status']
            (unsupported if is_unsupported(status) else clean if is_clean(status) else drifted).append(
                (host, name, record))
    return drifted + unsupported + clean


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
    problems = [(host, entry) for host, entry in sorted(report['hosts'].items()) if entry['errors']]
    if problems:
        lines.extend(['## Hosts not checked completely', '',
                      '| host | state | task | error |', '|---|---|---|---|'])
        for host, entry in problems:
            for error in entry['errors']:
                lines.append('| %s | %s | %s | %s |' % (
                    _md_cell(host), error['kind'], _md_cell(error['task']), _md_cell(error['msg'] or '-')))
        lines.append('')
    rows = sorted_rows(report)
    if rows:
        lines.extend(['## Settings: drifted first, then unsupported (not applicable here), then ok', '',
                      '| host | setting | desired | live | persisted | status | reason | source | detail |',
                      '|---|---|---|---|---|---|---|---|---|'])
        for host, name, record in rows:
            status = record['status']
            status = '**%s**' % status if not is_clean(status) else '_%s_' % status if is_unsupported(status) else status
            lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                _md_cell(host), _md_cell(name), _md_cell(desired_text(record)), _md_cell(record.get('live')),
                _md_cell(record.get('persisted')), status, _md_cell(reason_text(record)),
                _md_cell(record.get('source') or ''), _md_cell(record.get('detail') or '')))
    else:
        lines.append('No setting records were reported.')
    counts = ', '.join('%s %d' % (status, count) for status, count in sorted(summary['statuses'].items()))
    if counts:
        lines.extend(['', 'Statuses: %s.' % counts])
    return '\n'.join(lines) + '\n'


def _clip(text, width=48):
    return text if len(text) <= width else text[:width - 3] + '...'


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
            lines.append(('  %s in task %r: %s' % (error['kind'], error['task'], _clip(format_value(error['msg']), 200)),
                          error['kind']))
        # The drift view keeps the unsupported rows: what is not applied here is never left out.
        rows = [(name, record) for record, name in zip(entry['settings'], _display_names(entry['settings']))
                if mode == 'full' or not is_clean(record['status']) or is_unsupported(record['status'])]
        if rows:
            lines.extend(_terminal_table(rows))
    return lines


def _terminal_table(rows):
    """One host's table: a reason column when a row is not ok, a source column of numbers that
    the lines under the table spell out (a vendor document's title once, however many rows)."""
    reasons = any(record['status'] != 'ok' for dummy, record in rows)
    sources = []
    for dummy, record in rows:
        if record.get('source') and record['source'] not in sources:
            sources.append(record['source'])
    header = ('setting', 'desired', 'live', 'persisted', 'status') + (('reason',) if reasons else ()) + (
        ('source',) if sources else ())
    cells = [header]
    for name, record in rows:
        row = tuple(_clip(format_value(value)) for value in (
            name, desired_text(record), record.get('live'), record.get('persisted'), record['status']))
        if reasons:
            row += (_clip(reason_text(record), 100),)
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
        lines.append(('  [%d] %s' % (number, _clip(format_value(source), 200)), None))
    return lines


RENDERERS = {'json': render_json, 'junit': render_junit, 'markdown': render_markdown}


def write_reports(report, output_dir, formats):
    """Write the chosen formats into output_dir; returns the paths written."""
    os.makedirs(output_dir, exist_ok=True)
    written = []
    for fmt in ('json', 'junit', 'markdown'):
        if fmt in formats:
            path = os.path.join(output_dir, FILE_NAMES[fmt])
            write_atomic(path, RENDERERS[fmt](report))
            written.append(path)
    return written


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'dbhost.tuning.drift_report'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None, options=None):
        super(CallbackModule, self).__init__(display=display, options=options)
        self.collector = DriftCollector()

    def output_dir(self):
        configured = self.get_option('output_dir')
        if configured:
            return os.path.abspath(os.path.expanduser(configured))
        artifacts = os.environ.get('AWX_ISOLATED_DATA_DIR')
        if artifacts:
            return os.path.join(artifacts, 'drift-report')
        return os.path.abspath('drift-report')

    @staticmethod
    def _module(task, result):
        if isinstance(result, dict) and isinstance(result.get('results'), list):
            # resolved_action is not reliable after a loop; the written action is.
            return task.action
        return getattr(task, 'resolved_action', None) or task.action

    def _add(self, result, failed=False, unreachable=False, ignored=False):
        task = result.task
        data = result.result
        self.collector.add_result(
            result.host.get_name(), result.task_name or task.get_name(), self._module(task, data), data,
            failed=failed, unreachable=unreachable, ignored=ignored)

    def v2_playbook_on_start(self, playbook):
        self.collector.add_playbook(os.path.basename(getattr(playbook, '_file_name', '') or ''))

    def v2_runner_on_ok(self, result):
        self._add(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._add(result, failed=True, ignored=ignore_errors)

    def v2_runner_on_unreachable(self, result):
        self._add(result, unreachable=True)

    def v2_runner_on_skipped(self, result):
        # A skipped task has no records, but the host was part of the check.
        self._add(result)

    def v2_runner_on_async_ok(self, result):
        self._add(result)

    def v2_runner_on_async_failed(self, result):
        self._add(result, failed=True)

    def v2_playbook_on_stats(self, stats):
        report = self.collector.report(finished=datetime.datetime.now(datetime.timezone.utc))
        output_dir = self.output_dir()
        try:
            written = write_reports(report, output_dir, self.get_option('formats'))
        except (IOError, OSError) as exc:
            self._display.error('drift_report: cannot write the reports to %s: %s' % (output_dir, exc))
            return
        mode = self.get_option('terminal')
        if mode != 'none':
            colors = {CLEAN: 'green', DRIFT: 'bright red', FAILED: 'red', UNREACHABLE: 'red', UNSUPPORTED: 'cyan'}
            self._display.banner('DRIFT REPORT')
            for line, state in render_terminal(report, mode):
                self._display.display(line, color=colors.get(state))
        for path in written:
            self._display.display('drift report: %s' % path)
