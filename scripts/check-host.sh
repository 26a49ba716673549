#!/bin/bash
# The host half of make check: build and run the cmocka unit tests of the
# userspace tools (tests/host) and the short fuzzing runs.  Prints one
# PASS/FAIL/SKIP line per test.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
make -s -C "$top/tests/host" run || rc=1
# libbpfstash's ABI: the functions its header declares are the symbols its
# version script exports, and those the shared library exports.
lib=$top/tools/lib/bpfstash
declared=$(grep -oE '^[a-z].*\b(lib)?bpfstash_[a-z_0-9]*\(' "$lib/libbpfstash.h" |
	grep -oE '\b(lib)?bpfstash_[a-z_0-9]*\(' | tr -d '(' | sort -u)
listed=$(grep -oE '^[[:space:]]*(lib)?bpfstash_[a-z_0-9]*;' "$lib/libbpfstash.map" | tr -d ' \t;' | sort -u)
exported=$(nm -D --defined-only "$top/build/libbpfstash/libbpfstash.so" 2>/dev/null |
	awk '$3 ~ /^(lib)?bpfstash_/ { sub(/@.*/, "", $3); print $3 }' | sort -u)
if [ "$declared" = "$listed" ] && [ "$listed" = "$exported" ]; then
	echo "PASS libbpfstash.abi ($(echo "$listed" | wc -l) functions: header = version script = exports)"
else
	echo "FAIL libbpfstash.abi: header, version script and exports differ:" \
		"$(diff <(echo "$declared") <(echo "$listed") | grep '^[<>]' | tr '\n' ' ')" \
		"$(diff <(echo "$listed") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"
	rc=1
fi
# make deb refuses a kernel configuration it cannot use, and says why.
if [ -f "$top/build/linux/.bpfstash-base" ]; then
	tmp=$(mktemp -d)
	echo "hello" > "$tmp/notconfig"
	printf 'CONFIG_BPF_SYSCALL=y\nCONFIG_PERF_EVENTS=y\n# CONFIG_BPF_JIT is not set\n' > "$tmp/nojit"
	for t in "missing:/nonexistent/config:no such file" "notconfig:$tmp/notconfig:not a kernel configuration" \
		 "nojit:$tmp/nojit:CONFIG_BPF_JIT is not =y"; do
		name=${t%%:*} rest=${t#*:}
		file=${rest%%:*} want=${rest#*:}
		msg=$(KCONFIG=$file "$top/scripts/build-deb.sh" kernel 2>&1)
		st=$?
		if [ "$st" != 0 ] && echo "$msg" | grep -qF "KCONFIG=$file: $want"; then
			echo "PASS deb.kconfig_$name (exit $st: $(echo "$msg" | tail -n 1))"
		else
			echo "FAIL deb.kconfig_$name: exit $st: $msg"
			rc=1
		fi
	done
	rm -rf "$tmp"
else
	echo "SKIP deb.kconfig: build/linux is not prepared (make tree)"
fi
"$top/tests/abi/check.sh" || rc=1
if [ -x "$top/scripts/check-fuzz.sh" ]; then
	"$top/scripts/check-fuzz.sh" || rc=1
fi
exit $rc
