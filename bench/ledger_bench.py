# -*- coding: utf-8 -*-
"""Benchmark: the drift ledger and the HTML report at fleet scale.

One real drift run per host count through scripts/drift-check with the drift_report callback
keeping a SQLite ledger and writing every report (drift.html included), over N aliases of this
machine on the local connection. Each host checks 20 kernel parameters of a test tree (one
kernel_params task, check mode; a third of the hosts drift on two of them), so N hosts give 20 N records.

Printed, per host count:
  run CPU / host      the controller's CPU (drift-check, ansible-playbook and its workers) per host
  history+report CPU  what the ledger and the reports add, measured on the run's own drift.json in this
                      process, as the next scheduled run (the ledger holds this run): the ledger append,
                      reading the run before, the run-to-run marks, JSON, JUnit, Markdown and HTML
  share               history+report CPU / run CPU (target: at most 5 % at 1,000 hosts)
  controller peak RSS ansible-playbook's peak RSS (the callback lives in it)
  history peak        tracemalloc peak of the ledger append and the rendering (the callback's added memory)
  drift-check peak    peak RSS of `drift-check --from-report DIR --ledger L` (loads, appends, re-renders)
  html size, open     drift.html's size; headless chromium's wall time to load and run it (--dump-dom),
                      and the page's own time to its last script line (performance.now())

Usage (as root, machine otherwise idle if possible):
  . scripts/lib.sh && python bench/ledger_bench.py [--hosts 200,1000] [--forks 5]
  . scripts/lib.sh && python bench/ledger_bench.py --html-only --hosts 200,1000,2000   # the page alone
"""

from __future__ import absolute_import, division, print_function

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
DRIFT_CHECK = os.path.join(ROOT, 'scripts', 'drift-check')
DESIRED = {
    'kernel.shmmni': 4096, 'kernel.msgmni': 32000, 'kernel.msgmax': 65536, 'kernel.msgmnb': 65536,
    'kernel.shmmax': 68719476736, 'kernel.shmall': 16777216, 'kernel.panic': 10, 'kernel.threads-max': 200000,
    'vm.swappiness': 10, 'vm.dirty_ratio': 15, 'vm.dirty_background_ratio': 5, 'vm.min_free_kbytes': 131072,
    'vm.overcommit_memory': 0, 'fs.file-max': 6815744, 'fs.aio-max-nr': 1048576, 'net.core.somaxconn': 4096,
    'net.core.rmem_max': 4194304, 'net.core.wmem_max': 1048576, 'net.ipv4.tcp_keepalive_time': 600,
    'kernel.pid_max': 4194304}
KEYS = tuple(sorted(DESIRED))
# The two keys a drifted host has another live value of.
DRIFTING = ('kernel.msgmni', 'kernel.shmmni')
PLAYBOOK = '''- name: Drift check of 20 kernel parameters on a test tree
  hosts: all
  gather_facts: false
  tasks:
    - name: Kernel parameters
      dbhost.tuning.kernel_params:
        params: %s
        root: "{{ tree }}"
        file: /etc/sysctl.d/90-bench.conf
''' % json.dumps(DESIRED)
CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--no-first-run']


def make_tree(path, changed):
    for key, value in DESIRED.items():
        folder = os.path.join(path, 'proc', 'sys', *key.split('.')[:-1])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, key.rsplit('.', maxsplit=1)[-1]), 'w') as stream:
            stream.write('%d\n' % (value + changed if key in DRIFTING else value))
    os.makedirs(os.path.join(path, 'etc', 'sysctl.d'), exist_ok=True)
    with open(os.path.join(path, 'etc', 'sysctl.d', '90-bench.conf'), 'w') as stream:
        stream.write(''.join('%s = %d\n' % item for item in sorted(DESIRED.items())))
    return path


def setup(work, hosts):
    trees = [make_tree(os.path.join(work, 'tree%d' % number), number) for number in range(3)]
    lines = []
    for group in range(4):
        lines.append('[site%d]' % group)
        lines.extend('h%04d tree=%s' % (number, trees[number % 3]) for number in range(hosts) if number % 4 == group)
    lines += ['[all:vars]', 'ansible_connection=local', 'ansible_python_interpreter=%s' % sys.executable]
    inventory = os.path.join(work, 'hosts-%d.ini' % hosts)
    with open(inventory, 'w') as stream:
        stream.write('\n'.join(lines) + '\n')
    playbook = os.path.join(work, 'bench.yml')
    with open(playbook, 'w') as stream:
        stream.write(PLAYBOOK)
    return inventory, playbook


