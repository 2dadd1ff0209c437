#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: drift_gate
short_description: Fail a drift check with a short summary of what drifted
version_added: 0.2.0
description:
  - Reads the registered result of a C(dbhost.tuning) module (M(dbhost.tuning.host_state) in C(playbooks/drift.yml))
    and fails when any of its records drifted (every status but C(ok) and C(unsupported)), with a message a person
    reads at a glance - how many settings drifted, and the first five with their status, desired, live and persisted
    values and detail.
  - The full records stay in the registered result and in the drift reports; the failed task's own result is a few
    lines, where a failing M(dbhost.tuning.host_state) task prints every record of the host.
  - The result says C(drift_gate=true), so the M(dbhost.tuning.drift_report) callback counts the host as drifted,
    not as failed.
  - The message's last line says where the full records are - the registered result, and the drift reports only
    when this run writes them (the M(dbhost.tuning.drift_report) callback enabled, as C(scripts/drift-check) does);
    a plain C(ansible-playbook) run is told how to get them.
  - Runs on the controller only (an action plugin); it contacts no host.
author:
  - dbhost.tuning contributors (!UNKNOWN)
options:
  result:
    description:
      - The registered result of a C(dbhost.tuning) module, with its C(settings).
    type: dict
    required: true
  name:
    description:
      - How the message names where the full records are, for example the registered variable's name.
    type: str
    default: the registered result
attributes:
  check_mode:
    support: full
    description: Reads a result only; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
  platform:
    support: full
    platforms: all
    description: Runs on the controller.
'''

EXAMPLES = r'''
- name: Check everything the host uses
  dbhost.tuning.host_state:
  check_mode: true
  register: dbhost_state

- name: Fail on drift with a short summary
  dbhost.tuning.drift_gate:
    result: "{{ dbhost_state }}"
    name: dbhost_state
'''

RETURN = r'''
drifted:
  description: How many settings drifted.
  returned: always
  type: int
  sample: 3
settings_checked:
  description: How many settings the result holds.
  returned: always
  type: int
  sample: 42
drift_gate:
  description: True when the task failed because settings drifted.
  returned: when settings drifted
  type: bool
  sample: true
msg:
  description: The summary - how many settings drifted and the first five with their reason.
  returned: always
  type: str
'''
