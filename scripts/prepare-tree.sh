#!/bin/sh
# Prepare the Linux 6.12 tree that bpfstash builds against:
#
#   1. unpack Debian's /usr/src/linux-source-6.12.tar.xz into build/linux
#      (once) and record the exact base version in build/linux/.bpfstash-base;
#   2. apply patches/series, the edits to existing kernel files;
#   3. link the overlay (this repository's new files, at their kernel paths)
#      into the tree, so that editing a file here rebuilds incrementally.
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

# 2. Patches.  build/linux/.bpfstash-applied holds copies of what is applied.
new_series=$(grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/series" || true)
old_series=$(cat "$applied/series")

# The first patch that differs from what is applied, as a 1-based index.
first_diff=1
for p in $new_series; do
	set -- $old_series
	[ $# -ge $first_diff ] || break
	eval old=\${$first_diff}
	[ "$old" = "$p" ] || break
	cmp -s "$top/patches/$p" "$applied/$p" || break
	first_diff=$((first_diff + 1))
done
n_old=$(echo "$old_series" | grep -c . || true)
n_new=$(echo "$new_series" | grep -c . || true)

if [ "$first_diff" -le "$n_old" ]; then
	# Revert applied patches from the last down to first_diff.
	for p in $(echo "$old_series" | sed -n "$first_diff,\$p" | tac); do
		say "reverting $p"
		patch -d "$tree" -p1 -R -s --batch --no-backup-if-mismatch \
			< "$applied/$p" ||
			die "cannot revert $p; remove build/linux to start over"
		rm -f "$applied/$p"
	done
	echo "$old_series" | sed -n "1,$((first_diff - 1))p" > "$applied/series"
fi

if [ "$first_diff" -le "$n_new" ]; then
	for p in $(echo "$new_series" | sed -n "$first_diff,\$p"); do
		[ -f "$top/patches/$p" ] || die "patches/series lists $p, which does not exist"
		say "applying $p"
		if ! patch -d "$tree" -p1 -s --batch --forward --dry-run \
			< "$top/patches/$p" > "$top/build/patch.log" 2>&1; then
			cat "$top/build/patch.log" >&2
			die "patches/$p does not apply to $(cat "$tree/.bpfstash-base").
The kernel context it expects has moved; refresh the patch against this base."
		fi
		patch -d "$tree" -p1 -s --batch --forward --no-backup-if-mismatch \
			< "$top/patches/$p"
		cp "$top/patches/$p" "$applied/$p"
		echo "$p" >> "$applied/series"
	done
fi

# 3. Overlay.  Every file under these directories of the repository is new
# to the kernel and is linked into the tree at the same path.  The top-level
# Kconfig, where the feature's symbols are defined, becomes fs/bpfstash/Kconfig.
link() {
	# $1: repository file, $2: path in the tree
	if [ "$(readlink "$tree/$2" 2>/dev/null)" != "$1" ]; then
		[ -e "$tree/$2" ] && [ ! -L "$tree/$2" ] &&
			die "overlay file $2 would replace a file of the kernel tree"
		mkdir -p "$(dirname "$tree/$2")"
		ln -sfn "$1" "$tree/$2"
	fi
}
for dir in fs/bpfstash kernel/bpf include/linux include/uapi/linux Documentation tools/lib/bpfstash; do
	[ -d "$top/$dir" ] || continue
	(cd "$top" && find "$dir" -type f ! -name '*.o' ! -name '.*' ! -name '*.cmd' ! -name '*.a' ! -name '*.so*') |
	while read -r f; do
		link "$top/$f" "$f"
	done
done
link "$top/Kconfig" fs/bpfstash/Kconfig

# Drop links to overlay files that no longer exist in the repository.
find "$tree/fs" "$tree/kernel" "$tree/include" "$tree/Documentation" "$tree/tools/lib" -type l 2>/dev/null |
while read -r l; do
	case "$(readlink "$l")" in
	"$top"/*) [ -e "$l" ] || { say "removing stale link ${l#"$tree"/}"; rm -f "$l"; } ;;
	esac
done
exit 0
