# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift_report callback fed recorded task results (tests/unit/fixtures/drift/events.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import random
import threading
import xml.etree.ElementTree as ET

import pytest
import xmlschema
import yaml

from ansible_collections.dbhost.tuning.plugins.callback import drift_report
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import markdown, records, terminal
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import text as report_text
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import result as _result

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'drift')
SCHEMA = xmlschema.XMLSchema(os.path.join(FIXTURES, 'junit.xsd'))


def load_events():
    with open(os.path.join(FIXTURES, 'events.yml')) as stream:
        return yaml.safe_load(stream)['events']


class FakeHost(object):
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class FakeTask(object):
    def __init__(self, name, action, tags):
        self.name = name
        self.action = action
        self.resolved_action = action
        self.tags = tags

    def get_name(self):
        return self.name


class FakeResult(object):
    """What ansible-core 2.19 hands a callback: host, task, task_name and result."""

    def __init__(self, event):
        self.host = FakeHost(event['host'])
        self.task = FakeTask(event['task'], event['action'], event.get('tags', []))
        self.task_name = event['task']
        self.result = event['result']


class FakeDisplay(object):
    verbosity = 0

    def __init__(self):
        self.lines = []
        self.errors = []

    def display(self, msg, color=None, **kwargs):
        self.lines.append(msg)

    def banner(self, msg, **kwargs):
        self.lines.append('== %s' % msg)

    def error(self, msg, **kwargs):
        self.errors.append(msg)


def make_callback(tmp_path, **options):
    display = FakeDisplay()
    callback = drift_report.CallbackModule(display=display)
    callback._plugin_options = {'output_dir': str(tmp_path / 'reports'), 'formats': ['json', 'junit', 'markdown'],
                                'terminal': 'full', 'ledger': None, 'ledger_scope': 'default', 'waivers': None}
    callback._plugin_options.update(options)
    return callback, display


def feed(callback, events):
    for event in events:
        result = FakeResult(event)
        if event['event'] == 'ok':
            callback.v2_runner_on_ok(result)
        elif event['event'] == 'failed':
            callback.v2_runner_on_failed(result, ignore_errors=event.get('ignore_errors', False))
        elif event['event'] == 'unreachable':
            callback.v2_runner_on_unreachable(result)
        elif event['event'] == 'skipped':
            callback.v2_runner_on_skipped(result)
        else:
            raise AssertionError('unknown event %r' % event['event'])


def run(tmp_path, events=None, **options):
    callback, display = make_callback(tmp_path, **options)
    feed(callback, load_events() if events is None else events)
    callback.v2_playbook_on_stats(None)
    return callback, display, tmp_path / 'reports'


def read_json(folder):
    with open(str(folder / 'drift.json')) as stream:
        return json.load(stream)


def without_times(report):
    return dict((key, value) for key, value in report.items() if key not in ('started', 'finished', 'run_id'))


def test_clean_statuses_come_from_the_engine():
    assert records.CLEAN_STATUSES is _result.CLEAN_STATUSES
    assert [s for s in _result.STATUSES if records.is_clean(s)] == ['ok', 'unsupported']


