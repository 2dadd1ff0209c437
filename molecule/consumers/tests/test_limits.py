# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The limit a database gets, as the collection resolves it and as the real consumers give it
(issue 19 items 1 and 2), over random layouts (seeded, so a failure can be replayed):

- pam_limits: lines for the user, its groups (primary, supplementary, one it is not in), uid
  and gid ranges, ``*``, ``-``, unlimited spellings, values pam_limits skips, spread over
  limits.conf and four limits.d files; the consumer is a login session,
  ``runuser -l USER -c 'ulimit -Sl; ulimit -Hl'``;
- systemd: a unit file in /usr/lib or /etc, drop-ins in /etc, /run and /usr/lib (same names
  across folders, a dash-prefix folder), values systemd ignores, DefaultLimitMEMLOCK in
  system.conf and system.conf.d of several folders; after ``systemctl daemon-reload`` (odd
  seeds) or ``daemon-reexec`` (even ones) the consumer is ``systemctl show -p LimitMEMLOCK -p LimitMEMLOCKSoft UNIT``.

Our side is the resource_limits plan (the code behind the module) run in check mode in the
container (files/limits_plan.py on a copy of plugins/); its records' ``persisted`` value is
what it resolved. The consumers' answers are parsed here from their documented output.

The container has no CAP_SYS_RESOURCE, so setrlimit refuses a hard limit above the one the
session inherits; pam_limits (Debian 12's 1.5.2 and 13's 1.7.0) then logs "Could not set
limit" and the session keeps the inherited soft and hard limit: that is checked too. A side no
file sets is inherited, and pam_limits lowers the soft limit to the hard one at the end; where
a side is inherited the inherited value (``ulimit`` of the same shell) stands in for it.
"""

import base64
import importlib.util
import json
import os
import random
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location('consumers_expect', os.path.join(HERE, 'consumers_expect.py'))
expect = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(expect)

testinfra_hosts = expect.podman_hosts()

COLLECTION = os.path.dirname(os.path.dirname(expect.SCENARIO))
WORK = '/var/lib/dbhost-molecule/limits'
LAYOUTS = 24
PAM_LAYOUTS = 30
USER = 'dblimits'
UNIT = 'dblimits-db.service'
ACCOUNTS = '''
getent group dblgrp >/dev/null || groupadd -g 2101 dblgrp
getent group dbldba >/dev/null || groupadd -g 2102 dbldba
getent group dbloper >/dev/null || groupadd -g 2103 dbloper
getent group dblnone >/dev/null || groupadd -g 2104 dblnone
getent passwd dblimits >/dev/null || useradd -m -u 2101 -g dblgrp -G dbldba,dbloper -s /bin/sh dblimits
'''
PAM_FILES = ('/etc/security/limits.conf', '/etc/security/limits.d/10-base.conf', '/etc/security/limits.d/50-db.conf',
             '/etc/security/limits.d/90-site.conf', '/etc/security/limits.d/zz-last.conf')
PAM_DOMAINS = (USER, USER, '@dbldba', '@dbloper', '@dblgrp', '@dblnone', '*', '*', 'someone', ':2101', '2100:2200',
               '2102:', '@:2102', '@2101:2101', '@2102:2110', '%dbldba')
SYSTEMD_UNIT_FILES = ('/usr/lib/systemd/system/' + UNIT, '/etc/systemd/system/' + UNIT)
SYSTEMD_DROPINS = ('/etc/systemd/system/%s.d/10-etc.conf' % UNIT, '/etc/systemd/system/%s.d/50-same.conf' % UNIT,
                   '/run/systemd/system/%s.d/20-run.conf' % UNIT, '/run/systemd/system/%s.d/50-same.conf' % UNIT,
                   '/usr/lib/systemd/system/%s.d/30-vendor.conf' % UNIT,
                   '/usr/lib/systemd/system/%s.d/50-same.conf' % UNIT,
                   '/etc/systemd/system/dblimits-.service.d/40-prefix.conf')
SYSTEMD_MANAGER = ('/etc/systemd/system.conf.d/10-etc.conf', '/etc/systemd/system.conf.d/50-same.conf',
                   '/run/systemd/system.conf.d/50-same.conf', '/usr/lib/systemd/system.conf.d/60-vendor.conf')
SYSTEMD_VALUES = ('64M', '1G', 'infinity', '8388608', '1M:2M', '2M:infinity', '512K', '16M:32M', 'lots', '4M:1M')


def b64(data):
    return base64.b64encode(json.dumps(data).encode('utf-8')).decode('ascii')


@pytest.fixture(name='container', scope='module')
def container_fixture(host):
    """The collection's plugins, the plan runner and layout.py in the container; the test user."""
    name = host.backend.get_hostname()
    host.run('rm -rf %s && mkdir -p %s/ansible_collections/dbhost/tuning', WORK, WORK)
    for source, target in ((os.path.join(COLLECTION, 'plugins'), WORK + '/ansible_collections/dbhost/tuning/plugins'),
                           (os.path.join(expect.SCENARIO, 'files', 'limits_plan.py'), WORK + '/limits_plan.py'),
                           (os.path.join(expect.SCENARIO, 'files', 'layout.py'), WORK + '/layout.py')):
        subprocess.run(['podman', 'cp', source, '%s:%s' % (name, target)], check=True)
    assert expect.run(host, ACCOUNTS).rc == 0
    saved = host.check_output('cat /etc/security/limits.conf')
    yield host
    expect.run(host, 'python3 %s/layout.py %s && systemctl daemon-reexec' % (WORK, b64({
        'files': {'/etc/security/limits.conf': saved},
        'remove': list(PAM_FILES[1:]) + list(SYSTEMD_UNIT_FILES) + list(SYSTEMD_DROPINS) + list(SYSTEMD_MANAGER)})))


