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
#include <byteswap.h>
#include <endian.h>
#include <cmocka.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "internal.h"
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
	/* its size, the content and the hash: every byte matters */
	for (i = 0; i < offsetof(struct bpfstash_meta, prog_id); i++) {
		struct bpfstash_entry *e = NULL;
		int dfd, err;

		orig[i] ^= 0x01;
		if (i >= offsetof(struct bpfstash_meta, flags) &&
		    i < offsetof(struct bpfstash_meta, content))
			continue;	/* flags: state */
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

static int counted_prints;

static int count_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	counted_prints++;
	return 0;
}

/*
 * A BTF blob libbpf refuses: the load says -EBADMSG and prints nothing,
 * neither on stderr nor through the caller's libbpf print function, which
 * is the caller's again afterwards.
 */
static void test_bad_btf_silent(void **state)
{
	char dir[] = "/tmp/bpfstash-btf-XXXXXX", path[512], err_path[600];
	struct bpfstash_entry *e = NULL;
	struct fixture f;
	struct stat st;
	unsigned char *buf;
	size_t size;
	int dfd, saved, efd;

	fixture_get("subprogs", &f);
	assert_non_null(mkdtemp(dir));
	fixture_copy(&f, dir);
	snprintf(path, sizeof(path), "%s/%s/btf", dir, f.hash);
	buf = fixture_read_path(path, &size);
	buf[0] ^= 0xff;		/* the magic */
	fixture_write_path(path, buf, size);
	free(buf);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(efd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(efd, 2);
	close(efd);
	libbpf_set_print(NULL);		/* libbpf's default: stderr */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
	libbpf_set_print(count_print);
	assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(stat(err_path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(counted_prints, 0);
	assert_ptr_equal(libbpf_set_print(NULL), count_print);
	close(dfd);
	fixture_rmtree(dir);
}

/*
 * The file bpfstash_error_detail() names: what comes before its first
 * ':', or the last path component before it ("<hash>/meta: ...").
 */
static const char *detail_file(void)
{
	static char file[64];
	const char *d = bpfstash_error_detail(), *colon = strchr(d, ':'), *p;

	if (!colon)
		return "";
	for (p = colon; p > d && p[-1] != '/'; p--)
		;
	snprintf(file, sizeof(file), "%.*s", (int)(colon - p), p);
	return file;
}

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

		/*
		 * truncated by one byte; the reason names the file the check
		 * failed on (LIBBPFSTASH_1.2)
		 */
		fixture_write_path(path, buf, size - 1);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		assert_string_equal(detail_file(), files[i]);
		/* one byte too many */
		buf = realloc(buf, size + 1);
		buf[size] = 0;
		fixture_write_path(path, buf, size + 1);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		assert_string_equal(detail_file(), files[i]);
		/* huge: refused without reading it all */
		fixture_write_huge(path, (size_t)65 << 20);
		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), -EBADMSG);
		assert_non_null(strstr(bpfstash_error_detail(), files[i]));
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

/* A meta file in a copy of a fixture: read, changed by @fn, written back. */
static void edit_meta(const char *dir, const char *hash,
		      void (*fn)(uint8_t **meta, size_t *size))
{
	char path[512];
	uint8_t *m;
	size_t size;

	snprintf(path, sizeof(path), "%s/%s/meta", dir, hash);
	m = fixture_read_path(path, &size);
	fn(&m, &size);
	fixture_write_path(path, m, size);
	free(m);
}

static void set_version_4(uint8_t **m, size_t *size)
{
	((struct bpfstash_meta *)*m)->content.version = htole32(4);
}

/* A later kernel's meta: 24 bytes of state more, its size saying so. */
static void grow_meta(uint8_t **m, size_t *size)
{
	*m = realloc(*m, *size + 24);
	assert_non_null(*m);
	memset(*m + *size, 0xa5, 24);
	*size += 24;
	((struct bpfstash_meta *)*m)->meta_size = htole32(*size);
}

static void grow_meta_unsaid(uint8_t **m, size_t *size)
{
	grow_meta(m, size);
	((struct bpfstash_meta *)*m)->meta_size = htole32(*size - 24);
}

static void shrink_meta_to_8(uint8_t **m, size_t *size)
{
	*size = 8;
}

static int load_dir(const char *dir, const char *hash, struct bpfstash_entry **e)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), err;

	assert_true(dfd >= 0);
	err = bpfstash_entry_load_at(dfd, hash, 0, e);
	if (!err)
		err = bpfstash_entry_verify(*e);
	close(dfd);
	return err;
}

