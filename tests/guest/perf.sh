#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "perf": perf with the bpfstash series (build/perf/perf)
# against the unpatched 6.12 perf (build/perf-base/perf), on BPF programs
# that live for a fraction of a second (issue 7, "It must show" 1, 2, 4,
# and the first half of 3).
#
#   resolution       bpf_churn loads tests/progs/churn.bpf.c (five functions,
#                    BTF, line info), runs it hot with BPF_PROG_TEST_RUN,
#                    closes it, 200 times, under perf record -a -e
#                    cpu-clock; of the samples whose address lies in those
#                    programs, >= 99% resolve to the right function and
#                    source line, judged by perf_truth against each
#                    program's line table in the stash; the same workload
#                    under the unpatched perf, side by side;
#   records          perf report --stats counts the MMAP3 records, perf script
#                    -D and --show-mmap-events print them, perf inject passes
#                    them on;
#   old_perf         the unpatched 6.12 perf and Debian's perf 6.1 read the
#                    same perf.data without an error and count the same
#                    samples and period (the records are in its header, not
#                    its data section), or, if one fails, fails the same
#                    way on that file with the bpfstash feature cleared
#                    (then the failure is that perf's own: said in a note);
#                    a recording into a pipe keeps them in the stream, for
#                    the patched perf;
#   buildid_cache    every entry a sample hit is in ~/.debug, as an ELF file
#                    whose build-id is the entry's hash;
#   annotate_all     perf annotate of the whole recording exits 0
#   annotate         perf annotate on one of those unloaded programs shows
#                    its disassembly with its C source lines;
#   malformed        corrupted MMAP3 records are reported and skipped,
#                    everything else still resolves;
#   missing          MMAP3 hashes found in no store are reported, their
#                    samples keep their function names, the rest resolves;
#   kernel_function  an fentry program on a kernel function, run hot and
#                    unloaded, resolves to its functions and source lines;
#   trampoline       the BPF trampoline it ran through, gone too, resolves
#                    to its bpfstash entry, which perf annotate disassembles;
#   tracepoint       perf record -e bpfstash:bpfstash_store and perf script
#                    show one record per load, with its program's id and
#                    the entry MMAP3 named;
#   refused          programs the stash refuses (full) fall back to KSYMBOL;
#   unmounted        without a stash perf asks for no MMAP3 and works as
#                    before;
#   move_prepare     perf archive and a bpfstash-gc --archive directory, for
#                    the suite perf_move, which resolves them in a second
#                    boot with no stash (SUITES.bench).
#
# Environment: PERF_PROGRAMS (200) and PERF_MS (50, per program).
# bash, not sh: the address arithmetic of the checks is 64-bit.
set -u
top=${BPFSTASH_TOP:?}
# This architecture's programs: build/ on x86-64, build/arm64/ beside
# build/arm64/tests (scripts/arm64-userland.sh, scripts/arm64-perf.sh).
tests=${BPFSTASH_TESTS:-$top/build/tests}
bin=$(dirname "$tests")
perf=$bin/perf/perf
base=$bin/perf-base/perf
churn=$tests/perf/bpf_churn
truth=$tests/perf/perf_truth
mangle=$tests/perf/perfdata_mangle
kfunc=$tests/perf/kfunc_hot
bpfstash=$bin/bpfstash/bpfstash
gc=$bin/bpfstash-gc/bpfstash-gc
src=$top/tests/progs/churn.bpf.c
S=/sys/fs/bpfstash
N=${PERF_PROGRAMS:-200}
MS=${PERF_MS:-50}
move=${BPFSTASH_RESULTS:-/tmp}/perf-move
rc=0

pass() { echo "PASS perf.$1"; }
fail() { echo "FAIL perf.$1: $2"; rc=1; }
skip() { echo "SKIP perf.$1: $2"; }
note() { echo "  perf.$1: $2"; }
die() { fail "$1" "$2"; exit 1; }

