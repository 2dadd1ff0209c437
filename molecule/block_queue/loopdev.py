# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Throwaway loop devices for the block_queue Molecule scenarios, run inside a container.

    loopdev.py attach FILE SIZE_MB [MOUNT_DIR]   sparse FILE, attached to a free loop device
                                                 (ext4 mounted at MOUNT_DIR when given);
                                                 prints {"name": "loopN", "backing_file": FILE}
    loopdev.py detach FILE [BEFORE_JSON]         unmounts and detaches the loop devices whose
                                                 backing file is FILE, then removes FILE; first
                                                 puts back the queue attributes they had when
                                                 attached ("attached" in BEFORE_JSON)
    loopdev.py set NAME ATTR=VALUE...            writes queue attributes of loop device NAME,
                                                 in the order given
    loopdev.py queue [NAME...]                   prints {NAME: {attribute: value}} of queue/
                                                 (without names: every device but loop devices)
    loopdev.py etc                               prints {path: sha256} of every file under /etc
    loopdev.py orphans CONTAINER                 on the host, after CONTAINER is gone: detaches
                                                 the loop devices still backed by its files

Loop devices are the host's: only devices whose backing file is FILE are ever detached,
and FILE names carry the container's name, so one container never detaches another's.
A privileged container has /dev nodes only for the loop devices that existed when it
started; a node for a newer one is made here (block major 7).
"""

import fcntl
import hashlib
import json
import os
import stat
import subprocess
import sys
import time

LOOP_CTL_GET_FREE = 0x4C82
LOOP_MAJOR = 7
QUEUE = ('rq_affinity', 'scheduler', 'read_ahead_kb', 'nr_requests', 'rotational', 'nomerges', 'add_random',
         'max_sectors_kb')


def backing_file(name):
    try:
        with open('/sys/block/%s/loop/backing_file' % name) as handle:
            return handle.read().strip()
    except OSError:
        return None


def ours(file_name):
    """Loop devices backed by file_name (also once it is deleted)."""
    names = []
    for name in sorted(os.listdir('/sys/block')):
        if name.startswith('loop'):
            current = backing_file(name)
            if current in (file_name, file_name + ' (deleted)'):
                names.append(name)
    return names


def node(name):
    path = '/dev/' + name
    if not os.path.exists(path):
        os.mknod(path, 0o660 | stat.S_IFBLK, os.makedev(LOOP_MAJOR, int(name[len('loop'):])))
    return path


def run(argv):
    return subprocess.run(argv, check=False, capture_output=True, text=True)


def mount_points(name):
    with open('/sys/block/%s/dev' % name) as handle:
        number = handle.read().strip()
    points = []
    with open('/proc/self/mountinfo') as handle:
        for line in handle:
            fields = line.split()
            if fields[2] == number:
                points.append(fields[4])
    return points


def attach(file_name, size_mb, mount_dir=None):
    existing = ours(file_name)
    if not existing:
        os.makedirs(os.path.dirname(file_name), exist_ok=True)
        with open(file_name, 'ab') as handle:
            handle.truncate(int(size_mb) * 1024 * 1024)
        for attempt in range(20):
            control = os.open('/dev/loop-control', os.O_RDWR)
            try:
                number = fcntl.ioctl(control, LOOP_CTL_GET_FREE)
            finally:
                os.close(control)
            name = 'loop%d' % number
            done = run(['losetup', node(name), file_name])
            if done.returncode == 0 and backing_file(name) == file_name:
                break
            # Another process took this device between the two steps: ask again.
            time.sleep(0.2 * (attempt + 1))
        else:
            sys.exit('no free loop device for %s: %s' % (file_name, done.stderr.strip()))
        existing = [name]
    name = existing[0]
    if mount_dir and not mount_points(name):
        os.makedirs(mount_dir, exist_ok=True)
        for argv in (['mkfs.ext4', '-q', '-F', node(name)], ['mount', node(name), mount_dir]):
            done = run(argv)
            if done.returncode != 0:
                sys.exit('%s failed: %s' % (' '.join(argv), done.stderr.strip()))
    print(json.dumps({'name': name, 'backing_file': file_name}))


def set_queue(name, assignments, strict=True):
    if not name.startswith('loop'):
        sys.exit('%s is not a loop device' % name)
    for assignment in assignments:
        attribute, dummy, value = assignment.partition('=')
        if '/' in attribute or not value:
            sys.exit('bad assignment %r' % assignment)
        try:
            with open('/sys/block/%s/queue/%s' % (name, attribute), 'w') as handle:
                handle.write(value + '\n')
        except OSError as exc:
            if strict:
                raise
            # Restoring is best effort: detaching matters more.
            sys.stderr.write('%s %s: %s\n' % (name, assignment, exc))


def as_attached(name, before_file):
    """ATTR=VALUE assignments that restore what ``name`` had when attached, scheduler first."""
    if not before_file or not os.path.exists(before_file):
        return []
    with open(before_file) as handle:
        attached = json.load(handle).get('attached', {}).get(name)
    if not attached:
        return []
    scheduler = attached['scheduler']
    if '[' in scheduler:
        scheduler = scheduler.split('[', 1)[1].split(']', 1)[0]
    return ['scheduler=' + scheduler] + ['%s=%s' % (key, attached[key]) for key in ('nr_requests', 'read_ahead_kb', 'rq_affinity')]


def detach(file_name, before_file=None):
    detached = []
    for name in ours(file_name):
        # Loop devices keep their queue attributes when detached: put back what they had.
        set_queue(name, as_attached(name, before_file), strict=False)
        for point in mount_points(name):
            run(['umount', point])
        done = run(['losetup', '-d', node(name)])
        if done.returncode != 0:
            sys.exit('losetup -d /dev/%s failed: %s' % (name, done.stderr.strip()))
        detached.append(name)
    if os.path.exists(file_name):
        os.unlink(file_name)
    print(json.dumps({'detached': detached, 'backing_file': file_name}))


def queue(names):
    if not names:
        names = [name for name in sorted(os.listdir('/sys/block')) if not name.startswith('loop')]
    values = {}
    for name in names:
        values[name] = {}
        for attribute in QUEUE:
            try:
                with open('/sys/block/%s/queue/%s' % (name, attribute)) as handle:
                    values[name][attribute] = handle.read().strip()
            except OSError:
                values[name][attribute] = None
    print(json.dumps(values, sort_keys=True))


def etc():
    sums = {}
    for folder, dirs, files in os.walk('/etc'):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, 'rb') as handle:
                    sums[path] = hashlib.sha256(handle.read()).hexdigest()
    print(json.dumps(sums, sort_keys=True))


def orphans(container):
    marker = '/dbhost-bq/%s-data' % container
    detached = []
    for name in sorted(os.listdir('/sys/block')):
        if name.startswith('loop') and marker in (backing_file(name) or ''):
            done = run(['losetup', '-d', '/dev/' + name])
            if done.returncode != 0:
                sys.exit('losetup -d /dev/%s failed: %s' % (name, done.stderr.strip()))
            detached.append(name)
    print(json.dumps({'detached': detached}))


def main(argv):
    if len(argv) >= 3 and argv[0] == 'attach':
        attach(*argv[1:4])
    elif len(argv) in (2, 3) and argv[0] == 'detach':
        detach(*argv[1:])
    elif len(argv) >= 3 and argv[0] == 'set':
        set_queue(argv[1], argv[2:])
    elif argv and argv[0] == 'queue':
        queue(argv[1:])
    elif argv == ['etc']:
        etc()
    elif len(argv) == 2 and argv[0] == 'orphans':
        orphans(argv[1])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
