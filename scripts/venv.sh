#!/usr/bin/env bash
# Create or update .venv/ in the checkout and make the collection usable.
#   scripts/venv.sh          runtime only: ansible-core (requirements/runtime.txt)
#   scripts/venv.sh --test   plus test tools (requirements/test.txt) and the
#                            collections the tests use (containers.podman,
#                            ansible.posix, community.general)
# In both cases this checkout is reachable as `dbhost.tuning` through
# .cache/collections (ANSIBLE_COLLECTIONS_PATH, set by scripts/lib.sh).
# Idempotent: nothing is reinstalled while the requirement files are unchanged.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

with_test=0
for arg in "$@"; do
  case "$arg" in
    --test) with_test=1 ;;
    -h | --help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

requirements="$DBHOST_ROOT/requirements/runtime.txt"
[ "$with_test" = 1 ] && requirements="$DBHOST_ROOT/requirements/test.txt"

make_venv() {
  if [ ! -x "$DBHOST_VENV/bin/python" ]; then
    "$DBHOST_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
      die "$DBHOST_PYTHON is $("$DBHOST_PYTHON" -V 2>&1); ansible-core 2.19 needs Python 3.11 or newer"
    log "creating $DBHOST_VENV"
    "$DBHOST_PYTHON" -m venv "$DBHOST_VENV"
  fi
}

install_requirements() {
  # The stamp records which requirement set was installed and its content hash.
  local stamp="$DBHOST_VENV/.dbhost-requirements" want
  want="$(basename "$requirements") $(cat "$DBHOST_ROOT"/requirements/*.txt | sha256sum | cut -d' ' -f1)"
  if [ -f "$stamp" ] && grep -qxF -- "$want" "$stamp"; then
    log "venv up to date ($(basename "$requirements"))"
    return 0
  fi
  log "installing $(basename "$requirements") into $DBHOST_VENV"
  quiet_pip "$DBHOST_VENV/bin/python" -m pip install --quiet --upgrade pip
  quiet_pip "$DBHOST_VENV/bin/python" -m pip install --quiet -r "$requirements"
  "$DBHOST_VENV/bin/python" -m pip check
  # A test venv also satisfies the runtime set; remember both.
  printf '%s\n' "$want" >"$stamp"
  if [ "$with_test" = 1 ]; then
    printf 'runtime.txt %s\n' "${want#* }" >>"$stamp"
  fi
}

# Copy the collections the tests need out of the `ansible` wheel from PyPI
# (Galaxy may be unreachable; the wheel bundles them). Only the wheel is
# downloaded, none of its dependencies.
install_test_collections() {
  local stamp="$DBHOST_COLLECTIONS/.ansible-$DBHOST_ANSIBLE_BUNDLE_VERSION" wheel_dir="$DBHOST_CACHE/wheels"
  local collection missing=0
  for collection in "${DBHOST_TEST_COLLECTIONS[@]}"; do
    [ -f "$DBHOST_COLLECTIONS/ansible_collections/$collection/MANIFEST.json" ] || missing=1
  done
  if [ "$missing" = 0 ] && [ -f "$stamp" ]; then
    log "collections up to date (from ansible $DBHOST_ANSIBLE_BUNDLE_VERSION)"
    return 0
  fi
  mkdir -p "$wheel_dir" "$DBHOST_COLLECTIONS/ansible_collections"
  if ! compgen -G "$wheel_dir/ansible-$DBHOST_ANSIBLE_BUNDLE_VERSION-*.whl" >/dev/null; then
    log "downloading ansible==$DBHOST_ANSIBLE_BUNDLE_VERSION (wheel only)"
    quiet_pip "$DBHOST_VENV/bin/python" -m pip download --quiet --no-deps --only-binary=:all: \
      --dest "$wheel_dir" "ansible==$DBHOST_ANSIBLE_BUNDLE_VERSION"
  fi
  local wheel
  wheel="$(compgen -G "$wheel_dir/ansible-$DBHOST_ANSIBLE_BUNDLE_VERSION-*.whl" | head -n 1)"
  log "extracting ${DBHOST_TEST_COLLECTIONS[*]} from $(basename "$wheel")"
  "$DBHOST_VENV/bin/python" - "$wheel" "$DBHOST_COLLECTIONS" "${DBHOST_TEST_COLLECTIONS[@]}" <<'EOF'
import os, shutil, sys, zipfile

wheel, dest, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
prefixes = tuple("ansible_collections/%s/" % name for name in wanted)
for name in wanted:
    shutil.rmtree(os.path.join(dest, "ansible_collections", name), ignore_errors=True)
with zipfile.ZipFile(wheel) as archive:
    members = [m for m in archive.namelist() if m.startswith(prefixes)]
    if not members:
        sys.exit("no %s in %s" % (", ".join(wanted), wheel))
    archive.extractall(dest, members)
EOF
  rm -f "$wheel"
  touch "$stamp"
}

# Make this checkout the `dbhost.tuning` collection on ANSIBLE_COLLECTIONS_PATH.
# A symlink (not a build + install) so that tests always see the working tree,
# without a stale copy and without packing .venv/.cache into a tarball.
link_collection() {
  local link="$DBHOST_COLLECTIONS/ansible_collections/dbhost/tuning"
  mkdir -p "$(dirname "$link")"
  if [ "$(readlink "$link" 2>/dev/null)" != "$DBHOST_ROOT" ]; then
    rm -rf "$link"
    ln -s "$DBHOST_ROOT" "$link"
  fi
  log "dbhost.tuning -> $DBHOST_ROOT (ANSIBLE_COLLECTIONS_PATH=$ANSIBLE_COLLECTIONS_PATH)"
}

start=$(date +%s)
make_venv
install_requirements
if [ "$with_test" = 1 ]; then
  install_test_collections
fi
link_collection
log "venv.sh $*: $(($(date +%s) - start)) s"