work=$(mktemp -d /tmp/perf.XXXXXX) || die setup "mktemp"
trap 'cd /; rm -rf $work' EXIT
cd "$work" || die setup "cd $work"
# perf waits 1 s for addr2line's answer (core.addr2line-timeout), then
# leaves the sample without its source line.  Under TCG, starting
# addr2line on a file can take longer than that (arm64's guest: about 1% of
# the samples); 60 s here, for every perf of the suite (6.1 has no
# timeout, and ignores the key).
printf '[core]\n\taddr2line-timeout = 60000\n' > perfconfig
export PERF_CONFIG=$work/perfconfig
for t in "$perf" "$base" "$churn" "$truth" "$mangle" "$kfunc" "$bpfstash"; do
	[ -x "$t" ] || die setup "$t is not built (make perf perf-base tools tests)"
done
grep -q " $S bpfstash " /proc/mounts || mount -t bpfstash none $S || die setup "mount -t bpfstash"

# "samples N function F PF% function+line L PL%": $2 N, $4 F, $5 PF, $7 L,
# $8 PL; the line is "samples", or "split" for the programs of --split.
field() { awk -v f="$2" -v w="$3" '$1 == w { print $f }' "$1" | tr -d '%'; }
# $1 >= $2, as decimals
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# perf record -a of the workload, and perf script of it: $1 perf, $2 name.
record() {
	"$1" record -a -e cpu-clock -F 1000 -k boottime -o "$2.data" -- \
		"$churn" -n "$3" -m "$MS" -l "$2.log" > "$2.record" 2>&1 &&
	"$1" script -F time,ip,sym,dso,srcline --ns -i "$2.data" > "$2.script" 2> "$2.err"
}

# The samples in BPF programs (bpf_prog_<tag>..., not the kernel's
# bpf_prog_*() functions) of perf script -F time,ip,sym,srcline, each with
# its srcline, if any.
bpf_samples() {
	awk -v tag='[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' '
		/^ *[0-9]+\.[0-9]+: / { bpf = $3 ~ ("^bpf_prog_" tag); if (bpf) print; next }
		bpf { print; bpf = 0 }' "$1"
}

# 1. The race closed, side by side.
t0=$(date +%s)
if ! record "$perf" patched "$N"; then
	die resolution "patched perf record/script failed: $(tail -n 3 patched.record patched.err | tr '\n' ' ')"
fi
"$truth" patched.log patched.script > patched.truth 2> patched.misses
if ! record "$base" base "$N"; then
	fail resolution "unpatched perf record/script failed: $(tail -n 3 base.record base.err | tr '\n' ' ')"
fi
"$truth" base.log base.script > base.truth 2> base.misses
t1=$(date +%s)
n=$(field patched.truth 2 samples)
pl=$(field patched.truth 8 samples)
note resolution "$N programs of $MS ms each, recorded twice in $((t1 - t0)) s; samples in them resolved to function and source line:"
note resolution "  patched perf + bpfstash: $(field patched.truth 7 samples) of $n ($pl%), function alone $(field patched.truth 5 samples)%"
note resolution "  unpatched 6.12 perf:     $(field base.truth 7 samples) of $(field base.truth 2 samples) ($(field base.truth 8 samples)%), function alone $(field base.truth 5 samples)%"
refused=$(grep -c ' hash - ' patched.log)
if [ "$(grep -c '^prog ' patched.log)" -ne "$N" ] || [ "$refused" -ne 0 ]; then
	fail resolution "$(grep -c '^prog ' patched.log) of $N programs ran, $refused refused by the stash"
elif [ "${n:-0}" -lt 100 ]; then
	fail resolution "only ${n:-0} samples in the programs: too few to judge"
elif ! ge "$pl" 99; then
	fail resolution "$pl% < 99%: $(head -n 3 patched.misses | tr '\n' ' ')"
	# What perf_truth judged, into the results, to look at on the host.
	mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf"
	cp patched.log patched.script patched.err patched.misses "${BPFSTASH_RESULTS:-/tmp}/perf/"
