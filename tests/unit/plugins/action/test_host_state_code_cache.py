# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_state action plugin runs run_cached with the digest of the collection's code, sends the code
only when the host says it lacks it (a second round trip), and runs the host_state module itself when
dbhost_code_cache is false; a dbhost_code_cache that is not a boolean fails naming it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.action import host_state as action
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import code_cache
from ansible_collections.dbhost.tuning.tests.unit.plugins.action.test_host_state_preload import _Connection, _Task, _Templar

RESULT = {'changed': False, 'settings': [{'name': 'fs.aio-max-nr', 'status': 'ok'}]}


def _run(monkeypatch, task_vars, answers):
    """The plugin's run, with _execute_module answering from ``answers`` in turn; returns (result, calls)."""
    calls = []
    answers = list(answers)

    def execute_module(module_name=None, module_args=None, task_vars=None):
        calls.append((module_name, dict(module_args)))
        return dict(answers.pop(0))
    plugin = action.ActionModule(_Task({'roles': ['kernel_params']}), _Connection(), None, None, _Templar())
    monkeypatch.setattr(plugin, '_execute_module', execute_module)
    return plugin.run(task_vars=dict(task_vars)), calls


def test_a_host_with_the_code_gets_its_digest_only_one_round_trip(monkeypatch):
    result, calls = _run(monkeypatch, {}, [RESULT])
    assert result['settings'] == RESULT['settings']
    assert [name for name, dummy in calls] == ['dbhost.tuning.run_cached']
    args = calls[0][1]
    assert sorted(args) == ['code_hash', 'module', 'module_args']
    assert args['module'] == 'host_state' and args['code_hash'] == action.Code.digest
    assert args['module_args']['roles'] == ['kernel_params'] and 'kernel_params' in args['module_args']['inputs']


def test_a_host_without_the_code_is_sent_it_in_a_second_round_trip(monkeypatch):
    result, calls = _run(monkeypatch, {'dbhost_code_cache_dir': '/srv/code'},
                         [{'changed': False, 'code_missing': True}, RESULT])
    assert result['settings'] == RESULT['settings'] and 'code_missing' not in result
    assert [name for name, dummy in calls] == ['dbhost.tuning.run_cached'] * 2
    first, second = calls[0][1], calls[1][1]
    assert 'code' not in first and first['cache_dir'] == '/srv/code'
    assert code_cache.unpack(second.pop('code'), action.Code.digest) == action.Code.files
    assert second == first


@pytest.mark.parametrize('value', [False, 'false', 'no', 0])
def test_dbhost_code_cache_false_runs_the_host_state_module_itself(monkeypatch, value):
    result, calls = _run(monkeypatch, {'dbhost_code_cache': value}, [RESULT])
    assert result['settings'] == RESULT['settings']
    assert [name for name, dummy in calls] == ['dbhost.tuning.host_state']
    assert sorted(calls[0][1]) == ['inputs', 'roles']


@pytest.mark.parametrize('value', ['maybe', [True], None])
def test_a_dbhost_code_cache_that_is_not_a_boolean_fails_naming_it_before_any_module_runs(monkeypatch, value):
    with pytest.raises(action.AnsibleActionFail) as error:
        _run(monkeypatch, {'dbhost_code_cache': value}, [])
    assert str(error.value) == 'host_state: dbhost_code_cache must be true or false, got %r' % (value,)


def test_a_misspelt_dbhost_code_cache_is_refused_naming_the_variable_meant(monkeypatch):
    with pytest.raises(action.AnsibleActionFail) as error:
        _run(monkeypatch, {'dbhost_code_cach': False}, [])
    assert 'dbhost_code_cach' in str(error.value) and 'dbhost_code_cache' in str(error.value)


def test_the_result_run_cached_packs_comes_back_as_host_state_gave_it(monkeypatch):
    whole = dict(RESULT, roles={'kernel_params': {'settings': [0]}}, plans=[{'kind': 'sysctl'}],
                 diff=[{'before': '', 'after': 'fs.aio-max-nr = 1\n'}], restart_required=False)
    packed = code_cache.pack_result(whole)
    assert sorted(packed) == ['changed', 'packed_result', 'restart_required']
    result, dummy = _run(monkeypatch, {}, [packed])
    assert dict((key, result[key]) for key in whole) == whole
    assert 'packed_result' not in result


@pytest.mark.parametrize('text', ['{"settings": [', '["settings"]', None])
def test_a_packed_result_that_cannot_be_read_fails_saying_so(monkeypatch, text):
    with pytest.raises(action.AnsibleActionFail) as error:
        _run(monkeypatch, {}, [{'changed': False, 'packed_result': text}])
    assert str(error.value).startswith('host_state: the result run_cached returned cannot be read (')
    assert str(error.value).endswith('): %r' % (text,))
