/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_MMAP3_FEAT_H
#define __PERF_MMAP3_FEAT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

union perf_event;

/*
 * HEADER_BPFSTASH_MMAP3: the PERF_RECORD_MMAP3 records of a recording, kept
 * in the perf.data header rather than in its data section, where a perf
 * that does not know the record type stops ("failed to process type").
 * The section, in the file's byte order:
 *
 *	u32 version;			MMAP3_FEAT_VERSION
 *	u32 nr;				records that follow
 *	nr times, in time order:
 *	u64 time;			the record's sample_id time
 *	u32 cpu;			the CPU that emitted it
 *	u32 size;			bytes that follow, a multiple of 8
 *	size bytes			the record without its sample_id
 *					trailer: header.size == size
 *
 * A reader refuses a version above its own, with a message; what a newer
 * version adds comes with a new version number.
 */
#define MMAP3_FEAT_VERSION	1

struct mmap3_feat_rec {
	u64			time;
	u64			seq;	/* order of arrival, for equal times */
	u64			offset;	/* in the file, for perf report -D */
	u32			cpu;
	union perf_event	*event;		/* the record, no trailer */
	union perf_event	*replay;	/* in the arena, with one */
};

/*
 * The records, collected by perf record (from its side-band thread and its
 * synthesis, hence the lock) or read from a header, then replayed into a
 * session in time order by perf_session__process_events().
 */
struct mmap3_feat {
	pthread_mutex_t		lock;
	struct mmap3_feat_rec	*recs;
	size_t			nr, alloc;
	size_t			next;		/* the first not replayed yet */
	u64			nr_bad;		/* malformed, not kept */
	void			*arena;		/* the replayed records */
	size_t			arena_size;
	bool			sorted;
};

struct mmap3_feat *mmap3_feat__new(void);
void mmap3_feat__delete(struct mmap3_feat *feat);

int mmap3_feat__add(struct mmap3_feat *feat, const union perf_event *event,
		    u64 time, u32 cpu);
void mmap3_feat__sort(struct mmap3_feat *feat);

typedef void (*mmap3_feat__bad_t)(void *arg, u64 offset, size_t size, const char *reason);

void *mmap3_feat__encode(struct mmap3_feat *feat, size_t *size);
int mmap3_feat__decode(struct mmap3_feat *feat, const void *buf, size_t size,
		       u64 offset, bool swap, mmap3_feat__bad_t bad, void *arg,
		       const char **reason);

int mmap3_feat__make_arena(struct mmap3_feat *feat, size_t trailer);
bool mmap3_feat__owns(const struct mmap3_feat *feat, const union perf_event *event);

#endif /* __PERF_MMAP3_FEAT_H */
