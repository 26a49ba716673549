#!/bin/sh
# Build one of the bpfstash test kernels from the prepared tree:
#
#   scripts/build-kernel.sh debug   correctness kernel (KASAN, lockdep, ...)
#   scripts/build-kernel.sh bench   benchmark kernel, no debug options
#   scripts/build-kernel.sh base    the bench kernel's config on the pristine
#                                   6.12 source, without bpfstash (for the
#                                   zero-cost-when-unused comparison)
#   scripts/build-kernel.sh um      the pristine 6.12 as user-mode Linux
#                                   (ARCH=um, build/kernel-um/linux): its
#                                   verifier at the host CPU's own speed
#   scripts/build-kernel.sh arm64   the debug kernel for arm64, cross-built
#                                   (aarch64-linux-gnu-gcc), for
#                                   qemu-system-aarch64 -M virt
#   scripts/build-kernel.sh arm64-bench
#                                   the bench kernel for arm64 with KUnit's
#                                   benchmark of the load hook built in
#                                   (BENCH_PROGS=DIR, bench/hook-arm64.sh)
#   scripts/build-kernel.sh FLAVOUR bindeb-pkg
#                                   then a Debian package of it (make
#                                   bindeb-pkg) in build/deb/
#
# The kernel is configured from allnoconfig plus configs/base.config, the
# architecture's configs/x86.config or configs/arm64.config, and
# configs/<flavour>.config (arm64: debug.config; um: ARCH=um's defconfig
# plus configs/um.config),
# and every option of the fragments is checked in the final .config:
# Kconfig silently drops an option whose dependencies are missing.
# Objects go to build/kernel-<flavour>, so both kernels share one
# source tree and each rebuilds incrementally.  Compiles go through ccache.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:?usage: build-kernel.sh debug|bench|base|um|arm64|arm64-bench [bindeb-pkg]}
action=${2:-}
tree=${BPFSTASH_TREE:-$top/build/linux}
out=${BPFSTASH_KOUT:-$top/build/kernel-$flavour}
jobs=${JOBS:-$(nproc)}

die() { echo "build-kernel: $*" >&2; exit 1; }
say() { echo "build-kernel: $*" >&2; }

config=$flavour
arch=
archfrag=x86
cross=
target=bzImage
image=arch/x86/boot/bzImage
case $flavour in
um)	arch=um
	target=linux
	image=linux ;;
arm64)	arch=arm64
	archfrag=arm64
	config=debug
	cross=aarch64-linux-gnu-
	command -v ${cross}gcc > /dev/null ||
		die "${cross}gcc not found; run scripts/deps.sh (package gcc-aarch64-linux-gnu)"
	target=Image
	image=arch/arm64/boot/Image ;;
arm64-bench)
	# The arm64 bench kernel with KUnit's benchmark of the load hook built
	# in, run at boot (bench/hook-arm64.sh): its programs are the entries
	# in BENCH_PROGS (a directory, as bench/hook-kunit.sh makes).
	arch=arm64
	archfrag=arm64
	config=bench
	cross=aarch64-linux-gnu-
	command -v ${cross}gcc > /dev/null ||
		die "${cross}gcc not found; run scripts/deps.sh (package gcc-aarch64-linux-gnu)"
	[ -d "${BENCH_PROGS:-}" ] || die "BENCH_PROGS: no directory of captured programs (bench/hook-arm64.sh makes it)"
	target=Image
	image=arch/arm64/boot/Image ;;
