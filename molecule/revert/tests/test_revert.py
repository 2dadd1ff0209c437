# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""After playbooks/revert.yml (twice): the container is back where prepare found it, as the
programs that read our files say (systemd-sysctl, systemctl show, udev)."""

import json
import os

import pytest
import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = '/var/lib/dbhost-molecule'


def _hosts():
    with open(os.path.join(SCENARIO, 'molecule.yml')) as handle:
        return ['podman://' + platform['name'] for platform in yaml.safe_load(handle)['platforms']]


# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = _hosts()


@pytest.fixture(name='before', scope='module')
def before_fixture(host):
    return json.loads(host.file(STATE + '/revert-before.json').content_string)


@pytest.fixture(name='after', scope='module')
def after_fixture(host):
    return json.loads(host.check_output('python3 %s/state.py', STATE))


def test_sysctl_values_are_back(before, after):
    assert after['sysctl'] == before['sysctl']


def test_systemd_sysctl_reads_what_it_read_before(before, after):
    # what boot applies: our sysctl.d file is gone, every other file as it was
    assert '90-dbhost-tuning' not in after['cat_config']
    assert after['cat_config'] == before['cat_config']


def test_systemctl_show_gives_the_memlock_limit_of_before(before, after):
    assert after['memlock'] == before['memlock']


def test_etc_is_as_it_was(before, after):
    changed = sorted(path for path in set(before['etc']) | set(after['etc'])
                     if before['etc'].get(path) != after['etc'].get(path))
    assert changed == []


def test_udev_no_longer_reads_our_rules_and_a_change_event_keeps_the_queues(host, before):
    loops = json.loads(host.file(STATE + '/block_queue.json').content_string)
    for device in sorted(loops.values()):
        test = host.run('udevadm test --action=change /sys/class/block/%s', device)
        assert test.rc == 0, test.stderr
        assert '61-dbhost-tuning' not in test.stdout + test.stderr
    host.check_output('udevadm trigger --action=change --subsystem-match=block %s',
                      ' '.join('--sysname-match=%s' % device for device in sorted(loops.values())))
    host.check_output('udevadm settle --timeout=30')
    after = json.loads(host.check_output('python3 %s/state.py', STATE))
    assert after['queues'] == before['queues']


def test_the_baseline_is_kept_marked_reverted(host):
    baseline = host.file('/var/lib/dbhost-tuning/baseline.json')
    assert baseline.mode == 0o600 and host.file('/var/lib/dbhost-tuning').mode == 0o700
    kept = json.loads(baseline.content_string)
    assert kept['state'] == 'reverted' and kept['schema'] == 1
    assert '/etc/udev/rules.d/61-dbhost-tuning.rules' in kept['files']
    assert '/etc/systemd/system/dbhost-revert-probe.service.d/90-dbhost-tuning.conf' in kept['files']
