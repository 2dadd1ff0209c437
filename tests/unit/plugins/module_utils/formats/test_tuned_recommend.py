# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The profile TuneD starts in automatic mode (formats/tuned_recommend.py, read by
tuned_host.active), against TuneD's own ProfileRecommender on the same host trees
(fixtures/tuned/recommend_oracle.py, from Debian's tuned package, unpacked, never installed).

TuneD's stock rules are /usr/lib/tuned/recommend.d/50-tuned.conf of Debian's 2.20.0 package: the
file is the same, byte for byte, as recommend.conf at the tags v2.22.1, v2.24.0, v2.25.1 and
v2.26.0 of https://github.com/redhat-performance/tuned (the versions fixtures/tuned/README.md lists),
which install it under that name (their Makefile)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_host
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_recommend
from ansible_collections.dbhost.tuning.tests.unit.fixtures.tuned import debian
from ansible_collections.dbhost.tuning.tests.unit.helpers import put

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'tuned')
STOCK = '/usr/lib/tuned/recommend.d/50-tuned.conf'
# what a host tree cannot show: virt-what's output and the processes at TuneD's start
VIRT = ('', 'kvm\n', 'vmware\n', 'xen\nxen-hvm\n')
PROCESSES = ([], ['sapstartsrv', 'systemd'], ['ora_pmon_db1', 'sshd'])
SITE = ('# a site\'s rules\n[oracle-site]\n/etc/oratab=.*^db1:\nchassis_type=rack mount\n\n[sap-site,1]\n'
        'process=sapstartsrv\n\n[sap-site,2]\n/etc/sap-role=^hana # inline comment\n')
# (files laid on the tree, the collection's candidates) per host
HOSTS = [
    ({}, ['virtual-guest', 'balanced']),                                                       # Debian: no cpe
    ({'/etc/system-release-cpe': 'cpe:/o:redhat:enterprise_linux:7.9:ga:server\n'},
     ['throughput-performance', 'virtual-guest', 'balanced']),
    ({'/etc/system-release-cpe': 'cpe:/o:redhat:enterprise_linux:9::baseos\n'}, ['virtual-guest', 'balanced']),
    ({'/etc/system-release-cpe': 'cpe:/o:fedoraproject:fedora:29:atomic.host\n'},
     ['atomic-host', 'atomic-guest', 'virtual-guest', 'balanced']),
    # a site's recommend.conf first: oracle-site on a rack server with db1 in oratab
    ({'/etc/tuned/recommend.conf': SITE, '/etc/oratab': 'db1:/u01/app/oracle:Y\n',
      '/sys/devices/virtual/dmi/id/chassis_type': '23\n'}, ['oracle-site']),
    # a tower: oracle-site does not match; sap-site needs the processes, or the role file
    ({'/etc/tuned/recommend.conf': SITE, '/etc/oratab': 'db1:/u01/app/oracle:Y\n',
      '/sys/devices/virtual/dmi/id/chassis_type': '7\n'}, ['sap-site', 'virtual-guest', 'balanced']),
    ({'/etc/tuned/recommend.conf': SITE, '/etc/sap-role': 'hana\n'}, ['sap-site']),
    # no chassis type in sysfs: TuneD asks dmidecode, which the collection does not run
    ({'/etc/tuned/recommend.conf': SITE, '/etc/oratab': 'db1:x:Y\n'}, ['oracle-site', 'sap-site', 'virtual-guest',
                                                                       'balanced']),
    # /etc/tuned/recommend.d/50-tuned.conf hides the stock file of that name; files by name
    ({'/etc/tuned/recommend.d/50-tuned.conf': '[latency-performance]\n/etc/hostname=^db\n',
      '/etc/tuned/recommend.d/60-later.conf': '[powersave]\n', '/etc/hostname': 'db7\n'}, ['latency-performance']),
    ({'/etc/tuned/recommend.d/50-tuned.conf': '[latency-performance]\n/etc/hostname=^db\n',
      '/etc/tuned/recommend.d/60-later.conf': '[powersave]\n', '/etc/hostname': 'app3\n'}, ['powersave']),
    # a /FILE that is a folder: TuneD finds it and matches an empty text
    ({'/etc/tuned/recommend.conf': '[hpc-compute]\n/etc/tuned=^$\n[balanced]\n'}, ['hpc-compute']),
    ({'/etc/tuned/recommend.conf': '[hpc-compute]\n/etc/tuned=.+\n[powersave]\n'}, ['powersave']),
    # an option TuneD does not know matches; a file its ConfigParser refuses stops TuneD (None), unless
    # an earlier file matched
    ({'/etc/tuned/recommend.d/20-new.conf': '[network-throughput]\nsome_future_option=^x$\n'}, ['network-throughput']),
    ({'/etc/tuned/recommend.d/10-broken.conf': 'no section\n[network-latency]\n'}, [None]),
    ({'/etc/tuned/recommend.d/10-broken.conf': '[network-latency]\nvirt=.+\n[x]\nno equals sign\n'}, [None]),
    ({'/etc/tuned/recommend.conf': '[network-latency]\nvirt=.+\n', '/etc/tuned/recommend.d/10-broken.conf': 'x\n'},
     ['network-latency', None]),
    ({'/etc/tuned/recommend.conf': '[hpc-compute]\n', '/etc/tuned/recommend.d/10-broken.conf': 'no section\n'},
     ['hpc-compute']),
]


@pytest.fixture(scope='module')
def debian_tuned(tmp_path_factory):
    return debian.unpack(str(tmp_path_factory.mktemp('tuned-deb')), ['tuned'])


