#!/bin/sh
# The perf ABI of PERF_RECORD_MMAP3 (tests/abi/perf_abi.c): no number that
# mainline uses, and the kernel's header, perf's copy and libbpfstash's
# mirror agree.  Prints PASS/FAIL/SKIP lines; run by scripts/check-host.sh.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tree=$top/build/linux
out=$top/build/abi
mkdir -p "$out"
rc=0
# The format version is pinned to the text of the hashed serialisation.
uapi=$top/include/uapi/linux/bpfstash.h
sum=$(awk '/BEGIN the hashed serialisation/ { f = 1 } f { print } /END the hashed serialisation/ { f = 0 }' \
	"$uapi" | sha256sum | cut -d' ' -f1)
version=$(sed -n 's/^#define BPFSTASH_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$uapi")
pinned=$(awk -v v="$version" '$1 == v { print $2 }' "$top/tests/abi/format-versions")
last=$(grep -v '^#' "$top/tests/abi/format-versions" | awk 'NF { v = $1 } END { print v }')
if ! grep -q 'BEGIN the hashed serialisation' "$uapi" || ! grep -q 'END the hashed serialisation' "$uapi"; then
	echo "FAIL abi.format_version: $uapi has no BEGIN/END markers around the hashed serialisation"
	rc=1
elif [ -z "$pinned" ]; then
	echo "FAIL abi.format_version: BPFSTASH_VERSION $version has no line in tests/abi/format-versions" \
		"(its serialisation's text hashes to $sum)"
	rc=1
elif [ "$pinned" != "$sum" ]; then
	echo "FAIL abi.format_version: the hashed serialisation changed (its text hashes to $sum," \
		"version $version was $pinned): bump BPFSTASH_VERSION and add a line for it"
	rc=1
elif [ "$version" != "$last" ]; then
	echo "FAIL abi.format_version: BPFSTASH_VERSION is $version, tests/abi/format-versions ends at $last"
	rc=1
else
	echo "PASS abi.format_version (version $version, serialisation text $sum)"
fi

if [ ! -f "$tree/.bpfstash-base" ]; then
	echo "SKIP abi.perf_numbers: build/linux is not prepared (make tree)"
	exit $rc
fi
run() {
	name=$1
	shift
	if ! gcc -Wall -Werror -o "$out/perf_abi_$name" "$top/tests/abi/perf_abi.c" "$@" \
		> "$out/$name.log" 2>&1; then
		echo "FAIL abi.perf_numbers_$name: does not build: $(head -n 3 "$out/$name.log" | tr '\n' ' ')"
		rc=1
		return
	fi
	if got=$("$out/perf_abi_$name" 2> "$out/$name.err"); then
		echo "PASS abi.perf_numbers_$name (PERF_RECORD_MMAP3 and attr bit: $got; mainline's: none)"
		echo "$got" > "$out/$name.got"
	else
		echo "FAIL abi.perf_numbers_$name: $(tr '\n' ' ' < "$out/$name.err")"
		rc=1
	fi
}
# perf_abi.c comes first on each command line, the libraries after it.  The
# two perf_event.h are taken alone, with the system's headers for the rest.
for h in kernel:include tools:tools/include; do
	mkdir -p "$out/${h%%:*}/linux"
	cp "$tree/${h#*:}/uapi/linux/perf_event.h" "$out/${h%%:*}/linux/"
done
run kernel -I"$out/kernel"
run tools -I"$out/tools"
run libbpfstash -DLIBBPFSTASH -I"$top/include/uapi" -I"$top/tools/lib/bpfstash" \
	"$top/build/libbpfstash/libbpfstash.a" -lbpf -lelf -lz -lcrypto -lzstd
if [ -f "$out/kernel.got" ] && [ -f "$out/tools.got" ] && [ -f "$out/libbpfstash.got" ]; then
	if [ "$(cat "$out/kernel.got")" = "$(cat "$out/tools.got")" ] &&
	   [ "$(cat "$out/kernel.got")" = "$(cat "$out/libbpfstash.got")" ]; then
		echo "PASS abi.perf_numbers_agree (kernel, perf's copy, libbpfstash: $(cat "$out/kernel.got"))"
	else
		echo "FAIL abi.perf_numbers_agree: kernel $(cat "$out/kernel.got"), perf's copy" \
			"$(cat "$out/tools.got"), libbpfstash $(cat "$out/libbpfstash.got")"
		rc=1
	fi
fi
exit $rc
