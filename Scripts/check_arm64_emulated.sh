#!/usr/bin/env bash
# Builds the package and runs its tests as aarch64 (arm64) Linux code on an x86-64 Debian host,
# under qemu-user emulation: the only way to exercise the arm64 paths (NEON through Swift SIMD, no
# generated x86 kernels) on a machine without an arm64 CPU. It checks correctness, not speed:
# emulated code runs 10-40x slower and its timings mean nothing.
#
#   sudo Scripts/check_arm64_emulated.sh [ROOT] [-- SWIFT TEST ARGUMENTS]
#
# ROOT (default /var/tmp/swifttflite-arm64) receives a Debian trixie arm64 system made with
# debootstrap, with Debian's swiftlang package (Swift 6.0.3, the oldest toolchain Package.swift
# accepts) and the C headers it links against. The first run takes 10-20 minutes to set it up and
# reuses it after that. The script registers qemu-aarch64 with binfmt_misc, mounts /proc, /sys
# and /dev into ROOT, clones this repository's HEAD into ROOT/src and runs `swift build
# --build-tests` and `swift test --skip-build` there, passing on anything after `--` (for example
# `-- --filter TFLiteLinearAlgebraTests`). Needs root and Debian's package archive; a full debug
# build and test run takes hours on two emulated cores.
set -euo pipefail
cd "$(dirname "$0")/.."

root="${1:-/var/tmp/swifttflite-arm64}"
shift $(( $# > 0 ? 1 : 0 ))
[ "${1:-}" = "--" ] && shift
repository="$(pwd)"

if ! command -v qemu-aarch64-static >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static binfmt-support debootstrap
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  update-binfmts --enable qemu-aarch64
fi

if [ ! -x "$root/usr/bin/swift" ]; then
  if [ ! -x "$root/bin/bash" ]; then
    debootstrap --arch=arm64 --variant=minbase --include=ca-certificates trixie "$root" \
      http://deb.debian.org/debian
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends swiftlang libc6-dev libgcc-14-dev libstdc++-14-dev binutils'
fi

# The Swift driver finds its toolchain through /proc/self/exe: mount what a running system has.
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/sys" || mount -t sysfs sys "$root/sys"
mountpoint -q "$root/dev" || mount --rbind /dev "$root/dev"

rm -rf "$root/src"
git clone --quiet "$repository" "$root/src"
chroot "$root" bash -c 'cd /src && uname -m && swift --version && swift build --build-tests -j 2'
chroot "$root" bash -c 'cd /src && swift test --skip-build "$@"' arm64-test "$@"
