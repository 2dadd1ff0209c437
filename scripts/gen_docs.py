# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the documentation whose facts have one source elsewhere (docs/DEVELOPING.md, "Generated documentation").

  - each module's DOCUMENTATION ``options`` (plugins/modules/<module>.py, between the marker
    comments): the name, type, elements, required, choices and default of every option come from
    the module's argument spec in state/registry.py (registry.spec); its description and
    version_added from plugins/module_utils/state/registry_docs/<module>.yml, which names the
    same options. An option of engine/options.py SHARED is documented by its doc fragment: the
    module writes only its own description of it, when registry_docs has one;
  - the RETURN keys the result contract's modules share (registry_docs/result.yml), into the
    RETURN of every module that takes ``fail_on_drift``, but for a key the module documents itself;
  - roles/<role>/meta/argument_specs.yml: the ``default`` of each variable, from
    roles/<role>/defaults/main.yml, the one place a role default is written;
  - the variable table of roles/<role>/README.md, between its marker comments, from both, and
    the default each ``<variable>: <value>`` line of a YAML snippet of its "Role Variables" shows.

Usage:
  python3 scripts/gen_docs.py            write what is out of date, naming each file written
  python3 scripts/gen_docs.py --check    write nothing; exit 1 naming each file out of date
A source that does not fit (an option without words, words for an option the spec lacks, a
default without an argument spec entry) stops it with a message naming the file and the name.
"""

from __future__ import print_function

import atexit
import os
import re
import shutil
import sys
import tempfile

import yaml

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join('plugins', 'module_utils', 'state', 'registry_docs')
RESULT_KEYS = os.path.join(DOCS, 'result.yml')
SPEC_KEYS = ('type', 'elements', 'required', 'choices', 'default', 'aliases')
OPTIONS_BEGIN = '# BEGIN options: written by scripts/gen_docs.py from state/registry.py and %s'
OPTIONS_END = '# END options'
RETURN_BEGIN = '# BEGIN returns: written by scripts/gen_docs.py from %s'
RETURN_END = '# END returns'
README_BEGIN = '<!-- BEGIN variables: written by scripts/gen_docs.py from meta/argument_specs.yml and defaults/main.yml -->'
README_END = '<!-- END variables -->'


class SourceError(Exception):
    """A source that does not fit: names the file and what is wrong."""


def load_registry():
    """state/registry.py of this checkout, imported as ansible_collections.dbhost.tuning (through a
    temporary ansible_collections folder linking here unless the checkout already sits in one)."""
    name = 'ansible_collections.dbhost.tuning.plugins.module_utils.state.registry'
    if 'ansible_collections.dbhost.tuning' not in sys.modules:
        parts = CHECKOUT.split(os.sep)
        if parts[-3:-1] == ['ansible_collections', 'dbhost'] and parts[-1] == 'tuning':
            sys.path.insert(0, os.sep.join(parts[:-3]))
        else:
            base = tempfile.mkdtemp(prefix='dbhost-gen-docs-')
            atexit.register(shutil.rmtree, base, True)   # the link only: the checkout stays
            os.makedirs(os.path.join(base, 'ansible_collections', 'dbhost'))
            os.symlink(CHECKOUT, os.path.join(base, 'ansible_collections', 'dbhost', 'tuning'))
            sys.path.insert(0, base)
    return __import__(name, fromlist=['spec'])


# ------------------------------------------------------------------ YAML text, kept as written
def flow(value):
    """``value`` as one line of YAML (flow style)."""
    if value == '':
        return '""'
    text = yaml.safe_dump(value, default_flow_style=True, width=10000, sort_keys=False).strip()
    return text[:-len('\n...')].strip() if text.endswith('\n...') else text


def entries(lines, indent):
    """[(key, lines)] of the YAML mapping at ``indent`` in ``lines``: each key with its header line
    and every line after it that is blank or indented deeper."""
    found = []
    for line in lines:
        stripped = line.strip()
        if stripped == '---':
            continue
        if stripped and not stripped.startswith('#') and len(line) - len(line.lstrip(' ')) == indent:
            found.append((line.strip().split(':', 1)[0], [line]))
        elif found:
            found[-1][1].append(line)
        elif stripped and not stripped.startswith('#'):
            raise SourceError('not a mapping at indent %d: %r' % (indent, line))
    return found


def trimmed(lines):
    """``lines`` without the blank lines at their end."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


