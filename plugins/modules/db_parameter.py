#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: db_parameter
short_description: Set Oracle, PostgreSQL and MySQL parameters in their files, and compare with the running server
version_added: 1.0.0
description:
  - Sets database parameters in the configuration the server reads at startup, editing only the value that
    wins (or adding one line where the server reads it), and keeps every other line, comment and byte.
  - Reports desired, persisted and live values per parameter. The live value is read through the database's own
    client (C(sqlplus), C(psql), C(mysql)) when it is there; otherwise the record says why it is unknown.
  - Oracle text parameter files (C(init<SID>.ora)) follow the Oracle Database Reference rules - C(*.name=value)
    and C(SID.name=value), case-insensitive names, single or double quotes, several values in parentheses or
    on consecutive lines, backslash continuation, several parameters on one line, C(IFILE), C(#) comments.
    The instance's own C(SID.name) entry wins over C(*.name). New lines are written as C(CREATE PFILE FROM
    SPFILE) writes them, for example C(*.filesystemio_options='SETALL').
  - Oracle with a server parameter file (spfile) - when O(oracle_home) and O(oracle_sid) are given without
    O(path), when C($ORACLE_HOME/dbs/spfile<SID>.ora) or C(spfile.ora) exists, or when the pfile holds an
    C(SPFILE=) entry - values are set with C(ALTER SYSTEM SET name=value SCOPE=SPFILE) through
    C($ORACLE_HOME/bin/sqlplus -S -L / as sysdba), the SQL given on standard input. Without a usable sqlplus
    (or a running instance) the records say so with status V(failed) and the task fails.
  - PostgreSQL C(postgresql.conf) is read with its C(include), C(include_if_exists) and C(include_dir) files,
    then C(postgresql.auto.conf) from the data directory, which wins; a value set there is reported
    V(shadowed), naming the file. Values compare with their units (C(128MB) equals C(131072kB)).
    After a change, dynamic parameters are applied with C(pg_reload_conf()) when psql can reach the server.
  - PostgreSQL names and values are checked, before any file is touched, against the server's own list of
    parameters - C(postgres --describe-config) of the installed server of that major version
    (C(/usr/lib/postgresql/<major>/bin) or C(/usr/pgsql-<major>/bin)) when O(root=/), else a table shipped per
    major version (13, 15 and 17, made from those servers; for 14 and 16 the two around it together). The
    major version is read from C(PG_VERSION) in the data directory or from the path
    (C(/etc/postgresql/15/main)). A name the server does not know is refused with the closest known one; a
    boolean for a number, a unit of the wrong kind, a value out of the parameter's range (after its unit),
    an enum word the server does not take, and an internal parameter such as C(block_size) are refused, since
    the server would not start with them. Names with a dot (C(pg_stat_statements.max)) are not checked.
  - MySQL and MariaDB option names are checked, when O(root=/) and the server is installed
    (C(/usr/sbin/mariadbd), C(/usr/sbin/mysqld)), against what C(mysqld --no-defaults --verbose --help) lists;
    an unknown name (C(innodb_bufer_pool_size)) or the beginning of a name is refused with the closest known
    one, since the server would not start with it (an ambiguous beginning disables InnoDB). A name given with
    C(loose-) is not checked, and is written with its C(loose-) prefix, which makes the server ignore it.
  - MySQL and MariaDB option files are read with C(!include) and C(!includedir); the server's groups
    (C([mysqld]), C([server]), C([mysqld-X.Y]), and MariaDB's) are merged in reading order, and the last
    setting wins. New options go into the last O(mysql_section) group of O(path).
  - Static parameters (for example C(filesystemio_options), C(disk_asynch_io), C(use_large_pages),
    C(shared_buffers), C(huge_pages), C(innodb_flush_method)) are reported V(pending_restart) with
    RV(restart_required=true) while the running server has another value. Oracle and MySQL parameters are only
    persisted by this module, so every Oracle or MySQL change waits for a restart.
  - On SunOS, when PostgreSQL gets C(shared_memory_type=sysv), a record C(shared memory as ISM) reads C(pmap -xs) of
    the postmaster (its pid and start time from C(postmaster.pid) in the data directory) - V(ok) when Intimate Shared
    Memory holds the main segment in large pages, V(pending_restart) while the server still runs with another
    C(shared_memory_type) (or, psql unreachable, its configuration changed after it started), V(drift) otherwise,
    V(unsupported) with the reason when the postmaster cannot be read.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/db_parameter.yml
options:
  engine:
    description: The database whose configuration is managed.
    type: str
    required: true
    choices: [oracle, postgresql, mysql]
  path:
    description:
      - The configuration file, as the managed system names it - an Oracle pfile such as
        C(/u01/app/oracle/product/19.0.0/dbhome_1/dbs/initORCL.ora), C(postgresql.conf), or C(my.cnf).
      - It must exist. Required for PostgreSQL and MySQL; for Oracle, it can be left out when O(oracle_home) and
        O(oracle_sid) are given (then C($ORACLE_HOME/dbs/init<SID>.ora) or the spfile is used).
    type: path
  params:
    description:
      - Parameters as a dictionary of name to value. Names are case-insensitive for Oracle and PostgreSQL;
        MySQL names treat C(-) and C(_) alike.
      - A value is a string, a number, a boolean (written C(TRUE)/C(FALSE), C(on)/C(off) or C(ON)/C(OFF)), or
        for Oracle a list of values. One pair of quotes around a value is taken off.
    type: dict
    required: true
  sid:
    description:
      - Oracle only. The instance prefix new or changed entries are written with - V(*) for every instance,
        or an instance name for C(SID.name=value) lines and C(ALTER SYSTEM ... SID='SID').
    type: str
    default: '*'
  oracle_home:
    description: Oracle only. C($ORACLE_HOME), used to find sqlplus, the spfile and C(?) in IFILE paths.
    type: path
  oracle_sid:
    description:
      - Oracle only. The instance name (C($ORACLE_SID)). It decides which C(SID.name) entries apply; without
        it, the name is taken from an C(init<SID>.ora) file name.
    type: str
  mysql_section:
    description: MySQL only. The option group new options are added to.
    type: str
    default: mysqld
  root:
    description:
      - Act on a mounted image or a test tree. Files are read and written under O(root); the live server is
        only asked when O(root) is C(/).
  read_live:
    description: Ask the running server for live values through its client.
    type: bool
    default: true
  reload:
    description:
      - PostgreSQL only. After a change, or when a dynamic parameter's live value differs, run
        C(SELECT pg_reload_conf()) and read the values back.
    type: bool
    default: true
  os_user:
    description:
      - The operating system user the client runs as (through C(runuser) on Linux) when the module runs as root.
      - Defaults to C(postgres) for PostgreSQL and to the owner of O(oracle_home) for Oracle, whose
        C(/ as sysdba) and peer logins need them; MySQL's client runs as the module's own user.
    type: str
  login_user:
    description: Database user for psql (C(-U)) or mysql (C(-u)).
    type: str
  login_password:
    description: Password for O(login_user), passed in the client's environment, never on its command line.
    type: str
  login_host:
    description:
      - Host for psql (C(-h)) or mysql (C(-h)). An absolute path names psql's socket folder or mysql's socket
        file (C(-S)).
    type: str
  login_port:
    description: Port for psql (C(-p)) or mysql (C(-P)).
    type: int
  login_db:
    description: PostgreSQL database psql connects to.
    type: str
    default: postgres
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed]
# END options
attributes:
  check_mode:
    description: Nothing changes, not in files and not in the server; records say V(drift) for what would change.
  platform:
    platforms: [linux, sunos, freebsd]
    description: Files on any platform; switching to O(os_user) uses C(runuser) and so needs Linux.
