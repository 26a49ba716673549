#!/bin/bash
# perf for the arm64 guest's perf suite, cross-built against the arm64
# root's libraries (build/arm64/root, scripts/arm64-userland.sh):
#
#   build/arm64/perf/perf       perf of build/linux, with the perf series,
#                               as make perf builds it for x86-64
#   build/arm64/perf-base/perf  the unpatched 6.12 perf (build/linux-base,
#                               scripts/build-perf-base.sh unpacks it)
#
# Without Python, Perl, slang and libunwind (the suite uses none of them:
# perf's own DWARF unwinding is libdw's) and without BPF skeletons (no
# bperf or off-cpu in the suite; their bootstrap bpftool and clang runs
# would double the build).  Debian's perf 6.1, the suite's third reader,
# is the root's linux-perf.  Incremental: make rebuilds what changed.
#
#   scripts/arm64-perf.sh       (make arm64-perf; make check-arm64 runs it)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
root=$top/build/arm64/root
jobs=${JOBS:-$(nproc)}
say() { echo "arm64-perf: $*" >&2; }
die() { say "$*"; exit 1; }

[ -f "$top/build/arm64/root.stamp" ] || die "no arm64 root in build/arm64/root (make arm64-userland)"
command -v aarch64-linux-gnu-gcc > /dev/null || die "aarch64-linux-gnu-gcc is missing (scripts/deps.sh arm64)"
"$top/scripts/prepare-tree.sh"
# build/linux-base, unpacked (and the x86 perf-base built, which the
# x86 suites use anyway).
"$top/scripts/build-perf-base.sh" > /dev/null

# pkg-config answers with the root's .pc files, their paths under the root.
export PKG_CONFIG_LIBDIR=$root/usr/lib/aarch64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$root
opts=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC="aarch64-linux-gnu-gcc --sysroot=$root"
	PKG_CONFIG=pkg-config NO_LIBPYTHON=1 NO_LIBPERL=1 NO_SLANG=1 NO_LIBUNWIND=1 NO_JVMTI=1
	NO_LIBBABELTRACE=1 BUILD_BPF_SKEL=0)
build() {
	local tree=$1 out=$2 t0
	t0=$(date +%s)
	mkdir -p "$out"
	say "${out#"$top"/}/perf from ${tree#"$top"/} (about 3 min cold)"
	if ! make -s -C "$tree/tools/perf" O="$out" "${opts[@]}" "${@:3}" -j"$jobs" \
		> "$out/build.log" 2>&1; then
		tail -n 30 "$out/build.log" >&2
		die "the build failed (${out#"$top"/}/build.log)"
	fi
	file -b "$out/perf" | grep -q 'ARM aarch64' || die "${out#"$top"/}/perf is not an arm64 program"
	say "${out#"$top"/}/perf: $(($(date +%s) - t0)) s"
}
build "$top/build/linux" "$top/build/arm64/perf" prefix=/usr perfexecdir=libexec/perf-bpfstash-core
build "$top/build/linux-base" "$top/build/arm64/perf-base"
