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
 * With bit 5 set, the rest is instead a perf.data header section of
 * records (HEADER_BPFSTASH_MMAP3, tools/perf/util/mmap3-feat.c).
 *
 * What must hold: nothing reads outside the record, whatever it holds; and
 * a record that passes perf_event__mmap3_check() has a hash_size of at most
 * 20, a non-empty range, and a NUL-terminated name that ends before the
 * sample_id trailer.  Of a section, every record kept passes the check,
 * they are in time order, and their copies for a replay hold them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perf/event.h>

#include "util/mmap3.h"
#include "util/mmap3-feat.h"

static FILE *devnull;

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_mmap3: %s\n", what);
		abort();
	}
}

static void bad(void *arg, uint64_t offset, size_t size, const char *reason)
{
	must(reason != NULL, "a bad record without a reason");
	must(offset >= 1000 && size > 0, "a bad record outside the section");
	(*(size_t *)arg)++;
}

static void fuzz_section(const uint8_t *data, size_t size, uint8_t params)
{
	size_t trailer = (params & 7) * sizeof(uint64_t), nr_bad = 0, i;
	struct mmap3_feat *feat = mmap3_feat__new();
	const char *reason = NULL;
	void *copy = malloc(size ? size : 1);
	int err;

	must(feat && copy, "no memory");
	memcpy(copy, data, size);
	err = mmap3_feat__decode(feat, copy, size, 1000, params & 8, bad, &nr_bad, &reason);
	must(!err || reason != NULL || err == -ENOMEM, "an error without a reason");
	must(nr_bad == feat->nr_bad, "bad records not all reported");
	for (i = 0; i < feat->nr; i++) {
		must(!perf_event__mmap3_check(feat->recs[i].event, 0, NULL), "kept a bad record");
		must(!i || feat->recs[i - 1].time <= feat->recs[i].time, "not in time order");
	}
	if (!mmap3_feat__make_arena(feat, trailer)) {
		for (i = 0; i < feat->nr; i++) {
			union perf_event *ev = feat->recs[i].replay;

			must(mmap3_feat__owns(feat, ev), "a replay outside the arena");
			must(ev->header.size == feat->recs[i].event->header.size + trailer,
			     "a replay of the wrong size");
			must(!memcmp(ev, feat->recs[i].event, sizeof(ev->header) - 2) &&
			     !memcmp((char *)ev + sizeof(ev->header),
				     (char *)feat->recs[i].event + sizeof(ev->header),
				     feat->recs[i].event->header.size - sizeof(ev->header)),
			     "a replay that differs");
			perf_event__fprintf_mmap3(ev, devnull);
		}
	}
	free(copy);
	mmap3_feat__delete(feat);
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
	if (params & 32) {
		fuzz_section(data + 1, size - 1, params);
		return 0;
	}
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
