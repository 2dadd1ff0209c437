# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VM lab: a Debian 12 virtual machine with two NUMA nodes, booted with qemu (TCG).

  build         build the disk image from Debian's packages (scripts/vmlab-image.sh), or
                reuse the one cached under .cache/vmlab/image-<key>, the key being a hash
                of the package list and the image script; prints its folder
  up            boot a VM (4 vCPUs on 2 NUMA nodes, --memory MiB split between them, the
                image as /dev/vda through a throwaway overlay, an empty second disk
                /dev/vdb, SSH forwarded to 127.0.0.1:<free port>), wait for SSH, print how
                to log in and leave it running
  ssh           log into a running VM, or run a command there: vmlab.py ssh [-- CMD...]
  reboot        reboot a running VM from inside (systemctl reboot) and wait until it answers
                SSH again with a new boot id; the disks and the VM's state are kept
  down          stop a VM (by the pid it was started with) and remove its disks
  run-scenario  build, boot, run tests/vm/run_scenario.py against the VM, and tear down
                whatever happens (the lab's own test: tune, reboot, verify)

Every VM has a name (--name, default "lab"); its files are in .cache/vmlab/run/<name>/:
state.json (pid, port, key), console.log (the serial console), the overlay and data disks.
qemu missing, a VM that dies or never answers SSH: the error says so with the console's
last lines. `up` leaves the VM running for `ssh`, `reboot` and `down`; everything else stops the VMs
it started, on success, failure, Ctrl-C or SIGTERM alike.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(os.environ.get('DBHOST_CACHE') or os.path.join(ROOT, '.cache'), 'vmlab')
IMAGE_SCRIPT = os.path.join(ROOT, 'scripts', 'vmlab-image.sh')
QEMU = 'qemu-system-x86_64'
# What the image holds over minbase: booting (systemd, udev, the kernel), reboots
# through logind (dbus, libpam-systemd: without them `shutdown` cannot reach the bus),
# SSH and Python for Ansible, and what the tests read or run (tuned: the TuneD phase,
# tests/vm/tuned_phase.py; the image keeps tuned.service disabled until that phase enables it;
# mariadb-server: the effect phase, tests/vm/effect_phase.py, which starts it: prepare.sh
# disables it at boot).
PACKAGES = ('systemd-sysv,dbus,libpam-systemd,linux-image-amd64,openssh-server,python3,'
            'udev,kmod,e2fsprogs,numactl,iproute2,procps,postgresql,tuned,mariadb-server')
SSH_WAIT = int(os.environ.get('DBHOST_VMLAB_SSH_WAIT', '900'))
# No KVM inside the guest (-cpu max offers SVM/VMX; loading kvm only costs boot time).
KERNEL_ARGS = ('root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=10 mitigations=off '
               'modprobe.blacklist=kvm,kvm_amd,kvm_intel')


class LabError(Exception):
    """A lab step failed; the message says which and why."""


def log(message):
    sys.stderr.write('[%s] vmlab: %s\n' % (time.strftime('%H:%M:%S'), message))
    sys.stderr.flush()


def tail(path, lines=40):
    try:
        with open(path, 'rb') as handle:
            text = handle.read().decode('utf-8', 'replace')
    except OSError:
        return '(no console log at %s)' % path
    kept = [line.rstrip('\r') for line in text.splitlines()[-lines:]]
    return '\n'.join(kept) or '(the console log is empty)'


# ---------------------------------------------------------------------------- image

def image_key(packages):
    digest = hashlib.sha256()
    digest.update(packages.encode())
    with open(IMAGE_SCRIPT, 'rb') as handle:
        digest.update(handle.read())
    digest.update(os.environ.get('DBHOST_VMLAB_SUITE', 'bookworm').encode())
    return digest.hexdigest()[:16]


def build(packages=PACKAGES):
    """The image folder for ``packages`` (root.img, vmlinuz, initrd.img, the SSH key), built when missing."""
    folder = os.path.join(CACHE, 'image-' + image_key(packages))
    if all(os.path.exists(os.path.join(folder, name)) for name in ('root.img', 'vmlinuz', 'initrd.img', 'id_ed25519')):
        log('image cached: %s' % folder)
        return folder
    for tool in ('mmdebstrap', 'mkfs.ext4', 'ssh-keygen'):
        if not shutil.which(tool):
            raise LabError('%s not found; scripts/install-test-deps.sh --vm installs what the lab needs' % tool)
    os.makedirs(folder, exist_ok=True)
    key = os.path.join(folder, 'id_ed25519')
    for stale in (key, key + '.pub'):
        if os.path.exists(stale):
            os.unlink(stale)
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'dbhost-vmlab', '-f', key], check=True)
    start = time.time()
    log('building the image in %s (a few minutes)' % folder)
    result = subprocess.run(['bash', IMAGE_SCRIPT, folder, packages, key + '.pub'], check=False)
    if result.returncode != 0:
        raise LabError('the image build failed (exit %d): scripts/vmlab-image.sh %s' % (result.returncode, folder))
    log('image built in %d s' % (time.time() - start))
    return folder


