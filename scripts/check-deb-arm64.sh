#!/bin/bash
# The arm64 install test: the arm64 packages of build/deb/ (make deb
# ARCH=arm64) installed by dpkg into a Debian 12 arm64 system, whose arm64
# programs run on this amd64 machine through qemu-user-static and
# binfmt_misc (scripts/deps.sh deb-arm64 installs them).
#
#   scripts/check-deb-arm64.sh [--no-boot]        (make deb-check-arm64)
#
#   1. mmdebstrap --arch=arm64 makes a minimal bookworm system with what the
#      tools' packages depend on (read from their Depends), pkgconf and gcc
#      for tests/deb/dev-check.sh, and kmod and initramfs-tools for the
#      kernel;
#      it is kept in build/deb-check-arm64/base.tar and made again only
#      when that list changes.  Each run starts from a fresh copy of it.
#   2. In it, through chroot: dpkg -i libbpfstash1, libbpfstash-dev and
#      bpfstash-tools (and linux-image-*-bpfstash and its linux-headers, if
#      make deb ARCH=arm64 built them: their maintainer scripts run depmod
#      and make Debian's initramfs); dpkg --audit; bpfstash and
#      bpfstash-gc run (aarch64, emulated); the units enabled; a program
#      built against libbpfstash-dev; dpkg --purge bpfstash-tools.
#   3. Unless --no-boot, with the kernel installed: the system becomes an
#      ext4 disk and qemu-system-aarch64 -M virt (TCG) boots the packaged
#      kernel with the initramfs its package made, from that disk; a small
#      init (not systemd) mounts the stash, runs bpfstash ls and powers off.
#
# Prints "PASS deb-arm64.<name>" or "FAIL deb-arm64.<name>: why" lines
# (SKIP for what was not built) and exits 1 if a check failed.  Not in
# make check, for its time: the tools alone take 9 minutes cold (the arm64
# system) and 1 once base.tar is made; the kernel adds the emulated
# initramfs (about 7 minutes for Debian's own kernel) and the boot (1-2).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deb=$top/build/deb
out=$top/build/deb-check-arm64
root=$out/root
boot=1
timeout=${DEB_BOOT_TIMEOUT:-900}
while [ $# -gt 0 ]; do
	case "$1" in
	--no-boot) boot=0; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "check-deb-arm64: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done

failed=0
pass() { echo "PASS deb-arm64.$1${2:+ ($2)}"; }
fail() { echo "FAIL deb-arm64.$1: $2"; failed=1; }
skip() { echo "SKIP deb-arm64.$1: $2"; }
say() { echo "check-deb-arm64: $*" >&2; }
# run CMD...: run CMD in the arm64 system (/proc mounted meanwhile).
run() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive "$@"; }

# What it needs: the packages, and arm64 programs runnable here.
pkgs=()
for p in libbpfstash1 libbpfstash-dev bpfstash-tools; do
	f=$(ls "$deb"/"$p"_*_arm64.deb 2> /dev/null | tail -n 1)
	[ -n "$f" ] || { fail setup "no ${p}_*_arm64.deb in build/deb (make deb ARCH=arm64)"; exit 1; }
	pkgs+=("$f")
done
image=$(ls "$deb"/linux-image-*-bpfstash_*bpfstash.debian_arm64.deb 2> /dev/null | tail -n 1 || true)
headers=$(ls "$deb"/linux-headers-*-bpfstash_*bpfstash.debian_arm64.deb 2> /dev/null | tail -n 1 || true)
for c in mmdebstrap qemu-aarch64-static arch-test; do
	command -v "$c" > /dev/null ||
		{ fail setup "$c is missing (scripts/deps.sh deb-arm64)"; exit 1; }
done
# binfmt_misc is how the kernel hands arm64 programs to qemu-aarch64-static.
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2> /dev/null ||
		{ fail setup "binfmt_misc is not mounted and cannot be (a container without it: \
boot an arm64 system in qemu-system-aarch64 instead)"; exit 1; }
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 > /dev/null 2>&1 || true
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2> /dev/null ||
	{ fail setup "no enabled qemu-aarch64 in binfmt_misc (update-binfmts --enable qemu-aarch64)"; exit 1; }
