# SPDX-License-Identifier: GPL-2.0-only
#
# bpfstash: a kernel store of JITed BPF programs for profilers.
#
#   make demo     the whole story in a QEMU guest (installs what is missing)
#   make check    every test: host units, KUnit and the in-guest suites
#   make bench    the benchmarks (bench kernel), report in build/bench/
#   make series   the patch series (git format-patch), in build/series/
#   make deb      Debian packages (kernel, libbpfstash, tools, perf), in build/deb/
#   make deb-check  install them into a Debian 12 system and boot it (QEMU)
#
# Everything that is built lives in build/ (ignored by git).  See README.md.

TOP	:= $(abspath .)
B	:= $(TOP)/build
TREE	:= $(B)/linux
JOBS	?= $(shell nproc)
V	?= 0

export BPFSTASH_TOP := $(TOP)

ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: all deps tree kernel kernel-debug kernel-bench kernel-arm64 arm64-userland check-arm64 arm64-perf bench-arm64 bpftool perf perf-base tests selftests libbpfstash tools headers \
	check check-host check-guest demo bench series deb deb-check deb-check-arm64 clean distclean help

all: kernel-debug bpftool tests

help:
	@sed -n '3,12p' Makefile | sed 's/^# \{0,1\}//'

# One idempotent step installs every missing Debian package.
deps:
	$(Q)$(TOP)/scripts/deps.sh

# Unpack the 6.12 tree, apply patches/, link the overlay.  Cheap when done.
tree: deps
	$(Q)$(TOP)/scripts/prepare-tree.sh

kernel: kernel-debug

kernel-debug: tree
	$(Q)JOBS=$(JOBS) $(TOP)/scripts/build-kernel.sh debug

kernel-bench: tree
	$(Q)JOBS=$(JOBS) $(TOP)/scripts/build-kernel.sh bench

# The arm64 debug kernel, cross-built, for qemu-system-aarch64 -M virt.
kernel-arm64: tree
	$(Q)$(TOP)/scripts/deps.sh arm64
	$(Q)JOBS=$(JOBS) $(TOP)/scripts/build-kernel.sh arm64

# The arm64 guest's userland: Debian 12's arm64 packages as its root, the
# suites and libbpfstash cross-built (scripts/arm64-userland.sh).
arm64-userland: tree tests
	$(Q)$(TOP)/scripts/deps.sh arm64
	$(Q)$(TOP)/scripts/arm64-userland.sh

# Every arm64 suite (tests/guest/SUITES.arm64) in the arm64 debug kernel
# under qemu-system-aarch64 (TCG), after the store's KUnit tests at boot;
# make check runs KUnit, stash and mmap3 there.
check-arm64: kernel-arm64 arm64-userland arm64-perf
	$(Q)$(TOP)/scripts/check-arm64.sh

# perf with the perf series and the unpatched 6.12 perf, cross-built against
# the arm64 root's libraries, for the arm64 perf suite (scripts/arm64-perf.sh).
arm64-perf: arm64-userland perf-base
	$(Q)$(TOP)/scripts/arm64-perf.sh

# The load hook on arm64 under TCG (emulated figures): KUnit's benchmark in
# the arm64 bench kernel and loadbench beside it (bench/hook-arm64.sh).
bench-arm64: kernel-arm64 kernel-bench arm64-userland
	$(Q)$(TOP)/bench/hook-arm64.sh

# bpftool from the same tree, with its LLVM disassembler (Debian's has none).
# No vmlinux BTF is needed: the skeleton-based features are off.
BPFTOOL := $(B)/bpftool/bpftool
bpftool: tree
	$(Q)mkdir -p $(B)/bpftool
	$(Q)echo "  BPFTOOL  $(BPFTOOL)"
	$(Q)$(MAKE) -s -C $(TREE)/tools/bpf/bpftool OUTPUT=$(B)/bpftool/ \
		feature-clang-bpf-co-re=0 -j$(JOBS) > $(B)/bpftool/build.log 2>&1 || \
		{ tail -30 $(B)/bpftool/build.log; exit 1; }

# perf from the same tree, with the perf series (patches/perf/):
# PERF_RECORD_MMAP3, resolution by build-id, the build-id cache export.
# Built as the bpfstash-perf package builds it (packaging/perf/debian/rules,
# which installs from this very directory): Debian's hardening flags, and
# the paths it is installed at.  The variables are expanded when the
# recipe runs, after deps has installed dpkg-buildflags.
PERF := $(B)/perf/perf
DPKG_FLAGS = DEB_BUILD_MAINT_OPTIONS="hardening=+all reproducible=-fixfilepath,-fixdebugpath" dpkg-buildflags --get
PERF_OPTS = NO_LIBPYTHON=1 NO_LIBPERL=1 prefix=/usr perfexecdir=libexec/perf-bpfstash-core \
	EXTRA_CFLAGS="$(shell $(DPKG_FLAGS) CPPFLAGS) $(shell $(DPKG_FLAGS) CFLAGS)"
