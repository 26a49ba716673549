#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the 6.12 BPF selftests' runner, test_progs, from build/linux with the
# bpfstash test alone, into build/selftests/ (out of tree):
#
#   scripts/build-selftests.sh          then, as root (in the guest):
#   build/selftests/test_progs -t bpfstash -v
#
# tools/testing/selftests/bpf/Makefile builds every prog_test and BPF
# program of the tree (and vmlinux.h, bpf_testmod.ko, ...), far too much for
# a 2-core machine.  This script builds what its test_progs rule builds for
# one test, with that Makefile's flags:
#   - libbpf from tools/lib/bpf with its own Makefile, as the selftests'
#     $(BPFOBJ) rule does (build/selftests/tools/);
#   - progs/bpfstash*.c with clang --target=bpf -mcpu=v3 and BPF_CFLAGS
#     (the uapi headers of "make headers", build/headers/include, stand for
#     the selftests' ../usr/include), linked and turned into a skeleton with
#     bpftool gen object/skeleton as DEFINE_TEST_RUNNER_RULES does, by the
#     bpftool of "make bpftool" (build/bpftool/bpftool);
#   - TRUNNER_EXTRA_SOURCES (read from that Makefile) and
#     prog_tests/bpfstash.c with CFLAGS, against a tests.h that lists only
#     bpfstash (build/selftests/gen/prog_tests/tests.h, found before the
#     tree's), linked as test_progs.
# Left out: LLVM (jit_disasm_helpers.c builds its stubs; linking LLVM
# statically costs minutes), libpcap (not installed), resolve_btfids on the
# binary (only tests with BTF_ID sets in userspace need it) and the extra
# files (bpf_testmod.ko, urandom_read: test_progs warns once that tests
# relying on bpf_testmod.ko are skipped).
#
# The repository's files under tools/testing/selftests/bpf/ come with the
# kernel series (patches/kernel/series), linked into the tree by
# scripts/prepare-tree.sh.
#
# Incremental: a generated Makefile with -MMD dependencies does the work, so
# a second run with nothing changed only runs make.  Measured on the 2-core
# build machine (gcc 12, clang 14, no ccache): cold (empty build/selftests)
# 9 s idle and 24 s beside another engineer's kernel build; nothing changed
# 1-2 s; after editing prog_tests/bpfstash.c 3 s, progs/bpfstash.c 4 s.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
self=$tree/tools/testing/selftests/bpf
out=$top/build/selftests
bpftool=$top/build/bpftool/bpftool
hdrs=$top/build/headers/include
jobs=${JOBS:-$(nproc)}

die() { echo "build-selftests: $*" >&2; exit 1; }
step() { printf '  %-8s %s\n' "$1" "$2"; }

[ -f "$self/test_progs.c" ] || die "$self/test_progs.c missing: prepare the tree first (make tree)"
[ -x "$bpftool" ] || die "$bpftool missing: build it first (make bpftool)"
[ -f "$hdrs/linux/bpfstash.h" ] || die "$hdrs/linux/bpfstash.h missing: install the headers first (make headers)"
command -v clang > /dev/null || die "clang not found (scripts/deps.sh installs it)"
command -v "${CC:=gcc}" > /dev/null || die "$CC not found"
mkdir -p "$out/gen/prog_tests" "$out/tools/build/libbpf"

# The repository's selftest files, which the series links into the tree.
srcs=()
for f in "$top"/tools/testing/selftests/bpf/prog_tests/bpfstash*.c \
	 "$top"/tools/testing/selftests/bpf/progs/bpfstash*.c; do
	[ -f "$f" ] || continue
	rel=${f#"$top"/}
	srcs+=("$rel")
	[ "$(readlink "$tree/$rel" 2> /dev/null)" = "$f" ] ||
		die "$rel is not linked into build/linux: prepare the tree (make tree)"
done
[ -f "$self/prog_tests/bpfstash.c" ] || die "prog_tests/bpfstash.c is not in the tree"

# The helpers test_progs is linked with, as its Makefile lists them.
extra=$(sed -n '/^TRUNNER_EXTRA_SOURCES := test_progs.c/,/[^\\]$/p' "$self/Makefile" |
	tr -d '\\' | sed 's/TRUNNER_EXTRA_SOURCES :=//' | tr ' \t' '\n\n' | grep '\.c$' | sort -u |
	tr '\n' ' ')
case " $extra " in
*" test_progs.c "*) ;;
*) die "cannot read TRUNNER_EXTRA_SOURCES from $self/Makefile" ;;
esac

# tests.h: the bpfstash test alone, written only when it changes.
{
	echo '/* Generated header, do not edit */'
	sed -n -E 's/^void (serial_)?test_([a-zA-Z0-9_]+)\((void)?\).*/DEFINE_TEST(\2)/p' \
		"$self"/prog_tests/bpfstash*.c | sort
} > "$out/gen/prog_tests/tests.h.new"
grep -q DEFINE_TEST "$out/gen/prog_tests/tests.h.new" || die "no test_*() in prog_tests/bpfstash*.c"
if cmp -s "$out/gen/prog_tests/tests.h.new" "$out/gen/prog_tests/tests.h"; then
	rm "$out/gen/prog_tests/tests.h.new"
else
	step TEST-HDR "$out/gen/prog_tests/tests.h"
	mv "$out/gen/prog_tests/tests.h.new" "$out/gen/prog_tests/tests.h"
fi

