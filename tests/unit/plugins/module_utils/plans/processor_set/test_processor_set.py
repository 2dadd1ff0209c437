# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import common, linux, procfs, service
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, write

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'topologies.yml')) as _handle:
    TOPOLOGIES = yaml.safe_load(_handle)
with open(os.path.join(HERE, 'selection_cases.yml')) as _handle:
    SELECTION_CASES = yaml.safe_load(_handle)

UNIT = 'db.service'
DROPIN = '/etc/systemd/system/db.service.d/90-dbhost-tuning-cpus.conf'


def make_topology(base, name):
    spec = TOPOLOGIES[name]
    cpu = os.path.join(base, 'sys', 'devices', 'system', 'cpu')
    write(os.path.join(cpu, 'online'), spec['online'] + '\n')
    write(os.path.join(cpu, 'possible'), spec['possible'] + '\n')
    write(os.path.join(cpu, 'offline'), spec.get('offline', '') + '\n')
    for node, info in spec['nodes'].items():
        folder = os.path.join(base, 'sys', 'devices', 'system', 'node', 'node%d' % node)
        write(os.path.join(folder, 'cpulist'), info['cpus'] + '\n')
        write(os.path.join(folder, 'distance'), info['distance'] + '\n')
        write(os.path.join(folder, 'meminfo'), 'Node %d MemTotal:       %d kB\nNode %d MemFree: 1 kB\n'
              % (node, info['memory_kb'], node))
    return base


# ------------------------------------------------------------------ selection
@pytest.mark.parametrize('case', SELECTION_CASES, ids=lambda c: '%s-%s' % (c['topology'], c['cpus']))
def test_selection(case, tmp_path):
    topology = numa.read_topology(make_topology(str(tmp_path), case['topology']))
    try:
        cpus, nodes = common.select_cpus(case['cpus'], topology)
        mems = common.select_mems(case.get('mems'), cpus, topology)
        if case.get('exclusive'):
            common.check_exclusive(cpus, topology)
    except common.InputError as exc:
        assert 'error' in case, 'unexpected error: %s' % exc
        assert case['error'] in str(exc)
        return
    assert 'error' not in case, 'expected an error containing %r' % case['error']
    assert numa.render_cpu_list(cpus) == case['cpus_out']
    assert numa.render_cpu_list(mems) == case['mems_out']


def test_topology_report_keeps_distances(tmp_path):
    topology = numa.read_topology(make_topology(str(tmp_path), 'four_nodes_gaps'))
    report = common.topology_report(topology)
    assert report['nodes']['3'] == {'cpus': '24-27', 'memory_bytes': 0, 'distances': [40, 40, 40, 10]}
    assert report['nodes']['1']['cpus'] == '8-11'
    assert report['online_cpus'] == '0-3,8-10,16-19,24-27'
    assert report['offline_cpus'] == '4-7,11-15,20-23,28-31'


# ------------------------------------------------------------------ /proc parsers
MOUNTINFO = """\
94 83 0:51 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,size=4096k,nr_inodes=1024,mode=755
95 94 0:29 /libpod_parent/libpod-dc50 /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu
97 94 0:31 /libpod_parent/libpod-dc50 /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuset
52 94 0:38 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate
"""


def test_mountinfo_finds_v1_cpuset_and_its_cgroup_root():
    mounts = procfs.parse_mountinfo_cgroups(MOUNTINFO)
    assert mounts['cpuset'] == ('/sys/fs/cgroup/cpuset', '/libpod_parent/libpod-dc50')
    assert mounts['unified'] == ('/sys/fs/cgroup/unified', '/')


def test_mountinfo_pure_v2():
    text = '30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n'
    assert procfs.parse_mountinfo_cgroups(text) == {'cpuset': None, 'unified': ('/sys/fs/cgroup', '/')}


def test_proc_cgroup_and_numa_policy():
    cgroups = procfs.parse_proc_cgroup('4:memory:/a\n3:cpuset:/libpod_parent/x/dbhost-db\n1:cpu,cpuacct:/b\n0::/c\n')
    assert cgroups['cpuset'] == '/libpod_parent/x/dbhost-db'
    assert cgroups['cpuacct'] == '/b' and cgroups[''] == '/c'
    numa_maps = ('563764053000 bind:0 file=/usr/bin/sleep mapped=2 active=0 N0=2 kernelpagesize_kB=4\n'
                 '563764055000 default file=/usr/bin/sleep mapped=5 N0=5 kernelpagesize_kB=4\n')
    assert procfs.parse_numa_policy(numa_maps) == 'bind:0'
    assert procfs.parse_numa_policy('') is None


