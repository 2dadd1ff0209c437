# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""udev: the rules file block_queue writes is accepted by udevadm verify, and udevadm test on the
throwaway loop device shows our rule matching and assigning what the records say is persisted."""

import importlib.util
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

# systemd 252: ATTR '/sys/devices/.../queue/rq_affinity' writing '2'
# systemd 257: Running in test mode, skipping writing ATTR{/sys/devices/.../queue/rq_affinity}="2".
_ASSIGNMENT = re.compile(
    r"(?P<file>/\S+\.rules):(?P<line>\d+) (?:ATTR '(?P<path1>[^']+)' writing '(?P<value1>[^']*)'"
    r'|Running in test mode, skipping writing ATTR\{(?P<path2>[^}]+)\}="(?P<value2>[^"]*)")')


@pytest.fixture(name='records', scope='module')
def records_fixture(host):
    return expect.records(host)


def rules_file(records):
    targets = set(setting['target'] for setting in records['block_queue']['settings'])
    assert len(targets) == 1, targets
    return targets.pop()


def test_udevadm_verify_accepts_the_rules_file(host, records):
    if host.run('udevadm verify --help').rc != 0:
        version = host.check_output('udevadm --version')
        pytest.skip('udevadm verify needs systemd 254 or newer; this container has udev %s' % version)
    path = rules_file(records)
    result = host.run('udevadm verify --resolve-names=never %s', path)
    expect.show('\nudevadm verify %s (rc %d):\n%s' % (path, result.rc, expect.output(result)))
    assert result.rc == 0, expect.output(result)
    assert re.search(r'Fail:\s+0\b', result.stdout), expect.output(result)


def test_udevadm_test_assigns_what_the_records_persist(host, records):
    name = records['loop']['name']
    path = rules_file(records)
    result = host.run('udevadm test --action=change /sys/block/%s', name)
    assert result.rc == 0, expect.output(result)
    assigned = {}
    for match in _ASSIGNMENT.finditer(expect.output(result)):
        if match.group('file') != path:
            continue
        target = match.group('path1') or match.group('path2')
        value = match.group('value1') if match.group('path1') else match.group('value2')
        attribute = target.split('/queue/', 1)[1] if '/queue/' in target else target
        assigned[attribute] = (value, '%s:%s' % (match.group('file'), match.group('line')))
    rows, wrong = [], []
    for setting in records['block_queue']['settings']:
        attribute = setting['name'].split('/queue/', 1)[1]
        value, where = assigned.get(attribute, (None, None))
        rows.append((setting['name'], setting['desired'], setting['persisted'], value, where))
        if value != str(setting['persisted']) or setting['persisted'] != setting['desired']:
            wrong.append(setting['name'])
    text = expect.show(expect.table(
        'block_queue persisted vs udevadm test --action=change /sys/block/%s (ATTR assignments from %s)' % (name, path),
        ('setting', 'ours: desired', 'ours: persisted', 'udevadm test assigns', 'rule'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)
    assert set(assigned) == set(setting['name'].split('/queue/', 1)[1] for setting in records['block_queue']['settings'])
