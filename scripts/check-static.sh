#!/bin/bash
# The kernel half under sparse and on a 32-bit build.  Prints one
# PASS/FAIL/SKIP line per check:
#
#   static.sparse_ours     sparse (make C=2) on the store, the image hooks
#                          and the view (kernel/bpf/stash*.c, fs/bpfstash/,
#                          with include/linux/bpfstash.h): no warning
#   static.sparse_touched  sparse on the kernel files the series changes
#                          (kernel/bpf/syscall.c, core.c, trampoline.c,
#                          dispatcher.c, bpf_struct_ops.c,
#                          kernel/events/core.c): no warning on a line the
#                          series adds (6.12's own warnings stay theirs)
#   static.sparse_rcu      sparse refuses the entry pointers
#                          (bpf_prog_aux::stash, bpf_ksym::stash) read or
#                          written without RCU: a probe that does each gets
#                          an address-space warning for each
#   static.i386            the objects of the store and the view, built for
#                          i386 with W=1: no warning (u64 fields read
#                          without a lock must not tear there)
#
# Uses the debug kernel's objects (build/kernel-debug, built if needed) and
# build/kernel-i386 (allnoconfig for ARCH=i386 plus configs/base.config
# without CONFIG_64BIT, and configs/debug.config's bpfstash options).  The
# lines the series adds come from the pristine repository of
# scripts/make-series.sh (build/series/linux, tag base).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
kdbg=$top/build/kernel-debug
k32=$top/build/kernel-i386
out=$top/build/static
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"

pass() { echo "PASS static.$1${2:+ ($2)}"; }
fail() { echo "FAIL static.$1: $2"; }
skip() { echo "SKIP static.$1: $2"; }

cc=gcc
command -v ccache > /dev/null 2>&1 && cc="ccache gcc"
export KBUILD_BUILD_TIMESTAMP="1970-01-01" KBUILD_BUILD_USER=bpfstash KBUILD_BUILD_HOST=build
kmake() { make -s -C "$tree" CC="$cc" -j"$jobs" "$@"; }

if ! command -v sparse > /dev/null 2>&1; then
	for t in sparse_ours sparse_touched sparse_rcu; do
		fail "$t" "sparse is not installed (scripts/deps.sh installs it)"
	done
else
	[ -f "$kdbg/vmlinux" ] || "$top/scripts/build-kernel.sh" debug > "$out/build-debug.log" 2>&1 ||
		fail sparse_ours "the debug kernel does not build (build/static/build-debug.log)"

	# 1. Ours: every warning counts.
	ours="kernel/bpf/stash.o kernel/bpf/stash_prog.o kernel/bpf/stash_control.o kernel/bpf/stash_blob.o
	      kernel/bpf/stash_image.o fs/bpfstash/"
	touched="kernel/bpf/syscall.c kernel/bpf/core.c kernel/bpf/trampoline.c kernel/bpf/dispatcher.c
		 kernel/bpf/bpf_struct_ops.c kernel/events/core.c"
	# shellcheck disable=SC2086
	kmake O="$kdbg" C=2 $ours $(for f in $touched; do echo "${f%.c}.o"; done) \
		> "$out/sparse.log" 2>&1
	st=$?
	# "path:line:col: warning|error: ..." and the continuation lines.
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out/sparse.log" |
		sed "s|^$tree/||" > "$out/sparse.msgs"
	grep -E '^(kernel/bpf/stash[a-z_]*\.c|fs/bpfstash/|include/linux/bpfstash\.h|include/uapi/linux/bpfstash\.h|include/trace/events/bpfstash\.h)' \
		"$out/sparse.msgs" > "$out/sparse.ours"
	if [ "$st" != 0 ]; then
		fail sparse_ours "make C=2 failed: $(grep -m 3 -E 'error|Error' "$out/sparse.log" | tr '\n' ' ')"
	elif [ -s "$out/sparse.ours" ]; then
		fail sparse_ours "$(grep -c . "$out/sparse.ours") warning(s), first: $(head -n 2 "$out/sparse.ours" | tr '\n' ' ') (all: build/static/sparse.ours)"
	else
		pass sparse_ours "kernel/bpf/stash*.c, fs/bpfstash/: no warning"
	fi

	# 2. The files the series changes: a warning on a line it adds is new.
	repo=$top/build/series/linux
	if ! git -C "$repo" rev-parse -q --verify base > /dev/null 2>&1; then
		skip sparse_touched "no pristine repository (build/series/linux, tag base): run make series"
	else
		: > "$out/sparse.new"
		total=0
		for f in $touched; do
			total=$((total + $(grep -c "^$f:" "$out/sparse.msgs")))
			git -C "$repo" show "base:$f" > "$out/orig" 2> /dev/null || continue
			# The line numbers, in the new file, of the lines the series adds.
			diff --old-line-format= --unchanged-line-format= --new-line-format='%dn
