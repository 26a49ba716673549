// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's index (bpfstash_agent_*) fed with records built from entries
 * captured from the kernel: tiny's image lies inside large's (the kernel
 * reused the address), so (address, time) must pick the program that held
 * the address then.  Records are what the kernel's PERF_RECORD_MMAP3 and
 * PERF_RECORD_BPF_EVENT carry, with bpfstash_agent_attr()'s sample_id (the
 * time); recovery reads copies of the entries whose meta times are set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "libbpfstash.h"
#include "fixtures.h"

#define NS FIXTURE_NS

/* Added to every record's time: 0, or the clock for tests of holding back. */
static uint64_t t_base;

struct scene {
	char dir[64];
	struct fixture tiny, large, subprogs;
	struct bpfstash_entry *et, *el, *es;
	uint64_t shared;	/* an address in tiny and in large */
	uint32_t large_func;	/* large's function that holds it */
	struct bpfstash_agent *a;
	/* The events, as "L<id>" "U<id>" "X" (lost) "R<loads>/<unloads>" */
	char log[512];
};

static void on_event(const struct bpfstash_agent_event *ev, void *ctx)
{
	struct scene *sc = ctx;
	size_t n = strlen(sc->log);

	switch (ev->type) {
	case BPFSTASH_AGENT_LOAD:
		snprintf(sc->log + n, sizeof(sc->log) - n, "L%u ", ev->prog->id);
		break;
	case BPFSTASH_AGENT_UNLOAD:
		snprintf(sc->log + n, sizeof(sc->log) - n, "U%u%s ", ev->prog->id,
			 ev->recovered ? "r" : "");
		break;
	case BPFSTASH_AGENT_LOST:
		snprintf(sc->log + n, sizeof(sc->log) - n, "X%llu ",
			 (unsigned long long)ev->lost);
		break;
	case BPFSTASH_AGENT_RECOVERED:
		snprintf(sc->log + n, sizeof(sc->log) - n, "R%u/%u ", ev->loads, ev->unloads);
		break;
	}
}

static int setup(void **state)
{
	struct scene *sc = calloc(1, sizeof(*sc));
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_NO_RINGS,
					 .event_fn = on_event };
	const struct bpfstash_func *f;
	uint32_t i;

	assert_non_null(sc);
	fixture_get("tiny", &sc->tiny);
	fixture_get("large", &sc->large);
	fixture_get("subprogs", &sc->subprogs);
	sc->et = fixture_load(&sc->tiny);
	sc->el = fixture_load(&sc->large);
	sc->es = fixture_load(&sc->subprogs);
	strcpy(sc->dir, "/tmp/bpfstash-agent-XXXXXX");
	assert_non_null(mkdtemp(sc->dir));
	f = bpfstash_entry_func(sc->et, 0);
	sc->shared = f->addr + 8;
	for (i = 0; i < bpfstash_entry_nr_funcs(sc->el); i++) {
		const struct bpfstash_func *g = bpfstash_entry_func(sc->el, i);

		if (sc->shared >= g->addr && sc->shared - g->addr < g->len)
			break;
	}
	assert_true(i < bpfstash_entry_nr_funcs(sc->el));	/* the address is reused */
	sc->large_func = i;
	o.root = sc->dir;
	o.ctx = sc;
	assert_int_equal(bpfstash_agent_open(&o, &sc->a), 0);
	assert_int_equal(bpfstash_agent_fd(sc->a), -1);
	t_base = 0;
	*state = sc;
	return 0;
}

static int teardown(void **state)
{
	struct scene *sc = *state;

	bpfstash_agent_close(sc->a);
	fixture_rmtree(sc->dir);
	bpfstash_entry_free(sc->et);
	bpfstash_entry_free(sc->el);
	bpfstash_entry_free(sc->es);
	free(sc);
	return 0;
}

/*
 * The sample_type of the records fed, 0 for the time alone (the agent's
 * default).  With more, agent_feed() writes what sample_id_all adds in
 * perf's order, the fields other than the time set to values that are no
 * time of the test.
 */
static uint64_t t_feed_type;

static int agent_feed(struct bpfstash_agent *a, struct perf_event_header *h)
{
	static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					 PERF_SAMPLE_IDENTIFIER };
	uint8_t buf[2048];
	uint64_t time, v;
	size_t i, n;

	if (!t_feed_type)
		return bpfstash_agent_feed(a, h);
	memcpy(&time, (uint8_t *)h + h->size - 8, 8);
	n = h->size - 8;
	memcpy(buf, h, n);
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (!(t_feed_type & bits[i]))
			continue;
		v = bits[i] == PERF_SAMPLE_TIME ? time : 0x7777000000000000ULL + i;
		memcpy(buf + n, &v, 8);
		n += 8;
	}
	((struct perf_event_header *)buf)->size = n;
	return bpfstash_agent_feed(a, (void *)buf);
}

/*
 * Feed the record in @buf of @type whose fixed part is @fixed bytes, then
 * @name padded to 8 bytes and the sample_id time @secs, as the kernel
 * writes MMAP3 and KSYMBOL.
 */
static void feed_named(struct scene *sc, uint8_t *buf, uint32_t type, size_t fixed,
		       const char *name, uint64_t secs)
{
	size_t name_len = (strlen(name) + 1 + 7) / 8 * 8;
	struct perf_event_header *h = (void *)buf;
	uint64_t t = t_base + secs * NS;

	h->type = type;
	h->size = fixed + name_len + 8;
	memcpy(buf + fixed, name, strlen(name));
	memcpy(buf + fixed + name_len, &t, 8);
	assert_int_equal(agent_feed(sc->a, h), 0);
}

