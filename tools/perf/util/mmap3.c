// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_RECORD_MMAP3: checking, byte swapping and printing the record.
 *
 * The record comes from a file that may be truncated, corrupted or made up,
 * so nothing here trusts a field before checking it against header.size.
 * Every function only looks at the record itself, which keeps them usable
 * by a fuzzer without the rest of perf.
 */
#include <byteswap.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <perf/event.h>

#include "mmap3.h"

static size_t mmap3__name_len(const union perf_event *event)
{
	size_t size = event->header.size;

	if (size <= PERF_RECORD_MMAP3_FIXED_SIZE)
		return 0;
	return strnlen(event->mmap3.name, size - PERF_RECORD_MMAP3_FIXED_SIZE);
}

/**
 * perf_event__mmap3_check - check that a PERF_RECORD_MMAP3 is well formed
 * @event: the record, of header.size bytes
 * @id_hdr_size: size of the sample_id trailer, 0 without sample_id_all
 * @reason: set to a description of the first problem found
 *
 * The record must hold its fixed part, a name NUL-terminated and padded to
 * 8 bytes, then exactly @id_hdr_size bytes: since the trailer is parsed
 * from the end of the record, any other size means the name was misread.
 *
 * Return: 0 if the record can be used, -EINVAL otherwise.
 */
int perf_event__mmap3_check(const union perf_event *event, size_t id_hdr_size,
			    const char **reason)
{
	const struct perf_record_mmap3 *mmap3 = &event->mmap3;
	size_t size = event->header.size;
	size_t name_len, name_room;
	const char *why = NULL;

	BUILD_BUG_ON(offsetof(struct perf_record_mmap3, name) !=
		     PERF_RECORD_MMAP3_FIXED_SIZE);

	if (size % sizeof(u64))
		why = "size not a multiple of 8";
	else if (size < PERF_RECORD_MMAP3_FIXED_SIZE + sizeof(u64) + id_hdr_size)
		why = "record too short";
	if (why)
		goto bad;

	name_room = size - PERF_RECORD_MMAP3_FIXED_SIZE - id_hdr_size;
	name_len = strnlen(mmap3->name, name_room);
	if (name_len == name_room)
		why = "name not NUL-terminated";
	else if (PERF_ALIGN(name_len + 1, sizeof(u64)) != name_room)
		why = "name padding does not match the record size";
	else if (mmap3->hash_size > PERF_RECORD_MMAP3_HASH_MAX)
		why = "hash_size larger than 20";
	else if ((mmap3->flags & PERF_RECORD_MMAP3_STASHED) && !mmap3->hash_size)
		why = "stashed, but no hash";
	else if (!mmap3->len || mmap3->addr + mmap3->len < mmap3->addr)
		why = "empty or wrapping address range";
	if (!why)
		return 0;
bad:
	if (reason)
		*reason = why;
	return -EINVAL;
}

/* Whether the record names a stored entry that can be looked up by hash. */
bool perf_event__mmap3_is_stashed(const union perf_event *event)
{
	return (event->mmap3.flags & PERF_RECORD_MMAP3_STASHED) &&
	       event->mmap3.hash_size &&
	       event->mmap3.hash_size <= PERF_RECORD_MMAP3_HASH_MAX;
}

void perf_event__mmap3_swap(union perf_event *event, bool sample_id_all)
{
	struct perf_record_mmap3 *mmap3 = &event->mmap3;
	size_t size = event->header.size, off;
	u64 *p;

	/* Too short to swap: perf_event__mmap3_check() will refuse it. */
	if (size < PERF_RECORD_MMAP3_FIXED_SIZE)
		return;

	mmap3->addr	= bswap_64(mmap3->addr);
	mmap3->len	= bswap_64(mmap3->len);
	mmap3->id	= bswap_32(mmap3->id);
	mmap3->flags	= bswap_32(mmap3->flags);
	mmap3->type	= bswap_16(mmap3->type);
	mmap3->func_idx	= bswap_16(mmap3->func_idx);

	if (!sample_id_all)
		return;
	off = PERF_RECORD_MMAP3_FIXED_SIZE +
	      PERF_ALIGN(mmap3__name_len(event) + 1, sizeof(u64));
	for (p = (void *)event + off; off + sizeof(u64) <= size; off += sizeof(u64), p++)
		*p = bswap_64(*p);
}

size_t perf_event__fprintf_mmap3(union perf_event *event, FILE *fp)
{
	const struct perf_record_mmap3 *mmap3 = &event->mmap3;
	char hash[PERF_RECORD_MMAP3_HASH_MAX * 2 + 1] = "-";
	char flags[64];
	unsigned int i;

	if (event->header.size < PERF_RECORD_MMAP3_FIXED_SIZE)
		return fprintf(fp, " truncated record of %u bytes\n", event->header.size);

	for (i = 0; i < mmap3->hash_size && i < PERF_RECORD_MMAP3_HASH_MAX; i++)
		sprintf(hash + 2 * i, "%02x", mmap3->hash[i]);
	snprintf(flags, sizeof(flags), "%#x%s%s%s", mmap3->flags,
		 mmap3->flags & PERF_RECORD_MMAP3_STASHED ? " stashed" : "",
		 mmap3->flags & PERF_RECORD_MMAP3_REFUSED_FULL ? " refused:full" : "",
		 mmap3->flags & PERF_RECORD_MMAP3_REFUSED_NOMEM ? " refused:nomem" : "");

	return fprintf(fp, " addr %#llx len %#llx type %u id %u func %u flags %s hash %s %.*s\n",
		       (unsigned long long)mmap3->addr, (unsigned long long)mmap3->len,
		       mmap3->type, mmap3->id, mmap3->func_idx, flags, hash,
		       (int)mmap3__name_len(event), mmap3->name);
}