# ------------------------------------------------------------------ module options
def option_lines(name, rules, docs, indent, where):
    """The DOCUMENTATION lines of one option at ``indent``: the words from ``docs`` (its entry's
    lines in registry_docs, at the same indent), the rest from its argument spec ``rules``."""
    own = dict(entries(docs[1:], indent + 2))
    out = ['%s%s:' % (' ' * indent, name)]
    if 'description' not in own:
        raise SourceError('%s: option %s has no description' % (where, name))
    for key in ('description', 'version_added'):
        out.extend(trimmed(own.pop(key, [])))
    sub = dict(entries(own.pop('suboptions', ['suboptions:'])[1:], indent + 4))
    if own:
        raise SourceError('%s: option %s: %s belong(s) to the argument spec in state/registry.py, not here'
                          % (where, name, ', '.join(sorted(own))))
    out.extend(option_spec_lines(rules, indent + 2))
    if rules.get('options'):
        out.append('%ssuboptions:' % (' ' * (indent + 2)))
        out.extend(options_lines(rules['options'], sub, indent + 4, '%s: %s' % (where, name), shared=()))
    return out


def option_spec_lines(rules, indent):
    """The lines an option's argument spec ``rules`` gives its documentation, at ``indent``."""
    pad = ' ' * indent
    out = ['%stype: %s' % (pad, rules.get('type', 'str'))]
    for key in ('elements', 'aliases'):
        if rules.get(key):
            out.append('%s%s: %s' % (pad, key, flow(rules[key])))
    if rules.get('required'):
        out.append('%srequired: true' % pad)
    if rules.get('choices'):
        out.append('%schoices: %s' % (pad, flow(list(rules['choices']))))
    if rules.get('default') is not None:
        out.append('%sdefault: %s' % (pad, flow(rules['default'])))
    return out


def options_lines(spec, docs, indent, where, shared):
    """The lines of every option of ``spec`` in the order ``docs`` (registry_docs entries) gives them; a
    shared option (documented by its fragment) only when ``docs`` has the module's own words for it."""
    unknown = sorted(set(docs) - set(spec))
    if unknown:
        raise SourceError('%s: %s: no such option in the argument spec' % (where, ', '.join(unknown)))
    missing = sorted(name for name in spec if name not in docs and name not in shared)
    if missing:
        raise SourceError('%s: option(s) %s without words' % (where, ', '.join(missing)))
    out = []
    for name, lines in docs.items():
        if name in shared:
            own = dict(entries(lines[1:], indent + 2))
            out.append('%s%s:' % (' ' * indent, name))
            out.extend(trimmed(own.get('description', [])))
        else:
            out.extend(option_lines(name, spec[name], lines, indent, where))
    return out


def docs_file(checkout, module):
    """(path relative to the checkout, lines) of ``module``'s registry_docs file."""
    source = os.path.join(DOCS, module + '.yml')
    with open(os.path.join(checkout, source)) as handle:
        return source, handle.read().splitlines()


def module_options(checkout, registry, module):
    """The generated ``options`` block of ``module``'s DOCUMENTATION (marker lines included)."""
    source, lines = docs_file(checkout, module)
    docs = dict(entries(dict(entries(lines, 0)).get('options', ['options:'])[1:], 2))
    spec = registry.spec(module)
    shared = load_registry_shared(registry)
    body = options_lines(spec, docs, 2, source, shared)
    extra = (yaml.safe_load('\n'.join(lines)) or {}).get('fragments') or []
    fragments = fragment_list([fragment for name, fragment in shared.items() if name in spec]) + extra
    return ([OPTIONS_BEGIN % source.replace('plugins/module_utils/', ''), 'options:'] + body
            + (yaml.safe_dump({'extends_documentation_fragment': fragments}, default_flow_style=None,
                              width=110).splitlines() if fragments else []) + [OPTIONS_END])


