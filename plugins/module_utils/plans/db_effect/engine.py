# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: what a running database engine itself says of its huge pages.

Huge pages come to a database only when the engine asks for them, and most engines, when the
pool is short, fall back to normal pages without failing.  So the engine's own setting is read
where the engine answers for it:

- PostgreSQL: ``SHOW huge_pages`` and ``SHOW shared_memory_size_in_huge_pages`` through the
  server's Unix socket, as the user the postmaster runs as (peer authentication); and what
  its configuration gives now, ``postgres -C huge_pages`` with the postmaster's own command
  line (PostgreSQL answers -C while it runs for a setting not computed at run time).
  ``on`` refuses to start without huge pages, ``try`` falls back silently (PostgreSQL
  documentation, runtime-config-resource, huge_pages).
- MariaDB/MySQL: ``SHOW GLOBAL VARIABLES LIKE 'large_pages'`` through its socket (as root,
  unix_socket authentication), and the option files' last word, ``my_print_defaults`` of
  the server's groups with the server's own ``--defaults-file``/``--defaults-extra-file``.
  With large_pages the server logs a warning and takes normal pages when the pool is short
  (MariaDB documentation, large_pages; bench/README.md measured it in the VM lab): it always
  may fall back silently.
- Oracle: ``use_large_pages`` of the instance's spfile (its parameter lines) or pfile under
  ``$ORACLE_HOME/dbs``, the SID and the home from the main process's environment.  ``ONLY``
  and ``AUTO_ONLY`` refuse to start without them; ``TRUE`` (the default) and ``AUTO`` fall
  back (Oracle Database Reference, USE_LARGE_PAGES).

The socket is the one the service's processes listen on (``/proc/PID/net/unix``, the flag
``__SO_ACCEPTCON``, against the inodes of their ``socket:[N]`` descriptors).  Each reader
returns a Setting, or raises EngineUnreadable saying why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import re
from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import oracle_pfile

# value: the engine's word; mode: 'strict' (no huge pages, no start), 'fallback' (falls back
# silently) or 'off'; how: where it was read; configured: what the configuration gives now, or
# None; pages: the huge pages the engine says it needs, or None
Setting = namedtuple('Setting', 'name value mode how configured pages')

ACCEPTING = 0x10000   # __SO_ACCEPTCON in /proc/net/unix's Flags: a listening socket
MODES = {
    'postgresql': {'on': 'strict', 'try': 'fallback', 'off': 'off'},
    'mysql': {'on': 'fallback', '1': 'fallback', 'off': 'off', '0': 'off'},
    'oracle': {'only': 'strict', 'auto_only': 'strict', 'true': 'fallback', 'auto': 'fallback', 'false': 'off'},
}
NAMES = {'postgresql': 'huge_pages', 'mysql': 'large_pages', 'oracle': 'use_large_pages'}
SPFILE_LINE = re.compile(r'(?m)^\s*([A-Za-z0-9_$#*]+\.[A-Za-z_][A-Za-z0-9_#$]*\s*=.*)$')
MYSQL_GROUPS = ['mysqld', 'server', 'mariadb', 'mariadbd', 'mysqld_safe']


class EngineUnreadable(Exception):
    """The engine's setting cannot be read here; the message says why."""


def mode(engine, value):
    return MODES[engine].get(str(value).strip().strip('\'"').lower())


def listening_sockets(processes):
    """The paths of the Unix sockets the processes listen on (their netns' /proc/PID/net/unix)."""
    inodes = set()
    for proc in processes:
        for dummy, target, dummy_flags in proc.open_files():
            if target.startswith('socket:['):
                inodes.add(target[len('socket:['):].rstrip(']'))
    found = []
    for line in (processes[0].read('net', 'unix') or '').splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8 or not fields[7].startswith('/'):
            continue
        try:
            listening = int(fields[3], 16) & ACCEPTING
        except ValueError:
            continue
        if listening and fields[6] in inodes and fields[7] not in found:
            found.append(fields[7])
    return found


def _cmdline(proc):
    return [word for word in (proc.read('cmdline') or '').split('\0') if word]


def _user(proc):
    uid = ((proc.status() or {}).get('Uid') or '').split()
    try:
        return pwd.getpwuid(int(uid[0])).pw_name
    except (IndexError, ValueError, KeyError):
        raise EngineUnreadable('cannot tell which user pid %d runs as' % proc.pid)


def _exe(proc):
    try:
        return os.readlink(proc.path('exe'))
    except OSError as exc:
        raise EngineUnreadable('cannot read /proc/%d/exe: %s' % (proc.pid, exc.strerror))


def _run(runner, argv, what):
    try:
        rc, out, err = runner(argv)
    except OSError as exc:
        raise EngineUnreadable('%s cannot run: %s' % (what, exc))
    if rc != 0:
        said = ' '.join((err or out or '').split())
        raise EngineUnreadable('%s failed: %s' % (what, said[:300] or 'exit status %d' % rc))
    return out


