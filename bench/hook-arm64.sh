#!/bin/bash
# The load hook on arm64, in qemu-system-aarch64 -M virt under TCG: every
# figure is EMULATED (an x86-64 CPU running QEMU's translation of arm64
# code, the ARMv8 Crypto Extensions included), not an arm64 CPU's.  What
# one run shows side by side is the ratios within it: the hook against the
# load it is part of, and the SHA-256 the hook uses (sha256-ce) against the
# generic C one, on the same bytes.
#
#   bench/hook-arm64.sh            (make bench-arm64)
#   bench/hook-arm64.sh --report   the table again from the last run's CSVs
#
#   1. captures the benchmark's five programs (tiny, subprogs, insns4096,
#      large, many) as arm64's JIT makes them, in the arm64 debug kernel
#      (tests/guest/capture-fixtures.sh);
#   2. builds the arm64 bench kernel with KUnit's benchmark of the load
#      hook (kernel/bpf/stash_bench_kunit.c) built in, on those entries
#      (scripts/build-kernel.sh arm64-bench);
#   3. boots it: KUnit's benchmark runs at boot (the hook called with the
#      store running, SHA-256 of the same bytes by the hook's transform
#      and by lib/crypto's), then loadbench, cross-built, times
#      BPF_PROG_LOAD of the same objects with the stash mounted and not,
#      interleaved, and reads the hook's own time from its tracepoint;
#      then membench, cross-built, measures what entries hold in memory
#      beyond their content (bench/membench.c);
#
#   4. boots x86-64's bench kernel (build/kernel-bench), also under TCG,
#      with the same loadbench and membench runs, for the columns beside.
#
# Results in build/bench/arm64/: hook.csv (KUnit's fields, as
# bench/hook-kunit.sh writes them for user-mode Linux), load.csv and
# load-x86.csv (loadbench's, bench/hook-loads.sh), memory.csv and
# memory-x86.csv (membench's), report.md (the tables below, also printed).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench/arm64
progs=$out/hook-progs
root=$top/build/arm64/root
rounds=${BENCH_ROUNDS:-5}
say() { echo "hook-arm64: $*" >&2; }
die() { say "$*"; exit 1; }

report_only=0
[ "${1:-}" = --report ] && report_only=1
if [ $report_only = 0 ]; then
[ -f "$top/build/kernel-arm64/arch/arm64/boot/Image" ] || die "no arm64 debug kernel (make kernel-arm64)"
[ -f "$top/build/arm64/root.stamp" ] || die "no arm64 userland (make arm64-userland)"
[ -f "$top/build/kernel-bench/arch/x86/boot/bzImage" ] || die "no x86-64 bench kernel (make kernel-bench)"
mkdir -p "$out"

say "loadbench and membench, cross-built (build/arm64/bench)"
make -s -C "$top/bench" TOP="$top" O="$top/build/arm64/bench" CC="aarch64-linux-gnu-gcc --sysroot=$root" \
	HEADERS="$top/build/arm64/headers/include" LIBBPFSTASH_DIR="$top/build/arm64/libbpfstash" \
	"$top/build/arm64/bench/loadbench" "$top/build/arm64/bench/membench"

# 1. The programs, as arm64's JIT makes them.
say "capturing the programs in the arm64 debug kernel (TCG, about 2 min)"
"$top/scripts/vm-run" -k arm64 -q --no-kmemleak -t 900 -o "$out/capture" -- \
	env CAPTURE_PROGS="tiny subprogs insns4096 large many" "$top/tests/guest/capture-fixtures.sh" \
	> "$out/capture.log" 2>&1 || die "the capture failed (build/bench/arm64/capture/console.log)"
man=$out/capture/fixtures/manifest
rm -rf "$progs"
mkdir -p "$progs"
while read -r name prog; do
	hash=$(awk -v n="$name" '$1 == n { print $2 }' "$man" 2>/dev/null)
	[ -n "$hash" ] && [ -d "$out/capture/fixtures/stash/$hash" ] ||
		die "$name was not captured (build/bench/arm64/capture/console.log)"
	cp -r "$out/capture/fixtures/stash/$hash" "$progs/$prog"
