# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: DbEffect, behind ``db_effect``: does the running database get what was tuned?

Read-only.  For one systemd service (its MainPID and every process of its cgroup) it answers,
for each check asked, from the processes' own /proc files (checks.py): its shared memory in
huge pages, its memlock limit, its CPUs, its memory's NUMA nodes, its data files opened with
O_DIRECT.  A record is ``ok`` when the database gets it; when it does not, ``pending_restart``
if the process started before one of ``changed_by`` (the files that carry the setting: a
drop-in, the huge page sysctl file, the database's configuration) last changed, else
``drift``; ``unsupported`` with the reason when the service is not running or its processes
cannot be read.  Nothing on the host is written, in check mode or not.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo, numa, platforms, sysfs, validate
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import kernel_path, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import mycnf
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    DRIFT, OK, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.base import Plan
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect import checks, engine, service as services
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_effect.procfs import Process

CHECKS = ('huge_pages', 'engine_huge_pages', 'memlock', 'cpus', 'mems', 'direct_io')
ENGINES = ('oracle', 'postgresql', 'mysql')
# What each check's record is named after the service, and what it wants.
LABELS = {'huge_pages': 'shared memory in huge pages', 'engine_huge_pages': 'huge page setting of the engine',
          'memlock': 'locked memory', 'cpus': 'CPUs', 'mems': 'memory nodes', 'direct_io': 'data files with O_DIRECT'}


def _mycnf_includes(root, path, seen):
    """The files and folders an option file includes, at any depth (formats/mycnf.py)."""
    try:
        items = mycnf.parse(read_text(rooted(root, path)) or '', source=path)
    except (mycnf.CnfError, EnvironmentError, ValueError):
        return []
    found = []
    for item in items:
        if item.kind not in ('include', 'includedir'):
            continue
        target = os.path.join(os.path.dirname(path), item.path)
        if target in seen:
            continue
        seen.append(target)
        found.append(target)
        if item.kind == 'include':
            found.extend(_mycnf_includes(root, target, seen))
            continue
        local = str(rooted(root, target))
        for name in sorted(os.listdir(local)) if os.path.isdir(local) else []:
            if name.endswith('.cnf'):
                found.append(os.path.join(target, name))
                found.extend(_mycnf_includes(root, os.path.join(target, name), seen))
    return found


def _stamp(seconds):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(seconds))


