# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import PathError

FOLDERS = ('/etc/x.d', '/run/x.d', '/usr/local/lib/x.d', '/usr/lib/x.d')


def _put(root, path, text='k = v\n'):
    local = confd.under_root(root, path)
    if not os.path.isdir(os.path.dirname(local)):
        os.makedirs(os.path.dirname(local))
    with open(local, 'w') as handle:
        handle.write(text)
    return local


def test_an_earlier_folder_masks_the_same_name_and_files_sort_by_name(tmp_path):
    root = str(tmp_path)
    _put(root, '/usr/lib/x.d/10-a.conf')
    _put(root, '/etc/x.d/10-a.conf')
    _put(root, '/usr/local/lib/x.d/05-b.conf')
    _put(root, '/run/x.d/99-c.conf')
    _put(root, '/usr/lib/x.d/50-d.txt')
    found = confd.search(root, FOLDERS)
    assert [shown for shown, _local in found] == ['/usr/local/lib/x.d/05-b.conf', '/etc/x.d/10-a.conf', '/run/x.d/99-c.conf']
    assert found[1][1] == os.path.join(root, 'etc/x.d/10-a.conf')


def test_extra_counts_before_it_exists_and_a_dev_null_link_masks(tmp_path):
    root = str(tmp_path)
    _put(root, '/usr/lib/x.d/20-vendor.conf')
    os.makedirs(confd.under_root(root, '/etc/x.d'))
    os.symlink('/dev/null', confd.under_root(root, '/etc/x.d/20-vendor.conf'))
    found = confd.search(root, FOLDERS, extra='/etc/x.d/90-ours.conf')
    assert [shown for shown, _local in found] == ['/etc/x.d/20-vendor.conf', '/etc/x.d/90-ours.conf']
    assert [confd.is_masked(local) for _shown, local in found] == [True, False]
    assert confd.search(root, FOLDERS, extra='/elsewhere/90-ours.conf')[0][0] == '/etc/x.d/20-vendor.conf'


def test_under_root_is_a_lexical_join():
    assert confd.under_root('/srv/root', '/etc/x.d') == '/srv/root/etc/x.d'
    assert confd.under_root(None, '/etc/x.d') == '/etc/x.d'
    assert confd.under_root('/', 'etc/x.d') == '/etc/x.d'


def test_texts_at_boot_reads_every_file_but_ours_which_holds_the_new_text(tmp_path):
    os.makedirs(str(tmp_path / 'etc' / 'sysctl.d'))
    (tmp_path / 'etc' / 'sysctl.d' / '10-a.conf').write_text(u'vm.swappiness = 10\n')
    (tmp_path / 'etc' / 'sysctl.d' / '90-ours.conf').write_text(u'old\n')
    files = confd.search(str(tmp_path), ['/etc/sysctl.d'], extra='/etc/sysctl.d/95-new.conf')
    assert confd.texts_at_boot(str(tmp_path), files, '/etc/sysctl.d/90-ours.conf', u'new\n') == [
        ('/etc/sysctl.d/10-a.conf', u'vm.swappiness = 10\n'),
        ('/etc/sysctl.d/90-ours.conf', u'new\n'),
        ('/etc/sysctl.d/95-new.conf', u''),          # not written yet: empty
    ]
    # our file with no text yet reads as empty too
    assert confd.texts_at_boot(str(tmp_path), files[:2], '/etc/sysctl.d/90-ours.conf', None)[1] == (
        '/etc/sysctl.d/90-ours.conf', u'')


def test_texts_at_boot_refuses_a_link_out_of_root(tmp_path):
    root = tmp_path / 'root'
    os.makedirs(str(root / 'etc' / 'sysctl.d'))
    (tmp_path / 'outside.conf').write_text(u'kernel.secret = 1\n')
    os.symlink('../../../outside.conf', str(root / 'etc' / 'sysctl.d' / '20-out.conf'))
    files = confd.search(str(root), ['/etc/sysctl.d'])
    with pytest.raises(PathError, match='20-out.conf'):
        confd.texts_at_boot(str(root), files, '/etc/sysctl.d/90-ours.conf', u'new\n')
