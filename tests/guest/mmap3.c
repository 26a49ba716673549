// SPDX-License-Identifier: GPL-2.0-only
/*
 * PERF_RECORD_MMAP3 against the real kernel: one record per JITed function,
 * equal to bpf_prog_get_info_by_fd(), after the entry exists, for every
 * program however short its life; flagged when the stash refuses; only for
 * events that asked and may see kernel addresses; KSYMBOL and BPF_EVENT
 * unchanged.  Also measures what a perf-style side-band consumer misses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/perfring.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

#define MAX_CPUS 8

static int nr_cpus(void)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > MAX_CPUS ? MAX_CPUS : n;
}

/* System-wide rings, one per CPU, with @attr. */
static int rings_open(struct perf_event_attr *attr, struct ring *rings, size_t pages)
{
	int cpu, err;

	for (cpu = 0; cpu < nr_cpus(); cpu++) {
		err = ring_open(attr, -1, cpu, pages, &rings[cpu]);
		if (err) {
			while (cpu--)
				ring_close(&rings[cpu]);
			return err;
		}
	}
	return 0;
}

static void rings_close(struct ring *rings)
{
	int cpu;

	for (cpu = 0; cpu < nr_cpus(); cpu++)
		ring_close(&rings[cpu]);
}

static int rings_drain(struct ring *rings, ring_fn fn, void *ctx)
{
	int cpu, n = 0;

	for (cpu = 0; cpu < nr_cpus(); cpu++)
		n += ring_drain(&rings[cpu], fn, ctx);
	return n;
}

struct collected {
	__u32 prog_id;			/* only records of this program; 0: all */
	int nr;
	struct mmap3_record rec[64];
	char names[64][512];
	__u16 size[64];
	__u32 tid[64];
	int ksymbol, bpf_load, bpf_unload, other_mmap3;
};

static void collect(const struct perf_event_header *h, void *ctx)
{
	struct collected *c = ctx;

	if (h->type == PERF_RECORD_MMAP3) {
		const struct mmap3_record *m = (const void *)h;

		if (c->prog_id && m->id != c->prog_id) {
			c->other_mmap3++;
			return;
		}
		if (c->nr < 64) {
			/* The sample_id trailer: pid, tid (PERF_SAMPLE_TID), then time. */
			size_t name_len = strnlen(m->name, 511);
			size_t name_pad = (name_len + 1 + 7) & ~7UL;
			const __u32 *sid = (const void *)((const char *)m + sizeof(*m) + name_pad);

			c->rec[c->nr] = *m;
			memcpy(c->names[c->nr], m->name, name_len);
			c->names[c->nr][name_len] = '\0';
			c->size[c->nr] = h->size;
			c->tid[c->nr] = sid[1];
		}
		c->nr++;
	} else if (h->type == PERF_RECORD_KSYMBOL) {
		const struct {
			struct perf_event_header header;
			__u64 addr;
			__u32 len;
			__u16 ksym_type, flags;
			char name[];
		} *k = (const void *)h;

		/* The test programs' functions are all named stash_*. */
		if (strstr(k->name, "_stash_"))
			c->ksymbol++;
	} else if (h->type == PERF_RECORD_BPF_EVENT) {
		const struct {
			struct perf_event_header header;
			__u16 type, flags;
			__u32 id;
		} *b = (const void *)h;

		if (c->prog_id && b->id != c->prog_id)
			return;
		if (b->type == PERF_BPF_EVENT_PROG_LOAD)
			c->bpf_load++;
		else if (b->type == PERF_BPF_EVENT_PROG_UNLOAD)
			c->bpf_unload++;
	}
}

static void check_records(struct collected *c, const struct prog_info_full *pi,
			  const char *what)
{
	__u32 i;

	if (!ASSERT_EQ(c->nr, pi->info.nr_jited_ksyms, what))
		return;
	for (i = 0; i < pi->info.nr_jited_ksyms; i++) {
		const struct mmap3_record *m = &c->rec[i];
		char hex[41], path[128];
		struct bpfstash_meta *meta;
		size_t size;

		ASSERT_EQ(m->func_idx, i, "records in function order");
		ASSERT_EQ(m->addr, pi->ksyms[i], "addr == jited_ksyms[i]");
		ASSERT_EQ(m->len, pi->func_lens[i], "len == jited_func_lens[i]");
		ASSERT_EQ(m->type, PERF_RECORD_KSYMBOL_TYPE_BPF, "type");
		ASSERT_EQ(m->flags, PERF_RECORD_MMAP3_STASHED, "flags: stashed");
		ASSERT_EQ(m->hash_size, 20, "hash_size");
		ASSERT_EQ(c->size[i], sizeof(*m) + ((strlen(c->names[i]) + 1 + 7) & ~7UL) + 16,
			  "record size: header, name padded to 8, sample_id (tid, time)");
		ASSERT_EQ(c->tid[i], syscall(SYS_gettid), "sample_id tid is the loader");
		bpfstash_hash_format(m->hash, hex);
		snprintf(path, sizeof(path), STASH_ROOT "/%s", hex);
		if (!ASSERT_OK(access(path, F_OK), "hash names an entry"))
			continue;
		if (ASSERT_OK(stash_read(hex, "meta", (void **)&meta, &size), "read meta")) {
			ASSERT_EQ(meta->prog_id, pi->info.id, "the entry is this program's");
			free(meta);
		}
	}
}

