# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's module_utils kept on the host between runs, and the import hook that serves them.

The host_state action plugin runs the small run_cached module instead of host_state, so that its
payload carries none of this collection's module_utils (AnsiballZ ships every file a module imports,
and host_state imports them all: about 970 KB of source, compiled again on every run, since a
zip import writes no .pyc). run_cached names the code it needs by its digest; the host keeps that
code in a folder named after the digest, with its .pyc, and a run finds it there. When the folder is
missing, run_cached says so without doing anything else, and the action plugin sends the code in a
second round trip: it is stored (when it can be) and run.

A stored copy is used only when its folder and the folder above it belong to the user the module
runs as and nobody else may write to them, and when its sources still have the digest they are
named after; otherwise it is not used. The sources are written into a new folder beside the others
and renamed into place, so that a copy is whole or absent, also when two runs store it at once.

Standard library only: run_cached imports this file and nothing else of the collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import errno
import hashlib
import importlib.machinery
import importlib.util
import io
import json
import os
import py_compile
import shutil
import stat
import sys
import tempfile
import time
import zipfile

PREFIX = 'ansible_collections.dbhost.tuning.plugins.module_utils'
SYSTEM_DIR = '/var/cache/dbhost-tuning/code'
# a copy of other code (an older release of the collection) is removed when a new one is stored and the
# older one was stored this long ago; a run still importing from it has long finished by then
KEEP_SECONDS = 3600
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


class CacheError(Exception):
    """A copy cannot be kept or used in the folder named."""


# ------------------------------------------------------------------ the code, on either side

def source_files(top):
    """{path relative to top, with '/': bytes} of every .py file under top (the module_utils folder)."""
    files = {}
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(names):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                with open(path, 'rb') as handle:
                    files[os.path.relpath(path, top).replace(os.sep, '/')] = handle.read()
    return files


def digest(files):
    """The SHA-256 that names files: every path and content, in path order."""
    total = hashlib.sha256()
    for name in sorted(files):
        content = files[name]
        total.update(('%s\0%d\0' % (name, len(content))).encode('utf-8'))
        total.update(content)
    return total.hexdigest()


