# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One admin layout of layouts.yml, run in a test container: the real consumer's answer and the
collection's module's records, before an apply, after it and after a second one.

    corpus.py WORK BASE64_JSON     run one layout (JSON: the layout, "user", "unit", "clean")
    corpus.py WORK save            keep the consumers' folders as they are (a tar in WORK)
    corpus.py WORK B64             with {"kernel_reads": [case...]}: each sysctl value case of
                                   tests/unit/.../formats/sysctl_values_cases.yml written by
                                   systemd-sysctl, the kernel's answer beside the collection's
    corpus.py WORK clean-up B64    remove the paths (a JSON list) the last layout wrote
    corpus.py WORK restore         put the saved folders back, reload systemd

WORK holds ansible_collections/dbhost/tuning/plugins and ansible/module_utils (copied in by
tests/test_layouts.py): the modules run as Ansible runs them, ``python3 -m <module> ARGS.json``
with ``_ansible_check_mode``.  The consumers, asked here and never modelled:

- sysctl: ``unshare --ipc --net`` gives a fresh IPC and network namespace, whose keys hold the
  kernel's built-in values as at boot; systemd-sysctl (--prefix= each key) loads the files
  there, and the keys are read back.  The container's own values are not touched by it.
- pam: ``runuser -l USER -c 'ulimit -S -x; ulimit -H -x'`` (a login through pam_limits), and
  the same ``ulimit`` of this process (what the session inherits).
- systemd: ``systemctl daemon-reload``, then ``systemctl show -p LimitX -p LimitXSoft UNIT``.
"""

import base64
import json
import os
import subprocess
import sys

SAVED_FOLDERS = ('etc/sysctl.d', 'run/sysctl.d', 'usr/local/lib/sysctl.d', 'usr/lib/sysctl.d', 'lib/sysctl.d',
                 'etc/sysctl.conf', 'etc/security/limits.conf', 'etc/security/limits.d', 'etc/systemd/system.conf.d',
                 'run/systemd/system.conf.d')
SYSCTL_FOLDERS = ('/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d')
ULIMIT_FLAGS = {'memlock': '-l', 'nofile': '-n', 'core': '-c', 'nproc': '-u', 'stack': '-s'}


def run(argv, **options):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                          **options)


def systemd_sysctl():
    for path in ('/lib/systemd/systemd-sysctl', '/usr/lib/systemd/systemd-sysctl'):
        if os.path.exists(path):
            return path
    raise SystemExit('no systemd-sysctl')


def proc(key):
    return '/proc/sys/' + key.replace('.', '/')


def read_key(key):
    with open(proc(key)) as handle:
        return ' '.join(handle.read().split())


def write_key(key, value):
    with open(proc(key), 'w') as handle:
        handle.write(value)


def module(work, name, args, check_mode):
    """The module's JSON result, run as Ansible runs it."""
    path = os.path.join(work, 'args.json')
    with open(path, 'w') as handle:
        json.dump({'ANSIBLE_MODULE_ARGS': dict(args, _ansible_check_mode=check_mode)}, handle)
    done = run([sys.executable, '-m', 'ansible_collections.dbhost.tuning.plugins.modules.%s' % name, path],
               env=dict(os.environ, PYTHONPATH=work), cwd=work)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {'failed': True, 'msg': 'no JSON: %s %s' % (done.stdout[-400:], done.stderr[-400:])}


# ------------------------------------------------------------------ layouts on disk
def remove(paths):
    for path in paths:
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)