static void test_records_per_function(void)
{
	struct ring rings[MAX_CPUS], task;
	struct perf_event_attr attr;
	struct collected sys = {}, per_task = {};
	struct prog_info_full pi;
	struct bpf_object *obj;
	int fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	if (!ASSERT_OK(rings_open(&attr, rings, 64), "system-wide events with mmap3"))
		goto out;
	if (!ASSERT_OK(ring_open(&attr, 0, -1, 64, &task), "per-task event with mmap3")) {
		rings_close(rings);
		goto out;
	}

	obj = test_prog_load("subprogs", &fd);
	if (ASSERT_PTR_OK(obj, "load subprogs") &&
	    ASSERT_OK(prog_info_full_get(fd, &pi), "info")) {
		sys.prog_id = per_task.prog_id = pi.info.id;
		rings_drain(rings, collect, &sys);
		ring_drain(&task, collect, &per_task);
		check_records(&sys, &pi, "system-wide: one MMAP3 per function");
		check_records(&per_task, &pi, "per-task: one MMAP3 per function");
		/* Names: the kallsyms names the stash recorded. */
		{
			struct bpfstash_entry *e;
			struct bpfstash *s;
			char hex[41];
			__u32 i;

			bpfstash_hash_format(sys.rec[0].hash, hex);
			if (!bpfstash_open(STASH_ROOT, &s)) {
				if (ASSERT_OK(bpfstash_entry_load(s, hex, 0, &e), "load entry")) {
					for (i = 0; i < (__u32)sys.nr && i < bpfstash_entry_nr_funcs(e); i++)
						ASSERT_STREQ(sys.names[i], bpfstash_entry_func_name(e, i),
							     "record name == kallsyms name");
					bpfstash_entry_free(e);
				}
				bpfstash_close(s);
			}
		}
		prog_info_full_free(&pi);
	}
	if (obj)
		bpf_object__close(obj);
	ring_close(&task);
	rings_close(rings);
out:
	stash_umount();
}

/*
 * Ordering: whoever sees a record finds the entry.  A reader thread polls
 * the rings and checks each hash at once, while the loader loads.
 */
struct order_ctx {
	struct ring *rings;
	atomic_int stop;
	int seen, missing;
};

static void order_check(const struct perf_event_header *h, void *ctx)
{
	struct order_ctx *o = ctx;
	const struct mmap3_record *m = (const void *)h;
	char hex[41], path[128];

	if (h->type != PERF_RECORD_MMAP3)
		return;
	bpfstash_hash_format(m->hash, hex);
	snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", hex);
	o->seen++;
	if (access(path, R_OK))
		o->missing++;
}

static void *order_reader(void *arg)
{
	struct order_ctx *o = arg;

	while (!atomic_load(&o->stop))
		rings_drain(o->rings, order_check, o);
	rings_drain(o->rings, order_check, o);
	return NULL;
}

