# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge the reboot scenario: the drift check's records before the reboot against the
system as observe.py read it after the reboot (and a real postgres login's limits).

check(evidence, expect) returns (passed, failed), two lists of one-line messages; the
scenario fails when ``failed`` is not empty. ``evidence`` holds:
  before, after       the drift check's settings records (drift.json) before / after the reboot
  exit_before, exit_after   scripts/drift-check's exit codes
  observed_before, observed    observe.py's output before / after the reboot
  login               {"soft": ..., "hard": ...}: `ulimit -Sl` / `ulimit -Hl` of a postgres
                      login through sshd (PAM, pam_limits), after the reboot
  revert (optional)   {"untuned": snapshot.py before tune.yml, "tuned": snapshot.py before the
                      revert, "reverted": snapshot.py after playbooks/revert.yml and a reboot,
                      "exit": revert.yml's exit code, "second_changed": the changed count of a
                      second revert}
``expect`` is the scenario's own knowledge (inventory/group_vars/all.yml, prepare.sh and the
files of somebody else's that run_scenario.py lays down), never taken from the records.
Standard library only: the unit tests run it on recorded evidence.
"""

import hashlib
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))

CLEAN = ('ok', 'unsupported')


def sysctl_path(key):
    return '/proc/sys/' + key.replace('.', '/')


def selected(text):
    """'none [mq-deadline] kyber' -> 'mq-deadline'; any other text unchanged."""
    if text and '[' in text:
        return text.split('[', 1)[1].split(']', 1)[0]
    return text


def words(value):
    return ' '.join(str(value).split()) if value is not None else None


def reads(records):
    """What observe.py must be asked for, so that every record can be read back."""
    files, show = set(), set()
    for record in records:
        kind, name = record.get('kind'), record.get('name', '')
        if kind == 'kernel_params':
            files.add(sysctl_path(name))
        elif kind == 'sysfs_attr':
            files.add(name)
        elif kind == 'block_queue':
            files.add('/sys/block/' + name)
        elif kind == 'db_parameter':
            show.add(name)
    return {'files': sorted(files), 'show': sorted(show)}


def _hugepages(name, observed):
    node, dummy, pool = name.rpartition('/')
    nodes = observed.get('nodes', {})
    if node:
        return nodes.get(node, {}).get('hugepages', {}).get(pool, {}).get('nr')
    return sum(entry.get('hugepages', {}).get(pool, {}).get('nr', 0) for entry in nodes.values())


def _limits(record, observed, login):
    name = record['name']
    if name.endswith(' LimitMEMLOCK'):
        unit = name[:-len(' LimitMEMLOCK')]
        return observed.get('service', {}).get(unit, {}).get('LimitMEMLOCK')
    parts = name.split()
    if len(parts) == 3 and parts[2] == 'memlock' and parts[1] in ('soft', 'hard'):
        return login.get(parts[1])
    return _UNKNOWN


def _processor_set(record, observed):
    unit = record['name'].split(':', 1)[1]
    main = observed.get('service', {}).get(unit, {}).get('main_pid')
    for process in observed.get('postgres_processes', []):
        if process['pid'] == main:
            return {'cpus': process.get('Cpus_allowed_list'), 'mems': process.get('Mems_allowed_list')}
    return None


_UNKNOWN = object()


def live_value(record, observed, login):
    """The value the system shows now for what ``record`` manages (``_UNKNOWN``: no reader)."""
    kind, name = record.get('kind'), record.get('name', '')
    files = observed.get('files', {})
    if kind == 'kernel_params':
        return words(files.get(sysctl_path(name)))
    if kind == 'hugepages':
        return _hugepages(name, observed)
    if kind == 'resource_limits':
        return _limits(record, observed, login)
    if kind == 'sysfs_attr':
        return selected(files.get(name))
    if kind == 'block_queue':
        return selected(files.get('/sys/block/' + name))
    if kind == 'mount_options':
        mount = observed.get('mounts', {}).get(record.get('target')) or {}
        option = record['name'].rsplit(' ', 1)[-1]   # '<mount> <option>'; a record of an older run names the option alone
        return option if option in mount.get('options', []) else 'not in /proc/mounts'
    if kind == 'db_parameter':
        return observed.get('postgres_show', {}).get(name)
    if kind == 'processor_set' and name.startswith('service:'):
        return _processor_set(record, observed)
    return _UNKNOWN


def persisted_value(record):
    persisted = record.get('persisted')
    if record.get('kind') == 'processor_set' and isinstance(persisted, dict):
        return {'cpus': persisted.get('AllowedCPUs') or persisted.get('CPUAffinity'),
                'mems': persisted.get('AllowedMemoryNodes') or persisted.get('NUMAMask')}
    if record.get('kind') == 'hugepages' and persisted is not None:
        return int(persisted)
    if record.get('kind') in ('kernel_params', 'resource_limits', 'sysfs_attr', 'block_queue', 'db_parameter'):
        return words(persisted)
    return persisted


class Checks:
    """Collects one line per check: passed or failed."""

    def __init__(self):
        self.passed, self.failed = [], []

    def that(self, ok, message):
        (self.passed if ok else self.failed).append(message)
        return ok

    def equal(self, what, seen, wanted):
        return self.that(seen == wanted, '%s: %r (wanted %r)' % (what, seen, wanted))


def check_persisted_is_next_boot(checks, evidence):
    """Every record's persisted value before the reboot is the live value after it."""
    for record in evidence['before']:
        if record.get('persisted') is None or record.get('status') == 'unsupported':
            continue
        seen = live_value(record, evidence['observed'], evidence['login'])
        if seen is _UNKNOWN:
            checks.that(False, '%s %s: no way to read it back from the system (kind %s)'
                        % (record.get('kind'), record.get('name'), record.get('kind')))
            continue
        checks.equal('%s %s: persisted before the reboot = live after it' % (record['kind'], record['name']),
                     seen, persisted_value(record))


def check_drift(checks, evidence, expect):
    shadowed = set(expect['shadowed'])
    checks.that(evidence['observed_before'].get('boot_id') != evidence['observed'].get('boot_id'),
                'the VM rebooted (boot_id %s -> %s)' % (evidence['observed_before'].get('boot_id'),
                                                        evidence['observed'].get('boot_id')))
    for when in ('before', 'after'):
        drifted = sorted(record['name'] for record in evidence[when] if record.get('status') not in CLEAN)
        checks.equal('drift check %s the reboot: the settings not clean' % when, drifted, sorted(shadowed))
        checks.equal('drift check %s the reboot: scripts/drift-check exit code' % when,
                     evidence['exit_' + when], 3 if shadowed else 0)
        checks.that(len(evidence[when]) >= expect['min_records'], 'drift check %s the reboot: %d records (at least %d)'
                    % (when, len(evidence[when]), expect['min_records']))


def check_shadowed(checks, evidence, expect):
    """A file of somebody else's: predicted shadowed (naming it) before, observed after."""
    records = {record['name']: record for record in evidence['before']}
    for name, (path, value) in sorted(expect['shadowed'].items()):
        record = records.get(name, {})
        checks.that(record.get('status') == 'shadowed' and path in (record.get('detail') or ''),
                    '%s: predicted shadowed by %s before the reboot (status %s, detail %r)'
                    % (name, path, record.get('status'), record.get('detail')))
        checks.equal('%s: predicted value at boot' % name, words(record.get('persisted')), value)
        if record:
            checks.equal('%s: observed after the reboot' % name,
                         live_value(record, evidence['observed'], evidence['login']), value)


def check_numa(checks, observed, expect):
    """Huge pages on the node asked only; PostgreSQL in them; every postgres process on the node."""
    node = 'node%d' % expect['node']
    pool = 'hugepages-2048kB'
    for name, entry in sorted(observed['nodes'].items()):
        count = entry['hugepages'].get(pool, {}).get('nr')
        checks.equal('%s %s after the reboot' % (name, pool), count, expect['hugepages'] if name == node else 0)
    cpus = observed['nodes'][node]['cpulist']
    processes = observed.get('postgres_processes', [])
    checks.that(len(processes) >= 3, '%d postgres processes running after the reboot' % len(processes))
    for process in processes:
        checks.equal('postgres pid %d Cpus_allowed_list / Mems_allowed_list' % process['pid'],
                     (process.get('Cpus_allowed_list'), process.get('Mems_allowed_list')), (cpus, str(expect['node'])))
    show = observed.get('postgres_show', {})
    checks.equal('PostgreSQL SHOW huge_pages', show.get('huge_pages'), 'on')
    huge = observed.get('postmaster_huge') or {'smaps': [], 'numa_maps': []}
    needed_kb = int(show.get('shared_memory_size_in_huge_pages') or 0) * 2048
    mapped_kb = sum(entry['size_kb'] for entry in huge['smaps'] if entry['page_kb'] == 2048)
    checks.that(needed_kb > 0 and mapped_kb >= needed_kb,
                'postmaster smaps: %d kB mapped in 2048 kB pages (its shared memory needs %d kB)' % (mapped_kb, needed_kb))
    on_nodes = set()
    for line in huge['numa_maps']:
        on_nodes.update(token.split('=')[0] for token in line.split() if token[:1] == 'N' and '=' in token)
    checks.equal('postmaster numa_maps: nodes its huge pages are on', sorted(on_nodes), ['N%d' % expect['node']])


def check_host(checks, evidence, expect):
    observed = evidence['observed']
    mount = observed['mounts'].get(expect['data_mount']) or {}
    checks.equal('%s in /proc/mounts: device' % expect['data_mount'], mount.get('source'), expect['data_disk_device'])
    for option in expect['mount_options']:
        checks.that(option in mount.get('options', []), '%s in /proc/mounts has %s (%s)'
                    % (expect['data_mount'], option, ','.join(mount.get('options', []))))
    queue = observed['queues'].get(expect['data_disk'], {})
    for attribute, value in sorted(expect['queue'].items()):
        checks.equal('/sys/block/%s/queue/%s' % (expect['data_disk'], attribute), selected(queue.get(attribute)), value)
    checks.equal('transparent huge pages', selected(observed['thp'].get('enabled')), 'never')
    service = observed['service'].get(expect['service'], {})
    checks.equal('%s active' % expect['service'], service.get('active'), 'active')
    checks.equal('systemctl show -p LimitMEMLOCK %s' % expect['service'], service.get('LimitMEMLOCK'), expect['memlock_bytes'])
    checks.equal('the running postmaster\'s Max locked memory (soft, hard)', service.get('proc_memlock'),
                 [expect['memlock_bytes'], expect['memlock_bytes']])
    checks.equal('ulimit -Sl / -Hl of a postgres login', (evidence['login'].get('soft'), evidence['login'].get('hard')),
                 (expect['login_memlock'], expect['login_memlock']))


def _digest(text):
    return hashlib.sha256(text.encode('utf-8', 'surrogateescape')).hexdigest()


def check_revert(checks, revert):
    """After playbooks/revert.yml and a reboot: every file the baseline names is as it was
    (same bytes, or absent), and every live value it names is what the host had before
    tune.yml ran, as the system reads it, not as the baseline says."""
    checks.equal('revert.yml exit code', revert['exit'], 0)
    checks.equal('a second revert.yml: changed tasks', revert['second_changed'], 0)
    baseline = revert['tuned'].get('baseline') or {}
    checks.that(bool(baseline.get('files')) and bool(baseline.get('live')),
                'the baseline names files (%d) and live values (%d)'
                % (len(baseline.get('files') or {}), len(baseline.get('live') or {})))
    for name, entry in sorted((baseline.get('files') or {}).items()):
        wanted = _digest(entry['content']) if entry.get('existed') else None
        checks.equal('%s after the revert and a reboot (sha256, or None when absent)' % name,
                     revert['reverted']['files'].get(name), wanted)
        for folder in entry.get('folders') or []:
            checks.equal('%s (made for %s) after the revert: exists' % (folder, name),
                         revert['reverted'].get('folders', {}).get(folder), False)
    untuned, reverted = revert['untuned']['live'], revert['reverted']['live']
    for path, entry in sorted((baseline.get('live') or {}).items()):
        checks.equal('%s: the baseline kept what the host had before tune.yml' % path,
                     selected(words(entry.get('value'))), selected(words(untuned.get(path))))
        checks.equal('%s after the revert and a reboot = before tune.yml' % path,
                     selected(words(reverted.get(path))), selected(words(untuned.get(path))))


def revert_view(records):
    """What a check-mode revert and the real one must agree on, record by record: the name, what
    is written back, the status (check mode's ``drift`` is the real run's ``changed``) and the
    detail (``would be`` in front in check mode)."""
    def one(record):
        detail = record.get('detail') or ''
        detail = detail[len('would be '):] if detail.startswith('would be ') else detail
        status = 'changed' if record.get('status') == 'drift' else record.get('status')
        return [record.get('name'), record.get('desired'), status, detail]
    return sorted(one(record) for record in records)


def check_revert_preview(checks, revert):
    """playbooks/revert.yml --check --diff said what the real revert then did (issue 43)."""
    checks.equal('revert.yml --check --diff exit code', revert['preview_exit'], 0)
    checks.that(bool(revert['records']), 'the revert has records (%d)' % len(revert['records']))
    preview, real = revert_view(revert['preview']), revert_view(revert['records'])
    for name in sorted(set(row[0] for row in preview + real)):
        checks.equal('%s: the check-mode preview gave the real revert\'s record' % name,
                     [row for row in preview if row[0] == name], [row for row in real if row[0] == name])


def _effect_phase():
    """tests/vm/effect_phase.py, beside this file (what the running databases get; loaded by its path, as the
    unit tests load this file)."""
    spec = importlib.util.spec_from_file_location('vm_effect_phase', os.path.join(HERE, 'effect_phase.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(evidence, expect):
    checks = Checks()
    if 'revert' in evidence:
        check_revert(checks, evidence['revert'])
    if 'preview' in evidence.get('revert', {}):
        check_revert_preview(checks, evidence['revert'])
    check_drift(checks, evidence, expect)
    check_persisted_is_next_boot(checks, evidence)
    check_shadowed(checks, evidence, expect)
    check_numa(checks, evidence['observed'], expect)
    check_host(checks, evidence, expect)
    if 'effect' in evidence:
        _effect_phase().check(checks, evidence)
    return checks.passed, checks.failed
