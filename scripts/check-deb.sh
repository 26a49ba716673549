#!/bin/bash
# The install test: the Debian packages of build/deb/ on a real Debian 12
# system, as an administrator gets it after apt install and a reboot.
#
#   scripts/check-deb.sh [--kernel bench|debian]
#
#   1. mmdebstrap builds a Debian 12 (bookworm) system with systemd and apt
#      from this machine's own apt sources, and apt installs the packages
#      into it (their dependencies come from the archive): the kernel
#      (linux-image-*-bpfstash, of the bench configuration or of Debian's),
#      libbpfstash1, libbpfstash-dev, bpfstash-tools, bpfstash-perf.  The
#      test's own files go into it too (tests/deb/install-check.sh, a BPF
#      workload); nothing of the host is shared with it.  In it,
#      tests/deb/dev-check.sh uses libbpfstash-dev as a developer would:
#      pkg-config and a program built against the library (pkgconf and gcc
#      are installed for that alone).
#   2. The system becomes an ext4 disk (mkfs.ext4 -d, no loop mount).
#   3. QEMU boots it from that disk, with systemd as PID 1, three times:
#      with Debian's own kernel (linux-image-cloud-amd64, installed too: a
#      kernel without bpfstash), with the packaged kernel, and with it
#      again after apt purge bpfstash-tools.  Each time the test runs when
#      the boot is done (bpfstash-install-test.service), prints
#      "PASS deb.<name>" or "FAIL deb.<name>" lines on the console and
#      reboots, which ends QEMU.
#
# Prints the lines and the times of each step; exits 1 if a check failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deb=$top/build/deb
kernel=bench
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "check-deb: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done
case "$kernel" in
bench|debian) ;;
*) echo "check-deb: --kernel bench or debian, not '$kernel'" >&2; exit 64 ;;
esac
out=$top/build/deb-check/$kernel
root=$out/root
timeout=${DEB_BOOT_TIMEOUT:-900}

fail() { echo "FAIL deb.$1: $2"; }
say() { echo "check-deb: $*" >&2; }

image=$(ls "$deb"/linux-image-*-bpfstash_*"bpfstash.$kernel"_amd64.deb 2>/dev/null | grep -v dbg | head -n 1)
# amd64's: make deb ARCH=arm64 puts arm64's beside them.
pkgs=("$deb"/libbpfstash1_*_amd64.deb "$deb"/libbpfstash-dev_*_amd64.deb "$deb"/bpfstash-tools_*_amd64.deb
      "$deb"/bpfstash-perf_*_amd64.deb)
for p in "$image" "${pkgs[@]}"; do
	if [ ! -f "$p" ]; then
		fail setup "no package ${p:-linux-image-*-bpfstash (bpfstash.$kernel)} in build/deb (make deb)"
		exit 1
	fi
