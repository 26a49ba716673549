#!/bin/sh
# Runs in the guest (scripts/vm-run): captures real bpfstash entries from the
# kernel for the host unit tests, with what bpftool says about the same
# programs while they were loaded.  Regenerate with:
#
#   scripts/vm-run -o build/vm/fixtures -- tests/guest/capture-fixtures.sh
#   rm -rf tests/fixtures/stash && cp -r build/vm/fixtures/fixtures/* tests/fixtures/
#
# CAPTURE_PROGS names other programs of build/tests/progs (default
# "subprogs tiny large"); KUnit's benchmark of the load hook takes its
# two largest programs from tests/fixtures/bench, captured with
#
#   scripts/vm-run -o build/vm/bench-fixtures -- sh -c \
#       'CAPTURE_PROGS="insns4096 many" tests/guest/capture-fixtures.sh'
#   rm -rf tests/fixtures/bench && cp -r build/vm/bench-fixtures/fixtures tests/fixtures/bench
#
# Output ($BPFSTASH_RESULTS/fixtures/):
#   stash/<hash>/...          a copy of each entry (cp -r of the mounted tree)
#   manifest                  <name> <hash> <prog id> loaded|unloaded
#   bpftool/<name>.linum      bpftool prog dump jited ... linum, while loaded
#   bpftool/<name>.jited      bpftool prog dump jited ... file (raw image)
set -eu
top=${BPFSTASH_TOP:?}
out=${BPFSTASH_RESULTS:?}/fixtures
bpftool=$top/build/bpftool/bpftool
dumps=1
# On another architecture: the guest's own bpftool, which (Debian's) has no
# disassembler to dump the image with: entries and manifest only.
if [ "$(uname -m)" != x86_64 ]; then
	bpftool=$(command -v bpftool)
	dumps=0
	echo "capture-fixtures: $(uname -m): no bpftool dumps (bpftool/ stays empty)"
fi
S=/sys/fs/bpfstash
rm -rf "$out"
mkdir -p "$out/stash" "$out/bpftool"
mount -t bpfstash none $S
mkdir -p /sys/fs/bpf
mount -t bpf bpf /sys/fs/bpf

for name in ${CAPTURE_PROGS:-subprogs tiny large}; do
	"$bpftool" prog load "$top/build/tests/progs/$name.bpf.o" /sys/fs/bpf/$name
	id=$("$bpftool" prog show pinned /sys/fs/bpf/$name | sed -n 's/^\([0-9]*\):.*/\1/p')
	if [ $dumps = 1 ]; then
		"$bpftool" prog dump jited pinned /sys/fs/bpf/$name linum > "$out/bpftool/$name.linum"
		"$bpftool" prog dump jited pinned /sys/fs/bpf/$name file "$out/bpftool/$name.jited"
	fi
	hash=$(for d in $S/*/; do
		if grep -q "^prog_id *$id\$" "$d/info"; then basename "$d"; fi
	done)
	# subprogs stays loaded: the live fixture; the others are unloaded.
	state=loaded
	if [ $name != subprogs ]; then rm /sys/fs/bpf/$name; state=unloaded; fi
	echo "$name $hash $id $state" >> "$out/manifest"
done

for d in $S/*/; do
	h=$(basename "$d")
	grep -q " $h " "$out/manifest" || continue
	cp -r "$d" "$out/stash/$h"
done
cat "$out/manifest"