def test_status_fields():
    status = common.parse_status('Name:\tsleep\nUid:\t999\t998\t998\t998\nCpus_allowed_list:\t1\nMems_allowed_list:\t0\n')
    assert status['Cpus_allowed_list'] == '1' and status['Uid'].split()[1] == '998'


# ------------------------------------------------------------------ matchers
def test_matcher_refuses_bad_input():
    with pytest.raises(common.InputError, match=r'processes\[0\] needs at least one'):
        common.ProcessMatcher({}, 0)
    with pytest.raises(common.InputError, match=r'processes\[1\] user .* does not exist'):
        common.ProcessMatcher({'user': 'no-such-user-here'}, 1)
    with pytest.raises(common.InputError, match=r'processes\[2\] pattern .* is not a regular expression'):
        common.ProcessMatcher({'pattern': 'ora_('}, 2)
    with pytest.raises(common.InputError, match=r'unknown key'):
        common.ProcessMatcher({'name': 'x'}, 0)
    with pytest.raises(common.InputError, match=r'must not contain'):
        common.ProcessMatcher({'pid_file': '/run/../etc/x.pid'}, 0)


def test_matcher_needs_every_criterion(tmp_path):
    pid_file = str(tmp_path / 'db.pid')
    write(pid_file, '4242\n')
    matcher = common.ProcessMatcher({'pid_file': pid_file, 'user': '0', 'pattern': '^ora_pmon'}, 0)
    root_status = {'Uid': '0\t0\t0\t0'}
    assert matcher.matches(4242, root_status, ['ora_pmon_ORCL'], matcher.pid_from_file())
    assert not matcher.matches(4243, root_status, ['ora_pmon_ORCL'], matcher.pid_from_file())
    assert not matcher.matches(4242, {'Uid': '0\t1000\t0\t0'}, ['ora_pmon_ORCL'], 4242)
    assert not matcher.matches(4242, root_status, ['sqlplus', 'ora_pmon'], 4242)


# ------------------------------------------------------------------ drop-in rendering
def test_new_dropin_exact_text():
    assert service.render_dropin(None, 'affinity', [8, 9, 10, 11, 12, 13, 14, 15], [1]) == (
        service.HEADER + '\n[Service]\nCPUAffinity=8-15\nNUMAMask=1\nNUMAPolicy=bind\n')
    assert service.render_dropin(None, 'cpuset', [1], [0]) == (
        service.HEADER + '\n[Service]\nAllowedCPUs=1\nAllowedMemoryNodes=0\n')


def test_dropin_keeps_user_lines_and_switches_mode():
    before = ('# our comment\n[Service]\nCPUAffinity=0\n# keep me\nLimitMEMLOCK=infinity\nNUMAPolicy=bind\n'
              'NUMAMask=0\n')
    after = service.render_dropin(before, 'cpuset', [2, 3], [1])
    assert after == ('# our comment\n[Service]\n# keep me\nLimitMEMLOCK=infinity\n'
                     'AllowedCPUs=2-3\nAllowedMemoryNodes=1\n')
    same = service.render_dropin(after, 'cpuset', [2, 3], [1])
    assert same == after


def test_dropin_removed_when_only_ours_left_kept_otherwise():
    ours = service.render_dropin(None, 'affinity', [1], [0])
    assert service.render_dropin(ours, None, [], []) is None
    assert service.render_dropin(None, None, [], []) is None
    mixed = '[Service]\nCPUAffinity=1\nLimitNOFILE=65536\n'
    assert service.render_dropin(mixed, None, [], []) == '[Service]\nLimitNOFILE=65536\n'


def test_persisted_from_files_follows_systemd_list_rules():
    files = [('/lib/systemd/system/db.service', '[Service]\nExecStart=/bin/db\nCPUAffinity=0\n'),
             (DROPIN, '[Service]\nCPUAffinity=\nCPUAffinity=1\nNUMAPolicy=bind\nNUMAMask=0\n'),
             ('/etc/systemd/system/db.service.d/99-local.conf', '[Service]\nCPUAffinity=3 4\n')]
    values, sources = service.persisted_from_files(files)
    # The empty assignment in ours resets the unit file's 0; the later file adds 3 and 4.
    assert values['CPUAffinity'] == '1,3-4'
    assert sources['CPUAffinity'] == '/etc/systemd/system/db.service.d/99-local.conf'
    assert values['NUMAMask'] == '0' and values['NUMAPolicy'] == 'bind'


