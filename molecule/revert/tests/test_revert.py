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


OURS = '/etc/sysctl.d/90-dbhost-tuning.conf'
DROPIN = '/etc/systemd/system/dbhost-revert-probe.service.d/90-dbhost-tuning.conf'


def test_systemd_sysctl_reads_what_it_read_before_and_the_admin_s_line(before, after):
    # what boot applies: every file as it was, and of ours only the line an admin added after tuning
    added = [line for line in after['cat_config'].splitlines() if line not in before['cat_config'].splitlines()]
    assert added == ['# ' + OURS, 'kernel.msgmax = 16384'], added


def test_our_files_hold_only_the_admin_s_lines(host):
    assert host.file(OURS).content_string == 'kernel.msgmax = 16384\n'
    assert host.file(DROPIN).content_string == '[Service]\nLimitNOFILE=8192\n'


def test_systemd_takes_the_admin_s_limit_kept_in_our_drop_in(host):
    assert host.check_output('systemctl show -p LimitNOFILE dbhost-revert-probe.service') == 'LimitNOFILE=8192'


def test_systemctl_show_gives_the_memlock_limit_of_before(before, after):
    assert after['memlock'] == before['memlock']


def test_etc_is_as_it_was_but_for_the_admin_s_lines(before, after):
    changed = sorted(path for path in set(before['etc']) | set(after['etc'])
                     if before['etc'].get(path) != after['etc'].get(path))
    assert changed == sorted([OURS, DROPIN, os.path.dirname(DROPIN)])


def _preview(records):
    """What the check-mode preview and the real revert agree on (drift there is changed here)."""
    def one(record):
        detail = record['detail']
        detail = detail[len('would be '):] if detail.startswith('would be ') else detail
        return (record['name'], record['desired'], 'changed' if record['status'] == 'drift' else record['status'],
                detail)
    return sorted(one(record) for record in records)


def test_the_check_mode_preview_gave_the_real_revert_s_records(host):
    preview = json.loads(host.file(STATE + '/revert-preview.json').content_string)
    real = json.loads(host.file(STATE + '/revert-real.json').content_string)
    assert _preview(preview) == _preview(real)
    edited = [record for record in real if 'edited since tuning' in record['detail']]
    assert sorted(record['name'] for record in edited) == sorted([OURS, DROPIN])


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
