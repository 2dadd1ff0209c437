# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the /etc/project part of resource_limits (Solaris and
illumos): the ``projects`` option checked, the new entries planned against the file, and
the records each project gets.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import project as project_db


def validate_projects(raw_projects):
    """The ``projects`` option -> [{name, id?, comment?, users?, groups?, attributes: [(key, value)]}]."""
    if not isinstance(raw_projects, (list, tuple)):
        raise InputError('projects must be a list of {name, id, comment, users, groups, attributes}')
    names = set()
    desired = []
    for index, item in enumerate(raw_projects):
        where = 'projects[%d]' % index
        if not isinstance(item, dict):
            raise InputError('%s must be a dict' % where)
        unknown = sorted(set(item) - set(['name', 'id', 'comment', 'users', 'groups', 'attributes']))
        if unknown:
            raise InputError('%s: unknown key(s) %s' % (where, ', '.join(unknown)))
        try:
            name = project_db.validate_name(item.get('name'))
            wanted = {'name': name}
            if item.get('id') is not None:
                wanted['id'] = project_db.validate_id(name, item['id'])
            if item.get('comment') is not None:
                wanted['comment'] = project_db.validate_comment(name, item['comment'])
            for field in ('users', 'groups'):
                if item.get(field) is not None:
                    wanted[field] = project_db.validate_members(name, field, item[field])
            attributes = item.get('attributes') or {}
            if not isinstance(attributes, dict):
                raise project_db.ProjectError('project %s: attributes must be a dict' % name)
            wanted['attributes'] = [(key, project_db.validate_attribute(name, key, value))
                                    for key, value in sorted(attributes.items())]
        except project_db.ProjectError as exc:
            raise InputError('%s: %s' % (where, exc))
        if name in names:
            raise InputError('%s: project %s is given twice' % (where, name))
        names.add(name)
        desired.append(wanted)
    return desired


def attribute_ok(attribute, have, want, comparison):
    """Whether the value ``have`` gives ``want``: the same value, or with comparison minimum a
    ``*.max-*`` control already as high (a larger value granted is never lowered)."""
    if project_db.same_attribute(have, want):
        return True
    return comparison == compare.MINIMUM and project_db.is_maximum_control(attribute) and \
        project_db.meets_minimum(have, want)


def plan_projects(root, desired_projects, comparison=compare.EXACT):
    """Read /etc/project and build the new entries; refuses bad ids before any write.

    Returns (local path, text before, {name: new Project}, [(wanted, current, new)]).
    """
    local = rooted(root, project_db.ETC_PROJECT)
    before = read_text(local)
    existing = {}
    ids = {}
    for entry in project_db.parse(before):
        existing.setdefault(entry.name, entry)
        ids.setdefault(entry.id, entry.name)
    changes = {}
    plans = []
    for wanted in desired_projects:
        name = wanted['name']
        current = existing.get(name)
        if current is None:
            if 'id' not in wanted:
                raise InputError('project %s does not exist in %s: give its id' % (name, project_db.ETC_PROJECT))
            if wanted['id'] in ids:
                raise InputError('project %s: id %d is already used by project %s'
                                 % (name, wanted['id'], ids[wanted['id']]))
            new = project_db.Project(name, wanted['id'])
        else:
            if 'id' in wanted and wanted['id'] != current.id:
                raise InputError('project %s has id %d in %s; changing a project id is refused (running tasks '
                                 'and accounting records carry it)' % (name, current.id, project_db.ETC_PROJECT))
            new = current.copy()
        for field in ('comment', 'users', 'groups'):
            if field in wanted:
                setattr(new, field, wanted[field])
        for attribute, value in wanted['attributes']:
            if value is None:
                new.remove_attribute(attribute)
            elif not attribute_ok(attribute, new.attribute(attribute), value, comparison):
                new.set_attribute(attribute, value)
        if current is None or project_db.format_line(new) != project_db.format_line(current):
            changes[name] = new
        plans.append((wanted, current, new))
    return local, before, changes, plans


def project_records(wanted, current, new, changed, gate, comparison=compare.EXACT):
    """The records of one project: one per field given and per attribute; ``gate``: the run's (engine/gate.py)."""
    name = wanted['name']
    shown = gate.now(current, new if changed else current)
    note = ('applies to new tasks of the project (login, newtask -p, service restart); '
            'running processes keep theirs (prctl is not read)')
    fields = []
    if 'id' in wanted or current is None:
        fields.append(('id', new.id, current.id if current else None, shown.id if shown else None,
                       lambda a, b: a == b))
    for field in ('comment', 'users', 'groups'):
        if field in wanted:
            fields.append((field, getattr(new, field), getattr(current, field) if current else None,
                           getattr(shown, field) if shown else None,
                           project_db.same_members if field != 'comment' else (lambda a, b: a == b)))
    records = []
    for field, want, old, now, same in fields:
        ok = old is not None and same(old, want)
        records.append(_project_setting(gate, '%s %s' % (name, field), want, now, ok, changed and not ok,
                                        'the project\'s %s' % field))
    for attribute, value in wanted['attributes']:
        old = current.attribute(attribute) if current else None
        now = shown.attribute(attribute) if shown else None
        if value is None:
            present = current is not None and current.has_attribute(attribute)
            records.append(_project_setting(gate, '%s %s' % (name, attribute), None, now, not present,
                                            present, 'removed' if present else 'absent'))
            continue
        ok = attribute_ok(attribute, old, value, comparison)
        detail = note
        if ok and not project_db.same_attribute(old, value):
            detail = 'a value at least as high is granted already and kept (comparison minimum); ' + note
        records.append(_project_setting(gate, '%s %s' % (name, attribute), value, now, ok, not ok, detail))
    return records


def _project_setting(gate, name, want, now, persisted_ok, written, note):
    details = []
    if written:
        details.append(gate.did('write %s' % project_db.ETC_PROJECT))
    details.append(note)
    if isinstance(want, list):
        want, now = ','.join(want), (','.join(now) if now is not None else None)
    status = gate.status(None, persisted_ok)
    return Setting('project ' + name, project_db.ETC_PROJECT, want, None, now, status, '; '.join(details))
