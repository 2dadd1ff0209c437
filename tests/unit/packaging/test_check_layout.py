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


DOC = '"""What the file is for."""\n'


def tree(tmp_path, files):
    """Files relative to plugins/module_utils/."""
    return plugins_tree(tmp_path, dict(('module_utils/' + rel, text) for rel, text in files.items()))


def plugins_tree(tmp_path, files):
    """Files relative to plugins/ (any folder of it); a module_utils file that holds anything gets the
    docstring line the layout asks for first, unless it starts with one or with a comment (the case without)."""
    for rel, text in files.items():
        path = tmp_path / 'plugins' / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.startswith('module_utils/') and text and not text.startswith(('#', '"""')):
            text = DOC + text
        path.write_text(text)
    return str(tmp_path)


def test_the_checkout_passes():
    assert layout(CHECKOUT) == (0, [])


def _function(lines):
    return 'def long():\n' + ''.join('    x = %d\n' % i for i in range(lines - 1))


@pytest.mark.parametrize('files, expected', [
    ({'engine/a.py': PREFIX + 'plans import b\nb\n', 'plans/b.py': ''},
     'plugins/module_utils/engine/a.py: the engine layer imports plans.b, a higher layer'),
    ({'plans/a.py': PREFIX + 'plans import b\nb\n', 'plans/b.py': PREFIX + 'plans import a\na\n'},
     'import cycle: plans.a -> plans.b -> plans.a'),
    ({'plans/a.py': 'x = 1\n' * 500}, 'plugins/module_utils/plans/a.py: 501 lines (at most 500)'),
    ({'plans/a.py': _function(81)}, 'plugins/module_utils/plans/a.py:2: function long is 81 lines (at most 80)'),
    ({'misc.py': ''}, 'plugins/module_utils/misc.py: not in a layer package (engine, formats, sizing, plans, state)'),
    ({'plans/a.py': '# a comment is no docstring\nx = 1\n'},
     "plugins/module_utils/plans/a.py: no docstring first (the file's description: what it is for)"),
])
def test_each_rule_catches_a_tree_that_breaks_it(tmp_path, files, expected):
    rc, lines = layout(tree(tmp_path, files))
    assert rc == 1 and lines == [expected]


PLUGINS = 'from ansible_collections.dbhost.tuning.plugins.'
ONLY_MODULE_UTILS = 'may import only module_utils of this collection'
ONLY_SHARED = 'may import only module_utils, plugin_utils of this collection'
CONTROLLER = 'controller code (on the managed host only ansible.module_utils)'


