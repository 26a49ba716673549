/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bpfstash:bpfstash_store tracepoint, read through perf on every CPU:
 * what the load hook did with each program and what it cost, as the
 * kernel measured it.  For the tests and the benchmarks.
 */
#ifndef BPFSTASH_TEST_STASHTRACE_H
#define BPFSTASH_TEST_STASHTRACE_H

#include <linux/types.h>

/* enum bpfstash_outcome, include/trace/events/bpfstash.h */
enum {
	STASH_STORED,
	STASH_RELOADED,
	STASH_PRESENT,
	STASH_REFUSED_FULL,
	STASH_REFUSED_NOMEM,
	STASH_SKIPPED,
	STASH_NR_OUTCOMES,
};

struct stash_trace_rec {
	__u32 pid, tid;
	__u64 time;		/* CLOCK_MONOTONIC, ns */
	__u32 id;		/* program id */
	int outcome;
	__u64 bytes, hashed, ns, hash_ns;
	__u8 hash[20];
	char name[16];
};

struct stash_trace;

/*
 * Open the tracepoint on every online CPU (mounting tracefs at
 * /sys/kernel/tracing if it is not there).  NULL with errno set, ENOENT
 * when the kernel has no such tracepoint.
 */
struct stash_trace *stash_trace_open(void);
/*
 * Call @fn for each record written since the last call, in time order;
 * returns the number of records, or -errno.
 */
typedef void (*stash_trace_fn)(const struct stash_trace_rec *r, void *ctx);
int stash_trace_read(struct stash_trace *t, stash_trace_fn fn, void *ctx);
/* Records the kernel dropped because a buffer was full, so far. */
long long stash_trace_lost(const struct stash_trace *t);
void stash_trace_close(struct stash_trace *t);

/*
 * Where tracefs is: /sys/kernel/tracing, or debugfs's tracing; mounted at
 * the first if neither is.  NULL if the kernel has none.
 */
const char *stash_tracefs(void);

/* The name the tracepoint prints for @outcome ("stored", ...). */
const char *stash_trace_outcome(int outcome);

/* Sums over records, with a callback for stash_trace_read(). */
struct stash_trace_sum {
	long long n, by_outcome[STASH_NR_OUTCOMES];
	double ns, hash_ns, bytes, hashed;
};
void stash_trace_add(const struct stash_trace_rec *r, void *sum);

#endif
