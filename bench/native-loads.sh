#!/bin/sh
# The programs whose load time is taken natively, by the host's own kernel
# (scripts/bench.sh) and by 6.12 as user-mode Linux (bench/uml-init.sh):
# one list for both.  Prints loadbench's CSV rows, stash not mounted.
#
#   bench/native-loads.sh [ROUNDS]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build/bench
p=$top/build/tests/progs
r=${1:-1}
for insns in 3 64 512 4096; do
	n=100
	[ "$insns" -ge 4096 ] && n=30
	"$b/loadbench" -r "$r" -n $n --only unmounted --csv -l "synthetic-$insns" -i $insns
done
# Label and object; the labels of the programs of KUnit's benchmark of
# the load hook (bench/hook-kunit.sh) are its own: the report sets each
# hook time against the load of the same program.
while read -r label obj; do
	"$b/loadbench" -r "$r" -n 30 --only unmounted --csv -l "$label" -o "$p/$obj.bpf.o"
done <<EOF
subprogs subprogs
large large
trivial tiny
insns4096 insns4096
funcs256 many
EOF
