# -*- coding: utf-8 -*-
"""Make the checkout importable as ansible_collections.dbhost.tuning for plain pytest,
and the fixtures every unit test may ask for.

ansible-test units does this itself; plain pytest needs a folder with the
ansible_collections/dbhost/tuning layout, made here as a symlink to the checkout.
Plain helper functions (put, read, write, digest, records) are in helpers.py beside
this file; plugins/modules/conftest.py adds run_module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import tempfile

import pytest

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


@pytest.fixture
def linux(monkeypatch):
    """The code under test sees a Linux host (``engine/platforms.py`` ``system()``), whatever this machine runs.

    A test file that runs on Linux throughout says ``pytestmark = pytest.mark.usefixtures('linux')``.
    """
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms as _platform
    monkeypatch.setattr(_platform, 'system', lambda: 'Linux')


@pytest.fixture(autouse=True)
def system_baseline(tmp_path_factory, monkeypatch):
    """A run with root / keeps its baseline (engine/baseline.py) in a temporary folder, never in
    this machine's /var/lib/dbhost-tuning; a fake tree keeps it under itself, as on a host."""
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine import baseline
    folder = []

    def place(root):
        if root != '/':
            return root
        if not folder:
            folder.append(str(tmp_path_factory.mktemp('system-baseline')))
        return folder[0]
    monkeypatch.setattr(baseline, 'place', place)
