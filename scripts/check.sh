#!/bin/bash
# make check: every bpfstash test, and one summary line at the end.
#
#   1. host unit tests (cmocka) of the userspace tools, the patch
#      series (scripts/check-series.sh), and sparse and an i386 build of
#      the kernel half (scripts/check-static.sh);
#   2. one boot of the debug kernel in QEMU, which runs KUnit at boot and
#      then the in-guest suites (tests/guest/SUITES), one boot of the
#      bench kernel for the suites that need speed (tests/guest/SUITES.bench),
#      and one of the bench kernel with systemd as PID 1, which runs
#      bpfstash-gc's units (tests/guest/gc-systemd.sh);
#   3. the Debian packages (scripts/build-deb.sh --bench), installed into a
#      Debian 12 system that QEMU boots from its own disk
#      (scripts/check-deb.sh);
#   4. the arm64 debug kernel (built in the background meanwhile) in
#      qemu-system-aarch64: KUnit at boot, the stash and mmap3 suites in
#      Debian 12's arm64 userland (scripts/check-arm64.sh);
#   5. the results: each test's PASS/FAIL/SKIP line, then
#      "N passed, N failed, N skipped".
#
# Environment: SUITES="smoke stash" runs only those guest suites on the
# debug kernel ("suite:test1,test2" runs single tests) and skips the bench
# kernel's; HOST=0 or GUEST=0 skips a half; SERIES=0 skips the series;
# SERIES_KUNIT=all runs KUnit at every patch of the store (default: the
# first and the last, scripts/check-series.sh);
# DEB=0 skips the packages and the install test; STATIC=0 skips sparse
# and the i386 build; ARM64=0 skips arm64;
# BENCH_SUITES=0 skips the bench kernel's boot.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/check
mkdir -p "$out"
: > "$out/results"
start=$(date +%s)
# What came before (make's builds of the kernels, perf and the tests, on a
# fresh machine), as the machine's uptime tells it.
echo "make check: the tests start at $(cut -d. -f1 /proc/uptime) s of the machine's uptime"

# Each phase's header says when it began, in seconds since make check's
# own start (the builds make did before are not counted): a run cut short
# still shows where its time went.
phase() { printf '\n== [%s s] %s\n' "$(($(date +%s) - start))" "$*"; }

# A part that runs on the host: scripts/$3, titled $1, its log
# build/check/$2.log, the lines matching $4 shown and every result kept;
# unless a line matches $5 (if given), it ended early and that fails.
host_part() {
	local title=$1 name=$2 script=$3 shown=$4 last=${5:-} t0

	phase "$title (scripts/$script)"
	t0=$(date +%s)
	"$top/scripts/$script" 2>&1 | tee "$out/$name.log" | grep -E "$shown" || true
	grep -E '^(PASS|FAIL|SKIP) ' "$out/$name.log" >> "$out/results"
	[ -z "$last" ] || grep -qE "$last" "$out/$name.log" ||
		echo "FAIL $name: scripts/$script ended early (build/check/$name.log)" >> "$out/results"
	echo "$title: $(($(date +%s) - t0)) s"
}

# The arm64 kernel and userland are built in the background from the start,
# at the lowest priority: a core is often idle (checkpatch, git am and
# kunit.py's steps are serial, a suite often waits on one vCPU), and that
# is when they build.  Their phase (5) waits for them.  ARM64=0 skips
# arm64.
arm64_build=""
if [ "${GUEST:-1}" = 1 ] && [ "${ARM64:-1}" = 1 ] && [ -z "${SUITES:-}" ]; then
	(
		nice -n 19 "$top/scripts/deps.sh" arm64 &&
		JOBS=${JOBS:-$(nproc)} nice -n 19 "$top/scripts/build-kernel.sh" arm64 &&
		nice -n 19 "$top/scripts/arm64-userland.sh"
	) > "$out/arm64-build.log" 2>&1 &
	arm64_build=$!
	arm64_start=$(date +%s)
fi

# 1. Host unit tests.
if [ "${HOST:-1}" = 1 ] && [ -x "$top/scripts/check-host.sh" ]; then
	host_part "host unit tests" host check-host.sh '^(PASS|FAIL|SKIP) |^  '
fi

# 1b. The patch series: generated, checkpatch'ed, applied with git am onto
# the pristine tree, equal to the tree everything here is built from, and
# buildable at every patch.
if [ "${HOST:-1}" = 1 ] && [ "${SERIES:-1}" = 1 ]; then
	SERIES_KUNIT=${SERIES_KUNIT:-ends} host_part "patch series" series check-series.sh '^(PASS|FAIL|SKIP) |^  series\.' \
		'^(PASS|FAIL) series\.generate'
fi

# 1c. The kernel half under sparse (C=2) and built for i386.
if [ "${HOST:-1}" = 1 ] && [ "${STATIC:-1}" = 1 ]; then
	host_part "sparse and i386" static check-static.sh '^(PASS|FAIL|SKIP) ' \
		'^[A-Z]+ static\.i386'