/* The kernel's record for function @i of @e, at @secs. */
static void feed_mmap3(struct scene *sc, const struct bpfstash_entry *e, uint32_t i, uint64_t secs)
{
	const struct bpfstash_func *f = bpfstash_entry_func(e, i);
	uint8_t buf[1024] = {};
	uint32_t u32;
	uint16_t u16;

	memcpy(buf + 8, &f->addr, 8);
	memcpy(buf + 16, &(uint64_t){ f->len }, 8);
	u32 = bpfstash_entry_meta(e)->prog_id;
	memcpy(buf + 24, &u32, 4);
	u32 = 1;	/* PERF_RECORD_MMAP3_STASHED */
	memcpy(buf + 28, &u32, 4);
	u16 = PERF_RECORD_KSYMBOL_TYPE_BPF;
	memcpy(buf + 32, &u16, 2);
	u16 = i;
	memcpy(buf + 34, &u16, 2);
	buf[36] = BPFSTASH_HASH_SIZE;
	memcpy(buf + 40, bpfstash_entry_meta(e)->hash, BPFSTASH_HASH_SIZE);
	feed_named(sc, buf, BPFSTASH_PERF_RECORD_MMAP3, 64, bpfstash_entry_func_name(e, i), secs);
}

static void feed_prog(struct scene *sc, const struct bpfstash_entry *e, uint64_t secs)
{
	uint32_t i;

	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++)
		feed_mmap3(sc, e, i, secs);
}

static void feed_unload(struct scene *sc, const struct bpfstash_entry *e, uint64_t secs)
{
	uint8_t buf[32] = {};
	struct perf_event_header *h = (void *)buf;
	uint16_t u16 = PERF_BPF_EVENT_PROG_UNLOAD;
	uint32_t id = bpfstash_entry_meta(e)->prog_id;
	uint64_t t = t_base + secs * NS;

	h->type = PERF_RECORD_BPF_EVENT;
	h->size = 32;
	memcpy(buf + 8, &u16, 2);
	memcpy(buf + 12, &id, 4);
	memcpy(buf + 24, &t, 8);
	assert_int_equal(agent_feed(sc->a, h), 0);
}

static void feed_lost(struct scene *sc, uint64_t lost, uint64_t secs)
{
	uint8_t buf[32] = {};
	struct perf_event_header *h = (void *)buf;
	uint64_t t = t_base + secs * NS;

	h->type = PERF_RECORD_LOST;
	h->size = 32;
	memcpy(buf + 16, &lost, 8);
	memcpy(buf + 24, &t, 8);
	assert_int_equal(bpfstash_agent_feed(sc->a, h), 0);
}

/*
 * @addr at @secs must be in @e's function @func (NULL: nowhere), and its
 * line the same as the entry itself resolves.
 */
static void expect(struct scene *sc, uint64_t addr, uint64_t secs, const struct bpfstash_entry *e,
		   uint32_t func)
{
	struct bpfstash_location want, got;
	struct bpfstash_agent_sym sym;
	const struct bpfstash_entry *ge;
	int rc = bpfstash_agent_resolve(sc->a, addr, secs * NS, &sym);

	if (!e) {
		if (rc != -ENOENT)
			fail_msg("0x%llx at %llu s: %d (prog %u), expected nothing",
				 (unsigned long long)addr, (unsigned long long)secs, rc,
				 sym.prog ? sym.prog->id : 0);
		return;
	}
	if (rc)
		fail_msg("0x%llx at %llu s: %d, expected prog %u", (unsigned long long)addr,
			 (unsigned long long)secs, rc, bpfstash_entry_meta(e)->prog_id);
	assert_int_equal(sym.prog->id, bpfstash_entry_meta(e)->prog_id);
	assert_string_equal(sym.prog->hash, bpfstash_entry_name(e));
	assert_int_equal(sym.func->index, func);
	assert_int_equal(sym.func->addr + sym.offset, addr);
	assert_int_equal(sym.func->addr, bpfstash_entry_func(e, func)->addr);
	assert_string_equal(sym.func->name, bpfstash_entry_func_name(e, func));
	assert_int_equal(bpfstash_entry_resolve(e, addr, &want), 0);
	assert_int_equal(bpfstash_agent_resolve_line(sc->a, &sym, &ge, &got), 0);
	assert_string_equal(bpfstash_entry_name(ge), bpfstash_entry_name(e));
	assert_int_equal(got.func, want.func);
	assert_int_equal(got.has_line, want.has_line);
	assert_int_equal(got.line, want.line);
	assert_int_equal(got.col, want.col);
	assert_string_equal(got.file, want.file);
}

static void copy_all(struct scene *sc)
{
	fixture_copy(&sc->tiny, sc->dir);
	fixture_copy(&sc->large, sc->dir);
	fixture_copy(&sc->subprogs, sc->dir);
}

/* large 10..20 s, then tiny from 30 s at the same address. */
static void test_reuse(void **state)
{
	struct scene *sc = *state;
	uint64_t ls = bpfstash_entry_func(sc->el, sc->large_func)->addr;
	const struct bpfstash_func *tf = bpfstash_entry_func(sc->et, 0);
	struct bpfstash_agent_stats st;
	char want[64];

	copy_all(sc);	/* for the line lookups */
	feed_prog(sc, sc->el, 10);
	feed_unload(sc, sc->el, 20);
	feed_prog(sc, sc->et, 30);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	snprintf(want, sizeof(want), "L%u U%u L%u ", bpfstash_entry_meta(sc->el)->prog_id,
		 bpfstash_entry_meta(sc->el)->prog_id, bpfstash_entry_meta(sc->et)->prog_id);
	assert_string_equal(sc->log, want);

	expect(sc, sc->shared, 9, NULL, 0);		/* before any */
	expect(sc, sc->shared, 10, sc->el, sc->large_func);	/* load time included */
	expect(sc, sc->shared, 15, sc->el, sc->large_func);
	expect(sc, sc->shared, 19, sc->el, sc->large_func);
	expect(sc, sc->shared, 20, NULL, 0);		/* unload time excluded */
	expect(sc, sc->shared, 25, NULL, 0);		/* between */
	expect(sc, sc->shared, 30, sc->et, 0);
	expect(sc, sc->shared, 1000, sc->et, 0);
	expect(sc, sc->shared, 0, sc->et, 0);		/* now: the loaded one */
	/* Boundaries of tiny's function: first byte, last byte, one past. */
	expect(sc, tf->addr, 30, sc->et, 0);
	expect(sc, tf->addr + tf->len - 1, 30, sc->et, 0);
	if (tf->addr + tf->len < ls + bpfstash_entry_func(sc->el, sc->large_func)->len)
		expect(sc, tf->addr + tf->len, 30, NULL, 0);
	expect(sc, tf->addr + tf->len, 15, sc->el, sc->large_func);
	/* large's first byte is before tiny's: large only when it was there. */
	if (ls < tf->addr) {
		expect(sc, ls, 15, sc->el, sc->large_func);
		expect(sc, ls, 35, NULL, 0);
	}
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.programs, 2);
	assert_int_equal(st.ranges, bpfstash_entry_nr_funcs(sc->el) + 1);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.recoveries, 0);
}

