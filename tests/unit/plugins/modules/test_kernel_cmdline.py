# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_cmdline against fake trees: the GRUB drop-in and /etc/kernel/cmdline, the running
line's last occurrence, pending reboots, shadowing drop-ins, absent, bad input, the boot
loader's command (faked) and a revert that gives the tree back byte for byte."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import json
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.modules import host_state, kernel_cmdline
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import kernel_cmdline as plan
from ansible_collections.dbhost.tuning.tests.unit.helpers import BASELINE_FOLDER, digest, put, read, records

pytestmark = pytest.mark.usefixtures('linux')

DROPIN = '/etc/default/grub.d/99-dbhost-tuning.cfg'
HEADER = plan.HEADER + '\n'
RUNNING = 'BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0a1b ro quiet transparent_hugepage=madvise\n'
GRUB = ('GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\n'
        'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n')
DB_PARAMS = {'transparent_hugepage': 'never', 'numa_balancing': 'disable', 'intel_idle.max_cstate': 1,
             'processor.max_cstate': 1}
DB_LINE = 'intel_idle.max_cstate=1 numa_balancing=disable processor.max_cstate=1 transparent_hugepage=never'


def dropin(words):
    return HEADER + 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX %s"\n' % words


@pytest.fixture
def root(tmp_path):
    base = str(tmp_path / 'host')
    put(base, '/proc/cmdline', RUNNING)
    put(base, '/etc/default/grub', GRUB)
    # as on every host: the baseline (engine/baseline.py) makes only its own folder in it
    os.makedirs(os.path.join(base, 'var', 'lib'))
    return base


def test_check_mode_changes_nothing_and_shows_the_drop_in(root, run_module):
    before = digest(root)
    result = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root}, check_mode=True, diff=True)
    assert digest(root) == before
    assert result['changed'] is True
    assert result['diff'] == [{'before_header': DROPIN, 'after_header': DROPIN, 'before': '',
                               'after': dropin(DB_LINE)}]
    thp = records(result)['transparent_hugepage']
    assert (thp['status'], thp['desired'], thp['live'], thp['persisted']) == ('drift', 'never', 'madvise', None)
    assert thp['reason'] == 'live differs, not persisted'
    assert thp['detail'].startswith('would write %s; root is %s: the boot loader' % (DROPIN, root))
    assert records(result)['intel_idle.max_cstate']['desired'] == '1'


def test_apply_writes_the_drop_in_and_a_reboot_is_pending_until_the_running_line_has_them(root, run_module):
    result = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert read(root, DROPIN) == dropin(DB_LINE)
    assert read(root, '/etc/default/grub') == GRUB
    assert result['changed'] is True and result['reboot_required'] is True
    thp = records(result)['transparent_hugepage']
    assert (thp['status'], thp['live'], thp['persisted'], thp['target']) == ('pending_reboot', 'madvise', 'never', DROPIN)
    assert thp['reason'] == 'persisted now, pending reboot'
    assert 'the running kernel has transparent_hugepage=madvise until the next reboot' in thp['detail']
    assert records(result)['numa_balancing']['live'] is None
    assert thp['source'] == 'task option: kernel_cmdline.params'

    again = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert again['changed'] is False and again['reboot_required'] is True
    assert set(s['status'] for s in again['settings']) == set(['pending_reboot'])
    assert records(again)['numa_balancing']['reason'] == 'persisted, pending reboot'

    # the reboot: the running line is the next boot's
    put(root, '/proc/cmdline', 'BOOT_IMAGE=/boot/vmlinuz root=UUID=0a1b ro %s quiet\n' % DB_LINE)
    tree = digest(root)
    booted = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert booted['changed'] is False and booted['reboot_required'] is False
    assert set(s['status'] for s in booted['settings']) == set(['ok'])
    assert digest(root) == tree


def test_a_running_line_that_already_has_it_is_changed_not_pending(root, run_module):
    put(root, '/proc/cmdline', RUNNING.replace('madvise', 'never'))
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': root})
    record = records(result)['transparent_hugepage']
    assert (record['status'], record['reason']) == ('changed', 'was: not persisted')
    assert result['reboot_required'] is False


