# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.plans.block_queue import devices as block_devices
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import host_facts as facts
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import mountinfo
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.mounts import platform as mounts_platform
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set import procfs

# proc(5): the kernel writes space, tab, newline and backslash as \040 \011 \012 \134.
ESCAPED = (
    '36 35 98:0 / /mnt/a\\040b\\011c\\012d\\134e rw,noatime master:1 shared:7 - ext4 /dev/my\\040disk rw,errors=continue\n'
    '37 35 0:30 /sub\\040dir /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset\n'
    '38 35 8:1 / /literal\\134040 rw - xfs /dev/sda1 rw\n'
    '\n'
    'not a mountinfo line\n'
    '39 35 8:2 / /no-separator rw ext4 /dev/sda2 rw\n'
)
WEIRD = '/mnt/a b\tc\nd\\e'


def test_parse_unescapes_paths_and_reads_optional_fields():
    first, second, third = mountinfo.parse(ESCAPED)
    assert (first.mount_id, first.parent_id, first.dev, first.root) == ('36', '35', '98:0', '/')
    assert first.mount_point == WEIRD
    assert first.options == ['rw', 'noatime']
    assert first.optional == ['master:1', 'shared:7']
    assert (first.fstype, first.source, first.super_options) == ('ext4', '/dev/my disk', ['rw', 'errors=continue'])
    assert second.optional == []
    assert (second.root, second.fstype, second.super_options) == ('/sub dir', 'cgroup', ['rw', 'cpuset'])
    # An escaped backslash followed by digits stays a backslash and digits.
    assert third.mount_point == '/literal\\040'


def test_unescape_leaves_other_text_alone():
    assert mountinfo.unescape('/a\\040b\\') == '/a b\\'
    assert mountinfo.unescape('/plain') == '/plain'
    assert mountinfo.parse(None) == [] and mountinfo.parse('') == []


def test_every_caller_sees_the_same_paths():
    assert block_devices.parse_mountinfo(ESCAPED)[0] == (WEIRD, '98:0', '/dev/my disk')
    assert facts.parse_mountinfo(ESCAPED)[0] == {
        'mount_point': WEIRD, 'dev': '98:0', 'options': ['rw', 'noatime'], 'fstype': 'ext4',
        'source': '/dev/my disk', 'super_options': ['rw', 'errors=continue']}
    live = mounts_platform.parse_mountinfo(ESCAPED)[WEIRD]
    assert (live.fstype, live.source, live.options) == ('ext4', '/dev/my disk', ['rw', 'noatime', 'errors=continue'])
    assert procfs.parse_mountinfo_cgroups(ESCAPED)['cpuset'] == ('/sys/fs/cgroup/cpuset', '/sub dir')
    assert len(mounts_platform.parse_mountinfo(ESCAPED)) == 3
