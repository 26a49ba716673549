// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpfstash resolution on entries captured from the kernel: the edges of
 * every function, the hash+offset form, and every address bpftool printed
 * while the program was loaded, against bpftool's line annotations.
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

static const char *const fixture_names[] = { "subprogs", "tiny", "large" };
#define NR_FIXTURES (sizeof(fixture_names) / sizeof(fixture_names[0]))

static void expect_in_func(const struct bpfstash_entry *e, uint32_t i, uint64_t addr)
{
	const struct bpfstash_func *f = bpfstash_entry_func(e, i);
	struct bpfstash_location loc;

	assert_int_equal(bpfstash_entry_resolve(e, addr, &loc), 0);
	assert_int_equal(loc.func, i);
	assert_true(loc.addr == addr);
	assert_true(loc.func_addr == f->addr);
	assert_int_equal(loc.func_off, addr - f->addr);
	assert_string_equal(loc.func_name, bpfstash_entry_func_name(e, i));
	/* Every fixture has line info and BTF for each function. */
	assert_non_null(loc.btf_name);
	assert_true(strstr(loc.func_name, loc.btf_name) != NULL);
	if (loc.has_line) {
		assert_true(loc.line_addr >= f->addr && loc.line_addr <= addr);
		assert_true(loc.line > 0);
		assert_true(strstr(loc.file, ".bpf.c") != NULL);
	}
}

/* Is @addr inside any function of @e? */
static bool in_some_func(const struct bpfstash_entry *e, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		if (addr >= f->addr && addr - f->addr < f->len)
			return true;
	}
	return false;
}

/* First, middle and last byte of each function; one byte past the end. */
static void test_function_edges(void **state)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		struct bpfstash_location loc;
		struct bpfstash_entry *e;
		struct fixture fx;
		uint32_t i;

		fixture_get(fixture_names[k], &fx);
		e = fixture_load(&fx);
		assert_true(bpfstash_entry_nr_funcs(e) >= 1);
		for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(e, i);

			expect_in_func(e, i, f->addr);
			expect_in_func(e, i, f->addr + f->len / 2);
			expect_in_func(e, i, f->addr + f->len - 1);
			/* The kernel leaves gaps between the images of a program. */
			assert_false(in_some_func(e, f->addr + f->len));
			assert_int_equal(bpfstash_entry_resolve(e, f->addr + f->len, &loc), -ENOENT);
			assert_false(in_some_func(e, f->addr - 1));
			assert_int_equal(bpfstash_entry_resolve(e, f->addr - 1, &loc), -ENOENT);
		}
		/* The main function starts with its first line record. */
		assert_int_equal(bpfstash_entry_resolve(e, bpfstash_entry_func(e, 0)->addr, &loc), 0);
		assert_true(loc.has_line);
		assert_int_equal(loc.func_off, 0);
		assert_int_equal(bpfstash_entry_resolve(e, 0, &loc), -ENOENT);
		assert_int_equal(bpfstash_entry_resolve(e, UINT64_MAX, &loc), -ENOENT);
		bpfstash_entry_free(e);
	}
}

/* HASH+OFF: an offset into the jited file is the same place as its address. */
static void test_offset_form(void **state)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		struct bpfstash_location a, b;
		struct bpfstash_entry *e;
		struct fixture fx;
		size_t jited_len;
		uint32_t i;

		fixture_get(fixture_names[k], &fx);
		e = fixture_load(&fx);
		bpfstash_entry_blob(e, BPFSTASH_JITED, &jited_len);
		for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(e, i);
			uint32_t offs[] = { 0, f->len / 2, f->len - 1 };
			size_t j;

			for (j = 0; j < 3; j++) {
				assert_int_equal(bpfstash_entry_resolve_offset(e, f->offset + offs[j], &a), 0);
				assert_int_equal(bpfstash_entry_resolve(e, f->addr + offs[j], &b), 0);
				assert_int_equal(a.func, i);
				assert_true(a.addr == f->addr + offs[j]);
				assert_int_equal(a.func_off, offs[j]);
				assert_int_equal(a.has_line, b.has_line);
				assert_int_equal(a.line_idx, b.line_idx);
				assert_string_equal(a.file, b.file);
				assert_int_equal(a.line, b.line);
				assert_int_equal(a.col, b.col);
			}
		}
		assert_int_equal(bpfstash_entry_resolve_offset(e, jited_len, &a), -ENOENT);
		assert_int_equal(bpfstash_entry_resolve_offset(e, UINT64_MAX, &a), -ENOENT);
		bpfstash_entry_free(e);
	}
}

