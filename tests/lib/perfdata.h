/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal perf.data writer for the generators of bpfstash inject's inputs
 * (tests/fuzz/mkseed_inject.c, bench/mkperfdata.c): one event attribute,
 * and the records the caller gives, in perf's file layout or its pipe
 * format, as tools/perf/util/header.c reads them:
 *
 *   file  the header, the attribute followed by the file section of its
 *         ids, the ids, the data section (the records), then the feature
 *         index and the features' contents: an empty HEADER_BUILD_ID,
 *         which is where bpfstash inject adds the functions it injects;
 *   pipe  the 16-byte header (magic, 16), a PERF_RECORD_HEADER_ATTR
 *         (the attribute, then its ids), then the records.
 *
 * Header-only (static functions, unused ones not warned about): each
 * generator is one .c file.  Records
 * carry the attribute's sample_id fields (sample_id_all), in the order
 * perf_evsel__parse_id_sample() reads them back from a record's end.
 */
#ifndef BPFSTASH_TEST_PERFDATA_H
#define BPFSTASH_TEST_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#define PD_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PD_FEAT_BUILD_ID	2			/* HEADER_BUILD_ID */
#define PD_REC_HEADER_ATTR	64			/* PERF_RECORD_HEADER_ATTR */
/*
 * The attribute's size: VER5 (112 bytes), which every perf since 4.x reads
 * (a perf refuses an attribute larger than its own struct: Debian 12's
 * 6.1 knows 128 bytes).
 */
#define PD_ATTR_SIZE		PERF_ATTR_SIZE_VER5

#define PD_FN		static __attribute__((unused))

struct pd_section {
	uint64_t offset;
	uint64_t size;
};

struct pd_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct pd_section attrs;
	struct pd_section data;
	struct pd_section event_types;
	uint64_t features[4];
};

/* The sample_id fields of a record (and the same fields of a sample). */
struct pd_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

struct pd {
	FILE *f;
	bool pipe;
	uint64_t sample_type;
	uint64_t id;		/* the attribute's one event id */
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t records;
	struct perf_event_attr attr;
};

PD_FN int pd_write(struct pd *pd, const void *p, size_t n)
{
	return fwrite(p, 1, n, pd->f) == n ? 0 : -1;
}

/* The sample_id_all trailer of a non-sample record, @sid's fields. */
PD_FN size_t pd_sid_fill(const struct pd *pd, const struct pd_sid *sid, uint64_t *out)
{
	uint64_t t = pd->sample_type;
	size_t n = 0;

	if (t & PERF_SAMPLE_TID)
		out[n++] = (uint64_t)sid->tid << 32 | sid->pid;
	if (t & PERF_SAMPLE_TIME)
		out[n++] = sid->time;
	if (t & PERF_SAMPLE_ID)
		out[n++] = pd->id;
	if (t & PERF_SAMPLE_STREAM_ID)
		out[n++] = pd->id;
	if (t & PERF_SAMPLE_CPU)
		out[n++] = sid->cpu;
	if (t & PERF_SAMPLE_IDENTIFIER)
		out[n++] = pd->id;
	return n * 8;
}

/* One record: @body (header included, its size not yet set), then @sid's fields. */
PD_FN int pd_record(struct pd *pd, void *body, size_t len, const struct pd_sid *sid)
{
	struct perf_event_header *h = body;
	uint64_t trailer[6];
	size_t tlen = sid ? pd_sid_fill(pd, sid, trailer) : 0;

	h->size = len + tlen;
	pd->data_size += len + tlen;
	pd->records++;
	return pd_write(pd, body, len) || pd_write(pd, trailer, tlen);
}

/*
 * Start a perf.data on @f: a file (seekable: its header is written again
 * at the end) or a pipe's stream.  One software cpu-clock attribute with
 * @sample_type and sample_id_all, of event id @id.
 */
PD_FN int pd_begin(struct pd *pd, FILE *f, bool pipe, uint64_t sample_type, uint64_t id)
{
	memset(pd, 0, sizeof(*pd));
	pd->f = f;
	pd->pipe = pipe;
	pd->sample_type = sample_type;
	pd->id = id;
	pd->attr.type = PERF_TYPE_SOFTWARE;
	pd->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	pd->attr.size = PD_ATTR_SIZE;
	pd->attr.sample_period = 4000;
	pd->attr.freq = 1;
	pd->attr.sample_type = sample_type;
	pd->attr.sample_id_all = 1;
	pd->attr.ksymbol = 1;
	pd->attr.bpf_event = 1;
	pd->attr.mmap = 1;
	pd->attr.comm = 1;
	pd->attr.task = 1;
	pd->attr.disabled = 1;

	if (pipe) {
		struct {
			struct perf_event_header h;
			uint8_t attr[PD_ATTR_SIZE];
			uint64_t id;
		} __attribute__((packed)) rec = {};
		uint64_t head[2] = { PD_MAGIC, 16 };

		rec.h.type = PD_REC_HEADER_ATTR;
		rec.h.size = sizeof(rec);
		memcpy(rec.attr, &pd->attr, PD_ATTR_SIZE);
		rec.id = id;
		return pd_write(pd, head, sizeof(head)) || pd_write(pd, &rec, sizeof(rec));
	} else {
		struct pd_file_header h = {};
		struct pd_section ids;

		/* The header, then the attribute and its ids' section, then the ids. */
		ids.offset = sizeof(h) + PD_ATTR_SIZE + sizeof(ids);
		ids.size = sizeof(id);
		pd->data_offset = ids.offset + ids.size;
		return pd_write(pd, &h, sizeof(h)) || pd_write(pd, &pd->attr, PD_ATTR_SIZE) ||
		       pd_write(pd, &ids, sizeof(ids)) || pd_write(pd, &id, sizeof(id));
	}
}

