# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/check_layout.py: the checkout passes, and each rule it enforces catches a tree that breaks it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(CHECKOUT, 'scripts', 'check_layout.py')
PREFIX = 'from ansible_collections.dbhost.tuning.plugins.module_utils.'


def layout(checkout):
    proc = subprocess.run([sys.executable, SCRIPT, checkout], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    return proc.returncode, proc.stdout.splitlines()


def tree(tmp_path, files):
    base = tmp_path / 'plugins' / 'module_utils'
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path)


def test_the_checkout_passes():
    assert layout(CHECKOUT) == (0, [])


def _function(lines):
    return 'def long():\n' + ''.join('    x = %d\n' % i for i in range(lines - 1))


@pytest.mark.parametrize('files, expected', [
    ({'engine/a.py': PREFIX + 'plans import b\n', 'plans/b.py': ''},
     'plugins/module_utils/engine/a.py: the engine layer imports plans.b, a higher layer'),
    ({'plans/a.py': PREFIX + 'plans import b\n', 'plans/b.py': PREFIX + 'plans import a\n'},
     'import cycle: plans.a -> plans.b -> plans.a'),
    ({'plans/a.py': 'x = 1\n' * 501}, 'plugins/module_utils/plans/a.py: 501 lines (at most 500)'),
    ({'plans/a.py': _function(81)}, 'plugins/module_utils/plans/a.py:1: function long is 81 lines (at most 80)'),
    ({'misc.py': ''}, 'plugins/module_utils/misc.py: not in a layer package (engine, formats, sizing, plans, state)'),
])
def test_each_rule_catches_a_tree_that_breaks_it(tmp_path, files, expected):
    rc, lines = layout(tree(tmp_path, files))
    assert rc == 1 and lines == [expected]


def test_a_lower_layer_may_be_imported(tmp_path):
    assert layout(tree(tmp_path, {'plans/a.py': PREFIX + 'engine import b\n', 'engine/b.py': ''})) == (0, [])


def test_developing_names_every_module_utils_file():
    """docs/DEVELOPING.md's file table has one row per module_utils file, and no row for a file that is gone."""
    with open(os.path.join(CHECKOUT, 'docs', 'DEVELOPING.md')) as handle:
        text = handle.read()
    section = text[text.index('## The layers'):text.index('## Rules every module keeps')]
    rows = set(line.split('`')[1] for line in section.splitlines() if line.startswith('| `'))
    base = os.path.join(CHECKOUT, 'plugins', 'module_utils')
    files = set()
    for folder, dummy, names in os.walk(base):
        files.update(os.path.relpath(os.path.join(folder, name), base) for name in names
                     if name.endswith('.py') and name != '__init__.py')
    assert sorted(files - rows) == [] and sorted(rows - files) == []
