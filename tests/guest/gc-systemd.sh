#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bpfstash-gc.service and bpfstash-gc.timer under a real systemd: boots the
# test kernel with systemd as PID 1 (the host's, from the read-only root),
# which runs this script again as its only job (systemd.run=), inside the
# guest.  There it installs the units as shipped into /run/systemd/system
# (ExecStart pointed at the built binary, with limits for the test), starts
# the service, and checks that its sandbox still let it remove entries
# under /sys/fs/bpfstash, that it archived them, what journald got, that
# the timer is armed, and that the service does not start while the stash
# is not mounted.  One PASS/FAIL line per check (gc_systemd.<name>).
#
#   tests/guest/gc-systemd.sh            (from the host; KERNEL=debug|bench)
#
# Not in tests/guest/SUITES (the suites run under the harness's own init):
# scripts/check.sh boots it on its own after the bench suites.
set -u
top=${BPFSTASH_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

if [ "$$" = 1 ]; then
	# PID 1 of the guest, before systemd.  The shared root is a Docker
	# image (it has /.dockerenv), and systemd would then believe it runs
	# in a container, and read its settings from its own argv rather
	# than the kernel command line.  So: a tmpfs root holding the shared
	# root's directories (bind mounts) without /.dockerenv, and systemd
	# started in it.
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	mount -t tmpfs -o mode=0755 newroot /mnt
	for e in /* /.[!.]*; do
		name=${e#/}
		case "$name" in
		.dockerenv|mnt|proc|sys|dev|run|tmp|'.[!.]*') continue ;;
		esac
		if [ -L "$e" ]; then
			ln -s "$(readlink "$e")" "/mnt/$name"
		elif [ -d "$e" ]; then
			mkdir "/mnt/$name" && mount --rbind "$e" "/mnt/$name"
		else
			: > "/mnt/$name" && mount --bind "$e" "/mnt/$name"
		fi
	done
	mkdir /mnt/proc /mnt/sys /mnt/dev /mnt/run /mnt/tmp /mnt/mnt /mnt/.oldroot
	cd /mnt && pivot_root . .oldroot && exec chroot . /lib/systemd/systemd
	echo "gc-systemd: could not start systemd in a new root" >&2
	exec sh
fi

if [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ]; then
	# The host.  The kernels have no inotify for userspace, so systemd runs
	# with the legacy cgroup hierarchy (it watches cgroup.events otherwise),
	# and the units that wait for libmount's monitor (inotify too) are masked.
	kernel=${KERNEL:-bench}
	out=$top/build/vm/gc-systemd
	append="init=$top/tests/guest/gc-systemd.sh systemd.unified_cgroup_hierarchy=0"
	append="$append systemd.legacy_systemd_cgroup_controller=1"
	append="$append systemd.run=$top/tests/guest/gc-systemd.sh"
	# The host's /etc/systemd/system/default.target would win over the one
	# the generator makes: name the target systemd-run-generator makes.
	append="$append systemd.unit=kernel-command-line.target"
	for u in sys-fs-fuse-connections.mount dev-mqueue.mount sys-kernel-debug.mount \
		sys-kernel-tracing.mount dev-hugepages.mount sys-kernel-config.mount \
		systemd-pcrphase-sysinit.service systemd-pcrphase.service systemd-timesyncd.service; do
		append="$append systemd.mask=$u"
	done
	append="$append systemd.run_success_action=reboot systemd.run_failure_action=reboot"
	append="$append systemd.show_status=1 ${GC_SYSTEMD_APPEND:-}"
	"$top/scripts/vm-run" -k "$kernel" -t "${GUEST_TIMEOUT:-900}" -q -o "$out" \
		--no-kmemleak -a "$append" -- true
	rc=$?
	grep -E '^(PASS|FAIL|SKIP) gc_systemd|^  gc_systemd' "$out/console.log"
	grep -q '^PASS gc_systemd' "$out/console.log" || {
		echo "FAIL gc_systemd: systemd did not run the checks; see $out/console.log"
		exit 1
	}
	exit $rc
fi

# The guest, under systemd.
exec > /dev/console 2>&1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
S=/sys/fs/bpfstash
A=/var/lib/bpfstash/archive
gc=$top/build/bpfstash-gc/bpfstash-gc
bpftool=$top/build/bpftool/bpftool
failed=0
pass() { echo "PASS gc_systemd.$1"; }
fail() { echo "FAIL gc_systemd.$1: $2"; failed=1; }
note() { echo "  gc_systemd.$1: $2"; }
entries() { ls "$S" | grep -cE '^[0-9a-f]{40}$'; }

mkdir -p /run/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /run/results
note boot "PID 1: $(cat /proc/1/comm) $(systemctl --version | head -n 1)"

# The stash, with 5 loaded programs and 35 that are gone (and those of
# libbpf's feature probes, loaded and closed by each bpftool run).
mount -t bpfstash none $S
mount -t bpf bpf /sys/fs/bpf
for i in $(seq 1 40); do
	"$bpftool" prog load "$top/build/tests/progs/tiny.bpf.o" /sys/fs/bpf/p$i || break
done
for i in $(seq 6 40); do rm -f /sys/fs/bpf/p$i; done
before=$(entries)
live=$(sed -n 's/^live_entries //p' $S/stats)
note setup "$before entries, $live of them of loaded programs"
[ "$before" -ge 40 ] && [ "$live" = 5 ] && pass setup || fail setup "$before entries, $live live"

# The units as shipped; ExecStart points at the built binary with test
# limits (the shipped line continues on a second line: dropped too).
# /var is the host's, read-only: StateDirectory= needs a writable /var/lib.
mount -t tmpfs tmpfs /var/lib
mkdir -p /run/systemd/system
sed -e "s|^ExecStart=.*|ExecStart=$gc --max-entries 10 --archive $A --archive-max-size 100M|" \
	-e '/^[[:space:]]*--archive /d' \
	"$top/tools/bpfstash-gc/bpfstash-gc.service" > /run/systemd/system/bpfstash-gc.service
cp "$top/tools/bpfstash-gc/bpfstash-gc.timer" /run/systemd/system/
systemctl daemon-reload
grep -q "^ExecStart=$gc" /run/systemd/system/bpfstash-gc.service &&
	! grep -q '^ProtectKernelTunables=no' /run/systemd/system/bpfstash-gc.service &&
	pass units_installed || fail units_installed "the unit was not rewritten as expected"

# The service, as the timer would start it.
systemctl start bpfstash-gc.service
result=$(systemctl show -P Result bpfstash-gc.service)
status=$(systemctl show -P ExecMainStatus bpfstash-gc.service)
after=$(entries)
note service "Result=$result ExecMainStatus=$status; entries $before -> $after"
if [ "$result" = success ] && [ "$status" = 0 ] && [ "$after" = 10 ] &&
	[ "$(sed -n 's/^live_entries //p' $S/stats)" = 5 ]; then
	pass service_removes
else
	fail service_removes "Result=$result status=$status, $after entries left (10 expected)"
	journalctl -b -u bpfstash-gc.service --no-pager | tail -n 20
fi
# Each loaded program's entry is still there (found by its prog id).
kept=0
for i in 1 2 3 4 5; do
	id=$("$bpftool" prog show pinned /sys/fs/bpf/p$i | sed -n 's/^\([0-9]*\):.*/\1/p')
	for d in "$S"/*/; do
		grep -q "^prog_id *$id\$" "$d/info" 2>/dev/null && kept=$((kept + 1)) && break
	done
done
[ "$kept" = 5 ] && pass loaded_kept || fail loaded_kept "$kept of 5 loaded programs' entries left"
archived=$(find $A -name '*.tar.zst' 2>/dev/null | wc -l)
[ "$archived" = $((before - 10)) ] && pass archived ||
	fail archived "$archived archives, $((before - 10)) expected"

# The sandbox it ran in: what systemd applied.
caps=$(systemctl show -P CapabilityBoundingSet bpfstash-gc.service)
nnp=$(systemctl show -P NoNewPrivileges bpfstash-gc.service)
ps=$(systemctl show -P ProtectSystem bpfstash-gc.service)
pkt=$(systemctl show -P ProtectKernelTunables bpfstash-gc.service)
rw=$(systemctl show -P ReadWritePaths bpfstash-gc.service)
systemctl show bpfstash-gc.service | grep -iE '^(Capab|Ambient)'
note sandbox "CapabilityBoundingSet=$caps NoNewPrivileges=$nnp ProtectSystem=$ps ProtectKernelTunables=$pkt ReadWritePaths=$rw"
if [ "$caps" = "cap_syslog cap_perfmon" ] && [ "$nnp" = yes ] && [ "$ps" = strict ] && [ "$pkt" = yes ]; then
	pass sandbox_applied
else
	fail sandbox_applied "properties differ from the shipped unit"
fi
# journald got the per-entry lines, at their priorities.
n6=$(journalctl -b -u bpfstash-gc.service -p info -o cat --no-pager | grep -c '^Removed ')
n5=$(journalctl -b -u bpfstash-gc.service -p notice -o cat --no-pager | grep -c '^Kept ')
above=$(journalctl -b -u bpfstash-gc.service -p notice -o cat --no-pager | grep -c '^Removed ')
summary=$(journalctl -b -u bpfstash-gc.service -o cat --no-pager |
	grep -c "removed $((before - 10)) of $before entries")
note journal "$n6 'Removed' lines at info, $n5 'Kept' at notice, summary lines: $summary"
[ "$n6" = $((before - 10)) ] && [ "$above" = 0 ] && [ "$n5" = 5 ] && [ "$summary" = 1 ] &&
	pass journal_lines || fail journal_lines "Removed $n6 ($above above info), Kept $n5, summary $summary"

# The same ExecStart without ReadWritePaths=: rmdir fails (EROFS), exit 73.
mkdir -p /run/systemd/system/bpfstash-gc.service.d
printf '[Service]\nReadWritePaths=\n' > /run/systemd/system/bpfstash-gc.service.d/ro.conf
"$bpftool" prog load "$top/build/tests/progs/tiny.bpf.o" /sys/fs/bpf/extra && rm /sys/fs/bpf/extra
systemctl daemon-reload
systemctl start bpfstash-gc.service
status=$(systemctl show -P ExecMainStatus bpfstash-gc.service)
erofs=$(journalctl -b -u bpfstash-gc.service -o cat --no-pager | grep -c 'Read-only file system')
note readwritepaths "without ReadWritePaths: exit $status, EROFS lines $erofs"
[ "$status" = 73 ] && [ "$erofs" -ge 1 ] && pass needs_readwritepaths ||
	fail needs_readwritepaths "exit $status, EROFS lines $erofs"
rm -r /run/systemd/system/bpfstash-gc.service.d
systemctl daemon-reload

# The timer: loads, is armed daily.
systemctl start bpfstash-gc.timer
next=$(systemctl show -P NextElapseUSecRealtime bpfstash-gc.timer)
active=$(systemctl is-active bpfstash-gc.timer)
note timer "active=$active next=$next"
[ "$active" = active ] && [ -n "$next" ] && pass timer_armed || fail timer_armed "active=$active next=$next"

# The timer fires the service: the same timer with its calendar brought
# to every 10 s (a drop-in, as an admin would), without the random delay.
# More entries first: the timer can fire as soon as the reload below
# (the next 10 s boundary), and the run must find them.
"$bpftool" prog load "$top/build/tests/progs/tiny.bpf.o" /sys/fs/bpf/extra2 && rm /sys/fs/bpf/extra2
t0=$(systemctl show -P ExecMainStartTimestampMonotonic bpfstash-gc.service)
mkdir -p /run/systemd/system/bpfstash-gc.timer.d
printf '[Timer]\nOnCalendar=\nOnCalendar=*:*:0/10\nRandomizedDelaySec=0\nAccuracySec=1s\n' \
	> /run/systemd/system/bpfstash-gc.timer.d/often.conf
systemctl daemon-reload
systemctl restart bpfstash-gc.timer
fired=no
for i in $(seq 1 60); do
	sleep 1
	# Empty when systemctl could not ask systemd (busy after the
	# reload): not a start.
	t1=$(systemctl show -P ExecMainStartTimestampMonotonic bpfstash-gc.service)
	if [ -n "$t1" ] && [ "$t1" -gt "${t0:-0}" ] 2>/dev/null; then
		fired=yes
		break
	fi
done
# Once is enough: stop the timer, let the run finish (ActiveState is
# empty when systemctl could not ask: not finished).
systemctl stop bpfstash-gc.timer
done_run=no
for j in $(seq 1 120); do
	[ "$fired" = yes ] || break
	state=$(systemctl show -P ActiveState bpfstash-gc.service)
	case "$state" in
	inactive|failed|active) done_run=yes; break ;;
	esac
	sleep 1
done
after=$(entries)
note timer_fires "fired=$fired after ${i}s, run finished: $done_run (${state:-?}), Result=$(systemctl show -P Result bpfstash-gc.service), entries $after"
if ! { [ "$fired" = yes ] && [ "$done_run" = yes ] && [ "$after" = 10 ]; }; then
	journalctl -b -u bpfstash-gc.service -u bpfstash-gc.timer -o short-monotonic --no-pager |
		grep -v ' Removed ' | tail -n 30
fi
[ "$fired" = yes ] && [ "$done_run" = yes ] && [ "$after" = 10 ] && pass timer_fires ||
	fail timer_fires "fired=$fired, run finished: $done_run, $after entries"
rm -r /run/systemd/system/bpfstash-gc.timer.d
systemctl daemon-reload

# Not mounted: the condition keeps the service from running at all.
umount $S || fail condition_mountpoint "umount $S failed"
systemctl start bpfstash-gc.service
cond=$(systemctl show -P ConditionResult bpfstash-gc.service)
[ "$cond" = no ] && pass condition_mountpoint || fail condition_mountpoint "ConditionResult=$cond"

echo "$failed" > /run/results/rc
sync
umount /run/results
exit "$failed"
