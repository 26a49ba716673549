#!/bin/bash
# make bench: every benchmark, side by side in one run, and one report.
#
#   build/bench/report.md        the report (regenerate: make bench)
#   build/bench/results/*.csv    raw data
#   build/bench/load.png         added load latency against JIT size
#
# Guest figures come from the bench kernel (no debug options) under QEMU;
# on these machines that is TCG, which slows everything 10-20x and not
# uniformly: compare the ratios, not the microseconds, with native numbers.
# The pristine-kernel comparison boots an unpatched 6.12 built from the same
# Debian source with the same config (scripts/build-kernel.sh base); the
# same source as user-mode Linux (scripts/build-kernel.sh um) loads the
# programs at the host CPU's own speed.
#
# BENCH_ONLY=hook runs only what the load hook's native figures need
# (KUnit's benchmark of the hook and 6.12's own loads, both in user-mode
# Linux, and the host's SHA-256) and writes build/bench/hook-report.md.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench
res=$out/results
only=${BENCH_ONLY:-}
mkdir -p "$res"
say() { printf '\n== %s\n' "$*"; }
start=$(date +%s)

case $only in
''|hook) ;;
*) echo "bench: BENCH_ONLY=$only: only \"hook\" is known" >&2; exit 64 ;;
esac

if [ "$only" != hook ]; then
say "building: bench kernel, pristine kernel, benchmarks"
"$top/scripts/build-kernel.sh" bench || exit 1
"$top/scripts/build-kernel.sh" base || exit 1
fi
# 6.12 as user-mode Linux, for its load time at this CPU's own speed; the
# report says so when it is missing.
"$top/scripts/build-kernel.sh" um || say "user-mode Linux kernel did not build: its rows are skipped"
make -s -C "$top/bench" || exit 1

# KUnit's benchmark of the load hook, in the patched tree built as
# user-mode Linux (bench/hook-kunit.sh), then the same hashes with the
# host's SHA-NI code: hook.csv and hook-sha.csv.
hook_bench() {
	say "the load hook, natively: KUnit's benchmark in user-mode Linux"
	"$top/bench/hook-kunit.sh" "$res/hook.csv"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 !~ /^#/ { c = $col["hash_calls"]; gsub(";", ",", c); print $1 ":" c }' "$res/hook.csv" |
		xargs -r "$top/build/bench/hashbench" --calls > "$res/hook-sha.csv" 2>&1 ||
		echo "# skipped: hashbench --calls failed: $(tail -n 1 "$res/hook-sha.csv")" > "$res/hook-sha.csv"
}

if [ "$only" = hook ]; then
	hook_bench
fi

if [ "$only" != hook ]; then
say "guest benchmarks on the bench kernel (load path, capture, memory, scale)"
"$top/scripts/vm-run" -k bench -m 4096 -t 5400 --no-kmemleak -o "$out/guest" -- \
	"$top/bench/guest.sh" | grep --line-buffered '^bench:'