static void zero_nr_funcs(uint8_t **m, size_t *size)
{
	((struct bpfstash_meta *)*m)->content.nr_funcs = 0;
}

static void set_reserved(uint8_t **m, size_t *size)
{
	((struct bpfstash_meta *)*m)->content.__reserved_2 = htole32(1);
}

static void grow_jited_len(uint8_t **m, size_t *size)
{
	struct bpfstash_content *c = &((struct bpfstash_meta *)*m)->content;

	c->jited_len = htole32(le32toh(c->jited_len) + 1);
}

static void grow_btf_size(uint8_t **m, size_t *size)
{
	struct bpfstash_content *c = &((struct bpfstash_meta *)*m)->content;

	c->btf_size = htole32(le32toh(c->btf_size) + 1);
}

static void bad_line_rec_size(uint8_t **m, size_t *size)
{
	((struct bpfstash_meta *)*m)->content.line_info_rec_size = htole32(12);
}

/*
 * Each of these corruptions is -EBADMSG, and bpfstash_error_detail()
 * names the check that failed (LIBBPFSTASH_1.2): before, every one of
 * them was the same bare -EBADMSG.  A load that succeeds leaves the
 * reason of the last failure; an entry whose bytes do not hash to its
 * name says what they hash to.
 */
static void test_error_detail(void **state)
{
	static const struct {
		void (*fn)(uint8_t **meta, size_t *size);
		const char *want;
	} cases[] = {
		{ zero_nr_funcs, "meta: nr_funcs 0 is not in 1.." },
		{ set_reserved, "meta: a reserved field of content is not 0" },
		{ grow_jited_len, "meta's jited_len says" },
		{ grow_btf_size, "btf: " },
		{ bad_line_rec_size, "meta: line_info_rec_size 12 is not 16" },
		{ shrink_meta_to_8, "meta: 8 bytes" },
	};
	struct bpfstash_entry *e = NULL;
	struct fixture f;
	char path[512];
	unsigned char *b;
	size_t i, size;

	fixture_get("subprogs", &f);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[] = "/tmp/bpfstash-detail-XXXXXX";

		assert_non_null(mkdtemp(dir));
		fixture_copy(&f, dir);
		edit_meta(dir, f.hash, cases[i].fn);
		assert_int_equal(load_dir(dir, f.hash, &e), -EBADMSG);
		assert_null(e);
		if (!strstr(bpfstash_error_detail(), cases[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
				 bpfstash_error_detail(), cases[i].want);
		fixture_rmtree(dir);
	}

	{
		char dir[] = "/tmp/bpfstash-detail-XXXXXX";

		assert_non_null(mkdtemp(dir));
		fixture_copy(&f, dir);
		snprintf(path, sizeof(path), "%s/%s/jited", dir, f.hash);
		b = fixture_read_path(path, &size);
		b[size / 2] ^= 0x40;
		fixture_write_path(path, b, size);
		free(b);
		assert_int_equal(load_dir(dir, f.hash, &e), -EBADMSG);
		assert_non_null(strstr(bpfstash_error_detail(), "the content hashes to "));
		assert_null(strstr(bpfstash_error_detail(), f.hash));
		bpfstash_entry_free(e);
		e = NULL;
		fixture_rmtree(dir);
	}
}

static uint32_t version_of(const char *dir, const char *hash)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	uint32_t v = 0;

	assert_true(dfd >= 0);
	assert_int_equal(bpfstash_entry_version_at(dfd, hash, &v), 0);
	close(dfd);
	return v;
}

