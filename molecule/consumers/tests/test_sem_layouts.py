# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel.sem over seeded random sysctl.d layouts: the collection's resolved boot value is what
the real systemd-sysctl loads, before and after kernel_params wrote its file, and a minimum
never lowers a field the boot would have had.

converge (sem_layout.yml) lays out each seed with files/sem_layouts.py (fields spread over
one to four files in /etc, /run, /usr/local/lib and /usr/lib sysctl.d, some masking each
other by name, some sorting after ours, sometimes a line an earlier run of ours left), runs
kernel_params in check mode and then for real with the seed's desired value as a minimum,
and lets systemd-sysctl load the files from a sentinel value after each step.
"""

import importlib.util
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

OURS = expect.VARS['dbhost_consumers_sem_file']


def fields(value):
    return [int(field) for field in value.split()]


def at_least(value, floor):
    return all(have >= want for have, want in zip(fields(value), fields(floor)))


@pytest.fixture(name='layouts', scope='module')
def layouts_fixture(host):
    layouts = json.loads(host.file(expect.STATE + '/sem_layouts.json').content_string)
    rows = [(item['seed'], len(item['files']), item['desired'], item['live'], item['before'], item['check']['persisted'],
             item['apply']['status'], item['apply']['persisted'], item['loaded']) for item in layouts]
    expect.show(expect.table('kernel.sem layouts (%s)' % host.backend.get_hostname(),
                             ('seed', 'files', 'desired (>=)', 'live', 'systemd-sysctl before', 'ours before',
                              'status', 'ours after', 'systemd-sysctl after'), rows))
    return layouts


def test_at_least_twenty_seeded_layouts(layouts):
    assert len(layouts) >= 20
    assert len(set(item['seed'] for item in layouts)) == len(layouts)
    # the layouts are not all alike: several files, masking, files after ours, a line of ours
    assert any(len(item['files']) >= 3 for item in layouts)
    assert any(OURS in item['files'] for item in layouts)


def test_the_resolved_boot_value_is_what_systemd_sysctl_loads(layouts):
    wrong = [(item['seed'], item['check']['persisted'], item['before'], item['apply']['persisted'], item['loaded'])
             for item in layouts
             if item['check']['persisted'] != item['before'] or item['apply']['persisted'] != item['loaded']]
    assert not wrong, expect.table('resolved by kernel_params != loaded by systemd-sysctl',
                                   ('seed', 'ours before', 'systemd-sysctl before', 'ours after',
                                    'systemd-sysctl after'), wrong)


def test_a_minimum_never_lowers_a_field_the_boot_had(layouts):
    lowered = [(item['seed'], item['before'], item['loaded']) for item in layouts
               if not at_least(item['loaded'], item['before']) and item['apply']['status'] != 'shadowed']
    assert not lowered, expect.table('a field systemd-sysctl loaded before is lower after',
                                     ('seed', 'before', 'after'), lowered)


def test_what_boots_meets_the_minimum_unless_a_later_file_wins(layouts):
    for item in layouts:
        record = item['apply']
        if record['status'] == 'shadowed':
            assert not at_least(item['loaded'], item['desired']), item
            assert record['detail'], item
        else:
            assert at_least(item['loaded'], item['desired']), item
            assert at_least(item['live_after'], item['desired']), item
            assert record['status'] in ('ok', 'changed'), item


def test_nothing_is_written_where_the_boot_already_meets_the_minimum(layouts):
    for item in layouts:
        if at_least(item['before'], item['desired']) and at_least(item['live'], item['desired']) \
                and OURS not in item['files']:
            assert item['apply']['status'] == 'ok' and item['loaded'] == item['before'], item
