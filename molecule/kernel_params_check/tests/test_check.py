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


@pytest.fixture(name='states', scope='module')
def states_fixture(host):
    """(state prepare recorded, state now), taken by the same snapshot.py."""
    before = expect.read_before(host)
    return before, expect.snapshot(host, before['sysctl'])


def test_live_values_unchanged(states):
    before, now = states
    assert now['sysctl'] == before['sysctl']


def test_etc_unchanged(states):
    before, now = states
    differing = sorted(path for path in set(before['etc']) | set(now['etc'])
                       if before['etc'].get(path) != now['etc'].get(path))
    assert differing == []
    assert now['etc_sha256'] == before['etc_sha256']


def test_no_persisted_file(states):
    assert PROFILE['file'] not in states[1]['etc']