# ------------------------------------------------------------------ offline root (drop-in only)
@pytest.fixture
def image(tmp_path):
    base = make_topology(str(tmp_path / 'img'), 'two_nodes')
    write(os.path.join(base, 'lib/systemd/system', UNIT), '[Unit]\nDescription=db\n[Service]\nExecStart=/bin/db\n')
    return base


def linux_plan(args, check_mode=False, runner=None, **seams):
    """The Linux plan itself (plans/processor_set/linux.py) of ``args`` with the spec's defaults; ``seams``:
    proc, cgroup_mounts.  Made without the kind's constraints, for a test of one step of it."""
    options = registry.KINDS['processor_set'].options(args)
    return linux.LinuxProcessorSet(options, registry.Context(check_mode, runner), **seams)


def run(args, check_mode=False, **kwargs):
    return linux_plan(args, check_mode, **kwargs).run()


def test_offline_root_writes_dropin_then_is_idempotent(image):
    args = {'name': 'db', 'cpus': 'node:1', 'service': 'db', 'root': image}
    before = digest(image)
    dry = run(args, check_mode=True).as_dict()
    assert digest(image) == before
    assert dry['changed'] is True
    assert [s['status'] for s in dry['settings']] == ['drift']
    assert dry['settings'][0]['persisted'] is None
    assert dry['diff'][0]['after'].endswith('CPUAffinity=8-15\nNUMAMask=1\nNUMAPolicy=bind\n')

    first = run(args).as_dict()
    assert first['changed'] is True
    record = first['settings'][0]
    assert record['name'] == 'service:db.service' and record['status'] == 'changed'
    assert record['persisted'] == {'CPUAffinity': '8-15', 'NUMAPolicy': 'bind', 'NUMAMask': '1'}
    assert record['desired'] == {'cpus': '8-15', 'mems': '1', 'mode': 'affinity'}
    assert 'live state not read' in record['detail']
    with open(os.path.join(image, DROPIN.lstrip('/'))) as handle:
        assert handle.read() == service.HEADER + '\n[Service]\nCPUAffinity=8-15\nNUMAMask=1\nNUMAPolicy=bind\n'
    assert first['topology']['nodes']['1'] == {'cpus': '8-15', 'memory_bytes': 33554432 * 1024,
                                               'distances': [21, 10]}
    assert first['cpus'] == '8-15' and first['mems'] == '1'

    second = run(args).as_dict()
    assert second['changed'] is False and second['settings'][0]['status'] == 'ok'
    assert 'diff' not in second


def test_offline_root_reports_a_later_dropin_as_shadowing(image):
    write(os.path.join(image, 'etc/systemd/system/db.service.d/99-local.conf'), '[Service]\nCPUAffinity=0\n')
    result = run({'name': 'db', 'cpus': '8-15', 'service': 'db', 'root': image}).as_dict()
    record = result['settings'][0]
    assert record['status'] == 'shadowed'
    assert '99-local.conf' in record['detail']
    assert record['persisted']['CPUAffinity'] == '0,8-15'


def test_offline_root_absent_removes_dropin(image):
    run({'name': 'db', 'cpus': '8-15', 'service': 'db', 'root': image})
    result = run({'name': 'db', 'state': 'absent', 'service': 'db', 'root': image}).as_dict()
    assert result['changed'] is True
    assert not os.path.exists(os.path.join(image, DROPIN.lstrip('/')))
    again = run({'name': 'db', 'state': 'absent', 'service': 'db', 'root': image}).as_dict()
    assert again['changed'] is False


def test_offline_root_processes_are_unsupported(image):
    result = run({'name': 'db', 'cpus': '1', 'processes': [{'pattern': 'x'}], 'root': image}).as_dict()
    assert [(s['name'], s['status']) for s in result['settings']] == [('processes', 'unsupported')]


