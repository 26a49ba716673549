// SPDX-License-Identifier: GPL-2.0-only
/*
 * agentbench: libbpfstash's agent interface against rescanning
 * /proc/kallsyms, in the bench guest (bench/guest.sh).
 *
 *   resolve   -n ENTRIES programs (default 100 000) loaded and closed,
 *             -k of them (default 1 000) kept loaded; the agent indexes
 *             them all from its records.  Resolutions per second of
 *             (address, time) for any of them, against a rescan of
 *             /proc/kallsyms per address for the loaded ones (the only ones
 *             it lists), and the answers compared.  Memory the agent
 *             holds per tracked program (malloc'ed bytes).
 *   rate      programs loaded and closed as fast as the guest can, one
 *             loader per CPU, while the agent polls in its own thread,
 *             woken by the rings (epoll) or looking every 50 ms (a busy
 *             profiler); for ring sizes of 1, 8 and 64 pages per CPU:
 *             records kept, records lost, and programs known after
 *             recovery.
 *
 *   synthetic (-s, also on the host: no kernel needed) the same index
 *             fed with -n programs' records built here, packed as the JIT
 *             packs them (64-byte chunks, a random offset in each, the
 *             chunks reused by the next programs), for the index alone at
 *             native speed.
 *
 * --csv prints one "kind,key,value,..." row per figure; otherwise text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/perf_event.h>

#include "stashfs.h"
#include "libbpfstash.h"

static bool csv;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int prog_addr(int fd, __u32 *id, __u64 *addr)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u64 ksym = 0;

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(unsigned long)&ksym;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*id = info.id;
	*addr = ksym;
	return 0;
}

struct prog {
	__u32 id;
	__u64 addr;
	uint64_t t;
	int fd;		/* kept loaded, or -1 */
};

/*
 * The kallsyms way: read the whole file, find the closest symbol at or
 * below @addr.  What a tool without bpfstash does per unknown address.
 */
static int kallsyms_resolve(uint64_t addr, char *name, size_t size)
{
	char line[512], best[256] = "";
	uint64_t best_addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, sym[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		if (a <= addr && a >= best_addr) {
			best_addr = a;
			snprintf(best, sizeof(best), "%s", sym);
		}
	}
	fclose(f);
	snprintf(name, size, "%s", best);
	return best_addr == addr ? 0 : -ENOENT;
}

static void out(const char *kind, const char *key, double v, const char *unit)
{
	if (csv)
		printf("%s,%s,%.6g\n", kind, key, v);
	else
		printf("%-8s %-40s %14.6g %s\n", kind, key, v, unit);
}

static int bench_resolve(int n, int keep)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct bpfstash_agent_stats st;
	struct bpfstash_agent *a;
	struct prog *p = calloc(n, sizeof(*p));
	struct mallinfo2 m0, m1;
	struct rlimit rl = { keep + 1024, keep + 1024 };
	double t0, t, agent_rate, ksym_rate;
	int i, err, loaded = 0, agree = 0, kq = 0, wrong = 0;
	const int queries = 1000000;
	volatile uint64_t sink = 0;

	if (!p)
		return -ENOMEM;
	setrlimit(RLIMIT_NOFILE, &rl);
	m0 = mallinfo2();
	err = bpfstash_agent_open(&o, &a);
	if (err) {
		fprintf(stderr, "agentbench: agent: %s\n", strerror(-err));
		return err;
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		char name[16];
		int fd;

		p[i].fd = -1;
		snprintf(name, sizeof(name), "ab%d", i);
		fd = load_raw_prog(name);
		if (fd < 0)
			continue;
		if (!prog_addr(fd, &p[i].id, &p[i].addr)) {
			p[i].t = boot_ns();
			loaded++;
		}
		if (i >= n - keep)
			p[i].fd = fd;
		else
			close(fd);
		if (i % 200 == 199)
			bpfstash_agent_poll(a, 0);
	}
	bpfstash_agent_poll(a, 0);
	bpfstash_agent_poll(a, 100);
	m1 = mallinfo2();
	bpfstash_agent_get_stats(a, &st);
	fprintf(stderr, "agentbench: %d programs loaded in %.0f s\n", loaded, now_s() - t0);
	out("resolve", "programs_loaded", loaded, "");
	out("resolve", "programs_tracked", st.programs, "");
	out("resolve", "records_lost", st.lost, "");
	out("resolve", "agent_bytes_per_program", (double)(m1.uordblks - m0.uordblks) / st.programs,
	    "bytes (malloc'ed, index included)");

	/* The agent: random programs, each at a time it was loaded. */
	srand(1);
	t = now_s();
	for (i = 0; i < queries; i++) {
		struct prog *q = &p[(unsigned int)rand() % n];
		struct bpfstash_agent_sym sym;

		if (!q->id)
			continue;
		if (bpfstash_agent_resolve(a, q->addr + 1, q->t, &sym) || sym.prog->id != q->id)
			wrong++;
		else
			sink += sym.offset;
	}
	agent_rate = queries / (now_s() - t);
	out("resolve", "agent_resolutions_per_s", agent_rate, "/s");
	out("resolve", "agent_wrong_answers", wrong, "");

	/* kallsyms: the loaded ones only, the same answers expected. */
	t = now_s();
	for (i = n - keep; i < n && now_s() - t < 30; i++) {
		struct bpfstash_agent_sym sym;
		char name[256];

		if (p[i].fd < 0 || !p[i].id)
			continue;
		kq++;
		if (kallsyms_resolve(p[i].addr, name, sizeof(name)))
			continue;
		if (!bpfstash_agent_resolve(a, p[i].addr, 0, &sym) &&
		    !strcmp(sym.func->name, name))
			agree++;
	}
	ksym_rate = kq / (now_s() - t);
	out("resolve", "kallsyms_rescans_per_s", ksym_rate, "/s");
	out("resolve", "kallsyms_queries", kq, "");
	out("resolve", "kallsyms_same_answer", agree, "");
	out("resolve", "agent_over_kallsyms", agent_rate / ksym_rate, "x");
	for (i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	bpfstash_agent_close(a);
	free(p);
	return wrong || agree != kq ? 1 : 0;
}