def host_tree(base, stock, files):
    os.makedirs(os.path.join(base, 'usr/lib/tuned/recommend.d'))
    shutil.copy(stock, os.path.join(base, STOCK.lstrip('/')))
    for path, text in files.items():
        put(base, path, text)
    return base


def oracle(packages, requests):
    out = subprocess.run([sys.executable, os.path.join(FIXTURES, 'recommend_oracle.py')],
                         input=json.dumps(requests).encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=packages), check=False)
    assert out.returncode == 0, out.stderr.decode(errors='replace')
    return json.loads(out.stdout.decode())


def collection(base):
    read = tuned_host.reader(base)
    texts = [(path, read(path)) for path in tuned_host.recommend_files(base)]
    return tuned_recommend.recommend([(path, text) for path, text in texts if text is not None],
                                     tuned_host.recommend_facts(base, read))


def test_the_recommended_profile_is_the_one_tuned_picks(debian_tuned, tmp_path_factory):
    stock = os.path.join(debian_tuned, STOCK.lstrip('/'))
    trees = [host_tree(str(tmp_path_factory.mktemp('host')), stock, files) for files, dummy in HOSTS]
    requests = [{'root': base, 'virt': virt, 'processes': processes}
                for base in trees for virt in VIRT for processes in PROCESSES]
    told = oracle(debian.python_path(debian_tuned), requests)
    per_host = len(VIRT) * len(PROCESSES)
    decided = 0
    for index, (base, (files, candidates)) in enumerate(zip(trees, HOSTS)):
        picked = told[index * per_host:(index + 1) * per_host]
        found, why = collection(base)
        assert found == candidates, (files, found, why)
        # every profile TuneD picks, whatever virt-what says and whatever runs, is one the collection names
        assert set(picked) <= set(found), (files, picked, found)
        if len(found) == 1:      # decided (None: TuneD fails to start, and says why)
            assert set(picked) == set(found) and (why is None) is (found != [None]), (files, picked)
            decided += 1
        else:
            assert len(set(picked)) > 1 or 'dmidecode' in why, (files, picked, why)
    print('%d hosts: TuneD picks a profile the collection names; %d decided from the tree alone' % (len(HOSTS), decided))
    assert decided == 10


def test_what_cannot_be_evaluated_is_said(tmp_path):
    base = str(tmp_path)
    put(base, '/etc/tuned/recommend.d/50-x.conf', '[a]\nvirt=\n[b]\nprocess1=^postgres\nprocess2=^patroni\n[c]\n'
                                                  '/proc/sys/kernel/osrelease=^6\\.\n[d]\nsyspurpose_role=^Red Hat\n')
    found, why = collection(base)
    # [d]: without the syspurpose module TuneD matches the role against an empty text
    assert found == ['a', 'b', 'c', 'balanced']
    where = '/etc/tuned/recommend.d/50-x.conf'
    assert why == ('the recommend rules TuneD starts from pick one of a, b, c, balanced: [a] in %s: virt= matches the '
                   'output of virt-what, a command the collection does not run; [b] in %s: process1= matches the '
                   'processes running when TuneD starts; process2= matches the processes running when TuneD starts; '
                   '[c] in %s: /proc/sys/kernel/osrelease= matches a file of the running system, which the host tree '
                   'does not show' % (where, where, where))
    # with the syspurpose module, its role decides; recommend_command = 0: always balanced
    put(base, '/usr/lib/python3.9/site-packages/syspurpose/files.py', '')
    read = tuned_host.reader(base)
    rules = [('/x', '[d]\nsyspurpose_role=^red hat\n')]
    facts = tuned_recommend.Facts(read, False, tuned_host.syspurpose_module(base))
    assert tuned_recommend.recommend(rules, facts) == (['balanced'], None)      # no syspurpose.json: no role
    put(base, '/etc/rhsm/syspurpose/syspurpose.json', '{"role": "Red Hat Enterprise Linux Server"}')
    assert tuned_recommend.recommend(rules, facts) == (['d'], None)
    put(base, '/etc/rhsm/syspurpose/syspurpose.json', '{"role": ')
    assert tuned_recommend.recommend(rules, facts)[0] == ['d', 'balanced']
    assert tuned_recommend.recommend(rules, facts, False) == (['balanced'], None)
    # a chassis type sysfs does not name: TuneD asks dmidecode
    put(base, '/sys/devices/virtual/dmi/id/chassis_type', '0\n')
    assert tuned_recommend.matches('chassis_type', '.*', tuned_recommend.Facts(read))[0] is None
    put(base, '/sys/devices/virtual/dmi/id/chassis_type', '17\n')
    assert tuned_recommend.matches('chassis_type', 'main server', tuned_recommend.Facts(read)) == (True, None)


def test_facts_by_default_a_tree_that_is_not_the_running_system(tmp_path):
    read = tuned_host.reader(str(tmp_path))
    facts = tuned_recommend.Facts(read)
    # a file of the running system the tree does not show: not known; a missing file elsewhere: no match
    assert tuned_recommend.matches('/proc/cmdline', '.*', facts)[0] is None
    assert tuned_recommend.matches('/etc/oratab', '.*', facts) == (False, None)
    # without the syspurpose module TuneD never reads syspurpose.json: the role is empty
    put(str(tmp_path), '/etc/rhsm/syspurpose/syspurpose.json', '{"role": "Red Hat Enterprise Linux Server"}')
    assert tuned_recommend.matches('syspurpose_role', '^$', facts) == (True, None)
    assert tuned_recommend.matches('system', '(', facts)[0] is None      # no regular expression: TuneD fails
    assert tuned_recommend.matches('/proc/cmdline', '.*', tuned_recommend.Facts(read, True)) == (False, None)
