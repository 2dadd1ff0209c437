# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a Linux processor set against the CPUs the kernel command line isolates.

``isolcpus=`` (with the ``domain`` flag, its default) takes CPUs out of the scheduler's load
balancing: the processes of a set bound to several such CPUs are not spread across them, each
stays on the CPU it was placed on (Linux Documentation/admin-guide/kernel-parameters.txt,
isolcpus).  A set that overlaps them is reported ``shadowed``: the boot parameter undoes what
the binding is for.  ``nohz_full=`` (and ``isolcpus=nohz``) only stops the scheduler tick on a
CPU that runs one task: said in the detail, not a conflict.  The running line (/proc/cmdline) and
the next boot's (formats/cmdline.py) are both read; a set without either parameter gets no record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import numa
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import OK, Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import cmdline

RECORD = 'isolated CPUs'
# what TuneD's bootloader plugin (cpu-partitioning and other profiles) adds to every boot entry
TUNED_BOOTCMDLINE = '/etc/tuned/bootcmdline'


def _lines(root):
    """[(when, BootLine)]: the running line and the next boot's, once when they are the same, and
    what TuneD's bootloader plugin adds to the boot entries (/etc/tuned/bootcmdline)."""
    running, boot = cmdline.running(root), cmdline.next_boot(root)
    found = [('running', running)] if running is not None else []
    if boot is not None and (running is None or boot.source != running.source):
        found.append(('at boot', boot))
    tuned_text = cmdline.grub_variables([cmdline.read_under(root, TUNED_BOOTCMDLINE)]).get('TUNED_BOOT_CMDLINE')
    if tuned_text:
        found.append(('at boot', cmdline.BootLine(tuned_text, '%s (TUNED_BOOT_CMDLINE)' % TUNED_BOOTCMDLINE)))
    return found


def _word(name, value):
    return '%s=%s' % (name, value)


def _raw(line, name):
    value = None
    for param, text in line.params:
        if param == name and text:
            value = text
    return value


def _side(cpus, when, line):
    """(isolated CPUs of the set or None, [details]) of one command line."""
    try:
        found = line.isolation()
    except cmdline.CmdlineError as exc:
        return None, ['%s, %s: %s' % (cmdline.label(line), when, exc)]
    if found['isolcpus'] is None and found['nohz_full'] is None:
        return '', []
    ours, details = set(cpus), []
    isolated, overlap = [], []
    if found['isolcpus'] is not None:
        iso_cpus, flags = found['isolcpus']
        if 'domain' in flags:
            isolated = iso_cpus
            overlap = sorted(ours.intersection(iso_cpus))
        where = '%s in %s (%s)' % (_word('isolcpus', _raw(line, 'isolcpus')), cmdline.label(line), when)
        if overlap:
            details.append('CPUs %s of the set are isolated by %s: the scheduler does not balance the set\'s '
                           'processes across them, each stays on the CPU it is placed on'
                           % (numa.render_cpu_list(overlap), where))
        elif isolated:
            details.append('%s isolates CPUs %s, none of the set\'s' % (where, numa.render_cpu_list(isolated)))
    tickless = set(found['nohz_full'].cpus if found['nohz_full'] else [])
    if found['isolcpus'] is not None and 'nohz' in found['isolcpus'].flags:
        tickless.update(found['isolcpus'].cpus)
    if ours.intersection(tickless):
        details.append('CPUs %s of the set run without the scheduler tick (%s, %s): meant for one busy task per CPU'
                       % (numa.render_cpu_list(ours.intersection(tickless)), cmdline.label(line), when))
    return (numa.render_cpu_list(overlap) if overlap else ''), details


def isolation_record(name, cpus, root, gate):
    """The ``isolated CPUs`` record of set ``name`` (its ``cpus``), or None without isolcpus= or
    nohz_full= on the running or the next boot's command line; ``gate``: the run's (engine/gate.py)."""
    sides, details, boot_source = {}, [], None
    for when, line in _lines(root):
        overlap, said = _side(cpus, when, line)
        details.extend(said)
        if overlap is not None:
            sides[when] = overlap
        if when == 'at boot' or boot_source is None:
            boot_source = cmdline.label(line)
    if not details:
        return None
    conflict = [value for value in sides.values() if value]
    status = gate.status(None, None, shadowed=True) if conflict else OK
    live = sides.get('running')
    reason = 'shadowed: CPUs %s isolated by isolcpus=' % conflict[-1] if conflict else None
    return Setting(RECORD, boot_source, numa.render_cpu_list(cpus), live,
                   sides.get('at boot', live), status, '; '.join(details), reason=reason)
