# -*- coding: utf-8 -*-
"""Benchmark: a 20-setting kernel parameter drift check, one module call per host
(dbhost.tuning.kernel_params) against the usual way (one ansible.posix.sysctl task per key).

Both run in check mode against the local machine, so nothing changes. Hosts are aliases
of localhost with the local connection; what is measured is Ansible's per-task, per-host
cost, which is what a fleet pays. Prints wall time, CPU time (children), module round trips
and the ratios.

Usage: . scripts/lib.sh && python bench/drift_bench.py [--hosts 1,10] [--repeat 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

KEYS = [
    'kernel.sem', 'kernel.shmmni', 'kernel.shmmax', 'kernel.shmall', 'kernel.msgmni', 'kernel.msgmax',
    'kernel.msgmnb', 'kernel.panic_on_oops', 'kernel.pid_max', 'kernel.threads-max',
    'fs.file-max', 'fs.aio-max-nr', 'vm.swappiness', 'vm.dirty_ratio', 'vm.dirty_background_ratio',
    'net.ipv4.ip_local_port_range', 'net.core.rmem_default', 'net.core.rmem_max',
    'net.core.wmem_default', 'net.core.wmem_max',
]

OURS = """
- hosts: all
  gather_facts: false
  check_mode: true
  tasks:
    - name: One call for every key
      dbhost.tuning.kernel_params:
        params: "{{ bench_params }}"
        file: /etc/sysctl.d/90-dbhost-bench.conf
        fail_on_shadowed: false
"""

USUAL = """
- hosts: all
  gather_facts: false
  check_mode: true
  tasks:
    - name: One task per key
      ansible.posix.sysctl:
        name: "{{ item.key }}"
        value: "{{ item.value }}"
        sysctl_file: /etc/sysctl.d/90-dbhost-bench.conf
      loop: "{{ bench_params | dict2items }}"
"""

BARE = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Nothing
      ansible.builtin.meta: noop
"""


def current_values():
    values = {}
    for key in KEYS:
        with open('/proc/sys/' + key.replace('.', '/')) as handle:
            values[key] = ' '.join(handle.read().split())
    return values


def run(playbook, hosts, workdir, params):
    inventory = os.path.join(workdir, 'inventory-%d.ini' % hosts)
    with open(inventory, 'w') as handle:
        handle.write('[all]\n')
        for index in range(hosts):
            handle.write('bench%03d ansible_connection=local ansible_python_interpreter=%s\n'
                         % (index, sys.executable))
    book = os.path.join(workdir, 'play.yml')
    with open(book, 'w') as handle:
        handle.write(playbook)
    extra = os.path.join(workdir, 'vars.yml')
    with open(extra, 'w') as handle:
        handle.write('bench_params:\n')
        for key, value in params.items():
            handle.write('  %s: "%s"\n' % (key, value))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    subprocess.run(['ansible-playbook', '-i', inventory, '-f', str(min(hosts, 10)), '-e', '@' + extra, book],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', default='1,10', help='comma-separated host counts')
    parser.add_argument('--repeat', type=int, default=3, help='runs per case; the best is kept')
    args = parser.parse_args()
    params = current_values()
    # Half the values differ from the live ones, so both ways have drift to report.
    for key in KEYS[::2]:
        if key in ('kernel.sem', 'net.ipv4.ip_local_port_range'):
            continue
        params[key] = str(int(params[key].split()[0]) + 1)
    print('%d settings, best of %d runs, check mode against this machine' % (len(params), args.repeat))
    print('%-6s %-22s %9s %9s %12s' % ('hosts', 'way', 'wall s', 'cpu s', 'round trips'))
    with tempfile.TemporaryDirectory() as workdir:
        for hosts in [int(h) for h in args.hosts.split(',')]:
            figures = {}
            for name, playbook, trips in (('bare play', BARE, 0), ('usual (task per key)', USUAL, len(params)),
                                          ('dbhost.tuning', OURS, 1)):
                runs = [run(playbook, hosts, workdir, params) for dummy in range(args.repeat)]
                wall, cpu = min(runs)
                figures[name] = (wall, cpu)
                print('%-6d %-22s %9.2f %9.2f %12d' % (hosts, name, wall, cpu, trips * hosts))
            usual, ours, bare = figures['usual (task per key)'], figures['dbhost.tuning'], figures['bare play']
            print('%-6d ratio usual/ours: wall %.1fx, cpu %.1fx; over a bare play: usual %.1fx, ours %.1fx (wall)'
                  % (hosts, usual[0] / ours[0], usual[1] / ours[1], usual[0] / bare[0], ours[0] / bare[0]))


if __name__ == '__main__':
    main()
