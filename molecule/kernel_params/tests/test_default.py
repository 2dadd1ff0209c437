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


@pytest.fixture(name='before', scope='module')
def before_fixture(host):
    """Live values prepare recorded before the role ran."""
    return expect.read_before(host)


@pytest.fixture(name='expected', scope='module')
def expected_fixture(before):
    """Key -> the value the role must leave, from what the key was before."""
    return dict((key, expect.expected_value(key, before['sysctl'][key], desired, PROFILE['mode']))
                for key, desired in SETTINGS.items())


@pytest.fixture(name='live', scope='module')
def live_fixture(host):
    return expect.live_values(host, PROFILE['settings'])


def test_live_values(live, expected):
    assert dict((key, live[key]) for key in expected) == expected


def test_read_only_keys_untouched(live, before):
    assert dict((key, live[key]) for key in READ_ONLY) == dict((key, before['sysctl'][key]) for key in READ_ONLY)


def test_persisted_file(host, expected):
    persisted = host.file(PROFILE['file'])
    written = expect.persisted_keys(SETTINGS, PROFILE)
    lines = [PROFILE['header']] + ['%s = %s' % (key, expected[key]) for key in written]
    assert persisted.content_string == '\n'.join(lines) + '\n'
    assert (persisted.user, persisted.group, persisted.mode) == ('root', 'root', 0o644)


def test_no_stray_files_in_sysctl_d(host, before):
    listed_before = set(path for path in before['etc'] if path.startswith('/etc/sysctl.d/'))
    listed_now = set('/etc/sysctl.d/' + name for name in host.file('/etc/sysctl.d').listdir())
    assert listed_now - listed_before == set([PROFILE['file']])


def test_boot_loads_our_values(host, expected):
    """What systemd-sysctl applies at the next boot is what the role set."""
    at_boot = expect.boot_values(host)
    written = expect.persisted_keys(SETTINGS, PROFILE)
    assert dict((key, at_boot.get(key)) for key in written) == dict((key, expected[key]) for key in written)
    # the others boot with a built-in value that already meets the minimum: no file sets them
    for key in set(expected) - set(written):
        assert at_boot.get(key) is None
        assert expect.meets_minimum(key, PROFILE['boot_defaults'][key], SETTINGS[key])
