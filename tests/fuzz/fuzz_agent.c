// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the agent's handling of perf records
 * (bpfstash_agent_feed() and bpfstash_agent_poll(), tools/lib/bpfstash/agent.c):
 * the input is a sequence of records, each "u8 type, u8 size/8" then that
 * many bytes (the header is rewritten from these two), then addresses to
 * resolve.  Each record is fed from an exact-size copy, so that ASan sees
 * a read past it.  A record with no room for its sample_id time is refused.
 *
 * What must hold: nothing reads outside a record; a resolution names a
 * function that holds the address, of a program that held it at the time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "libbpfstash.h"

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_agent: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .root = "/nonexistent/stash",
					 .flags = BPFSTASH_AGENT_NO_RINGS };
	struct bpfstash_agent *a;
	size_t off = 0;
	int i;

	if (bpfstash_agent_open(&o, &a))
		return 0;
	for (i = 0; i < 64 && off + 2 <= size; i++) {
		static const uint8_t types[] = { BPFSTASH_PERF_RECORD_MMAP3, PERF_RECORD_BPF_EVENT, PERF_RECORD_LOST, 1,
						 PERF_RECORD_KSYMBOL };
		size_t len = (size_t)data[off + 1] * 8;
		struct perf_event_header *h;

		if (!data[off + 1] || off + 2 + len - sizeof(*h) > size)
			break;
		h = malloc(len);
		if (!h)
			break;
		memcpy((uint8_t *)h + sizeof(*h), data + off + 2, len - sizeof(*h));
		h->type = types[data[off] % sizeof(types)];
		h->misc = 0;
		h->size = len;
		/* Whole 8-byte words, and room for the sample_id's time. */
		must(bpfstash_agent_feed(a, h) == (len < sizeof(*h) + 8 ? -EINVAL : 0),
		     "a well-formed record refused, or one without a time taken");
		free(h);
		off += 2 + len - sizeof(struct perf_event_header);
		if (data[off - 1] & 1)
			bpfstash_agent_poll(a, 0);
	}
	bpfstash_agent_poll(a, 0);
	for (; off + 16 <= size; off += 16) {
		struct bpfstash_agent_sym sym;
		uint64_t addr, t;

		memcpy(&addr, data + off, 8);
		memcpy(&t, data + off + 8, 8);
		if (bpfstash_agent_resolve(a, addr, t, &sym))
			continue;
		must(sym.prog && sym.func, "a resolution without a program");
		must(sym.func->addr <= addr && addr - sym.func->addr < sym.func->len,
		     "the function does not hold the address");
		must(sym.offset == addr - sym.func->addr, "wrong offset");
		if (t)
			must(sym.prog->load_time <= t &&
			     (!sym.prog->unload_time || t < sym.prog->unload_time),
			     "the program did not hold the address then");
		else
			must(!sym.prog->unload_time, "now: an unloaded program");
	}
	bpfstash_agent_close(a);
	return 0;
}
