# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""block_queue in check mode: not one queue attribute and not one byte under /etc changed."""

import json
import os

import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = '/var/lib/dbhost-molecule'
HELPER = STATE + '/loopdev.py'


def _platforms(scenario):
    with open(os.path.join(scenario, 'molecule.yml')) as handle:
        return ['podman://' + platform['name'] for platform in yaml.safe_load(handle)['platforms']]


# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = _platforms(SCENARIO)


def read_json(host, path):
    return json.loads(host.file(path).content_string)


def test_loop_devices_unchanged(host):
    loops = read_json(host, STATE + '/block_queue.json')
    before = read_json(host, STATE + '/block_queue_before.json')
    now = json.loads(host.check_output('python3 %s queue %s %s', HELPER, loops['data1'], loops['data2']))
    assert now == before['loops']


def test_other_block_devices_unchanged(host):
    before = read_json(host, STATE + '/block_queue_before.json')
    assert json.loads(host.check_output('python3 %s queue', HELPER)) == before['others']


def test_etc_unchanged(host):
    before = read_json(host, STATE + '/etc_before.json')
    now = json.loads(host.check_output('python3 %s etc', HELPER))
    changed = sorted(path for path in set(before) | set(now) if before.get(path) != now.get(path))
    assert changed == []


def test_no_rules_file(host):
    assert not host.file('/etc/udev/rules.d/61-dbhost-tuning.rules').exists
