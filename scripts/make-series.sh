#!/bin/bash
# make series: the bpfstash patch series, as git format-patch writes them,
# generated from this repository's sources into build/series/:
#
#   build/series/kernel/        the kernel series, with a cover letter
#   build/series/perf/          the perf series, with a cover letter
#   build/series/fault-inject/  a one-patch fix, sent on its own
#   build/series/arm64-jit/     a one-patch fix of the arm64 JIT, sent on its own
#   build/series/checkpatch.txt what scripts/checkpatch.pl --strict says
#
# patches/series names the series in the order the harness applies them;
# patches/<series>/series lists its patches in order, each followed by the
# new files that arrive with it (indented).  A patch file holds a commit
# message and its edits: to files of the 6.12 tree, and to new files that
# an earlier patch of the series brought.  New files are the real files of
# this repository, as the series leaves them: the file a patch brings is
# the repository's with the edits of the later patches taken back
# (git apply -R, the last patch first), so that each patch is a real diff
# of one step and the last one ends at this repository's files.  Each
# series is committed onto a git
# repository of the pristine Debian linux-source-6.12 tree
# (build/series/linux, made once), one commit per patch, and formatted
# with git format-patch.
#
# Fails when a patch does not apply, a new file is missing, or
# checkpatch.pl --strict reports a message that the series'
# patches/<series>/checkpatch file does not list (with why it stays).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/series
repo=$out/linux
tarball=${BPFSTASH_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}

