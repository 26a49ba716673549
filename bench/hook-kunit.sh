#!/bin/sh
# The load hook timed natively: KUnit's benchmark of it
# (kernel/bpf/stash_bench_kunit.c) in the patched tree built as user-mode
# Linux, which runs at this CPU's own speed.  It rebuilds each program from
# its captured entry (tests/fixtures: trivial is tiny.bpf.c, funcs256 is
# many.bpf.c), calls the real hook with the store running, and times the
# SHA-256 of the same bytes with the generic code, the only one UML has.
#
#   bench/hook-kunit.sh [OUT.csv]
#
# Writes one CSV row per program to OUT.csv (default
# build/bench/results/hook.csv), the benchmark's key=value fields as
# columns (program, sizes, hook_ns, hash_ns, beyond_ns, ...; hash_calls
# separated by ';'), or one "# skipped: why" line.  The kunit.py log is build/kunit-um/bench.log.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
kout=$top/build/kunit-um
progs=$top/build/bench/hook-progs
csv=${1:-$top/build/bench/results/hook.csv}
mkdir -p "$(dirname "$csv")" "$kout"

skip() {
	echo "# skipped: $*" > "$csv"
	echo "hook-kunit: skipped: $*" >&2
	exit 0
}

[ -x "$tree/tools/testing/kunit/kunit.py" ] || skip "no prepared tree with kunit.py in $tree (scripts/prepare-tree.sh)"

# One directory per program, named as the benchmark knows it.
rm -rf "$progs"
mkdir -p "$progs"
while read -r fixtures name prog; do
	hash=$(awk -v n="$name" '$1 == n { print $2 }' "$top/tests/fixtures/$fixtures/manifest" 2>/dev/null)
	[ -n "$hash" ] && [ -d "$top/tests/fixtures/$fixtures/stash/$hash" ] ||
		skip "no captured $name in tests/fixtures/$fixtures (tests/guest/capture-fixtures.sh)"
	ln -s "$top/tests/fixtures/$fixtures/stash/$hash" "$progs/$prog"
done <<EOF
. tiny trivial
. subprogs subprogs
bench insns4096 insns4096
. large large
bench many funcs256
EOF

cc=gcc
command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
export KBUILD_BUILD_TIMESTAMP="1970-01-01" KBUILD_BUILD_USER=bpfstash KBUILD_BUILD_HOST=build
start=$(date +%s)
(cd "$tree" && python3 tools/testing/kunit/kunit.py run --arch=um \
	--kunitconfig="$top/configs/kunit-bench.kunitconfig" \
	--kconfig_add "CONFIG_BPFSTASH_KUNIT_BENCH_PROGS=\"$progs\"" \
	--build_dir="$kout" --jobs="${JOBS:-$(nproc)}" --make_options "CC=$cc" \
	--timeout 1800 --raw_output=all) > "$kout/bench.log" 2>&1
rc=$?
echo "hook-kunit: kunit.py exited $rc after $(($(date +%s) - start)) s; log in ${kout#"$top"/}/bench.log" >&2
if grep -q 'ASSERTION FAILED' "$kout/bench.log" && ! grep -q 'bpfstash_bench: prog=' "$kout/bench.log"; then
	echo "# failed: $(grep -m 1 -A 2 'ASSERTION FAILED' "$kout/bench.log" | tr -s ' \n' ' ')" > "$csv"
	echo "hook-kunit: a KUnit assertion of the benchmark failed; see ${kout#"$top"/}/bench.log" >&2
	exit 1
fi
if ! grep -q 'bpfstash_bench: prog=' "$kout/bench.log"; then
	if grep -q 'error:' "$kout/bench.log"; then
		skip "user-mode Linux did not build: $(grep -m 1 'error:' "$kout/bench.log")"
	fi
	skip "no figures from kunit.py (exit $rc): $(grep -v '^$' "$kout/bench.log" | tail -n 1)"
fi
{
	sed -n 's/.*bpfstash_bench: //p' "$kout/bench.log" | tr -d '\r' |
		awk -f "$top/bench/kv2csv.awk"
} > "$csv"
# A failed assertion is a wrong measurement: say so, keep the figures.
if grep -q 'not ok [0-9]* bpfstash_bench' "$kout/bench.log"; then
	echo "# failed: a KUnit assertion of the benchmark failed; see ${kout#"$top"/}/bench.log" >> "$csv"
	echo "hook-kunit: a KUnit assertion failed" >&2
	exit 1
fi
cat "$csv"
