#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "tools": bpfstash(8) and the ELF export against the live
# kernel, judged by tools nobody here wrote.
#
# Loads tests/progs/subprogs.bpf.o with the 6.12 tree's bpftool (which has
# the LLVM disassembler), records what bpftool says about it (linum dump,
# raw image), exports the program's entry with `bpfstash export`, and
# checks it with readelf, objdump and addr2line; then unloads the program
# and checks that `bpfstash resolve` still gives, for every address bpftool
# annotated, the function and the source line bpftool printed.
#
# Prints "PASS tools.<check>" or "FAIL tools.<check>: why" per check; exit 1
# if any failed.  Run: SUITES=tools HOST=0 scripts/check.sh
# bash, not sh: dash saturates 64-bit arithmetic on kernel addresses.
set -u
shopt -s extglob
top=${BPFSTASH_TOP:?}
bpftool=$top/build/bpftool/bpftool
bpfstash=$top/build/bpfstash/bpfstash
obj=$top/build/tests/progs/subprogs.bpf.o
S=/sys/fs/bpfstash
pin=/sys/fs/bpf/tools_subprogs
rc=0

pass() { echo "PASS tools.$1"; }
fail() { echo "FAIL tools.$1: $2"; rc=1; }
die() { fail "$1" "$2"; exit 1; }

work=$(mktemp -d /tmp/tools.XXXXXX) || die setup "mktemp"
trap 'rm -f $pin; rm -rf $work' EXIT
for t in "$bpftool" "$bpfstash" "$obj"; do
	[ -e "$t" ] || die setup "$t is not built (make bpftool tools tests)"
done
for t in readelf objdump addr2line jq; do
	command -v $t >/dev/null || die setup "$t is not installed"
done

# Not mounted: the default root is refused with "unavailable" (69).
mounted_here=0
if ! grep -q " $S bpfstash " /proc/mounts; then
	"$bpfstash" ls > /dev/null 2>&1
	st=$?
	if [ $st -eq 69 ]; then pass not_mounted; else fail not_mounted "exit $st, not 69"; fi
	mount -t bpfstash none $S || die setup "mount -t bpfstash"
	mounted_here=1
fi
grep -q " /sys/fs/bpf bpf " /proc/mounts || mount -t bpf bpf /sys/fs/bpf || die setup "mount bpffs"

# Load, and record bpftool's view while it is loaded.
"$bpftool" prog load "$obj" $pin || die setup "bpftool prog load"
id=$("$bpftool" prog show pinned $pin | sed -n 's/^\([0-9]*\):.*/\1/p')
"$bpftool" prog dump jited pinned $pin linum > $work/linum || die setup "bpftool linum"
"$bpftool" prog dump jited pinned $pin file $work/image > /dev/null || die setup "bpftool file"

# The entry of this program, through the CLI's JSON.
hash=$("$bpfstash" -j ls | jq -r ".[] | select(.prog_id == $id and .loaded) | .hash")
if [ "$(printf '%s' "$hash" | wc -c)" = 40 ]; then
	pass find_entry
else
	die find_entry "no loaded entry for prog id $id (got '$hash')"
fi
"$bpfstash" -j show "$hash" > $work/show.json || fail show "exit $?"
if jq -e '.verified and .loaded' $work/show.json > /dev/null; then
	pass show_verified
else
	fail show_verified "$(cat $work/show.json)"
fi
if cmp -s $work/image $S/$hash/jited; then
	pass jited_is_bpftool_image
else
	fail jited_is_bpftool_image "$S/$hash/jited differs from bpftool's file"
fi
# name addr(hex, no 0x) len offset, one line per function
jq -r '.functions[] | "\(.name) \(.addr | ltrimstr("0x")) \(.len) \(.offset)"' \
	$work/show.json > $work/funcs
nfuncs=$(wc -l < $work/funcs)
[ "$nfuncs" -ge 2 ] || fail functions "only $nfuncs functions"

# Export, while loaded.
out=$("$bpfstash" export "$hash" --to $work/debug) || die export "exit $?: $out"
elf=$work/debug/.build-id/$(echo $hash | cut -c1-2)/$(echo $hash | cut -c3-).debug
if [ -f "$elf" ] && echo "$out" | grep -q "$elf"; then
	pass export
else
	die export "no $elf ($out)"
fi

if readelf -n "$elf" | grep -q "Build ID: $hash\$"; then
	pass readelf_build_id
else
	fail readelf_build_id "$(readelf -n "$elf" 2>&1 | head -5)"
fi

# .text of each function == bpftool's image at the function's offset.
readelf -W -S "$elf" | sed -n 's/.*\] \.text *PROGBITS *\([0-9a-f]*\) \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2 \3/p' \
	> $work/texts
