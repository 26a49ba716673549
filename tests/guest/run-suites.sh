#!/bin/sh
# Runs in the test guest (scripts/vm-run): every in-guest suite, or those
# named, each with a timeout.  Prints the suites' PASS/FAIL/SKIP lines.
# Items are "suite", "suite:test1,test2" or "NAME=VALUE" (environment for
# the suites after it).
# Exit status 1 if any suite failed or did not finish.
top=${BPFSTASH_TOP:?}
# This architecture's suites (scripts/vm-run sets it: build/arm64/tests
# on arm64).
bin=${BPFSTASH_TESTS:-$top/build/tests}/guest
suite_timeout=${BPFSTASH_SUITE_TIMEOUT:-900}
rc=0

suites="$*"
[ -n "$suites" ] || suites=$(grep -v '^#' "$top/tests/guest/SUITES")
# The security suite ends with lockdown=confidentiality, which cannot be
# undone in this boot: it always runs last.
last=""
rest=""
for s in $suites; do
	case "$s" in
	security|security:*) last="$last $s" ;;
	*) rest="$rest $s" ;;
	esac
done
suites="$rest $last"

for s in $suites; do
	# NAME=VALUE items set the environment of the suites that follow.
	case "$s" in
	[A-Z]*=*)
		export "$s"
		# BPFSTASH_SUITE_TIMEOUT=N there: the suites after it get N s.
		suite_timeout=${BPFSTASH_SUITE_TIMEOUT:-900}
		continue ;;
	esac
	name=${s%%:*}
	args=""
	[ "$name" != "$s" ] && args=$(echo "${s#*:}" | tr ',' ' ')
	# A C suite is built into $bin; a shell suite runs from the tree.
	exe=$bin/$name
	[ -x "$exe" ] || [ ! -x "$top/tests/guest/$name.sh" ] || exe=$top/tests/guest/$name.sh
	if [ ! -x "$exe" ]; then
		echo "FAIL $name: suite binary $bin/$name not built"
		rc=1
		continue
	fi
	start=$(cut -d' ' -f1 /proc/uptime)
	echo "suite $name: start"
	# Each suite starts from a fresh working directory and sysctl state.
	(cd /tmp && timeout -k 5 "$suite_timeout" "$exe" $args)
	src=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "suite $name: exit $src, $(echo "$end - $start" | bc) s"
	if [ $src -eq 124 ] || [ $src -eq 137 ]; then
		echo "FAIL $name: timed out after ${suite_timeout}s"
	fi
	[ $src -eq 0 ] || rc=1
done
exit $rc