' "$out/orig" "$tree/$f" > "$out/added"
			grep "^$f:" "$out/sparse.msgs" | while IFS=: read -r _ line _; do
				if grep -qx "$line" "$out/added"; then
					grep -m 1 "^$f:$line:" "$out/sparse.msgs"
				fi
			done >> "$out/sparse.new"
		done
		if [ -s "$out/sparse.new" ]; then
			fail sparse_touched "$(grep -c . "$out/sparse.new") new warning(s): $(head -n 2 "$out/sparse.new" | tr '\n' ' ')"
		else
			pass sparse_touched "$(echo $touched | wc -w) files: none on the series' lines; 6.12's own: $total"
		fi
	fi

	# 3. The probe: what sparse must refuse.  An external module of one
	# object, checked (C=2) and not linked.
	probe=$out/probe
	rm -rf "$probe"
	mkdir -p "$probe"
	cp "$top/tests/static/rcu_probe.c" "$probe/"
	echo 'obj-m += rcu_probe.o' > "$probe/Kbuild"
	kmake O="$kdbg" M="$probe" C=2 rcu_probe.o > "$out/probe.log" 2>&1
	st=$?
	got=$(grep -cE 'rcu_probe\.c:[0-9]+:[0-9]+: (warning|error): .*different address spaces' "$out/probe.log")
	want=$(grep -c '/\* sparse: address space \*/' "$top/tests/static/rcu_probe.c")
	if [ "$st" != 0 ]; then
		fail sparse_rcu "the probe does not compile: $(grep -m 2 'error' "$out/probe.log" | tr '\n' ' ')"
	elif [ "$got" != "$want" ]; then
		fail sparse_rcu "sparse gave $got address-space warning(s) for the probe's $want plain accesses (build/static/probe.log)"
	else
		pass sparse_rcu "$got of $want plain accesses refused"
	fi
fi

# 4. i386.
if ! gcc -m32 -x c -c -o /dev/null /dev/null 2> /dev/null; then
	fail i386 "gcc cannot compile for -m32"
else
	mkdir -p "$k32"
	grep -v '^CONFIG_64BIT' "$top/configs/base.config" > "$k32/allno.config"
	grep -h '^CONFIG_BPFSTASH\|^CONFIG_KUNIT' "$top/configs/debug.config" >> "$k32/allno.config"
	stamp=$(sha256sum < "$k32/allno.config" | cut -c1-16)
	if [ "$(cat "$k32/.bpfstash-config" 2> /dev/null)" != "$stamp" ]; then
		kmake O="$k32" ARCH=i386 KCONFIG_ALLCONFIG="$k32/allno.config" allnoconfig \
			> "$out/i386.log" 2>&1 && echo "$stamp" > "$k32/.bpfstash-config"
	fi
	if ! grep -q '^CONFIG_BPFSTASH=y' "$k32/.config" 2> /dev/null ||
	   ! grep -q '^CONFIG_BPFSTASH_KUNIT_TEST=y' "$k32/.config"; then
		fail i386 "ARCH=i386 allnoconfig did not keep CONFIG_BPFSTASH and its KUnit tests (build/kernel-i386/.config)"
	else
		# Build from clean, so that every warning is printed again.
		rm -f "$k32"/kernel/bpf/stash*.o "$k32"/fs/bpfstash/*.o
		kmake O="$k32" ARCH=i386 W=1 kernel/bpf/stash.o kernel/bpf/stash_prog.o \
			kernel/bpf/stash_control.o kernel/bpf/stash_blob.o kernel/bpf/stash_image.o fs/bpfstash/ > "$out/i386.log" 2>&1
		st=$?
		if [ "$st" != 0 ]; then
			fail i386 "the build failed: $(grep -m 3 'error' "$out/i386.log" | tr '\n' ' ')"
		elif grep -q 'warning:' "$out/i386.log"; then
			fail i386 "$(grep -c 'warning:' "$out/i386.log") warning(s), first: $(grep -m 1 'warning:' "$out/i386.log")"
		else
			pass i386 "kernel/bpf/stash*.o, fs/bpfstash/ with W=1, KUnit tests included: no warning"
		fi
	fi
fi
