# -*- coding: utf-8 -*-
"""The PostgreSQL parameter checks agree with the real server, line by line.

For each case, the line db_parameter would write (pg_catalog's verdict, then
postgresql_conf's rendering) is put into the postgresql.conf of a throwaway data
directory (initdb, never started) and ``postgres -C <name>`` reads it as the server does
at start: a value we refuse must stop the server ("configuration file ... contains
errors"), a value we accept must start it and read back as the value we meant.  Both the
shipped table of the installed major and its ``postgres --describe-config`` are tried.
Runs where PostgreSQL's server is installed (scripts/install-db-servers.sh); a skip is a
failure under DBHOST_REQUIRE_DB_SERVERS=1, as in the other real-server tests.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import pwd
import re
import shutil
import tempfile

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import postgresql_conf as pgconf
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter import pg_catalog
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import plain_value
from ansible_collections.dbhost.tuning.tests.unit.helpers import run, server_unavailable

SERVERS = sorted(glob.glob('/usr/lib/postgresql/*/bin/postgres'))

# (name, value as a user gives it); the server decides which are accepted.  Limits that
# tie parameters together (max_connections plus the worker counts at most 262143) are the
# server's alone: a value within each parameter's own range is what is checked here.
CASES = [
    ('wrok_mem', '4MB'), ('shared_bufers', '1GB'), ('work_mem', '4MB'), ('WORK_MEM', '8MB'),
    ('shared_buffers', True), ('shared_buffers', 'on'), ('shared_buffers', '1.5GB'), ('shared_buffers', '1kB'),
    ('shared_buffers', '16384'), ('shared_buffers', 15), ('shared_buffers', '-1'),
    ('work_mem', '64kb'), ('work_mem', '64kB'), ('work_mem', '63kB'), ('work_mem', '2 MB'), ('work_mem', '4 M'),
    ('work_mem', '0x10'), ('work_mem', '0x100'), ('work_mem', '10ms'), ('work_mem', '1e3'), ('work_mem', 1e309),
    ('max_connections', '100.5'), ('max_connections', '10MB'), ('max_connections', 0), ('max_connections', '010'),
    ('max_connections', 262144), ('max_connections', 200000), ('max_connections', False),
    ('huge_pages', True), ('huge_pages', 'tr'), ('huge_pages', 'TRUE'), ('huge_pages', 'try'), ('huge_pages', 'of'),
    ('fsync', 'of'), ('fsync', 'o'), ('fsync', 't'), ('fsync', 'enabled'), ('fsync', False),
    ('checkpoint_timeout', '29999ms'), ('checkpoint_timeout', '29499ms'), ('checkpoint_timeout', '5MB'),
    ('checkpoint_timeout', '2d'), ('checkpoint_timeout', '1d'),
    ('random_page_cost', 'inf'), ('random_page_cost', '1.1'), ('random_page_cost', '-0.5'), ('random_page_cost', True),
    ('vacuum_cost_delay', '1.5s'), ('vacuum_cost_delay', '0.5'), ('vacuum_cost_delay', '2ms'),
    ('wal_level', 'full'), ('wal_level', 'Logical'), ('wal_level', True),
    ('block_size', '8192'), ('server_version', '15'), ('application_name', 'batch'), ('zero_damaged_pages', 'off'),
    ('log_line_prefix', "it's %m [%p] # \\ "), ('log_line_prefix', '%m [%p] '), ('log_line_prefix', ' %m'), ('search_path', '"$user", public'),
    ('DateStyle', 'iso, mdy'), ('log_line_prefix', 'café'), ('log_line_prefix', 'a\tb'), ('cluster_name', 'main'),
    ('unix_socket_permissions', '0770'), ('my.custom', 'a # b'),
]
# Refused on purpose although the server would start: a YAML boolean for a string
# parameter is a typing accident (archive_command = on would archive with a command "on").
STRICTER = [('archive_command', True), ('cluster_name', False)]
# Strings the server keeps as given (others it canonicalizes: DateStyle, or makes ASCII).
READ_BACK = ('log_line_prefix', 'search_path')


def _as_postgres(argv):
    return ['runuser', '-u', 'postgres', '--'] + argv if os.geteuid() == 0 else argv


@pytest.fixture(scope='module')
def data_directory():
    if not SERVERS:
        server_unavailable('no PostgreSQL server under /usr/lib/postgresql')
    base = tempfile.mkdtemp(prefix='dbhost-pgcat-', dir='/tmp')
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam('postgres')
        except KeyError:
            server_unavailable('running as root without a postgres user')
        os.chown(base, owner.pw_uid, owner.pw_gid)
    data = os.path.join(base, 'data')
    initdb = os.path.join(os.path.dirname(SERVERS[-1]), 'initdb')
    rc, out, err = run(_as_postgres([initdb, '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']))
    assert rc == 0, err
    with open(os.path.join(data, 'postgresql.conf')) as handle:
        original = handle.read()
    try:
        yield {'data': data, 'original': original, 'postgres': SERVERS[-1],
               'major': int(re.search(r'/postgresql/([0-9]+)/', SERVERS[-1]).group(1))}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _server_reads(directory, line, name):
    """(True, value read back) when postgres starts with ``line``, else (False, its log)."""
    with open(os.path.join(directory['data'], 'postgresql.conf'), 'w') as handle:
        handle.write(directory['original'] + line)
    rc, out, err = run(_as_postgres([directory['postgres'], '-C', name, '-D', directory['data']]))
    return (True, out.rstrip('\n')) if rc == 0 else (False, err.strip()[-300:])


def _our_line(catalog, name, raw):
    """(the line db_parameter writes, None) or (None, why it refuses)."""
    key = name.lower()
    try:
        text = ('on' if raw else 'off') if isinstance(raw, bool) else plain_value(raw, key, keep_blanks=True)
    except Exception as exc:  # refused before the catalog (plain_value's own checks)
        return None, str(exc)
    problem = catalog.problem(key, raw, text)
    return (None, problem) if problem else (pgconf.format_entry(key, text), None)


@pytest.fixture(scope='module', params=['table', 'describe-config'])
def catalog(request, data_directory):
    major = data_directory['major']
    if request.param == 'table':
        if major not in pg_catalog.TABLES:
            pytest.skip('no shipped table of PostgreSQL %d' % major)
        return pg_catalog.catalog_for(major)
    rc, out, err = run([data_directory['postgres'], '--describe-config'])
    assert rc == 0 and out, err
    return pg_catalog.catalog_for(major, out, data_directory['postgres'])


@pytest.mark.parametrize('name, raw', CASES, ids=['%s=%r' % case for case in CASES])
def test_we_refuse_exactly_what_the_server_refuses(data_directory, catalog, name, raw):
    line, why = _our_line(catalog, name, raw)
    probe = line or '%s = %s\n' % (name, pgconf.format_value(str(raw).lower() if isinstance(raw, bool) else str(raw)))
    started, said = _server_reads(data_directory, probe, name.lower() if '.' not in name else name)
    assert (line is not None) == started, 'we %s %r (%s); the server %s: %s' % (
        'accept' if line else 'refuse', probe, why, 'starts' if started else 'refuses', said)
    if line is not None and name in READ_BACK:
        assert said == raw  # read back exactly as given: the quoting is right


@pytest.mark.parametrize('name, raw', STRICTER, ids=['%s=%r' % case for case in STRICTER])
def test_a_boolean_for_a_string_parameter_is_refused_though_the_server_starts(data_directory, catalog, name, raw):
    line, why = _our_line(catalog, name, raw)
    assert line is None and 'is a boolean' in why and name in why
    started, said = _server_reads(data_directory, '%s = %s\n' % (name, 'on' if raw else 'off'), name)
    assert started, said


def test_the_shipped_table_matches_the_installed_server(data_directory):
    """Every name --describe-config lists is in the shipped table of that major, with its type."""
    major = data_directory['major']
    if major not in pg_catalog.TABLES:
        pytest.skip('no shipped table of PostgreSQL %d' % major)
    rc, out, err = run([data_directory['postgres'], '--describe-config'])
    described = pg_catalog.parse_describe(out)
    table = pg_catalog.parse_table(pg_catalog.TABLES[major].TABLE)
    assert len(described) > 250
    differ = dict((key, (setting.vartype, table[key].vartype if key in table else None))
                  for key, setting in described.items()
                  if key not in table or table[key].vartype != setting.vartype)
    assert differ == {}
