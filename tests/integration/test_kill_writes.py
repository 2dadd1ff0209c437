# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIGKILL at random moments of an apply: every file a module writes is old or new, never torn.

For each writing engine, a fake host (tests/unit/plugins/modules/fake_host.py) whose
target files are made large (several MB of comment lines, which every run keeps) is
tuned by the module run as Ansible runs it: a separate Python process given its
arguments in a JSON file (``{"ANSIBLE_MODULE_ARGS": {...}}``).  One uninterrupted run
on a copy of the tree gives the new content and the run's duration; then, KILLS times,
the changed files are put back to the old content and the module is started and sent
SIGKILL after a random delay within that duration (seeded per engine, so a failure can
be replayed).  The kills are shared between two copies of the fake host that run side
by side when the machine has two CPUs or more.  After each kill, every target holds
exactly the old or exactly the new bytes, and the baseline the run keeps
(``var/lib/dbhost-tuning/baseline.json``, the one other file it may make) is absent or
complete JSON holding the old bytes of every target that is already new.  A last run without kill leaves the new
content, and the target's folder holds the same names as after the uninterrupted run:
no ``.NAME.XXXXXXXX`` temporary file of a killed write is left.

Where each kill landed (before the write; during it, when the kill left a temporary file;
after the rename; or after the run had ended) depends on the machine's load; it is
recorded (user property ``kill_counts``) and printed at the end of the session by
conftest.py, never asserted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib.util
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import ansible_collections.dbhost.tuning as collection

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'fake_host', os.path.join(os.path.dirname(HERE), 'unit', 'plugins', 'modules', 'fake_host.py'))
fake_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_host)

KILLS = 20
# Kills run in this many trees at once (each its own copy of the fake host).
LANES = max(1, min(2, os.cpu_count() or 1))
# Each large file: this many bytes of comment lines before what the file holds already.
LARGE = 4 * 1024 * 1024
# Kernel pseudo-files: written in place (as the kernel takes them), not atomically.
PSEUDO = ('/proc/', '/sys/')
HUGE_1G = '/sys/kernel/mm/hugepages/hugepages-1048576kB'
# What a first apply keeps of the host before it changes it (engine/baseline.py): a file the run may make.
BASELINE = 'var/lib/dbhost-tuning/baseline.json'
# Not a timing check: only a run that hangs for good stops the test (a run takes about a second).
HANG = 600
BEFORE, DURING, AFTER, FINISHED = 'before write', 'during write', 'after rename', 'run ended'


def _args(module, **changes):
    args = copy.deepcopy(fake_host.BASELINE[module])
    args.update(changes)
    return args


def _one_gig_pool(root):
    for name in ('nr_hugepages', 'free_hugepages', 'surplus_hugepages', 'resv_hugepages'):
        fake_host.put(root, '%s/%s' % (HUGE_1G, name), '0\n')


