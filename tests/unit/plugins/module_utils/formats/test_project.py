# -*- coding: utf-8 -*-
"""/etc/project resource control values as libproject reads them (usr/src/lib/libproject/common/setproject.c,
build_rctlblk) and as minimums."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import project


@pytest.mark.parametrize('attribute, maximum', [
    ('project.max-shm-memory', True), ('process.max-sem-nsems', True), ('project.cpu-shares', False),
    ('project.pool', False), ('task.final', False),
])
def test_maximum_controls(attribute, maximum):
    assert project.is_maximum_control(attribute) is maximum


@pytest.mark.parametrize('have, want, met', [
    ('(privileged,8589934592,deny)', '(privileged,8589934592,deny)', True),
    ('(privileged,8589934591,deny)', '(privileged,8589934592,deny)', False),
    ('(basic,1,deny),(privileged,17179869184,deny)', '(priv,8589934592,deny)', True),
    ('(basic,17179869184,deny)', '(privileged,8589934592,deny)', False),
    ('(privileged,17179869184,none)', '(privileged,8589934592,deny)', False),
    (None, '(privileged,1,deny)', False),
])
def test_meets_minimum(have, want, met):
    assert project.meets_minimum(have, want) is met


@pytest.mark.parametrize('value, written', [
    ('(privileged,100,deny)', '(privileged,100,deny)'), ('(privileged, 0100 ,deny)', '(privileged,100,deny)'),
])
def test_counts_stay_plain(value, written):
    assert project.validate_attribute('p', 'project.max-shm-ids', value) == written


def test_a_trailing_b_on_a_count_is_refused():
    """strtoull(..., 10) stops at 'b' and libproject refuses the rest: not a number of bytes here."""
    with pytest.raises(project.ProjectError, match='not a number of bytes'):
        project.validate_attribute('p', 'project.max-shm-ids', '(privileged,100b,deny)')
    assert project.validate_attribute('p', 'project.max-shm-memory', '(privileged,100b,deny)') == \
        '(privileged,100,deny)'
