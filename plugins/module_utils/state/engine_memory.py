# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the shared memory a database engine on this host really allocates.

What shared_memory sizes its huge page pool from when ``shared_memory_size`` is ``engine``
(or empty), read on the host before the desired state is compiled (state/host_state.py):

- MariaDB/MySQL: its option files (formats/mycnf.py, ``!include``/``!includedir`` followed),
  the groups the server reads: innodb_buffer_pool_size + 2 x innodb_log_buffer_size +
  key_buffer_size + aria_pagecache_buffer_size, each the server's default where unset;
  with large_pages mariadbd takes all of them in huge pages and the buffer pool is what
  falls back to normal pages when the pool is short (bench/README.md, "MariaDB large_pages
  against the pages shared_memory reserves");
- PostgreSQL: ``postgres -C shared_memory_size_in_huge_pages`` against its configuration
  (the server's own computation of its main segment, PostgreSQL 15 and later), or, while
  the server runs (postgres -C refuses a running data directory for runtime-computed
  values), ``SHOW shared_memory_size_in_huge_pages`` through its socket;
- Oracle: every instance of /etc/oratab, the larger of sga_max_size and sga_target its
  spfile (the parameter lines in the binary file) or pfile gives, summed.

Each answer is ``{'bytes': N, 'source': 'engine: ...'}``; what cannot be read raises
InputError saying why and what to set instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf, oracle_pfile, sizes
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect import engine as engine_setting
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.units import human_size

# MariaDB 10.11's defaults (MariaDB documentation, the system variables of InnoDB, MyISAM and Aria).
MYSQL_TERMS = (('innodb_buffer_pool_size', 1, 128 << 20), ('innodb_log_buffer_size', 2, 16 << 20),
               ('key_buffer_size', 1, 128 << 20), ('aria_pagecache_buffer_size', 1, 128 << 20))
MYSQL_CONFIG = '/etc/mysql/my.cnf'
PG_CONFIGS = '/etc/postgresql/*/*/postgresql.conf'   # Debian's clusters (postgresql-common)
PG_BINARIES = '/usr/lib/postgresql/*/bin/postgres'
ORATAB = '/etc/oratab'
HELP = 'give shared_memory_size (the size to reserve) instead'


def _size(text, what):
    match = sizes.SIZE_RE.match(str(text).strip().strip('\'"'))
    if not match:
        raise InputError('%s: %r is not a size' % (what, text))
    return sizes.in_bytes(match)


# ------------------------------------------------------------------ MariaDB / MySQL
def _mycnf_items(root, path, seen):
    text = read_text(rooted(root, path))
    if text is None or path in seen:
        return []
    seen.append(path)
    try:
        parsed = mycnf.parse(text, source=path)
    except mycnf.CnfError as exc:
        raise InputError('shared_memory_size engine: %s' % exc)
    items = []
    for item in parsed:
        if item.kind == 'include':
            items.extend(_mycnf_items(root, os.path.join(os.path.dirname(path), item.path), seen))
        elif item.kind == 'includedir':
            folder = os.path.join(os.path.dirname(path), item.path)
            local = str(rooted(root, folder))
            for name in sorted(os.listdir(local)) if os.path.isdir(local) else []:
                if name.endswith('.cnf'):
                    items.extend(_mycnf_items(root, os.path.join(folder, name), seen))
        elif item.kind == 'option' and mycnf.server_reads(item.group):
            items.append(item)
    return items


def mysql(root, config=None):
    """What mariadbd takes in large pages, from its option files (the last setting of each option wins)."""
    path = config or MYSQL_CONFIG
    seen = []
    items = _mycnf_items(root, path, seen)
    if not seen:
        raise InputError('shared_memory_size engine: no %s to read the server\'s configuration from; %s, or name '
                         'the option file in shared_memory_engine_config' % (path, HELP))
    values = dict((item.key, item) for item in items)
    total, terms = 0, []
    for key, times, default in MYSQL_TERMS:
        item = values.get(key)
        value = _size(item.value, '%s line %d %s' % (item.source, item.line, key)) if item else default
        total += times * value
        terms.append('%s%s %s%s' % ('2 x ' if times == 2 else '', key, human_size(value),
                                    '' if item else ' (default)'))
    return {'bytes': total, 'source': 'engine: %s = %s (%s; bench/README.md, MariaDB large_pages)'
            % (' + '.join(terms), human_size(total), ', '.join(seen))}


# ------------------------------------------------------------------ PostgreSQL
def _pg_config(root, config):
    if config:
        return config
    found = sorted(glob.glob(os.path.join(str(rooted(root, '/')), PG_CONFIGS.lstrip('/'))))
    if len(found) != 1:
        raise InputError('shared_memory_size engine: %s PostgreSQL clusters under /etc/postgresql; name the '
                         'configuration folder (or data directory) in shared_memory_engine_config, or %s'
                         % ('no' if not found else '%d' % len(found), HELP))
    return '/' + os.path.relpath(os.path.dirname(found[0]), str(rooted(root, '/')))


def _pg_binary(root, config):
    version = re.search(r'/postgresql/([0-9]+)/', config + '/')
    pattern = PG_BINARIES.replace('*', version.group(1), 1) if version else PG_BINARIES
    found = sorted(glob.glob(pattern), key=lambda p: int(p.split('/')[4]) if p.split('/')[4].isdigit() else 0)
    if not found or root != '/':
        raise InputError('shared_memory_size engine: no PostgreSQL server installed here (%s) to ask what it '
                         'allocates; %s' % (pattern, HELP))
    return found[-1]


def _as_user(user, argv):
    return (['runuser', '-u', user, '--'] + argv) if os.geteuid() == 0 else argv


def postgresql(root, config, runner, user='postgres'):
    """PostgreSQL's own count of huge pages for its main segment, as ``postgres -C`` or SHOW give it."""
    config = _pg_config(root, config)
    binary = _pg_binary(root, config)
    rc, out, err = runner(_as_user(user, [binary, '-D', config, '-C', 'shared_memory_size_in_huge_pages']))
    how = 'postgres -C shared_memory_size_in_huge_pages -D %s' % config
    if rc != 0 and 'postmaster.pid' in (err or ''):
        out, how = _pg_show(binary, config, runner, user), 'SHOW shared_memory_size_in_huge_pages (%s runs)' % config
    elif rc != 0:
        raise InputError('shared_memory_size engine: %s failed: %s' % (how, (err or out).strip()))
    pages = (out or '').strip()
    if not pages.isdigit() or int(pages) <= 0:
        raise InputError('shared_memory_size engine: %s says %r (PostgreSQL 15 or later computes it, with '
                         'huge pages on this host); %s' % (how, pages, HELP))
    return {'pages': int(pages), 'source': 'engine: %s = %s huge pages' % (how, pages)}


def _pg_show(binary, config, runner, user):
    rc, data, err = runner(_as_user(user, [binary, '-D', config, '-C', 'data_directory']))
    pid_file = os.path.join(data.strip() if rc == 0 and data.strip() else config, 'postmaster.pid')
    lines = (read_text(pid_file) or '').splitlines()
    if len(lines) < 5:
        raise InputError('shared_memory_size engine: the server of %s runs, but %s does not say its socket'
                         % (config, pid_file))
    psql = os.path.join(os.path.dirname(binary), 'psql')
    rc, out, err = runner(_as_user(user, [psql, '-XAtq', '-h', lines[4], '-p', lines[3], '-d', 'postgres', '-c',
                                          'SHOW shared_memory_size_in_huge_pages']))
    if rc != 0:
        raise InputError('shared_memory_size engine: SHOW shared_memory_size_in_huge_pages failed: %s'
                         % (err or out).strip())
    return out


# ------------------------------------------------------------------ Oracle
def _oracle_instance(root, sid, home):
    """(bytes, file) of one instance's SGA: the larger of sga_max_size and sga_target, spfile first."""
    try:
        path, entries = engine_setting.oracle_parameters(root, sid, home)
    except oracle_pfile.PfileError as exc:
        raise InputError('shared_memory_size engine: %s' % exc)
    if path is not None:
        found = [_size(oracle_pfile.resolve(entries, key, sid)[0][0], '%s %s' % (path, key))
                 for key in ('sga_max_size', 'sga_target') if oracle_pfile.resolve(entries, key, sid)[0]]
        if found:
            return max(found), path
        raise InputError('shared_memory_size engine: %s sets neither sga_max_size nor sga_target (with '
                         'memory_target the SGA cannot use huge pages); %s' % (path, HELP))
    raise InputError('shared_memory_size engine: instance %s has no spfile or pfile under %s/dbs; %s'
                     % (sid, home, HELP))


def oracle(root):
    """Every instance's SGA of /etc/oratab, summed."""
    lines = (read_text(rooted(root, ORATAB)) or '').splitlines()
    instances = [line.split(':')[:2] for line in lines if line.strip() and not line.lstrip().startswith('#')
                 and line.count(':') >= 2 and not line.startswith('*')]
    if not instances:
        raise InputError('shared_memory_size engine: no instance in %s; %s' % (ORATAB, HELP))
    total, terms = 0, []
    for sid, home in instances:
        size, path = _oracle_instance(root, sid, home)
        total += size
        terms.append('%s %s (%s)' % (sid, human_size(size), path))
    return {'bytes': total, 'source': 'engine: the SGA of %s = %s' % (' + '.join(terms), human_size(total))}


def read(engine, root='/', config=None, runner=None, user=None):
    """What ``engine`` allocates as shared memory on this host: {'bytes' or 'pages', 'source'}."""
    root = root or '/'
    if engine == 'mysql':
        return mysql(root, config or None)
    if engine == 'postgresql':
        if runner is None:
            raise InputError('shared_memory_size engine: no way to run postgres here; %s' % HELP)
        return postgresql(root, config or None, runner, user or 'postgres')
    return oracle(root)
