// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpfstash on entries captured from the kernel (tests/fixtures): load,
 * verify, and refuse every corruption without crashing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "libbpfstash.h"
#include "fixtures.h"

static void test_list_and_verify_all(void **state)
{
	struct bpfstash *s;
	char **names;
	size_t n, i;

	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_false(bpfstash_is_mounted(s));
	assert_int_equal(bpfstash_list(s, &names, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		struct bpfstash_entry *e;

		assert_int_equal(bpfstash_entry_load(s, names[i], 0, &e), 0);
		assert_int_equal(bpfstash_entry_verify(e), 0);
		assert_string_equal(bpfstash_entry_name(e), names[i]);
		bpfstash_entry_free(e);
	}
	bpfstash_names_free(names);
	bpfstash_close(s);
}

static void test_fixture_states(void **state)
{
	struct fixture f;
	struct bpfstash_entry *e;

	fixture_get("subprogs", &f);
	e = fixture_load(&f);
	assert_true(bpfstash_entry_loaded(e));
	assert_int_equal(bpfstash_entry_nr_funcs(e), 4);
	assert_int_equal(bpfstash_entry_meta(e)->prog_id, f.prog_id);
	bpfstash_entry_free(e);

	fixture_get("large", &f);
	e = fixture_load(&f);
	assert_false(bpfstash_entry_loaded(e));
	assert_true(bpfstash_entry_meta(e)->unload_time > bpfstash_entry_meta(e)->load_time);
	assert_true(bpfstash_entry_meta(e)->content.nr_jited_line_info > 1000);
	bpfstash_entry_free(e);
}

/* The jited file equals the image bpftool wrote while the program was loaded. */
static void test_jited_equals_bpftool(void **state)
{
	static const char *const names[] = { "subprogs", "tiny", "large" };
	size_t i;

	for (i = 0; i < 3; i++) {
		struct fixture f;
		struct bpfstash_entry *e;
		const void *img;
		void *dump;
		size_t size, dump_size;

		fixture_get(names[i], &f);
		e = fixture_load(&f);
		img = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
		dump = fixture_read_file(FIXTURES "/bpftool", names[i], ".jited", &dump_size);
		assert_int_equal(size, dump_size);
		assert_memory_equal(img, dump, size);
		free(dump);
		bpfstash_entry_free(e);
	}
}

/*
 * Flip each byte of each binary file of a fixture in turn: the load or the
 * verification must fail, and nothing may crash (the tests run under
 * ASan in the fuzz build; here they must at least not fault).
 */
static void tamper_file(const char *file, size_t stride)
{
	struct fixture f;
	char dir[] = "/tmp/bpfstash-tamper-XXXXXX";
	char path[512];
	size_t size, i, detected = 0, tried = 0;
	unsigned char *orig;

	fixture_get("subprogs", &f);
	assert_non_null(mkdtemp(dir));
	fixture_copy(&f, dir);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, f.hash, file);
	orig = fixture_read_path(path, &size);

	for (i = 0; i < size; i += stride) {
		struct bpfstash_entry *e = NULL;
		int dfd, err;

		orig[i] ^= 0x5a;
		fixture_write_path(path, orig, size);
		orig[i] ^= 0x5a;
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		err = bpfstash_entry_load_at(dfd, f.hash, 0, &e);
		if (!err) {
			err = bpfstash_entry_verify(e);
			bpfstash_entry_free(e);
		}
		close(dfd);
		tried++;
		detected += err != 0;
		if (!err)
			fail_msg("%s: byte %zu flipped and not detected", file, i);
	}
	fixture_write_path(path, orig, size);
	free(orig);
	fixture_rmtree(dir);
	assert_int_equal(detected, tried);
}

