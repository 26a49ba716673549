// SPDX-License-Identifier: GPL-2.0-only
/*
 * The index file's test vectors (tests/vectors): still what mkindex makes
 * of the fixture entries, read by libbpfstash to the rows their text
 * gives, damaged copies refused with the reason, grown records read, and
 * an "index" file in a copy of a stash never believed.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "libbpfstash.h"
#include "internal.h"

#define VECTORS FIXTURES "/../vectors"

/* All of @f, which is closed by @close. */
static void *read_stream(FILE *f, int (*close)(FILE *), size_t *size)
{
	size_t cap = 4096, len = 0, n;
	char *p = malloc(cap);

	assert_non_null(f);
	assert_non_null(p);
	while ((n = fread(p + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			p = realloc(p, cap *= 2);
			assert_non_null(p);
		}
	}
	assert_int_equal(close(f), 0);
	*size = len;
	return p;
}

static void *slurp(const char *path, size_t *size)
{
	return read_stream(fopen(path, "rb"), fclose, size);
}

/* What @cmd prints; it must succeed. */
static void *run(const char *cmd, size_t *size)
{
	return read_stream(popen(cmd, "r"), pclose, size);
}

/* The vectors are what mkindex makes of the entries now. */
static void test_vectors_current(void **state)
{
	size_t a, b;
	void *x, *y;

	x = run(MKINDEX " " FIXTURES "/stash", &a);
	y = slurp(VECTORS "/index", &b);
	assert_int_equal(a, b);
	assert_memory_equal(x, y, a);
	free(x);
	free(y);
	x = run(MKINDEX " -t " FIXTURES "/stash", &a);
	y = slurp(VECTORS "/index.txt", &b);
	assert_int_equal(a, b);
	assert_memory_equal(x, y, a);
	free(x);
	free(y);
}

/* Every field the library reads, against index.txt's text. */
static void check_rows(const void *buf, size_t size)
{
	struct bst_index_file f;
	unsigned int i = 0, j = 0;
	char line[1024];
	FILE *t;

	assert_int_equal(bst_index_file_check(buf, size, &f), 0);
	assert_int_equal(f.generation, 0);
	assert_int_equal(f.flags, 0);
	t = fopen(VECTORS "/index.txt", "r");
	assert_non_null(t);
	while (fgets(line, sizeof(line), t)) {
		unsigned long long lt, ltr, ut, utr, addr;
		unsigned int n, fl, id, kind, type, uid, first, nr, e, fn, len, off;
		char hex[41], name[32], tag[17], fname[256], h[41];

		if (!strncmp(line, "header", 6)) {
			unsigned int ne, nrg, nn;

			assert_int_equal(sscanf(line, "header version 1 generation 0 flags 0 entries %u ranges %u names %u",
						&ne, &nrg, &nn), 3);
			assert_int_equal(f.nr_entries, ne);
			assert_int_equal(f.nr_ranges, nrg);
			assert_int_equal(f.names_size, nn);
		} else if (!strncmp(line, "entry", 5)) {
			const struct bpfstash_index_entry *x = bst_index_file_entry(&f, i);

			assert_int_equal(sscanf(line, "entry %u %40s flags %u prog_id %u image_kind %u prog_type %u uid %u load_time %llu load_time_real %llu unload_time %llu unload_time_real %llu name %31s tag %16s first_range %u nr_ranges %u",
						&n, hex, &fl, &id, &kind, &type, &uid, &lt, &ltr, &ut,
						&utr, name, tag, &first, &nr), 15);
			assert_int_equal(n, i);
			bst_hex(h, x->hash, sizeof(x->hash));
			assert_string_equal(h, hex);
			assert_int_equal(le32toh(x->flags), fl);
			assert_int_equal(le32toh(x->prog_id), id);
			assert_int_equal(le32toh(x->image_kind), kind);
			assert_int_equal(le32toh(x->prog_type), type);
			assert_int_equal(le32toh(x->uid), uid);
			assert_int_equal(le64toh(x->load_time), lt);
			assert_int_equal(le64toh(x->load_time_real), ltr);
			assert_int_equal(le64toh(x->unload_time), ut);
			assert_int_equal(le64toh(x->unload_time_real), utr);
			assert_int_equal(strncmp(x->name, name, sizeof(x->name)), 0);
			bst_hex(h, x->tag, sizeof(x->tag));
			assert_string_equal(h, tag);
			assert_int_equal(le32toh(x->first_range), first);
			assert_int_equal(le32toh(x->nr_ranges), nr);
			i++;
		} else if (!strncmp(line, "range", 5)) {
			const struct bpfstash_index_range *r = bst_index_file_range(&f, j);

			assert_int_equal(sscanf(line, "range %u entry %u func %u addr %llx len %u name_off %u name %255s",
						&n, &e, &fn, &addr, &len, &off, fname), 7);
			assert_int_equal(n, j);
			assert_int_equal(le32toh(r->entry), e);
			assert_int_equal(le32toh(r->func), fn);
			assert_int_equal(le64toh(r->addr), addr);
			assert_int_equal(le32toh(r->len), len);
			assert_int_equal(le32toh(r->name_off), off);
			assert_string_equal(f.names + off, fname);
			j++;
		}
	}
	fclose(t);
	assert_int_equal(i, f.nr_entries);
	assert_int_equal(j, f.nr_ranges);
}

static void test_library_reads_vectors(void **state)
{
	size_t size;
	void *buf = slurp(VECTORS "/index", &size);

	check_rows(buf, size);
	free(buf);
}

/*
 * A later kernel's file: a longer header, longer records, the new bytes
 * not zero.  The library reads the fields it knows at the sizes given.
 */
static void test_grown_records_read(void **state)
{
	struct bpfstash_index_header *h;
	const struct bst_index_file *f;
	struct bst_index_file old;
	size_t size, nsize, hs, es, rs, i;
	uint8_t *buf = slurp(VECTORS "/index", &size), *g, *p;

	assert_int_equal(bst_index_file_check(buf, size, &old), 0);
	f = &old;
	hs = sizeof(*h) + 16;
	es = sizeof(struct bpfstash_index_entry) + 8;
	rs = sizeof(struct bpfstash_index_range) + 24;
	nsize = hs + f->nr_entries * es + f->nr_ranges * rs + f->names_size;
	g = malloc(nsize);
	memset(g, 0xa5, nsize);
	memcpy(g, buf, sizeof(*h));
	h = (void *)g;
	h->header_size = htole32(hs);
	h->entry_size = htole32(es);
	h->range_size = htole32(rs);
	h->size = htole64(nsize);
	p = g + hs;
	for (i = 0; i < f->nr_entries; i++, p += es)
		memcpy(p, bst_index_file_entry(f, i), sizeof(struct bpfstash_index_entry));
	for (i = 0; i < f->nr_ranges; i++, p += rs)
		memcpy(p, bst_index_file_range(f, i), sizeof(struct bpfstash_index_range));
	memcpy(p, f->names, f->names_size);
	check_rows(g, nsize);
	free(g);
	free(buf);
}

struct damage {
	const char *what;
	size_t off;		/* of the __le32 to set */
	uint32_t value;
	int err;
	const char *detail;	/* in bpfstash_error_detail() */
};

#define HDR(field) offsetof(struct bpfstash_index_header, field)

static void test_damage_refused(void **state)
{
	size_t size, i, e0 = sizeof(struct bpfstash_index_header);
	size_t r0 = e0 + 3 * sizeof(struct bpfstash_index_entry);
	const struct damage d[] = {
		{ "magic", HDR(magic), 0x12345678, -EBADMSG, "magic" },
		{ "a newer version", HDR(version), 2, -EPROTONOSUPPORT,
		  "format 2, this reader knows 1" },
		{ "a short header", HDR(header_size), 64, -EBADMSG, "header of 64 bytes" },
		{ "short records", HDR(entry_size), 8, -EBADMSG, "records of 8" },
		{ "one entry too many", HDR(nr_entries), 4, -EBADMSG, "add up to" },
		{ "ranges past the file", HDR(nr_ranges), 0x10000000, -EBADMSG, "add up to" },
		{ "size", HDR(size), 1, -EBADMSG, "it says 1" },
		{ "an entry's ranges out of order",
		  e0 + sizeof(struct bpfstash_index_entry) +
		  offsetof(struct bpfstash_index_entry, first_range), 0, -EBADMSG,
		  "entry 1: ranges 0..+1" },
		{ "an entry of no function", e0 + offsetof(struct bpfstash_index_entry, nr_ranges),
		  0, -EBADMSG, "entry 0: ranges" },
		{ "a range's entry", r0 + offsetof(struct bpfstash_index_range, entry), 7,
		  -EBADMSG, "range 0: entry 7 of 3" },
		{ "a range's function", r0 + offsetof(struct bpfstash_index_range, func), 2,
		  -EBADMSG, "range 0: function 2" },
		{ "a name past the names", r0 + offsetof(struct bpfstash_index_range, name_off),
		  352, -EBADMSG, "range 0: name at 352" },
	};
	uint8_t *buf = slurp(VECTORS "/index", &size), *c = malloc(size);
	struct bst_index_file f;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		uint32_t v = htole32(d[i].value);

		memcpy(c, buf, size);
		memcpy(c + d[i].off, &v, sizeof(v));
		if (bst_index_file_check(c, size, &f) != d[i].err ||
		    !strstr(bpfstash_error_detail(), d[i].detail))
			fail_msg("%s: %s, not \"%s\"", d[i].what, bpfstash_error_detail(),
				 d[i].detail);
	}
	/* The names' last NUL gone: the last name does not end in the file. */
	memcpy(c, buf, size);
	memset(c + size - 8, 'x', 8);
	assert_int_equal(bst_index_file_check(c, size, &f), -EBADMSG);
	assert_non_null(strstr(bpfstash_error_detail(), "range 8: name at"));
	/* Every truncation is refused, none read past the end. */
	for (i = 0; i < size; i++) {
		uint8_t *t = malloc(i ? i : 1);

		memcpy(t, buf, i);
		assert_int_not_equal(bst_index_file_check(t, i, &f), 0);
		free(t);
	}
	free(c);
	free(buf);
}

