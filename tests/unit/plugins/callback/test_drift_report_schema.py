# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.json against its JSON Schema (docs/drift-report.schema.json, shipped with the collection):
the reports the callback writes validate, from recorded events and from a real host_state
result, and a report that breaks the contract (no schema_version, an older one, a record
without its source, an ok record with a reason) does not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import shutil
import subprocess
import sys

import jsonschema
import pytest

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import files, records
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import put, with_defaults
from ansible_collections.dbhost.tuning.tests.unit.plugins.callback.test_drift_report import (
    UNSUPPORTED_EVENTS, read_json, run)
from ansible_collections.dbhost.tuning.tests.unit.plugins.modules import fake_host

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
SCHEMA_FILE = os.path.join(CHECKOUT, 'docs', 'drift-report.schema.json')


@pytest.fixture(scope='module')
def validator():
    with open(SCHEMA_FILE) as stream:
        schema = json.load(stream)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(validator, report):
    return sorted(error.message for error in validator.iter_errors(report))


def test_the_schema_version_is_the_callbacks(validator):
    assert validator.schema['properties']['schema_version'] == {
        'const': records.SCHEMA_VERSION, 'description': validator.schema['properties']['schema_version']['description']}
    assert validator.schema['$defs']['record']['required'][:len(records.RECORD_KEYS)] == list(records.RECORD_KEYS)


@pytest.mark.parametrize('events', [None, UNSUPPORTED_EVENTS], ids=['five hosts', 'unsupported'])
def test_written_reports_validate(validator, tmp_path, events):
    dummy, dummy, folder = run(tmp_path, events)
    assert errors(validator, read_json(folder)) == []


def test_a_report_of_a_real_host_state_run_validates(validator, tmp_path, monkeypatch):
    """Every kind's records, as host_state returns them, in a report that validates."""
    monkeypatch.setattr(platforms, 'system', lambda: 'Linux')
    monkeypatch.setattr(platforms, 'page_size', lambda root='/': 4096)
    root = fake_host.build(str(tmp_path / 'host'))
    put(root, '/etc/passwd', 'oracle:x:54321:54322::/home/oracle:/bin/sh\n')
    put(root, '/etc/group', 'dba:x:54322:\n')
    from ansible_collections.dbhost.tuning.tests.unit.plugins.modules.test_modules_record_sources import FACTS, role_inputs
    plan = HostState(None, with_defaults(role_inputs(root)), registry.Context(check_mode=True),
                     facts_reader=lambda r, subsets: dict(FACTS))
    output = json.loads(json.dumps(plan.output(plan.run()), default=str))
    assert set(record['kind'] for record in output['settings']) == {
        'kernel_params', 'hugepages', 'resource_limits', 'sysfs_attr', 'block_queue', 'mount_options', 'db_parameter',
        'processor_set'}
    collector = records.DriftCollector()
    collector.add_result('db1', 'Check the desired state', 'dbhost.tuning.host_state', output)
    report = json.loads(files.render_json(collector.report()))
    assert errors(validator, report) == []
    assert all(record['source'] for record in report['hosts']['db1']['settings'])


def test_check_jsonschema_agrees(tmp_path):
    """The command line tool CI uses, on a written report (check-jsonschema is in requirements/test.txt)."""
    tool = os.path.join(os.path.dirname(sys.executable), 'check-jsonschema')
    tool = tool if os.path.exists(tool) else shutil.which('check-jsonschema')
    assert tool, 'check-jsonschema is not installed (requirements/test.txt)'
    dummy, dummy, folder = run(tmp_path)
    done = subprocess.run([tool, '--schemafile', SCHEMA_FILE, str(folder / 'drift.json')],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert done.returncode == 0, done.stdout
    report = read_json(folder)
    del report['schema_version']
    broken = tmp_path / 'broken.json'
    broken.write_text(json.dumps(report))
    done = subprocess.run([tool, '--schemafile', SCHEMA_FILE, str(broken)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert done.returncode == 1 and 'schema_version' in done.stdout, done.stdout


def _broken(report, how):
    report = copy.deepcopy(report)
    records = report['hosts']['db2']['settings']
    if how == 'no schema_version':
        del report['schema_version']
    elif how == 'version 1':
        report['schema_version'] = report['format_version'] = 1
    elif how == 'a record without its source':
        del records[1]['source']
    elif how == 'a record without its reason':
        del records[1]['reason']
    elif how == 'an ok record with a reason':
        records[0]['reason'] = 'live differs'
    elif how == 'an unknown status':
        records[1]['status'] = 'fine'
    elif how == 'a count below zero':
        report['summary']['drifted'] = -1
    return report


@pytest.mark.parametrize('how', ['no schema_version', 'version 1', 'a record without its source',
                                 'a record without its reason', 'an ok record with a reason', 'an unknown status',
                                 'a count below zero'])
def test_a_report_that_breaks_the_contract_fails(validator, tmp_path, how):
    dummy, dummy, folder = run(tmp_path)
    report = read_json(folder)
    assert errors(validator, report) == []
    assert errors(validator, _broken(report, how)) != []