else
	pass resolution
fi

# The records themselves: counted, dumped, shown, and passed on by inject.
stats=$("$perf" report --stats -i patched.data 2> /dev/null | awk '/MMAP3 events:/ { print $3 }')
dumped=$("$perf" script -D -i patched.data 2> /dev/null | grep -c "PERF_RECORD_MMAP3 addr 0x[0-9a-f]* len .* stashed hash [0-9a-f]\{40\} bpf_prog_")
shown=$("$perf" script --show-mmap-events -i patched.data 2> /dev/null | grep -c "PERF_RECORD_MMAP3.*_churn")
"$perf" inject -i patched.data -o injected.data 2> inject.err
injected=$("$perf" report --stats -i injected.data 2> /dev/null | awk '/MMAP3 events:/ { print $3 }')
if [ "${stats:-0}" -ge $((5 * N)) ] && [ "$dumped" -eq "$stats" ] && [ "$shown" -eq $((5 * N)) ] &&
   [ "${injected:-0}" -eq "$stats" ]; then
	note records "$stats MMAP3 records ($shown for the workload's 5 x $N functions): dumped by -D, shown by --show-mmap-events, passed on by perf inject"
	pass records
else
	# What perf record said of the records (lost, malformed), and of the
	# workload's records those present: which program's function is missing.
	fail records "--stats ${stats:-0}, -D $dumped, --show-mmap-events $shown, after inject ${injected:-0} $(head -c 200 inject.err) record: $(grep -i 'mmap3\|lost' patched.record | head -c 300 | tr '\n' ' ')"
	"$perf" script --show-mmap-events -i patched.data 2> /dev/null | grep "PERF_RECORD_MMAP3.*_churn" |
		sed 's/.*\(bpf_prog_[0-9a-f]*_[a-z_]*\).*/\1/' | sort | uniq -c | sort -n | head -n 3 |
		sed 's/^/  perf.records: fewest records: /'
fi

# perf versions that do not know MMAP3: the file's records are in a header
# feature they pass over.  Totals: samples and period, from perf script.
totals() { "$1" script -F period -i "$2" 2> "$3" | awk '{ n++; p += $1 } END { printf "%d %.0f\n", n, p }'; }
want=$(totals "$perf" patched.data old.patched.err)
old=""
debian=/usr/bin/perf
for p in "$base" "$debian"; do
	if [ ! -x "$p" ]; then
		old="$old; $p is missing (linux-perf, scripts/deps.sh)"
		continue
	fi
	got=$(totals "$p" patched.data old.err)
	"$p" report --stdio --sort comm -i patched.data > /dev/null 2>> old.err
	st=$?
	v=$("$p" --version | awk '{ print $3 }')
	if [ $st -ne 0 ] || grep -q "failed to process" old.err || [ "$got" != "$want" ]; then
		# The same file without bpfstash's feature (its bit cleared), as
		# a perf without bpfstash would have written that stream: if
		# this perf fails on it the same way, the failure is its own
		# (perf 6.12 can crash on a churn of same-named programs: "Map
		# missing from maps"), not bpfstash's; said, and not a failure.
		"$mangle" strip patched.data stripped.data 2> /dev/null
		sgot=$(totals "$p" stripped.data stripped.err)
		"$p" report --stdio --sort comm -i stripped.data > /dev/null 2>> stripped.err
		sst=$?
		if [ -s stripped.data ] && [ "$sst" = "$st" ] && [ "$sgot" = "$got" ]; then
			note old_perf "perf $v ($p) fails on it: exit $st, totals '$got' for '$want' ($(head -c 80 old.err | tr '\n' ' ')), and the same on it without the bpfstash feature: exit $sst, totals '$sgot'; this perf's own failure on the stream"
			mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf/old_perf" &&
				cp patched.data old.err stripped.err "${BPFSTASH_RESULTS:-/tmp}/perf/old_perf/" 2> /dev/null
		else
			old="$old; perf $v: exit $st, totals '$got' for '$want': $(head -c 200 old.err); without the bpfstash feature: exit $sst, totals '$sgot'"
		fi
	else
		note old_perf "perf $v ($p) reads it: samples and period $got, as the patched perf"
	fi
