// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for perf's PERF_RECORD_MMAP3 handling: the checks, byte
 * swapping and printing of tools/perf/util/mmap3.c, which
 * perf runs on every MMAP3 record of a perf.data file before anything else
 * looks at it.  Built from the prepared tree's copy of that file, with
 * ASan and UBSan (tests/fuzz/Makefile).
 *
 * Input: one byte of parameters (bits 0-2: the sample_id trailer size in
 * u64s; bit 3: the file is of the other byte order; bit 4: sample_id_all),
 * then the record, exactly as many bytes as perf would have mapped for it
 * (header.size is set to that length, the type to PERF_RECORD_MMAP3).
 *
 * What must hold: nothing reads outside the record, whatever it holds; and
 * a record that passes perf_event__mmap3_check() has a hash_size of at most
 * 20, a non-empty range, and a NUL-terminated name that ends before the
 * sample_id trailer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perf/event.h>

#include "util/mmap3.h"

static FILE *devnull;

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_mmap3: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t id_hdr_size, len;
	const char *reason = NULL;
	union perf_event *event;
	uint8_t params;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size < 1 + sizeof(struct perf_event_header))
		return 0;
	params = data[0];
	id_hdr_size = (params & 7) * sizeof(uint64_t);
	len = size - 1 > UINT16_MAX ? UINT16_MAX : size - 1;

	/* Exactly len bytes: ASan sees any read past the record. */
	event = malloc(len);
	if (!event)
		return 0;
	memcpy(event, data + 1, len);
	event->header.type = PERF_RECORD_MMAP3;
	event->header.size = len;

	/* As perf_session__process_event(): swap first, then check. */
	if (params & 8)
		perf_event__mmap3_swap(event, params & 16);
	if (!perf_event__mmap3_check(event, id_hdr_size, &reason)) {
		const struct perf_record_mmap3 *mmap3 = &event->mmap3;
		size_t room = len - PERF_RECORD_MMAP3_FIXED_SIZE - id_hdr_size;

		must(len >= PERF_RECORD_MMAP3_FIXED_SIZE + 8 + id_hdr_size, "passed, too short");
		must(mmap3->hash_size <= PERF_RECORD_MMAP3_HASH_MAX, "passed, hash_size > 20");
		must(mmap3->len && mmap3->addr + mmap3->len > mmap3->addr, "passed, bad range");
		must(strnlen(mmap3->name, room) < room, "passed, name not terminated");
		if (perf_event__mmap3_is_stashed(event))
			must(mmap3->hash_size > 0, "stashed without a hash");
		fprintf(devnull, "%s\n", mmap3->name);
	} else {
		must(reason != NULL, "refused without a reason");
	}
	/* Printing (perf script -D, --show-mmap-events) takes any record. */
	perf_event__fprintf_mmap3(event, devnull);
	free(event);
	return 0;
}
