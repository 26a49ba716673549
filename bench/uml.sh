#!/bin/sh
# The benchmark programs loaded by the pristine 6.12 running as user-mode
# Linux (scripts/build-kernel.sh um), i.e. as a process on this machine:
# its verifier runs at this CPU's own speed, which no QEMU guest here
# gives (TCG; nested KVM does not boot).  UML has no BPF JIT, so a load
# there is 6.12's load without its JIT, plus what a system call costs in
# UML (the trivial program's row shows it).
#
#   bench/uml.sh [ROUNDS]   prints "program,side,loads,p50_us,p99_us" rows
#                           (loadbench --csv), or one "# skipped: why" line
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
linux=$top/build/kernel-um/linux
rounds=${1:-1}

if [ ! -x "$linux" ]; then
	echo "# skipped: no $linux (scripts/build-kernel.sh um)"
	exit 0
fi
if ! log=$(mktemp 2>&1); then
	echo "# skipped: no temporary file for the boot's console: $log"
	exit 0
fi
trap 'rm -f "$log"' EXIT
# UML keeps its memory in a file under TMPDIR; it needs a few hundred MB.
timeout 900 "$linux" mem=768M rootfstype=hostfs rootflags=/ ro quiet \
	init="$top/bench/uml-init.sh" BPFSTASH_TOP="$top" BENCH_ROUNDS="$rounds" \
	< /dev/null > "$log" 2>&1
rc=$?
if ! grep -q '^umlbench: done' "$log"; then
	# The first line that says why, if one does, else the last one.
	why=$(tr -d '\r' < "$log" | grep -m1 -E 'failed|panic|Killed' ||
	      tr -d '\r' < "$log" | grep -v '^$' | tail -n 1)
	echo "# skipped: the user-mode Linux boot did not finish (exit $rc): $why"
	exit 0
fi
tr -d '\r' < "$log" | sed -n 's/^umlbench: //p' | grep -v '^done$' |
	sed 's/^kernel /# kernel /'
