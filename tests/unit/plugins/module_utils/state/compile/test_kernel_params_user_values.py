# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's own value is what the user wrote: exact unless written >=N / <=N or given a
comparison; kernel_params_mode applies to the profile's values only; the key table holds
a rule and a source for every key the roles know."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import sysctl_keys
from ansible_collections.dbhost.tuning.plugins.module_utils.sizing import profiles
from ansible_collections.dbhost.tuning.plugins.module_utils.state import desired
from ansible_collections.dbhost.tuning.plugins.module_utils.state.host_state import HostState
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry
from ansible_collections.dbhost.tuning.tests.unit.helpers import digest, put, read
from ansible_collections.dbhost.tuning.tests.unit.helpers import shm_sized, with_defaults

pytestmark = pytest.mark.usefixtures('linux')

OUR_FILE = '/etc/sysctl.d/90-dbhost-tuning.conf'
FACTS = {'system': 'Linux', 'memory': {'total_bytes': 64 * 1024 ** 3, 'page_size': 4096}}


def compile_records(settings, mode='minimum', profile='none', comparisons=None):
    variables = {'kernel_params_profile': profile, 'kernel_params_settings': settings, 'kernel_params_mode': mode}
    if comparisons is not None:
        variables['kernel_params_comparisons'] = comparisons
    state = desired.compile_state(['kernel_params'], with_defaults({'kernel_params': variables}), FACTS)
    return dict((r['key'], (r['desired'], r['comparison'])) for r in state.records)


def fake_host(tmp_path, live):
    root = str(tmp_path)
    for key, value in live.items():
        put(root, '/proc/sys/' + key.replace('.', '/'), value + '\n')
    put(root, '/etc/sysctl.d/10-local.conf', ''.join('%s = %s\n' % item for item in sorted(live.items())))
    return root


def run_role(root, settings, check_mode=False, **variables):
    variables.update(kernel_params_profile='none', kernel_params_settings=settings, kernel_params_root=root)
    host = HostState(['kernel_params'], with_defaults({'kernel_params': variables}),
                     registry.Context(check_mode=check_mode), facts_reader=lambda r, subsets: dict(FACTS))
    result = host.run()
    return dict((s['name'], s) for s in host.output(result)['settings']), host.output(result)


@pytest.mark.parametrize('written, expected', [
    ('10', ('10', None)),
    ('>=10', ('10', 'minimum')),
    ('>= 10', ('10', 'minimum')),
    ('<=10', ('10', 'maximum')),
    ('=10', ('10', 'exact')),
    ('>=250 32000 100 128', ('250 32000 100 128', 'minimum')),
    ('>=250 32000 =100 128', ('250 32000 100 128', ['minimum', 'minimum', 'exact', 'exact'])),
    ('250 >=32000', ('250 32000', ['exact', 'minimum'])),
    (['>=250', 32000, 100, 128], ('250 32000 100 128', 'minimum')),
])
def test_marks_are_read_as_tuned_writes_them(written, expected):
    assert compare.split_marks(written) == expected


@pytest.mark.parametrize('written', ['>10', '<10', '>=', '250 <32000'])
def test_a_mark_that_is_not_one_is_refused(written):
    with pytest.raises(compare.ComparisonError):
        compare.split_marks(written)


def test_a_plain_user_value_is_exact_whatever_the_mode():
    for mode in ('minimum', 'maximum', 'exact'):
        records = compile_records({'vm.swappiness': 10, 'vm.dirty_background_ratio': 3, 'fs.aio-max-nr': 1048576},
                                  mode=mode)
        assert records == {'vm.swappiness': ('10', 'exact'), 'vm.dirty_background_ratio': ('3', 'exact'),
                           'fs.aio-max-nr': ('1048576', 'exact')}


def test_marks_and_the_comparisons_option():
    records = compile_records({'vm.swappiness': '<=10', 'fs.aio-max-nr': '>=1048576', 'kernel.sem': [250, 32000, 100, 128],
                               'net.ipv4.ip_local_port_range': '>=9000 65500'},
                              comparisons={'kernel.sem': 'minimum'})
    assert records == {'vm.swappiness': ('10', 'maximum'), 'fs.aio-max-nr': ('1048576', 'minimum'),
                       'kernel.sem': ('250 32000 100 128', 'minimum'),
                       'net.ipv4.ip_local_port_range': ('9000 65500', ['maximum', 'minimum'])}


@pytest.mark.parametrize('settings, comparisons, message', [
    ({'vm.swappiness': '>=10'}, {'vm.swappiness': 'maximum'}, 'say it once'),
    ({'vm.swappiness': 10}, {'vm.dirty_ratio': 'maximum'}, 'vm.dirty_ratio is not in kernel_params_settings'),
    ({'vm.swappiness': 10}, {'vm.swappiness': 'at least'}, "'at least' is not one of"),
    ({'vm.swappiness': '>10'}, None, 'write >=N'),
])
def test_contradictions_are_refused_naming_the_key(settings, comparisons, message):
    with pytest.raises(InputError) as error:
        compile_records(settings, comparisons=comparisons)
    assert message in str(error.value)