def ours(host, options):
    result = host.run('python3 %s/limits_plan.py %s %s', WORK, WORK, b64(options))
    assert result.rc == 0, expect.output(result)
    return expect.by_name(json.loads(result.stdout))


def write(host, layout):
    result = host.run('python3 %s/layout.py %s', WORK, b64(layout))
    assert result.rc == 0, expect.output(result)


# ------------------------------------------------------------------ pam_limits
def pam_value(rng, hard):
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(('unlimited', 'infinity', '-1', 'UNLIMITED'))
    if roll < 0.07:
        return rng.choice(('lots', '4096kb', '16384'))
    if not hard and roll < 0.3:
        return rng.choice(('unlimited', '65536', '9000'))
    return str(rng.choice((64, 256, 1024, 2048, 4096, 6000, 8192)))


def pam_layout(seed):
    rng = random.Random(seed)
    files = {}
    for path in PAM_FILES:
        lines = ['# layout %d' % seed]
        for dummy in range(rng.randint(0, 4)):
            kind = rng.choice(('soft', 'hard', '-', '-'))
            item = 'memlock' if rng.random() < 0.9 else 'core'
            lines.append('%s %s %s %s' % (rng.choice(PAM_DOMAINS), kind, item, pam_value(rng, kind != 'soft')))
        if rng.random() < 0.015:
            lines.append('%s -' % USER)   # no limits at all from here on
        if rng.random() < 0.1:
            lines.append('%s hard' % USER)   # three fields: skipped
        rng.shuffle(lines)
        files[path] = '\n'.join(lines) + '\n'
    return files


def kb(text):
    return 'unlimited' if text == 'unlimited' else int(text)


def lower(first, second):
    if first == 'unlimited':
        return second
    if second == 'unlimited':
        return first
    return min(first, second)


def above(first, second):
    return first != second and lower(first, second) == second


def pam_expected(records, inherited):
    """(what the session must get, from our records; how: 'files', 'inherited' or 'not raised')."""
    soft = records['%s soft memlock' % USER]['persisted']
    hard = records['%s hard memlock' % USER]['persisted']
    if soft is None and hard is None:
        return inherited, 'inherited'
    soft = inherited[0] if soft is None else kb(soft)
    hard_value = inherited[1] if hard is None else kb(hard)
    if above(hard_value, inherited[1]):
        return inherited, 'not raised'   # setrlimit refused: the session keeps what it inherited
    return (lower(soft, hard_value), hard_value), 'files'


