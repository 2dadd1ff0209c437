# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sysctl')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


@pytest.mark.parametrize('name, dotted, path', [
    ('kernel.shmmax', 'kernel.shmmax', 'kernel/shmmax'),
    ('kernel/shmmax', 'kernel.shmmax', 'kernel/shmmax'),
    ('  kernel.sem ', 'kernel.sem', 'kernel/sem'),
    ('net/ipv4/conf/eth0.100/forwarding', 'net.ipv4.conf.eth0/100.forwarding', 'net/ipv4/conf/eth0.100/forwarding'),
    ('net.ipv4.conf.eth0/100.forwarding', 'net.ipv4.conf.eth0/100.forwarding', 'net/ipv4/conf/eth0.100/forwarding'),
])
def test_names_have_one_canonical_form(name, dotted, path):
    assert sysctl.canonical_name(name) == dotted
    assert sysctl.proc_path(name) == path


@pytest.mark.parametrize('name, message', [
    ('', 'empty'),
    ('/proc/sys/kernel/shmmax', 'absolute'),
    ('kernel/../../etc/passwd', '".."'),
    ('kernel..shmmax', 'empty'),
    ('kernel.shm max', 'characters'),
    ('kernel.shmmax\n', 'characters'),
])
def test_bad_names_are_refused_by_name(name, message):
    with pytest.raises(sysctl.SysctlNameError) as error:
        sysctl.validate_name(name)
    assert message in str(error.value)
    assert repr(name) in str(error.value) or repr(name.strip()) in str(error.value)


@pytest.mark.parametrize('value, normalized', [
    ('250  32000\t100 128\n', '250 32000 100 128'),
    ([250, 32000, 100, 128], '250 32000 100 128'),
    (4096, '4096'),
    (True, '1'),
])
def test_values_compare_as_the_kernel_sees_them(value, normalized):
    assert sysctl.normalize_value(value) == normalized


@pytest.mark.parametrize('name', ['debian-sysctl.conf', 'el-50-default.conf'])
def test_round_trip_without_changes_is_byte_identical(name):
    text = fixture(name)
    assert sysctl.render(text, {}) == text


def test_debian_file_values_comments_ignored():
    values = sysctl.values_of(fixture('debian-sysctl.conf'))
    assert values == {'kernel.shmmni': '8192', 'vm.swappiness': '10'}


def test_el_file_globs_dashes_and_slashes():
    parsed = sysctl.parse(fixture('el-50-default.conf'))
    keys = [a.key for a in parsed]
    assert 'net.ipv4.conf.*.rp_filter' in keys
    assert 'kernel.yama.ptrace_scope' in keys
    assert 'net.ipv4.conf.eth0/100.forwarding' in keys
    ping = [a for a in parsed if a.key == 'net.ipv4.ping_group_range'][0]
    assert ping.ignore_failure and ping.value == '0 2147483647'
    assert [a for a in parsed if a.key == 'net.ipv4.conf.*.rp_filter'][0].glob


def test_render_updates_in_place_keeping_spacing_and_comments():
    text = fixture('debian-sysctl.conf')
    after = sysctl.render(text, {'vm.swappiness': '1', 'kernel.shmmni': '4096'})
    before_lines, after_lines = text.splitlines(), after.splitlines()
    assert len(before_lines) == len(after_lines)
    changed = [(b, a) for b, a in zip(before_lines, after_lines) if b != a]
    assert changed == [('kernel.shmmni=8192', 'kernel.shmmni=4096'),
                       ('\tvm.swappiness\t=\t10', '\tvm.swappiness\t=\t1')]


def test_render_appends_new_keys_sorted_and_drops_duplicates():
    text = '# mine\nkernel.shmmni = 1\nfs.file-max = 2\nkernel.shmmni = 3\n'
    after = sysctl.render(text, {'kernel.shmmni': '4096', 'kernel.sem': '250 32000 100 128', 'fs.aio-max-nr': '5'})
    assert after == ('# mine\nfs.file-max = 2\nkernel.shmmni = 4096\n'
                     'fs.aio-max-nr = 5\nkernel.sem = 250 32000 100 128\n')


