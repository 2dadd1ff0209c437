# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the vendors' kernel parameter profiles, each value with its rule and source.

A profile entry is ``key: (value, comparison, source)``.  ``comparison`` is how the vendor
words it: ``minimum`` for "at least" (a larger value is met and never lowered), ``exact``
for a value that is not a bound (a port range, a switch).  Size-dependent keys (shmmax,
shmall, shmmni, huge pages) are not here: the shared_memory role owns them.

Pure Python, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ORACLE_LINUX = ('Oracle Database Installation Guide for Linux (19c, 21c, 23ai), '
                '"Minimum Parameter Settings for Installation"')
POSTGRESQL_OVERCOMMIT = ('PostgreSQL documentation, "Managing Kernel Resources", '
                         '"Linux Memory Overcommit"')
MYSQL_AIO = 'MySQL Reference Manual, innodb_use_native_aio (requests are limited by fs.aio-max-nr)'

MINIMUM, EXACT = 'minimum', 'exact'

LINUX_PROFILES = {
    # The values oracle-database-preinstall also sets.  The guide lists them as minimums
    # ("at least"), except the port range (a range) and panic_on_oops (a switch).
    'oracle': {
        # semmsl semmns semopm semmni, each a minimum
        'kernel.sem': ('250 32000 100 128', MINIMUM, ORACLE_LINUX),
        'kernel.panic_on_oops': ('1', EXACT, ORACLE_LINUX),
        'fs.file-max': ('6815744', MINIMUM, ORACLE_LINUX),
        'fs.aio-max-nr': ('1048576', MINIMUM, ORACLE_LINUX),
        'net.ipv4.ip_local_port_range': ('9000 65500', EXACT, ORACLE_LINUX),
        'net.core.rmem_default': ('262144', MINIMUM, ORACLE_LINUX),
        'net.core.rmem_max': ('4194304', MINIMUM, ORACLE_LINUX),
        'net.core.wmem_default': ('262144', MINIMUM, ORACLE_LINUX),
        'net.core.wmem_max': ('1048576', MINIMUM, ORACLE_LINUX),
    },
    # Strict overcommit keeps the OOM killer away from the postmaster. SysV shared memory
    # limits are no longer a concern since PostgreSQL 9.3 (POSIX/mmap shared memory).
    'postgresql': {
        'vm.overcommit_memory': ('2', EXACT, POSTGRESQL_OVERCOMMIT),
    },
    'mysql': {
        'fs.aio-max-nr': ('1048576', MINIMUM, MYSQL_AIO),
    },
    'none': {},
}

# No built-in profile outside Linux: SunOS and FreeBSD size-dependent limits are the
# shared_memory role's; kernel_params_settings still apply.
OTHER_PROFILES = {'oracle': {}, 'postgresql': {}, 'mysql': {}, 'none': {}}

PROFILE_NAMES = ('oracle', 'postgresql', 'mysql', 'none')


def kernel_profile(name, system):
    """The profile's entries for ``system`` (Linux, SunOS, FreeBSD): {key: (value, comparison, source)}."""
    table = LINUX_PROFILES if system == 'Linux' else OTHER_PROFILES
    if name not in table:
        raise KeyError(name)
    return dict(table[name])


# The database's OS user by engine (the packages' and installers' own names): Oracle's
# installation guide creates "oracle"; Debian's and the PGDG packages run PostgreSQL as
# "postgres"; MySQL's and MariaDB's packages run mysqld as "mysql".
ENGINE_USERS = {'oracle': 'oracle', 'postgresql': 'postgres', 'mysql': 'mysql'}
