// SPDX-License-Identifier: GPL-2.0-only
/*
 * Capture of short-lived programs: bpfstash (PERF_RECORD_MMAP3 + the
 * stash) against what perf does today (a side-band thread that answers
 * PERF_RECORD_BPF_EVENT with BPF_PROG_GET_FD_BY_ID and
 * BPF_OBJ_GET_INFO_BY_FD, tools/perf/util/bpf-event.c), in one run, for
 * programs that live 0, 1 or 10 ms.  Both consumers watch the same loads.
 *
 *   racebench [-n PROGRAMS] [-l LIFETIME_US]... [--csv]
 *
 * Prints, per lifetime: captured by each, and the CPU each spends per
 * program (the side-band thread's CPU; for bpfstash the kernel's hook time,
 * from the bpfstash:bpfstash_store tracepoint, plus the MMAP3 consumer
 * thread's CPU).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>

#include "stashfs.h"
#include "stashtrace.h"

#define ROOT STASH_ROOT
#define MAX_CPUS 8
#define MAX_PROGS 200000

struct ring {
	int fd;
	char *base;
	size_t size;
};

static int nr_cpus;

static int ring_open(struct ring *r, int cpu, int mmap3)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY, .sample_id_all = 1,
		.watermark = 1, .wakeup_watermark = 1,
	};
	long page = sysconf(_SC_PAGESIZE);

	if (mmap3)
		a.mmap3 = 1;
	else
		a.bpf_event = a.ksymbol = 1;
	r->fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);
	if (r->fd < 0)
		return -errno;
	r->size = 512 * page;
	r->base = mmap(NULL, r->size + page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	return r->base == MAP_FAILED ? -errno : 0;
}

typedef void (*rec_fn)(const struct perf_event_header *h, void *ctx);

static void ring_drain(struct ring *r, rec_fn fn, void *ctx)
{
	struct perf_event_mmap_page *pc = (void *)r->base;
	char *data = r->base + sysconf(_SC_PAGESIZE), tmp[65536];
	__u64 head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE), tail = pc->data_tail;

	while (tail < head) {
		size_t off = tail % r->size;
		struct perf_event_header *h = (void *)(data + off);

		if (off + sizeof(*h) > r->size || off + h->size > r->size) {
			/* The record wraps around the end of the buffer. */
			size_t first = r->size - off;
			struct perf_event_header hdr;

			memcpy(tmp, data + off, first);
			memcpy(tmp + first, data, sizeof(hdr));
			memcpy(&hdr, tmp, sizeof(hdr));
			memcpy(tmp + first, data, hdr.size - first);
			h = (void *)tmp;
		}
		fn(h, ctx);
		tail += h->size;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

struct run {
	struct ring sb[MAX_CPUS], m3[MAX_CPUS];
	atomic_int stop;
	__u32 first_id;
	unsigned char *sb_ok, *m3_ok;
	double sb_cpu, m3_cpu;
};

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_sideband(const struct perf_event_header *h, void *ctx)
{
	struct run *r = ctx;
	const struct { struct perf_event_header h; __u16 type, flags; __u32 id; } *b = (void *)h;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i;
	int fd;

	if (h->type != PERF_RECORD_BPF_EVENT || b->type != PERF_BPF_EVENT_PROG_LOAD ||
	    b->id < r->first_id || b->id - r->first_id >= MAX_PROGS)
		return;
	i = b->id - r->first_id;
	fd = bpf_prog_get_fd_by_id(b->id);
	if (fd < 0)
		return;
	/* perf asks for the sizes, then for the arrays (get_bpf_prog_info_linear). */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.jited_prog_len) {
		void *img = malloc(info.jited_prog_len);
		__u64 *ksyms = calloc(info.nr_jited_ksyms, 8);
		__u32 *lens = calloc(info.nr_jited_func_lens, 4);
		struct bpf_prog_info full = {
			.jited_prog_len = info.jited_prog_len,
			.jited_prog_insns = (__u64)(unsigned long)img,
			.nr_jited_ksyms = info.nr_jited_ksyms,
			.jited_ksyms = (__u64)(unsigned long)ksyms,
			.nr_jited_func_lens = info.nr_jited_func_lens,
			.jited_func_lens = (__u64)(unsigned long)lens,
		};

		len = sizeof(full);
		if (!bpf_obj_get_info_by_fd(fd, &full, &len))
			r->sb_ok[i] = 1;
		free(img);
		free(ksyms);
		free(lens);
	}
	close(fd);
}

static void on_mmap3(const struct perf_event_header *h, void *ctx)
{
	struct run *r = ctx;
	const struct { struct perf_event_header h; __u64 addr, len; __u32 id, flags; } *m = (void *)h;

	if (h->type != PERF_RECORD_MMAP3 || m->id < r->first_id || m->id - r->first_id >= MAX_PROGS)
		return;
	if (m->flags & PERF_RECORD_MMAP3_STASHED)
		r->m3_ok[m->id - r->first_id] = 1;
}

