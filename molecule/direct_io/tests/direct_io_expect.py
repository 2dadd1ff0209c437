# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the direct_io Molecule verifiers (testinfra): where things are and how to read them back.

Everything here reads the container's own state (/proc/mounts, files) and compares it with
the copies prepare kept, independently of the role's and modules' code.
"""

import os
import re

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DIRECT_IO = os.path.dirname(HERE)

with open(os.path.join(DIRECT_IO, 'vars', 'main.yml')) as _handle:
    VARS = yaml.safe_load(_handle)

STATE = VARS['dbhost_molecule_state_dir']
MOUNT = VARS['dbhost_molecule_mount']
FILES = {
    'fstab': '/etc/fstab',
    'pfile': VARS['dbhost_molecule_pfile'],
    'pgconf': VARS['dbhost_molecule_pgconf'],
    'mycnf': VARS['dbhost_molecule_mycnf'],
}


def podman_hosts(scenario_dir):
    with open(os.path.join(scenario_dir, 'molecule.yml')) as handle:
        config = yaml.safe_load(handle)
    return ['podman://' + platform['name'] for platform in config['platforms']]


def before(host, path):
    """The file as prepare left it (copied to the state folder)."""
    return host.file('%s/%s.before' % (STATE, os.path.basename(path))).content_string


def live_options(host, mount_point=MOUNT):
    """The options of the last (topmost) /proc/mounts entry for mount_point."""
    found = None
    for line in host.file('/proc/mounts').content_string.splitlines():
        fields = line.split(' ')
        if fields[1] == mount_point:
            found = fields[3].split(',')
    assert found is not None, '%s is not mounted' % mount_point
    return found


def mountinfo_options(host, mount_point=MOUNT):
    found = None
    for line in host.file('/proc/self/mountinfo').content_string.splitlines():
        fields = line.split(' ')
        if fields[4] == mount_point:
            found = fields[5].split(',')
    assert found is not None, '%s is not in mountinfo' % mount_point
    return found


def fstab_with_options(text, mount_point, options):
    """``text`` with the options field of mount_point's line set to ``options``, all else as is."""
    lines = text.splitlines(True)
    hits = 0
    for index, line in enumerate(lines):
        fields = re.split(r'(\s+)', line.rstrip('\n'))
        if line.lstrip().startswith('#') or len(fields) < 7 or fields[2] != mount_point:
            continue
        fields[6] = options
        lines[index] = ''.join(fields) + '\n'
        hits += 1
    assert hits == 1
    return ''.join(lines)


def is_subsequence(short, long):
    iterator = iter(long)
    return all(any(item == other for other in iterator) for item in short)


def section_of(lines, wanted):
    """The lines of an ini-style [wanted] section."""
    inside, found = False, []
    for line in lines:
        header = re.match(r'^\s*\[([^\]]+)\]\s*$', line)
        if header:
            inside = header.group(1).strip() == wanted
            continue
        if inside:
            found.append(line)
    return found
