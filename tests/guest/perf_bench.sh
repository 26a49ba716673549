#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "perf_bench" (bench kernel): bench/perf_bench.sh with a
# smaller workload, and its ratios checked (issue 7, "It must show" 5):
#
#   report_time   perf report with the patch is no slower than without it
#                 on the same perf.data (at most 1.5x: noise, not a cost);
#   data_size     perf.data with MMAP3 and no side-band is smaller than
#                 with perf's side-band fetch alone;
#   record_cpu    perf record with MMAP3 and no side-band, the build-id cache
#                 export included, costs at most 2x the CPU of the side-band
#                 fetch alone (the export of each entry hit is the price of
#                 resolving on another machine; the figures show it apart).
#
# The figures themselves are printed; make bench runs the full benchmark.
set -u
top=${BPFSTASH_TOP:?}
out=$(BENCH_PROGRAMS=${PERF_BENCH_PROGRAMS:-60} BENCH_MS=${PERF_BENCH_MS:-20} \
	BENCH_RUNS=${PERF_BENCH_RUNS:-3} "$top/bench/perf_bench.sh" 2>&1)
st=$?
echo "$out" | grep -v '^perf_bench: record round' | sed 's/^/  perf_bench.figures: /'

r() { echo "$out" | sed -n "s/^perf_bench: $1 \([0-9.]*\)$/\1/p"; }
# $1 name, $2 value, $3 op, $4 bound
check() {
	if [ $st -ne 0 ] || [ -z "$2" ]; then
		echo "FAIL perf_bench.$1: bench/perf_bench.sh exit $st, no figure"
	elif awk -v v="$2" -v b="$4" "BEGIN { exit !(v + 0 $3 b + 0) }"; then
		echo "PASS perf_bench.$1"
	else
		echo "FAIL perf_bench.$1: ratio $2, want $3 $4"
	fi
}
check report_time "$(r 'report_time patched\/unpatched same perf.data')" '<=' 1.5
check data_size "$(r 'data_size mmap3\/sideband')" '<' 1
check record_cpu "$(r 'record_cpu mmap3\/sideband')" '<=' 2
