# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every rule's source reads whole where a person reads it (a record's source, the drift table's
footnotes): none ends in a dangling word such as "...the kernel default): at most"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import profiles

SOURCES = sorted(set(
    [source for dummy, source in profiles.KEY_RULES.values()]
    + [source for dummy, source in profiles.OTHER_RULES.values()]
    + [source for dummy, source in profiles.READ_AHEAD_RULES.values()]))


@pytest.mark.parametrize('source', SOURCES)
def test_a_source_does_not_end_in_a_dangling_word(source):
    assert not re.search(r'(:|\bat (most|least)|\bthe|\band|\bor|,)\s*$', source), source


def test_the_read_ahead_rules_name_their_value():
    assert profiles.READ_AHEAD_RULES['oltp'][1].endswith('at most the kernel default, 128 KiB')
    assert profiles.READ_AHEAD_RULES['dss'][1].endswith('at least its readahead, 4096 KiB')
