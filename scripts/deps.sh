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

# "deps.sh deb-arm64": what make deb ARCH=arm64 and make deb-check-arm64
# need besides the above, the Debian way: arm64 as a foreign architecture
# of dpkg (multiarch), crossbuild-essential-arm64, the Build-Depends of
# debian/control as arm64 packages (apt-get build-dep -a arm64: libssl-dev:arm64
# and the others; their amd64 twins are brought to the same version), and
# qemu-user-static with binfmt-support (and arch-test, which mmdebstrap
# asks for), which run arm64 programs in the install test's chroot.
# Quick when done (dpkg-checkbuilddeps says so).
if [ "${1:-}" = deb-arm64 ]; then
	top=$(cd "$(dirname "$0")/.." && pwd)
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	host="crossbuild-essential-arm64 qemu-user-static binfmt-support arch-test"
	missing=""
	for p in $host; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
	if dpkg --print-foreign-architectures | grep -qx arm64 && [ -z "$missing" ] &&
		dpkg-checkbuilddeps -a arm64 "$top/debian/control" 2>/dev/null; then
		echo "deps: deb-arm64: arm64 multiarch, the cross compiler and the arm64 Build-Depends present"
		exit 0
	fi
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "deps: deb-arm64: dpkg --add-architecture arm64"
		$SUDO dpkg --add-architecture arm64
	fi
	echo "deps: deb-arm64: installing$missing and debian/control's Build-Depends for arm64"
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	[ -z "$missing" ] || $SUDO apt-get install -y -qq --no-install-recommends $missing
	(cd "$top" && $SUDO apt-get build-dep -y -qq --no-install-recommends -a arm64 ./)
	dpkg-checkbuilddeps -a arm64 "$top/debian/control" ||
		{ echo "deps: deb-arm64: the arm64 Build-Depends are still not met (above)" >&2; exit 1; }
	exit 0
fi

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
