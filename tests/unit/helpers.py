# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers the unit tests share, written once.

Import them by their full name (the conftest next to this file makes the checkout
importable as ansible_collections.dbhost.tuning):

    from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records, write

The fixtures the tests share (a Linux platform whatever this machine runs, a module's
main() run with arguments) are in the conftest files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import glob
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest


def per_kind(table, writing=False, kinds=None):
    """A per-kind test table's cases in the registry's order: ``[(kind, table[kind])]`` for every kind of
    ``kinds`` (state/registry.py KINDS) that the table has, with ``writing`` only those that write
    something (not ``hooks.read_only``).  A kind the table lacks is named by
    tests/unit/plugins/modules/test_modules_per_kind_tables.py."""
    from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
    kinds = registry.KINDS if kinds is None else kinds
    return [(name, table[name]) for name, kind in kinds.items()
            if name in table and not (writing and kind.hooks.read_only)]


def write(path, text):
    """Write ``text`` to the file ``path`` of this machine, making its folders."""
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)


def put(root, path, text):
    """Write ``text`` to ``path`` (as the managed system names it) under ``root``, making its folders."""
    write(os.path.join(root, path.lstrip('/')), text)


def read(root, path):
    """The text of ``path`` (as the managed system names it) under ``root``."""
    with open(os.path.join(root, path.lstrip('/'))) as handle:
        return handle.read()


# The baseline's folder under a root (engine/baseline.py), for digest(root, skip=BASELINE_FOLDER).
BASELINE_FOLDER = ('var/lib/dbhost-tuning',)


def _skipped(relative, skip):
    return any(relative == top or relative.startswith(top + '/') for top in skip)


def digest(root, skip=()):
    """Every file's path, bytes and mode, every link's target and every folder's name under ``root``.

    Equal before and after a call means the call changed nothing under ``root``: no file
    written, made, removed or chmod-ed, no folder or link made.  ``skip``: paths relative
    to root left out with all they hold (BASELINE_FOLDER: the baseline a run keeps).
    """
    sha = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        if _skipped(os.path.relpath(folder, root), skip):
            continue
        sha.update(('D %s\n' % os.path.relpath(folder, root)).encode())
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            if _skipped(os.path.relpath(path, root), skip):
                continue
            sha.update(('F %s %o\n' % (os.path.relpath(path, root), os.lstat(path).st_mode)).encode())
            if os.path.islink(path):
                sha.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                # FIFOs, sockets and device nodes count by their mode alone (opening a FIFO would wait)
                with open(path, 'rb') as handle:
                    sha.update(handle.read())
    return sha.hexdigest()


def make_plan(kind, values, context=None, **seams):
    """The plan of ``kind`` made as its module makes it (state/registry.py: the options with the spec's
    defaults, the kind's constraints checked) in ``context`` (a registry.Context; default: not in
    check mode, no runner, this host's platform), with a test's doubles (``seams``) as the plan names them."""
    from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
    return registry.plan(kind, values, context or registry.Context(), **seams)


def db_parameter_plan(engine, params, context=None, **options):
    """db_parameter's plan (make_plan) of ``engine`` and ``params``; ``euid``, ``find_server`` and
    ``base_page`` among ``options`` are a test's doubles (plans/db_parameter/plan.py), the rest options."""
    seams = dict((name, options.pop(name)) for name in ('euid', 'find_server', 'base_page') if name in options)
    return make_plan('db_parameter', dict(options, engine=engine, params=params), context, **seams)


def records(result):
    """The records of a result by name: a module's JSON result (dicts) or a plan's ``Result`` (``Setting``s)."""
    if isinstance(result, dict):
        return dict((s['name'], s) for s in result['settings'])
    return dict((s.name, s) for s in result.settings)


# ------------------------------------------------------------ real database servers
def run(argv, data=None, environ=None):
    """Run ``argv`` (a server's client or tool) from ``/``: (rc, stdout, stderr), the module's runner shape."""
    env = dict(os.environ)
    env.update(environ or {})
    proc = subprocess.run(argv, input=data, env=env, capture_output=True, text=True, cwd='/', check=False)
    return proc.returncode, proc.stdout, proc.stderr


def server_unavailable(reason):
    """Skip, unless scripts/test.sh installed the servers (DBHOST_REQUIRE_DB_SERVERS=1): then fail."""
    if os.environ.get('DBHOST_REQUIRE_DB_SERVERS') == '1':
        pytest.fail('%s, although scripts/install-db-servers.sh installed the servers' % reason)
    pytest.skip(reason)


ULONG = '18446744073692774399'


# What the tree's running kernel says of its base page size (platforms.page_size(root)).
SMAPS_4K = ('55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234 /usr/bin/cat\nSize:                  8 kB\n'
            'KernelPageSize:        4 kB\nMMUPageSize:           4 kB\n')


