# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PostgreSQL: the server reads the value db_parameter records as persisted (postgres -C with the
cluster's configuration, includes and postgresql.auto.conf, then SHOW after the restart), and a
value PostgreSQL refuses is refused by db_parameter first. Debian 12's postgresql (15/main)."""

import importlib.util
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts('databases')

VERSION = expect.VARS['dbhost_consumers_pg_version']
POSTGRES = '/usr/lib/postgresql/%s/bin/postgres' % VERSION
CONFIG_DIR = os.path.dirname(expect.VARS['dbhost_consumers_pg_conf'])
PARAMS = expect.VARS['dbhost_consumers_pg_params']
AUTO = expect.VARS['dbhost_consumers_pg_auto']
REJECTED = expect.VARS['dbhost_consumers_pg_rejected']
# Memory units of postgresql.conf (PostgreSQL documentation, 20.1.1: multiplier 1024).
UNITS = {'B': 1, 'kB': 1024, 'MB': 1024 ** 2, 'GB': 1024 ** 3, 'TB': 1024 ** 4}


def as_bytes(value, unit=None):
    """'64MB' -> bytes; a bare number is in the parameter's unit ('8kB', 'kB') as pg_settings gives it."""
    match = re.match(r'^\s*(-?\d+)\s*([A-Za-z]*)\s*$', str(value))
    if not match:
        return value
    number, suffix = int(match.group(1)), match.group(2)
    if suffix:
        return number * UNITS[suffix]
    unit_match = re.match(r'^(\d*)([A-Za-z]+)$', unit or '')
    if not unit_match:
        return number
    return number * int(unit_match.group(1) or 1) * UNITS[unit_match.group(2)]


def postgres(host, *arguments):
    return host.run('runuser -u postgres -- %s %s -D %s' % (POSTGRES, ' '.join(arguments), CONFIG_DIR))


def psql(host, sql):
    return host.check_output('runuser -u postgres -- psql -XAtq -F "|" -c %s', sql)


@pytest.fixture(name='records', scope='module')
def records_fixture(host):
    records = expect.records(host)
    return expect.by_name(records['postgresql']), expect.by_name(records['postgresql_after']), records


@pytest.fixture(name='units', scope='module')
def units_fixture(host):
    names = ', '.join("'%s'" % name for name in sorted(PARAMS))
    rows = psql(host, 'SELECT name, coalesce(unit, \'\') FROM pg_settings WHERE name IN (%s)' % names)
    return dict(line.split('|', 1) for line in rows.splitlines())


@pytest.fixture(name='server_reads', scope='module')
def server_reads_fixture(host):
    """postgres -C NAME -D CONFIG_DIR for every parameter (one -C per run: postgres prints only one)."""
    values = {}
    for name in sorted(PARAMS):
        result = postgres(host, '-C', name)
        assert result.rc == 0, expect.output(result)
        values[name] = result.stdout.strip()
    return values


def test_postgres_C_reads_the_persisted_values(records, units, server_reads):
    before, after, dummy = records
    rows, wrong = [], []
    for name in sorted(PARAMS):
        for phase, record in (('converge', before[name]), ('after restart', after[name])):
            server = as_bytes(server_reads[name], units[name])
            rows.append((name, phase, record['desired'], record['persisted'], record['status'],
                         '%s (%s)' % (server_reads[name], units[name] or 'no unit'), record['target']))
            if as_bytes(record['persisted']) != server:
                wrong.append('%s (%s)' % (name, phase))
    text = expect.show(expect.table(
        'db_parameter persisted vs postgres -C NAME -D %s' % CONFIG_DIR,
        ('parameter', 'record', 'ours: desired', 'ours: persisted', 'ours: status', 'postgres -C', 'ours: target'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_auto_conf_wins_and_the_record_says_shadowed(host, records, server_reads, units):
    before, after, dummy = records
    auto = host.file('/var/lib/postgresql/%s/main/postgresql.auto.conf' % VERSION).content_string
    rows = []
    for name, value in sorted(AUTO.items()):
        for phase, record in (('converge', before[name]), ('after restart', after[name])):
            rows.append((name, phase, record['desired'], record['persisted'], record['status'], server_reads[name],
                         record['detail']))
    text = expect.show(expect.table(
        'postgresql.auto.conf shadowing: records vs postgres -C',
        ('parameter', 'record', 'ours: desired', 'ours: persisted', 'ours: status', 'postgres -C', 'ours: detail'), rows))
    for name, value in AUTO.items():
        assert re.search(r"^%s = '%s'$" % (name, value), auto, re.M), auto
        assert as_bytes(server_reads[name], units[name]) == as_bytes(value) != as_bytes(PARAMS[name]), text
        for record in (before[name], after[name]):
            assert record['status'] == 'shadowed' and 'postgresql.auto.conf' in record['detail'], text
            assert as_bytes(record['persisted']) == as_bytes(value), text


def test_show_after_the_restart_agrees(host, records):
    dummy, after, all_records = records
    shown = dict(line.split('|', 1) for line in psql(host, 'SELECT name, current_setting(name) FROM pg_settings WHERE name IN (%s)' % (
        ', '.join("'%s'" % name for name in sorted(PARAMS)))).splitlines())
    rows = [(name, after[name]['persisted'], after[name]['live'], after[name]['status'], shown[name]) for name in sorted(PARAMS)]
    text = expect.show(expect.table(
        'db_parameter after the restart vs SHOW', ('parameter', 'ours: persisted', 'ours: live', 'ours: status', 'SHOW'), rows))
    for name in PARAMS:
        assert as_bytes(shown[name]) == as_bytes(after[name]['persisted']) == as_bytes(after[name]['live']), text
        assert after[name]['status'] in ('ok', 'shadowed'), text
    assert all_records['postgresql_after']['restart_required'] is False, text


@pytest.mark.parametrize('rejected', REJECTED, ids=lambda item: '%s=%s' % (item['name'], item['value']))
def test_postgresql_refuses_the_value(host, rejected):
    result = postgres(host, '-C', rejected['name'], '-c', "%s='%s'" % (rejected['name'], rejected['value']))
    expect.show('\npostgres -C %s -c %s=%s: rc %d: %s' % (rejected['name'], rejected['name'], rejected['value'], result.rc,
                                                          expect.output(result).strip()))
    assert result.rc != 0
    assert re.search(r'invalid value for parameter|outside the valid range|unrecognized configuration parameter',
                     expect.output(result)), expect.output(result)


@pytest.mark.parametrize('rejected', REJECTED, ids=lambda item: '%s=%s' % (item['name'], item['value']))
def test_db_parameter_refuses_the_value_first(host, records, rejected):
    dummy, dummy_after, all_records = records
    found = [result for result in all_records['postgresql_rejected'] if result['item'] == rejected]
    assert len(found) == 1, all_records['postgresql_rejected']
    result = found[0]
    scratch = expect.VARS['dbhost_consumers_pg_scratch']
    untouched = host.run('diff -r %s %s', CONFIG_DIR, scratch)
    expect.show('\ndb_parameter %s=%s: failed=%s msg=%s settings=%s; copy untouched: %s' % (
        rejected['name'], rejected['value'], result.get('failed'), result.get('msg'), result.get('settings'),
        untouched.rc == 0))
    assert untouched.rc == 0, untouched.stdout
    assert result.get('failed') is True, result
    message = result.get('msg', '')
    # the name, and the value, or for a name the server does not know the closest one it does
    assert rejected['name'] in message and (rejected['value'] in message or 'did you mean' in message), result
