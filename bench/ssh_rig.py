# -*- coding: utf-8 -*-
"""A throwaway sshd on 127.0.0.1 for the benchmarks' SSH mode (bench/full_bench.py --ssh).

The bench's hosts are aliases of this machine; in SSH mode each one is reached through a real
sshd that this module starts on a free port of 127.0.0.1, with a host key, a client key,
authorized_keys and an sshd_config of its own in a temporary folder: root may log in with that
key only (no password, no other key, no other user, nothing but loopback). It is stopped and the
folder removed by ``stop()``, which the bench calls in its ``finally`` (also on an error, Ctrl-C
or SIGTERM).

What it measures besides: the bench process becomes a child subreaper, so the ControlPersist
masters that ansible-playbook's ssh processes leave behind are re-parented to it; ``settle()``
ends them after each play and reaps them, so that their CPU lands in the bench's RUSAGE_CHILDREN
with the rest of the play's process tree (the controller's CPU). The sshd's own CPU and its
reaped sessions' (the remote side: sshd, the shell, the module's Python) is read from
/proc/<sshd>/stat once every session of a play has ended: the hosts' CPU.
"""

from __future__ import absolute_import, division, print_function

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SSHD = '/usr/sbin/sshd'
SSH_KEYGEN = 'ssh-keygen'
PR_SET_CHILD_SUBREAPER = 36
INSTALL_HINT = ('the SSH mode needs OpenSSH\'s server and client: apt-get install -y openssh-server '
                '(it is no requirement of the collection or of CI)')


def missing_tools():
    """A message naming what the SSH mode lacks on this machine, or None."""
    if not os.access(SSHD, os.X_OK):
        return '%s is missing; %s' % (SSHD, INSTALL_HINT)
    for tool in ('ssh', SSH_KEYGEN):
        if shutil.which(tool) is None:
            return '%s is missing; %s' % (tool, INSTALL_HINT)
    return None


def _ticks(fields):
    return sum(int(value) for value in fields) / float(os.sysconf('SC_CLK_TCK'))


def process_cpu(pid, children=True):
    """CPU seconds (user + sys) of a live process, with its reaped descendants' when ``children``."""
    with open('/proc/%d/stat' % pid) as handle:
        fields = handle.read().rsplit(')', 1)[1].split()
    # After the comm: state is field 3 (index 0 here); utime, stime, cutime, cstime are fields 14-17.
    return _ticks(fields[11:15] if children else fields[11:13])


def children_of(pid, comm=None):
    """Pids of the processes (zombies too) whose parent is ``pid`` (and whose name is ``comm``)."""
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as handle:
                name_part, rest = handle.read().rsplit(')', 1)
        except (IOError, OSError, ValueError):
            continue
        fields = rest.split()
        if int(fields[1]) == pid and (comm is None or name_part.split('(', 1)[-1] == comm):
            found.append(int(name))
    return found


def free_port():
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]
    finally:
        probe.close()


