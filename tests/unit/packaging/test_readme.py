# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""README.md as a new user follows it: its build and install commands, its example inventory and
its playbook commands, run as written, give the outcome the README documents on each line.

The test host is a local connection whose every role works under a test tree (the roles' root
variables, in a host_vars file beside the README's inventory: the one thing the README tells a
user to change is the host), with the database user the README says must exist. The collection
is built from this checkout and installed from the tarball, as the README says.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.profiles import kernel_profile
from ansible_collections.dbhost.tuning.tests.unit.helpers import BASELINE_FOLDER, ansible_env, ansible_program, digest, put
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))

pytestmark = pytest.mark.usefixtures('linux')


def readme_blocks():
    with open(os.path.join(CHECKOUT, 'README.md')) as stream:
        text = stream.read()
    return re.findall(r'^```[a-z]*\n(.*?)^```', text, re.S | re.M)


def block_with(first_word):
    """The README's code block whose every line starts with ``first_word`` (or a comment)."""
    for block in readme_blocks():
        lines = [line for line in block.splitlines() if line.strip()]
        if lines and lines[0].startswith(first_word) and any('dbhost' in line for line in lines):
            return lines
    raise AssertionError('README.md has no code block starting with %s' % first_word)


def block_holding(text):
    """The README's code block with a line that starts with ``text``."""
    for block in readme_blocks():
        lines = [line for line in block.splitlines() if line.strip()]
        if any(line.startswith(text) for line in lines):
            return lines
    raise AssertionError('README.md has no code block with a line starting with %s' % text)


def readme_inventory():
    for block in readme_blocks():
        if block.startswith('# inventory/hosts.yml'):
            return block
    raise AssertionError('README.md has no "# inventory/hosts.yml" block')


def test_the_module_table_has_a_row_per_module():
    """README's "Modules" table names every module of plugins/modules once, and no module that is gone."""
    with open(os.path.join(CHECKOUT, 'README.md')) as stream:
        text = stream.read()
    section = text[text.index('\n## Modules\n'):]
    section = section[:section.index('\n## ', 1)]
    rows = [line.split('`')[1] for line in section.splitlines() if line.startswith('| `')]
    modules = [name[:-len('.py')] for name in os.listdir(os.path.join(CHECKOUT, 'plugins', 'modules'))
               if name.endswith('.py') and name != '__init__.py']
    assert sorted(rows) == sorted(modules)


def command_and_outcome(line):
    command, dummy, outcome = line.partition('#')
    return shlex.split(command), outcome.strip()


