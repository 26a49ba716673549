#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What bpfstash(8) makes of some entries, for the cross suite: run the same
# way by tests/guest/cross.sh in the guest and scripts/check-cross.sh on
# the host, whose outputs are then compared.
#
#   cross-read.sh BPFSTASH OUT ROOT MANIFEST NAME
#
# The entries of ROOT that MANIFEST ("<name> <hash> ..." lines) names for
# programs subprogs and tiny: verify, show -j, lines, resolve of line
# records' addresses (64 of them at most, evenly spread), decode of those
# as a stack trace's frames, export; into OUT/NAME.<hash>.* and
# OUT/NAME.export/.  Exit 1 at the first command that fails.
set -u
bpfstash=$1 out=$2 root=$3 manifest=$4 name=$5

hashes=$(awk '$1 == "subprogs" || $1 == "tiny" { print $2 }' "$manifest")
[ "$(echo $hashes | wc -w)" = 2 ] || exit 1
for h in $hashes; do
	o=$out/$name.$h
	"$bpfstash" -r "$root" verify "$h" > "$o.verify" 2>&1 || exit 1
	"$bpfstash" -r "$root" -j show "$h" > "$o.show" 2>&1 || exit 1
	"$bpfstash" -r "$root" lines "$h" > "$o.lines" 2>&1 || exit 1
	sed -n 's/^ *\([0-9a-f]*\):\t.*/\1/p' "$o.lines" > "$o.offs"
	n=$(( ($(wc -l < "$o.offs") + 63) / 64 ))
	awk -v n="$n" 'NR % n == 0' "$o.offs" | sed "s/^/$h+0x/" |
		xargs -r "$bpfstash" -r "$root" resolve > "$o.resolve" 2>&1 || exit 1
	awk -F'\t' '{ printf " %s\n", $4 }' "$o.resolve" |
		"$bpfstash" -r "$root" decode > "$o.decode" 2>&1 || exit 1
	"$bpfstash" -r "$root" export "$h" --to "$out/$name.export" > /dev/null 2>&1 || exit 1
done