done
piped=$("$perf" record -q -a -e cpu-clock -F 1000 -k boottime -o - -- \
	"$churn" -n 20 -m 20 -l pipe.log 2> pipe.err | "$perf" report --stats -i - 2>> pipe.err |
	awk '/MMAP3 events:/ { print $3 }')
if [ "${want%% *}" -lt 100 ]; then
	fail old_perf "only '$want' samples in patched.data"
elif [ -n "$old" ]; then
	fail old_perf "${old#; }"
	# The recording the older perf failed on, to run it again on the host.
	mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf/old_perf" &&
		cp patched.data old.err /proc/kallsyms "${BPFSTASH_RESULTS:-/tmp}/perf/old_perf/" 2> /dev/null
elif [ "${piped:-0}" -lt 100 ]; then
	fail old_perf "a recording into a pipe: ${piped:-0} MMAP3 records for 20 x 5 functions: $(head -c 200 pipe.err)"
else
	note old_perf "into a pipe: $piped MMAP3 records in the stream for 20 x 5 functions"
	pass old_perf
fi

# The entries the samples hit, by the DSOs perf script named.
sed -n 's|.*(/sys/fs/bpfstash/\([0-9a-f]\{40\}\)).*|\1|p' patched.script | sort | uniq -c | sort -rn > hit
nhit=$(wc -l < hit)

# perf record put every entry that was hit into the build-id cache.
bad=""
while read -r _ h; do
	f=$HOME/.debug/.build-id/${h:0:2}/${h:2}/elf
	readelf -n "$f" 2> /dev/null | grep -q "Build ID: $h" || bad="$bad $h"
done < hit
if [ "$nhit" -eq 0 ]; then
	fail buildid_cache "no sample in a bpfstash entry"
elif [ -n "$bad" ]; then
	fail buildid_cache "not in ~/.debug as an ELF with its hash:$bad"
else
	note buildid_cache "$nhit entries hit, each in ~/.debug/.build-id as an ELF file with its hash"
	pass buildid_cache
fi

# 2. Annotate an unloaded program: the one with the most samples.
hash=$(head -n 1 hit | awk '{ print $2 }')
if [ -z "$hash" ]; then
	fail annotate "no entry was hit"
elif [ "$("$bpfstash" -j show "$hash" | jq -r .loaded)" != false ]; then
	fail annotate "$hash is still loaded"
else
	"$perf" annotate --stdio -i patched.data -d "$S/$hash" > annotate.txt 2> annotate.err
	ast=$?
	insns=$(grep -cE '^ +[0-9.]+ : +ffff[0-9a-f]{12}: +[a-z]' annotate.txt)
	# Source lines: the annotation's lines that are lines of churn.bpf.c.
	sed -n 's/^ *: [0-9]* *//p' annotate.txt | sed 's/^[[:space:]]*//' | sort -u > annotate.src
	sed 's/^[[:space:]]*//' "$src" | grep -v '^$' > churn.src
	srcs=$(grep -cxFf churn.src annotate.src)
	funcs=$(grep -c "^ Percent.*Source code & Disassembly" annotate.txt)
	if [ "$ast" != 0 ]; then
		fail annotate "perf annotate exited $ast: $(tail -c 300 annotate.err)"
	elif [ "$insns" -ge 10 ] && [ "$srcs" -ge 3 ]; then
		note annotate "$hash (unloaded): $funcs functions, $insns instructions, $srcs distinct source lines of churn.bpf.c"
		pass annotate
	else
		fail annotate "$insns instructions, $srcs source lines: $(head -c 300 annotate.err)"
	fi