/* A copy of a stash is no mounted stash: an "index" file in it means nothing. */
static void test_copy_index_ignored(void **state)
{
	char dir[] = "/tmp/bpfstash-index-XXXXXX", cmd[512];
	struct bpfstash_index *x;
	struct bpfstash *s;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r %s/stash/. %s/", FIXTURES, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/index", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fputs("not an index", f);
	fclose(f);
	assert_int_equal(bpfstash_open(dir, &s), 0);
	assert_int_equal(bpfstash_index_open(s, &x), 0);
	assert_int_equal(bpfstash_index_nr_entries(x), 3);
	assert_int_equal(bpfstash_index_nr_ranges(x), 9);
	bpfstash_index_free(x);
	bpfstash_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The one-open reader: the whole file, and a file longer than it says refused. */
static void test_read_index_file(void **state)
{
	char dir[] = "/tmp/bpfstash-index-XXXXXX", path[64];
	size_t size, got;
	void *want = slurp(VECTORS "/index", &size), *buf;
	int fd = open(VECTORS, O_RDONLY | O_DIRECTORY);
	FILE *f;

	assert_true(fd >= 0);
	assert_int_equal(bst_read_index_file(fd, &buf, &got), 0);
	assert_int_equal(got, size);
	assert_memory_equal(buf, want, size);
	free(buf);
	close(fd);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/index", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(want, 1, size, f);
	fputc(0, f);		/* one byte more than the header says */
	fclose(f);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(bst_read_index_file(fd, &buf, &got), 0);
	assert_int_equal(got, size + 1);
	assert_int_equal(bst_index_file_check(buf, got, &(struct bst_index_file){}), -EBADMSG);
	free(buf);
	f = fopen(path, "w");
	fwrite(want, 1, 40, f);	/* not even a header */
	fclose(f);
	assert_int_equal(bst_read_index_file(fd, &buf, &got), -EBADMSG);
	assert_non_null(strstr(bpfstash_error_detail(), "too short for a header"));
	close(fd);
	unlink(path);
	rmdir(dir);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_current),
		cmocka_unit_test(test_library_reads_vectors),
		cmocka_unit_test(test_grown_records_read),
		cmocka_unit_test(test_damage_refused),
		cmocka_unit_test(test_copy_index_ignored),
		cmocka_unit_test(test_read_index_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
