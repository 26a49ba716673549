#!/bin/sh
# make demo: the story of bpfstash in a QEMU guest (see README.md).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
exec "$top/scripts/vm-run" -k debug -o "$top/build/demo" -t 900 -- "$top/tests/demo/guest.sh"
