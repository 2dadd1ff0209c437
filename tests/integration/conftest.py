# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ansible_collections.dbhost.tuning, as for tests/unit.

tests/unit/conftest.py does it (a folder with the ansible_collections/dbhost/tuning
layout, a link to the checkout); it is loaded from here when pytest runs this folder
alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os

UNIT_CONFTEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'unit', 'conftest.py')

try:
    import ansible_collections.dbhost.tuning.plugins.module_utils.engine.files  # noqa: F401 pylint: disable=unused-import
except ImportError:
    _spec = importlib.util.spec_from_file_location('dbhost_unit_conftest', UNIT_CONFTEST)
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))


_KILL_COUNTS = []


def pytest_runtest_logreport(report):
    if report.when == 'call':
        _KILL_COUNTS.extend(json.loads(value) for key, value in report.user_properties if key == 'kill_counts')


def pytest_terminal_summary(terminalreporter):
    """Where the SIGKILLs of test_kill_writes.py landed, per engine and target."""
    if not _KILL_COUNTS:
        return
    terminalreporter.section('where the SIGKILLs landed (test_kill_writes.py)')
    for record in _KILL_COUNTS:
        for path, counts in sorted(record['targets'].items()):
            terminalreporter.write_line('%-24s %-48s run %5.2f s  %s' % (
                record['case'], path, record['run_seconds'], ', '.join('%s %d' % item for item in sorted(counts.items()))))
