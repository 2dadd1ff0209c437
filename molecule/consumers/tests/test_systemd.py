# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemd drop-ins: systemd-analyze verify accepts the stand-in service with processor_set's
and resource_limits' drop-ins (and a masked and a winning vendor drop-in), systemctl show gives
what the records say is persisted, and the restarted process got it from the kernel's view."""

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

UNIT = expect.VARS['dbhost_consumers_service']
SHOW = ('MainPID', 'CPUAffinity', 'NUMAPolicy', 'NUMAMask', 'LimitMEMLOCK', 'LimitMEMLOCKSoft', 'LimitNOFILE',
        'LimitNOFILESoft')
# /proc/PID/limits rows for the limits managed here.
PROC_LIMITS = {'LimitMEMLOCK': 'Max locked memory', 'LimitNOFILE': 'Max open files'}
SIZE_SUFFIX = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4}


def cpus(text):
    """A CPU list ('0-2,4' or systemd's '0 1 2') as a set of numbers."""
    found = set()
    for part in str(text).replace(',', ' ').split():
        low, dummy, high = part.partition('-')
        found.update(range(int(low), int(high or low) + 1))
    return found


def limit(value):
    """A Limit*= value as systemd.exec(5) takes it -> (soft, hard), numbers or 'infinity'."""
    def one(text):
        text = text.strip()
        if text in ('infinity', 'unlimited'):
            return 'infinity'
        if text[-1:].upper() in SIZE_SUFFIX:
            return int(text[:-1]) * SIZE_SUFFIX[text[-1:].upper()]
        return int(text)
    soft, dummy, hard = str(value).partition(':')
    return one(soft), one(hard or soft)


@pytest.fixture(name='records', scope='module')
def records_fixture(host):
    return expect.records(host)


@pytest.fixture(name='shown', scope='module')
def shown_fixture(host):
    text = host.check_output('systemctl show -p %s %s' % (','.join(SHOW), UNIT))
    return dict(line.split('=', 1) for line in text.splitlines() if '=' in line)


def service_record(records, module):
    found = [s for s in records[module]['settings'] if s['name'] == 'service:' + UNIT]
    assert len(found) == 1, records[module]['settings']
    return found[0]


def limit_records(records, module):
    return dict((s['name'].split()[-1], s) for s in records[module]['settings'] if s['name'].startswith(UNIT + ' '))


def test_systemd_analyze_verify_accepts_the_unit_and_its_drop_ins(host, records):
    ours = set([service_record(records, 'processor_set')['target']]
               + [s['target'] for s in limit_records(records, 'resource_limits').values()])
    files = set(ours) | set(expect.VARS['dbhost_consumers_unit_files'])
    result = host.run('systemd-analyze verify %s', UNIT)
    said = [line for line in expect.output(result).splitlines() if any(path in line for path in files)]
    expect.show('\nsystemd-analyze verify %s (rc %d), drop-ins: %s\n%s' % (
        UNIT, result.rc, ', '.join(sorted(ours)), expect.output(result) or '(nothing to say)'))
    assert result.rc == 0, expect.output(result)
    assert said == [], said


def test_systemctl_show_gives_the_persisted_binding(records, shown):
    rows, wrong = [], []
    for phase in ('processor_set', 'processor_set_after'):
        persisted = service_record(records, phase)['persisted']
        for key in ('CPUAffinity', 'NUMAPolicy', 'NUMAMask'):
            have = shown.get(key)
            same = cpus(have) == cpus(persisted[key]) if key != 'NUMAPolicy' else have == persisted[key]
            rows.append((phase, key, persisted[key], have))
            if not same:
                wrong.append('%s %s' % (phase, key))
    text = expect.show(expect.table(
        'processor_set persisted vs systemctl show %s' % UNIT, ('record', 'property', 'ours: persisted', 'systemctl show'),
        rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_systemctl_show_gives_the_persisted_limits(records, shown):
    rows, wrong = [], []
    for phase in ('resource_limits', 'resource_limits_after'):
        for key, record in sorted(limit_records(records, phase).items()):
            have = (limit(shown[key + 'Soft'])[0], limit(shown[key])[0])
            rows.append((phase, key, record['desired'], record['persisted'], record['status'],
                         '%s:%s' % (shown[key + 'Soft'], shown[key])))
            if have != limit(record['persisted']):
                wrong.append('%s %s' % (phase, key))
            # shadowed exactly where systemd's value is not ours
            if (record['status'] == 'shadowed') == (have == limit(record['desired'])):
                wrong.append('%s %s status' % (phase, key))
    text = expect.show(expect.table(
        'resource_limits persisted vs systemctl show %s (soft:hard)' % UNIT,
        ('record', 'limit', 'ours: desired', 'ours: persisted', 'ours: status', 'systemctl show'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_the_restarted_process_runs_with_them(host, records, shown):
    pid = int(shown['MainPID'])
    assert pid > 0, shown
    status = dict(line.split(':', 1) for line in host.file('/proc/%d/status' % pid).content_string.splitlines())
    numa_maps = host.file('/proc/%d/numa_maps' % pid).content_string.splitlines()
    limits = {}
    for line in host.file('/proc/%d/limits' % pid).content_string.splitlines():
        for key, label in PROC_LIMITS.items():
            if line.startswith(label):
                fields = line[len(label):].split()
                limits[key] = (limit(fields[0])[0], limit(fields[1])[0])
    binding = service_record(records, 'processor_set_after')
    rows = [
        ('CPUs', binding['persisted']['CPUAffinity'], binding['live']['cpus'], status['Cpus_allowed_list'].strip()),
        ('memory nodes', binding['persisted']['NUMAMask'], binding['live']['mems'], status['Mems_allowed_list'].strip()),
        ('memory policy', 'bind:' + binding['persisted']['NUMAMask'], binding['live']['numa_policy'],
         sorted(set(line.split()[1] for line in numa_maps))),
    ]
    for key, record in sorted(limit_records(records, 'resource_limits_after').items()):
        rows.append((key, record['persisted'], record['live'], '%s:%s' % limits[key]))
    text = expect.show(expect.table(
        'records after the restart vs the kernel (/proc/%d)' % pid,
        ('what', 'ours: persisted', 'ours: live', 'kernel'), rows))
    assert cpus(status['Cpus_allowed_list']) == cpus(binding['persisted']['CPUAffinity']) == cpus(binding['live']['cpus']), text
    assert cpus(status['Mems_allowed_list']) == cpus(binding['live']['mems']), text
    assert set(line.split()[1] for line in numa_maps) == set(['bind:' + binding['persisted']['NUMAMask']]), text
    assert binding['live']['numa_policy'] == 'bind:' + binding['persisted']['NUMAMask'], text
    for key, record in limit_records(records, 'resource_limits_after').items():
        assert limits[key] == limit(record['persisted']) == limit(record['live']), text
