# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""limits.conf, systemd Limit*= values, /proc/<pid>/limits and /etc/project formats."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.formats import limits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import project

LIMITS_CONF = '''# /etc/security/limits.conf
#
#<domain>      <type>  <item>         <value>
#
#*               soft    core            0
#@student        hard    nproc           20
*               soft    core            0      # no core dumps
@dba            hard    nofile          65536
oracle          -       memlock         unlimited

# End of file
'''

# The kernel's layout (fs/proc/base.c, proc_pid_limits): each row padded to fixed columns.
PROC_LIMITS = ''.join('%-25s %-20s %-20s %-10s\n' % row for row in [
    ('Limit', 'Soft Limit', 'Hard Limit', 'Units'),
    ('Max cpu time', 'unlimited', 'unlimited', 'seconds'),
    ('Max file size', 'unlimited', 'unlimited', 'bytes'),
    ('Max data size', 'unlimited', 'unlimited', 'bytes'),
    ('Max stack size', '8388608', 'unlimited', 'bytes'),
    ('Max core file size', '0', 'unlimited', 'bytes'),
    ('Max resident set', 'unlimited', 'unlimited', 'bytes'),
    ('Max processes', '95235', '95235', 'processes'),
    ('Max open files', '1024', '524288', 'files'),
    ('Max locked memory', '8388608', '8388608', 'bytes'),
    ('Max address space', 'unlimited', 'unlimited', 'bytes'),
    ('Max file locks', 'unlimited', 'unlimited', 'locks'),
    ('Max pending signals', '95235', '95235', 'signals'),
    ('Max msgqueue size', '819200', '819200', 'bytes'),
    ('Max nice priority', '0', '0', ''),
    ('Max realtime priority', '0', '0', ''),
    ('Max realtime timeout', 'unlimited', 'unlimited', 'us'),
])

ETC_PROJECT = '''system:0::::
user.root:1::::
noproject:2::::
default:3::::
group.staff:10::::
# database projects
user.oracle:100:Oracle DB:oracle,grid:dba:project.max-shm-memory=(privileged,8589934592,deny);project.pool=pool_db
'''


# ------------------------------------------------------------------ limits.conf
@pytest.mark.parametrize('text', ['', LIMITS_CONF, 'oracle - memlock 1\r\n', 'no newline at end'])
def test_limits_render_without_changes_is_byte_identical(text):
    assert limits.render(text, {}) == text


def test_limits_parse_skips_comments_and_short_lines():
    entries = limits.parse(LIMITS_CONF + 'bad line\noracle sometimes nofile 1\n')
    assert [e.key + (e.value,) for e in entries] == [
        ('*', 'soft', 'core', '0'), ('@dba', 'hard', 'nofile', '65536'), ('oracle', '-', 'memlock', 'unlimited')]


def test_limits_render_replaces_value_in_place_keeping_spacing_and_comment():
    out = limits.render(LIMITS_CONF, {
        ('*', 'soft', 'core'): 'unlimited', ('@dba', 'hard', 'nofile'): None, ('oracle', 'soft', 'nofile'): '1024'})
    assert '*               soft    core            unlimited      # no core dumps\n' in out
    assert '@dba' not in out.replace('#@', '')
    assert out.endswith('# End of file\noracle          soft  nofile     1024\n')
    assert limits.render(out, {('*', 'soft', 'core'): 'unlimited', ('oracle', 'soft', 'nofile'): '1024'}) == out


def test_limits_render_dash_replaces_soft_and_hard_lines_of_this_file():
    text = 'oracle soft memlock 1\noracle hard memlock 2\n# c\n'
    assert limits.render(text, {('oracle', '-', 'memlock'): 'unlimited'}) == \
        '# c\noracle          -     memlock    unlimited\n'


def test_limits_render_new_file_with_header():
    assert limits.render(None, {('a', '-', 'nofile'): '5'}, header='# h') == '# h\na               -     nofile     5\n'
    assert limits.render(None, {('a', '-', 'nofile'): None}) is None


def test_limits_effective_later_file_wins_and_dash_sets_both(tmp_path):
    files = [('/etc/security/limits.conf', LIMITS_CONF),
             ('/etc/security/limits.d/90-ours.conf', 'oracle hard memlock 100\n'),
             ('/etc/security/limits.d/99-late.conf', 'oracle soft memlock -1\n')]
    found = limits.effective(files, 'oracle', 'memlock')
    assert found == {'soft': ('unlimited', '/etc/security/limits.d/99-late.conf'),
                     'hard': ('100', '/etc/security/limits.d/90-ours.conf')}
    assert limits.effective(files, 'nobody', 'memlock') == {'soft': (None, None), 'hard': (None, None)}


