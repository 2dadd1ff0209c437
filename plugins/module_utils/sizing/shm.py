# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: sizes, pages, and THE one place that sizes shared memory.

Every shared-memory setting the collection writes (kernel.shmmax, kernel.shmall,
kernel.shmmni, vm.nr_hugepages, vm.hugetlb_shm_group, memlock, LimitMEMLOCK,
kern.ipc.*, Solaris project controls and /etc/system shminfo lines) is computed in
shm_settings() below, with the vendor rule it follows written next to it.  Roles
call it through the ``dbhost.tuning.shm_settings`` filter; nothing does unit
arithmetic in Jinja.

Units: sizes are binary, as the vendors and the kernel use them: K, KB, KiB and kB
(the /proc/meminfo spelling) all mean 1024 bytes; M = 1024 K and so on.

Pure Python, no Ansible import: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from fractions import Fraction

UNITS = {'': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4, 'P': 1024 ** 5, 'E': 1024 ** 6}
_UNIT_ORDER = ('E', 'P', 'T', 'G', 'M', 'K')
_SIZE = re.compile(r'^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[KMGTPE]?)(?:I?B)?\Z', re.IGNORECASE)
_PERCENT = re.compile(r'^(?P<number>[0-9]+(?:\.[0-9]+)?)\s*%\Z')

ENGINES = ('oracle', 'postgresql', 'mysql')
LINUX, SUNOS, FREEBSD = 'Linux', 'SunOS', 'FreeBSD'

# Linux ships SHMMNI = 4096; Oracle's minimum is the same (see shm_settings()).
LINUX_SHMMNI = 4096
# Oracle, hugepages disabled: memlock "at least 3145728 KB (3 GB)".
ORACLE_MEMLOCK_NO_HUGEPAGES_KB = 3145728
# Solaris project controls, Oracle's minimums (see shm_settings()).
SOLARIS_MAX_SHM_IDS = 100
SOLARIS_MAX_SEM_IDS = 100
SOLARIS_MAX_SEM_NSEMS = 256
SOLARIS_ETC_SYSTEM_SHMMNI = 100
GIB = 1024 ** 3


class SizingError(ValueError):
    """Bad sizing input, or a size the host cannot hold; the message names the input."""


# ------------------------------------------------------------------ parsing and rendering
def _exact_number(text):
    return Fraction(text)


def parse_size(value, ram_bytes=None, name='size'):
    """Return ``value`` in bytes (int).

    Accepts an int (bytes), a digit string, ``48G``, ``512M``, ``1.5T``, ``2048kB``,
    ``64KiB``, ``100B``, or a percentage of RAM (``40%``, needs ``ram_bytes``; the
    result is rounded down to a whole byte).  A fractional size must come to a whole
    number of bytes (``1.5K`` is 1536; ``1.3K`` is refused).
    """
    if isinstance(value, bool) or value is None:
        raise SizingError('%s: %r is not a size (use bytes, or a number with K, M, G, T, or a percentage of RAM)'
                          % (name, value))
    if isinstance(value, int):
        if value < 0:
            raise SizingError('%s: %d is negative' % (name, value))
        return value
    if isinstance(value, float):
        if value < 0 or value != int(value):
            raise SizingError('%s: %r is not a whole, non-negative number of bytes' % (name, value))
        return int(value)
    if not isinstance(value, str):
        raise SizingError('%s: %r is not a size' % (name, value))
    text = value.strip()
    percent = _PERCENT.match(text)
    if percent:
        if ram_bytes is None:
            raise SizingError('%s: %r is a percentage of RAM, but the RAM size is not known' % (name, value))
        share = _exact_number(percent.group('number'))
        if share <= 0 or share > 100:
            raise SizingError('%s: %r must be a percentage above 0 and at most 100' % (name, value))
        return int(share * int(ram_bytes) / 100)
    match = _SIZE.match(text)
    if not match:
        raise SizingError('%s: %r is not a size (examples: 48G, 512M, 1.5T, 2048kB, 17179869184, 40%%)'
                          % (name, value))
    number = _exact_number(match.group('number')) * UNITS[match.group('unit').upper()]
    if number.denominator != 1:
        raise SizingError('%s: %r is not a whole number of bytes' % (name, value))
    return int(number)


