# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""block_queue on two loop devices: live values, the exact rules file, udev applying it,
and no other block device touched.

Expected values are written out here from converge.yml's variables, independently of the
role and module code.
"""

import json
import os

import pytest
import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = '/var/lib/dbhost-molecule'
HELPER = STATE + '/loopdev.py'
RULES = '/etc/udev/rules.d/61-dbhost-tuning.rules'
HEADER = (
    '# Managed by dbhost.tuning.block_queue: block queue attributes of selected devices.\n'
    '# Rules are keyed by a stable identifier (device-mapper UUID, WWID, serial, loop backing file);\n'
    '# KERNEL=="name" only where a device has none. Local edits to managed attributes are overwritten.\n')


def _platforms(scenario):
    with open(os.path.join(scenario, 'molecule.yml')) as handle:
        return ['podman://' + platform['name'] for platform in yaml.safe_load(handle)['platforms']]


# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = _platforms(SCENARIO)


def read_json(host, path):
    return json.loads(host.file(path).content_string)


@pytest.fixture(name='loops')
def loops_fixture(host):
    return read_json(host, STATE + '/block_queue.json')


@pytest.fixture(name='before')
def before_fixture(host):
    return read_json(host, STATE + '/block_queue_before.json')


@pytest.fixture(name='queues')
def queues_fixture(host, loops):
    return json.loads(host.check_output('python3 %s queue %s %s', HELPER, loops['data1'], loops['data2']))


def selected(raw):
    return raw.split('[', 1)[1].split(']', 1)[0] if '[' in raw else raw


def expected(before, name, extra=None):
    """What converge.yml asks for: dss read-ahead, rq_affinity 2, the scheduler of the device's kind."""
    rotational = before['loops'][name]['rotational'] == '1'
    values = {'scheduler': 'mq-deadline' if rotational else 'none', 'read_ahead_kb': '4096', 'rq_affinity': '2'}
    values.update(extra or {})
    return values


def test_live_values(loops, before, queues):
    for key, extra in (('data1', None), ('data2', {'nr_requests': '64'})):
        name = loops[key]
        want = expected(before, name, extra)
        have = dict(queues[name], scheduler=selected(queues[name]['scheduler']))
        assert dict((attribute, have[attribute]) for attribute in want) == want, name


def test_values_really_changed(loops, before):
    # The scenario means something only when the role had work to do.
    assert before['loops'][loops['data1']]['rq_affinity'] != '2'
    assert before['loops'][loops['data2']]['nr_requests'] != '64'


def test_rules_file_is_exact(host, loops, before):
    lines = []
    for key, extra in (('data1', None), ('data2', {'nr_requests': '64'})):
        name = loops[key]
        backing = host.file('/sys/block/%s/loop/backing_file' % name).content_string.strip()
        assert backing.startswith('/var/tmp/dbhost-bq/') and backing.endswith('-%s.img' % key)
        want = expected(before, name, extra)
        order = ['scheduler'] + sorted(attribute for attribute in want if attribute != 'scheduler')
        lines.append('ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", KERNEL=="loop*", '
                     'ATTR{loop/backing_file}=="%s", ' % backing
                     + ', '.join('ATTR{queue/%s}="%s"' % (attribute, want[attribute]) for attribute in order))
    # The module writes rules in the order of the kernel names.
    pairs = sorted(zip([loops['data1'], loops['data2']], lines))
    assert host.file(RULES).content_string == HEADER + '\n'.join(line for dummy, line in pairs) + '\n'


def test_rules_file_owner_and_mode(host):
    rules = host.file(RULES)
    assert (rules.user, rules.group, rules.mode) == ('root', 'root', 0o644)


def test_udev_accepts_the_rules(host):
    if host.run('udevadm verify --help').rc != 0:
        pytest.skip('udevadm verify needs systemd 254 or newer')
    result = host.run('udevadm verify %s', RULES)
    assert result.rc == 0, result.stdout + result.stderr


def test_udev_applies_the_rule_on_a_change_event(host, loops):
    """A value lost by hand comes back when udev processes a change event for the device:
    what a reboot or a re-attach does, keyed by the backing file and not the loop number."""
    name = loops['data1']
    path = '/sys/block/%s/queue/rq_affinity' % name
    host.check_output('echo 0 > %s', path)
    assert host.file(path).content_string.strip() == '0'
    host.check_output('udevadm trigger --action=change --subsystem-match=block --sysname-match=%s', name)
    host.check_output('udevadm settle --timeout=30')
    assert host.file(path).content_string.strip() == '2'


def test_no_other_block_device_touched(host, before):
    now = json.loads(host.check_output('python3 %s queue', HELPER))
    assert now == before['others']


def test_no_other_rules_file(host):
    ours = [name for name in host.file('/etc/udev/rules.d').listdir() if 'dbhost' in name]
    assert ours == [os.path.basename(RULES)]