def test_limits_boot_files_order(tmp_path):
    folder = tmp_path / 'etc' / 'security' / 'limits.d'
    folder.mkdir(parents=True)
    for name in ('b.conf', 'A.conf', '10-x.conf', 'skip.txt', '.hidden.conf'):
        (folder / name).write_text('')
    shown = [s for s, local in limits.boot_files(str(tmp_path), extra='/etc/security/limits.d/90-ours.conf')]
    assert shown == ['/etc/security/limits.conf', '/etc/security/limits.d/10-x.conf',
                     '/etc/security/limits.d/90-ours.conf', '/etc/security/limits.d/A.conf',
                     '/etc/security/limits.d/b.conf']


@pytest.mark.parametrize('item, value, expected', [
    ('memlock', 'UNLIMITED', 'unlimited'), ('memlock', -1, '-1'), ('memlock', '0100', '100'),
    ('nice', -5, '-5'), ('nonewprivs', 1, '1'), ('chroot', '/srv/jail', '/srv/jail'),
])
def test_limits_check_value(item, value, expected):
    assert limits.check_value(item, value) == expected


@pytest.mark.parametrize('item, value', [
    ('memlock', 'lots'), ('memlock', True), ('memlock', '1.5'), ('nice', 25), ('nice', 'unlimited'),
    ('nonewprivs', 2), ('chroot', 'relative'), ('nofile', None),
])
def test_limits_check_value_refused(item, value):
    with pytest.raises(limits.LimitsValueError):
        limits.check_value(item, value)


def test_limits_normalize_value():
    assert limits.normalize_value('memlock', 'infinity') == limits.normalize_value('memlock', '-1') == 'unlimited'
    assert limits.normalize_value('nice', '-1') == '-1'


def test_limits_normalize_value_spells_numbers_the_one_way_and_keeps_words():
    # Equal numbers spelled differently compare equal; a word that is no number stays as it is.
    assert [limits.normalize_value('nofile', text) for text in ('0100', '+5', ' 42 ')] == ['100', '5', '42']
    assert limits.normalize_value('priority', '-05') == '-5'
    assert limits.normalize_value('nofile', 'Soft') == 'soft'


# ------------------------------------------------------------------ systemd Limit*=
@pytest.mark.parametrize('name, value, expected', [
    ('LimitMEMLOCK', 'infinity', ('infinity', 'infinity')),
    ('LimitMEMLOCK', '64M', (67108864, 67108864)),
    ('LimitMEMLOCK', '1.5G', (1610612736, 1610612736)),
    ('LimitMEMLOCK', 8589934592, (8589934592, 8589934592)),
    ('LimitNOFILE', '1024:524288', (1024, 524288)),
    ('LimitNOFILE', '1024:infinity', (1024, 'infinity')),
    ('LimitCPU', '2min', (120, 120)),
    ('LimitCPU', '1500ms', (2, 2)),
    ('LimitRTTIME', '1s', (1000000, 1000000)),
    ('LimitNICE', '-5', (25, 25)),
    ('LimitNICE', '30', (30, 30)),
])
def test_parse_systemd_limit(name, value, expected):
    assert limits.parse_systemd_limit(name, value) == expected


@pytest.mark.parametrize('name, value', [
    ('LimitMEMLOCK', '64m'), ('LimitMEMLOCK', 'lots'), ('LimitNOFILE', '1K'), ('LimitNOFILE', '10:5'),
    ('LimitNOFILE', 'infinity:5'), ('LimitNICE', '+30'), ('LimitCPU', '5 parsecs'), ('LimitFOO', '1'),
    ('LimitNOFILE', True),
])
def test_parse_systemd_limit_refused(name, value):
    with pytest.raises(limits.LimitsValueError):
        limits.parse_systemd_limit(name, value)


def test_from_show_and_proc_limits_compare_with_parsed_values():
    shown = {'LimitMEMLOCK': 'infinity', 'LimitMEMLOCKSoft': 'infinity', 'LimitNOFILE': '524288',
             'LimitNOFILESoft': '1024'}
    assert limits.from_show(shown, 'LimitMEMLOCK') == limits.parse_systemd_limit('LimitMEMLOCK', 'infinity')
    assert limits.from_show(shown, 'LimitNOFILE') == limits.parse_systemd_limit('LimitNOFILE', '1024:524288')
    assert limits.from_show(shown, 'LimitCORE') is None
    proc = limits.parse_proc_limits(PROC_LIMITS)
    assert len(proc) == 16
    assert proc['LimitMEMLOCK'] == limits.parse_systemd_limit('LimitMEMLOCK', '8M')
    assert proc['LimitNOFILE'] == (1024, 524288)
    assert proc['LimitSTACK'] == (8388608, 'infinity')
    assert proc['LimitNICE'] == (0, 0)
    assert limits.show_pair((1024, 524288)) == '1024:524288' and limits.show_pair(('infinity', 'infinity')) == 'infinity'