done <<EOF
tiny trivial
subprogs subprogs
insns4096 insns4096
large large
many funcs256
EOF

# 2. The bench kernel with KUnit's benchmark on them.
BENCH_PROGS=$progs JOBS=${JOBS:-$(nproc)} "$top/scripts/build-kernel.sh" arm64-bench

# 3. KUnit's benchmark at boot, then loadbench on the same objects; then
# the same loadbench runs in x86-64's bench kernel, under TCG too.
say "booting the arm64 bench kernel: KUnit's benchmark, then loadbench ($rounds rounds) and membench (about 4 min under TCG)"
"$top/scripts/vm-run" -k arm64-bench -q --no-kmemleak -t 2400 -o "$out/guest" -- \
	"$top/bench/hook-loads.sh" "$rounds" > "$out/guest.log" 2>&1 ||
	die "the bench guest failed (build/bench/arm64/guest/console.log)"
log=$out/guest/console.log
grep -q 'bpfstash_bench: prog=' "$log" || die "no figures from KUnit's benchmark (build/bench/arm64/guest/console.log)"
if grep -q 'not ok [0-9]* bpfstash_bench' "$log"; then
	die "a KUnit assertion of the benchmark failed (build/bench/arm64/guest/console.log)"
fi
sed -n 's/.*bpfstash_bench: //p' "$log" | tr -d '\r' | awk -f "$top/bench/kv2csv.awk" > "$out/hook.csv"
say "booting x86-64's bench kernel (build/kernel-bench): the same loadbench"
make -s -C "$top/bench" TOP="$top" O="$top/build/bench" "$top/build/bench/loadbench" "$top/build/bench/membench"
"$top/scripts/vm-run" -k bench -q --no-kmemleak -t 1800 -o "$out/guest-x86" -- \
	"$top/bench/hook-loads.sh" "$rounds" > "$out/guest-x86.log" 2>&1 ||
	die "the x86-64 bench guest failed (build/bench/arm64/guest-x86/console.log)"
header="program,loads_per_side,p50_unmounted_us,p99_unmounted_us,p50_mounted_us,p99_mounted_us,added_p50_us,added_p50_pct,added_p99_us,added_p99_pct,hook_us,hash_us,hashed_bytes"
for g in guest guest-x86; do
	{
		echo "$header"
		for obj in tiny subprogs insns4096 large many; do
			cat "$out/$g/load-$obj.csv" 2> /dev/null ||
				die "no loadbench figures for $obj (build/bench/arm64/$g/console.log)"
		done
	} > "$out/load${g#guest}.csv"
	cp "$out/$g/memory.csv" "$out/memory${g#guest}.csv" 2> /dev/null ||
		die "no membench figures (build/bench/arm64/$g/console.log)"
done

fi

