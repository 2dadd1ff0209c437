# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The comparison rules every record follows: cases in comparison_cases.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare

with open(os.path.join(os.path.dirname(__file__), 'comparison_cases.yml')) as handle:
    CASES = yaml.safe_load(handle)


@pytest.mark.parametrize('case', CASES, ids=[c['id'] for c in CASES])
def test_satisfies(case):
    assert compare.satisfies(case['actual'], case['desired'], case['comparison']) is case['satisfied']


@pytest.mark.parametrize('case', CASES, ids=[c['id'] for c in CASES])
def test_value_to_write_never_undoes_a_met_bound(case):
    written = compare.value_to_write(case['actual'], case['desired'], case['comparison'])
    assert written == case['write']
    # what is written always meets the desired value
    assert compare.satisfies(written, case['desired'], case['comparison'])


@pytest.mark.parametrize('desired, comparison, shown', [
    ('250 32000 100 128', 'minimum', '>= 250 32000 100 128'),
    ('10', 'maximum', '<= 10'),
    ('4096', 'exact', '4096'),
    (4096, 'minimum', '>= 4096'),
    ('250 32000 100 128', ['minimum', 'minimum', 'exact', 'minimum'], '>=250 >=32000 =100 >=128'),
    ('250 32000 100 128', ['minimum'] * 4, '>= 250 32000 100 128'),
    (None, 'minimum', None),
])
def test_describe(desired, comparison, shown):
    assert compare.describe(desired, comparison) == shown


def test_describe_a_one_item_list_of_comparisons():
    assert compare.describe('4096', ['maximum']) == '<= 4096'


def test_combine_keeps_the_first_grant_spelling_among_equal_ones():
    # the live value comes first: of equal grants, its spelling is written
    assert compare.combine('100', ['infinity', 'unlimited'], 'minimum') == 'infinity'
    assert compare.combine('100', ['unlimited', 'infinity'], 'minimum') == 'unlimited'
    assert compare.combine('100', [None, '100 2', 'x', '200'], 'minimum') == '200'


@pytest.mark.parametrize('actual, desired', [(None, '250 32000 100 128'), ('1 2 3', '1 2 3 4'), ('1', None)])
def test_short_fields_of_no_value_or_another_count_is_empty(actual, desired):
    assert compare.short_fields(actual, desired, 'minimum') == []


@pytest.mark.parametrize('first, second, comparison, stricter', [
    ('4096', '32768', 'minimum', '32768'),
    ('32768', '4096', 'minimum', '32768'),
    ('10', '20', 'maximum', '10'),
    ('250 32000 100 128', '500 16000 100 256', 'minimum', '500 32000 100 256'),
    ('4096', '4096', 'exact', '4096'),
])
def test_stricter(first, second, comparison, stricter):
    assert compare.stricter(first, second, comparison) == stricter


@pytest.mark.parametrize('first, second, comparison', [
    ('4096', '8192', 'exact'),
    ('never', 'always', 'minimum'),
    ('1 2', '1 2 3', 'minimum'),
])
def test_no_stricter_value(first, second, comparison):
    with pytest.raises(compare.ComparisonError):
        compare.stricter(first, second, comparison)


@pytest.mark.parametrize('bad', ['least', ['minimum', 'most'], [], None])
def test_validate_refuses_unknown_comparisons(bad):
    with pytest.raises(compare.ComparisonError):
        compare.validate(bad)
