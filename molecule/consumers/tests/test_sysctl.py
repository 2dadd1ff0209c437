# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl: what kernel_params records as persisted is what systemd-sysctl (the program that
applies sysctl.d at boot) and procps' sysctl --system give every key.

systemd-sysctl's rules (sysctl.d(5)): files named *.conf in /etc/sysctl.d, /run/sysctl.d,
/usr/local/lib/sysctl.d, /usr/lib/sysctl.d; a name in an earlier folder masks the same name
later; files apply in lexical order of their names; the last assignment of a key wins; an
exact key wins over a glob. /etc/sysctl.conf is read only through a link in sysctl.d.
"""

import fnmatch
import importlib.util
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

KEYS = sorted(expect.VARS['dbhost_consumers_sysctl'])
SYSTEMD_SYSCTL = '/lib/systemd/systemd-sysctl'
# Values no file of the layout sets: written before systemd-sysctl applies the files, so
# that what /proc/sys shows afterwards comes from systemd-sysctl and not from the module.
SENTINELS = {
    'kernel.shmmni': '1001',
    'kernel.msgmax': '1001',
    'fs.mqueue.msg_max': '11',
    'kernel.msgmnb': '1001',
    'kernel.sem': '11 1001 11 11',
    'kernel.msgmni': '1001',
    'fs.mqueue.queues_max': '11',
    'net.core.somaxconn': '11',
    'net.ipv4.conf.lo.rp_filter': '0',
}


def dotted(name):
    """sysctl.d(5): a name whose first separator is '/' is a path; '.' and '/' swap."""
    name = name.strip().lstrip('-')
    slash, dot = name.find('/'), name.find('.')
    if slash != -1 and (dot == -1 or slash < dot):
        return name.translate({ord('.'): '/', ord('/'): '.'})
    return name


def assignments(text):
    """[(key, value, file)] of a sysctl file or of --cat-config output ('# /path' headers)."""
    found, source = [], None
    for line in text.splitlines():
        stripped = line.strip()
        header = re.match(r'^#\s+(/\S+\.conf)\s*$', stripped)
        if header:
            source = header.group(1)
            continue
        if not stripped or stripped[0] in '#;' or '=' not in stripped:
            continue
        key, value = stripped.split('=', 1)
        found.append((dotted(key), expect.normalize(value), source))
    return found


def resolve(found, key):
    """(value, file) systemd-sysctl gives key: the last exact assignment, else the last glob."""
    exact = [(value, source) for name, value, source in found if name == key]
    if exact:
        return exact[-1]
    globs = [(value, source) for name, value, source in found
             if re.search(r'[*?\[]', name) and fnmatch.fnmatchcase(key.replace('.', '/'), name.replace('.', '/'))]
    return globs[-1] if globs else (None, None)


@pytest.fixture(name='records', scope='module')
def records_fixture(host):
    return expect.by_name(expect.records(host)['kernel_params'])


@pytest.fixture(name='cat_config', scope='module')
def cat_config_fixture(host):
    return assignments(host.check_output('%s --cat-config', SYSTEMD_SYSCTL))


@pytest.fixture(name='applied', scope='module')
def applied_fixture(host):
    """Sentinels in, systemd-sysctl --prefix=<our keys>, then /proc/sys: {key: (sentinel read back, applied)}."""
    lines = ['set -e']
    lines += ['printf %%s %s > /proc/sys/%s' % (repr(SENTINELS[key]), key.replace('.', '/')) for key in KEYS]
    lines += ['printf "%%s\\t%%s\\n" %s "$(cat /proc/sys/%s)"' % (key, key.replace('.', '/')) for key in KEYS]
    lines += ['echo ---', '%s %s' % (SYSTEMD_SYSCTL, ' '.join('--prefix=' + key for key in KEYS))]
    lines += ['printf "%%s\\t%%s\\n" %s "$(cat /proc/sys/%s)"' % (key, key.replace('.', '/')) for key in KEYS]
    result = expect.run(host, '\n'.join(lines))
    assert result.rc == 0, expect.output(result)
    before, dummy, after = result.stdout.partition('---\n')

    def parse(text):
        return dict((line.split('\t', 1)[0], expect.normalize(line.split('\t', 1)[1])) for line in text.splitlines())
    before, after = parse(before), parse(after)
    return dict((key, (before[key], after[key])) for key in KEYS)


@pytest.fixture(name='procps', scope='module')
def procps_fixture(host):
    """procps' answer without writing anything: sysctl --system --dry-run, the last value printed per key."""
    result = host.run('sysctl --system --dry-run')
    assert result.rc == 0, expect.output(result)
    values, applying = {}, []
    for line in result.stdout.splitlines():
        if line.startswith('* Applying '):
            applying.append(line[len('* Applying '):].rstrip(' .'))
        elif ' = ' in line:
            key, value = line.split(' = ', 1)
            values[dotted(key)] = expect.normalize(value)
    return values, applying


