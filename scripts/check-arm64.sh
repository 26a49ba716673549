#!/bin/sh
# The arm64 checks (make check-arm64): boot the arm64 debug kernel
# (build/kernel-arm64, KASAN and lockdep) in qemu-system-aarch64 -M virt
# under TCG, whose boot runs the store's KUnit tests, with
# tests/arm64/smoke.c as init: a static arm64 program, built here, that
# checks an entry against bpf() and the index file.  Prints one
# PASS/FAIL line per KUnit test and per smoke check, as make check does.
# The arm64 guest has no userland of its own yet: the other suites do not
# run there (docs in README.md).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/check-arm64
mkdir -p "$out" "$top/build/arm64"

if ! aarch64-linux-gnu-gcc -static -O2 -Wall -Werror -I "$top/include/uapi" \
	"$top/tests/arm64/smoke.c" -o "$top/build/arm64/smoke" 2> "$out/build.log"; then
	echo "FAIL arm64.build: tests/arm64/smoke.c ($out/build.log)"
	exit 1
fi
start=$(date +%s)
"$top/scripts/vm-run" -k arm64 -q -o "$out/guest" -t 900 -- "$top/build/arm64/smoke"
rc=$?
log=$out/guest/console.log
# KUnit's TAP (the bpfstash suite's cases), then the smoke program's lines.
awk '/^\[ *[0-9.]+\]     ok [0-9]+ bpfstash_/ { print "PASS kunit-arm64." $NF }
     /^\[ *[0-9.]+\]     not ok [0-9]+ bpfstash_/ { print "FAIL kunit-arm64." $NF ": see " FILENAME }' "$log"
grep -E '^(PASS|FAIL) arm64\.' "$log"
grep -q '# Totals: pass:[0-9]* fail:0 ' "$log" || { echo "FAIL kunit-arm64: no passing totals in $log"; rc=1; }
grep -q '^arm64: done 0 failed' "$log" || { echo "FAIL arm64.smoke: it did not finish ($log)"; rc=1; }
echo "arm64: guest $(cat "$out/guest/wall" 2>/dev/null) s, all $(($(date +%s) - start)) s"
exit $rc