def test_the_last_occurrence_counts_on_both_lines(root, run_module):
    put(root, '/proc/cmdline', 'root=/dev/sda1 transparent_hugepage=never ro transparent-hugepage=always\n')
    put(root, '/etc/default/grub', GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="transparent_hugepage=never"'))
    before = digest(root)
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': root})
    # the next boot already has it, from /etc/default/grub: nothing to write
    assert digest(root) == before and result['changed'] is False
    record = records(result)['transparent_hugepage']
    assert (record['status'], record['live'], record['persisted']) == ('pending_reboot', 'always', 'never')
    assert 'persisted by /etc/default/grub' in record['detail']


def test_a_bare_flag_and_its_spellings(root, run_module):
    result = run_module(kernel_cmdline, {'params': {'nosmt': None, 'nohz': ''}, 'root': root})
    assert read(root, DROPIN) == dropin('nohz nosmt')
    assert records(result)['nosmt']['desired'] == 'nosmt'
    put(root, '/proc/cmdline', 'root=/dev/sda1 nosmt nohz=on\n')
    again = run_module(kernel_cmdline, {'params': {'nosmt': None, 'nohz': None}, 'root': root})
    assert again['changed'] is False
    assert records(again)['nosmt']['status'] == 'ok'
    # nohz=on is not the bare flag nohz
    assert (records(again)['nohz']['status'], records(again)['nohz']['live']) == ('pending_reboot', 'on')


def test_a_changed_value_replaces_ours_and_keeps_the_others(root, run_module):
    run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    put(root, DROPIN, read(root, DROPIN).replace(plan.HEADER, '# my note\n' + plan.HEADER))
    result = run_module(kernel_cmdline, {'params': {'numa-balancing': 'enable'}, 'root': root}, diff=True)
    assert read(root, DROPIN) == '# my note\n' + dropin(
        'intel_idle.max_cstate=1 processor.max_cstate=1 transparent_hugepage=never numa-balancing=enable')
    assert result['diff'][0]['before_header'] == DROPIN


@pytest.mark.parametrize('where,text', [
    ('/etc/default/grub.d/99-zz-local.cfg', 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX transparent_hugepage=always"\n'),
    ('/etc/default/grub', GRUB.replace('"quiet"', '"quiet transparent_hugepage=always"')),
], ids=['later-drop-in', 'linux-default'])
def test_a_source_after_ours_shadows_and_fails(root, run_module, where, text):
    put(root, where, text)
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': root})
    assert result['failed'] is True
    # the drop-in is written before the check fails: the message says so, naming it
    assert result['msg'].startswith('shadowed at boot: transparent_hugepage by %s; written before this failure, '
                                    'and kept: ' % where)
    assert result['msg'].endswith('wrote %s' % os.path.join(root, DROPIN.lstrip('/')))
    record = records(result)['transparent_hugepage']
    assert (record['status'], record['persisted']) == ('shadowed', 'always')
    assert record['reason'] == "shadowed by %s (sets 'transparent_hugepage=always')" % where
    assert read(root, DROPIN) == dropin('transparent_hugepage=never')
    quiet = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': root,
                                        'fail_on_shadowed': False})
    assert 'failed' not in quiet and quiet['changed'] is False
    assert records(quiet)['transparent_hugepage']['status'] == 'shadowed'


def test_a_later_drop_in_that_resets_the_line_shadows(root, run_module):
    put(root, '/etc/default/grub.d/zz.cfg', 'GRUB_CMDLINE_LINUX="console=ttyS0"\n')
    result = run_module(kernel_cmdline, {'params': {'numa_balancing': 'disable'}, 'root': root,
                                         'fail_on_shadowed': False})
    record = records(result)['numa_balancing']
    assert (record['status'], record['persisted']) == ('shadowed', None)
    assert record['reason'] == 'shadowed by /etc/default/grub.d/zz.cfg (sets the line without it)'


def test_an_earlier_drop_in_does_not_shadow(root, run_module):
    put(root, '/etc/default/grub.d/50-cloudimg-settings.cfg',
        'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX numa_balancing=enable"\n')
    result = run_module(kernel_cmdline, {'params': {'numa_balancing': 'disable'}, 'root': root})
    record = records(result)['numa_balancing']
    assert (record['status'], record['persisted']) == ('pending_reboot', 'disable')
    assert 'failed' not in result


