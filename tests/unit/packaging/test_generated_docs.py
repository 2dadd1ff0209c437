# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/gen_docs.py: the modules' documentation, the roles' argument_specs defaults and README
tables are what their sources make them, and a change in a source makes the check fail naming
the file (the sanity stage of scripts/test.sh runs the same check)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import SHARED
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
_SPEC = importlib.util.spec_from_file_location('gen_docs', os.path.join(CHECKOUT, 'scripts', 'gen_docs.py'))
gen_docs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gen_docs)

DOCS = 'plugins/module_utils/state/registry_docs/'
APPLY = 'Set the live value in the running kernel when it differs.'


def copy(tmp_path):
    """A copy of what the generator reads and writes (plugins/ and roles/), and the script itself."""
    for sub in ('plugins', 'roles', 'scripts'):
        shutil.copytree(os.path.join(CHECKOUT, sub), str(tmp_path / sub),
                        ignore=shutil.ignore_patterns('__pycache__'))
    return str(tmp_path)


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def module_docs(path):
    """DOCUMENTATION and RETURN of a module file, loaded."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and node.targets[0].id in ('DOCUMENTATION', 'RETURN'):
            found[node.targets[0].id] = yaml.safe_load(node.value.value)
    return found


def test_every_generated_file_is_up_to_date():
    assert gen_docs.run(CHECKOUT, registry, write=False) == []


@pytest.mark.parametrize('module', sorted(registry.MODULES))
def test_each_documented_option_has_its_spec_type_default_and_choices(module):
    spec = registry.spec(module)
    options = module_docs(pathlib.Path(CHECKOUT, 'plugins', 'modules', module + '.py'))['DOCUMENTATION']['options']
    assert set(options) <= set(spec)
    for name, rules in spec.items():
        if name in SHARED:   # its fragment gives the rest
            assert set(options.get(name, {})) <= set(['description']), name
            continue
        doc = options[name]
        assert doc['type'] == rules.get('type', 'str'), name
        assert doc.get('default') == rules.get('default'), name
        assert doc.get('choices') == (list(rules['choices']) if rules.get('choices') else None), name
        assert bool(doc.get('required')) == bool(rules.get('required')), name


def test_a_changed_description_makes_the_check_fail_naming_the_module_and_a_run_writes_it(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'kernel_params.yml', APPLY, 'Set the live value now.')
    assert gen_docs.run(root, registry, write=False) == ['plugins/modules/kernel_params.py']
    assert gen_docs.run(root, registry, write=True) == ['plugins/modules/kernel_params.py']
    doc = module_docs(tmp_path / 'plugins' / 'modules' / 'kernel_params.py')['DOCUMENTATION']
    assert doc['options']['apply'] == {'description': 'Set the live value now.', 'type': 'bool', 'default': True}
    assert gen_docs.run(root, registry, write=False) == []


def test_the_script_check_exits_1_naming_the_stale_file_and_writes_nothing(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'kernel_params.yml', APPLY, 'Set the live value now.')
    module = tmp_path / 'plugins' / 'modules' / 'kernel_params.py'
    before = module.read_bytes()
    script = os.path.join(root, 'scripts', 'gen_docs.py')
    done = subprocess.run([sys.executable, script, '--check'], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stdout == 'plugins/modules/kernel_params.py: out of date: run python3 scripts/gen_docs.py\n'
    assert module.read_bytes() == before
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, 'plugins/modules/kernel_params.py: written\n')
    assert subprocess.run([sys.executable, script, '--check'], check=False).returncode == 0


def test_a_hand_edit_inside_a_generated_block_is_out_of_date_and_undone(tmp_path):
    root = copy(tmp_path)
    module = tmp_path / 'plugins' / 'modules' / 'hugepages.py'
    before = module.read_text()
    edit(module, '    choices: [fail, warn]\n', '    choices: [fail, warn, ignore]\n')
    assert gen_docs.run(root, registry, write=False) == ['plugins/modules/hugepages.py']
    gen_docs.run(root, registry, write=True)
    assert module.read_text() == before


@pytest.mark.parametrize('old, new, words', [
    ('  apply:\n    description: %s\n' % APPLY, '', 'option(s) apply without words'),
    ('options:\n', 'options:\n  bogus:\n    description: Not an option.\n', 'bogus: no such option in the argument spec'),
    ('  apply:\n    description: %s\n' % APPLY, '  apply:\n    description: %s\n    type: str\n' % APPLY,
     'option apply: type belong(s) to the argument spec'),
])
def test_a_source_that_does_not_fit_is_refused_naming_the_file_and_the_option(tmp_path, old, new, words):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'kernel_params.yml', old, new)
    with pytest.raises(gen_docs.SourceError) as caught:
        gen_docs.run(root, registry, write=True)
    assert str(caught.value).startswith(DOCS + 'kernel_params.yml: ')
    assert words in str(caught.value)


def test_a_module_entry_wins_over_the_shared_return_key_by_key_and_null_removes_a_key(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'sysfs_attr.yml', 'returns:\n',
         'returns:\n  changed:\n    description: Never.\n  drift_gate: null\n')
    gen_docs.run(root, registry, write=True)
    returns = module_docs(tmp_path / 'plugins' / 'modules' / 'sysfs_attr.py')['RETURN']
    assert returns['changed'] == {'description': 'Never.', 'returned': 'always', 'type': 'bool'}
    assert 'drift_gate' not in returns
    assert returns['settings']['contains']['reason']['sample'] == 'not persisted'   # from result.yml
    other = module_docs(tmp_path / 'plugins' / 'modules' / 'kernel_params.py')['RETURN']
    assert other['changed']['description'] == 'Whether anything changed (in check mode, would change).'


def test_a_changed_shared_return_key_reaches_every_module_of_the_contract(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'result.yml', 'Whether anything changed (in check mode, would change).', 'Anything changed.')
    stale = gen_docs.run(root, registry, write=False)
    takes = sorted('plugins/modules/%s.py' % name for name in registry.MODULES
                   if 'fail_on_drift' in registry.spec(name))
    keeps_own = ['plugins/modules/db_effect.py', 'plugins/modules/mount_options.py']   # their own words
    assert stale == [path for path in takes if path not in keeps_own]


def test_a_changed_role_default_rewrites_its_argument_spec_and_readme_table(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / 'roles' / 'kernel_params' / 'defaults' / 'main.yml', 'kernel_params_mode: minimum\n',
         'kernel_params_mode: exact\n')
    written = gen_docs.run(root, registry, write=True)
    assert written == ['roles/kernel_params/meta/argument_specs.yml', 'roles/kernel_params/README.md']
    specs = yaml.safe_load((tmp_path / 'roles' / 'kernel_params' / 'meta' / 'argument_specs.yml').read_text())
    assert specs['argument_specs']['main']['options']['kernel_params_mode']['default'] == 'exact'
    readme = (tmp_path / 'roles' / 'kernel_params' / 'README.md').read_text()
    assert '| `kernel_params_mode` | str | `exact` |' in readme
    assert '\nkernel_params_mode: exact          # minimum | exact | maximum\n' in readme   # its snippet


def test_a_role_default_without_an_argument_spec_entry_is_refused(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / 'roles' / 'block_queue' / 'defaults' / 'main.yml', '---\n', '---\nblock_queue_bogus: 1\n')
    with pytest.raises(gen_docs.SourceError) as caught:
        gen_docs.run(root, registry, write=True)
    assert str(caught.value) == ('roles/block_queue/defaults/main.yml: block_queue_bogus not in '
                                 'roles/block_queue/meta/argument_specs.yml')


@pytest.mark.parametrize('role', registry.ROLE_NAMES)
def test_each_argument_spec_default_is_the_defaults_file_value(role):
    with open(os.path.join(CHECKOUT, 'roles', role, 'defaults', 'main.yml')) as handle:
        defaults = yaml.safe_load(handle)
    with open(os.path.join(CHECKOUT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        options = yaml.safe_load(handle)['argument_specs']['main']['options']
    assert dict((name, rules.get('default')) for name, rules in options.items() if name in defaults) == defaults


def test_a_line_over_pep8s_160_columns_is_refused_naming_the_words_file(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'kernel_params.yml', '    description: %s\n' % APPLY, '    description: %s\n' % ('x' * 160))
    with pytest.raises(gen_docs.SourceError) as caught:
        gen_docs.run(root, registry, write=True)
    assert str(caught.value).startswith(DOCS + 'kernel_params.yml: a line of plugins/modules/kernel_params.py over 160')


def test_a_return_key_without_words_or_type_is_refused_naming_it(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / DOCS / 'sysfs_attr.yml', 'returns:\n', 'returns:\n  unknown_key:\n    returned: always\n')
    with pytest.raises(gen_docs.SourceError) as caught:
        gen_docs.run(root, registry, write=True)
    assert str(caught.value) == DOCS + 'sysfs_attr.yml: RETURN unknown_key without a description or a type'


def test_a_module_that_names_no_backup_file_gets_none_and_one_that_names_it_gets_its_structure(tmp_path):
    db_effect = module_docs(pathlib.Path(CHECKOUT, 'plugins', 'modules', 'db_effect.py'))['RETURN']
    assert 'backup_file' not in db_effect and 'diff' not in db_effect
    kernel_params = module_docs(pathlib.Path(CHECKOUT, 'plugins', 'modules', 'kernel_params.py'))['RETURN']
    assert kernel_params['backup_file'] == {
        'description': 'The backup of O(file), when O(backup=true) and the file changed.',
        'returned': 'changed and backup requested', 'type': 'str'}


def test_a_hand_edit_of_a_shared_option_type_in_its_fragment_is_out_of_date_and_undone(tmp_path):
    root = copy(tmp_path)
    fragments = tmp_path / 'plugins' / 'doc_fragments' / 'common.py'
    before = fragments.read_text()
    edit(fragments, '    type: bool\n    default: false\n\'\'\'\n\n    # dbhost.tuning.common.shadowed',
         '    type: str\n\'\'\'\n\n    # dbhost.tuning.common.shadowed')
    assert gen_docs.run(root, registry, write=True) == ['plugins/doc_fragments/common.py']
    assert fragments.read_text() == before


def test_a_fragment_without_its_shared_option_is_refused_naming_it(tmp_path):
    root = copy(tmp_path)
    edit(tmp_path / 'plugins' / 'doc_fragments' / 'common.py', '  backup:\n', '  keep_copy:\n')
    with pytest.raises(gen_docs.SourceError) as caught:
        gen_docs.run(root, registry, write=True)
    assert str(caught.value) == 'plugins/doc_fragments/common.py: BACKUP documents no option backup'