arch-test arm64 > /dev/null 2>&1 || { fail setup "arch-test arm64: arm64 programs do not run here"; exit 1; }

mkdir -p "$out"
# 1. The system: what the packages depend on, from the archive.
own="libbpfstash1 libbpfstash-dev bpfstash-tools"
deps=$(for f in "${pkgs[@]}"; do
		dpkg-deb -f "$f" Depends Pre-Depends | sed 's/^[A-Za-z-]*: //'
	done | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' |
	grep -v '^$' | grep -vxF -f <(tr ' ' '\n' <<< "$own") | sort -u | tr '\n' ',')
include=${deps}pkgconf,gcc,libc6-dev,kmod,initramfs-tools,zstd
stamp="bookworm arm64 minbase $include"
t0=$(date +%s)
if [ ! -f "$out/base.tar" ] || [ "$(cat "$out/base.stamp" 2> /dev/null)" != "$stamp" ]; then
	say "mmdebstrap --arch=arm64 bookworm (dpkg's scripts run emulated: about 6 minutes)"
	rm -f "$out/base.tar" "$out/base.stamp"
	if ! mmdebstrap --variant=minbase --arch=arm64 --include="$include" \
		--customize-hook='echo bpfstash-arm64 > "$1/etc/hostname"' \
		--customize-hook='passwd --root "$1" --delete root' \
		bookworm "$out/base.tar" > "$out/mmdebstrap.log" 2>&1; then
		fail system "mmdebstrap failed: $(grep -E '^E:' "$out/mmdebstrap.log" | tail -n 3 | tr '\n' ' ') \
(build/deb-check-arm64/mmdebstrap.log)"
		exit 1
	fi
	echo "$stamp" > "$out/base.stamp"
fi
cleanup() { umount "$root/proc" 2> /dev/null || true; }
trap cleanup EXIT
umount "$root/proc" 2> /dev/null || true
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$out/base.tar"
mount -t proc proc "$root/proc"
if [ "$(run uname -m)" = aarch64 ] && [ "$(run dpkg --print-architecture)" = arm64 ]; then
	pass system "Debian $(cat "$root/etc/debian_version") arm64, $(run dpkg-query -W | wc -l) packages, \
uname -m in it: aarch64, $(($(date +%s) - t0)) s"
else
	fail system "not an arm64 system: uname -m $(run uname -m), dpkg $(run dpkg --print-architecture)"
	exit 1
fi

# 2. dpkg -i, as an administrator would after copying the files over.
mkdir -p "$root/tmp/debs"
cp "${pkgs[@]}" ${image:+"$image"} ${headers:+"$headers"} "$root/tmp/debs/"
t0=$(date +%s)
if run sh -c 'dpkg -i /tmp/debs/*.deb' > "$out/dpkg-i.log" 2>&1; then
	pass dpkg_install "$(cd "$root/tmp/debs" && ls | tr '\n' ' ')in $(($(date +%s) - t0)) s"
else
	fail dpkg_install "dpkg -i failed: $(grep -iE 'error|depend' "$out/dpkg-i.log" | head -n 3 | tr '\n' ' ') \
(build/deb-check-arm64/dpkg-i.log)"
fi
rm -rf "$root/tmp/debs"
status=$(run dpkg-query -W -f '${Package}:${Architecture} ${Version} ${db:Status-Abbrev}\n' \
	libbpfstash1 libbpfstash-dev bpfstash-tools 'linux-image-*-bpfstash' 'linux-headers-*-bpfstash' 2> /dev/null || true)
n=3
[ -z "$image" ] || n=$((n + 1))
[ -z "$headers" ] || n=$((n + 1))
if [ "$(grep -c ':arm64 .* ii *$' <<< "$status" || true)" = "$n" ]; then
	pass dpkg_status "$(awk '{ print $1, $2 }' <<< "$status" | tr '\n' ' ')all ii"
else
	fail dpkg_status "not every package is installed: $(tr '\n' ';' <<< "$status")"
fi
audit=$(run dpkg --audit 2>&1 || true)
[ -z "$audit" ] && pass dpkg_audit "dpkg --audit: nothing" || fail dpkg_audit "$(head -n 3 <<< "$audit" | tr '\n' ' ')"

