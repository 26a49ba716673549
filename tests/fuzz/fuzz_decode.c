// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for bpfstash decode's reading of untrusted text
 * (tools/bpfstash/decode_scan.c): the input is one line, NULs and all.
 *
 * What must hold: nothing reads outside the line; a frame found has a
 * NUL-terminated "bpf_prog_<16 hex>_..." symbol that occurs in the line, or
 * a kernel address; a time parses the same when printed back.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_decode: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfstash_resolve_opts o, again;
	struct decode_frame f;
	char *line = malloc(size ? size : 1), buf[64];

	if (!line)
		return 0;
	/* an exact-size copy: ASan sees a read past the line */
	memcpy(line, data, size);
	if (decode_scan(line, size, &f)) {
		must(f.has_symbol || f.has_addr || f.has_ksym, "a frame with nothing in it");
		if (f.has_ksym) {
			size_t n = strnlen(f.ksym, sizeof(f.ksym));
			char sym[DECODE_SYM_MAX + 1];

			must(!f.has_symbol && !f.has_addr, "a kernel symbol beside a BPF frame");
			must(n && n < sizeof(f.ksym), "kernel symbol empty or not terminated");
			memcpy(sym, f.ksym, n);
			sym[n] = '+';
			must(memmem(line, size, sym, n + 1) != NULL,
			     "kernel symbol and its '+' not from the line");
		}
		if (f.has_symbol) {
			size_t n = strnlen(f.symbol, sizeof(f.symbol));

			must(n < sizeof(f.symbol), "symbol not terminated");
			must(n >= 26 && !memcmp(f.symbol, "bpf_prog_", 9), "not a bpf_prog_ symbol");
			must(memmem(line, size, f.symbol, n) != NULL, "symbol not from the line");
		}
		if (f.has_addr)
			must(f.addr >> 48 == 0xffff, "not a kernel address");
	}
	if (!decode_parse_time(line, size, &o) && o.clock == BPFSTASH_CLOCK_BOOTTIME) {
		snprintf(buf, sizeof(buf), "%" PRIu64 ".%09" PRIu64, o.time_ns / 1000000000u,
			 o.time_ns % 1000000000u);
		must(!decode_parse_time(buf, strlen(buf), &again) && again.time_ns == o.time_ns,
		     "a time does not parse back");
	}
	free(line);
	return 0;
}
