# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation run: break the code on purpose, one small change at a time, and see whether a test notices.

For the shared code whose mistakes the suite must catch (plugins/module_utils engine/, formats/,
sizing/, and the comparison and ownership code of state/), this script:

  1. copies the checkout into a temporary folder (one copy per job; the working tree is never
     touched, and every copy is removed at the end, also on Ctrl-C);
  2. runs the unit stage once in a copy under a line tracer, to learn which tests run each line
     of the files above; the map is kept in .cache/mutate/, keyed by the hash of the sources and
     the tests, so a second run on the same code reuses it;
  3. makes the mutants (below) with the standard ast module, samples them (by a hash of what
     each mutant is, so that a change elsewhere leaves the sample alone), and runs for each
     only the tests that run its line (``pytest -x -q``, fastest first, with a timeout);
  4. runs the whole unit stage (tests/unit tests/integration) on the survivors: all of them
     applied at once, halving the group whenever the suite fails (each half tries the test
     that failed first, alone), so that a survivor costs one full run only when the suite
     finds it;
  5. prints each survivor (file:line, function, the change) and the kill rate.

Mutations: a comparison's boundary (< <=, > >=) or sense (== !=, in / not in, is / is not);
+ -, * //, // *; ceil division -(-a // b) into floor a // b and floor into ceil; max/min and
any/all swapped; and/or; not removed; an if or while condition negated; True/False; an
integer constant changed by one (0 -> 1, 1 -> 0, n -> n + 1); a string compared with
something emptied; return, raise, continue and break replaced by pass.  Docstrings, imports,
exception messages and f-strings are left alone.

Usage (from the checkout, with the test venv; see docs/DEVELOPING.md for when):
  python3 scripts/mutate.py [--sample N] [--seed S] [--files GLOB ...] [--jobs J]
                            [--timeout SECONDS] [--list] [--no-full-stage]
Exit status: 0 when the kill rate is at least --target (95 %), 1 below it, 2 on a setup error.
"""

from __future__ import print_function

import argparse
import ast
import copy
import fnmatch
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_UTILS = 'plugins/module_utils/'
# (glob under the checkout, qualified names of the functions to mutate or None for all)
TARGETS = (
    (MODULE_UTILS + 'engine/*.py', None),
    (MODULE_UTILS + 'formats/*.py', None),
    (MODULE_UTILS + 'sizing/*.py', None),
    # state/: the one-owner merge rule, the kinds' hooks, and the records' owner and kind in the combined result
    (MODULE_UTILS + 'state/desired.py', None),
    # the kinds' hooks: which desired-state record a plan's record stands for, the merged keys a call takes
    (MODULE_UTILS + 'state/hooks.py', None),
    (MODULE_UTILS + 'state/host_state.py', ('HostState.combine', 'HostState._add_part', 'HostState._restarts',
                                            'HostState.output', 'HostState.failed_records',
                                            'HostState.extra_problems')),
)
UNIT_STAGE = ('tests/unit', 'tests/integration')
CACHE = os.path.join('.cache', 'mutate')
COPY_IGNORE = shutil.ignore_patterns('.git', '.cache', '.venv', '__pycache__', '.pytest_cache')
OTHER_COLLECTIONS = os.path.join('.cache', 'collections', 'ansible_collections')


# ------------------------------------------------------------------ the mutants
class Mutant(object):
    """One change: the bytes [start, end) of ``path`` become ``after``."""

    def __init__(self, path, node, after, kind, function, lines, at_import=False):
        self.path = path
        # run when the file is imported (module or class level, default values): any test may see it
        self.at_import = at_import
        self.line = node.lineno
        self.start = lines[node.lineno - 1] + node.col_offset
        self.end = lines[node.end_lineno - 1] + node.end_col_offset
        self.after = after
        self.kind = kind
        self.function = function
        self.lines = set(range(node.lineno, node.end_lineno + 1))
        self.before = ''
        self.result = None
        self.detail = ''

    def apply(self, source):
        return source[:self.start] + self.after.encode('utf-8') + source[self.end:]

    def key(self):
        return '%s:%d:%d:%d:%s' % (self.path, self.start, self.end, self.line, self.after)

    def describe(self):
        return '%s:%d %s [%s] %s -> %s' % (self.path, self.line, self.function or '<module>', self.kind,
                                           _short(self.before), _short(self.after))


def _short(text, width=70):
    text = ' '.join(text.split())
    return text if len(text) <= width else text[:width - 3] + '...'


BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
SENSE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
         ast.IsNot: ast.Is}
ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.Div: ast.Mult}
SWAPPED_CALLS = {'max': 'min', 'min': 'max', 'any': 'all', 'all': 'any'}


def _is_ceil(node):
    """``-(-a // b)``: ceiling division."""
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.BinOp)
            and isinstance(node.operand.op, ast.FloorDiv) and isinstance(node.operand.left, ast.UnaryOp)
            and isinstance(node.operand.left.op, ast.USub))


