// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's thread rule under ThreadSanitizer (built with the library's
 * own sources and -fsanitize=thread, see Makefile): one thread feeds a
 * storm of programs loaded and unloaded and polls, with a forget window
 * and an entry cache small enough that programs are forgotten and entries
 * evicted all along, while three threads look up addresses of the storm
 * and, with their lines, of the three fixture programs, and read the
 * stats.  Any report of ThreadSanitizer fails the test, through its
 * report hook.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "libbpfstash.h"
#include "fixtures.h"

#define STORM		100000
#define BASE		0xffffffffc0000000ull
#define SLOTS		4096
#define NS		1000000000ull

static atomic_int tsan_reports;

/* ThreadSanitizer calls this for each report it prints. */
void __sanitizer_report_error_summary(const char *summary);
void __sanitizer_report_error_summary(const char *summary)
{
	atomic_fetch_add(&tsan_reports, 1);
	fprintf(stderr, "%s\n", summary);
}

struct storm {
	struct bpfstash_agent *a;
	struct bpfstash_entry *fx[3];
	uint64_t t0;
	atomic_bool done;
	atomic_long lookups, found, lines;
};

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static void feed(struct bpfstash_agent *a, void *rec)
{
	assert_int_equal(bpfstash_agent_feed(a, rec), 0);
}

/* MMAP3 of function @func of a program, @hash NULL: refused by the stash. */
static void feed_load(struct bpfstash_agent *a, uint32_t id, uint16_t func, uint64_t addr,
		      uint64_t len, const uint8_t *hash, const char *name, uint64_t t)
{
	uint8_t buf[256] = {};
	struct perf_event_header *h = (void *)buf;
	size_t name_len = (strlen(name) + 1 + 7) / 8 * 8;
	uint32_t flags = hash ? 1 : 0;
	uint16_t type = PERF_RECORD_KSYMBOL_TYPE_BPF;

	h->type = BPFSTASH_PERF_RECORD_MMAP3;
	h->size = 64 + name_len + 8;
	memcpy(buf + 8, &addr, 8);
	memcpy(buf + 16, &len, 8);
	memcpy(buf + 24, &id, 4);
	memcpy(buf + 28, &flags, 4);
	memcpy(buf + 32, &type, 2);
	memcpy(buf + 34, &func, 2);
	if (hash) {
		buf[36] = BPFSTASH_HASH_SIZE;
		memcpy(buf + 40, hash, BPFSTASH_HASH_SIZE);
	}
	memcpy(buf + 64, name, strlen(name));
	memcpy(buf + 64 + name_len, &t, 8);
	feed(a, buf);
}

static void feed_unload(struct bpfstash_agent *a, uint32_t id, uint64_t t)
{
	uint8_t buf[32] = {};
	struct perf_event_header *h = (void *)buf;
	uint16_t type = PERF_BPF_EVENT_PROG_UNLOAD;

	h->type = PERF_RECORD_BPF_EVENT;
	h->size = 32;
	memcpy(buf + 8, &type, 2);
	memcpy(buf + 12, &id, 4);
	memcpy(buf + 24, &t, 8);
	feed(a, buf);
}

static void *lookup_thread(void *arg)
{
	struct storm *s = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;

	while (!atomic_load(&s->done)) {
		struct bpfstash_agent_hit hit = { .sz = sizeof(hit) };
		struct bpfstash_agent_stats st;
		int r = rand_r(&seed), k = r % 4;

		if (k < 3) {
			const struct bpfstash_func *f = bpfstash_entry_func(s->fx[k], 0);

			if (!bpfstash_agent_lookup(s->a, f->addr + 4, 0, BPFSTASH_AGENT_LOOKUP_LINE,
						   &hit)) {
				atomic_fetch_add(&s->found, 1);
				if (hit.has_line)
					atomic_fetch_add(&s->lines, 1);
			}
		} else {
			uint64_t addr = BASE + (uint64_t)(r % SLOTS) * 64 + 8;

			if (!bpfstash_agent_lookup(s->a, addr, boottime_ns(), 0, &hit))
				atomic_fetch_add(&s->found, 1);
		}
		atomic_fetch_add(&s->lookups, 1);
		assert_int_equal(bpfstash_agent_get_stats_sized(s->a, &st, sizeof(st)), 0);
	}
	return NULL;
}

static void test_threads(void **state)
{
	static const char *const names[] = { "tiny", "large", "subprogs" };
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_NO_RINGS,
					 .root = FIXTURES "/stash",
					 .forget_ns = NS / 20,	/* 50 ms */
					 .max_entries = 1 };
	struct bpfstash_agent_stats st;
	struct storm s = {};
	pthread_t th[3];
	uint64_t t;
	int i, k;

	assert_int_equal(bpfstash_agent_open(&o, &s.a), 0);
	for (k = 0; k < 3; k++) {
		struct fixture f;

		fixture_get(names[k], &f);
		s.fx[k] = fixture_load(&f);
	}
	/* The fixtures, loaded at the start and never unloaded. */
	t = boottime_ns() - 60 * NS;
	s.t0 = t;
	for (k = 0; k < 3; k++) {
		const struct bpfstash_meta *m = bpfstash_entry_meta(s.fx[k]);
		uint32_t f;

		for (f = 0; f < bpfstash_entry_nr_funcs(s.fx[k]); f++) {
			const struct bpfstash_func *fn = bpfstash_entry_func(s.fx[k], f);

			feed_load(s.a, m->prog_id, f, fn->addr, fn->len, m->hash,
				  bpfstash_entry_func_name(s.fx[k], f), t);
		}
	}
	assert_true(bpfstash_agent_poll(s.a, 0) >= 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, lookup_thread, &s), 0);
	/* Programs of 1 us, one every 2 us, in the past of the clock. */
	for (i = 0; i < STORM; i++) {
		uint32_t id = 1000 + i;
		uint64_t at = BASE + (uint64_t)(i % SLOTS) * 64;

		t += 2000;
		feed_load(s.a, id, 0, at, 64, NULL, "bpf_prog_storm", t);
		feed_unload(s.a, id, t + 1000);
		if (i % 500 == 499)
			assert_true(bpfstash_agent_poll(s.a, 0) >= 0);
	}
	assert_true(bpfstash_agent_flush(s.a) >= 0);
	atomic_store(&s.done, true);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(bpfstash_agent_get_stats_sized(s.a, &st, sizeof(st)), 0);
	print_message("%d programs in %.3f s of records: %llu forgotten, %llu kept, "
		      "%llu entries cached, %llu evicted; %ld lookups, %ld found, %ld with lines; "
		      "%d ThreadSanitizer reports\n", STORM, (t - s.t0) / 1e9,
		      (unsigned long long)st.forgotten, (unsigned long long)st.programs,
		      (unsigned long long)st.entries_cached, (unsigned long long)st.entries_evicted,
		      atomic_load(&s.lookups), atomic_load(&s.found), atomic_load(&s.lines),
		      atomic_load(&tsan_reports));
	assert_true(st.forgotten > 0);
	assert_true(st.entries_evicted > 0);
	assert_true(st.entries_cached <= 1);
	assert_true(atomic_load(&s.lines) > 0);
	assert_int_equal(atomic_load(&tsan_reports), 0);
	bpfstash_agent_close(s.a);
	for (k = 0; k < 3; k++)
		bpfstash_entry_free(s.fx[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests_name("agent_tsan", tests, NULL, NULL);
}
