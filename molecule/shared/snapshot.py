# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print, as JSON, the state the kernel_params scenarios compare.

Runs inside a test container: prepare runs it with --save PATH to record the
state before the role, the verifiers run it again to compare. The state is
the live value of each sysctl named on the command line, and every entry
under /etc with its type, mode, owner, mtime and (for files) a SHA-256.
Usage: snapshot.py [--save PATH] NAME...
"""

import hashlib
import json
import os
import stat
import sys

# podman bind-mounts and rewrites these; they are not the system's own state.
PODMAN_MANAGED = frozenset(['/etc/hosts', '/etc/hostname', '/etc/resolv.conf'])


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(65536), b''):
            digest.update(block)
    return digest.hexdigest()


def describe(path):
    info = os.lstat(path)
    entry = '%o %d:%d mtime=%d' % (info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns)
    if stat.S_ISLNK(info.st_mode):
        entry += ' -> ' + os.readlink(path)
    elif stat.S_ISREG(info.st_mode):
        entry += ' sha256=' + file_digest(path)
    return entry


def etc_tree(top='/etc'):
    tree = {top: describe(top)}
    for folder, subfolders, files in os.walk(top):
        subfolders.sort()
        for name in sorted(subfolders + files):
            path = os.path.join(folder, name)
            if path not in PODMAN_MANAGED:
                tree[path] = describe(path)
    return tree


def sysctl_value(name):
    with open(os.path.join('/proc/sys', name.replace('.', '/'))) as handle:
        return ' '.join(handle.read().split())


def main(args):
    save = None
    if args[:1] == ['--save']:
        save, args = args[1], args[2:]
    tree = etc_tree()
    state = {
        'sysctl': dict((name, sysctl_value(name)) for name in args),
        'etc_sha256': hashlib.sha256(json.dumps(tree, sort_keys=True).encode()).hexdigest(),
        'etc': tree,
    }
    text = json.dumps(state, indent=1, sort_keys=True) + '\n'
    if save:
        os.makedirs(os.path.dirname(save), mode=0o700, exist_ok=True)
        with open(save, 'w') as handle:
            handle.write(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main(sys.argv[1:])