/*
 * Formats: an entry of another version is -EPROTONOSUPPORT, never -EBADMSG,
 * and says its version (format 2, captured by the previous kernel; format
 * 4, as a later one would write it); a larger meta that says its size is
 * read as far as the library knows; a meta too short to hold the version,
 * or whose size is not its own, is corrupt.
 */
static void test_format_versions(void **state)
{
	char dir[] = "/tmp/bpfstash-format-XXXXXX", line[256], name[32], hash[64];
	struct bpfstash_entry *e = NULL, *orig;
	struct fixture f;
	FILE *m;

	assert_int_equal(bpfstash_format_version(), BPFSTASH_VERSION);
	/* The previous format, as its kernel wrote it. */
	m = fopen(FIXTURES "/format2/manifest", "r");
	assert_non_null(m);
	hash[0] = '\0';
	while (fgets(line, sizeof(line), m))
		if (line[0] != '#' && sscanf(line, "%31s %63s", name, hash) == 2)
			break;
	fclose(m);
	assert_int_equal(load_dir(FIXTURES "/format2", hash, &e), -EPROTONOSUPPORT);
	assert_null(e);
	assert_int_equal(version_of(FIXTURES "/format2", hash), 2);

	fixture_get("subprogs", &f);
	orig = fixture_load(&f);
	assert_non_null(mkdtemp(dir));
	fixture_copy(&f, dir);
	edit_meta(dir, f.hash, grow_meta);
	assert_int_equal(load_dir(dir, f.hash, &e), 0);
	assert_memory_equal(&bpfstash_entry_meta(e)->content, &bpfstash_entry_meta(orig)->content,
			    sizeof(struct bpfstash_content));
	assert_int_equal(bpfstash_entry_meta(e)->meta_size, sizeof(struct bpfstash_meta) + 24);
	bpfstash_entry_free(e);
	e = NULL;
	edit_meta(dir, f.hash, grow_meta_unsaid);
	assert_int_equal(load_dir(dir, f.hash, &e), -EBADMSG);
	fixture_rmtree(dir);

	strcpy(dir, "/tmp/bpfstash-format-XXXXXX");
	assert_non_null(mkdtemp(dir));
	fixture_copy(&f, dir);
	edit_meta(dir, f.hash, set_version_4);
	assert_int_equal(load_dir(dir, f.hash, &e), -EPROTONOSUPPORT);
	assert_int_equal(version_of(dir, f.hash), 4);
	edit_meta(dir, f.hash, shrink_meta_to_8);
	assert_int_equal(load_dir(dir, f.hash, &e), -EBADMSG);
	fixture_rmtree(dir);
	bpfstash_entry_free(orig);
}

/*
 * The files are little-endian whatever the host; a big-endian host's
 * library swaps each record to its order at load, and back to hash.  No
 * such host runs these tests: this checks the swapping itself, that it
 * turns every multi-byte field and nothing else (names, tags, the hash),
 * and that twice is the identity, on a captured entry's records.
 */
