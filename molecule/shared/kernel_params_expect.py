# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the kernel_params Molecule verifiers (testinfra).

The expected values are computed here from molecule/shared/oracle-profile.yml
and the state prepare recorded, independently of the role and module code.
Every podman exec costs about half a second, so each helper reads what it
needs in one command.
"""

import json
import os

import yaml

SHARED = os.path.dirname(os.path.abspath(__file__))
BEFORE = '/var/lib/dbhost-molecule/before.json'
# Keys whose fields are each a lower bound in "minimum" mode (semaphore limits).
FIELDWISE_KEYS = frozenset(['kernel.sem'])


def podman_hosts(scenario_dir):
    """testinfra host specs for the platforms of a scenario's molecule.yml."""
    with open(os.path.join(scenario_dir, 'molecule.yml')) as handle:
        config = yaml.safe_load(handle)
    return ['podman://' + platform['name'] for platform in config['platforms']]


def profile():
    with open(os.path.join(SHARED, 'oracle-profile.yml')) as handle:
        return yaml.safe_load(handle)


def key_list(name):
    """Keys listed one per line in a molecule/shared text file (# comments)."""
    with open(os.path.join(SHARED, name)) as handle:
        lines = [line.split('#', 1)[0].strip() for line in handle]
    return [line for line in lines if line]


def normalize(value):
    return ' '.join(str(value).split())


def expected_value(key, before, desired, mode):
    """The value the role must leave, given the value before the run.

    ``minimum`` never lowers: single numbers and kernel.sem fields keep a
    higher value they already had; other multi-value keys (ranges) are exact.
    """
    want = normalize(desired).split()
    have = normalize(before).split() if before is not None else []
    numeric = all(field.lstrip('-').isdigit() for field in want + have)
    if mode != 'minimum' or not numeric or len(have) != len(want):
        return ' '.join(want)
    if len(want) > 1 and key not in FIELDWISE_KEYS:
        return ' '.join(want)
    return ' '.join(str(max(int(h), int(w))) for h, w in zip(have, want))


def meets_minimum(key, have, want):
    """``have`` meets the minimum ``want`` (field by field for kernel.sem)."""
    have, want = normalize(have).split(), normalize(want).split()
    if len(have) != len(want) or (len(want) > 1 and key not in FIELDWISE_KEYS):
        return have == want
    return all(int(h) >= int(w) for h, w in zip(have, want))


def persisted_keys(settings, profile_data):
    """The keys the role writes: all but the minimums the boot value already meets."""
    boot = profile_data.get('boot_defaults', {})
    return sorted(key for key, want in settings.items()
                  if not (profile_data['mode'] == 'minimum' and key in boot and meets_minimum(key, boot[key], want)))


def read_before(host):
    return json.loads(host.file(BEFORE).content_string)


def snapshot(host, names):
    """Run snapshot.py (the script prepare ran) in the container now."""
    with open(os.path.join(SHARED, 'snapshot.py')) as handle:
        source = handle.read()
    return json.loads(host.check_output('python3 -c %s ' + ' '.join(['%s'] * len(names)),
                                        source, *sorted(names)))


def live_values(host, keys):
    """Key -> live value, read back with one `sysctl -n` call."""
    keys = sorted(keys)
    output = host.check_output('sysctl -n ' + ' '.join(['%s'] * len(keys)), *keys)
    values = output.splitlines()
    assert len(values) == len(keys), output
    return dict((key, normalize(value)) for key, value in zip(keys, values))


def boot_values(host):
    """Key -> value that systemd-sysctl would set at boot (last assignment wins)."""
    output = host.check_output('/lib/systemd/systemd-sysctl --cat-config')
    values = {}
    for line in output.splitlines():
        line = line.strip()
        if not line or line[0] in '#;' or '=' not in line:
            continue
        key, value = line.split('=', 1)
        values[key.strip().lstrip('-').replace('/', '.')] = normalize(value)
    return values