/*
 * Two CPUs' rings give the unload before the load: the agent applies
 * them in time order, and every function of a program arrives in one load.
 */
static void test_time_order(void **state)
{
	struct scene *sc = *state;
	uint32_t id = bpfstash_entry_meta(sc->el)->prog_id;
	const struct bpfstash_agent_prog *p;
	struct bpfstash_agent_sym sym;
	char want[64];
	uint32_t i;

	feed_prog(sc, sc->et, 30);
	feed_unload(sc, sc->el, 20);
	for (i = bpfstash_entry_nr_funcs(sc->el); i-- > 0;)
		feed_mmap3(sc, sc->el, i, 10);
	assert_int_equal(bpfstash_agent_poll(sc->a, 0),
			 bpfstash_entry_nr_funcs(sc->el) + 2);
	snprintf(want, sizeof(want), "L%u U%u L%u ", id, id, bpfstash_entry_meta(sc->et)->prog_id);
	assert_string_equal(sc->log, want);
	assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, 15 * NS, &sym), 0);
	p = sym.prog;
	assert_int_equal(p->id, id);
	assert_int_equal(p->load_time, 10 * NS);
	assert_int_equal(p->unload_time, 20 * NS);
	assert_int_equal(p->nr_funcs, bpfstash_entry_nr_funcs(sc->el));
	for (i = 0; i < p->nr_funcs; i++)
		assert_int_equal(p->funcs[i].index, i);
	assert_memory_equal(p->tag, bpfstash_entry_meta(sc->el)->content.tag, BPFSTASH_TAG_SIZE);
	assert_string_equal(p->name, bpfstash_entry_meta(sc->el)->content.name);
	/* A record that comes twice (a resend, or recovered first) adds nothing. */
	feed_mmap3(sc, sc->et, 0, 30);
	assert_int_equal(bpfstash_agent_poll(sc->a, 0), 1);
	assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, 40 * NS, &sym), 0);
	assert_int_equal(sym.prog->nr_funcs, 1);
	assert_string_equal(sc->log, want);
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

/*
 * A program loaded on one CPU and unloaded on another: its two records
 * come from two rings, by the same poll or by two, in either order.  A
 * record is applied once it is older than the previous poll's start, so
 * the load is always applied first, and the unload is never unknown.
 * Times are the clock's, as the kernel's are.
 */
static void test_across_polls(void **state)
{
	struct scene *sc = *state;
	uint32_t id = bpfstash_entry_meta(sc->el)->prog_id;
	struct bpfstash_agent_stats st;
	struct bpfstash_agent_sym sym;
	/* Which poll (1 or 2) delivers the load and the unload. */
	static const int order[][2] = { { 1, 2 }, { 2, 1 }, { 1, 1 }, { 2, 2 } };
	char want[64];
	size_t k;

	snprintf(want, sizeof(want), "L%u U%u ", id, id);
	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		int poll;

		/*
		 * Both after the last poll began and in the past, as a record
		 * read from a ring is.
		 */
		uint64_t load = boottime_ns() + 1000, unload = load + 1000;

		while (boottime_ns() <= unload)
			;

		sc->log[0] = 0;
		for (poll = 1; poll <= 2; poll++) {
			t_base = load;
			if (order[k][0] == poll)
				feed_prog(sc, sc->el, 0);
			t_base = unload;
			if (order[k][1] == poll)
				feed_unload(sc, sc->el, 0);
			assert_true(bpfstash_agent_poll(sc->a, 0) >= 0);
			if (poll == 1)
				assert_string_equal(sc->log, "");	/* held back */
		}
		/* The second poll began after both records: a third applies them. */
		assert_true(bpfstash_agent_poll(sc->a, 0) >= 0);
		print_message("order %zu (load by poll %d, unload by poll %d): %s\n", k,
			      order[k][0], order[k][1], sc->log);
		assert_string_equal(sc->log, want);
		bpfstash_agent_get_stats(sc->a, &st);
		assert_int_equal(st.unknown_unloads, 0);
		assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, load + 500, &sym), 0);
		assert_int_equal(sym.prog->id, id);
		assert_int_equal(sym.prog->load_time, load);
		assert_int_equal(sym.prog->unload_time, unload);
	}
	/* A flush applies what is held back: the end of a session. */
	sc->log[0] = 0;
	t_base = boottime_ns() + 1000;
	while (boottime_ns() <= t_base + 1000)
		;
	t_base += 1000;
	feed_unload(sc, sc->el, 0);
	t_base -= 1000;
	feed_prog(sc, sc->el, 0);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	assert_string_equal(sc->log, "");
	assert_int_equal(bpfstash_agent_flush(sc->a), 0);
	snprintf(want, sizeof(want), "L%u U%u ", id, id);
	assert_string_equal(sc->log, want);
	/* A record timed far ahead of the clock is not held for ever. */
	sc->log[0] = 0;
	t_base = boottime_ns() + 3600 * NS;
	feed_prog(sc, sc->et, 0);
	assert_true(bpfstash_agent_poll(sc->a, 0) >= 0);
	snprintf(want, sizeof(want), "L%u ", bpfstash_entry_meta(sc->et)->prog_id);
	assert_string_equal(sc->log, want);
	t_base = 0;
}