def child_usage():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(command, env):
    """Run a command as a child of a small Python that reports the child's CPU and peak RSS."""
    probe = ('import resource,subprocess,sys,json;rc=subprocess.call(sys.argv[1:],stdout=subprocess.DEVNULL);'
             'u=resource.getrusage(resource.RUSAGE_CHILDREN);'
             'print(json.dumps({"rc":rc,"cpu":u.ru_utime+u.ru_stime,"maxrss_kb":u.ru_maxrss}))')
    started = time.time()
    done = subprocess.run([sys.executable, '-c', probe] + command, env=env, capture_output=True, text=True, check=False)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures['wall'] = time.time() - started
    figures['stderr'] = done.stderr
    return figures


def history_cost(report_path, ledger_copy, out_dir):
    """CPU and memory of what the ledger and the reports add, on the run's own drift.json."""
    # scripts/lib.sh's collections path links this checkout as ansible_collections/dbhost/tuning.
    for path in reversed(os.environ.get('ANSIBLE_COLLECTIONS_PATH', '').split(os.pathsep)):
        if path:
            sys.path.insert(0, path)
    from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.files import write_reports
    from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.history import place_in_history
    with open(report_path) as stream:
        report = json.load(stream)
    for key in ('run_id', 'since_last', 'ledger'):
        report.pop(key, None)
    for entry in report['hosts'].values():
        for record in entry['settings']:
            record.pop('since_last', None)
    tracemalloc.start()
    started = time.process_time()
    place_in_history(report, ledger=ledger_copy, scope='bench')
    history_cpu = time.process_time() - started
    write_reports(report, out_dir, ['json', 'junit', 'markdown', 'html'])
    total = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {'ledger_cpu': history_cpu, 'history_report_cpu': total, 'history_peak_mb': peak / 1048576.0}


def chromium_floor(work):
    """Headless chromium's own start and stop, on an empty page: what any page costs to open this way."""
    empty = os.path.join(work, 'empty.html')
    with open(empty, 'w') as stream:
        stream.write('<!DOCTYPE html><html><body data-render-ms="0"></body></html>')
    return chromium_open(empty)[0]


def html_only(hosts, work):
    """drift.html of the last real run's shape (20 settings per host, a third drifted on two), built
    without a run: the page's own cost at a host count the machine cannot run now."""
    for path in reversed(os.environ.get('ANSIBLE_COLLECTIONS_PATH', '').split(os.pathsep)):
        if path:
            sys.path.insert(0, path)
    from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import refresh
    from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.html_page import render_html
    report = {'clean_statuses': ['ok', 'unsupported'], 'started': None, 'finished': None, 'hosts': {}}
    for number in range(hosts):
        report['hosts']['h%04d' % number] = {'errors': [], 'groups': ['site%d' % (number % 4)], 'settings': [
            {'name': key, 'target': None, 'status': 'drift' if number % 3 and key in DRIFTING else 'ok',
             'desired': value, 'live': value + number % 3, 'persisted': value, 'reason': None, 'detail': None,
             'source': 'task option: kernel_params.params'} for key, value in sorted(DESIRED.items())]}
    refresh(report)
    path = os.path.join(work, 'drift-%d.html' % hosts)
    started = time.process_time()
    with open(path, 'w') as stream:
        stream.write(render_html(report))
    render_cpu = time.process_time() - started
    open_wall, render = chromium_open(path)
    return {'hosts': hosts, 'html_kb': os.path.getsize(path) / 1024.0, 'render_cpu': render_cpu,
            'open_wall': open_wall, 'page_done': render, 'floor': chromium_floor(work)}


def chromium_open(path):
    browser = shutil.which('chromium')
    if not browser:
        return None, None
    profile = tempfile.mkdtemp(prefix='bench-chromium-')
    try:
        started = time.time()
        done = subprocess.run([browser] + CHROMIUM_FLAGS + ['--user-data-dir=%s' % profile, '--dump-dom',
                                                            'file://' + path], capture_output=True, text=True, check=False)
        wall = time.time() - started
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    found = re.search(r'data-render-ms="(\d+)"', done.stdout)
    return wall, int(found.group(1)) / 1000.0 if found else None


