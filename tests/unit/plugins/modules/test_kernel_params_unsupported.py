# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params on a kernel that cannot have a key: the record says unsupported and why.

A key with no /proc/sys entry (its module not loaded, another kernel version) and a
read-only /proc/sys (a container's) are never a failure and never drift: the live value is
left alone, the line is still persisted for a boot where the key can be set, and the
record's detail says both.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os
import subprocess

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read, records

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
HEADER = '# Managed by dbhost.tuning.kernel_params; local edits to these keys are overwritten.\n'
BRIDGE = 'net.bridge.bridge-nf-call-iptables'
# nothing loads br_netfilter early in these trees: said after the record's own detail
EARLY = ('; its /proc/sys entry comes with the br_netfilter module: systemd-sysctl cannot set it at boot unless '
         'br_netfilter is loaded early (list it in /etc/modules-load.d/*.conf)')

pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, 'proc/sys/kernel/shmmni', '4096\n')
    put(base, 'proc/sys/vm/swappiness', '60\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    return base


def proc_tree(root):
    """Every path under the tree's proc/sys: the live side, which must never grow."""
    found = []
    for folder, dirs, names in os.walk(os.path.join(root, 'proc')):
        found.extend(os.path.relpath(os.path.join(folder, name), root) for name in dirs + names)
    return sorted(found)


def test_missing_key_is_unsupported_persisted_and_idempotent(root, run_module):
    params = {BRIDGE: 0, 'kernel.shmmni': 8192}
    before, live_before = digest(root), proc_tree(root)
    check = run_module(kernel_params, {'params': params, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before
    assert check['changed'] is True and not check.get('failed')
    record = records(check)[BRIDGE]
    assert record['status'] == 'unsupported'
    assert record['desired'] == '0' and record['live'] is None
    assert record['detail'] == (
        'no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel (it appears once the br_netfilter '
        'module is loaded); not set live; would write it to %s for a boot where it can be set' % OUR_FILE + EARLY)
    assert records(check)['kernel.shmmni']['status'] == 'drift'
    assert '%s = 0\n' % BRIDGE in check['diff'][0]['after']

    applied = run_module(kernel_params, {'params': params, 'root': root})
    assert not applied.get('failed') and applied['changed'] is True
    assert records(applied)[BRIDGE]['status'] == 'unsupported'
    assert records(applied)[BRIDGE]['detail'].endswith('not set live; wrote it to %s for a boot where it can be set'
                                                       % OUR_FILE + EARLY)
    assert records(applied)['kernel.shmmni']['status'] == 'changed'
    # nothing made in the live tree; the line is in the file
    assert proc_tree(root) == live_before
    assert read(root, '/proc/sys/kernel/shmmni') == '8192'
    assert read(root, OUR_FILE) == HEADER + 'kernel.shmmni = 8192\n%s = 0\n' % BRIDGE

    after = digest(root)
    again = run_module(kernel_params, {'params': params, 'root': root})
    assert again['changed'] is False and digest(root) == after
    record = records(again)[BRIDGE]
    assert (record['status'], record['persisted']) == ('unsupported', '0')
    assert record['detail'].endswith('not set live; persisted by %s' % OUR_FILE + EARLY)
    assert records(again)['kernel.shmmni']['status'] == 'ok'
    check_again = run_module(kernel_params, {'params': params, 'root': root}, check_mode=True)
    assert check_again['changed'] is False and digest(root) == after


@pytest.mark.parametrize('key, reason', [
    ('kernel.msgmni', 'no /proc/sys/kernel/msgmni on this kernel (older or built without it)'),
    ('vm.swapiness', 'no /proc/sys/vm/swapiness on this kernel (a key of another kernel version, or a misspelt name?)'),
    ('net.netfilter.nf_conntrack_max', 'no /proc/sys/net/netfilter/nf_conntrack_max on this kernel (it appears once '
                                       'the nf_conntrack module is loaded)'),
])
def test_the_reason_names_the_module_or_the_spelling(root, run_module, key, reason):
    result = run_module(kernel_params, {'params': {key: 100}, 'root': root}, check_mode=True)
    record = records(result)[key]
    assert record['status'] == 'unsupported'
    assert record['detail'].startswith(reason + '; not set live')


def test_missing_key_without_persist_writes_nothing(root, run_module):
    before = digest(root)
    result = run_module(kernel_params, {'params': {BRIDGE: 1}, 'root': root, 'persist': False})
    assert result['changed'] is False and digest(root) == before
    assert records(result)[BRIDGE]['status'] == 'unsupported'
    assert records(result)[BRIDGE]['detail'].endswith('not set live; not persisted (persist: false)')


def test_missing_key_with_apply_false_is_persisted_as_usual(root, run_module):
    # apply: false manages the file only: the record follows the file, and says the key is missing here
    result = run_module(kernel_params, {'params': {BRIDGE: 1}, 'root': root, 'apply': False})
    record = records(result)[BRIDGE]
    assert record['status'] == 'changed'
    assert record['detail'].startswith('no /proc/sys/net/bridge/bridge-nf-call-iptables on this kernel')
    assert read(root, OUR_FILE) == HEADER + '%s = 1\n' % BRIDGE


def test_read_only_proc_sys_probe(root, monkeypatch, run_module):
    """/proc/sys mounted read-only (as podman and docker mount it): found before any write."""
    proc = os.path.join(root, 'proc', 'sys')
    real = sysfs.mounted_read_only
    monkeypatch.setattr(sysfs, 'mounted_read_only', lambda path: path.startswith(proc) or real(path))
    params = {'vm.swappiness': 10, 'kernel.shmmni': 4096}
    before = digest(root)
    check = run_module(kernel_params, {'params': params, 'root': root}, check_mode=True)
    assert digest(root) == before
    record = records(check)['vm.swappiness']
    assert (record['status'], record['live']) == ('unsupported', '60')
    assert record['detail'] == ('read-only /proc/sys (mounted read-only, as in a container); not set live; '
                                'would write it to %s for a boot where it can be set' % OUR_FILE)
    # a key that already has its value needs no write: ok, read-only or not
    assert records(check)['kernel.shmmni']['status'] == 'ok'
    applied = run_module(kernel_params, {'params': params, 'root': root})
    assert not applied.get('failed') and applied['changed'] is True
    assert records(applied)['vm.swappiness']['status'] == 'unsupported'
    assert read(root, '/proc/sys/vm/swappiness') == '60\n'
    assert read(root, OUR_FILE) == HEADER + 'vm.swappiness = 10\n'
    again = run_module(kernel_params, {'params': params, 'root': root})
    assert again['changed'] is False
    assert records(again)['vm.swappiness']['status'] == 'unsupported'


def _mount(argv):
    if os.geteuid() != 0:
        pytest.skip('mounting needs root (CI runs the unit stage as root)')
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        pytest.skip('%s: %s' % (' '.join(argv), done.stdout.decode().strip()))


@contextlib.contextmanager
def read_only(folder):
    """``folder`` bind-mounted read-only onto itself for the block."""
    _mount(['mount', '--bind', folder, folder])
    try:
        _mount(['mount', '-o', 'remount,bind,ro', folder])
        yield
    finally:
        subprocess.run(['umount', folder], check=True)


@pytest.mark.parametrize('probe', [True, False], ids=['probed', 'refused-on-write'])
def test_really_read_only_proc_sys(root, monkeypatch, run_module, probe):
    """A real read-only mount of the tree's proc/sys: the probe finds it, and a write refused
    with EROFS (a mount the probe could not see) is unsupported too, never failed."""
    if not probe:
        monkeypatch.setattr(sysfs, 'mounted_read_only', lambda path: False)
    with read_only(os.path.join(root, 'proc', 'sys')):
        result = run_module(kernel_params, {'params': {'vm.swappiness': 10}, 'root': root})
        assert not result.get('failed'), result
        record = records(result)['vm.swappiness']
        assert record['status'] == 'unsupported' and record['detail'].startswith('read-only /proc/sys (')
        assert read(root, '/proc/sys/vm/swappiness') == '60\n'
        assert read(root, OUR_FILE) == HEADER + 'vm.swappiness = 10\n'
