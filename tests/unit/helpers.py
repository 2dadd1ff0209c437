# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers the unit tests share, written once.

Import them by their full name (the conftest next to this file makes the checkout
importable as ansible_collections.dbhost.tuning):

    from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records, write

The fixtures the tests share (a Linux platform whatever this machine runs, a module's
main() run with arguments) are in the conftest files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import subprocess

import pytest


def write(path, text):
    """Write ``text`` to the file ``path`` of this machine, making its folders."""
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)


def put(root, path, text):
    """Write ``text`` to ``path`` (as the managed system names it) under ``root``, making its folders."""
    write(os.path.join(root, path.lstrip('/')), text)


def read(root, path):
    """The text of ``path`` (as the managed system names it) under ``root``."""
    with open(os.path.join(root, path.lstrip('/'))) as handle:
        return handle.read()


def digest(root):
    """Every file's path, bytes and mode, every link's target and every folder's name under ``root``.

    Equal before and after a call means the call changed nothing under ``root``: no file
    written, made, removed or chmod-ed, no folder or link made.
    """
    sha = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        sha.update(('D %s\n' % os.path.relpath(folder, root)).encode())
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            sha.update(('F %s %o\n' % (os.path.relpath(path, root), os.lstat(path).st_mode)).encode())
            if os.path.islink(path):
                sha.update(os.readlink(path).encode())
            else:
                with open(path, 'rb') as handle:
                    sha.update(handle.read())
    return sha.hexdigest()


def records(result):
    """The records of a result by name: a module's JSON result (dicts) or a plan's ``Result`` (``Setting``s)."""
    if isinstance(result, dict):
        return dict((s['name'], s) for s in result['settings'])
    return dict((s.name, s) for s in result.settings)


# ------------------------------------------------------------ real database servers
def run(argv, data=None, environ=None):
    """Run ``argv`` (a server's client or tool) from ``/``: (rc, stdout, stderr), the module's runner shape."""
    env = dict(os.environ)
    env.update(environ or {})
    proc = subprocess.run(argv, input=data, env=env, capture_output=True, text=True, cwd='/', check=False)
    return proc.returncode, proc.stdout, proc.stderr


def server_unavailable(reason):
    """Skip, unless scripts/test.sh installed the servers (DBHOST_REQUIRE_DB_SERVERS=1): then fail."""
    if os.environ.get('DBHOST_REQUIRE_DB_SERVERS') == '1':
        pytest.fail('%s, although scripts/install-db-servers.sh installed the servers' % reason)
    pytest.skip(reason)
