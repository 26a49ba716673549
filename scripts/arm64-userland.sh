#!/bin/bash
# The arm64 guest's userland, for scripts/vm-run -k arm64:
#
#   build/arm64/root        Debian 12's arm64 packages, unpacked by
#                           mmdebstrap --variant=extract (no maintainer
#                           script runs, so no arm64 emulation is needed
#                           here): the guest's root over 9p, and the cross
#                           compiler's --sysroot (the -dev packages)
#   build/arm64/headers     the tree's uapi headers for ARCH=arm64 (the
#                           syscall numbers differ from x86's)
#   build/arm64/libbpfstash libbpfstash, cross-built
#   build/arm64/tests       the in-guest suites and their helpers,
#                           cross-built (tests/Makefile's "arch" goal); the
#                           BPF programs are build/tests/progs, the same
#                           objects on every architecture
#   build/arm64/bpfstash    bpfstash(8), cross-built
#   build/arm64/bpfstash-gc bpfstash-gc(8), cross-built
#
# The root is made again only when the package list below or the project's
# path changes (build/arm64/root.stamp); the rest is built incrementally.
# Needs network access to the Debian mirror apt uses, as make deb-check does.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/arm64
root=$out/root
say() { echo "arm64-userland: $*" >&2; }
die() { say "$*"; exit 1; }

# What the suites run (bash, coreutils, busybox for the final reboot, bc,
# mount, ip, jq, bpftool, and libbpf-tools and bpftrace for the kinds suite's
# programs written elsewhere, binutils for perf annotate's objdump, Debian's
# perf 6.1 for the perf suite's older reader, bzip2 for perf archive) and link (libbpf, libelf,
# zlib, OpenSSL, zstd, libarchive; perf's libdw, libtraceevent, libcap,
# libnuma, liblzma), with the -dev packages the cross builds compile against.
pkgs="libc6 bash dash coreutils grep sed gawk busybox mount bc findutils diffutils procps
iproute2 util-linux kmod bpftool libbpf-tools bpftrace binutils linux-perf jq bzip2 libbpf1 libelf1 zlib1g libssl3 libzstd1 libarchive13
libc6-dev linux-libc-dev libbpf-dev libelf-dev libdw-dev zlib1g-dev libssl-dev libzstd-dev
libarchive-dev libdebuginfod-dev libtraceevent-dev libcap-dev libnuma-dev liblzma-dev libxxhash-dev"
stamp="$(echo $pkgs) @ $top"

command -v aarch64-linux-gnu-gcc > /dev/null || die "aarch64-linux-gnu-gcc is missing (scripts/deps.sh arm64)"
command -v mmdebstrap > /dev/null || die "mmdebstrap is missing (scripts/deps.sh)"
mkdir -p "$out"

if [ ! -f "$out/root.stamp" ] || [ "$(cat "$out/root.stamp")" != "$stamp" ]; then
	say "unpacking Debian 12's arm64 packages into build/arm64/root (about a minute)"
	rm -rf "$root" "$out/root.stamp"
	# shellcheck disable=SC2086
	mmdebstrap --quiet --variant=extract --arch=arm64 --include="$(echo $pkgs | tr ' ' ',')" \
		bookworm "$root" > "$out/mmdebstrap.log" 2>&1 ||
		die "mmdebstrap failed (build/arm64/mmdebstrap.log): $(tail -n 2 "$out/mmdebstrap.log" | tr '\n' ' ')"
	# The guest's first program: it mounts the project at its host path
	# (a mount point made here) and runs the x86 guest's own init.
	install -m 755 "$top/tests/vm/init-arm64" "$root/init"
	# What update-alternatives would have made (no maintainer script ran).
	ln -sf gawk "$root/usr/bin/awk"
	mkdir -p "$root$top"
	echo "$stamp" > "$out/root.stamp"
fi

cc="aarch64-linux-gnu-gcc --sysroot=$root"
say "uapi headers for arm64 (build/arm64/headers)"
make -s -C "$top/build/linux" ARCH=arm64 O="$out/headers-obj" \
	INSTALL_HDR_PATH="$out/headers" headers_install
say "libbpfstash, bpfstash(8), bpfstash-gc(8) and the suites, cross-built (build/arm64/)"
make -s -C "$top/tools/lib/bpfstash" TOP="$top" O="$out/libbpfstash" CC="$cc" \
	AR=aarch64-linux-gnu-ar
make -s -C "$top/tools/bpfstash" TOP="$top" O="$out/bpfstash" CC="$cc" \
	LIBBPFSTASH_DIR="$out/libbpfstash"
make -s -C "$top/tools/bpfstash-gc" TOP="$top" O="$out/bpfstash-gc" CC="$cc" \
	LIBBPFSTASH_DIR="$out/libbpfstash"
make -s -C "$top/tests" TOP="$top" O="$out/tests" CC="$cc" HEADERS="$out/headers/include" \
	LIBBPFSTASH_DIR="$out/libbpfstash" arch
