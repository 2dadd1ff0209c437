# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/vmlab.py without a real VM: the qemu command line (two NUMA nodes), the image
cache key, the errors when qemu is missing or the VM never answers, and the teardown (no
qemu left running), with stand-in qemu, qemu-img and ssh programs on PATH."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import select
import stat

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SPEC = importlib.util.spec_from_file_location('vmlab', os.path.join(CHECKOUT, 'scripts', 'vmlab.py'))
vmlab = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(vmlab)

# A stand-in qemu: a process whose argv[0] is qemu-system-x86_64 and whose arguments hold
# the run folder (what stop() checks before it kills), writing a line to the console.
FAKE_QEMU = '''#!/bin/bash
for arg; do case "$arg" in file:*) echo "fake console: booting" > "${arg#file:}" ;; esac; done
exec -a qemu-system-x86_64 python3 -c 'import time; time.sleep(600)' "$@"
'''
FAKE_QEMU_IMG = '#!/bin/sh\nfor last; do :; done\n: > "$last"\n'


def executable(path, text):
    with open(path, 'w') as handle:
        handle.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A cache folder, an image folder and a bin folder first on PATH; returns (image, bin)."""
    image = tmp_path / 'image'
    image.mkdir()
    for name in ('root.img', 'vmlinuz', 'initrd.img', 'id_ed25519'):
        (image / name).write_text('')
    fake_bin = tmp_path / 'bin'
    fake_bin.mkdir()
    monkeypatch.setattr(vmlab, 'CACHE', str(tmp_path / 'cache'))
    monkeypatch.setenv('PATH', '%s:/usr/bin:/bin' % fake_bin)
    return str(image), str(fake_bin)


def test_two_numa_nodes_with_their_own_memory():
    argv = vmlab.qemu_argv('/img', '/run', 2222, 2048, 4)
    line = ' '.join(argv)
    assert '-accel tcg' in line
    assert '-smp 4,sockets=2,cores=2,threads=1' in line
    assert 'memory-backend-ram,id=mem0,size=1024M' in line and 'memory-backend-ram,id=mem1,size=1024M' in line
    assert 'node,nodeid=0,cpus=0-1,memdev=mem0' in line and 'node,nodeid=1,cpus=2-3,memdev=mem1' in line
    assert 'user,id=net0,hostfwd=tcp:127.0.0.1:2222-:22' in line
    assert line.count('if=virtio') == 2


def test_the_image_key_follows_the_package_list():
    assert vmlab.image_key('a,b') == vmlab.image_key('a,b')
    assert vmlab.image_key('a,b') != vmlab.image_key('a,b,c')


def test_qemu_missing_is_a_clear_error(lab, monkeypatch):
    image, fake_bin = lab
    monkeypatch.setenv('PATH', fake_bin)
    with pytest.raises(vmlab.LabError, match='qemu-system-x86_64 not found: apt-get install qemu-system-x86'):
        vmlab.start('t', image)


def alive_fakes(folder):
    found = []
    for pid in os.listdir('/proc'):
        if pid.isdigit() and vmlab.is_our_qemu(int(pid), folder):
            found.append(int(pid))
    return found


def test_a_vm_that_never_answers_is_stopped_with_the_console_tail(lab):
    image, fake_bin = lab
    executable(os.path.join(fake_bin, 'qemu-system-x86_64'), FAKE_QEMU)
    executable(os.path.join(fake_bin, 'qemu-img'), FAKE_QEMU_IMG)
    executable(os.path.join(fake_bin, 'ssh'), '#!/bin/sh\nexit 255\n')
    with pytest.raises(vmlab.LabError) as error:
        vmlab.start('t', image, ssh_wait=3)
    assert 'did not answer SSH' in str(error.value)
    assert 'fake console: booting' in str(error.value)
    assert alive_fakes(vmlab.run_dir('t')) == []
    assert not os.path.exists(os.path.join(vmlab.run_dir('t'), 'state.json'))


def test_the_vm_is_stopped_when_the_block_fails(lab):
    image, fake_bin = lab
    executable(os.path.join(fake_bin, 'qemu-system-x86_64'), FAKE_QEMU)
    executable(os.path.join(fake_bin, 'qemu-img'), FAKE_QEMU_IMG)
    executable(os.path.join(fake_bin, 'ssh'), '#!/bin/sh\nexit 0\n')
    with pytest.raises(RuntimeError, match='a step failed'):
        with vmlab.vm('t', image) as state:
            assert alive_fakes(state['folder']) == [state['pid']]
            raise RuntimeError('a step failed')
    assert alive_fakes(vmlab.run_dir('t')) == []


# A stand-in ssh for reboot: `systemctl reboot` writes a new boot id (the guest rebooted) unless
# STUCK is set, and answers 255 (the connection dropped); `cat .../boot_id` prints it.
FAKE_SSH_REBOOT = '''#!/bin/bash
echo "$*" >> "$SSH_LOG"
case "$*" in
  *"systemctl reboot") [ -n "$STUCK" ] || echo "boot-2" > "$BOOT_ID_FILE"; exit 255 ;;
  *boot_id) cat "$BOOT_ID_FILE" ;;
esac
'''


def started_lab(lab, monkeypatch, tmp_path):
    image, fake_bin = lab
    executable(os.path.join(fake_bin, 'qemu-system-x86_64'), FAKE_QEMU)
    executable(os.path.join(fake_bin, 'qemu-img'), FAKE_QEMU_IMG)
    executable(os.path.join(fake_bin, 'ssh'), FAKE_SSH_REBOOT)
    (tmp_path / 'boot_id').write_text('boot-1\n')
    monkeypatch.setenv('BOOT_ID_FILE', str(tmp_path / 'boot_id'))
    monkeypatch.setenv('SSH_LOG', str(tmp_path / 'ssh.log'))
    monkeypatch.setattr(vmlab.time, 'sleep', lambda seconds: None)
    state = vmlab.start('t', image)
    # The stand-in becomes "qemu" only once its `exec -a` has run; until then reboot() would
    # rightly find no qemu. Wait for it (select, since time.sleep is patched out above).
    deadline = vmlab.time.monotonic() + 60
    while not vmlab.is_our_qemu(state['pid'], state['folder']) and vmlab.time.monotonic() < deadline:
        select.select([], [], [], 0.05)
    return state


def test_reboot_waits_for_a_new_boot_id_and_keeps_the_vm(lab, monkeypatch, tmp_path):
    state = started_lab(lab, monkeypatch, tmp_path)
    try:
        assert vmlab.main(['reboot', '--name', 't']) == 0
        calls = (tmp_path / 'ssh.log').read_text().splitlines()
        reboot_at = [n for n, line in enumerate(calls) if line.endswith('systemctl reboot')]
        assert len(reboot_at) == 1 and calls[reboot_at[0] - 1].endswith('cat /proc/sys/kernel/random/boot_id')
        assert calls[-1].endswith('cat /proc/sys/kernel/random/boot_id')
        assert (tmp_path / 'boot_id').read_text() == 'boot-2\n'
        # the same qemu, the same state: ssh and down still find it
        assert alive_fakes(state['folder']) == [state['pid']]
        assert vmlab.read_state('t')['pid'] == state['pid']
    finally:
        vmlab.stop('t')
    assert alive_fakes(vmlab.run_dir('t')) == []


def test_reboot_that_never_comes_back_is_an_error(lab, monkeypatch, tmp_path):
    started_lab(lab, monkeypatch, tmp_path)
    monkeypatch.setenv('STUCK', '1')
    try:
        with pytest.raises(vmlab.LabError, match='did not come back with a new boot id within 0 s'):
            vmlab.reboot('t', timeout=0)
    finally:
        vmlab.stop('t')


def test_reboot_without_a_vm_says_how_to_start_one(lab):
    assert vmlab.main(['reboot', '--name', 'none']) == 2
    with pytest.raises(vmlab.LabError, match='no VM named none is running .*vmlab.py up --name none'):
        vmlab.reboot('none')