def test_render_removes_keys_and_new_file_gets_header():
    assert sysctl.render('a.b = 1\n# keep\nc.d = 2\n', {'a.b': None}) == '# keep\nc.d = 2\n'
    assert sysctl.render(None, {'x.y': '1'}, header='# head') == '# head\nx.y = 1\n'
    assert sysctl.render(None, {'x.y': None}, header='# head') is None


def _write(root, path, text):
    full = os.path.join(root, path.lstrip('/'))
    if not os.path.isdir(os.path.dirname(full)):
        os.makedirs(os.path.dirname(full))
    with open(full, 'w') as handle:
        handle.write(text)
    return full


def _winner(root, key, extra=None, extra_text=None):
    files = []
    for shown, local in sysctl.boot_files(root, extra=extra):
        if shown == extra and extra_text is not None:
            files.append((shown, extra_text))
        else:
            with open(local) as handle:
                files.append((shown, handle.read()))
    exact, globs = sysctl.effective_values(files)
    return sysctl.winner(exact, globs, key)


def test_precedence_lexical_order_across_folders(tmp_path):
    root = str(tmp_path)
    _write(root, '/usr/lib/sysctl.d/50-default.conf', 'kernel.shmmni = 100\n')
    _write(root, '/etc/sysctl.d/90-dbhost-tuning.conf', 'kernel.shmmni = 4096\n')
    _write(root, '/run/sysctl.d/95-runtime.conf', 'kernel.shmmni = 200\n')
    assert _winner(root, 'kernel.shmmni') == ('200', '/run/sysctl.d/95-runtime.conf')
    _write(root, '/etc/sysctl.d/99-other.conf', 'kernel/shmmni = 300\n')
    assert _winner(root, 'kernel.shmmni') == ('300', '/etc/sysctl.d/99-other.conf')


def test_precedence_earlier_folder_masks_same_name(tmp_path):
    root = str(tmp_path)
    _write(root, '/usr/lib/sysctl.d/99-vendor.conf', 'vm.swappiness = 60\n')
    _write(root, '/lib/sysctl.d/99-vendor.conf', 'vm.swappiness = 70\n')
    assert _winner(root, 'vm.swappiness') == ('60', '/usr/lib/sysctl.d/99-vendor.conf')
    _write(root, '/etc/sysctl.d/99-vendor.conf', '# emptied by the admin\n')
    assert _winner(root, 'vm.swappiness') == (None, None)


def test_precedence_dev_null_link_disables(tmp_path):
    root = str(tmp_path)
    _write(root, '/usr/lib/sysctl.d/50-coredump.conf', 'kernel.core_pattern = |/bin/false\n')
    os.makedirs(os.path.join(root, 'etc', 'sysctl.d'))
    os.symlink('/dev/null', os.path.join(root, 'etc', 'sysctl.d', '50-coredump.conf'))
    assert _winner(root, 'kernel.core_pattern') == (None, None)


def test_our_own_file_masked_is_not_read_at_boot(tmp_path):
    """A link to /dev/null masks our file like any other: the text we would write there is
    not what boot applies, so the boot value is the vendor's."""
    root = str(tmp_path)
    ours = '/etc/sysctl.d/90-dbhost-tuning.conf'
    _write(root, '/usr/lib/sysctl.d/50-default.conf', 'vm.swappiness = 60\n')
    _write(root, '/etc/sysctl.d/10-unrelated.conf', 'kernel.panic = 10\n')
    os.symlink('/dev/null', os.path.join(root, ours.lstrip('/')))
    assert [shown for shown, local in sysctl.boot_files(root, extra=ours)] == [
        '/etc/sysctl.d/10-unrelated.conf', '/usr/lib/sysctl.d/50-default.conf']
    assert _winner(root, 'vm.swappiness', extra=ours, extra_text='vm.swappiness = 10\n') == (
        '60', '/usr/lib/sysctl.d/50-default.conf')
    # The same name in /usr/lib is masked too: a masked name hides every later folder's file.
    _write(root, '/usr/lib/sysctl.d/90-dbhost-tuning.conf', 'vm.swappiness = 20\n')
    assert _winner(root, 'vm.swappiness', extra=ours, extra_text='vm.swappiness = 10\n') == (
        '60', '/usr/lib/sysctl.d/50-default.conf')