esac
if [ "$flavour" = base ] || [ "$flavour" = um ]; then
	# Debian's source as shipped: no bpfstash, no overlay (um: one fix
	# of user-mode Linux itself, below).
	tree=$top/build/linux-pristine
	[ "$flavour" = base ] && config=bench
	if [ ! -f "$tree/Makefile" ]; then
		say "unpacking a pristine tree into build/linux-pristine"
		rm -rf "$tree" "$tree.tmp"
		mkdir -p "$tree.tmp"
		tar -xf /usr/src/linux-source-6.12.tar.xz -C "$tree.tmp"
		mv "$tree.tmp"/* "$tree"
		rmdir "$tree.tmp"
	fi
fi
if [ "$flavour" = um ]; then
	# One fix of user-mode Linux itself, without which no process runs
	# in it on a host with AMX (bench/uml-xstate.patch).  It touches
	# only arch/x86/um, which the base kernel never compiles.
	fix=$top/bench/uml-xstate.patch
	if ! patch -d "$tree" -p1 -R -s -f --dry-run < "$fix" > /dev/null 2>&1; then
		say "applying ${fix#"$top"/} to build/linux-pristine"
		patch -d "$tree" -p1 -s -f -N < "$fix" > /dev/null ||
			die "${fix#"$top"/} does not apply to build/linux-pristine"
	fi
fi

[ -f "$top/configs/$config.config" ] || die "no configs/$config.config"
[ -f "$tree/Makefile" ] || die "$tree is not prepared; run scripts/prepare-tree.sh"

cc=${cross}gcc
command -v ccache >/dev/null 2>&1 && cc="ccache ${cross}gcc"
# What a cross build adds to every make of the tree (no spaces inside).
xvars=${cross:+ARCH=$arch CROSS_COMPILE=$cross}
# Fixed build metadata so that ccache hits survive a rebuild of init/version.c.
export KBUILD_BUILD_TIMESTAMP="1970-01-01" KBUILD_BUILD_USER=bpfstash KBUILD_BUILD_HOST=build

mkdir -p "$out"
# One build per output directory at a time: two makes in one O= dir corrupt it.
exec 9> "$out/.build-lock"
if ! flock -n 9; then
	say "another build of ${out#"$top"/} is running; waiting for it"
	flock 9
fi
frags="$top/configs/base.config $top/configs/$archfrag.config $top/configs/$config.config"
[ "$flavour" = um ] && frags=$top/configs/$config.config
if [ "$flavour" = arm64-bench ]; then
	# configs/kunit-bench.kunitconfig's options, with the programs' path,
	# run at boot (allnoconfig leaves KUnit disabled there).
	{
		grep '^CONFIG_' "$top/configs/kunit-bench.kunitconfig"
		echo "CONFIG_KUNIT_DEFAULT_ENABLED=y"
		echo "CONFIG_BPFSTASH_KUNIT_BENCH_PROGS=\"$BENCH_PROGS\""
	} > "$out/kunit-bench.config"
	frags="$frags $out/kunit-bench.config"
fi
if [ "$flavour" = base ]; then
	grep -hv BPFSTASH $frags > "$out/fragments.config"
	frags=$out/fragments.config
fi
stamp=$(cat $frags | sha256sum | cut -c1-16)
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.bpfstash-config" 2>/dev/null)" != "$stamp" ]; then
	say "configuring $flavour kernel in ${out#"$top"/}"
	if [ "$flavour" = um ]; then
		make -s -C "$tree" O="$out" ARCH="$arch" CC="$cc" defconfig
		# The fragment's options replace defconfig's (no "override" noise).
		for opt in $(grep -ho '^CONFIG_[A-Z0-9_]*' $frags); do
			sed -i "/^$opt=/d; /^# $opt is not set/d" "$out/.config"
		done
		cat $frags >> "$out/.config"
		make -s -C "$tree" O="$out" ARCH="$arch" CC="$cc" olddefconfig
	else
		cat $frags > "$out/allno.config"
		make -s -C "$tree" O="$out" $xvars CC="$cc" KCONFIG_ALLCONFIG="$out/allno.config" \
			allnoconfig
	fi
	# Every option the fragments ask for must have survived.
	bad=0
	for line in $(grep -h '^CONFIG_' $frags); do
		opt=${line%%=*}
		want=${line#*=}
		if [ "$want" = n ]; then
			if grep -q "^$opt=" "$out/.config"; then
				say "$opt: asked n, got $(grep "^$opt=" "$out/.config")"
				bad=1
			fi
		elif ! grep -qx "$opt=$want" "$out/.config"; then
			say "$opt: asked $want, got $(grep "^$opt=\|^# $opt " "$out/.config" || echo 'not set (missing dependency?)')"
			bad=1
		fi
	done
	[ "$bad" = 0 ] || die "the $flavour config fragment did not apply; see above"
	echo "$stamp" > "$out/.bpfstash-config"
fi

say "building $flavour kernel (-j$jobs; about 8 min cold, seconds when little changed)"
start=$(date +%s)
if ! make -s -C "$tree" O="$out" ${arch:+ARCH=$arch} ${cross:+CROSS_COMPILE=$cross} CC="$cc" \
	-j"$jobs" $target > "$out/build.log" 2>&1; then
	grep -E 'error|Error|warning:' "$out/build.log" | head -50 >&2
	die "kernel build failed; full log in ${out#"$top"/}/build.log"
fi
grep -E 'warning:' "$out/build.log" | grep -E 'bpfstash|stash\.c' >&2 || true
say "$flavour kernel ready: ${out#"$top"/}/$image ($(($(date +%s) - start)) s)"

# A Debian package of this kernel, built by the kernel's own bindeb-pkg
# with the same make variables (nothing is rebuilt), into build/deb/.
if [ "$action" = bindeb-pkg ]; then
	deb=$top/build/deb
	mkdir -p "$deb"
	kv=$(make -s -C "$tree" kernelversion)
	rm -f "$out"/../linux-*"$kv"*bpfstash*.deb
	say "packaging the $flavour kernel (make bindeb-pkg)"
	# No linux-headers (the kernel has no modules to build against) and no
	# -dbg package (vmlinux is in ${out#"$top"/}).
	if ! DEB_BUILD_PROFILES="pkg.linux-upstream.nokernelheaders pkg.linux-upstream.nokerneldbg" \
		make -s -C "$tree" O="$out" ${arch:+ARCH=$arch} CC="$cc" -j"$jobs" \
		KDEB_PKGVERSION="$kv-1+bpfstash.$flavour" bindeb-pkg > "$out/deb.log" 2>&1; then
		tail -n 20 "$out/deb.log" >&2
		die "make bindeb-pkg failed; full log in ${out#"$top"/}/deb.log"
	fi
	# This architecture's earlier packages (make deb ARCH=arm64's stay).
	debarch=amd64
	[ "$arch" = arm64 ] && debarch=arm64
	rm -f "$deb"/linux-image-*_$debarch.deb "$deb"/linux-libc-dev_*_$debarch.deb
	mv "$out"/../linux-image-*.deb "$out"/../linux-libc-dev_*.deb "$deb/"
	rm -f "$out"/../linux-upstream_*
	say "$(cd "$deb" && ls linux-image-*.deb)"
fi