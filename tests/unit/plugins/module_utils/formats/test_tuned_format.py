# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TuneD's profile files and its merge of included profiles, as TuneD reads them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import tuned_devices


def test_parse_comments_continuations_duplicates_and_case():
    text = ('# header\n; also a comment\n[main]\nsummary = Oracle  # inline\ninclude=a, b;c\n'
            '[sysctl]\nKernel.X = 1\nkernel.y=a#b\nkernel.y = 2\nnet.z = 1\n  2\n[main]\ndescription=d\n')
    units = tuned.parse(text)
    assert units['main'] == {'summary': 'Oracle', 'include': 'a, b;c', 'description': 'd'}
    # case kept; a # without whitespace before it is part of the value; later duplicates win
    assert units['sysctl'] == {'Kernel.X': '1', 'kernel.y': '2', 'net.z': '1\n2'}
    assert tuned.include_names(units['main']['include']) == ['a', 'b', 'c']


@pytest.mark.parametrize('text, message', [
    ('x=1\n', "t line 1: 'x=1' comes before any [section]"),
    ('[main]\njunk\n', "t line 2: 'junk' is neither a [section] nor option = value"),
])
def test_parse_refuses_what_tuned_refuses(text, message):
    with pytest.raises(tuned.TunedError, match=message.replace('[', r'\[').replace(']', r'\]')):
        tuned.parse(text, 't')


def test_active_profile_names_and_main_conf():
    assert tuned.profile_names('oracle  my-db\nbad/name x.y\n') == ['oracle', 'my-db', 'x.y']
    conf = tuned.parse_main_conf('# c\ndaemon = 1\nreapply_sysctl = 0\nprofile_dirs = /usr/lib/tuned,/opt/p\n')
    assert tuned.flag(conf['reapply_sysctl']) is False and tuned.flag(None) is True and tuned.flag('yes') is True
    assert tuned.profile_dirs(conf) == ('/usr/lib/tuned', '/opt/p')
    assert tuned.profile_dirs({}) == tuned.PROFILE_DIRS


def locator(files):
    def locate(name, skip):
        found = '' if name.startswith('-') else None
        for folder in ('/etc/tuned', '/usr/lib/tuned'):
            path = '%s/%s/tuned.conf' % (folder, name.lstrip('-'))
            if path in skip:
                found = ''
            elif path in files:
                return path, files[path]
        return found
    return locate


def options(profile, unit_name):
    """{option: (value, origin as text)} of the applying unit ``unit_name``."""
    unit = [unit for unit in profile.units if unit.name == unit_name][0]
    return dict((key, (value, str(origin))) for key, (value, origin) in unit.options.items())


def test_includes_first_then_the_including_profile_and_replace():
    files = {'/usr/lib/tuned/base/tuned.conf': '[sysctl]\na=1\nb=1\n[disk]\nreadahead=100\nelevator=x\n',
             '/usr/lib/tuned/mid/tuned.conf': '[main]\ninclude=base\n[sysctl]\nb=2\n',
             '/etc/tuned/top/tuned.conf': '[main]\ninclude=mid\n[disk]\nreplace=1\nreadahead=300\n'}
    profile = tuned.load(['top'], locator(files))
    assert profile.problems == []
    assert options(profile, 'sysctl') == {'a': ('1', 'TuneD profile base (/usr/lib/tuned/base/tuned.conf)'),
                                          'b': ('2', 'TuneD profile mid (/usr/lib/tuned/mid/tuned.conf)')}
    assert sorted(options(profile, 'disk')) == ['readahead']   # replace=1 dropped base's elevator


def test_merge_drop_type_enabled_and_devices_as_merger_does():
    files = {'/usr/lib/tuned/base/tuned.conf': '[sysctl]\na=1\nb=1\n[disk]\ndevices=sda\nreadahead=100\n'
                                               '[mine]\ntype=sysctl\nc=3\n',
             '/etc/tuned/top/tuned.conf': '[main]\ninclude=base\n[sysctl]\ndrop=a\nb=2\n[disk]\nelevator=none\n'
                                          '[mine]\nenabled=yes\n'}
    profile = tuned.load(['top'], locator(files))
    assert sorted(options(profile, 'sysctl')) == ['b']
    # devices is always the newer unit's (its default: every device); the newer [mine] has
    # type mine (its name) and "yes" is not true for a unit (unit.py): skipped
    assert profile.disk('vdb', 'readahead')[0] == '100'
    assert [name for name, dummy in profile.skipped()] == ['mine']
    assert dict(profile.sysctl()) == {'b': ('2', profile.sysctl()['b'][1])}


def test_several_active_profiles_the_later_wins():
    files = {'/usr/lib/tuned/a/tuned.conf': '[sysctl]\nx=1\n', '/usr/lib/tuned/b/tuned.conf': '[sysctl]\nx=2\n'}
    profile = tuned.load(['a', 'b'], locator(files))
    assert profile.sysctl()['x'][0] == '2' and profile.sysctl()['x'][1].profile == 'b'


