# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""formats/keyed.py, the core of the keyed-line formats: exact text in, exact text out.

The toy format here is ``key value`` lines with ``#`` comments, which is all the core needs
to know: the three real formats (sysctl, limits, tmpfiles) have their own tests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import keyed


def key_of(line):
    words = keyed.body(line).split('#', 1)[0].split()
    return words[0] if len(words) >= 2 else None


def replace(line, key, value):
    text = keyed.body(line)
    start = text.index(key) + len(key)
    rest = text[start:]
    lead = rest[:len(rest) - len(rest.lstrip())]
    old = rest.lstrip().split()[0]
    return text[:start] + lead + value + rest.lstrip()[len(old):] + keyed.ending(line)


def new(key, value):
    return '%s %s' % (key, value)


def render(text, changes, **kwargs):
    return keyed.render(text, changes, key_of, replace, new, **kwargs)


@pytest.mark.parametrize('text, lines', [
    (None, []),
    ('', []),
    ('a 1', ['a 1']),
    ('a 1\nb 2\n', ['a 1\n', 'b 2\n']),
    ('a 1\r\n\r\nb 2', ['a 1\r\n', '\r\n', 'b 2']),
])
def test_split_lines_keeps_endings(text, lines):
    assert keyed.split_lines(text) == lines
    assert ''.join(lines) == (text or '')


@pytest.mark.parametrize('line, body, ending', [
    ('a 1\n', 'a 1', '\n'),
    ('a 1\r\n', 'a 1', '\r\n'),
    ('a 1', 'a 1', ''),
    ('\n', '', '\n'),
    ('', '', ''),
])
def test_body_and_ending(line, body, ending):
    assert (keyed.body(line), keyed.ending(line)) == (body, ending)


def test_parse_numbers_lines_from_one_and_skips_none():
    assert keyed.parse('# c\na 1\n\nb 2\n', lambda line, n: (n, key_of(line)) if key_of(line) else None) == \
        [(2, 'a'), (4, 'b')]
    assert keyed.parse(None, lambda line, n: line) == []


def test_find_gives_every_line_of_a_key():
    lines = keyed.split_lines('a 1\n# a 0\nb 2\na 3\n')
    assert keyed.find(lines, key_of) == {'a': [0, 3], 'b': [2]}
    assert keyed.find(lines, key_of, keys=('b', 'z')) == {'b': [2]}


def test_a_changed_key_is_edited_in_place_and_everything_else_kept_byte_for_byte():
    text = '# tuned\r\na   1   # was 1\n\n  junk\nb 2\n'
    assert render(text, {'a': '10'}) == '# tuned\r\na   10   # was 1\n\n  junk\nb 2\n'


def test_the_last_line_of_a_key_counts_by_default_and_the_others_go():
    text = 'a 1\nb 2\na 3\n'
    assert render(text, {'a': '9'}) == 'b 2\na 9\n'


def test_keep_first_rewrites_the_first_line_of_a_key():
    text = 'a 1\nb 2\na 3\n'
    assert render(text, {'a': '9'}, keep=keyed.FIRST) == 'a 9\nb 2\n'


def test_none_removes_every_line_of_the_key():
    assert render('a 1\nb 2\na 3\n', {'a': None}) == 'b 2\n'
    assert render('a 1\n', {'a': None, 'z': None}) == ''


def test_new_keys_are_appended_in_order_or_sorted():
    assert render('a 1\n', {'d': '4', 'c': '3'}) == 'a 1\nd 4\nc 3\n'
    assert render('a 1\n', {'d': '4', 'c': '3'}, sort_new=True) == 'a 1\nc 3\nd 4\n'


def test_a_last_line_without_a_newline_gets_one_only_when_something_is_appended():
    assert render('a 1', {'a': '2'}) == 'a 2'
    assert render('a 1', {'b': '2'}) == 'a 1\nb 2\n'
    assert render('# c', {}) == '# c'


def test_the_header_starts_a_new_file_only():
    assert render(None, {'a': '1'}, header='# managed\n') == '# managed\na 1\n'
    assert render('', {'a': '1'}, header='# managed\n') == 'a 1\n'
    assert render(None, {'a': None}, header='# managed\n') is None
    assert render(None, {}) is None
    assert render('', {}) == ''


def test_drops_names_the_lines_a_change_replaces():
    text = 'a-soft 1\na-hard 2\nb 3\n'

    def drops(key):
        return ['a-soft', 'a-hard'] if key == 'a-both' else []
    assert render(text, {'a-both': '5'}, drops=drops) == 'b 3\na-both 5\n'
    # A key changed itself is not dropped by another one's change.
    assert render(text, {'a-both': '5', 'a-soft': '4'}, drops=drops) == 'a-soft 4\nb 3\na-both 5\n'


def test_unify_endings_ends_every_line_in_a_newline():
    assert render('a 1\r\n# c\rb 2', {'b': '3'}, unify_endings=True) == 'a 1\n# c\nb 3\n'
    assert render('a 1\r\n', {}, unify_endings=True) == 'a 1\n'


def test_edit_says_which_changed_keys_had_a_line():
    lines, found = keyed.edit(keyed.split_lines('a 1\nb 2\n'), {'a': '3', 'z': '1', 'b': None}, key_of, replace)
    assert lines == ['a 3\n'] and found == set(['a', 'b'])


def test_append_and_join():
    assert keyed.append(['a 1'], ['b 2'], header='# h\n') == ['a 1\n', '# h\n', 'b 2\n']
    assert keyed.append(['a 1'], [], header='# h\n') == ['a 1']
    assert keyed.join([], existed=False) is None
    assert keyed.join([], existed=True) == ''
    assert keyed.join(['a 1\n', 'b 2'], existed=False) == 'a 1\nb 2'