# The table: KUnit's row of each program beside loadbench's of its object.
kfield() { awk -F, -v k="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $(c[k]) }' "$out/hook.csv"; }
driver=$(kfield hash_driver)
krounds=$(kfield rounds)
{
	echo "## The load hook on arm64: EMULATED (qemu-system-aarch64 -M virt, TCG, on $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
	echo
	echo "Every figure is QEMU's translation of arm64 code running on an x86-64 CPU, the Crypto"
	echo "Extensions' instructions included: not what an arm64 CPU takes. What the run compares is"
	echo "within it: the SHA-256 the hook uses ($driver) against lib/crypto's generic C on the same bytes, and the hook against"
	echo "the load. KUnit's medians of $krounds calls; loadbench's p50 of $rounds interleaved rounds."
	echo
	echo "| program | hashed bytes | hook | beyond hashing | SHA-256 $driver | generic | generic / CE | load, not mounted | load, mounted | added | hook / load | x86-64: load | x86-64: hook | x86-64: hook / load |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -F, -v kunit="$out/hook.csv" -v x86="$out/load-x86.csv" '
		function col(f, name) { return f[c[name]] }
		BEGIN {
			while ((getline line < kunit) > 0) {
				n = split(line, f, ",")
				if (!hdr++) { for (i = 1; i <= n; i++) c[f[i]] = i; continue }
				p = col(f, "program")
				p = p == "trivial" ? "tiny" : p == "funcs256" ? "many" : p
				bytes[p] = col(f, "hashed_bytes"); hook[p] = col(f, "hook_ns")
				beyond[p] = col(f, "beyond_ns"); hash[p] = col(f, "hash_ns"); lib[p] = col(f, "lib_hash_ns")
			}
			while ((getline line < x86) > 0) {
				split(line, f, ",")
				xload[f[1]] = f[3]; xhook[f[1]] = f[11]
			}
		}
		NR > 1 && ($1 in bytes) {
			p = $1; b = bytes[p] / 1
			printf "| %s | %d | %.1f us | %.1f us | %.2f ns/B | %.2f ns/B | %.2fx | %.0f us | %.0f us | %+.0f us (%+.1f%%) | %.2f%% | %.0f us | %.1f us | %.2f%% |\n",
				p, b, hook[p] / 1000, beyond[p] / 1000, hash[p] / b, lib[p] / b, lib[p] / hash[p],
				$3, $5, $7, $8, 100 * hook[p] / 1000 / $3,
				xload[p], xhook[p], 100 * xhook[p] / xload[p]
		}' "$out/load.csv"
	echo
	echo "hook and beyond hashing: KUnit's (the hook called directly, every call a program never seen);"
	echo "load: BPF_PROG_LOAD and close of the object's first program, loadbench; hook / load: KUnit's"
	echo "hook against the unmounted load's p50 (loadbench's own hook figure from the tracepoint, per"
	echo "traced load: $(awk -F, 'NR > 1 { printf "%s%s %.1f us", n++ ? ", " : "", $1, $11 }' "$out/load.csv"))."
	echo "x86-64: the same loadbench in x86-64's bench kernel (build/kernel-bench), also under TCG, in the"
	echo "same run; its hook is the tracepoint's, per traced load, with SHA-NI as TCG emulates it."
	echo
	echo "## Entries' memory beyond their content: arm64 beside x86-64 (membench, same run)"
	echo
	echo "Memory is not time: these are the bytes the kernels allocated, which TCG does not change."
	echo "Per entry. content: what an entry's files hold; accounted: the stash's own count (stats"
	echo "bytes: shared blobs once, allocator sizes); charged: what the mounting memory cgroup was"
	echo "charged, which it takes in batches of 64 pages per CPU (it means something for hundreds of"
	echo "entries, and reads 0 or a batch for one or two); overhead: for the entry where it is largest,"
	echo "what it holds (its own structures and its share of each blob) less its content, negative"
	echo "when all its blobs are shared."
	echo
	echo "| case | entries | content arm64 | content x86-64 | accounted / content arm64 | x86-64 | charged arm64 | charged x86-64 | overhead arm64 | overhead x86-64 |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -F, -v x86="$out/memory-x86.csv" '
		BEGIN { while ((getline line < x86) > 0) { split(line, f, ","); xc[f[1]] = f[3]; xa[f[1]] = f[4]; xg[f[1]] = f[5]; xo[f[1]] = f[8] } }
		NR > 1 && ($1 in xc) {
			printf "| %s | %d | %d B | %d B | %.2fx | %.2fx | %d B | %d B | %d B | %d B |\n",
				$1, $2, $3, xc[$1], $4 / $3, xa[$1] / xc[$1], $5, xg[$1], $8, xo[$1]
		}' "$out/memory.csv"
	echo
	echo "one: a large program (BTF, 3000 line records); funcs: 256 functions; image: 32768"
	echo "instructions, no BTF; shared: loads of one object (BTF and infos shared, images not); tiny:"
	echo "minimal programs, the fixed cost of an entry (bench/membench.c)."
} > "$out/report.md"
cat "$out/report.md"
