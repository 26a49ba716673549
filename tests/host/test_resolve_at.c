// SPDX-License-Identifier: GPL-2.0-only
/*
 * Time-aware resolution on entries captured from the kernel: tiny's image
 * lies inside large's (the kernel reused the address).  Copies of the two,
 * with the load and unload times in their meta set to known windows (meta's
 * state is not content: they still verify), give every case: a time in
 * either window, between them, in both (overlapping windows), none.
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

#include "libbpfstash.h"
#include "fixtures.h"

#define NS FIXTURE_NS
#define EPOCH FIXTURE_EPOCH	/* the boot, in the real-time clock */

struct scene {
	char dir[64];
	struct fixture tiny, large;
	struct bpfstash_entry *et, *el;
	uint64_t shared;	/* an address in both */
	struct bpfstash *s;
};

static int setup(void **state)
{
	struct scene *sc = calloc(1, sizeof(*sc));
	const struct bpfstash_func *f;
	uint32_t i;

	assert_non_null(sc);
	fixture_get("tiny", &sc->tiny);
	fixture_get("large", &sc->large);
	sc->et = fixture_load(&sc->tiny);
	sc->el = fixture_load(&sc->large);
	strcpy(sc->dir, "/tmp/bpfstash-at-XXXXXX");
	assert_non_null(mkdtemp(sc->dir));
	fixture_copy(&sc->tiny, sc->dir);
	fixture_copy(&sc->large, sc->dir);
	/* tiny 100..200 s, large 300 s.. (still loaded) */
	fixture_set_times(sc->dir, sc->tiny.hash, 100, 200);
	fixture_set_times(sc->dir, sc->large.hash, 300, 0);
	f = bpfstash_entry_func(sc->et, 0);
	sc->shared = f->addr + 8;
	for (i = 0; i < bpfstash_entry_nr_funcs(sc->el); i++) {
		const struct bpfstash_func *g = bpfstash_entry_func(sc->el, i);

		if (sc->shared >= g->addr && sc->shared - g->addr < g->len)
			break;
	}
	assert_true(i < bpfstash_entry_nr_funcs(sc->el));	/* the address is reused */
	assert_int_equal(bpfstash_open(sc->dir, &sc->s), 0);
	*state = sc;
	return 0;
}

static int teardown(void **state)
{
	struct scene *sc = *state;

	bpfstash_close(sc->s);
	fixture_rmtree(sc->dir);
	bpfstash_entry_free(sc->et);
	bpfstash_entry_free(sc->el);
	free(sc);
	return 0;
}

static struct bpfstash_resolve_opts at(enum bpfstash_clock clock, uint64_t ns)
{
	struct bpfstash_resolve_opts o = { .sz = sizeof(o), .clock = clock, .time_ns = ns };

	return o;
}

/* Resolve @addr at @o: @want (NULL: expect @err) and the same location as its entry gives. */
static void expect(struct scene *sc, uint64_t addr, const struct bpfstash_resolve_opts *o,
		   const struct bpfstash_entry *want, int err, size_t ncands)
{
	struct bpfstash_candidates *cands = (void *)1;
	struct bpfstash_location loc, wl;
	struct bpfstash_entry *got = (void *)1;
	int rc = bpfstash_resolve_at(sc->s, addr, o, &got, &loc, &cands);

	if (rc != (want ? 0 : err))
		fail_msg("0x%llx at %llu ns (clock %d): %d, expected %d", (unsigned long long)addr,
			 o ? (unsigned long long)o->time_ns : 0ull, o ? (int)o->clock : 0, rc,
			 want ? 0 : err);
	assert_int_equal(bpfstash_candidates_count(cands), ncands);
	if (want) {
		assert_non_null(got);
		assert_string_equal(bpfstash_entry_name(got), bpfstash_entry_name(want));
		assert_int_equal(bpfstash_entry_resolve(want, addr, &wl), 0);
		assert_int_equal(loc.func, wl.func);
		assert_int_equal(loc.func_off, wl.func_off);
		assert_int_equal(loc.line, wl.line);
		assert_int_equal(loc.col, wl.col);
		assert_string_equal(loc.file, wl.file);
		bpfstash_entry_free(got);
	} else {
		assert_null(got);
	}
	bpfstash_candidates_free(cands);
}

