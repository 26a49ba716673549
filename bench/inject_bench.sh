#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# inject_bench: what bpfstash inject costs, natively on the host, side by
# side in one run with a plain copy of the same perf.data (cat IN > OUT:
# the bytes through user space once, as inject moves them) and with the
# stock perf's own pass-through (perf inject -i IN -o OUT: /usr/bin/perf,
# Debian 12's 6.1, when it is installed).
#
#   bench/inject_bench.sh [MB...]        default: 1 10 100
#
# Inputs: synthetic perf.data files of MB megabytes of records
# (bench/mkperfdata: perf record -a -g's samples, and 20 program loads per
# megabyte of the entries of tests/fixtures/stash and
# tests/fixtures/bench/stash, 266 distinct functions, 53 KSYMBOL registers
# per load on average), file layout, checked first with perf report
# --stats.  bpfstash inject is timed twice per round, its build-id cache
# (a temporary directory) emptied before the first ("cold": it writes an
# ELF file per distinct function) and not before the second ("warm": they
# are there).  Wall-clock medians of BENCH_RUNS rounds (default 5 below
# 50 MB, 3 from there), the commands alternating within a round.  perf
# report --stats must read each injected file with a MMAP2 per injection,
# and perf script of the first one must show every sample in a BPF
# function with that function and its bpfstash module's name.
#
# The largest size is measured once more without any program ("noBPF"):
# inject's cost per megabyte alone, from which the cost per injected
# function is counted.
#
# Everything is written in INJECT_BENCH_DIR (default: a directory in
# /dev/shm when it is a tmpfs, so that the disk's writeback, and the fsync
# inject does before its rename, are not what is measured; else
# build/bench/inject).  Prints a table, the ratios and "inject_bench:"
# lines; writes build/bench/inject/report.md.  About 2 minutes for the
# default sizes on 2 busy cores.
#
#   BENCH_RUNS=N  INJECT_BENCH_DIR=DIR  PERF=/usr/bin/perf  BENCH_LOADS_PER_MB=20
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench/inject
bpfstash=$top/build/bpfstash/bpfstash
gen=$top/build/bench/mkperfdata
perf=${PERF:-/usr/bin/perf}
runs_given=${BENCH_RUNS:-}
loads=${BENCH_LOADS_PER_MB:-20}
sizes=${*:-1 10 100}
stashes="$top/tests/fixtures/stash $top/tests/fixtures/bench/stash"

die() { echo "inject_bench: $*" >&2; exit 1; }

mkdir -p "$out"
make -s -C "$top/tools/lib/bpfstash" O="$top/build/libbpfstash" > "$out/build.log" 2>&1 &&
	make -s -C "$top/tools/bpfstash" O="$top/build/bpfstash" >> "$out/build.log" 2>&1 &&
	make -s -C "$top/bench" "$gen" >> "$out/build.log" 2>&1 ||
	die "build failed (build/bench/inject/build.log)"

base=${INJECT_BENCH_DIR:-}
if [ -z "$base" ]; then
	base=$out
	[ "$(stat -f -c %T /dev/shm 2> /dev/null)" = tmpfs ] && [ -w /dev/shm ] && base=/dev/shm
