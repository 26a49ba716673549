#!/bin/sh
# Runs in the demo guest: mount the stash, load a short-lived BPF program
# written in C (four functions, BTF, line info), close it, and show that the
# stash still has everything a profiler needs; then profile another one
# with perf while it runs hot, unload it, and resolve its samples to
# functions and source lines (perf report, perf annotate).
top=${BPFSTASH_TOP:?}
S=/sys/fs/bpfstash
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "mount -t bpfstash none $S"
mount -t bpfstash none $S || exit 1
grep bpfstash /proc/mounts

say "load tests/progs/subprogs.bpf.c through libbpf, then close it at once"
"$top/build/tests/guest/smoke" || exit 1
echo "(the program is gone: bpftool prog show lists nothing of it)"
"$top/build/bpftool/bpftool" prog show name stash_subprogs 2>&1 | head -3

hash=$(grep -l stash_subprogs $S/*/info 2>/dev/null | head -n 1 | xargs -r dirname | xargs -r basename)
[ -n "$hash" ] || { echo "no entry for stash_subprogs"; exit 1; }

say "ls -l $S/$hash"
ls -l "$S/$hash"
say "cat $S/$hash/info"
cat "$S/$hash/info"
say "cat $S/$hash/functions"
cat "$S/$hash/functions"
say "head $S/$hash/lines"
head -n 12 "$S/$hash/lines"
say "bpftool btf dump file $S/$hash/btf (first lines)"
"$top/build/bpftool/bpftool" btf dump file "$S/$hash/btf" | head -n 8
say "cat $S/stats"
cat $S/stats

# perf: a short-lived program with subprograms, profiled, then unloaded.
perf=$top/build/perf/perf
say "perf record -a while bpf_churn runs tests/progs/churn.bpf.c hot (BPF_PROG_TEST_RUN, 1 s), then closes it"
cd /tmp || exit 1
"$perf" record -a -e cpu-clock -o /tmp/demo.data -- \
	"$top/build/tests/perf/bpf_churn" -n 1 -m 1000 -l /tmp/churn.log 2>&1 | tail -n 2
hash=$(awk '{ print $6 }' /tmp/churn.log)
echo "(program $(awk '{ print $4 }' /tmp/churn.log) is unloaded: bpftool prog show lists no churn program)"
"$top/build/bpftool/bpftool" prog show name churn 2>&1 | head -3
"$perf" script --show-mmap-events -i /tmp/demo.data 2> /dev/null | grep -m 5 'PERF_RECORD_MMAP3.*_churn' |
	sed 's/^.*PERF_RECORD_MMAP3/PERF_RECORD_MMAP3/'
say "perf report --sort sym,srcline: the samples in the unloaded program, to the source line"
"$perf" report -i /tmp/demo.data --stdio --sort sym,srcline 2> /dev/null |
	grep -E '^# Overhead|_churn' | head -n 16
say "perf annotate: its hottest function, disassembly with the C source"
"$perf" annotate -i /tmp/demo.data --stdio -d "$S/$hash" 2> /dev/null | head -n 40
say "the build-id cache (perf record put the entry there: it resolves on any machine)"
ls -l "$HOME/.debug/.build-id/$(echo "$hash" | cut -c1-2)/"

# The bpfstash CLI on the unloaded program, and bpfstash-gc.
cli=$top/build/bpfstash/bpfstash
gc=$top/build/bpfstash-gc/bpfstash-gc
short=$(echo "$hash" | cut -c1-8)
say "bpfstash ls; bpfstash resolve $short+0x20 (an offset into the unloaded program's image)"
"$cli" ls
"$cli" resolve "$short+0x20"
say "bpfstash verify: every entry's name is the hash of its content"
"$cli" verify
say "bpfstash-gc --dry-run --max-entries 1: what would go (never a loaded program's entry)"
"$gc" --dry-run --max-entries 1
say "bpfstash-gc --max-entries 1 --archive /tmp/archive: archived first, then removed"
"$gc" --max-entries 1 --archive /tmp/archive
find /tmp/archive -type f | head -n 5
ls $S