fi
# Every symbol of the recording at once (every program's entry, the
# kernel's, the workload's): it must end well, whatever it can show.
t0=$(date +%s)
"$perf" annotate --stdio -i patched.data > annotate-all.txt 2> annotate-all.err
ast=$?
if [ "$ast" = 0 ]; then
	note annotate_all "$(grep -c "^ Percent.*Source code & Disassembly" annotate-all.txt) functions annotated, exit 0, in $(($(date +%s) - t0)) s"
	pass annotate_all
else
	fail annotate_all "perf annotate of the whole recording exited $ast: $(tail -c 300 annotate-all.err)"
	# PERF_DEBUG=1 (a SUITES word): the backtrace, the recording and
	# ~/.debug into the results, to run perf on the host against them.
	if [ -n "${PERF_DEBUG:-}" ] && command -v gdb > /dev/null; then
		gdb -batch -ex run -ex bt -ex 'info registers' --args "$perf" annotate --stdio \
			-i patched.data > annotate-all.gdb 2>&1
		mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf"
		cp annotate-all.gdb patched.data "${BPFSTASH_RESULTS:-/tmp}/perf/"
		tar -C "$HOME" -cf "${BPFSTASH_RESULTS:-/tmp}/perf/debug.tar" .debug
	fi
fi

# 4. Robustness: malformed records, and hashes no store has.
"$mangle" corrupt patched.data bad.data 10 > bad.hashes 2> bad.mangle
changed=$(sed -n 's/.*: \([0-9]*\) records.*/\1/p' bad.mangle)
"$perf" script -F time,ip,sym,dso,srcline --ns -i bad.data > bad.script 2> bad.err
st=$?
"$perf" report --stdio --sort sym -i bad.data > bad.report 2>&1
rst=$?
"$perf" script -D -i bad.data > bad.dump 2> /dev/null
dumped=$(grep -c "PERF_RECORD_MMAP3 malformed" bad.dump)
reasons=$(sed -n 's/.*PERF_RECORD_MMAP3 malformed (\(.*\)): skipped/\1/p' bad.dump | sort -u | wc -l)
"$truth" --split bad.hashes patched.log bad.script > bad.truth 2> /dev/null
if [ $st -ne 0 ] || [ $rst -ne 0 ]; then
	fail malformed "perf script exit $st, perf report exit $rst: $(head -c 300 bad.err)"
elif [ "${changed:-0}" -eq 0 ] || [ "$dumped" -ne "$changed" ] || [ "$reasons" -ne 4 ]; then
	fail malformed "$changed records corrupted, $dumped reported by -D, $reasons kinds of 4"
elif ! grep -q "malformed PERF_RECORD_MMAP3 records were skipped" bad.err; then
	fail malformed "no warning: $(head -c 300 bad.err)"
elif ! ge "$(field bad.truth 8 samples)" 99 || ! ge "$(field bad.truth 5 split)" 99; then
	fail malformed "the rest: $(cat bad.truth | tr '\n' ' ')"
else
	note malformed "$changed records of $(wc -l < bad.hashes) programs corrupted, 4 ways: all reported and skipped;"
	note malformed "  the other programs $(field bad.truth 8 samples)% function+line, the damaged ones $(field bad.truth 5 split)% function (KSYMBOL)"
	pass malformed
fi

"$mangle" unhash patched.data missing.data 10 > missing.hashes 2> missing.mangle
"$perf" script -F time,ip,sym,dso,srcline --ns -i missing.data > missing.script 2> missing.err
st=$?
"$truth" --split missing.hashes patched.log missing.script > missing.truth 2> /dev/null
# The hashes reported are the flipped ones of the programs damaged.
flipped=$(tr '0-9a-f' 'fedcba9876543210' < missing.hashes)
reported=$(sed -n 's/^bpfstash entry \([0-9a-f]\{40\}\) .*found in no build-id cache, stash or debuginfod server.*/\1/p' missing.err)
stray=$(for h in $reported; do echo "$flipped" | grep -qx "$h" || echo "$h"; done)
if [ $st -ne 0 ]; then
	fail missing "perf script exit $st: $(head -c 300 missing.err)"
