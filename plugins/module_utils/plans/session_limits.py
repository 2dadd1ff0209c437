# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the pam_limits part of resource_limits (limits.d).

What a line of ours is compared with is the limit the user's login session gets, resolved
as pam_limits resolves it (formats/pam_limits.py): every file in its order, the user's own
lines over ``@group`` lines over ``*``.  So under the minimum rule a user whose group or
``*`` already grants at least the desired value gets no line at all (a user line would win
over the group's, and could lower it), and a line that is written never holds less than
what the session got before.  A domain that is not a user name (``@group``, ``*``, a
range) is compared with the lines of that same domain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbhost.tuning.plugins.module_utils.engine import accounts
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import compare
from ansible_collections.dbhost.tuning.plugins.module_utils.engine import confd
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.files import FileChange, read_text, rooted
from ansible_collections.dbhost.tuning.plugins.module_utils.engine.result import Setting
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import limits
from ansible_collections.dbhost.tuning.plugins.module_utils.formats import pam_limits

try:
    import resource
except ImportError:   # not on every platform; a side no file sets is then unknown
    resource = None

# limits.conf items with an rlimit: (resource name, how many of the rlimit's units one
# limits.conf unit is: pam_limits.c multiplies sizes by 1024 and cpu minutes by 60).
_RLIMITS = {
    'core': ('RLIMIT_CORE', 1024), 'data': ('RLIMIT_DATA', 1024), 'fsize': ('RLIMIT_FSIZE', 1024),
    'memlock': ('RLIMIT_MEMLOCK', 1024), 'rss': ('RLIMIT_RSS', 1024), 'stack': ('RLIMIT_STACK', 1024),
    'as': ('RLIMIT_AS', 1024), 'cpu': ('RLIMIT_CPU', 60), 'nofile': ('RLIMIT_NOFILE', 1),
    'nproc': ('RLIMIT_NPROC', 1), 'locks': ('RLIMIT_LOCKS', 1), 'sigpending': ('RLIMIT_SIGPENDING', 1),
}

LIMITS_HEADER = '# Managed by dbhost.tuning.resource_limits; local edits to these items are overwritten.'


def is_user_domain(domain):
    """A domain that names one user (not @group, %group, * or a range)."""
    return domain[:1] not in ('@', '%', '*') and ':' not in domain


def sides(key):
    return ('soft', 'hard') if key[1] == '-' else (key[1],)


class Found(object):
    """One side of a limit as the session gets it: ``value`` (None: not set by any file),
    ``path`` of the line that decides it, ``where`` (how to name that line to a person)."""

    __slots__ = ('value', 'path', 'where')

    def __init__(self, value, path, where):
        self.value = None if value is None else str(value)
        self.path = path
        self.where = where


class SessionLimits(object):
    """Our limits.d file for ``desired`` ([((domain, type, item), value)])."""

    def __init__(self, root, limits_file, desired, comparison, gate):
        self.root = root
        self.limits_file = limits_file
        self.desired = desired
        self.comparison = comparison
        # the run's gate (engine/gate.py): what the records say and the status they earn
        self.gate = gate
        self.accounts = {}
        self.shadowed = []

    # ---------------------------------------------------------------- reading
    def read(self):
        """Our file's text (None when absent); the users' accounts are looked up here, before any write."""
        for (domain, dummy, dummy_item), dummy_value in self.desired:
            if is_user_domain(domain) and domain not in self.accounts:
                self.accounts[domain] = accounts.lookup(self.root, domain)
        return read_text(rooted(self.root, self.limits_file))

    def files(self, text):
        """The files pam_limits reads, in order, ours holding ``text``."""
        return confd.texts_at_boot(self.root, limits.boot_files(self.root, extra=self.limits_file), self.limits_file,
                                   text)

    def found(self, files, key):
        """{side: Found} for a desired key over ``files``."""
        domain, dummy, item = key
        if not is_user_domain(domain):
            same = limits.effective(files, domain, item)
            return dict((side, Found(same[side].value, same[side].path, '%s in %s' % (domain, same[side].path)))
                        for side in ('soft', 'hard'))
        resolved = pam_limits.resolve(files, self.accounts.get(domain), item, name=domain)
        inherited = self.inherited(item)
        if resolved.stopped is not None:
            why = 'the "%s -" line %s line %d ends pam_limits\' reading: no file gives a limit' % (
                domain, resolved.stopped[0], resolved.stopped[1])
            return dict((side, Found(inherited[index], resolved.stopped[0], why))
                        for index, side in enumerate(('soft', 'hard')))
        soft, hard = resolved.effective(inherited)
        result = {'hard': _found(hard, resolved.hard)}
        if resolved.soft is not None and soft != resolved.soft.value:
            by = resolved.hard.where() if resolved.hard is not None else 'no file (the hard limit the session inherits)'
            result['soft'] = Found(soft, resolved.hard.path if resolved.hard is not None else None,
                                   'the hard limit %s set by %s (soft %s is lowered to it)' % (hard, by, resolved.soft.value))
        else:
            result['soft'] = _found(soft, resolved.soft)
        return result

    def inherited(self, item):
        """(soft, hard) a login inherits for ``item``, in limits.conf units, on the running system
        (root /): the limits of this process, which runs as root in the session Ansible logged in
        with, where pam_limits applies no group or ``*`` line (limits.conf(5)); so, barring a root
        line, what sshd (or the caller) hands every session.  (None, None) under another root or
        for an item without an rlimit: a side no file sets is then unknown."""
        if self.root != '/' or item not in _RLIMITS or resource is None:
            return (None, None)
        name, unit = _RLIMITS[item]
        return tuple(pam_limits.UNLIMITED if value == resource.RLIM_INFINITY else value // unit
                     for value in resource.getrlimit(getattr(resource, name)))

    # ---------------------------------------------------------------- comparing
    def _meets(self, have, want):
        if have is None:
            return False
        if self.comparison == compare.MINIMUM:
            return compare.satisfies(str(have), str(want), compare.MINIMUM)
        return str(have) == str(want)

    def _met(self, found, key, value):
        want = limits.normalize_value(key[2], value)
        return all(self._meets(found[side].value, want) for side in sides(key))

    def _ours_match(self, before, key, value):
        ours = limits.effective([(self.limits_file, before or '')], key[0], key[2])
        want = limits.normalize_value(key[2], value)
        return all(ours[side].value is not None and str(ours[side].value) == str(want) for side in sides(key))

    def _to_write(self, found, key, value):
        """The value of our line: the desired one, or under the minimum rule for ``-`` (both
        sides in one line) the highest of it and the session's soft and hard values, so that
        neither side is lowered."""
        if self.comparison != compare.MINIMUM or key[1] != '-':
            return value
        best = limits.normalize_value(key[2], value)
        for side in sides(key):
            have = found[side].value
            if have is not None and pam_limits.above(have if have == 'unlimited' else int(have),
                                                     best if best == 'unlimited' else int(best)):
                best = have
        return str(best)

    # ---------------------------------------------------------------- planning
    def plan(self, before):
        """(FileChange, {key: value written}) for our file holding ``before``."""
        changes = {}
        files_before = self.files(before or '')
        for key, value in self.desired:
            found = self.found(files_before, key)
            if self.comparison == compare.MINIMUM and self._met(found, key, value):
                continue   # the session already gets at least this (whatever line gives it): never lowered
            if not self._ours_match(before, key, value):
                changes[key] = self._to_write(found, key, value)
        after = limits.render(before, changes, header=LIMITS_HEADER) if changes else before
        return FileChange(rooted(self.root, self.limits_file), before, after, shown_path=self.limits_file), changes

    # ---------------------------------------------------------------- records
    def records(self, change, changes):
        files_before, files_after = self.files(change.before or ''), self.files(change.after or '')
        return [self._record(key, value, files_before, files_after, changes) for key, value in self.desired]

    def _record(self, key, value, files_before, files_after, changes):
        domain, dummy, item = key
        name = '%s %s %s' % key
        before, after = self.found(files_before, key), self.found(files_after, key)
        now = self.gate.now(before, after)
        values = [now[side].value for side in sides(key)]
        persisted = values[0] if len(set(values)) == 1 else ' '.join(
            '%s=%s' % (side, now[side].value) for side in sides(key))
        details = []
        if key in changes:
            details.append('%s (%s)' % (self.gate.did('write %s' % self.limits_file), changes[key]))
        want = limits.normalize_value(item, value)
        shadowed = False
        for side in sides(key):
            if self._meets(now[side].value, want) and now[side].path not in (None, self.limits_file):
                details.append('%s %s: met by %s' % (side, now[side].value, now[side].where))
            elif key in changes and before[side].value is not None:
                details.append('%s before: %s, from %s' % (side, before[side].value, before[side].where))
            last = after[side]
            if not self._meets(last.value, want) and last.path not in (None, self.limits_file):
                shadowed = True
                details.append('%s: %s gives %s, which wins over %s' % (side, last.where, last.value, self.limits_file))
                self.shadowed.append((name, last.path))
        if is_user_domain(domain) and self.accounts.get(domain) is None:
            details.append('no user %s on this system: only its own and the * lines are counted' % domain)
        details.append('pam_limits applies it at the next login session; running sessions are not read')
        status = self.gate.status(None, self._met(before, key, value), shadowed=shadowed)
        return Setting(name, self.limits_file, want, None, persisted, status, '; '.join(details),
                       comparison=self.comparison)


def _found(value, side):
    if side is None:
        return Found(value, None, 'no file (the value the session inherits)')
    return Found(value, side.path, side.where())