def _is_text(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _tail_ids(block):
    """The statements after which ``block`` ends, through if/with/try: a ``return None`` there
    (of a function's block) or a ``continue`` (of a loop's block) changes nothing when removed."""
    if not block:
        return set()
    last = block[-1]
    ids = set([id(last)])
    if isinstance(last, ast.If):
        ids |= _tail_ids(last.body) | _tail_ids(last.orelse)
    elif isinstance(last, (ast.With, ast.AsyncWith)):
        ids |= _tail_ids(last.body)
    elif isinstance(last, ast.Try):
        ids |= _tail_ids(last.orelse or last.body)
        for handler in last.handlers:
            ids |= _tail_ids(handler.body)
    return ids


class Finder(ast.NodeVisitor):
    """Walk one file's tree and collect its mutants (skipping docstrings, messages and f-strings)."""

    def __init__(self, path, source, functions=None):
        self.path = path
        self.source = source
        self.functions = functions
        self.lines = [0]
        for line in source.splitlines(True):
            self.lines.append(self.lines[-1] + len(line))
        self.scope = []
        self.tables = 0
        self.function_tails = set()
        self.loop_tails = set()
        self.functions_open = 0
        self.found = []
        self.ceil_parts = set()

    # -- bookkeeping
    def _wanted(self):
        if self.functions is None:
            return True
        name = '.'.join(self.scope)
        return any(name == f or name.startswith(f + '.') for f in self.functions)

    def add(self, node, after, kind, statement=False):
        if not self._wanted() or self.tables:
            return
        text = after if statement else '(%s)' % after
        mutant = Mutant(self.path, node, text, kind, '.'.join(self.scope), self.lines,
                        at_import=self.functions_open == 0)
        mutant.before = self.source[mutant.start:mutant.end].decode('utf-8', 'replace')
        self.found.append(mutant)

    def _replace(self, node, field, value, kind):
        changed = copy.deepcopy(node)
        setattr(changed, field, value)
        self.add(node, ast.unparse(changed), kind)

    # -- scopes and what is never mutated
    def _scoped(self, node):
        function = not isinstance(node, ast.ClassDef)
        for child in node.decorator_list:
            self.visit(child)
        if function:  # default values are computed where the function is defined
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self.visit(default)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and _is_text(body[0].value):
            body = body[1:]  # the docstring
        self.scope.append(node.name)
        self.functions_open += function
        if function:
            self.function_tails |= _tail_ids(body)
        for statement in body:
            self.visit(statement)
        self.functions_open -= function
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Module(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and _is_text(body[0].value):
            body = body[1:]
        for statement in body:
            self.visit(statement)

    def visit_Import(self, node):
        return

    visit_ImportFrom = visit_Import

    def visit_JoinedStr(self, node):
        return  # f-strings: their inner positions are not reliable, and they are text

    def visit_Assign(self, node):
        if any(isinstance(t, ast.Name) and t.id == '__metaclass__' for t in node.targets):
            return
        self.generic_visit(node)

    def _literal(self, node):
        # A literal at module or class level is a table of data (vendor limits, unit factors):
        # checked against its source by review; a test that restated it would prove nothing.
        table = self.functions_open == 0
        self.tables += table
        self.generic_visit(node)
        self.tables -= table

    visit_Dict = visit_List = visit_Tuple = visit_Set = _literal

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)

    # -- statements
    def visit_Raise(self, node):
        self.add(node, 'pass', 'raise removed', statement=True)  # its message is not mutated

    def visit_Return(self, node):
        returns_none = node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
        if not (returns_none and id(node) in self.function_tails):  # else the same as falling off the end
            self.add(node, 'pass', 'return removed', statement=True)
        self.generic_visit(node)

    def visit_Continue(self, node):
        if id(node) not in self.loop_tails:  # else the loop goes on the same way
            self.add(node, 'pass', 'continue removed', statement=True)

    def _loop(self, node):
        self.loop_tails |= _tail_ids(node.body)
        if isinstance(node, ast.While):
            self._condition(node)
        else:
            self.generic_visit(node)

    visit_For = visit_AsyncFor = _loop

    def visit_Break(self, node):
        self.add(node, 'pass', 'break removed', statement=True)

    def _condition(self, node):
        if not isinstance(node.test, (ast.Compare, ast.UnaryOp)):
            self.add(node.test, 'not (%s)' % ast.unparse(node.test), 'condition negated')
        self.generic_visit(node)

    visit_If = _condition

    def visit_While(self, node):
        self._loop(node)

    def visit_AugAssign(self, node):
        swapped = ARITHMETIC.get(type(node.op))
        if swapped is not None and not isinstance(node.op, ast.Div):
            changed = copy.deepcopy(node)
            changed.op = swapped()
            self.add(node, ast.unparse(changed), 'arithmetic', statement=True)
        self.generic_visit(node)

    # -- expressions
    def visit_Compare(self, node):
        for index, op in enumerate(node.ops):
            for table, kind in ((BOUNDARY, 'comparison boundary'), (SENSE, 'comparison sense')):
                if type(op) in table:
                    ops = list(node.ops)
                    ops[index] = table[type(op)]()
                    self._replace(node, 'ops', ops, kind)
        for operand in [node.left] + list(node.comparators):
            for item in (operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]):
                if _is_text(item):
                    self.add(item, repr('' if item.value else '?'), 'string emptied')
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        self._replace(node, 'op', ast.Or() if isinstance(node.op, ast.And) else ast.And(), 'and/or')
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.add(node, ast.unparse(node.operand), 'not removed')
        elif _is_ceil(node):
            floor = node.operand
            self.add(node, '%s // %s' % (ast.unparse(floor.left.operand), ast.unparse(floor.right)), 'ceil -> floor')
            self.ceil_parts.add(id(floor))
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.Mod) and _is_text(node.left):
            return  # message formatting
        if isinstance(node.op, ast.Add) and (_is_text(node.left) or _is_text(node.right)):
            self.generic_visit(node)
            return  # text joined
        swapped = ARITHMETIC.get(type(node.op))
        if id(node) not in self.ceil_parts and swapped is not None:
            self._replace(node, 'op', swapped(), 'arithmetic')
        if isinstance(node.op, ast.FloorDiv) and id(node) not in self.ceil_parts:
            self.add(node, '-(-(%s) // (%s))' % (ast.unparse(node.left), ast.unparse(node.right)), 'floor -> ceil')
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in SWAPPED_CALLS:
            self.add(node.func, SWAPPED_CALLS[node.func.id], 'call swapped', statement=True)
        for argument in node.args + [k.value for k in node.keywords]:
            self.visit(argument)
        if not isinstance(node.func, ast.Name):
            self.visit(node.func)

    def visit_Constant(self, node):
        if isinstance(node.value, bool):
            self.add(node, repr(not node.value), 'True/False', statement=True)
        elif isinstance(node.value, int):
            value = {0: 1, 1: 0}.get(node.value, node.value + 1)
            self.add(node, repr(value), 'constant', statement=True)


