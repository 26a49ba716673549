// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_RECORD_MMAP3 records kept in the perf.data header
 * (HEADER_BPFSTASH_MMAP3): collecting, encoding and decoding them.
 *
 * Like mmap3.c, nothing here trusts a size it has not checked, and nothing
 * needs the rest of perf, so that a fuzzer can feed mmap3_feat__decode()
 * with any bytes.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <perf/event.h>

#include "mmap3.h"
#include "mmap3-feat.h"

struct mmap3_feat_head {
	u32	version;
	u32	nr;
};

struct mmap3_feat_rec_head {
	u64	time;
	u32	cpu;
	u32	size;
};

struct mmap3_feat *mmap3_feat__new(void)
{
	struct mmap3_feat *feat = calloc(1, sizeof(*feat));

	if (feat)
		pthread_mutex_init(&feat->lock, NULL);
	return feat;
}

void mmap3_feat__delete(struct mmap3_feat *feat)
{
	size_t i;

	if (!feat)
		return;
	for (i = 0; i < feat->nr; i++)
		free(feat->recs[i].event);
	free(feat->recs);
	free(feat->arena);
	pthread_mutex_destroy(&feat->lock);
	free(feat);
}

/*
 * The record's size without a sample_id trailer: its fixed part and its
 * name, NUL-terminated and padded to 8 bytes; 0 if @size cannot hold them.
 */
static size_t mmap3_feat__body_size(const union perf_event *event, size_t size)
{
	size_t name_len, body;

	if (size < PERF_RECORD_MMAP3_FIXED_SIZE + sizeof(u64))
		return 0;
	name_len = strnlen(event->mmap3.name, size - PERF_RECORD_MMAP3_FIXED_SIZE);
	body = PERF_RECORD_MMAP3_FIXED_SIZE + PERF_ALIGN(name_len + 1, sizeof(u64));
	return body <= size ? body : 0;
}

/*
 * Takes a copy of @event's first @body bytes, checked as a record of that
 * size; @why tells what is wrong with one that is not kept.
 */
static int mmap3_feat__append(struct mmap3_feat *feat, const union perf_event *event,
			      size_t body, u64 time, u32 cpu, u64 offset, const char **why)
{
	struct mmap3_feat_rec *rec;
	union perf_event *copy;

	*why = "record too short";
	if (!body || body > UINT16_MAX)
		goto bad;
	copy = malloc(body);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, event, body);
	copy->header.size = body;
	*why = "not a PERF_RECORD_MMAP3";
	if (copy->header.type != PERF_RECORD_MMAP3 ||
	    perf_event__mmap3_check(copy, 0, why)) {
		free(copy);
		goto bad;
	}

	if (feat->nr == feat->alloc) {
		size_t alloc = feat->alloc ? 2 * feat->alloc : 64;

		rec = realloc(feat->recs, alloc * sizeof(*rec));
		if (!rec) {
			free(copy);
			return -ENOMEM;
		}
		feat->recs = rec;
		feat->alloc = alloc;
	}
	rec = &feat->recs[feat->nr];
	*rec = (struct mmap3_feat_rec){
		.time = time, .seq = feat->nr, .offset = offset, .cpu = cpu, .event = copy,
	};
	if (feat->nr && time < rec[-1].time)
		feat->sorted = false;
	else if (!feat->nr)
		feat->sorted = true;
	feat->nr++;
	return 0;
bad:
	feat->nr_bad++;
	return -EINVAL;
}

/**
 * mmap3_feat__add - keep a PERF_RECORD_MMAP3 for the header
 * @feat: the records
 * @event: the record, with or without a sample_id trailer (header.size)
 * @time: its sample time (0 for a record synthesized at the start)
 * @cpu: the CPU that emitted it
 *
 * Safe against concurrent calls (perf record's side-band thread and its
 * synthesis).
 *
 * Return: 0, -EINVAL for a malformed record (counted in nr_bad), -ENOMEM.
 */
