# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""formats/fstab.py: fstab(5) and vfstab(4) parsed and rendered back byte for byte."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import fstab

FSTAB = (
    '# /etc/fstab: static file system information.\n'
    '#\n'
    '# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n'
    'UUID=0a3407de /               ext4    errors=remount-ro 0       1\n'
    '\n'
    '   \t \n'
    'LABEL=ORADATA\t/u02\txfs\tdefaults,nofail\t0\t2\n'
    '/dev/mapper/vg_db-lv_redo  /u03  ext4  rw,relatime,data=ordered  0  2   \n'
    '\t/dev/sdb1 /u04 ext4 noatime 0 2\n'
    'nas01:/export/media /mnt/Media\\040Library nfs4 ro,hard,_netdev 0 0\n'
    '#/dev/sdc1\t/u05\text4\tdefaults\t0\t2\n'
    '/dev/sdd1 /u06 ext4\n'
)

VFSTAB = (
    '#device\t\tdevice\t\tmount\t\tFS\tfsck\tmount\tmount\n'
    '#to mount\tto fsck\t\tpoint\t\ttype\tpass\tat boot\toptions\n'
    '#\n'
    'fd\t-\t/dev/fd\tfd\t-\tno\t-\n'
    '/dev/dsk/c0t0d0s1\t-\t-\tswap\t-\tno\t-\n'
    '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/u02\tufs\t2\tyes\tlogging\n'
    '/dev/dsk/c1t1d0s0   /dev/rdsk/c1t1d0s0   /u03   ufs   2   yes   -\n'
    '\n'
)


def lines_of(text):
    return text.splitlines(True)


@pytest.mark.parametrize('text', [
    FSTAB, FSTAB.replace('\n', '\r\n'), FSTAB.rstrip('\n'), '', '\n', '# only a comment', '\t\n  \n',
    'proc /proc proc defaults 0 0',
], ids=['sample', 'crlf', 'no-final-newline', 'empty', 'one-blank-line', 'comment-only', 'blanks', 'one-line'])
def test_fstab_round_trip_is_byte_identical(text):
    assert fstab.render(fstab.parse(text)) == text
    # Rendering every entry that has options with the ones it already has changes nothing either
    # (a line that stops after the type is given an options field: see below).
    table = fstab.parse(text)
    same = dict((entry.index, entry.options) for entry in table.entries() if entry.options)
    assert fstab.render(table, same) == text


@pytest.mark.parametrize('text', [VFSTAB, VFSTAB.replace('\n', '\r\n'), VFSTAB.rstrip('\n')],
                         ids=['sample', 'crlf', 'no-final-newline'])
def test_vfstab_round_trip_is_byte_identical(text):
    table = fstab.parse(text, vfstab=True)
    assert fstab.render(table) == text
    assert fstab.render(table, dict((entry.index, entry.options) for entry in table.entries())) == text


def test_comments_and_blank_lines_are_not_entries():
    points = [entry.mount_point for entry in fstab.parse(FSTAB).entries()]
    assert points == ['/', '/u02', '/u03', '/u04', '/mnt/Media Library', '/u06']


def test_octal_escaped_space_is_read_as_a_space_and_written_back_escaped():
    table = fstab.parse(FSTAB)
    (entry,) = table.find('/mnt/Media Library')
    assert (entry.lineno, entry.fstype, entry.source) == (10, 'nfs4', 'nas01:/export/media')
    assert entry.options == ['ro', 'hard', '_netdev']
    after = fstab.render(table, {entry.index: ['ro', 'hard', '_netdev', 'noatime']})
    assert lines_of(after)[9] == 'nas01:/export/media /mnt/Media\\040Library nfs4 ro,hard,_netdev,noatime 0 0\n'
    assert table.find('/mnt/Media\\040Library') == []


def test_edited_options_keep_the_rest_of_the_file_byte_for_byte():
    table = fstab.parse(FSTAB)
    (entry,) = table.find('/u03')
    after = fstab.render(table, {entry.index: ['rw', 'noatime', 'data=ordered']})
    before_lines, after_lines = lines_of(FSTAB), lines_of(after)
    # The spacing around the options field, the trailing blanks and the line end stay.
    assert after_lines[entry.index] == '/dev/mapper/vg_db-lv_redo  /u03  ext4  rw,noatime,data=ordered  0  2   \n'
    assert after_lines[:entry.index] + after_lines[entry.index + 1:] == (
        before_lines[:entry.index] + before_lines[entry.index + 1:])