def test_persisted_is_what_systemd_sysctl_cat_config_resolves(records, cat_config):
    rows, wrong = [], []
    for key in KEYS:
        record = records[key]
        value, source = resolve(cat_config, key)
        rows.append((key, record['desired'], record['persisted'], record['status'], value, source))
        if expect.normalize(record['persisted']) != value:
            wrong.append(key)
    text = expect.show(expect.table(
        'kernel_params persisted vs systemd-sysctl --cat-config (last assignment, exact over glob)',
        ('key', 'desired', 'ours: persisted', 'ours: status', 'systemd-sysctl', 'from'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_systemd_sysctl_applies_the_persisted_values(records, applied):
    rows, wrong = [], []
    for key in KEYS:
        sentinel, value = applied[key]
        rows.append((key, records[key]['persisted'], sentinel, value))
        if sentinel != SENTINELS[key] or value != expect.normalize(records[key]['persisted']):
            wrong.append(key)
    text = expect.show(expect.table(
        'kernel_params persisted vs /proc/sys after systemd-sysctl applied the files (from sentinel values)',
        ('key', 'ours: persisted', '/proc/sys before (sentinel)', '/proc/sys after systemd-sysctl'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_shadowed_exactly_where_the_boot_value_is_not_ours(records, applied):
    rows, wrong = [], []
    for key in KEYS:
        record = records[key]
        boot = applied[key][1]
        ours = boot == expect.normalize(record['desired'])
        rows.append((key, record['desired'], boot, record['status'], record['detail']))
        if (record['status'] == 'shadowed') == ours or record['status'] not in ('ok', 'changed', 'shadowed'):
            wrong.append(key)
    text = expect.show(expect.table(
        'kernel_params status vs whose value systemd-sysctl applied',
        ('key', 'ours: desired', 'systemd-sysctl applied', 'ours: status', 'ours: detail'), rows))
    assert not wrong, 'wrong status for %s%s' % (', '.join(wrong), text)


def test_procps_sysctl_system_gives_the_persisted_values(host, records, procps):
    """procps reads the same folders with the same masking and order, but then always applies
    /etc/sysctl.conf once more, last (also where 99-sysctl.conf links to it, and on Debian 13,
    where systemd-sysctl does not read it at all). So a key /etc/sysctl.conf sets gets that
    file's value from ``sysctl --system``, whatever boot gives it: said in the table, and
    checked exactly, so that any other difference fails."""
    values, applying = procps
    sysctl_conf = host.file('/etc/sysctl.conf')
    last_pass = {}
    if applying and applying[-1] == '/etc/sysctl.conf' and sysctl_conf.exists:
        for key, value, dummy in assignments(sysctl_conf.content_string):
            last_pass[key] = value
    rows, wrong = [], []
    for key in KEYS:
        persisted = expect.normalize(records[key]['persisted'])
        want, note = persisted, ''
        if key in last_pass and last_pass[key] != persisted:
            want = last_pass[key]
            note = 'procps applies /etc/sysctl.conf again, last; boot (systemd-sysctl) gives %s' % persisted
        rows.append((key, persisted, values.get(key), note))
        if values.get(key) != want:
            wrong.append(key)
    text = expect.show(expect.table(
        'kernel_params persisted vs procps sysctl --system --dry-run (files: %s)' % ', '.join(applying),
        ('key', 'ours: persisted', 'procps sysctl --system', 'note'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_the_layout_is_the_one_meant(host):
    """The layout exercises masking, /run, /usr/lib, sysctl.conf and the release's link."""
    link = host.file('/etc/sysctl.d/99-sysctl.conf')
    assert link.is_symlink == expect.in_group(host, 'sysctl_conf_link')
    if link.is_symlink:
        assert link.linked_to == '/etc/sysctl.conf'
    for path in expect.VARS['dbhost_consumers_sysctl_files']:
        assert host.file(path).is_file, path