@pytest.mark.parametrize('args, message', [
    ({'name': 'db', 'cpus': '99', 'service': 'db'}, 'CPU(s) 99 do not exist'),
    ({'name': 'db', 'cpus': 'node:7', 'service': 'db'}, 'node(s) 7 do not exist'),
    ({'name': 'db', 'cpus': '0-15', 'exclusive': True, 'service': 'db'}, 'leave no online CPU'),
    ({'name': '../x', 'cpus': '1', 'service': 'db'}, 'name'),
    ({'name': 'db', 'cpus': '1', 'service': 'a/b'}, 'service'),
    ({'name': 'db', 'cpus': '1', 'service': 'db.socket'}, 'only .service units'),
    ({'name': 'db', 'cpus': '1'}, 'nothing to bind'),
    ({'name': 'db', 'cpus': '1', 'service': 'db', 'project': 'user.oracle'}, 'SunOS option'),
])
def test_bad_input_refused_before_any_change(image, args, message):
    args = dict(args, root=image)
    before = digest(image)
    with pytest.raises(common.InputError, match=message.replace('(', r'\(').replace(')', r'\)')):
        run(args)
    assert digest(image) == before


# ------------------------------------------------------------------ cpuset v1 on a fake tree
def test_cpuset_v1_folder_values_and_removal(tmp_path):
    mount = str(tmp_path / 'cpuset')
    write(os.path.join(mount, 'cpuset.cpus'), '0-15\n')
    write(os.path.join(mount, 'cpuset.mems'), '0-1\n')
    write(os.path.join(mount, 'cgroup.procs'), '')
    cpuset = procfs.CpusetV1(mount, '/machine/ctr', 'db')
    assert cpuset.cgroup_path == '/machine/ctr/dbhost-db'
    assert cpuset.parent_allows([8, 16], [1, 2]) == ([16], [2])
    assert cpuset.state() is None
    os.mkdir(cpuset.folder)
    for name in ('cpuset.cpus', 'cpuset.mems', 'cpuset.memory_migrate', 'cgroup.procs'):
        write(os.path.join(cpuset.folder, name), '0\n' if name == 'cpuset.memory_migrate' else '')
    cpuset.ensure([8, 9, 10], [1])
    assert cpuset.state() == {'cpus': [8, 9, 10], 'mems': [1], 'memory_migrate': '1'}
    with open(os.path.join(cpuset.folder, 'cpuset.cpus')) as handle:
        assert handle.read() == '8-10'
    assert cpuset.holds('/machine/ctr/dbhost-db') and not cpuset.holds('/machine/ctr')


def test_cpuset_v1_on_host_root_has_no_double_slash(tmp_path):
    assert procfs.CpusetV1(str(tmp_path), '/', 'db').cgroup_path == '/dbhost-db'


# ------------------------------------------------------------------ real processes (affinity)
def _child(marker):
    code = 'import threading, time; threading.Thread(target=time.sleep, args=(60,), daemon=True).start(); time.sleep(60)'
    child = subprocess.Popen([sys.executable, '-c', code, marker])
    deadline = time.time() + 5
    while time.time() < deadline:
        if os.path.isdir('/proc/%d/task' % child.pid) and len(os.listdir('/proc/%d/task' % child.pid)) >= 2:
            break
        time.sleep(0.05)
    return child


def _thread_cpus(pid):
    found = set()
    for tid in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/status' % (pid, tid)) as handle:
            for line in handle:
                if line.startswith('Cpus_allowed_list:'):
                    found.add(line.split(':', 1)[1].strip())
    return found


NO_CGROUPS = {'cpuset': None, 'unified': None}


@pytest.mark.skipif(len(numa.read_topology('/')['online_cpus']) < 2 or not hasattr(os, 'sched_setaffinity'),
                    reason='needs a Linux host with two online CPUs')