def stable_sample(mutants, count, seed):
    """``count`` of ``mutants``, each drawn by a hash of what it is, not of where it is.

    A mutant's rank is the hash of the seed, its file, function, kind, the text it replaces and
    the text it puts (and which occurrence of that it is in the function), never its line or
    offset: a change elsewhere in the code leaves the rest of the sample as it was, so two runs
    on either side of a change compare the same mutants where the code did not change.
    """
    seen = {}
    ranked = []
    for mutant in sorted(mutants, key=lambda m: (m.path, m.start)):
        what = (mutant.path, mutant.function or '', mutant.kind, mutant.before, mutant.after)
        seen[what] = seen.get(what, -1) + 1
        text = '\0'.join(str(part) for part in (seed,) + what + (seen[what],))
        ranked.append((hashlib.sha256(text.encode('utf-8')).hexdigest(), mutant))
    ranked.sort(key=lambda pair: pair[0])
    return sorted((mutant for dummy, mutant in ranked[:count]), key=lambda m: (m.path, m.start))


def target_files(checkout, patterns=None):
    """[(relative path, functions or None)] of the files to mutate, narrowed by --files globs."""
    chosen = []
    for pattern, functions in TARGETS:
        for path in sorted(glob.glob(os.path.join(checkout, pattern))):
            rel = os.path.relpath(path, checkout)
            if os.path.basename(rel) == '__init__.py':
                continue
            if patterns and not any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, '*' + p) for p in patterns):
                continue
            chosen.append((rel, functions))
    return chosen