static void test_windows(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_resolve_opts o;

	/* each window, at its edges and inside, in both clocks */
	o = at(BPFSTASH_CLOCK_BOOTTIME, 100 * NS);
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 150 * NS);
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 200 * NS);
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 300 * NS);
	expect(sc, sc->shared, &o, sc->el, 0, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 100000 * NS);	/* loaded: open-ended */
	expect(sc, sc->shared, &o, sc->el, 0, 2);
	o = at(BPFSTASH_CLOCK_REALTIME, EPOCH + 150 * NS);
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o = at(BPFSTASH_CLOCK_REALTIME, EPOCH + 350 * NS);
	expect(sc, sc->shared, &o, sc->el, 0, 2);
	/* the boot clock's value read as real time is before both */
	o = at(BPFSTASH_CLOCK_REALTIME, 150 * NS);
	expect(sc, sc->shared, &o, NULL, -ENOENT, 2);
	/* between the windows and before both: none, but the candidates are told */
	o = at(BPFSTASH_CLOCK_BOOTTIME, 250 * NS);
	expect(sc, sc->shared, &o, NULL, -ENOENT, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 99 * NS);
	expect(sc, sc->shared, &o, NULL, -ENOENT, 2);
	/* the precision of a printed time: 99.9999995 s printed to the us */
	o = at(BPFSTASH_CLOCK_BOOTTIME, 100 * NS - 500);
	expect(sc, sc->shared, &o, NULL, -ENOENT, 2);
	o.span_ns = 999;
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	/* an address only large holds: large at any time it was loaded */
	o = at(BPFSTASH_CLOCK_BOOTTIME, 400 * NS);
	expect(sc, bpfstash_entry_func(sc->el, 1)->addr, &o, sc->el, 0, 1);
	expect(sc, bpfstash_entry_func(sc->el, 1)->addr, NULL, sc->el, 0, 1);
	expect(sc, 0x1000, NULL, NULL, -ENOENT, 0);
}

/* Without a time, or with one in two windows: ambiguous, never a guess. */
static void test_ambiguous(void **state)
{
	struct scene *sc = *state;
	struct bpfstash_candidates *cands;
	struct bpfstash_resolve_opts o = { .sz = sizeof(o) };
	const struct bpfstash_candidate *c0, *c1;
	struct bpfstash_location loc;
	struct bpfstash_entry *got;

	expect(sc, sc->shared, NULL, NULL, -EADDRNOTAVAIL, 2);
	expect(sc, sc->shared, &o, NULL, -EADDRNOTAVAIL, 2);
	assert_int_equal(bpfstash_resolve_at(sc->s, sc->shared, NULL, &got, &loc, &cands),
			 -EADDRNOTAVAIL);
	c0 = bpfstash_candidates_get(cands, 0);
	c1 = bpfstash_candidates_get(cands, 1);
	assert_null(bpfstash_candidates_get(cands, 2));
	/* by load time, with their windows */
	assert_string_equal(c0->hash, sc->tiny.hash);
	assert_string_equal(c1->hash, sc->large.hash);
	assert_true(c0->at_time && c1->at_time);
	assert_true(c0->load_time == 100 * NS && c0->unload_time == 200 * NS);
	assert_true(c1->load_time == 300 * NS && c1->unload_time == 0 && c1->loaded);
	assert_string_equal(c0->prog_name, "stash_tiny");
	assert_true(c0->addr == sc->shared && c1->addr == sc->shared);
	bpfstash_candidates_free(cands);

	/* the windows overlap (a copy mixing two boots does that): ambiguous in both */
	fixture_set_times(sc->dir, sc->large.hash, 150, 0);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 160 * NS);
	expect(sc, sc->shared, &o, NULL, -EADDRNOTAVAIL, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 120 * NS);
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 210 * NS);
	expect(sc, sc->shared, &o, sc->el, 0, 2);
	fixture_set_times(sc->dir, sc->large.hash, 300, 0);
	/* the old API still guesses: the loaded one */
	assert_int_equal(bpfstash_resolve(sc->s, sc->shared, &got, &loc), 0);
	assert_string_equal(bpfstash_entry_name(got), sc->large.hash);
	bpfstash_entry_free(got);
}

/* A corrupt candidate is no answer: the other one is, even without a time. */
static void test_corrupt_candidate(void **state)
{
	struct scene *sc = *state;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/jited", sc->dir, sc->large.hash);
	assert_int_equal(rename(path, "/tmp/bpfstash-at-jited-aside"), 0);
	expect(sc, sc->shared, NULL, sc->et, 0, 1);
	assert_int_equal(rename("/tmp/bpfstash-at-jited-aside", path), 0);
	expect(sc, sc->shared, NULL, NULL, -EADDRNOTAVAIL, 2);
}

/* A kallsyms name and offset: the entries with that function, by time. */
/*
 * The per-run index answers as the per-query scan does: every function's
 * first, middle and last byte of both entries, at every time of the
 * windows and without one (the entry, the error and the candidates), and
 * every symbol; an entry copied in after it was read is seen after
 * bpfstash_index_refresh(), and an unload time written after it, at once
 * (a lookup takes the entry's state as it is then).
 */
