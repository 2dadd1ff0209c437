# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mount_options warns when an option asked for belongs to another file system type than the
line's (VxFS mincache=direct on an ext4 line), and stays quiet for generic options and the right type."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common import warnings as ansible_warnings

from ansible_collections.dbhost.tuning.plugins.modules import mount_options
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts.options import foreign_options

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils', 'plans',
                        'mounts', 'fixtures')

pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """A module process starts with no warning and is no controller. In one pytest process
    Ansible keeps (and drops as duplicates) the warnings of earlier tests' module runs, and
    once a test imported controller code (a callback, an action plugin) a module's warning
    goes to the controller's display instead of the result."""
    monkeypatch.setattr(ansible_warnings, '_global_warnings', {})
    monkeypatch.setattr(ansible_internal, 'is_controller', False)


@pytest.fixture(name='tree')
def tree_fixture(tmp_path):
    os.makedirs(str(tmp_path / 'etc'))
    with open(os.path.join(FIXTURES, 'fstab')) as handle:
        (tmp_path / 'etc' / 'fstab').write_text(handle.read())
    return str(tmp_path)


@pytest.mark.parametrize('fstype, tokens, expected', [
    ('ext4', ['mincache=direct', 'convosync=direct', 'noatime'], {'vxfs': ['mincache=direct', 'convosync=direct']}),
    ('vxfs', ['mincache=direct', 'convosync=direct'], {}),
    ('ext3', ['data=writeback'], {}),
    ('xfs', ['data=writeback', 'forcedirectio'], {'ext4': ['data=writeback'], 'ufs': ['forcedirectio']}),
    ('ext4', ['largefiles'], {'ufs or vxfs': ['largefiles']}),
    ('ext4', ['noatime', 'nodiratime', 'sync', 'x-systemd.automount'], {}),
    ('auto', ['mincache=direct'], {}),
])
def test_foreign_options(fstype, tokens, expected):
    assert foreign_options(fstype, tokens) == expected


def test_vxfs_options_on_an_ext4_line_are_warned_about(run_module, tree):
    result = run_module(mount_options, {'root': tree, 'mounts': [
        {'path': '/u03', 'present': ['mincache=direct', 'convosync=direct']},
        {'path': '/u04', 'present': ['mincache=direct', 'convosync=direct']}]}, check_mode=True)
    assert [warning['event']['msg'] for warning in result['warnings']] == [
        '/u03: mincache=direct, convosync=direct are options of vxfs, not of ext4 (line 16 of /etc/fstab): '
        'the mount may fail or ignore them']


def test_generic_options_give_no_warning(run_module, tree):
    result = run_module(mount_options, {'root': tree, 'path': '/u03', 'present': ['noatime', 'data=journal']},
                        check_mode=True)
    assert 'warnings' not in result