def make_mutants(checkout, files):
    """Every mutant of ``files`` that still compiles, one per distinct result."""
    mutants, seen = [], set()
    for rel, functions in files:
        with open(os.path.join(checkout, rel), 'rb') as handle:
            source = handle.read()
        finder = Finder(rel, source, functions)
        finder.visit(ast.parse(source, rel))
        for mutant in finder.found:
            changed = mutant.apply(source)
            digest = hashlib.sha1(rel.encode() + changed).hexdigest()
            if digest in seen or changed == source:
                continue
            try:
                compile(changed, rel, 'exec')
            except SyntaxError:
                continue
            seen.add(digest)
            mutants.append(mutant)
    return mutants


# ------------------------------------------------------------------ copies of the checkout
class Copies(object):
    """Temporary copies of the checkout, removed on exit, whatever ends the run."""

    def __init__(self, checkout):
        self.checkout = checkout
        self.base = tempfile.mkdtemp(prefix='dbhost-mutate-')
        os.chmod(self.base, 0o755)  # the database servers of the real-server tests run as their own users
        self.count = 0

    def make(self):
        """A new copy, with its own ANSIBLE_COLLECTIONS_PATH naming it dbhost.tuning: (folder, env)."""
        self.count += 1
        folder = os.path.join(self.base, 'copy%d' % self.count)
        tree = os.path.join(folder, 'ansible_collections', 'dbhost', 'tuning')
        shutil.copytree(self.checkout, tree, ignore=COPY_IGNORE, symlinks=True)
        others = os.path.join(self.checkout, OTHER_COLLECTIONS)
        for namespace in (os.listdir(others) if os.path.isdir(others) else []):
            if namespace == 'dbhost':
                continue
            os.symlink(os.path.join(others, namespace), os.path.join(folder, 'ansible_collections', namespace))
        # PYTHONDONTWRITEBYTECODE: a mutant of the same size written in the same second as the
        # file it replaces would otherwise be run from the old file's cached bytecode.
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=folder, PYTHONDONTWRITEBYTECODE='1')
        env.pop('PYTEST_ADDOPTS', None)
        env['DBHOST_MUTATE_WORK'] = _made(os.path.join(folder, 'work'))
        return tree, env

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


def _made(path):
    os.makedirs(path)
    return path


RUNNING = set()  # pytest processes now running, killed when the run is interrupted
STOPPING = threading.Event()


def stop_running():
    STOPPING.set()
    for proc in list(RUNNING):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def run_pytest(tree, env, args, timeout):
    """(exit code or 'timeout', the last lines of the output) of one pytest run in ``tree``."""
    argv = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
            '--basetemp', os.path.join(env['DBHOST_MUTATE_WORK'], 'pytest')] + args
    with tempfile.TemporaryFile(dir=env['DBHOST_MUTATE_WORK']) as output:
        if STOPPING.is_set():
            return 'stopped', ''
        with subprocess.Popen(argv, cwd=tree, env=env, stdout=output, stderr=subprocess.STDOUT,
                              start_new_session=True) as proc:
            RUNNING.add(proc)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code = 'timeout'
            finally:
                RUNNING.discard(proc)
        if STOPPING.is_set():
            return 'stopped', ''
        output.seek(0)
        text = output.read().decode('utf-8', 'replace')
    failed = [line[7:] for line in text.splitlines() if line.startswith('FAILED ') or line.startswith('ERROR ')]
    tail = text.strip().splitlines()[-1:] if text.strip() else ['']
    if code == 4 and 'ERROR collecting' in text:
        code = 2  # a test file no longer imports: the mutant broke it (not a test that is missing)
    return code, (failed[0] if failed else tail[0])


