#!/bin/bash
# make deb: Debian packages of bpfstash, built with Debian's tools, into
# build/deb/:
#
#   linux-image-<version>-bpfstash   the patched kernel (make bindeb-pkg),
#                                    and its linux-headers and linux-libc-dev
#   libbpfstash1, libbpfstash-dev,   debian/ of this repository (debhelper)
#   bpfstash-tools
#   bpfstash-perf                    the patched perf as /usr/bin/perf-bpfstash,
#                                    beside Debian's linux-perf (packaging/perf/)
#
#   scripts/build-deb.sh [--bench] [kernel] [tools] [perf]    (all three by default)
#   ARCH=arm64 scripts/build-deb.sh [kernel] [tools]           (make deb ARCH=arm64)
#
# ARCH (amd64 or arm64; this machine's by default) is the packages'
# architecture.  arm64 is cross-built the Debian way: the tools by
# dpkg-buildpackage -a arm64 against debian/control's Build-Depends
# installed as arm64 packages through dpkg's multiarch, the kernel by make
# ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- bindeb-pkg with Debian's own
# arm64 6.12 configuration (package linux-config-6.12:arm64, fetched into
# build/deb/ by apt-get download) and configs/deb-modules.arm64.
# scripts/deps.sh deb-arm64 installs what that needs.  bpfstash-perf is not
# made for arm64 yet, nor the bench kernel.  File names carry the
# architecture: the arm64 packages sit beside the amd64 ones.
#
# The kernel's configuration is Debian's own 6.12 amd64 one (package
# linux-config-6.12) with CONFIG_BPFSTASH=y, or KCONFIG=FILE (a .config,
# plain or xz-compressed, for example /boot/config-$(uname -r)).  Modules
# other than those of configs/deb-modules (what a QEMU guest needs, and
# what built-in security options need) are left out with make
# localmodconfig, which turns no built-in option off by itself: built-in
# options go only with the modules they exist for (build/deb/builtin.lost
# lists them).  The script stops if one of security/, kernel/bpf/, debug
# info and BTF, KASLR, mitigations, hardening or lockdown would go.  --bench packages the bench kernel
# (build/kernel-bench, make kernel-bench) instead, as make check does to
# stay within its time.
#
# Bad input stops the build with a message naming the file or the option:
# a KCONFIG that does not exist or is not a kernel configuration, or one
# without what bpfstash needs (BPF_SYSCALL, BPF_JIT, PERF_EVENTS).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
tree=$top/build/linux
jobs=${JOBS:-$(nproc)}
flavour=debian
kconfig=${KCONFIG:-}
what=()
# ARCH is the packages' Debian architecture here; the kernel's own make
# variable of the same name is given explicitly where it applies.
host=$(dpkg --print-architecture)
arch=${ARCH:-$host}
unset ARCH

say() { echo "deb: $*" >&2; }
die() { echo "deb: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--bench) flavour=bench; shift ;;
	kernel|tools|perf) what+=("$1"); shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
case "$arch" in
amd64|x86_64|x86) arch=amd64 ;;
arm64|aarch64) arch=arm64 ;;
*) die "ARCH=$arch: amd64 or arm64" ;;
esac
# cross: dpkg-buildpackage's -a and the kernel's CROSS_COMPILE, when the
# packages are not this machine's architecture.
cross=""
if [ "$arch" != "$host" ]; then
	[ "$arch" = arm64 ] && [ "$host" = amd64 ] ||
		die "ARCH=$arch on $host: only arm64 is cross-built (on amd64)"
	cross=aarch64-linux-gnu-
