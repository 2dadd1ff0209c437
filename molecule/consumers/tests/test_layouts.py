# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The corpus of admin layouts (layouts.yml) against the real consumers (issue 39).

Each layout is laid out on the container by files/corpus.py, which runs the module as Ansible
runs it (check mode, apply, check mode again, a second apply) and asks the consumer before
and after the apply: systemd-sysctl booting fresh IPC and network namespaces, a login through
pam_limits (runuser -l), systemctl show.  Here each layout is checked for:

- persisted = the consumer's value: the check-mode run before the apply against the consumer
  before it, the apply and the check-mode run after it against the consumer after it;
- nothing lowered (a minimum): no field the consumer gave before is lower after, live included;
- a second apply changes nothing;
- no module run failed.

The counts are printed (molecule runs pytest with -s) and must be 0; the layouts at least 60.

pam_limits in a container: root there has no CAP_SYS_RESOURCE, so a hard limit above the one
the session inherits cannot be set; pam_limits then logs "Could not set limit" and the session
keeps what it inherited. A side no file sets is inherited, and the soft limit is lowered to
the hard one at the end (pam_limits.c setup_limits). The layouts keep memlock and nofile within
the inherited limits and use core (soft 0, hard unlimited inherited) to raise.
"""

import base64
import importlib.util
import json
import os
import subprocess

import ansible
import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

COLLECTION = os.path.dirname(os.path.dirname(expect.SCENARIO))
WORK = '/var/lib/dbhost-molecule/corpus'
USER = 'dbcorpus'
UNIT = 'db-corpus.service'
UNIT_FILE = '/etc/systemd/system/' + UNIT
DEFAULT_UNIT = '[Unit]\nDescription=dbhost corpus stand-in\n[Service]\nExecStart=/bin/sleep infinity\n'
OUR_DROPIN = '/etc/systemd/system/%s.d/90-dbhost-tuning.conf' % UNIT
ACCOUNTS = '''
getent group dbcgrp >/dev/null || groupadd -g 2201 dbcgrp
getent group dbcdba >/dev/null || groupadd -g 2202 dbcdba
getent passwd dbcorpus >/dev/null || useradd -m -u 2201 -g dbcgrp -G dbcdba -s /bin/bash dbcorpus
'''
with open(os.path.join(expect.SCENARIO, 'layouts.yml')) as _handle:
    LAYOUTS = yaml.safe_load(_handle)['layouts']
# What the kernel stored for each sysctl text, as recorded for the unit tests: asked again here.
with open(os.path.join(COLLECTION, 'tests', 'unit', 'plugins', 'module_utils', 'formats',
                       'sysctl_values_cases.yml')) as _handle:
    KERNEL_CASES = yaml.safe_load(_handle)['cases']


def b64(data):
    return base64.b64encode(json.dumps(data).encode('utf-8')).decode('ascii')


@pytest.fixture(name='results', scope='module')
def results_fixture(host):
    """Every layout's outcome, run once; the consumers' folders put back afterwards."""
    name = host.backend.get_hostname()
    host.run('rm -rf %s && mkdir -p %s/ansible_collections/dbhost/tuning %s/ansible', WORK, WORK, WORK)
    ansible_dir = os.path.dirname(ansible.__file__)
    for source, target in ((os.path.join(COLLECTION, 'plugins'), WORK + '/ansible_collections/dbhost/tuning/plugins'),
                           (os.path.join(ansible_dir, 'module_utils'), WORK + '/ansible/module_utils'),
                           (os.path.join(expect.SCENARIO, 'files', 'corpus.py'), WORK + '/corpus.py')):
        subprocess.run(['podman', 'cp', source, '%s:%s' % (name, target)], check=True)
    # AnsiballZ ships an empty ansible/__init__.py too: the module side needs module_utils only
    assert host.run('touch %s/ansible/__init__.py', WORK).rc == 0
    assert expect.run(host, ACCOUNTS).rc == 0
    assert host.run('python3 %s/corpus.py %s save', WORK, WORK).rc == 0
    outcomes, previous = [], []
    try:
        done = host.run('python3 %s/corpus.py %s %s', WORK, WORK, b64({'kernel_reads': KERNEL_CASES}))
        assert done.rc == 0, expect.output(done)
        kernel = json.loads(done.stdout)
        for layout in LAYOUTS:
            layout = dict(layout)
            if layout['consumer'] == 'systemd' and not any(path.endswith('/' + UNIT) for path in layout.get('files', {})):
                layout['files'] = dict(layout.get('files', {}), **{UNIT_FILE: DEFAULT_UNIT})
            clean = previous + [OUR_DROPIN, UNIT_FILE, '/usr/lib/systemd/system/' + UNIT]
            done = host.run('python3 %s/corpus.py %s %s', WORK, WORK,
                            b64({'layout': layout, 'user': USER, 'unit': UNIT, 'clean': clean}))
            assert done.rc == 0, '%s: %s' % (layout['name'], expect.output(done))
            outcomes.append((layout, json.loads(done.stdout)))
            previous = list(layout.get('files', {})) + list(layout.get('links', {}))
    finally:
        host.run('python3 %s/corpus.py %s clean-up %s', WORK, WORK, b64(previous))
        host.run('rm -f %s %s; python3 %s/corpus.py %s restore', OUR_DROPIN, UNIT_FILE, WORK, WORK)
    return {'verdicts': [judge(layout, out) for layout, out in outcomes], 'kernel': kernel}


# ------------------------------------------------------------------ comparing
def words(value):
    return None if value is None else ' '.join(str(value).split())


def number(text):
    return float('inf') if str(text) in ('unlimited', 'infinity') else int(text)


def lower_fields(before, after):
    """Whether any field of ``after`` is below the same field of ``before``."""
    if before is None or after is None:
        return False
    pairs = list(zip(str(before).replace(':', ' ').split(), str(after).replace(':', ' ').split()))
    return any(number(b) > number(a) for b, a in pairs)


def records(result):
    return dict((item['name'], item) for item in result.get('settings', []))


class Verdict(object):
    def __init__(self, layout):
        self.layout = layout
        self.rows = []
        self.mismatches = []
        self.lowered = []
        self.again_changed = False
        self.failed = []

    def compare(self, label, ours, consumer):
        self.rows.append((label, ours, consumer))
        if words(ours) != words(consumer):
            self.mismatches.append('%s: ours %s, consumer %s' % (label, ours, consumer))


def judge(layout, out):
    verdict = Verdict(layout)
    for step in ('check', 'apply', 'check_after', 'again'):
        if out[step].get('failed'):
            verdict.failed.append('%s: %s' % (step, out[step].get('msg')))
    verdict.again_changed = bool(out['again'].get('changed'))
    minimum = layout.get('mode', 'minimum') == 'minimum'
    if layout['consumer'] == 'sysctl':
        judge_sysctl(layout, out, verdict, minimum)
    elif layout['consumer'] == 'pam':
        judge_pam(layout, out, verdict, minimum)
    else:
        judge_systemd(layout, out, verdict, minimum)
    return verdict


def judge_sysctl(layout, out, verdict, minimum):
    for key in sorted(layout['params']):
        for step, consumer in (('check', 'consumer_before'), ('apply', 'consumer_after'),
                               ('check_after', 'consumer_after')):
            verdict.compare('%s %s' % (key, step), records(out[step]).get(key, {}).get('persisted'), out[consumer][key])
        if minimum and (lower_fields(out['consumer_before'][key], out['consumer_after'][key])
                        or lower_fields(out['live_before'][key], out['live_after'][key])):
            verdict.lowered.append('%s: boot %s -> %s, live %s -> %s' % (
                key, out['consumer_before'][key], out['consumer_after'][key], out['live_before'][key],
                out['live_after'][key]))


def session_expected(result, item, inherited):
    """(soft, hard) a login gets from our records of ``item`` (a side without a record or a
    file: inherited; soft lowered to hard; a hard above the inherited one is not set)."""
    found = records(result)
    soft = (found.get('%s soft %s' % (USER, item)) or {}).get('persisted')
    hard = (found.get('%s hard %s' % (USER, item)) or {}).get('persisted')
    soft = inherited[0] if soft is None else soft
    hard = inherited[1] if hard is None else hard
    if number(hard) > number(inherited[1]):
        return tuple(inherited)
    if number(soft) > number(hard):
        soft = hard
    return (str(soft), str(hard))


def judge_pam(layout, out, verdict, minimum):
    for item in sorted(set(entry['item'] for entry in layout['limits'])):
        sides = [entry['type'] for entry in layout['limits'] if entry['item'] == item]
        for step, consumer in (('check', 'consumer_before'), ('apply', 'consumer_after'),
                               ('check_after', 'consumer_after')):
            session = out[consumer]
            expected = session_expected(out[step], item, session['inherited'][item])
            got = session['login'][item]
            for index, side in enumerate(('soft', 'hard')):
                if side in sides:
                    verdict.compare('%s %s %s' % (item, side, step), expected[index], got[index])
        for index, side in enumerate(('soft', 'hard')):
            before, after = out['consumer_before']['login'][item][index], out['consumer_after']['login'][item][index]
            if minimum and side in sides and lower_fields(before, after):
                verdict.lowered.append('%s %s: %s -> %s' % (item, side, before, after))


def judge_systemd(layout, out, verdict, minimum):
    for name in sorted(layout['service_limits']):
        record = '%s %s' % (UNIT, name)
        for step, consumer in (('check', 'consumer_before'), ('apply', 'consumer_after'),
                               ('check_after', 'consumer_after')):
            verdict.compare('%s %s' % (name, step), records(out[step]).get(record, {}).get('persisted'),
                            out[consumer][name])
        if minimum and lower_fields(out['consumer_before'][name], out['consumer_after'][name]):
            verdict.lowered.append('%s: %s -> %s' % (name, out['consumer_before'][name], out['consumer_after'][name]))


def what_went_wrong(verdict):
    return (verdict.mismatches + ['lowered ' + item for item in verdict.lowered]
            + (['a second apply changed'] if verdict.again_changed else [])
            + ['failed ' + item for item in verdict.failed])


# ------------------------------------------------------------------ the checks
def test_the_kernel_stores_what_the_collection_says(results, host):
    """Each recorded sysctl text (octal, hex, trailing text, short and long vectors, refusals),
    written by systemd-sysctl over its value before: the kernel's answer, the recorded one and
    formats/sysctl_values.py's agree."""
    rows, wrong = [], []
    for case, got in zip(KERNEL_CASES, results['kernel']):
        same = got['stored'] == case['stored'] == got['ours'] and \
            got['refused'] == (case['refused'] is not None) == got['ours_refused']
        rows.append((case['key'], repr(case['text']), case['before'], got['stored'], got['refused'], got['ours'],
                     'ok' if same else 'WRONG'))
        if not same:
            wrong.append(rows[-1])
    text = expect.show(expect.table('the kernel parsing sysctl values (%s)' % host.backend.get_hostname(),
                                    ('key', 'text', 'before', 'kernel stored', 'refused', 'ours', ''), rows))
    assert len(rows) == len(KERNEL_CASES) >= 40
    assert not wrong, text


