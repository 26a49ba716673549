#!/bin/bash
# The series test of make check: the patch series are what the harness
# builds, and every patch builds.  Prints one PASS/FAIL line per check:
#
#   series.generate      make-series.sh writes every series (git
#                        format-patch) and checkpatch.pl --strict says
#                        nothing that the cover letters do not list
#   series.git_am        git am of every series, in patches/series order,
#                        onto the pristine tree (build/series/linux)
#   series.same_tree     that tree equals build/linux, which the kernels,
#                        perf and the tests are built from, file for file
#                        (the harness's links to this repository followed)
#   series.builds.<s>    at each patch of series <s>, the objects of the
#                        files it touches compile: the kernel's with the
#                        bench kernel's configuration plus KUnit, perf's
#                        with make perf's options but no BPF skeletons
#   series.kunit         at each patch of the kernel series that touches
#                        the store (kernel/bpf/stash*, bpfstash.h), its
#                        KUnit tests pass (kunit.py, user-mode Linux);
#                        SERIES_KUNIT=ends: at the first and the last of
#                        them only (make check, for its time)
#
# Build directories: build/series/obj-kernel, build/series/obj-perf,
# build/series/kunit-um.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/series
repo=$out/linux
tree=$top/build/linux
jobs=${JOBS:-$(nproc)}

pass() { echo "PASS series.$1${2:+ ($2)}"; }
fail() { echo "FAIL series.$1: $2"; }
note() { echo "  series.$1: $2"; }

git_() { git -C "$repo" -c user.name="bpfstash developers" -c user.email=bpfstash@localhost \
	-c advice.detachedHead=false "$@"; }