def test_sysctl_conf_applies_last_unless_linked(tmp_path):
    root = str(tmp_path)
    _write(root, '/etc/sysctl.d/99-zz.conf', 'vm.swappiness = 5\n')
    _write(root, '/etc/sysctl.conf', 'vm.swappiness = 1\n')
    assert _winner(root, 'vm.swappiness') == ('1', '/etc/sysctl.conf')
    # Debian links 99-sysctl.conf to ../sysctl.conf: read once, in its place in the order.
    os.symlink('../sysctl.conf', os.path.join(root, 'etc', 'sysctl.d', '99-sysctl.conf'))
    assert _winner(root, 'vm.swappiness') == ('5', '/etc/sysctl.d/99-zz.conf')


def _systemd_init(root):
    os.makedirs(os.path.join(root, 'sbin'))
    os.symlink('/lib/systemd/systemd', os.path.join(root, 'sbin', 'init'))


def test_systemd_reads_sysctl_conf_only_through_a_link(tmp_path):
    """systemd-sysctl never reads /etc/sysctl.conf itself (Debian 13 ships no 99-sysctl.conf
    link): there the boot value of a key it sets is another file's, or the kernel's."""
    root = str(tmp_path)
    _systemd_init(root)
    assert sysctl.systemd_applies_sysctl(root)
    _write(root, '/etc/sysctl.d/90-dbhost-tuning.conf', 'vm.swappiness = 10\n')
    _write(root, '/etc/sysctl.conf', 'vm.swappiness = 1\nkernel.msgmni = 2048\n')
    assert _winner(root, 'vm.swappiness') == ('10', '/etc/sysctl.d/90-dbhost-tuning.conf')
    assert _winner(root, 'kernel.msgmni') == (None, None)
    assert [shown for shown, local in sysctl.boot_files(root)] == ['/etc/sysctl.d/90-dbhost-tuning.conf']
    # Debian 12's link: read once, in its place in the order (after 90-, before a later name).
    os.symlink('../sysctl.conf', os.path.join(root, 'etc', 'sysctl.d', '99-sysctl.conf'))
    _write(root, '/etc/sysctl.d/99-zz-late.conf', 'kernel.msgmni = 8192\n')
    assert _winner(root, 'vm.swappiness') == ('1', '/etc/sysctl.d/99-sysctl.conf')
    assert _winner(root, 'kernel.msgmni') == ('8192', '/etc/sysctl.d/99-zz-late.conf')


def test_without_systemd_sysctl_conf_applies_last(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, 'sbin'))
    os.symlink('/bin/busybox', os.path.join(root, 'sbin', 'init'))
    assert not sysctl.systemd_applies_sysctl(root)
    _write(root, '/etc/sysctl.d/90-dbhost-tuning.conf', 'vm.swappiness = 10\n')
    _write(root, '/etc/sysctl.conf', 'vm.swappiness = 1\n')
    assert _winner(root, 'vm.swappiness') == ('1', '/etc/sysctl.conf')


def test_exact_key_beats_glob_wherever_it_is(tmp_path):
    root = str(tmp_path)
    _write(root, '/etc/sysctl.d/10-exact.conf', 'net.ipv4.conf.all.rp_filter = 1\n')
    _write(root, '/etc/sysctl.d/90-glob.conf', 'net.ipv4.conf.*.rp_filter = 2\n')
    assert _winner(root, 'net.ipv4.conf.all.rp_filter') == ('1', '/etc/sysctl.d/10-exact.conf')
    assert _winner(root, 'net.ipv4.conf.eth0.rp_filter') == ('2', '/etc/sysctl.d/90-glob.conf')


def test_planned_file_counts_before_it_exists(tmp_path):
    root = str(tmp_path)
    _write(root, '/usr/lib/sysctl.d/50-default.conf', 'kernel.shmmni = 100\n')
    assert _winner(root, 'kernel.shmmni', extra='/etc/sysctl.d/90-dbhost-tuning.conf',
                   extra_text='kernel.shmmni = 4096\n') == ('4096', '/etc/sysctl.d/90-dbhost-tuning.conf')
