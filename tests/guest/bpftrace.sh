#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "bpftrace": bpfstash decode of the kstacks bpftrace prints
# for a program that was unloaded before bpftrace exited.
#
# bpftrace (Debian's) samples kernel stacks while an XDP program runs hot
# under BPF_PROG_TEST_RUN; the program is unloaded, then bpftrace exits and
# prints its map, naming each address of the gone program after the last
# kernel symbol before it ("_einittext+505530408").  decode must recompute
# every such frame from kallsyms and give the function the program had
# there: the expected address is computed here from a copy of kallsyms with
# awk, and the expected function and offset from the program's symbols in
# /proc/kallsyms while it was loaded.  The line is the one bpfstash resolve
# gives for that address (checked against bpftool by the tools suite).
#
# Prints "PASS bpftrace.<check>" or "FAIL bpftrace.<check>: why"; exit 1 if
# any failed.  Run: SUITES=bpftrace HOST=0 scripts/check.sh (it is in
# tests/guest/SUITES.bench: bpftrace starts in seconds on the bench kernel).
set -u
top=${BPFSTASH_TOP:?}
bpftool=$top/build/bpftool/bpftool
bpfstash=$top/build/bpfstash/bpfstash
obj=$top/build/tests/progs/large.bpf.o
S=/sys/fs/bpfstash
pin=/sys/fs/bpf/bpftrace_large
rc=0

pass() { echo "PASS bpftrace.$1${2:+ ($2)}"; }
fail() { echo "FAIL bpftrace.$1: $2"; rc=1; }
die() { fail "$1" "$2"; exit 1; }

work=$(mktemp -d /tmp/bpftrace.XXXXXX) || die setup "mktemp"
bt=""
trap '[ -n "$bt" ] && kill $bt 2>/dev/null; rm -f $pin; rm -rf $work' EXIT
for t in "$bpftool" "$bpfstash" "$obj"; do
	[ -e "$t" ] || die setup "$t is not built (make bpftool tools tests)"
done
command -v bpftrace > /dev/null || die setup "bpftrace is not installed (scripts/deps.sh)"
mounted_here=0
if ! grep -q " $S bpfstash " /proc/mounts; then
	mount -t bpfstash none $S || die setup "mount -t bpfstash"
	mounted_here=1
fi
grep -q " /sys/fs/bpf bpf " /proc/mounts || mount -t bpf bpf /sys/fs/bpf || die setup "mount bpffs"
# A store of its own: the entries of earlier suites' programs may hold the
# addresses this program gets, and bpftrace's lines have no time to tell
# them apart (decode would rightly call them ambiguous).  Stopping the store
# drops every entry; starting it again stores what is loaded.
echo off > $S/control && echo on > $S/control || die setup "restarting the store"

# bpftrace up: its interval probe has printed.
bpftrace -e 'profile:hz:997 { @[kstack] = count(); } interval:s:1 { printf("tick\n"); }' \
	> $work/bt.out 2> $work/bt.err &
bt=$!
for i in $(seq 1 120); do
	grep -q tick $work/bt.out 2> /dev/null && break
	kill -0 $bt 2> /dev/null || break
	sleep 1
done
grep -q tick $work/bt.out || die setup "bpftrace did not start: $(head -c 300 $work/bt.err)"

# The program runs hot; its functions as kallsyms has them while it is loaded.
"$bpftool" prog load "$obj" $pin type xdp || die setup "bpftool prog load"
grep ' bpf_prog_' /proc/kallsyms | grep -E '_(stash_large|large_[a-z]+)[[:space:]]' |
	awk '{ print $1, $3 }' > $work/funcs
[ -s $work/funcs ] || die setup "the program's functions are not in /proc/kallsyms"
head -c 64 /dev/zero > $work/pkt
"$bpftool" prog run pinned $pin data_in $work/pkt repeat 20000 > /dev/null ||
	die setup "bpftool prog run"
rm -f $pin
# bpftrace exits after the program is gone (freeing it is deferred: wait
# until its symbols have left kallsyms), and then prints its map.
for i in $(seq 1 50); do
	grep -qE '_stash_large[[:space:]]' /proc/kallsyms || break
	sleep 0.2
done
cp /proc/kallsyms $work/kallsyms
kill -INT $bt
wait $bt
bt=""

