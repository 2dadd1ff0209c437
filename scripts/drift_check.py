# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the drift check and exit with a code that tells clean, drift, failed and unreachable apart.

    scripts/drift-check [options] [-- ansible-playbook arguments]
    scripts/drift-check --from-report DIR
    scripts/drift-check merge [options] --report-dir OUT SLICE_REPORT...
    scripts/drift-check prune --ledger LEDGER [--ledger-scope S] --keep-runs N

scripts/drift-check runs this file with python3 from PATH (the venv's after `. scripts/lib.sh`,
else the system's); `python3 scripts/drift_check.py` is the same.

ansible-playbook's own exit codes cannot say "drift" (2 is any failed host, 4 is an unreachable
host or a parse error), so this runs playbooks/drift.yml in check mode with the
dbhost.tuning.drift_report callback enabled and decides from the drift.json it writes:

    0  clean        every host was reached and no setting drifted
    3  drift        at least one setting drifted (no host failed or unreachable)
    4  unreachable  at least one host could not be reached (none failed)
    2  failed       a task failed on at least one host
    5  no hosts     no host was checked: the inventory does not exist or does not parse, or the
                    pattern or --limit matches no host (a typo must never read as clean)
    1  no verdict   no fresh drift.json (ansible-playbook could not run the play: bad arguments,
                    syntax error, interrupted), or ansible-playbook failed although every host is clean

When several apply, the first in the order failed, unreachable, drift wins; the reports name every host's
state. Under each host that is not clean (or has unsupported settings) it prints why: every failed
task's message, and every setting that is not ok with its status, its reason and its source.
A setting this platform or container cannot have (status unsupported: a key the running kernel
does not have, a read-only /proc/sys) is counted apart and never changes the exit code by itself;
with --unsupported-as-drift it counts as drift (3). See docs/drift-exit-codes.md.

--ledger keeps every run in a ledger (a SQLite file, or a postgresql:// connection string written
through psql) and marks each record new, changed, still or fixed against the run before; with
--since-last, drift exits 3 only when some of it is new. --waivers applies a waiver file. `merge`
joins the drift.json of several slices or shards into one report and one exit code; `prune` removes
a scope's runs older than its last N from the ledger. These read the
collection's plugin_utils from this checkout; the rest is standard library only.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

EXIT_CLEAN = 0
EXIT_NO_VERDICT = 1
EXIT_FAILED = 2
EXIT_DRIFT = 3
EXIT_UNREACHABLE = 4
EXIT_NO_HOSTS = 5
EXIT_CODES = {'clean': EXIT_CLEAN, 'drift': EXIT_DRIFT, 'unreachable': EXIT_UNREACHABLE, 'failed': EXIT_FAILED}

CALLBACK = 'dbhost.tuning.drift_report'
REPORT_FILES = ('drift.json', 'drift.xml', 'drift.md', 'drift.html')
# What ansible-playbook prints when no host is left to check (checked with --list-hosts).
NO_HOSTS_SIGNS = ('failed to parse inventory source', 'leaves us with no hosts to target', 'unable to parse',
                  'no host to check')