# ---------------------------------------------------------------------------- VMs

def free_port():
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def run_dir(name):
    return os.path.join(CACHE, 'run', name)


def ssh_argv(state, user='root'):
    return ['ssh', '-i', state['key'], '-p', str(state['port']),
            '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
            '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=20',
            '-o', 'ServerAliveInterval=15', '%s@127.0.0.1' % user]


def qemu_argv(image, folder, port, memory, cpus):
    half = memory // 2
    node_cpus = cpus // 2
    argv = [QEMU, '-accel', 'tcg,thread=multi', '-cpu', 'max', '-machine', 'pc',
            '-m', '%dM' % memory, '-smp', '%d,sockets=2,cores=%d,threads=1' % (cpus, node_cpus),
            '-object', 'memory-backend-ram,id=mem0,size=%dM' % half,
            '-object', 'memory-backend-ram,id=mem1,size=%dM' % (memory - half),
            '-numa', 'node,nodeid=0,cpus=0-%d,memdev=mem0' % (node_cpus - 1),
            '-numa', 'node,nodeid=1,cpus=%d-%d,memdev=mem1' % (node_cpus, cpus - 1),
            '-kernel', os.path.join(image, 'vmlinuz'), '-initrd', os.path.join(image, 'initrd.img'),
            '-append', KERNEL_ARGS,
            '-drive', 'file=%s,if=virtio,format=qcow2,cache=unsafe' % os.path.join(folder, 'root.qcow2'),
            '-drive', 'file=%s,if=virtio,format=raw,cache=none,aio=threads' % os.path.join(folder, 'data.img'),
            '-netdev', 'user,id=net0,hostfwd=tcp:127.0.0.1:%d-:22' % port,
            '-device', 'virtio-net-pci,netdev=net0',
            '-display', 'none', '-vga', 'none', '-monitor', 'none',
            '-serial', 'file:%s' % os.path.join(folder, 'console.log')]
    return argv


def read_state(name):
    path = os.path.join(run_dir(name), 'state.json')
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        raise LabError('no VM named %s is running (no %s); start one with: python3 scripts/vmlab.py up --name %s' % (name, path, name))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill 0; its /proc stat says Z.
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def is_our_qemu(pid, folder):
    """Only a qemu started for this folder is ever killed (never another program with a reused pid)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            argv = handle.read().split(b'\0')
    except OSError:
        return False
    return bool(argv) and os.path.basename(argv[0].decode()) == QEMU and any(folder.encode() in arg for arg in argv)


def stop(name):
    """Kill the VM's qemu (TERM, then KILL) and remove its disks; the console log stays."""
    folder = run_dir(name)
    state_path = os.path.join(folder, 'state.json')
    try:
        with open(state_path) as handle:
            pid = json.load(handle)['pid']
    except (OSError, ValueError, KeyError):
        pid = None
    if pid and is_our_qemu(pid, folder):
        os.kill(pid, signal.SIGTERM)
        for dummy in range(50):
            if not alive(pid):
                break
            time.sleep(0.2)
        else:
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        log('VM %s stopped (qemu pid %d)' % (name, pid))
    for disk in ('root.qcow2', 'data.img', 'state.json'):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(folder, disk))


