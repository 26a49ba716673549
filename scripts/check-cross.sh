#!/bin/bash
# The host's half of the "cross" suite (tests/guest/cross.sh): entries
# made on one architecture, read on the other.
#
#   scripts/check-cross.sh RESULTS
#
# RESULTS is the cross/ directory a guest of another architecture wrote:
# <machine>/ (its entries, copied), out/ (what
# its bpfstash(8) printed of those and of the x86-64 entries of
# tests/fixtures/stash (subprogs and tiny), and the ELF files it exported).  Here, the host's
# bpfstash runs the same commands on the same entries, and:
#
#   cross.same_output   every output (verify, show -j, lines, resolve,
#                       decode) and exported file is the same on both
#                       architectures, byte for byte, and the decoded
#                       frames have their source lines
#   cross.export_machine the guest's entries export as ELF files of the
#                       guest's machine (readelf -h), which llvm-objdump
#                       disassembles with the entry's source lines
#
# Prints PASS/FAIL lines as make check does.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
res=${1:?usage: check-cross.sh RESULTS}
bpfstash=$top/build/bpfstash/bpfstash
host=$res/host-out
rc=0

pass() { echo "PASS cross.$1${2:+ ($2)}"; }
fail() { echo "FAIL cross.$1: $2"; rc=1; }

# The guest's machine: the directory of its entries, the one with a manifest.
machine=""
for m in "$res"/*/manifest; do
	[ -f "$m" ] && machine=$(basename "$(dirname "$m")") && break
done
if [ -z "$machine" ] || [ ! -f "$res/$machine/manifest" ] || [ ! -x "$bpfstash" ]; then
	fail same_output "no guest entries in $res (or $bpfstash not built)"
	exit 1
fi
rm -rf "$host"
mkdir -p "$host"

# The same commands as the guest's (tests/guest/cross-read.sh); a failure
# shows in the comparison.
read_all() { "$top/tests/guest/cross-read.sh" "$bpfstash" "$host" "$@"; }
read_all "$top/tests/fixtures/stash" "$top/tests/fixtures/manifest" x86_64-fixtures
read_all "$res/$machine" "$res/$machine/manifest" "$machine"

# Not the same nothing: every entry's frames decode to source lines.
empty=$(for f in "$host"/*.decode; do grep -q '\.bpf\.c:[0-9]' "$f" || echo "$f"; done)
if [ -n "$empty" ]; then
	fail same_output "no source line decoded in $(echo $empty)"
elif diff -r "$res/out" "$host" > "$res/diff" 2>&1; then
	pass same_output "$(find "$host" -type f | wc -l) outputs and exported files of 2 $machine entries and 2 x86_64 ones, the same from bpfstash on $machine and on $(uname -m)"
else
	fail same_output "$(grep -c . "$res/diff") lines differ, first: $(head -n 3 "$res/diff" | tr '\n' ' ') ($res/diff)"
fi

# The guest's entries as ELF files of the guest's machine.
want=$(case "$machine" in aarch64) echo AArch64 ;; x86_64) echo 'Advanced Micro Devices X86-64' ;; *) echo "$machine" ;; esac)
bad=""
n=0
while read -r name hash; do
	elf=$host/$machine.export/.build-id/${hash:0:2}/${hash:2}.debug
	m=$(readelf -h "$elf" 2> /dev/null | sed -n 's/^ *Machine: *//p')
	[ "$m" = "$want" ] || { bad="$bad $name: machine '$m';"; continue; }
	llvm-objdump -d -l "$elf" > "$res/$name.objdump" 2>&1 || { bad="$bad $name: llvm-objdump failed;"; continue; }
	insns=$(grep -c -E '^ *[0-9a-f]+: ([0-9a-f]{2} ){4}\s' "$res/$name.objdump")
	lines=$(grep -c "tests/progs/$name.bpf.c:" "$res/$name.objdump")
	[ "$insns" -gt 0 ] && [ "$lines" -gt 0 ] || { bad="$bad $name: $insns instructions, $lines source lines;"; continue; }
	echo "  cross.export_machine: $name ($hash): $m, $insns instructions, $lines source lines (llvm-objdump -d -l)"
	n=$((n + 1))
done < "$res/$machine/manifest"
if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
	pass export_machine "$n $machine entries"
else
	fail export_machine "${bad:-none}"
fi
exit $rc
