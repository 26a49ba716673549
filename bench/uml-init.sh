#!/bin/sh
# init (PID 1) of the user-mode Linux boot of bench/uml.sh.  The root is the
# host's, read-only, through hostfs; the kernel passes BPFSTASH_TOP and
# BENCH_ROUNDS from its command line.  Prints bench/native-loads.sh's CSV
# rows, each prefixed "umlbench: ", and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
{
	echo "kernel $(uname -r) (user-mode Linux, no JIT)"
	"$BPFSTASH_TOP/bench/native-loads.sh" "${BENCH_ROUNDS:-1}"
	echo "done"
} 2>&1 | sed 's/^/umlbench: /'
exec poweroff -f
