# -*- coding: utf-8 -*-
"""engine/gate.py: the one place a run decides whether it writes.

A shut gate (check mode) runs no write and commits no file; an open one does both.  The plans
ask it rather than check mode: a syntax-tree walk of plans/ fails on a plan that reads check mode
itself (``self.check_mode``, ``plan.check_mode``) instead of its gate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils import plans
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.gate import Gate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import CHANGED, DRIFT, OK
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest

# base.py keeps Plan.check_mode (the gate's, for what a plan passes on); revert.py is still to move
ALLOWED = ('base.py', 'revert.py')


def test_a_shut_gate_runs_no_write_and_an_open_one_runs_it():
    calls = []
    assert Gate(True).write(calls.append, 'x') is None and calls == []
    assert Gate(False).write(lambda value: calls.append(value) or 'done', 'y') == 'done' and calls == ['y']
    assert Gate(True).open is False and Gate(False).open is True
    # a plan made without a Context (Plan.gate) writes
    assert Gate().open is True and Gate().write(len, 'ab') == 2


def test_a_shut_gate_commits_no_file_and_refuses_nothing(tmp_path):
    target = tmp_path / 'etc' / 'ours.conf'
    change = FileChange(str(target), None, 'a = 1\n', root=str(tmp_path))
    before = digest(str(tmp_path))
    Gate(True).check(change)
    assert Gate(True).commit(change) is None
    assert digest(str(tmp_path)) == before and not target.exists()
    Gate(False).check(change)
    assert Gate(False).commit(change) is None   # no backup unless asked
    assert target.read_text() == 'a = 1\n'
    again = FileChange(str(target), 'a = 1\n', 'a = 2\n', root=str(tmp_path))
    assert Gate(False).commit(again) is None
    assert os.listdir(str(target.parent)) == ['ours.conf'] and target.read_text() == 'a = 2\n'
    backup = Gate(False).commit(FileChange(str(target), 'a = 2\n', 'a = 3\n', root=str(tmp_path)), backup=True)
    assert backup and open(backup).read() == 'a = 2\n'


def test_the_gate_words_and_decides_as_the_result_does():
    shut, open_ = Gate(True), Gate(False)
    assert (shut.did('write /etc/x'), open_.did('write /etc/x')) == ('would write /etc/x', 'wrote /etc/x')
    assert (shut.did('edit /etc/fstab line 3'), open_.did('edit /etc/fstab line 3')) == (
        'would edit /etc/fstab line 3', 'edited /etc/fstab line 3')
    assert (shut.did('run pooladm -c'), open_.did('run pooladm -c')) == ('would run pooladm -c', 'ran pooladm -c')
    assert (shut.did('persist it in /etc/x'), open_.did('persist it in /etc/x')) == (
        'would persist it in /etc/x', 'persisted it in /etc/x')
    assert (shut.status(False, True), open_.status(False, True), open_.status(True, True)) == (DRIFT, CHANGED, OK)
    assert (shut.now('before', 'after'), open_.now('before', 'after')) == ('before', 'after')


def test_a_plan_keeps_its_contexts_gate():
    context = registry.Context(check_mode=True)
    plan = registry.plan('sysfs_attr', {'attributes': {'kernel/mm/transparent_hugepage/enabled': 'never'}}, context)
    assert plan.gate is context.gate and plan.check_mode is True


def _reads_of_check_mode(path):
    """The lines of ``path`` that read ``<name>.check_mode`` of anything but a gate."""
    with open(path) as handle:
        tree = ast.parse(handle.read())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == 'check_mode':
            owner = node.value
            if not (isinstance(owner, ast.Attribute) and owner.attr == 'gate'):
                found.append(node.lineno)
    return found


def _plan_files():
    top = os.path.dirname(plans.__file__)
    for folder, dummy, names in os.walk(top):
        for name in sorted(names):
            if name.endswith('.py') and name not in ALLOWED:
                yield os.path.relpath(os.path.join(folder, name), top)


@pytest.mark.parametrize('name', sorted(_plan_files()))
def test_no_plan_reads_check_mode_but_through_its_gate(name):
    assert _reads_of_check_mode(os.path.join(os.path.dirname(plans.__file__), name)) == []


def test_the_walk_sees_a_plan_that_reads_check_mode(tmp_path):
    path = tmp_path / 'plan.py'
    path.write_text(u'def render(self):\n    return self.check_mode or self.gate.check_mode\n')
    assert _reads_of_check_mode(str(path)) == [2]