def test_the_corpus_against_the_consumers(results, host):
    results = results['verdicts']
    rows = []
    for verdict in results:
        state = 'ok' if not (verdict.mismatches or verdict.lowered or verdict.again_changed or verdict.failed) else 'WRONG'
        for label, ours, consumer in verdict.rows:
            rows.append((verdict.layout['name'][:58], label, ours, consumer, state))
    counts = {
        'layouts': len(results),
        'mismatches': sum(len(v.mismatches) for v in results),
        'layouts with a mismatch': sum(1 for v in results if v.mismatches),
        'lowered': sum(len(v.lowered) for v in results),
        'second-apply changes': sum(1 for v in results if v.again_changed),
        'failed runs': sum(len(v.failed) for v in results),
    }
    per_consumer = dict((kind, sum(1 for v in results if v.layout['consumer'] == kind))
                        for kind in ('sysctl', 'pam', 'systemd'))
    text = expect.show(expect.table('layout corpus (%s)' % host.backend.get_hostname(),
                                    ('layout', 'value, step', 'ours (persisted)', 'consumer', ''), rows))
    summary = expect.show('corpus counts: %s; layouts per consumer: %s' % (
        ', '.join('%s %d' % item for item in counts.items()),
        ', '.join('%s %d' % item for item in per_consumer.items())))
    problems = ['%s: %s' % (v.layout['name'], '; '.join(what_went_wrong(v)))
                for v in results if what_went_wrong(v)]
    assert counts['layouts'] >= 60, summary
    assert not problems, text + '\n' + summary + '\n' + '\n'.join(problems)
