# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the argument spec of the options the modules share.

Their documentation is plugins/doc_fragments/common.py, one fragment per option; a module
that lists a fragment under ``extends_documentation_fragment`` takes the same option here::

    argument_spec=dict(params=..., **shared_options('root', 'backup', 'fail_on_drift'))

so the type and default of ``root``, ``backup``, ``fail_on_shadowed`` and ``fail_on_drift``
are written once (tests/unit/plugins/module_utils/test_options.py holds them to the
fragments).  Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# name: (argument spec, the doc fragment that documents it)
SHARED = {
    'root': (dict(type='path', default='/'), 'dbhost.tuning.common.root'),
    'backup': (dict(type='bool', default=False), 'dbhost.tuning.common.backup'),
    'fail_on_shadowed': (dict(type='bool', default=True), 'dbhost.tuning.common.shadowed'),
    'fail_on_drift': (dict(type='bool', default=False), 'dbhost.tuning.common'),
}


def shared_options(*names):
    """The argument spec entries of the shared options ``names`` (each a fresh dict)."""
    unknown = [name for name in names if name not in SHARED]
    if unknown:
        raise ValueError('not a shared option: %s (known: %s)' % (', '.join(unknown), ', '.join(sorted(SHARED))))
    return dict((name, dict(SHARED[name][0])) for name in names)
