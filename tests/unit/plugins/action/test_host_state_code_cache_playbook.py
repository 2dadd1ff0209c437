# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_state through ansible-playbook, as a drift check runs it: the first run sends the collection's
code and the host keeps it (0700, with .pyc); the next run does not send it and gets the same result;
dbhost_code_cache=false gets it too from the host_state module itself; none of them changes the host
checked; and run_cached's AnsiballZ payload carries no module_utils of the collection but code_cache."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import glob
import io
import json
import os
import re
import stat
import subprocess
import sys
import zipfile

import yaml

from ansible_collections.dbhost.tuning.plugins.action import host_state as action
from ansible_collections.dbhost.tuning.tests.unit.helpers import ansible_env, ansible_program, digest
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

SENDING = 'has no copy of the collection code'
OURS = 'ansible_collections/dbhost/tuning/'


def _play(tmp_path, root, name, extra, keep_remote=False):
    saved = tmp_path / ('%s.json' % name)
    playbook = tmp_path / 'play.yml'
    playbook.write_text(yaml.safe_dump([{
        'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
        'vars': {'ansible_python_interpreter': sys.executable, 'dbhost_roles': ['kernel_params'],
                 'kernel_params_root': root, 'kernel_params_profile': 'none',
                 'kernel_params_settings': {'fs.aio-max-nr': 1048576}},
        'tasks': [
            {'name': 'check', 'dbhost.tuning.host_state': {}, 'check_mode': True, 'register': 'checked'},
            {'name': 'save', 'ansible.builtin.copy': {'content': '{{ checked | to_json }}', 'dest': str(saved)},
             'check_mode': False},
        ]}]))
    env = ansible_env(tmp_path)
    if keep_remote:
        env.update(ANSIBLE_KEEP_REMOTE_FILES='1', ANSIBLE_REMOTE_TMP=str(tmp_path / 'remote'))
    argv = [ansible_program('ansible-playbook'), '-i', 'localhost,', '-vv', str(playbook)]
    for key, value in extra.items():
        argv += ['-e', '%s=%s' % (key, value)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(str(saved)) as handle:
        result = json.load(handle)
    for key in ('changed', 'failed', 'warnings', 'deprecations'):
        result.pop(key, None)   # the copy task's own flags; the module's result is the rest
    return result, done.stdout


def test_the_code_is_sent_once_kept_on_the_host_and_gives_the_same_result(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    before = digest(root)
    cache = tmp_path / 'code'
    first, said = _play(tmp_path, root, 'first', {'dbhost_code_cache_dir': cache})
    assert SENDING in said
    kept = cache / action.Code.digest
    assert os.listdir(str(cache)) == [action.Code.digest]
    assert stat.S_IMODE(os.stat(str(cache)).st_mode) == 0o700
    assert glob.glob(str(kept / 'state' / '__pycache__' / 'host_state.*.pyc'))

    second, said = _play(tmp_path, root, 'second', {'dbhost_code_cache_dir': cache})
    assert SENDING not in said
    assert second == first
    direct, said = _play(tmp_path, root, 'direct', {'dbhost_code_cache': 'false',
                                                    'dbhost_code_cache_dir': tmp_path / 'unused'})
    assert direct == first
    assert not os.path.exists(str(tmp_path / 'unused'))
    assert [record['name'] for record in first['settings']] == ['fs.aio-max-nr']
    assert first['settings'][0]['status'] == 'drift'
    assert digest(root) == before


def test_the_payload_carries_no_module_utils_of_the_collection_but_code_cache(tmp_path):
    root = fake_host.build(str(tmp_path / 'host'))
    _play(tmp_path, root, 'kept', {'dbhost_code_cache_dir': tmp_path / 'code'}, keep_remote=True)
    payloads = glob.glob(str(tmp_path / 'remote' / '*' / 'AnsiballZ_run_cached.py'))
    assert payloads   # the two round trips of a task share its temporary folder: the second is kept
    for path in payloads:
        with open(path) as handle:
            text = handle.read()
        data = base64.b64decode(re.search(r"zip_data='([^']+)'", text).group(1))
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        ours = sorted(name[len(OURS):] for name in names if name.startswith(OURS) and not name.endswith('__init__.py'))
        assert ours == ['plugins/module_utils/engine/code_cache.py', 'plugins/modules/run_cached.py']
