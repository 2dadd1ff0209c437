# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two applies at once on one host: both changes land, neither run fails.

Overlapping pipeline jobs run the same module on one host at the same moment, each
with its own values.  Each run reads the file, plans and writes its own version: without
the per-root lock (engine/lock.py) one run's change is lost, and one run's sweep of
stale temporary files could remove the other's live one.  Here two module processes,
started together as Ansible starts them, apply different values to the same fake root,
ROUNDS times per module; after every round the file holds both runs' values, both runs
succeeded and neither printed a traceback.  How long the second run waited is not
asserted (the machine's load decides it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import subprocess
import sys

import pytest

import ansible_collections.dbhost.tuning as collection

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'fake_host', os.path.join(os.path.dirname(HERE), 'unit', 'plugins', 'modules', 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

ROUNDS = 20
# Not a timing check: only a run that hangs for good stops the test.
HANG = 600


def _collection_base():
    tuning = list(collection.__path__)[0]
    return os.path.dirname(os.path.dirname(os.path.dirname(tuning)))


def _start(module, args, root, folder, name):
    args = dict(args, root=root, _ansible_check_mode=False, _ansible_diff=False,
                _ansible_tmpdir=os.path.join(folder, 'tmp-%s' % name), _ansible_keep_remote_files=True)
    os.makedirs(args['_ansible_tmpdir'], exist_ok=True)
    path = os.path.join(folder, 'args-%s.json' % name)
    with open(path, 'w') as handle:
        json.dump({'ANSIBLE_MODULE_ARGS': args}, handle)
    env = dict(os.environ, LC_ALL='C.UTF-8')
    env['PYTHONPATH'] = os.pathsep.join([_collection_base()] + [p for p in [os.environ.get('PYTHONPATH')] if p])
    return subprocess.Popen([sys.executable, '-m', 'ansible_collections.dbhost.tuning.plugins.modules.%s' % module, path],
                            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process):
    out, err = process.communicate(timeout=HANG)
    text = out.decode('utf-8', 'replace') + err.decode('utf-8', 'replace')
    assert 'Traceback' not in text, text
    assert process.returncode == 0, text
    result = json.loads(out.decode('utf-8'))
    assert not result.get('failed'), result
    return result


def _db_parameter(number):
    """Two runs: each its own parameter in the same postgresql.conf."""
    base = {'engine': 'postgresql', 'path': fake_host.PGCONF, 'read_live': False}
    return (dict(base, params={'work_mem': '%dMB' % (8 + number)}),
            dict(base, params={'maintenance_work_mem': '%dMB' % (64 + number)}),
            fake_host.PGCONF,
            ['work_mem = %dMB' % (8 + number), 'maintenance_work_mem = %dMB' % (64 + number)])


def _resource_limits(number):
    """Two runs: each its own domain in the same limits.d file."""
    return ({'limits': [{'domain': 'oracle', 'type': 'soft', 'item': 'memlock', 'value': 1048576 + number}]},
            {'limits': [{'domain': 'postgres', 'type': 'soft', 'item': 'nofile', 'value': 65536 + number}]},
            '/etc/security/limits.d/90-dbhost-tuning.conf',
            ['oracle soft memlock %d' % (1048576 + number), 'postgres soft nofile %d' % (65536 + number)])


# The two modules whose lost updates were seen most; the lock is the same for every module.
CASES = [('db_parameter', _db_parameter), ('resource_limits', _resource_limits)]


def _words(text):
    return [' '.join(line.split()) for line in text.splitlines()]


@pytest.mark.parametrize('module,values', CASES, ids=[case[0] for case in CASES])
def test_two_applies_at_once_both_land(module, values, tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    for number in range(ROUNDS):
        first, second, shown, expected = values(number)
        runs = [_start(module, first, root, str(tmp_path), 'a'), _start(module, second, root, str(tmp_path), 'b')]
        results = [_finish(run) for run in runs]
        assert all(result['changed'] for result in results), results
        lines = _words(fake_host.helpers.read(root, shown))
        for line in expected:
            assert ' '.join(line.split()) in lines, 'round %d: %r lost from %s:\n%s' % (number, line, shown, '\n'.join(lines))
        folder = os.path.dirname(os.path.join(root, shown.lstrip('/')))
        assert not [name for name in os.listdir(folder) if name.startswith('.%s.' % os.path.basename(shown))]