def test_host_states_and_summary(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    report = read_json(folder)
    states = dict((host, entry['state']) for host, entry in report['hosts'].items())
    assert states == {'db1': 'clean', 'db2': 'drift', 'db3': 'failed', 'db4': 'unreachable', 'db5': 'drift'}
    assert report['summary'] == {
        'state': 'failed', 'hosts': 5, 'clean': 1, 'drift': 2, 'failed': 1, 'unreachable': 1,
        'settings': 11, 'drifted': 5, 'unsupported': 1,
        'statuses': {'ok': 5, 'unsupported': 1, 'drift': 2, 'shadowed': 1, 'failed': 1, 'pending_reboot': 1},
    }
    assert report['clean_statuses'] == ['ok', 'unsupported']
    assert report['schema_version'] == report['format_version'] == 2
    counts = dict((host, entry['counts']) for host, entry in report['hosts'].items())
    assert counts['db1'] == {'settings': 3, 'drifted': 0, 'unsupported': 1}
    assert counts['db2'] == {'settings': 3, 'drifted': 2, 'unsupported': 0}


UNSUPPORTED_EVENTS = [
    {'event': 'ok', 'host': 'ct1', 'task': 'Kernel parameters', 'action': 'dbhost.tuning.kernel_params',
     'result': {'changed': False, 'settings': [
         {'name': 'kernel.shmmni', 'target': '/etc/sysctl.d/90-dbhost-tuning.conf', 'desired': '4096',
          'live': '4096', 'persisted': '4096', 'status': 'ok', 'detail': ''},
         {'name': 'net.bridge.bridge-nf-call-iptables', 'target': '/etc/sysctl.d/90-dbhost-tuning.conf',
          'desired': '0', 'live': None, 'persisted': '0', 'status': 'unsupported',
          'detail': 'no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel: not set live',
          'comparison': 'exact'},
         {'name': 'vm.swappiness', 'target': '/etc/sysctl.d/90-dbhost-tuning.conf', 'desired': '10',
          'live': '60', 'persisted': None, 'status': 'unsupported', 'detail': 'read-only /proc/sys: not set live',
          'comparison': 'exact'}]}},
    {'event': 'ok', 'host': 'ct2', 'task': 'Kernel parameters', 'action': 'dbhost.tuning.kernel_params',
     'result': {'changed': False, 'settings': [
         {'name': 'kernel.shmmni', 'target': '/etc/sysctl.d/90-dbhost-tuning.conf', 'desired': '4096',
          'live': '4096', 'persisted': '4096', 'status': 'ok', 'detail': ''}]}},
]


def test_unsupported_is_counted_apart_in_every_report(tmp_path):
    """Only unsupported records besides ok ones: every host clean, and every report counts them apart."""
    dummy, display, folder = run(tmp_path, UNSUPPORTED_EVENTS)
    report = read_json(folder)
    assert report['summary'] == {
        'state': 'clean', 'hosts': 2, 'clean': 2, 'drift': 0, 'failed': 0, 'unreachable': 0,
        'settings': 4, 'drifted': 0, 'unsupported': 2, 'statuses': {'ok': 2, 'unsupported': 2}}
    assert report['hosts']['ct1']['state'] == 'clean'
    assert report['hosts']['ct1']['counts'] == {'settings': 3, 'drifted': 0, 'unsupported': 2}
    # JUnit: skipped with the reason and the desired value; no failure, and the suite passes
    SCHEMA.validate(str(folder / 'drift.xml'))
    root = ET.parse(str(folder / 'drift.xml')).getroot()
    assert (root.get('tests'), root.get('failures'), root.get('errors'), root.get('skipped')) == ('4', '0', '0', '2')
    skipped = dict((case.get('name'), case.find('skipped')) for case in root.iter('testcase')
                   if case.find('skipped') is not None)
    assert sorted(skipped) == ['net.bridge.bridge-nf-call-iptables', 'vm.swappiness']
    assert skipped['vm.swappiness'].get('message') == 'unsupported: read-only /proc/sys: not set live (desired 10)'
    assert 'live: 60\n' in skipped['vm.swappiness'].text
    # Markdown: counted in the summary line, listed after drift and before ok, marked
    markdown = (folder / 'drift.md').read_text()
    assert '2 hosts: 2 clean, 0 drift, 0 failed, 0 unreachable. 4 settings checked, 0 drifted, 2 unsupported.' in markdown
    rows = [line for line in markdown.splitlines() if line.startswith('| ct')]
    # records without a reason of their own (an older module's): the detail says why
    assert rows == [
        '| ct1 | net.bridge.bridge-nf-call-iptables | 0 | - | 0 | _unsupported_ | '
        'no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel: not set live |  | '
        'no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel: not set live |',
        '| ct1 | vm.swappiness | 10 | 60 | - | _unsupported_ | read-only /proc/sys: not set live |  | '
        'read-only /proc/sys: not set live |',
        '| ct1 | kernel.shmmni | 4096 | 4096 | 4096 | ok |  |  |  |',
        '| ct2 | kernel.shmmni | 4096 | 4096 | 4096 | ok |  |  |  |',
    ]
    assert markdown.endswith('Statuses: ok 2, unsupported 2.\n')
    # terminal: counted in the summary line and per host, with a reason column
    assert display.lines[1] == ('drift report: clean (2 hosts: 2 clean, 0 drift, 0 failed, 0 unreachable; '
                                '0 of 4 settings drifted, 2 unsupported)')
    text = '\n'.join(display.lines)
    assert ('ct1: clean (3 settings, 0 drifted, 2 unsupported)\n'
            '  setting                             desired  live  persisted  status       reason / detail\n'
            '  kernel.shmmni                       4096     4096  4096       ok\n'
            '  net.bridge.bridge-nf-call-iptables  0        -     0          unsupported  '
            'no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel: not set live\n'
            '  vm.swappiness                       10       60    -          unsupported  '
            'read-only /proc/sys: not set live\n') in text
    # a table whose rows are all ok keeps its reason / detail column (empty where a record has no
    # detail), and has no source column without sources
    assert 'ct2: clean (1 settings, 0 drifted)\n' in text
    assert '  setting        desired  live  persisted  status  reason / detail\n  kernel.shmmni  4096' in text
    # the drift-only view still lists the unsupported rows, never the ok ones
    dummy, display, dummy = run(tmp_path / 'drift-only', UNSUPPORTED_EVENTS, terminal='drift')
    statuses = [line.split()[4] for line in display.lines if line.startswith('  ') and not line.startswith('  setting')
                and not line.startswith('  [')]
    assert statuses == ['unsupported', 'unsupported']


def test_records_carry_task_module_and_item(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    report = read_json(folder)
    db5 = report['hosts']['db5']['settings']
    assert [(r['name'], r['target'], r['item'], r['status']) for r in db5] == [
        ('queue/rq_affinity', 'sda', 'sda', 'ok'),
        ('queue/rq_affinity', 'sdb', 'sdb', 'drift'),
        ('queue/scheduler', 'sdb', 'sdb', 'pending_reboot'),
    ]
    assert set(r['task'] for r in db5) == {'Set block queue attributes'}
    assert set(r['module'] for r in db5) == {'dbhost.tuning.sysfs_attr'}
    sem = report['hosts']['db2']['settings'][1]
    assert sem == {
        'name': 'kernel.sem', 'target': '/etc/sysctl.d/90-dbhost-tuning.conf', 'desired': '250 32000 100 128',
        'live': '32000 1024000000 500 32000', 'persisted': '250 32000 100 128', 'status': 'drift',
        'detail': 'would set the live value', 'task': 'Set kernel parameters', 'module': 'dbhost.tuning.kernel_params',
        'comparison': None, 'owner': None, 'kind': None, 'reason': 'live below the minimum 250 32000 100 128',
        'source': 'Oracle Database Installation Guide for Linux (19c, 21c, 23ai), "Minimum Parameter Settings for '
                  'Installation" (profile oracle)',
    }
    assert 'item' not in sem
    # a record of a module that gave neither still has both keys, null
    shmmni = report['hosts']['db2']['settings'][0]
    assert (shmmni['source'], shmmni['reason']) == (None, None)


def test_debug_echo_and_gate_are_not_counted(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    db2 = read_json(folder)['hosts']['db2']
    # The debug task echoed kernel.sem: it is reported once, from the module's task.
    assert [r['name'] for r in db2['settings']] == ['kernel.shmmni', 'kernel.sem', 'vm.swappiness']
    # The module failed on its own drift (drift_gate): the host drifted, it did not fail.
    assert db2['errors'] == [] and db2['state'] == 'drift'


def test_a_failure_without_drift_gate_is_a_failure_whatever_its_task(tmp_path):
    # No task name, tag or action is special: only the result's drift_gate says "this is drift".
    events = [
        {'event': 'failed', 'host': 'db7', 'task': 'Fail when the host drifted', 'action': 'ansible.builtin.fail',
         'tags': ['dbhost_drift_gate'], 'result': {'failed': True, 'msg': 'drifted'}},
        {'event': 'failed', 'host': 'db8', 'task': 'Check', 'action': 'dbhost.tuning.host_state',
         'result': {'failed': True, 'drift_gate': False, 'msg': 'no such user oracle',
                    'settings': [{'name': 'kernel.sem', 'status': 'drift'}]}},
    ]
    dummy, dummy, folder = run(tmp_path, events)
    hosts = read_json(folder)['hosts']
    assert hosts['db7']['state'] == 'failed' and hosts['db7']['errors'][0]['msg'] == 'drifted'
    assert hosts['db8']['state'] == 'failed' and [r['name'] for r in hosts['db8']['settings']] == ['kernel.sem']


def test_records_come_from_the_collection_modules_only(tmp_path):
    record = {'name': 'kernel.sem', 'status': 'drift'}
    events = [{'event': 'ok', 'host': 'db1', 'task': task, 'action': action, 'result': {'settings': [record]}}
              for task, action in (('Echo', 'ansible.builtin.debug'), ('Fact', 'ansible.builtin.set_fact'),
                                   ('Other', 'community.general.thing'), ('Ours', 'dbhost.tuning.host_state'))]
    dummy, dummy, folder = run(tmp_path, events)
    assert [r['task'] for r in read_json(folder)['hosts']['db1']['settings']] == ['Ours']


def test_failed_and_unreachable_hosts_are_never_clean(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    report = read_json(folder)
    db3 = report['hosts']['db3']
    assert db3['errors'] == [{'kind': 'failed', 'task': 'Set kernel parameters', 'module': 'dbhost.tuning.kernel_params',
                              'ignored': False, 'msg': 'the kernel refused: kernel.shmmni (Invalid argument)'}]
    # The failed result's records are kept.
    assert [(r['name'], r['status']) for r in db3['settings']] == [('kernel.sem', 'ok'), ('kernel.shmmni', 'failed')]
    db4 = report['hosts']['db4']
    assert db4['settings'] == [] and db4['state'] == 'unreachable'
    assert db4['errors'][0]['kind'] == 'unreachable'
    assert 'Connection timed out' in db4['errors'][0]['msg']


def test_an_ignored_failure_still_fails_the_host(tmp_path):
    events = [dict(load_events()[3], ignore_errors=True)]
    dummy, dummy, folder = run(tmp_path, events)
    db3 = read_json(folder)['hosts']['db3']
    assert db3['state'] == 'failed' and db3['errors'][0]['ignored'] is True


def test_a_loop_failure_names_the_items(tmp_path):
    event = {'event': 'failed', 'host': 'db9', 'task': 'Queues', 'action': 'dbhost.tuning.sysfs_attr',
             'result': {'msg': 'One or more items failed', 'results': [
                 {'item': 'sda', 'changed': False, 'settings': []},
                 {'item': 'sdz', 'failed': True, 'msg': 'no block device sdz'}]}}
    dummy, dummy, folder = run(tmp_path, [event])
    assert read_json(folder)['hosts']['db9']['errors'][0]['msg'] == 'sdz: no block device sdz'


def test_only_contract_records_are_taken(tmp_path):
    event = {'event': 'ok', 'host': 'db1', 'task': 'Other', 'action': 'dbhost.tuning.kernel_params',
             'result': {'settings': ['not a record', {'name': 'x'}, {'status': 'ok'}, {'name': 'y', 'status': 'ok'}]}}
    dummy, dummy, folder = run(tmp_path, [event])
    assert [r['name'] for r in read_json(folder)['hosts']['db1']['settings']] == ['y']


def test_a_host_with_no_records_is_clean_and_listed(tmp_path):
    events = [e for e in load_events() if e['host'] == 'db1' and e['event'] == 'skipped']
    dummy, dummy, folder = run(tmp_path, events)
    report = read_json(folder)
    assert report['hosts']['db1']['state'] == 'clean' and report['summary']['state'] == 'clean'


def test_interleaving_from_forks_does_not_change_the_report(tmp_path):
    events = load_events()
    reference = without_times(read_json(run(tmp_path / 'a', events)[2]))
    by_host = {}
    for event in events:
        by_host.setdefault(event['host'], []).append(event)
    shuffler = random.Random(7)
    for attempt in range(5):
        # Any interleaving that keeps each host's own order, as forks deliver them.
        queues = dict((host, list(host_events)) for host, host_events in by_host.items())
        order = []
        while queues:
            host = shuffler.choice(sorted(queues))
            order.append(queues[host].pop(0))
            if not queues[host]:
                del queues[host]
        assert without_times(read_json(run(tmp_path / str(attempt), order)[2])) == reference


def test_concurrent_delivery_loses_nothing(tmp_path):
    # Ansible serializes callback calls; the plugin does not rely on it.
    callback, dummy = make_callback(tmp_path)
    template = load_events()[2]
    threads = []
    for index in range(8):
        events = [dict(template, host='db%02d' % index)] * 50
        threads.append(threading.Thread(target=feed, args=(callback, events)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    callback.v2_playbook_on_stats(None)
    report = read_json(tmp_path / 'reports')
    assert report['summary']['hosts'] == 8
    assert report['summary']['settings'] == 8 * 50 * 3
    assert report['summary']['drifted'] == 8 * 50 * 2


def test_markdown_exact(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    with open(os.path.join(FIXTURES, 'expected.md')) as stream:
        expected = stream.read()
    assert (folder / 'drift.md').read_text() == expected


def test_junit_is_valid_and_fails_on_drift(tmp_path):
    dummy, dummy, folder = run(tmp_path)
    SCHEMA.validate(str(folder / 'drift.xml'))
    root = ET.parse(str(folder / 'drift.xml')).getroot()
    assert root.tag == 'testsuites'
    assert (root.get('tests'), root.get('failures'), root.get('errors'), root.get('skipped')) == ('13', '5', '2', '1')
    skipped = [case.find('skipped') for case in root.iter('testcase') if case.find('skipped') is not None]
    assert [(case.get('message')) for case in skipped] == ['unsupported: not writable in this container (desired never)']
    suites = dict((suite.get('name'), suite) for suite in root.findall('testsuite'))
    assert sorted(suites) == ['db1', 'db2', 'db3', 'db4', 'db5']
    counts = dict((name, (s.get('tests'), s.get('failures'), s.get('errors'), s.get('skipped')))
                  for name, s in suites.items())
    assert counts == {'db1': ('3', '0', '0', '1'), 'db2': ('3', '2', '0', '0'), 'db3': ('3', '1', '1', '0'),
                      'db4': ('1', '0', '1', '0'), 'db5': ('3', '2', '0', '0')}
    failures = dict(((case.get('classname'), case.get('name')), case.find('failure'))
                    for case in root.iter('testcase') if case.find('failure') is not None)
    assert sorted(failures) == [
        ('db2.kernel_params', 'kernel.sem'), ('db2.kernel_params', 'vm.swappiness'),
        ('db3.kernel_params', 'kernel.shmmni'),
        ('db5.sysfs_attr', 'queue/rq_affinity (sdb)'), ('db5.sysfs_attr', 'queue/scheduler'),
    ]
    sem = failures[('db2.kernel_params', 'kernel.sem')]
    assert sem.get('type') == 'drift'
    # the reason first, then the values; the source in the failure's text
    assert sem.get('message') == ('live below the minimum 250 32000 100 128: desired 250 32000 100 128, '
                                  'live 32000 1024000000 500 32000, persisted 250 32000 100 128 (drift)')
    assert 'source: Oracle Database Installation Guide for Linux (19c, 21c, 23ai), "Minimum Parameter Settings ' \
        'for Installation" (profile oracle)\n' in sem.text
    assert 'reason: live below the minimum 250 32000 100 128\n' in sem.text
    assert failures[('db5.sysfs_attr', 'queue/scheduler')].get('message') == (
        'persisted, pending reboot: desired none, live mq-deadline, persisted - (pending_reboot)')
    passed = [case for case in root.iter('testcase') if case.find('system-out') is not None]
    sources = [case.find('system-out').text.split('source: ')[1].split('\n')[0] for case in passed]
    assert sources == ['task option: kernel_params.params', '-', '-', '-', '-']
    unreachable = suites['db4'].find('testcase')
    assert unreachable.find('error').get('type') == 'unreachable'
    assert unreachable.find('error').get('message').startswith('host unreachable: Task failed')
    assert suites['db3'].find('testcase/error').get('type') == 'failed'
    assert [p.get('value') for p in root.iter('property')] == ['clean', 'drift', 'failed', 'unreachable', 'drift']


def test_junit_schema_rejects_what_ci_servers_reject():
    broken = [
        # a test case without a name
        '<testsuites><testsuite name="h" tests="1"><testcase classname="c"/></testsuite></testsuites>',
        # a negative count
        '<testsuites><testsuite name="h" tests="-1"/></testsuites>',
        # <failure> before <skipped>
        '<testsuites><testsuite name="h" tests="1"><testcase name="t"><failure/><skipped/></testcase>'
        '</testsuite></testsuites>',
        # an element the format does not have
        '<testsuites><testsuite name="h" tests="1"><testcase name="t"><warning/></testcase></testsuite></testsuites>',
    ]
    for document in broken:
        assert not SCHEMA.is_valid(document), document
    assert SCHEMA.is_valid('<testsuites><testsuite name="h" tests="1"><testcase name="t"><skipped message="m"/>'
                           '</testcase></testsuite></testsuites>')


def test_junit_survives_control_characters(tmp_path):
    event = {'event': 'ok', 'host': 'db1', 'task': 'T', 'action': 'dbhost.tuning.kernel_params',
             'result': {'settings': [{'name': 'k\x01', 'desired': 'a\x1bb', 'live': '<&>"', 'persisted': None,
                                      'status': 'drift', 'detail': 'x\x00y'}]}}
    dummy, dummy, folder = run(tmp_path, [event])
    SCHEMA.validate(str(folder / 'drift.xml'))
    failure = ET.parse(str(folder / 'drift.xml')).getroot().find('.//failure')
    assert failure.get('message') == u'desired a\ufffdb, live <&>", persisted - (drift)'


def test_terminal_table(tmp_path):
    dummy, display, dummy = run(tmp_path)
    lines = display.lines
    assert lines[0] == '== DRIFT REPORT'
    assert lines[1] == ('drift report: failed (5 hosts: 1 clean, 2 drift, 1 failed, 1 unreachable; '
                        '5 of 11 settings drifted, 1 unsupported)')
    text = '\n'.join(lines)
    # a reason column for the rows that are not ok, a source column of numbers spelled out under the table
    assert ('db2: drift (3 settings, 2 drifted)\n'
            '  setting        desired            live                        persisted          status    '
            'reason / detail                           source\n'
            '  kernel.shmmni  4096               4096                        4096               ok        '
            '                                          -\n'
            '  kernel.sem     250 32000 100 128  32000 1024000000 500 32000  250 32000 100 128  drift     '
            'live below the minimum 250 32000 100 128  [1]\n'
            '  vm.swappiness  10                 10                          60                 shadowed  '
            'shadowed by /etc/sysctl.d/99-local.conf   [2]\n'
            '  [1] Oracle Database Installation Guide for Linux (19c, 21c, 23ai), "Minimum Parameter Settings for '
            'Installation" (profile oracle)\n'
            '  [2] user: kernel_params_settings\n') in text
    assert "db4: unreachable (0 settings, 0 drifted)\n  unreachable in task 'Set kernel parameters': Task failed" in text
    assert lines[-3:] == ['drift report: %s' % (tmp_path / 'reports' / name)
                          for name in ('drift.json', 'drift.xml', 'drift.md')]


def test_terminal_drift_only_and_none(tmp_path):
    dummy, display, dummy = run(tmp_path / 'a', terminal='drift')
    text = '\n'.join(display.lines)
    # clean rows are left out; an unsupported one stays, with its reason
    assert 'db1: clean (3 settings, 0 drifted, 1 unsupported)' in text and 'kernel.shmmni  4096' not in text
    statuses = [[word for word in line.split() if word in _result.STATUSES][0] for line in display.lines
                if line.startswith('  ') and not line.startswith(('  setting', '  [')) and ' in task ' not in line]
    assert statuses == ['unsupported', 'drift', 'shadowed', 'failed', 'drift', 'pending_reboot']
    dummy, display, dummy = run(tmp_path / 'b', terminal='none')
    assert display.lines == ['drift report: %s' % (tmp_path / 'b' / 'reports' / name)
                             for name in ('drift.json', 'drift.xml', 'drift.md')]


def test_formats_option(tmp_path):
    dummy, dummy, folder = run(tmp_path, formats=['markdown'])
    assert sorted(os.listdir(str(folder))) == ['drift.md']


def test_output_dir_defaults(tmp_path, monkeypatch):
    callback, dummy = make_callback(tmp_path, output_dir=None)
    monkeypatch.chdir(str(tmp_path))
    monkeypatch.delenv('AWX_ISOLATED_DATA_DIR', raising=False)
    assert callback.output_dir() == str(tmp_path / 'drift-report')
    # Under ansible-runner: the job's artifacts folder.
    monkeypatch.setenv('AWX_ISOLATED_DATA_DIR', '/runner/artifacts/job1')
    assert callback.output_dir() == '/runner/artifacts/job1/drift-report'
    callback._plugin_options['output_dir'] = 'out'
    assert callback.output_dir() == str(tmp_path / 'out')


def test_unwritable_folder_is_reported_not_raised(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    callback, display = make_callback(tmp_path, output_dir=str(blocker / 'reports'))
    feed(callback, load_events())
    callback.v2_playbook_on_stats(None)
    assert len(display.errors) == 1 and 'cannot write the reports' in display.errors[0]


def test_reports_accumulate_across_playbooks(tmp_path):
    callback, dummy = make_callback(tmp_path)
    events = load_events()
    feed(callback, events[:3])
    callback.v2_playbook_on_stats(None)
    feed(callback, events[3:])
    callback.v2_playbook_on_stats(None)
    assert read_json(tmp_path / 'reports')['summary']['hosts'] == 5


@pytest.mark.parametrize('value, text', [
    (None, '-'), (True, 'true'), ([250, 32000, 100, 128], '250 32000 100 128'), ({'b': 1, 'a': 2}, '{"a": 2, "b": 1}'),
    ('two\nlines', 'two lines'), (0, '0'), ('', ''),
])
def test_format_value(value, text):
    assert report_text.format_value(value) == text


def test_a_minimum_is_shown_as_at_least():
    record = {'name': 'kernel.sem', 'desired': '250 32000 100 128', 'comparison': 'minimum',
              'live': '32000 1024000000 500 32000', 'persisted': '32000 1024000000 500 32000', 'status': 'ok'}
    assert report_text.desired_text(record) == '>= 250 32000 100 128'
    assert report_text.drift_message(record).startswith('desired >= 250 32000 100 128, live 32000')
    assert report_text.desired_text(dict(record, comparison=None)) == '250 32000 100 128'
    report = records.build_report({'db1': {'settings': [record], 'errors': []}})
    assert '| db1 | kernel.sem | >= 250 32000 100 128 |' in markdown.render_markdown(report)
    assert any('>= 250 32000 100 128' in line for line, dummy in terminal.render_terminal(report))