/*
 * Records were lost (large's load and unload, tiny's load, subprogs'
 * unload): the agent reads the stash again and knows all of them.
 */
static void test_lost_recovers(void **state)
{
	struct scene *sc = *state;
	uint32_t sid = bpfstash_entry_meta(sc->es)->prog_id;
	struct bpfstash_agent_stats st;
	struct bpfstash_agent_sym sym;
	char want[128];

	copy_all(sc);
	fixture_set_times(sc->dir, sc->subprogs.hash, 5, 40);
	fixture_set_times(sc->dir, sc->large.hash, 10, 20);
	fixture_set_times(sc->dir, sc->tiny.hash, 30, 0);
	feed_prog(sc, sc->es, 5);
	feed_lost(sc, 7, 41);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	/* subprogs from its records; then the loss; large and tiny from the stash. */
	snprintf(want, sizeof(want), "L%u X7 ", sid);
	assert_memory_equal(sc->log, want, strlen(want));
	assert_non_null(strstr(sc->log, "R2/2 "));
	snprintf(want, sizeof(want), "U%ur ", sid);
	assert_non_null(strstr(sc->log, want));
	snprintf(want, sizeof(want), "L%u U%ur ", bpfstash_entry_meta(sc->el)->prog_id,
		 bpfstash_entry_meta(sc->el)->prog_id);
	assert_non_null(strstr(sc->log, want));
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.lost, 7);
	assert_int_equal(st.recoveries, 1);
	assert_int_equal(st.recovered_loads, 2);
	assert_int_equal(st.recovered_unloads, 2);
	assert_int_equal(st.programs, 3);
	expect(sc, sc->shared, 15, sc->el, sc->large_func);
	expect(sc, sc->shared, 25, NULL, 0);
	expect(sc, sc->shared, 35, sc->et, 0);
	expect(sc, bpfstash_entry_func(sc->es, 0)->addr, 39, sc->es, 0);
	expect(sc, bpfstash_entry_func(sc->es, 0)->addr, 40, NULL, 0);
	assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, 35 * NS, &sym), 0);
	assert_int_equal(sym.prog->source, BPFSTASH_AGENT_FROM_RECOVERY);
	/* The records of what was recovered may still come: nothing changes. */
	feed_prog(sc, sc->et, 30);
	assert_int_equal(bpfstash_agent_poll(sc->a, 0), 1);
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.programs, 3);
	assert_int_equal(st.recoveries, 1);
}

/* BPFSTASH_AGENT_SCAN: what the stash holds is indexed at open. */
static void test_scan(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .root = sc->dir,
					 .flags = BPFSTASH_AGENT_NO_RINGS | BPFSTASH_AGENT_SCAN };
	struct bpfstash_agent_stats st;
	struct bpfstash_agent *a;
	struct bpfstash_agent_sym sym;

	copy_all(sc);
	fixture_set_times(sc->dir, sc->large.hash, 10, 20);
	fixture_set_times(sc->dir, sc->tiny.hash, 30, 0);
	assert_int_equal(bpfstash_agent_open(&o, &a), 0);
	bpfstash_agent_get_stats(a, &st);
	assert_int_equal(st.programs, 3);
	assert_int_equal(bpfstash_agent_resolve(a, sc->shared, 15 * NS, &sym), 0);
	assert_string_equal(sym.prog->hash, sc->large.hash);
	assert_int_equal(sym.prog->source, BPFSTASH_AGENT_FROM_SCAN);
	/* Who loaded it, from the entry: bpftool, in the root cgroup. */
	assert_true(sym.prog->has_origin);
	assert_string_equal(sym.prog->loader_comm, "bpftool");
	assert_int_not_equal(sym.prog->loader_tgid, 0);
	assert_int_equal(sym.prog->loader_cgroup_id, 1);
	assert_int_equal(bpfstash_agent_resolve(a, sc->shared, 0, &sym), 0);
	assert_string_equal(sym.prog->hash, sc->tiny.hash);
	bpfstash_agent_close(a);
}

/*
 * BPFSTASH_AGENT_ORIGIN: the loader at the load; the link, made after the
 * load, at the unload (the kernel writes it into meta when the link is
 * made: here, between the two records).
 */
static void test_origin_link(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .root = sc->dir, .event_fn = on_event,
					 .ctx = sc,
					 .flags = BPFSTASH_AGENT_NO_RINGS | BPFSTASH_AGENT_ORIGIN };
	struct bpfstash_agent_sym sym;
	struct bpfstash_meta *m;
	char path[512];
	size_t size;

	copy_all(sc);
	bpfstash_agent_close(sc->a);
	assert_int_equal(bpfstash_agent_open(&o, &sc->a), 0);
	feed_prog(sc, sc->et, 10);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, 15 * NS, &sym), 0);
	assert_true(sym.prog->has_origin);
	assert_string_equal(sym.prog->loader_comm, "bpftool");
	assert_int_equal(sym.prog->link_type, 0);
	assert_string_equal(sym.prog->link_target, "");

	snprintf(path, sizeof(path), "%s/%s/meta", sc->dir, sc->tiny.hash);
	m = fixture_read_path(path, &size);
	assert_int_equal(size, sizeof(*m));
	m->link_type = BPF_LINK_TYPE_PERF_EVENT;
	m->link_id = 9;
	snprintf(m->link_target, sizeof(m->link_target), "kprobe:do_nanosleep");
	fixture_write_path(path, m, size);
	free(m);

	feed_unload(sc, sc->et, 20);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	assert_int_equal(bpfstash_agent_resolve(sc->a, sc->shared, 15 * NS, &sym), 0);
	assert_int_equal(sym.prog->unload_time, 20 * NS);
	assert_int_equal(sym.prog->link_type, BPF_LINK_TYPE_PERF_EVENT);
	assert_int_equal(sym.prog->link_id, 9);
	assert_string_equal(sym.prog->link_target, "kprobe:do_nanosleep");
}

