# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waivers: a waived record does not fail the run and says why and until when, an expired waiver
fails it and says so, a waiver matching nothing is listed, a bad waiver file is an error naming
its line; and drift-check --from-report with --waivers, --ledger and --since-last."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import textwrap

import pytest

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import (
    fleet, history, junit, markdown, waivers)

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
TODAY = datetime.date(2026, 12, 7)
FILE = textwrap.dedent('''\
    waivers:
      - hosts: "db4*"
        setting: vm.swappiness
        reason: batch window until the disks are replaced
        owner: dba-team
        expires: 2026-12-31
      - hosts: "*"
        setting: "kernel.shm*"
        reason: old change window
        owner: ops
        expires: 2026-12-01
      - hosts: web*
        setting: "*"
        reason: nothing here
        owner: ops
        expires: 2027-01-01
    ''')


def report():
    hosts = {
        'db41': [('vm.swappiness', 'drift', 60), ('kernel.shmmax', 'drift', 1)],
        'db42': [('vm.swappiness', 'ok', 1)],
        'db50': [('vm.swappiness', 'drift', 60)],
    }
    document = {'clean_statuses': ['ok', 'unsupported'], 'started': None, 'finished': '2026-12-07T00:00:00+00:00',
                'hosts': dict((host, {'errors': [], 'settings': [
                    {'name': name, 'target': None, 'status': status, 'desired': 1, 'live': live, 'persisted': 1,
                     'source': 's', 'reason': None if status == 'ok' else 'differs', 'detail': None, 'task': 't',
                     'module': 'dbhost.tuning.host_state', 'comparison': None, 'owner': None, 'kind': None}
                    for name, status, live in records]}) for host, records in hosts.items())}
    return fleet.refresh(document)


def applied(tmp_path, text=FILE):
    path = tmp_path / 'waivers.yml'
    path.write_text(text)
    document = report()
    waivers.apply_waivers(document, waivers.load_waivers(str(path)), TODAY, str(path))
    return fleet.refresh(document)


def test_waived_expired_and_unmatched(tmp_path):
    document = applied(tmp_path)
    db41 = document['hosts']['db41']
    swappiness, shmmax = db41['settings']
    assert swappiness['waiver']['active'] is True and swappiness['waiver']['expires'] == '2026-12-31'
    assert swappiness['waiver']['reason'] == 'batch window until the disks are replaced'
    assert shmmax['waiver']['active'] is False
    # The expired waiver leaves db41 drifted; db50's drift has no waiver.
    assert db41['state'] == 'drift' and db41['counts'] == {'settings': 2, 'drifted': 1, 'unsupported': 0, 'waived': 1}
    assert document['summary']['drifted'] == 2 and document['summary']['waived'] == 1
    assert [waiver['matched'] for waiver in document['waivers']['waivers']] == [1, 1, 0]
    lines = waivers.waiver_lines(document)
    assert any(line.startswith('waiver EXPIRED on 2026-12-01') and 'line 7' in line for line in lines), lines
    assert any(line.startswith('waiver matches nothing') and 'line 12' in line for line in lines), lines


def test_only_waived_drift_is_clean(tmp_path):
    document = applied(tmp_path, FILE.replace('expires: 2026-12-01', 'expires: 2026-12-07').replace('"db4*"', '"db*"'))
    assert document['summary']['state'] == 'clean' and document['summary']['drifted'] == 0
    assert document['summary']['waived'] == 3
    text = markdown.render_markdown(document)
    assert '**drift** (waived until 2026-12-31 (dba-team))' in text and '## Waivers' in text
    xml = junit.render_junit(document)
    assert 'failures="0"' in xml and 'waived until 2026-12-31 by dba-team' in xml


@pytest.mark.parametrize('text, message', [
    ('waivers:\n  - hosts: a\n    setting: b\n    reason: r\n    owner: o\n    expires: 2026-13-01\n',
     'line 6: expires \'2026-13-01\' is not a date'),
    ('waivers:\n  - hosts: a\n    setting: b\n    reason: r\n    expires: 2026-12-01\n', 'line 2: waiver 1 has no owner'),
    ('waivers:\n  - hosts: a\n    setting: b\n    reason: r\n    owner: o\n    expires: 2026-12-01\n    ownr: x\n',
     "line 7: waiver 1 has an unknown key 'ownr'"),
    ('waivers:\n  - hosts: a\n    setting: [b]\n', "line 3: 'setting' must be a non-empty text"),
    ('waivers:\n  - hosts: a\n   setting: b\n', 'line 3: not valid YAML'),
    ('waiver:\n  - hosts: a\n', "line 1: unknown key 'waiver'"),
    ('waivers: {hosts: a}\n', 'line 1: the waivers must be a list'),
])
def test_bad_waiver_files_name_the_line(tmp_path, text, message):
    path = tmp_path / 'bad.yml'
    path.write_text(text)
    with pytest.raises(waivers.WaiverError) as caught:
        waivers.load_waivers(str(path))
    assert str(caught.value).startswith(str(path)) and message in str(caught.value), str(caught.value)