def generous_oracle_host(root):
    """A Linux tree under ``root`` whose limits all exceed what Oracle asks for a 40 % SGA on 64 GB:
    shmmax and shmall at ULONG_MAX, shmmni 32768, a 30000-page pool, memlock unlimited."""
    put(root, '/etc/passwd', 'oracle:x:54321:54322::/home/oracle:/bin/sh\n')
    put(root, '/etc/group', 'dba:x:54322:\n')
    for key, value in (('kernel/shmmax', ULONG), ('kernel/shmall', ULONG), ('kernel/shmmni', '32768'),
                       ('vm/hugetlb_shm_group', '54322'), ('vm/nr_hugepages', '30000')):
        put(root, '/proc/sys/' + key, value + '\n')
    put(root, '/proc/meminfo', 'MemTotal:       67108864 kB\nMemFree:        20000000 kB\nHugepagesize:       2048 kB\n')
    put(root, '/proc/self/smaps', SMAPS_4K)
    put(root, '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages', '30000\n')
    put(root, '/etc/sysctl.d/80-local.conf', 'vm.nr_hugepages = 30000\nvm.hugetlb_shm_group = 54322\n'
                                             'kernel.shmmni = 32768\n')
    put(root, '/etc/security/limits.conf', 'oracle - memlock unlimited\n')
    os.makedirs(os.path.join(root, 'etc', 'security', 'limits.d'))
    return root


def run_role(tmp_path, role, variables, check=False):
    """Run one role of this checkout on localhost through ansible-playbook; returns <role>_result,
    with the role's other exported facts under ``exported`` (shared_memory_settings, ...)."""
    import json
    import shutil
    import sys
    import yaml
    playbook_bin = shutil.which('ansible-playbook', path=os.path.dirname(sys.executable)) or \
        shutil.which('ansible-playbook')
    if playbook_bin is None:
        pytest.skip('ansible-playbook is not installed')
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    collections = tmp_path / 'collections' / 'ansible_collections' / 'dbhost'
    if not collections.exists():
        collections.mkdir(parents=True)
        os.symlink(checkout, str(collections / 'tuning'))
    saved = tmp_path / 'result.json'
    playbook = tmp_path / 'play.yml'
    playbook.write_text(yaml.safe_dump([{
        'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
        'vars': dict(variables, ansible_python_interpreter=sys.executable),
        'tasks': [
            {'name': 'role', 'ansible.builtin.include_role': {'name': 'dbhost.tuning.' + role}},
            {'name': 'save', 'ansible.builtin.copy': {
                'content': '{{ %s_result | combine({"exported": {"shared_memory_settings": '
                           'shared_memory_settings | default(none)}}) | to_json }}' % role,
                'dest': str(saved), 'mode': '0600'}, 'check_mode': False},
        ]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path / 'collections'), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=str(tmp_path / 'tmp'), ANSIBLE_HOME=str(tmp_path / 'home'))
    argv = [playbook_bin, '-i', 'localhost,', str(playbook)] + (['--check'] if check else [])
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(str(saved)) as handle:
        return json.load(handle)


def ansible_program(name):
    """The path of an Ansible program (ansible-playbook...) beside this Python, else on PATH; skip without it."""
    import shutil
    import sys
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        pytest.skip('%s is not installed' % name)
    return found


def ansible_env(tmp_path, **extra):
    """An environment whose ANSIBLE_COLLECTIONS_PATH finds this checkout as dbhost.tuning, with
    Ansible's temporary and home folders under ``tmp_path``."""
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    collections = os.path.join(str(tmp_path), 'collections')
    link = os.path.join(collections, 'ansible_collections', 'dbhost', 'tuning')
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link))
        os.symlink(checkout, link)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0',
               ANSIBLE_LOCAL_TEMP=os.path.join(str(tmp_path), 'tmp'),
               ANSIBLE_HOME=os.path.join(str(tmp_path), 'home'))
    env.pop('ANSIBLE_CALLBACKS_ENABLED', None)
    env.update(extra)
    return env


def role_defaults(role):
    """{variable: default} of ``role``: its defaults/main.yml, as host_state's action plugin reads it."""
    from ansible_collections.dbhost.tuning.plugins.action import host_state
    variables = host_state.role_variables(role)
    return dict((name, variables[name]) for name in variables['__has_default'])


def with_defaults(inputs):
    """host_state ``inputs`` ({role: {variable: value}}) completed with each role's defaults, as the
    action plugin sends them."""
    out = {}
    for role, given in inputs.items():
        variables = role_defaults(role)
        variables.update(given or {})
        out[role] = variables
    return out


def sizing_defaults():
    """The sizing's shares (hugepages_cap, hugepages_margin, shared_memory_cap) as the shared_memory
    role's defaults give them (the shm_settings filter's own fill-in)."""
    from ansible_collections.dbhost.tuning.plugins.filter import sizes
    return dict(sizes.role_defaults())