static void *consumer(void *arg, struct ring *rings, rec_fn fn, double *cpu)
{
	struct run *r = arg;
	struct pollfd pfd[MAX_CPUS];
	double t0 = thread_cpu();
	int c;

	for (c = 0; c < nr_cpus; c++)
		pfd[c] = (struct pollfd){ .fd = rings[c].fd, .events = POLLIN };
	while (!atomic_load(&r->stop)) {
		poll(pfd, nr_cpus, 1);
		for (c = 0; c < nr_cpus; c++)
			ring_drain(&rings[c], fn, r);
	}
	for (c = 0; c < nr_cpus; c++)
		ring_drain(&rings[c], fn, r);
	*cpu = thread_cpu() - t0;
	return NULL;
}

static void *sb_thread(void *arg)
{
	struct run *r = arg;

	return consumer(arg, r->sb, on_sideband, &r->sb_cpu);
}

static void *m3_thread(void *arg)
{
	struct run *r = arg;

	return consumer(arg, r->m3, on_mmap3, &r->m3_cpu);
}

static int load_named(const char *name)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, 2, NULL);
}

static int run_one(int n, int lifetime_us, int csv)
{
	struct run *r = calloc(1, sizeof(*r));
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	pthread_t a, b;
	int i, c, sb = 0, m3 = 0, fd;
	struct stash_trace_sum hook = {};
	struct stash_trace *trace;

	r->sb_ok = calloc(MAX_PROGS, 1);
	r->m3_ok = calloc(MAX_PROGS, 1);
	for (c = 0; c < nr_cpus; c++)
		if (ring_open(&r->sb[c], c, 0) || ring_open(&r->m3[c], c, 1)) {
			fprintf(stderr, "racebench: perf_event_open: %s\n", strerror(errno));
			return 1;
		}
	fd = load_named("race_first");
	bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	r->first_id = info.id + 1;
	trace = stash_trace_open();
	if (!trace) {
		fprintf(stderr, "racebench: bpfstash:bpfstash_store: %s\n", strerror(errno));
		return 1;
	}
	pthread_create(&a, NULL, sb_thread, r);
	pthread_create(&b, NULL, m3_thread, r);
	for (i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "race%d", i);
		fd = load_named(name);
		if (lifetime_us)
			usleep(lifetime_us);
		close(fd);
		if (i % 1000 == 999)
			stash_trace_read(trace, stash_trace_add, &hook);
	}
	usleep(300 * 1000);
	atomic_store(&r->stop, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	stash_trace_read(trace, stash_trace_add, &hook);
	if (stash_trace_lost(trace))
		fprintf(stderr, "racebench: %lld tracepoint records lost\n", stash_trace_lost(trace));
	stash_trace_close(trace);
	for (i = 0; i < n; i++) {
		sb += r->sb_ok[i];
		m3 += r->m3_ok[i];
	}
	{
		double hook_us = hook.n ? hook.ns / 1e3 / hook.n : 0;

		if (csv)
			printf("%d,%d,%d,%d,%.1f,%.1f,%.1f\n", lifetime_us, n, m3, sb,
			       hook_us, r->m3_cpu * 1e6 / n, r->sb_cpu * 1e6 / n);
		else
			printf("lifetime %5d us, %d programs: bpfstash captured %d (%.1f%%), "
			       "side-band fetch captured %d (%.1f%%); CPU per program: bpfstash "
			       "%.1f us in the kernel hook + %.1f us consumer, side-band %.1f us\n",
			       lifetime_us, n, m3, 100.0 * m3 / n, sb, 100.0 * sb / n, hook_us,
			       r->m3_cpu * 1e6 / n, r->sb_cpu * 1e6 / n);
	}
	for (c = 0; c < nr_cpus; c++) {
		close(r->sb[c].fd);
		close(r->m3[c].fd);
	}
	free(r->sb_ok);
	free(r->m3_ok);
	free(r);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "programs", required_argument, NULL, 'n' },
		{ "lifetime", required_argument, NULL, 'l' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int n = 2000, csv = 0, c, nl = 0, i, lifetimes[16];

	while ((c = getopt_long(argc, argv, "n:l:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'l': if (nl < 16) lifetimes[nl++] = atoi(optarg); break;
		case 'c': csv = 1; break;
		case 'h':
			printf("usage: racebench [-n PROGRAMS] [-l LIFETIME_US]... [--csv]\n");
			return 0;
		default: return 64;
		}
	}
	if (n < 1 || n > MAX_PROGS)
		return 64;
	if (!nl) {
		lifetimes[nl++] = 0;
		lifetimes[nl++] = 1000;
		lifetimes[nl++] = 10000;
	}
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (nr_cpus > MAX_CPUS)
		nr_cpus = MAX_CPUS;
	stash_umount();
	if (mount("none", ROOT, "bpfstash", 0, "max_entries=1000000,size=1G")) {
		perror("racebench: mount");
		return 1;
	}
	if (csv)
		printf("lifetime_us,programs,bpfstash_captured,sideband_captured,"
		       "bpfstash_hook_us,bpfstash_consumer_cpu_us,sideband_cpu_us\n");
	for (i = 0; i < nl; i++)
		if (run_one(n, lifetimes[i], csv))
			return 1;
	stash_umount();
	return 0;
}