def fragment_list(fragments):
    """The fragments of a module's shared options in SHARED's order, dbhost.tuning.common (fail_on_drift's:
    the attributes and the notes) first."""
    return sorted(fragments, key=lambda fragment: fragment != 'dbhost.tuning.common')


def load_registry_shared(registry):
    """The shared options (engine/options.py SHARED), each with the doc fragment that documents it."""
    package = registry.__name__.rsplit('.state.', 1)[0]
    shared = __import__(package + '.engine.options', fromlist=['SHARED']).SHARED
    return dict((name, fragment) for name, (rules, fragment) in shared.items())


# ------------------------------------------------------------------ module RETURN
def merged(base, own):
    """``own`` over ``base`` key by key, mappings merged the same way; a key whose value is null removed."""
    out = dict(base)
    for key, value in own.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def unfinished(returns, prefix=''):
    """The keys (``settings.contains.name``) of ``returns`` without a description or a type."""
    found = []
    for key, entry in returns.items():
        if not entry.get('description') or not entry.get('type'):
            found.append(prefix + key)
        found.extend(unfinished(entry.get('contains') or {}, '%s%s.contains.' % (prefix, key)))
    return found


def module_returns(checkout, module):
    """The RETURN of a module of the result contract: result.yml's ``every`` keys, with the module's
    ``returns`` (registry_docs/<module>.yml) over them and over result.yml's ``named`` entries of the
    keys it names."""
    with open(os.path.join(checkout, RESULT_KEYS)) as handle:
        shared = yaml.safe_load(handle)
    source, lines = docs_file(checkout, module)
    own = yaml.safe_load('\n'.join(lines)).get('returns') or {}
    returns = dict(shared['every'])
    for key, value in own.items():
        if value is None:
            returns.pop(key, None)
        else:
            returns[key] = merged(returns.get(key, shared['named'].get(key, {})), value)
    missing = unfinished(returns)
    if missing:
        raise SourceError('%s: RETURN %s without a description or a type' % (source, ', '.join(missing)))
    return returns


def return_lines(checkout, module):
    """The generated RETURN of ``module``: a key of scalars on one line, within pep8's 160 columns."""
    text = yaml.safe_dump(module_returns(checkout, module), default_flow_style=None, sort_keys=False, width=140)
    sources = '%s and %s.yml' % (RESULT_KEYS, os.path.join(DOCS, module))
    return [RETURN_BEGIN % sources.replace('plugins/module_utils/', '')] + text.splitlines() + [RETURN_END]


def between(lines, begin, end, where):
    """(start, stop) of the lines from the one starting with ``begin`` to the one equal to ``end``."""
    starts = [index for index, line in enumerate(lines) if line.startswith(begin)]
    stops = [index for index, line in enumerate(lines) if line == end]
    if len(starts) != 1 or len(stops) != 1 or stops[0] < starts[0]:
        raise SourceError('%s: expected one %r ... %r pair of marker lines' % (where, begin, end))
    return starts[0], stops[0] + 1


def module_text(checkout, registry, module, text):
    """``text`` (plugins/modules/<module>.py) with its generated options and, for a module of the
    result contract (it takes fail_on_drift), its generated RETURN."""
    where = 'plugins/modules/%s.py' % module
    lines = text.split('\n')
    start, stop = between(lines, OPTIONS_BEGIN.split(':', maxsplit=1)[0], OPTIONS_END, where)
    lines[start:stop] = module_options(checkout, registry, module)
    if 'fail_on_drift' in registry.spec(module):
        start, stop = between(lines, RETURN_BEGIN.split(':', maxsplit=1)[0], RETURN_END, where)
        lines[start:stop] = return_lines(checkout, module)
    too_long = [line for line in lines if len(line) > 160]   # pep8's limit in ansible-test sanity
    if too_long:
        raise SourceError('%s.yml: a line of %s over 160 columns: %s'
                          % (os.path.join(DOCS, module), where, too_long[0].strip()[:60]))
    return '\n'.join(lines)