@pytest.mark.parametrize('files, expected', [
    ({'module_utils/engine/a.py': PLUGINS + 'plugin_utils.report import b\nb\n', 'plugin_utils/report.py': ''},
     'plugins/module_utils/engine/a.py: module_utils imports plugin_utils.report; module_utils ' + ONLY_MODULE_UTILS),
    ({'module_utils/engine/a.py': 'from ansible.plugins.action import ActionBase\nActionBase\n'},
     'plugins/module_utils/engine/a.py: module_utils imports ansible.plugins.action, ' + CONTROLLER),
    ({'module_utils/engine/a.py': 'def f():\n    from ansible import constants\n    return constants\n'},
     'plugins/module_utils/engine/a.py: module_utils imports ansible.constants, ' + CONTROLLER),
    ({'modules/m.py': 'import ansible.errors\nansible.errors\n'}, 'plugins/modules/m.py: modules imports ansible.errors, ' + CONTROLLER),
    ({'modules/m.py': PLUGINS + 'plugin_utils.report import b\nb\n', 'plugin_utils/report.py': ''},
     'plugins/modules/m.py: modules imports plugin_utils.report; modules ' + ONLY_MODULE_UTILS),
    ({'modules/m.py': PLUGINS + 'modules import n\nn\n', 'modules/n.py': ''},
     'plugins/modules/m.py: modules imports modules.n; modules ' + ONLY_MODULE_UTILS),
    ({'callback/c.py': PLUGINS + 'action.a import X\nX\n', 'action/a.py': ''},
     'plugins/callback/c.py: callback imports action.a; callback ' + ONLY_SHARED),
    ({'plugin_utils/report.py': PLUGINS + 'callback.c import X\nX\n', 'callback/c.py': ''},
     'plugins/plugin_utils/report.py: plugin_utils imports callback.c; plugin_utils ' + ONLY_SHARED),
    ({'filter/f.py': PLUGINS + 'modules.m import X\nX\n', 'modules/m.py': ''},
     'plugins/filter/f.py: filter imports modules.m; filter ' + ONLY_SHARED),
    ({'doc_fragments/d.py': PLUGINS + 'module_utils.engine.a import X\nX\n', 'module_utils/engine/a.py': ''},
     'plugins/doc_fragments/d.py: doc_fragments imports module_utils.engine.a; doc_fragments may import nothing '
     'of this collection'),
    ({'plugin_utils/r/a.py': PLUGINS + 'plugin_utils.r import b\nb\n',
      'plugin_utils/r/b.py': PLUGINS + 'plugin_utils.r.a import X\nX\n'},
     'import cycle: plugin_utils.r.a -> plugin_utils.r.b -> plugin_utils.r.a'),
    ({'callback/c.py': 'x = 1\n' * 501}, 'plugins/callback/c.py: 501 lines (at most 500)'),
    ({'plugin_utils/r.py': 'x = 1\n' * 501}, 'plugins/plugin_utils/r.py: 501 lines (at most 500)'),
    ({'modules/m.py': 'x = 1\n' * 501}, 'plugins/modules/m.py: 501 lines (at most 500)'),
    ({'action/a.py': _function(81)}, 'plugins/action/a.py:1: function long is 81 lines (at most 80)'),
    ({'module_utils/engine/a.py': 'from ansible_collections.x import b  # pylint: disable=unused-import\n'},
     'plugins/module_utils/engine/a.py:2: imports b and does not use it (whoever needs it imports it from its home)'),
    ({'callback/c.py': 'import os.path\n'},
     'plugins/callback/c.py:1: imports os and does not use it (whoever needs it imports it from its home)'),
    ({'lookup/l.py': ''}, 'plugins/lookup/l.py: not in a known folder of plugins/ '
                          '(action, callback, doc_fragments, filter, module_utils, modules, plugin_utils)'),
])
def test_each_plugins_rule_catches_a_tree_that_breaks_it(tmp_path, files, expected):
    rc, lines = layout(plugins_tree(tmp_path, files))
    assert rc == 1 and lines == [expected]


def test_what_each_folder_may_import_passes(tmp_path):
    """The controller side imports the shared code and ansible; the host side module_utils and ansible.module_utils."""
    files = {
        'module_utils/engine/a.py': 'from __future__ import annotations\nfrom ansible.module_utils.basic import '
                                    'AnsibleModule\nX = AnsibleModule\n',
        'modules/m.py': PLUGINS + 'module_utils.engine import a\nfrom ansible.module_utils import basic\nY = a, basic\n',
        'plugin_utils/r/b.py': PLUGINS + 'module_utils.engine.a import X\nY = X\n',
        'callback/c.py': 'from ansible.plugins.callback import CallbackBase\n' + PLUGINS + 'plugin_utils.r.b import X\n'
                         'Y = CallbackBase, X\n',
        'action/a.py': 'import ansible.errors\n' + PLUGINS + 'module_utils.engine.a import X\nY = ansible.errors, X\n',
        'filter/f.py': PLUGINS + 'plugin_utils.r import b\nY = b\n',
        'doc_fragments/d.py': 'x = 1\n' * 500,
    }
    assert layout(plugins_tree(tmp_path, files)) == (0, [])


def test_a_lower_layer_may_be_imported(tmp_path):
    assert layout(tree(tmp_path, {'plans/a.py': PREFIX + 'engine import b\nb\n', 'engine/b.py': ''})) == (0, [])


