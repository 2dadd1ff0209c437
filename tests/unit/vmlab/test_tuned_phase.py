# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/vm/tuned_phase.py's judge on evidence shaped as the TuneD phase gives it (the recorded
run's evidence with TuneD's predictions and values laid in), and on copies with one thing
wrong: each must fail, naming it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
VM = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'vm')


@pytest.fixture(scope='module')
def phase():
    sys.path.insert(0, VM)
    try:
        import tuned_phase  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(VM)
    return tuned_phase


SITE = "TuneD profile dbhost-site (/etc/tuned/dbhost-site/tuned.conf)"
STOCK = "TuneD profile throughput-performance (/usr/lib/tuned/throughput-performance/tuned.conf)"
TUNED = {
    'kernel.shmmni': ('/proc/sys/kernel/shmmni', '8192', 'persisted by ' + SITE),
    'kernel.shmmax': ('/proc/sys/kernel/shmmax', '68719476736', 'persisted by ' + SITE),
    'kernel.shmall': ('/proc/sys/kernel/shmall', '4194304', 'persisted by ' + SITE),
    '/sys/kernel/mm/transparent_hugepage/enabled': ('/sys/kernel/mm/transparent_hugepage/enabled', 'never',
                                                    'choices: always madvise never; persisted by ' + SITE),
    'vda/queue/read_ahead_kb': ('/sys/block/vda/queue/read_ahead_kb', '4096',
                                "%s sets '4096' for vda and wins at boot over /etc/udev/rules.d/x.rules" % STOCK),
}


@pytest.fixture
def evidence():
    with open(os.path.join(HERE, '..', 'fixtures', 'vm', 'evidence.json')) as handle:
        data = json.load(handle)['evidence']
    for entry in data['before']:
        if entry['name'] in TUNED:
            path, value, detail = TUNED[entry['name']]
            entry['persisted'], entry['detail'] = value, detail
            data['observed']['files'][path] = value if 'transparent' not in path else 'always madvise [never]'
    data['tuned'] = {'active': 'active', 'profile': 'dbhost-site', 'log': []}
    return data


def judged(phase, evidence):
    return phase.judge(evidence, [], [])


def test_the_phase_passes_when_every_prediction_holds(phase, evidence):
    passed, failed = judged(phase, evidence)
    assert failed == [] and len(passed) >= 20


@pytest.mark.parametrize('spoil, named', [
    (lambda e: e['tuned'].update(active='failed'), 'tuned.service after the reboot'),
    (lambda e: e['tuned'].update(profile='balanced'), "TuneD's active profile after the reboot"),
    (lambda e: e['observed']['files'].update({'/proc/sys/kernel/shmmni': '4096'}),
     'kernel.shmmni: predicted as TuneD'),
    (lambda e: e['observed']['files'].update({'/sys/block/vda/queue/read_ahead_kb': '64'}),
     'vda/queue/read_ahead_kb: observed after the reboot'),
    (lambda e: [entry.update(detail='') for entry in e['before'] if entry['name'] == 'kernel.shmmax'],
     "records the drift check predicted as TuneD's"),
    (lambda e: [entry.update(detail='persisted by ' + SITE) for entry in e['before']
                if entry['name'] == 'vm.overcommit_memory'], 'vm.overcommit_memory: predicted from'),
])
def test_each_wrong_thing_fails_naming_it(phase, evidence, spoil, named):
    spoiled = copy.deepcopy(evidence)
    spoil(spoiled)
    failed = judged(phase, spoiled)[1]
    assert any(line.startswith(named) for line in failed), failed


def test_expect_adds_the_shadowed_readahead(phase):
    expected = phase.expect({'shadowed': {'x': ('/f', '1')}, 'min_records': 20})
    assert expected['shadowed'] == {'x': ('/f', '1'), 'vda/queue/read_ahead_kb': (phase.STOCK, '4096')}
