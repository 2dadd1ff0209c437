# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The terminal table always has its reason / detail column: a row that is not ok says why (its
reason), an ok row says what makes it so (its detail), so that a clean table is not bare values."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.terminal import render_terminal


def report(*settings):
    counts = {'settings': len(settings), 'drifted': sum(1 for s in settings if s['status'] != 'ok')}
    return {'summary': {'state': 'clean', 'hosts': 1, 'clean': 1, 'drift': 0, 'failed': 0, 'unreachable': 0,
                        'drifted': counts['drifted'], 'settings': len(settings)},
            'hosts': {'db1': {'state': 'clean', 'counts': counts, 'errors': [], 'settings': list(settings)}}}


def setting(name, status, detail=None, reason=None):
    return {'name': name, 'target': name, 'desired': '1', 'live': '1', 'persisted': '1', 'status': status,
            'detail': detail, 'reason': reason, 'comparison': 'exact', 'source': None}


def test_an_ok_row_shows_its_detail():
    lines = [text for text, dummy in render_terminal(report(
        setting('/u02 noatime', 'ok', 'in effect and in /etc/fstab'),
        setting('oracle soft memlock', 'ok', 'met by /etc/security/limits.d/50-site.conf'),
        setting('vm.swappiness', 'ok')))]
    assert lines[3] == '  setting              desired  live  persisted  status  reason / detail'
    assert lines[4] == '  /u02 noatime         1        1     1          ok      in effect and in /etc/fstab'
    assert lines[5].endswith('ok      met by /etc/security/limits.d/50-site.conf')
    assert lines[6] == '  vm.swappiness        1        1     1          ok'


def test_a_row_not_ok_shows_its_reason_before_its_detail():
    lines = [text for text, dummy in render_terminal(report(
        setting('vm.swappiness', 'drift', 'would write /etc/sysctl.d/90-dbhost-tuning.conf', 'not persisted')))]
    assert lines[4].endswith('drift   not persisted')