# ------------------------------------------------------------------ roles
def role_defaults(checkout, role):
    with open(os.path.join(checkout, 'roles', role, 'defaults', 'main.yml')) as handle:
        return yaml.safe_load(handle) or {}


def mapping_lines(key, value, indent, nested=False):
    """``key: value`` at ``indent``: one flow line, but a mapping that holds a mapping (and the
    mappings in it) in block style."""
    pad = ' ' * indent
    holds_mapping = any(isinstance(inner, dict) and inner for inner in value.values()) if isinstance(value, dict) else False
    if isinstance(value, dict) and value and (nested or holds_mapping):
        return ['%s%s:' % (pad, key)] + [line for name, inner in value.items()
                                         for line in mapping_lines(name, inner, indent + 2, nested=True)]
    return ['%s%s: %s' % (pad, key, flow(value))]


def default_lines(value, indent):
    return mapping_lines('default', value, indent)


def argument_specs_text(checkout, role, text):
    """``text`` (roles/<role>/meta/argument_specs.yml) with every variable's default from defaults/main.yml."""
    where = 'roles/%s/meta/argument_specs.yml' % role
    defaults = role_defaults(checkout, role)
    lines = text.split('\n')
    head = lines.index('    options:') + 1
    out = lines[:head]
    rest = lines[head:]
    tail_at = next((i for i, line in enumerate(rest) if line.strip() and len(line) - len(line.lstrip()) < 6), len(rest))
    seen = set()
    for name, body in entries(rest[:tail_at], 6):
        seen.add(name)
        keys = entries(body[1:], 8)
        kept = [line for key, block in keys if key != 'default' for line in block]
        at = max([i for i, line in enumerate(kept) if line.strip().split(':')[0] in ('type', 'elements', 'choices')
                  and line.startswith(' ' * 8) and not line.startswith(' ' * 9)] or [-1]) + 1
        if defaults.get(name) is not None:
            kept[at:at] = default_lines(defaults[name], 8)
        out.extend([body[0]] + kept)
    unknown = sorted(set(defaults) - seen)
    if unknown:
        raise SourceError('roles/%s/defaults/main.yml: %s not in %s' % (role, ', '.join(unknown), where))
    return '\n'.join(out + rest[tail_at:])


MARKUP = re.compile(r'\b(RV|[CVOMIBU])\(([^()]*(?:\([^()]*\)[^()]*)*)\)')


def markdown(text):
    """Ansible's documentation markup as Markdown: C(x), V(x), O(x), RV(x), M(x) as code."""
    def one(match):
        kind, inner = match.groups()
        return '*%s*' % inner if kind == 'I' else '**%s**' % inner if kind == 'B' else '`%s`' % inner
    return MARKUP.sub(one, text).replace('|', '\\|')


