#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# perf_bench: what PERF_RECORD_MMAP3 costs and saves perf, side by side in
# one run (issue 7, "It must show" 5).
#
#   bench/perf_bench.sh            on the host: boots the bench kernel
#                                  (scripts/vm-run -k bench) and runs itself
#   scripts/vm-run -k bench -- bench/perf_bench.sh     the same, by hand
#
# While bpf_churn loads, runs hot and closes BENCH_PROGRAMS programs
# (tests/progs/churn.bpf.c, BENCH_MS each), perf record -a -e cpu-clock
# records the machine in four ways:
#
#   base       the unpatched 6.12 perf: KSYMBOL + the side-band fetch
#   sideband   the patched perf with --no-bpf-mmap3: the same, for control
#   mmap3+sb   the patched perf as it is by default with a stash mounted
#   mmap3      the patched perf with --no-bpf-event: MMAP3, no side-band
#   mmap3N     the same with --no-buildid-cache: MMAP3 without the export of
#              the entries hit into the build-id cache
#
# and measures the CPU time of the perf record process alone (user + sys,
# from its start to the end of writing perf.data and the build-id cache;
# the workload runs outside perf's process tree), and the size of
# perf.data.  Then perf report --stdio, with and without the patch, on the
# same perf.data (the sideband one, which both can read), and the patched
# perf report on the mmap3 one.  Medians of BENCH_RUNS runs.  Prints a
# table and the ratios, with "perf_bench:" lines for the suite perf_bench.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

if ! grep -q "init=$top/tests/vm/init" /proc/cmdline 2> /dev/null; then
	# The guest's console (kernel lines aside) is this script's output.
	"$top/scripts/vm-run" -k bench -m 2048 -t 3600 -q --no-kmemleak \
		-o "$top/build/bench/perf" -- "$top/bench/perf_bench.sh" "$@"
	rc=$?
	grep -v -e '^\[' -e '^guest: ' "$top/build/bench/perf/console.log" | tr -d '\r'
	[ $rc = 0 ] || echo "perf_bench: the guest failed (build/bench/perf/console.log)"
	exit $rc
fi

perf=$top/build/perf/perf
base=$top/build/perf-base/perf
churn=$top/build/tests/perf/bpf_churn
N=${BENCH_PROGRAMS:-200}
MS=${BENCH_MS:-20}
RUNS=${BENCH_RUNS:-5}
FREQ=${BENCH_FREQ:-1000}
S=/sys/fs/bpfstash

for t in "$perf" "$base" "$churn"; do
	[ -x "$t" ] || { echo "perf_bench: $t is not built (make perf perf-base tests)"; exit 1; }
done
work=$(mktemp -d /tmp/perf_bench.XXXXXX) || exit 1
trap 'cd /; rm -rf $work' EXIT
cd "$work" || exit 1
grep -q " $S bpfstash " /proc/mounts || mount -t bpfstash none $S || exit 1

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# perf record of the workload, the workload outside perf's process tree:
# perf waits on a fifo.  $1 config, $2 run; perf and options follow.
record() {
	local cfg=$1 run=$2 tool=$3
	shift 3
	rm -f go
	mkfifo go
	# A build-id cache of its own, empty: each run pays for its export.
	rm -rf "$work/home-$cfg"
	mkdir -p "$work/home-$cfg"
	( export HOME=$work/home-$cfg TIMEFORMAT='%U %S'; time "$tool" record -a -e cpu-clock -F "$FREQ" "$@" \
		-o "$cfg.data" -- sh -c 'read x < go' > "$cfg.record" 2>&1 ) 2> "$cfg.$run.time" &
	sleep 2
	"$churn" -n "$N" -m "$MS" -l /dev/null > /dev/null 2>&1
	echo > go
	wait
	awk '{ print $1 + $2 }' "$cfg.$run.time" >> "$cfg.cpu"
	stat -c %s "$cfg.data" >> "$cfg.size"
	"$tool" report --stats -i "$cfg.data" 2> /dev/null |
		awk '/MMAP3 events:/ { m = $3 } /KSYMBOL events:/ { k = $3 } END { print m + 0, k + 0 }' \
		> "$cfg.records"
}

for run in $(seq "$RUNS"); do
	record base "$run" "$base"
	record sideband "$run" "$perf" --no-bpf-mmap3
	record mmap3sb "$run" "$perf"
	record mmap3 "$run" "$perf" --no-bpf-event
	record mmap3N "$run" "$perf" --no-bpf-event --no-buildid-cache
	echo "perf_bench: record round $run of $RUNS done"
done

# perf report, the same perf.data: the unpatched perf and the patched one.
timeit() {
	local i t0 t1
	for i in $(seq "$RUNS"); do
		t0=$(date +%s.%N)
		"$@" > /dev/null 2>&1
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc
	done | median
}
rep_base=$(HOME=$work/home-sideband timeit "$base" report --stdio -i sideband.data)
rep_patched=$(HOME=$work/home-sideband timeit "$perf" report --stdio -i sideband.data)
rep_mmap3=$(HOME=$work/home-mmap3sb timeit "$perf" report --stdio -i mmap3sb.data)
rep_srcline=$(HOME=$work/home-mmap3sb timeit "$perf" report --stdio --sort sym,srcline -i mmap3sb.data)

printf '\nperf record of %d programs of %d ms (bpf_churn), -a -F %d, median of %d runs\n\n' \
	"$N" "$MS" "$FREQ" "$RUNS"
printf '%-10s %12s %14s %8s %8s\n' config "record CPU s" "perf.data B" MMAP3 KSYMBOL
for cfg in base sideband mmap3sb mmap3 mmap3N; do
	cpu=$(median < $cfg.cpu)
	size=$(median < $cfg.size)
	eval "cpu_$cfg=$cpu size_$cfg=$size"
	printf '%-10s %12s %14s %8s %8s\n' $cfg "$cpu" "$size" $(cat $cfg.records)
done
printf '\nperf report --stdio, median of %d runs\n\n' "$RUNS"
printf '  unpatched, sideband perf.data    %8.3f s\n' "$rep_base"
printf '  patched,   sideband perf.data    %8.3f s\n' "$rep_patched"
printf '  patched,   mmap3+sb perf.data    %8.3f s\n' "$rep_mmap3"
printf '  patched,   mmap3+sb, sym,srcline %8.3f s\n' "$rep_srcline"

# The ratios, one per line, for the suite perf_bench to check.
echo
echo "perf_bench: report_time patched/unpatched same perf.data $(ratio "$rep_patched" "$rep_base")"
echo "perf_bench: report_time patched mmap3 file/unpatched sideband file $(ratio "$rep_mmap3" "$rep_base")"
echo "perf_bench: data_size mmap3+sb/sideband $(ratio "$size_mmap3sb" "$size_sideband")"
echo "perf_bench: data_size mmap3/sideband $(ratio "$size_mmap3" "$size_sideband")"
echo "perf_bench: record_cpu mmap3+sb/sideband $(ratio "$cpu_mmap3sb" "$cpu_sideband")"
echo "perf_bench: record_cpu mmap3/sideband $(ratio "$cpu_mmap3" "$cpu_sideband")"
echo "perf_bench: record_cpu mmap3 without the cache export/sideband $(ratio "$cpu_mmap3N" "$cpu_sideband")"
echo "perf_bench: record_cpu sideband/base $(ratio "$cpu_sideband" "$cpu_base")"
echo off > $S/control 2> /dev/null
umount $S 2> /dev/null
exit 0