def lay(layout):
    for path, text in sorted(layout.get('files', {}).items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        with open(path, 'w') as handle:
            handle.write(text)
    for path, target in sorted(layout.get('links', {}).items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)


def clean_sysctl():
    """Every sysctl.d file of a dbhost name (the scenario's own and the layouts'), and /etc/sysctl.conf emptied."""
    for folder in SYSCTL_FOLDERS:
        if os.path.isdir(folder):
            remove([os.path.join(folder, name) for name in os.listdir(folder) if 'dbhost' in name])
    with open('/etc/sysctl.conf', 'w') as handle:
        handle.write('')


# ------------------------------------------------------------------ consumers
def booted(keys):
    """{key: value} systemd-sysctl loads in fresh IPC and network namespaces (the built-in values first)."""
    script = '%s %s; for key in "$@"; do cat "$key"; done' % (
        systemd_sysctl(), ' '.join('--prefix=%s' % key for key in keys))
    done = run(['unshare', '--ipc', '--net', 'sh', '-c', script, 'sh'] + [proc(key) for key in keys])
    lines = done.stdout.splitlines()
    return dict((key, ' '.join(line.split())) for key, line in zip(keys, lines))


def session(user, items):
    """{item: [soft, hard]} a login of ``user`` gets, and what it inherits."""
    script = '; '.join('ulimit -S %s; ulimit -H %s' % (ULIMIT_FLAGS[item], ULIMIT_FLAGS[item]) for item in items)
    login = run(['runuser', '-l', user, '-c', script])
    own = run(['sh', '-c', script])
    return {'login': pairs(login.stdout, items), 'inherited': pairs(own.stdout, items),
            'login_error': login.stderr.strip() if login.returncode else None}


def pairs(text, items):
    words = text.split()
    return dict((item, words[2 * index:2 * index + 2]) for index, item in enumerate(items))


def shown(unit, names):
    run(['systemctl', 'daemon-reload'])
    argv = ['systemctl', 'show']
    for name in names:
        argv.extend(['-p', name, '-p', name + 'Soft'])
    values = dict(line.split('=', 1) for line in run(argv + ['--', unit]).stdout.splitlines() if '=' in line)
    return dict((name, pair(values.get(name + 'Soft'), values.get(name))) for name in names)


def pair(soft, hard):
    return soft if soft == hard else '%s:%s' % (soft, hard)


# ------------------------------------------------------------------ one layout
def sysctl_layout(work, layout):
    clean_sysctl()
    lay(layout)
    keys = sorted(layout['params'])
    fresh = booted(keys)
    for key in keys:
        write_key(key, layout.get('live', {}).get(key, fresh[key]))
    args = {'params': layout['params'], 'mode': layout.get('mode', 'minimum'), 'fail_on_shadowed': False,
            'file': layout.get('file', '/etc/sysctl.d/90-dbhost-tuning.conf')}
    out = {'live_before': dict((key, read_key(key)) for key in keys), 'consumer_before': booted(keys)}
    out['check'] = module(work, 'kernel_params', args, True)
    out['apply'] = module(work, 'kernel_params', args, False)
    out['consumer_after'] = booted(keys)
    out['live_after'] = dict((key, read_key(key)) for key in keys)
    out['check_after'] = module(work, 'kernel_params', args, True)
    out['again'] = module(work, 'kernel_params', args, False)
    return out


def pam_layout(work, layout, user):
    remove(['/etc/security/limits.d/' + name for name in os.listdir('/etc/security/limits.d')])
    with open('/etc/security/limits.conf', 'w') as handle:
        handle.write('# corpus layout\n')
    lay(layout)
    items = sorted(set(item['item'] for item in layout['limits']))
    args = {'limits': layout['limits'], 'comparison': layout.get('mode', 'minimum'), 'fail_on_shadowed': False}
    out = {'consumer_before': session(user, items)}
    out['check'] = module(work, 'resource_limits', args, True)
    out['apply'] = module(work, 'resource_limits', args, False)
    out['consumer_after'] = session(user, items)
    out['check_after'] = module(work, 'resource_limits', args, True)
    out['again'] = module(work, 'resource_limits', args, False)
    return out


def systemd_layout(work, layout, unit):
    for path in layout.get('clean', []):
        remove([path])
    lay(layout)
    names = sorted(layout['service_limits'])
    args = {'service': unit, 'service_limits': layout['service_limits'], 'comparison': layout.get('mode', 'minimum'),
            'fail_on_shadowed': False}
    out = {'consumer_before': shown(unit, names)}
    out['check'] = module(work, 'resource_limits', args, True)
    out['apply'] = module(work, 'resource_limits', args, False)
    out['consumer_after'] = shown(unit, names)
    out['check_after'] = module(work, 'resource_limits', args, True)
    out['again'] = module(work, 'resource_limits', args, False)
    return out


def kernel_reads(work, cases):
    """[{stored, refused, ours}] per case: what the kernel stores when systemd-sysctl writes the
    case's line over its ``before`` value (fresh IPC and network namespaces, so nothing of the
    container changes), and what the collection's formats/sysctl_values.py says it stores."""
    sys.path.insert(0, work)
    from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_values
    probe = '/etc/sysctl.d/50-dbhost-probe.conf'
    clean_sysctl()
    found = []
    for case in cases:
        with open(probe, 'w') as handle:
            handle.write('%s = %s\n' % (case['key'], case['text']))
        script = 'printf %%s "$1" > "$2"; %s --prefix=%s; echo "rc=$?"; cat "$2"' % (systemd_sysctl(), case['key'])
        done = run(['unshare', '--ipc', '--net', 'sh', '-c', script, 'sh', case['before'], proc(case['key'])])
        lines = done.stdout.splitlines()
        ours = sysctl_values.write(case['key'], case['text'], case['before'])
        found.append({'stored': ' '.join(lines[1].split()) if len(lines) > 1 else None, 'refused': lines[0] != 'rc=0',
                      'ours': ours.value, 'ours_refused': ours.error is not None})
    remove([probe])
    return found


def main(argv):
    work, what = argv[1], argv[2]
    tar = os.path.join(work, 'consumers-saved.tar')
    if what == 'save':
        present = [folder for folder in SAVED_FOLDERS if os.path.lexists('/' + folder)]
        run(['tar', '-C', '/', '-cpf', tar] + present)
        return
    if what == 'clean-up':
        remove(json.loads(base64.b64decode(argv[3]).decode('utf-8')))
        return
    if what == 'restore':
        for folder in SAVED_FOLDERS:
            run(['rm', '-rf', '/' + folder])
        run(['tar', '-C', '/', '-xpf', tar])
        run(['systemctl', 'daemon-reexec'])
        return
    task = json.loads(base64.b64decode(what).decode('utf-8'))
    if 'kernel_reads' in task:
        print(json.dumps(kernel_reads(work, task['kernel_reads'])))
        return
    remove(task.get('clean', []))
    layout = task['layout']
    if layout['consumer'] == 'sysctl':
        out = sysctl_layout(work, layout)
    elif layout['consumer'] == 'pam':
        out = pam_layout(work, layout, task['user'])
    else:
        out = systemd_layout(work, layout, task['unit'])
    print(json.dumps(out))


if __name__ == '__main__':
    main(sys.argv)
