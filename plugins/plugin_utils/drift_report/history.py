# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run's report put in its history: a run id and the collection's version, the waivers applied,
the run appended to the ledger, each record marked against the run before, and the trend of drift
counts. What the drift_report callback and scripts/drift-check (merge, --from-report) both do."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import re
import uuid

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import mark_report, refresh, setting_keys, since_last_lines
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.ledger import LedgerError, open_ledger
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.waivers import WaiverError, apply_waivers, load_waivers, waiver_lines

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEFAULT_SCOPE = 'default'


def collection_version(root=COLLECTION_ROOT):
    """This collection's version: MANIFEST.json of an installed collection, else galaxy.yml of a checkout."""
    try:
        with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as stream:
            return str(json.load(stream)['collection_info']['version'])
    except (IOError, OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as stream:
            found = re.search(r'^version:\s*["\']?([^"\'\s#]+)', stream.read(), re.MULTILINE)
    except (IOError, OSError):
        return None
    return found.group(1) if found else None


def new_run_id(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return '%s-%s' % (now.strftime('%Y%m%dT%H%M%SZ'), uuid.uuid4().hex[:12])


def place_in_history(report, ledger=None, waivers=None, scope=DEFAULT_SCOPE, today=None, recorded_by='callback'):
    """Complete a drift.json document in place.  ``waivers``: a waiver file's path; ``ledger``: a
    ledger spec (ledger.open_ledger).  A waiver file or a ledger that cannot be used is said in the
    report (``waivers.error``, ``ledger.error``): drift-check then gives no verdict."""
    report.setdefault('run_id', new_run_id())
    report.setdefault('collection_version', collection_version())
    if waivers:
        today = today or datetime.datetime.now(datetime.timezone.utc).date()
        try:
            apply_waivers(report, load_waivers(waivers), today, waivers)
        except WaiverError as exc:
            report['waivers'] = {'file': waivers, 'error': str(exc)}
        refresh(report)
    if ledger:
        try:
            store = open_ledger(ledger)
            store.append(report, scope, setting_keys, recorded_by)
            previous, records = store.previous(report['run_id'])
            mark_report(report, previous, records)
            report['ledger'] = {'location': store.describe(), 'scope': scope, 'trend': store.trend(scope)}
        except LedgerError as exc:
            report['ledger'] = {'location': ledger, 'scope': scope, 'error': str(exc)}
    return report


def problems(report):
    """Why a report's history is incomplete (a bad waiver file, a ledger not written), or []."""
    return [report[part]['error'] for part in ('waivers', 'ledger')
            if isinstance(report.get(part), dict) and report[part].get('error')]


def history_lines(report):
    """(line, is_problem) pairs for the end of the run: the run-to-run view, what the waivers did,
    and a waiver file or ledger that could not be used."""
    lines = [(problem, True) for problem in problems(report)]
    lines.extend((line, False) for line in since_last_lines(report))
    lines.extend((line, line.startswith('waiver EXPIRED')) for line in waiver_lines(report))
    return lines
