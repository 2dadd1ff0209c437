# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the layers of plugins/module_utils (docs/DEVELOPING.md, "The layers").

  - every file sits in one of the layer packages, lowest first:
      engine -> formats -> sizing -> plans -> state
    and imports only from its own layer or a lower one;
  - no import cycle between files;
  - no file over MAX_LINES lines and no function or method over MAX_FUNCTION lines.

Prints one line per problem and exits 1 when there is any; exits 0 silently otherwise.
Usage: python3 scripts/check_layout.py [CHECKOUT]
"""

from __future__ import print_function

import ast
import os
import sys

LAYERS = ('engine', 'formats', 'sizing', 'plans', 'state')
MAX_LINES = 500
MAX_FUNCTION = 80
PREFIX = 'ansible_collections.dbhost.tuning.plugins.module_utils.'


def module_files(base):
    for folder, dummy, names in os.walk(base):
        for name in sorted(names):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, base)[:-3].replace(os.sep, '.')
                yield rel[:-len('.__init__')] if rel.endswith('.__init__') else rel, path


def imported(tree, known):
    """The module_utils modules a parsed file imports (names relative to module_utils)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            target = node.module[len(PREFIX):]
            for alias in node.names:
                sub = target + '.' + alias.name
                found.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX):
                    found.add(alias.name[len(PREFIX):])
    return found


def long_functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION:
                yield node.name, node.lineno, length


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


def check(checkout):
    base = os.path.join(checkout, 'plugins', 'module_utils')
    problems, graph, trees = [], {}, {}
    files = dict(module_files(base))
    for name, path in sorted(files.items()):
        with open(path) as handle:
            text = handle.read()
        trees[name] = ast.parse(text, path)
        rel = os.path.relpath(path, checkout)
        lines = text.count('\n')
        if lines > MAX_LINES:
            problems.append('%s: %d lines (at most %d)' % (rel, lines, MAX_LINES))
        for func, lineno, length in long_functions(trees[name]):
            problems.append('%s:%d: function %s is %d lines (at most %d)' % (rel, lineno, func, length, MAX_FUNCTION))
        layer = name.split('.')[0]
        if layer not in LAYERS:
            problems.append('%s: not in a layer package (%s)' % (rel, ', '.join(LAYERS)))
            continue
        graph[name] = set(dep for dep in imported(trees[name], files) if dep != name)
        for dep in sorted(graph[name]):
            dep_layer = dep.split('.')[0]
            if dep_layer in LAYERS and LAYERS.index(dep_layer) > LAYERS.index(layer):
                problems.append('%s: the %s layer imports %s, a higher layer' % (rel, layer, dep))
    for cycle in cycles(graph):
        problems.append('import cycle: %s' % ' -> '.join(cycle))
    return problems


def main(argv):
    checkout = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(checkout)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
