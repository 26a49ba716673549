#!/bin/sh
# Runs in the bench guest (scripts/bench.sh): every in-guest benchmark,
# raw results as CSV in $BPFSTASH_RESULTS.  Rounds are interleaved inside
# each benchmark (stash mounted / not mounted) to share the machine's drift.
set -u
top=${BPFSTASH_TOP:?}
out=${BPFSTASH_RESULTS:?}
b=$top/build/bench
p=$top/build/tests/progs
rounds=${BENCH_ROUNDS:-10}

echo "program,loads_per_side,p50_unmounted_us,p99_unmounted_us,p50_mounted_us,p99_mounted_us,added_p50_us,added_p50_pct,added_p99_us,added_p99_pct,hook_us,hash_us,hashed_bytes" > "$out/load.csv"
for insns in 3 64 512 4096 32768; do
	n=100
	[ $insns -ge 4096 ] && n=20
	[ $insns -ge 32768 ] && n=4
	"$b/loadbench" -r "$rounds" -n $n -i $insns --csv -l "synthetic-$insns" >> "$out/load.csv"
	echo "bench: load synthetic-$insns done"
done
for obj in subprogs large many; do
	n=30
	[ $obj = large ] && n=6
	[ $obj = many ] && n=6
	"$b/loadbench" -r "$rounds" -n $n -o "$p/$obj.bpf.o" --csv -l "$obj" >> "$out/load.csv"
	echo "bench: load $obj done"
done

# The cost of MMAP3 for one listener, against the KSYMBOL+BPF_EVENT
# emission perf already asks for (stash mounted on both sides).
echo "program,loads_per_side,p50_ksym_bpf_event_us,p99_ksym_bpf_event_us,p50_plus_mmap3_us,p99_plus_mmap3_us,added_p50_us,added_p50_pct,added_p99_us,added_p99_pct,hook_us,hash_us" > "$out/listener.csv"
"$b/loadbench" -r "$rounds" -n 100 --listeners --csv -l synthetic-3 >> "$out/listener.csv"
"$b/loadbench" -r "$rounds" -n 30 --listeners --csv -l subprogs -o "$p/subprogs.bpf.o" >> "$out/listener.csv"
echo "bench: listener done"

# JIT sizes of the same programs, for the plot's x axis.
echo "program,jited_bytes" > "$out/sizes.csv"
mount -t bpfstash none /sys/fs/bpfstash
for obj in subprogs large many; do
	"$top/build/bpftool/bpftool" prog load "$p/$obj.bpf.o" /sys/fs/bpf/$obj 2>/dev/null ||
		{ mkdir -p /sys/fs/bpf; mount -t bpf bpf /sys/fs/bpf; "$top/build/bpftool/bpftool" prog load "$p/$obj.bpf.o" /sys/fs/bpf/$obj; }
	printf '%s,%s\n' $obj "$("$top/build/bpftool/bpftool" -j prog show pinned /sys/fs/bpf/$obj | sed -n 's/.*"bytes_jited":\([0-9]*\).*/\1/p')" >> "$out/sizes.csv"
	rm -f /sys/fs/bpf/$obj
done
echo off > /sys/fs/bpfstash/control
umount /sys/fs/bpfstash

"$b/racebench" -n "${BENCH_RACE_PROGS:-2000}" --csv > "$out/race.csv"
echo "bench: race done"
"$b/membench" -n 500 -c "$p" > "$out/memory.csv"
echo "bench: memory done"
# The agent interface against a /proc/kallsyms rescan (bench/agentbench.c).
"$b/agentbench" -c -n "${BENCH_AGENT_ENTRIES:-100000}" > "$out/agent.csv"
echo "bench: agent done"
STASH_SCALE=${BENCH_SCALE:-100000} "$top/build/tests/guest/scale" > "$out/scale.txt" 2>&1
echo "bench: scale done"
exit 0