# ------------------------------------------------------------------ /etc/project
@pytest.mark.parametrize('text', ['', ETC_PROJECT, '+\n-nis.project\nsystem:0::::\r\n', 'odd line\nx:y:z'])
def test_project_render_without_changes_is_byte_identical(text):
    assert project.render(text, {}) == text


def test_project_parse():
    entries = project.parse(ETC_PROJECT + '+\nbroken:line\n')
    assert [e.name for e in entries] == ['system', 'user.root', 'noproject', 'default', 'group.staff', 'user.oracle']
    oracle = entries[-1]
    assert (oracle.id, oracle.comment, oracle.users, oracle.groups) == (100, 'Oracle DB', ['oracle', 'grid'], ['dba'])
    assert oracle.attributes == [('project.max-shm-memory', '(privileged,8589934592,deny)'),
                                 ('project.pool', 'pool_db')]


def test_project_render_changes_line_in_place_and_appends_new():
    entries = dict((e.name, e) for e in project.parse(ETC_PROJECT))
    oracle = entries['user.oracle'].copy()
    oracle.set_attribute('project.max-shm-memory', '(privileged,17179869184,deny)')
    oracle.set_attribute('project.max-shm-ids', '(privileged,100,deny)')
    new = project.Project('user.postgres', 101, 'PostgreSQL', ['postgres'], [],
                          [('project.max-shm-memory', '(privileged,4294967296,deny)')])
    out = project.render(ETC_PROJECT, {'user.oracle': oracle, 'user.postgres': new})
    assert out == ETC_PROJECT.replace(
        'project.max-shm-memory=(privileged,8589934592,deny);project.pool=pool_db',
        'project.max-shm-memory=(privileged,17179869184,deny);project.pool=pool_db;'
        'project.max-shm-ids=(privileged,100,deny)') + \
        'user.postgres:101:PostgreSQL:postgres::project.max-shm-memory=(privileged,4294967296,deny)\n'
    assert project.render(out, {'user.postgres': None}) == out.rsplit('user.postgres', 1)[0]


def test_project_flag_attribute_round_trip():
    line = 'p:5::::task.final;project.pool=x\n'
    entry = project.parse_line(line)
    assert entry.attributes == [('task.final', None), ('project.pool', 'x')]
    assert project.format_line(entry) + '\n' == line


@pytest.mark.parametrize('actual, desired, same', [
    ('(privileged,8589934592,deny)', '( Privileged , 08589934592, DENY )', True),
    ('(basic,1,deny),(privileged,2,deny)', '(privileged,2,deny),(basic,1,deny)', True),
    ('(privileged,8589934592,deny)', '(privileged,8589934593,deny)', False),
    ('pool_db', 'pool_db', True),
    (None, '(privileged,1,deny)', False),
])
def test_project_attribute_compare(actual, desired, same):
    assert project.same_attribute(actual, desired) is same


@pytest.mark.parametrize('call', [
    lambda: project.validate_name('1bad'),
    lambda: project.validate_name('a:b'),
    lambda: project.validate_id('p', -1),
    lambda: project.validate_id('p', 2147483648),
    lambda: project.validate_id('p', True),
    lambda: project.validate_comment('p', 'a:b'),
    lambda: project.validate_members('p', 'users', ['ok', 'bad name']),
    lambda: project.validate_attribute('p', 'project.max-shm-memory', '8589934592'),
    lambda: project.validate_attribute('p', 'project.max-shm-memory', '(privileged;1,deny)'),
    lambda: project.validate_attribute('p', 'project.max-shm-memory', '(sometimes,1,deny)'),
    lambda: project.validate_attribute('p', 'bad name', 'x'),
])
def test_project_validation_refuses(call):
    with pytest.raises(project.ProjectError):
        call()


def test_project_validation_accepts():
    assert project.validate_attribute('p', 'project.pool', 'pool_db') == 'pool_db'
    assert project.validate_attribute('p', 'project.max-shm-memory', ' (privileged,1,deny) ') == '(privileged,1,deny)'
    assert project.validate_members('p', 'users', 'a,!b,*') == ['a', '!b', '*']


