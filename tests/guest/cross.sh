#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "cross": entries read on an architecture other than the
# one that made them.  Half of it runs here, the other half on the host
# (scripts/check-cross.sh), which compares the two.
#
# Here, on the guest's architecture:
#   entries     tests/progs/subprogs.bpf.o and tiny.bpf.o loaded with
#               bpftool and unloaded; each entry copied (cp -r) into
#               $BPFSTASH_RESULTS/cross/<machine>/ (the stash suite checks
#               entries against bpf_prog_get_info_by_fd() on every
#               architecture; Debian's arm64 bpftool cannot dump images);
#   read        this architecture's bpfstash(8) on those entries and on the
#               x86-64 entries of the same programs in tests/fixtures:
#               verify, show -j, lines, resolve of line records' addresses
#               (64 of them at most), decode of them as a stack
#               trace's frames, export; what each
#               printed and the exported files into
#               $BPFSTASH_RESULTS/cross/out/, for the host to compare with
#               what its own bpfstash makes of the same entries.
#
# Prints "PASS cross.<check>" or "FAIL cross.<check>: why"; exit 1 if any
# failed.
set -u
top=${BPFSTASH_TOP:?}
tests=${BPFSTASH_TESTS:-$top/build/tests}
res=${BPFSTASH_RESULTS:-/tmp}/cross
# This architecture's bpfstash(8): build/arm64/bpfstash beside
# build/arm64/tests, else the host's build.
bpfstash=$(dirname "$tests")/bpfstash/bpfstash
bpftool=$top/build/bpftool/bpftool
[ "$(uname -m)" = x86_64 ] || bpftool=$(command -v bpftool)
S=/sys/fs/bpfstash
rc=0

pass() { echo "PASS cross.$1"; }
fail() { echo "FAIL cross.$1: $2"; rc=1; }
die() { fail "$1" "$2"; exit 1; }

machine=$(uname -m)
for t in "$bpfstash" "$bpftool"; do
	[ -x "$t" ] || die setup "$t is not built or installed"
done
grep -q " $S bpfstash " /proc/mounts || mount -t bpfstash none $S || die setup "mount -t bpfstash"
grep -q " /sys/fs/bpf bpf " /proc/mounts || mount -t bpf bpf /sys/fs/bpf || die setup "mount bpffs"
rm -rf "$res"
mkdir -p "$res/$machine" "$res/out" || die setup "mkdir $res"

# 1. This architecture's entries.
bad=""
for p in subprogs tiny; do
	pin=/sys/fs/bpf/cross_$p
	"$bpftool" prog load "$top/build/tests/progs/$p.bpf.o" $pin || { bad="$bad $p: bpftool prog load;"; continue; }
	id=$("$bpftool" prog show pinned $pin | sed -n 's/^\([0-9]*\):.*/\1/p')
	rm -f $pin
	# The entry whose info says this program id.
	hash=$(grep -l -E "^prog_id +$id\$" $S/*/info 2> /dev/null | head -n 1)
	hash=$(basename "$(dirname "${hash:-.}")")
	if [ ${#hash} != 40 ]; then
		bad="$bad $p: no entry for prog id $id;"
		continue
	fi
	cp -r $S/$hash "$res/$machine/" || bad="$bad $p: cp -r;"
	echo "$p $hash" >> "$res/$machine/manifest"
done
if [ -z "$bad" ] && [ "$(grep -c . "$res/$machine/manifest" 2> /dev/null)" = 2 ]; then
	echo "  cross.entries: $machine: $(tr '\n' ' ' < "$res/$machine/manifest")"
	pass entries
else
	fail entries "${bad:-no manifest}"
fi

# 2. What this architecture's bpfstash makes of both sets of entries
# (tests/guest/cross-read.sh, which the host runs too).
read_all() { "$top/tests/guest/cross-read.sh" "$bpfstash" "$res/out" "$@"; }
if read_all "$top/tests/fixtures/stash" "$top/tests/fixtures/manifest" x86_64-fixtures &&
   read_all "$res/$machine" "$res/$machine/manifest" "$machine"; then
	echo "  cross.read: $(ls "$res/out" | wc -l) outputs of bpfstash on $machine"
	pass read
else
	fail read "bpfstash failed: $(ls -t "$res/out" | head -n 1)"
fi
exit $rc
