# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the input checks every module shares.

- No string a module is given may hold a control, format, private-use, unassigned or
  surrogate character (Unicode categories C*) or a line or paragraph separator (Zl, Zp):
  every file the collection writes is line-based, and a NUL or a U+2028 in a value
  ends up splitting a line, or the kernel cuts the value short.
- A name (a sysctl key, a user, a service, a file name, a mount option) holds no space at
  all: neither the ASCII blank nor any other character ``str.isspace()`` or the Unicode
  separator categories (Z*) count, since the file formats split their fields on them.
- A path may hold the ASCII space (fstab writes it ``\\040``), and no other space.
- No value is a number that is not finite: a float infinity or NaN (YAML ``.inf``,
  ``.nan``), ``inf``, ``-inf`` or ``nan`` as text, or digits too large for a float
  (``1e309``, ``1e309MB``), whatever the option: each kind would otherwise convert it
  late, in its own way (an OverflowError, "cannot convert float infinity to integer").
  ``infinity`` and ``unlimited``, which limits take, are words, not numbers, and pass.
- ``root`` is an absolute path to an existing folder; an empty string is refused (it is
  not "/": a variable that came out empty is a mistake, not a wish to act on the host).

The checks raise InputError with a message naming the option.  check_params()
runs them over every option of a module (run_plan calls it before anything is read);
the plan classes call the single checks for the values they take apart themselves.
Pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re
import unicodedata

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError, rooted

_NAMED = {
    '\n': 'a newline',
    '\r': 'a carriage return',
    '\t': 'a tab',
    '\x00': 'a NUL byte',
    ' ': 'a space',
}


def describe(char):
    """How a refused character is shown: ``a newline``, ``U+00A0 (NO-BREAK SPACE)``."""
    if char in _NAMED:
        return _NAMED[char]
    name = unicodedata.name(char, '')
    category = unicodedata.category(char)
    if category == 'Cc':
        return 'a control character (U+%04X)' % ord(char)
    return 'U+%04X (%s)' % (ord(char), name or 'category %s' % category)


def _text_refuses(char):
    category = unicodedata.category(char)
    return category[0] == 'C' or category in ('Zl', 'Zp')


def _name_refuses(char):
    return char.isspace() or unicodedata.category(char)[0] in 'CZ'


def bad_character(text, name=True, allow=''):
    """The first character of ``text`` that it may not hold, or None.

    ``name``: refuse every space and separator too (else only C*, Zl and Zp).
    ``allow``: characters accepted anyway (a path's ASCII space, a value's tab).
    """
    refuses = _name_refuses if name else _text_refuses
    for char in text:
        if char not in allow and refuses(char):
            return char
    return None


def _refuse(option, value, char, secret=False):
    shown = 'the value' if secret else repr(value)
    raise InputError('%s: %s contains %s' % (option, shown, describe(char)))


def check_text(value, option, allow='\t', secret=False):
    """Free text (a value): no control character, no line or paragraph separator."""
    if isinstance(value, str):
        char = bad_character(value, name=False, allow=allow)
        if char is not None:
            _refuse(option, value, char, secret)
    return value


# A number as a value spells it: a sign, digits, a point, an exponent, then maybe a unit (MB, kB, %).
_NUMBER = re.compile(r'^\s*([+-]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*[A-Za-z%]*\s*$')
_NOT_FINITE = ('inf', '+inf', '-inf', 'nan', '+nan', '-nan')


def check_finite(value, option, secret=False):
    """A value that is a number is a finite one (InputError naming the option otherwise)."""
    number = None
    if isinstance(value, float):
        number = value
    elif isinstance(value, str):
        if value.strip().lower() in _NOT_FINITE:
            number = float('nan')
        else:
            match = _NUMBER.match(value)
            number = float(match.group(1).replace('_', '')) if match else None
    if number is not None and not math.isfinite(number):
        raise InputError('%s: %s is not a finite number (infinite, NaN, or too large for any setting); give a '
                         'finite value' % (option, 'the value' if secret else repr(value)))
    return value


def check_name(value, option, allow=''):
    """A name: no space of any kind, no control character, no separator."""
    if isinstance(value, str):
        char = bad_character(value, name=True, allow=allow)
        if char is not None:
            _refuse(option, value, char)
    return value


def check_path(value, option):
    """A path: as a name, except that the ASCII space is allowed."""
    return check_name(value, option, allow=' ')


def check_rooted(root, value, option):
    """A file an option names (None: not given): a path (check_path) that stays under ``root``
    when resolved there, links followed; why it does not is an InputError naming the option."""
    check_path(value, option)
    if value is not None:
        try:
            rooted(root, value)
        except PathError as exc:
            raise InputError('%s: %s' % (option, exc))
    return value


def check_root(root, option='root'):
    """``root`` must be an absolute path to an existing folder; returns it ('/' for None).

    An empty string is refused rather than read as '/': it is what an unset or mistyped
    variable gives (``root: "{{ image_root }}"``), and taking it for the running host
    would tune the host instead of the image.
    """
    if root is None:
        return '/'
    if root == '':
        raise InputError('%s: the empty string is not a folder (give / for the running system)' % (option,))
    if not isinstance(root, str):
        raise InputError('%s: %r is not a path' % (option, root))
    check_path(root, option)
    if not os.path.isabs(root):
        raise InputError('%s: %r is not an absolute path' % (option, root))
    if not os.path.exists(root):
        raise InputError('%s: %s does not exist' % (option, root))
    if not os.path.isdir(root):
        raise InputError('%s: %s is not a folder' % (option, root))
    return root


def check_tree(value, option, secret=False):
    """Every string in a nested value, dict keys (not even a tab there) and values, as text.

    The keys are names of things (sysctl keys, sysfs paths, parameters) that the plan
    classes check with their own, stricter rules and messages.
    """
    if isinstance(value, dict):
        for key, item in value.items():
            check_text(key, option, allow='')
            check_tree(item, '%s.%s' % (option, key), secret)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_tree(item, '%s[%d]' % (option, index), secret)
    else:
        check_text(value, option, secret=secret)
        check_finite(value, option, secret)
    return value


def check_params(params, spec, prefix=''):
    """Run the shared checks over a module's parameters, as AnsibleModule parsed them.

    ``spec`` is the argument_spec: ``type: path`` options are checked as paths, ``no_log``
    ones without showing their value, ``root`` as the root, everything else as text.
    """
    for option, value in sorted((params or {}).items()):
        if value is None or option.startswith('_'):
            continue
        rules = (spec or {}).get(option) or {}
        name = prefix + option
        if rules.get('options') and isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    check_params(item, rules['options'], '%s[%d].' % (name, index))
        elif rules.get('options') and isinstance(value, dict):
            check_params(value, rules['options'], name + '.')
        elif rules.get('type') == 'path' and isinstance(value, str):
            check_path(value, name)
        elif rules.get('type') == 'list' and rules.get('elements') == 'path' and isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                check_path(item, '%s[%d]' % (name, index))
        else:
            check_tree(value, name, secret=bool(rules.get('no_log')))
    if not prefix and 'root' in (spec or {}):
        check_root((params or {}).get('root'))
