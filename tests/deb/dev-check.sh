#!/bin/sh
# Run by scripts/check-deb.sh in the Debian 12 system it builds, after apt
# installed libbpfstash-dev with only the packages it depends on (and
# pkgconf and gcc): its pkg-config file resolves, alone and for a static
# link, and a program compiles, links and runs against the library.
set -e
pkg-config --modversion libbpfstash
pkg-config --cflags --libs libbpfstash
pkg-config --static --libs libbpfstash
cat > /tmp/dev-check.c <<'SRC'
#include <stdio.h>
#include <libbpfstash.h>

int main(void)
{
	printf("libbpfstash %d.%d, entry format %u\n", LIBBPFSTASH_MAJOR_VERSION,
	       LIBBPFSTASH_MINOR_VERSION, bpfstash_format_version());
	return bpfstash_format_version() == BPFSTASH_VERSION ? 0 : 1;
}
SRC
# shellcheck disable=SC2046
gcc -Wall -Werror /tmp/dev-check.c $(pkg-config --cflags --libs libbpfstash) -o /tmp/dev-check
/tmp/dev-check
echo "dev-check: ok"
