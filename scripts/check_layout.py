# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the layout of plugins/ and of its tests (docs/DEVELOPING.md, "The layers", "Layout", "Tests").

  - every Python file under plugins/ sits in a known folder, and imports from this
    collection only what its folder may (MAY_IMPORT): the modules and module_utils run on
    the managed host, so they import neither plugin_utils nor any other plugin, and of
    ansible itself only ansible.module_utils; plugin_utils (controller-side shared code) and
    the controller plugins (action, callback, filter) import module_utils and plugin_utils,
    never one another; doc_fragments import nothing of the collection;
  - every module_utils file that holds anything starts with its docstring, the file's
    description (docs/DEVELOPING.md describes the folders and points out a few files);
  - every module_utils file sits in one of the layer packages, lowest first:
      engine -> formats -> sizing -> plans -> state
    and imports only from its own layer or a lower one;
  - no import cycle between files;
  - no file over MAX_LINES lines and no function or method over MAX_FUNCTION lines;
  - no name imported that the file does not use: a name kept only so that another file (a
    test) can import it from here is imported from its home instead;
  - the unit tests mirror plugins/: every tests/unit/plugins/<folder>/test_<x>.py sits in a
    folder that plugins/<folder> is, and <x> is the name of a module or package of that folder,
    or the folder's own name (a test of the folder as a whole: test_modules_*.py, test_sizing.py),
    alone or followed by _<what> (test_block_queue_unsupported.py in plans/block_queue/).

Prints one line per problem and exits 1 when there is any; exits 0 silently otherwise.
With --files, prints instead every module_utils file and the first line of its docstring.
Usage: python3 scripts/check_layout.py [--files] [CHECKOUT]
"""

from __future__ import print_function

import ast
import os
import sys

LAYERS = ('engine', 'formats', 'sizing', 'plans', 'state')
MAX_LINES = 500
MAX_FUNCTION = 80
PREFIX = 'ansible_collections.dbhost.tuning.plugins.'
# What each folder of plugins/ may import from this collection's plugins/.
MAY_IMPORT = {
    'module_utils': ('module_utils',),
    'modules': ('module_utils',),
    'plugin_utils': ('module_utils', 'plugin_utils'),
    'action': ('module_utils', 'plugin_utils'),
    'callback': ('module_utils', 'plugin_utils'),
    'filter': ('module_utils', 'plugin_utils'),
    'doc_fragments': (),
}
# Run on the managed host, where ansible's controller code is not there to import.
HOST_SIDE = ('module_utils', 'modules')


def module_files(base):
    """(name relative to plugins/, path) of every Python file under base (plugins/)."""
    for folder, dummy, names in os.walk(base):
        for name in sorted(names):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, base)[:-3].replace(os.sep, '.')
                yield rel[:-len('.__init__')] if rel.endswith('.__init__') else rel, path


def _import_names(tree):
    """Every import of a parsed file: (module, [module.name for each name of a from-import])."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module, [node.module + '.' + alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []


def _relative(name):
    return name[len(PREFIX):] if name.startswith(PREFIX) else None


def imported(tree, known):
    """The plugins/ modules a parsed file imports (names relative to plugins/): for
    `from package import name`, package.name when that is a module, else package."""
    found = set()
    for module, subs in _import_names(tree):
        for sub in subs or [module]:
            target = _relative(sub) if _relative(sub) in known else _relative(module) or _relative(sub)
            if target:
                found.add(target)
    return found


def controller_imports(tree):
    """The ansible modules a parsed file imports that are not ansible.module_utils."""
    found = set()
    for module, subs in _import_names(tree):
        for name in subs if module == 'ansible' else [module]:
            if (name == 'ansible' or name.startswith('ansible.')) and not (
                    name == 'ansible.module_utils' or name.startswith('ansible.module_utils.')):
                found.add(name)
    return found


def long_functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION:
                yield node.name, node.lineno, length


