#!/usr/bin/env bash
# The main job: a drift check of THIS machine against the default profile, in check
# mode (nothing on the machine changes), printing setting | desired | live | persisted |
# status and writing drift.json, drift.xml and drift.md to ./drift-report.
#
# Installs what it needs: a virtualenv with the pinned runtime (ansible-core only), and
# the collection built from this checkout and installed into .cache/runtime-collections.
#   scripts/drift-here.sh [--strict] [-- extra ansible-playbook arguments]
#   --strict  exit 3 when the machine drifted (default: report only, exit 0 on drift)
# Exit codes as scripts/drift-check documents them (0 clean, 3 drift, 2 failed, 4 unreachable).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report_only=(--report-only)
if [ "${1:-}" = "--strict" ]; then
  report_only=()
  shift
fi
[ "${1:-}" = "--" ] && shift

bash "$DBHOST_ROOT/scripts/venv.sh"

# Build the collection from this checkout and install it where only this job looks.
build_dir="$DBHOST_CACHE/build"
install_dir="$DBHOST_CACHE/runtime-collections"
rm -rf "$build_dir"
mkdir -p "$build_dir" "$install_dir"
(cd "$DBHOST_ROOT" && ansible-galaxy collection build --force --output-path "$build_dir" >/dev/null)
# The install folder is the configured collections path before the install, so that
# ansible-galaxy does not warn that it installs where Ansible will not look.
export ANSIBLE_COLLECTIONS_PATH="$install_dir"
ansible-galaxy collection install --force --no-deps -p "$install_dir" "$build_dir"/dbhost-tuning-*.tar.gz >/dev/null
installed="$install_dir/ansible_collections/dbhost/tuning"
log "running the drift check from $(basename "$build_dir"/dbhost-tuning-*.tar.gz)"

export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
exec "$DBHOST_VENV/bin/python" "$installed/scripts/drift_check.py" "${report_only[@]}" \
  --playbook "$installed/playbooks/drift.yml" --report-dir "${DBHOST_DRIFT_REPORT_DIR:-$PWD/drift-report}" -- \
  -i "$installed/inventory/this_host.yml" -e "ansible_python_interpreter=$DBHOST_VENV/bin/python" "$@"
