# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A service's Limit*= resolved as systemd does (plans/service_limits.py): the unit file,
its drop-ins in order across the folders, then the manager defaults (system.conf and
system.conf.d), then the running manager's built-in default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import service_limits
from ansible_collections.dbhost.tuning.tests.unit.helpers import put

UNIT = 'oracle-db.service'
M = 1024 * 1024


def _resolve(root, name='LimitMEMLOCK', built_in=None):
    texts = [(shown, open(local).read()) for shown, local in systemd.unit_files(root, UNIT)]
    return service_limits.resolve(texts, service_limits.manager_texts(root), name, built_in)


def _mask(root, path):
    local = os.path.join(root, path.lstrip('/'))
    os.makedirs(os.path.dirname(local), exist_ok=True)
    os.symlink('/dev/null', local)


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path)
    put(base, '/lib/systemd/system/oracle-db.service', '[Service]\nExecStart=/bin/true\nLimitMEMLOCK=1M\n')
    put(base, '/etc/systemd/system.conf', '[Manager]\n#DefaultLimitMEMLOCK=\n')
    return base


def test_the_unit_file_counts_first(root):
    source = _resolve(root)
    assert (source.pair, source.origin, source.path) == ((M, M), 'unit', '/lib/systemd/system/oracle-db.service')


def test_an_etc_unit_file_replaces_the_vendor_one(root):
    put(root, '/etc/systemd/system/oracle-db.service', '[Service]\nExecStart=/bin/true\n')
    put(root, '/etc/systemd/system.conf.d/10-memlock.conf', '[Manager]\nDefaultLimitMEMLOCK=2M\n')
    source = _resolve(root)
    assert (source.pair, source.origin) == ((2 * M, 2 * M), 'manager')


def test_drop_ins_apply_by_name_across_folders(root):
    put(root, '/usr/lib/systemd/system/oracle-db.service.d/30-vendor.conf', '[Service]\nLimitMEMLOCK=30M\n')
    put(root, '/run/systemd/system/oracle-db.service.d/20-run.conf', '[Service]\nLimitMEMLOCK=20M\n')
    put(root, '/etc/systemd/system/oracle-db.service.d/10-etc.conf', '[Service]\nLimitMEMLOCK=10M\n')
    source = _resolve(root)
    assert (source.pair, source.path) == ((30 * M, 30 * M), '/usr/lib/systemd/system/oracle-db.service.d/30-vendor.conf')
    # the same name in /etc replaces the vendor's file; a link to /dev/null masks it
    put(root, '/etc/systemd/system/oracle-db.service.d/30-vendor.conf', '[Service]\nLimitMEMLOCK=5M:7M\n')
    assert _resolve(root).pair == (5 * M, 7 * M)
    os.unlink(os.path.join(root, 'etc/systemd/system/oracle-db.service.d/30-vendor.conf'))
    _mask(root, '/etc/systemd/system/oracle-db.service.d/30-vendor.conf')
    assert _resolve(root).pair == (20 * M, 20 * M)


def test_type_and_prefix_drop_ins_count(root):
    put(root, '/etc/systemd/system/service.d/10-all.conf', '[Service]\nLimitMEMLOCK=infinity\n')
    assert _resolve(root).pair == ('infinity', 'infinity')
    put(root, '/etc/systemd/system/oracle-.service.d/20-prefix.conf', '[Service]\nLimitMEMLOCK=3M\n')
    assert _resolve(root).pair == (3 * M, 3 * M)


def test_values_systemd_ignores_leave_the_earlier_one(root):
    put(root, '/etc/systemd/system/oracle-db.service.d/10-bad.conf',
        '[Service]\nLimitMEMLOCK=4M\nLimitMEMLOCK=lots\nLimitMEMLOCK=8M:4M\n[Unit]\nLimitMEMLOCK=9M\n')
    assert _resolve(root).pair == (4 * M, 4 * M)


def test_manager_defaults_in_order(root):
    put(root, '/etc/systemd/system/oracle-db.service', '[Service]\nExecStart=/bin/true\n')
    put(root, '/etc/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=1M\n')
    assert _resolve(root).pair == (M, M)
    put(root, '/usr/lib/systemd/system.conf.d/20-vendor.conf', '[Manager]\nDefaultLimitMEMLOCK=infinity\n')
    put(root, '/run/systemd/system.conf.d/10-run.conf', '[Manager]\nDefaultLimitMEMLOCK=2M\n')
    source = _resolve(root)
    assert (source.pair, source.path) == (('infinity', 'infinity'), '/usr/lib/systemd/system.conf.d/20-vendor.conf')
    assert 'DefaultLimitMEMLOCK=infinity in /usr/lib/systemd/system.conf.d/20-vendor.conf' in source.describe(
        'LimitMEMLOCK')
    _mask(root, '/etc/systemd/system.conf.d/20-vendor.conf')
    assert _resolve(root).pair == (2 * M, 2 * M)


def test_the_main_file_is_the_first_found(root):
    put(root, '/etc/systemd/system/oracle-db.service', '[Service]\nExecStart=/bin/true\n')
    os.unlink(os.path.join(root, 'etc/systemd/system.conf'))
    put(root, '/usr/lib/systemd/system.conf', '[Manager]\nDefaultLimitMEMLOCK=6M\n')
    assert _resolve(root).pair == (6 * M, 6 * M)
    put(root, '/etc/systemd/system.conf', '[Manager]\n')
    assert _resolve(root).pair is None


def test_built_in_default_where_no_file_says(root):
    put(root, '/etc/systemd/system/oracle-db.service', '[Service]\nExecStart=/bin/true\n')
    source = _resolve(root, built_in=(8 * M, 8 * M))
    assert (source.pair, source.origin) == ((8 * M, 8 * M), 'built-in')
    assert _resolve(root).origin is None


@pytest.mark.parametrize('text, want, have, written', [
    ('60G', (60 << 30, 60 << 30), None, '60G'),
    ('60G', (60 << 30, 60 << 30), (M, 'infinity'), '%d:infinity' % (60 << 30)),
    ('60G', (60 << 30, 60 << 30), (M, M), '60G'),
    ('1M:2M', (M, 2 * M), (3 * M, M), str(3 * M)),
    ('1M:2M', (M, 2 * M), (M // 2, 5 * M), '%d:%d' % (M, 5 * M)),
])
def test_to_write_never_lowers_a_side(text, want, have, written):
    assert service_limits.to_write(text, want, have) == written


def test_manager_defaults_from_systemctl_show():
    calls = []

    def runner(argv):
        calls.append(argv)
        return 0, 'DefaultLimitMEMLOCK=infinity\nDefaultLimitMEMLOCKSoft=8388608\n', ''
    assert service_limits.manager_defaults(runner, ['LimitMEMLOCK']) == {'LimitMEMLOCK': (8388608, 'infinity')}
    assert calls == [['systemctl', 'show', '-p', 'DefaultLimitMEMLOCK', '-p', 'DefaultLimitMEMLOCKSoft']]
    assert service_limits.manager_defaults(lambda argv: (1, '', 'no bus'), ['LimitMEMLOCK']) == {}
