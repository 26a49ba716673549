#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "perf_inject": bpfstash inject, for perfs without bpfstash
# (the unpatched 6.12 perf built from the same tree, build/perf-base/perf,
# and Debian 12's perf 6.1, /usr/bin/perf), on BPF programs that live for a
# fraction of a second and are gone before the report.
#
#   resolution     perf record -a -k boottime by each perf while bpf_churn
#                  loads, runs hot and closes its programs; bpfstash inject;
#                  perf script of the injected file: >= 99% of the samples
#                  in those programs have the right function and source
#                  line, judged by perf_truth against the stash (the same
#                  judge as the perf suite's); the recording itself, before
#                  inject, side by side; and the addresses the JIT gave to
#                  more than one program in the recording (their samples are
#                  judged like the others);
#   annotate       perf annotate (6.12) of the hottest of those functions
#                  disassembles it from the injected ELF file, with its
#                  samples;
#   default_clock  the same with perf record's own clock (no -k): programs
#                  are told apart by their PERF_RECORD_BPF_EVENT ids, not
#                  by time; >= 99% of the samples in them have a line of
#                  churn.bpf.c, and inject found every one of the
#                  workload's functions;
#   before_start   a program loaded before perf record started and hot
#                  while it runs (perf synthesizes its KSYMBOL and
#                  BPF_EVENT at the start), closed after the recording:
#                  >= 99% of its samples with function and line, by
#                  perf_truth, with each perf;
#   images         fentry programs on a kernel function and their BPF
#                  trampoline, an image, found by name, address and time:
#                  every trampoline sample in its injected entry;
#   pipe           perf record -o - | bpfstash inject | perf script;
#   passthrough    a recording with no BPF function in it comes out
#                  byte-identical; in one with BPF functions, the samples
#                  outside BPF are what perf script printed before;
#   archive        the entries removed by bpfstash-gc --archive are found
#                  in the archive (inject --archive), as before;
#   move_prepare   perf archive of the injected file, for the suite perf_move
#                  (a second boot with no stash: the unpatched perf resolves
#                  the samples from the archive alone);
#   bad_input      truncated, oversized and garbage perf.data files give a
#                  clear error, exit 1, and leave no output file; -o the
#                  input itself replaces it only once the injection is whole.
#
# Environment: PERF_PROGRAMS (100) and PERF_MS (25, per program).
set -u
top=${BPFSTASH_TOP:?}
tests=${BPFSTASH_TESTS:-$top/build/tests}
bin=$(dirname "$tests")
base=$bin/perf-base/perf
debian=/usr/bin/perf
churn=$tests/perf/bpf_churn
truth=$tests/perf/perf_truth
bpfstash=$bin/bpfstash/bpfstash
gc=$bin/bpfstash-gc/bpfstash-gc
S=/sys/fs/bpfstash
N=${PERF_PROGRAMS:-100}
MS=${PERF_MS:-25}
rc=0

pass() { echo "PASS perf_inject.$1"; }
fail() { echo "FAIL perf_inject.$1: $2"; rc=1; }
skip() { echo "SKIP perf_inject.$1: $2"; }
note() { echo "  perf_inject.$1: $2"; }
die() { fail "$1" "$2"; exit 1; }

work=$(mktemp -d /tmp/perf_inject.XXXXXX) || die setup "mktemp"
trap 'cd /; rm -rf $work' EXIT
cd "$work" || die setup "cd $work"
# The build-id cache both perfs and inject use; addr2line's timeout as in
# the perf suite (TCG can be slow to start it).
export PERF_BUILDID_DIR=$work/debug
printf '[core]\n\taddr2line-timeout = 60000\n[buildid]\n\tdir = %s\n' "$PERF_BUILDID_DIR" > perfconfig
export PERF_CONFIG=$work/perfconfig
for t in "$base" "$churn" "$truth" "$bpfstash" "$gc"; do
	[ -x "$t" ] || die setup "$t is not built (make perf-base tools tests)"
