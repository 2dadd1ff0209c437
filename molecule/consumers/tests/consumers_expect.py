# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the consumers verifiers (testinfra): the scenario's variables, the records converge
saved, and a table that puts each consumer's answer next to ours.

Nothing here uses the collection's code: the consumers' outputs are parsed from their documented
formats, so that a disagreement shows which side is wrong.
"""

import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.dirname(HERE)

with open(os.path.join(SCENARIO, 'vars', 'main.yml')) as _handle:
    VARS = yaml.safe_load(_handle)
with open(os.path.join(SCENARIO, 'molecule.yml')) as _handle:
    PLATFORMS = yaml.safe_load(_handle)['platforms']

STATE = VARS['dbhost_consumers_state']


def podman_hosts(group=None):
    """testinfra host specs of the platforms (of one inventory group)."""
    return ['podman://' + platform['name'] for platform in PLATFORMS
            if group is None or group in platform.get('groups', [])]


def in_group(host, group):
    name = host.backend.get_hostname()
    return any(platform['name'] == name and group in platform.get('groups', []) for platform in PLATFORMS)


def records(host):
    """Everything converge registered, by module (see converge.yml)."""
    return json.loads(host.file(VARS['dbhost_consumers_records']).content_string)


def by_name(result):
    return dict((setting['name'], setting) for setting in result['settings'])


def normalize(value):
    return ' '.join(str(value).split()) if value is not None else None


def table(title, header, rows):
    """A text table; printed by the tests (molecule runs pytest with -s) and put in assertion messages."""
    cells = [list(header)] + [['-' if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max(len(row[index]) for row in cells) for index in range(len(header))]
    lines = ['', title]
    for number, row in enumerate(cells):
        lines.append('  ' + ' | '.join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if number == 0:
            lines.append('  ' + '-+-'.join('-' * width for width in widths))
    return '\n'.join(lines)


def show(text):
    print(text)
    return text


def run(host, script):
    """Run a bash script in the container; returns testinfra's CommandResult."""
    return host.run('bash -c %s', script)


def output(result):
    return (result.stdout or '') + (result.stderr or '')