static void test_tamper_meta(void **state)
{
	/* The state part of meta (times, ids) is not content: only content counts. */
	struct fixture f;
	char dir[] = "/tmp/bpfstash-tamper-XXXXXX";
	char path[512];
	unsigned char *orig;
	size_t size, i;

	fixture_get("subprogs", &f);
	assert_non_null(mkdtemp(dir));
	fixture_copy(&f, dir);
	snprintf(path, sizeof(path), "%s/%s/meta", dir, f.hash);
	orig = fixture_read_path(path, &size);
	assert_int_equal(size, sizeof(struct bpfstash_meta));
	/* content and hash: every byte matters */
	for (i = 0; i < offsetof(struct bpfstash_meta, flags); i++) {
		struct bpfstash_entry *e = NULL;
		int dfd, err;

		orig[i] ^= 0x01;
		fixture_write_path(path, orig, size);
		orig[i] ^= 0x01;
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		err = bpfstash_entry_load_at(dfd, f.hash, 0, &e);
		if (!err) {
			err = bpfstash_entry_verify(e);
			bpfstash_entry_free(e);
		}
		close(dfd);
		if (!err)
			fail_msg("meta byte %zu flipped and not detected", i);
	}
	free(orig);
	fixture_rmtree(dir);
}

static void test_tamper_funcs(void **state) { tamper_file("funcs", 1); }
static void test_tamper_jited(void **state) { tamper_file("jited", 1); }
static void test_tamper_line_info(void **state) { tamper_file("line_info", 1); }
static void test_tamper_jited_line_info(void **state) { tamper_file("jited_line_info", 1); }
static void test_tamper_func_info(void **state) { tamper_file("func_info", 1); }
static void test_tamper_btf(void **state) { tamper_file("btf", 1); }

/* Truncated, oversized and missing files: a clear error each. */
static void test_bad_sizes_and_missing_files(void **state)
{
	static const char *const files[] = {
		"meta", "funcs", "jited", "line_info", "jited_line_info", "func_info", "btf",
	};
	struct fixture f;
	size_t i;

	fixture_get("subprogs", &f);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char dir[] = "/tmp/bpfstash-sizes-XXXXXX", path[512];
		struct bpfstash_entry *e = NULL;
		unsigned char *buf;
		size_t size;
		int dfd;

		assert_non_null(mkdtemp(dir));
		fixture_copy(&f, dir);
		snprintf(path, sizeof(path), "%s/%s/%s", dir, f.hash, files[i]);
		buf = fixture_read_path(path, &size);
		dfd = open(dir, O_RDONLY | O_DIRECTORY);

		/* truncated by one byte */
		fixture_write_path(path, buf, size - 1);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		/* one byte too many */
		buf = realloc(buf, size + 1);
		buf[size] = 0;
		fixture_write_path(path, buf, size + 1);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		/* huge: refused without reading it all */
		fixture_write_huge(path, (size_t)65 << 20);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		/* missing */
		assert_int_equal(unlink(path), 0);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -ENOENT);
		/* a symlink instead of the file */
		assert_int_equal(symlink("/etc/passwd", path), 0);
		assert_int_not_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), 0);
		assert_null(e);

		close(dfd);
		free(buf);
		fixture_rmtree(dir);
	}
}

static void test_names(void **state)
{
	uint8_t hash[BPFSTASH_HASH_SIZE];
	char hex[BPFSTASH_HEX_LEN + 1];
	struct fixture f;

	fixture_get("tiny", &f);
	assert_true(bpfstash_name_valid(f.hash));
	assert_int_equal(bpfstash_hash_parse(f.hash, hash), 0);
	bpfstash_hash_format(hash, hex);
	assert_string_equal(hex, f.hash);
	assert_false(bpfstash_name_valid("stats"));
	assert_false(bpfstash_name_valid("0123456789abcdef0123456789abcdef0123456"));
	assert_false(bpfstash_name_valid("0123456789abcdef0123456789abcdef012345678"));
	assert_false(bpfstash_name_valid("0123456789ABCDEF0123456789abcdef01234567"));
	assert_false(bpfstash_name_valid("0123456789abcdef0123456789abcdef0123456g"));
	assert_int_equal(bpfstash_hash_parse("../../../etc/passwd", hash), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_and_verify_all),
		cmocka_unit_test(test_fixture_states),
		cmocka_unit_test(test_jited_equals_bpftool),
		cmocka_unit_test(test_tamper_meta),
		cmocka_unit_test(test_tamper_funcs),
		cmocka_unit_test(test_tamper_jited),
		cmocka_unit_test(test_tamper_line_info),
		cmocka_unit_test(test_tamper_jited_line_info),
		cmocka_unit_test(test_tamper_func_info),
		cmocka_unit_test(test_tamper_btf),
		cmocka_unit_test(test_bad_sizes_and_missing_files),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("entry", tests, NULL, NULL);
}