# ------------------------------------------------------------------ which tests run which line
def _tree_hash(checkout, files):
    sha = hashlib.sha256()
    paths = [os.path.join(checkout, rel) for rel, dummy in files]
    for top in UNIT_STAGE + ('plugins',):
        for folder, dummy, names in sorted(os.walk(os.path.join(checkout, top))):
            paths.extend(os.path.join(folder, n) for n in sorted(names) if not n.endswith(('.pyc', '.pyo')))
    for path in paths:
        sha.update(path.encode('utf-8', 'surrogateescape'))
        with open(path, 'rb') as handle:
            sha.update(handle.read())
    return sha.hexdigest()[:20]


def coverage_map(checkout, copies, files, refresh=False, stale_ok=False):
    """({'tests': [node id], 'durations': [s], 'lines': {file: {line: [test index]}}, 'import': {file: [...]}},
    how it was had)."""
    key = _tree_hash(checkout, files)
    cache = os.path.join(checkout, CACHE)
    path = os.path.join(cache, 'map-%s.json' % key)
    if not os.path.exists(path) and stale_ok and not refresh:
        older = glob.glob(os.path.join(cache, 'map-*.json'))
        path = older[0] if older else path
    if os.path.exists(path) and not refresh:
        with open(path) as handle:
            return json.load(handle), 'cached' if path.endswith(key + '.json') else 'cached for other code'
    tree, env = copies.make()
    out = os.path.join(env['DBHOST_MUTATE_WORK'], 'map.json')
    argv = [sys.executable, os.path.join(tree, 'scripts', 'mutate.py'), '--trace-into', out, '--files'] + \
        [rel for rel, dummy in files]
    done = subprocess.run(argv, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0 or not os.path.exists(out):
        tail = done.stdout.decode('utf-8', 'replace').strip().splitlines()[-15:]
        raise SystemExit('the unit stage does not pass without mutants (exit %s):\n%s'
                         % (done.returncode, '\n'.join(tail)))
    with open(out) as handle:
        result = json.load(handle)
    if not os.path.isdir(cache):
        os.makedirs(cache)
    for old in glob.glob(os.path.join(cache, 'map-*.json')):
        os.remove(old)
    shutil.copy(out, path)
    return result, 'traced now'


class LineTracer(object):
    """A pytest plugin: which test (or the collection, as None) runs which line of the target files.

    With coverage.py installed (requirements/test.txt) its C tracer does the work, each test a
    context of its own: the unit stage then runs about 1.5x slower instead of 4x under the
    pure-Python ``sys.settrace`` function below, which stays as the fallback.
    """

    def __init__(self, checkout, targets):
        self.checkout = checkout
        self.targets = targets
        self.current = None
        self.tests = []
        self.durations = []
        self.hits = {}
        self.started = 0.0
        self.coverage = None

    def start(self):
        try:
            import coverage
        except ImportError:
            sys.settrace(self.trace)
            threading.settrace(self.trace)
            return 'sys.settrace'
        self.coverage = coverage.Coverage(data_file=None, include=sorted(self.targets), branch=False,
                                          config_file=False)
        self.coverage.start()
        return 'coverage.py %s' % coverage.__version__

    def stop(self):
        if self.coverage is None:
            sys.settrace(None)
            return
        self.coverage.stop()
        data = self.coverage.get_data()
        for name in data.measured_files():
            rel = self.targets.get(name) or self.targets.get(os.path.realpath(name))
            if rel is None:
                continue
            lines = self.hits.setdefault(rel, {})
            for line, contexts in data.contexts_by_lineno(name).items():
                lines.setdefault(line, set()).update(int(c) if c else None for c in contexts)

    def trace(self, frame, dummy_event, dummy_arg):
        name = frame.f_code.co_filename
        if name not in self.targets:
            return None
        lines = self.hits.setdefault(self.targets[name], {})
        current = self.current

        def local(frame, event, dummy_arg):
            if event == 'line':
                lines.setdefault(frame.f_lineno, set()).add(current)
            return local
        lines.setdefault(frame.f_lineno, set()).add(current)
        return local

    def pytest_runtest_protocol(self, item):
        self.current = len(self.tests)
        if self.coverage is not None:
            self.coverage.switch_context(str(self.current))
        # node ids relative to the checkout, as a run from there names them
        name = item.nodeid.split('::', 1)
        self.tests.append(os.path.relpath(str(item.path), self.checkout) + ('::' + name[1] if len(name) > 1 else ''))
        self.started = time.monotonic()

    def pytest_runtest_logfinish(self):
        self.durations.append(round(time.monotonic() - self.started, 3))
        self.current = None
        if self.coverage is not None:
            self.coverage.switch_context('')


def trace_main(out, files):
    """Run the unit stage here under LineTracer and write the map to ``out`` (the --trace-into mode)."""
    import pytest
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    targets = dict((os.path.join(here, rel), rel) for rel in files)
    tracer = LineTracer(here, targets)
    how = tracer.start()
    started = time.monotonic()
    work = os.environ.get('DBHOST_MUTATE_WORK', tempfile.gettempdir())
    code = pytest.main(['-q', '-p', 'no:cacheprovider', '--basetemp', os.path.join(work, 'pytest')] + list(UNIT_STAGE),
                       plugins=[tracer])
    tracer.stop()
    print('traced the unit stage with %s in %.0f s' % (how, time.monotonic() - started))
    if code != 0:
        return int(code)
    lines, imported = {}, {}
    for rel, hits in tracer.hits.items():
        lines[rel] = dict((str(n), sorted(t for t in tests if t is not None)) for n, tests in hits.items())
        imported[rel] = sorted(set(t for tests in hits.values() for t in tests if t is not None))
    with open(out, 'w') as handle:
        json.dump({'tests': tracer.tests, 'durations': tracer.durations, 'lines': lines, 'import': imported}, handle)
    return 0


def tests_for(mutant, cmap):
    """The node ids of the tests that run the mutant's lines, fastest first.

    A line run only while the file is imported (module constants, def lines) counts as run by
    every test that runs any line of the file.
    """
    by_line = cmap['lines'].get(mutant.path, {})
    if mutant.at_import:
        chosen = set(cmap['import'].get(mutant.path, []))
    else:
        chosen = set()
    for line in mutant.lines:
        hits = by_line.get(str(line))
        if hits is None:
            continue
        chosen.update(hits if hits else cmap['import'].get(mutant.path, []))
    durations = cmap['durations']
    return [cmap['tests'][i] for i in sorted(chosen, key=lambda i: (durations[i], i))]


# ------------------------------------------------------------------ running the mutants
class Workers(object):
    """One copy per job; a mutant is written into a free copy, tested, and the copy restored."""

    def __init__(self, copies, jobs):
        self.free = []
        self.lock = threading.Lock()
        for dummy in range(jobs):
            self.free.append(copies.make())

    def take(self):
        with self.lock:
            return self.free.pop()

    def give(self, worker):
        with self.lock:
            self.free.append(worker)


def _write(path, data):
    with open(path, 'wb') as handle:
        handle.write(data)


def applied(tree, mutants):
    """Context: ``mutants`` written into ``tree`` (later offsets first), the files restored after."""
    class Applied(object):
        def __init__(self):
            self.saved = {}

        def __enter__(self):
            for path in sorted(set(m.path for m in mutants)):
                local = os.path.join(tree, path)
                with open(local, 'rb') as handle:
                    self.saved[local] = handle.read()
                changed = self.saved[local]
                for mutant in sorted((m for m in mutants if m.path == path), key=lambda m: -m.start):
                    changed = mutant.apply(changed)
                _write(local, changed)
            return self

        def __exit__(self, *exc):
            for local, data in self.saved.items():
                _write(local, data)
            return False
    return Applied()


def test_one(workers, mutant, tests, cmap, timeout):
    if not tests:
        mutant.result, mutant.detail = 'survived', 'no test runs this line'
        return mutant
    worker = workers.take()
    tree, env = worker
    try:
        argsfile = os.path.join(env['DBHOST_MUTATE_WORK'], 'tests.txt')
        with open(argsfile, 'w') as handle:
            handle.write('\n'.join(tests) + '\n')
        index = dict((t, i) for i, t in enumerate(cmap['tests']))
        expected = sum(cmap['durations'][index[t]] for t in tests if t in index)
        with applied(tree, [mutant]):
            code, detail = run_pytest(tree, env, ['-x', '@' + argsfile], max(timeout, 10 + 4 * expected))
    finally:
        workers.give(worker)
    mutant.result = {0: 'survived', 1: 'killed', 2: 'killed', 'timeout': 'killed', 'stopped': None}.get(code, 'error')
    mutant.detail = 'timeout' if code == 'timeout' else detail
    if mutant.result == 'error':
        mutant.detail = 'pytest exit %s: %s' % (code, detail)
    return mutant


def _groups(mutants):
    """Split survivors so that no group holds two mutants of one function or overlapping bytes."""
    groups = []
    for mutant in mutants:
        for group in groups:
            if all((m.path, m.function) != (mutant.path, mutant.function) and
                   (m.path != mutant.path or m.end <= mutant.start or mutant.end <= m.start) for m in group):
                group.append(mutant)
                break
        else:
            groups.append([mutant])
    return groups


def _node_id(detail):
    """The test a failed run names first (``path::name``), or None."""
    node = (detail or '').split(' - ', 1)[0].strip()
    return node if '::' in node and node.startswith(UNIT_STAGE) else None


def full_stage(workers, group, timeout, log, suspect=None):
    """Run the whole unit stage with ``group`` applied; halve the group while the suite fails.

    ``suspect`` is the test that failed the larger group: each half runs it alone first, and
    the whole stage only when it passes, so finding the one mutant a late test kills costs
    seconds per halving, not a full stage.
    """
    tree, env = worker = workers.take()
    try:
        with applied(tree, group):
            code, detail = 'not run', ''
            if suspect:
                code, detail = run_pytest(tree, env, ['-x', suspect], timeout)
                if code == 0:
                    code = 'not run'
            if code == 'not run':
                code, detail = run_pytest(tree, env, ['-x'] + list(UNIT_STAGE), timeout)
    finally:
        workers.give(worker)
    log('  full unit stage, %d mutant(s) applied: %s' % (len(group), 'passed' if code == 0 else detail))
    if code == 0:
        return
    if len(group) == 1:
        group[0].result = 'killed' if code in (1, 2, 'timeout') else 'error'
        group[0].detail = 'full unit stage: %s' % ('timeout' if code == 'timeout' else detail)
        return
    half = len(group) // 2
    suspect = _node_id(detail) if code == 1 else None
    full_stage(workers, group[:half], timeout, log, suspect)
    full_stage(workers, group[half:], timeout, log, suspect)


# ------------------------------------------------------------------ the run
def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--sample', type=int, default=160, help='mutants to run, drawn at random (0: all)')
    parser.add_argument('--seed', type=int, default=25, help='seed of the sample')
    parser.add_argument('--files', nargs='+', help='only files matching these globs (plugins/.../compare.py, *shm.py)')
    parser.add_argument('--jobs', type=int, default=2, help='mutants tested at once (one checkout copy each)')
    parser.add_argument('--timeout', type=float, default=60, help='least seconds a mutant may take before it is '
                        'counted killed (raised to 4x the time its tests took unmutated)')
    parser.add_argument('--full-timeout', type=float, default=1200, help='seconds for one full unit stage')
    parser.add_argument('--target', type=float, default=95.0, help='the kill rate (percent) below which the exit is 1')
    parser.add_argument('--list', action='store_true', help='print the mutants and stop')
    parser.add_argument('--no-full-stage', action='store_true', help='skip the full unit stage for survivors')
    parser.add_argument('--refresh-map', action='store_true', help='trace the tests again even if the map is cached')
    parser.add_argument('--stale-map', action='store_true', help='while adding tests: use the cached map even if '
                        'the code changed since (new tests are then seen by the full unit stage only)')
    parser.add_argument('--trace-into', help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def report(mutants, started, log):
    killed = [m for m in mutants if m.result == 'killed']
    errors = [m for m in mutants if m.result == 'error']
    survivors = [m for m in mutants if m.result == 'survived']
    counted = len(killed) + len(survivors)
    rate = 100.0 * len(killed) / counted if counted else 100.0
    kinds = {}
    for mutant in mutants:
        kinds.setdefault(mutant.kind, [0, 0])[mutant.result == 'killed'] += 1
    log('')
    log('by kind (killed/all): ' + ', '.join('%s %d/%d' % (k, v[1], v[0] + v[1]) for k, v in sorted(kinds.items())))
    for mutant in errors:
        log('ERROR    %s (%s)' % (mutant.describe(), mutant.detail))
    for mutant in sorted(survivors, key=lambda m: (m.path, m.line)):
        log('SURVIVED %s%s' % (mutant.describe(), ' (%s)' % mutant.detail if mutant.detail else ''))
    log('')
    log('mutants: %d, killed %d, survived %d, errors %d (not counted); kill rate %.1f %%; wall time %.0f s'
        % (len(mutants), len(killed), len(survivors), len(errors), rate, time.monotonic() - started))
    return rate


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.trace_into:
        return trace_main(args.trace_into, args.files)
    started = time.monotonic()

    def log(text):
        print(text)
        sys.stdout.flush()
    files = target_files(CHECKOUT, args.files)
    if not files:
        log('no file matches %s' % ' '.join(args.files))
        return 2
    mutants = make_mutants(CHECKOUT, files)
    total = len(mutants)
    if args.sample and args.sample < total:
        mutants = stable_sample(mutants, args.sample, args.seed)
    log('%d mutants in %d files; running %d (seed %d)' % (total, len(files), len(mutants), args.seed))
    if args.list:
        for mutant in mutants:
            log(mutant.describe())
        return 0
    copies = Copies(CHECKOUT)

    def interrupted(dummy_signum, dummy_frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, interrupted)
    try:
        return _run(args, copies, files, mutants, started, log)
    except KeyboardInterrupt:
        stop_running()
        log('interrupted: nothing was changed in %s' % CHECKOUT)
        return 2
    finally:
        stop_running()
        copies.remove()


def _each(function, items, jobs):
    """``function`` over ``items``, ``jobs`` at a time; on Ctrl-C what has not started is dropped."""
    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(items))))
    try:
        futures = [pool.submit(function, item) for item in items]
        for future in futures:
            while True:
                try:
                    future.result(timeout=1)
                    break
                except TimeoutError:
                    continue
    except BaseException:
        stop_running()
        pool.shutdown(wait=True, cancel_futures=True)  # what runs now ends at once: STOPPING is set
        raise
    pool.shutdown()