# The programs, aarch64, run emulated in the system.
kind=$(file -b "$root/usr/sbin/bpfstash" | cut -d, -f1-2)
if v=$(run bpfstash --version 2>&1) && run bpfstash --help > "$out/bpfstash-help.txt" 2>&1; then
	pass bpfstash_runs "bpfstash --version: $(head -n 1 <<< "$v"); $kind; --help: $(wc -l < "$out/bpfstash-help.txt") lines"
else
	fail bpfstash_runs "bpfstash --version or --help failed: $(head -n 2 <<< "$v" | tr '\n' ' ')"
fi
if run bpfstash-gc --help > "$out/bpfstash-gc-help.txt" 2>&1; then
	pass bpfstash_gc_runs "bpfstash-gc --help: $(wc -l < "$out/bpfstash-gc-help.txt") lines"
else
	fail bpfstash_gc_runs "bpfstash-gc --help failed: $(head -n 2 "$out/bpfstash-gc-help.txt" | tr '\n' ' ')"
fi
missing=$(run ldd /usr/sbin/bpfstash /usr/sbin/bpfstash-gc 2>&1 | grep 'not found' || true)
[ -z "$missing" ] && pass libraries "ldd: every library found, libbpfstash.so.1 from \
$(run ldd /usr/sbin/bpfstash | sed -n 's/.*libbpfstash.so.1 => \([^ ]*\).*/\1/p')" ||
	fail libraries "$(tr '\n' ' ' <<< "$missing")"
