#!/bin/sh
# Runs in a bench guest (bench/hook-arm64.sh, on arm64 and on x86-64):
# loadbench on the five programs of KUnit's benchmark of the load hook,
# stash mounted and not, interleaved; one CSV per program into
# $BPFSTASH_RESULTS/load-<program>.csv.  Then membench, if built, into
# $BPFSTASH_RESULTS/memory.csv: what entries hold beyond their content.
# This architecture's benches are bench/ beside its tests (build/bench,
# build/arm64/bench).
#
#   hook-loads.sh ROUNDS
set -u
top=${BPFSTASH_TOP:?}
rounds=${1:?usage: hook-loads.sh ROUNDS}
b=$(dirname "${BPFSTASH_TESTS:-$top/build/tests}")/bench
p=$top/build/tests/progs
rc=0
for spec in tiny:40 subprogs:20 insns4096:6 large:4 many:4; do
	obj=${spec%%:*}
	if ! "$b/loadbench" -r "$rounds" -n "${spec#*:}" -o "$p/$obj.bpf.o" --csv -l "$obj" \
		> "$BPFSTASH_RESULTS/load-$obj.csv"; then
		echo "hook-loads: loadbench $obj failed"
		rc=1
	fi
done
if [ -x "$b/membench" ]; then
	if ! "$b/membench" -n "${MEMBENCH_N:-100}" -c "$p" > "$BPFSTASH_RESULTS/memory.csv"; then
		echo "hook-loads: membench failed"
		rc=1
	fi
fi
exit $rc
