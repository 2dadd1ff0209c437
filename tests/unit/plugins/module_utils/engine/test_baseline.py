# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The baseline file of engine/baseline.py on its own: what it refuses, and its exact bytes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline


def test_a_file_entry_that_did_not_exist_needs_a_list_of_folders():
    data = baseline.empty()
    data['files']['/etc/sysctl.d/90-x.conf'] = {'existed': False, 'folders': '/etc/sysctl.d'}
    with pytest.raises(baseline.BaselineError) as caught:
        baseline.check(data, '/var/lib/dbhost-tuning/baseline.json')
    assert str(caught.value) == (
        'the baseline /var/lib/dbhost-tuning/baseline.json is corrupt: files /etc/sysctl.d/90-x.conf folders is '
        'not a list; nothing was changed (move it away only if the host is as it was before tuning)')
    data['files']['/etc/sysctl.d/90-x.conf'] = {'existed': False, 'folders': ['/etc/sysctl.d']}
    assert baseline.check(data, 'x') is data


def test_saved_with_sorted_keys_so_the_same_baseline_is_the_same_bytes(tmp_path):
    root = str(tmp_path)
    data = baseline.empty()
    data['created'] = '2026-12-05T00:00:00Z'
    data['files']['/etc/b'] = {'existed': False, 'folders': []}
    data['files']['/etc/a'] = {'existed': True, 'content': 'x\n', 'mode': 0o644}
    baseline.save(root, data)
    path = baseline.location(root)
    with open(path) as handle:
        assert handle.read() == (
            '{\n "created": "2026-12-05T00:00:00Z",\n "files": {\n  "/etc/a": {\n   "content": "x\\n",\n'
            '   "existed": true,\n   "mode": 420\n  },\n  "/etc/b": {\n   "existed": false,\n   "folders": []\n  }\n'
            ' },\n "live": {},\n "schema": 1,\n "state": "applied",\n "unsupported": {}\n}\n')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert baseline.load(root) == data
