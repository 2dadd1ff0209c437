# -*- coding: utf-8 -*-
"""pmap -xs / pmap -Ls parsed and judged, on outputs in pmap.c's formats (tests/unit/fixtures/sunos/README.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sunos_memory as mem

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'fixtures', 'sunos')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def test_pmap_x_rows_and_kinds():
    rows = mem.parse_pmap_x(fixture('pmap-xs-postgres-mmap.txt'))[2209]
    by_kind = dict((r['kind'], r) for r in rows if r['kind'])
    assert by_kind['shared'] == {'address': 'FFFFFFFF38000000', 'kbytes': 1130496, 'rss': 1130496, 'locked': 0,
                                 'page': 4 * 1024 ** 2, 'mode': 'rw-s--', 'name': '[ anon ]', 'kind': 'shared'}
    assert by_kind['ism']['name'] == '[ ism shmid=0x1a ]' and by_kind['ism']['locked'] == 8
    assert [r['name'] for r in rows if r['kind'] is None] == ['postgres', 'postgres', '[ heap ]', 'libc.so.1',
                                                              'libc.so.1', '[ stack ]']


@pytest.mark.parametrize('name, mode, kind', [
    ('[ ism shmid=0x1b ]', 'rwxsR-', 'ism'), ('[ dism shmid=0x1b ]', 'rwxs--', 'dism'),
    ('[ shmid=0x1b ]', 'rw-s--', 'shm'), ('[ anon ]', 'rw-s--', 'shared'), ('[ anon ]', 'rw----', None),
    ('[ heap ]', 'rwx---', None), ('libc.so.1', 'r-xs--', None),
])
def test_kind_from_anon_name(name, mode, kind):
    """pmap.c anon_name(): ism/dism by MA_NORESERVE, shmid= for MA_SHM, [ anon ] otherwise."""
    assert mem.kind_of(name, mode) == kind


@pytest.mark.parametrize('text, value', [('8K', 8192), ('4M', 4194304), ('256M', 268435456), ('2G', 2147483648),
                                         ('512b', 512), ('-', None)])
def test_page_sizes(text, value):
    assert mem.page_bytes(text) == value


def test_ism_check_mmap_is_drift_even_with_an_ism_header():
    """shared_memory_type = mmap: the 8K System V header is ISM, the 1.1 GB buffers are not."""
    status, live, detail = mem.ism_check(fixture('pmap-xs-postgres-mmap.txt'), 2209, 8192)
    assert status == 'drift' and 'the main segment is not ISM' in detail
    assert live['ism_bytes'] == 8192 and live['other_shared_bytes'] == 1130496 * 1024


def test_ism_check_sysv_in_large_pages_is_ok():
    status, live, detail = mem.ism_check(fixture('pmap-xs-postgres-sysv.txt'), 2377, 8192)
    assert status == 'ok' and live['page_sizes'] == ['4M', '256M'] and live['kinds'] == ['ism']
    assert live['ism_bytes'] == (1048576 + 81920) * 1024 == live['large_page_bytes']
    assert detail == 'pmap -xs 2377: 1104M of ism in 4M, 256M pages'


def test_ism_check_in_base_pages_is_drift():
    status, live, detail = mem.ism_check(fixture('pmap-xs-postgres-sysv-8k.txt'), 2411, 8192)
    assert status == 'drift' and 'all in 8K pages' in detail and live['large_page_bytes'] == 0


def test_ism_check_other_pid_or_nothing_is_drift():
    assert mem.ism_check(fixture('pmap-xs-postgres-sysv.txt'), 1, 8192)[0] == 'drift'
    assert mem.ism_check('', 1, 8192)[2] == 'pmap -xs 1 printed no mapping of the process'


def test_ism_check_solaris_11_seven_mode_characters():
    """Solaris 11 prints one more mode flag (rwxsR--); the columns still split on blanks."""
    text = ('45897:\t./test2\n'
            '         Address     Kbytes        RSS       Anon     Locked Pgsz Mode   Mapped File\n'
            '0007FFFD00000000    6291456    6291456          -    6291456 256M rwxsR--   [ ism shmid=0x39000e88 ]\n')
    assert mem.ism_check(text, 45897, 8192)[0] == 'ok'


def test_pmap_l_rows_per_lgroup():
    procs = mem.parse_pmap_l(fixture('pmap-Ls-oracle-spread.txt'))
    assert sorted(procs) == [4101, 4107]
    sga = [r for r in procs[4101] if r['kind'] == 'ism']
    assert [(r['lgroup'], r['bytes']) for r in sga] == [(1, 4194304 * 1024), (2, 3932160 * 1024), (None, 262144 * 1024)]


def test_placement_spread_over_boards_is_drift_counted_once():
    status, live, detail = mem.placement_check(fixture('pmap-Ls-oracle-spread.txt'), [2])
    assert status == 'drift'
    # The SGA counts once although both processes map it; private stacks do not count.
    assert live == {'1': 4194304 * 1024, '2': 3932160 * 1024}
    assert detail == '4G of 7936M of shared memory lies outside lgroup(s) 2: 4G on lgroup 1'


def test_placement_on_the_board_is_ok():
    status, live, detail = mem.placement_check(fixture('pmap-Ls-oracle-board2.txt'), [2])
    assert status == 'ok' and live == {'2': 8126464 * 1024}
    assert detail == 'all 7936M of shared memory on lgroup(s) 2 (pmap -Ls)'


def test_placement_with_nothing_resident_is_drift():
    assert mem.placement_check('', [2])[0] == 'drift'


def test_board_lgroups_from_lgrpinfo():
    groups = {0: {'kind': 'root', 'cpus': [0, 1, 2, 3]}, 1: {'kind': 'leaf', 'cpus': [0, 1]},
              2: {'kind': 'leaf', 'cpus': [2, 3]}}
    assert mem.board_lgroups(groups, [2, 3]) == [2]
    assert mem.board_lgroups(groups, [1, 2]) == [1, 2]


def test_pmap_l_rows_and_a_line_without_a_size_in_k_skipped():
    # pmap -Ls: address, size (K), page size, mode, lgroup, name (usr/src/cmd/ptools/pmap/pmap.c)
    text = ('1234:\t/u01/oracle/bin/oracle\n'
            ' Address       Bytes Pgsz Mode   Lgrp Mapped File\n'
            '380000000  4194304K   4M rwxsR    1   [ ism shmid=0x5 ]\n'
            '380000000      4194304 4M rwxsR    1   [ ism shmid=0x6 ]\n'
            '---------  --------\n')
    rows = mem.parse_pmap_l(text)[1234]
    assert rows == [{'address': '380000000', 'bytes': 4194304 * 1024, 'page': 4 * 1024 ** 2, 'mode': 'rwxsR',
                     'lgroup': 1, 'name': '[ ism shmid=0x5 ]', 'kind': 'ism'}]
