# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kernel stores for a sysctl text (formats/sysctl_values.py), against what the real
kernel answered (sysctl_values_cases.yml, recorded with systemd-sysctl and sysctl -w)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_values

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'sysctl_values_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)['cases']


@pytest.mark.parametrize('case', CASES, ids=['%s=%r' % (c['key'], c['text']) for c in CASES])
def test_what_the_kernel_stored(case):
    stored = sysctl_values.write(case['key'], case['text'], case['before'])
    assert stored.value == case['stored']
    assert (stored.error is not None) == (case['refused'] is not None)
    if case['refused'] == 'ERANGE':
        assert stored.error == sysctl_values.ERANGE


def test_the_cases_cover_every_rule():
    texts = [c['text'] for c in CASES]
    for needed in ('0300', '0x400000000', '4096abc', '4096 abc', '250 32000 100', '250 32000 100 128 999',
                   '250 abc 100 128', '-1', '099', '250 32000 100 40000'):
        assert needed in texts


def test_fields_left_out_are_unknown_without_a_value_before():
    assert sysctl_values.write('kernel.sem', '250 32000 100').value is None
    assert sysctl_values.write('kernel.sem', '250 32000 100', '32000 1024000000 500 32000').value == \
        '250 32000 100 32000'


def test_a_key_the_table_does_not_know_takes_its_shape_from_the_live_value():
    assert sysctl_values.write('net.ipv4.tcp_fin_timeout', '0x3c', shape='60').value == '60'
    assert sysctl_values.write('net.ipv4.tcp_fin_timeout', '60abc', shape='60').error == sysctl_values.EINVAL
    # without a numeric shape an unknown key is text, compared as written
    assert sysctl_values.write('kernel.core_pattern', ' |/bin/x  %p ').value == '|/bin/x %p'
    assert sysctl_values.write('kernel.unknown_thing', '0300').value == '0300'


def test_strings_are_kept_as_words():
    assert sysctl_values.write('kernel.core_pattern', 'core.%p', 'core').value == 'core.%p'


def test_canonical():
    assert sysctl_values.canonical('kernel.shmmax', '0x400000000') == '17179869184'
    assert sysctl_values.canonical('kernel.sem', '0300 32000 0100 0200') == '192 32000 64 128'
    assert sysctl_values.canonical('kernel.shmmni', '1G') is None
    assert sysctl_values.canonical('kernel.sem', '250 32000 100') is None


def test_a_port_range_is_taken_whole():
    stored = sysctl_values.write('net.ipv4.ip_local_port_range', '40000 30000', '20000 30000')
    assert stored.value == '20000 30000' and stored.error == sysctl_values.EINVAL


@pytest.mark.parametrize('text, number', [('0', 0), ('00', 0), ('0x0', 0), ('0X1f', 31), ('017', 15), ('-0x10', -16),
                                          ('  42', 42), ('42\t', 42)])
def test_read_number(text, number):
    assert sysctl_values.read_number(text, 0)[0] == number


@pytest.mark.parametrize('text', ['', '0x', '0xg', '08', '+1', '1.5', '-', 'x1'])
def test_read_number_refuses(text):
    assert sysctl_values.read_number(text, 0)[0] is None


def test_a_value_before_with_fewer_fields_than_the_entry():
    """The fields a value before lacks are unknown; a text that gives every field fills them."""
    assert sysctl_values.write('kernel.sem', '250 32000 100 128', '1 2').value == '250 32000 100 128'
    assert sysctl_values.write('kernel.sem', '250 32000', '1 2').value is None
