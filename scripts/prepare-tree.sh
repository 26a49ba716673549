#!/bin/sh
# Prepare the Linux 6.12 tree that bpfstash builds against:
#
#   1. unpack Debian's /usr/src/linux-source-6.12.tar.xz into build/linux
#      (once) and record the exact base version in build/linux/.bpfstash-base;
#   2. apply the series of patches/series, in order: their edits to files
#      of the 6.12 tree (a patch's edits to the series' new files are
#      left out: those files are linked as the series leaves them);
#   3. link the new files each series lists (real files of this
#      repository, at their kernel paths) into the tree, so that editing a
#      file here rebuilds incrementally.
#
# scripts/make-series.sh makes git commits of the same patches and files,
# and make check proves that git am of them gives this very tree.
#
# Idempotent: a second run with nothing changed does nothing.  When the
# series changes, only the patches from the first changed one onwards are
# reverted and re-applied, so that only the files they touch are rebuilt.
# A patch that does not apply (for example because Debian moved to a newer
# 6.12.y and the context changed) stops the run with the rejected hunks.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${BPFSTASH_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
tree=$top/build/linux
applied=$tree/.bpfstash-applied

die() { echo "prepare-tree: $*" >&2; exit 1; }
say() { echo "prepare-tree: $*" >&2; }

[ -f "$tarball" ] || die "$tarball not found; run scripts/deps.sh (package linux-source-6.12)"

# One preparation at a time: a second one waits, then finds nothing to do.
mkdir -p "$top/build"
exec 8> "$top/build/.prepare-lock"
flock 8

# 1. Unpack.
if [ ! -f "$tree/.bpfstash-base" ]; then
	say "unpacking $tarball (about 15 s)"
	rm -rf "$top/build/linux.tmp" "$tree"
	mkdir -p "$top/build/linux.tmp"
	tar -xf "$tarball" -C "$top/build/linux.tmp"
	src=$(find "$top/build/linux.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -f "$src/Makefile" ] || die "$tarball does not hold a kernel tree"
	mv "$src" "$tree"
	rmdir "$top/build/linux.tmp"
	kv=$(make -s -C "$tree" kernelversion)
	case "$kv" in
	6.12|6.12.*) ;;
	*) die "base is Linux $kv, but bpfstash supports $(sed -n 's/^Linux-Base: *//p' "$top/META")" ;;
	esac
	pkg=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	printf 'Linux %s (Debian linux-source-6.12 %s)\n' "$kv" "$pkg" > "$tree/.bpfstash-base"
	mkdir -p "$applied"
	: > "$applied/series"
	say "base: $(cat "$tree/.bpfstash-base")"
fi

