# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tmpfiles.d parsing, rendering and boot precedence."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tmpfiles

THP = '/sys/kernel/mm/transparent_hugepage/enabled'
DEFRAG = '/sys/kernel/mm/transparent_hugepage/defrag'

# As shipped by distributions and written by hand (Debian's legacy.conf style, tabs, quotes).
SAMPLES = [
    '',
    '# Type Path Mode User Group Age Argument\nd /run/lock 0755 root root -\n',
    'w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n'
    '#w /sys/kernel/mm/transparent_hugepage/defrag - - - - never\n'
    'w\t/sys/block/sda/queue/scheduler\t-\t-\t-\t-\tmq-deadline\n',
    'L+ /etc/mtab - - - - ../proc/self/mounts\nw "/sys/with space/x" - - - - 1 2  3',
    'f /etc/x 0644 root root - 100%% sure\r\n',
]


@pytest.mark.parametrize('text', SAMPLES)
def test_render_without_changes_is_byte_identical(text):
    assert tmpfiles.render(text, {}) == text


def test_parse_fields_quotes_and_argument():
    entries = tmpfiles.parse(SAMPLES[3])
    assert [(e.type, e.path, e.argument) for e in entries] == [
        ('L+', '/etc/mtab', '../proc/self/mounts'), ('w', '/sys/with space/x', '1 2  3')]
    entry = tmpfiles.parse_line('d /run/x')
    assert (entry.mode, entry.user, entry.argument) == ('-', '-', None)
    assert tmpfiles.parse_line('w-! /sys/a - - - - 1').type == 'w'
    assert tmpfiles.parse_line('justone') is None


def test_write_values_first_line_wins_and_percent_unescaped():
    text = 'w /sys/a - - - - 1\nw /sys/a - - - - 2\nf /etc/x - - - - 50%%\nw /sys/b - - - - 9%%\n'
    assert tmpfiles.write_values(text) == {'/sys/a': '1', '/sys/b': '9%'}


def test_render_changes_in_place_drops_duplicates_appends_sorted():
    text = '# keep\nw %s - - - - always\nd /run/x 0755 root root -\nw %s - - - - madvise\n' % (THP, THP)
    out = tmpfiles.render(text, {THP: 'never', DEFRAG: 'defer', '/sys/a': '5%'})
    assert out == ('# keep\nw %s - - - - never\nd /run/x 0755 root root -\n'
                   'w /sys/a - - - - 5%%%%\nw %s - - - - defer\n' % (THP, DEFRAG))
    assert tmpfiles.write_values(out) == {THP: 'never', DEFRAG: 'defer', '/sys/a': '5%'}
    assert tmpfiles.render(out, {THP: 'never', DEFRAG: 'defer', '/sys/a': '5%'}) == out


def test_render_remove_new_file_header_and_missing_newline():
    assert tmpfiles.render(None, {THP: 'never'}, header='# ours') == '# ours\nw %s - - - - never\n' % THP
    assert tmpfiles.render(None, {THP: None}) is None
    assert tmpfiles.render('d /x', {THP: 'never'}) == 'd /x\nw %s - - - - never\n' % THP
    assert tmpfiles.render('# c\nw %s - - - - never\n' % THP, {THP: None}) == '# c\n'
    assert tmpfiles.render('w %s - - - - a\r\n' % THP, {THP: 'b'}) == 'w %s - - - - b\r\n' % THP


def test_format_write_quotes_odd_paths():
    assert tmpfiles.format_write('/sys/a b', 'x') == 'w "/sys/a b" - - - - x'
    assert tmpfiles.parse_line(tmpfiles.format_write('/sys/a b', 'x')).path == '/sys/a b'


def _write(root, path, text):
    local = os.path.join(str(root), path.lstrip('/'))
    if not os.path.isdir(os.path.dirname(local)):
        os.makedirs(os.path.dirname(local))
    with open(local, 'w') as handle:
        handle.write(text)


def test_boot_files_masking_and_first_file_wins(tmp_path):
    _write(tmp_path, '/usr/lib/tmpfiles.d/10-vendor.conf', 'w %s - - - - always\n' % THP)
    _write(tmp_path, '/usr/lib/tmpfiles.d/20-masked.conf', 'w %s - - - - madvise\n' % DEFRAG)
    os.makedirs(os.path.join(str(tmp_path), 'etc/tmpfiles.d'))
    os.symlink('/dev/null', os.path.join(str(tmp_path), 'etc/tmpfiles.d/20-masked.conf'))
    _write(tmp_path, '/etc/tmpfiles.d/95-late.conf', 'w %s - - - - always\n' % DEFRAG)
    files = tmpfiles.boot_files(str(tmp_path), extra='/etc/tmpfiles.d/90-dbhost-tuning.conf')
    assert [shown for shown, local in files] == [
        '/usr/lib/tmpfiles.d/10-vendor.conf', '/etc/tmpfiles.d/90-dbhost-tuning.conf', '/etc/tmpfiles.d/95-late.conf']
    texts = [(shown, 'w %s - - - - never\nw %s - - - - never\n' % (THP, DEFRAG) if 'dbhost' in shown
              else open(local).read()) for shown, local in files]
    exact, globs = tmpfiles.effective_writes(texts)
    # The earliest file name wins for a path, unlike sysctl.d.
    assert tmpfiles.resolve(exact, globs, THP) == ('always', '/usr/lib/tmpfiles.d/10-vendor.conf')
    assert tmpfiles.resolve(exact, globs, DEFRAG) == ('never', '/etc/tmpfiles.d/90-dbhost-tuning.conf')
    assert tmpfiles.resolve(exact, globs, '/sys/none') == (None, None)


def test_effective_non_owning_lines_do_not_block_and_globs_apply_last():
    files = [
        ('/etc/tmpfiles.d/10-a.conf', 'z /sys/block/sda/queue/scheduler 0644 root root -\n'
                                      'f /sys/x - - - - y\n'),
        ('/etc/tmpfiles.d/50-b.conf', 'w /sys/block/sda/queue/scheduler - - - - none\nw /sys/x - - - - 1\n'),
        ('/etc/tmpfiles.d/60-c.conf', 'w /sys/block/sd*/queue/scheduler - - - - kyber\n'),
    ]
    exact, globs = tmpfiles.effective_writes(files)
    assert tmpfiles.resolve(exact, globs, '/sys/block/sda/queue/scheduler') == ('kyber', '/etc/tmpfiles.d/60-c.conf')
    assert tmpfiles.resolve(exact, globs, '/sys/x') == (None, '/etc/tmpfiles.d/10-a.conf')
    # without the glob, the w line after the z line gives the value
    assert exact['/sys/block/sda/queue/scheduler'] == ('none', '/etc/tmpfiles.d/50-b.conf')
    assert globs == [('/sys/block/sd*/queue/scheduler', 'kyber', '/etc/tmpfiles.d/60-c.conf')]


def test_a_commented_out_line_with_every_field_is_no_entry():
    assert tmpfiles.parse_line('# w /sys/kernel/mm/transparent_hugepage/enabled - - - - never') is None
    assert tmpfiles.parse_line('   # w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n') is None
    assert tmpfiles.parse_line(' \t\n') is None


def test_a_quoted_field_left_open_after_a_backslash_keeps_the_backslash():
    entry = tmpfiles.parse_line('w /run/a - - - "1d\\')
    assert (entry.path, entry.age, entry.argument) == ('/run/a', '1d\\', None)
