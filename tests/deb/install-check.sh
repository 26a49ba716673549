#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the Debian 12 system that scripts/check-deb.sh builds with
# mmdebstrap, with the packages installed by apt, booted by QEMU from its
# own disk with systemd as PID 1 (bpfstash-install-test.service starts it
# once the boot is done).  Prints one line per check, "PASS deb.<name>" or
# "FAIL deb.<name>: why", on the console, then reboots (QEMU exits).
#
# On a kernel without bpfstash (Debian's own, the first boot): no unit
# failed, the mount unit was skipped by its condition, and bpfstash ls says
# that the kernel has no bpfstash.  Phase 1 (the first boot of the bpfstash
# kernel): the stash is mounted by the shipped unit, the GC
# timer is active, no unit failed, no bpfstash error in the boot's journal;
# systemd's own BPF programs are stashed and stay, marked unloaded, after
# their service stops; the packaged perf resolves samples in an unloaded
# program; bpfstash resolve, verify and export work; bpfstash-gc.service,
# started by its timer, expires and archives; apt purge bpfstash-tools
# removes every file it installed.  Phase 2 (the next boot): no unit
# failed, and nothing of bpfstash-tools is left.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=/usr/local/lib/bpfstash-test
state=/var/lib/bpfstash-test
S=/sys/fs/bpfstash
mkdir -p "$state"
phase=$(cat "$state/phase" 2>/dev/null || echo 1)

pass() { echo "PASS deb.$1${2:+ ($2)}"; }
fail() { echo "FAIL deb.$1: $2"; }
note() { echo "  deb.$1: $2"; }
check() {
	# check NAME DETAIL COMMAND...: PASS if COMMAND succeeds.
	name=$1 detail=$2
	shift 2
	if "$@" > "$state/out" 2>&1; then
		pass "$name" "$detail"
	else
		fail "$name" "$detail: $(head -c 300 "$state/out" | tr '\n' ' ')"
	fi
}
finish() {
	echo "deb: phase $phase done"
	sync
	systemctl reboot
	exit 0
}

# The boot is over when no job but this test's is left (the system is not
# "running" before this unit, which is part of the boot, has finished).
i=0
while [ $i -lt 300 ] && systemctl list-jobs --no-legend --no-pager |
	grep -v bpfstash-install-test | grep -q .; do
	sleep 1
	i=$((i + 1))
done
note boot "kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s, other jobs done after ${i} s of waiting"
failed_units() { systemctl --failed --plain --no-legend --no-pager; }

# A kernel without bpfstash (Debian's own, booted first): the tools are
# installed all the same, nothing fails, and bpfstash says why it cannot
# work.
if ! grep -qw bpfstash /proc/filesystems; then
	phase=0
	check nokernel_no_failed_units "systemctl --failed lists nothing" \
		sh -c '[ -z "$(systemctl --failed --plain --no-legend --no-pager)" ] ||
			{ systemctl --failed --no-pager; exit 1; }'
	check nokernel_mount_skipped "sys-fs-bpfstash.mount: condition not met, not failed" \
		sh -c '[ "$(systemctl show -p ConditionResult --value sys-fs-bpfstash.mount)" = no ] &&
			! systemctl is-failed --quiet sys-fs-bpfstash.mount'
	check nokernel_timer_not_failed "bpfstash-gc.timer" \
		sh -c '! systemctl is-failed --quiet bpfstash-gc.timer'
	bpfstash ls > "$state/ls.out" 2>&1
	rc=$?
	check nokernel_ls_says_why "exit $rc: $(head -c 160 "$state/ls.out")" \
		sh -c "[ $rc = 69 ] && grep -q 'has no bpfstash' '$state/ls.out'"
	finish
fi

if [ "$phase" = 2 ]; then
	check no_failed_units_after_purge "the boot after apt purge" \
		sh -c '[ -z "$(systemctl --failed --plain --no-legend --no-pager)" ] ||
			{ systemctl --failed --no-pager; exit 1; }'
	left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done < "$state/tools-files")
	check purge_nothing_left_after_boot "$(wc -l < "$state/tools-files") files of bpfstash-tools" \
		sh -c 'echo "$1"; [ -z "$1" ]' - "$left"
	check purge_not_mounted "nothing mounts the stash any more" \
		sh -c '! grep " bpfstash " /proc/self/mounts'
	finish