def test_systemctl_show_prints_infinity_as_the_largest_number_on_older_systemd():
    shown = {'LimitMEMLOCK': '18446744073709551615', 'LimitMEMLOCKSoft': '18446744073709551615'}
    assert limits.from_show(shown, 'LimitMEMLOCK') == ('infinity', 'infinity')


@pytest.mark.parametrize('domain', ['', None, 5])
def test_an_empty_or_missing_domain_is_refused_as_such(domain):
    with pytest.raises(limits.LimitsValueError, match='is not a limits.conf domain'):
        limits.check_domain(domain)


def test_project_comment_is_free_text_without_control_characters():
    assert project.validate_comment('p', 'Oracle DB, SGA 48G') == 'Oracle DB, SGA 48G'
    with pytest.raises(project.ProjectError, match='contains'):
        project.validate_comment('p', 'a\x07b')


@pytest.mark.parametrize('value', ['pool;db', 'pool:db', 'pool\ndb'])
def test_project_attribute_value_without_field_separators(value):
    # ";" separates attributes and ":" fields in /etc/project: such a value would be two
    with pytest.raises(project.ProjectError, match='must not contain'):
        project.validate_attribute('p', 'project.pool', value)


@pytest.mark.parametrize('name, value, message', [
    ('LimitNICE', '41', "LimitNICE: '41' is neither a nice value (+N/-N) nor a raw limit 0..40"),
    ('LimitNICE', 'low', "LimitNICE: 'low' is neither a nice value (+N/-N) nor a raw limit 0..40"),
    ('LimitCPU', '1min3x', "LimitCPU: '1min3x' is not a time span"),
    ('LimitRTTIME', '5s 3 weeks ago', "LimitRTTIME: '5s 3 weeks ago' is not a time span"),
])
def test_parse_systemd_limit_refusal_names_the_value(name, value, message):
    with pytest.raises(limits.LimitsValueError) as caught:
        limits.parse_systemd_limit(name, value)
    assert str(caught.value) == message


def test_limits_domain_ids_end_at_the_largest_id():
    # 2**32 - 1 is (uid_t) -1, "no id": the largest id is 4294967294, itself allowed.
    for domain in (':4294967294', '0:4294967294', '@4294967294:'):
        assert limits.check_domain(domain) == domain
    for domain in (':4294967295', '4294967295:', '@:4294967295'):
        with pytest.raises(limits.LimitsValueError) as caught:
            limits.check_domain(domain)
        assert str(caught.value) == '%r: an id above 4294967294' % domain


def test_limits_boot_files_add_only_a_file_of_limits_d(tmp_path):
    # The file about to be written is listed before it exists only when pam_limits reads it:
    # limits.conf itself comes first anyway, a file elsewhere is not read at all.
    (tmp_path / 'etc' / 'security' / 'limits.d').mkdir(parents=True)
    for extra in ('/etc/security/limits.conf', '/etc/other.d/90-ours.conf'):
        assert [s for s, local in limits.boot_files(str(tmp_path), extra=extra)] == ['/etc/security/limits.conf']


def test_project_lists_drop_empty_members():
    found = project.parse_line('user.oracle:100:db:oracle,,grid,:dba,:')
    assert (found.users, found.groups) == (['oracle', 'grid'], ['dba'])


def test_project_added_after_a_last_line_without_newline():
    added = project.Project('group.dba', 101, '', [], ['dba'], [])
    assert project.render('system:0::::\nuser.oracle:100::::', {'group.dba': added}) == \
        'system:0::::\nuser.oracle:100::::\ngroup.dba:101:::dba:\n'


def test_project_attribute_value_refuses_a_space_other_than_the_ascii_one():
    assert project.validate_attribute('user.oracle', 'x', 'a b') == 'a b'
    with pytest.raises(project.ProjectError) as caught:
        project.validate_attribute('user.oracle', 'x', u'a\u2003b')
    assert str(caught.value) == "project user.oracle: attribute x: the value 'a\\u2003b' contains U+2003 (EM SPACE)"


def test_project_has_attribute_names_flags_and_valued_attributes():
    found = project.parse_line('user.oracle:100::::project.max-shm-memory=(privileged,1,deny);task.final\n')
    assert found.has_attribute('task.final') is True
    assert found.has_attribute('project.max-shm-memory') is True
    assert found.has_attribute('project.max-sem-ids') is False