def parse_share(value, name='share'):
    """A share of a whole as a Fraction in (0, 1]: ``70%``, ``0.7``, or 70 (taken as percent)."""
    if isinstance(value, bool) or value is None:
        raise SizingError('%s: %r is not a share (use a percentage such as 70%% or a fraction such as 0.7)'
                          % (name, value))
    if isinstance(value, str):
        text = value.strip()
        percent = _PERCENT.match(text)
        try:
            share = _exact_number(percent.group('number')) / 100 if percent else _exact_number(text)
        except (ValueError, ZeroDivisionError):
            raise SizingError('%s: %r is not a share (use a percentage such as 70%% or a fraction such as 0.7)'
                              % (name, value))
    elif isinstance(value, (int, float)):
        share = Fraction(value).limit_denominator(10 ** 6)
    else:
        raise SizingError('%s: %r is not a share' % (name, value))
    if share > 1 and not (isinstance(value, str) and _PERCENT.match(value.strip())):
        share = share / 100  # a bare 70 means 70 %
    if share <= 0 or share > 1:
        raise SizingError('%s: %r must be above 0 and at most 100%%' % (name, value))
    return share


def human_size(value, precision=2):
    """Render bytes with the largest binary unit: 51539607552 -> ``48G``, 1610612736 -> ``1.5G``.

    Exact values render exactly (and parse back to the same bytes); others are
    rounded to ``precision`` decimals.
    """
    size = parse_size(value, name='human_size')
    for unit in _UNIT_ORDER:
        factor = UNITS[unit]
        if size >= factor:
            quotient = Fraction(size, factor)
            if quotient.denominator == 1:
                return '%d%s' % (quotient.numerator, unit)
            text = ('%.*f' % (int(precision), float(quotient))).rstrip('0').rstrip('.')
            return '%s%s' % (text, unit)
    return '%dB' % size