static void test_record_after_entry(void)
{
	struct ring rings[MAX_CPUS];
	struct perf_event_attr attr;
	struct order_ctx o = {};
	pthread_t th;
	char name[16];
	int i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	if (!ASSERT_OK(rings_open(&attr, rings, 64), "events"))
		goto out;
	o.rings = rings;
	pthread_create(&th, NULL, order_reader, &o);
	for (i = 0; i < 200; i++) {
		int fd;

		snprintf(name, sizeof(name), "order%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&o.stop, 1);
	pthread_join(th, NULL);
	ASSERT_EQ(o.seen, 200, "a record per program");
	ASSERT_EQ(o.missing, 0, "every record's entry already existed when read");
	rings_close(rings);
out:
	stash_umount();
}

/*
 * Zero misses, and the comparison with what perf does today: a side-band
 * consumer that reacts to PERF_RECORD_BPF_EVENT with BPF_PROG_GET_FD_BY_ID
 * and BPF_OBJ_GET_INFO_BY_FD, as perf's side-band thread does
 * (tools/perf/util/bpf-event.c), polling with a 1 ms timeout.
 */
#define STORM_MAX 100000

/* STASH_STORM programs (default 300; make check runs 5000 on the bench kernel). */
static int storm_count(void)
{
	const char *s = getenv("STASH_STORM");

	return s && atoi(s) > 0 ? atoi(s) : 300;
}

struct storm {
	struct ring mmap3_rings[MAX_CPUS];
	struct ring sb_rings[MAX_CPUS];
	atomic_int stop;
	/* per program id, from the two consumers */
	unsigned char *mmap3_funcs, *sb_ok, *sb_seen;
	char (*hashes)[41];
	__u32 first_id;
	int sb_missed, sb_fetched;
	double sb_cpu;
};

static void storm_mmap3(const struct perf_event_header *h, void *ctx)
{
	struct storm *s = ctx;
	const struct mmap3_record *m = (const void *)h;
	__u32 i;

	if (h->type != PERF_RECORD_MMAP3 || m->id < s->first_id)
		return;
	i = m->id - s->first_id;
	if (i >= 2 * STORM_MAX)
		return;
	s->mmap3_funcs[i]++;
	if (m->flags & PERF_RECORD_MMAP3_STASHED)
		bpfstash_hash_format(m->hash, s->hashes[i]);
}

static void storm_sideband(const struct perf_event_header *h, void *ctx)
{
	struct storm *s = ctx;
	const struct {
		struct perf_event_header header;
		__u16 type, flags;
		__u32 id;
	} *b = (const void *)h;
	struct prog_info_full pi;
	__u32 i;
	int fd;

	if (h->type != PERF_RECORD_BPF_EVENT || b->type != PERF_BPF_EVENT_PROG_LOAD ||
	    b->id < s->first_id)
		return;
	i = b->id - s->first_id;
	if (i >= 2 * STORM_MAX)
		return;
	s->sb_seen[i] = 1;
	fd = bpf_prog_get_fd_by_id(b->id);
	if (fd < 0) {
		s->sb_missed++;
		return;
	}
	if (!prog_info_full_get(fd, &pi)) {
		s->sb_ok[i] = pi.info.jited_prog_len > 0;
		s->sb_fetched++;
		prog_info_full_free(&pi);
	} else {
		s->sb_missed++;
	}
	close(fd);
}

static void *storm_sideband_thread(void *arg)
{
	struct storm *s = arg;
	struct pollfd pfd[MAX_CPUS];
	struct timespec t0, t1;
	int cpu;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (cpu = 0; cpu < nr_cpus(); cpu++)
		pfd[cpu] = (struct pollfd){ .fd = s->sb_rings[cpu].fd, .events = POLLIN };
	while (!atomic_load(&s->stop)) {
		poll(pfd, nr_cpus(), 1);
		rings_drain(s->sb_rings, storm_sideband, s);
	}
	rings_drain(s->sb_rings, storm_sideband, s);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	s->sb_cpu = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return NULL;
}

static void *storm_mmap3_thread(void *arg)
{
	struct storm *s = arg;
	struct pollfd pfd[MAX_CPUS];
	int cpu;

	/* Like the side-band consumer, but late is fine: the entries stay. */
	for (cpu = 0; cpu < nr_cpus(); cpu++)
		pfd[cpu] = (struct pollfd){ .fd = s->mmap3_rings[cpu].fd, .events = POLLIN };
	while (!atomic_load(&s->stop)) {
		poll(pfd, nr_cpus(), 10);
		rings_drain(s->mmap3_rings, storm_mmap3, s);
	}
	rings_drain(s->mmap3_rings, storm_mmap3, s);
	return NULL;
}

static void test_zero_misses(void)
{
	const int STORM = storm_count();
	struct perf_event_attr attr;
	struct storm *s = calloc(1, sizeof(*s));
	struct bpfstash *stash = NULL;
	pthread_t th_m, th_s;
	int i, loaded = 0, with_records = 0, resolved = 0, sb_captured = 0;
	struct timespec t0, t1;

	if (!ASSERT_PTR_OK(s, "alloc") || !ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	s->mmap3_funcs = calloc(2 * STORM_MAX, 1);
	s->sb_ok = calloc(2 * STORM_MAX, 1);
	s->sb_seen = calloc(2 * STORM_MAX, 1);
	s->hashes = calloc(2 * STORM_MAX, 41);

	ring_attr_init(&attr);
	attr.mmap3 = 1;
	if (!ASSERT_OK(rings_open(&attr, s->mmap3_rings, 512), "mmap3 events"))
		goto out;
	ring_attr_init(&attr);
	attr.bpf_event = 1;
	attr.ksymbol = 1;
	if (!ASSERT_OK(rings_open(&attr, s->sb_rings, 512), "side-band events")) {
		rings_close(s->mmap3_rings);
		goto out;
	}
	{
		int fd = load_raw_prog("storm_first");
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		bpf_obj_get_info_by_fd(fd, &info, &len);
		s->first_id = info.id + 1;
		close(fd);
	}
	pthread_create(&th_m, NULL, storm_mmap3_thread, s);
	pthread_create(&th_s, NULL, storm_sideband_thread, s);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < STORM; i++) {
		char name[16];
		int fd;

		/* Distinct names: distinct content, one entry each. */
		snprintf(name, sizeof(name), "storm%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0) {
			loaded++;
			close(fd);	/* closed right after load */
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	usleep(200 * 1000);
	atomic_store(&s->stop, 1);
	pthread_join(th_m, NULL);
	pthread_join(th_s, NULL);

	ASSERT_EQ(loaded, STORM, "every load succeeded");
	ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open stash");
	for (i = 0; i < 2 * STORM_MAX; i++) {
		struct bpfstash_entry *e;

		if (!s->mmap3_funcs[i])
			continue;
		with_records++;
		if (stash && s->hashes[i][0] && !bpfstash_entry_load(stash, s->hashes[i], 0, &e)) {
			resolved += bpfstash_entry_verify(e) == 0 &&
				    bpfstash_entry_nr_funcs(e) == s->mmap3_funcs[i];
			bpfstash_entry_free(e);
		}
		sb_captured += s->sb_ok[i];
	}
	bpfstash_close(stash);
	ASSERT_EQ(with_records, STORM, "bpfstash: every program has its MMAP3 records");
	ASSERT_EQ(resolved, STORM, "bpfstash: every hash resolves to a complete, verified entry");
	test__note("%d programs loaded and closed at once in %.1f s (%.0f us each)",
		   STORM, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		   ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / STORM);
	test__note("bpfstash + MMAP3: %d captured, %d missed", resolved, STORM - resolved);
	test__note("perf-style side-band fetch: %d captured, %d missed (%.1f%%), %.0f us CPU per program",
		   sb_captured, STORM - sb_captured, 100.0 * (STORM - sb_captured) / STORM,
		   s->sb_cpu * 1e6 / STORM);
	rings_close(s->sb_rings);
	rings_close(s->mmap3_rings);
out:
	free(s->mmap3_funcs);
	free(s->sb_ok);
	free(s->sb_seen);
	free(s->hashes);
	free(s);
	stash_umount();
}

static void test_full_stash_flagged(void)
{
	struct ring rings[MAX_CPUS];
	struct perf_event_attr attr;
	struct collected c = {};
	struct prog_info_full pi;
	struct bpf_object *obj;
	long long refused;
	int fd, i;

	if (!ASSERT_OK(stash_mount("max_entries=1"), "mount max_entries=1"))
		return;
	/* Fill it. */
	for (i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "fill%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0)
			close(fd);
	}
	refused = stash_stat("refused_full");
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	if (!ASSERT_OK(rings_open(&attr, rings, 64), "events"))
		goto out;
	obj = test_prog_load("subprogs", &fd);
	if (ASSERT_PTR_OK(obj, "load while full") &&
	    ASSERT_OK(prog_info_full_get(fd, &pi), "info")) {
		c.prog_id = pi.info.id;
		rings_drain(rings, collect, &c);
		if (ASSERT_EQ(c.nr, pi.info.nr_jited_ksyms, "still one record per function")) {
			for (i = 0; i < c.nr; i++) {
				ASSERT_EQ(c.rec[i].flags, PERF_RECORD_MMAP3_REFUSED_FULL,
					  "flagged refused: full");
				ASSERT_EQ(c.rec[i].hash_size, 0, "no hash");
				ASSERT_EQ(c.rec[i].addr, pi.ksyms[i], "addr still given");
			}
		}
		/* libbpf's feature probes may be refused too. */
		ASSERT_GE(stash_stat("refused_full") - refused, 1, "the refusal counted");
		prog_info_full_free(&pi);
	}
	if (obj)
		bpf_object__close(obj);
	rings_close(rings);
out:
	stash_umount();
}

/* Old tools never see the record; KSYMBOL and BPF_EVENT are as before. */
static void test_no_bit_no_records(void)
{
	struct ring rings[MAX_CPUS];
	struct perf_event_attr attr;
	struct collected c = {};
	struct prog_info_full pi;
	struct bpf_object *obj;
	int fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	ring_attr_init(&attr);
	attr.ksymbol = 1;
	attr.bpf_event = 1;
	if (!ASSERT_OK(rings_open(&attr, rings, 64), "events without mmap3"))
		goto out;
	obj = test_prog_load("subprogs", &fd);
	if (ASSERT_PTR_OK(obj, "load") && ASSERT_OK(prog_info_full_get(fd, &pi), "info")) {
		c.prog_id = pi.info.id;
		bpf_object__close(obj);
		obj = NULL;
		rings_drain(rings, collect, &c);
		ASSERT_EQ(c.nr + c.other_mmap3, 0, "no MMAP3 without the bit");
		ASSERT_EQ(c.ksymbol, 2 * pi.info.nr_jited_ksyms,
			  "KSYMBOL: one per function at load and at unload");
		ASSERT_EQ(c.bpf_load, 1, "BPF_EVENT load");
		ASSERT_EQ(c.bpf_unload, 1, "BPF_EVENT unload");
		prog_info_full_free(&pi);
	}
	if (obj)
		bpf_object__close(obj);
	rings_close(rings);
out:
	stash_umount();
}

static int open_mmap3_unpriv(void *arg)
{
	struct perf_event_attr attr;
	int fd;

	ring_attr_init(&attr);
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.mmap3 = *(int *)arg;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0)
		return 0;
	return errno == EACCES ? 1 : 2;
}

static void test_unprivileged_refused(void)
{
	char old[16] = "";
	int bit = 1, nobit = 0;

	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "2", old, sizeof(old));
	ASSERT_EQ(run_unprivileged(open_mmap3_unpriv, &nobit), 0,
		  "paranoid=2: a per-task user-only event without the bit opens");
	ASSERT_EQ(run_unprivileged(open_mmap3_unpriv, &bit), 1,
		  "paranoid=2: the same with mmap3 is EACCES (perf_allow_kernel)");
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "1", NULL, 0);
	ASSERT_EQ(run_unprivileged(open_mmap3_unpriv, &bit), 0,
		  "paranoid=1: allowed, as for kernel-address records");
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old, NULL, 0);
}