elif [ -z "$reported" ] || [ -n "$stray" ] ||
     ! grep -q "BPF programs named by PERF_RECORD_MMAP3 were found in no store" missing.err; then
	fail missing "reported: '$reported', not damaged: '$stray'"
elif ! ge "$(field missing.truth 8 samples)" 99 || ! ge "$(field missing.truth 5 split)" 99 ||
     [ "$(field missing.truth 7 split)" != 0 ]; then
	fail missing "$(cat missing.truth | tr '\n' ' ')"
else
	note missing "$(echo "$reported" | wc -w) unknown hashes reported; their samples $(field missing.truth 5 split)% function, no line; the rest $(field missing.truth 8 samples)%"
	pass missing
fi

# 3, first half: what another machine gets.  perf archive packs the
# build-id cache entries perf.data needs; bpfstash-gc archives the stash's
# entries for debuginfod.  perf_move (second boot, no stash) reads them.
rm -rf "$move"
mkdir -p "$move/archive" || die move_prepare "mkdir $move"
bpf_samples patched.script > "$move/expected"
if PERF_EXEC_PATH=$(dirname "$perf") "$perf" archive patched.data > archive.out 2>&1 &&
   cp patched.data patched.data.tar.bz2 patched.log "$move/" &&
   "$gc" --max-age 1s --archive "$move/archive" > gc.out 2>&1; then
	archived=$(find "$move/archive" -name '*.tar.zst' | wc -l)
	missing_arch=$(while read -r _ h; do [ -f "$move/archive/${h:0:2}/$h.tar.zst" ] || echo "$h"; done < hit)
	if [ ! -s patched.data.tar.bz2 ]; then
		fail move_prepare "perf archive made no patched.data.tar.bz2 (or an empty one): $(tail -n 3 archive.out | tr '\n' ' ')"
	elif [ -z "$missing_arch" ] && [ -s "$move/expected" ]; then
		note move_prepare "perf.data, perf archive ($(du -k patched.data.tar.bz2 | cut -f1) KiB), $archived entries archived by bpfstash-gc"
		pass move_prepare
	else
		fail move_prepare "not archived: $missing_arch"
	fi
else
	fail move_prepare "$(tail -n 3 archive.out gc.out | tr '\n' ' ')"
fi
# A program on a kernel function (fentry on bpf_fentry_test1(), with a CO-RE
# read and a subprogram), run hot and unloaded before perf reports: its
# samples resolve to its functions and source lines.  The kernel's BTF
# is what lets it load at all.
"$perf" record -a -e cpu-clock -F 1000 -o kfunc.data -- \
	"$kfunc" "$top/build/tests/progs/kinds.bpf.o" -n 3 -m 600 > kfunc.log 2> kfunc.record