/* @a (the 1.0 struct) and @b (the sized one) say the same. */
static void same_loc(const struct bpfstash_location *a, const struct bpfstash_loc *b)
{
	assert_true(a->addr == b->addr);
	assert_int_equal(a->func, b->func);
	assert_true(a->func_addr == b->func_addr);
	assert_int_equal(a->func_off, b->func_off);
	assert_string_equal(a->func_name, b->func_name);
	assert_ptr_equal(a->btf_name, b->btf_name);
	assert_int_equal(a->has_line, b->has_line);
	assert_int_equal(a->line_idx, b->line_idx);
	assert_true(a->line_addr == b->line_addr);
	assert_string_equal(a->file, b->file);
	assert_int_equal(a->line, b->line);
	assert_int_equal(a->col, b->col);
	assert_string_equal(a->source, b->source);
}

/*
 * The sized struct bpfstash_loc (LIBBPFSTASH_1.2): the same as struct
 * bpfstash_location at every function's first, middle and last byte, by
 * address and by offset, and through a stash; a caller's larger struct (a
 * later header's) gets zeros past what the library knows and keeps its
 * sz; a smaller one, or an unknown flag, is -EINVAL and left as it was.
 */
static void test_sized_loc(void **state)
{
	struct {
		struct bpfstash_loc l;
		uint64_t later;
	} big;
	struct bpfstash_location a;
	struct bpfstash_loc b, small;
	struct bpfstash_entry *e, *ge;
	struct bpfstash *s;
	struct fixture fx;
	uint32_t i, j;

	fixture_get("subprogs", &fx);
	e = fixture_load(&fx);
	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		uint32_t offs[] = { 0, f->len / 2, f->len - 1 };

		for (j = 0; j < 3; j++) {
			b = (struct bpfstash_loc){ .sz = sizeof(b) };
			assert_int_equal(bpfstash_entry_resolve(e, f->addr + offs[j], &a), 0);
			assert_int_equal(bpfstash_entry_lookup(e, f->addr + offs[j], 0, &b), 0);
			assert_int_equal(b.sz, sizeof(b));
			same_loc(&a, &b);
			assert_int_equal(bpfstash_entry_lookup(e, f->offset + offs[j],
							       BPFSTASH_LOOKUP_OFFSET, &b), 0);
			same_loc(&a, &b);
		}
	}
	memset(&big, 0xa5, sizeof(big));
	big.l.sz = sizeof(big);
	assert_int_equal(bpfstash_entry_lookup(e, bpfstash_entry_func(e, 0)->addr, 0, &big.l), 0);
	assert_int_equal(big.l.sz, sizeof(big));
	assert_true(big.later == 0);
	assert_int_equal(bpfstash_entry_resolve(e, bpfstash_entry_func(e, 0)->addr, &a), 0);
	same_loc(&a, &big.l);

	memset(&small, 0xa5, sizeof(small));
	small.sz = offsetof(struct bpfstash_loc, source);
	assert_int_equal(bpfstash_entry_lookup(e, bpfstash_entry_func(e, 0)->addr, 0, &small),
			 -EINVAL);
	assert_int_equal(small.func, 0xa5a5a5a5);
	b.sz = sizeof(b);
	assert_int_equal(bpfstash_entry_lookup(e, bpfstash_entry_func(e, 0)->addr, 1u << 7, &b),
			 -EINVAL);
	assert_int_equal(bpfstash_entry_lookup(e, 1, 0, &b), -ENOENT);

	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_int_equal(bpfstash_lookup_at(s, bpfstash_entry_func(e, 1)->addr + 3, NULL, &ge, &b,
					    NULL), 0);
	assert_string_equal(bpfstash_entry_name(ge), bpfstash_entry_name(e));
	assert_int_equal(bpfstash_entry_resolve(e, bpfstash_entry_func(e, 1)->addr + 3, &a), 0);
	assert_string_equal(a.file, b.file);
	assert_int_equal(a.line, b.line);
	assert_int_equal(b.func, 1);
	bpfstash_entry_free(ge);
	assert_int_equal(bpfstash_lookup_at(s, bpfstash_entry_func(e, 1)->addr, NULL, &ge, &small,
					    NULL), -EINVAL);
	assert_null(ge);
	bpfstash_close(s);
	bpfstash_entry_free(e);
}