def _run(args, copies, files, mutants, started, log):
    # the map covers every target file whatever --files says, so that one map serves every run
    cmap, how = coverage_map(CHECKOUT, copies, target_files(CHECKOUT), refresh=args.refresh_map,
                             stale_ok=args.stale_map)
    log('test map: %d tests (%s, %.0f s so far)' % (len(cmap['tests']), how, time.monotonic() - started))
    workers = Workers(copies, max(1, args.jobs))
    done = [0]

    def one(mutant):
        test_one(workers, mutant, tests_for(mutant, cmap), cmap, args.timeout)
        done[0] += 1
        if mutant.result not in ('killed', None):
            log('  [%d/%d] %s %s' % (done[0], len(mutants), mutant.result, mutant.describe()))
        return mutant
    _each(one, mutants, args.jobs)
    survivors = [m for m in mutants if m.result == 'survived']
    log('selected tests: %d of %d mutants survived (%.0f s so far)'
        % (len(survivors), len(mutants), time.monotonic() - started))
    if survivors and not args.no_full_stage:
        groups = _groups(survivors)
        _each(lambda group: full_stage(workers, group, args.full_timeout, log), groups, args.jobs)
    rate = report(mutants, started, log)
    return 0 if rate >= args.target else 1


if __name__ == '__main__':
    sys.exit(main())
