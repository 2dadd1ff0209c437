#!/usr/bin/env bash
# Install what the Molecule tests need on a Debian 12 host, as root:
#   - podman (rootful, runc runtime) and mmdebstrap from the Debian archive;
#   - shellcheck (used by `ansible-test sanity`);
#   - local base images localhost/dbhost-debian:11, :12 and :13, built with
#     mmdebstrap because no container registry is reachable.
# With --vm, only what the VM lab needs instead (scripts/vmlab.py, the `vm` stage):
#   qemu-system-x86 (TCG), qemu-utils (overlay disks), mmdebstrap, openssh-client.
# Idempotent: packages and images that are already there are left alone.
# Usage: scripts/install-test-deps.sh [--force-images] [--no-images] [--vm]
#   --force-images (or DBHOST_FORCE_IMAGES=1) rebuilds the images.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

force_images="${DBHOST_FORCE_IMAGES:-0}"
build_images=1
vm=0
for arg in "$@"; do
  case "$arg" in
    --vm) vm=1 ;;
    --force-images) force_images=1 ;;
    --no-images) build_images=0 ;;
    -h | --help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

need_root "install-test-deps.sh"

packages=(podman runc mmdebstrap shellcheck git)
if [ "$vm" = 1 ]; then
  packages=(qemu-system-x86 qemu-utils mmdebstrap openssh-client)
fi

install_packages() {
  local missing=() pkg
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "packages already installed: ${packages[*]}"
    return 0
  fi
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # With recommends, as measured: podman's (slirp4netns, uidmap, catatonit, ...)
  # and mmdebstrap's (gpg, arch-test, ...) are what this setup was proven with.
  # The VM lab's without: qemu-system-x86 would bring a desktop (qemu-system-gui).
  local options=()
  [ "$vm" = 0 ] || options=(--no-install-recommends)
  apt-get install -y -q "${options[@]}" "${missing[@]}" >/dev/null
}

podman_ready() {
  # `podman info` fails when the runtime or the config does not suit this host.
  podman info --format '{{.Host.OCIRuntime.Name}}' >/dev/null 2>&1 ||
    die "podman does not work with $CONTAINERS_CONF: $(podman info 2>&1 | tail -n 3)"
}

build_image() {
  local suite="$2" mirror="$3" image="$DBHOST_IMAGE_REPO:$1"
  if [ "$force_images" != 1 ] && podman image exists "$image"; then
    log "image $image exists"
    return 0
  fi
  log "building $image from $suite ($mirror)"
  # Only the main suite is used (no -updates/-security): enough for tests and
  # the same for all three releases. The tarball is streamed into podman import.
  mmdebstrap --quiet --variant=minbase --include="$DBHOST_IMAGE_PACKAGES" \
    --components=main "$suite" - "$mirror" |
    podman import --quiet \
      --change 'CMD ["/sbin/init"]' \
      --change 'STOPSIGNAL SIGRTMIN+3' \
      --message "dbhost.tuning test base: Debian $suite" \
      - "$image" >/dev/null
  podman image exists "$image" || die "building $image failed"
}

timed "apt packages" install_packages
[ "$vm" = 0 ] || exit 0
podman_ready
if [ "$build_images" = 1 ]; then
  mirror="$(apt_mirror)"
  for release in "${DBHOST_IMAGE_RELEASES[@]}"; do
    timed "image ${release%%:*}" build_image "${release%%:*}" "${release#*:}" "$mirror"
  done
fi