def test_absent_removes_ours_and_the_file_it_leaves_empty(root, run_module):
    run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    args = {'params': ['numa_balancing'], 'state': 'absent', 'root': root}
    check = run_module(kernel_cmdline, args, check_mode=True)
    assert records(check)['numa_balancing']['status'] == 'drift'
    result = run_module(kernel_cmdline, args)
    assert read(root, DROPIN) == dropin('intel_idle.max_cstate=1 processor.max_cstate=1 transparent_hugepage=never')
    record = records(result)['numa_balancing']
    assert (record['status'], record['desired'], record['persisted']) == ('changed', None, None)
    assert record['detail'].startswith('removed it from %s' % DROPIN)
    assert run_module(kernel_cmdline, args)['changed'] is False

    every = run_module(kernel_cmdline, {'params': dict(DB_PARAMS, numa_balancing=None), 'state': 'absent',
                                        'root': root})
    assert every['changed'] is True
    assert not os.path.exists(os.path.join(root, DROPIN.lstrip('/')))
    # the running kernel has transparent_hugepage=madvise, which no file gives the next boot
    assert records(every)['transparent_hugepage']['status'] == 'pending_reboot'
    assert records(every)['intel_idle.max_cstate']['status'] == 'changed'


def test_absent_while_the_running_kernel_has_it_is_pending_reboot(root, run_module):
    run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    put(root, '/proc/cmdline', RUNNING.strip() + ' nosmt\n')
    result = run_module(kernel_cmdline, {'params': ['nosmt'], 'state': 'absent', 'root': root})
    record = records(result)['nosmt']
    assert (record['status'], record['live'], record['reason']) == ('pending_reboot', 'nosmt',
                                                                    'persisted now, pending reboot')
    assert result['reboot_required'] is True


def test_absent_leaves_what_another_file_sets(root, run_module):
    put(root, '/etc/default/grub', GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="nosmt"'))
    before = digest(root)
    result = run_module(kernel_cmdline, {'params': ['nosmt'], 'state': 'absent', 'root': root})
    assert digest(root) == before and result['changed'] is False
    record = records(result)['nosmt']
    assert record['status'] == 'ok'
    assert record['detail'] == "still set at boot by /etc/default/grub ('nosmt'), which is not ours to remove; not in %s" % DROPIN


def test_kernel_cmdline_file_is_edited_in_place(root, run_module):
    put(root, '/etc/kernel/cmdline', '# the boot entries\nroot=UUID=0a1b ro "quiet" transparent_hugepage=always\n')
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never', 'nosmt': None}, 'root': root},
                        diff=True)
    assert read(root, '/etc/kernel/cmdline') == ('# the boot entries\nroot=UUID=0a1b ro "quiet" nosmt '
                                                 'transparent_hugepage=never\n')
    assert not os.path.exists(os.path.join(root, 'etc', 'default', 'grub.d'))
    assert result['diff'][0]['before_header'] == '/etc/kernel/cmdline'
    record = records(result)['transparent_hugepage']
    assert (record['status'], record['target'], record['persisted']) == ('pending_reboot', '/etc/kernel/cmdline', 'never')
    assert run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never', 'nosmt': None},
                                       'root': root})['changed'] is False
    run_module(kernel_cmdline, {'params': ['nosmt'], 'state': 'absent', 'root': root})
    assert read(root, '/etc/kernel/cmdline') == ('# the boot entries\nroot=UUID=0a1b ro "quiet" '
                                                 'transparent_hugepage=never\n')


def test_without_a_boot_loader_configuration_every_record_is_unsupported(tmp_path, run_module):
    base = str(tmp_path)
    put(base, '/proc/cmdline', RUNNING)
    before = digest(base)
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': base})
    assert digest(base) == before and result['changed'] is False and 'failed' not in result
    record = records(result)['transparent_hugepage']
    assert (record['status'], record['live']) == ('unsupported', 'madvise')
    assert record['reason'].startswith('no boot loader configuration under %s' % base)


def test_another_platform_touches_nothing(root, run_module, monkeypatch):
    from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
    monkeypatch.setattr(platforms, 'system', lambda: 'FreeBSD')
    before = digest(root)
    result = run_module(kernel_cmdline, {'params': {'transparent_hugepage': 'never'}, 'root': root})
    assert digest(root) == before
    assert records(result)['transparent_hugepage']['status'] == 'unsupported'


