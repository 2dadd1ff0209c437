# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the argument spec of the options the modules share.

Their documentation is plugins/doc_fragments/common.py, one fragment per option; a module
that lists a fragment under ``extends_documentation_fragment`` takes the same option here, in its
argument spec in state/registry.py::

    argument_spec=dict(params=..., **shared_options('root', 'backup', 'fail_on_drift'))

so the type and default of ``root``, ``backup``, ``fail_on_shadowed`` and ``fail_on_drift``
are written once: scripts/gen_docs.py writes them into the fragments, and into each module's
``extends_documentation_fragment`` the fragments of its shared options
(tests/unit/plugins/module_utils/engine/test_options.py holds them to the fragments).

new_module() builds a module's AnsibleModule and turns what ansible-core's own type
conversion raises instead of failing (an infinite number for an int option, as YAML
``.inf`` or JSON ``1e309`` give) into a failure naming the option.  Pure Python.
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


def new_module(module_class, **kwargs):
    """``module_class(**kwargs)`` (an AnsibleModule), failing cleanly where Ansible raises.

    ansible-core converts an int option with ``int(Decimal(value))``, which raises
    OverflowError, not the TypeError it reports as a failure, for an infinite value: the
    task would end in a traceback naming no option.  Then the parameters are read again
    with every option taken as it is (``raw``), and the task fails naming each int option
    that holds an infinite number.
    """
    try:
        return module_class(**kwargs)
    except OverflowError:
        spec = kwargs.get('argument_spec') or {}
        taken_as_is = module_class(argument_spec=_raw_spec(spec), supports_check_mode=True)
        names = infinite_ints(taken_as_is.params, spec)
        taken_as_is.fail_json(msg='%s: not a finite whole number (an int option cannot be infinite)'
                              % (', '.join(names) or 'an int option'))
        raise  # fail_json exits; this is for a module_class that does not


def _raw_spec(spec):
    return dict((name, dict(type='raw', no_log=bool(rules.get('no_log')), aliases=rules.get('aliases') or []))
                for name, rules in spec.items())


def _is_infinite(value):
    if isinstance(value, float):
        return value in (float('inf'), float('-inf'))
    if isinstance(value, str):
        return value.strip().lstrip('+-').lower() in ('inf', 'infinity')
    return False


def infinite_ints(params, spec, prefix=''):
    """The names (``pages[0].count``) of the int options of ``spec`` whose value in ``params`` is infinite."""
    found = []
    for name, rules in sorted(spec.items()):
        value = (params or {}).get(name)
        if value is None:
            continue
        shown = prefix + name
        if rules.get('type') == 'int' and _is_infinite(value):
            found.append(shown)
        elif rules.get('options') and isinstance(value, dict):
            found.extend(infinite_ints(value, rules['options'], shown + '.'))
        elif rules.get('options') and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    found.extend(infinite_ints(item, rules['options'], '%s[%d].' % (shown, index)))
    return found