def test_pam_limits_layouts(container):
    host = container
    inherited = tuple(kb(line) for line in host.check_output('ulimit -Sl; ulimit -Hl').split())
    rows, wrong, from_files = [], [], 0
    for seed in range(1, PAM_LAYOUTS + 1):
        layout = pam_layout(seed)
        write(host, {'files': layout})
        records = ours(host, {'limits': [{'domain': USER, 'type': side, 'item': 'memlock', 'value': '1'}
                                         for side in ('soft', 'hard')], 'comparison': 'minimum'})
        session = host.run("runuser -l %s -c 'ulimit -Sl; ulimit -Hl'", USER)
        assert session.rc == 0, expect.output(session)
        real = tuple(kb(line) for line in session.stdout.split())
        expected, how = pam_expected(records, inherited)
        from_files += how == 'files'
        rows.append((seed, records['%s soft memlock' % USER]['persisted'], records['%s hard memlock' % USER]['persisted'],
                     how, expected, real, 'ok' if expected == real else 'WRONG'))
        if expected != real:
            wrong.append('seed %d: ours %s, pam_limits %s\n%s' % (seed, expected, real, ''.join(
                '--- %s\n%s' % item for item in sorted(layout.items()))))
    text = expect.show(expect.table('pam_limits: memlock of %s (inherited %s)' % (USER, inherited),
                                    ('seed', 'ours soft', 'ours hard', 'from', 'ours -> session', 'runuser', ''),
                                    rows))
    assert not wrong, text + '\n' + '\n'.join(wrong)
    assert from_files >= 20, 'only %d of %d layouts set the limit from the files' % (from_files, PAM_LAYOUTS)


# ------------------------------------------------------------------ systemd
def systemd_layout(seed):
    rng = random.Random(1000 + seed)
    unit_at = rng.choice(SYSTEMD_UNIT_FILES)
    unit = '[Unit]\nDescription=dbhost limits layout %d\n[Service]\nExecStart=/bin/sleep infinity\n' % seed
    if rng.random() < 0.3:
        unit += 'LimitMEMLOCK=%s\n' % rng.choice(SYSTEMD_VALUES)
    files = {unit_at: unit}
    for path in SYSTEMD_DROPINS:
        lines = []
        for dummy in range(rng.choice((0, 0, 1, 1, 2))):
            lines.append('LimitMEMLOCK=%s' % rng.choice(SYSTEMD_VALUES))
        files[path] = '[Service]\n' + ''.join(line + '\n' for line in lines) if rng.random() < 0.5 else '# empty\n'
    for path in SYSTEMD_MANAGER:
        if rng.random() < 0.4:
            files[path] = '[Manager]\nDefaultLimitMEMLOCK=%s\n' % rng.choice(SYSTEMD_VALUES)
        else:
            files[path] = '[Manager]\n'
    remove = [path for path in SYSTEMD_UNIT_FILES if path != unit_at]
    return {'files': files, 'remove': remove}


def show_pair(shown):
    def one(text):
        return 'infinity' if text == 'infinity' else int(text)
    soft, hard = one(shown['LimitMEMLOCKSoft']), one(shown['LimitMEMLOCK'])
    return str(soft) if soft == hard else '%s:%s' % (soft, hard)


def test_systemd_layouts(container):
    host = container
    rows, wrong = [], []
    for seed in range(1, LAYOUTS + 1):
        layout = systemd_layout(seed)
        write(host, layout)
        # both ways of loading: daemon-reload reads system.conf.d again too (systemd 252, 257)
        assert host.run('systemctl %s', 'daemon-reload' if seed % 2 else 'daemon-reexec').rc == 0
        shown = dict(line.split('=', 1) for line in host.check_output(
            'systemctl show -p LimitMEMLOCK -p LimitMEMLOCKSoft -p LoadState %s', UNIT).splitlines())
        assert shown['LoadState'] == 'loaded', shown
        record = ours(host, {'service': UNIT, 'service_limits': {'LimitMEMLOCK': '1'},
                             'comparison': 'minimum'})['%s LimitMEMLOCK' % UNIT]
        real = show_pair(shown)
        rows.append((seed, record['persisted'], real, 'ok' if record['persisted'] == real else 'WRONG',
                     record['detail'][:110]))
        if record['persisted'] != real:
            wrong.append('seed %d: ours %s, systemctl show %s\n%s' % (seed, record['persisted'], real, ''.join(
                '--- %s\n%s' % item for item in sorted(layout['files'].items()))))
    text = expect.show(expect.table('systemd: LimitMEMLOCK of %s' % UNIT,
                                    ('seed', 'ours (persisted)', 'systemctl show', '', 'our detail'), rows))
    assert not wrong, text + '\n' + '\n'.join(wrong)
