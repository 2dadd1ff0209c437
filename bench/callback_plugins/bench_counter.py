# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark helper (bench/full_bench.py): counts, per host, the tasks and the module round trips.

Not part of the collection. Enabled by the bench with ANSIBLE_CALLBACK_PLUGINS=bench/callback_plugins
and ANSIBLE_CALLBACKS_ENABLED=bench_counter; writes its counts as JSON to $DBHOST_BENCH_COUNTS.

- Module round trips: every module the controller sends to a host goes through
  ActionBase._execute_module (gather_facts' setup, each loop item of a module task, the stat an
  action plugin runs first, ...); under the Mitogen strategy through Mitogen's own override of it.
  Both are wrapped when this plugin is loaded, in the controller's main process, before the workers
  are forked, and each call appends one line "<host>\t<module>" to $DBHOST_BENCH_COUNTS.calls
  (one short O_APPEND write per line, so lines from the forked workers do not interleave).
  Controller-only actions (set_fact, include_role, assert, debug, fail, meta) send nothing and are
  not counted.
- Tasks: every task result a host gets (ok, changed, failed, skipped, unreachable), a loop once;
  skipped ones are also counted on their own.
- Records: the setting records ({name, status, ...}) in the `settings` list of a module result,
  which is how the collection's modules report; by status.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = '''
    name: bench_counter
    type: aggregate
    short_description: Counts tasks and module round trips per host (benchmark helper)
    description:
      - Writes per-host counts of tasks, skipped tasks, module round trips and setting records as JSON.
    requirements:
      - DBHOST_BENCH_COUNTS in the environment, the JSON file to write.
'''

import collections
import functools
import json
import os

from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase

CALLS_SUFFIX = '.calls'
# Actions whose `settings` are copies of records a module already returned, not new ones.
_NOT_RECORDS = frozenset(['set_fact', 'ansible.builtin.set_fact', 'ansible.legacy.set_fact', 'debug',
                          'ansible.builtin.debug', 'ansible.legacy.debug'])


def _calls_file():
    target = os.environ.get('DBHOST_BENCH_COUNTS')
    return target + CALLS_SUFFIX if target else None


def _counting(original):
    @functools.wraps(original)
    def _execute_module(self, module_name=None, module_args=None, tmp=None, task_vars=None, *args, **kwargs):
        target = _calls_file()
        if target:
            host = None
            if task_vars:
                host = task_vars.get('inventory_hostname')
            if not host:
                host = getattr(getattr(self, '_play_context', None), 'remote_addr', None) or '?'
            name = module_name or getattr(getattr(self, '_task', None), 'action', None) or '?'
            line = ('%s\t%s\n' % (host, name)).encode('utf-8', 'replace')
            handle = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(handle, line)
            finally:
                os.close(handle)
        return original(self, module_name, module_args, tmp, task_vars, *args, **kwargs)
    _execute_module.__bench_counting__ = True
    return _execute_module


def _wrap(cls):
    current = cls.__dict__.get('_execute_module')
    if current is not None and not getattr(current, '__bench_counting__', False):
        setattr(cls, '_execute_module', _counting(current))


_wrap(ActionBase)
if os.environ.get('ANSIBLE_STRATEGY', '').startswith('mitogen'):
    # The Mitogen strategy mixes its own _execute_module in front of ActionBase's.
    from ansible_mitogen.mixins import ActionModuleMixin  # pylint: disable=import-error
    _wrap(ActionModuleMixin)


class CallbackModule(CallbackBase):

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'bench_counter'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._tasks = collections.Counter()
        self._skipped = collections.Counter()
        self._failed = collections.Counter()
        self._records = collections.defaultdict(collections.Counter)
        self._names = collections.defaultdict(list)
        self._hosts = set()

    def _records_of(self, result):
        if result._task.action in _NOT_RECORDS:
            return
        body = result._result
        items = body.get('results') if isinstance(body.get('results'), list) else [body]
        for item in items:
            settings = item.get('settings') if isinstance(item, dict) else None
            if isinstance(settings, list):
                for record in settings:
                    if isinstance(record, dict):
                        self._records[result._host.get_name()][str(record.get('status'))] += 1
                        self._names[result._host.get_name()].append('%s %s: %s' % (
                            record.get('target') or '', record.get('name'), record.get('status')))

    def _task_done(self, result, failed=False, skipped=False):
        host = result._host.get_name()
        self._hosts.add(host)
        self._tasks[host] += 1
        if skipped:
            self._skipped[host] += 1
        if failed:
            self._failed[host] += 1
        if not skipped:
            self._records_of(result)

    def v2_runner_on_ok(self, result):
        self._task_done(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._task_done(result, failed=not ignore_errors)

    def v2_runner_on_skipped(self, result):
        self._task_done(result, skipped=True)

    def v2_runner_on_unreachable(self, result):
        self._task_done(result, failed=True)

    def v2_playbook_on_stats(self, stats):
        target = os.environ.get('DBHOST_BENCH_COUNTS')
        if not target:
            return
        calls = collections.defaultdict(collections.Counter)
        try:
            with open(target + CALLS_SUFFIX) as handle:
                for line in handle:
                    host, dummy, module = line.rstrip('\n').partition('\t')
                    calls[host][module] += 1
        except (IOError, OSError):
            pass
        hosts = sorted(self._hosts | set(calls))
        data = dict((host, {
            'tasks': self._tasks[host],
            'skipped': self._skipped[host],
            'failed': self._failed[host],
            'round_trips': sum(calls[host].values()),
            'modules': dict(calls[host]),
            'records': dict(self._records[host]),
            'record_names': self._names[host],
        }) for host in hosts)
        with open(target, 'w') as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