static void test_byte_order(void **state)
{
	const struct bpfstash_func *f0;
	struct bpfstash_entry *e;
	struct bpfstash_meta m, orig;
	struct bpfstash_func f, forig;
	uint32_t li[4], lorig[4];
	struct fixture fx;
	uint8_t hash[BPFSTASH_HASH_SIZE];

	fixture_get("subprogs", &fx);
	e = fixture_load(&fx);
	orig = m = *bpfstash_entry_meta(e);
	bst_swab_meta(&m);
	assert_int_equal(m.meta_size, bswap_32(orig.meta_size));
	assert_int_equal(m.content.version, bswap_32(orig.content.version));
	assert_int_equal(m.content.machine, bswap_16(orig.content.machine));
	assert_int_equal(m.content.nr_funcs, bswap_32(orig.content.nr_funcs));
	assert_int_equal(m.content.nr_pokes, bswap_32(orig.content.nr_pokes));
	assert_int_equal(m.load_time, bswap_64(orig.load_time));
	assert_int_equal(m.loader_cgroup_id, bswap_64(orig.loader_cgroup_id));
	assert_memory_equal(m.hash, orig.hash, sizeof(m.hash));
	assert_memory_equal(m.content.name, orig.content.name, sizeof(m.content.name));
	assert_memory_equal(m.loader_comm, orig.loader_comm, sizeof(m.loader_comm));
	assert_memory_equal(m.boot_id, orig.boot_id, sizeof(m.boot_id));
	bst_swab_meta(&m);
	assert_memory_equal(&m, &orig, sizeof(m));

	f0 = bpfstash_entry_func(e, 0);
	forig = f = *f0;
	bst_swab_funcs(&f, sizeof(f), 1);
	assert_int_equal(f.addr, bswap_64(forig.addr));
	assert_int_equal(f.len, bswap_32(forig.len));
	assert_int_equal(f.entry_poke_len, bswap_16(forig.entry_poke_len));
	assert_memory_equal(f.tag, forig.tag, sizeof(f.tag));
	bst_swab_funcs(&f, sizeof(f), 1);
	assert_memory_equal(&f, &forig, sizeof(f));

	memcpy(lorig, bpfstash_entry_blob(e, BPFSTASH_LINE_INFO, &(size_t){ 0 }), sizeof(lorig));
	memcpy(li, lorig, sizeof(li));
	bst_swab_u32s(li, sizeof(li));
	assert_int_equal(li[2], bswap_32(lorig[2]));
	bst_swab_u32s(li, sizeof(li));
	assert_memory_equal(li, lorig, sizeof(li));

	/* And on this host, no swapping: the hash as the library computes it. */
	assert_int_equal(bst_entry_compute_hash(e, BST_HOST_BE, hash), 0);
	assert_memory_equal(hash, orig.hash, sizeof(hash));
	bpfstash_entry_free(e);
}

/* Boot ids, as /proc/sys/kernel/random/boot_id shows them. */
static void test_boot_ids(void **state)
{
	static const char *const bad[] = {
		"", "1192b332-f7ca-4b5b-b15f-fd335b685dd", "1192b332-f7ca-4b5b-b15f-fd335b685ddfx",
		"1192b332+f7ca-4b5b-b15f-fd335b685ddf", "g192b332-f7ca-4b5b-b15f-fd335b685ddf",
	};
	uint8_t id[BPFSTASH_BOOT_ID_SIZE], again[BPFSTASH_BOOT_ID_SIZE];
	char str[BPFSTASH_BOOT_ID_LEN + 1];
	size_t i;

	assert_int_equal(bpfstash_boot_id_parse("1192B332-f7ca-4b5b-b15f-fd335b685ddf", id), 0);
	bpfstash_boot_id_format(id, str);
	assert_string_equal(str, "1192b332-f7ca-4b5b-b15f-fd335b685ddf");
	assert_int_equal(bpfstash_boot_id_parse("1192b332f7ca4b5bb15ffd335b685ddf", again), 0);
	assert_memory_equal(id, again, sizeof(id));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bpfstash_boot_id_parse(bad[i], id), -EINVAL);
	/* This host's, if it has one. */
	if (!access("/proc/sys/kernel/random/boot_id", R_OK))
		assert_int_equal(bpfstash_boot_id_current(id), 0);
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
		cmocka_unit_test(test_error_detail),
		cmocka_unit_test(test_tamper_meta),
		cmocka_unit_test(test_tamper_funcs),
		cmocka_unit_test(test_tamper_jited),
		cmocka_unit_test(test_tamper_line_info),
		cmocka_unit_test(test_tamper_jited_line_info),
		cmocka_unit_test(test_tamper_func_info),
		cmocka_unit_test(test_tamper_btf),
		cmocka_unit_test(test_bad_btf_silent),
		cmocka_unit_test(test_bad_sizes_and_missing_files),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_format_versions),
		cmocka_unit_test(test_byte_order),
		cmocka_unit_test(test_boot_ids),
	};

	return cmocka_run_group_tests_name("entry", tests, NULL, NULL);
}