fi

# 2. The guests.  The debug kernel runs KUnit at boot and the functional
# suites (tests/guest/SUITES); the bench kernel runs what needs a kernel
# without debug options to finish in minutes (tests/guest/SUITES.bench:
# the 5000-program storm, scale).
guest_filter='^(PASS|FAIL|SKIP) |^suite |^guest: |^vm-run:|^  [a-z_0-9]+\.[a-z_0-9]+: '

run_guest() {
	# $1: kernel flavour, $2: results subdirectory, $3...: suites;
	# $append: more kernel command line; $vmopts: more vm-run options
	flavour=$1 sub=$2
	shift 2
	gstart=$(date +%s)
	# shellcheck disable=SC2068
	"$top/scripts/vm-run" -k "$flavour" -o "$out/$sub" -t "${GUEST_TIMEOUT:-3000}" \
		${append:+-a "$append"} ${vmopts:-} -- \
		"$top/tests/guest/run-suites.sh" $@ 2>&1 |
		tee "$out/$sub.log" | grep --line-buffered -E "$guest_filter"
	grc=${PIPESTATUS[0]}
	grep -E '^(PASS|FAIL|SKIP) ' "$out/$sub.log" >> "$out/results"
	boot=$(sed -n 's/^guest: up \([0-9.]*\)s.*/\1/p' "$out/$sub/console.log" | head -n 1)
	echo "$flavour guest: boot to init ${boot:-?} s (guest clock), wall $(($(date +%s) - gstart)) s, KVM: $(cat "$top/build/vm/kvm-usable" 2>/dev/null || echo no)"
	if [ "$grc" != 0 ]; then
		# A kernel report or a crash fails the run even if every test passed.
		# (Whether KVM was usable is information, not a reason.)
		reason=$(grep -E '^vm-run:' "$out/$sub.log" | grep -v '^vm-run: KVM usable:' |
			head -n 3 | tr '\n' ' ')
		if [ -n "$reason" ] || ! grep -q '^FAIL ' "$out/$sub.log"; then
			echo "FAIL $sub: exit $grc ${reason:-(no test failed; see build/check/$sub/console.log)}" >> "$out/results"
		fi
	fi
}

if [ "${GUEST:-1}" = 1 ]; then
	phase "debug kernel in QEMU: KUnit, then ${SUITES:-tests/guest/SUITES}"
	# shellcheck disable=SC2046
	run_guest debug guest ${SUITES:-$(grep -v '^#' "$top/tests/guest/SUITES")}
	console=$out/guest/console.log

	# KUnit results (KTAP) from the console: "    # Subtest: <suite>", then
	# the suite's tests as "    ok N name" / "    not ok N name" (a
	# parameterised test's cases are nested deeper), until the suite's own
	# "ok N <suite>" at the start of a line.  Other kernel messages may be
	# interleaved anywhere: they are ignored, they do not end the suite.
	sed -e 's/^\[ *[0-9.]*\] //' "$console" 2>/dev/null | awk '
		/^    # Subtest: / { suite = $3; failed = 0; next }
		suite != "" && /^(not )?ok [0-9]+ / {
			if ($1 == "not" && !failed)
				printf "FAIL kunit.%s: the suite failed; see build/check/guest/console.log\n", suite
			suite = ""; next
		}
		suite != "" && /^    (not )?ok [0-9]+ / {
			line = $0; sub(/^    /, "", line)
			ok = (line ~ /^ok/); sub(/^(not )?ok [0-9]+ /, "", line)
			if (index(line, " # SKIP")) {
				name = substr(line, 1, index(line, " # SKIP") - 1)
				printf "SKIP kunit.%s.%s: %s\n", suite, name, substr(line, index(line, " # SKIP") + 8)
			} else if (ok) {
				printf "PASS kunit.%s.%s\n", suite, line
			} else {
				failed = 1
				printf "FAIL kunit.%s.%s: see build/check/guest/console.log\n", suite, line
			}
		}' > "$out/kunit"
	if grep -q 'CONFIG_BPFSTASH_KUNIT_TEST=y' "$top/build/kernel-debug/.config" &&
	   ! grep -q '^PASS\|^FAIL\|^SKIP' "$out/kunit"; then
		echo "FAIL kunit: no KUnit results in the guest console" >> "$out/kunit"
	fi
	phase "KUnit"
	cat "$out/kunit"
	cat "$out/kunit" >> "$out/results"
fi

# The boot start under lockdown: the debug kernel (the one with the
# lockdown LSM) booted with lockdown=confidentiality and bpfstash=on, KUnit
# off, for one small suite.  No kmemleak scan: lockdown closes debugfs.
if [ "${GUEST:-1}" = 1 ] && [ -z "${SUITES:-}" ]; then
	phase "debug kernel in QEMU, locked down from boot: tests/guest/lockdown_boot.sh"
	append="lockdown=confidentiality bpfstash=on kunit.enable=0" vmopts=--no-kmemleak \
		run_guest debug guest-lockdown lockdown_boot