cp "$out"/guest/*.csv "$out"/guest/scale.txt "$res/" 2>/dev/null

say "the same load benchmark counting instructions (QEMU -icount)"
"$top/scripts/vm-run" -k bench --icount -m 2048 -t 2400 --no-kmemleak -o "$out/icount" -- \
	"$top/bench/guest-icount.sh" | grep --line-buffered '^bench:'
cp "$out/icount/icount.csv" "$res/" 2>/dev/null

# One boot of KERNEL (base: pristine, bench: patched) loading with the stash
# not mounted; prints CSV rows "KERNEL,ROUND,program,...".  Extra vm-run
# options follow ROUND.
zerocost_boot() {
	local k=$1 dir=$2 round=$3
	shift 3
	"$top/scripts/vm-run" -k "$k" "$@" -q --no-kmemleak -o "$dir" -t 900 -- sh -c \
		"$top/build/bench/loadbench -r 1 -n 1000 --only unmounted --csv -l synthetic-3; $top/build/bench/loadbench -r 1 -n 100 --only unmounted --csv -l subprogs -o $top/build/tests/progs/subprogs.bpf.o" \
		> /dev/null 2>&1
	grep -E '^(synthetic-3|subprogs),' "$dir/console.log" | tr -d '\r' | sed "s/^/$k,$round,/"
}

say "zero cost when unused: pristine 6.12 vs patched, stash not mounted (alternating boots)"
echo "kernel,round,program,side,loads,p50_us,p99_us" > "$res/zerocost.csv"
for round in 1 2 3; do
	for k in base bench; do
		zerocost_boot "$k" "$out/zc-$k" "$round" >> "$res/zerocost.csv"
	done
	echo "round $round done"
done
# The same pair counting instructions (vm-run --icount): one boot each is
# enough, the counts do not drift with the host.
echo "kernel,round,program,side,loads,p50_kinsn,p99_kinsn" > "$res/zerocost-icount.csv"
for k in base bench; do
	zerocost_boot "$k" "$out/zci-$k" 1 --icount >> "$res/zerocost-icount.csv"
done
echo "instruction counts done"

fi # BENCH_ONLY

say "native load times: this machine's own kernel, and 6.12 as user-mode Linux"
# No stash in either: these are the load times that the instruction counts
# above are set against (see the report's native estimate).  Both run at
# this CPU's own speed, in alternating rounds; each row is the median of
# the rounds' p50 and p99.  The host's kernel needs bpf() on the host; UML
# needs build/kernel-um (built above, or skipped with the reason).
# Rows program,side,loads,p50,p99 (several per program) -> one per program:
# loads summed, the median of p50 and of p99; "# " lines pass once.
median_rows() {
	awk -F, 'function med(s,   a, n, i, j, x) {
			n = split(s, a, " ")
			for (i = 2; i <= n; i++) {
				x = a[i] + 0
				for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
					a[j + 1] = a[j]
				a[j + 1] = x
			}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		/^#/ { if (!($0 in seen)) { seen[$0] = 1; print } next }
		NF == 5 && $3 ~ /^[0-9]+$/ {
			if (!($1 in loads)) order[++np] = $1
			side[$1] = $2; loads[$1] += $3; p50[$1] = p50[$1] " " $4; p99[$1] = p99[$1] " " $5
		}
		END {
			for (i = 1; i <= np; i++) {
				p = order[i]
				printf "%s,%s,%d,%.1f,%.1f\n", p, side[p], loads[p], med(p50[p]), med(p99[p])
			}
		}'
}
header="program,side,loads,p50_us,p99_us"
: > "$out/native-rounds.csv"
: > "$out/uml-rounds.csv"
native_ok=0
if [ "$only" = hook ]; then
	native_skip="# skipped: BENCH_ONLY=hook"
elif grep -qs '^[^ ]* /sys/fs/bpfstash bpfstash ' /proc/mounts; then
	# loadbench unmounts the stash between rounds: not this one.
	native_skip="# skipped: a bpfstash is mounted on this machine, and loadbench would unmount it"
elif "$top/build/bench/loadbench" -r 1 -n 10 --only unmounted -i 3 > "$res/native.err" 2>&1; then
	native_ok=1
else
	native_skip="# skipped: bpf() does not load programs here: $(tail -1 "$res/native.err")"
fi
rm -f "$res/native.err"
for round in 1 2 3; do
	[ $native_ok = 1 ] && "$top/bench/native-loads.sh" 1 >> "$out/native-rounds.csv" 2>&1
	"$top/bench/uml.sh" 1 >> "$out/uml-rounds.csv" 2>&1
	echo "round $round done"
done
{
	echo "# kernel $(uname -r)"
	echo "$header"
	if [ $native_ok = 1 ]; then
		median_rows < "$out/native-rounds.csv"
	else
		echo "$native_skip"
	fi
} > "$res/native.csv"
median_rows < "$out/uml-rounds.csv" > "$out/uml-median.csv"
{
	grep '^# ' "$out/uml-median.csv"
	echo "$header"
	grep -v '^# ' "$out/uml-median.csv"
} > "$res/uml.csv"
grep -h '^# ' "$res/native.csv" "$res/uml.csv"

if [ "$only" = hook ]; then
	"$top/scripts/bench-hook-report.sh" "$res" > "$out/hook-report.md"
	echo "$out/hook-report.md written ($(($(date +%s) - start)) s)"
	exit 0
fi
hook_bench

say "host benchmarks: hash choice, resolve throughput"
if ! "$top/build/bench/hashbench" > "$res/hash.txt" 2>&1; then
	say "hashbench failed, the report says why: $(tail -n 1 "$res/hash.txt")"
fi
if ! "$top/build/bench/resolve_bench" > "$res/resolve.txt" 2>&1; then
	say "resolve_bench failed, the report says why: $(tail -n 1 "$res/resolve.txt")"
fi
# Lookups against 100 000 entries: a scan per lookup against the per-run
# index, and the agent's recovery (a copy of a stash on disk, made once).
if ! BPFSTASH_TOP=$top "$top/build/bench/index_bench" -n 100000 > "$res/index.txt" 2>&1; then
	say "index_bench failed, the report says why: $(tail -n 1 "$res/index.txt")"
fi
# The agent's index alone, at this CPU's own speed (no kernel needed).
if ! "$top/build/bench/agentbench" -s > "$res/agent-host.txt" 2>&1; then
	say "agentbench -s failed, the report says why: $(tail -n 1 "$res/agent-host.txt")"
fi
# bpfstash inject against a copy and the stock perf's perf inject, on
# synthetic recordings of 1, 10 and 100 MB (about 2 minutes).
say "host: bpfstash inject against a copy and perf inject"
if ! "$top/bench/inject_bench.sh" > "$res/inject.txt" 2> "$res/inject.err"; then
	tail -n 1 "$res/inject.err" >> "$res/inject.txt"
	say "inject_bench failed, the report says why: $(tail -n 1 "$res/inject.err")"
fi

if [ -x "$top/bench/gc_scale.sh" ]; then
	say "bpfstash-gc at 1 000, 10 000 and 100 000 entries"
	: > "$res/gc.txt"
	for n in 1000 10000 100000; do
		"$top/bench/gc_scale.sh" "$n" >> "$res/gc.txt" 2>&1
	done
fi
if [ -x "$top/bench/perf_bench.sh" ]; then
	say "perf: report time, perf.data size, record CPU"
	"$top/bench/perf_bench.sh" > "$res/perf.txt" 2>&1
fi

say "report"
"$top/scripts/bench-report.sh" "$res" > "$out/report.md"
echo "$out/report.md written ($(($(date +%s) - start)) s)"
