# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: a database configuration kept in text files, edited in place.

postgresql.conf, my.cnf and an Oracle pfile: the engine says where each value goes
(edits), the new texts are read again the way the server reads them before anything
is written (a file the server could not read is refused), the files are written
unless in check mode, and one record per parameter says what the running server and
the next start will have.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.errors import InputError
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import (
    FAILED, PENDING_RESTART, UNSUPPORTED, Setting)
from ansible_collections.dbhost.tuning.plugins.module_utils.plans.db_parameter.common import apply_edits, live_info


StoredFiles = namedtuple('StoredFiles', 'before files')


class FileStore(object):
    """The configuration files of one engine (engine.files, read by engine.load()).

    persisted: StoredFiles: ``before``, {key: (value, where) the next start reads}, and ``files``,
    every file read, as the system names it.
    done: {'changes': [FileChange], 'written': {key: [files its edits go to]},
    'after': {key: (value, where)} once the new texts are in place, 'reloaded':
    {key: LiveValue} read back after a reload, {'__error__': why it failed}, or None}.
    """

    def __init__(self, plan, engine):
        self.plan = plan
        self.engine = engine

    def read(self, desired):
        engine = self.engine
        return StoredFiles(before=dict((key, engine.persisted(key)) for key in desired),
                           files=[config.shown for config in engine.files])

    def plan_edits(self, desired, live, before):
        """(keys that change, {key: [files written]}, [(shown, new text)]) of the values that differ."""
        engine = self.engine
        path = self.plan.path
        changed, written, edits, appends = [], {}, {}, []
        seq = 0
        for key in sorted(desired):
            want = desired[key]
            if engine.same(key, before[key].value, want, live.get(key)):
                continue
            changed.append(key)
            for source, start, end, text in engine.edits(key, want):
                seq += 1
                written.setdefault(key, [])
                if (source or path) not in written[key]:
                    written[key].append(source or path)
                if source is None:
                    appends.append(text)
                else:
                    edits.setdefault(source, []).append((start, end, text, seq))
        new_texts = []
        for config in engine.files:
            if config.auto:
                continue
            after_text = apply_edits(config.text, edits.get(config.shown, []), appends if config.shown == path else [])
            if after_text != config.text:
                new_texts.append((config.shown, after_text))
        return changed, written, new_texts

    def apply(self, desired, live, persisted, module):
        engine = self.engine
        plan = self.plan
        changed, written, new_texts = self.plan_edits(desired, live.values, persisted.before)
        changes = [FileChange(engine.file_by_shown[shown].local, engine.file_by_shown[shown].text, text,
                              shown_path=shown) for shown, text in new_texts]
        try:
            engine.load(dict(new_texts))
        except InputError as exc:
            # Our edit made a file the server could not read: say which parameters, not
            # only the line of a text that exists nowhere yet.  Nothing is written.
            raise InputError('params %s: the new value(s) would leave a file the server cannot read, so nothing '
                             'was written (%s)' % (', '.join(repr(key) for key in changed), exc))
        after = dict((key, engine.persisted(key)) for key in desired)
        # A value another file sets after ours cannot become live by a reload: not waited for.
        shadowed = set(key for key in desired if not engine.same(key, after[key][0], desired[key], live.values.get(key)))
        for change in changes:
            backup_name = plan.gate.commit(change, module, plan.backup)
            if backup_name:
                plan.backup_files.append(backup_name)
        reloaded = plan.gate.write(engine.reload_changed, desired, live.values, shadowed)
        return {'changes': changes, 'written': written, 'after': after, 'reloaded': reloaded}

    def render(self, result, desired, live, persisted, done):
        engine = self.engine
        for change in done['changes']:
            change.report(result)
        for key in sorted(desired):
            result.add(self.record(key, desired[key], persisted.before[key], done['after'][key], live,
                                   done['written'].get(key), done['reloaded']))
        result.extra['engine'] = engine.name
        result.extra['files'] = persisted.files
        result.warnings.extend(sorted(set(engine.notes)))
        if self.plan.backup_files:
            result.extra['backup_file'] = self.plan.backup_files[0]
            result.extra['backup_files'] = list(self.plan.backup_files)

    def record(self, key, want, before, after, live, written, reloaded):
        """The Setting of one parameter: its files, then what the running server has."""
        engine = self.engine
        gate = self.plan.gate
        before_value, before_where = before
        persisted_value = gate.now(before_value, after.value)
        info, unknown = live_info(live, key)
        target = (written or [before_where.split(' line ')[0] if before_where else self.plan.path])[0]
        details = []
        if written:
            details.append(gate.did('write %s' % ', '.join(written)))
        if info is not None and info.read_only:
            return Setting(key, target, engine.show(want), engine.show(info.value), engine.show(persisted_value),
                           UNSUPPORTED, 'read-only: fixed when the server was built or initialised')
        live_value, live_ok, live_needs, shadowed, failed = self.live_side(
            key, want, info, unknown, after, target, written, reloaded, details)
        if failed:
            return Setting(key, target, engine.show(want), engine.show(live_value), engine.show(persisted_value),
                           FAILED, '; '.join(details))
        persisted_ok = engine.same(key, before_value, want, info)
        if not shadowed and not written and before_where:
            details.append('persisted at %s' % before_where)
        status = gate.status(live_ok, persisted_ok, live_needs=live_needs, shadowed=shadowed)
        return Setting(key, target, engine.show(want), engine.show(live_value), engine.show(persisted_value), status,
                       '; '.join(d for d in details if d))

    def live_side(self, key, want, info, unknown, after, target, written, reloaded, details):
        """(live value, live_ok, live_needs, shadowed, failed) of one parameter; adds what it says to details."""
        engine = self.engine
        plan = self.plan
        after_value, after_where = after
        static = engine.is_static(key, info)
        live_needs = PENDING_RESTART if (engine.live_always_needs_restart or static) else None
        live_value = info.value if info is not None else None
        live_ok = engine.same(key, live_value, want, info) if info is not None else None
        shadowed = not engine.same(key, after_value, want, info)
        failed = False
        if shadowed:
            if reloaded and key in reloaded:
                live_value = reloaded[key].value
            details.append('%s sets %r and wins over %s' % (after_where, engine.show(after_value), target))
            plan.shadowed.append((key, after_where))
            if info is None:
                details.append(unknown)
        elif info is None:
            details.append(unknown)
            if written and live_needs:
                live_ok = False  # the running server has not read what we just wrote
            elif written:
                details.append('reload the server configuration to apply it')
        elif live_ok is False and live_needs:
            details.append('%s: the running server keeps %r until it restarts' % (
                'static parameter' if static else 'read at startup', engine.show(live_value)))
        elif live_ok is False and not plan.reload:
            live_needs = PENDING_RESTART
            details.append('the running server keeps %r; reload is false, so it applies at the next reload or '
                           'restart' % (live_value,))
        elif live_ok is False and plan.gate.check_mode:
            details.append(plan.gate.did('reload the configuration'))
        elif live_ok is False:
            live_value, failed = self.reload_outcome(key, want, live_value, reloaded, details)
        return live_value, live_ok, live_needs, shadowed, failed

    def reload_outcome(self, key, want, live_value, reloaded, details):
        """(live value, failed) of a dynamic parameter after the reload; adds what it says to details."""
        engine = self.engine
        if reloaded is None or '__error__' in reloaded:
            details.append(reloaded['__error__'] if reloaded else 'not reloaded')
            return live_value, True
        live_value = reloaded[key].value if key in reloaded else None
        if not engine.same(key, live_value, want, reloaded.get(key)):
            details.append('the server kept %r after reloading its configuration (see its log)' % (live_value,))
            return live_value, True
        details.append('applied by reloading the configuration')
        return live_value, False