def readme_table(checkout, role):
    with open(os.path.join(checkout, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        options = yaml.safe_load(handle)['argument_specs']['main']['options']
    defaults = role_defaults(checkout, role)
    rows = ['| variable | type | default | meaning |', '|---|---|---|---|']
    for name, rules in options.items():
        kind = rules.get('type', 'str') + (' of %s' % rules['elements'] if rules.get('elements') else '')
        default = ('`%s`' % flow(defaults[name]).replace('|', '\\|')) if name in defaults else 'required' \
            if rules.get('required') else 'none'
        words = rules.get('description')
        words = ' '.join(words) if isinstance(words, list) else words or ''
        if rules.get('choices'):
            words += ' One of %s.' % ', '.join('`%s`' % choice for choice in rules['choices'])
        rows.append('| `%s` | %s | %s | %s |' % (name, kind, default, markdown(' '.join(words.split()))))
    return [README_BEGIN] + rows + [README_END]


def snippet_line(line, role, defaults):
    """A ``<variable>: <value>  # words`` line of a YAML snippet, with the variable's default as its value
    when the value says another (a variable without a default, or one given on several lines, as written)."""
    match = re.match(r'^(%s_\w+):( +)([^#\s][^#]*?)(\s+#.*)?$' % role, line)
    if not match or match.group(1) not in defaults:
        return line
    name, space, value, words = match.groups()
    if yaml.safe_load(value) == defaults[name]:
        return line
    return '%s:%s%s%s' % (name, space, flow(defaults[name]), words or '')


def readme_text(checkout, role, text):
    """``text`` (roles/<role>/README.md) with its variable table, and the defaults its section "Role
    Variables" shows in YAML snippets, from the role's files."""
    lines = text.split('\n')
    start, stop = between(lines, README_BEGIN, README_END, 'roles/%s/README.md' % role)
    lines[start:stop] = readme_table(checkout, role)
    defaults = role_defaults(checkout, role)
    section, snippet = None, False
    for index, line in enumerate(lines):
        if line.startswith('## '):
            section = line
        elif line.startswith('```'):
            snippet = line == '```yaml' and not snippet
        elif snippet and section == '## Role Variables':
            lines[index] = snippet_line(line, role, defaults)
    return '\n'.join(lines)


# ------------------------------------------------------------------ doc fragments
FRAGMENTS = 'plugins/doc_fragments/common.py'


def fragment_text(registry, text):
    """``text`` (plugins/doc_fragments/common.py) with the type, default and choices of each shared option
    from its argument spec (engine/options.py SHARED); its words stay as written there."""
    shared = __import__(registry.__name__.rsplit('.state.', 1)[0] + '.engine.options', fromlist=['SHARED']).SHARED
    lines = text.split('\n')
    for name, (rules, fragment) in shared.items():
        attribute = (fragment.split('.')[3] if fragment.count('.') == 3 else 'documentation').upper()
        start = lines.index("    %s = r'''" % attribute)
        stop = lines.index("'''", start)
        head = lines.index('options:', start, stop)
        body_end = next((i for i in range(head + 1, stop) if lines[i].strip() and not lines[i].startswith(' ')), stop)
        found = dict(entries(lines[head + 1:body_end], 2))
        if name not in found:
            raise SourceError('%s: %s documents no option %s' % (FRAGMENTS, attribute, name))
        out = []
        for option, entry in entries(lines[head + 1:body_end], 2):
            if option == name:
                kept = [line for key, block in entries(entry[1:], 4) if key not in SPEC_KEYS for line in block]
                entry = [entry[0]] + kept + option_spec_lines(rules, 4)
            out.extend(entry)
        lines[head + 1:body_end] = out
    return '\n'.join(lines)


# ------------------------------------------------------------------ the files
def generated(checkout, registry):
    """[(path relative to checkout, current text, generated text)] of every generated file."""
    files = [(FRAGMENTS, lambda text: fragment_text(registry, text))]
    for module in sorted(registry.MODULES):
        files.append(('plugins/modules/%s.py' % module,
                      lambda text, module=module: module_text(checkout, registry, module, text)))
    for role in registry.ROLE_NAMES:
        files.append(('roles/%s/meta/argument_specs.yml' % role,
                      lambda text, role=role: argument_specs_text(checkout, role, text)))
        files.append(('roles/%s/README.md' % role, lambda text, role=role: readme_text(checkout, role, text)))
    return files


def run(checkout, registry, write):
    """The files out of date (written when ``write``), in order."""
    stale = []
    for path, make in generated(checkout, registry):   # every file made before one is written
        with open(os.path.join(checkout, path)) as handle:
            text = handle.read()
        new = make(text)
        if new != text:
            stale.append((path, new))
    for path, new in stale if write else ():
        full = os.path.join(checkout, path)
        with open(full + '.tmp', 'w') as handle:
            handle.write(new)
        os.rename(full + '.tmp', full)
    return [path for path, new in stale]


def main(argv):
    check = '--check' in argv[1:]
    try:
        stale = run(CHECKOUT, load_registry(), write=not check)
    except SourceError as error:
        print('gen_docs: %s' % error, file=sys.stderr)
        return 2
    for path in stale:
        print('%s: %s' % (path, 'out of date: run python3 scripts/gen_docs.py' if check else 'written'))
    return 1 if check and stale else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
