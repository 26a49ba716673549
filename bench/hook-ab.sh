#!/bin/sh
# The load hook before and after a change: the hook benchmark
# (bench/hook-kunit.sh) built twice as user-mode Linux, once with this
# checkout's store and once with REV's, then the two binaries run in
# turn N times each, so that both see the same host load.
#
#   bench/hook-ab.sh [--rev-bench] REV [N]        (N defaults to 20)
#
# REV's store files (kernel/bpf/stash*.c, the headers) are put into a
# copy of build/linux made of hard links (build/linux-ab, removed after
# the build), so the prepared tree, and a make check using it, are not
# touched.
# Both builds run this checkout's benchmark (kernel/bpf/stash_bench_kunit.c)
# and series of patches: REV must have the same patches/ as this checkout,
# since only the store's own files are swapped.  With --rev-bench, REV's
# build takes REV's benchmark, REV's view (fs/bpfstash) and REV's captured
# programs too (for a REV of another entry format, whose benchmark reads
# its own fixtures), on this checkout's patches: REV's store must build on
# them.
#
# Prints, per program, the median of the hook's cost beyond its hashing
# over all runs and over the "idle" runs (those whose hashing was within
# 5% of the fastest seen by either build).  The runs' figures are kept in
# build/bench/results/hook-ab.csv (build, run, program, hook_ns, hash_ns,
# beyond_ns).  Not part of make check or make bench: two UML builds, each
# about 3 minutes with ccache (up to 28 cold on 2 cores), then under 2 s
# per pair of runs.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
abtree=$top/build/linux-ab
new=$top/build/kunit-um
old=$top/build/kunit-um-ab
csv=$top/build/bench/results/hook-ab.csv

die() { echo "hook-ab: $*" >&2; exit 1; }
say() { echo "hook-ab: $*" >&2; }

rev_bench=0
case "${1:-}" in
-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
--rev-bench) rev_bench=1; shift ;;
esac
[ -n "${1:-}" ] || die "usage: bench/hook-ab.sh [--rev-bench] REV [N] (see --help)"
rev=$1
runs=${2:-20}
case "$runs" in
''|*[!0-9]*|0) die "N must be a positive number of runs, not '$runs'" ;;
esac
git -C "$top" rev-parse --verify -q "$rev^{commit}" > /dev/null ||
	die "'$rev' is not a commit of this repository"
[ "$rev_bench" = 1 ] || git -C "$top" diff --quiet "$rev" -- patches/ ||
	die "$rev's patches/ differ from this checkout's; this A/B swaps only the store's own files (see --rev-bench)"

files="kernel/bpf/stash.c kernel/bpf/stash.h kernel/bpf/stash_blob.c
kernel/bpf/stash_prog.c kernel/bpf/stash_control.c
kernel/bpf/stash_image.c kernel/bpf/stash_kunit.c include/linux/bpfstash.h
include/uapi/linux/bpfstash.h include/trace/events/bpfstash.h"
revprogs=$top/build/bench/hook-progs
if [ "$rev_bench" = 1 ]; then
	files="$files kernel/bpf/stash_bench_kunit.c kernel/bpf/stash_bench_progs.S
fs/bpfstash/inode.c fs/bpfstash/file.c fs/bpfstash/internal.h"
	revprogs=$top/build/bench/hook-progs-ab
fi

# This checkout's build: the ordinary benchmark, which also prepares
# build/bench/hook-progs and checks that the tree builds.
say "building and running this checkout's benchmark (bench/hook-kunit.sh)"
"$top/bench/hook-kunit.sh" "$top/build/bench/results/hook-ab-new.csv" > /dev/null ||
	die "bench/hook-kunit.sh failed; see build/kunit-um/bench.log"
grep -q '^program,' "$top/build/bench/results/hook-ab-new.csv" ||
	die "this checkout's benchmark gave no figures: $(cat "$top/build/bench/results/hook-ab-new.csv")"

# REV's build, in a tree of hard links with REV's store files copied in.
# The copy goes when the build is done: the binary needs no sources.
say "linking build/linux into build/linux-ab"
rm -rf "$abtree"
trap 'rm -rf "$abtree"' EXIT
cp -al "$tree" "$abtree"
for f in $files; do
	rm -f "$abtree/$f"
	if git -C "$top" cat-file -e "$rev:$f" 2> /dev/null; then
		git -C "$top" show "$rev:$f" > "$abtree/$f"
	fi
done
# The store's objects are those of its files REV has (its stash.c held
# what stash_prog.c and stash_control.c hold now); stash_image.o keeps its
# own line.  The Makefile is a hard link of build/linux's: replaced, not
# edited.
mk=$abtree/kernel/bpf/Makefile
objs=""
for o in stash stash_prog stash_control stash_blob; do
	[ -f "$abtree/kernel/bpf/$o.c" ] && objs="$objs $o.o"