/*
 * A record of an image (trampoline, dispatcher, struct_ops), which has no
 * program id: @flags as the kernel sets them, the hash if stashed.
 */
static void feed_image(struct scene *sc, uint64_t addr, uint32_t len, uint32_t flags,
		       const uint8_t *hash, const char *name, uint64_t secs)
{
	uint8_t buf[256] = {};
	uint16_t u16 = PERF_RECORD_KSYMBOL_TYPE_BPF;

	memcpy(buf + 8, &addr, 8);
	memcpy(buf + 16, &(uint64_t){ len }, 8);
	/* id 0 at buf + 24 */
	memcpy(buf + 28, &flags, 4);
	memcpy(buf + 32, &u16, 2);
	/* function 0 at buf + 34 */
	if (hash) {
		buf[36] = BPFSTASH_HASH_SIZE;
		memcpy(buf + 40, hash, BPFSTASH_HASH_SIZE);
	}
	feed_named(sc, buf, BPFSTASH_PERF_RECORD_MMAP3, 64, name, secs);
}

static void expect_image(struct scene *sc, uint64_t addr, uint64_t secs, const char *name)
{
	struct bpfstash_agent_sym sym;
	int rc = bpfstash_agent_resolve(sc->a, addr, secs * NS, &sym);

	if (rc)
		fail_msg("0x%llx at %llu s: %d, expected %s", (unsigned long long)addr,
			 (unsigned long long)secs, rc, name);
	assert_int_equal(sym.prog->id, 0);
	assert_string_equal(sym.func->name, name);
}

/*
 * Images all have program id 0: each is indexed on its own, whether the
 * stash took it or refused it, and a program's records are not taken for
 * an image's.  (Refused images used to be merged into the first one, and
 * their ranges dropped.)
 */
static void test_images(void **state)
{
	struct scene *sc = *state;
	const uint8_t h1[BPFSTASH_HASH_SIZE] = { 1 }, h2[BPFSTASH_HASH_SIZE] = { 2 };
	/* Past tiny's image, the only program fed. */
	uint64_t at = (bpfstash_entry_func(sc->et, 0)->addr & ~0xfffull) + 0x100000;
	struct bpfstash_agent_stats st;

	copy_all(sc);	/* for tiny's lines */
	feed_image(sc, at + 0x1000, 256, 2, NULL, "bpf_trampoline_1", 10);
	feed_image(sc, at + 0x2000, 256, 2, NULL, "bpf_trampoline_2", 11);
	feed_image(sc, at + 0x3000, 128, 1, h1, "bpf_trampoline_3", 12);
	feed_image(sc, at + 0x4000, 128, 1, h2, "bpf_dispatcher_xdp", 13);
	feed_image(sc, at + 0x5000, 64, 2, NULL, "bpf_trampoline_5", 14);
	feed_prog(sc, sc->et, 15);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	expect_image(sc, at + 0x1000, 20, "bpf_trampoline_1");
	expect_image(sc, at + 0x10ff, 20, "bpf_trampoline_1");
	expect_image(sc, at + 0x2010, 20, "bpf_trampoline_2");
	expect_image(sc, at + 0x3000, 20, "bpf_trampoline_3");
	expect_image(sc, at + 0x4070, 20, "bpf_dispatcher_xdp");
	expect_image(sc, at + 0x5000, 20, "bpf_trampoline_5");
	expect(sc, at + 0x5040, 20, NULL, 0);	/* one past the last image */
	expect(sc, bpfstash_entry_func(sc->et, 0)->addr, 20, sc->et, 0);
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.programs, 6);
	assert_int_equal(st.ranges, 6);
}

/* PERF_RECORD_KSYMBOL for [@addr, @addr + @len) named @name, at @secs. */
static void feed_ksymbol(struct scene *sc, uint64_t addr, uint32_t len, uint16_t type,
			 uint16_t flags, const char *name, uint64_t secs)
{
	uint8_t buf[256] = {};

	memcpy(buf + 8, &addr, 8);
	memcpy(buf + 16, &len, 4);
	memcpy(buf + 20, &type, 2);
	memcpy(buf + 22, &flags, 2);
	feed_named(sc, buf, PERF_RECORD_KSYMBOL, 24, name, secs);
}

/*
 * An image has no program id and no PERF_RECORD_BPF_EVENT: its unload is
 * the KSYMBOL unregister of its start and name, stashed or refused.  It
 * resolves until then and not after, and the same image made again at
 * the same address (same hash: the kernel reuses the entry) is a new one.
 * The agent used to learn neither: the first image stayed loaded for
 * ever, and the second was merged into it.  Registers, other names, other
 * starts, other kinds of symbol and programs' unregisters change nothing.
 */
