#!/bin/sh
# The fuzzing half of the host checks: build the libFuzzer targets
# (tests/fuzz, clang with ASan and UBSan: libbpfstash's entries, perf's
# PERF_RECORD_MMAP3 records, bpfstash decode's text scanner, the agent's
# handling of perf records, the kernel's index file and bpfstash inject's
# reading of a perf.data) and run each
# briefly from its corpus (its seeds plus what earlier runs found, kept in
# build/fuzz/corpus).
# Prints "PASS fuzz.<target> (N runs)" or "FAIL ...".
#
#   FUZZ_TIME=20    seconds per target
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/fuzz
time=${FUZZ_TIME:-20}
rc=0

if ! command -v clang >/dev/null 2>&1; then
	echo "SKIP fuzz.entry: clang is not installed"
	exit 0
fi
mkdir -p "$out"
if ! make -s -C "$top/tests/fuzz" O="$out" > "$out/build.log" 2>&1; then
	echo "FAIL fuzz.entry: build failed (build/fuzz/build.log)"
	exit 1
fi

for t in entry mmap3 decode agent index inject; do
	corpus=$out/corpus/$t
	crashes=$out/crashes/$t
	seed=$out/seed
	[ -d "$out/seed-$t" ] && seed=$out/seed-$t
	mkdir -p "$corpus" "$crashes"
	log=$out/$t.log
	"$out/fuzz_$t" -max_total_time="$time" -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" "$seed" > "$log" 2>&1
	frc=$?
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
	if [ $frc -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
		echo "PASS fuzz.$t ($runs runs)"
	else
		what=$(grep -m 1 -E 'ERROR: |runtime error|SUMMARY' "$log")
		echo "FAIL fuzz.$t: ${what:-exit $frc} (build/fuzz/$t.log, inputs in build/fuzz/crashes/$t)"
		rc=1
	fi
done
exit $rc
