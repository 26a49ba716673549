#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# In-guest suite "selftests": the kernel's own BPF selftest of bpfstash,
# tools/testing/selftests/bpf/prog_tests/bpfstash.c, run by the 6.12
# selftests' runner test_progs as scripts/build-selftests.sh builds it
# (build/selftests/test_progs, with that test alone):
#
#   entry_matches_info     a program loaded while the store runs has an
#                          entry whose jited file is jited_prog_insns and
#                          whose meta and info name the program, loaded;
#   entry_survives_unload  the entry outlives the program's last close, the
#                          same image, unloaded; rmdir refuses it with EBUSY
#                          before, removes it after;
#   subprog_funcs          a program with two subprograms: one funcs record
#                          per JITed function (address, length, offset, tag,
#                          kallsyms name), func_info and line_info counts;
#   stats_count            stats counts the loads, loaded and unloaded
#                          entries and deletions, and as many entries as the
#                          root lists.
#
# Each test_progs subtest becomes a PASS/FAIL/SKIP selftests.<subtest> line
# (the first failed assertion is the reason), a failure outside the
# subtests (the store's setup or teardown) FAIL selftests.bpfstash.
# Arguments: subtest names, to run only those.  test_progs' own output is
# printed too, indented.  Exit status 1 on any failure.
top=${BPFSTASH_TOP:?}
dir=$top/build/selftests
bin=$dir/test_progs

if [ ! -x "$bin" ]; then
	echo "FAIL selftests.setup: $bin is not built (scripts/build-selftests.sh)"
	exit 1
fi

# test_progs saves and restores the network namespace around every test
# and refuses to start without one to open.
if [ ! -e /proc/self/ns/net ]; then
	echo "SKIP selftests.bpfstash: test_progs needs /proc/self/ns/net, and this kernel has no network namespaces (CONFIG_NET_NS)"
	exit 0
fi

sel=bpfstash
if [ $# -gt 0 ]; then
	sel=""
	for t in "$@"; do
		sel="$sel${sel:+,}bpfstash/$t"
	done
fi

log=$(mktemp /tmp/selftests.XXXXXX) || { echo "FAIL selftests.setup: mktemp"; exit 1; }
trap 'rm -f "$log"' EXIT

# From its own directory, as the selftests run it (it looks for its extra
# files there; bpf_testmod.ko is not built, so it warns that tests relying
# on it are skipped: this one does not).
(cd "$dir" && ./test_progs -v -a "$sel") > "$log" 2>&1
src=$?
sed 's/^/  /' "$log"

# "#N/M test/subtest:RESULT" ends a subtest, "#N test:RESULT" a test; the
# lines before them hold the reasons: "func:FAIL:name message" of a failed
# assertion, "func:SKIP:reason" of a skip.
awk -v src="$src" '
function reason(r) {
	sub(/^[^:]*:(FAIL|SKIP):/, "", r)
	gsub(/[ \t]+/, " ", r)
	return length(r) > 200 ? substr(r, 1, 200) "..." : r
}
function report(name, res, why) {
	if (res == "OK") {
		print "PASS selftests." name
	} else if (res == "SKIP") {
		print "SKIP selftests." name ": " (why != "" ? why : "skipped by test_progs")
	} else {
		print "FAIL selftests." name ": " (why != "" ? why : "test_progs says " res)
		failed = 1
	}
}
/^#[0-9]+\/[0-9]+ / {
	line = $0
	sub(/^#[0-9]+\/[0-9]+ +/, "", line)
	res = line; sub(/^[^:]*:/, "", res)
	name = line; sub(/:[^:]*$/, "", name)
	test = name; sub(/\/.*/, "", test)
	sub(/^[^\/]*\//, "", name)
	if (test != "bpfstash")
		name = test "." name
	report(name, res, res == "FAIL" ? fail : skip)
	subtests++
	if (res == "FAIL")
		subfailed++
	fail = skip = ""
	next
}
/^#[0-9]+ / {
	line = $0
	sub(/^#[0-9]+ +/, "", line)
	res = line; sub(/^[^:]*:/, "", res); sub(/ .*/, "", res)
	test = line; sub(/:.*/, "", test)
	tests++
	# A test without subtests, or one that failed outside them.
	if (!subtests)
		report(test, res, res == "FAIL" ? fail : skip)
	else if (res == "FAIL" && !subfailed)
		report(test, res, fail != "" ? "outside the subtests: " fail : "")
	subtests = subfailed = 0
	fail = skip = ""
	next
}
/:FAIL:/ && fail == "" { fail = reason($0) }
/:SKIP:/ && skip == "" { skip = reason($0) }
END {
	if (!tests) {
		print "FAIL selftests.run: test_progs exited " src " and ran no test (output above)"
		failed = 1
	} else if (src != 0 && !failed) {
		print "FAIL selftests.run: test_progs exited " src
		failed = 1
	}
	exit failed
}' "$log"
