# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/tune.yml run by ansible-playbook on a fake host: a boolean given as a string on the
command line or in an INI inventory means what it says (kernel_params_apply=false writes the
file, never the live value), and a word that is not a boolean fails the run naming it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program, read
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SEM = '250 32000 100 200'

pytestmark = pytest.mark.usefixtures('linux')


def tune(tmp_path, inventory_line, *extra):
    root = str(tmp_path / 'host')
    fake_host.build(root)
    inventory = tmp_path / 'hosts.ini'
    inventory.write_text(u'[db]\ndb1 ansible_connection=local ansible_python_interpreter=%s kernel_params_root=%s %s\n'
                         % (sys.executable, root, inventory_line))
    argv = [ansible_program('ansible-playbook'), '-i', str(inventory), os.path.join(CHECKOUT, 'playbooks', 'tune.yml'),
            '-e', json.dumps({'dbhost_roles': ['kernel_params'], 'kernel_params_profile': 'none', 'kernel_params_mode': 'exact',
                              'kernel_params_settings': {'kernel.sem': SEM}})] + list(extra)
    done = subprocess.run(argv, env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    return root, done


@pytest.mark.parametrize('inventory_line, extra', [
    ('', ['-e', 'kernel_params_apply=false']),
    ('kernel_params_apply=false', []),
    ('kernel_params_apply=no', []),
])
def test_apply_false_as_a_string_writes_the_file_not_the_live_value(tmp_path, inventory_line, extra):
    root, done = tune(tmp_path, inventory_line, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert read(root, '/proc/sys/kernel/sem') == '32000\t1024000000\t500\t32000\n'
    assert 'kernel.sem = %s' % SEM in read(root, '/etc/sysctl.d/90-dbhost-tuning.conf')


def test_apply_true_as_a_string_writes_the_live_value(tmp_path):
    root, done = tune(tmp_path, 'kernel_params_apply=yes')
    assert done.returncode == 0, done.stdout + done.stderr
    assert read(root, '/proc/sys/kernel/sem').split() == SEM.split()


def test_a_word_that_is_not_a_boolean_fails_naming_the_variable(tmp_path):
    root, done = tune(tmp_path, 'kernel_params_apply=maybe')
    assert done.returncode == 2
    assert 'kernel_params_apply' in done.stdout and 'maybe' in done.stdout
    assert read(root, '/proc/sys/kernel/sem') == '32000\t1024000000\t500\t32000\n'
    assert not os.path.exists(os.path.join(root, 'etc', 'sysctl.d', '90-dbhost-tuning.conf'))