def test_tabs_and_leading_blanks_are_kept_on_an_edited_line():
    table = fstab.parse(FSTAB)
    after = lines_of(fstab.render(table, {table.find('/u02')[0].index: ['defaults', 'nofail', 'noatime'],
                                          table.find('/u04')[0].index: ['nodiratime']}))
    assert after[6] == 'LABEL=ORADATA\t/u02\txfs\tdefaults,nofail,noatime\t0\t2\n'
    assert after[8] == '\t/dev/sdb1 /u04 ext4 nodiratime 0 2\n'


def test_crlf_line_end_is_kept_on_an_edited_line():
    table = fstab.parse(FSTAB.replace('\n', '\r\n'))
    after = fstab.render(table, {table.find('/u04')[0].index: ['noatime', 'nodiratime']})
    assert after == FSTAB.replace('noatime 0 2', 'noatime,nodiratime 0 2').replace('\n', '\r\n')


def test_fstab_line_without_options_gets_them_with_its_own_separator():
    table = fstab.parse(FSTAB)
    (entry,) = table.find('/u06')
    assert entry.options == []
    after = fstab.render(table, {entry.index: ['noatime']})
    assert lines_of(after)[entry.index] == '/dev/sdd1 /u06 ext4 noatime\n'


def test_fstab_empty_option_list_is_written_defaults():
    table = fstab.parse(FSTAB)
    (entry,) = table.find('/u04')
    assert lines_of(fstab.render(table, {entry.index: []}))[entry.index] == '\t/dev/sdb1 /u04 ext4 defaults 0 2\n'


def test_fstab_keeps_defaults_as_an_option():
    (entry,) = fstab.parse(FSTAB).find('/u02')
    assert entry.options == ['defaults', 'nofail']


def test_vfstab_seven_fields_and_dash_for_no_options():
    table = fstab.parse(VFSTAB, vfstab=True)
    entries = dict((entry.mount_point, entry) for entry in table.entries())
    # Field 3 is the mount point, so fd (/dev/fd) and swap ('-') are entries too.
    assert sorted(entries) == ['-', '/dev/fd', '/u02', '/u03']
    assert (entries['/u02'].source, entries['/u02'].fstype, entries['/u02'].options) == (
        '/dev/dsk/c1t0d0s0', 'ufs', ['logging'])
    assert entries['/u03'].options == []
    assert entries['-'].fstype == 'swap'


def test_vfstab_options_replace_the_dash_and_go_back_to_it():
    table = fstab.parse(VFSTAB, vfstab=True)
    (u03,) = table.find('/u03')
    (u02,) = table.find('/u02')
    after = fstab.render(table, {u03.index: ['forcedirectio'], u02.index: []})
    lines = lines_of(after)
    assert lines[u03.index] == '/dev/dsk/c1t1d0s0   /dev/rdsk/c1t1d0s0   /u03   ufs   2   yes   forcedirectio\n'
    assert lines[u02.index] == '/dev/dsk/c1t0d0s0\t/dev/rdsk/c1t0d0s0\t/u02\tufs\t2\tyes\t-\n'
    assert [line for index, line in enumerate(lines) if index not in (u02.index, u03.index)] == [
        line for index, line in enumerate(lines_of(VFSTAB)) if index not in (u02.index, u03.index)]


def test_vfstab_line_with_too_few_fields_is_not_an_entry():
    assert fstab.parse('/dev/dsk/c0t0d0s0 /dev/rdsk/c0t0d0s0 /u09 ufs 2 yes\n', vfstab=True).entries() == []


def test_mount_point_trailing_slash_is_dropped():
    (entry,) = fstab.parse('/dev/sdb1 /u07/ ext4 defaults 0 2\n').entries()
    assert entry.mount_point == '/u07'
    assert fstab.normalize_path('/') == '/' and fstab.normalize_path('//') == '/'


def test_no_break_space_is_part_of_a_field_not_a_separator():
    (entry,) = fstab.parse(u'/dev/sdb1 /u08\u00a0x ext4 defaults 0 2\n').entries()
    assert entry.mount_point == u'/u08\u00a0x'
