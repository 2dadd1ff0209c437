# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the tuned VM's state from the system itself, not from the collection's records.

Runs on the VM as root (python3, standard library only), fed through SSH by
run_scenario.py: `python3 - SERVICE DATA_MOUNT ASKED_JSON < observe.py`. Prints one JSON
object: the pseudo-files and server parameters asked for (ASKED_JSON is {"files": [...],
"show": [...]}), the huge page pools of every NUMA node, transparent huge pages,
/proc/mounts, the disks' queue attributes, the PostgreSQL processes' CPU and memory
binding, the postmaster's huge page mappings (smaps, numa_maps), the service's memlock
limit (systemctl show, /proc/PID/limits) and what the running server says (SHOW).
No comparison here: verify.py judges.
"""

import glob
import json
import os
import re
import subprocess
import sys


# Always asked of the running server, besides the db_parameter records' names.
SHOWN = ('huge_pages', 'shared_buffers', 'shared_memory_size', 'shared_memory_size_in_huge_pages')


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                            universal_newlines=True, cwd='/')
    return result.stdout.strip() if result.returncode == 0 else None


def files(paths):
    """Each path's content (kernel pseudo-files: /proc/sys, /sys), None when unreadable."""
    return {path: read(path) for path in paths}


def nodes():
    found = {}
    for folder in sorted(glob.glob('/sys/devices/system/node/node[0-9]*')):
        pools = {}
        for pool in glob.glob(folder + '/hugepages/hugepages-*'):
            pools[os.path.basename(pool)] = {
                'nr': int(read(pool + '/nr_hugepages')), 'free': int(read(pool + '/free_hugepages'))}
        found[os.path.basename(folder)] = {'cpulist': read(folder + '/cpulist'), 'hugepages': pools}
    return found


def status_fields(pid):
    fields = {}
    text = read('/proc/%s/status' % pid) or ''
    for line in text.splitlines():
        key, dummy, value = line.partition(':')
        if key in ('Name', 'Cpus_allowed_list', 'Mems_allowed_list'):
            fields[key] = value.strip()
    return fields


def postgres_processes():
    processes = []
    for folder in glob.glob('/proc/[0-9]*'):
        pid = os.path.basename(folder)
        try:
            owner = os.stat(folder).st_uid
        except OSError:
            continue
        exe = os.path.basename(os.readlink(folder + '/exe')) if os.path.exists(folder + '/exe') else ''
        if exe == 'postgres' and owner == _postgres_uid():
            entry = status_fields(pid)
            entry['pid'] = int(pid)
            processes.append(entry)
    return sorted(processes, key=lambda entry: entry['pid'])


def _postgres_uid():
    for line in (read('/etc/passwd') or '').splitlines():
        parts = line.split(':')
        if parts[0] == 'postgres':
            return int(parts[2])
    return -1


def huge_mappings(pid):
    """The postmaster's hugetlb mappings: smaps sizes (kB) and numa_maps per-node pages."""
    smaps = []
    current = None
    for line in (read('/proc/%s/smaps' % pid) or '').splitlines():
        if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
            current = {'mapping': line, 'size_kb': 0, 'page_kb': 0}
            continue
        key, dummy, value = line.partition(':')
        if current is not None and key in ('Size', 'KernelPageSize'):
            current['size_kb' if key == 'Size' else 'page_kb'] = int(value.split()[0])
            if key == 'KernelPageSize' and current['page_kb'] > 4:
                smaps.append(current)
    numa = [line for line in (read('/proc/%s/numa_maps' % pid) or '').splitlines() if ' huge ' in line]
    return {'smaps': smaps, 'numa_maps': numa}


def service(unit):
    main = run(['systemctl', 'show', '-p', 'MainPID', '--value', unit])
    limits = read('/proc/%s/limits' % main) if main and main != '0' else None
    memlock = None
    for line in (limits or '').splitlines():
        if line.startswith('Max locked memory'):
            memlock = line.split()[3:5]
    return {'main_pid': int(main or 0), 'active': run(['systemctl', 'is-active', unit]),
            'LimitMEMLOCK': run(['systemctl', 'show', '-p', 'LimitMEMLOCK', '--value', unit]),
            'proc_memlock': memlock}


def postgres_show(names):
    shown = {}
    for name in names:
        shown[name] = run(['runuser', '-u', 'postgres', '--', 'psql', '-XAtc', 'SHOW %s' % name])
    return shown


def mounts(target):
    for line in (read('/proc/mounts') or '').splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[1] == target:
            return {'source': fields[0], 'fstype': fields[2], 'options': fields[3].split(',')}
    return None


def queue(disk):
    folder = '/sys/block/%s/queue' % disk
    return {name: read('%s/%s' % (folder, name)) for name in ('scheduler', 'read_ahead_kb', 'nr_requests', 'rq_affinity')}


def main():
    unit, data_mount = sys.argv[1], sys.argv[2]
    asked = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    disks = sorted(os.path.basename(path) for path in glob.glob('/sys/block/vd*'))
    state = service(unit)
    observed = {
        'boot_id': read('/proc/sys/kernel/random/boot_id'),
        'files': files(asked.get('files', [])),
        'nodes': nodes(),
        'thp': {name: read('/sys/kernel/mm/transparent_hugepage/' + name) for name in ('enabled', 'defrag')},
        'mounts': {data_mount: mounts(data_mount)},
        'queues': {disk: queue(disk) for disk in disks},
        'service': {unit: state},
        'postgres_processes': postgres_processes(),
        'postmaster_huge': huge_mappings(state['main_pid']) if state['main_pid'] else None,
        'postgres_show': postgres_show(sorted(set(asked.get('show', [])) | set(SHOWN))),
    }
    json.dump(observed, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
