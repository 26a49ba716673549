// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpfstash's rendering of the kernel's text files ("info", "functions",
 * "lines") against the text the kernel wrote for the fixtures, and against
 * bpftool's line info dump of the same programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libbpfstash.h"
#include "fixtures.h"

static const char *const fixtures[] = { "subprogs", "tiny", "large" };

/* The first line where @a and @b differ, 1-based; 0 if they are equal. */
static size_t first_diff_line(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i, line = 1;

	for (i = 0; i < alen && i < blen && a[i] == b[i]; i++)
		line += a[i] == '\n';
	return i == alen && i == blen ? 0 : line;
}

/* Every view of every fixture is byte for byte what the kernel wrote. */
static void test_views_equal_kernel_text(void **state)
{
	const char *file;
	size_t i, k;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct bpfstash_entry *e;
		struct fixture f;

		fixture_get(fixtures[i], &f);
		e = fixture_load(&f);
		for (k = 0; (file = bpfstash_view_name(k)); k++) {
			char dir[256], *text;
			size_t len, klen, line;
			void *kernel;

			snprintf(dir, sizeof(dir), FIXTURES "/stash/%s", f.hash);
			kernel = fixture_read_file(dir, file, "", &klen);
			assert_int_equal(bpfstash_entry_render(e, file, &text, &len), 0);
			assert_int_equal(strlen(text), len);
			line = first_diff_line(kernel, klen, text, len);
			if (line)
				fail_msg("%s/%s: the rendering differs from the kernel's at line %zu",
					 fixtures[i], file, line);
			free(text);
			free(kernel);
		}
		bpfstash_entry_free(e);
	}
	assert_int_equal(k, 3);
}

/*
 * "lines" from the other side: each record's address, file, line, column
 * and source are what bpftool's linum dump shows at that address.
 */
static void test_lines_against_bpftool(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct bpfstash_entry *e;
		struct linum_row *rows;
		struct fixture f;
		size_t nrows, checked = 0;
		char *text, *line, *save = NULL;
		size_t len;

		fixture_get(fixtures[i], &f);
		e = fixture_load(&f);
		rows = fixture_linum(fixtures[i], e, &nrows);
		assert_int_equal(bpfstash_entry_render(e, "lines", &text, &len), 0);
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char func[128], file[1024], source[1024] = "";
			unsigned long long addr;
			unsigned int off, ln, col;
			size_t r;

			if (line[0] == '#')
				continue;
			assert_int_equal(sscanf(line, "%llx %127[^+]+0x%x\t%1023[^:]:%u:%u\t%1023[^\n]",
						&addr, func, &off, file, &ln, &col, source) >= 6, 1);
			for (r = 0; r < nrows; r++) {
				const char *name = bpfstash_entry_func_name(e, rows[r].func);

				if (rows[r].off != off || strcmp(name, func))
					continue;
				/* bpftool shows the last record at an address; the others
				 * at it are code-less (the JIT emitted nothing). */
				if (rows[r].line != ln || rows[r].col != col)
					break;
				assert_string_equal(rows[r].file, file);
				assert_string_equal(rows[r].source, source);
				assert_int_equal(bpfstash_entry_func(e, rows[r].func)->addr + off, addr);
				checked++;
				break;
			}
		}
		/* Every fixture has line info, and most records have code. */
		assert_true(checked > 0);
		assert_true(checked * 2 > bpfstash_entry_meta(e)->content.nr_line_info);
		free(text);
		free(rows);
		bpfstash_entry_free(e);
	}
}

/* A record whose strings are not in the BTF shows '?', as the kernel writes it. */
static void test_lines_bad_offsets(void **state)
{
	char dir[] = "/tmp/bpfstash-view-XXXXXX", path[600], *text;
	struct bpfstash_entry *e;
	struct bpf_line_info *li;
	struct bpfstash *s;
	struct fixture f;
	size_t size, len;

	assert_non_null(mkdtemp(dir));
	fixture_get("subprogs", &f);
	fixture_copy(&f, dir);
	snprintf(path, sizeof(path), "%s/%s/line_info", dir, f.hash);
	li = fixture_read_path(path, &size);
	li[0].file_name_off = 0xfffffff0;
	li[0].line_off = 0xfffffff0;
	fixture_write_path(path, li, size);
	free(li);

	assert_int_equal(bpfstash_open(dir, &s), 0);
	assert_int_equal(bpfstash_entry_load(s, f.hash, 0, &e), 0);
	assert_int_equal(bpfstash_entry_render(e, "lines", &text, &len), 0);
	/* The first record, right after the header line. */
	assert_non_null(strstr(text, "+0x0\t?:"));
	assert_non_null(strstr(strchr(text, '\n') + 1, "\t?\n"));
	free(text);
	assert_int_equal(bpfstash_entry_render(e, "passwd", &text, &len), -ENOENT);
	assert_null(text);
	bpfstash_entry_free(e);
	bpfstash_close(s);
	fixture_rmtree(dir);
}

/* A META-only load has "info" and nothing else. */
static void test_meta_only(void **state)
{
	struct bpfstash_entry *e;
	struct bpfstash *s;
	struct fixture f;
	char *text;
	size_t len;

	fixture_get("large", &f);
	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_int_equal(bpfstash_entry_load(s, f.hash, BPFSTASH_LOAD_META, &e), 0);
	assert_int_equal(bpfstash_entry_render(e, "info", &text, &len), 0);
	assert_non_null(strstr(text, "state            unloaded\n"));
	free(text);
	assert_int_equal(bpfstash_entry_render(e, "lines", &text, &len), -EINVAL);
	bpfstash_entry_free(e);
	bpfstash_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views_equal_kernel_text),
		cmocka_unit_test(test_lines_against_bpftool),
		cmocka_unit_test(test_lines_bad_offsets),
		cmocka_unit_test(test_meta_only),
	};

	return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
