# -*- coding: utf-8 -*-
"""DbEffect against a real PostgreSQL server (a throwaway cluster made with initdb), reading its real /proc.

systemd does not run here, so ``systemctl show`` is answered with the real postmaster's pid and
a cgroup the test makes in the v1 ``name=systemd`` hierarchy and moves the cluster's processes
into (as systemd's cgroup of a service holds them); where no cgroup can be made, the main process
alone is read.  The huge page pool is this machine's: the test sizes it from what PostgreSQL
itself says it needs (``postgres -C shared_memory_size_in_huge_pages``), writes
/proc/sys/vm/nr_hugepages and puts the old value back; where it cannot be written, that part is
skipped with the reason.  scripts/test.sh installs postgresql first (DBHOST_REQUIRE_DB_SERVERS=1).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import time

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import as_postgres, free_huge_pages, make_plan, new_postgres_cluster, run

pytestmark = pytest.mark.usefixtures('linux')

SERVICE = 'dbhost-test-postgresql.service'
NR_HUGEPAGES = '/proc/sys/vm/nr_hugepages'


def _children(pid):
    found = []
    for name in os.listdir('/proc'):
        try:
            with open('/proc/%s/stat' % name) as handle:
                if name.isdigit() and int(handle.read().rpartition(')')[2].split()[1]) == pid:
                    found.append(int(name))
        except (IOError, OSError, ValueError, IndexError):
            continue
    return found


class Cluster(object):
    def __init__(self, base, bindir):
        self.base = base
        self.bindir = bindir
        self.data = os.path.join(base, 'data')
        self.port = 20000 + (os.getpid() + 7) % 20000
        self.cgroup = None
        self.pg_ctl = as_postgres([os.path.join(bindir, 'pg_ctl'), '-D', self.data, '-w', '-l',
                                   os.path.join(base, 'log')])

    def conf(self, text):
        with open(os.path.join(self.data, 'postgresql.conf'), 'a') as handle:
            handle.write(text)

    def huge_pages_needed(self):
        """What the server itself computes for its shared memory, asked while it is stopped."""
        rc, out, err = run(as_postgres([os.path.join(self.bindir, 'postgres'), '-D', self.data, '-C',
                                        'shared_memory_size_in_huge_pages']))
        assert rc == 0, err
        return int(out.strip())

    def start(self):
        rc, out, err = run(self.pg_ctl + ['start'])
        assert rc == 0, out + err
        self.main = int(open(os.path.join(self.data, 'postmaster.pid')).readline())
        self.started = time.time()
        self._into_cgroup()

    def stop(self):
        run(self.pg_ctl + ['-m', 'fast', 'stop'])

    def _into_cgroup(self):
        folder = '/sys/fs/cgroup/systemd/dbhost-test-pg-%d' % os.getpid()
        try:
            if not os.path.isdir(folder):
                os.mkdir(folder)
            for pid in [self.main] + _children(self.main):
                with open(os.path.join(folder, 'cgroup.procs'), 'w') as handle:
                    handle.write('%d\n' % pid)
            self.cgroup = '/' + os.path.basename(folder)
        except (IOError, OSError):
            self.cgroup = None

    def systemctl(self, argv, **kwargs):
        assert argv[:3] == ['systemctl', 'show', SERVICE]
        return 0, 'MainPID=%d\nControlGroup=%s\nActiveState=active\nLoadState=loaded\n' % (
            self.main, self.cgroup or '/dbhost-test-no-cgroup'), ''

    def runner(self, argv):
        """systemctl answered as above; every other command (psql, postgres -C) run for real."""
        return self.systemctl(argv) if argv[:1] == ['systemctl'] else run(argv)


@pytest.fixture
def cluster():
    bindir, base, dummy = new_postgres_cluster('dbhost-pg-effect-')
    made = Cluster(base, bindir)
    made.conf("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\nshared_buffers = 16MB\n"
              "max_connections = 20\nhuge_pages = try\n" % (made.port, base))
    try:
        yield made
    finally:
        made.stop()
        if made.cgroup:
            try:
                os.rmdir('/sys/fs/cgroup/systemd' + made.cgroup)
            except OSError:
                pass
        shutil.rmtree(base, ignore_errors=True)


def _records(cluster, **kwargs):
    result = make_plan('db_effect', dict(kwargs, service=SERVICE, root='/'),
                       registry.Context(check_mode=True, runner=cluster.systemctl)).run()
    return dict((s.name, s) for s in result.settings), result


def test_real_postgresql_memlock_cpus_and_huge_pages_as_its_proc_says(cluster):
    if free_huge_pages() >= cluster.huge_pages_needed():
        pytest.skip('this machine has free huge pages enough for the cluster: the 4 kB fallback cannot be shown')
    cluster.start()
    # the limit pg_ctl started it with, asked of a shell started the same way (runuser, PAM)
    rc, out, err = run(as_postgres(['sh', '-c', 'ulimit -Sl']))
    assert rc == 0, err
    soft = None if out.strip() == 'unlimited' else int(out.strip()) * 1024
    soft_text = 'infinity' if soft is None else str(soft)
    cpus = numa.render_cpu_list(sorted(os.sched_getaffinity(cluster.main)))
    records, result = _records(cluster, checks=['huge_pages', 'memlock', 'cpus'], memlock=soft_text, cpus=cpus)

    huge = records['%s shared memory in huge pages' % SERVICE]
    # huge_pages = try with no pool: PostgreSQL fell back to a shared anonymous mapping in 4 kB pages
    assert huge.status == 'drift', huge.as_dict()
    assert huge.live.startswith('0 MiB of ')
    assert '/dev/zero (deleted), 4 kB pages' in huge.detail
    assert records['%s locked memory' % SERVICE].status == 'ok'
    assert records['%s CPUs' % SERVICE].status == 'ok'
    if cluster.cgroup:
        # the postmaster and its background processes, every one read
        assert records['%s CPUs' % SERVICE].target.startswith('pid %d and ' % cluster.main)

    if soft is not None:
        more, dummy = _records(cluster, checks=['memlock'], memlock=str(soft + 4096))
        assert more['%s locked memory' % SERVICE].status == 'drift'
    # the file that carries the setting changed after the postmaster started: pending a restart of the service
    marker = os.path.join(cluster.base, 'changed.conf')
    with open(marker, 'w') as handle:
        handle.write('changed\n')
    os.utime(marker, (cluster.started + 5, cluster.started + 5))
    pending, result = _records(cluster, checks=['huge_pages'], changed_by=[marker])
    record = pending['%s shared memory in huge pages' % SERVICE]
    assert record.status == 'pending_restart' and result.restart_required is True
    assert record.reason.endswith('restart %s' % SERVICE)


def test_real_postgresql_in_huge_pages_once_the_pool_is_sized_from_what_it_asks(cluster):
    needed = cluster.huge_pages_needed()
    with open(NR_HUGEPAGES) as handle:
        before = int(handle.read())
    try:
        with open(NR_HUGEPAGES, 'w') as handle:
            handle.write('%d\n' % (before + needed))
    except (IOError, OSError) as exc:
        pytest.skip('cannot size the huge page pool here (%s)' % exc)
    try:
        if free_huge_pages() < needed:
            pytest.skip('the kernel allocated the pool short (%d free, %d needed)' % (free_huge_pages(), needed))
        cluster.conf('huge_pages = on\n')
        cluster.start()
        records, dummy = _records(cluster, checks=['huge_pages'], huge_pages_bytes=needed * 2 * 1024 * 1024)
        record = records['%s shared memory in huge pages' % SERVICE]
        assert record.status == 'ok', record.as_dict()
        assert '(2048 kB pages)' in record.live and '/anon_hugepage (deleted)' in record.detail
        result = make_plan('db_effect', dict(service=SERVICE, checks=['engine_huge_pages'], engine='postgresql'),
                           registry.Context(runner=cluster.runner, check_mode=True)).run()
        engine = result.settings[0]
        assert engine.status == 'ok', engine.as_dict()
        assert engine.live.startswith('huge_pages = on, in huge pages: ') and 'silently' not in engine.detail
    finally:
        cluster.stop()
        with open(NR_HUGEPAGES, 'w') as handle:
            handle.write('%d\n' % before)


ENGINE = '%s huge page setting of the engine' % SERVICE


def test_real_postgresql_engine_setting_read_through_its_socket_and_its_command_line(cluster):
    needed = cluster.huge_pages_needed()
    if free_huge_pages() >= needed:
        pytest.skip('this machine has free huge pages enough for the cluster: the 4 kB fallback cannot be shown')
    cluster.start()
    result = make_plan('db_effect', dict(service=SERVICE, checks=['engine_huge_pages'], engine='postgresql'),
                       registry.Context(runner=cluster.runner, check_mode=True)).run()
    record = dict((s.name, s) for s in result.settings)[ENGINE]
    # huge_pages = try and no pool: the server runs, silently in 4 kB pages
    assert record.status == 'drift', record.as_dict()
    assert record.live.startswith('huge_pages = try, fell back to normal pages: 0 MiB of '), record.live
    assert record.desired == 'huge_pages asking for huge pages, and in them'
    assert record.detail == ('read by SHOW through %s/.s.PGSQL.%d; it needs %d huge pages; huge_pages = try falls '
                             'back to normal pages silently when the pool is short' % (cluster.base, cluster.port, needed))

    # the configuration changed under the running server: postgres -C with its own command line says so
    cluster.conf('huge_pages = on\n')
    again = make_plan('db_effect',
                      dict(service=SERVICE, checks=['engine_huge_pages'], engine='postgresql', changed_by=[os.path.join(cluster.data, 'postgresql.conf')]),
                      registry.Context(runner=cluster.runner, check_mode=True)).run()
    record = dict((s.name, s) for s in again.settings)[ENGINE]
    assert 'its configuration now gives on (read at its next start)' in record.detail, record.detail
    assert record.status == 'pending_restart' and again.restart_required is True


def test_real_postgresql_engine_setting_off(cluster):
    cluster.conf('huge_pages = off\n')
    cluster.start()
    result = make_plan('db_effect', dict(service=SERVICE, checks=['engine_huge_pages'], engine='postgresql'),
                       registry.Context(runner=cluster.runner, check_mode=True)).run()
    record = dict((s.name, s) for s in result.settings)[ENGINE]
    assert (record.status, record.live) == ('drift', 'huge_pages = off, no huge pages asked'), record.as_dict()
    assert record.detail.endswith('; the engine does not ask for huge pages')
