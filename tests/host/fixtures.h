/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fixture helpers for the host tests: the entries captured from the kernel
 * in tests/fixtures, listed in tests/fixtures/manifest.  Header-only; every
 * helper fails the running cmocka test on error.
 */
#ifndef BPFSTASH_HOST_FIXTURES_H
#define BPFSTASH_HOST_FIXTURES_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libbpfstash.h"

#ifndef FIXTURES
#error "FIXTURES must name the tests/fixtures directory"
#endif

struct fixture {
	char name[32];
	char hash[BPFSTASH_HEX_LEN + 1];
	unsigned int prog_id;
	int loaded;
};

/* Run a shell command line (printf-style); its exit status, or -1. */
static inline int __attribute__((format(printf, 1, 2))) fixture_sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int st;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	st = system(cmd);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline void fixture_get(const char *name, struct fixture *f)
{
	char line[256], state[16];
	FILE *m = fopen(FIXTURES "/manifest", "r");

	assert_non_null(m);
	while (fgets(line, sizeof(line), m)) {
		if (sscanf(line, "%31s %40s %u %15s", f->name, f->hash, &f->prog_id, state) == 4 &&
		    !strcmp(f->name, name)) {
			f->loaded = !strcmp(state, "loaded");
			fclose(m);
			return;
		}
	}
	fclose(m);
	fail_msg("no fixture %s", name);
}

static inline struct bpfstash_entry *fixture_load(const struct fixture *f)
{
	struct bpfstash_entry *e = NULL;
	struct bpfstash *s;

	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_int_equal(bpfstash_entry_load(s, f->hash, 0, &e), 0);
	bpfstash_close(s);
	return e;
}

static inline void *fixture_read_path(const char *path, size_t *size)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*size = st.st_size;
	return buf;
}

static inline void *fixture_read_file(const char *dir, const char *name, const char *suffix,
				      size_t *size)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
	return fixture_read_path(path, size);
}

static inline void fixture_write_path(const char *path, const void *buf, size_t size)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
}

/* The clocks of fixture_set_times(): seconds since boot, and the boot in real time. */
#define FIXTURE_NS	1000000000ull
#define FIXTURE_EPOCH	(1700000000ull * FIXTURE_NS)

/*
 * Set the lifetime of entry @hash of the tree @dir in its meta: loaded at
 * @load seconds since boot, unloaded at @unload (0: still loaded).
 */
static inline void fixture_set_times(const char *dir, const char *hash, uint64_t load,
				     uint64_t unload)
{
	struct bpfstash_meta *m;
	char path[512];
	size_t size;

	snprintf(path, sizeof(path), "%s/%s/meta", dir, hash);
	m = fixture_read_path(path, &size);
	assert_int_equal(size, sizeof(*m));
	m->load_time = load * FIXTURE_NS;
	m->load_time_real = FIXTURE_EPOCH + load * FIXTURE_NS;
	m->unload_time = unload * FIXTURE_NS;
	m->unload_time_real = unload ? FIXTURE_EPOCH + unload * FIXTURE_NS : 0;
	if (unload)
		m->flags &= ~BPFSTASH_META_LOADED;
	else
		m->flags |= BPFSTASH_META_LOADED;
	fixture_write_path(path, m, size);
	free(m);
}

/* A sparse file of @size bytes. */
static inline void fixture_write_huge(const char *path, size_t size)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* Copy the fixture's entry directory into @dir. */
static inline void fixture_copy(const struct fixture *f, const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp -r '%s/stash/%s' '%s/' && chmod -R u+w '%s'",
		 FIXTURES, f->hash, dir, dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Make @dir a stash holding the fixtures' entries, the format-2 entry of
 * tests/fixtures/format2 (the previous kernel's), and tiny's entry with
 * its format version set to 4, as a later kernel would write it: its
 * name into @newer.  The entry of format 2 into @older.
 */
static inline void fixture_other_formats(char *dir, char newer[BPFSTASH_HEX_LEN + 1],
					 char older[BPFSTASH_HEX_LEN + 1])
{
	struct bpfstash_meta *m;
	struct fixture tiny;
	char path[4200], line[256], name[32];
	size_t size;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(fixture_sh("cp -r '%s/stash/.' '%s/' && chmod -R u+w '%s'", FIXTURES, dir,
				    dir), 0);
	f = fopen(FIXTURES "/format2/manifest", "r");
	assert_non_null(f);
	older[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%31s %40s", name, older) == 2)
			break;
	fclose(f);
	assert_int_equal(fixture_sh("cp -r '%s/format2/%s' '%s/' && chmod -R u+w '%s'", FIXTURES,
				    older, dir, dir), 0);
	fixture_get("tiny", &tiny);
	strcpy(newer, tiny.hash);
	snprintf(path, sizeof(path), "%s/%s/meta", dir, newer);
	m = fixture_read_path(path, &size);
	m->content.version = 4;
	fixture_write_path(path, m, size);
	free(m);
}

static inline void fixture_rmtree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * bpftool's view of a fixture: every instruction address of
 * `bpftool prog dump jited ... linum` (tests/fixtures/bpftool/<name>.linum),
 * as function index and offset, with the line annotation in effect there
 * ("; <source> [file:F line_num:N line_col:C]" above it), if any.
 */
struct linum_row {
	uint32_t func;
	uint32_t off;
	int has_line;
	char file[1024];
	unsigned int line;
	unsigned int col;
	char source[1024];
};

static inline struct linum_row *fixture_linum(const char *name,
					      const struct bpfstash_entry *e, size_t *count)
{
	struct linum_row cur = {}, *rows = NULL;
	char path[512], line[1024];
	size_t n = 0, cap = 0;
	int func = -1;
	FILE *f;

	snprintf(path, sizeof(path), FIXTURES "/bpftool/%s.linum", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		unsigned int off;
		char *tag, *p;
		uint32_t i;

		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!strncmp(line, "bpf_prog_", 9) && len && line[len - 1] == ':') {
			line[len - 1] = '\0';
			func = -1;
			for (i = 0; i < bpfstash_entry_nr_funcs(e); i++)
				if (!strcmp(bpfstash_entry_func_name(e, i), line))
					func = i;
			if (func < 0)
				fail_msg("%s: function %s is not in the entry", path, line);
			memset(&cur, 0, sizeof(cur));
			cur.func = func;
			continue;
		}
		if (!strncmp(line, "; ", 2) && (tag = strstr(line, " [file:"))) {
			*tag = '\0';
			snprintf(cur.source, sizeof(cur.source), "%s", line + 2);
			p = strstr(tag + 1, " line_num:");
			assert_non_null(p);
			*p = '\0';
			snprintf(cur.file, sizeof(cur.file), "%s", tag + 7);
			assert_int_equal(sscanf(p + 1, "line_num:%u line_col:%u]", &cur.line,
						&cur.col), 2);
			cur.has_line = 1;
			continue;
		}
		/* "<spaces><hex offset>:\t<instruction>" */
		p = line + strspn(line, " ");
		if (strspn(p, "0123456789abcdef") && p[strspn(p, "0123456789abcdef")] == ':' &&
		    p[strspn(p, "0123456789abcdef") + 1] == '\t') {
			off = strtoul(p, NULL, 16);
			assert_true(func >= 0);
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				rows = realloc(rows, cap * sizeof(*rows));
				assert_non_null(rows);
			}
			cur.off = off;
			rows[n++] = cur;
		}
	}
	fclose(f);
	assert_true(n > 0);
	*count = n;
	return rows;
}

#endif
