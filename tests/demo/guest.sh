#!/bin/sh
# Runs in the demo guest: mount the stash, load a short-lived BPF program
# written in C (four functions, BTF, line info), close it, and show that the
# stash still has everything a profiler needs.
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