struct rate {
	struct bpfstash_agent *a;
	atomic_int stop;
	atomic_int next;
	int n;
	atomic_int loaded;
	bool busy;
};

static void *poller(void *arg)
{
	struct rate *r = arg;

	while (!atomic_load(&r->stop)) {
		if (r->busy) {
			/* a profiler busy elsewhere: it looks every 50 ms */
			usleep(50 * 1000);
			bpfstash_agent_poll(r->a, 0);
		} else {
			/* woken by the rings (epoll) */
			bpfstash_agent_poll(r->a, 50);
		}
	}
	return NULL;
}

static void *loader(void *arg)
{
	struct rate *r = arg;
	int i;

	while ((i = atomic_fetch_add(&r->next, 1)) < r->n) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "rt%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0) {
			atomic_fetch_add(&r->loaded, 1);
			close(fd);
		}
	}
	return NULL;
}

static int bench_rate(int n, size_t pages, bool busy)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .ring_pages = pages };
	struct rate r = { .n = n, .busy = busy };
	struct bpfstash_agent_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, err, last;
	pthread_t pt, lt[16];
	char key[64];
	double t;

	if (ncpu > 16)
		ncpu = 16;
	if (stash_mount(NULL))
		return -1;
	err = bpfstash_agent_open(&o, &r.a);
	if (err)
		return err;
	pthread_create(&pt, NULL, poller, &r);
	t = now_s();
	for (i = 0; i < ncpu; i++)
		pthread_create(&lt[i], NULL, loader, &r);
	for (i = 0; i < ncpu; i++)
		pthread_join(lt[i], NULL);
	t = now_s() - t;
	/* One more load tells the last loss (the kernel reports it with the next record). */
	last = load_raw_prog("rt_last");
	if (last >= 0)
		close(last);
	usleep(300 * 1000);
	atomic_store(&r.stop, 1);
	pthread_join(pt, NULL);
	bpfstash_agent_poll(r.a, 0);
	bpfstash_agent_get_stats(r.a, &st);
	snprintf(key, sizeof(key), "%s_pages%zu_", busy ? "every50ms" : "epoll", pages);
#define OUT(k, v) do { char kk[96]; snprintf(kk, sizeof(kk), "%s%s", key, k); out("rate", kk, v, ""); } while (0)
	OUT("loaders", ncpu);
	OUT("programs", atomic_load(&r.loaded));
	OUT("loads_per_s", atomic_load(&r.loaded) / t);
	OUT("records_kept", st.records);
	OUT("records_lost", st.lost);
	OUT("kept_pct", 100.0 * st.records / (st.records + st.lost ? st.records + st.lost : 1));
	OUT("recoveries", st.recoveries);
	OUT("programs_known", st.programs);
	OUT("programs_recovered", st.recovered_loads);
	bpfstash_agent_close(r.a);
	stash_umount();
	return 0;
}

