# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params with its defaults: live values, the persisted file, boot precedence."""

import importlib.util
import os

import pytest

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    'kernel_params_expect', os.path.join(SCENARIO, '..', 'shared', 'kernel_params_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = expect.podman_hosts(SCENARIO)
PROFILE = expect.profile()
# Keys a container cannot set are left out of the converge (see
# molecule/shared/container-readonly-sysctls.txt).
READ_ONLY = expect.key_list('container-readonly-sysctls.txt')
SETTINGS = dict((key, value) for key, value in PROFILE['settings'].items() if key not in READ_ONLY)


@pytest.fixture(name='expected')
def expected_fixture(host):
    """Key -> the value the role must leave, from what the key was before."""
    before = expect.read_before(host)['sysctl']
    return dict((key, expect.expected_value(key, before[key], desired, PROFILE['mode']))
                for key, desired in SETTINGS.items())


@pytest.mark.parametrize('key', sorted(SETTINGS))
def test_live_value(host, expected, key):
    assert expect.live_value(host, key) == expected[key]


@pytest.mark.parametrize('key', READ_ONLY)
def test_read_only_key_untouched(host, key):
    assert expect.live_value(host, key) == expect.read_before(host)['sysctl'][key]


def test_persisted_file_content(host, expected):
    lines = [PROFILE['header']] + ['%s = %s' % (key, expected[key]) for key in sorted(expected)]
    assert host.file(PROFILE['file']).content_string == '\n'.join(lines) + '\n'


def test_persisted_file_owner_and_mode(host):
    persisted = host.file(PROFILE['file'])
    assert persisted.is_file
    assert (persisted.user, persisted.group, persisted.mode) == ('root', 'root', 0o644)


def test_no_stray_files_in_sysctl_d(host):
    before = set(path for path in expect.read_before(host)['etc'] if path.startswith('/etc/sysctl.d/'))
    after = set('/etc/sysctl.d/' + name for name in host.file('/etc/sysctl.d').listdir())
    assert after - before == set([PROFILE['file']])


def test_boot_loads_our_values(host, expected):
    """What systemd-sysctl applies at the next boot is what the role set."""
    at_boot = expect.boot_values(host)
    assert dict((key, at_boot.get(key)) for key in expected) == expected