fi
work=$(mktemp -d "$base/inject_bench.XXXXXX") || die "mktemp in $base"
trap 'rm -rf "$work"' EXIT
fs=$(stat -f -c %T "$work")
# One stash with the entries of both fixture stashes: inject looks in one.
mkdir "$work/stash" && cp -r $(for s in $stashes; do echo "$s"/*; done) "$work/stash/" ||
	die "copying the fixtures' entries"
# perf's own files (its ~/.debug, its config) stay in the work directory.
export HOME=$work/home
mkdir -p "$HOME"
cache=$work/cache

have_perf=1
perf_note="$perf (perf $("$perf" --version 2> /dev/null | awk '{ print $3 }'))"
if ! [ -x "$perf" ]; then
	have_perf=0
	perf_note="not installed ($perf): no perf inject column, no perf checks"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
# Seconds a command takes (bash's clock: no fork to read it).
timed() {
	local t0=$EPOCHREALTIME
	"$@" || return 1
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", b - a }'
}
calc() { awk "BEGIN { x = $1; printf \"$2\", x }"; }
copy() { cat "$1" > "$2"; }
inject() {
	"$bpfstash" -j inject --root "$work/stash" --buildid-dir "$cache" -i "$1" -o "$2" > "$work/inject.json"
}
json() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$work/inject.json"; }

# One input: MB megabytes with LOADS program loads per megabyte; a row
# of rows.txt (the fields the report's awk names).
: > "$work/rows.txt"
measure() {
	local mb=$1 l=$2 in=$work/in.data label=$1
	local records ksyms nloads distinct bpf_samples data_bytes total r injected functions
	local in_bytes out_bytes perf_bytes=0 mmap2 named runs=${runs_given:-5}

	[ "$l" = 0 ] && label="$mb-noBPF"
	# Fewer rounds of the big inputs: a full run stays within 3 minutes.
	[ -z "$runs_given" ] && [ "$mb" -ge 50 ] && runs=3
	read -r records ksyms nloads distinct bpf_samples data_bytes < <("$gen" -o "$in" -s "$mb" -l "$l" $stashes) ||
		die "mkperfdata -s $mb -l $l failed"
	in_bytes=$(stat -c %s "$in")
	if [ $have_perf = 1 ]; then
		total=$("$perf" report --stats -i "$in" 2> "$work/stats.err" | awk '/TOTAL events:/ { print $3 }')
		[ "$total" = "$records" ] ||
			die "perf report --stats read ${total:-no} events of the $records in the $label MB file: $(tail -n 1 "$work/stats.err")"
	fi

	: > "$work/t.copy"; : > "$work/t.perf"; : > "$work/t.cold"; : > "$work/t.warm"
	for r in $(seq "$runs"); do
		rm -f "$work/copy.data"
		timed copy "$in" "$work/copy.data" >> "$work/t.copy" || die "copy failed"
		if [ $have_perf = 1 ]; then
			rm -f "$work/perf.data.out"
			timed "$perf" inject -i "$in" -o "$work/perf.data.out" >> "$work/t.perf" 2> "$work/perf.err" ||
				die "perf inject failed on the $label MB file: $(tail -n 1 "$work/perf.err")"
		fi
		rm -rf "$cache"
		timed inject "$in" "$work/inj.data" >> "$work/t.cold" 2> "$work/inject.err" ||
			die "bpfstash inject failed: $(tail -n 1 "$work/inject.err")"
		[ "$(json elf_written)" = "$distinct" ] || die "the cold run wrote $(json elf_written) ELF files, not $distinct"
		timed inject "$in" "$work/inj.data" >> "$work/t.warm" 2> "$work/inject.err" ||
			die "bpfstash inject failed: $(tail -n 1 "$work/inject.err")"
		[ "$(json elf_present)" = "$distinct" ] || die "the warm run found $(json elf_present) ELF files, not $distinct"
	done
	injected=$(json injected)
	functions=$(json functions)
	[ "$injected" = "$ksyms" ] && [ "$functions" = "$distinct" ] ||
		die "$label MB: $injected of $ksyms KSYMBOLs injected, $functions of $distinct functions"
	out_bytes=$(stat -c %s "$work/inj.data")

	if [ $have_perf = 1 ]; then
		perf_bytes=$(stat -c %s "$work/perf.data.out")
		# perf reads the injected file: a MMAP2 per injected KSYMBOL.
		mmap2=$("$perf" report --stats -i "$work/inj.data" 2> /dev/null | awk '/MMAP2 events:/ { print $3 }')
		[ "${mmap2:-0}" = "$injected" ] ||
			die "perf report --stats sees ${mmap2:-no} MMAP2 records of the $injected injected"
		# The first input: the samples in BPF functions under their module's name.
		if [ -z "$checked" ] && [ "$bpf_samples" -gt 0 ]; then
			PERF_BUILDID_DIR=$cache "$perf" script -G -F ip,sym,dso -i "$work/inj.data" \
				> "$work/script.txt" 2> "$work/script.err"
			named=$(grep -c ' bpf_prog_[0-9a-f]\{16\}_[^ ]* (\[bpfstash_[0-9a-f]\{40\}_[0-9]*\])$' "$work/script.txt")
			[ "$named" = "$bpf_samples" ] ||
				die "perf script of the injected $label MB file: $named of $bpf_samples samples in BPF functions under a bpfstash module"
			checked="perf script -G -F ip,sym,dso of the injected $label MB file: $named of $bpf_samples samples in BPF functions show their function and \`[bpfstash_<hash>_<func>]\` module, e.g. \`$(grep -m 1 '\[bpfstash_' "$work/script.txt" | sed 's/^[[:space:]]*//')\`."
		fi
	fi
	echo "$label $mb $records $injected $distinct $nloads $in_bytes $out_bytes $perf_bytes $(median < "$work/t.copy") $(median < "$work/t.perf") $(median < "$work/t.cold") $(median < "$work/t.warm")" >> "$work/rows.txt"
	echo "inject_bench: $label MB done" >&2
	rm -f "$in" "$work"/*.data "$work/perf.data.out"
}

start=$EPOCHREALTIME
load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
checked=
largest=0
for mb in $sizes; do
	measure "$mb" "$loads"
	[ "$mb" -gt "$largest" ] && largest=$mb
done
# The largest size again without any program: inject's cost per megabyte
# alone, which the per-function cost is counted from.
measure "$largest" 0

# The tables, in markdown (report.md and stdout), then one line per ratio.
{
	echo "# bpfstash inject against a copy and perf inject"
	echo
	echo "\`bench/inject_bench.sh\` on $(uname -m), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), files on $fs;"
	echo "perf: $perf_note. Medians of ${runs_given:-5 (3 from 50 MB)} rounds, wall-clock seconds;"
	echo "load average $load_start at the start, $(cut -d ' ' -f 1-3 /proc/loadavg) at the end ($(calc "$EPOCHREALTIME - $start" %.0f) s)."
	echo "Inputs from \`bench/mkperfdata\`: samples (perf record -a -g's, 172 bytes on average) and $loads program"
	echo "loads per MB (KSYMBOL registers, PROG_LOAD, then the unregisters) of the 5 fixture entries,"
	echo "266 distinct functions; \"noBPF\": the same samples without any program."
	echo
	awk -v perf=$have_perf '
	function r(a, b) { return b > 0 ? a / b : 0 }
	{ n++; for (i = 1; i <= NF; i++) f[n, i] = $i }
	$6 == 0 { pt = r($13, $7 / 1048576) }	# warm s per MB with nothing to inject
	END {
		print "| input MB | records | injected | distinct | copy s | perf inject s | inject cold s | inject warm s | inject out/in | perf out/in |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (k = 1; k <= n; k++)
			printf "| %s | %d | %d | %d | %.4f | %s | %.4f | %.4f | %.3f | %s |\n", f[k, 1], f[k, 3],
				f[k, 4], f[k, 5], f[k, 10], perf ? sprintf("%.4f", f[k, 11]) : "n/a",
				f[k, 12], f[k, 13], r(f[k, 8], f[k, 7]),
				perf ? sprintf("%.3f", r(f[k, 9], f[k, 7])) : "n/a"
		print ""
		print "| input MB | warm/copy | warm/perf inject | cold/warm | copy ms/MB | perf inject ms/MB | inject warm ms/MB | us per injected function |"
		print "|---|---|---|---|---|---|---|---|"
		for (k = 1; k <= n; k++) {
			mb = f[k, 7] / 1048576
			printf "| %s | %.1f | %s | %.2f | %.2f | %s | %.1f | %s |\n", f[k, 1],
				r(f[k, 13], f[k, 10]), perf ? sprintf("%.2f", r(f[k, 13], f[k, 11])) : "n/a",
				r(f[k, 12], f[k, 13]), r(f[k, 10] * 1000, mb),
				perf ? sprintf("%.1f", r(f[k, 11] * 1000, mb)) : "n/a", r(f[k, 13] * 1000, mb),
				f[k, 4] ? sprintf("%.1f", r((f[k, 13] - pt * mb) * 1e6, f[k, 4])) : "-"
		}
		print ""
		printf "us per injected function: (warm - the noBPF input'\''s warm s per MB x MB) / injected.\n"
		printf "The cold run writes the %d ELF files (one per distinct function) that the warm one finds:\n", f[1, 5]
		printf "cold - warm is %.2f ms per ELF file at %s MB; at the larger sizes it is within the rounds'\'' spread.\n",
			r((f[1, 12] - f[1, 13]) * 1000, f[1, 5]), f[1, 1]
	}' "$work/rows.txt"
	echo
	echo "${checked:-perf script not run (no perf).}"
} > "$out/report.md"
cat "$out/report.md"
echo
awk -v perf=$have_perf 'function r(a, b) { return b > 0 ? a / b : 0 }
	$6 == 0 { pt = r($13, $7 / 1048576) }
	{ row[NR] = $0 }
	END {
		for (k = 1; k <= NR; k++) {
			split(row[k], f, " ")
			printf "inject_bench: %s MB inject_warm/copy %.2f\n", f[1], r(f[13], f[10])
			if (perf)
				printf "inject_bench: %s MB inject_warm/perf_inject %.2f\n", f[1], r(f[13], f[11])
			printf "inject_bench: %s MB output/input %.3f\n", f[1], r(f[8], f[7])
			if (f[4])
				printf "inject_bench: %s MB us_per_injected_function %.1f\n", f[1],
					r((f[13] - pt * f[7] / 1048576) * 1e6, f[4])
		}
	}' "$work/rows.txt"
exit 0
