# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params in check mode: not one byte under /etc, not one live value changed."""

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


@pytest.fixture(name='states')
def states_fixture(host):
    before = expect.read_before(host)
    return before, expect.snapshot(host, before['sysctl'])


def test_live_values_unchanged(states):
    before, after = states
    assert after['sysctl'] == before['sysctl']


def test_etc_unchanged(states):
    before, after = states
    changed = sorted(path for path in set(before['etc']) | set(after['etc'])
                     if before['etc'].get(path) != after['etc'].get(path))
    assert changed == []
    assert after['etc_sha256'] == before['etc_sha256']


def test_no_persisted_file(host):
    assert not host.file(PROFILE['file']).exists
