# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the kernel command line, running and next boot, as a persisted source.

The kernel reads huge page pools and the transparent huge page mode from its command line
(Linux Documentation/admin-guide/kernel-parameters.txt and admin-guide/mm/hugetlbpage.rst):

- ``hugepagesz=SIZE`` picks the page size the next ``hugepages=N`` allocates; a
  ``hugepages=N`` before any ``hugepagesz=`` is a pool of the default size, which
  ``default_hugepagesz=SIZE`` sets (else the architecture's, 2M on x86_64);
  ``hugepages=0:N,1:M`` gives a count per NUMA node; a size given twice keeps the first;
- ``transparent_hugepage=always|madvise|never`` sets THP's mode (the last one counts).

Those pools are allocated at boot, before systemd-sysctl and systemd-tmpfiles run: a
sysctl.d or tmpfiles.d value for the same pool is written after them and wins; without one
the command line's pool is what the boot gives, so it counts as persisted.

The next boot's command line comes from the boot loader's configuration, read under root:
``/etc/kernel/cmdline`` (kernel-install, systemd-boot), else ``/etc/default/grub`` and
``/etc/default/grub.d/*.cfg`` (sourced after it, in name order), whose GRUB_CMDLINE_LINUX
and GRUB_CMDLINE_LINUX_DEFAULT make a normal boot entry's line.  Without either, the
running command line (``/proc/cmdline``) is taken as the next one too.

Pure parsing plus reads under root (engine/files, engine/sysfs for /proc).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shlex
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, read_text

PROC_CMDLINE = '/proc/cmdline'
KERNEL_CMDLINE = '/etc/kernel/cmdline'
GRUB_DEFAULT = '/etc/default/grub'
GRUB_DEFAULT_D = '/etc/default/grub.d'
GRUB_VARIABLES = ('GRUB_CMDLINE_LINUX', 'GRUB_CMDLINE_LINUX_DEFAULT')
# The default huge page size where nothing says otherwise (x86_64, arm64 with 4K pages).
ARCH_DEFAULT_HUGEPAGE_KB = 2048
THP_MODES = ('always', 'madvise', 'never')
# isolcpus= flags (kernel/sched/isolation.c); with none, the CPUs are isolated from the domains
ISOLCPUS_FLAGS = ('nohz', 'domain', 'managed_irq')

_UNITS = {'k': 1, 'm': 1024, 'g': 1024 ** 2, 't': 1024 ** 3, 'p': 1024 ** 4, 'e': 1024 ** 5}
_ASSIGN = re.compile(r'^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z')
_REFERENCE = re.compile(r'\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))')


class CmdlineError(ValueError):
    """A command line value the kernel would not take (the message names it)."""


def split(text):
    """The words of a kernel command line: whitespace separates, double quotes group."""
    words, current, quoted, started = [], [], False, False
    for char in text or '':
        if char == '"':
            quoted, started = not quoted, True
        elif char.isspace() and not quoted:
            if started:
                words.append(''.join(current))
            current, started = [], False
        else:
            current.append(char)
            started = True
    if started:
        words.append(''.join(current))
    return words


def params(text):
    """[(name, value or None)] of a command line, in order (``--`` ends the kernel's part)."""
    out = []
    for word in split(text):
        if word == '--':
            break
        name, sep, value = word.partition('=')
        # the kernel takes - and _ alike in a parameter's name
        out.append((name.replace('-', '_'), value if sep else None))
    return out


_MEMPARSE = re.compile(r'^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgGtTpPeE]?)')


def size_kb(text):
    """A command line size (``2M``, ``1G``, ``2097152``, ``0x200000``) in KiB, as the kernel's
    memparse (lib/cmdline.c) reads it for hugepagesz= and default_hugepagesz= (mm/hugetlb.c):
    the number in base 0 (simple_strtoull: ``0x`` hex, a leading ``0`` octal), then one of K, M,
    G, T, P, E in either case; what follows is not read."""
    match = _MEMPARSE.match((text or '').strip())
    if not match:
        raise CmdlineError('%r is not a size' % (text,))
    body, unit = match.group(1), match.group(2).lower()
    number = int(body, 16) if body[:2].lower() == '0x' else int(body, 8) if body.startswith('0') else int(body)
    return number * _UNITS[unit] if unit else number // 1024


class BootLine(object):
    """One command line: its params and where it comes from (a path, with the variable for grub)."""

    def __init__(self, text, source):
        self.text = text
        self.source = source
        self.params = params(text)

    def default_size_kb(self, fallback_kb=None):
        """The default huge page size: ``default_hugepagesz=`` or ``fallback_kb`` (the running one)."""
        for name, value in self.params:
            if name == 'default_hugepagesz' and value:
                return size_kb(value)
        return fallback_kb or ARCH_DEFAULT_HUGEPAGE_KB

    def pools(self, fallback_kb=None):
        """{size in KiB: {'total': pages, 'nodes': {node: pages} or None}} the line allocates."""
        default_kb = self.default_size_kb(fallback_kb)
        pools, size = {}, None
        for name, value in self.params:
            if name == 'hugepagesz' and value:
                size = size_kb(value)
            elif name == 'hugepages' and value is not None:
                key = size if size is not None else default_kb
                if key not in pools:
                    pools[key] = _counts(value)
        return pools

    def pool(self, size_kb_wanted, node=None, fallback_kb=None):
        """The pages the line allocates for one pool (a size, and a node or None), or None."""
        found = self.pools(fallback_kb).get(size_kb_wanted)
        if found is None:
            return None
        if node is None:
            return found['total']
        return (found['nodes'] or {}).get(int(node))

    def thp(self):
        """The transparent huge page mode the line sets, or None."""
        mode = None
        for name, value in self.params:
            if name == 'transparent_hugepage' and value in THP_MODES:
                mode = value
        return mode

    def isolation(self):
        """{'isolcpus': Isolated or None, 'nohz_full': Isolated (no flags) or None}, the last of each
        counting: ``isolcpus=[flag,...,]<cpu-list>`` (no flag means ``domain``) and
        ``nohz_full=<cpu-list>``.  CmdlineError for a value the kernel does not take."""
        found = {'isolcpus': None, 'nohz_full': None}
        for name, value in self.params:
            if name == 'isolcpus' and value:
                found['isolcpus'] = _isolcpus(value)
            elif name == 'nohz_full' and value:
                found['nohz_full'] = Isolated(_cpu_list('nohz_full', value), ())
        return found


# CPUs a boot parameter takes away from the scheduler, and its flags (isolcpus=nohz,domain,...).
Isolated = namedtuple('Isolated', 'cpus flags')


def _isolcpus(value):
    words = value.split(',')
    flags = []
    while words and words[0][:1].isalpha():
        if words[0] not in ISOLCPUS_FLAGS:
            raise CmdlineError('isolcpus=%s: unknown flag %r (the kernel ignores the whole parameter)' % (value, words[0]))
        flags.append(words.pop(0))
    return Isolated(_cpu_list('isolcpus', ','.join(words), value), tuple(flags) or ('domain',))


def _cpu_list(name, text, whole=None):
    try:
        cpus = numa.parse_cpu_list(text)
    except numa.CpuListError as exc:
        raise CmdlineError('%s=%s: %s' % (name, whole or text, exc))
    if not cpus:
        raise CmdlineError('%s=%s names no CPU' % (name, whole or text))
    return cpus


def _counts(value):
    """``N`` or ``node:N,node:N`` -> {'total', 'nodes'}."""
    if ':' not in value:
        if not value.isdigit():
            raise CmdlineError('hugepages=%s is not a page count' % value)
        return {'total': int(value), 'nodes': None}
    nodes = {}
    for item in value.split(','):
        node, sep, count = item.partition(':')
        if not (sep and node.isdigit() and count.isdigit()):
            raise CmdlineError('hugepages=%s is not a page count per node (node:count,...)' % value)
        nodes[int(node)] = int(count)
    return {'total': sum(nodes.values()), 'nodes': nodes}


def grub_variables(texts):
    """{name: value} after sourcing ``texts`` (shell assignments, in order; $NAME expanded)."""
    values = {}
    for text in texts:
        for line in (text or '').splitlines():
            match = _ASSIGN.match(line)
            if not match or line.lstrip().startswith('#'):
                continue
            raw = _REFERENCE.sub(lambda m: _quote_safe(values.get(m.group(1) or m.group(2), '')), match.group(2))
            try:
                words = shlex.split(raw, comments=True, posix=True)
            except ValueError:
                continue
            values[match.group(1)] = ' '.join(words)
    return values


def _quote_safe(value):
    return value.replace('"', '')


def _local(root, path):
    return os.path.join(root or '/', path.lstrip('/'))


def _read(root, path):
    try:
        return read_text(_local(root, path), root=root)
    except (IOError, OSError, PathError):
        return None


def read_under(root, path):
    """The text of ``path`` under root, or None (absent, unreadable, a link out of root)."""
    return _read(root, path)


def running(root='/'):
    """The running kernel's command line (``/proc/cmdline`` under root), or None."""
    text = sysfs.read_text(_local(root, PROC_CMDLINE), strip=False)
    return None if text is None else BootLine(text.strip(), PROC_CMDLINE)


def next_boot(root='/'):
    """The next boot's command line from the boot loader's configuration under root, else the
    running one (None when neither can be read)."""
    text = _read(root, KERNEL_CMDLINE)
    if text is not None:
        return BootLine(' '.join(line for line in text.splitlines() if not line.lstrip().startswith('#')),
                        KERNEL_CMDLINE)
    grub = _read(root, GRUB_DEFAULT)
    if grub is not None:
        folder = _local(root, GRUB_DEFAULT_D)
        names = sorted(n for n in os.listdir(folder) if n.endswith('.cfg')) if os.path.isdir(folder) else []
        texts = [grub] + [_read(root, os.path.join(GRUB_DEFAULT_D, name)) for name in names]
        values = grub_variables(texts)
        line = ' '.join(values.get(name, '') for name in GRUB_VARIABLES).strip()
        shown = GRUB_DEFAULT + (' and %s/*.cfg' % GRUB_DEFAULT_D if names else '')
        return BootLine(line, '%s (%s)' % (shown, ' + '.join(GRUB_VARIABLES)))
    return running(root)


# What GRUB boots from, as update-grub / grub-mkconfig generate it from the files above.
GRUB_CONFIGS = ('/boot/grub/grub.cfg', '/boot/grub2/grub.cfg')
_LINUX_COMMAND = re.compile(r'^\s*linux(?:16|efi)?\s+\S+(?P<args>.*)\Z')


def generated(root='/'):
    """The kernel arguments of the first menu entry (its ``linux`` command) of the GRUB configuration
    the boot loader reads, as a BootLine; None when there is no such file or it has no ``linux``
    command (Boot Loader Specification entries, another boot loader): the next boot is then known
    from the files under /etc/default only."""
    for path in GRUB_CONFIGS:
        text = _read(root, path)
        if text is None:
            continue
        for line in text.splitlines():
            match = _LINUX_COMMAND.match(line)
            if match:
                return BootLine(match.group('args').strip(), path)
        return None
    return None


def label(line):
    """How a record names the command line: ``the kernel command line (/etc/default/grub ...)``."""
    return 'the kernel command line (%s)' % line.source


# ---------------------------------------------------------------- the write side (kernel_cmdline)
# Our GRUB drop-in: one assignment that appends our parameters to what the files before it set.
DROPIN_PREFIX = 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX'
_DROPIN_LINE = re.compile(r'^GRUB_CMDLINE_LINUX="\$(?:GRUB_CMDLINE_LINUX|\{GRUB_CMDLINE_LINUX\})(?P<words>[^"]*)"\s*\Z')


def name_of(word):
    """A word's parameter name as the kernel compares it (``-`` and ``_`` alike)."""
    return word.partition('=')[0].replace('-', '_')


def word_spans(line):
    """[(start, end)] of the words of one line, as split() finds them (double quotes group)."""
    spans, start, quoted = [], None, False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        if char.isspace() and not quoted:
            if start is not None:
                spans.append((start, index))
            start = None
        elif start is None:
            start = index
    if start is not None:
        spans.append((start, len(line)))
    return spans


def last_words(line_params, names):
    """{name: (spelled name, value or None for a bare word)} of the last occurrence of each of
    ``names`` in [(name, value)] (the kernel keeps the last one); absent names are left out."""
    found = {}
    for name, value in line_params:
        if name in names:
            found[name] = (name, value)
    return found


def dropin_words(text):
    """The words our drop-in appends (its GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX ..." line), or []."""
    for line in (text or '').splitlines():
        match = _DROPIN_LINE.match(line)
        if match:
            return match.group('words').split()
    return []


def render_dropin(text, words, header):
    """Our drop-in with ``words`` appended to GRUB_CMDLINE_LINUX; other lines kept.  None (remove
    the file) when no word is left and nothing but our header and blank lines would remain."""
    lines = (text or '').splitlines()
    kept = [line for line in lines if not _DROPIN_LINE.match(line)]
    if not words:
        ours = header.splitlines()
        return None if all(not line.strip() or line in ours for line in kept) else '\n'.join(kept) + '\n'
    line = '%s %s"' % (DROPIN_PREFIX, ' '.join(words))
    at = next((i for i, old in enumerate(lines) if _DROPIN_LINE.match(old)), None)
    lines = lines[:at] + [line] + lines[at + 1:] if at is not None else (kept or header.splitlines()) + [line]
    return '\n'.join(lines) + '\n'


def edit_words(text, drop, add):
    """``text`` (/etc/kernel/cmdline) without the words whose name is in ``drop``, then with the
    words ``add`` at the end of its last line that is no comment.  The other words keep their
    bytes; a line that loses a word gets single spaces between the words it keeps."""
    lines = (text or '').split('\n')
    last = None
    for index, line in enumerate(lines):
        if line.lstrip().startswith('#'):
            continue
        spans = word_spans(line)
        kept = [line[a:b] for a, b in spans if name_of(line[a:b]) not in drop]
        if len(kept) != len(spans):
            lines[index] = ' '.join(kept)
        if kept or len(kept) != len(spans):
            last = index
    if add:
        if last is None:
            if lines and lines[-1] == '':
                lines.insert(len(lines) - 1, ' '.join(add))
            else:
                lines.append(' '.join(add))
        else:
            lines[last] = ' '.join(([lines[last]] if lines[last].strip() else []) + list(add))
    out = '\n'.join(lines)
    return out if out.endswith('\n') or not out else out + '\n'


def grub_files(root):
    """The files GRUB's configuration sources, in order: [(path, text)] of /etc/default/grub and
    /etc/default/grub.d/*.cfg (name order); [] without /etc/default/grub."""
    grub = _read(root, GRUB_DEFAULT)
    if grub is None:
        return []
    folder = _local(root, GRUB_DEFAULT_D)
    names = sorted(n for n in os.listdir(folder) if n.endswith('.cfg')) if os.path.isdir(folder) else []
    return [(GRUB_DEFAULT, grub)] + [(os.path.join(GRUB_DEFAULT_D, n), _read(root, os.path.join(GRUB_DEFAULT_D, n)))
                                     for n in names]


def grub_winners(files, names):
    """{name: ((spelled name, value) or None, the file that gave it)}: the last occurrence of each
    parameter in the line GRUB's files make (GRUB_CMDLINE_LINUX then GRUB_CMDLINE_LINUX_DEFAULT),
    and the last file whose sourcing changed it (None when no file ever set it)."""
    found = dict((name, (None, None)) for name in names)
    for count in range(1, len(files) + 1):
        values = grub_variables([text for dummy, text in files[:count]])
        line = params(' '.join(values.get(name, '') for name in GRUB_VARIABLES))
        words = last_words(line, names)
        for name in names:
            if words.get(name) != found[name][0]:
                found[name] = (words.get(name), files[count - 1][0])
    return found