# libbpf, with the selftests' own rule (its Makefile is incremental).
step LIBBPF "$out/tools/build/libbpf/libbpf.a"
make -s -C "$tree/tools/lib/bpf" -j"$jobs" OUTPUT="$out/tools/build/libbpf/" \
	EXTRA_CFLAGS='-g -O0' EXTRA_LDFLAGS= DESTDIR="$out/tools" prefix= \
	all install_headers > "$out/libbpf.log" 2>&1 ||
	{ tail -30 "$out/libbpf.log"; die "libbpf failed, log in $out/libbpf.log"; }

# The selftests Makefile's get_sys_includes, for clang --target=bpf.
sys_includes=$(clang -v -E - < /dev/null 2>&1 |
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }' |
	tr '\n' ' ')
genflags=""
gendir=$top/build/kernel-debug/include/generated
[ -f "$gendir/autoconf.h" ] && genflags=-DHAVE_GENHDR
libelf_cflags=$(pkg-config libelf --cflags 2> /dev/null || true)
libelf_libs=$(pkg-config libelf --libs 2> /dev/null || echo -lelf)

cat > "$out/Makefile" <<EOF
# Generated by scripts/build-selftests.sh: test_progs with the bpfstash test.
SELF := $self
OUT := $out
BPFTOOL := $bpftool
TOOLS := $tree/tools
INCLUDE_DIR := $out/tools/include
BPFOBJ := $out/tools/build/libbpf/libbpf.a
CC := $CC

# tools/testing/selftests/bpf/Makefile's CFLAGS (OPT_FLAGS -O0, lib.mk's
# -D_GNU_SOURCE=), with gen/ first for <prog_tests/tests.h>.
CFLAGS := -g -O0 -rdynamic -Wall -Werror -fno-omit-frame-pointer \\
	$genflags $libelf_cflags -I\$(OUT)/gen \\
	-I\$(SELF) -I\$(INCLUDE_DIR) -I$gendir -I\$(TOOLS)/lib \\
	-I\$(TOOLS)/include -I\$(TOOLS)/arch/x86/include -I\$(TOOLS)/include/uapi \\
	-I\$(OUT) -D_GNU_SOURCE=
LDLIBS := $libelf_libs -lz -lrt -lpthread

# Its BPF_CFLAGS, CLANG_CFLAGS and TRUNNER_BPF_CFLAGS, and CLANG_BPF_BUILD_RULE.
BPF_CFLAGS := -g -Wall -Werror -D__TARGET_ARCH_x86 -mlittle-endian \\
	-I\$(INCLUDE_DIR) -I\$(SELF) -I\$(TOOLS)/include/uapi -I$hdrs \\
	-Wno-compare-distinct-pointer-types $sys_includes -DENABLE_ATOMICS_TESTS

PROGS := \$(patsubst progs/%.c,%,$(printf '%s\n' "${srcs[@]}" | sed -n 's|^tools/testing/selftests/bpf/||; /^progs\//p' | tr '\n' ' '))
TESTS := \$(patsubst prog_tests/%.c,%,$(printf '%s\n' "${srcs[@]}" | sed -n 's|^tools/testing/selftests/bpf/||; /^prog_tests\//p' | tr '\n' ' '))
EXTRA := $extra
SKELS := \$(PROGS:%=\$(OUT)/%.skel.h)
OBJS := \$(TESTS:%=\$(OUT)/%.test.o) \$(EXTRA:%.c=\$(OUT)/%.o)

\$(OUT)/test_progs: \$(OBJS) \$(BPFOBJ)
	@printf '  %-8s %s\n' BINARY \$@
	@\$(CC) \$(CFLAGS) \$^ \$(LDLIBS) -o \$@

\$(OUT)/%.bpf.o: \$(SELF)/progs/%.c \$(wildcard \$(SELF)/progs/*.h) \$(BPFOBJ)
	@printf '  %-8s %s\n' CLNG-BPF \$@
	@clang \$(BPF_CFLAGS) -O2 --target=bpf -c \$< -mcpu=v3 -o \$@

\$(OUT)/%.skel.h: \$(OUT)/%.bpf.o \$(BPFTOOL)
	@printf '  %-8s %s\n' GEN-SKEL \$@
	@\$(BPFTOOL) gen object \$(<:.o=.linked1.o) \$<
	@\$(BPFTOOL) gen object \$(<:.o=.linked2.o) \$(<:.o=.linked1.o)
	@\$(BPFTOOL) gen object \$(<:.o=.linked3.o) \$(<:.o=.linked2.o)
	@diff \$(<:.o=.linked2.o) \$(<:.o=.linked3.o)
	@\$(BPFTOOL) gen skeleton \$(<:.o=.linked3.o) name \$* > \$@.tmp
	@mv \$@.tmp \$@
	@rm -f \$(<:.o=.linked1.o) \$(<:.o=.linked2.o) \$(<:.o=.linked3.o)

\$(OUT)/%.test.o: \$(SELF)/prog_tests/%.c \$(SKELS) \$(BPFOBJ)
	@printf '  %-8s %s\n' TEST-OBJ \$@
	@cd \$(OUT) && \$(CC) -I. \$(CFLAGS) -MMD -MP -c \$< -o \$@

\$(OUT)/%.o: \$(SELF)/%.c \$(OUT)/gen/prog_tests/tests.h \$(BPFOBJ)
	@printf '  %-8s %s\n' EXT-OBJ \$@
	@\$(CC) \$(CFLAGS) -MMD -MP -c \$< -o \$@

.DELETE_ON_ERROR:
.SECONDARY:
-include \$(OBJS:.o=.d)
EOF

# Regenerating the Makefile must not rebuild: make decides from the sources.
make -s -C "$out" -f "$out/Makefile" -j"$jobs" ||
	die "build failed (rules in $out/Makefile)"
echo "  DONE     $out/test_progs (run: test_progs -t bpfstash -v)"