def mirrored_tree(tmp_path, tests):
    """A plugins/ tree of a few sources, and test files at the given paths under tests/unit/plugins/."""
    plugins_tree(tmp_path, {'module_utils/engine/__init__.py': '', 'module_utils/engine/compare.py': '',
                            'module_utils/plans/__init__.py': '', 'module_utils/plans/base.py': '',
                            'module_utils/plans/block_queue/__init__.py': '',
                            'module_utils/plans/block_queue/plan.py': '', 'modules/hugepages.py': ''})
    for rel in tests:
        path = tmp_path / 'tests' / 'unit' / 'plugins' / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('')
    return str(tmp_path)


def test_tests_that_mirror_plugins_pass(tmp_path):
    """A test named after a module, a package or its own folder, alone or with _<what>; helpers are not tests."""
    tests = ['module_utils/engine/test_compare.py', 'module_utils/engine/test_compare_cases.py',
             'module_utils/plans/test_base.py', 'module_utils/plans/test_block_queue_devices.py',
             'module_utils/plans/block_queue/test_block_queue_unsupported.py',
             'module_utils/plans/block_queue/test_plan.py', 'modules/test_hugepages.py',
             'modules/test_modules_confinement.py', 'modules/conftest.py', 'modules/fake_host.py',
             'module_utils/plans/block_queue/cases.yml']
    assert layout(mirrored_tree(tmp_path, tests)) == (0, [])


NAMES_NONE = ': names no module or package of %s (test_<name>.py or test_<name>_<what>.py)'


@pytest.mark.parametrize('test, expected', [
    ('module_utils/test_compare.py', NAMES_NONE % 'plugins/module_utils'),
    ('module_utils/plans/test_compare.py', NAMES_NONE % 'plugins/module_utils/plans'),
    ('module_utils/engine/test_comparison.py', NAMES_NONE % 'plugins/module_utils/engine'),
    ('module_utils/engine/test_engine2.py', NAMES_NONE % 'plugins/module_utils/engine'),
    ('modules/test_hugepage.py', NAMES_NONE % 'plugins/modules'),
    ('module_utils/sizing/test_shm.py', ': no folder plugins/module_utils/sizing to mirror '
                                        '(a test sits in the folder of what it tests)'),
    ('callback/test_drift_report.py', ': no folder plugins/callback to mirror (a test sits in the folder of what it tests)'),
])
def test_a_test_that_does_not_mirror_plugins_is_reported(tmp_path, test, expected):
    rc, lines = layout(mirrored_tree(tmp_path, ['module_utils/engine/test_compare.py', test]))
    assert rc == 1 and lines == ['tests/unit/plugins/' + test + expected]


def test_developing_describes_every_module_utils_folder_and_names_only_what_exists():
    """docs/DEVELOPING.md's table has a row per folder of module_utils and rows for the files to read first,
    each naming a file or folder that exists; every other file is described by its docstring."""
    with open(os.path.join(CHECKOUT, 'docs', 'DEVELOPING.md')) as handle:
        text = handle.read()
    section = text[text.index('## The layers'):text.index('## Rules every module keeps')]
    rows = set(line.split('`')[1] for line in section.splitlines() if line.startswith('| `'))
    base = os.path.join(CHECKOUT, 'plugins', 'module_utils')
    folders = set(os.path.relpath(folder, base) + '/' for folder, dummy, names in os.walk(base)
                  if folder != base and '__init__.py' in names)
    assert sorted(folders - rows) == []
    assert sorted(row for row in rows if not os.path.exists(os.path.join(base, row))) == []
    assert len(rows - folders) >= 1


def test_files_lists_each_module_utils_file_with_its_docstring(tmp_path):
    root = plugins_tree(tmp_path, {'module_utils/engine/__init__.py': '',
                                   'module_utils/engine/a.py': 'x = 1\n',
                                   'module_utils/plans/b.py': '"""Internal to dbhost.tuning: the b plan,\nin two lines.\n\nMore."""\n'})
    proc = subprocess.run([sys.executable, SCRIPT, '--files', root], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True)
    assert proc.stdout.splitlines() == ['engine/a.py: What the file is for.', 'plans/b.py: the b plan, in two lines.']
