#!/bin/sh
# init (PID 1) of the user-mode Linux boot of bench/uml.sh.  The root is the
# host's, read-only, through hostfs; the kernel passes BPFSTASH_TOP and
# BENCH_ROUNDS from its command line.  Prints the same CSV rows as the
# native section of scripts/bench.sh, each prefixed "umlbench: ", and
# powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
b=$BPFSTASH_TOP/build/bench
p=$BPFSTASH_TOP/build/tests/progs
r=${BENCH_ROUNDS:-1}
{
	echo "kernel $(uname -r) (user-mode Linux, no JIT)"
	for insns in 3 64 512 4096; do
		n=100
		[ "$insns" -ge 4096 ] && n=30
		"$b/loadbench" -r "$r" -n $n --only unmounted --csv -l "synthetic-$insns" -i $insns
	done
	for obj in subprogs large; do
		"$b/loadbench" -r "$r" -n 30 --only unmounted --csv -l "$obj" -o "$p/$obj.bpf.o"
	done
	echo "done"
} 2>&1 | sed 's/^/umlbench: /'
exec poweroff -f