@pytest.mark.parametrize('params,state,words', [
    ({'console': 'ttyS0'}, 'present', ['console', 'adds to the others']),
    ({'hugepages': 512}, 'present', ['hugepages', 'dbhost.tuning.hugepages']),
    ({'default-hugepagesz': '1G'}, 'present', ['default-hugepagesz', 'dbhost.tuning.hugepages']),
    ({'root': '/dev/sdb1'}, 'present', ['root', 'boot loader']),
    ({'nosmt': True}, 'present', ['nosmt', 'boolean']),
    ({'isolcpus': '1 2'}, 'present', ['isolcpus', 'space']),
    ({'init': '/bin/sh;reboot'}, 'present', ['init', ';']),
    ({'quiet': '$(reboot)'}, 'present', ['quiet', '$']),
    ({'bad name': '1'}, 'present', ['bad name', 'not a kernel parameter name']),
    ({'-x': '1'}, 'present', ['-x', 'not a kernel parameter name']),
    ({'numa_balancing': 'disable', 'numa-balancing': 'enable'}, 'present', ['numa_balancing', 'numa-balancing']),
    ({}, 'present', ['params']),
    (['nosmt'], 'present', ['params', 'non-empty dict']),
    ({'mitigations': ['off']}, 'present', ['mitigations', 'neither a string nor a number']),
])
def test_bad_input_fails_naming_it_before_anything_is_touched(root, run_module, params, state, words):
    before = digest(root)
    result = run_module(kernel_cmdline, {'params': params, 'state': state, 'root': root})
    assert result['failed'] is True
    for word in words:
        assert word in result['msg'], result['msg']
    assert digest(root) == before


# ------------------------------------------------------------ the boot loader's command, faked
class Host(object):
    """The programs found and the commands run, as the module's bin_path and runner see them."""

    def __init__(self, programs, rc=0, err=''):
        self.programs = programs
        self.rc, self.err = rc, err
        self.ran = []
        self.warnings = []

    def bin_path(self, name, required=False):
        return '/usr/sbin/%s' % name if name in self.programs else None

    def runner(self, argv):
        self.ran.append(list(argv))
        return self.rc, '', self.err


@pytest.fixture
def booted(root, monkeypatch):
    """The module with the boot loader's commands acting on the tree, through a fake host."""
    from ansible.module_utils import basic

    def make(programs, rc=0, err=''):
        host = Host(programs, rc, err)
        # what the module warns, as it leaves the module (ansible-core keeps them for the whole process)
        monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda self, warning, **kw: host.warnings.append(warning))
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, required=False, opt_dirs=None:
                            host.bin_path(name))
        monkeypatch.setattr(basic.AnsibleModule, 'run_command', lambda self, argv, **kw: host.runner(argv))
        monkeypatch.setattr(plan, 'KernelCmdline', functools.partial(plan.KernelCmdline, command_root=root))
        return host
    return make


def test_update_grub_runs_after_a_change_only(root, run_module, booted):
    host = booted(['update-grub', 'grub-mkconfig'])
    run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root}, check_mode=True)
    assert host.ran == []
    result = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert host.ran == [['/usr/sbin/update-grub']]
    assert 'ran /usr/sbin/update-grub' in records(result)['transparent_hugepage']['detail']
    run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert host.ran == [['/usr/sbin/update-grub']]


@pytest.mark.parametrize('program,output', [('grub-mkconfig', '/boot/grub/grub.cfg'),
                                            ('grub2-mkconfig', '/boot/grub2/grub.cfg')])
def test_grub_mkconfig_writes_the_configuration_that_is_there(root, run_module, booted, program, output):
    put(root, output, '# generated\n')
    host = booted(['grub-mkconfig', 'grub2-mkconfig'])
    run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [['/usr/sbin/%s' % program, '-o', output]]


def test_update_bootloader_false_runs_nothing_and_says_so(root, run_module, booted):
    host = booted(['update-grub'])
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root, 'update_bootloader': False})
    assert host.ran == []
    assert "the boot loader's configuration is not regenerated (update_bootloader=false)" in \
        records(result)['nosmt']['detail']


def test_no_boot_loader_command_warns_naming_what_to_run(root, run_module, booted):
    host = booted([])
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [] and 'failed' not in result
    assert read(root, DROPIN) == dropin('nosmt')
    assert host.warnings == [
        'the boot loader was not regenerated: no update-grub, grub-mkconfig (with /boot/grub/grub.cfg) nor '
        'grub2-mkconfig (with /boot/grub2/grub.cfg) found; run the one this host boots with before the next reboot']
    assert 'the boot loader was not regenerated' in records(result)['nosmt']['detail']


