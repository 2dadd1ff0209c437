# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: on SunOS, whether PostgreSQL's shared memory really is
Intimate Shared Memory, read from the running postmaster (seed 001).

PostgreSQL attaches its System V segments with SHM_SHARE_MMU on Solaris, which makes them
ISM (src/include/portability/mem.h, PG_SHMAT_FLAGS); since 9.3 the main shared memory is an
anonymous mmap unless ``shared_memory_type = sysv``, and only a small System V header is
left (src/backend/port/sysv_shmem.c, PGSharedMemoryCreate).  So when db_parameter sets
``shared_memory_type = sysv`` on SunOS it also reads ``pmap -xs`` of the postmaster (its
pid is the first line of ``postmaster.pid`` in the data directory, as the server writes
it: src/backend/utils/init/miscinit.c) and says whether the segment is ISM in large pages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import platforms
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    DRIFT, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans import sunos_memory

NAME = 'shared memory as ISM'
SOURCE = ('seed 001: ISM for PostgreSQL; PostgreSQL attaches System V shared memory with SHM_SHARE_MMU '
          '(src/include/portability/mem.h), and only with shared_memory_type = sysv is the main segment System V')


def wanted(plan, desired):
    """Whether this run asks PostgreSQL for System V (ISM) shared memory on SunOS."""
    return plan.engine_name == 'postgresql' and (plan.system_name or platforms.system()) == platforms.SUNOS and \
        str(desired.get('shared_memory_type', '')).lower() == 'sysv'


def postmaster_pid(text):
    """The pid on the first line of postmaster.pid, or None."""
    first = (text or '').split('\n', 1)[0].strip()
    return int(first) if first.isdigit() else None


def _unsupported(why):
    return Setting(NAME, 'pmap -xs', 'ism', None, None, UNSUPPORTED, why, source=SOURCE)


def ism_record(plan, live, base_page=None):
    """The record: ok, drift, pending_restart (the server still runs with another
    shared_memory_type) or unsupported (the postmaster cannot be read), with why."""
    if not plan.live_possible or live.reason:
        return _unsupported('the running server is not read (%s)' % (live.reason or 'read_live is false or root is set'))
    try:
        data_dir = plan.engine.data_directory()
    except OSError as exc:
        return _unsupported('data_directory not read: %s' % exc)
    try:
        with open(os.path.join(data_dir, 'postmaster.pid')) as handle:
            pid = postmaster_pid(handle.read())
    except (IOError, OSError) as exc:
        return _unsupported('postmaster.pid not read in %s: %s' % (data_dir, exc))
    if pid is None:
        return _unsupported('postmaster.pid in %s holds no pid' % data_dir)
    rc, out, err = plan.runner(['pmap', '-xs', str(pid)])
    if rc != 0 and not out:
        return _unsupported('pmap -xs %d failed: %s' % (pid, (err or '').strip()))
    page = base_page or os.sysconf('SC_PAGESIZE')
    status, read, detail = sunos_memory.ism_check(out, pid, page)
    running = live.values.get('shared_memory_type')
    if status == DRIFT and running is not None and running.known and str(running.value).lower() != 'sysv':
        status = PENDING_RESTART
        detail += '; the server runs with shared_memory_type = %s until it restarts' % running.value
    return Setting(NAME, 'pmap -xs %d' % pid, 'ism', read, None, status, detail, source=SOURCE)