perf: tree
	$(Q)mkdir -p $(B)/perf
	$(Q)echo "  PERF     $(PERF)"
	$(Q)LDFLAGS="$(shell $(DPKG_FLAGS) LDFLAGS)" $(MAKE) -s -C $(TREE)/tools/perf O=$(B)/perf \
		$(PERF_OPTS) -j$(JOBS) > $(B)/perf/build.log 2>&1 || \
		{ tail -30 $(B)/perf/build.log; exit 1; }

# The unpatched 6.12 perf, from a pristine copy of the same Debian source
# (build/linux-base), for the side-by-side comparisons.
perf-base: deps
	$(Q)JOBS=$(JOBS) $(TOP)/scripts/build-perf-base.sh

# The userspace half: libbpfstash and the tools built on it.
libbpfstash: deps
	$(Q)$(MAKE) -s -C tools/lib/bpfstash O=$(B)/libbpfstash

# The 6.12 uapi headers with this project's changes (perf_event.h's MMAP3,
# bpfstash.h), for the tests and tools that use the new ABI.
headers: tree
	$(Q)$(MAKE) -s -C $(TREE) O=$(B)/headers-obj INSTALL_HDR_PATH=$(B)/headers headers_install

tests: deps headers tools
	$(Q)$(MAKE) -s -C tests O=$(B)/tests

# The 6.12 BPF selftests' test_progs with the bpfstash test alone (build/selftests/).
selftests: deps tree bpftool headers
	$(Q)$(TOP)/scripts/build-selftests.sh

check: deps kernel-debug kernel-bench bpftool perf perf-base tests selftests
	$(Q)$(TOP)/scripts/check.sh

demo: deps kernel-debug bpftool perf tests
	$(Q)$(TOP)/scripts/demo.sh

# The kernel, perf and the two fixes' series as git format-patch writes
# them, from patches/ and this repository's files, onto a git repository of
# the pristine tree (build/series/linux); checkpatch.pl --strict on each.
series: deps
	$(Q)$(TOP)/scripts/make-series.sh

# Debian packages, into build/deb/: the kernel with Debian's own 6.12
# configuration and CONFIG_BPFSTASH (KCONFIG=FILE for another), libbpfstash
# and the tools (debian/), the patched perf (packaging/perf/).
# make deb ARCH=arm64: the kernel and the tools for arm64, cross-built
# (scripts/deps.sh deb-arm64 installs what that needs; no perf yet).  ARCH
# is build-deb.sh's alone: passed on to the other makes, it would be the
# kernel's (build/headers would become arm64's).
DEB_ARCH := $(ARCH)
unexport ARCH
MAKEOVERRIDES := $(filter-out ARCH=%,$(MAKEOVERRIDES))
DEB_ARM64 := $(filter arm64 aarch64,$(DEB_ARCH))
deb: deps tree tests
	$(Q)$(if $(DEB_ARM64),$(TOP)/scripts/deps.sh deb-arm64)
	$(Q)JOBS=$(JOBS) ARCH=$(DEB_ARCH) $(TOP)/scripts/build-deb.sh kernel tools $(if $(DEB_ARM64),,perf)

# The install test with those packages: a Debian 12 system made by
# mmdebstrap, booted in QEMU from its own disk (make check runs it with the
# bench kernel packaged instead, to stay within its time).
deb-check: deb
	$(Q)$(TOP)/scripts/check-deb.sh --kernel debian

# The arm64 packages (make deb ARCH=arm64) installed by dpkg into a Debian
# 12 arm64 system run under qemu-user, and the packaged kernel booted in
# qemu-system-aarch64 (scripts/check-deb-arm64.sh).  Not in make check.
deb-check-arm64: deps
	$(Q)$(MAKE) -s deb ARCH=arm64
	$(Q)$(TOP)/scripts/deps.sh arm64
	$(Q)$(TOP)/scripts/check-deb-arm64.sh

# Every benchmark, side by side in one run; report in build/bench/report.md.
bench: deps tree bpftool tests
	$(Q)$(TOP)/scripts/bench.sh

clean:
	$(Q)$(MAKE) -s -C tests O=$(B)/tests clean
	$(Q)rm -rf $(B)/vm $(B)/check

# Also forgets the prepared tree and both kernels (a cold rebuild follows).
distclean:
	$(Q)rm -rf $(B)

# Tools built on libbpfstash, each with its own Makefile (build/<name>/).
TOOL_DIRS := $(wildcard tools/bpfstash tools/bpfstash-gc)
tools: $(TOOL_DIRS)
$(TOOL_DIRS): libbpfstash
	$(Q)$(MAKE) -s -C $@ O=$(B)/$(notdir $@)
.PHONY: $(TOOL_DIRS)
