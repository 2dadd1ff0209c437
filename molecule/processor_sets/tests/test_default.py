# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""processor_sets role: the service's main PID and the live worker run on exactly CPU 1
with memory on node 0, read back from the kernel, not from the role's result."""

import os

import pytest
import yaml

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

with open(os.path.join(SCENARIO, 'molecule.yml')) as _handle:
    _CONFIG = yaml.safe_load(_handle)
# testinfra talks to podman directly (much faster than through Ansible).
testinfra_hosts = ['podman://' + platform['name'] for platform in _CONFIG['platforms']]

SERVICE = 'dbhost-cpubound.service'
DROPIN = '/etc/systemd/system/dbhost-cpubound.service.d/90-dbhost-tuning-cpus.conf'
HEADER = '# Managed by dbhost.tuning.processor_set; the keys below are overwritten on every run.'
CPUSET = '/sys/fs/cgroup/cpuset/dbhost-db'


def _status(host, pid, field, task=None):
    path = '/proc/%s/task/%s/status' % (pid, task) if task else '/proc/%s/status' % pid
    for line in host.file(path).content_string.splitlines():
        if line.startswith(field + ':'):
            return line.split(':', 1)[1].strip()
    raise AssertionError('%s has no %s' % (path, field))


def _main_pid(host):
    pid = host.check_output('systemctl show -p MainPID --value %s' % SERVICE).strip()
    assert pid not in ('', '0'), 'the service is not running'
    return pid


def _worker_pid(host):
    return host.check_output('systemctl show -p MainPID --value dbhost-live.service').strip()


def test_dropin_content(host):
    dropin = host.file(DROPIN)
    assert dropin.user == 'root' and dropin.mode == 0o644
    assert dropin.content_string == HEADER + '\n[Service]\nCPUAffinity=1\nNUMAMask=0\nNUMAPolicy=bind\n'


def test_systemd_loaded_the_dropin(host):
    shown = host.check_output('systemctl show -p CPUAffinity -p NUMAPolicy -p NUMAMask -p NeedDaemonReload %s'
                              % SERVICE).splitlines()
    assert sorted(shown) == ['CPUAffinity=1', 'NUMAMask=0', 'NUMAPolicy=bind', 'NeedDaemonReload=no']


def test_service_main_pid_runs_on_cpu_1(host):
    pid = _main_pid(host)
    # taskset prints the mask in hex: CPU 1 alone is 2.
    assert host.check_output('taskset -p %s' % pid).strip().endswith('affinity mask: 2')
    assert _status(host, pid, 'Cpus_allowed_list') == '1'
    assert _status(host, pid, 'Mems_allowed_list') == '0'


def test_service_memory_policy_is_bind_node_0(host):
    first = host.file('/proc/%s/numa_maps' % _main_pid(host)).content_string.splitlines()[0]
    assert first.split()[1] == 'bind:0'


def test_live_worker_every_thread_on_cpu_1(host):
    pid = _worker_pid(host)
    tasks = host.check_output('ls /proc/%s/task' % pid).split()
    assert len(tasks) == 2
    for task in tasks:
        assert _status(host, pid, 'Cpus_allowed_list', task) == '1'
    assert host.check_output('taskset -p %s' % pid).strip().endswith('affinity mask: 2')
    assert _status(host, pid, 'Mems_allowed_list') == '0'


def test_live_worker_is_in_the_cpuset(host):
    pid = _worker_pid(host)
    cgroups = dict(line.split(':', 2)[1:] for line in host.file('/proc/%s/cgroup' % pid).content_string.splitlines())
    assert cgroups['cpuset'].endswith('/dbhost-db')
    assert pid in host.file(CPUSET + '/cgroup.procs').content_string.split()


@pytest.mark.parametrize('name, value', [('cpuset.cpus', '1'), ('cpuset.mems', '0'), ('cpuset.memory_migrate', '1')])
def test_cpuset_files(host, name, value):
    assert host.file('%s/%s' % (CPUSET, name)).content_string.strip() == value


def test_other_processes_untouched(host):
    # PID 1 (systemd) was not matched: it keeps every CPU.
    assert _status(host, 1, 'Cpus_allowed_list') == '0-1'