say() { echo "series: $*" >&2; }
die() { echo "series: $*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball not found; run scripts/deps.sh (package linux-source-6.12)"
mkdir -p "$out"
exec 9> "$out/.lock"
flock 9

git_() { git -C "$repo" -c user.name="bpfstash developers" -c user.email=bpfstash@localhost \
	-c core.autocrlf=false -c advice.detachedHead=false "$@"; }

# 1. The pristine tree as a git repository, once per tarball.
stamp="$(stat -c '%s %Y' "$tarball") $tarball"
if [ ! -d "$repo/.git" ] || [ "$(cat "$repo/.git/bpfstash-tarball" 2>/dev/null)" != "$stamp" ]; then
	say "making a git repository of $tarball in build/series/linux (about 2 minutes, once)"
	rm -rf "$repo" "$repo.tmp"
	mkdir -p "$repo.tmp"
	tar -xf "$tarball" -C "$repo.tmp"
	src=$(find "$repo.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	mv "$src" "$repo"
	rmdir "$repo.tmp"
	kv=$(make -s -C "$repo" kernelversion)
	pkg=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	git_ init -q
	git_ add -A -f
	git_ commit -q -m "Linux $kv (Debian linux-source-6.12 $pkg)"
	git_ tag -f base > /dev/null
	echo "$stamp" > "$repo/.git/bpfstash-tarball"
fi
base_desc=$(git_ log -1 --format=%s base)

# The series, in order.
series_list() { grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/series"; }

# What a series applies to: the base, or the series its "# base: <series>"
# line names (bench, which needs the kernel series).
series_base() {
	local b
	b=$(sed -n 's/^# base: *//p' "$top/patches/$1/series")
	echo "${b:-base}"
}

# "patch new-file..." per line, from patches/<series>/series.
series_entries() {
	awk '/^[[:space:]]*(#|$)/ { next }
	     /^[^[:space:]]/ { if (p != "") print p files; p = $1; files = ""; next }
	     { files = files " " $1 }
	     END { if (p != "") print p files }' "$top/patches/$1/series"
}

# git apply outside any repository: build/ is inside this one, where git
# apply would take paths as the repository's and skip the others.
apply_here() { GIT_CEILING_DIRECTORIES=$out git apply "$@"; }

# Each new file of series $1 as the patch that brings it adds it, into
# $out/intro/<series>/<patch>/<path>: the repository's file with the
# edits of every later patch to it taken back, the last patch first.
intro_files() {
	local s=$1 work=$out/intro/$1 patch files f p
	local -a inc
	rm -rf "$work"
	mkdir -p "$work/tree"
	series_entries "$s" > "$out/entries"
	while read -r patch files; do
		for f in $files; do
			[ -f "$top/$f" ] || die "patches/$s/series: $f (with $patch) does not exist"
			mkdir -p "$(dirname "$work/tree/$f")"
			cp -L "$top/$f" "$work/tree/$f"
		done
	done < "$out/entries"
	while read -r patch files; do
		p=$top/patches/$s/$patch
		[ -f "$p" ] || die "patches/$s/series lists $patch, which does not exist"
		inc=()
		while IFS= read -r f; do
			[ -f "$work/tree/$f" ] && inc+=("--include=$f")
		done < <(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$p")
		if [ ${#inc[@]} -gt 0 ] &&
		   ! (cd "$work/tree" && apply_here -R "${inc[@]}" "$p") 2> "$out/apply.log"; then
			cat "$out/apply.log" >&2
			die "patches/$s/$patch: its edits to ${inc[*]#--include=} do not come off the repository's files; refresh the patch against them"
		fi
		for f in $files; do
			mkdir -p "$(dirname "$work/$patch/$f")"
			mv "$work/tree/$f" "$work/$patch/$f"
		done
	done < <(tac "$out/entries")
}

# 2. Each series on its own branch from the base: one commit per patch.
commit_series() {
	local s=$1 patch files msg
	intro_files "$s"
	git_ checkout -q -f -B "$s" "$(series_base "$s")"
	git_ clean -q -fdx
	while read -r patch files; do
		local p=$top/patches/$s/$patch
		[ -f "$p" ] || die "patches/$s/series lists $patch, which does not exist"
		if grep -q '^diff --git' "$p"; then
			git_ apply --index --whitespace=nowarn "$p" 2> "$out/apply.log" ||
				{ cat "$out/apply.log" >&2; die "patches/$s/$patch does not apply to $base_desc"; }
		fi
		for f in $files; do
			[ -f "$top/$f" ] || die "patches/$s/series: $f (with $patch) does not exist"
			[ -e "$repo/$f" ] && die "patches/$s/series: $f (with $patch) is not new to the tree"
			mkdir -p "$(dirname "$repo/$f")"
			cp "$out/intro/$s/$patch/$f" "$repo/$f"
			# Keep the file mode (scripts are executable).
			[ -x "$top/$f" ] && chmod +x "$repo/$f"
			git_ add -f "$f"
		done
		git_ mailinfo -k "$out/msg" /dev/null < "$p" > "$out/info"
		subject=$(sed -n 's/^Subject: //p' "$out/info" | sed 's/^\[PATCH[^]]*\] *//')
		author=$(sed -n 's/^Author: //p' "$out/info")
		email=$(sed -n 's/^Email: //p' "$out/info")
		date=$(sed -n 's/^Date: //p' "$out/info")
		[ -n "$subject" ] || die "patches/$s/$patch has no Subject"
		{ echo "$subject"; echo; cat "$out/msg"; } > "$out/commit-msg"
		GIT_AUTHOR_NAME=$author GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date \
			GIT_COMMITTER_DATE=$date git_ commit -q --allow-empty -F "$out/commit-msg"
	done < <(series_entries "$s")
}

# 3. git format-patch, with the cover letter of patches/<series>/cover-letter.
format_series() {
	local s=$1 n
	local from
	from=$(series_base "$s")
	n=$(git_ rev-list --count "$from..$s")
	rm -rf "${out:?}/$s"
	mkdir -p "$out/$s"
	if [ "$n" -gt 1 ]; then
		[ -f "$top/patches/$s/cover-letter" ] ||
			die "patches/$s/cover-letter is missing (a series of $n patches has one)"
		{
			cat "$top/patches/$s/cover-letter"
			printf '\nThe series applies to %s.\n' "$base_desc"
		} > "$out/cover"
		git_ config "branch.$s.description" "$(cat "$out/cover")"
		git_ format-patch -q --cover-letter --cover-from-description=subject \
			--no-signature -o "$out/$s" "$from..$s" > /dev/null
	else
		git_ format-patch -q --no-signature -o "$out/$s" "$from..$s" > /dev/null
	fi
}

# 4. checkpatch.pl --strict on every patch, from the pristine repository:
# never from this repository's work tree, whose tracked .patch files it
# would read as source.
check_series() {
	local s=$1 p name msgs
	for p in "$out/$s"/0*.patch; do
		name=$(basename "$p")
		case "$name" in 0000-cover-letter.patch) continue ;; esac
		(cd "$repo" && perl scripts/checkpatch.pl --strict --no-tree --no-summary --terse \
			--show-types "$p" 2>&1) | sed "s|^$p:|$s/$name:|; s|^[^:]*/$name:|$s/$name:|" |
			grep -E '^[^ ]+: (ERROR|WARNING|CHECK):' >> "$out/checkpatch.txt" || true
	done
}

: > "$out/checkpatch.txt"
for s in $(series_list); do
	[ -f "$top/patches/$s/series" ] || die "patches/series names $s, but patches/$s/series does not exist"
	say "$s: committing $(series_entries "$s" | wc -l) patches onto $base_desc"
	commit_series "$s"
	format_series "$s"
	check_series "$s"
done
git_ checkout -q -f --detach base

# Every message checkpatch gives must be listed, with its reason, in
# patches/<series>/checkpatch as "<patch number> <TYPE>: <message>".
unlisted=0
while IFS= read -r line; do
	s=${line%%/*}
	key=$(echo "$line" | sed 's|^[^/]*/\([0-9]*\)-[^:]*:[0-9]*: |\1 |')
	if ! grep -qxF -- "$key" "$top/patches/$s/checkpatch" 2>/dev/null; then
		echo "  $line" >&2
		unlisted=$((unlisted + 1))
	fi
done < "$out/checkpatch.txt"
[ "$unlisted" = 0 ] ||
	die "checkpatch.pl --strict: $unlisted message(s) not listed in patches/<series>/checkpatch (above)"
# ... and every listed message is still given.
# (Keys into a file, not a pipe into grep -q: grep -q leaves at its first
# match, and under pipefail the writer's SIGPIPE would read as "not given".)
stale=0
for s in $(series_list); do
	[ -f "$top/patches/$s/checkpatch" ] || continue
	sed -n "s|^$s/\([0-9]*\)-[^:]*:[0-9]*: |\1 |p" "$out/checkpatch.txt" > "$out/checkpatch.$s.keys"
	while IFS= read -r key; do
		if ! grep -qxF -- "$key" "$out/checkpatch.$s.keys"; then
			echo "  $s: $key" >&2
			stale=$((stale + 1))
		fi
	done < <(grep '^[0-9]' "$top/patches/$s/checkpatch")
done
[ "$stale" = 0 ] ||
	die "patches/<series>/checkpatch lists $stale message(s) checkpatch.pl no longer gives (above)"

for s in $(series_list); do
	say "$s: $(find "$out/$s" -name '0*.patch' ! -name '0000-*' | wc -l) patches in build/series/$s/"
done
