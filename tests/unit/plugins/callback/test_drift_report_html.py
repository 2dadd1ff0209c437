# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.html in a real headless browser (Debian's chromium, installed by scripts/install-browser.sh):
the page renders, the counts its script computes equal drift.json's, the grid has one cell per
record coloured by status, the filters (set through the address's #fragment, as a shared link
does) show the hosts they should, the trend has one bar per ledger run, and it opens with no
network at all (a network namespace of its own). A skip is a failure under DBHOST_REQUIRE_BROWSER=1."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser

import pytest

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report import fleet, history, html_page

CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--no-first-run']
WAIVERS = '''waivers:
  - {hosts: "web*", setting: vm.swappiness, reason: known, owner: ops, expires: 2099-01-01}
  - {hosts: "db1", setting: kernel.shmmax, reason: old, owner: dba, expires: 2000-01-01}
'''


def chromium():
    found = shutil.which('chromium')
    if not found:
        if os.environ.get('DBHOST_REQUIRE_BROWSER') == '1':
            pytest.fail('chromium is not installed, although scripts/install-browser.sh ran')
        pytest.skip('chromium is not installed (scripts/install-browser.sh)')
    return found


def dump_dom(path, fragment='', offline=False):
    profile = tempfile.mkdtemp(prefix='dbhost-chromium-')
    try:
        command = [chromium()] + CHROMIUM_FLAGS + ['--user-data-dir=%s' % profile, '--dump-dom',
                                                   'file://%s%s' % (path, fragment)]
        if offline:
            command = ['unshare', '--net', '--'] + command
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert done.returncode == 0 and 'data-ready="1"' in done.stdout, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """What the test reads back from the dumped page: element texts by id, rows and cells."""

    def __init__(self, text):
        HTMLParser.__init__(self)
        self.texts, self.rows, self.cells, self.bars, self._id = {}, [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        hidden = 'display: none' in (attrs.get('style') or '')
        if tag == 'tr' and 'data-host' in attrs:
            self.rows.append((attrs['data-host'], not hidden))
        elif tag == 'td' and 'data-status' in attrs:
            self.cells.append((self.rows[-1][0], attrs['data-status'], not hidden))
        elif tag == 'rect':
            self.bars.append(int(attrs['data-drifted']))
        self._id = attrs.get('id')

    def handle_data(self, data):
        if self._id and self._id not in self.texts:
            self.texts[self._id] = data


def fleet_report(finished, drifted_live, retired=False):
    statuses = {'db1': [('kernel.shmmax', 'drift'), ('vm.swappiness', 'ok')],
                'db2': [('kernel.shmmax', 'ok'), ('vm.swappiness', 'ok')],
                'web1': [('vm.swappiness', 'drift'), ('kernel.shmmax', 'unsupported')],
                'web2': [('vm.swappiness', 'drift'), ('vm.dirty_ratio', 'drift')]}
    groups = {'db1': ['db'], 'db2': ['db'], 'web1': ['web'], 'web2': ['web']}
    report = {'schema_version': 2, 'clean_statuses': ['ok', 'unsupported'], 'started': finished, 'finished': finished,
              'playbooks': ['drift.yml'], 'hosts': {}}
    for host, records in statuses.items():
        report['hosts'][host] = {'errors': [], 'groups': groups[host], 'settings': [
            {'name': name, 'target': None, 'status': status, 'desired': 1, 'live': drifted_live if status == 'drift' else 1,
             'persisted': 1, 'source': 'test <b>source</b>', 'reason': None if status == 'ok' else 'differs',
             'detail': None} for name, status in records]}
    if retired:
        report['hosts']['db9'] = {'errors': [], 'groups': ['db'], 'settings': []}
    report['hosts']['db3'] = {'errors': [{'kind': 'unreachable', 'task': 't', 'module': None, 'ignored': False,
                                          'msg': 'no route'}], 'groups': ['db'], 'settings': []}
    return fleet.refresh(report)


@pytest.fixture(scope='module')
def page(tmp_path_factory):
    chromium()
    base = tmp_path_factory.mktemp('html')
    (base / 'waivers.yml').write_text(WAIVERS)
    ledger = str(base / 'ledger.sqlite')
    for day, live in ((1, 2), (2, 2)):
        report = history.place_in_history(fleet_report('2026-12-0%dT00:00:00+00:00' % day, live, retired=True), ledger=ledger,
                                          waivers=str(base / 'waivers.yml'), today=datetime.date(2026, 12, 7))
    report = history.place_in_history(fleet_report('2026-12-03T00:00:00+00:00', 3), ledger=ledger,
                                      waivers=str(base / 'waivers.yml'), today=datetime.date(2026, 12, 7))
    path = str(base / 'drift.html')
    with open(path, 'w') as stream:
        stream.write(html_page.render_html(report))
    return {'path': path, 'report': report}


def test_the_page_is_self_contained(page):
    with open(page['path']) as stream:
        text = stream.read()
    assert not re.search(r'(src|href)\s*=|https?://|@import|url\(', text.split('<script type="application/json"')[0])
    assert "default-src 'none'" in text
    # A value cannot end the data's script element.
    assert '<b>source</b>' not in text
    # db9 was in the run before, not in this one.
    assert '<span id="hosts-gone">Hosts in the last run but not in this one: db9.</span>' in text


def test_counts_equal_the_reports(page):
    dom = Dom(dump_dom(page['path']))
    summary = page['report']['summary']
    for key in ('hosts', 'clean', 'drift', 'failed', 'unreachable', 'settings', 'drifted', 'waived', 'unsupported'):
        assert int(dom.texts['count-' + key]) == summary.get(key, 0), key
    assert summary['waived'] == 2 and summary['drifted'] == 2 and summary['settings'] == 8
    statuses = sorted(status for host, status, shown in dom.cells if status != 'none')
    assert statuses == sorted(['expired', 'ok', 'ok', 'ok', 'waived', 'unsupported', 'waived', 'drift'])
    assert [host for host, shown in dom.rows] == ['db1', 'db2', 'db3', 'web1', 'web2'] and all(s for h, s in dom.rows)
    assert dom.bars == [run['drifted'] for run in page['report']['ledger']['trend']] and len(dom.bars) == 3


@pytest.mark.parametrize('fragment, hosts, cells', [
    ('#status=drift', ['web2'], 1),
    ('#status=waived', ['web1', 'web2'], 2),
    ('#status=expired', ['db1'], 1),
    ('#group=db', ['db1', 'db2', 'db3'], 4),
    ('#group=web&setting=dirty', ['web2'], 1),
    ('#setting=shmmax', ['db1', 'db2', 'web1'], 3),
])
def test_filters_show_what_they_should(page, fragment, hosts, cells):
    dom = Dom(dump_dom(page['path'], fragment))
    assert [host for host, shown in dom.rows if shown] == hosts
    assert int(dom.texts['shown-hosts']) == len(hosts) and int(dom.texts['shown-cells']) == cells


def test_it_opens_offline(page):
    if os.geteuid() != 0 or not shutil.which('unshare'):
        pytest.skip('a network namespace needs root and unshare')
    online = Dom(dump_dom(page['path']))
    offline = Dom(dump_dom(page['path'], offline=True))
    assert offline.texts == online.texts and offline.cells == online.cells


def test_a_cells_record_opens_as_on_a_click(page):
    text = dump_dom(page['path'], '#cell=db1%7Ckernel.shmmax')
    detail = re.search(r'<div id="detail" class="pinned" style="display: block;">(.*?)</div>', text, re.S).group(1)
    # The live value went from 2 to 3 in the third run: still drifted, another value.
    assert detail.splitlines()[:5] == ['db1', 'kernel.shmmax', 'status: drift (changed)', 'desired: 1', 'live: 3'], detail
    assert 'drifted since 2026-12-01T00:00:00+00:00 (3 runs)' in detail
    assert 'waiver EXPIRED on 2000-01-01 by dba: old' in detail
    assert 'source: test &lt;b&gt;source&lt;/b&gt;' in detail