def shm_sized(engine, ram_bytes, page_size, shared_memory, **options):
    """sizing/shm.py shm_settings() of one database on one machine, with the shared_memory role's shares
    (sizing_defaults) where not given, as the role and the filter pass them; ``system``,
    ``supported_hugepage_sizes`` and ``current`` among ``options`` describe the machine, the rest the request."""
    from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import shm
    machine = dict((name, options.pop(name)) for name in shm.ShmMachine._fields[2:] if name in options)
    wanted = shm.request(engine, shared_memory, **dict(sizing_defaults(), **options))
    return shm.shm_settings(shm.ShmMachine(ram_bytes, page_size, **machine), wanted)


def as_postgres(argv):
    """``argv`` run as the postgres user when this runs as root (initdb and the server refuse root)."""
    return ['runuser', '-u', 'postgres', '--'] + argv if os.geteuid() == 0 else argv


def free_huge_pages():
    """HugePages_Free of this machine's /proc/meminfo (the default size's pool)."""
    with open('/proc/meminfo') as handle:
        for line in handle:
            if line.startswith('HugePages_Free:'):
                return int(line.split()[1])
    return 0


def new_postgres_cluster(prefix):
    """A new PostgreSQL data directory (initdb, trust, never started) in a folder of its own under
    /tmp owned by postgres: (bindir, base folder, data directory). Skips (or fails, see
    server_unavailable) without the server binaries or, as root, without a postgres user."""
    binaries = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if not binaries:
        server_unavailable('no PostgreSQL server binaries under /usr/lib/postgresql')
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam('postgres')
        except KeyError:
            server_unavailable('running as root without a postgres user')
    bindir = os.path.dirname(binaries[-1])
    base = tempfile.mkdtemp(prefix=prefix, dir='/tmp')
    if owner:
        os.chown(base, owner.pw_uid, owner.pw_gid)
    data = os.path.join(base, 'data')
    rc, dummy, err = run(as_postgres([os.path.join(bindir, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres',
                                      '--no-sync']))
    assert rc == 0, err
    return bindir, base, data


# The start of a throwaway server's option file ({base}: its folder); a test adds its own [mysqld] lines.
MYSQL_TEST_CNF = '''[client-server]
socket = {base}/mysqld.sock

[mysqld]
datadir = {base}/data
pid-file = {base}/mysqld.pid
log-error = {base}/error.log
skip-networking
user = mysql
'''
MYSQL_SERVER = shutil.which('mariadbd', path='/usr/sbin:/usr/bin') or shutil.which('mysqld', path='/usr/sbin:/usr/bin')
MYSQL_INSTALL_DB = shutil.which('mariadb-install-db') or shutil.which('mysql_install_db')
MYSQL_CLIENT = shutil.which('mysql') or shutil.which('mariadb')


def start_mysql(cnf, base):
    """mariadbd (or mysqld) started with ``--defaults-file=cnf``, once its socket ``base``/mysqld.sock answers."""
    server = subprocess.Popen([MYSQL_SERVER, '--defaults-file=%s' % cnf], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    for dummy in range(100):
        if os.path.exists(os.path.join(base, 'mysqld.sock')):
            rc, out, err = run([MYSQL_CLIENT, '-S', os.path.join(base, 'mysqld.sock'), '-N', '-B', '-e', 'SELECT 1'])
            if rc == 0:
                return server
        time.sleep(0.2)
    server.terminate()
    with open(os.path.join(base, 'error.log')) as handle:
        raise AssertionError('the server did not start: %s' % handle.read()[-2000:])


def stop_mysql(server):
    server.terminate()
    server.wait(60)


@contextlib.contextmanager
def mysql_server(prefix, cnf_text):
    """A throwaway MariaDB/MySQL server: a folder of its own under /tmp owned by mysql, ``cnf_text``
    (``{base}`` replaced by that folder) as its option file, mariadb-install-db, then started:
    yields {'base', 'cnf', 'process'} and stops it and removes the folder afterwards.  Skips (or
    fails, see server_unavailable) without the server, its install tool, its client, root or a
    mysql user."""
    if not (MYSQL_SERVER and MYSQL_INSTALL_DB and MYSQL_CLIENT):
        server_unavailable('no MariaDB/MySQL server, install-db tool and client installed')
    if os.geteuid() != 0:
        server_unavailable('needs root: the server runs as the mysql user and root logs in through the socket')
    try:
        mysql = pwd.getpwnam('mysql')
    except KeyError:
        server_unavailable('no mysql user')
    base = tempfile.mkdtemp(prefix=prefix, dir='/tmp')
    os.chown(base, mysql.pw_uid, mysql.pw_gid)
    cnf = os.path.join(base, 'my.cnf')
    with open(cnf, 'w') as handle:
        handle.write(cnf_text.format(base=base))
    state = {'base': base, 'cnf': cnf, 'process': None}
    try:
        rc, out, err = run([MYSQL_INSTALL_DB, '--defaults-file=%s' % cnf, '--skip-test-db',
                            '--auth-root-authentication-method=socket'])
        assert rc == 0, out + err
        state['process'] = start_mysql(cnf, base)
        yield state
    finally:
        if state['process'] is not None:
            stop_mysql(state['process'])
        shutil.rmtree(base, ignore_errors=True)
