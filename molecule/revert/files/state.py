# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print, as JSON, what the revert scenario compares before tuning and after the revert.

Runs inside the test container: the sysctl values the scenario tunes, what
`systemd-sysctl --cat-config` reads at boot, what `systemctl show` says of the stand-in
service's LimitMEMLOCK, the queue attributes of the two loop devices (named in
/var/lib/dbhost-molecule/block_queue.json), and every entry under /etc with its type,
mode, owner and (for files) SHA-256 (not its mtime: a file put back is written again).
"""

import hashlib
import json
import os
import stat
import subprocess

KEYS = ['kernel.shmmni', 'kernel.msgmnb', 'net.core.somaxconn', 'net.ipv4.ip_local_port_range']
QUEUE = ['rq_affinity', 'nr_requests', 'read_ahead_kb', 'scheduler']
# podman bind-mounts and rewrites these; they are not the system's own state.
PODMAN_MANAGED = frozenset(['/etc/hosts', '/etc/hostname', '/etc/resolv.conf'])


def read(path):
    with open(path) as handle:
        return handle.read().strip()


def output(argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout


def sysctl_binary():
    for path in ('/usr/lib/systemd/systemd-sysctl', '/lib/systemd/systemd-sysctl'):
        if os.path.exists(path):
            return path
    raise SystemExit('no systemd-sysctl')


def describe(path):
    info = os.lstat(path)
    entry = '%o %d:%d' % (info.st_mode, info.st_uid, info.st_gid)
    if stat.S_ISLNK(info.st_mode):
        entry += ' -> ' + os.readlink(path)
    elif stat.S_ISREG(info.st_mode):
        with open(path, 'rb') as handle:
            entry += ' sha256=' + hashlib.sha256(handle.read()).hexdigest()
    return entry


def etc_tree(top='/etc'):
    tree = {top: describe(top)}
    for folder, subfolders, files in os.walk(top):
        for name in sorted(subfolders + files):
            path = os.path.join(folder, name)
            if path not in PODMAN_MANAGED:
                tree[path] = describe(path)
    return tree


def main():
    loops = json.loads(read('/var/lib/dbhost-molecule/block_queue.json'))
    state = {
        'sysctl': dict((key, ' '.join(read('/proc/sys/' + key.replace('.', '/')).split())) for key in KEYS),
        'cat_config': output([sysctl_binary(), '--cat-config']),
        'memlock': output(['systemctl', 'show', '-p', 'LimitMEMLOCK', '-p', 'LimitMEMLOCKSoft',
                           'dbhost-revert-probe.service']),
        'queues': dict((device, dict((name, read('/sys/block/%s/queue/%s' % (device, name))) for name in QUEUE))
                       for device in sorted(loops.values())),
        'etc': etc_tree(),
    }
    print(json.dumps(state, indent=1, sort_keys=True))


if __name__ == '__main__':
    main()