/* PERF_RECORD_KSYMBOL of a BPF function, registered or (@unregister) gone. */
PD_FN int pd_ksymbol(struct pd *pd, uint64_t addr, uint32_t len, const char *name,
		      bool unregister, const struct pd_sid *sid)
{
	struct {
		struct perf_event_header h;
		uint64_t addr;
		uint32_t len;
		uint16_t ksym_type, flags;
		char name[512 + 8];
	} rec = {};
	size_t n = strlen(name);

	if (n >= 512)
		return -1;
	rec.h.type = PERF_RECORD_KSYMBOL;
	rec.h.misc = PERF_RECORD_MISC_KERNEL;
	rec.addr = addr;
	rec.len = len;
	rec.ksym_type = PERF_RECORD_KSYMBOL_TYPE_BPF;
	rec.flags = unregister ? PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER : 0;
	memcpy(rec.name, name, n);
	/* The name NUL-terminated and padded to 8 bytes, as the kernel sends it. */
	return pd_record(pd, &rec, offsetof(typeof(rec), name) + ((n + 1 + 7) & ~(size_t)7), sid);
}

/* PERF_RECORD_BPF_EVENT: @type (PERF_BPF_EVENT_PROG_LOAD...) of program @id. */
PD_FN int pd_bpf_event(struct pd *pd, uint16_t type, uint32_t id, const uint8_t tag[8],
			const struct pd_sid *sid)
{
	struct {
		struct perf_event_header h;
		uint16_t type, flags;
		uint32_t id;
		uint8_t tag[8];
	} rec = {};

	rec.h.type = PERF_RECORD_BPF_EVENT;
	rec.h.misc = PERF_RECORD_MISC_KERNEL;
	rec.type = type;
	rec.id = id;
	memcpy(rec.tag, tag, 8);
	return pd_record(pd, &rec, sizeof(rec), sid);
}

/* PERF_RECORD_COMM of @sid's thread. */
PD_FN int pd_comm(struct pd *pd, const char *comm, const struct pd_sid *sid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[24];
	} rec = {};
	size_t n = strnlen(comm, 15);

	rec.h.type = PERF_RECORD_COMM;
	rec.pid = sid->pid;
	rec.tid = sid->tid;
	memcpy(rec.comm, comm, n);
	return pd_record(pd, &rec, offsetof(typeof(rec), comm) + ((n + 1 + 7) & ~(size_t)7), sid);
}

/*
 * PERF_RECORD_SAMPLE in the attribute's layout (IDENTIFIER, IP, TID, TIME,
 * ID, CPU, PERIOD, CALLCHAIN are the fields written), kernel mode, the
 * callchain's @nr entries as given (PERF_CONTEXT_KERNEL first, as the
 * kernel does).
 */
PD_FN int pd_sample(struct pd *pd, uint64_t ip, const struct pd_sid *sid, uint64_t period,
		    const uint64_t *chain, uint32_t nr)
{
	struct {
		struct perf_event_header h;
		uint64_t v[8 + 256];
	} rec;
	uint64_t t = pd->sample_type;
	size_t n = 0;

	if (nr > 256)
		return -1;
	rec.h.type = PERF_RECORD_SAMPLE;
	rec.h.misc = PERF_RECORD_MISC_KERNEL;
	if (t & PERF_SAMPLE_IDENTIFIER)
		rec.v[n++] = pd->id;
	if (t & PERF_SAMPLE_IP)
		rec.v[n++] = ip;
	if (t & PERF_SAMPLE_TID)
		rec.v[n++] = (uint64_t)sid->tid << 32 | sid->pid;
	if (t & PERF_SAMPLE_TIME)
		rec.v[n++] = sid->time;
	if (t & PERF_SAMPLE_ID)
		rec.v[n++] = pd->id;
	if (t & PERF_SAMPLE_CPU)
		rec.v[n++] = sid->cpu;
	if (t & PERF_SAMPLE_PERIOD)
		rec.v[n++] = period;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		rec.v[n++] = nr;
		memcpy(&rec.v[n], chain, nr * 8);
		n += nr;
	}
	return pd_record(pd, &rec, sizeof(rec.h) + n * 8, NULL);
}

/*
 * The end: a file gets its feature index (HEADER_BUILD_ID, empty) and its
 * header, written again with the sections' places; a stream has none.
 */
PD_FN int pd_end(struct pd *pd)
{
	struct pd_file_header h = {};
	struct pd_section feat;

	if (pd->pipe)
		return fflush(pd->f);
	h.magic = PD_MAGIC;
	h.size = sizeof(h);
	h.attr_size = PD_ATTR_SIZE + sizeof(struct pd_section);
	h.attrs.offset = sizeof(h);
	h.attrs.size = h.attr_size;
	h.data.offset = pd->data_offset;
	h.data.size = pd->data_size;
	h.features[0] = 1ULL << PD_FEAT_BUILD_ID;
	/* The index's one section, empty, right after the index. */
	feat.offset = pd->data_offset + pd->data_size + sizeof(feat);
	feat.size = 0;
	if (pd_write(pd, &feat, sizeof(feat)) || fflush(pd->f) || fseek(pd->f, 0, SEEK_SET) ||
	    pd_write(pd, &h, sizeof(h)) || fflush(pd->f))
		return -1;
	return fseek(pd->f, 0, SEEK_END);
}

#endif
