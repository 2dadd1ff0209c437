# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: TuneD's ``[variables]`` and ``${f:...}`` functions, expanded as TuneD does.

What TuneD does (tuned/profiles/variables.py, functions/parser.py, functions/function_*.py):

- variables are defined one after the other, in the merged profile's order; each value is
  expanded when it is defined, with the variables defined before it and then the functions:
  a variable may use an earlier one; one defined later is left as its ``${name}`` text;
- ``include=FILE`` among the variables reads more ``name = value`` lines from FILE (no section
  header, ``#`` comments, a name without a value is skipped; a missing file is skipped);
- a value is expanded in ONE pass over the defined names (``\\${name}`` is kept as
  ``${name}``), then the functions are called from the innermost out: ``${f:name:arg:...}``,
  arguments split at ``:`` not preceded by ``\\``;
- a function that is not TuneD's, or called with the wrong number of arguments, or that
  gives nothing, leaves its text as it is; ``assertion`` and ``assertion_non_equal`` that
  fail make TuneD refuse the profile.

The collection evaluates the functions that need nothing but their arguments and the host
tree (``<root>/proc/cpuinfo``): strip, s2kb, kb2s, regex_search_ternary, cpuinfo_check, log,
assertion, assertion_non_equal.  Any other (exec, virt_check, lscpu_check, the cpulist ones
...) is never guessed: a value that holds one is unresolved, and ``unresolved()`` says which.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import re

# TuneD's functions (tuned/profiles/functions/function_*.py, 2.20 to 2.27)
TUNED_FUNCTIONS = frozenset((
    'assertion', 'assertion_non_equal', 'calc_isolated_cores', 'check_net_queue_count', 'cpuinfo_check',
    'cpulist2devs', 'cpulist2hex', 'cpulist2hex_invert', 'cpulist_invert', 'cpulist_online', 'cpulist_pack',
    'cpulist_present', 'cpulist_unpack', 'exec', 'hex2cpulist', 'intel_recommended_pstate', 'kb2s', 'log',
    'lscpu_check', 'package2cpus', 'package2uncores', 'regex_search_ternary', 's2kb', 'strip', 'virt_check',
))
_NAME = re.compile(r'\w+\Z')
_UNESCAPE_VARIABLE = re.compile(r'\\(\$\{\w+\})')
_UNESCAPE_FUNCTION = re.compile(r'\\(\$\{f:.*\})')
_CALL = re.compile(r'(?<!\\)\$\{f:')
_LEFT = re.compile(r'(?<!\\)\$\{(\w+)\}')


class AssertionFailed(ValueError):
    """A TuneD ``assertion`` function failed: TuneD refuses the profile."""


def _strip(args, host):
    return ''.join(args).strip()


def _s2kb(args, host):
    return str(int(round(int(args[0]) / 2))) if re.match(r'\s*[-+]?\d+\s*\Z', args[0]) else None


def _kb2s(args, host):
    return str(int(args[0]) * 2) if re.match(r'\s*[-+]?\d+\s*\Z', args[0]) else None


def _regex_search_ternary(args, host):
    return args[2] if re.search(args[1], args[0]) else args[3]


def _cpuinfo_check(args, host):
    cpuinfo = host.cpuinfo(raw=True)
    if cpuinfo is None:
        raise LookupError('the host\'s /proc/cpuinfo cannot be read under root')
    for index in range(0, len(args) - 1, 2):
        if re.search(args[index], cpuinfo, re.MULTILINE):
            return args[index + 1]
    return args[-1] if len(args) % 2 else ''


def _log(args, host):
    return ''.join(args)


def _assertion(args, host):
    if args[1] != args[2]:
        raise AssertionFailed("TuneD's assertion %r failed: %r != %r" % (args[0], args[1], args[2]))


def _assertion_non_equal(args, host):
    if args[1] == args[2]:
        raise AssertionFailed("TuneD's assertion %r failed: %r == %r" % (args[0], args[1], args[2]))


# name: (function, most arguments (0: any number), fewest arguments), as each function_*.py declares
EVALUATED = {
    'strip': (_strip, 0, 1),
    's2kb': (_s2kb, 1, 1),
    'kb2s': (_kb2s, 1, 1),
    'regex_search_ternary': (_regex_search_ternary, 4, 4),
    'cpuinfo_check': (_cpuinfo_check, 0, 2),
    'log': (_log, 0, 1),
    'assertion': (_assertion, 3, 3),
    'assertion_non_equal': (_assertion_non_equal, 3, 3),
}


class Expander(object):
    """TuneD's variables of one profile and its function calls, on one host (``host.cpuinfo()``)."""

    def __init__(self, host, read=None):
        self.host = host
        self.read = read or (lambda path: None)
        self.values = collections.OrderedDict()
        self.problems = []
        self._pattern = None

    # ------------------------------------------------------------ defining
    def define_all(self, variables):
        """Define ``variables`` ({name: raw value}, in order) as TuneD's add_from_cfg does."""
        for name, raw in variables.items():
            if name == 'include':
                self.include(raw)
            else:
                self.define(name, raw)

    def define(self, name, raw):
        if raw is None:
            return
        if not _NAME.match(name):
            self.problems.append('TuneD skips the variable %r: its name is not made of letters, digits and _' % name)
            return
        self.values[name] = self.expand(raw)
        self._pattern = None
        if re.search(r'(?<!\\)\$\{f:assertion', self.values[name]):
            self.problems.append('whether TuneD loads the profile is not known: the variable %s holds an assertion the '
                                 'collection cannot evaluate (%s)' % (name, self.unresolved(self.values[name])))

    def include(self, path):
        """``include=`` in [variables]: more variables from a file on the host (skipped when missing)."""
        path = re.sub(r'/+', '/', (path or '').strip())
        text = self.read(path)
        if text is None:
            self.problems.append('TuneD skips include=%s in [variables]: no such file' % path)
            return
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped or stripped[0] in '#;' or stripped.startswith('['):
                continue
            name, sep, value = stripped.partition('=')
            match = re.search(r'\s#', value)
            self.define(name.strip(), (value[:match.start()] if match else value).strip() if sep else None)

    # ------------------------------------------------------------ expanding
    def expand_static(self, value):
        """One pass over the defined names, then ``\\${name}`` unescaped (variables.py expand_static)."""
        if self.values:
            if self._pattern is None:
                names = '|'.join(re.escape(name) for name in self.values)
                self._pattern = re.compile(r'(?<!\\)\$\{(%s)\}' % names)
            value = self._pattern.sub(lambda match: self.values[match.group(1)], value)
        return _UNESCAPE_VARIABLE.sub(r'\1', value)

    def expand(self, value):
        """The text TuneD makes of ``value`` (variables, then functions); functions the collection
        does not evaluate are left as their text (see unresolved())."""
        if value is None:
            return None
        text = self.expand_static(str(value))
        return _UNESCAPE_FUNCTION.sub(r'\1', _Calls(text, self.host).run())

    def value(self, raw):
        """(expanded, resolved): resolved when nothing of ``${...}`` is left to TuneD."""
        expanded = self.expand(raw)
        return expanded, self.unresolved(expanded) is None

    @staticmethod
    def unresolved(expanded):
        """Why an expanded value is not known before TuneD applies it, or None when it is."""
        reasons = []
        for call in re.findall(r'(?<!\\)\$\{f:(\w+)', expanded or ''):
            if call in EVALUATED:
                reasons.append('${f:%s} has arguments the collection cannot evaluate' % call)
            elif call in TUNED_FUNCTIONS:
                reasons.append('${f:%s} is a TuneD function the collection does not evaluate: it runs a command or '
                               'reads what the host tree does not show' % call)
            else:
                reasons.append('${f:%s} is no TuneD function: TuneD writes the text as it is' % call)
        for name in _LEFT.findall(expanded or ''):
            reasons.append('${%s} is left as text (no variable of that name defined before it): TuneD writes it '
                           'as it is' % name)
        return '; '.join(sorted(set(reasons))) or None


class _Calls(object):
    """TuneD's function parser over one text: ``${`` pushed, ``}`` pops and calls ``${f:...}``."""

    def __init__(self, text, host):
        self.text = text
        self.host = host

    def run(self):
        stack, index, escaped = [], 0, False
        while index < len(self.text):
            char = self.text[index]
            if char == '}':
                if not stack:
                    return self.text     # TuneD logs an unpaired } and keeps the text
                start, was_escaped = stack.pop()
                if not was_escaped:
                    index = self._call(start, index)
            elif self.text[index:index + 2] == '${':
                stack.append((index, escaped))
            escaped = self.text[index:index + 1] == '\\'
            index += 1
        return self.text

    def _call(self, start, end):
        words = [word.replace('\\:', ':') for word in re.split(r'(?<!\\):', self.text[start:end])]
        if words[0] != '${f' or len(words) < 2 or not _NAME.match(words[1]) or words[1] not in EVALUATED:
            return end
        function, most, fewest = EVALUATED[words[1]]
        args = words[2:]
        if (most and len(args) > most) or len(args) < fewest:
            return end
        if _CALL.search(self.text, start + 2, end):
            return end       # an inner call the collection could not evaluate: neither can it this one
        try:
            result = function(args, self.host)
        except LookupError:
            return end
        if result is None:
            return end
        self.text = self.text[:start] + result + self.text[end + 1:]
        return max(start + len(result) - 1, 0)
