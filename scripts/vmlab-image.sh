#!/usr/bin/env bash
# Build the VM lab's Debian 12 disk image from Debian's packages (no cloud image):
#   mmdebstrap --variant=minbase into a folder, the lab's settings (networkd with DHCP,
#   sshd with the lab's key for root, the serial console, no timers that wake up
#   during a test), then `mkfs.ext4 -d` of that folder into a raw disk image.
# Usage: scripts/vmlab-image.sh OUTDIR PACKAGES PUBKEY
#   OUTDIR    gets root.img (raw ext4, the whole disk is the file system: root=/dev/vda),
#             vmlinuz and initrd.img (booted with -kernel/-initrd), packages.txt
#   PACKAGES  comma-separated packages over minbase
#   PUBKEY    the public key file baked into /root/.ssh/authorized_keys
# scripts/vmlab.py calls it and caches OUTDIR under .cache/vmlab/, keyed by the package
# list and this script. Runs as root (mmdebstrap's root mode, files owned by root).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -eq 3 ] || die "usage: vmlab-image.sh OUTDIR PACKAGES PUBKEY"
out="$1"
packages="$2"
pubkey="$3"
suite="${DBHOST_VMLAB_SUITE:-bookworm}"
size="${DBHOST_VMLAB_ROOT_SIZE:-3G}"
need_root "vmlab-image.sh"
[ -s "$pubkey" ] || die "no public key at $pubkey"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"

mirror="$(apt_mirror)"
mkdir -p "$out"
tree="$(mktemp -d "$out/tree.XXXXXX")"
# shellcheck disable=SC2064  # expand now: $tree is this run's own folder
trap "rm -rf '$tree'" EXIT

log "vmlab image: mmdebstrap $suite from $mirror with $packages"
# The tree is for a disk image: no documentation, no locales, no apt lists.
mmdebstrap --quiet --variant=minbase --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  "$suite" "$tree" "$mirror"

echo dbhost-vm >"$tree/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tdbhost-vm\n' >"$tree/etc/hosts"
printf '/dev/vda\t/\text4\trw,errors=remount-ro\t0\t1\n' >"$tree/etc/fstab"
mkdir -p "$tree/etc/systemd/network"
printf '[Match]\nName=e*\n\n[Network]\nDHCP=ipv4\n' >"$tree/etc/systemd/network/80-vmlab.network"
install -d -m 0700 "$tree/root/.ssh"
install -m 0600 "$pubkey" "$tree/root/.ssh/authorized_keys"
# sshd: keys only, no reverse DNS look-up (user networking has no resolver for it).
printf 'PasswordAuthentication no\nUseDNS no\n' >"$tree/etc/ssh/sshd_config.d/vmlab.conf"
chroot "$tree" systemctl enable --quiet systemd-networkd.service ssh.service serial-getty@ttyS0.service
# Nothing should wake up in the middle of a test and compete for the emulated CPUs.
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
  man-db.timer systemd-networkd-wait-online.service; do
  chroot "$tree" systemctl mask --quiet "$unit" 2>/dev/null || true
done
# TuneD (when in the list) stays off until a test enables it: its daemon would otherwise pick
# a recommended profile at every boot and retune what the reboot scenario checks.
if [ -e "$tree/lib/systemd/system/tuned.service" ] || [ -e "$tree/usr/lib/systemd/system/tuned.service" ]; then
  chroot "$tree" systemctl disable --quiet tuned.service
  rm -f "$tree/etc/tuned/active_profile" "$tree/etc/tuned/profile_mode"
fi
rm -rf "$tree"/var/lib/apt/lists/* "$tree"/var/cache/apt/*.bin

# The kernel and initrd are booted directly (-kernel/-initrd); copies stay in the image.
kernel="$(find "$tree/boot" -maxdepth 1 -name 'vmlinuz-*' | sort | tail -n 1)"
initrd="$(find "$tree/boot" -maxdepth 1 -name 'initrd.img-*' | sort | tail -n 1)"
if [ -z "$kernel" ] || [ -z "$initrd" ]; then
  die "no kernel or initrd under $tree/boot (is linux-image-amd64 in the list?)"
fi
cp "$kernel" "$out/vmlinuz.tmp" && cp "$initrd" "$out/initrd.img.tmp"

rm -f "$out/root.img.tmp"
truncate -s "$size" "$out/root.img.tmp"
mkfs.ext4 -q -F -L vmlab-root -d "$tree" "$out/root.img.tmp"
printf '%s\n' "${packages//,/$'\n'}" >"$out/packages.txt"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
mv "$out/initrd.img.tmp" "$out/initrd.img"
mv "$out/root.img.tmp" "$out/root.img"
log "vmlab image: $out/root.img ($(du -sh --apparent-size "$out/root.img" | cut -f1) apparent, $(du -sh "$out/root.img" | cut -f1) used)"
