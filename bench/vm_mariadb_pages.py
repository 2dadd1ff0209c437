# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MariaDB large_pages on the VM lab: does the InnoDB buffer pool fit in the huge pages the
shared_memory role reserves for it (shared_memory_size = innodb_buffer_pool_size, plus the
default 1% margin), or does mariadbd fall back to normal pages?

Boots a VM of the lab with mariadb-server in the image, and for each pool size asked:
tunes it with playbooks/tune.yml (shared_memory for engine mysql with that size, the
service's LimitMEMLOCK; direct_io sets innodb_buffer_pool_size and large_pages = ON in
my.cnf and restarts mariadb), then reads from the system: the pool the role reserved
(nr_hugepages), what mariadbd holds in huge pages (hugetlb mappings in its smaps,
HugePages_Free), and what it logged about large pages. Prints one line per size.

Usage: . scripts/lib.sh && python3 bench/vm_mariadb_pages.py [--sizes 256M,512M,256M:512M]
  each size is innodb_buffer_pool_size, or POOL:SHARED_MEMORY_SIZE to size the pages otherwise
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = 'dbhost-vm'
SERVICE = 'mariadb.service'


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


vmlab = load('vmlab', 'scripts/vmlab.py')

GROUP_VARS = '''dbhost_roles: [shared_memory, direct_io]
shared_memory_engine: mysql
shared_memory_user: mysql
shared_memory_service: mariadb.service
shared_memory_service_restart: true
shared_memory_size: "{shm}"
direct_io_databases:
  - engine: mysql
    path: /etc/mysql/mariadb.conf.d/50-server.cnf
    service: mariadb.service
    params:
      innodb_buffer_pool_size: "{pool}"
      large_pages: "ON"
direct_io_restart: true
'''

# Read on the VM after the restart: the pool, mariadbd's huge page mappings, its log.
PROBE = r'''
pid=$(systemctl show -p MainPID --value mariadb.service)
echo "active $(systemctl is-active mariadb.service), mariadbd started $(ps -o lstart= -p "$pid")"
echo "nr_hugepages $(cat /proc/sys/vm/nr_hugepages)"
grep -E '^HugePages_(Total|Free|Rsvd)' /proc/meminfo | tr -s ' ' | paste -sd ' '
# mapping sizes (kB) by page size: 2048 kB pages, and 4 kB mappings of 64M or more
awk '/^[0-9a-f]+-[0-9a-f]+ / { size = 0 }
     /^Size:/ { size = $2 }
     /^KernelPageSize:/ && $2 == 2048 { n++; huge += size; list = list " " size }
     /^KernelPageSize:/ && $2 == 4 && size >= 65536 { small = small " " size }
     END { print "mariadbd hugetlb mappings:", n + 0, "total_kb", huge + 0, "sizes_kb" list;
           print "mariadbd 4k mappings >= 64M, kb:" small }' /proc/$pid/smaps
mysql -NBe "SELECT CONCAT('large_pages=', @@large_pages, ' innodb_buffer_pool_size=', @@innodb_buffer_pool_size,
                         ' chunk=', @@innodb_buffer_pool_chunk_size, ' version=', @@version)"
mysql -NBe "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_total'" | tr '\t' '='
journalctl -b -u mariadb.service --no-pager -o cat | grep -iE 'large|huge|buffer pool|memory' | tail -n 8 || true
'''


def ssh(state, command):
    result = subprocess.run(vmlab.ssh_argv(state) + [command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, check=False, timeout=1800)
    return result.returncode, result.stdout.decode(errors='replace')


def inventory(state, size):
    folder = os.path.join(state['folder'], 'inventory-mariadb')
    os.makedirs(os.path.join(folder, 'group_vars'), exist_ok=True)
    with open(os.path.join(folder, 'hosts.yml'), 'w') as handle:
        handle.write('all:\n  hosts:\n    %s:\n      ansible_host: 127.0.0.1\n      ansible_port: %d\n'
                     '      ansible_user: root\n      ansible_ssh_private_key_file: %s\n'
                     '      ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null\n'
                     '      ansible_python_interpreter: /usr/bin/python3\n' % (HOST, state['port'], state['key']))
    with open(os.path.join(folder, 'group_vars', 'all.yml'), 'w') as handle:
        pool, dummy, shm = size.partition(':')
        handle.write(GROUP_VARS.format(pool=pool, shm=shm or pool))
    return folder


def tune(state, size):
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING='False', ANSIBLE_PIPELINING='True', ANSIBLE_NOCOLOR='1')
    log_path = os.path.join(state['folder'], 'tune-mariadb-%s.log' % size.replace(':', '-'))
    with open(log_path, 'wb') as output:
        rc = subprocess.run(['ansible-playbook', '-i', inventory(state, size), os.path.join(ROOT, 'playbooks', 'tune.yml')],
                            env=env, stdout=output, stderr=subprocess.STDOUT, check=False, timeout=1800).returncode
    return rc, log_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--sizes', default='256M,512M')
    parser.add_argument('--name', default='mariadb')
    args = parser.parse_args()
    start = time.time()
    image = vmlab.build(vmlab.PACKAGES + ',mariadb-server')
    results = []
    with vmlab.vm(args.name, image) as state:
        for size in args.sizes.split(','):
            rc, log_path = tune(state, size)
            probe_rc, probe = ssh(state, PROBE)
            pool, dummy, shm = size.partition(':')
            print('== innodb_buffer_pool_size %s, shared_memory_size %s (tune.yml exit %d, log %s)' % (pool, shm or pool, rc, log_path))
            print(probe.rstrip())
            results.append({'size': size, 'tune_rc': rc, 'probe_rc': probe_rc, 'probe': probe})
            sys.stdout.flush()
        with open(os.path.join(state['folder'], 'mariadb-pages.json'), 'w') as handle:
            json.dump(results, handle, indent=1)
    print('total %.0f s' % (time.time() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
