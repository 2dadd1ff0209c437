# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the table of PostgreSQL parameters of one major version that db_parameter ships.

What a PostgreSQL build says about its own parameters, from two sources:
  postgres --describe-config   name, context, type, minimum and maximum of every parameter
                               postgresql.conf.sample lists (the "sample" ones)
  pg_settings                  every parameter, with its unit and its enum values, read
                               from a throwaway cluster (initdb in a temporary folder,
                               started on a Unix socket there, no TCP, stopped and removed)
and puts that major's table into plugins/module_utils/plans/db_parameter/pg_settings.py,
in place of the one it had (the other majors' tables are kept as they are): the file is
written again whole, as the oldest major's table (BASE) and, for each later major, what
changed since the major before it (CHANGES), with the build of each (SOURCES).

Usage:
  python3 scripts/pg-settings-table.py --bindir /usr/lib/postgresql/15/bin [--chroot DIR] [--output FILE]

  --bindir   the folder of postgres, initdb, pg_ctl and psql
  --chroot   run them inside this tree (chroot(8)); how the tables of majors this machine
             has no package for were made, e.g. PostgreSQL 13 and 17 on Debian 12:
               mmdebstrap --variant=minbase --include=postgresql-13 bullseye DIR
               mmdebstrap --variant=minbase --include=postgresql-17 trixie DIR
  --output   the file to read the other majors from and to write (default: the one in this
             checkout)
As root, the cluster runs as the user postgres (runuser); the tree needs that user.
"""

from __future__ import print_function

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, '..', 'plugins', 'module_utils', 'plans', 'db_parameter', 'pg_settings.py')
QUERY = ("SELECT name, context, vartype, coalesce(unit, ''), coalesce(min_val, ''), coalesce(max_val, ''), "
         "coalesce(array_to_string(enumvals, ','), '') FROM pg_settings ORDER BY name")
SEP = '\x1f'

HEADER = '''# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the parameters of each PostgreSQL major, as its server lists them.

Written by scripts/pg-settings-table.py (do not edit by hand), from ``postgres --describe-config``
and pg_settings of a throwaway cluster of the build SOURCES names for each major.
One parameter a line: name, context, type, unit, minimum, maximum, enum values (comma-
separated), and 1 when --describe-config lists it (postgresql.conf.sample does), else 0;
"-" where a field is empty.  BASE is the table of the oldest major; CHANGES[major] what
changed since the major before it: "+ " and the whole line of a parameter added or changed,
"- " and the name of one removed.  TABLES ({major: Table}) holds each major's whole table
(MAJOR, SOURCE, TABLE: the lines), computed at import.  Read by pg_catalog.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SOURCES = {
%(sources)s
}
BASE = \'\'\'
%(base)s
\'\'\'
CHANGES = {%(changes)s
}


class Table(object):
    """The table of one major: MAJOR, SOURCE (the build it was read from), TABLE (its lines)."""

    __slots__ = ('MAJOR', 'SOURCE', 'TABLE')

    def __init__(self, major, source, table):
        self.MAJOR = major
        self.SOURCE = source
        self.TABLE = table


def apply_changes(lines, changes):
    """The lines of a table after ``changes`` (a CHANGES entry), sorted by name."""
    by_name = dict((line.split(' ', 1)[0], line) for line in lines)
    for change in changes.splitlines():
        if change.startswith('- '):
            del by_name[change[2:]]
        elif change.startswith('+ '):
            by_name[change[2:].split(' ', 1)[0]] = change[2:]
    return sorted(by_name.values())


def _tables():
    lines = [line for line in BASE.splitlines() if line]
    tables = {}
    for major in sorted(SOURCES):
        if major in CHANGES:
            lines = apply_changes(lines, CHANGES[major])
        tables[major] = Table(major, SOURCES[major], '\\n%%s\\n' %% '\\n'.join(lines))
    return tables


TABLES = _tables()
'''


def run(argv, chroot=None, user=None, check=True):
    if user:
        argv = ['runuser', '-u', user, '--'] + argv
    if chroot:
        argv = ['chroot', chroot] + argv
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if check and done.returncode != 0:
        sys.exit('%s exited %d: %s' % (' '.join(argv), done.returncode, done.stderr.strip()[-2000:]))
    return done.stdout


def describe(bindir, chroot):
    """{name: (context, type, min, max)} from postgres --describe-config (tab-separated)."""
    found = {}
    for line in run([os.path.join(bindir, 'postgres'), '--describe-config'], chroot).splitlines():
        fields = line.split('\t')
        if len(fields) >= 7:
            found[fields[0]] = (fields[1], fields[3].lower(), fields[5], fields[6])
    return found


def settings(bindir, chroot):
    """The rows of pg_settings, from a throwaway cluster."""
    user = 'postgres' if os.geteuid() == 0 else None
    outer = tempfile.mkdtemp(prefix='pg-settings-', dir=os.path.join(chroot, 'tmp') if chroot else None)
    inner = '/' + os.path.relpath(outer, chroot) if chroot else outer
    try:
        if user:
            run(['chown', user, inner], chroot)
        data = os.path.join(inner, 'data')
        run([os.path.join(bindir, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'], chroot, user)
        # sysv shared memory: a chroot has no /dev/shm mount for posix segments.
        options = "-c listen_addresses= -k %s -c port=5499 -c dynamic_shared_memory_type=sysv" % inner
        run([os.path.join(bindir, 'pg_ctl'), '-D', data, '-o', options, '-l', os.path.join(inner, 'log'), '-w',
             'start'], chroot, user)
        try:
            out = run([os.path.join(bindir, 'psql'), '-h', inner, '-p', '5499', '-U', 'postgres', '-d', 'postgres',
                       '-X', '-A', '-t', '-F', SEP, '-c', QUERY], chroot, user)
        finally:
            run([os.path.join(bindir, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'], chroot, user, check=False)
    finally:
        shutil.rmtree(outer, ignore_errors=True)
    return [line.split(SEP) for line in out.splitlines() if line.count(SEP) == 6]


def table_lines(rows, sample):
    lines = []
    seen = set()
    for name, context, vartype, unit, low, high, enumvals in rows:
        seen.add(name)
        fields = [name, context, vartype, unit, low, high, enumvals, '1' if name in sample else '0']
        lines.append(' '.join(field.replace(' ', '') or '-' for field in fields))
    for name in sorted(set(sample) - seen):
        context, vartype, low, high = sample[name]
        lines.append(' '.join(field or '-' for field in (name, context, vartype, '', low, high, '', '1')))
    return sorted(lines)


def load_tables(path):
    """{major: (source, [line, ...])} of the tables in the file at ``path`` ({} when there is none)."""
    if not os.path.exists(path):
        return {}
    spec = importlib.util.spec_from_file_location('pg_settings', path)
    shipped = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shipped)
    return dict((major, (table.SOURCE, [line for line in table.TABLE.splitlines() if line]))
                for major, table in shipped.TABLES.items())


def changes(before, after):
    """What changed from the lines ``before`` to the lines ``after``, in CHANGES' notation."""
    old = dict((line.split(' ', 1)[0], line) for line in before)
    new = dict((line.split(' ', 1)[0], line) for line in after)
    removed = ['- %s' % name for name in sorted(old) if name not in new]
    return removed + ['+ %s' % new[name] for name in sorted(new) if old.get(name) != new[name]]


def render(tables):
    """The text of pg_settings.py holding ``tables`` ({major: (source, lines)})."""
    majors = sorted(tables)
    blocks = ''.join("\n    %d: '''\n%s\n'''," % (after, '\n'.join(changes(tables[before][1], tables[after][1])))
                     for before, after in zip(majors, majors[1:]))
    return HEADER % dict(sources='\n'.join('    %d: %r,' % (major, tables[major][0]) for major in majors),
                         base='\n'.join(tables[majors[0]][1]), changes=blocks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--bindir', required=True)
    parser.add_argument('--chroot')
    parser.add_argument('--output')
    args = parser.parse_args()
    version = run([os.path.join(args.bindir, 'postgres'), '--version'], args.chroot).strip()
    match = re.search(r'\(PostgreSQL\) (\d+)', version)
    if not match:
        sys.exit('cannot read the major version from %r' % version)
    major = int(match.group(1))
    sample = describe(args.bindir, args.chroot)
    rows = settings(args.bindir, args.chroot)
    release = run(['sh', '-c', '. /etc/os-release; echo "$PRETTY_NAME"'], args.chroot).strip()
    where = ' in a %s tree' if args.chroot else ' on %s'
    source = '%s%s' % (re.sub(r'^postgres \(PostgreSQL\)', 'PostgreSQL', version), where % release)
    output = args.output or os.path.normpath(TARGET)
    tables = load_tables(output)
    tables[major] = (source, table_lines(rows, sample))
    with open(output, 'w') as handle:
        handle.write(render(tables))
    print('%s: PostgreSQL %d, %d parameters (%d in --describe-config) from %s; the tables of %s' % (
        output, major, len(rows), len(sample), version, ', '.join(str(known) for known in sorted(tables))))


if __name__ == '__main__':
    main()
