# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what a revert must put back, from the system itself: runs on the VM as root
(python3, standard library only), fed through SSH: `python3 - < snapshot.py`.

Prints one JSON object:
  live      every readable /proc/sys entry, the queue attributes of every disk, transparent
            huge pages and every node's huge page pools: {path: text}
  baseline  the collection's baseline (/var/lib/dbhost-tuning/baseline.json), or null
  files     for every file the baseline names: its sha256, or null when it does not exist
  folders   for every folder the baseline says was made for a file: whether it exists
No comparison here: verify.py judges.
"""

import glob
import hashlib
import json
import os

BASELINE = '/var/lib/dbhost-tuning/baseline.json'
SYS = ('/sys/block/*/queue/*', '/sys/kernel/mm/transparent_hugepage/*',
       '/sys/kernel/mm/hugepages/*/nr_hugepages', '/sys/devices/system/node/node*/hugepages/*/nr_hugepages')


def read(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8', 'surrogateescape')
    except OSError:
        return None


def live():
    out = {}
    for folder, dummy, names in os.walk('/proc/sys'):
        for name in names:
            path = os.path.join(folder, name)
            text = read(path)
            if text is not None:
                out[path] = text
    for pattern in SYS:
        for path in glob.glob(pattern):
            text = read(path) if os.path.isfile(path) else None
            if text is not None:
                out[path] = text
    return out


def digest(path):
    try:
        with open(path, 'rb') as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def main():
    text = read(BASELINE)
    baseline = json.loads(text) if text else None
    entries = (baseline or {}).get('files', {})
    folders = sorted(set(folder for entry in entries.values() for folder in entry.get('folders') or []))
    print(json.dumps({'live': live(), 'baseline': baseline, 'files': dict((name, digest(name)) for name in sorted(entries)),
                      'folders': dict((folder, os.path.isdir(folder)) for folder in folders)}))


if __name__ == '__main__':
    main()
