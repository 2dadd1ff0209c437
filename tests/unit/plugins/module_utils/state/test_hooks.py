# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""state/hooks.py: what the code around the plans knows of a kind comes from the kind's registry entry,
never from a test of its name or its plan's class name."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

import pytest

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.state import hooks, host_state, registry
from ansible_collections.dbhost.tuning.plugins.module_utils.state.compile.common import Call

PLUGINS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '..', 'plugins'))
# Where a kind may be named: its entry and its hooks, and the compile steps, which make calls of the kinds they name.
NAMING = ('module_utils/state/registry.py', 'module_utils/state/hooks.py', 'module_utils/state/compile/')


def test_a_baseline_entry_names_its_kind_or_the_plan_class_kept_before():
    former = dict((kind.hooks.former, name) for name, kind in registry.KINDS.items())
    assert former == {'KernelParams': 'kernel_params', 'HugePages': 'hugepages', 'ResourceLimits': 'resource_limits',
                      'SysfsAttributes': 'sysfs_attr', 'BlockQueue': 'block_queue', 'MountOptions': 'mount_options',
                      'DbParameter': 'db_parameter', 'ProcessorSet': 'processor_set', 'KernelCmdline': 'kernel_cmdline',
                      'DbEffect': 'db_effect'}
    for old, name in former.items():
        assert hooks.named(registry.KINDS, old) is registry.KINDS[name]
        assert hooks.named(registry.KINDS, name) is registry.KINDS[name]
    assert hooks.named(registry.KINDS, 'HostState') is None and hooks.named(registry.KINDS, None) is None


def test_only_a_database_file_waits_for_what_a_revert_cannot_undo():
    waits = dict((name, hooks.revert_waits(registry.KINDS, name)) for name in registry.KINDS)
    assert [name for name, value in waits.items() if value] == ['db_parameter']
    assert waits['db_parameter'][0] == 'pending_restart'
    assert hooks.revert_waits(registry.KINDS, 'DbParameter') == waits['db_parameter']
    assert hooks.revert_waits(registry.KINDS, None) is None


def test_a_kind_without_hooks_is_treated_as_every_kind():
    toy = registry.Kind('toy', dict, lambda options, ctx: None)
    assert toy.hooks.former is None and toy.hooks.part is None and toy.hooks.revert_waits is None
    assert toy.hooks.merged is None and toy.hooks.read_only is False
    assert toy.hooks.record_keys(Call('toy', 'role', {}), None, Setting('x')) == []


class Items(object):
    """A plan that names the devices item of each record (BlockQueue.item_of)."""

    def __init__(self, items):
        self.items = items

    def item_of(self, setting):
        return self.items.get(setting.name)


def test_a_block_queue_record_is_keyed_by_the_item_its_plan_names_not_by_its_source_text():
    devices = [{'name': ['sd*'], 'attributes': {'rq_affinity': '2'}}, {'name': ['nvme*'], 'attributes': {'rq_affinity': '1'}}]
    call = Call('block_queue', 'block_queue', {'devices': devices})
    records = [{'owner': 'block_queue', 'kind': 'block_queue', 'key': 'sd* rq_affinity', 'source': 'first'},
               {'owner': 'block_queue', 'kind': 'block_queue', 'key': 'nvme* rq_affinity', 'source': 'second'}]
    setting = Setting('nvme0n1/queue/rq_affinity', source='task option: block_queue.devices[0]')
    assert host_state.source_of(call, Items({'nvme0n1/queue/rq_affinity': 1}), setting, records) == 'second'
    # a record no one item gave: the attribute's records disagree, so the call's label
    assert host_state.source_of(call, Items({}), setting, records) == 'role block_queue: block_queue'


def test_a_call_s_own_source_is_its_records_and_a_removed_processor_set_keeps_its_role_s():
    removed = Call('kernel_params', 'kernel_params', {'params': ['kernel.panic'], 'state': 'absent'},
                   source='user: kernel_params_absent')
    assert host_state.source_of(removed, None, Setting('kernel.panic'), []) == 'user: kernel_params_absent'
    # a processor set given state: absent stands on the processor_sets record, not on a kernel_params variable
    pset = Call('processor_set', 'processor_sets', {'name': 'db', 'state': 'absent'})
    records = [{'owner': 'processor_sets', 'kind': 'processor_set', 'key': 'db', 'source': 'user: processor_sets_cpus'}]
    assert host_state.source_of(pset, None, Setting('service:postgresql.service'), records) == 'user: processor_sets_cpus'


def _kind_tests(path, tree, names):
    """Where ``tree`` compares a kind (``kind``, ``x.kind``) with one of ``names``, or reads a plan's class
    name (``type(self).__name__``, ``type(plan).__name__``, ``x.__class__.__name__``) other than to word a
    NotImplementedError (a value's type named in an error message is no kind)."""
    found = []
    words = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and 'NotImplementedError' in ast.dump(node):
            words.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left] + list(node.comparators)
            kinds = [s for s in sides if isinstance(s, ast.Name) and s.id == 'kind'
                     or isinstance(s, ast.Attribute) and s.attr == 'kind']
            texts = [s.value for s in ast.walk(node) if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            if kinds and set(texts) & names:
                found.append('%s:%d' % (path, node.lineno))
        if isinstance(node, ast.Attribute) and node.attr == '__name__' and id(node) not in words and (
                isinstance(node.value, ast.Call) and getattr(node.value.func, 'id', None) == 'type'
                and [getattr(arg, 'id', None) for arg in node.value.args] in (['self'], ['plan'])
                or isinstance(node.value, ast.Attribute) and node.value.attr == '__class__'):
            found.append('%s:%d' % (path, node.lineno))
    return found


def _module_utils_tests():
    names = set(registry.KINDS) | set(kind.hooks.former for kind in registry.KINDS.values())
    found, read = [], 0
    for folder, dummy, files in os.walk(PLUGINS):
        for name in sorted(files):
            path = os.path.join(folder, name)
            shown = os.path.relpath(path, PLUGINS).replace(os.sep, '/')
            if name.endswith('.py') and not shown.startswith(NAMING):
                with open(path) as handle:
                    found.extend(_kind_tests(shown, ast.parse(handle.read()), names))
                read += 1
    assert read > 100, 'only %d files read under %s' % (read, PLUGINS)
    return found


def test_no_code_outside_the_registry_tests_a_kind_s_name_or_its_plan_s_class():
    assert _module_utils_tests() == []


@pytest.mark.parametrize('text', ["if call.kind == 'db_parameter':\n    pass\n",
                                  "waits = kind in ('DbParameter', 'x')\n",
                                  "baseline.working_on(type(self).__name__)\n",
                                  "name = plan.__class__.__name__\n",
                                  "if type(plan).__name__ == 'x':\n    pass\n"])
def test_the_check_finds_a_test_of_a_kind_s_name(text):
    names = set(['db_parameter', 'DbParameter'])
    assert _kind_tests('x.py', ast.parse(text), names) == ['x.py:1']
    assert _kind_tests('x.py', ast.parse("raise NotImplementedError('%s.x' % type(self).__name__)\n"), names) == []
    assert _kind_tests('x.py', ast.parse("raise ValueError('got %s' % type(value).__name__)\n"), names) == []
