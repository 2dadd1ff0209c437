# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemd unit / drop-in parsing, rendering and precedence."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import systemd

SAMPLES = [
    '',
    '[Service]\nLimitMEMLOCK=infinity\n',
    '# keep me\n; and me\n\n[Unit]\nDescription=PostgreSQL  database\n\n[Service]\n'
    'ExecStart=/usr/bin/postgres \\\n  -D /var/lib/pg \\\n  # inner comment\n  -p 5432\n'
    'Environment="A=1" "B=2"\n  LimitNOFILE = 65536  \n[Install]\nWantedBy=multi-user.target',
    '[Service]\r\nLimitNPROC=4096\r\n',
    'garbage before a section\n[Service]\nnot an assignment\n',
]


@pytest.mark.parametrize('text', SAMPLES)
def test_parse_round_trip_is_byte_identical(text):
    assert ''.join(part for line in systemd.parse(text) for part in line.raw) == text


@pytest.mark.parametrize('text', SAMPLES)
def test_render_without_changes_is_byte_identical(text):
    assert systemd.render(text, {}) == text


def test_read_keeps_every_value_and_joins_continuations():
    values = systemd.read(SAMPLES[2])
    assert values['Unit']['Description'] == ['PostgreSQL  database']
    assert values['Service']['ExecStart'] == ['/usr/bin/postgres    -D /var/lib/pg    -p 5432']
    assert values['Service']['LimitNOFILE'] == ['65536']
    assert values['Install']['WantedBy'] == ['multi-user.target']
    assert systemd.last_value(SAMPLES[2], 'Service', 'LimitNOFILE') == '65536'
    assert systemd.last_value(SAMPLES[2], 'Service', 'LimitCORE') is None


def test_assignment_before_any_section_is_not_a_setting():
    assert systemd.read('Foo=bar\n[Service]\nA=1\n') == {'Service': {'A': ['1']}}


def test_render_replaces_last_keeps_spacing_and_drops_earlier_duplicates():
    text = '# ours\n[Service]\nLimitMEMLOCK=1\n# between\n  LimitMEMLOCK = 2\nUser=pg\n'
    out = systemd.render(text, {'Service': {'LimitMEMLOCK': 'infinity'}})
    assert out == '# ours\n[Service]\n# between\n  LimitMEMLOCK = infinity\nUser=pg\n'


def test_render_adds_key_at_end_of_section_block_before_blank_lines():
    text = '[Service]\nUser=pg\n\n[Install]\nWantedBy=x\n'
    out = systemd.render(text, {'Service': {'LimitNOFILE': '65536', 'LimitMEMLOCK': 'infinity'}})
    assert out == '[Service]\nUser=pg\nLimitMEMLOCK=infinity\nLimitNOFILE=65536\n\n[Install]\nWantedBy=x\n'


def test_render_adds_key_after_a_last_line_without_newline():
    assert systemd.render('[Service]\nUser=pg', {'Service': {'LimitNOFILE': '65536'}}) == \
        '[Service]\nUser=pg\nLimitNOFILE=65536\n'


def test_render_adds_missing_section_and_header_for_new_file():
    assert systemd.render(None, {'Service': {'LimitMEMLOCK': 'infinity'}}, header='# managed') == \
        '# managed\n[Service]\nLimitMEMLOCK=infinity\n'
    assert systemd.render('[Unit]\nA=1', {'Service': {'B': '2'}}) == '[Unit]\nA=1\n\n[Service]\nB=2\n'
    assert systemd.render(None, {'Service': {'B': None}}) is None


def test_render_list_value_and_removal():
    text = '[Service]\nCPUAffinity=0\nNice=5\n'
    out = systemd.render(text, {'Service': {'CPUAffinity': ['', '2 3'], 'Nice': None}})
    assert out == '[Service]\nCPUAffinity=\nCPUAffinity=2 3\n'
    assert systemd.read(out)['Service']['CPUAffinity'] == ['', '2 3']


def test_render_replaces_continued_line_whole():
    text = '[Service]\nExecStart=/bin/a \\\n  -b\nUser=x\n'
    assert systemd.render(text, {'Service': {'ExecStart': '/bin/c'}}) == '[Service]\nExecStart=/bin/c\nUser=x\n'


def test_render_is_idempotent():
    text = '# c\n[Service]\nLimitMEMLOCK=8M\n'
    once = systemd.render(text, {'Service': {'LimitMEMLOCK': 'infinity', 'LimitNOFILE': '1024'}})
    assert systemd.render(once, {'Service': {'LimitMEMLOCK': 'infinity', 'LimitNOFILE': '1024'}}) == once