def test_kernel_cmdline_file_warns_what_to_run(root, run_module, booted):
    put(root, '/etc/kernel/cmdline', 'root=UUID=0a1b ro\n')
    host = booted(['update-grub'])
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [] and 'failed' not in result
    assert host.warnings == [
        '/etc/kernel/cmdline is read when a kernel is installed: the boot loader was not regenerated; run '
        'kernel-install add <version> <kernel image> (or the tool this host boots with) before the next reboot']


def test_a_failing_boot_loader_command_fails_saying_what_was_written(root, run_module, booted):
    booted(['update-grub'], rc=1, err='/usr/sbin/grub-probe: error: failed to get canonical path of overlay.\n')
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert result['failed'] is True and result['changed'] is True
    assert result['msg'].startswith('/usr/sbin/update-grub failed (/usr/sbin/grub-probe: error: failed to get '
                                    'canonical path of overlay.)')
    assert 'the next boot does not take %s yet, which this run already wrote' % DROPIN in result['msg']
    assert result['msg'].endswith('changed before the failure: made the folder %s, wrote %s' % (
        os.path.join(root, 'etc/default/grub.d'), os.path.join(root, DROPIN.lstrip('/'))))
    assert read(root, DROPIN) == dropin('nosmt')


# ------------------------------------------------------------ revert
@pytest.mark.parametrize('kernel_file', [None, 'root=UUID=0a1b ro quiet transparent_hugepage=always\n'],
                         ids=['grub-drop-in', 'etc-kernel-cmdline'])
def test_apply_then_revert_gives_back_the_tree_byte_for_byte(root, run_module, kernel_file):
    if kernel_file:
        put(root, '/etc/kernel/cmdline', kernel_file)
    original = digest(root, skip=BASELINE_FOLDER)
    applied = run_module(kernel_cmdline, {'params': DB_PARAMS, 'root': root})
    assert applied['changed'] is True and digest(root, skip=BASELINE_FOLDER) != original
    args = {'state': 'revert', 'roles': ['kernel_params'], 'inputs': {'kernel_params': {'kernel_params_root': root}}}
    done = run_module(host_state, args)
    assert not done.get('failed'), done
    assert digest(root, skip=BASELINE_FOLDER) == original
    # the running kernel keeps its line: the next boot's is back as it was
    assert set(record['status'] for record in done['settings']) == set(['pending_reboot'])
    with open(os.path.join(root, 'var/lib/dbhost-tuning/baseline.json')) as handle:
        assert json.load(handle)['state'] == 'reverted'
    assert run_module(host_state, args)['changed'] is False


def test_a_revert_on_the_running_system_regenerates_the_boot_loader(monkeypatch):
    from ansible_collections.dbhost.tuning.plugins.module_utils.plans import revert as revert_plan
    assert revert_plan.consequence(DROPIN)[:2] == (revert_plan.BOOT, 'pending_reboot')
    assert revert_plan.consequence('/etc/kernel/cmdline')[:2] == (None, 'pending_reboot')
    host = Host(['update-grub'])
    done = {'reloads': [], 'reload_errors': []}
    revert_plan.Revert(['/'], runner=host.runner, bin_path=host.bin_path)._reload(set([revert_plan.BOOT]), done)
    assert host.ran == [['/usr/sbin/update-grub']] and done == {'reloads': ['update-grub'], 'reload_errors': []}
    nothing = Host([])
    done = {'reloads': [], 'reload_errors': []}
    revert_plan.Revert(['/'], runner=nothing.runner, bin_path=nothing.bin_path)._reload(set([revert_plan.BOOT]), done)
    assert nothing.ran == [] and done['reloads'] == []
    assert done['reload_errors'] == ['the boot loader was not regenerated: no update-grub, grub-mkconfig nor '
                                     'grub2-mkconfig found; run the one this host boots with before the next reboot']


# ------------------------------------------------------------ the kernel_params role's kernel_params_cmdline
def _role(run_module, root, check_mode=False, **variables):
    from ansible_collections.dbhost.tuning.tests.unit.helpers import with_defaults
    inputs = {'kernel_params': dict(variables, kernel_params_root=root, kernel_params_profile='none')}
    return run_module(host_state, {'roles': ['kernel_params'], 'inputs': with_defaults(inputs)}, check_mode=check_mode)


def test_the_role_leaves_the_command_line_alone_by_default(root, run_module):
    before = digest(root, skip=BASELINE_FOLDER)
    result = _role(run_module, root)
    assert not result.get('failed'), result
    assert digest(root, skip=BASELINE_FOLDER) == before
    assert [s for s in result['settings'] if s.get('kind') == 'kernel_cmdline'] == []