fi

# Phase 1.
check failed_units "systemctl --failed lists nothing" \
	sh -c '[ -z "$(systemctl --failed --plain --no-legend --no-pager)" ] ||
		{ systemctl --failed --no-pager; exit 1; }'
check mounted_at_boot "by sys-fs-bpfstash.mount" \
	sh -c 'systemctl is-active --quiet sys-fs-bpfstash.mount && findmnt -t bpfstash '"$S"
check gc_timer_active "bpfstash-gc.timer" systemctl is-active --quiet bpfstash-gc.timer
# Errors of this boot that name bpfstash, from any unit or the kernel.
check journal_no_bpfstash_error "journalctl -b -p err" \
	sh -c '! journalctl -b -p err --no-pager -o cat | grep -i bpfstash'
check kernel_log_clean "no BUG, WARNING, Oops or lockdep report" \
	sh -c '! dmesg | grep -E "BUG:|WARNING:|Oops|possible circular locking|KASAN"'
note stats "$(tr '\n' ' ' < $S/stats | cut -c1-200)"

# systemd's own BPF programs: a transient service with the sandboxing
# options that make systemd load them (IPAddressDeny: cgroup_skb programs;
# SocketBindDeny: cgroup_sock_addr ones; RestrictFileSystems: an LSM one),
# those that this systemd and this kernel support.  Debian 12's systemd
# 252 is built without its BPF framework (systemctl --version:
# -BPF_FRAMEWORK), so only IPAddressDeny= loads programs there.
bpfstash -j ls > "$state/before.json"
props="-p IPAddressDeny=any -p SocketBindDeny=any"
# RestrictFileSystems= needs BTF and the BPF LSM (Debian's configuration).
[ -e /sys/kernel/btf/vmlinux ] && grep -qw bpf /sys/kernel/security/lsm 2>/dev/null &&
	props="$props -p RestrictFileSystems=ext4"
# shellcheck disable=SC2086
systemd-run --quiet --unit=bpfstash-sd-bpf $props sleep 300
sleep 2
bpfstash -j ls > "$state/during.json"
new=$(jq -r --slurpfile b "$state/before.json" \
	'[.[] | select(.loaded) | .hash] - [$b[0][] | .hash] | .[]' "$state/during.json")
names=$(for h in $new; do jq -r ".[] | select(.hash == \"$h\") | .name" "$state/during.json"; done |
	sort | tr '\n' ' ')
check systemd_programs_stashed "$(echo "$new" | grep -c .) new entries while the service runs ($props): $names" \
	test -n "$new"
systemctl stop bpfstash-sd-bpf
sleep 1
bpfstash -j ls > "$state/after.json"
gone=0 kept=0
for h in $new; do
	if jq -e ".[] | select(.hash == \"$h\") | .loaded == false" "$state/after.json" > /dev/null; then
		kept=$((kept + 1))
	else
		gone=$((gone + 1))
	fi
done
check systemd_programs_kept_unloaded "$kept of $(echo "$new" | grep -c .) kept, marked unloaded" \
	test "$gone" = 0 -a "$kept" -gt 0

# The packaged perf on a short-lived program: recorded, unloaded, resolved.
cd /tmp || exit 1
perf-bpfstash record -a -e cpu-clock -o /tmp/perf.data -- \
	"$dir/bpf_churn" -n 1 -m 1000 -p "$dir/churn.bpf.o" -l /tmp/churn.log > /tmp/record.log 2>&1
hash=$(awk '{ print $6 }' /tmp/churn.log)
check churn_unloaded "program $(awk '{ print $4 }' /tmp/churn.log), entry $hash" \
	sh -c "jq -e '.[] | select(.hash == \"$hash\") | .loaded == false' > /dev/null < \
		\$(bpfstash -j ls > /tmp/ls.json; echo /tmp/ls.json)"
