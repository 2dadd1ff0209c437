# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift report's data: setting records gathered from task results, and the drift.json
document (host states, counts) every format is rendered from.

Knows no kind of setting by name: a record is any dict with a `name` and a `status`."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import threading

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import CLEAN_STATUSES
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import restate

# The version of drift.json's shape, which docs/drift-report.schema.json describes (its
# schema_version is a const): 2 added each record's source and reason.  format_version, the
# name version 1 had, stays beside it with the same number.
SCHEMA_VERSION = 2
RECORD_KEYS = ('name', 'target', 'desired', 'live', 'persisted', 'status', 'detail', 'comparison', 'owner', 'kind',
               'source', 'reason')

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
    report_hosts = dict((name, {'settings': [dict(record) for record in hosts[name]['settings']],
                                'errors': [dict(error) for error in hosts[name]['errors']]})
                        for name in sorted(hosts))
    # fleet.restate counts once for a fresh report and again after waivers are applied.
    summary = restate(report_hosts, CLEAN_STATUSES)
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