def test_the_role_sets_kernel_params_cmdline_through_host_state(root, run_module):
    wanted = {'transparent_hugepage': 'never', 'nosmt': None}
    check = _role(run_module, root, check_mode=True, kernel_params_cmdline=wanted)
    assert not check.get('failed'), check
    mine = dict((s['name'], s) for s in check['settings'] if s.get('kind') == 'kernel_cmdline')
    assert sorted(mine) == ['nosmt', 'transparent_hugepage']
    assert (mine['nosmt']['status'], mine['nosmt']['desired']) == ('drift', 'nosmt')
    assert mine['transparent_hugepage']['source'] == 'user: kernel_params_cmdline'
    assert mine['transparent_hugepage']['owner'] == 'kernel_params'
    assert not os.path.exists(os.path.join(root, DROPIN.lstrip('/')))

    applied = _role(run_module, root, kernel_params_cmdline=wanted)
    assert read(root, DROPIN) == dropin('nosmt transparent_hugepage=never')
    assert applied['changed'] is True and applied['reboot_required'] is True
    again = _role(run_module, root, kernel_params_cmdline=wanted)
    assert again['changed'] is False
    assert set(s['status'] for s in again['settings'] if s.get('kind') == 'kernel_cmdline') == set(['pending_reboot'])


def test_the_role_refuses_a_bad_kernel_params_cmdline_before_anything_is_touched(root, run_module):
    before = digest(root)
    result = _role(run_module, root, kernel_params_cmdline={'console': 'ttyS0'})
    assert result['failed'] is True and 'console' in result['msg']
    assert digest(root) == before


# ------------------------------------------------------------ the generated configuration (grub.cfg)
GRUB_CFG = '/boot/grub/grub.cfg'


def grub_cfg(words):
    """A grub.cfg as update-grub writes it: the first entry's linux line, then a recovery entry's."""
    return ("### BEGIN /etc/grub.d/10_linux ###\nmenuentry 'Debian GNU/Linux' {\n"
            "\tlinux\t/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0a1b ro %s quiet\n\tinitrd\t/boot/initrd.img\n}\n"
            "menuentry 'Debian GNU/Linux (recovery mode)' {\n"
            "\tlinux\t/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0a1b ro single\n}\n" % words).replace('  ', ' ')


class Regenerating(Host):
    """update-grub that writes grub.cfg from the drop-in's words, as the real one does."""

    def __init__(self, root, programs):
        Host.__init__(self, programs)
        self.root = root

    def runner(self, argv):
        put(self.root, GRUB_CFG, grub_cfg(' '.join(plan.cmdline.dropin_words(read(self.root, DROPIN)))))
        return Host.runner(self, argv)


def test_a_failed_update_grub_is_run_again_by_the_next_run(root, run_module, booted, monkeypatch):
    put(root, GRUB_CFG, grub_cfg(''))
    booted(['update-grub'], rc=1, err='grub-probe: error\n')
    assert run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})['failed'] is True
    assert read(root, DROPIN) == dropin('nosmt') and read(root, GRUB_CFG) == grub_cfg('')

    # the drop-in is as wanted, but the boot loader's configuration is not: a drift check says so
    before = digest(root)
    check = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root}, check_mode=True)
    assert digest(root) == before
    nosmt = records(check)['nosmt']
    assert check['changed'] is True and (nosmt['status'], nosmt['persisted']) == ('drift', 'nosmt')
    assert nosmt['reason'] == 'live differs, persisted differs'
    assert nosmt['detail'].startswith(
        'would run /usr/sbin/update-grub; /boot/grub/grub.cfg has no nosmt: the boot loader\'s configuration was '
        'not regenerated after %s changed' % DROPIN)

    # the next apply runs it again, though the drop-in needs no change
    host = booted(['update-grub'])
    host.__class__ = Regenerating
    host.root = root
    again = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [['/usr/sbin/update-grub']] and host.warnings == []
    assert again['changed'] is True and again['reboot_required'] is True
    assert read(root, GRUB_CFG) == grub_cfg('nosmt') and read(root, DROPIN) == dropin('nosmt')
    assert records(again)['nosmt']['status'] == 'pending_reboot'
    assert records(again)['nosmt']['detail'].startswith('ran /usr/sbin/update-grub; /boot/grub/grub.cfg has no nosmt')

    # and then nothing is left to do
    third = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [['/usr/sbin/update-grub']] and third['changed'] is False
    assert records(third)['nosmt']['reason'] == 'persisted, pending reboot'