static void test_index(void **state)
{
	static const uint64_t secs[] = { 0, 50, 100, 150, 200, 250, 300, 400 };
	const struct bpfstash_entry *es[] = { ((struct scene *)*state)->et,
					      ((struct scene *)*state)->el };
	struct scene *sc = *state;
	struct bpfstash_loc il = { .sz = sizeof(il) };
	struct bpfstash_candidates *c1, *c2;
	struct bpfstash_location loc;
	struct bpfstash_entry *e1, *e2;
	struct bpfstash_index *x;
	struct fixture sub;
	size_t k, t, i, j, checked = 0;
	int r1, r2;

	assert_int_equal(bpfstash_index_open(sc->s, &x), 0);
	assert_int_equal(bpfstash_index_nr_entries(x), 2);
	assert_int_equal(bpfstash_index_nr_ranges(x),
			 bpfstash_entry_nr_funcs(sc->et) + bpfstash_entry_nr_funcs(sc->el));
	for (k = 0; k < 2; k++) {
		for (i = 0; i < bpfstash_entry_nr_funcs(es[k]); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(es[k], i);
			const char *sym = bpfstash_entry_func_name(es[k], i);
			uint64_t offs[] = { 0, f->len / 2, f->len - 1 };

			for (j = 0; j < 3; j++) {
				for (t = 0; t < sizeof(secs) / sizeof(secs[0]); t++) {
					struct bpfstash_resolve_opts o =
						at(secs[t] ? BPFSTASH_CLOCK_BOOTTIME :
							     BPFSTASH_CLOCK_NONE,
						   secs[t] * FIXTURE_NS);

					r1 = bpfstash_resolve_at(sc->s, f->addr + offs[j], &o, &e1,
								 &loc, &c1);
					r2 = bpfstash_index_resolve_at(x, f->addr + offs[j], &o, &e2,
								       &il, &c2);
					assert_int_equal(r1, r2);
					assert_int_equal(bpfstash_candidates_count(c1),
							 bpfstash_candidates_count(c2));
					if (!r1) {
						assert_string_equal(bpfstash_entry_name(e1),
								    bpfstash_entry_name(e2));
						assert_int_equal(loc.line, il.line);
						assert_true(loc.addr == il.addr);
					}
					bpfstash_entry_free(e1);
					bpfstash_entry_free(e2);
					bpfstash_candidates_free(c1);
					bpfstash_candidates_free(c2);
					r1 = bpfstash_resolve_symbol(sc->s, sym, offs[j], f->len, &o,
								     &e1, &loc, NULL);
					r2 = bpfstash_index_resolve_symbol(x, sym, offs[j], f->len,
									   &o, &e2, &il, NULL);
					assert_int_equal(r1, r2);
					if (!r1)
						assert_string_equal(bpfstash_entry_name(e1),
								    bpfstash_entry_name(e2));
					bpfstash_entry_free(e1);
					bpfstash_entry_free(e2);
					checked++;
				}
			}
		}
	}
	assert_true(checked > 100);

	/* A later entry: not seen until the index is read again. */
	fixture_get("subprogs", &sub);
	fixture_copy(&sub, sc->dir);
	e1 = fixture_load(&sub);
	assert_int_equal(bpfstash_index_resolve_at(x, bpfstash_entry_func(e1, 0)->addr + 1, NULL,
						   &e2, &il, NULL), -ENOENT);
	assert_int_equal(bpfstash_index_refresh(x), 0);
	assert_int_equal(bpfstash_index_nr_entries(x), 3);
	r2 = bpfstash_index_resolve_at(x, bpfstash_entry_func(e1, 0)->addr + 1, NULL, &e2, &il,
				       NULL);
	/* subprogs' image may share addresses with the others: held, or ambiguous */
	assert_true(r2 == 0 || r2 == -EADDRNOTAVAIL);
	if (!r2)
		assert_string_equal(bpfstash_entry_name(e2), sub.hash);
	bpfstash_entry_free(e2);
	bpfstash_entry_free(e1);
	/* large unloaded at 350 s after the read: at 360 s nobody holds the shared address */
	fixture_set_times(sc->dir, sc->large.hash, 300, 350);
	{
		struct bpfstash_resolve_opts o = at(BPFSTASH_CLOCK_BOOTTIME, 360 * FIXTURE_NS);

		r2 = bpfstash_index_resolve_at(x, sc->shared, &o, &e2, &il, NULL);
		assert_int_equal(r2, -ENOENT);
	}
	/* a sized location too small */
	il.sz = 8;
	assert_int_equal(bpfstash_index_resolve_at(x, sc->shared, NULL, &e2, &il, NULL), -EINVAL);
	assert_null(e2);
	bpfstash_index_free(x);
}