def test_project_line_with_an_id_that_is_no_number_is_not_a_project():
    assert project.parse_line('user.oracle:x100::::') is None
    assert [found.name for found in project.parse('user.oracle:x100::::\nuser.grid:101::::\n')] == ['user.grid']
    changed = project.Project('user.oracle', 100, '', [], [], [])
    assert project.render('user.oracle:x100::::\n', {'user.oracle': changed}) == \
        'user.oracle:x100::::\nuser.oracle:100::::\n'


def test_project_line_rewritten_in_place_keeps_its_line_ending():
    changes = {'user.oracle': project.Project('user.oracle', 100, 'db', [], [], []),
               'user.grid': project.Project('user.grid', 101, 'db', [], [], [])}
    assert project.render('user.oracle:100::::\r\nuser.grid:101::::', changes) == \
        'user.oracle:100:db:::\r\nuser.grid:101:db:::\n'


# What systemd 252 (Debian 12) and 257 (Debian 13) gave in systemctl show for a drop-in holding
# each value (molecule/consumers proves the same values again: tests/test_layouts.py).
@pytest.mark.parametrize('name, value, pair', [
    ('LimitNOFILE', '0x100', (256, 256)), ('LimitNOFILE', '0300', (192, 192)), ('LimitNOFILE', '0o17', (15, 15)),
    ('LimitNOFILE', '0b101', (5, 5)), ('LimitNOFILE', '+5', (5, 5)), ('LimitNOFILE', '0x10:0x20', (16, 32)),
    ('LimitMEMLOCK', '1.5K', (1536, 1536)), ('LimitMEMLOCK', '010', (10, 10)), ('LimitMEMLOCK', '1 K', (1024, 1024)),
    ('LimitMEMLOCK', '1.9999B', (1, 1)), ('LimitMEMLOCK', '0.5', (0, 0)), ('LimitMEMLOCK', '1G 512M', (1610612736,) * 2),
    ('LimitMEMLOCK', '1G512M', (1610612736,) * 2), ('LimitMEMLOCK', '4M: 1G', (4194304, 1073741824)),
    ('LimitCPU', '1min30', (90, 90)), ('LimitCPU', '1.2', (2, 2)), ('LimitCPU', '1.5min', (90, 90)),
    ('LimitCPU', '30 s', (30, 30)), ('LimitRTTIME', '5s3', (5000003, 5000003)), ('LimitNICE', '+5', (15, 15)),
    ('LimitNICE', '0x10', (16, 16)),
])
def test_parse_systemd_limit_as_systemd_reads_it(name, value, pair):
    assert limits.parse_systemd_limit(name, value) == pair


@pytest.mark.parametrize('name, value', [
    ('LimitNOFILE', '512:'), ('LimitNOFILE', ':512'), ('LimitNOFILE', ''), ('LimitNOFILE', 'unlimited'),
    ('LimitNOFILE', '512 : 1024'), ('LimitNOFILE', '4096:1024'), ('LimitNOFILE', '-1'), ('LimitNOFILE', '512abc'),
    ('LimitNOFILE', '1K'), ('LimitNOFILE', '09'), ('LimitMEMLOCK', '0x1000'), ('LimitMEMLOCK', '1KB'),
    ('LimitMEMLOCK', '1k'), ('LimitMEMLOCK', '1KiB'), ('LimitMEMLOCK', ''), ('LimitMEMLOCK', 'infinity:4M'),
    ('LimitMEMLOCK', '1e3'), ('LimitMEMLOCK', '4M :1G'),
])
def test_values_systemd_ignores(name, value):
    """systemd logs "Failed to parse resource value, ignoring" and keeps what it had: an empty
    assignment does not reset a limit (systemd 252 and 257 keep the unit file's value)."""
    with pytest.raises(limits.LimitsValueError):
        limits.parse_systemd_limit(name, value)


def test_effective_reads_values_as_pam_limits_does():
    """strtoull base 10: 0300 is 300 (not octal), 4096kb is 4096; a value without digits skips the line."""
    text = ('@dba soft memlock 0300\n@dba hard memlock 4096kb\n@dba hard memlock lots\n'
            '@dba - nofile -1\n@dba soft core 99999999999999999999\n')
    found = limits.effective([('/etc/security/limits.d/x.conf', text)], '@dba', 'memlock')
    assert (found['soft'].value, found['hard'].value) == ('300', '4096')
    assert limits.effective([('f', text)], '@dba', 'nofile')['hard'].value == 'unlimited'
    assert limits.effective([('f', text)], '@dba', 'core')['soft'].value == 'unlimited'
