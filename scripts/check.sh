#!/bin/bash
# make check: every bpfstash test, and one summary line at the end.
#
#   1. host unit tests (cmocka) of the userspace tools;
#   2. one boot of the debug kernel in QEMU, which runs KUnit at boot and
#      then the in-guest suites (tests/guest/SUITES);
#   3. the results: each test's PASS/FAIL/SKIP line, then
#      "N passed, N failed, N skipped".
#
# Environment: SUITES="smoke stash" runs only those guest suites ("suite:test1,test2"
# runs single tests); HOST=0 or GUEST=0 skips a half.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/check
mkdir -p "$out"
: > "$out/results"
start=$(date +%s)

phase() { printf '\n== %s\n' "$*"; }

# 1. Host unit tests.
if [ "${HOST:-1}" = 1 ] && [ -x "$top/scripts/check-host.sh" ]; then
	phase "host unit tests"
	hstart=$(date +%s)
	"$top/scripts/check-host.sh" 2>&1 | tee "$out/host.log" |
		grep -E '^(PASS|FAIL|SKIP) |^  ' || true
	grep -E '^(PASS|FAIL|SKIP) ' "$out/host.log" >> "$out/results"
	echo "host unit tests: $(($(date +%s) - hstart)) s"
fi

# 2. The guest: KUnit at boot, then the suites.
if [ "${GUEST:-1}" = 1 ]; then
	phase "debug kernel in QEMU: KUnit, then ${SUITES:-all suites}"
	gstart=$(date +%s)
	# shellcheck disable=SC2086
	"$top/scripts/vm-run" -k debug -o "$out/guest" -t "${GUEST_TIMEOUT:-3000}" -- \
		"$top/tests/guest/run-suites.sh" ${SUITES:-} 2>&1 |
		tee "$out/guest.log" |
		grep --line-buffered -E '^(PASS|FAIL|SKIP) |^suite |^guest: |^vm-run:|^  [a-z_]+\.[a-z_0-9]+: '
	grc=${PIPESTATUS[0]}
	gwall=$(($(date +%s) - gstart))
	console=$out/guest/console.log

	# KUnit results (KTAP) from the console: "    # Subtest: <suite>", then
	# the suite's tests at the same indent; parameters are nested deeper.
	sed -e 's/^\[ *[0-9.]*\] //' "$console" 2>/dev/null | awk '
		/^    # Subtest: / { suite = $3; next }
		/^[^ ]/ { suite = "" }
		suite != "" && /^    (not )?ok [0-9]+ / {
			line = $0; sub(/^    /, "", line)
			ok = (line ~ /^ok/); sub(/^(not )?ok [0-9]+ /, "", line)
			if (index(line, " # SKIP")) {
				name = substr(line, 1, index(line, " # SKIP") - 1)
				printf "SKIP kunit.%s.%s: %s\n", suite, name, substr(line, index(line, " # SKIP") + 8)
			} else if (ok) {
				printf "PASS kunit.%s.%s\n", suite, line
			} else {
				printf "FAIL kunit.%s.%s: see build/check/guest/console.log\n", suite, line
			}
		}' > "$out/kunit"
	if grep -q 'CONFIG_BPFSTASH_KUNIT_TEST=y' "$top/build/kernel-debug/.config" &&
	   ! grep -q '^PASS\|^FAIL\|^SKIP' "$out/kunit"; then
		echo "FAIL kunit: no KUnit results in the guest console" >> "$out/kunit"
	fi
	phase "KUnit"
	cat "$out/kunit"
	cat "$out/kunit" >> "$out/results"
	grep -E '^(PASS|FAIL|SKIP) ' "$out/guest.log" >> "$out/results"

	boot=$(sed -n 's/^guest: up \([0-9.]*\)s.*/\1/p' "$console" | head -n 1)
	echo "guest: boot to init ${boot:-?} s (guest clock), wall ${gwall} s, KVM: $(cat "$top/build/vm/kvm-usable" 2>/dev/null || echo no)"
	if [ "$grc" != 0 ]; then
		# A kernel report or a crash fails the run even if every test passed.
		reason=$(grep -E '^vm-run:' "$out/guest.log" | head -n 3 | tr '\n' ' ')
		if [ -n "$reason" ] || ! grep -q '^FAIL ' "$out/guest.log"; then
			echo "FAIL guest: exit $grc ${reason:-(no test failed; see build/check/guest/console.log)}" >> "$out/results"
		fi
	fi
fi

# 3. Summary.
pass=$(grep -c '^PASS ' "$out/results")
fail=$(grep -c '^FAIL ' "$out/results")
skip=$(grep -c '^SKIP ' "$out/results")
phase "summary ($(($(date +%s) - start)) s)"
if [ "$skip" -gt 0 ]; then
	echo "skipped:"
	grep '^SKIP ' "$out/results" | sed 's/^SKIP /  /'
fi
if [ "$fail" -gt 0 ]; then
	echo "failed:"
	grep '^FAIL ' "$out/results" | sed 's/^FAIL /  /'
fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
