# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.xml: the report as JUnit XML, one test suite per host and one test case per setting."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import xml.etree.ElementTree as ET

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import is_waived
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.records import UNREACHABLE, is_clean, is_unsupported
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.text import (
    desired_text, display_names, drift_message, format_value, unsupported_message)

# XML 1.0 cannot carry most control characters, even escaped.
_XML_INVALID = re.compile(u'[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]')


def _xml_text(value):
    return _XML_INVALID.sub(u'\ufffd', u'%s' % (value,))


def _element(parent, tag, **attributes):
    node = ET.SubElement(parent, tag) if parent is not None else ET.Element(tag)
    for key, value in attributes.items():
        node.set(key, _xml_text(value))
    return node


def _error_case(suite, host, error):
    """A failed or unreachable host: an error test case, so the host never reads as clean."""
    if error['kind'] == UNREACHABLE:
        name, message = 'host reachable', 'host unreachable'
    else:
        name, message = 'task succeeds: %s' % error['task'], 'task failed'
    case = _element(suite, 'testcase', name=name, classname=host)
    detail = _element(case, 'error', type=error['kind'],
                      message='%s: %s' % (message, format_value(error['msg'])) if error['msg'] else message)
    detail.text = _xml_text('task: %s\nmodule: %s\n%s' % (error['task'], error['module'], error['msg']))


def _setting_case(suite, host, record, name):
    """One setting's test case; returns the count it adds to: 'skipped', 'failures' or None (a pass)."""
    module = str(record.get('module') or '').rsplit('.', 1)[-1] or 'settings'
    case = _element(suite, 'testcase', name=name, classname='%s.%s' % (host, module))
    text = 'task: %s\nmodule: %s\ntarget: %s\n' % (
        record.get('task'), record.get('module'), format_value(record.get('target')))
    if record.get('item') is not None:
        text += 'item: %s\n' % format_value(record['item'])
    if record.get('detail'):
        text += 'detail: %s\n' % record['detail']
    if record.get('reason'):
        text += 'reason: %s\n' % record['reason']
    text += 'source: %s\n' % format_value(record.get('source'))
    if is_unsupported(record['status']):
        # Not applicable on this host: skipped with the reason, never a pass nor a failure.
        skipped = _element(case, 'skipped', message=unsupported_message(record))
        skipped.text = _xml_text(text + 'desired: %s\nlive: %s\npersisted: %s\n' % (
            desired_text(record), format_value(record.get('live')), format_value(record.get('persisted'))))
        return 'skipped'
    if is_waived(record):
        # Known drift accepted until its waiver's date: skipped with the waiver, not a failure.
        waiver = record['waiver']
        skipped = _element(case, 'skipped', message='waived until %s by %s: %s' % (
            waiver['expires'], waiver['owner'], waiver['reason']))
        skipped.text = _xml_text(text + 'status: %s\n' % record['status'])
        return 'skipped'
    if not is_clean(record['status']):
        failure = _element(case, 'failure', type=str(record['status']), message=drift_message(record))
        failure.text = _xml_text(text)
        return 'failures'
    out = _element(case, 'system-out')
    out.text = _xml_text(text + 'value: %s\n' % format_value(record.get('live')))
    return None


def render_junit(report):
    """JUnit XML: <testsuites> with one <testsuite> per host and one <testcase> per setting."""
    root = _element(None, 'testsuites', name='dbhost.tuning drift')
    totals = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
    for host, entry in sorted(report['hosts'].items()):
        suite = _element(root, 'testsuite', name=host, hostname=host)
        counts = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
        properties = _element(suite, 'properties')
        _element(properties, 'property', name='state', value=entry['state'])
        for error in entry['errors']:
            _error_case(suite, host, error)
            counts['tests'] += 1
            counts['errors'] += 1
        for record, name in zip(entry['settings'], display_names(entry['settings'])):
            counts['tests'] += 1
            counted = _setting_case(suite, host, record, name)
            if counted:
                counts[counted] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'
