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
pid and start time are in ``postmaster.pid`` in the data directory, as the server writes
it: src/backend/utils/init/miscinit.c) and says whether the segment is ISM in large pages.
Only pmap and that file are read (as root), so the answer does not depend on psql.
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
    """(pid, start time in epoch seconds or None) from postmaster.pid's first and third lines
    (src/include/miscadmin.h: LOCK_FILE_LINE_PID, LOCK_FILE_LINE_START_TIME); pid None when absent."""
    lines = (text or '').split('\n')
    first = lines[0].strip()
    start = lines[2].strip() if len(lines) > 2 else ''
    return (int(first) if first.isdigit() else None), (int(start) if start.isdigit() else None)


def _unsupported(why):
    return Setting(NAME, 'pmap -xs', 'ism', None, None, UNSUPPORTED, why, source=SOURCE)


def _changed_since(paths, start):
    """The configuration files among ``paths`` written after the postmaster started."""
    found = []
    for path in paths:
        try:
            if start is not None and os.stat(path).st_mtime > start:
                found.append(path)
        except OSError:
            continue
    return found


def ism_record(plan, live, base_page=None):
    """The record: ok, drift, pending_restart (the server runs with another shared_memory_type,
    or, when psql cannot tell, its configuration changed after the postmaster started) or
    unsupported (the postmaster cannot be read), with why."""
    if plan.root != '/' or plan.runner is None:
        return _unsupported('the running server is read on the host itself only (root is %s)' % plan.root)
    # The data directory as the server finds it: data_directory in its configuration, else
    # the configuration's folder (where the engine reads postgresql.auto.conf).
    data_dir = os.path.dirname(plan.engine.auto_conf)
    try:
        with open(os.path.join(data_dir, 'postmaster.pid')) as handle:
            pid, start = postmaster_pid(handle.read())
    except (IOError, OSError) as exc:
        return _unsupported('postmaster.pid not read in %s (is the server running?): %s' % (data_dir, exc))
    if pid is None:
        return _unsupported('postmaster.pid in %s holds no pid' % data_dir)
    rc, out, err = plan.runner(['pmap', '-xs', str(pid)])
    if rc != 0 and not out:
        return _unsupported('pmap -xs %d failed: %s' % (pid, (err or '').strip()))
    page = base_page or os.sysconf('SC_PAGESIZE')
    status, read, detail = sunos_memory.ism_check(out, pid, page)
    if status == DRIFT:
        running = live.values.get('shared_memory_type')
        changed = _changed_since([plan.path, plan.engine.auto_conf], start)
        if running is not None and running.known and str(running.value).lower() != 'sysv':
            status = PENDING_RESTART
            detail += '; the server runs with shared_memory_type = %s until it restarts' % running.value
        elif (running is None or not running.known) and changed:
            status = PENDING_RESTART
            detail += '; %s changed after the postmaster started (postmaster.pid): restart it' % ', '.join(changed)
    return Setting(NAME, 'pmap -xs %d' % pid, 'ism', read, None, status, detail, source=SOURCE)
