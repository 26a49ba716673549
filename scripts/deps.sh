#!/bin/sh
# Install every Debian package bpfstash needs to build, test and demo.
# Idempotent: only missing packages are installed. As non-root it prints
# what is missing and uses sudo.
set -eu

PKGS="
linux-source-6.12
build-essential bc bison flex cpio kmod rsync xz-utils
libssl-dev libelf-dev libdw-dev dwarves
ccache sparse
clang llvm llvm-dev lld
libbpf-dev libzstd-dev libxxhash-dev zstd
libcmocka-dev pkg-config
libcap-dev libtraceevent-dev libnuma-dev libslang2-dev libunwind-dev
libbabeltrace-dev libperl-dev python3
qemu-system-x86 busybox-static util-linux procps
libarchive-dev libarchive-tools hyperfine
zlib1g-dev liblzma-dev libaio-dev libcmocka-dev gnuplot-nox
binutils elfutils debuginfod libdebuginfod-dev bzip2
systemd
dpkg-dev debhelper lintian mmdebstrap linux-config-6.12 jq e2fsprogs
libbpf-tools bpftrace linux-perf
"

# "deps.sh arm64": also what the arm64 kernel and its guest need.
[ "${1:-}" = arm64 ] && PKGS="$PKGS gcc-aarch64-linux-gnu qemu-system-arm"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

echo "deps: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
	echo "deps: not root, using sudo for:$missing" >&2
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# An empty or stale package index is the common cause of "Unable to locate package".
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