/* The kernel's records, built here: MMAP3 (one function) and the unload. */
static void feed_prog(struct bpfstash_agent *a, __u32 id, uint64_t addr, uint32_t len,
		      uint64_t load, uint64_t unload)
{
	uint64_t buf[16] = {};
	uint8_t *b = (uint8_t *)buf;
	struct perf_event_header *h = (void *)buf;
	uint16_t u16;
	uint32_t u32;

	h->type = BPFSTASH_PERF_RECORD_MMAP3;
	h->size = 64 + 32 + 8;
	memcpy(b + 8, &addr, 8);
	memcpy(b + 16, &(uint64_t){ len }, 8);
	memcpy(b + 24, &id, 4);
	u32 = 1;
	memcpy(b + 28, &u32, 4);
	u16 = 1;	/* PERF_RECORD_KSYMBOL_TYPE_BPF */
	memcpy(b + 32, &u16, 2);
	b[36] = 20;
	memcpy(b + 40, &id, 4);		/* a distinct hash */
	snprintf((char *)b + 64, 32, "bpf_prog_%016x_s", id);
	memcpy(b + 96, &load, 8);
	bpfstash_agent_feed(a, h);
	if (!unload)
		return;
	memset(buf, 0, sizeof(buf));
	h->type = PERF_RECORD_BPF_EVENT;
	h->size = 32;
	u16 = PERF_BPF_EVENT_PROG_UNLOAD;
	memcpy(b + 8, &u16, 2);
	memcpy(b + 12, &id, 4);
	memcpy(b + 24, &unload, 8);
	bpfstash_agent_feed(a, h);
}

static int bench_synthetic(int n, int keep)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .root = "/nonexistent",
					 .flags = BPFSTASH_AGENT_NO_RINGS };
	const int chunks = 1024, queries = 2000000;
	struct bpfstash_agent_stats st;
	struct mallinfo2 m0, m1;
	struct bpfstash_agent *a;
	struct prog *p = calloc(n, sizeof(*p));
	int i, wrong = 0;
	double t;

	if (!p)
		return -ENOMEM;
	srand(2);
	m0 = mallinfo2();
	if (bpfstash_agent_open(&o, &a))
		return 1;
	for (i = 0; i < n; i++) {
		uint64_t load = 1000000ull * (i + 1);

		p[i].id = i + 1;
		p[i].addr = 0xffffffffa0000000ull + (uint64_t)(i % chunks) * 64 + rand() % 24;
		p[i].t = load + 1;
		feed_prog(a, p[i].id, p[i].addr, 40, load, i < n - keep ? load + chunks * 1000000ull : 0);
		if (i % 1000 == 999)
			bpfstash_agent_poll(a, 0);
	}
	bpfstash_agent_poll(a, 0);
	m1 = mallinfo2();
	bpfstash_agent_get_stats(a, &st);
	out("synthetic", "programs_tracked", st.programs, "");
	out("synthetic", "programs_per_chunk", (double)n / chunks, "(address reuse)");
	out("synthetic", "agent_bytes_per_program", (double)(m1.uordblks - m0.uordblks) / st.programs,
	    "bytes");
	t = now_s();
	for (i = 0; i < queries; i++) {
		struct prog *q = &p[(unsigned int)rand() % n];
		struct bpfstash_agent_sym sym;

		if (bpfstash_agent_resolve(a, q->addr + 1, q->t, &sym) || sym.prog->id != q->id)
			wrong++;
	}
	out("synthetic", "agent_resolutions_per_s", queries / (now_s() - t), "/s");
	out("synthetic", "agent_wrong_answers", wrong, "");
	bpfstash_agent_close(a);
	free(p);
	return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	int n = 100000, keep = 1000, rate_n = 5000, opt, ret;
	bool synthetic_only = false;
	static const size_t pages[] = { 1, 8, 64 };
	unsigned int i;

	while ((opt = getopt(argc, argv, "n:k:r:cs")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'k':
			keep = atoi(optarg);
			break;
		case 'r':
			rate_n = atoi(optarg);
			break;
		case 'c':
			csv = true;
			break;
		case 's':
			synthetic_only = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-n ENTRIES] [-k KEPT_LOADED] [-r RATE_PROGRAMS] [-c] [-s]\n",
				argv[0]);
			return 64;
		}
	}
	if (keep > n)
		keep = n;
	if (csv)
		printf("kind,key,value\n");
	ret = bench_synthetic(n, keep);
	if (synthetic_only)
		return ret;
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		bench_rate(rate_n, pages[i], false);
		bench_rate(rate_n, pages[i], true);
	}
	/* A stash big enough for every entry. */
	if (stash_mount("max_entries=1000000,size=4294967296"))
		return 1;
	ret |= bench_resolve(n, keep);
	stash_umount();
	return ret;
}
