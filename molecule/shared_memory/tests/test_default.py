# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""shared_memory role: values read back live, persisted files, the service's memlock.

The expected values are worked out here from the container's own /proc/meminfo and
page size with the documented formulas, independently of the role and filter code.
"""

import json
import os

import pytest
import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE_DIR = '/var/lib/dbhost-molecule'

with open(os.path.join(SCENARIO, 'molecule.yml')) as _handle:
    _CONFIG = yaml.safe_load(_handle)
# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = ['podman://' + platform['name'] for platform in _CONFIG['platforms']]

HUGEPAGE = 2 * 1024 * 1024
SHARED_MEMORY = 4 * 1024 * 1024
PAGES = SHARED_MEMORY // HUGEPAGE + 1           # the scenario's margin is one page
POOL = PAGES * HUGEPAGE
MEMLOCK_KB = POOL // 1024                       # PostgreSQL: memlock = the huge page pool
GID = 54322                                     # dbtest, created by prepare
SHM_FILE = '/etc/sysctl.d/90-dbhost-tuning-shm.conf'
SHM_HEADER = ('# Managed by dbhost.tuning.shared_memory (sized by sizing/shm.py); local edits to these '
              'keys are overwritten.')
HUGEPAGES_FILE = '/etc/sysctl.d/90-dbhost-tuning-hugepages.conf'
LIMITS_FILE = '/etc/security/limits.d/90-dbhost-tuning.conf'
TMPFILES_FILE = '/etc/tmpfiles.d/90-dbhost-tuning-thp.conf'
SERVICE = 'dbhost-fakedb.service'
THP = '/sys/kernel/mm/transparent_hugepage/enabled'


def _sysctl(host, key):
    return ' '.join(host.check_output('sysctl -n %s' % key).split())


def _data_lines(text):
    """Non-comment, non-blank lines, split into fields."""
    return [line.split() for line in text.splitlines() if line.strip() and not line.lstrip().startswith('#')]


@pytest.fixture(name='expected')
def expected_fixture(host):
    ram = int(host.check_output("awk '/^MemTotal:/ {print $2}' /proc/meminfo")) * 1024
    page = int(host.check_output('getconf PAGESIZE'))
    shmmax = min(max(ram // 2, SHARED_MEMORY), ram - 1)        # Oracle: half of RAM, at least the segment
    shmall = -(-max(shmmax, POOL) // page)                    # in pages of the base page size
    return {'kernel.shmmax': str(shmmax), 'kernel.shmall': str(shmall), 'kernel.shmmni': '4096',
            'vm.hugetlb_shm_group': str(GID)}


@pytest.mark.parametrize('key', ['kernel.shmmax', 'kernel.shmall', 'kernel.shmmni', 'vm.hugetlb_shm_group'])
def test_live_value(host, expected, key):
    assert _sysctl(host, key) == expected[key]


def test_shm_keys_differ_from_the_namespace_defaults(host, expected):
    """The role really set them (a fresh IPC namespace starts at ULONG_MAX - 2^24)."""
    before = json.loads(host.file(STATE_DIR + '/shared-memory-before.json').content_string)['sysctl']
    assert before['kernel.shmmax'] != expected['kernel.shmmax']


# SHMMNI (include/uapi/linux/shm.h) is what the kernel boots with when no file sets it:
# the computed 4096 is that value, so nothing needs persisting for it.
BUILT_IN = {'kernel.shmmni': '4096'}


def test_shm_file_content(host, expected):
    lines = [SHM_HEADER] + ['%s = %s' % (key, expected[key]) for key in sorted(expected) if key not in BUILT_IN]
    assert host.file(SHM_FILE).content_string == '\n'.join(lines) + '\n'
    assert (host.file(SHM_FILE).user, host.file(SHM_FILE).mode) == ('root', 0o644)


def test_huge_pages_allocated(host):
    assert _sysctl(host, 'vm.nr_hugepages') == str(PAGES)
    assert host.file('/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages').content_string.strip() == str(PAGES)
    meminfo = host.file('/proc/meminfo').content_string
    assert ['HugePages_Total:', str(PAGES)] in [line.split() for line in meminfo.splitlines()]


def test_huge_pages_persisted(host):
    persisted = host.file(HUGEPAGES_FILE).content_string
    assert _data_lines(persisted) == [['vm.nr_hugepages', '=', str(PAGES)]]
    assert persisted.startswith('# Managed by dbhost.tuning')


def test_boot_loads_our_values(host, expected):
    """What systemd-sysctl applies at the next boot (last assignment wins)."""
    values = {}
    for line in host.check_output('/lib/systemd/systemd-sysctl --cat-config').splitlines():
        line = line.strip()
        if line and line[0] not in '#;' and '=' in line:
            key, value = line.split('=', 1)
            values[key.strip().lstrip('-').replace('/', '.')] = ' '.join(value.split())
    wanted = dict(expected, **{'vm.nr_hugepages': str(PAGES)})
    for key in BUILT_IN:
        assert values.get(key) is None and wanted.pop(key) == BUILT_IN[key]
    assert dict((key, values.get(key)) for key in wanted) == wanted


def test_limits_d_file_content(host):
    limits = host.file(LIMITS_FILE)
    assert _data_lines(limits.content_string) == [
        ['dbtest', 'soft', 'memlock', str(MEMLOCK_KB)],
        ['dbtest', 'hard', 'memlock', str(MEMLOCK_KB)],
    ]
    assert all(line.startswith('#') for line in limits.content_string.splitlines()
               if line.strip() and not line.startswith('dbtest'))
    assert (limits.user, limits.mode) == ('root', 0o644)


def test_service_unit_has_the_memlock_limit(host):
    shown = host.check_output('systemctl show -p LimitMEMLOCK -p LimitMEMLOCKSoft %s' % SERVICE).splitlines()
    assert sorted(shown) == ['LimitMEMLOCK=%d' % POOL, 'LimitMEMLOCKSoft=%d' % POOL]


def test_running_service_got_the_memlock_limit(host):
    """The restart (shared_memory_service_restart) gave the running process the limit."""
    pid = host.check_output('systemctl show -p MainPID --value %s' % SERVICE)
    assert pid != '0'
    limits = host.file('/proc/%s/limits' % pid).content_string
    line = [row for row in limits.splitlines() if row.startswith('Max locked memory')][0]
    assert line.split()[3:6] == [str(POOL), str(POOL), 'bytes']


def test_transparent_huge_pages_persisted(host):
    text = host.file(TMPFILES_FILE).content_string
    assert _data_lines(text) == [['w', THP, '-', '-', '-', '-', 'never']]
    # systemd-tmpfiles would write it at the next boot.
    assert 'w %s - - - - never' % THP in host.check_output('systemd-tmpfiles --cat-config')


def test_transparent_huge_pages_live_untouched(host):
    """Host-global: this scenario persists only, so the host's value is what prepare saw."""
    saved = json.loads(host.file(STATE_DIR + '/shared-memory-thp.json').content_string)
    live = host.file(THP).content_string
    assert '[%s]' % saved['enabled'] in live