@pytest.mark.parametrize('name, expected', [
    ('postgresql', 'postgresql.service'),
    ('postgresql@15-main.service', 'postgresql@15-main.service'),
    ('oracle-db.service', 'oracle-db.service'),
    ('dbs.slice', 'dbs.slice'),
])
def test_unit_name(name, expected):
    assert systemd.unit_name(name) == expected


@pytest.mark.parametrize('name', ['', '../etc/passwd', 'a/b', 'a b', 'x..service'])
def test_unit_name_refused(name):
    with pytest.raises(systemd.UnitNameError):
        systemd.unit_name(name)


def test_dropin_dir_names():
    assert systemd.dropin_dir_names('foo-bar-baz.service') == [
        'foo-bar-baz.service.d', 'foo-bar-.service.d', 'foo-.service.d', 'service.d']
    assert systemd.dropin_dir_names('postgresql@15-main.service') == [
        'postgresql@15-main.service.d', 'postgresql@.service.d', 'postgresql@15-.service.d', 'service.d']


def _write(root, path, text):
    local = os.path.join(str(root), path.lstrip('/'))
    if not os.path.isdir(os.path.dirname(local)):
        os.makedirs(os.path.dirname(local))
    with open(local, 'w') as handle:
        handle.write(text)
    return local


def test_unit_files_order_masking_and_effective_value(tmp_path):
    _write(tmp_path, '/lib/systemd/system/pg.service', '[Service]\nLimitMEMLOCK=64K\n')
    _write(tmp_path, '/lib/systemd/system/pg.service.d/50-vendor.conf', '[Service]\nLimitMEMLOCK=1M\n')
    # Same name in /etc masks the vendor's drop-in.
    _write(tmp_path, '/etc/systemd/system/pg.service.d/50-vendor.conf', '[Service]\nLimitNOFILE=10\n')
    _write(tmp_path, '/etc/systemd/system/service.d/99-all.conf', '[Service]\nLimitMEMLOCK=2M\n')
    _write(tmp_path, '/run/systemd/system/pg.service.d/10-run.conf', '[Service]\nLimitMEMLOCK=3M\n')
    os.symlink('/dev/null', os.path.join(str(tmp_path), 'etc/systemd/system/pg.service.d/20-masked.conf'))
    _write(tmp_path, '/lib/systemd/system/pg.service.d/20-masked.conf', '[Service]\nLimitMEMLOCK=9M\n')
    files = systemd.unit_files(str(tmp_path), 'pg.service', extra='/etc/systemd/system/pg.service.d/90-ours.conf')
    shown = [path for path, local in files]
    assert shown == [
        '/lib/systemd/system/pg.service',
        '/run/systemd/system/pg.service.d/10-run.conf',
        '/etc/systemd/system/pg.service.d/50-vendor.conf',
        '/etc/systemd/system/pg.service.d/90-ours.conf',
        '/etc/systemd/system/service.d/99-all.conf',
    ]
    texts = [(path, open(local).read() if os.path.exists(local) else '[Service]\nLimitMEMLOCK=infinity\n')
             for path, local in files]
    assert systemd.effective_value(texts, 'Service', 'LimitMEMLOCK') == ('2M', '/etc/systemd/system/service.d/99-all.conf')
    assert systemd.effective_value(texts[:4], 'Service', 'LimitMEMLOCK') == (
        'infinity', '/etc/systemd/system/pg.service.d/90-ours.conf')
    assert systemd.effective_value(texts, 'Service', 'LimitCORE') == (None, None)


def test_unit_file_masked_and_template(tmp_path):
    _write(tmp_path, '/lib/systemd/system/postgresql@.service', '[Service]\n')
    assert systemd.unit_file(str(tmp_path), 'postgresql@15-main.service')[0] == '/lib/systemd/system/postgresql@.service'
    os.makedirs(os.path.join(str(tmp_path), 'etc/systemd/system'))
    os.symlink('/dev/null', os.path.join(str(tmp_path), 'etc/systemd/system/x.service'))
    assert systemd.unit_file(str(tmp_path), 'x.service') == ('/etc/systemd/system/x.service', None)
    assert systemd.unit_file(str(tmp_path), 'none.service') == (None, None)


def test_parse_show():
    out = 'LimitMEMLOCK=infinity\nLimitMEMLOCKSoft=8388608\nMainPID=0\nDescription=a=b\n'
    assert systemd.parse_show(out) == {'LimitMEMLOCK': 'infinity', 'LimitMEMLOCKSoft': '8388608',
                                       'MainPID': '0', 'Description': 'a=b'}
