#!/usr/bin/env bash
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# A throwaway ext4 file system for the direct_io scenarios, inside a privileged test
# container. Loop devices belong to the HOST: this script only ever detaches the one it
# attached itself (recorded in STATE, and checked against our image file), never another.
#   loop.sh setup IMAGE MOUNTPOINT STATE   create IMAGE (64 MiB), attach, mkfs.ext4, mount
#   loop.sh teardown STATE                 unmount, detach our device, remove IMAGE
set -euo pipefail

setup() {
  local image="$1" mountpoint="$2" state="$3" device="" attempt number
  if [ -s "$state" ]; then
    echo "already set up: $(cat "$state")"
    return 0
  fi
  truncate -s 64M "$image"
  for attempt in 1 2 3 4 5; do
    # The container's /dev is a copy made at start: a loop device the host created since
    # has no node here yet, so make the node losetup asks for before attaching.
    device="$(losetup --find)"
    number="${device#/dev/loop}"
    [ -b "$device" ] || mknod "$device" b 7 "$number"
    if losetup "$device" "$image" 2>/dev/null; then
      break
    fi
    device=""  # taken by someone else in between: ask again
    sleep "$attempt"
  done
  [ -n "$device" ] || { echo "no free loop device" >&2; exit 1; }
  printf '%s %s %s\n' "$device" "$image" "$mountpoint" >"$state"
  mkfs.ext4 -q -F -L DBHOSTDATA "$device"
  mkdir -p "$mountpoint"
  mount -t ext4 "$device" "$mountpoint"
  echo "$device"
}

teardown() {
  local state="$1" device image mountpoint backing
  [ -s "$state" ] || { echo "nothing to tear down"; return 0; }
  read -r device image mountpoint <"$state"
  while mountpoint -q "$mountpoint"; do
    umount "$mountpoint"
  done
  backing="$(losetup --noheadings --output BACK-FILE "$device" 2>/dev/null || true)"
  if [ "$backing" = "$image" ]; then
    losetup --detach "$device"
  elif [ -n "$backing" ]; then
    echo "$device is attached to $backing, not to our $image: left alone" >&2
  fi
  rm -f "$image" "$state"
}

case "${1:-}" in
  setup) setup "$2" "$3" "$4" ;;
  teardown) teardown "$2" ;;
  *) echo "usage: $0 setup IMAGE MOUNTPOINT STATE | teardown STATE" >&2; exit 2 ;;
esac