@pytest.mark.parametrize('mode, expected', [
    ('minimum', {'kernel.sem': 'minimum', 'fs.file-max': 'minimum', 'kernel.panic_on_oops': 'exact',
                 'net.ipv4.ip_local_port_range': 'exact'}),
    ('exact', {'kernel.sem': 'exact', 'fs.file-max': 'exact', 'kernel.panic_on_oops': 'exact',
               'net.ipv4.ip_local_port_range': 'exact'}),
    ('maximum', {'kernel.sem': 'maximum', 'fs.file-max': 'maximum', 'kernel.panic_on_oops': 'exact',
                 'net.ipv4.ip_local_port_range': 'exact'}),
])
def test_the_mode_applies_to_the_profiles_bounds_only(mode, expected):
    records = compile_records({'vm.swappiness': 10}, mode=mode, profile='oracle')
    assert dict((key, records[key][1]) for key in expected) == expected
    assert records['vm.swappiness'] == ('10', 'exact')


def test_swappiness_10_on_a_host_at_60_is_enforced(tmp_path):
    root = fake_host(tmp_path, {'vm.swappiness': '60'})
    check, dummy = run_role(root, {'vm.swappiness': 10}, check_mode=True)
    assert check['vm.swappiness']['status'] == 'drift'
    applied, dummy = run_role(root, {'vm.swappiness': 10})
    assert applied['vm.swappiness']['status'] == 'changed'
    assert read(root, '/proc/sys/vm/swappiness') == '10'
    assert read(root, OUR_FILE).endswith('vm.swappiness = 10\n')


def test_dirty_background_ratio_3_on_a_host_at_10_writes_3(tmp_path):
    root = fake_host(tmp_path, {'vm.dirty_background_ratio': '10'})
    run_role(root, {'vm.dirty_background_ratio': 3})
    assert read(root, '/proc/sys/vm/dirty_background_ratio') == '3'
    assert read(root, OUR_FILE).endswith('vm.dirty_background_ratio = 3\n')


def test_a_host_that_already_meets_every_marked_bound_gets_nothing_written(tmp_path):
    root = fake_host(tmp_path, {'vm.swappiness': '1', 'fs.aio-max-nr': '4194304',
                                'net.ipv4.ip_local_port_range': '1024 65535'})
    before = digest(root)
    records, output = run_role(root, {'vm.swappiness': '<=10', 'fs.aio-max-nr': '>=1048576',
                                      'net.ipv4.ip_local_port_range': '>=9000 65500'})
    assert digest(root) == before and output['changed'] is False
    assert set(r['status'] for r in records.values()) == {'ok'}


def test_a_range_written_without_a_mark_is_exact(tmp_path):
    root = fake_host(tmp_path, {'net.ipv4.ip_local_port_range': '1024 65535'})
    records, dummy = run_role(root, {'net.ipv4.ip_local_port_range': '9000 65500'})
    assert read(root, '/proc/sys/net/ipv4/ip_local_port_range') == '9000 65500'
    assert records['net.ipv4.ip_local_port_range']['status'] == 'changed'


def test_the_key_table_covers_every_key_the_roles_know():
    for key in sysctl_keys.KNOWN_KEYS:
        rule, source = profiles.key_rule(key)
        assert rule in ('minimum', 'maximum', 'exact', 'range') and source, key
    for name in profiles.PROFILE_NAMES:
        for key, (value, rule, source) in profiles.kernel_profile(name, 'Linux').items():
            table_rule = profiles.key_rule(key)[0]
            assert rule == ('exact' if table_rule == 'range' else table_rule), (name, key)
    sized = shm_sized('oracle', 64 * 1024 ** 3, 4096, '40%', hugepage_size=2097152, group_gid=54322)
    for key in sized['kernel_params']:
        assert profiles.key_rule(key)[0] is not None, key
    for workload in ('oltp', 'dss'):
        assert profiles.READ_AHEAD_RULES[workload][1]


def test_range_semantics():
    assert compare.satisfies('1024 65535', '9000 65500', profiles.user_comparison(
        'net.ipv4.ip_local_port_range', 'minimum'))
    assert not compare.satisfies('10000 65535', '9000 65500', profiles.user_comparison(
        'net.ipv4.ip_local_port_range', 'minimum'))
    assert compare.satisfies('10000 60000', '9000 65500', profiles.user_comparison(
        'net.ipv4.ip_local_port_range', 'maximum'))


def test_an_int_key_takes_up_to_int_max():
    sysctl_keys.check('kernel.panic', '2147483647')
    sysctl_keys.check('kernel.panic', '-2147483648')
    with pytest.raises(sysctl_keys.KeyValueError, match=r'takes int in -2147483648\.\.2147483647'):
        sysctl_keys.check('kernel.panic', '2147483648')


def test_unsigned_long_ends_at_two_to_the_64_minus_one():
    # proc_doulongvec_minmax: the largest unsigned long is the last value taken.
    sysctl_keys.check('kernel.shmmax', '18446744073709551615')
    with pytest.raises(sysctl_keys.KeyValueError) as caught:
        sysctl_keys.check('kernel.shmmax', '18446744073709551616')
    assert str(caught.value) == ('kernel.shmmax takes unsigned long in 0..18446744073709551615; '
                                 '18446744073709551616 is out of range')


def test_vm_nr_hugepages_takes_zero():
    sysctl_keys.check('vm.nr_hugepages', '0')  # no pool at all is a value
    with pytest.raises(sysctl_keys.KeyValueError):
        sysctl_keys.check('vm.nr_hugepages', '-1')