def wait_for_ssh(state, proc_pid, timeout):
    deadline = time.time() + timeout
    console = state['console']
    while time.time() < deadline:
        if not alive(proc_pid):
            raise LabError('qemu exited before SSH answered; console log %s ends with:\n%s' % (console, tail(console)))
        result = subprocess.run(ssh_argv(state) + ['true'], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=120)
        if result.returncode == 0:
            return
        time.sleep(5)
    raise LabError('the VM did not answer SSH on 127.0.0.1:%d within %d s; console log %s ends with:\n%s'
                   % (state['port'], timeout, console, tail(console)))


def start(name, image, memory=2048, cpus=4, data_size='4G', ssh_wait=SSH_WAIT):
    """Boot a VM from ``image`` and wait for SSH; returns its state (stop() it when done)."""
    if not shutil.which(QEMU):
        raise LabError('%s not found: apt-get install qemu-system-x86 qemu-utils '
                       '(scripts/install-test-deps.sh --vm)' % QEMU)
    if not shutil.which('qemu-img'):
        raise LabError('qemu-img not found: apt-get install qemu-utils (scripts/install-test-deps.sh --vm)')
    folder = run_dir(name)
    if os.path.exists(os.path.join(folder, 'state.json')):
        stop(name)
    os.makedirs(folder, exist_ok=True)
    subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', 'raw', '-b',
                    os.path.join(image, 'root.img'), os.path.join(folder, 'root.qcow2')], check=True)
    subprocess.run(['truncate', '-s', '0', os.path.join(folder, 'data.img')], check=True)
    subprocess.run(['truncate', '-s', data_size, os.path.join(folder, 'data.img')], check=True)
    port = free_port()
    console = os.path.join(folder, 'console.log')
    with open(console, 'wb'):
        pass
    argv = qemu_argv(image, folder, port, memory, cpus)
    with open(os.path.join(folder, 'qemu.log'), 'wb') as output:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                start_new_session=True)
    state = {'name': name, 'pid': proc.pid, 'port': port, 'key': os.path.join(image, 'id_ed25519'),
             'console': console, 'image': image, 'folder': folder, 'started': time.time()}
    with open(os.path.join(folder, 'state.json'), 'w') as handle:
        json.dump(state, handle, indent=1)
    log('VM %s booting (qemu pid %d, SSH on 127.0.0.1:%d, console %s)' % (name, proc.pid, port, console))
    try:
        time.sleep(2)
        if proc.poll() is not None:
            raise LabError('qemu failed to start (exit %s): %s' % (proc.returncode, tail(os.path.join(folder, 'qemu.log'), 10)))
        wait_for_ssh(state, proc.pid, ssh_wait)
    except BaseException:
        stop(name)
        raise
    log('VM %s answers SSH after %d s' % (name, time.time() - state['started']))
    return state


BOOT_ID = ['cat', '/proc/sys/kernel/random/boot_id']


