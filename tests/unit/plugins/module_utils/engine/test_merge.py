# -*- coding: utf-8 -*-
"""engine/merge.py: one write taken back out of a file edited since, line by line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import merge

FSTAB = '# /etc/fstab\nUUID=1 / ext4 defaults 0 1\n/dev/sdb1 /u01 ext4 defaults 0 2\nproc /proc proc defaults 0 0\n'
TUNED = FSTAB.replace('/u01 ext4 defaults', '/u01 ext4 defaults,noatime')


def test_nobody_edited_gives_the_text_before_whole():
    assert merge.unapply(TUNED, FSTAB, TUNED) == (FSTAB, [])


@pytest.mark.parametrize('edit', [
    lambda text: text + '/dev/vdb1 /backup ext4 defaults 0 2\n',                   # appended
    lambda text: '# by hand\n' + text,                                             # at the top
    lambda text: text.replace('proc /proc', '# the next line by hand\nproc /proc'),  # between two lines
    lambda text: text.replace('UUID=1 / ext4 defaults 0 1\n', ''),                  # a line removed
    lambda text: text.replace('UUID=1 / ext4 defaults 0 1', 'UUID=1 / ext4 errors=remount-ro 0 1'),  # changed
])
def test_an_edit_elsewhere_is_kept_byte_for_byte(edit):
    assert merge.unapply(edit(TUNED), FSTAB, TUNED) == (edit(FSTAB), [])


def test_a_line_both_changed_keeps_the_one_there_now_and_says_so():
    now = TUNED.replace('defaults,noatime', 'defaults,noatime,nodiratime')
    text, conflicts = merge.unapply(now, FSTAB, TUNED)
    assert text == now
    assert conflicts == [(['/dev/sdb1 /u01 ext4 defaults,noatime 0 2\n'],
                          ['/dev/sdb1 /u01 ext4 defaults,noatime,nodiratime 0 2\n'])]


def test_the_same_change_made_by_hand_is_no_conflict():
    # a write killed before its rename: the baseline holds it, the file is still as before
    assert merge.unapply(FSTAB, FSTAB, TUNED) == (FSTAB, [])


def test_a_file_the_collection_made_keeps_only_the_lines_added_since():
    ours = '# Managed by dbhost.tuning\nfs.aio-max-nr = 1048576\n'
    assert merge.take_back(ours, [{'before': None, 'after': ours}], False) == (None, [])
    assert merge.take_back(ours + 'net.core.somaxconn = 4096\n', [{'before': None, 'after': ours}], False) == \
        ('net.core.somaxconn = 4096\n', [])


def test_a_section_header_an_admin_s_line_needs_is_kept():
    ours = '# Managed by dbhost.tuning\n[Service]\nLimitMEMLOCK=4M\n'
    assert merge.take_back(ours + 'LimitNOFILE=8192\n', [{'before': None, 'after': ours}], False) == \
        ('[Service]\nLimitNOFILE=8192\n', [])
    # no admin line in the section: the header goes with the rest
    two = '[Unit]\nDescription=x\n[Service]\nLimitMEMLOCK=4M\n'
    assert merge.take_back('[Unit]\nDescription=x\nAfter=y.service\n[Service]\nLimitMEMLOCK=4M\n',
                           [{'before': None, 'after': two}], False) == ('[Unit]\nAfter=y.service\n', [])


def test_a_header_of_a_file_that_had_it_is_untouched():
    before = '[mysqld]\nmax_connections = 100\n'
    after = before + 'innodb_flush_method = O_DIRECT\n'
    now = after + 'innodb_buffer_pool_size = 8G\n'
    assert merge.unapply(now, before, after) == (before + 'innodb_buffer_pool_size = 8G\n', [])


def test_two_writes_are_taken_back_newest_first():
    first = TUNED
    edited = first + '# by hand\n'
    second = edited.replace('proc defaults', 'proc defaults,hidepid=2')
    now = second + '/dev/vdb1 /backup ext4 defaults 0 2\n'
    writes = [{'before': FSTAB, 'after': first}, {'before': edited, 'after': second}]
    assert merge.take_back(now, writes, True) == (FSTAB + '# by hand\n/dev/vdb1 /backup ext4 defaults 0 2\n', [])


def test_a_removal_by_the_collection_is_put_back():
    assert merge.take_back(None, [{'before': FSTAB, 'after': None}], True) == (FSTAB, [])


def test_edited_lines_say_what_was_added_and_removed():
    assert merge.edited_lines('a\nb\n', 'a\nc\nd\n') == ['- b', '+ c', '+ d']
    assert merge.edited_lines(None, 'x\n') == ['+ x']
    assert merge.edited_lines('x\n', 'x\n') == []


def test_bytes_that_are_not_utf8_and_a_missing_last_newline_are_kept():
    before = 'a = 1\nb = \udcff\n'
    after = before + 'c = 3'
    now = 'top\n' + after
    assert merge.unapply(now, before, after) == ('top\n' + before, [])


def test_a_line_added_inside_the_lines_the_write_changed_is_kept_after_them():
    before = 'a = 1\nb = 2\n'
    after = 'a = 10\nb = 20\n'
    assert merge.unapply('a = 10\n# by hand\nb = 20\n', before, after) == ('a = 1\nb = 2\n# by hand\n', [])
    assert merge.unapply('# by hand\na = 10\nb = 20\n', before, after) == ('# by hand\na = 1\nb = 2\n', [])