class DbEffect(Plan):
    """A running database service checked for the effect of the tuning: huge pages, memlock, CPUs, NUMA
    nodes and direct I/O, from its processes' /proc (read-only)."""

    source = 'task option: db_effect.checks'

    def __init__(self, options, context):
        self.service = options.service
        self.checks = list(options.checks or [])
        self.engine = options.engine
        self.huge_pages_bytes = options.huge_pages_bytes
        self.memlock = options.memlock
        self.cpus = options.cpus
        self.mems = options.mems
        self.direct_io_paths = list(options.direct_io_paths or [])
        self.changed_by = list(options.changed_by or [])
        self.root = options.root
        self.gate = context.gate
        self.runner = context.runner
        # the engine's clients run from / (a server's user may not enter the module's folder)
        self.db_runner = context.db_runner or context.runner

    def validate(self):
        self.root = validate.check_root(self.root)
        validate.check_name(self.service, 'service')
        if not isinstance(self.service, str) or not self.service or '/' in self.service:
            raise InputError('service: %r is not a systemd unit name' % (self.service,))
        unknown = [c for c in self.checks if c not in CHECKS]
        if unknown or not self.checks:
            raise InputError('checks: %s; each must be one of %s' % (
                'unknown %s' % ', '.join(map(str, unknown)) if unknown else 'none given', ', '.join(CHECKS)))
        if self.engine is not None and self.engine not in ENGINES:
            raise InputError('engine: %r is not one of %s' % (self.engine, ', '.join(ENGINES)))
        needs = {'memlock': self.memlock, 'cpus': self.cpus, 'mems': self.mems if self.cpus in (None, '') else 'cpus',
                 'direct_io': self.direct_io_paths if self.engine == 'oracle' else 'named'}
        for check, value in needs.items():
            if check in self.checks and value in (None, '', []):
                raise InputError('checks: %s is asked, but %s is not given' % (
                    check, {'direct_io': 'direct_io_paths (Oracle\'s data files are every file under them)',
                            'mems': 'mems (or cpus)'}.get(check, check)))
        for check, why in (('direct_io', 'which files are the data files'), ('engine_huge_pages', 'whom to ask')):
            if check in self.checks and self.engine is None:
                raise InputError('checks: %s needs engine (%s)' % (check, why))
        for name in ('cpus', 'mems'):
            value = getattr(self, name)
            if value not in (None, '') and not str(value).startswith('node:'):
                try:
                    numa.parse_cpu_list(str(value))
                except ValueError as exc:
                    raise InputError('%s: %s' % (name, exc))
        for index, path in enumerate(self.direct_io_paths):
            validate.check_rooted(self.root, path, 'direct_io_paths[%d]' % index)
        for index, path in enumerate(self.changed_by):
            validate.check_rooted(self.root, path, 'changed_by[%d]' % index)
        if self.huge_pages_bytes is not None and int(self.huge_pages_bytes) < 0:
            raise InputError('huge_pages_bytes: %r is below 0' % (self.huge_pages_bytes,))

    def desired(self):
        wanted = {'huge_pages': 'in huge pages' + (' (%s)' % checks.mib(int(self.huge_pages_bytes) // 1024)
                                                   if self.huge_pages_bytes else ''),
                  'engine_huge_pages': '%s asking for huge pages, and in them' % engine.NAMES.get(self.engine),
                  'memlock': str(self.memlock), 'cpus': self._cpu_text(self.cpus),
                  'direct_io': 'O_DIRECT'}
        if 'mems' in self.checks:
            wanted['mems'] = self._node_text()
        return dict((check, wanted[check]) for check in self.checks)

    def _cpu_text(self, value):
        text = str(value or '')
        if text.startswith('node:'):
            topology = numa.read_topology(self.root)
            nodes = numa.parse_cpu_list(text[len('node:'):])
            return numa.render_cpu_list(sorted(c for n in nodes for c in topology['nodes'].get(n, {}).get('cpus', [])))
        return text

    def _node_text(self):
        """The nodes the memory must be on: ``mems``, else the nodes of the set's CPUs (as processor_set binds it)."""
        if self.mems not in (None, ''):
            return str(self.mems)
        cpus = numa.parse_cpu_list(self._cpu_text(self.cpus))
        return numa.render_cpu_list(numa.nodes_of_cpus(numa.read_topology(self.root), cpus))

    def read_live(self, desired):
        if platforms.system() != 'Linux':
            return {'problem': 'the effect checks read Linux /proc; on %s they are not made here'
                    % platforms.system()}
        found = services.find(self.service, self.runner, self.root)
        if found.problem:
            return {'problem': found.problem}
        main = Process(found.main, self.root)
        processes = [Process(pid, self.root) for pid in found.pids]
        processes = [p for p in processes if p.exists()] or [main]
        base_kb = (platforms.page_size(self.root) or 4096) // 1024
        answers = {}
        for check in self.checks:
            answers[check] = self._answer(check, main, processes, desired, base_kb)
        return {'main': main.pid, 'count': len(processes), 'started': main.start_time(), 'answers': answers}

    def _answer(self, check, main, processes, desired, base_kb):
        if check == 'huge_pages':
            return checks.huge_pages(main, self.huge_pages_bytes, base_kb)
        if check == 'engine_huge_pages':
            try:
                setting = engine.read(self.engine, main, processes, self.db_runner, self.root)
            except engine.EngineUnreadable as exc:
                return checks.Answer(None, None, str(exc))
            return checks.engine_huge_pages(setting, checks.huge_pages(main, None, base_kb))
        if check == 'memlock':
            return checks.memlock(processes, self.memlock)
        if check == 'cpus':
            return checks.cpus(processes, desired['cpus'])
        if check == 'mems':
            return checks.memory_nodes(main, processes, desired['mems'], base_kb)
        answer = checks.direct_io(processes, self.engine, self.direct_io_paths)
        folders = self.direct_io_paths or [answer.detail.partition('open under ')[2].partition(';')[0]]
        return checks.Answer(answer.got, answer.live, '%s; %s' % (answer.detail, self._mount_options(folders)))

    def _mount_options(self, folders):
        """The live options of the mounts that hold the data files' folders (/proc/self/mountinfo)."""
        mounts = mountinfo.parse(sysfs.read_text(kernel_path(self.root, '/proc/self/mountinfo'), strip=False) or '')
        words = []
        for folder in sorted(set(f for part in folders for f in part.split(', ') if f.startswith('/'))):
            holding = [m for m in mounts if checks.under(folder, [m.mount_point])]
            if holding:
                mount = max(holding, key=lambda m: len(m.mount_point))
                word = '%s mounted %s (%s)' % (mount.mount_point, mount.fstype,
                                               ','.join(mount.options + mount.super_options))
                if word not in words:
                    words.append(word)
        return '; '.join(words) or 'no mount found'

    def read_persisted(self, desired):
        return {}

    def apply(self, desired, live, persisted, module):
        return None   # read-only: what the database gets is changed by the other kinds and a restart

    def _changed_files(self):
        """changed_by, with every file and folder a MariaDB/MySQL option file includes (!include, !includedir):
        the setting may have been written to any of them."""
        files = []
        for path in self.changed_by:
            for item in [path] + (_mycnf_includes(self.root, path, []) if path.endswith('.cnf') else []):
                if item not in files:
                    files.append(item)
        return files

    def _last_change(self):
        """(seconds, path) of the newest of changed_by (and what its option files include), or (None, None)."""
        newest = (None, None)
        for path in self._changed_files():
            try:
                mtime = os.stat(os.path.join(self.root, path.lstrip('/'))).st_mtime
            except OSError:
                continue
            if newest[0] is None or mtime > newest[0]:
                newest = (mtime, path)
        return newest

    def render(self, result, desired, live, persisted, done):
        changed_at, changed_file = self._last_change()
        for check in self.checks:
            name = '%s %s' % (self.service, LABELS[check])
            if live.get('problem'):
                result.add(Setting(name, self.service, desired[check], None, None, UNSUPPORTED,
                                   '%s; nothing checked' % live['problem']))
                continue
            answer = live['answers'][check]
            target = 'pid %d and %d more' % (live['main'], live['count'] - 1) if live['count'] > 1 else \
                'pid %d' % live['main']
            if answer.got is None:
                result.add(Setting(name, target, desired[check], answer.live, None, UNSUPPORTED, answer.detail))
                continue
            if answer.got:
                result.add(Setting(name, target, desired[check], answer.live, None, OK, answer.detail))
                continue
            started = live['started']
            if changed_at is not None and started is not None and started < changed_at:
                why = 'started %s, before %s changed (%s): restart %s' % (
                    _stamp(started), changed_file, _stamp(changed_at), self.service)
                result.add(Setting(name, target, desired[check], answer.live, None, PENDING_RESTART,
                                   '%s; %s' % (why, answer.detail), reason=why))
                result.restart_required = True
                continue
            result.add(Setting(name, target, desired[check], answer.live, None, DRIFT, answer.detail,
                               reason='the running database does not get it'))
        # a drift record here is what the database does not get; this plan would change nothing (the other
        # kinds and a restart do), so a second tune.yml run stays changed: false
        result.changed = False
