# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fstab: util-linux reads the fstab mount_options wrote (a mount point with a \\040 escape,
tabs, comments) without complaint, and finds in it the options the record says are persisted."""

import importlib.util
import json
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

MOUNT = expect.VARS['dbhost_consumers_mount']
# findmnt's remark when fstab is newer than systemd's last daemon-reload (mount_options does
# not reload systemd; the fstab generator reads the file again at the next boot or reload).
SYSTEMD_STALE = 'systemd still uses the old version'


@pytest.fixture(name='mount', scope='module')
def mount_fixture(host):
    result = expect.records(host)['mount_options']
    assert len(result['mounts']) == 1, result
    return result['mounts'][0], result['settings'][0]


def test_findmnt_verify_accepts_the_fstab(host, mount):
    summary, record = mount
    result = host.run('findmnt --verify --verbose --tab-file %s', summary['file'])
    text = expect.output(result)
    expect.show('\nfindmnt --verify --verbose --tab-file %s (rc %d):\n%s' % (summary['file'], result.rc, text))
    counts = re.search(r'(\d+) parse errors?, (\d+) errors?, (\d+) warnings?', text)
    assert result.rc == 0, text
    assert 'Success, no errors or warnings detected' in text or (
        counts and counts.group(1) == '0' and counts.group(2) == '0'), text
    blocks, current = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            current = line.strip()
            blocks[current] = []
        elif current is not None and line.strip():
            blocks[current].append(line.strip())
    assert MOUNT in blocks, text
    complaints = [line for line in blocks[MOUNT] if line.startswith(('[E]', '[W]')) and SYSTEMD_STALE not in line]
    assert complaints == [], complaints
    other = [line for lines in blocks.values() for line in lines
             if line.startswith(('[E]', '[W]')) and SYSTEMD_STALE not in line]
    assert other == [], other


def test_findmnt_reads_the_persisted_options(host, mount):
    summary, record = mount
    listed = json.loads(host.check_output('findmnt --fstab --tab-file %s --json -o TARGET,SOURCE,FSTYPE,OPTIONS',
                                          summary['file']))
    entries = [entry for entry in listed['filesystems'] if entry['target'] == MOUNT]
    live = [entry for entry in json.loads(host.check_output('findmnt --kernel --list --json -o TARGET,OPTIONS'))['filesystems']
            if entry['target'] == MOUNT]
    rows = [(entry['target'], entry['source'], entry['fstype'], summary['persisted'], entry['options']) for entry in entries]
    text = expect.show(expect.table(
        'mount_options persisted vs findmnt --fstab --tab-file %s (live: %s; record %s %s)' % (
            summary['file'], summary['live'], record['name'], record['status']),
        ('target', 'source', 'type', 'ours: persisted', 'findmnt'), rows))
    assert len(entries) == 1, text
    assert entries[0]['options'] == summary['persisted'], text
    assert entries[0]['fstype'] == summary['fstype'], text
    assert record['persisted'] in entries[0]['options'].split(','), text
    assert len(live) == 1 and record['live'] in live[0]['options'].split(','), live


def test_mount_all_fake_parses_the_fstab(host, mount):
    summary, record = mount
    result = host.run('mount --all --fake --verbose --fstab %s', summary['file'])
    text = expect.output(result)
    expect.show('\nmount --all --fake --verbose --fstab %s (rc %d):\n%s' % (summary['file'], result.rc, text))
    assert result.rc == 0, text
    said = dict((line.split(':', 1)[0].strip(), line.split(':', 1)[1].strip())
                for line in result.stdout.splitlines() if ':' in line)
    assert said.get(MOUNT) in ('already mounted', 'successfully mounted'), said
