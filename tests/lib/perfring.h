/* SPDX-License-Identifier: GPL-2.0-only */
/* A minimal perf ring-buffer reader for the in-guest tests. */
#ifndef BPFSTASH_TEST_PERFRING_H
#define BPFSTASH_TEST_PERFRING_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct ring {
	int fd;
	void *base;		/* the mmap: control page, then data */
	size_t data_size;
	char *scratch;		/* a record that wraps around is copied here */
};

/* A side-band-only event (software dummy) with @attr's bits; @pages of data (power of 2). */
int ring_open(struct perf_event_attr *attr, pid_t pid, int cpu, size_t pages,
	      struct ring *r);
void ring_close(struct ring *r);

/* Call @fn for each new record; returns the number of records. */
typedef void (*ring_fn)(const struct perf_event_header *h, void *ctx);
int ring_drain(struct ring *r, ring_fn fn, void *ctx);

/* A dummy event attr for side-band records, kernel-visible, sample_id_all. */
void ring_attr_init(struct perf_event_attr *attr);

/* The MMAP3 record, as include/uapi/linux/perf_event.h documents it. */
struct mmap3_record {
	struct perf_event_header header;
	__u64 addr;
	__u64 len;
	__u32 id;
	__u32 flags;
	__u16 type;
	__u16 func_idx;
	__u8 hash_size;
	__u8 __reserved_1;
	__u16 __reserved_2;
	__u8 hash[20];
	__u32 __reserved_3;
	char name[];
};

#endif
