# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report files: drift.json rendered here, drift.xml, drift.md and drift.html by their modules, each written atomically."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import write_atomic
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.html_page import render_html
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.junit import render_junit
from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.markdown import render_markdown

FILE_NAMES = {'json': 'drift.json', 'junit': 'drift.xml', 'markdown': 'drift.md', 'html': 'drift.html'}


def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + '\n'


RENDERERS = {'json': render_json, 'junit': render_junit, 'markdown': render_markdown, 'html': render_html}


def write_reports(report, output_dir, formats):
    """Write the chosen formats into output_dir; returns the paths written."""
    os.makedirs(output_dir, exist_ok=True)
    written = []
    for fmt in ('json', 'junit', 'markdown', 'html'):
        if fmt in formats:
            path = os.path.join(output_dir, FILE_NAMES[fmt])
            write_atomic(path, RENDERERS[fmt](report))
            written.append(path)
    return written
