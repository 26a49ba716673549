// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading bpfstash:bpfstash_store through perf_event_open(), one ring per
 * CPU, as perf record -e bpfstash:bpfstash_store -a does.  The field
 * offsets come from the event's format file, not from this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfring.h"
#include "stashtrace.h"

#define EVENT_DIR	"events/bpfstash/bpfstash_store"
#define MAX_CPUS	256
#define RING_PAGES	256

enum { F_ID, F_OUTCOME, F_BYTES, F_HASHED, F_NS, F_HASH_NS, F_HASH, F_NAME, NR_FIELDS };
static const char *const field_names[NR_FIELDS] = {
	"id", "outcome", "bytes", "hashed", "ns", "hash_ns", "hash", "name",
};
static const unsigned int field_sizes[NR_FIELDS] = { 4, 4, 8, 8, 8, 8, 20, 16 };

struct stash_trace {
	int nr;
	struct ring rings[MAX_CPUS];
	unsigned int off[NR_FIELDS];
	long long lost;
	/* Records of one read, to be sorted by time. */
	struct stash_trace_rec *recs;
	size_t nr_recs, cap_recs;
	int err;
};

static const char *const outcomes[STASH_NR_OUTCOMES] = {
	"stored", "reloaded", "present", "refused_full", "refused_nomem", "skipped",
};

const char *stash_trace_outcome(int outcome)
{
	return outcome >= 0 && outcome < STASH_NR_OUTCOMES ? outcomes[outcome] : "?";
}

const char *stash_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	mount("nodev", dirs[0], "tracefs", 0, NULL);
	snprintf(path, sizeof(path), "%s/events", dirs[0]);
	return access(path, F_OK) ? NULL : dirs[0];
}

/* The event's id and its fields' offsets, from its format file. */
static int read_format(const char *dir, unsigned int off[NR_FIELDS], long long *id)
{
	char path[512], line[512];
	unsigned int seen = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fscanf(f, "%lld", id) != 1) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/format", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *decl = strstr(line, "field:"), *semi, *name, *br;
		unsigned int o, sz;
		char *p;

		if (!decl || !(semi = strchr(decl, ';')))
			continue;
		*semi = 0;
		p = strstr(semi + 1, "offset:");
		if (!p || sscanf(p, "offset:%u;\tsize:%u;", &o, &sz) != 2)
			continue;
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl + 6;
		br = strchr(name, '[');
		if (br)
			*br = 0;
		for (i = 0; i < NR_FIELDS; i++) {
			if (strcmp(name, field_names[i]))
				continue;
			if (sz != field_sizes[i]) {
				fclose(f);
				return -EPROTO;
			}
			off[i] = o;
			seen |= 1u << i;
		}
	}
	fclose(f);
	return seen == (1u << NR_FIELDS) - 1 ? 0 : -EPROTO;
}

struct stash_trace *stash_trace_open(void)
{
	struct perf_event_attr attr;
	struct stash_trace *t;
	const char *dir = stash_tracefs();
	long long id;
	int cpu, err, ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!dir) {
		errno = ENOENT;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	err = read_format(dir, t->off, &id);
	if (err) {
		free(t);
		errno = -err;
		return NULL;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	for (cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		err = ring_open(&attr, -1, cpu, RING_PAGES, &t->rings[cpu]);
		if (err) {
			t->nr = cpu;
			stash_trace_close(t);
			errno = -err;
			return NULL;
		}
	}
	t->nr = cpu;
	return t;
}

static void collect(const struct perf_event_header *h, void *ctx)
{
	struct stash_trace *t = ctx;
	const char *p = (const char *)(h + 1), *raw;
	struct stash_trace_rec *r;
	__u32 size;
	unsigned int i;

	if (h->type == PERF_RECORD_LOST) {
		t->lost += ((const __u64 *)p)[1];
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	if (t->nr_recs == t->cap_recs) {
		size_t cap = t->cap_recs ? 2 * t->cap_recs : 1024;
		void *n = realloc(t->recs, cap * sizeof(*t->recs));

		if (!n) {
			t->err = -ENOMEM;
			return;
		}
		t->recs = n;
		t->cap_recs = cap;
	}
	r = &t->recs[t->nr_recs];
	memset(r, 0, sizeof(*r));
	memcpy(&r->pid, p, 4);
	memcpy(&r->tid, p + 4, 4);
	memcpy(&r->time, p + 8, 8);
	memcpy(&size, p + 16, 4);
	raw = p + 20;
	for (i = 0; i < NR_FIELDS; i++) {
		if (t->off[i] + field_sizes[i] > size) {
			t->err = -EPROTO;
			return;
		}
	}
	memcpy(&r->id, raw + t->off[F_ID], 4);
	memcpy(&r->outcome, raw + t->off[F_OUTCOME], 4);
	memcpy(&r->bytes, raw + t->off[F_BYTES], 8);
	memcpy(&r->hashed, raw + t->off[F_HASHED], 8);
	memcpy(&r->ns, raw + t->off[F_NS], 8);
	memcpy(&r->hash_ns, raw + t->off[F_HASH_NS], 8);
	memcpy(r->hash, raw + t->off[F_HASH], 20);
	memcpy(r->name, raw + t->off[F_NAME], 16);
	r->name[15] = 0;
	t->nr_recs++;
}

static int by_time(const void *a, const void *b)
{
	const struct stash_trace_rec *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

int stash_trace_read(struct stash_trace *t, stash_trace_fn fn, void *ctx)
{
	size_t i;
	int cpu, n;

	t->nr_recs = 0;
	t->err = 0;
	for (cpu = 0; cpu < t->nr; cpu++)
		ring_drain(&t->rings[cpu], collect, t);
	if (t->err)
		return t->err;
	qsort(t->recs, t->nr_recs, sizeof(*t->recs), by_time);
	for (i = 0; i < t->nr_recs; i++)
		if (fn)
			fn(&t->recs[i], ctx);
	n = t->nr_recs;
	return n;
}

long long stash_trace_lost(const struct stash_trace *t)
{
	return t->lost;
}

void stash_trace_close(struct stash_trace *t)
{
	int cpu;

	if (!t)
		return;
	for (cpu = 0; cpu < t->nr; cpu++)
		ring_close(&t->rings[cpu]);
	free(t->recs);
	free(t);
}

void stash_trace_add(const struct stash_trace_rec *r, void *ctx)
{
	struct stash_trace_sum *s = ctx;

	s->n++;
	if (r->outcome >= 0 && r->outcome < STASH_NR_OUTCOMES)
		s->by_outcome[r->outcome]++;
	s->ns += r->ns;
	s->hash_ns += r->hash_ns;
	s->bytes += r->bytes;
	s->hashed += r->hashed;
}