def test_live_process_bound_on_every_thread_then_idempotent_then_released():
    online = numa.read_topology('/')['online_cpus']
    target = online[-1]
    marker = 'dbhost-ps-test-%d' % os.getpid()
    child = _child(marker)
    try:
        args = {'name': 'unit', 'cpus': str(target), 'processes': [{'pattern': marker}]}
        dry = run(args, check_mode=True, cgroup_mounts=NO_CGROUPS).as_dict()
        assert [s['status'] for s in dry['settings']] == ['drift']
        assert _thread_cpus(child.pid) == set([numa.render_cpu_list(online)])

        first = run(args, cgroup_mounts=NO_CGROUPS).as_dict()
        record = first['settings'][0]
        assert record['name'] == 'pid:%d' % child.pid and record['status'] == 'changed'
        assert record['live']['cpus'] == str(target) and record['live']['threads'] >= 2
        assert _thread_cpus(child.pid) == set([str(target)])

        second = run(args, cgroup_mounts=NO_CGROUPS).as_dict()
        assert second['changed'] is False and second['settings'][0]['status'] == 'ok'

        released = run({'name': 'unit', 'state': 'absent', 'processes': [{'pattern': marker}]},
                       cgroup_mounts=NO_CGROUPS).as_dict()
        assert released['settings'][0]['status'] == 'changed'
        assert _thread_cpus(child.pid) == set([numa.render_cpu_list(online)])
    finally:
        child.kill()
        child.wait()


def test_no_match_is_reported_not_hidden():
    result = run({'name': 'unit', 'cpus': '0', 'processes': [{'pattern': 'no-such-process-%d-xyz' % os.getpid()}]},
                 cgroup_mounts=NO_CGROUPS).as_dict()
    assert result['settings'][0]['status'] == 'ok'
    assert 'no running process matches' in result['settings'][0]['detail']


def test_memory_of_running_process_without_cpuset_is_unsupported(tmp_path, monkeypatch):
    """Two nodes, the process may use both, memory asked on node 1, no cpuset: said, not hidden."""
    proc = str(tmp_path / 'proc')
    write(os.path.join(proc, '4242', 'status'), 'Name:\tdb\nUid:\t0\t0\t0\t0\nCpus_allowed_list:\t8-15\n'
          'Mems_allowed_list:\t0-1\n')
    write(os.path.join(proc, '4242', 'cmdline'), 'db\0--serve\0')
    write(os.path.join(proc, '4242', 'task', '4242', 'status'), 'Cpus_allowed_list:\t8-15\n')
    two = numa.read_topology(make_topology(str(tmp_path / 'img'), 'two_nodes'))
    monkeypatch.setattr(linux.numa, 'read_topology', lambda root='/': two)
    result = run({'name': 'db', 'cpus': 'node:1', 'processes': [{'pattern': '^db'}]},
                 proc=proc, cgroup_mounts=NO_CGROUPS).as_dict()
    record = result['settings'][0]
    assert record['status'] == 'unsupported'
    assert 'memory binding of a running process is not possible' in record['detail']


# ------------------------------------------------------------------ service mode by cgroup layout
@pytest.mark.parametrize('layout, controllers, wanted, mode', [
    ('v2', 'cpuset cpu io memory pids', 'auto', 'cpuset'),
    ('v2', 'cpu io memory pids', 'auto', 'affinity'),
    ('hybrid', 'cpuset cpu', 'auto', 'affinity'),
    ('v2', 'cpuset cpu', 'affinity', 'affinity'),
    ('v2', 'cpu io', 'cpuset', 'error'),
])
def test_service_mode_follows_the_cgroup_layout(tmp_path, layout, controllers, wanted, mode):
    unified = str(tmp_path / 'unified')
    write(os.path.join(unified, 'cgroup.controllers'), controllers + '\n')
    mounts = {'unified': (unified, '/'), 'cpuset': ('/sys/fs/cgroup/cpuset', '/') if layout == 'hybrid' else None}
    plan = linux_plan({'name': 'db', 'service_mode': wanted}, cgroup_mounts=mounts)
    plan.service = 'db.service'
    if mode == 'error':
        with pytest.raises(common.InputError, match='needs the cpuset controller on cgroup v2'):
            plan._service_mode()
    else:
        assert plan._service_mode() == mode


