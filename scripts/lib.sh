# shellcheck shell=bash disable=SC2034  # variables here are used by the scripts that source this file
# Shared helpers for the scripts in scripts/. Source it, do not run it:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Sourcing sets up the environment the tools need (venv on PATH, collections
# path, podman config), so an interactive shell can do the same:
#   . scripts/lib.sh && molecule converge -s kernel_params

# The checkout (collection root) is the parent of this file's folder.
DBHOST_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DBHOST_VENV="${DBHOST_VENV:-$DBHOST_ROOT/.venv}"
DBHOST_CACHE="${DBHOST_CACHE:-$DBHOST_ROOT/.cache}"
DBHOST_COLLECTIONS="$DBHOST_CACHE/collections"
# Python used to create the venv; ansible-core 2.19 needs 3.11 or newer.
DBHOST_PYTHON="${DBHOST_PYTHON:-python3}"

# Debian releases the Molecule base images are built from: "tag:suite".
DBHOST_IMAGE_REPO="localhost/dbhost-debian"
DBHOST_IMAGE_RELEASES=("11:bullseye" "12:bookworm" "13:trixie")
# Base image contents. systemd runs as PID 1 in the test containers.
DBHOST_IMAGE_PACKAGES="python3,python3-apt,procps,numactl,e2fsprogs,kmod,iproute2,systemd,systemd-sysv,dbus,util-linux,udev"

# Collections the tests need (the runtime needs ansible-core only). They are
# taken from the `ansible` package on PyPI because Galaxy may be unreachable.
DBHOST_ANSIBLE_BUNDLE_VERSION="12.3.0"
DBHOST_TEST_COLLECTIONS=("containers/podman" "ansible/posix" "community/general")

export ANSIBLE_COLLECTIONS_PATH="$DBHOST_COLLECTIONS"
# podman reads only this file when the variable is set: runc + ulimits for this host kind.
export CONTAINERS_CONF="$DBHOST_ROOT/containers/containers.conf"
export ANSIBLE_FORCE_COLOR="${ANSIBLE_FORCE_COLOR:-0}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
case ":$PATH:" in
  *":$DBHOST_VENV/bin:"*) ;;
  *) export PATH="$DBHOST_VENV/bin:$PATH" ;;
esac

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Run a command and report its wall time in seconds: timed LABEL CMD...
timed() {
  local label="$1" start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  log "$label: $(($(date +%s) - start)) s (exit $rc)"
  return "$rc"
}

# Run pip (or anything) without the "Location 'file:...' is ignored" warnings a
# machine-wide pip config pointing at absent local indexes prints per package.
quiet_pip() {
  "$@" 2> >(grep -v "^WARNING: Location 'file:" >&2)
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "$1 must run as root (it installs packages and runs rootful podman)"
}

# Print the Debian mirror this machine's apt uses (main archive, not security).
# Read at run time so that no mirror host name is written into the repository.
apt_mirror() {
  local uri=""
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    uri=$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' \
      /etc/apt/sources.list.d/*.sources | grep -v -e '-security' -e '/debian-security' | head -n 1)
  fi
  if [ -z "$uri" ]; then
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' |
      grep -v -e '-security' -e '/debian-security' | head -n 1)
  fi
  [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*"
  printf '%s\n' "${uri%/}"
}

# Molecule scenario names, one per line (folders with a molecule.yml).
molecule_scenarios() {
  local file
  for file in "$DBHOST_ROOT"/molecule/*/molecule.yml; do
    [ -e "$file" ] || continue
    basename "$(dirname "$file")"
  done
}

# Sysctl keys that are host-global even inside a privileged container; the
# Molecule scenarios save and restore them, and test.sh checks they came back.
host_global_sysctls() {
  sed -e 's/#.*//' -e 's/[[:space:]]//g' "$DBHOST_ROOT/molecule/shared/host-global-sysctls.txt" | grep -v '^$'
}