def fake_test_host(root, roles):
    """A fake Linux host under ``root``: every file the roles read, the oracle user, and every
    /proc/sys key of the oracle profile."""
    fake_host.build(root)
    put(root, '/etc/passwd', 'root:x:0:0:root:/root:/bin/sh\noracle:x:54321:54322::/home/oracle:/bin/sh\n')
    put(root, '/etc/group', 'root:x:0:\noinstall:x:54322:\n')
    for key, (value, dummy, source) in kernel_profile('oracle', 'Linux').items():
        path = os.path.join(root, 'proc', 'sys', *key.split('.'))
        if not os.path.exists(path):
            put(root, '/proc/sys/' + key.replace('.', '/'), '0\n')
    return dict(('%s_root' % role, root) for role in roles)


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """The README's build and install commands, run as written (install into a test folder)."""
    base = tmp_path_factory.mktemp('readme')
    commands = [command_and_outcome(line)[0] for line in block_holding('ansible-galaxy collection build')]
    assert [c[:3] for c in commands[1:]] == [['ansible-galaxy', 'collection', 'build'],
                                             ['ansible-galaxy', 'collection', 'install']]
    # A folder of its own, the only one Ansible looks in: the export names the folder install -p writes to
    # (here a test folder in its place).
    (export,) = [word for word in commands[0] if word.startswith('ANSIBLE_COLLECTIONS_PATH=')]
    assert commands[0][0] == 'export'
    readme_folder = export.split('=', 1)[1]
    assert commands[2][commands[2].index('-p') + 1] == readme_folder
    collections = str(base / 'installed')
    env = ansible_env(base, ANSIBLE_COLLECTIONS_PATH=collections)
    before = set(glob.glob(os.path.join(CHECKOUT, 'dbhost-tuning-*.tar.gz')))
    try:
        for repeat in range(2):   # twice: the README says a rebuild and a reinstall work as written
            build = [ansible_program('ansible-galaxy')] + commands[1][1:]
            done = subprocess.run(build, cwd=CHECKOUT, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            tarballs = sorted(set(glob.glob(os.path.join(CHECKOUT, 'dbhost-tuning-*.tar.gz'))))
            install = [ansible_program('ansible-galaxy')] + [collections if word == readme_folder else word
                                                             for word in commands[2][1:] if '*' not in word]
            done = subprocess.run(install + tarballs, cwd=CHECKOUT, env=env, capture_output=True, text=True,
                                  check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert 'dbhost.tuning' in done.stdout and 'was installed successfully' in done.stdout
            # into the folder of its own only, without a warning that Ansible does not look there
            assert '[WARNING]' not in done.stdout + done.stderr, done.stdout + done.stderr
        assert os.path.isdir(os.path.join(collections, 'ansible_collections', 'dbhost', 'tuning'))
        assert not os.path.exists(os.path.join(env['ANSIBLE_HOME'], 'collections'))
    finally:
        for tarball in set(glob.glob(os.path.join(CHECKOUT, 'dbhost-tuning-*.tar.gz'))) - before:
            os.remove(tarball)
    return base, collections


def test_readme_commands_give_the_documented_outcome(installed):
    base, collections = installed
    inventory_text = readme_inventory()
    inventory = yaml.safe_load(inventory_text)
    group = inventory['all']['children']['oracle_db']
    (host,) = list(group['hosts'])
    work = base / 'user'
    (work / 'inventory' / 'host_vars').mkdir(parents=True)
    (work / 'inventory' / 'hosts.yml').write_text(inventory_text)
    # the checkout's inventory/ also holds the main job's this_host.yml (localhost): the README's commands
    # name their file, so that it is never read with it
    with open(os.path.join(CHECKOUT, 'inventory', 'this_host.yml')) as stream:
        (work / 'inventory' / 'this_host.yml').write_text(stream.read())
    root = str(base / 'host')
    host_vars = fake_test_host(root, group['vars']['dbhost_roles'])
    untouched = digest(root, skip=BASELINE_FOLDER)
    host_vars.update(ansible_connection='local', ansible_python_interpreter=sys.executable)
    (work / 'inventory' / 'host_vars' / ('%s.yml' % host)).write_text(yaml.safe_dump(host_vars))
    env = ansible_env(base, ANSIBLE_COLLECTIONS_PATH=collections, DBHOST_DRIFT_REPORT_DIR=str(work / 'drift-report'))
    env['PATH'] = os.path.dirname(sys.executable) + os.pathsep + env.get('PATH', '')
    lines = block_with('ansible-playbook')
    assert len(lines) == 7
    outcomes = []
    for line in lines:
        argv, outcome = command_and_outcome(line)
        if argv[0] == 'scripts/drift-check':
            argv = [os.path.join(CHECKOUT, argv[0])] + argv[1:]   # the wrapper, python3 from PATH
        else:
            argv[0] = ansible_program(argv[0])
        done = subprocess.run(argv, cwd=str(work), env=env, capture_output=True, text=True, check=False)
        outcomes.append((line, outcome, done))
    # every line's exit code is the one its comment states, in order
    stated = [int(re.search(r'exit (\d+)', outcome).group(1)) for line, outcome, done in outcomes]
    assert [done.returncode for line, outcome, done in outcomes] == stated == [2, 4, 0, 0, 0, 0, 0], [
        done.stdout + done.stderr for line, outcome, done in outcomes]
    (drift_before, drift_out), (typo, typo_out), (tune, tune_out), (drift_after, dummy), (check, check_out), \
        (facts, dummy), (revert, revert_out) = [(done, done.stdout + done.stderr) for line, outcome, done in outcomes]
    # drift on a host never tuned: "fails (exit 2), N of M settings drifted: ..."; ansible-playbook alone
    # writes no report, and the gate does not send a person to one
    assert 'fails (exit 2)' in outcomes[0][1]
    assert re.search(r'\d+ of \d+ settings drifted:', drift_out), drift_out
    assert 'no drift report is written by this run' in drift_out and 'in the drift reports' not in drift_out
    # the misspelt inventory: 'fails (exit 4), "no host to check"'
    assert '"no host to check"' in outcomes[1][1] and 'inventroy' in outcomes[1][0]
    assert 'dbhost.tuning.drift: no host to check' in typo_out, typo_out
    # tune: "changed, exit 0"
    assert 'changed, exit 0' in outcomes[2][1]
    assert re.search(r'%s\s*: ok=\d+\s+changed=[1-9]' % re.escape(host), tune_out), tune_out
    # drift again: "passes now (exit 0)"
    assert 'passes now (exit 0)' in outcomes[3][1]
    # drift-check: 'exit 0, "clean: 1 host"; reports in ./drift-report'
    assert 'clean: 1 host' in outcomes[4][1]
    assert 'drift-check: clean: 1 host' in check.stderr
    for name in ('drift.json', 'drift.xml', 'drift.md'):
        assert (work / 'drift-report' / name).exists()
    with open(str(work / 'drift-report' / 'drift.json')) as stream:
        report = json.load(stream)
    assert report['hosts'][host]['state'] == 'clean' and report['hosts'][host]['settings']
    # the service's memlock, written by tune in its drop-in (revert has removed it since)
    service = group['vars']['shared_memory_service']
    (limit,) = [record for record in report['hosts'][host]['settings'] if record['name'] == service + ' LimitMEMLOCK']
    assert limit['status'] == 'ok' and limit['persisted'], limit
    assert limit['target'] == '/etc/systemd/system/%s.d/90-dbhost-tuning.conf' % service
    # facts: what sizing reads, a few lines
    assert '"memory: RAM ' in facts.stdout and '"queue"' not in facts.stdout, facts.stdout
    assert len(facts.stdout.splitlines()) < 60
    # revert: "what tuning changed back as before, later edits kept: changed, exit 0"
    assert 'changed, exit 0' in outcomes[6][1]
    assert re.search(r'%s\s*: ok=\d+\s+changed=[1-9]' % re.escape(host), revert_out), revert_out
    assert digest(root, skip=BASELINE_FOLDER) == untouched


def test_the_readme_inventory_sets_the_service_as_the_shared_memory_readme_recommends():
    """The shared_memory README recommends shared_memory_service (memlock reaches a service only through
    its unit); the README's inventory sets it with shared_memory_service_restart, so that drift passes
    after tune on a host where the service runs, and says so where it does."""
    group = yaml.safe_load(readme_inventory())['all']['children']['oracle_db']['vars']
    assert group['shared_memory_service'].endswith('.service')
    assert group['shared_memory_service_restart'] is True
    assert group['ansible_python_interpreter'] == '/usr/bin/python3'
    with open(os.path.join(CHECKOUT, 'roles', 'shared_memory', 'README.md')) as stream:
        assert 'shared_memory_service:' in stream.read()
    with open(os.path.join(CHECKOUT, 'README.md')) as stream:
        text = stream.read()
    assert '`shared_memory_service_restart: true` makes `tune` restart it' in text


def test_the_readme_gets_ansible_core_into_a_venv_on_path():
    lines = block_holding('python3 -m venv')
    commands = [command_and_outcome(line)[0] for line in lines]
    venv = commands[0][-1]
    assert commands[1] == [os.path.join(venv, 'bin', 'pip'), 'install', '-r', 'requirements/runtime.txt']
    assert commands[2] == ['.', os.path.join(venv, 'bin', 'activate')]
    assert os.path.exists(os.path.join(CHECKOUT, 'requirements', 'runtime.txt'))
