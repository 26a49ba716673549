#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "lockdown_boot", for a boot with lockdown=confidentiality
# and bpfstash=on (scripts/check.sh boots the debug kernel for it alone):
# the boot start refuses, as a mount and "on" do under that lockdown, and
# says so; nothing is stored.  One PASS/FAIL line per check.
set -u
pass() { echo "PASS lockdown_boot.$1"; }
fail() { echo "FAIL lockdown_boot.$1: $2"; rc=1; }
rc=0

grep -qw 'bpfstash=on' /proc/cmdline && grep -qw 'lockdown=confidentiality' /proc/cmdline ||
	{ echo "SKIP lockdown_boot: needs bpfstash=on lockdown=confidentiality on the command line"; exit 0; }
[ -f /sys/kernel/security/lockdown ] ||
	mount -t securityfs none /sys/kernel/security 2>/dev/null
lockdown=$(cat /sys/kernel/security/lockdown 2>/dev/null)
case "$lockdown" in
*"[confidentiality]"*) pass locked_down ;;
*) fail locked_down "/sys/kernel/security/lockdown says '${lockdown:-nothing}'" ;;
esac

log=$(dmesg | grep 'bpfstash:')
if echo "$log" | grep -q 'not storing programs from boot: the kernel is locked down'; then
	pass boot_start_refused
else
	fail boot_start_refused "no refusal in the kernel log; bpfstash said: $(echo "$log" | tr '\n' ' ')"
fi
if echo "$log" | grep -q 'storing programs from boot ('; then
	fail not_started "the kernel log says the store started: $(echo "$log" | tr '\n' ' ')"
else
	pass not_started
fi

# A mount would start a stopped store: refused too, by lockdown (EPERM,
# which mount(8) calls "permission denied" for root), and the lockdown LSM
# logs why.
dir=$(mktemp -d)
if err=$(mount -t bpfstash none "$dir" 2>&1); then
	umount "$dir"
	fail mount_refused "mount -t bpfstash succeeded under lockdown"
elif ! dmesg | grep -q 'Lockdown: mount: use of bpf to read kernel RAM is restricted'; then
	fail mount_refused "mount failed ($err), but lockdown did not log the refusal"
else
	pass mount_refused
fi
rmdir "$dir"
exit $rc
