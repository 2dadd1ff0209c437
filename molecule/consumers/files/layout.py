# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a set of configuration files in one go, inside a test container (one task instead of
one per file: each task costs seconds through podman).

    layout.py BASE64_JSON

BASE64_JSON decodes to {"files": {path: text}, "links": {path: target}, "owner": {path: user},
"dirs": [path], "remove": [path]}; files and links listed in "remove" are deleted first.
Folders are made as needed; files are root's (or the owner given), mode 0644.
Prints the paths it changed, as JSON.
"""

import base64
import json
import os
import pwd
import sys


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    layout = json.loads(base64.b64decode(argv[0]).decode('utf-8'))
    changed = []
    for path in layout.get('remove', []):
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
            changed.append(path)
    for path in layout.get('dirs', []):
        if not os.path.isdir(path):
            os.makedirs(path)
            changed.append(path)
    for path, text in sorted(layout.get('files', {}).items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        old = None
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path) as handle:
                old = handle.read()
        if old != text:
            if os.path.islink(path):
                os.unlink(path)
            with open(path, 'w') as handle:
                handle.write(text)
            changed.append(path)
        os.chmod(path, 0o644)
        owner = pwd.getpwnam(layout.get('owner', {}).get(path, 'root'))
        os.chown(path, owner.pw_uid, owner.pw_gid)
    for path, target in sorted(layout.get('links', {}).items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
        changed.append(path)
    print(json.dumps({'changed': changed}))


if __name__ == '__main__':
    main(sys.argv[1:])