/*
 * Every instruction bpftool disassembled: the same function, and the
 * file:line:col and source of the annotation above it (none before the
 * first annotation of a function).
 */
static void test_lines_match_bpftool(void **state)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		struct bpfstash_entry *e;
		struct linum_row *rows;
		struct fixture fx;
		size_t n, r, with_line = 0;

		fixture_get(fixture_names[k], &fx);
		e = fixture_load(&fx);
		rows = fixture_linum(fixture_names[k], e, &n);
		for (r = 0; r < n; r++) {
			const struct bpfstash_func *f = bpfstash_entry_func(e, rows[r].func);
			struct bpfstash_location loc;

			assert_int_equal(bpfstash_entry_resolve(e, f->addr + rows[r].off, &loc), 0);
			assert_int_equal(loc.func, rows[r].func);
			if (loc.has_line != rows[r].has_line)
				fail_msg("%s: %s+0x%x: has_line %d, bpftool %d", fixture_names[k],
					 loc.func_name, rows[r].off, loc.has_line, rows[r].has_line);
			if (!rows[r].has_line)
				continue;
			with_line++;
			if (strcmp(loc.file, rows[r].file) || loc.line != rows[r].line ||
			    loc.col != rows[r].col)
				fail_msg("%s: %s+0x%x: %s:%u:%u, bpftool %s:%u:%u", fixture_names[k],
					 loc.func_name, rows[r].off, loc.file, loc.line, loc.col,
					 rows[r].file, rows[r].line, rows[r].col);
			assert_string_equal(loc.source, rows[r].source);
		}
		/* Nothing vacuous: bpftool annotated nearly every address. */
		assert_true(with_line * 10 >= n * 9);
		free(rows);
		bpfstash_entry_free(e);
	}
}

/* The line records in address order, each resolving to itself. */
static void test_line_records(void **state)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		struct bpfstash_location loc, at, prev = {};
		struct bpfstash_entry *e;
		struct fixture fx;
		uint32_t i, n;

		fixture_get(fixture_names[k], &fx);
		e = fixture_load(&fx);
		n = bpfstash_entry_nr_lines(e);
		assert_int_equal(n, bpfstash_entry_meta(e)->content.nr_jited_line_info);
		assert_true(n >= 1);
		for (i = 0; i < n; i++) {
			assert_int_equal(bpfstash_entry_line(e, i, &loc), 0);
			assert_true(loc.has_line);
			assert_true(loc.line_addr == loc.addr);
			if (i)
				assert_true(loc.func > prev.func ||
					    (loc.func == prev.func && loc.func_off >= prev.func_off));
			assert_int_equal(bpfstash_entry_resolve(e, loc.addr, &at), 0);
			assert_int_equal(at.func, loc.func);
			/* The last record at an address is the one in effect. */
			if (i + 1 == n || bpfstash_entry_line(e, i + 1, &prev) || prev.addr != loc.addr)
				assert_int_equal(at.line_idx, loc.line_idx);
			prev = loc;
		}
		assert_int_equal(bpfstash_entry_line(e, n, &loc), -ENOENT);
		bpfstash_entry_free(e);
	}
}

/*
 * Across the stash: the entry whose code holds an address, and when
 * addresses were reused (tiny's image lies inside large's), the loaded
 * one, else the one loaded last.
 */
