#!/bin/sh
# The host half of make check: build and run the cmocka unit tests of the
# userspace tools (tests/host) and the short fuzzing runs.  Prints one
# PASS/FAIL/SKIP line per test.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
make -s -C "$top/tests/host" run || rc=1
if [ -x "$top/scripts/check-fuzz.sh" ]; then
	"$top/scripts/check-fuzz.sh" || rc=1
fi
exit $rc