def test_a_configuration_that_stays_stale_after_update_grub_is_warned_about(root, run_module, booted):
    put(root, DROPIN, dropin('nosmt'))
    put(root, GRUB_CFG, grub_cfg('nosmt=1'))
    host = booted(['update-grub'])   # it "runs", but grub.cfg does not change
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [['/usr/sbin/update-grub']] and 'failed' not in result
    assert host.warnings == ['ran /usr/sbin/update-grub, but /boot/grub/grub.cfg still differs from %s for nosmt: '
                             'the next boot does not take them' % DROPIN]
    assert result['changed'] is True   # the command ran
    assert ("/boot/grub/grub.cfg has 'nosmt=1': the boot loader's configuration was not regenerated after %s changed "
            "(it still differs after this run regenerated it)" % DROPIN) in records(result)['nosmt']['detail']


def test_without_a_command_to_regenerate_it_the_generated_configuration_is_not_compared(root, run_module, booted):
    put(root, DROPIN, dropin('nosmt'))
    put(root, GRUB_CFG, grub_cfg(''))
    put(root, '/proc/cmdline', 'BOOT_IMAGE=/boot/vmlinuz root=UUID=0a1b ro nosmt quiet\n')
    before = digest(root)
    host = booted([])
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert host.ran == [] and host.warnings == [] and digest(root) == before
    assert result['changed'] is False and records(result)['nosmt']['status'] == 'ok'


def test_a_failing_update_grub_on_a_stale_configuration_says_nothing_was_written(root, run_module, booted):
    put(root, DROPIN, dropin('nosmt'))
    put(root, GRUB_CFG, grub_cfg(''))
    booted(['update-grub'], rc=1, err='grub-probe: error\n')
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root})
    assert result['failed'] is True and result['changed'] is False
    assert ('the next boot does not take %s yet; fix the cause and run /usr/sbin/update-grub' % DROPIN) in result['msg']


def test_the_generated_configuration_is_not_compared_where_this_run_would_not_regenerate_it(root, run_module, booted):
    put(root, DROPIN, dropin('nosmt'))
    put(root, GRUB_CFG, grub_cfg(''))
    host = booted(['update-grub'])
    result = run_module(kernel_cmdline, {'params': {'nosmt': None}, 'root': root, 'update_bootloader': False})
    assert host.ran == [] and result['changed'] is False
    assert records(result)['nosmt']['persisted'] == 'nosmt' and 'grub.cfg' not in records(result)['nosmt']['detail']


def test_absent_compares_the_generated_configuration_too(root, run_module, booted):
    put(root, GRUB_CFG, grub_cfg('nosmt'))   # the drop-in lost it, grub.cfg was not regenerated since
    host = booted(['update-grub'])
    check = run_module(kernel_cmdline, {'params': ['nosmt'], 'state': 'absent', 'root': root}, check_mode=True)
    assert host.ran == [] and records(check)['nosmt']['status'] == 'drift'
    assert '/boot/grub/grub.cfg has \'nosmt\'' in records(check)['nosmt']['detail']


@pytest.mark.parametrize('text,expected', [
    ("menuentry 'x' {\n\tlinux\t/vmlinuz root=/dev/sda1 ro nosmt quiet\n}\n", 'root=/dev/sda1 ro nosmt quiet'),
    ("menuentry 'x' {\n  linux16 /vmlinuz-3.10 root=/dev/sda1 crashkernel=auto\n}\n", 'root=/dev/sda1 crashkernel=auto'),
    ("menuentry 'x' {\n  linuxefi /vmlinuz root=/dev/sda1\n  initrdefi /initrd\n}\n", 'root=/dev/sda1'),
    ("insmod blscfg\nblscfg\n", None),
], ids=['linux', 'linux16', 'linuxefi', 'boot-loader-spec'])
def test_generated_reads_the_first_entrys_kernel_arguments(tmp_path, text, expected):
    put(str(tmp_path), '/boot/grub2/grub.cfg', text)
    line = plan.cmdline.generated(str(tmp_path))
    assert (line.text if line else None) == expected
    if line:
        assert line.source == '/boot/grub2/grub.cfg'
    assert plan.cmdline.generated(str(tmp_path / 'nothing')) is None