series_list() { grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/series"; }

# 1. Generate.
t0=$(date +%s)
if "$top/scripts/make-series.sh" > "$out.log" 2>&1; then
	pass generate "$(($(date +%s) - t0)) s; $(grep -c . "$out/checkpatch.txt") checkpatch messages, each listed"
else
	fail generate "$(tail -n 5 "$out.log" | tr '\n' ' ')"
	exit 1
fi
sed 's/^/  /' "$out/checkpatch.txt"

# 2. git am, every series in order, onto the pristine tree.
t0=$(date +%s)
git_ checkout -q -f -B am base && git_ clean -q -fdx
am_ok=1
for s in $(series_list); do
	if ! git_ am -q --keep-cr $(find "$out/$s" -name '0*.patch' ! -name '0000-cover-letter.patch' |
				  sort) > "$out/am.log" 2>&1; then
		fail git_am "$s: $(head -n 3 "$out/am.log" | tr '\n' ' ')"
		git_ am --abort > /dev/null 2>&1
		am_ok=0
		break
	fi
done
[ "$am_ok" = 1 ] || exit 1
pass git_am "$(git_ rev-list --count base..am) patches, $(($(date +%s) - t0)) s"

# 3. The tree git am gives is the harness's tree.  build/linux also holds
# what prepare-tree.sh records there (.bpfstash-*); nothing is built in it.
t0=$(date +%s)
if diff -rq -x .git -x '.bpfstash-*' "$tree" "$repo" > "$out/same-tree.diff" 2>&1; then
	pass same_tree "$(git_ diff --name-only base am | wc -l) files changed or new, \
$(($(date +%s) - t0)) s"
else
	fail same_tree "$(grep -c . "$out/same-tree.diff") differences, first: \
$(head -n 3 "$out/same-tree.diff" | tr '\n' ' ') (all: build/series/same-tree.diff)"
fi

# 4. Every patch builds the objects it touches.
kobj=$out/obj-kernel
pobj=$out/obj-perf
mkdir -p "$kobj" "$pobj"
# The bench kernel's configuration, with the KUnit tests and fault
# injection: every file of the series is built.  Symbols a commit does not know yet are dropped by
# olddefconfig and come back from this copy at the next.
kconfig=$out/kernel.config
if [ -f "$top/build/kernel-bench/.config" ]; then
	{ cat "$top/build/kernel-bench/.config"; echo CONFIG_KUNIT=y
	  echo CONFIG_BPFSTASH_KUNIT_TEST=y; echo CONFIG_BPFSTASH_KUNIT_BENCH=y
	  echo CONFIG_DEBUG_KERNEL=y
	  echo CONFIG_FAULT_INJECTION=y; } > "$kconfig"
else
	fail builds "build/kernel-bench/.config is missing (make kernel-bench)"
	exit 1
fi

# What make builds for @files (paths in the tree): a .c file's object, or
# the objects of the files that include it (stash.c includes
# stash_kunit.c); a new directory's Makefile, the directory.  An edit to an
# existing Makefile or Kconfig is built by the objects it adds.
kernel_targets() {
	local f o d inc
	for f in "$@"; do
		d=$(dirname "$f")
		# Another architecture's file: make kernel-arm64 builds it.
		case "$f" in arch/x86/*) ;; arch/*) continue ;; esac
		case "$f" in
		tools/*) ;;
		*.c)
			o=$(basename "${f%.c}.o")
			if grep -qw "$o" "$repo/$d/Makefile" 2>/dev/null; then
				echo "${f%.c}.o"
			else
				for inc in $(grep -l "#include \"$(basename "$f")\"" "$repo/$d"/*.c); do
					inc=${inc#"$repo"/}
					echo "${inc%.c}.o"
				done
			fi ;;
		*/Makefile)
			git_ cat-file -e "base:$f" 2>/dev/null || echo "$d/" ;;
		esac
	done | sort -u
}
perf_targets() {
	local f
	for f in "$@"; do
		case "$f" in
		# Each arch's annotate/instructions.c is #included by disasm.c.
		tools/perf/arch/*/annotate/instructions.c) echo util/disasm.o ;;
		tools/perf/*.c) echo "${f#tools/perf/}" | sed 's/\.c$/.o/' ;;
		# libbpfstash, as perf builds it (patch 3/7 adds it).
		tools/lib/bpfstash/*.c) echo "$pobj/libbpfstash/libbpfstash.a" ;;
		esac
	done | sort -u
}

for s in $(series_list); do
	t0=$(date +%s)
	bad=""
	n=0
	# The commits of series s are those whose patch files it holds: its
	# position in patches/series decides which range of am they are.
	skip=0
	for x in $(series_list); do
		[ "$x" = "$s" ] && break
		skip=$((skip + $(find "$out/$x" -name '0*.patch' ! -name '0000-*' | wc -l)))
	done
	count=$(find "$out/$s" -name '0*.patch' ! -name '0000-*' | wc -l)
	for c in $(git_ rev-list --reverse base..am | sed -n "$((skip + 1)),$((skip + count))p"); do
		n=$((n + 1))
		git_ checkout -q -f "$c"
		subject=$(git_ log -1 --format=%s "$c")
		mapfile -t files < <(git_ diff-tree --no-commit-id --name-only -r "$c")
		mapfile -t ktargets < <(kernel_targets "${files[@]}")
		mapfile -t ptargets < <(perf_targets "${files[@]}")
		# Headers and Kconfig alone: build what includes them in this series.
		if [ ${#ktargets[@]} = 0 ] && [ ${#ptargets[@]} = 0 ]; then
			case " ${files[*]}" in
			*" kernel/bpf/Kconfig"*|*" include/"*) ktargets=(kernel/bpf/) ;;
			esac
		fi
		if [ ${#ktargets[@]} -gt 0 ]; then
			cp "$kconfig" "$kobj/.config"
			if ! make -s -C "$repo" O="$kobj" olddefconfig > "$out/build.log" 2>&1 ||
			   ! make -s -C "$repo" O="$kobj" -j"$jobs" W=1 CC="ccache gcc" "${ktargets[@]}" \
				>> "$out/build.log" 2>&1; then
				bad="$bad [$n/$count $subject: $(grep -m 2 -E ': (fatal )?error:|\*\*\*' "$out/build.log" | tr '\n' ' ')]"
				continue
			fi
			# W=1 warnings in the files of the patch count as failures.
			if grep -E "^$repo/($(IFS='|'; echo "${files[*]}" | sed 's/\./\\./g')):[0-9]+:[0-9]+: warning" \
				"$out/build.log" > "$out/warnings.log"; then
				bad="$bad [$n/$count $subject: warning: $(head -n 1 "$out/warnings.log")]"
			fi
		fi
		if [ ${#ptargets[@]} -gt 0 ]; then
			# Goals one after the other (JOBS= parallelises each): two
			# at once would build perf's libraries twice, racing.
			# Without BPF skeletons (their bootstrap bpftool and
			# clang runs are most of a cold build, and no patch
			# touches them); make perf builds them.
			if ! make -s -C "$repo/tools/perf" O="$pobj" NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 CC="ccache gcc" \
				JOBS="$jobs" "${ptargets[@]}" > "$out/build.log" 2>&1; then
				bad="$bad [$n/$count $subject: $(grep -m 2 -E ': (fatal )?error:|\*\*\*' "$out/build.log" | tr '\n' ' ')]"
				continue
			fi
		fi
		note "builds.$s" "$n/$count ${ktargets[*]} ${ptargets[*]}"
	done
	if [ -z "$bad" ]; then
		pass "builds.$s" "$count patches, $(($(date +%s) - t0)) s"
	else
		fail "builds.$s" "$bad"
	fi
done

# 5. KUnit at each patch of the store, as user-mode Linux: the store's
# logic at every step, in seconds a step once the first has built.  The
# kernel series lets CONFIG_BPFSTASH build only with a JIT and perf
# events, which UML has neither of; the harness's bench series lets it
# build there with KUnit, and so does this to each commit's Kconfig and
# Makefile before it builds (git checkout -f puts them back).
t0=$(date +%s)
kdir=$out/kunit-um
mkdir -p "$kdir"
cc=gcc
command -v ccache > /dev/null 2>&1 && cc="ccache gcc"
export KBUILD_BUILD_TIMESTAMP="1970-01-01" KBUILD_BUILD_USER=bpfstash KBUILD_BUILD_HOST=build
bad=""
steps=0
count=$(find "$out/kernel" -name '0*.patch' ! -name '0000-*' | wc -l)
# The patches of the store: every one, or with SERIES_KUNIT=ends (make
# check, for its time) the first and the last.
n=0
steps_all=""
for c in $(git_ rev-list --reverse base..am | head -n "$count"); do
	n=$((n + 1))
	git_ diff-tree --no-commit-id --name-only -r "$c" |
		grep -q '^kernel/bpf/stash\|^include/linux/bpfstash\.h$' && steps_all="$steps_all $n:$c"
done
if [ "${SERIES_KUNIT:-all}" = ends ]; then
	read -r -a each <<< "$steps_all"
	[ ${#each[@]} -le 2 ] || steps_all="${each[0]} ${each[-1]}"
fi
for step in $steps_all; do
	n=${step%%:*}
	c=${step#*:}
	git_ checkout -q -f "$c"
	sed -i 's/^\tdepends on BPF_SYSCALL && BPF_JIT && PERF_EVENTS$/\tdepends on BPF_SYSCALL \&\& ((BPF_JIT \&\& PERF_EVENTS) || (UML \&\& KUNIT))/' \
		"$repo/kernel/bpf/Kconfig"
	sed -i 's/^obj-\$(CONFIG_BPFSTASH) += \(.*\) stash_image.o$/obj-$(CONFIG_BPFSTASH) += \1\nifeq ($(CONFIG_BPF_JIT),y)\nobj-$(CONFIG_BPFSTASH) += stash_image.o\nendif/' \
		"$repo/kernel/bpf/Makefile"
	subject=$(git_ log -1 --format=%s "$c")
	(cd "$repo" && python3 tools/testing/kunit/kunit.py run --arch=um \
		--kunitconfig="$top/configs/kunit-test.kunitconfig" --build_dir="$kdir" \
		--jobs="$jobs" --make_options "CC=$cc" --timeout 600) > "$out/kunit.log" 2>&1
	rc=$?
	summary=$(grep -a -m 1 -o 'Ran [0-9]* tests: passed: [0-9]*.*' "$out/kunit.log")
	if [ $rc != 0 ] || ! echo "$summary" | grep -q 'passed: [1-9]' ||
	   echo "$summary" | grep -q 'failed\|crashed'; then
		bad="$bad [$n/$count $subject: ${summary:-kunit.py exited $rc: $(grep -a -m 2 -E 'error:|FAILED' \
			"$out/kunit.log" | tr '\n' ' ')}]"
		cp "$out/kunit.log" "$out/kunit.$n.log"
	else
		note kunit "$n/$count $subject: $summary"
	fi
	steps=$((steps + 1))
done
if [ "$steps" = 0 ]; then
	fail kunit "no patch of the kernel series touches kernel/bpf/stash*"
elif [ -z "$bad" ]; then
	pass kunit "$steps patches${SERIES_KUNIT:+ (SERIES_KUNIT=$SERIES_KUNIT)}, $(($(date +%s) - t0)) s"
else
	fail kunit "$bad (logs: build/series/kunit.<n>.log)"
fi
git_ checkout -q -f --detach base
