# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kernel command line: parsed as the kernel reads it, and the next boot's line found
in the boot loader's configuration under root."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline
from ansible_collections.dbhost.tuning.tests.unit.helpers import put


@pytest.mark.parametrize('text, pools', [
    ('ro quiet hugepages=512', {2048: {'total': 512, 'nodes': None}}),
    ('hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=1024',
     {1048576: {'total': 4, 'nodes': None}, 2048: {'total': 1024, 'nodes': None}}),
    # hugepages= before any hugepagesz= is the default size, which default_hugepagesz= sets
    ('default_hugepagesz=1G hugepages=8', {1048576: {'total': 8, 'nodes': None}}),
    ('hugepages=16 default_hugepagesz=1G', {1048576: {'total': 16, 'nodes': None}}),
    # per NUMA node
    ('hugepagesz=1G hugepages=0:2,1:3', {1048576: {'total': 5, 'nodes': {0: 2, 1: 3}}}),
    # a size given twice keeps the first; - and _ alike; quotes group; -- ends the kernel's part
    ('hugepagesz=2M hugepages=10 hugepagesz=2M hugepages=20', {2048: {'total': 10, 'nodes': None}}),
    ('hugepagesz=2097152 hugepages=3 "foo=a b" -- hugepages=99', {2048: {'total': 3, 'nodes': None}}),
    ('ro root=/dev/vda', {}),
])
def test_pools_as_the_kernel_reads_them(text, pools):
    assert cmdline.BootLine(text, 'test').pools() == pools


def test_transparent_hugepage_last_one_counts():
    assert cmdline.BootLine('transparent_hugepage=always transparent_hugepage=never', 't').thp() == 'never'
    assert cmdline.BootLine('transparent-hugepage=madvise', 't').thp() == 'madvise'
    assert cmdline.BootLine('quiet', 't').thp() is None


def test_a_pool_per_node_and_the_default_size():
    line = cmdline.BootLine('default_hugepagesz=2M hugepagesz=1G hugepages=0:2,1:3 hugepages=7', 't')
    assert line.pool(1048576) == 5 and line.pool(1048576, node=1) == 3 and line.pool(1048576, node=2) is None
    assert line.pool(2048) is None   # the second hugepages= follows hugepagesz=1G: ignored
    assert line.default_size_kb() == 2048


@pytest.mark.parametrize('text', ['hugepages=many', 'hugepagesz=huge hugepages=1', 'hugepages=0:x'])
def test_a_value_the_kernel_refuses_raises(text):
    with pytest.raises(cmdline.CmdlineError):
        cmdline.BootLine(text, 't').pools()


def test_grub_default_and_grub_d_are_sourced_in_order(tmp_path):
    root = str(tmp_path)
    put(root, '/etc/default/grub', '# comment\nGRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\n'
                                   'GRUB_CMDLINE_LINUX="hugepages=100"\n')
    put(root, '/etc/default/grub.d/50-db.cfg', 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX transparent_hugepage=never"\n')
    put(root, '/etc/default/grub.d/90-more.cfg', "GRUB_CMDLINE_LINUX_DEFAULT='${GRUB_CMDLINE_LINUX_DEFAULT} splash'\n")
    put(root, '/proc/cmdline', 'BOOT_IMAGE=/vmlinuz ro hugepages=5\n')
    line = cmdline.next_boot(root)
    assert line.text == 'hugepages=100 transparent_hugepage=never quiet splash'
    assert line.source.startswith('/etc/default/grub and /etc/default/grub.d/*.cfg')
    assert line.pool(2048) == 100 and line.thp() == 'never'
    assert cmdline.running(root).pool(2048) == 5


def test_etc_kernel_cmdline_comes_first_and_proc_cmdline_last(tmp_path):
    root = str(tmp_path)
    put(root, '/proc/cmdline', 'ro hugepages=5\n')
    assert cmdline.next_boot(root).source == '/proc/cmdline' and cmdline.next_boot(root).pool(2048) == 5
    put(root, '/etc/default/grub', 'GRUB_CMDLINE_LINUX="hugepages=100"\n')
    assert cmdline.next_boot(root).pool(2048) == 100
    put(root, '/etc/kernel/cmdline', 'root=/dev/vda hugepages=7\n')
    assert cmdline.next_boot(root).source == '/etc/kernel/cmdline' and cmdline.next_boot(root).pool(2048) == 7
    assert cmdline.label(cmdline.next_boot(root)) == 'the kernel command line (/etc/kernel/cmdline)'


def test_nothing_to_read_is_none(tmp_path):
    assert cmdline.next_boot(str(tmp_path)) is None


def test_quotes_group_and_an_empty_pair_is_an_empty_word():
    # As the kernel's next_arg reads them: the quotes go, the blank inside stays, "" is a word.
    assert cmdline.split('ro "foo=a b" "" quiet') == ['ro', 'foo=a b', '', 'quiet']
    assert cmdline.params('a "" b=1') == [('a', None), ('', None), ('b', '1')]


@pytest.mark.parametrize('text, isolcpus, nohz_full', [
    ('ro isolcpus=2-5', ([2, 3, 4, 5], ('domain',)), None),
    ('isolcpus=domain,managed_irq,2-5,8 nohz_full=2-5', ([2, 3, 4, 5, 8], ('domain', 'managed_irq')), [2, 3, 4, 5]),
    ('isolcpus=nohz,1,3', ([1, 3], ('nohz',)), None),
    ('isolcpus=0-7:2', ([0, 2, 4, 6], ('domain',)), None),
    # the last one counts
    ('isolcpus=1 isolcpus=managed_irq,6-7 nohz-full=4', ([6, 7], ('managed_irq',)), [4]),
    ('quiet', None, None),
])
def test_isolation_as_the_kernel_reads_it(text, isolcpus, nohz_full):
    found = cmdline.BootLine(text, 't').isolation()
    assert found['isolcpus'] == isolcpus
    assert found['nohz_full'] == (None if nohz_full is None else (nohz_full, ()))


@pytest.mark.parametrize('text, message', [
    ('isolcpus=fast,1', "isolcpus=fast,1: unknown flag 'fast'"),
    ('isolcpus=domain', 'isolcpus=domain names no CPU'),
    ('nohz_full=3-1', 'nohz_full=3-1: invalid CPU range'),
])
def test_isolation_the_kernel_refuses(text, message):
    with pytest.raises(cmdline.CmdlineError, match=message.replace('(', r'\(')):
        cmdline.BootLine(text, 't').isolation()


@pytest.mark.parametrize('text, kb', [('2M', 2048), ('1G', 1048576), ('2097152', 2048), ('0x200000', 2048),
                                      ('02M', 2048), ('2m', 2048), ('1g', 1048576), ('2Mfoo', 2048)])
def test_size_kb_as_memparse_reads_it(text, kb):
    assert cmdline.size_kb(text) == kb


@pytest.mark.parametrize('text', ['', 'M', 'lots', '-2M'])
def test_size_kb_refuses_what_is_no_size(text):
    with pytest.raises(cmdline.CmdlineError):
        cmdline.size_kb(text)