done
sed "s/^obj-\$(CONFIG_BPFSTASH) += stash\.o .*/obj-\$(CONFIG_BPFSTASH) +=$objs/" "$mk" > "$mk.new"
rm -f "$mk"
mv "$mk.new" "$mk"
# REV's programs, as hook-kunit.sh lays them out, from REV's fixtures.
if [ "$rev_bench" = 1 ]; then
	rm -rf "$revprogs" "$revprogs.fixtures"
	mkdir -p "$revprogs" "$revprogs.fixtures"
	git -C "$top" archive "$rev" tests/fixtures | tar -x -C "$revprogs.fixtures"
	for p in .:tiny:trivial .:subprogs:subprogs bench:insns4096:insns4096 .:large:large \
		 bench:many:funcs256; do
		d=$revprogs.fixtures/tests/fixtures/${p%%:*}
		name=${p#*:}
		name=${name%%:*}
		hash=$(awk -v n="$name" '$1 == n { print $2 }' "$d/manifest")
		[ -n "$hash" ] || die "$rev has no captured $name in tests/fixtures/${p%%:*}"
		ln -s "$d/stash/$hash" "$revprogs/${p##*:}"
	done
fi
cc=gcc
command -v ccache > /dev/null 2>&1 && cc="ccache gcc"
say "building $rev's store with this benchmark into build/kunit-um-ab"
mkdir -p "$old"
(cd "$abtree" && python3 tools/testing/kunit/kunit.py build --arch=um \
	--kunitconfig="$top/configs/kunit-bench.kunitconfig" \
	--kconfig_add "CONFIG_BPFSTASH_KUNIT_BENCH_PROGS=\"$revprogs\"" \
	--build_dir="$old" --jobs="${JOBS:-$(nproc)}" --make_options "CC=$cc") \
	> "$old/build.log" 2>&1 ||
	die "$rev's store does not build with this benchmark; see build/kunit-um-ab/build.log"
rm -rf "$abtree"

# Alternate the two builds.
one() { # build-dir label run
	(cd "$tree" && python3 tools/testing/kunit/kunit.py exec --arch=um \
		--build_dir="$1" --timeout 1800 --raw_output=all) 2>&1 |
		sed -n 's/.*bpfstash_bench: //p' | tr -d '\r' |
		awk -v b="$2" -v r="$3" '{
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				f[kv[1]] = kv[2]
			}
			print b "," r "," f["prog"] "," f["hook_ns"] "," f["hash_ns"] "," f["beyond_ns"]
		}'
}
mkdir -p "$(dirname "$csv")"
echo "build,run,program,hook_ns,hash_ns,beyond_ns" > "$csv"
i=1
while [ "$i" -le "$runs" ]; do
	say "run $i of $runs"
	one "$old" before "$i" >> "$csv"
	one "$new" after "$i" >> "$csv"
	i=$((i + 1))
done
n=$(grep -c ',before,\|^before,' "$csv" || true)
[ "$n" -gt 0 ] || die "the runs gave no figures; try build/kunit-um-ab by hand (kunit.py exec)"

# Medians, all runs and idle runs.
awk -F, -v rev="$rev" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	if (n == 0)
		return "-"
	return sprintf("%.2f", (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) / 1000)
}
NR > 1 {
	k = $1 SUBSEP $3
	row[NR] = $0
	if (!($3 in fastest) || $5 + 0 < fastest[$3])
		fastest[$3] = $5 + 0
	if (!($3 in seen)) {
		seen[$3] = 1
		order[++np] = $3
	}
}
END {
	for (r in row) {
		split(row[r], v, ",")
		k = v[1] SUBSEP v[3]
		all[k] = all[k] " " v[6]
		if (v[5] + 0 <= fastest[v[3]] * 1.05) {
			idle[k] = idle[k] " " v[6]
			nidle[k]++
		}
	}
	printf "%-10s %14s %14s %14s %14s\n", "program", "before, all", "after, all", "before, idle", "after, idle"
	for (i = 1; i <= np; i++) {
		p = order[i]
		printf "%-10s %11s us %11s us %11s us %11s us  (%d/%d idle)\n", p,
		       median(all["before" SUBSEP p]), median(all["after" SUBSEP p]),
		       median(idle["before" SUBSEP p]), median(idle["after" SUBSEP p]),
		       nidle["before" SUBSEP p], nidle["after" SUBSEP p]
	}
	printf "(median beyond hashing; before = %s, after = this checkout; idle: hashing within 5%% of the fastest)\n", rev
}' "$csv"