declare -A text_off text_size
while read -r addr off size; do
	text_off[${addr##+(0)}]=$((0x$off))
	text_size[${addr##+(0)}]=$((0x$size))
done < $work/texts
bad=""
while read -r name addr len off; do
	if [ "${text_size[$addr]:-0}" -ne "$len" ]; then
		bad="$bad $name:no-section"
	elif ! cmp -s -n "$len" -i "${text_off[$addr]}:$off" "$elf" $work/image; then
		bad="$bad $name:bytes"
	fi
done < $work/funcs
if [ -z "$bad" ] && [ "$(wc -l < $work/texts)" -eq "$nfuncs" ]; then
	pass text_bytes
else
	fail text_bytes "${bad:-section count}"
fi

# objdump decodes every function, by its symbol.
objdump -d "$elf" > $work/objdump 2>&1 || fail objdump "exit $?"
objtext=$(< $work/objdump)
bad=""
while read -r name addr len off; do
	[[ $objtext == *"$addr <$name>:"* ]] || bad="$bad $name"
done < $work/funcs
[[ $objtext == *"(bad)"* ]] && bad="$bad (bad)"
if [ -z "$bad" ] && [ "$(grep -c '^ *[0-9a-f]*:	' $work/objdump)" -gt 20 ]; then
	pass objdump
else
	fail objdump "missing or undecodable:$bad"
fi

# bpftool's annotations: "<func> <off> <file:line:col> <source>" per address.
awk '
	/^bpf_prog_[0-9a-f]*_.*:$/ { fn = substr($0, 1, length($0) - 1); loc = "??"; next }
	/^; .* \[file:.* line_num:[0-9]* line_col:[0-9]*\]$/ {
		i = index($0, " [file:")
		src = substr($0, 3, i - 3)
		rest = substr($0, i + 7)
		file = substr(rest, 1, index(rest, " line_num:") - 1)
		split(substr(rest, index(rest, " line_num:") + 10), n, /[ :\]]/)
		loc = file ":" n[1] ":" n[3]
		next
	}
	/^ *[0-9a-f]+:\t/ { off = $1; sub(/:.*/, "", off); print fn, off, loc "\t" src }
' $work/linum > $work/expected
naddr=$(wc -l < $work/expected)
# Absolute addresses, with shell builtins only: a fork costs under TCG.
declare -A base
while read -r name addr len off; do base[$name]=$addr; done < $work/funcs
while read -r name off rest; do
	printf '%x\n' $((0x${base[$name]} + 0x$off))
done < $work/expected > $work/addrs

# addr2line: the same file:line as bpftool for every annotated address.
addr2line -e "$elf" < $work/addrs | sed 's/ (discriminator.*//' > $work/a2l
bad=$(cut -f1 $work/expected | cut -d' ' -f3 | sed 's/:[0-9]*$//' | paste -d' ' - $work/a2l |
	awk '$1 != $2 && !($1 == "??" && $2 ~ /^\?\?/)' | head -3)
if [ -z "$bad" ] && [ "$naddr" -gt 20 ] && [ "$(wc -l < $work/a2l)" -eq "$naddr" ]; then
	pass addr2line
else
	fail addr2line "$naddr addresses; first differences (bpftool, addr2line): $bad"
fi

# Unload; the entry stays, marked unloaded (freeing the program is deferred).
rm $pin
i=0
while [ $i -lt 100 ]; do
	[ "$("$bpfstash" -j show "$hash" | jq .loaded)" = false ] && break
	sleep 0.1
	i=$((i + 1))
done
if [ "$("$bpfstash" -j show "$hash" | jq .loaded)" = false ] && "$bpfstash" verify "$hash" > /dev/null 2>&1; then
	pass unloaded_entry_complete
else
	fail unloaded_entry_complete "still loaded, or does not verify"
fi

# resolve each address of the unloaded program: bpftool's function and line.
# At a time it was loaded: an earlier suite's program may have held these
# addresses too, and without a time resolve reports that as ambiguous.
# The JSON gives ns times as strings: jq reads numbers as doubles, and a
# time in ns since the epoch would lose its last two or three digits
# there, which could put it before the load.
at=$("$bpfstash" -j show "$hash" | jq -r '.load_time_ns')
at="@${at:0:${#at}-9}.${at:${#at}-9}"
"$bpfstash" resolve --at "$at" $(cat $work/addrs) > $work/resolved 2> $work/resolve.err
st=$?
bad=$(paste $work/expected $work/resolved | awk -F'\t' -v h="$hash" '
	{
		split($1, w, " ")		# func off loc
		want_src = $2
		# resolved: addr hash state func+off loc source
		fo = $6; sub(/\+0x[0-9a-f]*$/, "", fo)
		if ($4 != h || $5 != "unloaded" || fo != w[1] ||
		    (w[3] != "??" && ($7 != w[3] || $8 != want_src)) || (w[3] == "??" && $7 != "?"))
			print w[1] "+" w[2] ": " $0
	}' | head -3)
if [ $st -eq 0 ] && [ -z "$bad" ] && [ "$(wc -l < $work/resolved)" -eq "$naddr" ]; then
	pass resolve_unloaded
else
	fail resolve_unloaded "exit $st, $(wc -l < $work/resolved)/$naddr lines: $bad $(head -c 200 $work/resolve.err)"
fi

[ $mounted_here = 1 ] && { echo off > $S/control; umount $S; }
exit $rc