CHECKOUT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    # argparse exits 2 on bad usage, which here means "a host failed".
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    parser = Parser(
        prog='drift-check',
        description='Run the dbhost.tuning drift check and exit 0 clean, 3 drift, 4 unreachable, 2 failed, '
                    '5 no hosts, 1 no verdict.',
        epilog='Arguments after "--" go to ansible-playbook unchanged (for example -i INVENTORY, --limit, -f).')
    parser.add_argument('--report-dir', default=None,
                        help='where the reports go (default: $DBHOST_DRIFT_REPORT_DIR, else ./drift-report)')
    parser.add_argument('--playbook', default=os.path.join(CHECKOUT, 'playbooks', 'drift.yml'),
                        help='the drift playbook (default: this collection\'s playbooks/drift.yml)')
    parser.add_argument('--ansible-playbook', dest='ansible_playbook', default=None,
                        help='the ansible-playbook program (default: the one on PATH)')
    parser.add_argument('--report-only', action='store_true',
                        help='exit 0 on drift; failed and unreachable hosts still give 2 and 4')
    parser.add_argument('--unsupported-as-drift', dest='unsupported_as_drift', action='store_true',
                        help='count unsupported settings (not applicable on their host) as drift: exit 3 where '
                             'they would otherwise leave a clean verdict')
    parser.add_argument('--from-report', metavar='DIR', default=None,
                        help='do not run anything: decide from an existing DIR/drift.json '
                             '(for example an ansible-runner artifacts folder)')
    add_history_args(parser)
    parser.add_argument('playbook_args', nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.playbook_args and args.playbook_args[0] == '--':
        args.playbook_args = args.playbook_args[1:]
    if args.from_report and args.playbook_args:
        raise UsageError('--from-report reads a report; it takes no ansible-playbook arguments')
    return args


def load_report(path):
    """The drift.json document, checked enough to decide on it."""
    with open(path, encoding='utf-8') as stream:
        report = json.load(stream)
    state = report.get('summary', {}).get('state') if isinstance(report, dict) else None
    if state not in EXIT_CODES:
        raise ValueError('%s has no summary.state among %s' % (path, ', '.join(sorted(EXIT_CODES))))
    return report


def unsupported_count(summary):
    """How many settings are unsupported (not applicable on their host); read from the statuses
    in a report written before the count had its own key."""
    if 'unsupported' in summary:
        return summary['unsupported']
    return (summary.get('statuses') or {}).get('unsupported', 0)


def verdict(report, report_only=False, unsupported_as_drift=False, since_last=False):
    """The exit code for a report.  Unsupported settings leave the code alone, unless
    ``unsupported_as_drift``: then a fleet that is clean but for them reads as drift.  With
    ``since_last``, drift is 3 only when some of it is new since the ledger's run before."""
    if not report.get('hosts') and not report['summary'].get('hosts'):
        return EXIT_NO_HOSTS
    code = EXIT_CODES[report['summary']['state']]
    if unsupported_as_drift and code == EXIT_CLEAN and unsupported_count(report['summary']):
        code = EXIT_DRIFT
    if since_last and code == EXIT_DRIFT and not collection('fleet').new_drift(report):
        code = EXIT_CLEAN
    if report_only and code == EXIT_DRIFT:
        return EXIT_CLEAN
    return code


def _one_line(value):
    """A value of drift.json as one line of text, null as `-` (as the reports show it)."""
    if value is None or value == '':
        return '-'
    if isinstance(value, (list, tuple)):
        return ' '.join(_one_line(part) for part in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return ' '.join(str(value).split())


def _names(records):
    """Each record's name, with its target where the same name has several targets on the host
    (the same attribute of two devices), as the callback's tables name them."""
    targets = {}
    for record in records:
        targets.setdefault(str(record.get('name')), set()).add(_one_line(record.get('target')))
    return ['%s (%s)' % (record.get('name'), _one_line(record.get('target')))
            if len(targets[str(record.get('name'))]) > 1 and record.get('target') not in (None, '')
            else str(record.get('name')) for record in records]


def why_lines(entry):
    """Why a host is not clean: every failed task's message, then every record that is not ok with
    its status, its reason (the detail where a module gave none) and the source of its desired value."""
    lines = []
    for error in entry.get('errors') or []:
        lines.append('drift-check:     %s in task %r: %s' % (
            error.get('kind'), error.get('task'), _one_line(error.get('msg'))))
    records = entry.get('settings') or []
    for name, record in zip(_names(records), records):
        if record.get('status') == 'ok':
            continue
        line = 'drift-check:     %s: %s: %s' % (
            name, record.get('status'), _one_line(record.get('reason') or record.get('detail')))
        if record.get('source'):
            line += ' (source: %s)' % _one_line(record['source'])
        lines.append(line)
    return lines


def describe(report):
    summary = report['summary']
    hosts = report.get('hosts', {})
    hosts_count = summary.get('hosts', 0)
    lines = ['drift-check: %s: %d host%s (%d clean, %d drift, %d failed, %d unreachable), %d of %d settings drifted, '
             '%d unsupported' % (
                 summary['state'], hosts_count, '' if hosts_count == 1 else 's', summary.get('clean', 0),
                 summary.get('drift', 0), summary.get('failed', 0), summary.get('unreachable', 0),
                 summary.get('drifted', 0), summary.get('settings', 0), unsupported_count(summary))]
    for name in sorted(hosts):
        unsupported = [record for record in hosts[name].get('settings') or [] if record.get('status') == 'unsupported']
        if hosts[name].get('state') != 'clean':
            lines.append('drift-check:   %s: %s' % (name, hosts[name].get('state')))
        elif unsupported:
            lines.append('drift-check:   %s: clean, %d unsupported (%s)' % (
                name, len(unsupported), ', '.join(sorted(set(str(record.get('name')) for record in unsupported)))))
        lines.extend(why_lines(hosts[name]))
    if report.get('since_last') or report.get('waivers'):
        fleet, waivers = collection('fleet'), collection('waivers')
        lines.extend('drift-check: ' + line for line in fleet.since_last_lines(report) + waivers.waiver_lines(report))
    return lines


def report_dir_of(args):
    return os.path.abspath(args.report_dir or os.environ.get('DBHOST_DRIFT_REPORT_DIR') or 'drift-report')


def callback_env(report_dir, history=None):
    env = dict(os.environ)
    for name, value in (history or {}).items():
        if value:
            env[name] = value
    enabled = [name.strip() for name in env.get('ANSIBLE_CALLBACKS_ENABLED', '').split(',') if name.strip()]
    if CALLBACK not in enabled:
        enabled.append(CALLBACK)
    env['ANSIBLE_CALLBACKS_ENABLED'] = ','.join(enabled)
    env['DBHOST_DRIFT_REPORT_DIR'] = report_dir
    # An inventory source that does not parse (or does not exist) is an error, not a warning
    # followed by a play on no host; set it to false in the environment to allow it.
    env.setdefault('ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED', 'true')
    formats = env.get('DBHOST_DRIFT_REPORT_FORMATS')
    if formats is not None and 'json' not in [part.strip() for part in formats.split(',')]:
        # The verdict is read from drift.json.
        env['DBHOST_DRIFT_REPORT_FORMATS'] = formats + ',json' if formats.strip() else 'json'
    return env


def run_check(args):
    history = preflight(args)
    report_dir = report_dir_of(args)
    program = args.ansible_playbook or shutil.which('ansible-playbook')
    if not program:
        raise UsageError('ansible-playbook is not on PATH (activate the venv or pass --ansible-playbook)')
    if not os.path.isfile(args.playbook):
        raise UsageError('no playbook at %s' % args.playbook)
    os.makedirs(report_dir, exist_ok=True)
    # A report left by an earlier run must never pass for this run's.
    for name in REPORT_FILES:
        path = os.path.join(report_dir, name)
        if os.path.lexists(path):
            os.unlink(path)
    # --check on top of the playbook's own check_mode: a drift check never changes a host.
    # The playbook's own "fail on drift" gate is turned off: the verdict comes from the report.
    command = [program, args.playbook, '--check', '-e', 'dbhost_drift_report_only=true'] + args.playbook_args
    started = time.time()
    ansible_rc = subprocess.call(command, env=callback_env(report_dir, history))
    json_path = os.path.join(report_dir, 'drift.json')
    if not os.path.exists(json_path) or os.path.getmtime(json_path) < started - 1:
        if no_hosts(program, args, report_dir):
            print(NO_HOSTS_MESSAGE % EXIT_NO_HOSTS, file=sys.stderr)
            return EXIT_NO_HOSTS
        print('drift-check: no drift report was written to %s (ansible-playbook exit %d): no verdict'
              % (report_dir, ansible_rc), file=sys.stderr)
        return EXIT_NO_VERDICT
    report = load_report(json_path)
    if history_problems(report):
        return EXIT_NO_VERDICT
    code = verdict(report, args.report_only, args.unsupported_as_drift, args.since_last)
    if code == EXIT_NO_HOSTS:
        print(NO_HOSTS_MESSAGE % EXIT_NO_HOSTS, file=sys.stderr)
        return code
    for line in describe(report):
        print(line, file=sys.stderr)
    if code == EXIT_CLEAN and ansible_rc != 0 and report['summary']['state'] == 'clean':
        print('drift-check: every host is clean but ansible-playbook exited %d: no verdict' % ansible_rc,
              file=sys.stderr)
        return EXIT_NO_VERDICT
    print('drift-check: reports in %s; exit %d' % (report_dir, code), file=sys.stderr)
    return code


NO_HOSTS_MESSAGE = ('drift-check: no host was checked: the inventory does not exist or does not parse, or the '
                    'hosts pattern or --limit matches no host; exit %d')


def no_hosts(program, args, report_dir):
    """Whether the same ansible-playbook arguments select no host at all (asked with --list-hosts,
    which runs nothing): a missing or broken inventory, a --limit that matches nothing."""
    command = [program, args.playbook, '--list-hosts'] + args.playbook_args
    try:
        done = subprocess.run(command, env=callback_env(report_dir), capture_output=True, text=True, check=False)
    except OSError:
        return False
    output = (done.stdout + done.stderr).lower()
    if done.returncode != 0:
        return any(sign in output for sign in NO_HOSTS_SIGNS)
    counts = [line.split('hosts (', 1)[1].split(')', 1)[0] for line in output.splitlines() if 'hosts (' in line]
    return bool(counts) and all(count == '0' for count in counts)


def from_report(args):
    folder = args.from_report
    path = folder if folder.endswith('.json') else os.path.join(folder, 'drift.json')
    history = preflight(args)
    report = load_report(path)
    if any(history.values()):
        # A report written without them (an ansible-runner artifact): kept and re-rendered now.
        place(report, history, 'drift-check')
        collection('files').write_reports(report, os.path.dirname(os.path.abspath(path)), REPORT_FORMATS)
    if history_problems(report):
        return EXIT_NO_VERDICT
    code = verdict(report, args.report_only, args.unsupported_as_drift, args.since_last)
    if code == EXIT_NO_HOSTS:
        print('drift-check: report %s checked no host; exit %d' % (path, code), file=sys.stderr)
        return code
    for line in describe(report):
        print(line, file=sys.stderr)
    print('drift-check: report %s; exit %d' % (path, code), file=sys.stderr)
    return code


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ['merge']:
            return merge(parse_merge_args(argv[1:]))
        if argv[:1] == ['prune']:
            return prune(parse_prune_args(argv[1:]))
        args = parse_args(argv)
        return from_report(args) if args.from_report else run_check(args)
    except UsageError as exc:
        print('drift-check: %s' % exc, file=sys.stderr)
        return EXIT_NO_VERDICT
    except (OSError, ValueError) as exc:
        print('drift-check: %s: no verdict' % exc, file=sys.stderr)
        return EXIT_NO_VERDICT
    except KeyboardInterrupt:
        return EXIT_NO_VERDICT


REPORT_FORMATS = ('json', 'junit', 'markdown', 'html')
HISTORY_ENV = (('ledger', 'DBHOST_DRIFT_LEDGER'), ('ledger_scope', 'DBHOST_DRIFT_LEDGER_SCOPE'),
               ('waivers', 'DBHOST_DRIFT_WAIVERS'))
_MODULES = {}


def collection(name):
    """A module of this checkout's plugins/plugin_utils/drift_report, imported as the collection's
    (ansible_collections.dbhost.tuning...), through a temporary ansible_collections folder linking
    this checkout when it is not inside one already."""
    package = 'ansible_collections.dbhost.tuning'
    if package not in sys.modules and not _MODULES:
        parent = os.path.dirname(CHECKOUT)
        if (os.path.basename(CHECKOUT), os.path.basename(parent), os.path.basename(os.path.dirname(parent))) == (
                'tuning', 'dbhost', 'ansible_collections'):
            sys.path.insert(0, os.path.dirname(os.path.dirname(parent)))
        else:
            base = tempfile.mkdtemp(prefix='drift-check-')
            os.makedirs(os.path.join(base, 'ansible_collections', 'dbhost'))
            os.symlink(CHECKOUT, os.path.join(base, 'ansible_collections', 'dbhost', 'tuning'))
            sys.path.insert(0, base)
            atexit.register(shutil.rmtree, base, True)
        _MODULES['ready'] = True
    return importlib.import_module('%s.plugins.plugin_utils.drift_report.%s' % (package, name))


def add_history_args(parser):
    parser.add_argument('--ledger', default=None,
                        help='append the run to this ledger and mark each record against the run before: a SQLite '
                             'file, or a postgresql:// connection string (default: $DBHOST_DRIFT_LEDGER)')
    parser.add_argument('--ledger-scope', dest='ledger_scope', default=None,
                        help='the series of runs in the ledger this run follows (default: $DBHOST_DRIFT_LEDGER_SCOPE, '
                             'else "default")')
    parser.add_argument('--waivers', default=None,
                        help='a waiver file (YAML): drift it waives does not fail the run until the waiver expires '
                             '(default: $DBHOST_DRIFT_WAIVERS)')
    parser.add_argument('--since-last', dest='since_last', action='store_true',
                        help='exit 3 only when some drift is new since the ledger\'s run before (needs a ledger)')


def preflight(args):
    """The ledger, scope and waiver file to use, checked before anything runs: a waiver file that
    does not parse or a ledger that cannot be opened or migrated stops here, naming it."""
    history = dict((env, getattr(args, name) or os.environ.get(env)) for name, env in HISTORY_ENV)
    if args.since_last and not history['DBHOST_DRIFT_LEDGER']:
        raise UsageError('--since-last needs a ledger (--ledger or DBHOST_DRIFT_LEDGER)')
    if history['DBHOST_DRIFT_WAIVERS']:
        history['DBHOST_DRIFT_WAIVERS'] = os.path.abspath(history['DBHOST_DRIFT_WAIVERS'])
        waivers = collection('waivers')
        try:
            waivers.load_waivers(history['DBHOST_DRIFT_WAIVERS'])
        except waivers.WaiverError as exc:
            raise UsageError(str(exc))
    if history['DBHOST_DRIFT_LEDGER']:
        ledger = collection('ledger')
        try:
            ledger.open_ledger(history['DBHOST_DRIFT_LEDGER']).migrate()
        except ledger.LedgerError as exc:
            raise UsageError(str(exc))
    return history


def place(report, history, recorded_by):
    collection('history').place_in_history(
        report, ledger=history['DBHOST_DRIFT_LEDGER'], waivers=history['DBHOST_DRIFT_WAIVERS'],
        scope=history['DBHOST_DRIFT_LEDGER_SCOPE'] or 'default', recorded_by=recorded_by)


def history_problems(report):
    """Print why the report's history is incomplete (bad waiver file, ledger not written); True if so."""
    found = [report[part]['error'] for part in ('waivers', 'ledger')
             if isinstance(report.get(part), dict) and report[part].get('error')]
    for problem in found:
        print('drift-check: %s: no verdict' % problem, file=sys.stderr)
    return bool(found)


def parse_merge_args(argv):
    parser = Parser(prog='drift-check merge',
                    description='Join the drift.json reports of several slices or shards of one run into one report '
                                '(drift.json, drift.xml, drift.md, drift.html) and one exit code.')
    parser.add_argument('--report-dir', required=True, help='where the merged reports go')
    parser.add_argument('--report-only', action='store_true')
    parser.add_argument('--unsupported-as-drift', dest='unsupported_as_drift', action='store_true')
    add_history_args(parser)
    parser.add_argument('slices', nargs='+', metavar='SLICE', help='a slice\'s drift.json or its report folder')
    return parser.parse_args(argv)


def parse_prune_args(argv):
    parser = Parser(prog='drift-check prune',
                    description='Remove the runs of one scope of a ledger older than its last N, with their records. '
                                'The next run is still marked against the last one, with each drift\'s since-when.')
    parser.add_argument('--ledger', default=None,
                        help='the ledger: a SQLite file, or a postgresql:// connection string (default: '
                             '$DBHOST_DRIFT_LEDGER)')
    parser.add_argument('--ledger-scope', dest='ledger_scope', default=None,
                        help='the series of runs to prune (default: $DBHOST_DRIFT_LEDGER_SCOPE, else "default")')
    parser.add_argument('--keep-runs', dest='keep_runs', type=int, required=True, metavar='N',
                        help='how many of the scope\'s last runs to keep (at least 1)')
    return parser.parse_args(argv)


def prune(args):
    """drift-check prune: 0 when the ledger was pruned (or had nothing to prune), 1 when it could not be."""
    spec = args.ledger or os.environ.get('DBHOST_DRIFT_LEDGER')
    if not spec:
        raise UsageError('prune needs a ledger (--ledger or DBHOST_DRIFT_LEDGER)')
    scope = args.ledger_scope or os.environ.get('DBHOST_DRIFT_LEDGER_SCOPE') or 'default'
    ledger = collection('ledger')
    try:
        store = ledger.open_ledger(spec)
        removed = store.prune(scope, args.keep_runs)
    except ledger.LedgerError as exc:
        raise UsageError(str(exc))
    print('drift-check: ledger %s, scope %s: removed %d runs (%d records), %d kept'
          % (store.describe(), scope, removed['runs'], removed['records'], removed['kept']), file=sys.stderr)
    return EXIT_CLEAN


def merge(args):
    history = preflight(args)
    merging = collection('merge')
    try:
        report = merging.merge_reports([merging.load_slice(path) for path in args.slices])
    except merging.MergeError as exc:
        raise UsageError(str(exc))
    place(report, history, 'drift-check merge')
    report_dir = os.path.abspath(args.report_dir)
    collection('files').write_reports(report, report_dir, REPORT_FORMATS)
    if history_problems(report):
        return EXIT_NO_VERDICT
    code = verdict(report, args.report_only, args.unsupported_as_drift, args.since_last)
    for line in describe(report):
        print(line, file=sys.stderr)
    print('drift-check: merged %d slice reports into %s; exit %d' % (len(args.slices), report_dir, code),
          file=sys.stderr)
    return code


if __name__ == '__main__':
    sys.exit(main())