"$perf" script -F ip,sym,srcline -i kfunc.data > kfunc.script 2> kfunc.err
set -- $(awk -v tag='[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' '
	/^ *[0-9a-f]+ / { bpf = $2 ~ ("^bpf_prog_" tag "_kinds_(fentry|mix)$"); n += bpf; next }
	bpf { l += $0 ~ /kinds\.bpf\.c:[0-9]+/; bpf = 0 }
	END { print n + 0, l + 0 }' kfunc.script)
kn=$1 kl=$2
if [ "$(grep -c '^prog ' kfunc.log)" -ne 3 ]; then
	fail kernel_function "the workload ran $(grep -c '^prog ' kfunc.log) of 3 programs: $(head -c 300 kfunc.record)"
elif [ "$kn" -lt 30 ]; then
	fail kernel_function "only $kn samples in the fentry program: too few to judge"
elif [ $((100 * kl)) -lt $((95 * kn)) ]; then
	fail kernel_function "$kl of $kn samples with a source line: $(grep -A1 _kinds_ kfunc.script | head -n 4 | tr '\n' ' ')"
else
	note kernel_function "$kn samples in kinds_fentry and kinds_mix (3 programs of 600 ms, unloaded), $kl with a kinds.bpf.c line: $(awk '/_kinds_mix/ { getline l; print $2, l; exit }' kfunc.script | tr -s ' ')"
	pass kernel_function
fi

# The trampoline those programs were called through (bpf_trampoline_<key>
# of bpf_fentry_test1()), gone too: its samples are in its bpfstash entry,
# an image's, which perf annotate disassembles.  The unpatched perf only
# has its name, from KSYMBOL.
# The program does most of the work: the trampoline gets about 1% of the
# samples (2 to 8 in 900 ms of workload on x86-64), hence 1.8 s of it; if
# none fell there (arm64 under TCG: fewer), the same workload again, 6 s.
tdata=kfunc.data
"$perf" script -F ip,sym,dso -i kfunc.data > kfunc.dso 2>> kfunc.err
if ! awk '$2 ~ /^bpf_trampoline_[0-9]+$/ { found = 1 } END { exit !found }' kfunc.dso; then
	tdata=kfunc-long.data
	"$perf" record -a -e cpu-clock -F 1000 -o $tdata -- \
		"$kfunc" "$top/build/tests/progs/kinds.bpf.o" -n 3 -m 2000 > kfunc-long.log 2> kfunc-long.record
	"$perf" script -F ip,sym,dso -i $tdata > kfunc.dso 2>> kfunc.err
fi
tramp=$(awk '$2 ~ /^bpf_trampoline_[0-9]+$/ { print $2; exit }' kfunc.dso)
tn=$(awk -v t="$tramp" '$2 == t' kfunc.dso | wc -l)
thash=$(awk -v t="$tramp" '$2 == t { print $3 }' kfunc.dso | sort | uniq -c | sort -rn |
	awk '{ print $2; exit }' | sed -n 's|^(/sys/fs/bpfstash/\([0-9a-f]\{40\}\))$|\1|p')
for _ in $(seq 50); do	# images are freed after an RCU tasks grace period
	[ -n "$thash" ] && [ "$("$bpfstash" -j show "$thash" | jq -r .loaded)" = false ] && break
	sleep 0.1
done
if [ -z "$tramp" ] || [ "$tn" -lt 1 ]; then
	fail trampoline "no sample in a bpf_trampoline_*: $(grep -m 3 bpf_tramp kfunc.dso | tr '\n' ' ')"
elif [ -z "$thash" ]; then
	fail trampoline "$tramp's samples are not in a bpfstash entry: $(grep -m 2 "$tramp" kfunc.dso | tr '\n' ' ')"
elif [ "$("$bpfstash" -j show "$thash" | jq -r .loaded)" != false ]; then
	fail trampoline "$thash ($tramp) is still loaded"
else
	"$perf" annotate --stdio -i $tdata -d "$S/$thash" > tramp.annotate 2> tramp.err
	tst=$?
	tinsns=$(grep -cE '^ +[0-9.]+ : +ffff[0-9a-f]{12}: +[a-z]' tramp.annotate)
	"$base" annotate --stdio -i $tdata -s "$tramp" > tramp.base 2> tramp.base.err
	binsns=$(grep -cE '^ +[0-9.]+ : +ffff[0-9a-f]{12}: +[a-z]' tramp.base)
	tname=$("$bpfstash" -j show "$thash" | jq -r '.functions[0].name // empty')
	if [ "$tst" != 0 ]; then
		fail trampoline "perf annotate exited $tst: $(tail -c 300 tramp.err)"
	elif [ "$tinsns" -ge 5 ] && [ "$tname" = "$tramp" ]; then
		note trampoline "$tn samples in $tramp (unloaded), entry $thash: perf annotate disassembles it ($tinsns instructions); the unpatched perf shows $binsns"
		pass trampoline
	else
		fail trampoline "entry $thash named '$tname', $tinsns annotated instructions: $(head -c 300 tramp.err)"
	fi
fi

# The hook's tracepoint, as a perf user reads it: one bpfstash:bpfstash_store
# per load, naming the program's id and the entry MMAP3 named.
"$perf" record -a -e bpfstash:bpfstash_store -o tp.data -- "$churn" -n 10 -m 1 -l tp.log > tp.record 2>&1
"$perf" script -F trace -i tp.data > tp.script 2> tp.err
progs=$(grep -c '^prog ' tp.log)
seen=0
while read -r _ _ _ id _ hash _; do
	grep -qE "^ *id=$id name=[a-z_]+ outcome=(stored|reloaded) hash=$hash bytes=[0-9]+ hashed=[1-9][0-9]* ns=[1-9][0-9]* hash_ns=[1-9][0-9]*\$" tp.script &&
		seen=$((seen + 1))
done < tp.log
if [ "$progs" -eq 10 ] && [ "$seen" -eq 10 ]; then
	first=$(awk '$1 == "prog" { print $4; exit }' tp.log)
	note tracepoint "$(wc -l < tp.script) bpfstash:bpfstash_store records (libbpf's probes too); each of the 10 programs' names its id and entry: $(grep -m 1 "^ *id=$first " tp.script | sed 's/^ *//')"
	pass tracepoint
else
	fail tracepoint "$seen of $progs programs traced with their entry: $(head -n 2 tp.script tp.err tp.record | tr '\n' ' ')"
fi

# Programs the stash refuses: MMAP3 says so, KSYMBOL names them.
echo off > $S/control && umount $S && mount -t bpfstash -o max_entries=1 none $S ||
	die refused "stop, then mount with max_entries=1"
"$churn" -n 1 -m 1 -l /dev/null > /dev/null 2>&1	# the one entry allowed
"$perf" record -a -e cpu-clock -o refused.data -- "$churn" -n 3 -m "$MS" -l /dev/null > refused.record 2>&1
refused=$("$perf" script --show-mmap-events -i refused.data 2> /dev/null | grep -c "PERF_RECORD_MMAP3.*refused:full")
named=$("$perf" script -F ip,sym -i refused.data 2> /dev/null | grep -c "_churn")
if [ "$refused" -ge 3 ] && [ "$named" -gt 0 ]; then
	note refused "$refused functions refused (store full), $named samples named from KSYMBOL"
	pass refused
else
	fail refused "$refused refused records, $named samples named: $(tail -n 2 refused.record)"
fi
echo off > $S/control
umount $S

# Without a stash: no MMAP3 asked for, nor recorded; KSYMBOL still names.
"$perf" record -a -e cpu-clock -o plain.data -- sleep 1 > plain.record 2>&1
st=$?
attr=$("$perf" evlist -v -i plain.data 2> /dev/null | grep -cE "mmap3[:=] *1")
recs=$("$perf" report --stats -i plain.data 2> /dev/null | awk '/MMAP3 events:/ { print $3 }')
if [ $st -eq 0 ] && [ "$attr" -eq 0 ] && [ "${recs:-0}" -eq 0 ]; then
	pass unmounted
else
	fail unmounted "exit $st, $attr events with mmap3, ${recs:-0} MMAP3 records"
fi
# What a failure needs to be understood, kept with the results.
mkdir -p "${BPFSTASH_RESULTS:-/tmp}/perf" &&
	cp ./*.truth ./*.misses ./*.err annotate.txt annotate-all.txt tramp.annotate tramp.base ./*.log ./*.mangle "${BPFSTASH_RESULTS:-/tmp}/perf/" 2> /dev/null
exit $rc
