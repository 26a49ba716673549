#!/bin/sh
# Runs in the demo guest: mount the stash, load a short-lived BPF program
# written in C (four functions, BTF, line info), close it, and show that the
# stash still has everything a profiler needs; then profile another one
# with perf while it runs hot, unload it, and resolve its samples to
# functions and source lines (perf report, perf annotate).
top=${BPFSTASH_TOP:?}
S=/sys/fs/bpfstash
cli=$top/build/bpfstash/bpfstash
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
status=0
# The demo checks what it shows: a problem is printed where it is seen and
# makes the demo fail at the end.
problem() { printf '\033[1;31mdemo: %s\033[0m\n' "$*"; status=1; }

# A text file of the entry, against bpfstash's own rendering of the binary
# files (libbpfstash, libbpf's BTF parser): the same bytes, or the diff.
same_as_render() {
	# Through a pipe: the kernel's text files have a size of 0, as in
	# procfs, and cmp(1) takes two regular files of different sizes as
	# different without reading them.
	"$cli" render "$1" "$2" > "/tmp/render.$2" 2>&1 &&
		cat "$S/$1/$2" | cmp -s "/tmp/render.$2" - && return 0
	problem "$S/$1/$2 differs from 'bpfstash render $1 $2':"
	diff "$S/$1/$2" "/tmp/render.$2" | head -n 6
}

# A "lines" file (or its head) that shows '?' for a file name or a source
# line: the entry has BTF, so every record has both.
no_unknown_lines() {
	awk -F '\t' '!/^#/ && ($2 ~ /^\?:/ || $3 == "?") { bad++; if (!first) first = $0 }
		END { if (bad) { printf "%d lines with ?: %s\n", bad, first; exit 1 } }' "$1" ||
		problem "$2: '?' where a file name or a source line belongs"
}

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
head -n 12 "$S/$hash/lines" | tee /tmp/lines.head
no_unknown_lines /tmp/lines.head "head $S/$hash/lines"
no_unknown_lines "$S/$hash/lines" "$S/$hash/lines"
for f in info functions lines; do
	same_as_render "$hash" "$f"
done
[ "$status" = 0 ] && echo "(info, functions and lines are byte for byte what 'bpfstash render' makes of the binary files)"
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
	grep -E '^# Overhead|_churn' | head -n 16 | tee /tmp/report.head
# perf writes "??:0" (or the bare address) for a sample it has no source line for.
grep -q '_churn.*churn\.bpf\.c:[0-9]' /tmp/report.head ||
	problem "perf report gives no source line of churn.bpf.c"
grep '_churn' /tmp/report.head | grep -q '??' &&
	problem "perf report shows '??' for a sample in the unloaded program"
say "perf annotate: its hottest function, disassembly with the C source"
"$perf" annotate -i /tmp/demo.data --stdio -d "$S/$hash" 2> /dev/null | head -n 40
say "the build-id cache (perf record put the entry there: it resolves on any machine)"
ls -l "$HOME/.debug/.build-id/$(echo "$hash" | cut -c1-2)/"

# The bpfstash CLI on the unloaded program, and bpfstash-gc.
gc=$top/build/bpfstash-gc/bpfstash-gc
short=$(echo "$hash" | cut -c1-8)
say "bpfstash ls; bpfstash resolve $short+0x20 (an offset into the unloaded program's image)"
"$cli" ls
"$cli" resolve "$short+0x20" | tee /tmp/resolve.out
awk -F '\t' '{ if ($5 !~ /churn\.bpf\.c:[0-9]+:[0-9]+$/ || $6 == "") exit 1 }' /tmp/resolve.out ||
	problem "bpfstash resolve gives no file:line:col and source line"
say "bpfstash verify: every entry's name is the hash of its content"
"$cli" verify
say "bpfstash-gc --dry-run --max-entries 1: what would go (never a loaded program's entry)"
"$gc" --dry-run --max-entries 1
say "bpfstash-gc --max-entries 1 --archive /tmp/archive: archived first, then removed"
"$gc" --max-entries 1 --archive /tmp/archive
find /tmp/archive -type f | head -n 5
ls $S
if [ "$status" != 0 ]; then
	printf '\n\033[1;31mdemo: FAILED (see the problems above)\033[0m\n'
	exit 1
fi