fi
if [ "$arch" = arm64 ]; then
	[ ${#what[@]} -gt 0 ] || what=(kernel tools)
	for w in "${what[@]}"; do
		[ "$w" != perf ] || die "bpfstash-perf for arm64: not yet (ARCH=arm64 makes kernel and tools)"
	done
	[ "$flavour" != bench ] || die "--bench: the bench kernel is amd64's; not for ARCH=arm64"
fi
[ ${#what[@]} -gt 0 ] || what=(kernel tools perf)
mkdir -p "$out"

# Cross-building needs arm64 in dpkg's architectures, the cross compiler
# and the arm64 Build-Depends (the kernel's libssl-dev:arm64 is one).
if [ -n "$cross" ]; then
	dpkg --print-foreign-architectures | grep -qx "$arch" &&
		command -v "${cross}gcc" > /dev/null &&
		dpkg-checkbuilddeps -a "$arch" "$top/debian/control" 2> /dev/null ||
		die "ARCH=$arch: multiarch, ${cross}gcc or arm64 Build-Depends missing: run scripts/deps.sh deb-arm64"
fi

version() { sed -n 's/^bpfstash (\([^)]*\)).*/\1/p' "$top/debian/changelog" | head -n 1; }

# The repository's files as git sees them (tracked or not ignored), in a
# source directory of their own: dpkg-buildpackage writes next to it.
tools() {
	local sdir=$out/src${cross:+-$arch} log=tools${cross:+-$arch} src t0
	src=$sdir/bpfstash-$(version)
	t0=$(date +%s)
	say "bpfstash $(version): libbpfstash1, libbpfstash-dev, bpfstash-tools for $arch \
(dpkg-buildpackage${cross:+ -a $arch})"
	rm -rf "$sdir"
	mkdir -p "$src"
	(cd "$top" && git ls-files -co --exclude-standard | grep -v '^build/' |
		while read -r f; do [ -e "$f" ] && printf '%s\n' "$f"; done) |
		rsync -a --files-from=- "$top/" "$src/"
	if ! (cd "$src" && dpkg-buildpackage ${cross:+-a "$arch"} -b -us -uc) > "$out/$log.log" 2>&1; then
		tail -n 30 "$out/$log.log" >&2
		die "dpkg-buildpackage failed (build/deb/$log.log)"
	fi
	rm -f "$out"/libbpfstash*_"$arch".deb "$out"/bpfstash-tools*_"$arch".deb
	mv "$sdir"/*.deb "$out/"
	mv "$sdir"/*.buildinfo "$sdir"/*.changes "$out/" 2>/dev/null || true
	lint bpfstash${cross:+-$arch} "$out"/libbpfstash1_*_"$arch".deb "$out"/libbpfstash-dev_*_"$arch".deb \
		"$out"/bpfstash-tools_*_"$arch".deb
	say "tools: $(($(date +%s) - t0)) s"
}

# lintian on packages (the -dbgsym ones, which debhelper makes, aside);
# what it says is kept in build/deb/lintian-<name>.txt.
lint() {
	local name=$1 log
	shift
	log=$out/lintian-$name.txt
	if ! lintian --fail-on error,warning "$@" > "$log" 2>&1; then
		grep -v '^running with root' "$log" >&2
		die "lintian: errors or warnings (above; build/deb/lintian-$name.txt)"
	fi
	say "lintian $name: no error or warning; $(grep -c '^[IPX]:' "$log") notes, \
$(grep -c '^N: \|overridden' "$log" || true) overridden"
}

# perf, from the prepared tree, as a source package of its own.
perf() {
	local t0 ver src
	t0=$(date +%s)
	"$top/scripts/prepare-tree.sh"
	ver=$(make -s -C "$tree" kernelversion)+bpfstash$(version)
	src=$out/perf-src/bpfstash-perf-$ver
	say "bpfstash-perf $ver: perf of build/linux as /usr/bin/perf-bpfstash (dpkg-buildpackage)"
	rm -rf "$out/perf-src"
	mkdir -p "$src"
	cp -r "$top/packaging/perf/debian" "$src/"
	sed -i "s/@VERSION@/$ver/" "$src/debian/changelog"
	# perf is built as make perf builds it, in the same directory: only
	# what changed is compiled.
	if ! (cd "$src" && BPFSTASH_TREE=$tree BPFSTASH_PERF_OBJ=$top/build/perf JOBS=$jobs \
		dpkg-buildpackage -b -us -uc) \
		> "$out/perf.log" 2>&1; then
		tail -n 30 "$out/perf.log" >&2
		die "dpkg-buildpackage of bpfstash-perf failed (build/deb/perf.log)"
	fi
	rm -f "$out"/bpfstash-perf_*.deb
	mv "$out"/perf-src/*.deb "$out/"
	mv "$out"/perf-src/*.buildinfo "$out"/perf-src/*.changes "$out/" 2>/dev/null || true
	lint bpfstash-perf "$out"/bpfstash-perf_"$ver"_*.deb
	say "perf: $(($(date +%s) - t0)) s"
}

# A configuration's value of CONFIG_@2, from file @1.
cfg() { sed -n "s/^CONFIG_$2=\\(.*\\)/\\1/p" "$1"; }

kernel() {
	local obj t0 base cc kv a mods kmake cfgdeb
	t0=$(date +%s)
	if [ "$flavour" = bench ]; then
		JOBS=$jobs "$top/scripts/build-kernel.sh" bench bindeb-pkg
		say "kernel (bench configuration): $(($(date +%s) - t0)) s"
		return
	fi
	"$top/scripts/prepare-tree.sh"
	# a: the suffix of this architecture's files in build/deb (none for
	# amd64's); kmake: make in the tree for this architecture.
	a=${cross:+-$arch}
	obj=$out/kernel$a
	mods=$top/configs/deb-modules
	kmake=(make -C "$tree" O="$obj")
	if [ "$arch" = arm64 ]; then
		mods=$top/configs/deb-modules.arm64
		kmake+=(ARCH=arm64 ${cross:+CROSS_COMPILE=$cross})
	fi
	if [ "$arch" = arm64 ] && [ -z "$kconfig" ]; then
		# Debian's arm64 configuration, from its package for arm64 (the
		# amd64 one has amd64's alone).
		cfgdeb=$(ls "$out"/linux-config-6.12_*_arm64.deb 2> /dev/null | tail -n 1)
		if [ -z "$cfgdeb" ]; then
			say "apt-get download linux-config-6.12:arm64 (into build/deb)"
			(cd "$out" && apt-get download -q linux-config-6.12:arm64) > "$out/linux-config-arm64.log" 2>&1 ||
				die "apt-get download linux-config-6.12:arm64 failed (build/deb/linux-config-arm64.log; \
scripts/deps.sh deb-arm64 adds arm64 to dpkg and apt)"
			cfgdeb=$(ls "$out"/linux-config-6.12_*_arm64.deb | tail -n 1)
		fi
		rm -rf "$out/linux-config-arm64"
		dpkg-deb -x "$cfgdeb" "$out/linux-config-arm64"
		kconfig=$out/linux-config-arm64/usr/src/linux-config-6.12/config.arm64_none_arm64.xz
	fi
	kconfig=${kconfig:-/usr/src/linux-config-6.12/config.amd64_none_amd64.xz}
	[ -f "$kconfig" ] || die "KCONFIG=$kconfig: no such file \
(Debian's configuration is in the package linux-config-6.12)"
	base=$out/kernel$a-base.config
	case "$kconfig" in
	*.xz) xzcat "$kconfig" > "$base" 2> /dev/null || die "KCONFIG=$kconfig: not xz-compressed" ;;
	*) cp "$kconfig" "$base" ;;
	esac
	grep -q '^CONFIG_[A-Z0-9_]*=' "$base" ||
		die "KCONFIG=$kconfig: not a kernel configuration (no CONFIG_ line)"
	for o in BPF_SYSCALL BPF_JIT PERF_EVENTS; do
		[ "$(cfg "$base" $o)" = y ] ||
			die "KCONFIG=$kconfig: CONFIG_$o is not =y, and bpfstash needs it"
	done
	mkdir -p "$obj"
	cp "$base" "$obj/.config"
	# Debian's signing certificates are not in the source; the modules are
	# still signed, with a key made for this build (MODULE_SIG_KEY's default).
	"$tree/scripts/config" --file "$obj/.config" --enable BPFSTASH \
		--set-str LOCALVERSION -bpfstash \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
	"${kmake[@]}" -s olddefconfig > /dev/null
	# Only the modules of configs/deb-modules (a QEMU guest's); make
	# localmodconfig turns others off and leaves built-in options alone.
	grep -v '^[[:space:]]*\(#\|$\)' "$mods" |
		awk '{ print $1, 0, 0, "-" }' > "$out/lsmod$a"
	"${kmake[@]}" -s LSMOD="$out/lsmod$a" localmodconfig > "$out/localmodconfig$a.log" 2>&1 ||
		{ tail "$out/localmodconfig$a.log" >&2; die "make localmodconfig failed"; }
	# Built-in options.  localmodconfig only turns modules off; a built-in
	# option goes only with the modules it exists for (a driver's
	# sub-options, a helper library they select).  Those that make the
	# kernel what it is stay, every one: everything defined in security/
	# and kernel/bpf/, debug info and BTF, KASLR, mitigations, hardening,
	# module signing, lockdown.
	grep '^CONFIG_[A-Z0-9_]*=y$' "$base" | sort > "$out/builtin$a.before"
	grep '^CONFIG_[A-Z0-9_]*=y$' "$obj/.config" | sort > "$out/builtin$a.after"
	# Sorted again without "=y" for join (FOO2=y sorts before FOO=y).
	comm -23 "$out/builtin$a.before" "$out/builtin$a.after" | sed 's/^CONFIG_\(.*\)=y$/\1/' |
		sort > "$out/builtin$a.lost"
	(cd "$tree" && grep -rn --include='Kconfig*' -E '^[[:space:]]*(menu)?config [A-Z0-9_]+' . |
		sed -E 's|^\./([^:]*):[0-9]+:[[:space:]]*(menu)?config ([A-Z0-9_]+).*|\3 \1|' |
		sort -u -k1,1) > "$out/kconfig-index$a"
	join "$out/builtin$a.lost" "$out/kconfig-index$a" |
		awk '$2 ~ /^(security\/|kernel\/bpf\/|lib\/Kconfig\.debug)/ ||
		     $1 ~ /^(SECURITY|LSM|BPF|DEBUG_INFO|RANDOMIZE_|MITIGATION_|STACKPROTECTOR|HARDENED_|INIT_ON_|FORTIFY|MODULE_SIG|LOCK_DOWN|SLAB_FREELIST|PAGE_TABLE_ISOLATION|RETPOLINE|STRICT_|UNMAP_KERNEL_AT_EL0|ARM64_(PTR_AUTH|BTI|MTE|E0PD))/' \
		> "$out/builtin$a.lost-core"
	if [ -s "$out/builtin$a.lost-core" ]; then
		sed 's/^/  CONFIG_/' "$out/builtin$a.lost-core" >&2
		die "trimming the modules would turn off these built-in options of $kconfig (above): \
keep the modules they need in configs/${mods##*/}"
	fi
	for o in SECURITY_LOCKDOWN_LSM DEBUG_INFO_BTF BPF_JIT_ALWAYS_ON BPF_UNPRIV_DEFAULT_OFF RANDOMIZE_BASE; do
		[ "$(cfg "$base" $o)" != y ] || [ "$(cfg "$obj/.config" $o)" = y ] ||
			die "CONFIG_$o of $kconfig did not stay"
	done
	[ "$(cfg "$obj/.config" BPFSTASH)" = y ] ||
		die "CONFIG_BPFSTASH is not set in the result: one of its dependencies is missing"
	say "kernel ($arch): $kconfig + CONFIG_BPFSTASH: $(grep -c '=y$' "$obj/.config") built-in \
options (of its $(grep -c . "$out/builtin$a.before"); $(grep -c . "$out/builtin$a.lost") went with the \
modules left out, none of security/, kernel/bpf/, debug info, KASLR, mitigations or hardening: \
build/deb/builtin$a.lost), $(grep -c '=m$' "$obj/.config") modules; make bindeb-pkg -j$jobs"
	cc=${cross}gcc
	command -v ccache > /dev/null && cc="ccache ${cross}gcc"
	kv=$(make -s -C "$tree" kernelversion)
	rm -f "$out"/linux-image-*_"$arch".deb "$out"/linux-headers-*_"$arch".deb \
		"$out"/linux-libc-dev_*_"$arch".deb
	# No -dbg package: vmlinux with its debug info stays in build/deb/kernel$a.
	if ! DEB_BUILD_PROFILES=pkg.linux-upstream.nokerneldbg \
		"${kmake[@]}" -j"$jobs" CC="$cc" KBUILD_BUILD_USER=bpfstash \
		KBUILD_BUILD_HOST=build KDEB_PKGVERSION="$kv-1+bpfstash.debian" \
		bindeb-pkg > "$out/kernel$a.log" 2>&1; then
		grep -E ': error:|\*\*\*' "$out/kernel$a.log" | head -n 10 >&2
		die "make bindeb-pkg failed (build/deb/kernel$a.log)"
	fi
	rm -f "$out"/linux-upstream_*_"$arch".*
	say "kernel: $(($(date +%s) - t0)) s: $(cd "$out" && ls linux-image-*_"$arch".deb)"
}

for w in "${what[@]}"; do
	"$w"
done
ls -l "$out"/*_"$arch".deb