def to_pages(value, page_size, rounding='up', ram_bytes=None, name='size'):
    """How many pages of ``page_size`` hold ``value``; rounding is up, down or exact."""
    size = parse_size(value, ram_bytes=ram_bytes, name=name)
    page = parse_size(page_size, name='page_size')
    if page <= 0:
        raise SizingError('page_size: %r must be above 0' % (page_size,))
    if rounding == 'up':
        return -(-size // page)
    if rounding == 'down':
        return size // page
    if rounding == 'exact':
        if size % page:
            raise SizingError('%s: %r is not a whole number of %s pages' % (name, value, human_size(page)))
        return size // page
    raise SizingError('rounding: %r must be up, down or exact' % (rounding,))


def _round_up(size, unit):
    return -(-size // unit) * unit


def _power_of_two(number):
    return number > 0 and number & (number - 1) == 0


# ------------------------------------------------------------------ THE sizing
def _margin_pages(margin, needed_pages, hugepage_size):
    """Extra huge pages: an int is a page count, ``N%`` a share of the needed pages, a size is bytes."""
    if isinstance(margin, bool) or margin is None:
        raise SizingError('hugepages_margin: %r is not a page count, a percentage or a size' % (margin,))
    if isinstance(margin, int):
        if margin < 0:
            raise SizingError('hugepages_margin: %d is negative' % margin)
        return margin
    text = str(margin).strip()
    percent = _PERCENT.match(text)
    if percent:
        share = _exact_number(percent.group('number'))
        if share > 100:
            raise SizingError('hugepages_margin: %r is more than 100%%' % (margin,))
        extra = share * needed_pages / 100
        return -(-extra.numerator // extra.denominator)
    return to_pages(text, hugepage_size, name='hugepages_margin')


def _current_int(current, key):
    value = (current or {}).get(key)
    if value is None:
        return None
    try:
        return int(str(value).split()[0])
    except (ValueError, IndexError):
        return None


def shm_settings(engine, ram_bytes, page_size, shared_memory, hugepage_size=None, group_gid=None,
                 hugepages_cap='70%', hugepages_margin='1%', use_hugepages=True, system=LINUX,
                 numa_node=None, supported_hugepage_sizes=None, current=None, keep_higher=False,
                 etc_system=False):
    """Compute every shared-memory setting for one host and one database.

    engine: oracle | postgresql | mysql.  ram_bytes: physical memory (Linux: MemTotal).
    page_size: the base page size in bytes (4096, 16384, 65536).  shared_memory: the
    database's shared memory (Oracle SGA, PostgreSQL shared_memory_size, InnoDB buffer
    pool), a size or a percentage of RAM.  hugepage_size: huge page size (Linux; None
    disables huge pages).  group_gid: the database group's gid (vm.hugetlb_shm_group).
    hugepages_cap: most of RAM huge pages may take.  hugepages_margin: extra pages.
    current: live values ({key: value}) for keep_higher, which never lowers
    shmmax/shmall/shmmni below them (Oracle's fixup rule).

    Returns a dict: ``kernel_params`` (for dbhost.tuning.kernel_params),
    ``hugepages`` (``pages`` list for dbhost.tuning.hugepages), ``memlock_kb`` and
    ``limit_memlock`` (limits.d and systemd), ``project_attributes`` (SunOS),
    ``values`` (every computed key, flat) and ``explain`` (the formula per key).
    Raises SizingError, naming the input, for bad input or a size the host cannot hold.
    """
    # ---- input checks: all before any arithmetic that depends on them
    if engine not in ENGINES:
        raise SizingError('engine: %r is not one of %s' % (engine, ', '.join(ENGINES)))
    if system not in (LINUX, SUNOS, FREEBSD):
        raise SizingError('system: %r is not one of Linux, SunOS, FreeBSD' % (system,))
    ram = parse_size(ram_bytes, name='ram_bytes')
    if ram <= 0:
        raise SizingError('ram_bytes: the RAM size is not known (%r)' % (ram_bytes,))
    page = parse_size(page_size, name='page_size')
    if not _power_of_two(page) or page < 4096:
        raise SizingError('page_size: %r is not a base page size (a power of two, 4K or more)' % (page_size,))
    shm = parse_size(shared_memory, ram_bytes=ram, name='shared_memory')
    if shm <= 0:
        raise SizingError('shared_memory: %r must be above 0' % (shared_memory,))
    if shm >= ram:
        raise SizingError('shared_memory: %s is not less than the physical memory (%s)'
                          % (human_size(shm), human_size(ram)))
    cap = parse_share(hugepages_cap, name='hugepages_cap')
    use_hugepages = bool(use_hugepages) and system == LINUX
    hp_size = None
    if use_hugepages:
        if hugepage_size in (None, '', 0):
            raise SizingError('hugepage_size: not given and the system has no default huge page size; '
                              'give one (2M, 1G) or turn huge pages off')
        hp_size = parse_size(hugepage_size, name='hugepage_size')
        if not _power_of_two(hp_size) or hp_size <= page:
            raise SizingError('hugepage_size: %r is not a huge page size (a power of two above the %s base page)'
                              % (hugepage_size, human_size(page)))
        if supported_hugepage_sizes:
            supported = sorted(parse_size(s, name='supported_hugepage_sizes') for s in supported_hugepage_sizes)
            if hp_size not in supported:
                raise SizingError('hugepage_size: %s is not supported by this kernel (supported: %s)'
                                  % (human_size(hp_size), ', '.join(human_size(s) for s in supported)))
        if system == LINUX and (group_gid is None or isinstance(group_gid, bool)):
            raise SizingError('group_gid: the database group id is needed for vm.hugetlb_shm_group')
    if group_gid is not None:
        try:
            gid = int(group_gid)
        except (TypeError, ValueError):
            raise SizingError('group_gid: %r is not a group id' % (group_gid,))
        if isinstance(group_gid, bool) or gid < 0:
            raise SizingError('group_gid: %r is not a group id' % (group_gid,))
        group_gid = gid
    if numa_node is not None and (isinstance(numa_node, bool) or not str(numa_node).isdigit()):
        raise SizingError('numa_node: %r is not a NUMA node number' % (numa_node,))

    values = {}
    explain = {}
    kernel_params = {}
    hugepages = []
    project_attributes = {}

    # ---- huge pages (Linux)
    # Oracle Database Installation Guide for Linux, "Configuring HugePages on Linux":
    # the SGA is served from huge pages, so the pool is SGA / huge page size, rounded up,
    # plus spare pages (Oracle's hugepages_settings.sh adds one page per shared memory
    # segment); Oracle reserves at least 30 % of RAM for standard pages, so at most 70 %
    # for huge pages: the default cap.
    # PostgreSQL documentation, "Managing Kernel Resources", "Linux Huge Pages": the pages
    # needed are shared_memory_size_in_huge_pages, i.e. shared_memory_size / huge page
    # size rounded up; more if other programs use huge pages too (the margin).
    # MySQL Reference Manual, "Enabling Large Page Support": vm.nr_hugepages holds the
    # InnoDB buffer pool; vm.hugetlb_shm_group is the mysql group.
    pool_bytes = 0
    if use_hugepages:
        needed = -(-shm // hp_size)
        margin = _margin_pages(hugepages_margin, needed, hp_size)
        count = needed + margin
        pool_bytes = count * hp_size
        margin_text = '%d page%s' % (margin, '' if margin == 1 else 's')
        if pool_bytes > ram:
            raise SizingError(
                'shared_memory: %d huge pages of %s (%s for %s shared memory plus a margin of %s) '
                'exceed the physical memory (%s)'
                % (count, human_size(hp_size), human_size(pool_bytes), human_size(shm), margin_text, human_size(ram)))
        cap_bytes = int(cap * ram)
        if pool_bytes > cap_bytes:
            raise SizingError(
                'shared_memory: %d huge pages of %s (%s for %s shared memory plus a margin of %s) '
                'exceed the cap of %s%% of RAM (%s of %s); lower the shared memory or the margin, '
                'or raise hugepages_cap'
                % (count, human_size(hp_size), human_size(pool_bytes), human_size(shm), margin_text,
                   _percent_text(cap), human_size(cap_bytes), human_size(ram)))
        entry = {'size': hp_size, 'count': count}
        if numa_node is not None:
            entry['node'] = int(numa_node)
        hugepages.append(entry)
        values['vm.nr_hugepages'] = count
        explain['vm.nr_hugepages'] = ('ceil(%d / %d) = %d pages for the shared memory + %d margin = %d (%s)'
                                      % (shm, hp_size, needed, margin, count, human_size(pool_bytes)))
        values['hugepages_needed'] = needed
        values['hugepages_margin'] = margin
        values['hugepage_size'] = hp_size

    # The unit the database's segment is rounded to: the huge page when it uses them.
    segment = _round_up(shm, hp_size or page)

    # ---- shmmax / shmall / shmmni (Linux, FreeBSD; Solaris 9 /etc/system)
    # Oracle Database Installation Guide for Linux, "Minimum Parameter Settings for
    # Installation": shmmax = half the physical memory, in bytes (11g: and at most one byte
    # less than it); shmall >= shmmax, in pages of the base page size; shmmni = 4096.  A
    # larger SGA would be split into several segments, so shmmax is also raised to hold
    # the whole (rounded) segment.  The same guide: a value already higher is not lowered.
    # PostgreSQL "Managing Kernel Resources", table "System V IPC Parameters": SHMMAX at
    # least the segment; SHMALL = ceil(SHMMAX / PAGE_SIZE) when counted in pages, plus room
    # for other applications (the whole huge page pool here).
    shmmax = min(max(ram // 2, segment), ram - 1)
    shmall = -(-max(shmmax, pool_bytes) // page)
    shmmni = LINUX_SHMMNI
    if keep_higher:
        prefix = 'kern.ipc.' if system == FREEBSD else 'kernel.'
        live_max, live_all = _current_int(current, prefix + 'shmmax'), _current_int(current, prefix + 'shmall')
        live_mni = _current_int(current, 'kernel.shmmni')
        shmmax = max(shmmax, live_max or 0)
        shmall = max(shmall, live_all or 0)
        shmmni = max(shmmni, live_mni or 0)
    shm_explain = ('max(RAM / 2 = %d, shared memory rounded to %s = %d), below RAM'
                   % (ram // 2, human_size(hp_size or page), segment))
    all_explain = 'ceil(max(shmmax, huge page pool %d) / page size %d)' % (pool_bytes, page)

    if system == LINUX:
        kernel_params['kernel.shmmax'] = shmmax
        kernel_params['kernel.shmall'] = shmall
        kernel_params['kernel.shmmni'] = shmmni
        explain['kernel.shmmax'] = shm_explain
        explain['kernel.shmall'] = all_explain
        explain['kernel.shmmni'] = 'Oracle minimum and Linux default: 4096 segments'
        if use_hugepages:
            # Linux Documentation/admin-guide/sysctl/vm.rst, hugetlb_shm_group: the group
            # allowed to create SysV shared memory segments with huge pages (SHM_HUGETLB);
            # MySQL's guide sets it to the mysql group, Oracle's to the oinstall/dba group.
            kernel_params['vm.hugetlb_shm_group'] = group_gid
            explain['vm.hugetlb_shm_group'] = 'gid of the database group'
    elif system == FREEBSD:
        # PostgreSQL "Managing Kernel Resources", FreeBSD: kern.ipc.shmall is in pages
        # (4 kB on most platforms) and kern.ipc.shmmax in bytes; kern.ipc.shm_use_phys=1
        # keeps SysV shared memory in RAM (never paged out).  FreeBSD has no huge page
        # pool: superpages are transparent.  kern.ipc.shmmni is a boot-time tunable, not
        # set here.
        kernel_params['kern.ipc.shmmax'] = shmmax
        kernel_params['kern.ipc.shmall'] = shmall
        kernel_params['kern.ipc.shm_use_phys'] = 1
        explain['kern.ipc.shmmax'] = shm_explain
        explain['kern.ipc.shmall'] = all_explain
        explain['kern.ipc.shm_use_phys'] = 'keep SysV shared memory in RAM'
    else:
        # Oracle Database Installation Guide for Oracle Solaris, "Minimum Parameter Settings
        # for Installation" and "Requirements for Shared Memory Resources":
        # project.max-shm-memory is half of RAM for 1-16 GB, at least 8 GB above 16 GB, and
        # must hold the sum of the instances' shared memory; project.max-shm-ids 100,
        # project.max-sem-ids 100, process.max-sem-nsems 256.  Solaris 10 and later need
        # no /etc/system IPC lines; Solaris 9 reads shmsys:shminfo_* from /etc/system,
        # written only when asked (etc_system).
        floor_bytes = ram // 2 if ram <= 16 * GIB else 8 * GIB
        max_shm_memory = max(floor_bytes, _round_up(shm, page))
        values['project.max-shm-memory'] = max_shm_memory
        explain['project.max-shm-memory'] = ('max(%s = %d, shared memory rounded to the page = %d)'
                                             % ('RAM / 2' if ram <= 16 * GIB else '8 GB', floor_bytes,
                                                _round_up(shm, page)))
        project_attributes['project.max-shm-memory'] = '(privileged,%d,deny)' % max_shm_memory
        project_attributes['project.max-shm-ids'] = '(privileged,%d,deny)' % SOLARIS_MAX_SHM_IDS
        values['project.max-shm-ids'] = SOLARIS_MAX_SHM_IDS
        if engine == 'oracle':
            project_attributes['project.max-sem-ids'] = '(privileged,%d,deny)' % SOLARIS_MAX_SEM_IDS
            project_attributes['process.max-sem-nsems'] = '(privileged,%d,deny)' % SOLARIS_MAX_SEM_NSEMS
            values['project.max-sem-ids'] = SOLARIS_MAX_SEM_IDS
            values['process.max-sem-nsems'] = SOLARIS_MAX_SEM_NSEMS
        if etc_system:
            # Oracle Database Installation Guide 10g for Solaris: shmsys:shminfo_shmmax as
            # large as the SGA (here the same rule as shmmax above), shminfo_shmmni 100.
            kernel_params['shmsys:shminfo_shmmax'] = shmmax
            kernel_params['shmsys:shminfo_shmmni'] = SOLARIS_ETC_SYSTEM_SHMMNI
            explain['shmsys:shminfo_shmmax'] = shm_explain
            explain['shmsys:shminfo_shmmni'] = 'Oracle minimum: 100'
    values.update(kernel_params)

    # ---- memlock (Linux: limits.d in KB, systemd LimitMEMLOCK in bytes)
    # Oracle Database Installation Guide for Linux, "Checking Resource Limits for Oracle
    # Software Installation Users" and "Configuring HugePages on Linux": memlock at least
    # 90 % of the current RAM when HugePages are used (64 GB -> 60397977 KB), at least
    # 3145728 KB (3 GB) without them.  It never stays below the huge page pool, so the
    # whole SGA can be locked.
    # MySQL Reference Manual, "Enabling Large Page Support": memlock unlimited for mysql.
    # PostgreSQL: the docs ask for no memlock (it maps its huge pages with MAP_HUGETLB);
    # with huge pages we set it to the pool size so that shared_memory_type=sysv segments
    # with SHM_HUGETLB also work for a user outside vm.hugetlb_shm_group (the kernel
    # charges those against RLIMIT_MEMLOCK).
    memlock_kb = None
    if system == LINUX:
        pool_kb = -(-pool_bytes // 1024)
        if engine == 'oracle':
            if use_hugepages:
                memlock_kb = max(ram * 9 // 10 // 1024, pool_kb)
                explain['memlock'] = 'max(floor(90%% of RAM in KB) = %d, huge page pool in KB = %d)' % (
                    ram * 9 // 10 // 1024, pool_kb)
            else:
                memlock_kb = ORACLE_MEMLOCK_NO_HUGEPAGES_KB
                explain['memlock'] = 'Oracle minimum without HugePages: 3145728 KB'
        elif engine == 'mysql':
            if use_hugepages:
                memlock_kb = 'unlimited'
                explain['memlock'] = 'MySQL large pages: unlimited'
        elif use_hugepages:
            memlock_kb = pool_kb
            explain['memlock'] = 'huge page pool in KB: %d' % pool_kb
    if memlock_kb is None:
        limit_memlock = None
    elif memlock_kb == 'unlimited':
        limit_memlock = 'infinity'
    else:
        limit_memlock = str(memlock_kb * 1024)
    values['memlock_kb'] = memlock_kb
    values['limit_memlock'] = limit_memlock

    return {
        'engine': engine,
        'system': system,
        'ram_bytes': ram,
        'page_size': page,
        'hugepage_size': hp_size,
        'shared_memory_bytes': shm,
        'kernel_params': kernel_params,
        'hugepages': hugepages,
        'hugepages_bytes': pool_bytes,
        'memlock_kb': memlock_kb,
        'limit_memlock': limit_memlock,
        'project_attributes': project_attributes,
        'values': values,
        'explain': explain,
    }


def shm_settings_from_facts(facts, engine, shared_memory, group_gid=None, hugepage_size=None, hugepages_cap='70%',
                            hugepages_margin='1%', use_hugepages=True, numa_node=None, keep_higher=False,
                            etc_system=False, ram_bytes=None, page_size=None, system=None):
    """shm_settings() for a host described by its ``dbhost`` facts (host_facts' memory, hugepages, shm)."""
    if not isinstance(facts, dict):
        raise SizingError('the input must be the dbhost facts (ansible_facts.dbhost), got %r'
                          % (type(facts).__name__,))
    memory = facts.get('memory') or {}
    system = system or facts.get('system') or LINUX
    ram = ram_bytes if ram_bytes is not None else memory.get('total_bytes')
    if ram is None:
        raise SizingError('the RAM size is not in the facts (memory.total_bytes); gather the memory subset '
                          'with dbhost.tuning.host_facts or pass ram_bytes')
    page = page_size if page_size is not None else memory.get('page_size')
    if page is None:
        raise SizingError('the page size is not in the facts (memory.page_size); pass page_size')
    if hugepage_size in (None, '', 'default'):
        hugepage_size = memory.get('hugepage_default_bytes')
    return shm_settings(
        engine, ram, page, shared_memory, hugepage_size=hugepage_size, group_gid=group_gid,
        hugepages_cap=hugepages_cap, hugepages_margin=hugepages_margin, use_hugepages=use_hugepages,
        system=system, numa_node=numa_node, supported_hugepage_sizes=_hugepage_sizes(facts),
        current=facts.get('shm'), keep_higher=keep_higher, etc_system=etc_system)


def _hugepage_sizes(facts):
    """The huge page sizes this kernel offers: host_facts' hugepages subset is keyed by size in bytes."""
    pools = facts.get('hugepages') or {}
    return [int(size) for size in pools] or None


def _percent_text(share):
    text = ('%.2f' % float(share * 100)).rstrip('0').rstrip('.')
    return text