/* A program loaded without CAP_BPF has no kallsyms entry: no entry, no MMAP3. */
static int load_unpriv_filter(void *arg)
{
	int fd = load_raw_prog("unpriv_filter");

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

static void test_unprivileged_prog_no_record(void)
{
	struct ring rings[MAX_CPUS];
	struct perf_event_attr attr;
	struct collected c = {};
	char old[16] = "";
	int entries, rc;

	if (sysctl_set("/proc/sys/kernel/unprivileged_bpf_disabled", "0", old, sizeof(old))) {
		test__skip("unprivileged_bpf_disabled cannot be set to 0 on this kernel");
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		goto restore;
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	attr.bpf_event = 1;
	if (ASSERT_OK(rings_open(&attr, rings, 64), "events")) {
		entries = stash_count();
		rc = run_unprivileged(load_unpriv_filter, NULL);
		rings_drain(rings, collect, &c);
		if (rc == 0) {
			ASSERT_EQ(c.bpf_load, 1, "BPF_EVENT saw the load");
			ASSERT_EQ(c.nr + c.other_mmap3, 0, "no MMAP3 for it");
			ASSERT_EQ(stash_count(), entries, "no entry for it");
			ASSERT_GE(stash_stat("skipped_unlisted"), 1, "counted as skipped");
		} else {
			test__skip("an unprivileged socket filter could not be loaded (rc %d)", rc);
		}
		rings_close(rings);
	}
	stash_umount();
restore:
	sysctl_set("/proc/sys/kernel/unprivileged_bpf_disabled", old, NULL, 0);
}

static const struct test tests[] = {
	{ "records_per_function", test_records_per_function },
	{ "record_after_entry", test_record_after_entry },
	{ "full_stash_flagged", test_full_stash_flagged },
	{ "no_bit_no_records", test_no_bit_no_records },
	{ "unprivileged_refused", test_unprivileged_refused, true },
	{ "unprivileged_prog_no_record", test_unprivileged_prog_no_record, true },
	{ "zero_misses", test_zero_misses },
	{}
};

int main(int argc, char **argv)
{
	return test_main("mmap3", tests, argc, argv);
}
