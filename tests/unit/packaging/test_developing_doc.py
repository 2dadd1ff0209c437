# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/DEVELOPING.md's layer diagram names every file of plugins/module_utils.

The diagram is where a newcomer learns which file holds what; a file added without a word
there is one they will not find. Each file is named by its stem in its layer's paragraph, or,
inside a package of a plan (plans/db_parameter/ ...), in the paragraph of plans.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
UTILS = os.path.join(ROOT, 'plugins', 'module_utils')


def _diagram():
    """{layer: the diagram's text for it}, from the first code block after "## The layers"."""
    with open(os.path.join(ROOT, 'docs', 'DEVELOPING.md')) as handle:
        text = handle.read()
    section = text.split('## The layers', 1)[1]
    block = section.split('```', 2)[1]
    layers, current = {}, None
    for line in block.splitlines():
        match = re.match(r'^ ?([a-z_]+)/\s', line)
        if match:
            current = match.group(1)
        if current:
            layers[current] = layers.get(current, '') + ' ' + line
    return layers


def _files():
    for folder, dummy, names in os.walk(UTILS):
        for name in sorted(names):
            if name.endswith('.py') and name != '__init__.py':
                yield os.path.relpath(os.path.join(folder, name), UTILS)


@pytest.mark.parametrize('path', sorted(_files()))
def test_every_module_utils_file_is_in_the_layer_diagram(path):
    layers = _diagram()
    parts = path[:-len('.py')].split(os.sep)
    layer = parts[0]
    assert layer in layers, 'the layer diagram of docs/DEVELOPING.md has no %s/' % layer
    words = set(re.findall(r'[a-z_]+', layers[layer]))
    # a file of a subpackage (compile/, block_queue/...) is named by its package
    named = parts[1] if len(parts) > 2 else parts[-1]
    assert named in words, 'docs/DEVELOPING.md: the layer diagram does not name %s (%s/)' % (path, layer)