units=$(for u in sys-fs-bpfstash.mount bpfstash-gc.timer; do
	ls "$root"/etc/systemd/system/*/"$u" > /dev/null 2>&1 && echo "$u"; done | paste -sd ' ')
[ "$units" = "sys-fs-bpfstash.mount bpfstash-gc.timer" ] &&
	pass units "enabled by the postinst: $units" || fail units "enabled: '$units'"

# libbpfstash-dev as a developer on arm64 uses it (tests/deb/dev-check.sh).
cp "$top/tests/deb/dev-check.sh" "$root/tmp/"
if run sh /tmp/dev-check.sh > "$out/dev-check.log" 2>&1; then
	pass dev_package "$(grep '^libbpfstash ' "$out/dev-check.log"); pkg-config: $(sed -n 2p "$out/dev-check.log")"
else
	fail dev_package "$(tail -n 3 "$out/dev-check.log" | tr '\n' ' ') (build/deb-check-arm64/dev-check.log)"
fi

# The kernel, as its package installed it.
kv=""
if [ -z "$image" ]; then
	skip kernel "no linux-image-*-bpfstash_*bpfstash.debian_arm64.deb in build/deb (make deb ARCH=arm64 kernel)"
else
	kv=$(dpkg-deb -f "$image" Package | sed 's/^linux-image-//')
	k=$root/boot/vmlinuz-$kv
	if [ -f "$k" ] && file -bz "$k" | grep -q 'ARM64' && [ -s "$root/boot/initrd.img-$kv" ] &&
		grep -q '^CONFIG_BPFSTASH=y' "$root/boot/config-$kv" && [ -s "$root/lib/modules/$kv/modules.dep" ]; then
		pass kernel "/boot/vmlinuz-$kv ($(file -bz "$k" | cut -d, -f1)), initrd.img-$kv \
($(du -k "$root/boot/initrd.img-$kv" | cut -f1) KB, made by the postinst), CONFIG_BPFSTASH=y, \
$(grep -c . "$root/lib/modules/$kv/modules.dep") modules in modules.dep"
	else
		fail kernel "/boot or /lib/modules/$kv incomplete: $(ls "$root/boot" | tr '\n' ' ')"
		kv=""
	fi
fi

# Purge: no file of bpfstash-tools stays.
files=$(run dpkg-query -L bpfstash-tools | grep -E '^/(usr|lib|etc)/.*[^/]$' || true)
if run dpkg --purge bpfstash-tools > "$out/purge.log" 2>&1; then
	left=$(while read -r f; do [ -e "$root$f" ] && [ ! -d "$root$f" ] && echo "$f"; done <<< "$files" || true)
	[ -z "$left" ] && pass purge "dpkg --purge bpfstash-tools: its $(grep -c . <<< "$files") files gone" ||
		fail purge "left: $(tr '\n' ' ' <<< "$left")"
else
	fail purge "dpkg --purge failed: $(tail -n 2 "$out/purge.log" | tr '\n' ' ')"
fi
# Back, for the boot.
cp "${pkgs[2]}" "$root/tmp/"
run sh -c 'dpkg -i /tmp/bpfstash-tools_*.deb' > "$out/reinstall.log" 2>&1 ||
	fail reinstall "dpkg -i bpfstash-tools after the purge: $(tail -n 2 "$out/reinstall.log" | tr '\n' ' ')"
rm -f "$root"/tmp/bpfstash-tools_*.deb
umount "$root/proc"

# 3. The packaged kernel booted from the disk, with its package's initramfs.
if [ "$boot" = 0 ]; then
	skip boot "--no-boot"
elif [ -z "$kv" ]; then
	skip boot "no kernel installed"
elif ! command -v qemu-system-aarch64 > /dev/null; then
	skip boot "qemu-system-aarch64 is missing (scripts/deps.sh arm64)"
else
	cp "$root/boot/vmlinuz-$kv" "$out/vmlinuz"
	cp "$root/boot/initrd.img-$kv" "$out/initrd"
	cat > "$root/sbin/bpfstash-boot-check" <<'EOF'
#!/bin/sh
# The arm64 boot test's init (scripts/check-deb-arm64.sh): no systemd.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# The initramfs moved its /proc, /sys and /dev here; mounted if not.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
echo "deb-arm64: booted $(uname -r) $(uname -m)"
if grep -qw bpfstash /proc/filesystems && mkdir -p /sys/fs/bpfstash &&
	mount -t bpfstash bpfstash /sys/fs/bpfstash; then
	echo "PASS deb-arm64.boot_mount (mount -t bpfstash on /sys/fs/bpfstash)"
	if out=$(bpfstash ls 2>&1); then
		echo "PASS deb-arm64.boot_bpfstash_ls ($(echo "$out" | wc -l) lines: $(echo "$out" | head -n 1))"
	else
		echo "FAIL deb-arm64.boot_bpfstash_ls: $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
else
	echo "FAIL deb-arm64.boot_mount: no bpfstash filesystem in this kernel"
fi
echo "deb-arm64: boot done"
sync
echo o > /proc/sysrq-trigger
sleep 10
EOF
	chmod 755 "$root/sbin/bpfstash-boot-check"
	size=$(( $(du -sm "$root" | cut -f1) + 256 ))
	if ! mkfs.ext4 -q -F -L root -d "$root" "$out/disk.img" "${size}M" > "$out/mkfs.log" 2>&1; then
		fail boot "mkfs.ext4 -d failed: $(tail -n 2 "$out/mkfs.log")"
	else
		t0=$(date +%s)
		rc=0
		timeout --foreground -k 10 "$timeout" qemu-system-aarch64 -M virt -cpu max -smp 2 -m 2048 \
			-nodefaults -no-reboot -display none -monitor none -serial stdio \
			-kernel "$out/vmlinuz" -initrd "$out/initrd" \
			-drive "file=$out/disk.img,format=raw,if=virtio" \
			-append "root=/dev/vda rw console=ttyAMA0 panic=-1 init=/sbin/bpfstash-boot-check" \
			< /dev/null > "$out/console.log" 2>&1 || rc=$?
		tr -d '\r' < "$out/console.log" | grep -E '^(PASS|FAIL) deb-arm64\.' || true
		if grep -q '^FAIL deb-arm64' "$out/console.log"; then
			failed=1
		fi
		if grep -q 'deb-arm64: boot done' "$out/console.log"; then
			pass boot "qemu-system-aarch64 -M virt (TCG): $(tr -d '\r' < "$out/console.log" |
				sed -n 's/^deb-arm64: booted //p'), initramfs of the package, $(($(date +%s) - t0)) s \
(build/deb-check-arm64/console.log)"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			fail boot "no end within ${timeout}s (build/deb-check-arm64/console.log)"
		else
			fail boot "the boot did not reach the test (exit $rc): $(tr -d '\r' < "$out/console.log" |
				grep -iE 'panic|unable|not found|error' | head -n 3 | tr '\n' ' ') (build/deb-check-arm64/console.log)"
		fi
		rm -f "$out/disk.img"
	fi
fi
rm -rf "$root"
exit "$failed"