int mmap3_feat__add(struct mmap3_feat *feat, const union perf_event *event,
		    u64 time, u32 cpu)
{
	const char *why;
	int err;

	pthread_mutex_lock(&feat->lock);
	err = mmap3_feat__append(feat, event, mmap3_feat__body_size(event, event->header.size),
				 time, cpu, 0, &why);
	pthread_mutex_unlock(&feat->lock);
	return err;
}

static int mmap3_feat__cmp(const void *a, const void *b)
{
	const struct mmap3_feat_rec *ra = a, *rb = b;

	if (ra->time != rb->time)
		return ra->time < rb->time ? -1 : 1;
	return ra->seq < rb->seq ? -1 : ra->seq > rb->seq;
}

/* Time order, records of one time in their order of arrival. */
void mmap3_feat__sort(struct mmap3_feat *feat)
{
	pthread_mutex_lock(&feat->lock);
	if (!feat->sorted && feat->nr)
		qsort(feat->recs, feat->nr, sizeof(*feat->recs), mmap3_feat__cmp);
	feat->sorted = true;
	pthread_mutex_unlock(&feat->lock);
}

/**
 * mmap3_feat__encode - the header section for the records
 * @feat: the records, sorted on the way
 * @size: set to the section's size
 *
 * Return: the section (to free), or NULL without memory.
 */
void *mmap3_feat__encode(struct mmap3_feat *feat, size_t *size)
{
	struct mmap3_feat_head *head;
	size_t i, total = sizeof(*head);
	void *buf, *p;

	mmap3_feat__sort(feat);
	for (i = 0; i < feat->nr; i++)
		total += sizeof(struct mmap3_feat_rec_head) + feat->recs[i].event->header.size;
	buf = malloc(total);
	if (!buf)
		return NULL;
	head = buf;
	head->version = MMAP3_FEAT_VERSION;
	head->nr = feat->nr;
	p = head + 1;
	for (i = 0; i < feat->nr; i++) {
		const struct mmap3_feat_rec *rec = &feat->recs[i];
		struct mmap3_feat_rec_head rh = {
			.time = rec->time,
			.cpu = rec->cpu,
			.size = rec->event->header.size,
		};

		memcpy(p, &rh, sizeof(rh));
		p += sizeof(rh);
		memcpy(p, rec->event, rh.size);
		p += rh.size;
	}
	*size = total;
	return buf;
}

static void mmap3_feat__swap_head(union perf_event *event)
{
	event->header.type = bswap_32(event->header.type);
	event->header.misc = bswap_16(event->header.misc);
	event->header.size = bswap_16(event->header.size);
}

/**
 * mmap3_feat__decode - read the records of a header section
 * @feat: where they go (appended, then sorted)
 * @buf: the section, @size bytes, from untrusted input
 * @offset: the section's offset in the file
 * @swap: whether the file is of the other byte order
 * @bad: called with each malformed record's offset, size and what is wrong
 * @arg: for @bad
 * @reason: set to what is wrong when an error is returned
 *
 * A malformed record is counted in nr_bad, passed to @bad and skipped; a
 * section whose framing (the sizes before the records) is wrong, or of a
 * newer version, stops the decoding, keeping the records read so far.
 *
 * Return: 0, -EINVAL (truncated or inconsistent), -EPROTONOSUPPORT (a
 * newer version), -ENOMEM.
 */
