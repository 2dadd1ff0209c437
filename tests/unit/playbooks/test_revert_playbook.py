# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/revert.yml run by ansible-playbook on a fake host after tune.yml: --check --diff shows
what would change and touches nothing, the revert gives back the tree as it was before tuning,
a second revert changes nothing, and a host never tuned fails naming the missing baseline."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.tests.unit.helpers import BASELINE_FOLDER, ansible_env, ansible_program, digest
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))

pytestmark = pytest.mark.usefixtures('linux')


def playbook(tmp_path, root, name, *extra):
    inventory = tmp_path / 'hosts.ini'
    inventory.write_text(u'[db]\ndb1 ansible_connection=local ansible_python_interpreter=%s kernel_params_root=%s\n'
                         % (sys.executable, root))
    argv = [ansible_program('ansible-playbook'), '-i', str(inventory), os.path.join(CHECKOUT, 'playbooks', name),
            '-e', json.dumps({'dbhost_roles': ['kernel_params'], 'kernel_params_profile': 'none',
                              'kernel_params_settings': {'fs.aio-max-nr': 1048576, 'vm.swappiness': 10}})]
    done = subprocess.run(argv + list(extra), env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    return done, done.stdout + done.stderr


def changed(output):
    return int(re.search(r'db1\s*: ok=\d+\s+changed=(\d+)', output).group(1))


def test_tune_then_revert_with_check_and_diff_first(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    untouched = digest(root, skip=BASELINE_FOLDER)
    done, output = playbook(tmp_path, root, 'tune.yml')
    assert done.returncode == 0 and changed(output) >= 1, output
    tuned = digest(root)

    done, output = playbook(tmp_path, root, 'revert.yml', '--check', '--diff')
    assert done.returncode == 0 and changed(output) >= 1, output
    assert '-fs.aio-max-nr = 1048576' in output and '/etc/sysctl.d/90-dbhost-tuning.conf' in output
    assert digest(root) == tuned

    done, output = playbook(tmp_path, root, 'revert.yml')
    assert done.returncode == 0 and changed(output) >= 1, output
    assert digest(root, skip=BASELINE_FOLDER) == untouched

    done, output = playbook(tmp_path, root, 'revert.yml')
    assert done.returncode == 0 and changed(output) == 0, output


def test_revert_of_a_host_never_tuned_fails_naming_the_baseline(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    before = digest(root)
    done, output = playbook(tmp_path, root, 'revert.yml')
    assert done.returncode == 2, output
    assert 'no baseline at %s/var/lib/dbhost-tuning/baseline.json' % root in output
    assert digest(root) == before


def test_check_then_revert_keeps_an_admin_line_and_names_the_file(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    done, output = playbook(tmp_path, root, 'tune.yml')
    assert done.returncode == 0, output
    ours = os.path.join(root, 'etc/sysctl.d/90-dbhost-tuning.conf')
    with open(ours, 'a') as handle:
        handle.write('net.core.somaxconn = 4096\n')
    tuned = digest(root)
    done, output = playbook(tmp_path, root, 'revert.yml', '--check', '--diff')
    assert done.returncode == 0 and digest(root) == tuned, output
    assert 'edited since tuning, kept as it is now: + net.core.somaxconn = 4096' in output, output
    assert '/proc/sys/fs/aio-max-nr = 65536 (drift)' in output, output
    done, output = playbook(tmp_path, root, 'revert.yml')
    assert done.returncode == 0, output
    assert '/proc/sys/fs/aio-max-nr = 65536 (changed)' in output, output
    with open(ours) as handle:
        assert handle.read() == 'net.core.somaxconn = 4096\n'
