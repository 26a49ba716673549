#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "perf_move": the other machine of issue 7 ("It must
# show" 3).  The suite "perf" left, in a first boot, a perf.data of 200
# short-lived BPF programs, its perf archive (the build-id cache entries it
# needs), a bpfstash-gc --archive directory of the stash's entries, and what
# perf script printed for the samples in BPF programs.  Here, in a second
# boot (the bench kernel in make check) with no stash mounted:
#
#   build_id_cache   with the archive unpacked into ~/.debug, perf script
#                    resolves those samples identically;
#   debuginfod       with ~/.debug removed, it resolves them identically
#                    through a debuginfod server on 127.0.0.1 serving the
#                    bpfstash-gc archive directory (DEBUGINFOD_URLS);
#   inject           the suite perf_inject's injected perf.data and its perf
#                    archive: the unpatched perf, with that archive alone in
#                    an empty build-id cache, prints the samples in BPF
#                    programs as on the first machine.
#
# PERF_MOVE: the first boot's directory (default: where make check's debug
# boot leaves it, build/check/guest/perf-move).
set -u
top=${BPFSTASH_TOP:?}
perf=$top/build/perf/perf
move=${PERF_MOVE:-$top/build/check/guest/perf-move}
case "$move" in /*) ;; *) move=$top/$move ;; esac
S=/sys/fs/bpfstash
rc=0

pass() { echo "PASS perf_move.$1"; }
fail() { echo "FAIL perf_move.$1: $2"; rc=1; }
skip() { echo "SKIP perf_move.$1: $2"; }
note() { echo "  perf_move.$1: $2"; }

# bpfstash inject's file (suite perf_inject): the unpatched perf, with only
# the perf archive of it in an empty build-id cache.
inject_move() {
	local d=$move-inject base=$top/build/perf-base/perf w
	if [ ! -s "$d/expected" ] || [ ! -f "$d/perf-base.inj.tar.bz2" ]; then
		skip inject "no injected perf.data from a first boot in $d (the suite perf_inject makes it)"
		return
	fi
	w=$(mktemp -d /tmp/perf_move_inject.XXXXXX) || return
	mkdir -p "$w/debug"
	tar -xjf "$d/perf-base.inj.tar.bz2" -C "$w/debug"
	PERF_BUILDID_DIR=$w/debug PERF_CONFIG=/dev/null "$base" --buildid-dir "$w/debug" script \
		-F time,ip,sym,dso,srcline --ns -i "$d/perf-base.inj" > "$w/script" 2> "$w/err"
	awk '/^ *[0-9]+\.[0-9]+: / { bpf = ($3 ~ /^bpf_prog_[0-9a-f]+_churn/); if (bpf) print; next }
	     bpf { print; bpf = 0 }' "$w/script" > "$w/got"
	n=$(grep -c '^ *[0-9]*\.[0-9]*:' "$d/expected")
	l=$(grep -c '^ *churn\.bpf\.c:[0-9]*$' "$w/got")
	if [ "$n" -gt 0 ] && cmp -s "$d/expected" "$w/got"; then
		note inject "$n samples in BPF programs ($l with a line of churn.bpf.c) resolved by the unpatched perf from the archive, as on the first machine"
		pass inject
	else
		fail inject "$(diff "$d/expected" "$w/got" | head -n 4 | tr '\n' ' ') $(head -c 200 "$w/err")"
	fi
	rm -rf "$w"
}

# Another machine: no stash here.
grep -q " $S bpfstash " /proc/mounts && { echo off > $S/control; umount $S; }
if grep -q " $S bpfstash " /proc/mounts; then
	fail setup "a stash is mounted and cannot be unmounted"
	exit 1
fi
inject_move

if [ ! -s "$move/expected" ] || [ ! -f "$move/patched.data.tar.bz2" ]; then
	why="no perf.data from a first boot in $move (the suite perf makes it; make check runs both)"
	skip build_id_cache "$why"
	skip debuginfod "$why"
	exit $rc
fi
[ -x "$perf" ] || { fail setup "$perf is not built (make perf)"; exit 1; }

work=$(mktemp -d /tmp/perf_move.XXXXXX) || exit 1
dpid=
trap 'cd /; [ -n "$dpid" ] && kill $dpid 2> /dev/null; rm -rf $work' EXIT
cd "$work" || exit 1

cp "$move/patched.data" "$move/expected" "$move/patched.data.tar.bz2" . || exit 1
nexp=$(grep -cE 'bpf_prog_[0-9a-f]{16}' expected)
nline=$(grep -c '^ \+[^ ]*\.c:[0-9]\+$' expected)

# The samples in BPF programs (bpf_prog_<tag>..., not the kernel's
# bpf_prog_*() functions) of perf script -F time,ip,sym,srcline, each with
# its srcline, if any.
bpf_samples() {
	awk -v tag='[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' '
		/^ *[0-9]+\.[0-9]+: / { bpf = $3 ~ ("^bpf_prog_" tag); if (bpf) print; next }
		bpf { print; bpf = 0 }' "$1"
}

# The samples in BPF programs, as perf script prints them here.
resolve() {
	"$perf" script -F time,ip,sym,dso,srcline --ns -i patched.data > "$1.script" 2> "$1.err"
	bpf_samples "$1.script" > "$1.bpf"
}

rm -rf "$HOME/.debug"
mkdir -p "$HOME/.debug"
tar -xjf patched.data.tar.bz2 -C "$HOME/.debug"
resolve cache
if [ "$nexp" -gt 0 ] && cmp -s expected cache.bpf; then
	note build_id_cache "$nexp samples in BPF programs ($nline with a source line) resolved as on the first machine"
	pass build_id_cache
else
	fail build_id_cache "$(diff expected cache.bpf | head -n 4 | tr '\n' ' ') $(head -c 200 cache.err)"
fi

# Now without the cache: debuginfod, from bpfstash-gc's archive.
rm -rf "$HOME/.debug"
if ! command -v debuginfod > /dev/null || ! command -v debuginfod-find > /dev/null; then
	skip debuginfod "debuginfod is not installed (apt-get install debuginfod)"
	exit $rc
fi
port=$((20000 + $$ % 20000))
debuginfod -d "$work/db.sqlite" -p $port -F -Z .tar.zst -t 1 "$move/archive" > debuginfod.log 2>&1 &
dpid=$!
export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$work/client
# Until it has scanned the archive: every entry the samples hit, each asked
# until found with a client cache of its own (the client caches misses).
sed -n 's|.*(/sys/fs/bpfstash/\([0-9a-f]\{40\}\)).*|\1|p' expected | sort -u > hashes
unserved=$(wc -l < hashes)
for _ in $(seq 120); do
	: > unserved
	while read -r h; do
		DEBUGINFOD_CACHE_PATH=$work/probe debuginfod-find debuginfo "$h" > /dev/null 2>&1 ||
			echo "$h" >> unserved
		rm -rf "$work/probe"
	done < hashes
	unserved=$(wc -l < unserved)
	[ "$unserved" -eq 0 ] && break
	cp unserved hashes
	sleep 0.5
done
resolve debuginfod
served=$(find "$work/client" -name debuginfo 2> /dev/null | wc -l)
if [ "$unserved" -ne 0 ]; then
	fail debuginfod "the server never served $unserved entries: $(tail -n 3 debuginfod.log | tr '\n' ' ')"
elif [ "$nexp" -gt 0 ] && cmp -s expected debuginfod.bpf; then
	note debuginfod "$served entries fetched from debuginfod on 127.0.0.1:$port; $nexp samples resolved as on the first machine"
	pass debuginfod
else
	fail debuginfod "$served entries fetched; $(diff expected debuginfod.bpf | head -n 4 | tr '\n' ' ') $(head -c 200 debuginfod.err)"
fi
exit $rc