int mmap3_feat__decode(struct mmap3_feat *feat, const void *buf, size_t size,
		       u64 offset, bool swap, mmap3_feat__bad_t bad, void *arg,
		       const char **reason)
{
	struct mmap3_feat_head head;
	size_t pos = sizeof(head);
	const char *why = NULL, *rec_why;
	union perf_event *tmp;
	u32 i;
	int err = 0;

	if (size < sizeof(head)) {
		*reason = "shorter than its header";
		return -EINVAL;
	}
	memcpy(&head, buf, sizeof(head));
	if (swap) {
		head.version = bswap_32(head.version);
		head.nr = bswap_32(head.nr);
	}
	if (head.version > MMAP3_FEAT_VERSION) {
		*reason = "a newer version than this perf knows";
		return -EPROTONOSUPPORT;
	}
	if (head.version == 0) {
		*reason = "version 0";
		return -EINVAL;
	}
	tmp = malloc(UINT16_MAX + 1);
	if (!tmp)
		return -ENOMEM;

	pthread_mutex_lock(&feat->lock);
	for (i = 0; i < head.nr; i++) {
		struct mmap3_feat_rec_head rh;

		if (size - pos < sizeof(rh)) {
			why = "cut short";
			break;
		}
		memcpy(&rh, buf + pos, sizeof(rh));
		pos += sizeof(rh);
		if (swap) {
			rh.time = bswap_64(rh.time);
			rh.cpu = bswap_32(rh.cpu);
			rh.size = bswap_32(rh.size);
		}
		if (rh.size > size - pos) {
			why = "a record runs past the section";
			break;
		}
		if (rh.size < sizeof(tmp->header) || rh.size > UINT16_MAX ||
		    rh.size % sizeof(u64)) {
			why = "a record size that is not one";
			break;
		}
		memcpy(tmp, buf + pos, rh.size);
		if (swap) {
			mmap3_feat__swap_head(tmp);
			if (tmp->header.size == rh.size)
				perf_event__mmap3_swap(tmp, false);
		}
		if (tmp->header.size != rh.size) {
			feat->nr_bad++;
			rec_why = "header.size is not the record's size";
		} else {
			err = mmap3_feat__append(feat, tmp, rh.size, rh.time, rh.cpu,
						 offset + pos, &rec_why);
		}
		if (err == -ENOMEM)
			break;
		if (err || tmp->header.size != rh.size) {
			if (bad)
				bad(arg, offset + pos, rh.size, rec_why);
			err = 0;
		}
		pos += rh.size;
	}
	if (!why && !err && pos != size)
		why = "bytes after the last record";
	feat->sorted = false;
	pthread_mutex_unlock(&feat->lock);
	free(tmp);
	mmap3_feat__sort(feat);

	if (err)
		return err;
	if (why) {
		*reason = why;
		return -EINVAL;
	}
	return 0;
}

/**
 * mmap3_feat__make_arena - copies of the records, each with room for a trailer
 * @feat: the records, sorted
 * @trailer: the session's sample_id size, zeroed in each copy
 *
 * The copies are what a session replays, and stay until @feat is deleted
 * (ordered events keep pointers to them).  They lie in one block, which
 * tells mmap3_feat__owns() a replayed record from one of the data section.
 *
 * Return: 0 or -ENOMEM.
 */
int mmap3_feat__make_arena(struct mmap3_feat *feat, size_t trailer)
{
	size_t i, total = 0;
	void *p;

	if (feat->arena)
		return 0;
	mmap3_feat__sort(feat);
	for (i = 0; i < feat->nr; i++)
		total += feat->recs[i].event->header.size + trailer;
	p = calloc(1, total ? total : 1);
	if (!p)
		return -ENOMEM;
	feat->arena = p;
	feat->arena_size = total;
	for (i = 0; i < feat->nr; i++) {
		struct mmap3_feat_rec *rec = &feat->recs[i];
		size_t body = rec->event->header.size;

		memcpy(p, rec->event, body);
		rec->replay = p;
		rec->replay->header.size = body + trailer;
		p += body + trailer;
	}
	return 0;
}

bool mmap3_feat__owns(const struct mmap3_feat *feat, const union perf_event *event)
{
	const void *p = event;

	return feat && feat->arena && p >= feat->arena &&
	       p < feat->arena + feat->arena_size;
}
