#!/bin/bash
# The arm64 checks: boot the arm64 debug kernel (build/kernel-arm64, KASAN
# and lockdep) in qemu-system-aarch64 -M virt under TCG, whose boot runs
# the store's KUnit tests, with Debian 12's arm64 userland as its root
# (build/arm64/root, scripts/arm64-userland.sh), and run the in-guest
# suites there, cross-built, unchanged in what they assert; then the host's
# half of the cross suite (scripts/check-cross.sh).
#
#   scripts/check-arm64.sh [SUITE...]
#
# Without SUITE: every suite of tests/guest/SUITES.arm64 (make check-arm64).
# make check runs "stash mmap3", what fits in its time.  Prints one
# PASS/FAIL/SKIP line per KUnit test (kunit-arm64.<test>) and per suite
# test, as make check does, then the time the guest took.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/check-arm64
mkdir -p "$out"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || mapfile -t suites < <(grep -v '^#' "$top/tests/guest/SUITES.arm64" | tr ' ' '\n' | grep .)
start=$(date +%s)
rm -rf "$out/guest/cross"
# arm64 code under TCG runs several times slower than the x86 guest's:
# each suite gets ARM64_SUITE_TIMEOUT (perf's annotation of a whole
# recording, one objdump per function, takes most of the perf suite's),
# the guest GUEST_TIMEOUT.
"$top/scripts/vm-run" -k arm64 -q -o "$out/guest" -t "${GUEST_TIMEOUT:-5400}" -- \
	env BPFSTASH_SUITE_TIMEOUT="${ARM64_SUITE_TIMEOUT:-2400}" \
	"$top/tests/guest/run-suites.sh" "${suites[@]}" > "$out/vm-run.log" 2>&1
rc=$?
log=$out/guest/console.log
# KUnit's TAP (the bpfstash suite's cases), then the suites' lines, under
# their arm64 names; all of it also in build/check-arm64/results.
{
awk '/^\[ *[0-9.]+\]     ok [0-9]+ bpfstash_/ {
		if (index($0, " # SKIP")) { sub(/.* ok [0-9]+ /, ""); sub(/ # SKIP/, ":"); print "SKIP kunit-arm64." $0 }
		else print "PASS kunit-arm64." $NF }
     /^\[ *[0-9.]+\]     not ok [0-9]+ bpfstash_/ { print "FAIL kunit-arm64." $NF ": see " FILENAME }' "$log"
grep -q '# Totals: pass:[1-9][0-9]* fail:0 ' "$log" ||
	echo "FAIL kunit-arm64: no passing totals in build/check-arm64/guest/console.log"
grep -E '^(PASS|FAIL|SKIP) ' "$log" | sed -E 's/^(PASS|FAIL|SKIP) /\1 arm64./'
grep -E '^  [a-z_0-9]+\.[a-z_0-9]+: ' "$log" | sed 's/^  /  arm64./'
# The cross suite's host half: the same commands on the same entries here.
if [ -d "$out/guest/cross" ]; then
	"$top/scripts/check-cross.sh" "$out/guest/cross" | sed -E 's/^(PASS|FAIL|SKIP) /\1 arm64./; s/^  /  arm64./'
fi
if [ "$rc" != 0 ]; then
	reason=$(grep -E '^vm-run:' "$out/vm-run.log" | head -n 3 | tr '\n' ' ')
	if [ -n "$reason" ] || ! grep -q '^FAIL ' "$log"; then
		echo "FAIL arm64: exit $rc ${reason:-(no test failed; see build/check-arm64/guest/console.log)}"
	fi
fi
} | tee "$out/results"
rc=0
grep -q '^FAIL ' "$out/results" && rc=1
boot=$(sed -n 's/^guest: up \([0-9.]*\)s.*/\1/p' "$log" | head -n 1)
echo "arm64 guest: boot to init ${boot:-?} s (guest clock), wall $(($(date +%s) - start)) s, TCG"
exit $rc
