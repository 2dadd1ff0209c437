# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tmpfiles: systemd-tmpfiles accepts the 'w' lines sysfs_attr and hugepages write, and writes at
boot what their records say is persisted.

/sys here is the host's, so systemd-tmpfiles never writes to it: it runs on a copy of the
configuration with --root (plain files stand in for the /sys attributes), with --dry-run where
the version has it (systemd 256+), and its --cat-config is parsed (tmpfiles.d(5): for one path
the first line wins, in the order the files are listed).
"""

import importlib.util
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

FOLDERS = ('/etc/tmpfiles.d', '/run/tmpfiles.d', '/usr/local/lib/tmpfiles.d', '/usr/lib/tmpfiles.d')


def pool_path(name):
    """The sysfs file of a hugepages record's pool (the kernel's HugeTLB documentation)."""
    node, dummy, size = name.rpartition('/')
    if node:
        return '/sys/devices/system/node/%s/hugepages/%s/nr_hugepages' % (node, size)
    return '/sys/kernel/mm/hugepages/%s/nr_hugepages' % size


@pytest.fixture(name='wanted', scope='module')
def wanted_fixture(host):
    """{sysfs path: (module, record)} for every record persisted through tmpfiles.d."""
    records = expect.records(host)
    wanted = {}
    for setting in records['sysfs_attr']['settings']:
        wanted[setting['name']] = ('sysfs_attr', setting)
    for setting in records['hugepages']['settings']:
        assert setting['target'].startswith('/etc/tmpfiles.d/'), setting
        wanted[pool_path(setting['name'])] = ('hugepages', setting)
    return wanted


def first_writes(text):
    """{path: (argument, file)}: the first 'w' line per path in --cat-config output."""
    found, source = {}, None
    for line in text.splitlines():
        header = re.match(r'^#\s+(/\S+\.conf)\s*$', line.strip())
        if header:
            source = header.group(1)
            continue
        fields = line.split(None, 6)
        if len(fields) == 7 and fields[0].rstrip('+-!=~^') == 'w' and fields[1] not in found:
            found[fields[1]] = (fields[6].strip(), source)
    return found


def check_messages(text, wanted):
    """systemd-tmpfiles names our files only to say that an earlier line wins for a path
    (\'Duplicate line for path "...", ignoring\'): exactly for the records that say shadowed."""
    ours = set(record['target'] for dummy, record in wanted.values())
    complaints, duplicates = [], set()
    for line in text.splitlines():
        line = re.sub(r'/tmp/dbhost-tmpfiles\.\w+/', '/', line)    # the copy under --root
        if not any(path in line for path in ours):
            continue
        duplicate = re.search(r'Duplicate line for path "([^"]+)"', line)
        if duplicate:
            duplicates.add(duplicate.group(1))
        else:
            complaints.append(line)
    assert complaints == [], complaints
    shadowed = set(path for path, (dummy, record) in wanted.items() if record['status'] == 'shadowed')
    assert duplicates == shadowed, text


def test_cat_config_first_line_is_the_persisted_value(host, wanted):
    found = first_writes(host.check_output('systemd-tmpfiles --cat-config'))
    rows, wrong = [], []
    for path, (module, record) in sorted(wanted.items()):
        value, source = found.get(path, (None, None))
        rows.append((path, module, record['persisted'], record['status'], value, source))
        if value != str(record['persisted']):
            wrong.append(path)
        if (record['status'] == 'shadowed') == (value == str(record['desired'])):
            wrong.append(path + ' status')
    text = expect.show(expect.table(
        'persisted vs systemd-tmpfiles --cat-config (first w line per path)',
        ('path', 'module', 'ours: persisted', 'ours: status', 'systemd-tmpfiles', 'from'), rows))
    assert not wrong, 'disagree on %s%s' % (', '.join(wrong), text)


def test_create_on_a_copy_writes_the_persisted_values(host, wanted):
    """systemd-tmpfiles --create --root=COPY --prefix=/sys: the real program, writing to files."""
    lines = ['set -e', 'root=$(mktemp -d /tmp/dbhost-tmpfiles.XXXXXX)', 'trap \'rm -rf "$root"\' EXIT']
    for folder in FOLDERS:
        lines.append('if [ -d %s ]; then mkdir -p "$root%s"; cp -a %s/. "$root%s/"; fi' % (folder, folder, folder, folder))
    for path in sorted(wanted):
        lines.append('mkdir -p "$root%s"; : > "$root%s"' % (os.path.dirname(path), path))
    lines.append('systemd-tmpfiles --create --root="$root" --prefix=/sys')
    lines.append('echo ---')
    for path in sorted(wanted):
        lines.append('printf "%%s\\t%%s\\n" %s "$(cat "$root%s")"' % (path, path))
    result = expect.run(host, '\n'.join(lines))
    messages, dummy, written = result.stdout.partition('---\n')
    values = dict(line.split('\t', 1) for line in written.splitlines())
    rows = [(path, module, record['persisted'], values.get(path)) for path, (module, record) in sorted(wanted.items())]
    text = expect.show(expect.table(
        'persisted vs what systemd-tmpfiles --create --root=COPY --prefix=/sys wrote',
        ('path', 'module', 'ours: persisted', 'systemd-tmpfiles wrote'), rows))
    assert result.rc == 0, expect.output(result)
    check_messages(messages + result.stderr, wanted)
    assert dict((path, values.get(path)) for path in wanted) == dict(
        (path, str(record['persisted'])) for path, (dummy, record) in wanted.items()), text


def test_create_dry_run_accepts_the_lines(host, wanted):
    if '--dry-run' not in host.check_output('systemd-tmpfiles --help'):
        version = host.check_output('systemctl --version').splitlines()[0]
        pytest.skip('systemd-tmpfiles --dry-run needs systemd 256 or newer (%s); --cat-config and --root cover it' % version)
    prefixes = ' '.join('--prefix=%s' % path for path in sorted(wanted))
    result = host.run('systemd-tmpfiles --create --dry-run %s' % prefixes)
    text = expect.output(result)
    expect.show('\nsystemd-tmpfiles --create --dry-run %s (rc %d):\n%s' % (prefixes, result.rc, text))
    assert result.rc == 0, text
    would = re.findall(r'Would write to "([^"]+)"', text)
    assert sorted(would) == sorted(wanted), text
    check_messages(text, wanted)
