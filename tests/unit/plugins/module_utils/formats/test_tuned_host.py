# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The active TuneD profile as tuned.service starts it, read under root: enabled or not,
active_profile, profile_mode (daemon.py _get_startup_profile), post_loaded_profile, the
installed version, reapply_sysctl_exclude."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.tests.unit.helpers import put


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/usr/lib/tuned/base/tuned.conf', '[sysctl]\nkernel.shmmni=8192\nvm.swappiness=10\n')
    put(base, '/usr/lib/tuned/extra/tuned.conf', '[sysctl]\nvm.swappiness=1\n')
    wants = os.path.join(base, 'etc', 'systemd', 'system', 'multi-user.target.wants')
    os.makedirs(wants)
    os.symlink('/lib/systemd/system/tuned.service', os.path.join(wants, 'tuned.service'))
    return base


def values(profile):
    return dict((key, raw) for key, (raw, dummy) in profile.sysctl().items())


def test_active_profile_and_post_loaded_profile(root):
    put(root, '/etc/tuned/active_profile', 'base\n')
    put(root, '/etc/tuned/profile_mode', 'manual\n')
    assert values(tuned_host.active(root)) == {'kernel.shmmni': '8192', 'vm.swappiness': '10'}
    put(root, '/etc/tuned/post_loaded_profile', 'extra\n')
    assert values(tuned_host.active(root)) == {'kernel.shmmni': '8192', 'vm.swappiness': '1'}


@pytest.mark.parametrize('profile, mode', [('base\n', 'auto\n'), ('', '')])
def test_automatic_mode_starts_the_recommended_profile(root, profile, mode):
    # daemon.py _get_startup_profile: auto, or no profile and no mode; no rule matching: balanced
    put(root, '/etc/tuned/active_profile', profile)
    put(root, '/etc/tuned/profile_mode', mode)
    read = tuned_host.active(root)
    assert read.names == ['balanced'] and read.problems == [
        'TuneD cannot load the profile balanced: no profile balanced in the profile folders']
    put(root, '/etc/tuned/recommend.d/50-site.conf', '[extra]\n/etc/tuned/active_profile=%s\n' % (profile or '^$'))
    assert values(tuned_host.active(root)) == {'vm.swappiness': '1'} and tuned_host.active(root).undecided is None


def test_a_mode_tuned_refuses_is_said(root):
    put(root, '/etc/tuned/active_profile', 'base\n')
    put(root, '/etc/tuned/profile_mode', 'sometimes\n')
    read = tuned_host.active(root)
    assert read.units == [] and read.problems[0].startswith(
        "TuneD refuses to start: /etc/tuned/profile_mode holds 'sometimes'")


def test_manual_mode_without_a_profile_and_a_disabled_service_apply_nothing(root):
    put(root, '/etc/tuned/active_profile', '')
    put(root, '/etc/tuned/profile_mode', 'manual\n')
    assert tuned_host.active(root) is None
    put(root, '/etc/tuned/active_profile', 'base\n')
    os.remove(os.path.join(root, 'etc/systemd/system/multi-user.target.wants/tuned.service'))
    assert tuned_host.active(root) is None


def test_version_and_reapply_exclude_from_the_host(root):
    put(root, '/etc/tuned/active_profile', 'base\n')
    put(root, '/etc/tuned/tuned-main.conf', 'reapply_sysctl = 1\nreapply_sysctl_exclude = kernel.shm*, net.*\n')
    put(root, '/usr/lib/python3/dist-packages/tuned/version.py', 'TUNED_VERSION_MAJOR = 2\nTUNED_VERSION_MINOR = 20\n')
    profile = tuned_host.active(root)
    assert profile.version == (2, 20)
    assert profile.excluded('kernel.shmmni') and not profile.excluded('vm.swappiness')