def test_a_cycle_is_skipped_and_a_missing_profile_refuses_all():
    # locator.py: a file already loaded is skipped, as is a "-name" that no folder has
    cycle = {'/etc/tuned/a/tuned.conf': '[main]\ninclude=b, -gone\n[sysctl]\nx=a\n',
             '/etc/tuned/b/tuned.conf': '[main]\ninclude=a\n[sysctl]\nx=b\ny=b\n'}
    profile = tuned.load(['a'], locator(cycle))
    assert profile.problems == [] and dict((k, v) for k, (v, o) in profile.sysctl().items()) == {'x': 'a', 'y': 'b'}
    assert tuned.load(['gone'], locator({})).problems == [
        'TuneD cannot load the profile gone: no profile gone in the profile folders']
    # /etc/tuned/a including a: the one in /usr/lib
    extend = {'/etc/tuned/a/tuned.conf': '[main]\ninclude=a\n[sysctl]\nx=2\n', '/usr/lib/tuned/a/tuned.conf': '[sysctl]\nx=1\ny=1\n'}
    profile = tuned.load(['a'], locator(extend))
    assert profile.problems == [] and profile.sysctl()['x'][0] == '2' and profile.sysctl()['y'][0] == '1'


def test_an_include_the_collection_cannot_evaluate_is_reported():
    files = {'/etc/tuned/o/tuned.conf': '[main]\ninclude=${f:virt_check:virtual-guest:throughput-performance}\n'}
    profile = tuned.load(['o'], locator(files))
    assert profile.units == [] and profile.problems[0].startswith("the collection cannot read the profile o:") and \
        "${f:virt_check} is a TuneD function the collection does not evaluate" in \
        profile.problems[0]


@pytest.mark.parametrize('raw, current, written', [
    ('5', '9', '5'), ('>5', '3', '5'), ('>5', '9', None), ('<5', '9', '5'), ('<5', '3', None), ('>5', None, '5'),
    ('>x', '3', None),
])
def test_assignment_modifiers(raw, current, written):
    assert tuned.modified(raw, current) == written


@pytest.mark.parametrize('devices, device, selected', [
    ('*', 'sda', True), ('sda,sdb', 'sdb', True), ('sda', 'nvme0n1', False), ('nvme*', 'nvme0n1', True),
    ('!sda', 'sda', False), ('!sda', 'sdb', True), ('', 'sdc', True),
    # device_matcher.py: blanks separate rules too; a negative rule anywhere excludes
    ('sd* !sda', 'sda', False), ('sd* !sda', 'sdb', True), ('vd*, !vdb', 'vdb', False), ('vda,!vdb', 'vdc', False),
])
def test_devices_selection(devices, device, selected):
    assert tuned_devices.selects(devices, device) is selected


def test_the_first_disk_unit_in_applying_order_takes_the_device():
    files = {'/etc/tuned/p/tuned.conf': '[disk]\nreadahead=100\n[fast]\ntype=disk\ndevices=vdb\npriority=-5\n'
                                        'elevator=none\n'}
    profile = tuned.load(['p'], locator(files))
    # [fast] (priority -5) applies first and takes vdb: [disk]'s readahead never reaches it
    assert profile.disk('vdb', 'readahead') is None and profile.disk('vdb', 'elevator')[0] == 'none'
    assert profile.disk('vda', 'readahead')[0] == '100'


def test_profile_values_and_vm_options():
    profile = tuned.load(['p'], locator({'/etc/tuned/p/tuned.conf': (
        '[variables]\nn=7\n[sysctl]\nvm.a=${n}\nvm.b=${f:x}\n[vm]\ndirty_bytes=10%\ntransparent_hugepage=never\n'
        'transparent_hugepage.defrag=madvise\n[sysfs]\n/sys/kernel/mm/ksm/run=0\n')}))
    assert profile.value('${n} 8') == ('7 8', True) and profile.value('${f:x}') == ('${f:x}', False)
    sysctl = dict((k, v) for k, (v, o) in profile.sysctl().items())
    assert sysctl == {'vm.a': '${n}', 'vm.b': '${f:x}', 'vm.dirty_ratio': '10'}
    assert profile.sysfs_value(tuned.THP_ENABLED)[0] == 'never'
    assert profile.sysfs_value(tuned.THP_DEFRAG)[0] == 'madvise'
    assert profile.sysfs_value('/sys/kernel/mm/ksm/run')[0] == '0'
    assert profile.sysfs_value('/sys/kernel/mm/other') is None
    # TuneD before 2.25: its vm plugin has no dirty_* options and drops them
    profile.version = (2, 20)
    assert 'vm.dirty_ratio' not in profile.sysctl()


def test_thp_mode_other_than_tuned_writes_is_no_write():
    profile = tuned.load(['p'], locator({'/etc/tuned/p/tuned.conf': '[vm]\ntransparent_hugepages=sometimes\n'}))
    assert profile.sysfs_value(tuned.THP_ENABLED) is None


@pytest.mark.parametrize('readahead, written', [
    ('abc', None),        # TuneD refuses a readahead that is no number and writes nothing
    ('8192 s', '4096'),   # 512-byte sectors
    ('300', '300'),
])
def test_disk_readahead_as_tuned_writes_it(readahead, written):
    profile = tuned.load(['p'], locator({'/etc/tuned/p/tuned.conf': '[disk]\nreadahead=%s\n' % readahead}))
    found = profile.block_queue('sda', 'read_ahead_kb', current='128')
    assert (found[0] if found else None) == written