def boot_id(state):
    """The guest's boot id (a new one at every boot), or None while it does not answer."""
    try:
        done = subprocess.run(ssh_argv(state) + BOOT_ID, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              check=False, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def reboot(name, timeout=SSH_WAIT):
    """Reboot VM ``name`` from inside and wait for SSH with a new boot id; returns the seconds it took.
    qemu keeps running (the guest reboots in it), so the disks and state.json stay as they are."""
    state = read_state(name)
    if not is_our_qemu(state['pid'], state['folder']):
        raise LabError('VM %s is not running (no qemu with pid %d); start it with: python3 scripts/vmlab.py up '
                       '--name %s' % (name, state['pid'], name))
    before = boot_id(state)
    if before is None:
        raise LabError('VM %s does not answer SSH on 127.0.0.1:%d; console log %s ends with:\n%s'
                       % (name, state['port'], state['console'], tail(state['console'])))
    started = time.time()
    # The connection may drop before systemctl returns: its exit code says nothing, the boot id does.
    subprocess.run(ssh_argv(state) + ['systemctl', 'reboot'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, timeout=120)
    log('VM %s rebooting (boot id %s)' % (name, before))
    while time.time() < started + timeout:
        if not alive(state['pid']):
            raise LabError('qemu exited during the reboot; console log %s ends with:\n%s'
                           % (state['console'], tail(state['console'])))
        now = boot_id(state)
        if now is not None and now != before:
            elapsed = time.time() - started
            log('VM %s answers SSH again after %d s (boot id %s)' % (name, elapsed, now))
            return elapsed
        time.sleep(5)
    raise LabError('VM %s did not come back with a new boot id within %d s; console log %s ends with:\n%s'
                   % (name, timeout, state['console'], tail(state['console'])))


_RUNNING = []


def _stop_all():
    while _RUNNING:
        stop(_RUNNING.pop())


def _on_signal(signum, dummy_frame):
    raise SystemExit('vmlab: stopped by signal %d' % signum)


@contextlib.contextmanager
def vm(name, image, **options):
    """A running VM for the ``with`` block; stopped after it, whatever happens (atexit and
    SIGTERM/SIGHUP too, so a killed run leaves no qemu behind)."""
    atexit.register(_stop_all)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_signal)
    _RUNNING.append(name)
    try:
        yield start(name, image, **options)
    finally:
        if name in _RUNNING:
            _RUNNING.remove(name)
        stop(name)


# ---------------------------------------------------------------------------- commands

def cmd_build(args):
    print(build())
    return 0


def cmd_up(args):
    state = start(args.name, build(), memory=args.memory, data_size=args.data_size)
    print('VM %s is up; log in with:\n  python3 scripts/vmlab.py ssh --name %s\nor\n  %s\nstop it with: python3 scripts/vmlab.py down --name %s'
          % (args.name, args.name, ' '.join(ssh_argv(state)), args.name))
    return 0


def cmd_ssh(args):
    state = read_state(args.name)
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    return subprocess.run(ssh_argv(state, args.user) + command, check=False).returncode


def cmd_reboot(args):
    reboot(args.name)
    return 0


def cmd_down(args):
    stop(args.name)
    return 0


def cmd_run_scenario(args):
    image = build()
    started = time.time()
    with vm(args.name, image, memory=args.memory, data_size=args.data_size) as state:
        env = dict(os.environ, DBHOST_VMLAB_STATE=os.path.join(state['folder'], 'state.json'))
        argv = [sys.executable, os.path.join(ROOT, 'tests', 'vm', 'run_scenario.py')] + args.extra
        result = subprocess.run(argv, env=env, check=False)
    log('run-scenario: %s in %d s (VM included)' % ('passed' if result.returncode == 0 else 'FAILED', time.time() - started))
    return result.returncode


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest='command', required=True)
    for name, func in (('build', cmd_build), ('up', cmd_up), ('ssh', cmd_ssh), ('reboot', cmd_reboot),
                       ('down', cmd_down), ('run-scenario', cmd_run_scenario)):
        sub = commands.add_parser(name)
        sub.set_defaults(func=func)
        sub.add_argument('--name', default='lab', help='the VM (.cache/vmlab/run/NAME)')
        if name in ('up', 'run-scenario'):
            sub.add_argument('--memory', type=int, default=2048, help='MiB, split between the two nodes')
            sub.add_argument('--data-size', default='4G', help='size of the empty data disk /dev/vdb')
        if name == 'ssh':
            sub.add_argument('--user', default='root')
            sub.add_argument('command', nargs=argparse.REMAINDER)
        if name == 'run-scenario':
            sub.add_argument('extra', nargs='*', help='arguments for tests/vm/run_scenario.py')
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except LabError as error:
        log('ERROR: %s' % error)
        return 2


if __name__ == '__main__':
    sys.exit(main())