done
grep -q " $S bpfstash " /proc/mounts || mount -t bpfstash none $S || die setup "mount -t bpfstash"
perfs="$base"
if [ -x "$debian" ]; then
	perfs="$perfs $debian"
else
	note setup "$debian is missing (linux-perf): Debian's perf not tried"
fi

field() { awk -v f="$2" '$1 == "samples" { print $f }' "$1" | tr -d '%'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
script() { "$1" script -F time,ip,sym,dso,srcline --ns -i "$2" > "$3" 2> "$3.err"; }
# Samples in the workload's programs with a source line of churn.bpf.c, of
# all samples in them: "N M".
lines_of() {
	awk '/^ *[0-9]+\.[0-9]+: / { if (bpf) n++; bpf = ($3 ~ /^bpf_prog_[0-9a-f]+_churn/); next }
	     bpf { n++; if ($1 ~ /^churn\.bpf\.c:[0-9]+$/) l++; bpf = 0 }
	     END { if (bpf) n++; printf "%d %d\n", l, n }' "$1"
}

# 1. Recorded by each perf with -k boottime, judged against the stash.
ok=1
for p in $perfs; do
	v=$("$p" --version | awk '{ print $3 }')
	name=$(basename "$(dirname "$p")")
	[ "$p" = "$debian" ] && name=debian
	if ! "$p" record -a -e cpu-clock -F 1000 -k boottime -o "$name.data" -- \
		"$churn" -n "$N" -m "$MS" -l "$name.log" > "$name.record" 2>&1; then
		fail resolution "perf $v record failed: $(tail -c 300 "$name.record")"
		ok=0
		continue
	fi
	script "$p" "$name.data" "$name.before"
	"$truth" "$name.log" "$name.before" > "$name.before.truth" 2> /dev/null
	t0=$(date +%s.%N)
	if ! "$bpfstash" inject -j -i "$name.data" -o "$name.inj" > "$name.json" 2> "$name.inject.err"; then
		fail resolution "inject of perf $v's recording: $(tail -c 300 "$name.inject.err")"
		ok=0
		continue
	fi
	t1=$(date +%s.%N)
	script "$p" "$name.inj" "$name.after"
	"$truth" "$name.log" "$name.after" > "$name.after.truth" 2> "$name.misses"
	n=$(field "$name.after.truth" 2)
	pl=$(field "$name.after.truth" 8)
	# Addresses the JIT gave to several of the workload's programs.
	reused=$("$p" script --show-mmap-events -i "$name.inj" 2> /dev/null |
		sed -nE 's/.*PERF_RECORD_MMAP2.*\[0x([0-9a-f]+)\(.*\[bpfstash_([0-9a-f]+)_[0-9]+\].*/\1 \2/p' |
		sort -u | awk '{ c[$1]++ } END { for (a in c) if (c[a] > 1) n++; print n + 0 }')
	note resolution "perf $v: $N programs; before inject $(field "$name.before.truth" 7) of $(field "$name.before.truth" 2) samples in them had function and line ($(field "$name.before.truth" 8)%); after: $(field "$name.after.truth" 7) of $n ($pl%), function alone $(field "$name.after.truth" 5)%"
	grep -m 2 'in no stash' "$name.inject.err" | sed "s/^/  perf_inject.resolution: perf $v: /"
	note resolution "perf $v: inject $(jq -r '"\(.bytes_in) -> \(.bytes_out) bytes, \(.injected) of \(.ksymbols) functions injected (\(.functions) distinct), \(.not_found) in no stash, \(.ambiguous) ambiguous, \(.reloaded) by the entry of a later load of the same code, \(.elsewhere) in no stash at their address, by time: \(.by_time), \(.elf_written) ELF files"' "$name.json") in $(echo "$t1 - $t0" | bc) s; $reused addresses held by more than one program"
	if [ "${n:-0}" -lt 100 ]; then
		fail resolution "perf $v: only ${n:-0} samples in the programs: too few to judge"
		ok=0
	elif ! ge "$pl" 99; then
		fail resolution "perf $v: $pl% < 99%: $(head -n 3 "$name.misses" | tr '\n' ' ')"
		mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf_inject"
		cp "$name.log" "$name.after" "$name.misses" "$name.inject.err" "${BPFSTASH_RESULTS:-/tmp}/perf_inject/" 2> /dev/null
		ok=0
	elif [ "$reused" -lt 1 ]; then
		fail resolution "perf $v: no address was reused by two programs: the case is not tested"
		ok=0
	fi
done
[ $ok = 1 ] && pass resolution

# perf annotate of the function with the most samples, its program gone.
sym=$(awk '/^ *[0-9]+\.[0-9]+: / && $3 ~ /^bpf_prog_[0-9a-f]+_churn/ { sub(/\+0x[0-9a-f]+$/, "", $3); print $3 }' perf-base.after 2> /dev/null |
	sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
if [ -z "$sym" ]; then
	fail annotate "no sample in the workload's programs"
else
	"$base" annotate --stdio -i perf-base.inj -s "$sym" > annotate.txt 2> annotate.err
	ast=$?
	insns=$(grep -cE '^ +[0-9.]+ : +[0-9a-f]+: +[a-z]' annotate.txt)
	if [ $ast -eq 0 ] && [ "$insns" -ge 10 ] && grep -q "Disassembly of \[bpfstash_" annotate.txt; then
		note annotate "$sym: $insns instructions, with their share of the samples, from the injected ELF file"
		pass annotate
	else
		fail annotate "exit $ast, $insns instructions: $(head -c 300 annotate.err)"
	fi
fi

# For another machine: perf archive of the injected file, and what perf
# script printed of the samples in BPF programs; the suite perf_move (a
# second boot, no stash) unpacks it into an empty build-id cache and
# compares.
mv_dir=${BPFSTASH_RESULTS:-/tmp}/perf-move-inject
rm -rf "$mv_dir"
if [ -s perf-base.inj ] && mkdir -p "$mv_dir" &&
	PERF_EXEC_PATH=$(dirname "$base") "$base" archive perf-base.inj > archive.out 2>&1 &&
	[ -s perf-base.inj.tar.bz2 ] &&
	cp perf-base.inj perf-base.inj.tar.bz2 "$mv_dir/"; then
	awk '/^ *[0-9]+\.[0-9]+: / { bpf = ($3 ~ /^bpf_prog_[0-9a-f]+_churn/); if (bpf) print; next }
	     bpf { print; bpf = 0 }' perf-base.after > "$mv_dir/expected"
	note move_prepare "perf archive of the injected file: $(du -k perf-base.inj.tar.bz2 | cut -f1) KiB, $(tar -tjf perf-base.inj.tar.bz2 | grep -c '/elf$') ELF files; $(grep -c '^ *[0-9]*\.[0-9]*:' "$mv_dir/expected") samples to compare"
	pass move_prepare
else
	fail move_prepare "perf archive: $(tail -n 3 archive.out 2> /dev/null | tr '\n' ' ')"
fi

# 2. perf record's own clock: the programs by their ids.
if "$base" record -a -e cpu-clock -F 1000 -o clock.data -- \
	"$churn" -n 20 -m "$MS" -l clock.log > clock.record 2>&1 &&
	"$bpfstash" inject -v -j -i clock.data -o clock.inj > clock.json 2> clock.err; then
	script "$base" clock.inj clock.after
	set -- $(lines_of clock.after)
	l=$1 n=$2
	# Every function of the workload's programs injected (-v names each
	# one left alone).
	note default_clock "$l of $n samples in the programs with a line of churn.bpf.c; $(jq -r '"\(.injected) of \(.ksymbols) functions injected (\(.reloaded) by the entry of a later load of the same code), \(.not_found) in no stash, \(.ambiguous) ambiguous, \(.elsewhere) in no stash at their address, by time: \(.by_time)"' clock.json)"
	if [ "$n" -lt 20 ]; then
		fail default_clock "only $n samples in the programs"
	elif grep -q '_churn' clock.err; then
		fail default_clock "functions of the workload not injected: $(grep -m 3 '_churn' clock.err | tr '\n' ' ')"
	elif [ "$(jq .by_time clock.json)" != false ]; then
		fail default_clock "inject used times of a recording without -k boottime"
	elif ! ge "$((l * 100))" "$((n * 99))"; then
		fail default_clock "$l of $n samples with a source line: $(awk '/^ *[0-9]+\.[0-9]+: / { bpf = ($3 ~ /^bpf_prog_[0-9a-f]+_churn/); s = $0; next }
			bpf && $1 !~ /^churn\.bpf\.c:/ { print s " / " $0; bpf = 0 }' clock.after | head -n 2 | tr '\n' ' ')"
	else
		pass default_clock
	fi
else
	fail default_clock "record or inject failed: $(tail -c 300 clock.record clock.err)"
fi

# A program loaded before the recording started: perf record synthesizes
# its KSYMBOL and BPF_EVENT when it starts, with no time (0); inject finds
# it by the program's id.  bpf_churn -m 0 keeps it hot until SIGTERM, and
# -r says when it is loaded and running.  Perf's synthesis stops at the
# first program whose information it cannot read, so the recording is
# checked for the program's KSYMBOL before inject is judged.
ok=1
for p in $perfs; do
	v=$("$p" --version | awk '{ print $3 }')
	rm -f early.ready
	"$churn" -n 1 -m 0 -r early.ready -l early.log > early.out 2>&1 &
	cpid=$!
	for i in $(seq 300); do
		[ -e early.ready ] && break
		kill -0 $cpid 2> /dev/null || break
		sleep 0.2
	done
	if [ ! -e early.ready ]; then
		kill $cpid 2> /dev/null
		wait $cpid
		fail before_start "bpf_churn did not start its program: $(tail -c 200 early.out)"
		ok=0
		continue
	fi
	"$p" record -a -e cpu-clock -F 1000 -k boottime -o early.data -- sleep 2 > early.record 2>&1
	rst=$?
	kill -TERM $cpid
	wait $cpid
	cst=$?
	id=$(awk '{ print $4 }' early.log)
	ks=$("$p" script -D -i early.data 2> /dev/null | grep -c 'PERF_RECORD_KSYMBOL.*_churn')
	if [ $rst -ne 0 ] || [ $cst -ne 0 ]; then
		fail before_start "perf $v record exited $rst, bpf_churn $cst: $(tail -c 200 early.record) $(tail -c 200 early.out)"
		ok=0
		continue
	fi
	if [ "$ks" -lt 1 ]; then
		fail before_start "perf $v synthesized no KSYMBOL for program $id, loaded before it started: $(tail -c 300 early.record)"
		ok=0
		continue
	fi
	if ! "$bpfstash" inject -j -i early.data -o early.inj > early.json 2> early.err; then
		fail before_start "perf $v: inject: $(tail -c 300 early.err)"
		ok=0
		continue
	fi
	script "$p" early.inj early.after
	"$truth" early.log early.after > early.truth 2> early.misses
	n=$(field early.truth 2)
	note before_start "perf $v: program $id loaded before the recording, $ks functions synthesized: $(field early.truth 7) of $n samples in it with function and line ($(field early.truth 8)%); $(jq -r '"\(.injected) of \(.ksymbols) functions injected"' early.json)"
	if [ "${n:-0}" -lt 20 ]; then
		fail before_start "perf $v: only ${n:-0} samples in the program in 2 s"
		ok=0
	elif ! ge "$(field early.truth 8)" 99; then
		fail before_start "perf $v: $(cat early.truth): $(head -n 3 early.misses | tr '\n' ' ')"
		ok=0
	fi
done
[ $ok = 1 ] && pass before_start

# Images: the BPF trampoline of fentry programs on a kernel function, found
# by name, address and time (there is no BPF_EVENT for an image), and the
# programs themselves.  The trampoline gets about 1% of the samples: a
# longer run if the first had none there.
kfunc=$tests/perf/kfunc_hot
tramp_ok=0
for ms in 600 2000; do
	"$base" record -a -e cpu-clock -F 1000 -k boottime -o kfunc.data -- \
		"$kfunc" "$top/build/tests/progs/kinds.bpf.o" -n 3 -m $ms > kfunc.log 2> kfunc.record
	"$bpfstash" inject -j -i kfunc.data -o kfunc.inj > kfunc.json 2> kfunc.err || break
	"$base" script -F ip,sym,dso,srcline -i kfunc.inj > kfunc.script 2> /dev/null
	awk '/^ *[0-9a-f]+ / && $2 ~ /^bpf_trampoline_[0-9]+$/ { print $2, $3 }' kfunc.script > kfunc.tramp
	[ -s kfunc.tramp ] && break
done
tn=$(wc -l < kfunc.tramp)
ti=$(grep -c '(\[bpfstash_[0-9a-f]*_0\])' kfunc.tramp)
set -- $(awk '/^ *[0-9a-f]+ / { bpf = ($2 ~ /^bpf_prog_[0-9a-f]+_kinds_(fentry|mix)$/); n += bpf; next }
	bpf { l += ($0 ~ /kinds\.bpf\.c:[0-9]+/); bpf = 0 } END { print n + 0, l + 0 }' kfunc.script)
kn=$1 kl=$2
grep -m 3 'bpf_trampoline' kfunc.err | sed 's/^/  perf_inject.images: /'
note images "fentry programs: $kl of $kn samples with a line of kinds.bpf.c; their trampoline: $ti of $tn samples in its injected entry ($(jq -r '"\(.injected) of \(.ksymbols) functions injected, by time: \(.by_time)"' kfunc.json 2> /dev/null))"
if [ ! -s kfunc.json ]; then
	fail images "inject: $(tail -c 300 kfunc.err)"
elif [ "$tn" -lt 1 ]; then
	fail images "no sample in a bpf_trampoline_* in two recordings: $(tail -c 200 kfunc.record)"
elif [ "$ti" -ne "$tn" ] || [ "$kn" -lt 30 ] || [ $((100 * kl)) -lt $((95 * kn)) ]; then
	fail images "trampoline $ti of $tn injected, programs $kl of $kn with a line: $(head -n 2 kfunc.tramp | tr '\n' ' ')"
else
	pass images
fi

# 3. A pipe, end to end.
"$base" record -q -a -e cpu-clock -F 1000 -k boottime -o - -- "$churn" -n 20 -m "$MS" -l pipe.log 2> pipe.record |
	"$bpfstash" inject > pipe.inj 2> pipe.err
st=$?
script "$base" pipe.inj pipe.after
"$truth" pipe.log pipe.after > pipe.truth 2> /dev/null
if [ $st -ne 0 ]; then
	fail pipe "inject exited $st: $(tail -c 300 pipe.err)"
elif ! ge "$(field pipe.truth 8)" 99 || [ "$(field pipe.truth 2)" -lt 20 ]; then
	fail pipe "$(cat pipe.truth): $(tail -c 200 pipe.after.err) $(tr '\n' ' ' < pipe.err)"
	grep -m 3 -A1 '_churn' pipe.after | sed 's/^/  perf_inject.pipe: /'
	mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf_inject"
	cp pipe.log pipe.after pipe.inj pipe.err "${BPFSTASH_RESULTS:-/tmp}/perf_inject/" 2> /dev/null
else
	note pipe "$(grep -v ': left as it is\|further warnings' pipe.err | tr '\n' ' ' | sed 's/bpfstash inject: //g')"
	note pipe "$(field pipe.truth 7) of $(field pipe.truth 2) samples with function and line ($(field pipe.truth 8)%)"
	pass pipe
fi

# 4. Nothing to inject: the same bytes; samples outside BPF: the same lines.
"$base" record -q -e cpu-clock --no-bpf-event -o plain.data -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2> /dev/null
"$bpfstash" inject -i plain.data -o plain.inj 2> plain.err
st=$?
name=perf-base
[ -s "$name.data" ] || name=debian
# A sample's lines (its line, then its srcline): those of BPF samples left out.
outside() { awk '/^ *[0-9]+\.[0-9]+: / { bpf = ($3 ~ /^bpf_prog_[0-9a-f]+/) } !bpf' "$1"; }
outside "$name.before" > outside.before
outside "$name.after" > outside.after
if [ $st -ne 0 ] || ! cmp -s plain.data plain.inj; then
	fail passthrough "a recording without BPF functions changed (exit $st): $(cmp plain.data plain.inj 2>&1 | head -c 200)"
elif ! cmp -s outside.before outside.after; then
	fail passthrough "samples outside BPF differ after inject: $(diff outside.before outside.after | head -n 4 | tr '\n' ' ')"
else
	note passthrough "$(stat -c %s plain.data) bytes unchanged; $(grep -c '^ *[0-9]*\.[0-9]*:' outside.before) samples outside BPF printed the same"
	pass passthrough
fi

# 5. The entries archived and removed by bpfstash-gc: found in the archive.
A=$work/archive
if [ -s perf-base.data ] && "$gc" --max-entries 1 --archive "$A" > gc.out 2>&1; then
	left=$(ls $S | grep -c '^[0-9a-f]\{40\}$')
	rm -rf "$PERF_BUILDID_DIR"
	"$bpfstash" inject -j --archive "$A" -i perf-base.data -o archived.inj > archived.json 2> archived.err
	st=$?
	script "$base" archived.inj archived.after
	set -- $(lines_of archived.after)
	l=$1 n=$2
	note archive "$left entries left in the stash; $(jq -r '"\(.injected) of \(.ksymbols) functions injected, \(.not_found) in no stash"' archived.json 2> /dev/null); $l of $n samples in the programs with a line of churn.bpf.c"
	if [ $st -ne 0 ]; then
		fail archive "inject --archive exited $st: $(tail -c 300 archived.err)"
	elif [ "$n" -lt 50 ] || ! ge "$((l * 100))" "$((n * 99))"; then
		fail archive "$l of $n samples with a line"
	else
		pass archive
	fi
else
	fail archive "bpfstash-gc --archive failed: $(tail -c 300 gc.out)"
fi

# 6. Bad input: a clear error, exit 1, no output left behind.
bad=""
src=perf-base.data
[ -s "$src" ] || src=plain.data
size=$(stat -c %s "$src")
head -c 100 "$src" > bad.short
head -c $((size / 2)) "$src" > bad.half
head -c 4096 /dev/urandom > bad.random
cp "$src" bad.datasize && printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of=bad.datasize bs=1 seek=48 conv=notrunc 2> /dev/null
cp "$src" bad.recsize && printf '\x04\x00' | dd of=bad.recsize bs=1 seek=$(($(od -An -t u8 -j 40 -N 8 "$src") + 6)) conv=notrunc 2> /dev/null
: > bad.empty
for f in bad.short bad.half bad.random bad.datasize bad.recsize bad.empty; do
	rm -f "$f.out"
	"$bpfstash" inject -i "$f" -o "$f.out" > /dev/null 2> "$f.err"
	st=$?
	note bad_input "$f: exit $st: $(head -n 1 "$f.err")"
	if [ $st -ne 1 ] || ! grep -q '^Error: ' "$f.err" || [ -e "$f.out" ]; then
		bad="$bad $f (exit $st$([ -e "$f.out" ] && echo ', output left'))"
	fi
done
# In place: the output is written beside and renamed over the input.
cp "$src" inplace.data
if ! "$bpfstash" inject -i inplace.data -o inplace.data 2> inplace.err ||
	! "$bpfstash" inject -i "$src" -o inplace.ref 2> /dev/null || ! cmp -s inplace.data inplace.ref; then
	bad="$bad in-place($(head -c 200 inplace.err))"
fi
[ -z "$bad" ] && pass bad_input || fail bad_input "$bad"

exit $rc