done
for t in bpf_churn; do
	[ -x "$top/build/tests/perf/$t" ] || { fail setup "build/tests/perf/$t is missing (make tests)"; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/debs"
cp "$image" "${pkgs[@]}" "$out/debs/"

# 1. The system.  jq reads bpfstash's --json in the test; initramfs-tools
# makes the initramfs Debian's kernel needs for its modular disk drivers.
t0=$(date +%s)
# Debian's own cloud kernel is there to boot once without bpfstash.
include=systemd,systemd-sysv,udev,kmod,procps,apt,jq,initramfs-tools,zstd,linux-image-cloud-amd64
# For tests/deb/dev-check.sh only: what a developer has besides.
include=$include,pkgconf,gcc,libc6-dev
payload=$out/payload
mkdir -p "$payload"
cp "$top/tests/deb/install-check.sh" "$top/build/tests/perf/bpf_churn" \
	"$top/build/tests/progs/churn.bpf.o" "$payload/"
cat > "$payload/bpfstash-install-test.service" <<'EOF'
[Unit]
Description=bpfstash install test (scripts/check-deb.sh)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/lib/bpfstash-test/install-check.sh
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=30min
[Install]
WantedBy=multi-user.target
EOF
if ! mmdebstrap --variant=minbase --include="$include" \
	--customize-hook='echo bpfstash-test > "$1/etc/hostname"' \
	--customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$1/etc/fstab"' \
	--customize-hook='passwd --root "$1" --delete root' \
	--customize-hook="copy-in $out/debs /tmp" \
	--customize-hook='chroot "$1" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/debs/*.deb"' \
	--customize-hook='rm -rf "$1/tmp/debs"' \
	--customize-hook="copy-in $top/tests/deb/dev-check.sh /tmp" \
	--customize-hook='chroot "$1" sh /tmp/dev-check.sh > "$1/root/dev-check.log" 2>&1; echo $? > "$1/root/dev-check.rc"' \
	--customize-hook="copy-in $payload /usr/local/lib" \
	--customize-hook='mv "$1/usr/local/lib/payload" "$1/usr/local/lib/bpfstash-test"' \
	--customize-hook='mv "$1/usr/local/lib/bpfstash-test/bpfstash-install-test.service" "$1/etc/systemd/system/"' \
	--customize-hook='chroot "$1" systemctl enable bpfstash-install-test.service' \
	bookworm "$root" > "$out/mmdebstrap.log" 2>&1; then
	fail image "mmdebstrap failed: $(grep -iE 'error|E:' "$out/mmdebstrap.log" | tail -n 3 | tr '\n' ' ') (build/deb-check/$kernel/mmdebstrap.log)"
	exit 1
fi
installed=$(chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' \
	'linux-image-*' libbpfstash1 bpfstash-tools bpfstash-perf 2>/dev/null | tr '\n' ',')
say "system: $(du -sm "$root" | cut -f1) MB, $(chroot "$root" dpkg-query -W | wc -l) packages, \
installed by apt: $installed $(($(date +%s) - t0)) s"
echo "  deb.image: $(($(date +%s) - t0)) s, $installed"
# mmdebstrap empties the system's /tmp when it is done: the log is in /root.
cp "$root/root/dev-check.log" "$out/dev-check.log" 2>/dev/null
if [ "$(cat "$root/root/dev-check.rc" 2>/dev/null)" = 0 ]; then
	echo "PASS deb.dev_package ($(grep '^libbpfstash ' "$out/dev-check.log"); pkg-config: $(sed -n 2p "$out/dev-check.log"))"
else
	fail dev_package "pkg-config or a build against libbpfstash-dev failed: $(tail -n 3 "$out/dev-check.log" | tr '\n' ' ') (build/deb-check/$kernel/dev-check.log)"
fi
rm -f "$root/root/dev-check.log" "$root/root/dev-check.rc"

# The kernels, for QEMU: bpfstash's (with its initramfs, if it has one),
# and Debian's (always with one).
for k in "$root"/boot/vmlinuz-*; do
	v=${k#"$root"/boot/vmlinuz-}
	case "$v" in
	*bpfstash*) n=bpfstash ;;
	*) n=debian ;;
	esac
	cp "$k" "$out/vmlinuz-$n"
	with=""
	if [ -f "$root/boot/initrd.img-$v" ]; then
		cp "$root/boot/initrd.img-$v" "$out/initrd-$n"
		with=", with an initramfs"
	fi
	echo "  deb.kernel_$n: $v$with"
done
[ -f "$out/vmlinuz-bpfstash" ] && [ -f "$out/vmlinuz-debian" ] ||
	{ fail image "a kernel is missing from /boot: $(ls "$out")"; exit 1; }

# 2. The disk.
t0=$(date +%s)
size=$(( $(du -sm "$root" | cut -f1) + 768 ))
if ! mkfs.ext4 -q -F -L root -d "$root" "$out/disk.img" "${size}M" > "$out/mkfs.log" 2>&1; then
	fail image "mkfs.ext4 -d failed: $(tail -n 2 "$out/mkfs.log")"
	exit 1
fi
rm -rf "$root"
echo "  deb.disk: ${size} MB ext4, $(($(date +%s) - t0)) s"

# 3. Two boots from the disk.
accel=(-accel tcg,thread=multi -cpu max)
[ "$(cat "$top/build/vm/kvm-usable" 2>/dev/null)" = yes ] && accel=(-accel kvm -cpu host)
boot() {
	# boot NAME KERNEL PHASE: boot the disk with vmlinuz-KERNEL; the test
	# prints "deb: phase PHASE done" when it ends.
	local n=$1 k=$2 p=$3 t0 rc initrd=
	[ -f "$out/initrd-$k" ] && initrd=$out/initrd-$k
	t0=$(date +%s)
	timeout --foreground -k 10 "$timeout" qemu-system-x86_64 -nodefaults -no-reboot \
		-display none -monitor none -serial stdio -smp 2 -m 2048 "${accel[@]}" \
		-kernel "$out/vmlinuz-$k" ${initrd:+-initrd "$initrd"} \
		-drive "file=$out/disk.img,format=raw,if=virtio" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1" \
		< /dev/null > "$out/console-$n.log" 2>&1
	rc=$?
	# The test's lines, without the "[time] install-check.sh[pid]: " the
	# console puts in front of a service's output (and a login prompt that
	# may come before it).
	tr -d '\r' < "$out/console-$n.log" |
		sed -n 's/^.*\] install-check\.sh\[[0-9]*\]: //p' > "$out/test-$n.log"
	grep -E '^(PASS|FAIL|SKIP) deb\.|^  deb\.' "$out/test-$n.log" | sed 's/^\(.\{400\}\).*/\1.../'
	echo "  deb.boot_$n: $(($(date +%s) - t0)) s (console: build/deb-check/$kernel/console-$n.log)"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "boot_$n" "no end within ${timeout}s"
	elif ! grep -q "^deb: phase $p done" "$out/test-$n.log"; then
		fail "boot_$n" "the test did not finish (exit $rc; see build/deb-check/$kernel/console-$n.log)"
	fi
}
# Debian's kernel first (phase 0 leaves the state as it was), then the
# bpfstash kernel twice: the checks and the purge, then the boot after it.
boot debian-kernel debian 0 | tee "$out/results-0"
boot bpfstash-kernel bpfstash 1 | tee "$out/results-1"
boot after-purge bpfstash 2 | tee "$out/results-2"
! grep -q '^FAIL' "$out/results-0" "$out/results-1" "$out/results-2"
