# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""processor_sets in check mode: nothing changed on the container."""

import os

import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

with open(os.path.join(SCENARIO, 'molecule.yml')) as _handle:
    _CONFIG = yaml.safe_load(_handle)
testinfra_hosts = ['podman://' + platform['name'] for platform in _CONFIG['platforms']]

SERVICE = 'dbhost-cpubound.service'


def _status(host, pid, field):
    for line in host.file('/proc/%s/status' % pid).content_string.splitlines():
        if line.startswith(field + ':'):
            return line.split(':', 1)[1].strip()
    raise AssertionError(field)


def test_no_dropin(host):
    assert not host.file('/etc/systemd/system/%s.d' % SERVICE).exists


def test_no_cpuset(host):
    assert not host.file('/sys/fs/cgroup/cpuset/dbhost-db').exists


def test_systemd_has_no_binding(host):
    assert host.check_output('systemctl show -p CPUAffinity --value %s' % SERVICE).strip() == ''


def test_processes_keep_every_cpu(host):
    for unit in (SERVICE, 'dbhost-live.service'):
        pid = host.check_output('systemctl show -p MainPID --value %s' % unit).strip()
        assert _status(host, pid, 'Cpus_allowed_list') == '0-1'
        assert host.file('/proc/%s/numa_maps' % pid).content_string.split()[1] == 'default'
