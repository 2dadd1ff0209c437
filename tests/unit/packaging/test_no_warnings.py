# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pinned runtime prints no warning of its own: every ansible command of a venv made from
requirements/runtime.txt starts without a CryptographyDeprecationWarning (ansible-core 2.19
imports cryptography's DSA module at start-up; cryptography 51 deprecated it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess
import sys

import pytest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
BIN = os.path.dirname(sys.executable)


def pinned(package):
    with open(os.path.join(CHECKOUT, 'requirements', 'runtime.txt')) as stream:
        for line in stream:
            match = re.match(r'%s==(\S+)' % re.escape(package), line.strip())
            if match:
                return match.group(1)
    raise AssertionError('%s is not pinned in requirements/runtime.txt' % package)


def installed(package):
    from importlib.metadata import version
    return version(package)


def test_cryptography_is_pinned_below_its_dsa_deprecation():
    assert int(pinned('cryptography').split('.')[0]) < 51


def test_this_venv_has_the_pinned_cryptography():
    assert installed('cryptography') == pinned('cryptography'), (
        'this venv has cryptography %s, requirements/runtime.txt pins %s: run scripts/venv.sh'
        % (installed('cryptography'), pinned('cryptography')))


@pytest.mark.parametrize('program', ['ansible-playbook', 'ansible-galaxy', 'ansible'])
def test_an_ansible_command_prints_no_warning(program, tmp_path):
    env = dict(os.environ, ANSIBLE_HOME=str(tmp_path / 'home'), ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'))
    env.pop('PYTHONWARNINGS', None)
    done = subprocess.run([os.path.join(BIN, program), '--version'], env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Warning' not in done.stderr and '[WARNING]' not in done.stdout + done.stderr, done.stderr
