#!/bin/sh
# Runs in the bench guest booted with scripts/vm-run --icount: the guest
# clock then advances one nanosecond per instruction executed, so every
# "us" loadbench prints is a thousand instructions.  Instruction counts do
# not depend on the host, on TCG's uneven slowdown or on other load on the
# machine: they give the hook's share of a load in a form that carries over
# to native hardware better than TCG time does (see the report).
set -u
top=${BPFSTASH_TOP:?}
out=${BPFSTASH_RESULTS:?}
b=$top/build/bench
p=$top/build/tests/progs
rounds=${BENCH_ICOUNT_ROUNDS:-4}

echo "program,loads_per_side,p50_unmounted_kinsn,p99_unmounted_kinsn,p50_mounted_kinsn,p99_mounted_kinsn,added_p50_kinsn,added_p50_pct,added_p99_kinsn,added_p99_pct,hook_kinsn,hash_kinsn,hashed_bytes" > "$out/icount.csv"
for insns in 3 64 512 4096; do
	n=100
	[ $insns -ge 4096 ] && n=10
	"$b/loadbench" -r "$rounds" -n $n -i $insns --csv -l "synthetic-$insns" >> "$out/icount.csv"
	echo "bench: instructions synthetic-$insns done"
done
for obj in subprogs large; do
	n=20
	[ $obj = large ] && n=4
	"$b/loadbench" -r "$rounds" -n $n -o "$p/$obj.bpf.o" --csv -l "$obj" >> "$out/icount.csv"
	echo "bench: instructions $obj done"
done
exit 0