def unused_imports(tree):
    """(line, name) of every name a parsed file imports and never uses."""
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != '__future__':
            imported.update((alias.asname or alias.name, node.lineno) for alias in node.names if alias.name != '*')
        elif isinstance(node, ast.Import):
            imported.update(((alias.asname or alias.name).split('.')[0], node.lineno) for alias in node.names)
    used = set(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return sorted((line, name) for name, line in imported.items() if name not in used)


def cycles(graph):
    """Every import cycle, each once, as a list of modules."""
    found, state, stack = [], {}, []

    def visit(name):
        state[name] = 'open'
        stack.append(name)
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 'open':
                found.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[name] = 'done'

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return found


def shown(name):
    """A module's name in a message: module_utils ones as the layers name them (plans.base)."""
    return name[len('module_utils.'):] if name.startswith('module_utils.') else name


def size_problems(rel, text, tree):
    problems = []
    lines = text.count('\n')
    if lines > MAX_LINES:
        problems.append('%s: %d lines (at most %d)' % (rel, lines, MAX_LINES))
    for func, lineno, length in long_functions(tree):
        problems.append('%s:%d: function %s is %d lines (at most %d)' % (rel, lineno, func, length, MAX_FUNCTION))
    for lineno, name in unused_imports(tree):
        problems.append('%s:%d: imports %s and does not use it (whoever needs it imports it from its home)'
                        % (rel, lineno, name))
    return problems


def import_problems(rel, name, deps, tree):
    """What a file of a known folder imports that its folder may not."""
    area = name.split('.')[0]
    problems = []
    for dep in sorted(deps):
        if dep.split('.')[0] not in MAY_IMPORT[area]:
            allowed = ('only ' + ', '.join(MAY_IMPORT[area])) if MAY_IMPORT[area] else 'nothing'
            problems.append('%s: %s imports %s; %s may import %s of this collection' % (rel, area, dep, area, allowed))
    if area in HOST_SIDE:
        for dep in sorted(controller_imports(tree)):
            problems.append('%s: %s imports %s, controller code (on the managed host only ansible.module_utils)'
                            % (rel, area, dep))
    return problems


def layer_problems(rel, name, deps):
    """A module_utils file outside the layer packages, or importing a higher layer."""
    layer = name.split('.')[1] if '.' in name else ''
    if layer not in LAYERS:
        return ['%s: not in a layer package (%s)' % (rel, ', '.join(LAYERS))]
    problems = []
    for dep in sorted(deps):
        parts = dep.split('.')
        if parts[0] == 'module_utils' and len(parts) > 1 and parts[1] in LAYERS and \
                LAYERS.index(parts[1]) > LAYERS.index(layer):
            problems.append('%s: the %s layer imports %s, a higher layer' % (rel, layer, shown(dep)))
    return problems


def _names(test_name, subjects):
    """Whether test_<x>.py names one of subjects: x is one, or starts with one and an underscore."""
    stem = test_name[len('test_'):-len('.py')]
    return any(stem == name or stem.startswith(name + '_') for name in subjects)


def mirror_problems(checkout):
    """Every unit test file of tests/unit/plugins/ in the folder of plugins/ it tests, named after its subject."""
    tests = os.path.join(checkout, 'tests', 'unit', 'plugins')
    problems = []
    for folder, dummy, names in sorted(os.walk(tests)):
        sub = os.path.relpath(folder, tests)
        source = os.path.normpath(os.path.join(checkout, 'plugins', sub))
        for test_name in sorted(name for name in names if name.startswith('test_') and name.endswith('.py')):
            rel = os.path.relpath(os.path.join(folder, test_name), checkout)
            if not os.path.isdir(source):
                problems.append('%s: no folder %s to mirror (a test sits in the folder of what it tests)'
                                % (rel, os.path.relpath(source, checkout)))
                continue
            subjects = set([os.path.basename(source)])
            for entry in os.listdir(source):
                if entry.endswith('.py') and entry != '__init__.py':
                    subjects.add(entry[:-len('.py')])
                elif os.path.isfile(os.path.join(source, entry, '__init__.py')):
                    subjects.add(entry)
            if not _names(test_name, subjects):
                problems.append('%s: names no module or package of %s (test_<name>.py or test_<name>_<what>.py)'
                                % (rel, os.path.relpath(source, checkout)))
    return problems


def check(checkout):
    base = os.path.join(checkout, 'plugins')
    problems, graph = [], {}
    files = dict(module_files(base))
    for name, path in sorted(files.items()):
        with open(path) as handle:
            text = handle.read()
        tree = ast.parse(text, path)
        rel = os.path.relpath(path, checkout)
        problems.extend(size_problems(rel, text, tree))
        area = name.split('.')[0]
        if area not in MAY_IMPORT:
            problems.append('%s: not in a known folder of plugins/ (%s)' % (rel, ', '.join(sorted(MAY_IMPORT))))
            continue
        graph[name] = set(dep for dep in imported(tree, files) if dep != name)
        problems.extend(import_problems(rel, name, graph[name], tree))
        if area == 'module_utils' and name != area:
            problems.extend(layer_problems(rel, name, graph[name]))
            if text.strip() and ast.get_docstring(tree) is None:
                problems.append("%s: no docstring first (the file's description: what it is for)" % rel)
    for cycle in cycles(graph):
        problems.append('import cycle: %s' % ' -> '.join(shown(name) for name in cycle))
    return problems + mirror_problems(checkout)


def described_files(checkout):
    """'<file relative to module_utils>: <its docstring's first line>' for every module_utils file that holds anything."""
    base = os.path.join(checkout, 'plugins', 'module_utils')
    lines = []
    for dummy, path in sorted(module_files(base), key=lambda item: item[1]):
        with open(path) as handle:
            text = handle.read()
        if text.strip():
            doc = ast.get_docstring(ast.parse(text, path)) or '(no docstring)'
            first = doc.split('\n\n')[0].replace('\n', ' ')
            lines.append('%s: %s' % (os.path.relpath(path, base), first.replace('Internal to dbhost.tuning: ', '')))
    return lines


def main(argv):
    args = [arg for arg in argv[1:] if arg != '--files']
    checkout = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if '--files' in argv[1:]:
        print('\n'.join(described_files(checkout)))
        return 0
    problems = check(checkout)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