class Sshd(object):
    """An sshd of the bench's own on 127.0.0.1; ``start()``, then ``stop()`` whatever happened."""

    def __init__(self, log):
        self.log = log
        self.folder = None
        self.process = None
        self.port = None
        self.made_privsep = False
        self.keep = set()   # pids of the bench's own children that settle() must leave alone

    def path(self, name):
        return os.path.join(self.folder, name)

    def _keygen(self, name, comment):
        subprocess.run([SSH_KEYGEN, '-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', self.path(name)],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with open(self.path(name + '.pub')) as handle:
            return handle.read().strip()

    def _config(self):
        return '\n'.join([
            '# sshd of the benchmark (bench/ssh_rig.py): root with the bench\'s key only, loopback only',
            'Port %d' % self.port,
            'ListenAddress 127.0.0.1',
            'HostKey %s' % self.path('host_key'),
            'PidFile none',
            'AuthorizedKeysFile %s' % self.path('authorized_keys'),
            'AuthenticationMethods publickey',
            'PubkeyAuthentication yes',
            'PasswordAuthentication no',
            'KbdInteractiveAuthentication no',
            'HostbasedAuthentication no',
            'PermitRootLogin prohibit-password',
            'AllowUsers root@127.0.0.1',
            'UsePAM no',
            'PermitUserEnvironment no',
            # The folder is the bench's mkdtemp (0700, root's); StrictModes would refuse it for
            # the world-writable /tmp above it.
            'StrictModes no',
            'X11Forwarding no',
            'AllowAgentForwarding no',
            'AllowTcpForwarding no',
            'PrintMotd no',
            'PrintLastLog no',
            # 5 forks open 5 connections at a time; Mitogen opens them in parallel.
            'MaxStartups 256',
            'MaxSessions 64',
            'Subsystem sftp internal-sftp',
            'LogLevel ERROR',
            '',
        ])

    def start(self):
        problem = missing_tools()
        if problem:
            raise SystemExit(problem)
        # ControlPersist masters outlive ansible-playbook: make them ours, to end and count them.
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), 'prctl(PR_SET_CHILD_SUBREAPER)')
        # Short: a ControlPath socket name must stay under 108 bytes.
        self.folder = tempfile.mkdtemp(prefix='dbssh-', dir='/tmp')
        host_public = self._keygen('host_key', 'dbhost-bench-host')
        client_public = self._keygen('client_key', 'dbhost-bench-client')
        with open(self.path('authorized_keys'), 'w') as handle:
            handle.write('from="127.0.0.1" %s\n' % client_public)
        os.makedirs(self.path('cp'))
        if not os.path.isdir('/run/sshd'):   # the privilege separation folder Debian's sshd wants
            os.makedirs('/run/sshd', mode=0o755)
            self.made_privsep = True
        for attempt in range(5):
            self.port = free_port()
            with open(self.path('sshd_config'), 'w') as handle:
                handle.write(self._config())
            with open(self.path('known_hosts'), 'w') as handle:
                handle.write('[127.0.0.1]:%d %s\n' % (self.port, host_public))
            subprocess.run([SSHD, '-t', '-f', self.path('sshd_config')], check=True, stdin=subprocess.DEVNULL)
            # -D: not a daemon, so it stays our child; its own session, so a Ctrl-C reaches the bench
            # (which stops it in order) and not it directly.
            self.process = subprocess.Popen([SSHD, '-D', '-f', self.path('sshd_config'), '-E', self.path('sshd.log')],
                                            stdin=subprocess.DEVNULL, start_new_session=True)
            self.keep.add(self.process.pid)
            if self._answers():
                self.log('sshd %d on 127.0.0.1:%d (config, keys and sockets in %s)'
                         % (self.process.pid, self.port, self.folder))
                return
            self._stop_sshd()
            self.log('sshd did not come up on port %d (attempt %d): %s' % (self.port, attempt + 1, self._log_tail()))
        raise RuntimeError('sshd did not start; see %s' % self.path('sshd.log'))

    def _log_tail(self):
        try:
            with open(self.path('sshd.log')) as handle:
                return ' '.join(handle.read().split()[-30:]) or 'no log'
        except (IOError, OSError):
            return 'no log'

    def _answers(self):
        """True once the sshd accepts a login with the bench's key."""
        for dummy in range(50):
            if self.process.poll() is not None:
                return False
            probe = subprocess.run(['ssh'] + self.ssh_options() + ['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=2',
                                                                   '-p', str(self.port), 'root@127.0.0.1', 'true'],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
            if probe.returncode == 0:
                return True
            time.sleep(0.2)
        return False

    def ssh_options(self):
        """Options every ssh of the bench takes: nothing from ~/.ssh, the bench's key and host key only."""
        return ['-F', '/dev/null', '-i', self.path('client_key'), '-o', 'IdentitiesOnly=yes',
                '-o', 'IdentityAgent=none', '-o', 'UserKnownHostsFile=%s' % self.path('known_hosts'),
                '-o', 'GlobalKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=yes',
                '-o', 'PasswordAuthentication=no']

    def host_vars(self, alias):
        """Inventory variables of one alias: SSH to the bench's sshd, a ControlPath of its own (one
        master connection per host, as with distinct machines)."""
        return {
            'ansible_connection': 'ssh',
            'ansible_host': '127.0.0.1',
            'ansible_port': self.port,
            'ansible_user': 'root',
            'ansible_ssh_private_key_file': self.path('client_key'),
            # SetEnv (sshd accepts no variable, so it is dropped there) makes each alias's ssh
            # command line its own: Mitogen keys its connections by host, port, user and ssh
            # arguments, and would otherwise run every alias over one shared connection and one
            # interpreter, which is not a fleet.
            'ansible_ssh_common_args': ' '.join(self.ssh_options()[4:] + ['-o', 'SetEnv=DBHOST_BENCH_HOST=%s' % alias]),
            'ansible_control_path': self.path(os.path.join('cp', alias)),
        }

    def cpu(self):
        """CPU seconds of the sshd and every session it has reaped (the hosts' side of the plays)."""
        return process_cpu(self.process.pid)

    def _masters(self):
        """Our children that are ssh processes (also those that ended by themselves and wait to be
        reaped): the ControlPersist masters re-parented to the bench."""
        return [pid for pid in children_of(os.getpid(), comm='ssh') if pid not in self.keep]

    def settle(self, timeout=60):
        """After a play: end the ControlPersist masters left behind (our orphans now), reap them and
        wait until the sshd's sessions have ended. Returns the number of masters ended."""
        ended = 0
        masters = self._masters()
        for pid in masters:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                continue
            ended += 1
        deadline = time.time() + timeout
        for pid in masters:
            while True:
                try:
                    done, dummy = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if done:
                    break
                if time.time() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.05)
        while self.process is not None and children_of(self.process.pid) and time.time() < deadline:
            time.sleep(0.1)
        for name in os.listdir(self.path('cp')):
            os.unlink(self.path(os.path.join('cp', name)))
        return ended

    def _stop_sshd(self):
        if self.process is None:
            return
        for pid in children_of(self.process.pid):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.keep.discard(self.process.pid)
        self.process = None

    def stop(self):
        """Stop the sshd and the masters, remove the folder; every step tried whatever failed before."""
        problems = []
        for step in (lambda: self.folder and self.process and self.settle(timeout=10), self._stop_sshd,
                     lambda: self.folder and shutil.rmtree(self.folder),
                     lambda: self.made_privsep and os.rmdir('/run/sshd')):
            try:
                step()
            except Exception as error:  # pylint: disable=broad-except
                problems.append(str(error))
        self.folder = None
        for problem in problems:
            self.log('SSHD CLEAN-UP FAILED: %s' % problem)
        if not problems:
            self.log('sshd stopped, its keys and folder removed')
        return not problems
