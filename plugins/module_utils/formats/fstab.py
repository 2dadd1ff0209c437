# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the fstab and vfstab formats (parse / render keeping every byte).

- Linux ``/etc/fstab`` (fstab(5)): six whitespace-separated fields
  ``spec file vfstype mntops freq passno``; the last three may be missing;
  spaces in a field are written ``\\040``; ``#`` starts a comment line.
- Solaris ``/etc/vfstab`` (vfstab(4)): seven fields ``device-to-mount device-to-fsck
  mount-point FS-type fsck-pass mount-at-boot mount-options``; ``-`` stands for an
  empty field, in particular for "no options".

parse() keeps every line as (lead, fields, separators, trail, eol), so that render()
gives back an untouched line byte for byte: only the options field of a line it is
asked to change is re-rendered; spacing, tabs, comments, other lines and line ends stay.

Pure Python: unit-tested without an Ansible runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbhost.tuning.plugins.module_utils.engine.mountinfo import unescape

_BLANKS = ' \t'
_SEPARATOR = re.compile(r'([ \t]+)')


def normalize_path(path):
    """A mount point without its trailing slashes (``/`` stays ``/``)."""
    if len(path) > 1:
        path = path.rstrip('/') or '/'
    return path


class Entry(object):
    """One mount line of a file: where its fields are, so one field can be replaced."""

    def __init__(self, lineno, index, mount_point, fstype, options, source):
        self.lineno = lineno
        self.index = index
        self.mount_point = mount_point
        self.fstype = fstype
        self.options = options
        self.source = source


class TableFile(object):
    """A parsed fstab-like file: ``lines`` holds (raw, parsed) pairs, parsed None for a
    comment or blank line, else (lead, fields, separators, trail, eol)."""

    mount_field = None
    type_field = None
    options_field = None
    min_fields = None
    empty_options = None

    def __init__(self, text):
        self.text = text or ''
        self.lines = [(raw, self._split(raw)) for raw in self.text.splitlines(True)]

    @staticmethod
    def _split(raw):
        body = raw.rstrip('\r\n')
        eol = raw[len(body):]
        # Fields are separated by blanks (fstab(5), vfstab(4): spaces and tabs) and by
        # nothing else: a U+00A0 inside a field stays part of it, as mount(8) reads it.
        stripped = body.strip(_BLANKS)
        if not stripped or stripped.startswith('#'):
            return None
        lead = body[:len(body) - len(body.lstrip(_BLANKS))]
        trail = body[len(body.rstrip(_BLANKS)):]
        parts = _SEPARATOR.split(stripped)
        return (lead, parts[0::2], parts[1::2], trail, eol)

    def entries(self):
        """The mount lines, in file order (lines with too few fields are skipped)."""
        found = []
        for index, (dummy, parsed) in enumerate(self.lines):
            if parsed is None:
                continue
            fields = parsed[1]
            if len(fields) <= self.type_field or len(fields) < self.min_fields:
                continue
            options = fields[self.options_field] if len(fields) > self.options_field else None
            found.append(Entry(index + 1, index, normalize_path(unescape(fields[self.mount_field])),
                               fields[self.type_field], self.split_options(options), fields[0]))
        return found

    def find(self, path):
        return [entry for entry in self.entries() if entry.mount_point == path]

    def split_options(self, field):
        if field is None or field == self.empty_options:
            return []
        return [token for token in field.split(',') if token != '']

    def options_text(self, tokens):
        return ','.join(tokens) if tokens else self.empty_options

    def render(self, changes):
        """``changes``: {line index: new option list}.  Every other line is kept byte for byte."""
        output = []
        for index, (raw, parsed) in enumerate(self.lines):
            if index not in changes:
                output.append(raw)
                continue
            lead, fields, seps, trail, eol = parsed
            fields = list(fields)
            seps = list(seps)
            text = self.options_text(changes[index])
            if len(fields) > self.options_field:
                fields[self.options_field] = text
            else:
                # fstab lines may stop after the type; add the options with the line's own separator.
                while len(fields) <= self.options_field:
                    seps.append(seps[-1] if seps else '\t')
                    fields.append(text if len(fields) == self.options_field else '-')
            body = fields[0] + ''.join(sep + field for sep, field in zip(seps, fields[1:]))
            output.append(lead + body + trail + eol)
        return ''.join(output)


class FstabFile(TableFile):
    mount_field = 1
    type_field = 2
    options_field = 3
    min_fields = 3
    # fstab has no empty options field: "defaults" is how it says "nothing special".
    empty_options = 'defaults'

    def split_options(self, field):
        # "defaults" is kept as an option like any other: adding noatime gives "defaults,noatime".
        if field is None:
            return []
        return [token for token in field.split(',') if token != '']


class VfstabFile(TableFile):
    mount_field = 2
    type_field = 3
    options_field = 6
    min_fields = 7
    empty_options = '-'


def parse(text, vfstab=False):
    """The table of an fstab (or, with ``vfstab``, a Solaris vfstab) text."""
    return (VfstabFile if vfstab else FstabFile)(text)


def render(table, changes=None):
    """The text of ``table`` with {line index: new option list} applied; no change gives the input back."""
    return table.render(changes or {})
