# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""direct_io in check mode: not one byte of any file, not one live mount option changed."""

import importlib.util
import os

import pytest

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    'direct_io_expect', os.path.join(SCENARIO, '..', 'direct_io', 'tests', 'direct_io_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = expect.podman_hosts(SCENARIO)


@pytest.mark.parametrize('name', sorted(expect.FILES))
def test_file_unchanged(host, name):
    path = expect.FILES[name]
    assert host.file(path).content_string == expect.before(host, path)


@pytest.mark.parametrize('name', sorted(expect.FILES))
def test_file_not_rewritten(host, name):
    """The copy was made after the file: a rewrite in check mode would make the file newer."""
    path = expect.FILES[name]
    copy = '%s/%s.before' % (expect.STATE, os.path.basename(path))
    assert host.file(path).mtime <= host.file(copy).mtime


def test_live_options_unchanged(host):
    options = expect.live_options(host)
    assert 'noatime' not in options
    assert 'relatime' in options


def test_no_backup_or_temporary_files(host):
    for path in expect.FILES.values():
        folder = os.path.dirname(path)
        base = os.path.basename(path)
        extra = [name for name in host.file(folder).listdir()
                 if name.startswith(('.' + base, base + '.'))]
        assert extra == [], folder