static void test_image_unload(void **state)
{
	struct scene *sc = *state;
	const uint8_t h1[BPFSTASH_HASH_SIZE] = { 1 };
	const uint16_t bpf = PERF_RECORD_KSYMBOL_TYPE_BPF, unreg = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	const struct bpfstash_func *tf = bpfstash_entry_func(sc->et, 0);
	uint64_t at = (tf->addr & ~0xfffull) + 0x100000;
	struct bpfstash_agent_stats st;
	char want[64];

	copy_all(sc);	/* for tiny's lines */
	feed_image(sc, at, 128, 1, h1, "bpf_trampoline_7", 10);		/* stashed */
	feed_image(sc, at + 0x1000, 64, 2, NULL, "bpf_trampoline_8", 10);	/* refused */
	feed_prog(sc, sc->et, 10);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	expect_image(sc, at, 10, "bpf_trampoline_7");	/* indexed: merged */
	/* Unloaded in the batch that loads it: still among the new ranges. */
	feed_image(sc, at + 0x2000, 64, 2, NULL, "bpf_trampoline_9", 11);
	feed_ksymbol(sc, at + 0x2000, 4096, bpf, unreg, "bpf_trampoline_9", 14);
	feed_ksymbol(sc, at, 4096, bpf, 0, "bpf_trampoline_7", 11);		/* a register */
	feed_ksymbol(sc, at, 4096, bpf, unreg, "bpf_trampoline_6", 12);	/* another name */
	feed_ksymbol(sc, at + 64, 4096, bpf, unreg, "bpf_trampoline_7", 12);	/* not its start */
	feed_ksymbol(sc, at, 4096, PERF_RECORD_KSYMBOL_TYPE_OOL, unreg, "bpf_trampoline_7", 12);
	feed_ksymbol(sc, tf->addr, tf->len, bpf, unreg, "bpf_prog_x", 13);	/* a program's */
	feed_ksymbol(sc, at, 4096, bpf, unreg, "bpf_trampoline_7", 20);
	feed_ksymbol(sc, at + 0x1000, 4096, bpf, unreg, "bpf_trampoline_8", 21);
	feed_image(sc, at, 128, 1, h1, "bpf_trampoline_7", 30);		/* made again */
	/* The first's unregister was lost: the second one goes. */
	feed_image(sc, at + 0x3000, 64, 2, NULL, "bpf_trampoline_5", 40);
	feed_image(sc, at + 0x3000, 64, 2, NULL, "bpf_trampoline_5", 45);
	feed_ksymbol(sc, at + 0x3000, 4096, bpf, unreg, "bpf_trampoline_5", 50);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	/* A load is announced at its unload, or after its batch. */
	snprintf(want, sizeof(want), "L0 L0 L%u L0 U0 U0 U0 L0 U0 L0 L0 ",
		 bpfstash_entry_meta(sc->et)->prog_id);
	assert_string_equal(sc->log, want);

	expect_image(sc, at, 19, "bpf_trampoline_7");
	expect_image(sc, at + 0x103f, 20, "bpf_trampoline_8");
	expect(sc, at, 20, NULL, 0);			/* unload time excluded */
	expect(sc, at + 0x1000, 25, NULL, 0);
	expect(sc, at + 0x1000, 0, NULL, 0);		/* now: gone */
	expect_image(sc, at + 127, 30, "bpf_trampoline_7");
	expect_image(sc, at, 0, "bpf_trampoline_7");	/* now: the second */
	expect_image(sc, at + 0x2000, 13, "bpf_trampoline_9");
	expect(sc, at + 0x2000, 14, NULL, 0);
	expect_image(sc, at + 0x3000, 47, "bpf_trampoline_5");
	expect(sc, at + 0x3000, 50, NULL, 0);
	expect(sc, at + 0x3000, 0, NULL, 0);
	expect(sc, tf->addr, 15, sc->et, 0);		/* the program stays */
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.programs, 7);
	assert_int_equal(st.ranges, 7);
}

/* Records too short to parse are counted, never read past their end. */
/*
 * bpfstash_agent_attr() sets perf_event_attr::mmap3 where the kernel's
 * bit-field has it: the last bit of the flags word, whichever end of the
 * u64 that is in this ABI, and no other bit of the word than it sets by
 * name (sample_id_all, bpf_event, watermark, use_clockid).
 */
static void test_attr(void **state)
{
	struct perf_event_attr attr, want;
	union {
		uint64_t word;
		struct {
			uint64_t named : 63, last : 1;
		} bits;
	} flags, top = { .bits.last = 1 };

	bpfstash_agent_attr(&attr);
	memset(&want, 0, sizeof(want));
	want.sample_id_all = 1;
	want.bpf_event = 1;
	want.watermark = 1;
	want.use_clockid = 1;
	memcpy(&flags.word, (uint8_t *)&attr + offsetof(struct perf_event_attr, read_format) + 8, 8);
	memcpy(&top.bits, (uint8_t *)&want + offsetof(struct perf_event_attr, read_format) + 8, 8);
	top.bits.last = 1;
	assert_true(flags.bits.last);
	assert_int_equal(flags.word, top.word);
	assert_int_equal(attr.size, sizeof(attr));
	assert_int_equal(attr.sample_type, PERF_SAMPLE_TIME);
	/*
	 * Into a caller's struct of its own size: older headers' (96 bytes,
	 * PERF_ATTR_SIZE_VER3) get the same bytes as far as they go, and
	 * nothing written past them; a later header's larger struct gets
	 * zeros beyond what the library knows.
	 */
	{
		uint8_t buf[sizeof(attr) + 64];
		size_t sizes[] = { 96, sizeof(attr), sizeof(attr) + 32 }, i, j;

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i] < sizeof(attr) ? sizes[i] : sizeof(attr);

			memset(buf, 0xaa, sizeof(buf));
			assert_int_equal(bpfstash_agent_attr_sized((void *)buf, sizes[i]), 0);
			assert_int_equal(((struct perf_event_attr *)buf)->size, sizes[i]);
			assert_memory_equal(buf + 8, (uint8_t *)&attr + 8, n - 8);
			for (j = n; j < sizes[i]; j++)
				assert_int_equal(buf[j], 0);
			for (j = sizes[i]; j < sizeof(buf); j++)
				assert_int_equal(buf[j], 0xaa);
		}
		memset(buf, 0xaa, sizeof(buf));
		assert_int_equal(bpfstash_agent_attr_sized((void *)buf, 95), -EINVAL);
		assert_int_equal(buf[0], 0xaa);
	}
}

/*
 * A week of churn: a program loaded and unloaded every 0.6 s for 7 days,
 * a million programs, through the default forget window (600 s).  What
 * the agent tracks stays near the window's worth (1 000 programs), never
 * growing with the week; a lookup in the window finds its program, one
 * older than the window finds nothing.
 */