def pack(files):
    """files as base64 text of a deflated zip: what the action plugin sends when the host lacks them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w', zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return base64.b64encode(buffer.getvalue()).decode('ascii')


def _safe_name(name):
    parts = name.split('/')
    return name.endswith('.py') and all(part not in ('', '.', '..') for part in parts)


def unpack(text, code_hash):
    """The files pack() made, checked against code_hash; CacheError when they are not what it names."""
    try:
        with zipfile.ZipFile(io.BytesIO(base64.b64decode(text))) as archive:
            files = dict((name, archive.read(name)) for name in archive.namelist())
    except (ValueError, TypeError, zipfile.BadZipfile) as error:
        raise CacheError('the code sent is not a zip in base64: %s' % error)
    bad = sorted(name for name in files if not _safe_name(name))
    if bad:
        raise CacheError('the code sent holds a path that is not a relative .py file: %s' % bad[0])
    if digest(files) != code_hash:
        raise CacheError('the code sent does not have the digest %s' % code_hash)
    return files


# ------------------------------------------------------------------ host_state's result, on the way back

# run_cached returns host_state's result with all but these keys in one JSON text under PACKED, which the
# action plugin puts back as they were. The controller walks each value of a module's result in the worker
# (the JSON decoder that tags every value; Mitogen wraps each one as unsafe), and host_state's has over a
# thousand with its invocation; one text is one value there. The keys left out are those Ansible reads
# before the action plugin does.
PACKED = 'packed_result'
UNPACKED = frozenset(['changed', 'failed', 'msg', 'exception', 'skipped', 'warnings', 'deprecations',
                      'drift_gate', 'restart_required', 'reboot_required', 'code_missing', 'ansible_facts'])


def pack_result(result):
    """result with every key but UNPACKED (and Ansible's _ansible_*) in one JSON text under PACKED;
    result as it is when it has none or is not plain JSON."""
    packed = dict((key, value) for key, value in result.items()
                  if key not in UNPACKED and not key.startswith('_ansible_'))
    if not packed:
        return result
    try:
        text = json.dumps(packed, separators=(',', ':'), allow_nan=False)
    except (TypeError, ValueError):
        return result
    kept = dict((key, value) for key, value in result.items() if key not in packed)
    kept[PACKED] = text
    return kept


def unpack_result(result):
    """What pack_result() packed, put back into result (a new dict); result as it is when nothing was
    packed. ValueError when the packed text is not a JSON object."""
    if PACKED not in result:
        return result
    unpacked = dict((key, value) for key, value in result.items() if key != PACKED)
    packed = json.loads(result[PACKED])
    if not isinstance(packed, dict):
        raise ValueError('%s is not a JSON object' % PACKED)
    unpacked.update(packed)
    return unpacked


# ------------------------------------------------------------------ the copy on the host

def default_dir():
    """/var/cache/dbhost-tuning/code for root; for another user, dbhost-tuning/code in their cache folder."""
    if os.geteuid() == 0:
        return SYSTEM_DIR
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'dbhost-tuning', 'code')


def _check_owned(path, owners):
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise CacheError('%s is not a folder' % path)
    if info.st_uid not in owners:
        raise CacheError('%s belongs to uid %d, not to uid %d' % (path, info.st_uid, os.geteuid()))
    if info.st_mode & 0o022:
        raise CacheError('%s may be written by others (mode %04o)' % (path, stat.S_IMODE(info.st_mode)))


def check_dir(root):
    """CacheError unless root is a folder of this user that nobody else may write to, in a folder of this
    user or root that nobody else may write to either."""
    _check_owned(root, (os.geteuid(),))
    _check_owned(os.path.dirname(os.path.abspath(root)) or '/', (os.geteuid(), 0))


def lookup(root, code_hash):
    """The folder holding the code named code_hash, or None when there is no such copy. CacheError when
    a copy is there but cannot be trusted (whose folder others may write to, or whose sources differ)."""
    folder = os.path.join(root, code_hash)
    try:
        os.lstat(folder)
    except OSError as error:
        if error.errno == errno.ENOENT:
            return None
        raise CacheError('%s: %s' % (folder, error.strerror))
    check_dir(root)
    _check_owned(folder, (os.geteuid(),))
    if digest(source_files(folder)) != code_hash:
        raise CacheError('%s no longer holds the code it is named after' % folder)
    return folder


def _write_tree(folder, files):
    for name in sorted(files):
        path = os.path.join(folder, *name.split('/'))
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o700)
        with open(path, 'wb') as handle:
            handle.write(files[name])
        # the .pyc beside each source is the point of keeping them here: later runs load it, not compile
        py_compile.compile(path, doraise=True)


def _prune(root, keep, now):
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if name == keep:
            continue
        try:
            if now - os.lstat(path).st_mtime > KEEP_SECONDS:
                shutil.rmtree(path)
        except OSError:
            pass   # another run removed it first, or it is not ours to remove: it only takes room


def store(root, code_hash, files):
    """Keep files in root/code_hash (made whole in a new folder beside it, then renamed into place), and
    remove the copies of other code stored more than KEEP_SECONDS ago. Returns the folder. CacheError
    (nothing half-written left) when root cannot be used or written."""
    # every folder made on the way (/var/cache/dbhost-tuning) and every file of the copy, its .pyc
    # included, is this user's alone whatever the umask: a group-writable folder above root would make
    # the copy unusable, and a .pyc others may write is code they could run as this user (lookup checks
    # the sources' digest, not the .pyc)
    umask = os.umask(0o077)
    try:
        return _store(root, code_hash, files)
    finally:
        os.umask(umask)


def _store(root, code_hash, files):
    folder = os.path.join(root, code_hash)
    try:
        if not os.path.isdir(root):
            os.makedirs(root, 0o700)
        check_dir(root)
        try:
            if lookup(root, code_hash):
                return folder   # another run stored it since this one looked
        except CacheError:
            # a copy that cannot be used (edited, or left writable by others) in a folder that is this
            # user's alone: it is replaced
            shutil.rmtree(folder, ignore_errors=True)
        new = tempfile.mkdtemp(prefix='.new-', dir=root)
    except OSError as error:
        raise CacheError('cannot keep the code in %s: %s' % (root, error.strerror or error))
    try:
        _write_tree(new, files)
        os.rename(new, folder)
    except (OSError, py_compile.PyCompileError) as error:
        shutil.rmtree(new, ignore_errors=True)
        if os.path.isdir(folder):   # another run stored the same code at the same time
            return lookup(root, code_hash)
        raise CacheError('cannot keep the code in %s: %s' % (root, getattr(error, 'strerror', None) or error))
    _prune(root, code_hash, time.time())
    return folder


# ------------------------------------------------------------------ serving imports

class _MemoryLoader(object):
    """Runs a module's source held in memory (code that could not be stored)."""

    def __init__(self, source, filename):
        self.source = source
        self.filename = filename

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = self.filename
        exec(compile(self.source, self.filename, 'exec', dont_inherit=True), module.__dict__)


class Finder(object):
    """A sys.meta_path finder for PREFIX and the modules below it: from a folder of this code (with its .pyc),
    or from files held in memory ({relative path: bytes})."""

    def __init__(self, folder=None, files=None):
        self.folder = folder
        self.files = files

    def _spec_in_folder(self, name, relative):
        base = os.path.join(self.folder, *relative) if relative else self.folder
        package = os.path.join(base, '__init__.py')
        if os.path.isfile(package):
            return importlib.util.spec_from_file_location(name, package, submodule_search_locations=[base])
        if relative and os.path.isfile(base + '.py'):
            return importlib.util.spec_from_file_location(name, base + '.py')
        if os.path.isdir(base):
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [base]
            return spec
        return None

    def _spec_in_memory(self, name, relative):
        base = '/'.join(relative)
        for path, package in (((base + '/' if base else '') + '__init__.py', True), (base + '.py', False)):
            if path in self.files:
                loader = _MemoryLoader(self.files[path], '<%s>/%s' % (PREFIX, path))
                return importlib.util.spec_from_loader(name, loader, is_package=package)
        if any(path.startswith(base + '/') for path in self.files) or not base:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = []
            return spec
        return None

    def find_spec(self, name, path=None, target=None):
        if name != PREFIX and not name.startswith(PREFIX + '.'):
            return None
        relative = name[len(PREFIX) + 1:].split('.') if name != PREFIX else []
        if self.folder is not None:
            return self._spec_in_folder(name, relative)
        return self._spec_in_memory(name, relative)


def serve(finder):
    """Put finder first on sys.meta_path (in place of one put there before), so that every module below
    PREFIX not imported yet comes from it."""
    sys.meta_path[:] = [entry for entry in sys.meta_path if not isinstance(entry, Finder)]
    sys.meta_path.insert(0, finder)
    importlib.invalidate_caches()
