// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfring.h"

void ring_attr_init(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->watermark = 1;
	attr->wakeup_watermark = 1;
}

int ring_open(struct perf_event_attr *attr, pid_t pid, int cpu, size_t pages,
	      struct ring *r)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	r->fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, 0);
	if (r->fd < 0)
		return -errno;
	r->data_size = pages * page;
	r->base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, 0);
	if (r->base == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		return err;
	}
	r->scratch = malloc(65536);
	return r->scratch ? 0 : -ENOMEM;
}

void ring_close(struct ring *r)
{
	long page = sysconf(_SC_PAGESIZE);

	if (r->base && r->base != MAP_FAILED)
		munmap(r->base, r->data_size + page);
	if (r->fd > 0)
		close(r->fd);
	free(r->scratch);
	memset(r, 0, sizeof(*r));
}

int ring_drain(struct ring *r, ring_fn fn, void *ctx)
{
	struct perf_event_mmap_page *pc = r->base;
	char *data = (char *)r->base + sysconf(_SC_PAGESIZE);
	__u64 head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pc->data_tail;
	int n = 0;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % r->data_size);
		size_t off = tail % r->data_size;

		if (off + sizeof(*h) > r->data_size || off + h->size > r->data_size) {
			/* The record wraps: copy it out in two pieces. */
			size_t first = r->data_size - off;
			struct perf_event_header hdr;

			if (first >= sizeof(hdr)) {
				memcpy(&hdr, data + off, sizeof(hdr));
			} else {
				memcpy(&hdr, data + off, first);
				memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
			}
			memcpy(r->scratch, data + off, first);
			memcpy(r->scratch + first, data, hdr.size - first);
			h = (void *)r->scratch;
		}
		if (!h->size)
			break;
		fn(h, ctx);
		tail += h->size;
		n++;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