# Frames bpftrace named after a symbol whose end they lie past, with the
# address each stands for: "line sym off addr".  Hex by hand (mawk has no
# strtonum), and only the low 32 bits of kernel text addresses
# (ffffffff........): awk's numbers are doubles, exact to 2^53.
hexfn='function hex(s,   i, v) { v = 0; s = tolower(s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'
awk "$hexfn"'
FNR == NR { if (substr($1, 1, 8) != "ffffffff") next
	a[++nr] = hex(substr($1, 9))
	if (!($3 in start)) start[$3] = a[nr]; else dup[$3] = 1
	next }
/^ +[A-Za-z_][A-Za-z0-9_.]*\+[0-9]+$/ {
	split($1, p, "+"); s = p[1]; off = p[2] + 0
	if (!(s in start) || (s in dup)) next
	if (!(s in end)) {	# where the next higher address starts, once a symbol
		e = 0
		for (i = 1; i <= nr; i++) if (a[i] > start[s] && (!e || a[i] < e)) e = a[i]
		end[s] = e
	}
	if (end[s] && start[s] + off >= end[s])
		printf "%d %s %d ffffffff%08x\n", FNR, s, off, start[s] + off
}' $work/kallsyms $work/bt.out > $work/misnamed
nmis=$(wc -l < $work/misnamed)
if [ "$nmis" -gt 0 ]; then
	pass misnamed_frames "$nmis frames, e.g. $(head -1 $work/misnamed | cut -d' ' -f2,3)"
else
	fail misnamed_frames "bpftrace named no frame after the wrong symbol: $(grep -m 3 -A3 '@\[' $work/bt.out | tr '\n' ' ')"
fi

# decode: each such frame annotated "(0xADDR: FUNC+0xOFF) file:line:col",
# ADDR as computed above, FUNC+OFF from the program's kallsyms symbols
# while it was loaded, and file:line:col as bpfstash resolve gives it.
"$bpfstash" decode < $work/bt.out > $work/decoded 2> $work/decode.err
st=$?
cut -d' ' -f4 $work/misnamed | sort -u > $work/addrs
"$bpfstash" resolve $(cat $work/addrs) > $work/resolved 2> /dev/null
bad=$(awk -F'\t' "$hexfn"'
	FILENAME ~ /funcs$/ { split($0, f, " "); fa[++nf] = hex(substr(f[1], 9)); fn[nf] = f[2]; next }
	FILENAME ~ /resolved$/ { sub(/^0x/, "", $1); loc[$1] = $5; next }
	FILENAME ~ /misnamed$/ { split($0, m, " "); want_ln[m[1]] = m[2] "+" m[3]; want_a[m[1]] = m[4]; next }
	(FNR in want_ln) {
		x = hex(substr(want_a[FNR], 9)); best = 0; name = ""
		for (i = 1; i <= nf; i++) if (fa[i] <= x && fa[i] > best) { best = fa[i]; name = fn[i] }
		want = "    " want_ln[FNR] " (0x" want_a[FNR] ": " name "+0x" sprintf("%x", x - best) ") " loc[want_a[FNR]]
		if (name == "" || $0 != want) { print "line " FNR ": \"" $0 "\", want \"" want "\""; exit }
		n++
	}
	END { if (n != length(want_ln)) print n " of " length(want_ln) " frames checked" }
' $work/funcs $work/resolved $work/misnamed $work/decoded)
if [ $st -eq 0 ] && [ -z "$bad" ] && [ "$nmis" -gt 0 ]; then
	pass decode_misnamed "$nmis frames, $(wc -l < $work/addrs) addresses"
else
	fail decode_misnamed "exit $st: $bad $(head -c 200 $work/decode.err)"
fi
# Lines that are no misnamed frame pass through byte for byte.
# (No process substitution: the guest has no /dev/fd.)
awk 'NR == FNR { skip[$1] = 1; next } !(FNR in skip)' $work/misnamed $work/bt.out > $work/bt.rest
awk 'NR == FNR { skip[$1] = 1; next } !(FNR in skip)' $work/misnamed $work/decoded > $work/dec.rest
if [ -s $work/bt.rest ] && diff $work/bt.rest $work/dec.rest > $work/diff; then
	pass decode_others_unchanged
else
	fail decode_others_unchanged "$(head -c 300 $work/diff)"
fi

[ $mounted_here = 1 ] && { echo off > $S/control; umount $S; }
exit $rc
