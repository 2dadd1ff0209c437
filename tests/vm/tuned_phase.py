# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TuneD phase of the reboot scenario: real TuneD (Debian's tuned package, in the image,
disabled there) as one more consumer of the settings, on the scenario's own reboot.

After tune.yml, activate() lays down a site profile that includes the stock
throughput-performance and uses variables (from variables, from an include= file in
[variables], and through ${f:kb2s}), makes it the active profile (manual mode) and enables
tuned.service for the next boot; the drift check before the reboot then predicts what TuneD
gives. After the reboot, observe() reads what TuneD says it did; check() compares every
record the drift check predicted as TuneD's (its detail names a TuneD profile) with the
value the system shows after the boot, and checks the values this profile was built to
give: kernel.shm* from TuneD (above the collection's minimums: ok, persisted by TuneD),
vm.overcommit_memory from our sysctl.d file again (TuneD writes 1, then reapply_sysctl
writes the files again), THP never from a variable, and read_ahead_kb of vda only (the
site's [disk] devices=, merged into the stock [disk] readahead=>4096): shadowed, predicted
4096, with vdb left to the collection's udev rule. deactivate() stops and disables TuneD
before the scenario's revert, so that the revert is judged without it.
"""

import os

import verify  # tests/vm, on sys.path as run_scenario.py puts it

SITE = '/etc/tuned/dbhost-site/tuned.conf'
SITE_VARIABLES = '/etc/tuned/dbhost-site/site-variables.conf'
STOCK = '/usr/lib/tuned/throughput-performance/tuned.conf'
PROFILE = '''# dbhost.tuning VM lab: a site profile over TuneD's throughput-performance
[main]
summary=dbhost.tuning VM lab site profile
include=throughput-performance

[variables]
include=${i:PROFILE_DIR}/site-variables.conf
mni=${base_mni}
shmall_pages=${f:kb2s:${half_shmall}}

[sysctl]
kernel.shmmni=${mni}
kernel.shmmax=${shmmax}
kernel.shmall=${shmall_pages}
vm.overcommit_memory=${overcommit}

[vm]
transparent_hugepages=${thp}

[disk]
devices=${root_disk}
'''
VARIABLES = '''# values of the site profile (read by include= in its [variables])
base_mni = 8192
shmmax = 68719476736
half_shmall = 2097152
overcommit = 1
thp = never    # the collection's value too
root_disk = vda
'''
# record name: (the file its detail must name, the value predicted and then seen after the boot)
FROM_TUNED = {
    'kernel.shmmni': (SITE, '8192'),
    'kernel.shmmax': (SITE, '68719476736'),
    'kernel.shmall': (SITE, '4194304'),
    '/sys/kernel/mm/transparent_hugepage/enabled': (SITE, 'never'),
    'vda/queue/read_ahead_kb': (STOCK, '4096'),
}
SHADOWED = {'vda/queue/read_ahead_kb': (STOCK, '4096')}
# reapply_sysctl = 1 (Debian's tuned-main.conf): our sysctl.d line wins over the site's 1
FROM_OUR_FILE = {'vm.overcommit_memory': ('/etc/sysctl.d/90-dbhost-tuning.conf', '2')}


def _put(scenario, path, text):
    local = scenario._local(os.path.basename(path), text)  # pylint: disable=protected-access
    # one word: ssh hands the remote shell the words joined by blanks
    scenario.ssh(['mkdir -p %s && cat > %s' % (os.path.dirname(path), path)], stdin=local)


def activate(scenario):
    """The site profile, active in manual mode, tuned.service enabled (not started) for the next boot."""
    _put(scenario, SITE, PROFILE)
    _put(scenario, SITE_VARIABLES, VARIABLES)
    _put(scenario, '/etc/tuned/active_profile', 'dbhost-site\n')
    _put(scenario, '/etc/tuned/profile_mode', 'manual\n')
    scenario.ssh(['systemctl', 'enable', '--quiet', 'tuned.service'])


def observe(scenario):
    """What TuneD says after the boot: its service state, its active profile, its log's last lines."""
    out = scenario.ssh(['systemctl is-active tuned.service; cat /etc/tuned/active_profile; '
                        'tail -n 40 /var/log/tuned/tuned.log 2>/dev/null || true'])
    lines = out.splitlines()
    return {'active': lines[0].strip() if lines else '', 'profile': lines[1].strip() if len(lines) > 1 else '',
            'log': lines[2:]}


def deactivate(scenario):
    """Stop TuneD (it puts back what it changed) and keep it off for the revert's reboot."""
    scenario.ssh(['systemctl', 'disable', '--now', '--quiet', 'tuned.service'])
    scenario.ssh(['rm', '-f', '/etc/tuned/active_profile', '/etc/tuned/profile_mode'])


def expect(expected):
    """The scenario's expectations with this phase's shadowed record added."""
    shadowed = dict(expected['shadowed'])
    shadowed.update(SHADOWED)
    return dict(expected, shadowed=shadowed)


def judge(evidence, passed, failed):
    """verify.check's (passed, failed) with this phase's checks added."""
    checks = verify.Checks()
    checks.passed, checks.failed = list(passed), list(failed)
    check(checks, evidence)
    return checks.passed, checks.failed


def check(checks, evidence):
    """TuneD ran the site profile, and every value predicted as TuneD's is the value after the boot."""
    seen = evidence.get('tuned') or {}
    checks.equal('tuned.service after the reboot', seen.get('active'), 'active')
    checks.equal('TuneD\'s active profile after the reboot', seen.get('profile'), 'dbhost-site')
    records = dict((record['name'], record) for record in evidence['before'])
    predicted = sorted(name for name, record in records.items() if 'TuneD profile' in (record.get('detail') or ''))
    checks.equal('records the drift check predicted as TuneD\'s', predicted, sorted(FROM_TUNED))
    for name in predicted:
        record = records[name]
        checks.equal('%s: predicted as TuneD\'s before the reboot = live after it' % name,
                     verify.live_value(record, evidence['observed'], evidence['login']),
                     verify.words(record.get('persisted')))
    for name, (path, value) in sorted(list(FROM_TUNED.items()) + list(FROM_OUR_FILE.items())):
        record = records.get(name, {})
        detail = record.get('detail') or ''
        named = path in detail if name in FROM_TUNED else 'TuneD' not in detail
        checks.that(named, '%s: predicted from %s (detail %r)' % (name, path, detail))
        checks.equal('%s: predicted value at boot' % name, verify.words(record.get('persisted')), value)
        if record:
            checks.equal('%s: observed after the reboot' % name,
                         verify.live_value(record, evidence['observed'], evidence['login']), value)
