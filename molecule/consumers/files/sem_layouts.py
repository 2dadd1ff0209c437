# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seeded random sysctl.d layouts of kernel.sem, and what the real systemd-sysctl loads from them.

Runs in the container (python3 alone). kernel.sem is per IPC namespace, so setting it is the
container's own business.

    sem_layouts.py lay SEED     write layout SEED (removing the previous one), set a random
                                live value, and print JSON: the files, the desired value, the
                                live value, and "before": what systemd-sysctl loads now
    sem_layouts.py load         what systemd-sysctl loads now (JSON), the live value put back
    sem_layouts.py clean        remove every file a layout wrote, and ours

"What systemd-sysctl loads": a sentinel value is written to /proc/sys/kernel/sem first, then
``systemd-sysctl --prefix=kernel.sem`` applies every sysctl.d file (its own search path,
masking and order), and /proc/sys/kernel/sem is read back.
"""

import json
import os
import random
import subprocess
import sys

STATE = '/var/lib/dbhost-molecule/sem-layout-files.json'
# Ours (dbhost_consumers_sem_file in vars/main.yml): sorts after Debian 12's 99-sysctl.conf
# link, so that /etc/sysctl.conf does not shadow every layout there.
OURS = '/etc/sysctl.d/99-zz-dbhost-sem.conf'
LATE = '/etc/sysctl.d/99-zzz-dbhost-sem-late.conf'
FOLDERS = ('/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d')
PROC = '/proc/sys/kernel/sem'
SENTINEL = '11 1001 11 11'
# Per field (semmsl semmns semopm semmni): values below, at and above Oracle's minimum,
# each within what the kernel takes (semmni at most IPCMNI, 32768).
CHOICES = ([100, 250, 500, 1000], [16000, 32000, 64000, 256000], [32, 50, 100, 200], [64, 128, 256, 4096])
SPELLINGS = ('kernel.sem = %s\n', 'kernel.sem=%s\n', 'kernel/sem = %s\n', '  kernel.sem\t=\t%s\n')


def systemd_sysctl():
    for path in ('/lib/systemd/systemd-sysctl', '/usr/lib/systemd/systemd-sysctl'):
        if os.path.exists(path):
            return path
    raise SystemExit('no systemd-sysctl')


def read_sem():
    with open(PROC) as handle:
        return ' '.join(handle.read().split())


def write_sem(value):
    with open(PROC, 'w') as handle:
        handle.write(value + '\n')


def loaded():
    """What systemd-sysctl gives kernel.sem from the files as they are now."""
    live = read_sem()
    write_sem(SENTINEL)
    subprocess.run([systemd_sysctl(), '--prefix=kernel.sem'], check=False, capture_output=True)
    value = read_sem()
    write_sem(live)
    return value


def clean():
    paths = []
    if os.path.exists(STATE):
        with open(STATE) as handle:
            paths = json.load(handle)
    for path in paths + [OURS, LATE]:
        if os.path.lexists(path):
            os.unlink(path)
    if os.path.exists(STATE):
        os.unlink(STATE)


def sem(rng):
    return ' '.join(str(rng.choice(field)) for field in CHOICES)


def lay(seed):
    clean()
    rng = random.Random(seed)
    files = {}
    for index in range(rng.randint(1, 4)):
        name = '%02d-dbhost-sem-%d.conf' % (rng.randint(10, 99), index)
        folders = list(FOLDERS)
        rng.shuffle(folders)
        # sometimes the same name in two folders: the earlier folder masks the later one
        for folder in folders[:2 if rng.random() < 0.25 else 1]:
            files[os.path.join(folder, name)] = rng.choice(SPELLINGS) % sem(rng)
    if rng.random() < 0.2:
        # a file that sorts after ours: it wins at boot (ours is shadowed)
        files[LATE] = 'kernel.sem = %s\n' % sem(rng)
    if rng.random() < 0.3:
        # an earlier run of ours left a line (perhaps one that lowers a field)
        files[OURS] = '# Managed by dbhost.tuning.kernel_params\nkernel.sem = %s\n' % sem(rng)
    written = []
    for path, text in sorted(files.items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as handle:
            handle.write(text)
        written.append(path)
    with open(STATE, 'w') as handle:
        json.dump(written, handle)
    desired = '250 32000 100 128' if rng.random() < 0.5 else sem(rng)
    live = sem(rng)
    write_sem(live)
    return {'seed': seed, 'files': files, 'desired': desired, 'live': live, 'before': loaded()}


def main(argv):
    if argv[1] == 'lay':
        print(json.dumps(lay(int(argv[2]))))
    elif argv[1] == 'load':
        print(json.dumps({'loaded': loaded(), 'live': read_sem()}))
    elif argv[1] == 'clean':
        clean()
    else:
        raise SystemExit('usage: sem_layouts.py lay SEED | load | clean')


if __name__ == '__main__':
    main(sys.argv)