static void test_week_of_churn(void **state)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_NO_RINGS };
	const uint64_t step = NS * 6 / 10, n = 7 * 86400 * NS / step;
	struct bpfstash_agent_stats st;
	struct bpfstash_agent_hit hit;
	struct bpfstash_agent *a;
	char dir[] = "/tmp/bpfstash-week-XXXXXX";
	uint64_t i, most = 0, t = 0;
	uint8_t buf[128];
	struct perf_event_header *h = (void *)buf;

	assert_non_null(mkdtemp(dir));
	o.root = dir;
	assert_int_equal(bpfstash_agent_open(&o, &a), 0);
	for (i = 0; i < n; i++) {
		uint64_t addr = 0xffffffffc0000000ull + (i % 4096) * 64, len = 64;
		uint32_t id = i + 1, zero = 0;
		uint16_t u16;

		t += step;
		memset(buf, 0, sizeof(buf));
		h->type = BPFSTASH_PERF_RECORD_MMAP3;
		h->size = 64 + 16 + 8;
		memcpy(buf + 8, &addr, 8);
		memcpy(buf + 16, &len, 8);
		memcpy(buf + 24, &id, 4);
		memcpy(buf + 28, &zero, 4);
		u16 = PERF_RECORD_KSYMBOL_TYPE_BPF;
		memcpy(buf + 32, &u16, 2);
		memcpy(buf + 64, "bpf_prog_churn", 14);
		memcpy(buf + 80, &t, 8);
		assert_int_equal(bpfstash_agent_feed(a, h), 0);
		memset(buf, 0, sizeof(buf));
		h->type = PERF_RECORD_BPF_EVENT;
		h->size = 32;
		u16 = PERF_BPF_EVENT_PROG_UNLOAD;
		memcpy(buf + 8, &u16, 2);
		memcpy(buf + 12, &id, 4);
		t += 1000;
		memcpy(buf + 24, &t, 8);
		t -= 1000;
		assert_int_equal(bpfstash_agent_feed(a, h), 0);
		if (i % 1000 == 999) {
			assert_true(bpfstash_agent_poll(a, 0) >= 0);
			assert_int_equal(bpfstash_agent_get_stats_sized(a, &st, sizeof(st)), 0);
			if (st.programs > most)
				most = st.programs;
		}
	}
	assert_true(bpfstash_agent_flush(a) >= 0);
	assert_int_equal(bpfstash_agent_get_stats_sized(a, &st, sizeof(st)), 0);
	print_message("%llu programs over 7 days: at most %llu tracked, %llu forgotten, "
		      "%llu records\n", (unsigned long long)n, (unsigned long long)most,
		      (unsigned long long)st.forgotten, (unsigned long long)st.records);
	assert_int_equal(st.records, 2 * n);
	assert_true(most <= 600 * NS / step + 1000);	/* the window, and a poll's */
	assert_true(st.forgotten >= n - most);
	/* In the window: found; before it: forgotten. */
	hit.sz = sizeof(hit);
	/* Program i: id i + 1, loaded at (i + 1) * step for 1 us. */
	assert_int_equal(bpfstash_agent_lookup(a, 0xffffffffc0000000ull + ((n - 10) % 4096) * 64,
					       (n - 9) * step + 500, 0, &hit), 0);
	assert_int_equal(hit.prog_id, n - 9);
	assert_int_equal(bpfstash_agent_lookup(a, 0xffffffffc0000000ull + ((n / 2) % 4096) * 64,
					       (n / 2 + 1) * step + 500, 0, &hit), -ENOENT);
	bpfstash_agent_close(a);
	rmdir(dir);
}

/*
 * bpfstash_agent_lookup() copies into the caller's struct, as much as it
 * holds: a caller of an older, smaller struct gets its part and nothing
 * past it; the line's fields need the whole struct.
 */
static void test_lookup_sized(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_agent_hit hit = { .sz = sizeof(hit) };
	uint8_t small[sizeof(hit) + 16];
	size_t part = offsetof(struct bpfstash_agent_hit, line);
	struct bpfstash_agent_stats st;

	feed_prog(sc, sc->et, 10);
	assert_true(bpfstash_agent_poll(sc->a, 0) > 0);
	/* Found; its entry is not in the scene's stash: no line, and why. */
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, BPFSTASH_AGENT_LOOKUP_LINE,
					       &hit), 0);
	assert_false(hit.has_line);
	assert_int_equal(hit.line_err, -ENOENT);
	hit.sz = sizeof(hit);
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, 0, &hit), 0);
	assert_int_equal(hit.prog_id, bpfstash_entry_meta(sc->et)->prog_id);
	assert_string_equal(hit.func_name, bpfstash_entry_func_name(sc->et, 0));
	assert_int_equal(hit.offset, 8);
	memset(small, 0xaa, sizeof(small));
	((struct bpfstash_agent_hit *)small)->sz = part;
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, 0, (void *)small), 0);
	assert_memory_equal(small + sizeof(size_t), (uint8_t *)&hit + sizeof(size_t),
			    part - sizeof(size_t));
	assert_int_equal(small[part], 0xaa);
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, BPFSTASH_AGENT_LOOKUP_LINE,
					       (void *)small), -EINVAL);
	((struct bpfstash_agent_hit *)small)->sz = part - 1;
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, 0, (void *)small), -EINVAL);
	assert_int_equal(bpfstash_agent_lookup(sc->a, sc->shared, 0, 1u << 9, &hit), -EINVAL);
	assert_int_equal(bpfstash_agent_get_stats_sized(sc->a, &st, 8), -EINVAL);
}

/* The library running says its version, which the headers' macros give. */
static void test_versions(void **state)
{
	char want[32];

	snprintf(want, sizeof(want), "v%d.%d", LIBBPFSTASH_MAJOR_VERSION,
		 LIBBPFSTASH_MINOR_VERSION);
	assert_int_equal(libbpfstash_major_version(), LIBBPFSTASH_MAJOR_VERSION);
	assert_int_equal(libbpfstash_minor_version(), LIBBPFSTASH_MINOR_VERSION);
	assert_string_equal(libbpfstash_version_string(), want);
}

