# -*- coding: utf-8 -*-
"""Make the checkout importable as ansible_collections.dbhost.tuning for plain pytest.

ansible-test units does this itself; plain pytest needs a folder with the
ansible_collections/dbhost/tuning layout, made here as a symlink to the checkout.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import tempfile

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collection_root():
    marker = os.path.join(CHECKOUT, '..', '..', '..', 'ansible_collections')
    if os.path.basename(os.path.dirname(os.path.dirname(CHECKOUT))) == 'ansible_collections':
        return os.path.abspath(os.path.join(marker, '..'))
    base = tempfile.mkdtemp(prefix='dbhost-tuning-pytest-')
    namespace = os.path.join(base, 'ansible_collections', 'dbhost')
    os.makedirs(namespace)
    os.symlink(CHECKOUT, os.path.join(namespace, 'tuning'))
    return base


if 'ansible_collections.dbhost.tuning' not in sys.modules:
    sys.path.insert(0, _collection_root())