def test_a_bad_waiver_file_in_the_callback_is_said(tmp_path):
    path = tmp_path / 'bad.yml'
    path.write_text('waivers:\n  - hosts: a\n')
    document = history.place_in_history(report(), waivers=str(path))
    assert history.problems(document) == [document['waivers']['error']]
    assert 'line 2: waiver 1 has no setting, reason, owner, expires' in document['waivers']['error']


def _drift_check(*argv):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader('drift_check_w', os.path.join(CHECKOUT, 'scripts', 'drift_check.py'))
    spec = importlib.util.spec_from_loader('drift_check_w', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module.main(list(argv))


def _write(folder, document):
    folder.mkdir(exist_ok=True)
    (folder / 'drift.json').write_text(json.dumps(document))
    return str(folder)


def test_drift_check_from_report_with_waivers_ledger_and_since_last(tmp_path, capsys, monkeypatch):
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS', 'DBHOST_DRIFT_LEDGER_SCOPE'):
        monkeypatch.delenv(name, raising=False)
    ledger = str(tmp_path / 'ledger.sqlite')
    first = report()
    first['finished'] = '2026-12-06T00:00:00+00:00'
    assert _drift_check('--from-report', _write(tmp_path / 'one', first), '--ledger', ledger, '--since-last') == 3
    # The same drift the next day: not new; drift-check --since-last passes, plain drift-check fails.
    second = report()
    assert _drift_check('--from-report', _write(tmp_path / 'two', second), '--ledger', ledger, '--since-last') == 0
    err = capsys.readouterr().err
    assert 'since last run (2026-12-06T00:00:00+00:00): 0 new, 0 changed, 3 still, 0 fixed' in err
    written = json.loads((tmp_path / 'two' / 'drift.json').read_text())
    assert written['since_last']['counts']['still'] == 3
    assert (tmp_path / 'two' / 'drift.html').exists() and (tmp_path / 'two' / 'drift.md').exists()
    third = report()
    third['finished'] = '2026-12-08T00:00:00+00:00'
    third['hosts']['db42']['settings'][0]['status'] = 'drift'
    fleet.refresh(third)
    assert _drift_check('--from-report', _write(tmp_path / 'three', third), '--ledger', ledger, '--since-last') == 3
    assert 'db42 vm.swappiness: new' in capsys.readouterr().err


def test_drift_check_refuses_a_bad_waiver_file_and_since_last_without_ledger(tmp_path, capsys, monkeypatch):
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS'):
        monkeypatch.delenv(name, raising=False)
    folder = _write(tmp_path / 'r', report())
    (tmp_path / 'bad.yml').write_text('waivers:\n  - hosts: a\n    setting: b\n    reason: r\n    owner: o\n    expires: soon\n')
    assert _drift_check('--from-report', folder, '--waivers', str(tmp_path / 'bad.yml')) == 1
    assert "bad.yml line 6: expires 'soon' is not a date" in capsys.readouterr().err
    assert _drift_check('--from-report', folder, '--since-last') == 1
    assert '--since-last needs a ledger' in capsys.readouterr().err
    assert json.loads((tmp_path / 'r' / 'drift.json').read_text()) == report()


def test_a_report_whose_ledger_was_not_written_gives_no_verdict(tmp_path, capsys, monkeypatch):
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS'):
        monkeypatch.delenv(name, raising=False)
    document = report()
    document['ledger'] = {'location': '/nowhere/ledger.sqlite', 'scope': 'default',
                          'error': 'ledger /nowhere/ledger.sqlite: the folder /nowhere does not exist'}
    assert _drift_check('--from-report', _write(tmp_path / 'r', document)) == 1
    assert 'the folder /nowhere does not exist: no verdict' in capsys.readouterr().err