def postgresql(main, processes, runner, root='/'):
    """huge_pages of the running server (SHOW), its configuration's (postgres -C) and the pages it needs."""
    sockets = [s for s in listening_sockets(processes) if os.path.basename(s).startswith('.s.PGSQL.')]
    if not sockets:
        raise EngineUnreadable('pid %d listens on no .s.PGSQL socket to ask SHOW huge_pages' % main.pid)
    folder, name = os.path.split(sockets[0])
    binary, user = _exe(main), _user(main)
    runas = ['runuser', '-u', user, '--'] if os.geteuid() == 0 and user != pwd.getpwuid(os.geteuid()).pw_name else []
    psql = os.path.join(os.path.dirname(binary), 'psql')
    out = _run(runner, runas + [psql, '-XAtq', '-h', folder, '-p', name.rsplit('.', 1)[1], '-d', 'postgres',
                                '-c', 'SHOW huge_pages', '-c', 'SHOW shared_memory_size_in_huge_pages'],
               'SHOW huge_pages through %s' % sockets[0])
    lines = out.split()
    value = lines[0] if lines else ''
    pages = int(lines[1]) if len(lines) > 1 and lines[1].isdigit() else None
    args = _cmdline(main)[1:]
    configured = None
    if args:
        try:
            configured = _run(runner, runas + [binary] + args + ['-C', 'huge_pages'], 'postgres -C huge_pages').strip()
        except EngineUnreadable:
            configured = None
    return Setting('huge_pages', value, mode('postgresql', value), 'SHOW through %s' % sockets[0],
                   configured, pages)


def _mysql_client(binary):
    folder = os.path.dirname(binary)
    for name in ('mariadb', 'mysql'):
        for place in (folder, '/usr/bin', '/usr/local/bin', os.path.join(os.path.dirname(folder), 'bin')):
            path = os.path.join(place, name)
            if os.access(path, os.X_OK):
                return path
    raise EngineUnreadable('no mariadb or mysql client beside %s to ask SHOW VARIABLES' % binary)


def _mysql_configured(main, runner):
    """large_pages as the server's option files give it (my_print_defaults, the last setting wins)."""
    options = ('--defaults-file=', '--defaults-extra-file=', '--no-defaults')
    defaults = [a for a in _cmdline(main)[1:3] if a.startswith(options)]
    out = _run(runner, ['my_print_defaults'] + defaults + MYSQL_GROUPS, 'my_print_defaults')
    value = 'OFF'
    for line in out.splitlines():
        key, eq, given = line.strip().lstrip('-').partition('=')
        key = key.replace('-', '_')
        if key == 'large_pages':
            value = given if eq else 'ON'
        elif key in ('skip_large_pages', 'disable_large_pages'):
            value = 'OFF'
        elif key in ('enable_large_pages',):
            value = 'ON'
    return {'1': 'ON', 'TRUE': 'ON', '0': 'OFF', 'FALSE': 'OFF'}.get(value.upper(), value.upper())


def mysql(main, processes, runner, root='/'):
    """large_pages of the running server (SHOW GLOBAL VARIABLES) and of its option files."""
    sockets = listening_sockets(processes)
    if not sockets:
        raise EngineUnreadable('pid %d listens on no Unix socket to ask SHOW VARIABLES' % main.pid)
    client = _mysql_client(_exe(main))
    out = _run(runner, [client, '--no-defaults', '-S', sockets[0], '-u', 'root', '-N', '-B', '-e',
                        "SHOW GLOBAL VARIABLES LIKE 'large_pages'"], 'SHOW VARIABLES through %s' % sockets[0])
    words = out.split()
    value = words[1] if len(words) > 1 else ''
    try:
        configured = _mysql_configured(main, runner)
    except EngineUnreadable:
        configured = None
    return Setting('large_pages', value, mode('mysql', value), 'SHOW GLOBAL VARIABLES through %s' % sockets[0],
                   configured, None)


def _environ(proc):
    pairs = [word.partition('=') for word in (proc.read('environ') or '').split('\0') if '=' in word]
    return dict((key, value) for key, dummy, value in pairs)


def oracle_parameters(root, sid, home):
    """(path, entries) of instance ``sid``'s parameter file under ``home``/dbs, spfile first, or (None, [])."""
    for name in ('spfile%s.ora' % sid, 'spfile.ora', 'init%s.ora' % sid):
        path = os.path.join(home, 'dbs', name)
        try:
            with open(str(rooted(root, path)), 'rb') as handle:
                data = handle.read().decode('latin-1')
        except (IOError, OSError):
            continue
        # an spfile is binary; its parameters are text lines in it, as in a pfile
        text = '\n'.join(SPFILE_LINE.findall(data)) if name.startswith('spfile') else data
        return path, oracle_pfile.parse(text, source=path)
    return None, []


def oracle(main, processes, runner=None, root='/'):
    """use_large_pages of the instance's spfile or pfile (TRUE where neither sets it)."""
    env = _environ(main)
    sid, home = env.get('ORACLE_SID'), env.get('ORACLE_HOME')
    if not sid or not home:
        raise EngineUnreadable('pid %d has no ORACLE_SID and ORACLE_HOME in its environment' % main.pid)
    try:
        path, entries = oracle_parameters(root, sid, home)
    except oracle_pfile.PfileError as exc:
        raise EngineUnreadable(str(exc))
    if path is None:
        raise EngineUnreadable('instance %s has no spfile or pfile under %s/dbs' % (sid, home))
    found = oracle_pfile.resolve(entries, 'use_large_pages', sid)[0]
    value = found[0].strip('\'"').upper() if found else 'TRUE'
    how = '%s%s' % (path, '' if found else ' (not set: the default)')
    return Setting('use_large_pages', value, mode('oracle', value), how, value, None)


READERS = {'postgresql': postgresql, 'mysql': mysql, 'oracle': oracle}


def read(engine, main, processes, runner, root='/'):
    """The engine's huge page setting (a Setting), or raises EngineUnreadable."""
    if engine != 'oracle' and root != '/':
        raise EngineUnreadable('%s is asked through its socket, on the running system only (root is %s)'
                               % (engine, root))
    if engine != 'oracle' and runner is None:
        raise EngineUnreadable('no way to run the engine\'s client here')
    return READERS[engine](main, processes, runner, root)