# ------------------------------------------------------------------ a running systemd (stand-in)
class FakeSystemd(object):
    """systemctl as seen by the module: show reflects the unit files as of the last
    daemon-reload (NeedDaemonReload=yes when they changed since), MainPID from a fake /proc."""

    def __init__(self, root, proc, pid=321):
        self.root, self.proc, self.pid = root, proc, pid
        self.calls = []
        self.loaded = self._files()
        self.start(cpus='0-15', policy='default')

    def _files(self):
        return [(shown, linux.read_text(local) or '') for shown, local in linux.systemd.unit_files(self.root, UNIT)]

    def start(self, cpus, policy):
        write(os.path.join(self.proc, str(self.pid), 'status'),
              'Name:\tdb\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0-1\n' % cpus)
        write(os.path.join(self.proc, str(self.pid), 'numa_maps'), '55d0 %s file=/bin/db mapped=2 N0=2\n' % policy)

    def restart(self):
        values, sources = service.persisted_from_files(self.loaded)
        policy = 'bind:%s' % values['NUMAMask'] if values.get('NUMAPolicy') == 'bind' else 'default'
        self.start(values.get('CPUAffinity') or '0-15', policy)

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:2] == ['systemctl', 'daemon-reload']:
            self.loaded = self._files()
            return 0, '', ''
        assert argv[:2] == ['systemctl', 'show'] and argv[-1] == UNIT
        values, sources = service.persisted_from_files(self.loaded)
        lines = ['LoadState=loaded', 'ActiveState=active', 'MainPID=%d' % self.pid,
                 'NeedDaemonReload=%s' % ('yes' if self._files() != self.loaded else 'no'),
                 'DropInPaths=%s' % ' '.join(s for s, t in self.loaded if s.endswith('.conf'))]
        for key in service.ALL_KEYS:
            lines.append('%s=%s' % (key, values.get(key, 'n/a' if key == 'NUMAPolicy' else '')))
        return 0, '\n'.join(lines) + '\n', ''


def live_run(image, systemd_stub, monkeypatch, check_mode=False, **extra):
    monkeypatch.setattr(linux.systemd, 'systemd_running', lambda root='/': True)
    plan = linux_plan(dict({'name': 'db', 'cpus': 'node:1', 'service': 'db', 'root': image}, **extra),
                      check_mode, systemd_stub, proc=systemd_stub.proc, cgroup_mounts=NO_CGROUPS)
    plan.live = True      # the drop-in still goes under the test root
    return plan.run().as_dict()


def test_running_service_pending_restart_then_ok_after_restart(image, tmp_path, monkeypatch):
    stub = FakeSystemd(image, str(tmp_path / 'proc'))
    dry = live_run(image, stub, monkeypatch, check_mode=True)
    assert dry['settings'][0]['status'] == 'drift'
    assert ['systemctl', 'daemon-reload'] not in stub.calls

    first = live_run(image, stub, monkeypatch)
    record = first['settings'][0]
    assert record['status'] == 'pending_restart' and first['restart_required'] is True and first['changed'] is True
    assert ['systemctl', 'daemon-reload'] in stub.calls
    assert record['persisted'] == {'CPUAffinity': '8-15', 'NUMAPolicy': 'bind', 'NUMAMask': '1'}
    assert record['live'] == {'pid': 321, 'cpus': '0-15', 'mems': '0-1', 'numa_policy': 'default'}

    stub.calls = []
    second = live_run(image, stub, monkeypatch)
    assert second['settings'][0]['status'] == 'pending_restart'
    assert second['changed'] is False and second['restart_required'] is True
    assert ['systemctl', 'daemon-reload'] not in stub.calls

    stub.restart()
    third = live_run(image, stub, monkeypatch)
    assert third['settings'][0]['status'] == 'ok' and third['restart_required'] is False
    assert third['settings'][0]['live']['numa_policy'] == 'bind:1'


def test_running_service_shadowed_by_a_later_dropin(image, tmp_path, monkeypatch):
    write(os.path.join(image, 'etc/systemd/system/db.service.d/95-site.conf'), '[Service]\nNUMAPolicy=interleave\n')
    stub = FakeSystemd(image, str(tmp_path / 'proc'))
    result = live_run(image, stub, monkeypatch)
    record = result['settings'][0]
    assert record['status'] == 'shadowed'
    assert '/etc/systemd/system/db.service.d/95-site.conf' in record['detail']
    assert record['persisted']['NUMAPolicy'] == 'interleave'


def test_running_service_that_does_not_exist_is_refused(image, monkeypatch):
    def missing(argv):
        return 0, 'LoadState=not-found\nMainPID=0\n', ''
    monkeypatch.setattr(linux.systemd, 'systemd_running', lambda root='/': True)
    plan = linux_plan({'name': 'db', 'cpus': '1', 'service': 'nosuch', 'root': image}, runner=missing,
                      cgroup_mounts=NO_CGROUPS)
    plan.live = True
    with pytest.raises(common.InputError, match='service nosuch.service does not exist'):
        plan.run()
    assert not os.path.exists(os.path.join(image, 'etc/systemd/system/nosuch.service.d'))