fi

if [ "${GUEST:-1}" = 1 ] && [ "${BENCH_SUITES:-1}" = 1 ] && [ -z "${SUITES:-}" ]; then
	phase "bench kernel in QEMU: tests/guest/SUITES.bench"
	# shellcheck disable=SC2046
	# The store started at boot, and a bad second parameter refused
	# (tests/guest/boot.c, the first suite of SUITES.bench); and no
	# memory cgroup charged for BPF (tests/guest/memcg.c, the last).
	append="bpfstash=on,size=256M,max_entries=100000 bpfstash=size=12Q cgroup.memory=nobpf" \
		run_guest bench guest-bench $(grep -v '^#' "$top/tests/guest/SUITES.bench")

	# bpfstash-gc.service and .timer under systemd as PID 1: its own boot.
	phase "bench kernel in QEMU, systemd as PID 1: tests/guest/gc-systemd.sh"
	gstart=$(date +%s)
	KERNEL=bench "$top/tests/guest/gc-systemd.sh" > "$out/gc-systemd.log" 2>&1
	grc=$?
	cat "$out/gc-systemd.log"
	grep -E '^(PASS|FAIL|SKIP) ' "$out/gc-systemd.log" >> "$out/results"
	echo "systemd guest: wall $(($(date +%s) - gstart)) s"
	if [ "$grc" != 0 ] && ! grep -q '^FAIL ' "$out/gc-systemd.log"; then
		echo "FAIL gc_systemd: exit $grc (see build/check/gc-systemd.log)" >> "$out/results"
	fi
fi

# 4. The install test: the bench kernel packaged with make bindeb-pkg,
# libbpfstash, the tools and perf packaged with debhelper, installed with
# apt into a Debian 12 system that boots from its own disk in QEMU
# (make deb-check does the same with Debian's kernel configuration).
if [ "${GUEST:-1}" = 1 ] && [ "${DEB:-1}" = 1 ] && [ -z "${SUITES:-}" ]; then
	phase "Debian packages, installed into Debian 12 and booted (scripts/check-deb.sh)"
	dstart=$(date +%s)
	if "$top/scripts/build-deb.sh" --bench kernel tools perf > "$out/deb-build.log" 2>&1; then
		echo "PASS deb.packages ($(grep -E '^deb: (lintian|kernel|tools|perf)' "$out/deb-build.log" |
			sed 's/^deb: //' | tr '\n' ';'))" | tee -a "$out/results"
		"$top/scripts/check-deb.sh" --kernel bench 2>&1 | tee "$out/deb-check.log" |
			grep -E '^(PASS|FAIL|SKIP) |^  deb\.|^check-deb:'
		grep -E '^(PASS|FAIL|SKIP) ' "$out/deb-check.log" >> "$out/results"
	else
		echo "FAIL deb.packages: $(grep '^deb: ' "$out/deb-build.log" | tail -n 2 | tr '\n' ' ')(build/check/deb-build.log)" |
			tee -a "$out/results"
	fi
	echo "Debian packages and install test: $(($(date +%s) - dstart)) s"
fi

# 5. arm64: the debug kernel in qemu-system-aarch64 (TCG), KUnit at boot,
# then the stash and mmap3 suites in Debian 12's arm64 userland
# (make check-arm64 runs every arm64 suite, tests/guest/SUITES.arm64).
if [ -n "$arm64_build" ]; then
	phase "arm64 debug kernel in QEMU (TCG): KUnit, stash, mmap3 (scripts/check-arm64.sh)"
	t0=$(date +%s)
	if wait "$arm64_build"; then
		echo "arm64: kernel and userland built in the background in $((t0 - arm64_start)) s, waited $(($(date +%s) - t0)) s more"
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} ARM64_SUITE_TIMEOUT=900 \
			"$top/scripts/check-arm64.sh" stash mmap3 | tee "$out/arm64.log" |
			grep -E '^(PASS|FAIL|SKIP) |^  arm64\.|^arm64 '
		grep -E '^(PASS|FAIL|SKIP) ' "$out/arm64.log" >> "$out/results"
	else
		echo "FAIL arm64.build: $(grep -E 'error|build-kernel:|arm64-userland:|deps:' "$out/arm64-build.log" |
			tail -n 2 | tr '\n' ' ')(build/check/arm64-build.log)" | tee -a "$out/results"
	fi
	echo "arm64: $(($(date +%s) - t0)) s"
fi

# 6. Summary.
pass=$(grep -c '^PASS ' "$out/results")
fail=$(grep -c '^FAIL ' "$out/results")
skip=$(grep -c '^SKIP ' "$out/results")
phase "summary ($(($(date +%s) - start)) s)"
if [ "$skip" -gt 0 ]; then
	echo "skipped:"
	grep '^SKIP ' "$out/results" | sed 's/^SKIP /  /'
fi
if [ "$fail" -gt 0 ]; then
	echo "failed:"
	grep '^FAIL ' "$out/results" | sed 's/^FAIL /  /'
fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
