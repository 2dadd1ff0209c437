# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MariaDB: my_print_defaults --mysqld (the server's own option-file reader) shows the value
db_parameter records as persisted, once, from the server's groups; the restarted server runs
with it. Debian 12's mariadb-server (10.11), my.cnf -> mariadb.cnf with !includedir."""

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts('databases')

PARAMS = expect.VARS['dbhost_consumers_my_params']


def option_name(text):
    return text.lstrip('-').split('=', 1)[0].replace('-', '_').lower()


@pytest.fixture(name='records', scope='module')
def records_fixture(host):
    records = expect.records(host)
    return expect.by_name(records['mysql']), expect.by_name(records['mysql_after'])


@pytest.fixture(name='server_options', scope='module')
def server_options_fixture(host):
    return host.check_output('my_print_defaults --mysqld').splitlines()


def test_my_print_defaults_shows_our_value_once(records, server_options):
    before, after = records
    rows, wrong = [], []
    for name in sorted(PARAMS):
        lines = [line for line in server_options if option_name(line) == name]
        for phase, record in (('converge', before[name]), ('after restart', after[name])):
            rows.append((name, phase, record['desired'], record['persisted'], record['status'], record['target'],
                         ' '.join(lines) or None))
        if lines != ['--%s=%s' % (name, after[name]['persisted'])] and \
                [line.split('=', 1)[1] for line in lines] != [after[name]['persisted']]:
            wrong.append(name)
        if before[name]['persisted'] != after[name]['persisted'] or after[name]['persisted'] != str(PARAMS[name]):
            wrong.append(name + ' record')
    text = expect.show(expect.table(
        'db_parameter persisted vs my_print_defaults --mysqld',
        ('option', 'record', 'ours: desired', 'ours: persisted', 'ours: status', 'ours: target', 'my_print_defaults'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_the_group_the_server_does_not_read_is_untouched(host):
    """[mariadb-10.6] keeps its own value, and the server (10.11) does not read it."""
    other = host.check_output('my_print_defaults mariadb-10.6').splitlines()
    expect.show('\nmy_print_defaults mariadb-10.6: %s' % ' '.join(other))
    assert [line for line in other if option_name(line) == 'innodb_flush_method'] == ['--innodb_flush_method=littlesync']


def test_the_restarted_server_runs_with_it(host, records):
    before, after = records
    names = sorted(PARAMS)
    live = host.check_output('mariadb -N -B -e %s', 'SELECT %s' % ', '.join('@@' + name for name in names)).split('\t')
    uptime = int(host.check_output('mariadb -N -B -e %s', "SHOW GLOBAL STATUS LIKE 'Uptime'").split()[1])
    now = int(host.check_output('date +%s'))
    rows = []
    for name, value in zip(names, live):
        written = host.file(after[name]['target']).mtime
        rows.append((name, before[name]['status'], before[name]['live'], after[name]['persisted'], after[name]['status'],
                     after[name]['live'], value, 'started %d s after the file was written' % (now - uptime - int(written.timestamp()))))
    text = expect.show(expect.table(
        'db_parameter vs SELECT @@option on the restarted server',
        ('option', 'converge: status', 'converge: live', 'ours: persisted', 'after: status', 'after: live', 'server', 'when'), rows))
    for name, value in zip(names, live):
        assert before[name]['status'] == 'pending_restart', text
        assert value == after[name]['persisted'] == after[name]['live'] and after[name]['status'] == 'ok', text
        assert now - uptime >= int(host.file(after[name]['target']).mtime.timestamp()) - 1, text
