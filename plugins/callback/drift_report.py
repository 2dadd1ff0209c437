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
  - C(drift.html) is one self-contained page (no network access) with a hosts x settings grid coloured by status,
    filters by group, status and setting, each cell's record on hover or click, and the trend of drift from the
    ledger.
  - With a ledger (option O(ledger)), each run's records are appended to it and marked against the run before
    (V(new), V(changed), V(still), V(fixed)); with waivers (option O(waivers)), waived drift does not make a host
    drift until the waiver expires. See docs/USING.md, "Drift over time".
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
  - Prints a table per host (setting, desired, live, persisted, status, reason / detail - the reason of a row that
    is not V(ok), the detail of an V(ok) one - and a source column of numbers spelled out under the table) at the
    end of the run.
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
      - C({job_id}) in the path is replaced by the AWX job's id (C(JOB_ID), which AWX sets for every job),
        so that each job slice writes its own folder on a shared volume (examples/awx/).
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
    choices: [json, junit, markdown, html]
    default: [json, junit, markdown, html]
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
  ledger:
    description:
      - The ledger every run's records are appended to, so that each record is marked against the run
        before (V(new), V(fixed), V(still) with since when and how many runs, V(changed)) and the HTML
        report shows the trend. A file path is a SQLite ledger (created when missing); a
        C(postgresql://) connection string is a PostgreSQL ledger, written through C(psql).
      - Written on the controller when the playbook ends, never by a host. Not set, no ledger.
    type: str
    env:
      - name: DBHOST_DRIFT_LEDGER
    ini:
      - section: dbhost_drift_report
        key: ledger
  ledger_scope:
    description:
      - The series of runs in the ledger a run follows (one per fleet or schedule that shares a ledger);
        a run is marked against the last run of the same scope.
    type: str
    default: default
    env:
      - name: DBHOST_DRIFT_LEDGER_SCOPE
    ini:
      - section: dbhost_drift_report
        key: ledger_scope
  waivers:
    description:
      - A YAML file of waivers (host pattern, setting pattern, reason, owner, expiry date); a drifted
        setting a waiver matches is shown as waived and does not make its host drift until the waiver
        expires. See docs/USING.md.
    type: path
    env:
      - name: DBHOST_DRIFT_WAIVERS
    ini:
      - section: dbhost_drift_report
        key: waivers
'''

import datetime
import os

from ansible.plugins.callback import CallbackBase

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.files import write_reports
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.history import history_lines, place_in_history
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.records import (
    CLEAN, DRIFT, FAILED, UNREACHABLE, UNSUPPORTED, DriftCollector)
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.terminal import render_terminal


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'dbhost.tuning.drift_report'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None, options=None):
        super(CallbackModule, self).__init__(display=display, options=options)
        self.collector = DriftCollector()
        # Each host's inventory groups, for the HTML report's group filter.
        self.groups = {}

    def output_dir(self):
        configured = self.get_option('output_dir')
        if configured:
            configured = configured.replace('{job_id}', os.environ.get('JOB_ID') or 'no-job-id')
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
        if result.host.get_name() not in self.groups:
            groups = getattr(result.host, 'get_groups', lambda: [])()
            self.groups[result.host.get_name()] = sorted(
                group.get_name() for group in groups if group.get_name() not in ('all', 'ungrouped'))
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
        for host, entry in report['hosts'].items():
            entry['groups'] = self.groups.get(host, [])
        place_in_history(report, ledger=self.get_option('ledger'), waivers=self.get_option('waivers'),
                         scope=self.get_option('ledger_scope') or 'default')
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
        for line, problem in history_lines(report):
            if problem:
                self._display.error('drift_report: %s' % line)
            elif mode != 'none':
                self._display.display(line)
        for path in written:
            self._display.display('drift report: %s' % path)