notes:
  - All input, and every file read, is checked before anything is written; a file the server would refuse
    (an unclosed quote, a missing C(include) or C(IFILE)) stops the task naming the file and line.
  - The module never restarts a database. Use RV(restart_required) for a handler.
seealso:
  - name: Oracle Database Reference, initialization parameter files
    description: Rules governing initialization parameter files.
    link: https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/parameter-files.html
  - name: PostgreSQL, setting parameters
    description: The configuration file format, includes and postgresql.auto.conf.
    link: https://www.postgresql.org/docs/current/config-setting.html
  - name: MySQL, using option files
    description: Option file syntax, groups and include directives.
    link: https://dev.mysql.com/doc/refman/8.0/en/option-files.html
'''

EXAMPLES = r'''
- name: Direct and asynchronous I/O for Oracle (pfile)
  dbhost.tuning.db_parameter:
    engine: oracle
    path: /u01/app/oracle/product/19.0.0/dbhome_1/dbs/initORCL.ora
    params:
      filesystemio_options: SETALL
      disk_asynch_io: true
  register: db_parameter_result

- name: The same through the spfile (ALTER SYSTEM ... SCOPE=SPFILE)
  dbhost.tuning.db_parameter:
    engine: oracle
    oracle_home: /u01/app/oracle/product/19.0.0/dbhome_1
    oracle_sid: ORCL
    params:
      filesystemio_options: SETALL

- name: PostgreSQL huge pages
  dbhost.tuning.db_parameter:
    engine: postgresql
    path: /etc/postgresql/15/main/postgresql.conf
    params:
      huge_pages: "on"
      shared_buffers: 4GB

- name: InnoDB direct I/O
  dbhost.tuning.db_parameter:
    engine: mysql
    path: /etc/mysql/my.cnf
    params:
      innodb_flush_method: O_DIRECT
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/db_parameter.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: True when the database must restart for a value to take effect., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per parameter.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'The parameter name, lower case (MySQL names with underscores).', type: str, sample: filesystemio_options}
    target: {description: 'The file written to (or that would be), or the spfile.', type: str, sample: /u01/app/oracle/product/19.0.0/dbhome_1/dbs/initORCL.ora}
    desired: {description: The desired value; several Oracle values are joined with commas., type: str, sample: SETALL}
    live: {description: 'The running server''s value (after this run; before it in check mode), null when unknown.', type: str}
    persisted: {description: 'The value the next startup reads, from whichever file or entry wins.', type: str}
    status: {description: 'V(ok), V(changed), V(drift) (check mode), V(pending_restart), V(shadowed), V(unsupported) (a read-only parameter) or
        V(failed) (the change could not be made; the task fails).', type: str, sample: pending_restart}
    detail: {description: 'Why, in words - what was written, why the live value is unknown, which file wins.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it. Through M(dbhost.tuning.host_state), the
        vendor document, sizing rule or role variable.', type: str, sample: 'task option: db_parameter.params'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
engine: {description: The engine managed., returned: always, type: str}
files: {description: 'The configuration files read, in the order the server reads them.', returned: always, type: list, elements: str}
backup_file: {returned: changed and backup requested, type: str, description: 'The backup of the first file changed, when O(backup=true).'}
backup_files: {description: 'The backups of all files changed, when O(backup=true).', returned: changed and backup requested, type: list, elements: str}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of each file edited, with
    C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import new_module
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = new_module(AnsibleModule, argument_spec=registry.spec('db_parameter'),
                        supports_check_mode=True)
    registry.run(module, 'db_parameter')


if __name__ == '__main__':
    main()
