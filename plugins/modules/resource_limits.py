#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: resource_limits
short_description: Set resource limits (memlock, nofile...) for login sessions, a systemd service and Solaris projects
version_added: 0.1.0
description:
  - Sets resource limits in the three places a database's processes can get them from, in one call - a limit set
    in one place does not reach a process started through another.
  - O(limits) - pam_limits items (C(domain type item value)) in O(limits_file), for login sessions (C(su - oracle),
    ssh). The persisted value is what pam_limits will apply - C(/etc/security/limits.conf) is read first, then
    C(/etc/security/limits.d/*.conf) in C locale order, and for the same domain and item the last line read wins;
    another file that sets the same domain, type and item to another value after ours makes the record C(shadowed),
    naming that file. Domains are compared as written - a user's own line beats a group or C(*) line wherever it is,
    which is not resolved here. The live value of login sessions is not read (a session gets its limits when it
    starts); the records say so.
  - O(service) and O(service_limits) - C(Limit*=) settings in a drop-in
    C(/etc/systemd/system/<service>.d/<dropin_name>) with a C([Service]) section. pam_limits does not apply to
    services that systemd starts, so a database run by systemd needs this. The persisted value is the one that
    wins across the unit file and all its drop-ins (every systemd search folder, C(<unit>.d), truncated-name and
    C(service.d) folders, by file name); a drop-in that wins over ours makes the record C(shadowed).
  - After the drop-in changes, C(systemctl daemon-reload) runs (also when systemd says the unit needs one), never
    in check mode. The live value is that of the running service's main process (C(/proc/<MainPID>/limits));
    when it differs while the drop-in is right, the record is C(pending_restart) and RV(restart_required=true).
    A service that is not running needs no restart - its live value is what systemd will give it at start
    (C(systemctl show -p LimitMEMLOCK -p LimitMEMLOCKSoft)). Values compare as systemd reads them - C(64M) equals
    C(67108864), C(infinity) equals C(infinity:infinity).
  - C(systemctl show) only tells what systemd has loaded, not what the process got. When systemd has loaded the
    limit and started the service after the drop-in was written, yet the process still lacks it, the record is
    C(failed) - systemd could not raise the limit (it needs C(CAP_SYS_RESOURCE) and its own hard limit must allow
    it; in an unprivileged-resource container C(LimitMEMLOCK=infinity) shows in C(systemctl show) while the
    process keeps the old limit).
  - O(projects) (SunOS) - project entries and resource controls (C(project.max-shm-memory=(privileged,8589934592,deny)))
    in C(/etc/project), edited as a file and not through C(projmod) - the file edit works on a mounted image
    (O(root)), gives an exact diff and check mode, keeps comments and the other projects byte for byte, and changes
    several projects in one write. The id of an existing project is never changed. Attribute values compare
    normalized (case, spaces, leading zeros, order of the tuples). Projects from a name service (LDAP, NIS) are
    not managed. A project's controls apply to new tasks (login, C(newtask -p), a service restart).
  - All input is checked before anything is written.
author:
  - dbhost.tuning contributors (!UNKNOWN)
# BEGIN options: written by scripts/gen_docs.py from state/registry.py and state/registry_docs/resource_limits.yml
options:
  limits:
    description: pam_limits items (Linux).
    type: list
    elements: dict
    default: []
    suboptions:
      domain:
        description: A user name, C(@group), C(*), C(%group) or a uid range, as limits.conf(5) takes it.
        type: str
        required: true
      type:
        description: V(soft), V(hard), or V(-) for both.
        type: str
        required: true
        choices: [soft, hard, '-']
      item:
        description: The item, for example V(memlock) (in KB), V(nofile), V(nproc), V(stack) (KB).
        type: str
        required: true
      value:
        description: A whole number, V(unlimited), V(infinity) or V(-1) (no limit); for V(nice) and V(priority) -20..19.
        type: raw
        required: true
  limits_file:
    description: The file pam_limits items are written to - C(/etc/security/limits.conf) or a C(*.conf) file in
      C(/etc/security/limits.d).
    type: path
    default: /etc/security/limits.d/90-dbhost-tuning.conf
  service:
    description: The systemd unit that runs the database (C(.service) is added when no type is given).
    type: str
  service_limits:
    description:
      - "C(Limit*=) settings for O(service), for example C({LimitMEMLOCK: infinity, LimitNOFILE: 65536})."
      - Values as systemd.exec(5) takes them - a number, a size with K, M, G, T (1024-based) for byte limits,
        V(infinity), or C(soft:hard). C(LimitMEMLOCK) is in bytes, unlike C(memlock) in limits.conf (KB).
    type: dict
  dropin_name:
    description: The drop-in file name under C(/etc/systemd/system/<service>.d/).
    type: str
    default: 90-dbhost-tuning.conf
  projects:
    description: Solaris/illumos projects in C(/etc/project) (SunOS).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The project name, for example V(user.oracle) (the default project of user C(oracle)).
        type: str
        required: true
      id:
        description: The project id; required for a new project, and unique. An existing project's id is not changed.
        type: int
      comment:
        description: The comment field; left as it is when omitted.
        type: str
      users:
        description: The user list (names, C(*), C(!name)); left as it is when omitted.
        type: list
        elements: str
      groups:
        description: The group list; left as it is when omitted.
        type: list
        elements: str
      attributes:
        description:
          - Attributes to set, as name to value, for example C(project.max-shm-memory) to
            C((privileged,8589934592,deny)). Other attributes of the project are kept.
          - A resource control's value is written in plain decimal, as libproject reads it; a size with a
            unit (C(8G), 1024-based) is converted for the byte controls (C(*-memory), C(*-swap), C(*-size))
            and refused for the others. C(priv) and C(privileged) are the same privilege.
          - A null value removes the attribute.
        type: dict
  comparison:
    description:
      - How O(limits) and O(service_limits) values compare with what pam_limits and systemd give now.
      - With O(projects), V(minimum) applies to the C(*.max-*) resource controls - a control that already
        grants at least the value (same privilege and action) is kept, never lowered.
      - V(exact) writes each value as given.
      - V(minimum) asks for at least that much (Oracle's and MySQL's memlock) - a value that is already
        higher, or C(unlimited) / C(infinity), in any file pam_limits or systemd reads is met, and is never
        lowered by writing ours.
      - What a user's session gets is resolved as pam_limits does - limits.conf, then limits.d/*.conf by
        name; the user's own and uid-range lines over C(@group) lines over C(*); a later line of the same
        kind wins; C(-) sets both sides; soft is lowered to hard - so a group or C(*) line that already grants
        the value means no line is written (a user line would win over it).
      - What a service gets is resolved as systemd does - the unit file and its drop-ins in order, then
        C(DefaultLimit*=) in system.conf and system.conf.d, then the running manager's default; a drop-in
        is written only when the service gets less, each side the higher of the two.
    type: str
    choices: [exact, minimum]
    default: exact
  root:
    description: Act on a mounted image or a test tree - files are read and written under O(root); live values are
      read only when O(root) is C(/).
extends_documentation_fragment: [dbhost.tuning.common, dbhost.tuning.common.root, dbhost.tuning.common.backup, dbhost.tuning.common.shadowed]
# END options
attributes:
  check_mode:
    description: Nothing changes (no file, no daemon-reload); records say C(drift) for what would change.
  platform:
    platforms: [linux, sunos]
    description: O(limits) and O(service) on Linux, O(projects) on SunOS; a part the platform cannot have gives
      C(unsupported) records and is not touched.
notes:
  - pam_limits does not apply group and wildcard lines to root.
seealso:
  - name: limits.conf(5)
    description: The pam_limits file format.
    link: https://man7.org/linux/man-pages/man5/limits.conf.5.html
  - name: systemd.exec(5)
    description: Limit*= settings of systemd services.
    link: https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html
'''

EXAMPLES = r'''
- name: Memlock for the oracle user's sessions and for the service that runs the database
  dbhost.tuning.resource_limits:
    limits:
      - {domain: oracle, type: '-', item: memlock, value: 60397977}
      - {domain: oracle, type: soft, item: nofile, value: 1024}
      - {domain: oracle, type: hard, item: nofile, value: 65536}
    service: oracle-db
    service_limits:
      LimitMEMLOCK: infinity
      LimitNOFILE: 65536
  register: resource_limits_result

- name: Restart the database when its running limits differ
  ansible.builtin.debug:
    msg: restart needed
  when: resource_limits_result.restart_required

- name: Solaris project for the oracle user
  dbhost.tuning.resource_limits:
    projects:
      - name: user.oracle
        id: 100
        comment: Oracle database
        users: [oracle]
        attributes:
          project.max-shm-memory: (privileged,8589934592,deny)
          project.max-shm-ids: (privileged,100,deny)
  when: ansible_facts['system'] == 'SunOS'
'''

RETURN = r'''
# BEGIN returns: written by scripts/gen_docs.py from state/registry_docs/result.yml and state/registry_docs/resource_limits.yml
drift_gate: {description: True when the task failed only because records drifted (O(fail_on_drift))., returned: when the task failed on drift,
  type: bool, sample: true}
changed: {description: 'Whether anything changed (in check mode, would change).', returned: always, type: bool}
restart_required: {description: True when the running service must restart to get the new limits., returned: always, type: bool}
reboot_required: {description: Always false here; present for the common result shape., returned: always, type: bool}
settings:
  description: One record per limit item, per service setting and per project field or attribute.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: 'C(<domain> <type> <item>) for pam_limits, C(<unit> <Limit*>) for a service, C(project <name> <attribute>) for a project.',
      type: str, sample: postgresql.service LimitMEMLOCK}
    target: {description: The file the value is persisted in., type: str, sample: /etc/systemd/system/postgresql.service.d/90-dbhost-tuning.conf}
    desired: {description: 'The desired value, normalized (systemd limits as C(value) or C(soft:hard), in bytes).', type: str, sample: infinity}
    live: {description: 'The running service''s limit (or, when it does not run, what systemd gives it at start); null for pam_limits and projects,
        whose live values are not read.', type: str}
    persisted: {description: The value that wins across all files., type: str}
    status: {description: 'V(ok), V(changed), V(drift) (check mode), V(pending_restart) (the running service still has the old limit), V(shadowed),
        V(unsupported), or V(failed) (daemon-reload failed, or systemd started the service after loading the limit and the process still lacks
        it - systemd could not raise it).', type: str, sample: pending_restart}
    detail: {description: 'Why, in words; which file wins when shadowed, and where the live value comes from.', type: str}
    source: {description: 'On whose word the desired value stands - here the task option that gave it (C(service_limits) for a service''s record,
        C(projects) for a project''s). Through M(dbhost.tuning.host_state), the vendor document, sizing rule or role variable.', type: str, sample: 'task
        option: resource_limits.limits'}
    reason: {description: 'Why the record is not V(ok), in a few words (V(not persisted), V(live differs), V(live below the minimum 4096), V(shadowed
        by /etc/sysctl.d/99-x.conf), V(persisted, pending restart), the first words of RV(settings[].detail) for V(unsupported) and V(failed));
        null when V(ok).', type: str, sample: not persisted}
backup_file: {returned: changed and backup requested, type: raw, description: 'The backup of the edited file (a list when several changed), with
    O(backup=true).'}
diff: {returned: when changed and run with C(--diff), type: list, elements: dict, description: 'Before and after text of every edited file, with
    C(--diff).'}
# END returns
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.options import new_module
from ansible_collections.dbhost.tuning.plugins.module_utils.state import registry


def main():
    module = new_module(AnsibleModule, argument_spec=registry.spec('resource_limits'),
                        supports_check_mode=True)
    registry.run(module, 'resource_limits')


if __name__ == '__main__':
    main()