static void test_symbol(void **state)
{
	struct scene *sc = *state;
	const struct bpfstash_func *f = bpfstash_entry_func(sc->et, 0);
	const char *sym = bpfstash_entry_func_name(sc->et, 0);
	struct bpfstash_candidates *cands;
	struct bpfstash_resolve_opts o;
	struct bpfstash_location loc, want;
	struct bpfstash_entry *got;
	struct bpfstash_meta *m;
	char path[512], cmd[1200], hex[BPFSTASH_HEX_LEN + 1];
	size_t size;

	assert_int_equal(bpfstash_entry_resolve(sc->et, f->addr + 8, &want), 0);
	/* the name is tiny's alone: no time needed */
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, f->len, NULL, &got, &loc, &cands), 0);
	assert_string_equal(bpfstash_entry_name(got), sc->tiny.hash);
	assert_true(loc.addr == f->addr + 8);
	assert_int_equal(loc.line, want.line);
	assert_int_equal(bpfstash_candidates_count(cands), 1);
	bpfstash_entry_free(got);
	bpfstash_candidates_free(cands);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, 0, NULL, &got, &loc, NULL), 0);
	bpfstash_entry_free(got);
	/* a wrong size, an offset past the end, a name nobody has */
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, f->len + 1, NULL, &got, &loc,
						 NULL), -ENOENT);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, f->len, 0, NULL, &got, &loc, NULL),
			 -ENOENT);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, "bpf_prog_0000000000000000_x", 0, 0, NULL,
						 &got, &loc, NULL), -ENOENT);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, "", 0, 0, NULL, &got, &loc, NULL), -EINVAL);

	/*
	 * The same program loaded again (another entry, another name; its meta
	 * says so), at 400 s: by time, or ambiguous.
	 */
	memcpy(hex, sc->tiny.hash, sizeof(hex));
	hex[0] = hex[0] == '0' ? '1' : '0';
	snprintf(cmd, sizeof(cmd), "cp -r '%s/%s' '%s/%s'", sc->dir, sc->tiny.hash, sc->dir, hex);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/%s/meta", sc->dir, hex);
	m = fixture_read_path(path, &size);
	assert_int_equal(bpfstash_hash_parse(hex, m->hash), 0);
	fixture_write_path(path, m, size);
	free(m);
	fixture_set_times(sc->dir, hex, 400, 500);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, f->len, NULL, &got, &loc, &cands),
			 -EADDRNOTAVAIL);
	assert_null(got);
	assert_int_equal(bpfstash_candidates_count(cands), 2);
	bpfstash_candidates_free(cands);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 450 * NS);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, f->len, &o, &got, &loc, NULL), 0);
	assert_string_equal(bpfstash_entry_name(got), hex);
	bpfstash_entry_free(got);
	o = at(BPFSTASH_CLOCK_BOOTTIME, 150 * NS);
	assert_int_equal(bpfstash_resolve_symbol(sc->s, sym, 8, f->len, &o, &got, &loc, NULL), 0);
	assert_string_equal(bpfstash_entry_name(got), sc->tiny.hash);
	bpfstash_entry_free(got);
	snprintf(path, sizeof(path), "%s/%s", sc->dir, hex);
	fixture_rmtree(path);
}

/* The options are checked as libbpf's: a size, unknown trailing bytes zero. */
static void test_opts(void **state)
{
	struct scene *sc = *state;
	struct {
		struct bpfstash_resolve_opts o;
		uint64_t newer;
	} big = { .o = { .sz = sizeof(big), .clock = BPFSTASH_CLOCK_BOOTTIME,
			 .time_ns = 150 * NS } };
	struct bpfstash_resolve_opts o = at(BPFSTASH_CLOCK_BOOTTIME, 150 * NS);
	struct bpfstash_location loc;
	struct bpfstash_entry *got;

	expect(sc, sc->shared, &big.o, sc->et, 0, 2);
	big.newer = 1;
	assert_int_equal(bpfstash_resolve_at(sc->s, sc->shared, &big.o, &got, &loc, NULL), -EINVAL);
	o.sz = offsetof(struct bpfstash_resolve_opts, span_ns);	/* an older caller */
	expect(sc, sc->shared, &o, sc->et, 0, 2);
	o.sz = 4;
	assert_int_equal(bpfstash_resolve_at(sc->s, sc->shared, &o, &got, &loc, NULL), -EINVAL);
	o = at(BPFSTASH_CLOCK_REALTIME + 1, 0);
	assert_int_equal(bpfstash_resolve_at(sc->s, sc->shared, &o, &got, &loc, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ambiguous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_candidate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opts, setup, teardown),
	};

	return cmocka_run_group_tests_name("resolve_at", tests, NULL, NULL);
}