perf-bpfstash report -i /tmp/perf.data --stdio --sort sym,srcline > /tmp/report.txt 2> /tmp/report.err
lines=$(grep -c '_churn.*churn\.bpf\.c:[0-9]' /tmp/report.txt)
check perf_resolves_unloaded "$lines report lines of the unloaded program with a source line" \
	sh -c "[ $lines -gt 0 ] && ! grep '_churn' /tmp/report.txt | grep -q '??'"
note perf "$(grep -m 3 '_churn' /tmp/report.txt | tr -s ' ' | tr '\n' ';')"
check bpfstash_resolve "$(bpfstash resolve "$(echo "$hash" | cut -c1-8)+0x20" 2>&1 | cut -f4,5)" \
	sh -c "bpfstash resolve $(echo "$hash" | cut -c1-8)+0x20 | grep -q 'churn\.bpf\.c:[0-9]*:[0-9]*'"
check bpfstash_verify "$(bpfstash verify 2>&1 | tail -n 1)" bpfstash verify
rm -rf /tmp/debug
check bpfstash_export "ELF with the hash as build-id" \
	sh -c "bpfstash export $hash --to /tmp/debug > /dev/null &&
		f=/tmp/debug/.build-id/$(echo "$hash" | cut -c1-2)/$(echo "$hash" | cut -c3-).debug &&
		[ \"\$(head -c 4 \$f | od -An -c | tr -d ' ')\" = 177ELF ]"

# bpfstash-gc.service, started by its timer, with this test's limits: the
# shipped units with drop-ins, as an administrator would change them.
mkdir -p /run/systemd/system/bpfstash-gc.service.d /run/systemd/system/bpfstash-gc.timer.d
cat > /run/systemd/system/bpfstash-gc.service.d/test.conf <<EOF
[Service]
ExecStart=
ExecStart=/usr/sbin/bpfstash-gc --max-age 1s --archive /var/lib/bpfstash/archive
EOF
cat > /run/systemd/system/bpfstash-gc.timer.d/test.conf <<EOF
[Timer]
OnActiveSec=2s
RandomizedDelaySec=0
AccuracySec=1s
EOF
systemctl daemon-reload
systemctl restart bpfstash-gc.timer
i=0
while [ $i -lt 60 ] && [ "$(systemctl show -p ExecMainExitTimestampMonotonic --value bpfstash-gc.service)" = 0 ]; do
	sleep 1
	i=$((i + 1))
done
result=$(systemctl show -p Result --value bpfstash-gc.service)
archived=$(find /var/lib/bpfstash/archive -name '*.tar.zst' 2>/dev/null | wc -l)
note gc "$(journalctl -b -u bpfstash-gc.service -o cat --no-pager | grep 'removed' | tail -n 1)"
check gc_by_timer "started by its timer after ${i}s: result $result, $archived archived" \
	sh -c "[ \"$result\" = success ] && [ $archived -ge 1 ] &&
		journalctl -b -u bpfstash-gc.timer -u bpfstash-gc.service -o cat --no-pager | grep -q 'removed'"
check gc_loaded_kept "entries of loaded programs stay" \
	sh -c "[ \$(bpfstash -j ls | jq '[.[] | select(.loaded)] | length') -ge 1 ]"

# apt purge removes every file bpfstash-tools installed (its files and
# links; not the directories, which it shares, /lib among them).
dpkg -L bpfstash-tools | while read -r f; do
	{ [ -f "$f" ] || [ -L "$f" ]; } && [ ! -d "$f" ] && echo "$f"
done > "$state/tools-files"
check purge "apt-get purge bpfstash-tools" \
	sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y bpfstash-tools'
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done < "$state/tools-files")
check purge_removes_every_file "$(wc -l < "$state/tools-files") files and links" \
	sh -c 'echo "$1"; [ -z "$1" ]' - "$left"
check purge_removes_enablement "no link to its units left in /etc/systemd" \
	sh -c '! find /etc/systemd -name "bpfstash-gc.*" -o -name "sys-fs-bpfstash.*" | grep .'
echo 2 > "$state/phase"
finish
