# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""run_cached: says only that the host lacks the code when it does and none was sent; otherwise keeps the
code sent and runs host_state with the arguments and mode it was given, to the same result and the same
host as the host_state module; and its payload carries no module_utils of the collection but code_cache."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib
import os
import sys

import pytest
from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common import warnings as ansible_warnings

from ansible_collections.dbhost.tuning.plugins.action import host_state as action
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import code_cache
from ansible_collections.dbhost.tuning.tests.unit.helpers import BASELINE_FOLDER, digest, read
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

pytestmark = pytest.mark.usefixtures('linux')

PACKAGE = 'ansible_collections.dbhost.tuning.plugins.'
SYSCTL_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'


@pytest.fixture(autouse=True)
def no_finder_left(monkeypatch):
    """run_cached puts its finder on sys.meta_path: later tests must not import through it. And a module
    process is no controller and starts without warnings (as in test_mount_options_foreign.py)."""
    monkeypatch.setattr(ansible_warnings, '_global_warnings', {})
    monkeypatch.setattr(ansible_internal, 'is_controller', False)
    before = list(sys.meta_path)
    yield
    sys.meta_path[:] = before
    importlib.invalidate_caches()


def _module(name):
    return importlib.import_module(PACKAGE + 'modules.' + name)


def _host_state_args(root):
    from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults
    return {'roles': ['kernel_params'], 'inputs': with_defaults({'kernel_params': {
        'kernel_params_root': root, 'kernel_params_profile': 'none',
        'kernel_params_settings': {'fs.aio-max-nr': 1048576}}})}


def _runner_args(tmp_path, root, code=True, **extra):
    args = {'module': 'host_state', 'module_args': _host_state_args(root), 'code_hash': action.Code.digest,
            'cache_dir': str(tmp_path / 'code')}
    if code:
        args['code'] = code_cache.pack(action.Code.files) if code is True else code
    args.update(extra)
    return args