static void test_stash_resolve(void **state)
{
	struct bpfstash_entry *all[NR_FIXTURES];
	struct bpfstash *s;
	size_t k, j, reused = 0;

	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	for (k = 0; k < NR_FIXTURES; k++) {
		struct fixture fx;

		fixture_get(fixture_names[k], &fx);
		all[k] = fixture_load(&fx);
	}
	for (k = 0; k < NR_FIXTURES; k++) {
		uint32_t i;

		for (i = 0; i < bpfstash_entry_nr_funcs(all[k]); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(all[k], i);
			uint64_t addr = f->addr + f->len / 2;
			struct bpfstash_entry *best = NULL, *got;
			struct bpfstash_location loc, want;

			for (j = 0; j < NR_FIXTURES; j++) {
				if (!in_some_func(all[j], addr))
					continue;
				if (!best || (bpfstash_entry_loaded(all[j]) && !bpfstash_entry_loaded(best)) ||
				    (bpfstash_entry_loaded(all[j]) == bpfstash_entry_loaded(best) &&
				     bpfstash_entry_meta(all[j])->load_time >
				     bpfstash_entry_meta(best)->load_time))
					best = all[j];
			}
			assert_non_null(best);
			reused += best != all[k];
			assert_int_equal(bpfstash_resolve(s, addr, &got, &loc), 0);
			assert_string_equal(bpfstash_entry_name(got), bpfstash_entry_name(best));
			assert_int_equal(bpfstash_entry_resolve(best, addr, &want), 0);
			assert_int_equal(loc.func, want.func);
			assert_int_equal(loc.line, want.line);
			bpfstash_entry_free(got);
		}
	}
	/* The fixtures do hold a reused address: the rule was exercised. */
	assert_true(reused > 0);
	{
		struct bpfstash_entry *got = (void *)1;
		struct bpfstash_location loc;

		assert_int_equal(bpfstash_resolve(s, 0x1000, &got, &loc), -ENOENT);
		assert_null(got);
	}
	for (k = 0; k < NR_FIXTURES; k++)
		bpfstash_entry_free(all[k]);
	bpfstash_close(s);
}

/*
 * A corrupt entry is not an answer: with the newer of two entries that
 * hold an address broken, the older one answers; where only the broken
 * one held it, nothing does.
 */
static void test_stash_resolve_skips_corrupt(void **state)
{
	char dir[] = "/tmp/bpfstash-resolve-XXXXXX", path[512];
	struct bpfstash_entry *tiny, *large, *got = NULL;
	struct bpfstash_location loc;
	struct fixture ft, fl;
	struct bpfstash *s;
	uint64_t shared, only_large;
	uint32_t i;

	fixture_get("tiny", &ft);
	fixture_get("large", &fl);
	tiny = fixture_load(&ft);
	large = fixture_load(&fl);
	shared = bpfstash_entry_func(tiny, 0)->addr + 4;
	assert_true(in_some_func(large, shared));
	assert_true(bpfstash_entry_meta(large)->load_time > bpfstash_entry_meta(tiny)->load_time);
	only_large = 0;
	for (i = 0; i < bpfstash_entry_nr_funcs(large) && !only_large; i++)
		if (!in_some_func(tiny, bpfstash_entry_func(large, i)->addr))
			only_large = bpfstash_entry_func(large, i)->addr;
	assert_true(only_large != 0);

	assert_non_null(mkdtemp(dir));
	fixture_copy(&ft, dir);
	fixture_copy(&fl, dir);
	assert_int_equal(bpfstash_open(dir, &s), 0);
	assert_int_equal(bpfstash_resolve(s, shared, &got, &loc), 0);
	assert_string_equal(bpfstash_entry_name(got), fl.hash);	/* the newer */
	bpfstash_entry_free(got);

	snprintf(path, sizeof(path), "%s/%s/jited", dir, fl.hash);
	assert_int_equal(truncate(path, 100), 0);
	assert_int_equal(bpfstash_resolve(s, shared, &got, &loc), 0);
	assert_string_equal(bpfstash_entry_name(got), ft.hash);
	assert_int_equal(loc.func, 0);
	assert_int_equal(loc.func_off, 4);
	bpfstash_entry_free(got);
	got = (void *)1;
	assert_int_equal(bpfstash_resolve(s, only_large, &got, &loc), -ENOENT);
	assert_null(got);

	bpfstash_close(s);
	fixture_rmtree(dir);
	bpfstash_entry_free(tiny);
	bpfstash_entry_free(large);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_edges),
		cmocka_unit_test(test_offset_form),
		cmocka_unit_test(test_sized_loc),
		cmocka_unit_test(test_lines_match_bpftool),
		cmocka_unit_test(test_line_records),
		cmocka_unit_test(test_stash_resolve),
		cmocka_unit_test(test_stash_resolve_skips_corrupt),
	};

	return cmocka_run_group_tests_name("resolve", tests, NULL, NULL);
}