# 2. Patches.  build/linux/.bpfstash-applied holds copies of what is
# applied, as <series>/<patch>.
series_dirs=$(grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/series" || true)
for s in $series_dirs; do
	[ -f "$top/patches/$s/series" ] ||
		die "patches/series names $s, but patches/$s/series does not exist"
done
# Patches are the unindented lines of patches/<series>/series, new files
# the indented ones.
new_series=$(for s in $series_dirs; do
	grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/$s/series" | grep -v '^[[:space:]]' |
		sed "s|^|$s/|"
done)
new_files=$(for s in $series_dirs; do
	grep '^[[:space:]]' "$top/patches/$s/series" | grep -v '^[[:space:]]*\(#\|$\)' |
		sed 's/^[[:space:]]*//'
done)
old_series=$(cat "$applied/series")

# Patch $1 without its edits to the new files, into $2.
own_edits() {
	echo "$new_files" | awk 'NR == FNR { if ($0 != "") skip[$0] = 1; next }
		/^diff --git a\// { path = $3; sub(/^a\//, "", path); drop = (path in skip) }
		!drop' - "$1" > "$2"
}
filtered=$top/build/patch.own

# The first patch that differs from what is applied, as a 1-based index.
first_diff=1
for p in $new_series; do
	set -- $old_series
	[ $# -ge $first_diff ] || break
	eval old=\${$first_diff}
	[ "$old" = "$p" ] || break
	own_edits "$top/patches/$p" "$filtered"
	cmp -s "$filtered" "$applied/$p" || break
	first_diff=$((first_diff + 1))
done
n_old=$(echo "$old_series" | grep -c . || true)
n_new=$(echo "$new_series" | grep -c . || true)

# patch(1) on the tree, unless the patch holds no edit for it (a patch
# that only edits new files): patch would call that garbage.
patch_tree() {
	_p=$1
	shift
	grep -q '^+++ ' "$_p" || return 0
	patch -d "$tree" -p1 "$@" < "$_p"
}

# Files a patch touches ("+++ b/path" lines).
touched() { sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1"; }

# A file that the patches re-applied leave as it was keeps its time
# stamp, so that a reordered or reworded series rebuilds nothing: its
# mtime and checksum are kept across the revert.
stamps=$top/build/.prepare-stamps
: > "$stamps"

if [ "$first_diff" -le "$n_old" ]; then
	for p in $(echo "$old_series" | sed -n "$first_diff,\$p"); do
		for f in $(touched "$applied/$p"); do
			[ -f "$tree/$f" ] && [ ! -L "$tree/$f" ] &&
				echo "$(stat -c %Y "$tree/$f") $(md5sum < "$tree/$f" | cut -c1-32) $f"
		done
	done | sort -u -k3,3 > "$stamps"
	# Revert applied patches from the last down to first_diff.
	for p in $(echo "$old_series" | sed -n "$first_diff,\$p" | tac); do
		say "reverting $p"
		patch_tree "$applied/$p" -R -s --batch --no-backup-if-mismatch ||
			die "cannot revert $p; remove build/linux to start over"
		rm -f "$applied/$p"
	done
	# (sed -n 1,0p would print line 1: nothing is kept when first_diff is 1.)
	echo "$old_series" | head -n "$((first_diff - 1))" > "$applied/series"
fi

if [ "$first_diff" -le "$n_new" ]; then
	for p in $(echo "$new_series" | sed -n "$first_diff,\$p"); do
		[ -f "$top/patches/$p" ] ||
			die "patches/${p%%/*}/series lists ${p#*/}, which does not exist"
		say "applying $p"
		own_edits "$top/patches/$p" "$filtered"
		if ! patch_tree "$filtered" -s --batch --forward --dry-run \
			> "$top/build/patch.log" 2>&1; then
			cat "$top/build/patch.log" >&2
			die "patches/$p does not apply to $(cat "$tree/.bpfstash-base").
The kernel context it expects has moved; refresh the patch against this base."
		fi
		patch_tree "$filtered" -s --batch --forward --no-backup-if-mismatch
		mkdir -p "$(dirname "$applied/$p")"
		cp "$filtered" "$applied/$p"
		echo "$p" >> "$applied/series"
	done
fi

while read -r mtime sum f; do
	[ -f "$tree/$f" ] && [ "$(md5sum < "$tree/$f" | cut -c1-32)" = "$sum" ] &&
		touch -d "@$mtime" "$tree/$f"
done < "$stamps"
rm -f "$stamps"

# 3. New files: every file the series list, linked at its path.
link() {
	# $1: repository file, $2: path in the tree
	if [ "$(readlink "$tree/$2" 2>/dev/null)" != "$1" ]; then
		[ -e "$tree/$2" ] && [ ! -L "$tree/$2" ] &&
			die "new file $2 would replace a file of the kernel tree"
		mkdir -p "$(dirname "$tree/$2")"
		ln -sfn "$1" "$tree/$2"
	fi
}
for f in $new_files; do
	[ -f "$top/$f" ] || die "a series lists $f, which does not exist in the repository"
	link "$top/$f" "$f"
done

# Drop links to files of this repository that no series lists any more.
find "$tree" -path "$tree/.git" -prune -o -type l -print 2>/dev/null |
while read -r l; do
	case "$(readlink "$l")" in
	"$top"/*)
		rel=${l#"$tree"/}
		echo "$new_files" | grep -qxF "$rel" ||
			{ say "removing stale link $rel"; rm -f "$l"; } ;;
	esac
done
exit 0
