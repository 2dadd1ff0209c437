# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_params and the sysctl keys a kernel module brings: systemd-sysctl sets them at boot
only when the module is loaded before it, and the record says so when nothing loads it early."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import kernel_params
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import modules_load
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, records

CONNTRACK = 'net.netfilter.nf_conntrack_max'
BRIDGE = 'net.bridge.bridge-nf-call-iptables'
NOTE = ('its /proc/sys entry comes with the %s module: systemd-sysctl cannot set it at boot unless %s is loaded '
        'early (list it in /etc/modules-load.d/*.conf)')

pytestmark = pytest.mark.usefixtures('linux')


@pytest.fixture
def root(tmp_path):
    """Both modules loaded now (their /proc/sys entries exist), nothing loads them at boot."""
    base = str(tmp_path)
    put(base, '/proc/sys/net/netfilter/nf_conntrack_max', '65536\n')
    put(base, '/proc/sys/net/bridge/bridge-nf-call-iptables', '1\n')
    put(base, '/proc/sys/kernel/osrelease', '6.1.0-test\n')
    put(base, '/proc/sys/kernel/shmmni', '4096\n')
    os.makedirs(os.path.join(base, 'etc', 'sysctl.d'))
    return base


def run(run_module, root, params, check_mode=False):
    return records(run_module(kernel_params, {'params': params, 'root': root}, check_mode=check_mode))


def test_nothing_loads_the_module_early_is_said_and_check_mode_changes_nothing(root, run_module):
    before = digest(root)
    check = run(run_module, root, {CONNTRACK: 262144, BRIDGE: 0, 'kernel.shmmni': 4096}, check_mode=True)
    assert digest(root) == before
    assert check[CONNTRACK]['status'] == 'drift'
    assert check[CONNTRACK]['detail'] == 'would write /etc/sysctl.d/90-dbhost-tuning.conf; ' + NOTE % (
        'nf_conntrack', 'nf_conntrack')
    assert check[BRIDGE]['detail'].endswith(NOTE % ('br_netfilter', 'br_netfilter'))
    # a key no module brings gets no such note
    assert 'module' not in check['kernel.shmmni']['detail']

    applied = run(run_module, root, {CONNTRACK: 262144})
    assert applied[CONNTRACK]['status'] == 'changed'
    again = run(run_module, root, {CONNTRACK: 262144})
    assert again[CONNTRACK]['status'] == 'ok'
    assert again[CONNTRACK]['detail'] == NOTE % ('nf_conntrack', 'nf_conntrack')


@pytest.mark.parametrize('files', [
    {'/etc/modules-load.d/conntrack.conf': '# for the database firewall\nnf_conntrack\n'},
    {'/usr/lib/modules-load.d/netfilter.conf': '; shipped\nnf-conntrack\n'},
    {'/run/modules-load.d/ct.conf': 'nf_conntrack\n'},
    {'/etc/modules': '# /etc/modules: kernel modules to load at boot time.\nnf_conntrack hashsize=1024\n'},
    # loaded as a dependency of a module that is listed (modules.dep of the running kernel)
    {'/etc/modules-load.d/nat.conf': 'nf_nat\n',
     '/lib/modules/6.1.0-test/modules.dep': 'kernel/net/netfilter/nf_nat.ko.xz: kernel/net/netfilter/nf_conntrack.ko.xz '
                                            'kernel/lib/libcrc32c.ko.xz\nkernel/net/netfilter/nf_conntrack.ko.xz:\n'},
    # built into the kernel
    {'/usr/lib/modules/6.1.0-test/modules.builtin': 'kernel/net/netfilter/nf_conntrack.ko\n'},
    {'/sys/module/nf_conntrack/parameters/hashsize': '65536\n'},
    # named on the next boot's kernel command line
    {'/etc/kernel/cmdline': 'root=/dev/vda1 ro modules_load=br_netfilter,nf_conntrack\n'},
    # a udev rule runs sysctl whenever it loads
    {'/etc/udev/rules.d/99-conntrack.rules': 'ACTION=="add", SUBSYSTEM=="module", KERNEL=="nf_conntrack", '
                                             'RUN+="/usr/lib/systemd/systemd-sysctl --prefix=/net/netfilter"\n'},
])
def test_a_module_loaded_early_needs_no_note(root, run_module, files):
    for path, text in files.items():
        put(root, path, text)
    record = run(run_module, root, {CONNTRACK: 262144}, check_mode=True)[CONNTRACK]
    assert record['status'] == 'drift'
    assert record['detail'] == 'would write /etc/sysctl.d/90-dbhost-tuning.conf'


@pytest.mark.parametrize('files', [
    # the /usr/lib file is masked by a link to /dev/null in /etc
    {'/usr/lib/modules-load.d/netfilter.conf': 'nf_conntrack\n'},
    # a comment, another module, a module loaded only at run time (initstate: loadable)
    {'/etc/modules-load.d/other.conf': '#nf_conntrack\nbr_netfilter\n',
     '/sys/module/nf_conntrack/initstate': 'live\n'},
    # a udev rule for another module, or one that does not run sysctl
    {'/etc/udev/rules.d/99-x.rules': 'ACTION=="add", SUBSYSTEM=="module", KERNEL=="br_netfilter", RUN+="/sbin/sysctl -p"\n'
                                     'ACTION=="add", SUBSYSTEM=="module", KERNEL=="nf_conntrack", RUN+="/bin/true"\n'},
])
def test_a_module_not_loaded_early_is_noted(root, run_module, files):
    for path, text in files.items():
        put(root, path, text)
    if '/usr/lib/modules-load.d/netfilter.conf' in files:
        os.makedirs(os.path.join(root, 'etc', 'modules-load.d'))
        os.symlink('/dev/null', os.path.join(root, 'etc', 'modules-load.d', 'netfilter.conf'))
    record = run(run_module, root, {CONNTRACK: 262144}, check_mode=True)[CONNTRACK]
    assert record['detail'].endswith(NOTE % ('nf_conntrack', 'nf_conntrack'))


def test_not_persisted_no_note(root, run_module):
    result = run_module(kernel_params, {'params': {CONNTRACK: 65536}, 'root': root, 'persist': False})
    assert records(result)[CONNTRACK]['status'] == 'ok' and records(result)[CONNTRACK]['detail'] == ''


def test_parsers():
    assert modules_load.parse('# c\n; c\n\nbr-netfilter\n nf_conntrack  hashsize=1\n') == ['br_netfilter', 'nf_conntrack']
    assert modules_load.parse_cmdline([('modules_load', 'a,b-c'), ('rd.modules_load', 'd'), ('quiet', None)]) == \
        ['a', 'b_c', 'd']
    deps = modules_load.parse_modules_dep('kernel/a/nf_nat.ko.zst: kernel/b/nf_conntrack.ko.zst\nkernel/c/x.ko:\n')
    assert deps == {'nf_nat': {'nf_conntrack'}, 'x': set()}
    assert modules_load.loaded_by('nf_conntrack', {'nf_nat': 'f'}, deps) == 'nf_nat'
    assert modules_load.loaded_by('nf_conntrack', {'x': 'f'}, deps) is None
    assert modules_load.parse_builtin('kernel/net/bridge/br_netfilter.ko\n') == {'br_netfilter'}
