# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""shared_memory in check mode: not one byte or value changed."""

import json
import os

import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE_DIR = '/var/lib/dbhost-molecule'
KEYS = ['kernel.shmall', 'kernel.shmmax', 'kernel.shmmni', 'vm.hugetlb_shm_group', 'vm.nr_hugepages']
SERVICE = 'dbhost-fakedb.service'

with open(os.path.join(SCENARIO, 'molecule.yml')) as _handle:
    _CONFIG = yaml.safe_load(_handle)
testinfra_hosts = ['podman://' + platform['name'] for platform in _CONFIG['platforms']]


def _before(host):
    return json.loads(host.file(STATE_DIR + '/shared-memory-before.json').content_string)


def _now(host):
    command = host.run('python3 %s/snapshot.py %s' % (STATE_DIR, ' '.join(KEYS)))
    assert command.rc == 0, command.stderr
    return json.loads(command.stdout)


def test_etc_unchanged(host):
    before, now = _before(host), _now(host)
    changed = sorted(path for path in set(before['etc']) | set(now['etc'])
                     if before['etc'].get(path) != now['etc'].get(path))
    assert changed == []
    assert now['etc_sha256'] == before['etc_sha256']


def test_live_values_unchanged(host):
    assert _now(host)['sysctl'] == _before(host)['sysctl']


def test_transparent_huge_pages_unchanged(host):
    saved = json.loads(host.file(STATE_DIR + '/shared-memory-thp.json').content_string)
    for name in ('enabled', 'defrag'):
        live = host.file('/sys/kernel/mm/transparent_hugepage/' + name).content_string
        assert '[%s]' % saved[name] in live


def test_no_files_written(host):
    for path in ('/etc/sysctl.d/90-dbhost-tuning-shm.conf', '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf',
                 '/etc/security/limits.d/90-dbhost-tuning.conf', '/etc/tmpfiles.d/90-dbhost-tuning-thp.conf',
                 '/etc/systemd/system/%s.d' % SERVICE):
        assert not host.file(path).exists, path


def test_service_limit_unchanged(host):
    """The stand-in service still has the container's default memlock (no drop-in, no reload)."""
    shown = host.check_output('systemctl show -p LimitMEMLOCK -p DropInPaths %s' % SERVICE)
    assert 'LimitMEMLOCK=8388608' in shown.splitlines()
    assert 'DropInPaths=' in shown.splitlines()
