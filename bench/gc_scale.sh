#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bpfstash-gc at scale, on the real filesystem, in the bench kernel: the
# time and peak memory to scan and expire N entries (default 100 000),
# with small entries and with entries ten times bigger (the memory should
# not follow the size).  Report: build/bench/gc-scale/report.
#
#   bench/gc_scale.sh [N]
#
# Needs the bench kernel (scripts/build-kernel.sh bench) and the tools and
# tests built (make tools tests).  Loading 100 000 programs takes about a
# minute and a half in TCG.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-100000}
out=$top/build/bench/gc-scale
bz=$top/build/kernel-bench/arch/x86/boot/bzImage
[ -f "$bz" ] || { echo "gc_scale: no bench kernel; run scripts/build-kernel.sh bench" >&2; exit 69; }
[ -x "$top/build/tests/guest/gc" ] && [ -x "$top/build/bpfstash-gc/bpfstash-gc" ] ||
	{ echo "gc_scale: build first: make tools tests" >&2; exit 69; }
mkdir -p "$out"
# The guest's memory holds the entries (about 1 KB each for the small ones).
rc=0
# One line: vm-run quotes the command for the guest's sh.
gc=$top/build/tests/guest/gc
"$top/scripts/vm-run" -k bench -m 4096 -t 3600 -q -o "$out/guest" -- sh -c \
	"cd /tmp && BPFSTASH_GC_SCALE=$n $gc scale && BPFSTASH_GC_SCALE=$n BPFSTASH_GC_SCALE_INSNS=64 $gc scale" ||
	rc=$?
grep -E '^(PASS|FAIL|SKIP) |^  gc\.scale: ' "$out/guest/console.log" | tee "$out/report"
exit $rc