def _grub(root):
    fake_host.put(root, '/proc/cmdline', 'BOOT_IMAGE=/boot/vmlinuz root=UUID=0a1b ro quiet\n')
    fake_host.put(root, '/etc/default/grub', 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n')


# (id, module, arguments, the files made large (the module's persisted files), extra set-up)
CASES = [
    ('kernel_params', 'kernel_params', _args('kernel_params'), ['/etc/sysctl.d/90-dbhost-tuning.conf'], None),
    ('hugepages', 'hugepages', _args('hugepages', pages=[{'size': '2M', 'count': 16}, {'size': '1G', 'count': 1}]),
     ['/etc/sysctl.d/90-dbhost-tuning-hugepages.conf', '/etc/tmpfiles.d/90-dbhost-tuning-hugepages.conf'], _one_gig_pool),
    ('sysfs_attr', 'sysfs_attr', _args('sysfs_attr'), ['/etc/tmpfiles.d/90-dbhost-tuning.conf'], None),
    ('resource_limits', 'resource_limits', _args('resource_limits'), ['/etc/security/limits.d/90-dbhost-tuning.conf'], None),
    ('block_queue', 'block_queue', _args('block_queue'), ['/etc/udev/rules.d/61-dbhost-tuning.rules'], None),
    ('mount_options', 'mount_options', _args('mount_options'), ['/etc/fstab'], None),
    ('db_parameter-postgresql', 'db_parameter', _args('db_parameter'), [fake_host.PGCONF], None),
    ('db_parameter-mysql', 'db_parameter',
     _args('db_parameter', engine='mysql', path=fake_host.MYCNF, params={'innodb_flush_method': 'O_DIRECT'}),
     [fake_host.MYCNF], None),
    ('db_parameter-oracle', 'db_parameter',
     _args('db_parameter', engine='oracle', path=fake_host.PFILE, params={'filesystemio_options': 'SETALL'}),
     [fake_host.PFILE], None),
    ('kernel_cmdline', 'kernel_cmdline', _args('kernel_cmdline'), ['/etc/default/grub.d/99-dbhost-tuning.cfg'], _grub),
    ('processor_set', 'processor_set', _args('processor_set'),
     ['/etc/systemd/system/postgresql.service.d/90-dbhost-tuning-cpus.conf'], None),
]


def _collection_base():
    """The folder that holds ansible_collections/dbhost/tuning, for the module processes' PYTHONPATH."""
    tuning = list(collection.__path__)[0]
    return os.path.dirname(os.path.dirname(os.path.dirname(tuning)))


def _local(root, path):
    return os.path.join(root, path.lstrip('/'))


def _read(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read()
    except IOError:
        return None


def _snapshot(root):
    """{host path relative to root: bytes} for every regular file under ``root`` (links left out)."""
    files = {}
    for folder, dummy, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                files[os.path.relpath(path, root)] = _read(path)
    return files


def _filler(size):
    lines = []
    total = 0
    number = 0
    while total < size:
        line = '# %07d filler: a long file whose comments every run keeps, byte for byte, around its entries\n' % number
        lines.append(line)
        total += len(line)
        number += 1
    return ''.join(lines)


def _make_large(root, paths):
    filler = _filler(LARGE)
    for path in paths:
        fake_host.put(root, path, filler + (_read(_local(root, path)) or b'').decode('utf-8'))


def _temps(root, paths):
    """Names in each target's folder that start with ``.<target name>.``."""
    found = set()
    for path in paths:
        folder, name = os.path.split(_local(root, path))
        found.update(os.path.join(folder, entry) for entry in os.listdir(folder) if entry.startswith('.%s.' % name))
    return found


class Runner(object):
    """Starts the module as Ansible does: ``python -m <module> <args file>``."""

    def __init__(self, module, args, folder):
        self.command = [sys.executable, '-m', 'ansible_collections.dbhost.tuning.plugins.modules.%s' % module]
        self.folder = folder
        self.args = args
        self.env = dict(os.environ)
        self.env['PYTHONPATH'] = os.pathsep.join([_collection_base()] + [p for p in [os.environ.get('PYTHONPATH')] if p])
        self.env['LC_ALL'] = 'C.UTF-8'

    def _args_file(self, root):
        args = dict(self.args, root=root, _ansible_check_mode=False, _ansible_diff=False,
                    _ansible_tmpdir=os.path.join(self.folder, 'ansible-tmp'), _ansible_keep_remote_files=True)
        os.makedirs(args['_ansible_tmpdir'], exist_ok=True)
        path = os.path.join(self.folder, 'args-%s.json' % os.path.basename(root))
        with open(path, 'w') as handle:
            json.dump({'ANSIBLE_MODULE_ARGS': args}, handle)
        return path

    def run(self, root):
        """Run to the end; return (result, seconds)."""
        start = time.monotonic()
        done = subprocess.run(self.command + [self._args_file(root)], cwd=self.folder, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, timeout=HANG)
        seconds = time.monotonic() - start
        assert done.returncode == 0, 'exit %d\n%s\n%s' % (done.returncode, done.stdout.decode(), done.stderr.decode())
        result = json.loads(done.stdout.decode())
        assert not result.get('failed'), result
        return result, seconds

    def killed(self, root, delay):
        """Start, SIGKILL after ``delay`` seconds; return False when the run ended first."""
        process = subprocess.Popen(self.command + [self._args_file(root)], cwd=self.folder, env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            process.wait(timeout=delay)
            return False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=HANG)
            return True


def _torn(path, data, old, new):
    common = 0
    for left, right in zip(data, new):
        if left != right:
            break
        common += 1
    return ('%s is torn: %d bytes, old %d, new %d; same as new for its first %d bytes'
            % (path, len(data), len(old), len(new), common))


def _check_baseline(root, targets, old, new):
    """The baseline is absent or complete JSON, and holds the old content of every target already new."""
    data = _read(os.path.join(root, BASELINE))
    if data is None:
        assert not any(_read(_local(root, path)) == new[path] for path in targets), 'a target is new, no baseline'
        return
    kept = json.loads(data.decode('utf-8'))
    assert kept['schema'] == 1 and kept['state'] == 'applied', kept.keys()
    for path in targets:
        if _read(_local(root, path)) == new[path]:
            entry = kept['files'][path]
            assert entry['existed'] and entry['content'].encode('utf-8', 'surrogateescape') == old[path], path


def _kill_lane(runner, root, delays, changed, old_tree, targets, old, new):
    """Kill a run of the module after each of ``delays``; return {target: {where: count}}."""
    counts = dict((path, dict.fromkeys((BEFORE, DURING, AFTER, FINISHED), 0)) for path in targets)
    for delay in delays:
        # Back to the old state (temporary files that earlier kills left stay, for the run to remove).
        for path in changed:
            local = os.path.join(root, path)
            if old_tree.get(path) is None:
                if os.path.lexists(local):
                    os.unlink(local)
                continue
            with open(local, 'wb') as handle:
                handle.write(old_tree[path])
        temps_before = _temps(root, targets)
        was_killed = runner.killed(root, delay)
        temps_left = _temps(root, targets) - temps_before
        _check_baseline(root, targets, old, new)
        for path in targets:
            data = _read(_local(root, path))
            assert data in (old[path], new[path]), _torn(path, data or b'', old[path], new[path])
            if not was_killed:
                where = FINISHED
            elif data == new[path]:
                where = AFTER
            elif any(os.path.basename(temp).startswith('.%s.' % os.path.basename(path)) for temp in temps_left):
                where = DURING
            else:
                where = BEFORE
            counts[path][where] += 1
    return counts


@pytest.mark.parametrize('case', CASES, ids=[case[0] for case in CASES])
def test_killed_writes_leave_old_or_new(case, tmp_path, record_property):
    name, module, args, targets, setup = case
    base = fake_host.build(str(tmp_path / 'host'))
    if setup is not None:
        setup(base)
    _make_large(base, targets)
    old_tree = _snapshot(base)
    runner = Runner(module, args, str(tmp_path))

    reference = str(tmp_path / 'reference')
    shutil.copytree(base, reference, symlinks=True)
    result, seconds = runner.run(reference)
    assert result['changed'], result
    new_tree = _snapshot(reference)
    changed = sorted(path for path in set(old_tree) | set(new_tree) if old_tree.get(path) != new_tree.get(path))
    old = dict((path, old_tree[path.lstrip('/')]) for path in targets)
    new = dict((path, new_tree[path.lstrip('/')]) for path in targets)
    for path in targets:
        assert new[path] != old[path], '%s: the run does not change %s' % (name, path)
        assert len(new[path]) > LARGE, path
    unexpected = [path for path in changed
                  if '/' + path not in targets and not ('/' + path).startswith(PSEUDO) and path != BASELINE]
    assert not unexpected, 'the run changed files that are not its targets: %s' % unexpected

    rng = random.Random('kill-writes:%s' % name)
    delays = [rng.uniform(0.0, seconds) for dummy in range(KILLS)]
    roots = [base] + [str(tmp_path / ('host-%d' % lane)) for lane in range(1, LANES)]
    for root in roots[1:]:
        shutil.copytree(base, root, symlinks=True)
    with ThreadPoolExecutor(max_workers=LANES) as lanes:
        lane_counts = list(lanes.map(lambda lane: _kill_lane(runner, roots[lane], delays[lane::LANES], changed,
                                                             old_tree, targets, old, new), range(LANES)))
    counts = dict((path, dict((where, sum(lane[path][where] for lane in lane_counts)) for where in lane_counts[0][path]))
                  for path in targets)

    # One run without kill on each tree: the new content, and nothing else left beside it.
    with ThreadPoolExecutor(max_workers=LANES) as lanes:
        list(lanes.map(runner.run, roots))
    for root in roots:
        for path in targets:
            assert _read(_local(root, path)) == new[path], '%s is not the new content after a run without kill' % path
            folder = os.path.dirname(_local(root, path))
            left = sorted(set(os.listdir(folder)) - set(os.listdir(os.path.dirname(_local(reference, path)))))
            assert not left, 'left in %s after a run without kill: %s' % (folder, left)
        assert not _temps(root, targets)

    record_property('kill_counts', json.dumps({'case': name, 'run_seconds': round(seconds, 3), 'size': len(new[targets[0]]),
                                               'targets': counts}, sort_keys=True))


class RevertRunner(Runner):
    """host_state with state revert, the tree given as kernel_params_root (host_state has no root option)."""

    def __init__(self, folder):
        Runner.__init__(self, 'host_state', {'state': 'revert', 'roles': ['kernel_params']}, folder)

    def _args_file(self, root):
        args = dict(self.args, inputs={'kernel_params': {'kernel_params_root': root}}, _ansible_check_mode=False,
                    _ansible_diff=False, _ansible_tmpdir=os.path.join(self.folder, 'ansible-tmp'),
                    _ansible_keep_remote_files=True)
        os.makedirs(args['_ansible_tmpdir'], exist_ok=True)
        path = os.path.join(self.folder, 'args-revert-%s.json' % os.path.basename(root))
        with open(path, 'w') as handle:
            json.dump({'ANSIBLE_MODULE_ARGS': args}, handle)
        return path


def _put_back(root, paths, tree):
    for path in paths:
        local = os.path.join(root, path)
        if tree.get(path) is None:
            if os.path.lexists(local):
                os.unlink(local)
            continue
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, 'wb') as handle:
            handle.write(tree[path])


def test_killed_revert_leaves_every_file_tuned_or_as_before(tmp_path):
    """SIGKILL at random moments of a revert: every file it restores or removes, and the baseline,
    is the tuned or the reverted one, never torn; a revert run to the end then gives the tree as
    it was before tuning."""
    base = fake_host.build(str(tmp_path / 'host'))
    large = ['/etc/fstab', fake_host.PGCONF]
    _make_large(base, large)
    original = _snapshot(base)
    for module, args in (('mount_options', _args('mount_options')), ('kernel_params', _args('kernel_params')),
                         ('db_parameter', _args('db_parameter'))):
        Runner(module, args, str(tmp_path)).run(base)
    tuned = _snapshot(base)
    runner = RevertRunner(str(tmp_path))
    reference = str(tmp_path / 'reference')
    shutil.copytree(base, reference, symlinks=True)
    result, seconds = runner.run(reference)
    assert result['changed'], result
    reverted = _snapshot(reference)
    changed = sorted(path for path in set(tuned) | set(reverted) if tuned.get(path) != reverted.get(path))
    assert BASELINE in changed and 'etc/sysctl.d/90-dbhost-tuning.conf' in changed and 'etc/fstab' in changed
    for path in changed:
        if path != BASELINE:
            assert reverted.get(path) == original.get(path), path

    rng = random.Random('kill-revert')
    for delay in [rng.uniform(0.0, seconds) for dummy in range(KILLS)]:
        _put_back(base, changed, tuned)
        runner.killed(base, delay)
        for path in changed:
            data = _read(os.path.join(base, path))
            if path == BASELINE:
                # the tuned one, or the same marked reverted (at its own time)
                kept = json.loads(data.decode('utf-8'))
                before = json.loads(tuned[path].decode('utf-8'))
                assert dict(kept, state='applied', reverted=None) == dict(before, reverted=None)
                continue
            torn = _torn(path, data or b'', tuned.get(path) or b'', reverted.get(path) or b'')
            assert data in (tuned.get(path), reverted.get(path)), torn

    _put_back(base, changed, tuned)
    start = time.monotonic()
    runner.run(base)
    print('revert of %d files, %d bytes: %.2f s' % (len(changed), sum(len(tuned.get(p) or b'') for p in changed),
                                                    time.monotonic() - start))
    after = _snapshot(base)
    assert json.loads(after.pop(BASELINE).decode('utf-8'))['state'] == 'reverted'
    assert dict((path, after.get(path)) for path in changed if path != BASELINE) == \
        dict((path, reverted.get(path)) for path in changed if path != BASELINE)
    assert not _temps(base, ['/' + path for path in changed if path != BASELINE and reverted.get(path) is not None])
