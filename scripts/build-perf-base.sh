#!/bin/sh
# Build the unpatched 6.12 perf, for the side-by-side comparisons of the
# perf suites: tools/perf from Debian's linux-source-6.12 as shipped, with
# the same options as the patched one ('make perf').
#
#   1. unpack into build/linux-base only what tools/perf/MANIFEST lists
#      (what 'make perf-tar-src-pkg' ships: tools/perf, tools/lib, tools/
#      include, tools/arch, tools/build, tools/scripts, tools/bpf/bpftool
#      for the BPF skeletons, kernel/bpf/disasm.[ch], scripts/bpf_doc.py,
#      and a few arch headers), plus PERF-VERSION-FILE, as in that tarball;
#   2. build it into build/perf-base (log: build/perf-base/build.log).
#
# Idempotent: the tree is unpacked once (about 30 s), and make rebuilds
# nothing when nothing changed.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${BPFSTASH_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
tree=$top/build/linux-base
out=$top/build/perf-base
jobs=${JOBS:-$(nproc)}

die() { echo "build-perf-base: $*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball not found; run scripts/deps.sh (package linux-source-6.12)"

if [ ! -f "$tree/.bpfstash-base" ]; then
	echo "  UNPACK   build/linux-base (tools/perf/MANIFEST of $(basename "$tarball"))"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	top_dir=$(tar -tf "$tarball" | head -n 1 | cut -d/ -f1)
	tar -xf "$tarball" -C "$tree.tmp" "$top_dir/tools/perf/MANIFEST" "$top_dir/Makefile"
	# The MANIFEST's lines are paths and shell patterns, relative to the top.
	sed -e '/^[[:space:]]*$/d' -e "s|^|$top_dir/|" \
		"$tree.tmp/$top_dir/tools/perf/MANIFEST" > "$tree.tmp/list"
	tar -xf "$tarball" -C "$tree.tmp" --wildcards -T "$tree.tmp/list"
	# The version, as make perf-tar-src-pkg records it.
	version=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' -e 's/^SUBLEVEL = //p' \
		"$tree.tmp/$top_dir/Makefile" | paste -sd.)
	printf '#define PERF_VERSION "%s"\n' "$version" > "$tree.tmp/$top_dir/PERF-VERSION-FILE"
	mv "$tree.tmp/$top_dir" "$tree"
	rm -rf "$tree.tmp"
	pkg=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	printf 'perf %s, unpatched (Debian linux-source-6.12 %s)\n' "$version" "$pkg" \
		> "$tree/.bpfstash-base"
fi

mkdir -p "$out"
echo "  PERF     $out/perf (unpatched: $(cat "$tree/.bpfstash-base"))"
if ! make -s -C "$tree/tools/perf" O="$out" NO_LIBPYTHON=1 NO_LIBPERL=1 \
	-j"$jobs" > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log"
	die "the build failed (build/perf-base/build.log)"
fi