def one(hosts, args, work, env):
    inventory, playbook = setup(work, hosts)
    ledger = os.path.join(work, 'ledger-%d.sqlite' % hosts)
    report_dir = os.path.join(work, 'report-%d' % hosts)
    figures = run_measured([DRIFT_CHECK, '--playbook', playbook, '--report-dir', report_dir, '--ledger', ledger,
                            '--', '-i', inventory, '-f', str(args.forks)], env)
    if figures['rc'] != 3:
        raise SystemExit('drift-check exited %d: %s' % (figures['rc'], figures['stderr'][-3000:]))
    report_path = os.path.join(report_dir, 'drift.json')
    ledger_copy = os.path.join(work, 'ledger-copy-%d.sqlite' % hosts)
    shutil.copy(ledger, ledger_copy)
    cost = history_cost(report_path, ledger_copy, os.path.join(work, 'offline-%d' % hosts))
    check = run_measured([DRIFT_CHECK, '--from-report', report_dir, '--ledger', ledger_copy], env)
    html = os.path.join(report_dir, 'drift.html')
    open_wall, render = chromium_open(html)
    with open(report_path) as stream:
        report = json.load(stream)
    return dict(cost, hosts=hosts, records=report['summary']['settings'], run_cpu=figures['cpu'], run_wall=figures['wall'],
                controller_rss_mb=figures['maxrss_kb'] / 1024.0, check_rss_mb=check['maxrss_kb'] / 1024.0,
                html_kb=os.path.getsize(html) / 1024.0, json_kb=os.path.getsize(report_path) / 1024.0,
                open_wall=open_wall, render=render)


def table(rows):
    lines = ['| hosts | records | run wall s | run CPU s | CPU / host s | history+report CPU s | share | '
             'controller peak RSS MB | history peak MB | drift-check peak RSS MB | drift.html KB | drift.json KB | '
             'chromium open s | page script done s |', '|' + '---|' * 14]
    for row in rows:
        lines.append('| %d | %d | %.1f | %.1f | %.3f | %.2f | %.1f %% | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %s |' % (
            row['hosts'], row['records'], row['run_wall'], row['run_cpu'], row['run_cpu'] / row['hosts'],
            row['history_report_cpu'], 100.0 * row['history_report_cpu'] / row['run_cpu'], row['controller_rss_mb'],
            row['history_peak_mb'], row['check_rss_mb'], row['html_kb'], row['json_kb'],
            '%.2f' % row['open_wall'] if row['open_wall'] is not None else '-',
            '%.2f' % row['render'] if row['render'] is not None else '-'))
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        lines.append('')
        lines.append('CPU per host at %d hosts / at %d hosts: %.2fx' % (
            last['hosts'], first['hosts'], (last['run_cpu'] / last['hosts']) / (first['run_cpu'] / first['hosts'])))
    return '\n'.join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', default='200,1000', help='comma-separated host counts (default 200,1000)')
    parser.add_argument('--forks', type=int, default=5)
    parser.add_argument('--keep', action='store_true', help='keep the work folder')
    parser.add_argument('--html-only', action='store_true',
                        help='no run: only drift.html of --hosts hosts, its size and its opening in chromium '
                             '(against chromium on an empty page)')
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='dbhost-ledger-bench-')
    if args.html_only:
        try:
            print('| hosts | drift.html KB | render CPU s | chromium open s | empty page s | page script done s |')
            print('|---|---|---|---|---|---|')
            for hosts in [int(count) for count in args.hosts.split(',')]:
                row = html_only(hosts, work)
                print('| %d | %.0f | %.2f | %.2f | %.2f | %.2f |' % (
                    row['hosts'], row['html_kb'], row['render_cpu'], row['open_wall'], row['floor'], row['page_done']))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', DBHOST_DRIFT_REPORT_TERMINAL='none', ANSIBLE_LOCAL_TEMP=os.path.join(work, 'tmp'))
    for name in ('DBHOST_DRIFT_LEDGER', 'DBHOST_DRIFT_WAIVERS', 'DBHOST_DRIFT_REPORT_FORMATS', 'ANSIBLE_CALLBACKS_ENABLED'):
        env.pop(name, None)
    rows = []
    try:
        for hosts in [int(count) for count in args.hosts.split(',')]:
            rows.append(one(hosts, args, work, env))
            print(json.dumps(rows[-1], sort_keys=True), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print('ledger_bench %s, %d CPUs, load %s, forks %d' % (
        datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'), os.cpu_count(),
        ' '.join('%.1f' % value for value in os.getloadavg()), args.forks))
    print(table(rows))


if __name__ == '__main__':
    main()