def test_without_a_copy_and_without_the_code_it_only_says_so(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    before = digest(root)
    result = run_module(_module('run_cached'), _runner_args(tmp_path, root, code=False))
    assert result['code_missing'] is True and result['changed'] is False
    assert 'settings' not in result
    assert digest(root) == before
    assert not os.path.exists(str(tmp_path / 'code'))


@pytest.mark.parametrize('check_mode', [True, False], ids=['check', 'apply'])
def test_with_the_code_sent_it_keeps_it_and_does_what_host_state_does(tmp_path, run_module, check_mode):
    direct_root = fake_host.build(str(tmp_path / 'direct'))
    cached_root = fake_host.build(str(tmp_path / 'cached'))
    direct = run_module(_module('host_state'), _host_state_args(direct_root), check_mode=check_mode, diff=True)
    returned = run_module(_module('run_cached'), _runner_args(tmp_path, cached_root), check_mode=check_mode,
                          diff=True)
    assert not direct.get('failed'), direct
    # all but the keys Ansible reads itself come back in one JSON text, which the action plugin unpacks
    assert sorted(returned) == ['changed', 'invocation', 'packed_result', 'reboot_required', 'restart_required']
    assert returned['changed'] is True and returned['invocation'] == {}
    cached = code_cache.unpack_result(returned)
    # the same result, the invocation included (host_state's arguments, not run_cached's), but for the root
    assert cached == _rooted(direct, direct_root, cached_root)
    # the same tree, but for the baseline, which holds when it was taken
    assert digest(cached_root, skip=BASELINE_FOLDER) == digest(direct_root, skip=BASELINE_FOLDER)
    if not check_mode:
        assert 'fs.aio-max-nr = 1048576' in read(cached_root, SYSCTL_FILE)
    kept = os.path.join(str(tmp_path / 'code'), action.Code.digest)
    assert code_cache.source_files(kept) == action.Code.files
    # and the next run finds it without the code
    again = run_module(_module('run_cached'), _runner_args(tmp_path, cached_root, code=False), check_mode=True)
    assert 'code_missing' not in again and again['changed'] is check_mode   # applied already: nothing to do


def _rooted(result, old, new):
    import json
    return json.loads(json.dumps(result).replace(old, new))


def _without_diffs(value):
    """VALUE with every ``diff`` key taken out, at any depth."""
    if isinstance(value, dict):
        return dict((key, _without_diffs(item)) for key, item in value.items() if key != 'diff')
    if isinstance(value, list):
        return [_without_diffs(item) for item in value]
    return value


def test_a_diff_only_in_diff_mode_direct_or_cached(tmp_path, run_module):
    """The contract: ``diff`` when run with --diff, for the result and for the plan a call of one role keeps at
    the top; without it the same result, but for the diffs."""
    roots = dict((name, fake_host.build(str(tmp_path / name))) for name in ('shown', 'plain', 'cached'))
    shown = run_module(_module('host_state'), _host_state_args(roots['shown']), check_mode=True, diff=True)
    plain = run_module(_module('host_state'), _host_state_args(roots['plain']), check_mode=True)
    cached = code_cache.unpack_result(run_module(
        _module('run_cached'), _runner_args(tmp_path, roots['cached']), check_mode=True))
    assert shown['diff'] and shown['kernel_params']['diff'] == shown['diff']
    assert plain == _without_diffs(_rooted(shown, roots['shown'], roots['plain']))
    assert plain['changed'] is True and 'diff' not in plain and 'diff' not in plain['kernel_params']
    assert cached == _rooted(plain, roots['plain'], roots['cached'])


def test_a_folder_it_cannot_keep_the_code_in_runs_the_code_sent_with_a_warning(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    result = code_cache.unpack_result(run_module(
        _module('run_cached'), _runner_args(tmp_path, root, cache_dir=str(blocker / 'code')), check_mode=True))
    assert not result.get('failed'), result
    assert result['changed'] is True and result['settings'][0]['name'] == 'fs.aio-max-nr'
    said = [warning['event']['msg'] for warning in result['warnings']]
    assert said == ['run_cached: the collection code is not kept on the host (cannot keep the code in '
                    '%s: Not a directory); it ran from the copy sent, and every run will send it again: set '
                    'dbhost_code_cache_dir to a folder it can keep, or dbhost_code_cache to false' % (blocker / 'code')]


def test_a_failed_host_state_comes_back_packed_and_whole(tmp_path, run_module):
    """The drift gate fails the task with every record: run_cached packs those too."""
    direct_root = fake_host.build(str(tmp_path / 'direct'))
    cached_root = fake_host.build(str(tmp_path / 'cached'))
    args = _host_state_args(direct_root)
    args['fail_on_drift'] = True
    direct = run_module(_module('host_state'), args, check_mode=True)
    runner = _runner_args(tmp_path, cached_root)
    runner['module_args']['fail_on_drift'] = True
    returned = run_module(_module('run_cached'), runner, check_mode=True)
    assert direct['failed'] is True and direct['drift_gate'] is True
    assert 'packed_result' in returned and returned['failed'] is True and returned['msg'] == direct['msg']
    assert code_cache.unpack_result(returned) == _rooted(direct, direct_root, cached_root)


def test_a_module_with_a_no_log_value_returns_its_result_plain_with_the_value_removed(capsys):
    """Ansible removes a no_log value from every string of the result it prints; it could not remove it
    whole from a packed text, so such a result is not packed."""
    from ansible.module_utils.testing import patch_module_args
    given = _module('run_cached').given({'password': 'hunter2', 'name': 'x'})
    with patch_module_args({}):
        module = given(argument_spec={'password': {'type': 'str', 'no_log': True}, 'name': {'type': 'str'}})
        with pytest.raises(SystemExit):
            module.exit_json(changed=False, settings=[{'name': 'x', 'detail': 'logged in with hunter2'}])
    import json
    out = json.loads(capsys.readouterr().out)
    assert 'packed_result' not in out
    assert out['settings'] == [{'name': 'x', 'detail': 'logged in with ********'}]


def test_code_that_is_not_what_its_digest_names_fails_before_anything_is_touched(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    before = digest(root)
    tampered = dict(action.Code.files)
    tampered['engine/errors.py'] += b'\nimport os\n'
    result = run_module(_module('run_cached'), _runner_args(tmp_path, root, code=code_cache.pack(tampered)))
    assert result['failed'] is True
    assert result['msg'] == 'run_cached: the code sent does not have the digest %s' % action.Code.digest
    assert digest(root) == before
    assert not os.path.exists(str(tmp_path / 'code'))


def test_arguments_host_state_refuses_are_refused_in_host_state_s_name(tmp_path, run_module):
    root = fake_host.build(str(tmp_path / 'host'))
    args = _runner_args(tmp_path, root)
    args['module_args']['bogus'] = 1
    result = run_module(_module('run_cached'), args)
    assert result['failed'] is True
    assert result['msg'].startswith('Unsupported parameters for (dbhost.tuning.host_state) module: bogus.')


def _imports(path):
    with open(path) as handle:
        tree = ast.parse(handle.read())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.extend('%s.%s' % (node.module, alias.name) for alias in node.names)
    return names


def test_its_payload_carries_no_module_utils_of_the_collection_but_code_cache():
    """AnsiballZ ships what a module imports, at any depth: run_cached imports code_cache and Ansible's
    basic, and code_cache imports nothing but the standard library."""
    collection = [name for name in _imports(_module('run_cached').__file__) if name.startswith('ansible_collections')]
    assert collection == [PACKAGE + 'module_utils.engine.code_cache']
    assert [name for name in _imports(code_cache.__file__)
            if name.split('.')[0] in ('ansible', 'ansible_collections')] == []
