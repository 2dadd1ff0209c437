# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared memory sizing table (sizing_cases.yml) and the size parsers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
from fractions import Fraction

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import shm as sizing
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import units
from ansible_collections.dbhost.tuning.tests.unit.helpers import shm_sized, sizing_defaults

with open(os.path.join(os.path.dirname(__file__), 'sizing_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)

GIB = 1024 ** 3


def _compute(spec):
    spec = dict(spec)
    return shm_sized(spec.pop('engine'), spec.pop('ram_bytes'), spec.pop('page_size'), spec.pop('shared_memory'), **spec)


def test_table_covers_the_issue():
    """At least 12 Linux shapes: 8 GB..2 TB, 4K and 64K pages, 2M and 1G huge pages, Oracle and PostgreSQL."""
    linux = [c['input'] for c in CASES['cases'] if c['input'].get('system', 'Linux') == 'Linux']
    assert len(linux) >= 12
    rams = [c['ram_bytes'] for c in linux]
    assert min(rams) == 8 * GIB and max(rams) == 2048 * GIB
    assert set(c['page_size'] for c in linux) >= set([4096, 65536])
    assert set(units.parse_size(c['hugepage_size']) for c in linux if c.get('hugepage_size')) >= set([2 * 1024 ** 2, GIB])
    assert set(c['engine'] for c in linux) >= set(['oracle', 'postgresql'])


@pytest.mark.parametrize('case', CASES['cases'], ids=[c['id'] for c in CASES['cases']])
def test_sizing_table(case):
    result = _compute(case['input'])
    expect = case['expect']
    assert result['kernel_params'] == expect['kernel_params']
    assert result['hugepages'] == expect['hugepages']
    assert result['memlock_kb'] == expect['memlock_kb']
    assert result['limit_memlock'] == expect['limit_memlock']
    assert result['project_attributes'] == expect.get('project_attributes', {})
    if expect['hugepages']:
        pages = expect['hugepages'][0]
        assert result['values']['vm.nr_hugepages'] == pages['count']
        assert result['hugepages_bytes'] == pages['count'] * pages['size']
        # Every managed key is explained.
        assert set(result['kernel_params']) | set(['vm.nr_hugepages', 'memlock']) <= set(result['explain'])
    else:
        assert 'vm.nr_hugepages' not in result['values']


@pytest.mark.parametrize('case', CASES['errors'], ids=[c['id'] for c in CASES['errors']])
def test_sizing_refuses(case):
    with pytest.raises(units.SizingError) as caught:
        _compute(case['input'])
    assert re.search(case['match'], str(caught.value)), str(caught.value)


def test_shmall_counts_pages_of_the_host_page_size():
    """The same host shape on 4K and 64K pages: shmall differs by 16x, shmmax does not."""
    small = _compute(dict(engine='oracle', ram_bytes=64 * GIB, page_size=4096, shared_memory='20G',
                          hugepage_size='2M', group_gid=1))
    large = _compute(dict(engine='oracle', ram_bytes=64 * GIB, page_size=65536, shared_memory='20G',
                          hugepage_size='2M', group_gid=1))
    assert small['kernel_params']['kernel.shmmax'] == large['kernel_params']['kernel.shmmax'] == 32 * GIB
    assert small['kernel_params']['kernel.shmall'] == 32 * GIB // 4096 == 16 * large['kernel_params']['kernel.shmall']


def test_pool_exactly_at_the_cap_is_accepted():
    # 70 % of 10G is 7G exactly: 7 pages of 1G fit, the eighth would not.
    fits = _compute(dict(engine='postgresql', ram_bytes=10 * GIB, page_size=4096, shared_memory='7G',
                         hugepage_size='1G', group_gid=1, hugepages_margin=0))
    assert fits['hugepages'] == [{'size': GIB, 'count': 7}]
    with pytest.raises(units.SizingError, match=r'8 huge pages of 1G \(8G for 7G shared memory plus a margin of '
                                                r'1 page\) exceed the cap of 70% of RAM \(7G of 10G\)'):
        _compute(dict(engine='postgresql', ram_bytes=10 * GIB, page_size=4096, shared_memory='7G',
                      hugepage_size='1G', group_gid=1, hugepages_margin=1))


def test_keep_higher_raises_but_never_lowers():
    low = {'kernel.shmmax': '1024', 'kernel.shmall': '10', 'kernel.shmmni': '128'}
    result = _compute(dict(engine='oracle', ram_bytes=16 * GIB, page_size=4096, shared_memory='8G',
                           hugepage_size='2M', group_gid=1, keep_higher=True, current=low))
    assert result['kernel_params']['kernel.shmmax'] == 8 * GIB
    assert result['kernel_params']['kernel.shmmni'] == 4096


@pytest.mark.parametrize('text, expected', [
    (17179869184, 17179869184),
    ('17179869184', 17179869184),
    ('48G', 48 * GIB),
    ('48g', 48 * GIB),
    ('48GB', 48 * GIB),
    ('48GiB', 48 * GIB),
    (' 512 M ', 512 * 1024 ** 2),
    ('1.5T', 1536 * GIB),
    ('2048kB', 2 * 1024 ** 2),
    ('1.5K', 1536),
    ('100B', 100),
    ('0', 0),
    (4096.0, 4096),
])
def test_parse_size(text, expected):
    assert units.parse_size(text) == expected


def test_parse_size_percentage_of_ram():
    assert units.parse_size('40%', ram_bytes=64 * GIB) == int(64 * GIB * 4 / 10)
    assert units.parse_size('12.5%', ram_bytes=8 * GIB) == GIB
    assert units.parse_size('33%', ram_bytes=10) == 3  # rounded down to a whole byte


@pytest.mark.parametrize('value, message', [
    ('', "'' is not a size"),
    ('48 gigs', "'48 gigs' is not a size"),
    ('-1G', "'-1G' is not a size"),
    ('1.3K', 'not a whole number of bytes'),
    ('0.1', 'not a whole number of bytes'),
    ('1e9', "'1e9' is not a size"),
    ('40%', 'the RAM size is not known'),
    (True, 'True is not a size'),
    (None, 'None is not a size'),
    (-4096, '-4096 is negative'),
    (1.5, 'not a whole, non-negative number of bytes'),
    ([1], 'is not a size'),
])
def test_parse_size_refuses(value, message):
    with pytest.raises(units.SizingError) as caught:
        units.parse_size(value, name='shared_memory')
    assert str(caught.value).startswith('shared_memory: ')
    assert message in str(caught.value)


@pytest.mark.parametrize('value, expected', [
    (51539607552, '48G'), (1610612736, '1.5G'), (1536 * GIB, '1.5T'), (512, '512B'), (0, '0B'),
    (4096, '4K'), (2097152, '2M'), (52055506944, '48.48G'), ('2048kB', '2M'), (1024 ** 6, '1E'),
])
def test_human_size(value, expected):
    assert units.human_size(value) == expected


@pytest.mark.parametrize('value', ['48G', '1.5T', '2M', '64K', '3E', '100B', '1.25G'])
def test_human_size_round_trips(value):
    assert units.human_size(units.parse_size(value)) == value


def test_human_size_precision():
    assert units.human_size(1000000, precision=0) == '977K'
    assert units.human_size(1000000, precision=3) == '976.562K'


def test_human_size_is_exact_where_a_float_is_not():
    # A whole number of the unit is written from the integer, so it parses back to the same bytes
    # even where a float would round it (above 2 ** 53 units).
    size = (2 ** 53 + 1) * 1024 ** 6
    assert units.human_size(size) == '9007199254740993E'
    assert units.parse_size(units.human_size(size)) == size


@pytest.mark.parametrize('args, expected', [
    (('48G', '2M'), 24576),
    (('48G', 4096), 12582912),
    (('1025', 1024), 2),
    (('1025', 1024, 'down'), 1),
    (('2G', '1G', 'exact'), 2),
    (('1025', 1), 1025),          # a page of one byte counts bytes: above 0 is all a page needs
])
def test_to_pages(args, expected):
    assert units.to_pages(*args) == expected


def test_to_pages_refuses():
    with pytest.raises(units.SizingError, match="is not a whole number of 2M pages"):
        units.to_pages('3M', '2M', rounding='exact')
    with pytest.raises(units.SizingError, match='rounding'):
        units.to_pages('3M', '2M', rounding='nearest')
    with pytest.raises(units.SizingError, match='page_size'):
        units.to_pages('3M', 0)


@pytest.mark.parametrize('value, expected', [('70%', '7/10'), ('0.7', '7/10'), (0.7, '7/10'), (70, '7/10'),
                                             ('100%', '1'), ('12.5%', '1/8')])
def test_parse_share(value, expected):
    assert str(units.parse_share(value)) == expected


@pytest.mark.parametrize('value', ['0%', '-5%', '101%', 'most', True, None, 0, [70]])
def test_parse_share_refuses(value):
    with pytest.raises(units.SizingError, match='hugepages_cap'):
        units.parse_share(value, name='hugepages_cap')


# ---- the named steps of shm_settings() on their own
def _host(**overrides):
    machine = dict(ram_bytes=64 * GIB, page_size=4096)
    wanted = dict(engine='oracle', shared_memory='48G', hugepage_size='2M', group_gid=54321, hugepages_cap='80%',
                  shared_memory_cap=sizing_defaults()['shared_memory_cap'])
    for key, value in overrides.items():
        (machine if key in sizing.ShmMachine._fields else wanted)[key] = value
    return sizing.check_inputs(sizing.ShmMachine(**machine), sizing.ShmRequest(**wanted))


def test_check_inputs_names_quantities_as_the_result_does():
    host = _host()
    assert (host.ram_bytes, host.page_size, host.hugepage_size, host.shared_memory_bytes) == (
        64 * GIB, 4096, 2 * 1024 ** 2, 48 * GIB)
    assert host.use_hugepages and host.group_gid == 54321
    assert _host(system='FreeBSD', group_gid=None).hugepage_size is None


def test_hugepage_pool_and_limits_step_by_step():
    host = _host()
    values, explain = {}, {}
    hugepages, hugepages_bytes = sizing.hugepage_pool(host, '1%', values, explain)
    assert hugepages == [{'size': 2 * 1024 ** 2, 'count': 24822}]
    assert hugepages_bytes == 24822 * 2 * 1024 ** 2
    assert values['vm.nr_hugepages'] == 24822 and 'vm.nr_hugepages' in explain
    limits, limits_explain = sizing.shm_limits(host, hugepages_bytes)
    assert limits == {'shmmax': 48 * GIB, 'shmall': 12708864, 'shmmni': 4096}
    assert set(limits_explain) == set(['shmmax', 'shmall'])
    assert sizing.memlock(host, hugepages_bytes, {}) == (60397977, str(60397977 * 1024))
    assert sizing.hugepage_pool(_host(use_hugepages=False), '1%', {}, {}) == ([], 0)


def test_shm_limits_keep_higher_reads_the_live_values():
    limits, dummy = sizing.shm_limits(_host(), 0, current={'kernel.shmmni': '8192', 'kernel.shmmax': '1'},
                                      keep_higher=True)
    assert limits['shmmni'] == 8192 and limits['shmmax'] == 48 * GIB


def test_percent_helpers():
    assert units.percent_number(' 1.5% ') == Fraction(3, 2)
    assert units.percent_number('64M') is None
    assert units.percent_text(Fraction(7, 10)) == '70'
    assert units.percent_text(Fraction(1, 8)) == '12.5'
    assert units.round_up(5, 4) == 8 and units.round_up(8, 4) == 8


def test_a_margin_of_100_percent_doubles_the_pool_and_more_is_refused():
    result = shm_sized('postgresql', 16 * GIB, 4096, '2G', hugepage_size='2M', group_gid=26,
                       hugepages_margin='100%')
    assert result['hugepages'] == [{'size': 2 * 1024 ** 2, 'count': 2048}]
    with pytest.raises(units.SizingError, match='more than 100%'):
        shm_sized('postgresql', 16 * GIB, 4096, '2G', hugepage_size='2M', group_gid=26,
                  hugepages_margin='101%')


def test_solaris_shminfo_lines_only_when_asked_and_their_effect_said():
    """os/project.c (project_init): on Solaris 10 and later shminfo_shmmax/shmmni only set the
    boot-time defaults of project.max-shm-memory / max-shm-ids; the explanation says so."""
    spec = {'engine': 'oracle', 'ram_bytes': 64 * GIB, 'page_size': 8192, 'shared_memory': '20G', 'system': 'SunOS'}
    assert _compute(dict(spec))['kernel_params'] == {}
    result = _compute(dict(spec, etc_system=True))
    for key in ('shmsys:shminfo_shmmax', 'shmsys:shminfo_shmmni'):
        assert 'obsolete on Solaris 10 and later' in result['explain'][key]
        assert 'project.max-shm-memory' in result['explain'][key]