/*
 * Options as libbpf takes them: a larger struct (a later header's) with
 * its unknown fields zero is taken, with one set it is refused, and so is
 * an unknown flag.
 */
static void test_opts_grow(void **state)
{
	struct {
		struct bpfstash_agent_opts o;
		uint64_t later;
	} big = { .o = { .sz = sizeof(big), .flags = BPFSTASH_AGENT_NO_RINGS } };
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_NO_RINGS };
	struct bpfstash_agent *a = NULL;
	char dir[] = "/tmp/bpfstash-opts-XXXXXX";

	assert_non_null(mkdtemp(dir));
	big.o.root = dir;
	o.root = dir;
	assert_int_equal(bpfstash_agent_open(&big.o, &a), 0);
	bpfstash_agent_close(a);
	big.later = 1;
	assert_int_equal(bpfstash_agent_open(&big.o, &a), -EINVAL);
	assert_null(a);
	o.flags |= 1u << 20;
	assert_int_equal(bpfstash_agent_open(&o, &a), -EINVAL);
	assert_null(a);
	rmdir(dir);
}

/*
 * On a kernel without PERF_RECORD_MMAP3 (the host's, normally), opening
 * the rings fails with -EOPNOTSUPP, told apart from other errors by
 * opening the same events without the bit.
 */
static void test_no_mmap3(void **state)
{
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .root = FIXTURES "/stash" };
	struct perf_event_attr attr;
	struct bpfstash_agent *a;
	int fd, err;

	if (bpfstash_kernel_supported() > 0)
		skip();
	bpfstash_agent_attr(&attr);
	memcpy((uint8_t *)&attr + offsetof(struct perf_event_attr, read_format) + 8,
	       &(uint64_t){ 0 }, 8);
	attr.sample_id_all = 1;
	attr.bpf_event = 1;
	attr.use_clockid = 1;
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		print_message("SKIP: perf_event_open() without mmap3: %s\n", strerror(errno));
		skip();
	}
	close(fd);
	err = bpfstash_agent_open(&o, &a);
	if (!err)
		bpfstash_agent_close(a);
	assert_int_equal(err, -EOPNOTSUPP);
}

/*
 * Records whose events asked for more than the time (pid and tid, id,
 * cpu, identifier, as perf record's side-band events do): the agent takes
 * the time where opts.feed_sample_type puts it.  Taken from the last 8
 * bytes, as before, the identifier would be every record's time.  Without
 * PERF_SAMPLE_TIME the records cannot be ordered: refused at open.
 */
static void test_feed_sample_type(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_NO_RINGS,
					 .event_fn = on_event, .root = sc->dir, .ctx = sc };
	struct bpfstash_agent_stats st;
	struct bpfstash_agent *a;
	uint8_t buf[64] = {};

	o.feed_sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CPU;
	assert_int_equal(bpfstash_agent_open(&o, &a), -EINVAL);
	o.feed_sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	bpfstash_agent_close(sc->a);
	assert_int_equal(bpfstash_agent_open(&o, &sc->a), 0);
	t_feed_type = o.feed_sample_type;
	copy_all(sc);

	feed_prog(sc, sc->el, 10);
	feed_unload(sc, sc->el, 20);
	feed_prog(sc, sc->et, 30);
	/* A sample has no sample_id: not queued. */
	((struct perf_event_header *)buf)->type = PERF_RECORD_SAMPLE;
	((struct perf_event_header *)buf)->size = sizeof(buf);
	assert_int_equal(bpfstash_agent_feed(sc->a, (void *)buf), 0);
	/* Too short for its sample_id. */
	((struct perf_event_header *)buf)->type = PERF_RECORD_BPF_EVENT;
	((struct perf_event_header *)buf)->size = 40;
	assert_int_equal(bpfstash_agent_feed(sc->a, (void *)buf), -EINVAL);
	t_feed_type = 0;
	assert_true(bpfstash_agent_flush(sc->a) > 0);

	expect(sc, sc->shared, 15, sc->el, sc->large_func);
	expect(sc, sc->shared, 25, NULL, 0);
	expect(sc, sc->shared, 35, sc->et, 0);
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.unknown_unloads, 0);
	assert_int_equal(st.bad_records, 0);
}

static void test_bad_records(void **state)
{
	struct scene *sc = *state;
	uint8_t buf[64] = {};
	struct perf_event_header *h = (void *)buf;
	struct bpfstash_agent_stats st;
	struct bpfstash_agent_opts o = { .sz = 4, .flags = BPFSTASH_AGENT_NO_RINGS };
	struct bpfstash_agent *a;

	h->type = BPFSTASH_PERF_RECORD_MMAP3;
	h->size = 40;
	assert_int_equal(bpfstash_agent_feed(sc->a, h), 0);
	h->type = PERF_RECORD_BPF_EVENT;
	h->size = 16;
	assert_int_equal(bpfstash_agent_feed(sc->a, h), 0);
	h->size = 12;
	assert_int_equal(bpfstash_agent_feed(sc->a, h), -EINVAL);
	h->size = 4;
	assert_int_equal(bpfstash_agent_feed(sc->a, h), -EINVAL);
	h->type = PERF_RECORD_KSYMBOL;
	h->size = 24;
	assert_int_equal(bpfstash_agent_feed(sc->a, h), 0);
	assert_int_equal(bpfstash_agent_poll(sc->a, 0), 3);
	bpfstash_agent_get_stats(sc->a, &st);
	assert_int_equal(st.bad_records, 3);
	assert_int_equal(st.programs, 0);
	assert_int_equal(bpfstash_agent_open(&o, &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed_sample_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_across_polls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_recovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_origin_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_images, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_unload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test(test_attr),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_week_of_churn),
		cmocka_unit_test_setup_teardown(test_lookup_sized, setup, teardown),
		cmocka_unit_test(test_opts_grow),
		cmocka_unit_test(test_no_mmap3),
	};

	return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
