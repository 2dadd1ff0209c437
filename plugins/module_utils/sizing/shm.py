# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: THE one place that sizes shared memory.

Every shared-memory setting the collection writes (kernel.shmmax, kernel.shmall,
kernel.shmmni, vm.nr_hugepages, vm.hugetlb_shm_group, memlock, LimitMEMLOCK,
kern.ipc.*, Solaris project controls and /etc/system shminfo lines) is computed in
shm_settings() below, one named step per group of settings, with the vendor rule each
follows written next to it.  Roles call it through the ``dbhost.tuning.shm_settings``
filter; nothing does unit arithmetic in Jinja.  Sizes are parsed and rendered by
sizing/units.py (binary units: K = 1024).

One name per quantity, from the input to the result: ``shared_memory`` is the input
(a size or a share of RAM, the role's shared_memory_size), ``shared_memory_bytes`` the
same in bytes; ``hugepages`` is the list of huge page pools ({size, count[, node]}, the
hugepages module's ``pages``) and ``hugepages_bytes`` their size; ``hugepage_size`` is
one huge page in bytes, ``page_size`` one base page.

Pure Python, no Ansible import: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.sizing.units import (
    SizingError, human_size, parse_share, parse_size, percent_number, percent_text, power_of_two, round_up,
    to_pages)

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
# The shares below (hugepages_cap, hugepages_margin, shared_memory_cap) have no default here:
# their one default, and its reason, is the shared_memory role's (defaults/main.yml), which the
# role, host_state and the shm_settings filter all pass.


# ------------------------------------------------------------------ the inputs
# What shm_settings() sizes for: the database (engine, shared_memory: a size or a share of RAM) and
# the sizing's choices, named as the shm_settings filter's options (plugins/filter/shm_settings.yml).
ShmRequest = namedtuple('ShmRequest', 'engine shared_memory hugepage_size group_gid hugepages_cap hugepages_margin '
                                      'use_hugepages numa_node keep_higher etc_system shared_memory_cap')
ShmRequest.__new__.__defaults__ = (None, None, None, None, True, None, False, False, None)
# The machine it sizes: RAM and base page in bytes, its system, the huge page sizes its kernel has
# (None: not known, any power of two) and its live shared-memory values (``current``, for keep_higher).
ShmMachine = namedtuple('ShmMachine', 'ram_bytes page_size system supported_hugepage_sizes current')
ShmMachine.__new__.__defaults__ = (LINUX, None, None)


def request(engine, shared_memory, **options):
    """The ShmRequest of ``engine`` and ``shared_memory`` with ``options``; an option it has not is refused by name."""
    unknown = sorted(set(options) - set(ShmRequest._fields))
    if unknown:
        raise SizingError('unknown option(s) %s: not one of %s'
                          % (', '.join(unknown), ', '.join(ShmRequest._fields[2:])))
    return ShmRequest(engine, shared_memory, **options)


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
    share = percent_number(text)
    if share is not None:
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


class ShmHost(object):
    """The checked inputs of shm_settings(), sizes in bytes.

    Each attribute is named as the result key that carries it (``ram_bytes``, ``page_size``,
    ``hugepage_size``, ``shared_memory_bytes``), so one quantity has one name from the
    input to the result.  ``hugepage_size`` is None when no huge page pool is sized.
    """

    def __init__(self, engine, system, ram_bytes, page_size, shared_memory_bytes, hugepages_cap,
                 use_hugepages, hugepage_size, group_gid, numa_node):
        self.engine = engine
        self.system = system
        self.ram_bytes = ram_bytes
        self.page_size = page_size
        self.shared_memory_bytes = shared_memory_bytes
        self.hugepages_cap = hugepages_cap
        self.use_hugepages = use_hugepages
        self.hugepage_size = hugepage_size
        self.group_gid = group_gid
        self.numa_node = numa_node


def check_inputs(machine, wanted):
    """Every input check of shm_settings() (a ShmMachine, a ShmRequest), before any arithmetic that
    depends on them: a ShmHost."""
    engine, shared_memory, system = wanted.engine, wanted.shared_memory, machine.system
    ram_bytes, page_size, group_gid = machine.ram_bytes, machine.page_size, wanted.group_gid
    if engine not in ENGINES:
        raise SizingError('engine: %r is not one of %s' % (engine, ', '.join(ENGINES)))
    if system not in (LINUX, SUNOS, FREEBSD):
        raise SizingError('system: %r is not one of Linux, SunOS, FreeBSD' % (system,))
    ram = parse_size(ram_bytes, name='ram_bytes')
    if ram <= 0:
        raise SizingError('ram_bytes: the RAM size is not known (%r)' % (ram_bytes,))
    page = parse_size(page_size, name='page_size')
    if not power_of_two(page) or page < 4096:
        raise SizingError('page_size: %r is not a base page size (a power of two, 4K or more)' % (page_size,))
    shared_memory_bytes = parse_size(shared_memory, ram_bytes=ram, name='shared_memory')
    if shared_memory_bytes <= 0:
        raise SizingError('shared_memory: %r must be above 0' % (shared_memory,))
    if shared_memory_bytes >= ram:
        raise SizingError('shared_memory: %s is not less than the physical memory (%s)'
                          % (human_size(shared_memory_bytes), human_size(ram)))
    cap = parse_share(wanted.hugepages_cap, name='hugepages_cap')
    use_hugepages = bool(wanted.use_hugepages) and system == LINUX
    if not use_hugepages:
        _check_cap(shared_memory_bytes, ram, parse_share(wanted.shared_memory_cap, name='shared_memory_cap'))
    hugepage_bytes = None
    if use_hugepages:
        hugepage_bytes = _checked_hugepage_size(wanted.hugepage_size, page, machine.supported_hugepage_sizes)
        if system == LINUX and (group_gid is None or isinstance(group_gid, bool)):
            raise SizingError('group_gid: the database group id is needed for vm.hugetlb_shm_group')
    if group_gid is not None:
        group_gid = _checked_gid(group_gid)
    numa_node = wanted.numa_node
    if numa_node is not None and (isinstance(numa_node, bool) or not str(numa_node).isdigit()):
        raise SizingError('numa_node: %r is not a NUMA node number' % (numa_node,))
    return ShmHost(engine, system, ram, page, shared_memory_bytes, cap, use_hugepages, hugepage_bytes,
                   group_gid, numa_node)


def _check_cap(shared_memory_bytes, ram, cap):
    """Shared memory in standard pages: refused above ``cap`` of RAM (shared_memory_cap)."""
    cap_bytes = int(cap * ram)
    if shared_memory_bytes > cap_bytes:
        raise SizingError(
            'shared_memory: %s without huge pages is more than the cap of %s%% of RAM (%s of %s); the '
            'kernel, the page tables and every other process need the rest. Lower the shared memory, '
            'use huge pages, or raise shared_memory_cap'
            % (human_size(shared_memory_bytes), percent_text(cap), human_size(cap_bytes), human_size(ram)))


def _checked_hugepage_size(hugepage_size, page_size, supported_hugepage_sizes):
    """The huge page size in bytes: a power of two above the base page, one the kernel offers."""
    if hugepage_size in (None, '', 0):
        raise SizingError('hugepage_size: not given and the system has no default huge page size; '
                          'give one (2M, 1G) or turn huge pages off')
    size = parse_size(hugepage_size, name='hugepage_size')
    if not power_of_two(size) or size <= page_size:
        raise SizingError('hugepage_size: %r is not a huge page size (a power of two above the %s base page)'
                          % (hugepage_size, human_size(page_size)))
    if supported_hugepage_sizes:
        supported = sorted(parse_size(s, name='supported_hugepage_sizes') for s in supported_hugepage_sizes)
        if size not in supported:
            raise SizingError('hugepage_size: %s is not supported by this kernel (supported: %s)'
                              % (human_size(size), ', '.join(human_size(s) for s in supported)))
    return size


def _checked_gid(group_gid):
    try:
        gid = int(group_gid)
    except (TypeError, ValueError):
        raise SizingError('group_gid: %r is not a group id' % (group_gid,))
    if isinstance(group_gid, bool) or gid < 0:
        raise SizingError('group_gid: %r is not a group id' % (group_gid,))
    return gid


def hugepage_pool(host, hugepages_margin, values, explain):
    """The huge page pool (Linux): ``(hugepages, hugepages_bytes)``, filling ``values`` and ``explain``.

    ``hugepages`` is the list of pools ({size, count[, node]}, the hugepages module's
    ``pages``), empty without huge pages; ``hugepages_bytes`` is the pool's size (0 without).
    """
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
    if not host.use_hugepages:
        return [], 0
    ram, hugepage_size, shared_memory_bytes = host.ram_bytes, host.hugepage_size, host.shared_memory_bytes
    needed = -(-shared_memory_bytes // hugepage_size)
    margin = _margin_pages(hugepages_margin, needed, hugepage_size)
    count = needed + margin
    hugepages_bytes = count * hugepage_size
    margin_text = '%d page%s' % (margin, '' if margin == 1 else 's')
    if hugepages_bytes > ram:
        raise SizingError(
            'shared_memory: %d huge pages of %s (%s for %s shared memory plus a margin of %s) '
            'exceed the physical memory (%s)'
            % (count, human_size(hugepage_size), human_size(hugepages_bytes), human_size(shared_memory_bytes),
               margin_text, human_size(ram)))
    cap_bytes = int(host.hugepages_cap * ram)
    if hugepages_bytes > cap_bytes:
        raise SizingError(
            'shared_memory: %d huge pages of %s (%s for %s shared memory plus a margin of %s) '
            'exceed the cap of %s%% of RAM (%s of %s); lower the shared memory or the margin, '
            'or raise hugepages_cap'
            % (count, human_size(hugepage_size), human_size(hugepages_bytes), human_size(shared_memory_bytes),
               margin_text, percent_text(host.hugepages_cap), human_size(cap_bytes), human_size(ram)))
    pool = {'size': hugepage_size, 'count': count}
    if host.numa_node is not None:
        pool['node'] = int(host.numa_node)
    values['vm.nr_hugepages'] = count
    explain['vm.nr_hugepages'] = ('ceil(%d / %d) = %d pages for the shared memory + %d margin = %d (%s)'
                                  % (shared_memory_bytes, hugepage_size, needed, margin, count,
                                     human_size(hugepages_bytes)))
    values['hugepages_needed'] = needed
    values['hugepages_margin'] = margin
    values['hugepage_size'] = hugepage_size
    return [pool], hugepages_bytes


def shm_limits(host, hugepages_bytes, current=None, keep_higher=False):
    """shmmax (bytes), shmall (base pages) and shmmni (segments), with their explanations.

    Returns ``({'shmmax', 'shmall', 'shmmni'}, {'shmmax', 'shmall'} explanations)``.
    """
    # Oracle Database Installation Guide for Linux, "Minimum Parameter Settings for
    # Installation": shmmax = half the physical memory, in bytes (11g: and at most one byte
    # less than it); shmall >= shmmax, in pages of the base page size; shmmni = 4096.  A
    # larger SGA would be split into several segments, so shmmax is also raised to hold
    # the whole (rounded) segment.  The same guide: a value already higher is not lowered.
    # PostgreSQL "Managing Kernel Resources", table "System V IPC Parameters": SHMMAX at
    # least the segment; SHMALL = ceil(SHMMAX / PAGE_SIZE) when counted in pages, plus room
    # for other applications (the whole huge page pool here).
    ram, page = host.ram_bytes, host.page_size
    # The unit the database's segment is rounded to: the huge page when it uses them.
    segment_unit = host.hugepage_size or page
    segment = round_up(host.shared_memory_bytes, segment_unit)
    shmmax = min(max(ram // 2, segment), ram - 1)
    shmall = -(-max(shmmax, hugepages_bytes) // page)
    shmmni = LINUX_SHMMNI
    if keep_higher:
        prefix = 'kern.ipc.' if host.system == FREEBSD else 'kernel.'
        live_max, live_all = _current_int(current, prefix + 'shmmax'), _current_int(current, prefix + 'shmall')
        live_mni = _current_int(current, 'kernel.shmmni')
        shmmax = max(shmmax, live_max or 0)
        shmall = max(shmall, live_all or 0)
        shmmni = max(shmmni, live_mni or 0)
    explain = {
        'shmmax': ('max(RAM / 2 = %d, shared memory rounded to %s = %d), below RAM'
                   % (ram // 2, human_size(segment_unit), segment)),
        'shmall': 'ceil(max(shmmax, huge page pool %d) / page size %d)' % (hugepages_bytes, page),
    }
    return {'shmmax': shmmax, 'shmall': shmall, 'shmmni': shmmni}, explain


def _linux_kernel_params(host, limits, limits_explain, kernel_params, explain):
    kernel_params['kernel.shmmax'] = limits['shmmax']
    kernel_params['kernel.shmall'] = limits['shmall']
    kernel_params['kernel.shmmni'] = limits['shmmni']
    explain['kernel.shmmax'] = limits_explain['shmmax']
    explain['kernel.shmall'] = limits_explain['shmall']
    explain['kernel.shmmni'] = 'the Linux default SHMMNI, 4096 segments (Oracle\'s minimum too)'
    if host.use_hugepages:
        # Linux Documentation/admin-guide/sysctl/vm.rst, hugetlb_shm_group: the group
        # allowed to create SysV shared memory segments with huge pages (SHM_HUGETLB);
        # MySQL's guide sets it to the mysql group, Oracle's to the oinstall/dba group.
        kernel_params['vm.hugetlb_shm_group'] = host.group_gid
        explain['vm.hugetlb_shm_group'] = 'gid of the database group' if host.group_gid else \
            'gid 0 (the root group), asked by name: only members of that group may create huge page shared memory'


def _freebsd_kernel_params(limits, limits_explain, kernel_params, explain):
    # PostgreSQL "Managing Kernel Resources", FreeBSD: kern.ipc.shmall is in pages
    # (4 kB on most platforms) and kern.ipc.shmmax in bytes; kern.ipc.shm_use_phys=1
    # keeps SysV shared memory in RAM (never paged out).  FreeBSD has no huge page
    # pool: superpages are transparent.  kern.ipc.shmmni is a boot-time tunable, not
    # set here.
    kernel_params['kern.ipc.shmmax'] = limits['shmmax']
    kernel_params['kern.ipc.shmall'] = limits['shmall']
    kernel_params['kern.ipc.shm_use_phys'] = 1
    explain['kern.ipc.shmmax'] = limits_explain['shmmax']
    explain['kern.ipc.shmall'] = limits_explain['shmall']
    explain['kern.ipc.shm_use_phys'] = 'keep SysV shared memory in RAM'


def _solaris_settings(host, limits, limits_explain, etc_system, kernel_params, values, explain):
    """The Solaris project controls (returned, {name: value}) and, with etc_system, the /etc/system lines."""
    # Oracle Database Installation Guide for Oracle Solaris, "Minimum Parameter Settings
    # for Installation" and "Requirements for Shared Memory Resources":
    # project.max-shm-memory is half of RAM for 1-16 GB, at least 8 GB above 16 GB, and
    # must hold the sum of the instances' shared memory; project.max-shm-ids 100,
    # project.max-sem-ids 100, process.max-sem-nsems 256.  Solaris 10 and later need
    # no /etc/system IPC lines; Solaris 9 reads shmsys:shminfo_* from /etc/system,
    # written only when asked (etc_system).
    ram = host.ram_bytes
    project_attributes = {}
    floor_bytes = ram // 2 if ram <= 16 * GIB else 8 * GIB
    segment = round_up(host.shared_memory_bytes, host.page_size)
    max_shm_memory = max(floor_bytes, segment)
    values['project.max-shm-memory'] = max_shm_memory
    explain['project.max-shm-memory'] = ('max(%s = %d, shared memory rounded to the page = %d)'
                                         % ('RAM / 2' if ram <= 16 * GIB else '8 GB', floor_bytes, segment))
    project_attributes['project.max-shm-memory'] = '(privileged,%d,deny)' % max_shm_memory
    project_attributes['project.max-shm-ids'] = '(privileged,%d,deny)' % SOLARIS_MAX_SHM_IDS
    values['project.max-shm-ids'] = SOLARIS_MAX_SHM_IDS
    if host.engine == 'oracle':
        project_attributes['project.max-sem-ids'] = '(privileged,%d,deny)' % SOLARIS_MAX_SEM_IDS
        project_attributes['process.max-sem-nsems'] = '(privileged,%d,deny)' % SOLARIS_MAX_SEM_NSEMS
        values['project.max-sem-ids'] = SOLARIS_MAX_SEM_IDS
        values['process.max-sem-nsems'] = SOLARIS_MAX_SEM_NSEMS
    if etc_system:
        # Oracle Database Installation Guide 10g for Solaris: shmsys:shminfo_shmmax as
        # large as the SGA (here the same rule as shmmax above), shminfo_shmmni 100.
        kernel_params['shmsys:shminfo_shmmax'] = limits['shmmax']
        kernel_params['shmsys:shminfo_shmmni'] = SOLARIS_ETC_SYSTEM_SHMMNI
        # On Solaris 10 and later both are obsolete (uts/common/os/shm.c): the kernel reads them
        # only to set the defaults of the project controls at boot (os/project.c, project_init):
        # project.max-shm-ids from shminfo_shmmni, and project.max-shm-memory (and with it
        # project.max-locked-memory) to shmmni x shmmax when that is more than a quarter of RAM.
        effect = ('obsolete on Solaris 10 and later: only sets the boot-time default of project.max-shm-memory '
                  '(and project.max-locked-memory) to shminfo_shmmni x shminfo_shmmax when above RAM / 4 '
                  '(os/project.c); the project controls written here are what counts')
        explain['shmsys:shminfo_shmmax'] = '%s; %s' % (limits_explain['shmmax'], effect)
        explain['shmsys:shminfo_shmmni'] = ('Oracle minimum: 100; obsolete on Solaris 10 and later: only the '
                                            'boot-time default of project.max-shm-ids and, with shmmax, of '
                                            'project.max-shm-memory (os/project.c)')
    return project_attributes


def memlock(host, hugepages_bytes, explain):
    """``(memlock_kb, limit_memlock)``: limits.d memlock in KB (or unlimited) and systemd LimitMEMLOCK.

    Both are None when the engine needs no memlock (any system but Linux, or no huge pages
    for PostgreSQL and MySQL).
    """
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
    if host.system == LINUX:
        hugepages_kb = -(-hugepages_bytes // 1024)
        if host.engine == 'oracle':
            if host.use_hugepages:
                ram_share_kb = host.ram_bytes * 9 // 10 // 1024
                memlock_kb = max(ram_share_kb, hugepages_kb)
                explain['memlock'] = 'max(floor(90%% of RAM in KB) = %d, huge page pool in KB = %d)' % (
                    ram_share_kb, hugepages_kb)
            else:
                memlock_kb = ORACLE_MEMLOCK_NO_HUGEPAGES_KB
                explain['memlock'] = 'Oracle minimum without HugePages: 3145728 KB'
        elif host.engine == 'mysql':
            if host.use_hugepages:
                memlock_kb = 'unlimited'
                explain['memlock'] = 'MySQL large pages: unlimited'
        elif host.use_hugepages:
            memlock_kb = hugepages_kb
            explain['memlock'] = 'huge page pool in KB: %d' % hugepages_kb
    if memlock_kb is None:
        limit_memlock = None
    elif memlock_kb == 'unlimited':
        limit_memlock = 'infinity'
    else:
        limit_memlock = str(memlock_kb * 1024)
    return memlock_kb, limit_memlock


def shm_settings(machine, wanted):
    """Compute every shared-memory setting for one host (a ShmMachine) and one database (a ShmRequest).

    machine: ram_bytes, physical memory (Linux: MemTotal); page_size, the base page size in
    bytes (4096, 16384, 65536); system; supported_hugepage_sizes; current, live values
    ({key: value}) for keep_higher, which never lowers shmmax/shmall/shmmni below them
    (Oracle's fixup rule).
    wanted: engine, oracle | postgresql | mysql; shared_memory, the database's shared memory
    (Oracle SGA, PostgreSQL shared_memory_size, InnoDB buffer pool), a size or a percentage of
    RAM; hugepage_size, huge page size (Linux; None disables huge pages); group_gid, the
    database group's gid (vm.hugetlb_shm_group); hugepages_cap, most of RAM huge pages may
    take; hugepages_margin, extra pages; shared_memory_cap, most of RAM shared memory may take
    without huge pages; use_hugepages, numa_node, keep_higher, etc_system.

    Returns a dict: ``kernel_params`` (for dbhost.tuning.kernel_params),
    ``hugepages`` (``pages`` list for dbhost.tuning.hugepages), ``memlock_kb`` and
    ``limit_memlock`` (limits.d and systemd), ``project_attributes`` (SunOS),
    ``values`` (every computed key, flat) and ``explain`` (the formula per key).
    Raises SizingError, naming the input, for bad input or a size the host cannot hold.

    The steps, each with its vendor rule: check_inputs, hugepage_pool, shm_limits, the
    platform's kernel parameters (Linux, FreeBSD; Solaris project controls and
    /etc/system), memlock.
    """
    host = check_inputs(machine, wanted)
    values, explain, kernel_params, project_attributes = {}, {}, {}, {}
    hugepages, hugepages_bytes = hugepage_pool(host, wanted.hugepages_margin, values, explain)
    limits, limits_explain = shm_limits(host, hugepages_bytes, current=machine.current, keep_higher=wanted.keep_higher)
    if host.system == LINUX:
        _linux_kernel_params(host, limits, limits_explain, kernel_params, explain)
    elif host.system == FREEBSD:
        _freebsd_kernel_params(limits, limits_explain, kernel_params, explain)
    else:
        project_attributes = _solaris_settings(host, limits, limits_explain, wanted.etc_system, kernel_params, values,
                                               explain)
    values.update(kernel_params)
    memlock_kb, limit_memlock = memlock(host, hugepages_bytes, explain)
    values['memlock_kb'] = memlock_kb
    values['limit_memlock'] = limit_memlock
    return {
        'engine': host.engine,
        'system': host.system,
        'ram_bytes': host.ram_bytes,
        'page_size': host.page_size,
        'hugepage_size': host.hugepage_size,
        'shared_memory_bytes': host.shared_memory_bytes,
        'kernel_params': kernel_params,
        'hugepages': hugepages,
        'hugepages_bytes': hugepages_bytes,
        'memlock_kb': memlock_kb,
        'limit_memlock': limit_memlock,
        'project_attributes': project_attributes,
        'values': values,
        'explain': explain,
    }


def shm_settings_from_facts(facts, wanted, ram_bytes=None, page_size=None, system=None):
    """shm_settings() of ``wanted`` (a ShmRequest) for a host described by its ``dbhost`` facts (host_facts'
    memory, hugepages, shm); ``ram_bytes``, ``page_size`` and ``system`` given stand for what the facts say."""
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
        raise SizingError('the base page size of the tuned system is not known (memory.page_size): under a root '
                          'other than /, it is read from <root>/proc/self/smaps or the one <root>/boot/config-*, '
                          'never from the machine running this; mount its /proc there, or pass page_size')
    if wanted.hugepage_size in (None, '', 'default'):
        wanted = wanted._replace(hugepage_size=memory.get('hugepage_default_bytes'))
    return shm_settings(ShmMachine(ram, page, system, _hugepage_sizes(facts), facts.get('shm')), wanted)


def _hugepage_sizes(facts):
    """The huge page sizes this kernel offers: host_facts' hugepages subset is keyed by size in bytes."""
    pools = facts.get('hugepages') or {}
    return [int(size) for size in pools] or None
