# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""engine/sysfs: the one read and write of kernel pseudo-files, and /proc read through it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import sysfs
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.processor_set.procfs import CpusetV1, ProcTable


def test_read_text_strips_unless_asked_not_to(tmp_path):
    path = tmp_path / 'value'
    path.write_bytes(b'  mq-deadline \n')
    assert sysfs.read_text(str(path)) == 'mq-deadline'
    assert sysfs.read_text(str(path), strip=False) == '  mq-deadline \n'


def test_read_text_decodes_any_bytes(tmp_path):
    path = tmp_path / 'cmdline'
    path.write_bytes(b'ora_pmon_\xff\x00')
    assert sysfs.read_text(str(path), strip=False) == u'ora_pmon_\ufffd\x00'


def test_read_text_of_a_missing_file_is_none_or_raises_when_strict(tmp_path):
    assert sysfs.read_text(str(tmp_path / 'absent')) is None
    with pytest.raises(OSError) as error:
        sysfs.read_text(str(tmp_path / 'absent'), strict=True)
    assert error.value.errno == errno.ENOENT


def test_write_text_replaces_the_content_in_one_write(tmp_path):
    path = tmp_path / 'cpuset.cpus'
    path.write_text(u'0-15\n')
    sysfs.write_text(str(path), '4')
    assert path.read_bytes() == b'4'
    with pytest.raises(OSError):
        sysfs.write_text(str(tmp_path / 'absent'), '1')   # a pseudo-file is never created


def test_proc_table_keeps_cmdline_as_the_process_wrote_it(tmp_path):
    os.makedirs(str(tmp_path / '42'))
    # postgres pads its retitled argv with spaces; non-UTF-8 bytes must not stop the read
    (tmp_path / '42' / 'cmdline').write_bytes(b'postgres: checkpointer   ')
    (tmp_path / '42' / 'status').write_bytes(b'Name:\tpostgres\xfe\nUid:\t110\t110\t110\t110\n')
    table = ProcTable(str(tmp_path))
    assert table.pids() == [42]
    assert table.cmdline(42) == ['postgres: checkpointer   ']
    assert table.status(42)['Uid'].split()[0] == '110'
    assert table.cmdline(43) == [] and table.status(43) is None


def test_cpuset_values_are_read_and_written_through_sysfs(tmp_path):
    mount = tmp_path / 'cpuset'
    os.makedirs(str(mount / 'dbhost-ora'))
    for name, text in (('cpuset.cpus', u'0-7\n'), ('cpuset.mems', u'0\n')):
        (mount / name).write_text(text)
    for name in ('cpuset.cpus', 'cpuset.mems', 'cpuset.memory_migrate', 'cgroup.procs'):
        (mount / 'dbhost-ora' / name).write_text(u'\n')
    cpuset = CpusetV1(str(mount), '/', 'ora')
    cpuset.ensure([2, 3], [0])
    assert (mount / 'dbhost-ora' / 'cpuset.cpus').read_text() == u'2-3'
    assert (mount / 'dbhost-ora' / 'cpuset.memory_migrate').read_text() == u'1'
    assert cpuset.state() == {'cpus': [2, 3], 'mems': [0], 'memory_migrate': '1'}
    assert cpuset.parent_allows([2, 9], [0, 1]) == ([9], [1])


def test_read_raw_absent_is_none_other_errors_are_raised(tmp_path, monkeypatch):
    assert sysfs.read_raw(str(tmp_path / 'absent')) is None
    assert sysfs.read_raw(str(tmp_path / 'absent' / 'below')) is None
    with pytest.raises(sysfs.PseudoFileError, match=r'is not a regular file \(a folder\)'):
        sysfs.read_raw(str(tmp_path))  # a folder is not "absent"
    (tmp_path / 'attr').write_text(u'x\n')

    def refuse(path, flags):
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), path)
    monkeypatch.setattr(sysfs.os, 'open', refuse)
    with pytest.raises(OSError) as raised:  # not permitted is not "absent" either
        sysfs.read_raw(str(tmp_path / 'attr'))
    assert raised.value.errno == errno.EACCES
