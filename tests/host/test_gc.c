// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc on copies of a stash: which entries each limit removes, to
 * the second; that a dry run says exactly what the real run then does;
 * that loaded programs' entries survive; the archive round trip (and
 * debuginfod serving it); and that a run killed at any point, then run
 * again, ends exactly where an uninterrupted run ends, with nothing lost.
 *
 * Trees are made from the kernel's fixtures: an entry of tests/fixtures
 * "moved" to another load address (every function's address shifted) is
 * another entry with another hash, as in the kernel, with the load and
 * unload times, state and size each test wants written into its meta.
 * The tool runs as a separate process (--now pins the clock, --json gives
 * what it did), so exit statuses and kills are real.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libbpfstash.h"
#include "fixtures.h"

#define GC_BIN FIXTURES "/../../build/bpfstash-gc/bpfstash-gc"
#define NOW 1800000000LL		/* every run's --now */
#define NOW_ARG "1800000000"
#define SEC 1000000000ULL
#define LOADED 0x7fffffff		/* spec.unload: the program is loaded */

/* ---- running the tool ---- */

struct run {
	int status;		/* exit status, or 128 + signal */
	char *out, *err;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	*r = (struct run){};
}

static void drain(int fd, char **buf, size_t *len, size_t *cap, bool *open)
{
	ssize_t n;

	if (*len + 4096 > *cap) {
		*cap = (*cap + 4096) * 2;
		*buf = realloc(*buf, *cap);
		assert_non_null(*buf);
	}
	n = read(fd, *buf + *len, *cap - *len - 1);
	if (n <= 0)
		*open = false;
	else
		*len += n;
	(*buf)[*len] = '\0';
}

/* Start the tool with @argv (argv[0] is ignored); stdout/stderr to pipes. */
static pid_t spawn(char *const argv[], const char *kill_at, const char *journal,
		   int *out_fd, int *err_fd)
{
	int po[2], pe[2];
	pid_t pid;

	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		unsetenv("JOURNAL_STREAM");
		unsetenv("BPFSTASH_GC_KILL_AT");
		if (kill_at)
			setenv("BPFSTASH_GC_KILL_AT", kill_at, 1);
		if (journal) {
			struct stat st;
			char v[64];

			fstat(2, &st);
			snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
				 (unsigned long long)st.st_ino);
			setenv("JOURNAL_STREAM", v, 1);
		}
		execv(GC_BIN, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	*out_fd = po[0];
	*err_fd = pe[0];
	return pid;
}

static void collect(struct run *r, pid_t pid, int ofd, int efd)
{
	size_t olen = 0, ocap = 4096, elen = 0, ecap = 4096;
	bool oo = true, eo = true;
	int status;

	r->out = calloc(1, ocap);
	r->err = calloc(1, ecap);
	assert_true(r->out && r->err);
	while (oo || eo) {
		struct pollfd p[2] = { { oo ? ofd : -1, POLLIN, 0 }, { eo ? efd : -1, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents)
			drain(ofd, &r->out, &olen, &ocap, &oo);
		if (p[1].revents)
			drain(efd, &r->err, &elen, &ecap, &eo);
	}
	close(ofd);
	close(efd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void run_argv(struct run *r, const char *kill_at, const char *journal, char **argv)
{
	int ofd, efd;
	pid_t pid;

	pid = spawn(argv, kill_at, journal, &ofd, &efd);
	collect(r, pid, ofd, efd);
}

/* Run the tool with the arguments given, NULL-terminated. */
static void run_gc(struct run *r, ...)
{
	char *argv[64];
	va_list ap;
	int n = 0;

	argv[n++] = "bpfstash-gc";
	va_start(ap, r);
	while ((argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	assert_true(n < 64);
	run_argv(r, NULL, NULL, argv);
}

/* ---- JSON, as bpfstash-gc writes it ---- */

static size_t json_names(const char *json, const char *action, char (*names)[41], size_t max)
{
	char pat[64];
	const char *p = json;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "{\"action\":\"%s\",\"name\":\"", action);
	while ((p = strstr(p, pat))) {
		p += strlen(pat);
		assert_true(n < max);
		memcpy(names[n], p, 40);
		names[n][40] = '\0';
		n++;
	}
	return n;
}

static unsigned long long json_u64(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		fail_msg("no \"%s\" in %s", key, json);
	p += strlen(pat);
	/* ns times are strings ("now_ns":"1796..."), counts numbers. */
	if (strlen(key) > 3 && !strcmp(key + strlen(key) - 3, "_ns")) {
		if (*p != '"')
			fail_msg("\"%s\" is not a string in %s", key, json);
		p++;
	}
	return strtoull(p, NULL, 10);
}

/* ---- trees ---- */

struct spec {
	long long load;		/* seconds before NOW (positive: in the past) */
	long long unload;	/* seconds before NOW, or LOADED */
	unsigned long long bytes;	/* meta.bytes; 0: the fixture's */
	const char *link_target;	/* meta.link_target; NULL: none */
};

struct tree {
	char dir[64];
	size_t n;
	char (*names)[41];	/* in spec order */
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void write_file_at(const char *dir, const char *file, const void *buf, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fixture_write_path(path, buf, size);
}

/*
 * A copy of @base, every function moved by @variant * 64K: a new entry,
 * named by its new hash, with @sp's times and size.  Written into @dir;
 * its name into @name.
 */
static void make_entry(const char *dir, const struct bpfstash_entry *base, unsigned int variant,
		       const struct spec *sp, char name[41])
{
	const struct bpfstash_meta *m0 = bpfstash_entry_meta(base);
	struct bpfstash_meta m = *m0;
	struct bpfstash_entry *e;
	struct bpfstash_func *f;
	char tmp[PATH_MAX], edir[PATH_MAX], final[PATH_MAX];
	uint8_t hash[BPFSTASH_HASH_SIZE];
	size_t funcs_size = m.content.funcs_size, size;
	uint8_t *funcs = malloc(funcs_size);
	uint32_t i;
	int dfd;

	assert_non_null(funcs);
	memcpy(funcs, bpfstash_entry_func(base, 0), funcs_size);
	f = (struct bpfstash_func *)funcs;
	for (i = 0; i < m.content.nr_funcs; i++)
		f[i].addr += (uint64_t)(variant + 1) << 16;

	snprintf(tmp, sizeof(tmp), "%s/.make", dir);
	assert_int_equal(mkdir(tmp, 0755), 0);
	snprintf(edir, sizeof(edir), "%s/%s", tmp, bpfstash_entry_name(base));
	assert_int_equal(mkdir(edir, 0755), 0);
	write_file_at(edir, "meta", m0, sizeof(*m0));
	write_file_at(edir, "funcs", funcs, funcs_size);
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++) {
		const void *b = bpfstash_entry_blob(base, i, &size);

		write_file_at(edir, bpfstash_blob_file(i), b ? b : "", size);
	}
	dfd = open(tmp, O_RDONLY | O_DIRECTORY);
	assert_int_equal(bpfstash_entry_load_at(dfd, bpfstash_entry_name(base), 0, &e), 0);
	assert_int_equal(bpfstash_entry_compute_hash(e, hash), 0);
	bpfstash_entry_free(e);
	close(dfd);

	memcpy(m.hash, hash, sizeof(hash));
	m.load_time_real = (NOW - sp->load) * SEC + variant % 1000;	/* + a few ns */
	if (sp->unload == LOADED) {
		m.flags = BPFSTASH_META_LOADED;
		m.unload_time_real = m.unload_time = 0;
	} else {
		m.flags = 0;
		m.unload_time_real = (NOW - sp->unload) * SEC + variant % 1000;
		m.unload_time = m.load_time + (sp->load - sp->unload) * SEC;
	}
	if (sp->bytes)
		m.bytes = sp->bytes;
	if (sp->link_target) {
		m.link_type = htole32(BPF_LINK_TYPE_PERF_EVENT);
		m.link_id = htole32(variant + 1);
		memset(m.link_target, 0, sizeof(m.link_target));
		memcpy(m.link_target, sp->link_target,
		       strnlen(sp->link_target, sizeof(m.link_target) - 1));
	}
	write_file_at(edir, "meta", &m, sizeof(m));
	bpfstash_hash_format(hash, name);
	snprintf(final, sizeof(final), "%s/%s", dir, name);
	assert_int_equal(rename(edir, final), 0);
	assert_int_equal(rmdir(tmp), 0);
	free(funcs);
}

static struct bpfstash_entry *load_fixture(const char *which)
{
	struct fixture f;

	fixture_get(which, &f);
	return fixture_load(&f);
}

/*
 * Trees live in tmpfs where there is one: the tool fsyncs every archive
 * and directory, which on a disk measures the disk, not the tool.
 */
static const char *tmp_base(void)
{
	return access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
}

/* A tree of @n entries made from the fixture "tiny", one per spec. */
static void tree_make(struct tree *t, const struct spec *specs, size_t n)
{
	struct bpfstash_entry *tiny = load_fixture("tiny");
	size_t i;

	snprintf(t->dir, sizeof(t->dir), "%s/bpfstash-gc-test-XXXXXX", tmp_base());
	assert_non_null(mkdtemp(t->dir));
	t->n = n;
	t->names = calloc(n ? n : 1, sizeof(*t->names));
	assert_non_null(t->names);
	for (i = 0; i < n; i++)
		make_entry(t->dir, tiny, i, &specs[i], t->names[i]);
	bpfstash_entry_free(tiny);
}

static void tree_free(struct tree *t)
{
	fixture_rmtree(t->dir);
	free(t->names);
}

/* The entry names in @dir, sorted. */
static size_t list_entries(const char *dir, char (*names)[41], size_t max)
{
	struct bpfstash *s;
	char **v;
	size_t n, i;

	assert_int_equal(bpfstash_open(dir, &s), 0);
	assert_int_equal(bpfstash_list(s, &v, &n), 0);
	assert_true(n <= max);
	for (i = 0; i < n; i++)
		memcpy(names[i], v[i], 41);
	bpfstash_names_free(v);
	bpfstash_close(s);
	return n;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

static bool tree_has(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

/*
 * Exactly the entries of @t whose indexes are in @gone (terminated by -1)
 * are missing from the tree, and @json reports exactly those as removed.
 */
static void assert_removed(const struct tree *t, const char *json, const char *action,
			   const int *gone)
{
	char (*rep)[41] = calloc(t->n + 1, 41);
	size_t nrep, want = 0, i;

	assert_non_null(rep);
	for (i = 0; i < t->n; i++) {
		bool expect_gone = false;
		const int *g;

		for (g = gone; *g >= 0; g++)
			expect_gone |= (size_t)*g == i;
		want += expect_gone;
		if (strcmp(action, "would_remove") && tree_has(t->dir, t->names[i]) == expect_gone)
			fail_msg("entry %zu (%s) should %s", i, t->names[i],
				 expect_gone ? "be gone" : "be there");
	}
	nrep = json_names(json, action, rep, t->n + 1);
	if (nrep != want)
		fail_msg("%s: %zu entries reported, %zu expected: %s", action, nrep, want, json);
	for (i = 0; i < nrep; i++) {
		const int *g;
		bool ok = false;

		for (g = gone; *g >= 0; g++)
			ok |= !strcmp(rep[i], t->names[*g]);
		if (!ok)
			fail_msg("%s reported for %s, not expected", action, rep[i]);
	}
	free(rep);
}

/* ---- tests ---- */

static void test_usage_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "--max-age", "7x" }, { "--max-age", "" }, { "--max-age", "-1d" },
		{ "--max-age", "1h 30" }, { "--max-age", "1.d" }, { "--max-age", "d" },
		{ "--max-age", "99999999999999999999d" }, { "--max-age", "300000y" },
		{ "--max-size", "12Q" }, { "--max-size", "1.5.5G" }, { "--max-size", "-5M" },
		{ "--max-size", "M" }, { "--max-size", "200%" }, { "--max-size", "16E" },
		{ "--max-entries", "1.5" }, { "--max-entries", "ten" }, { "--max-entries", "-1" },
		{ "--age-by", "birth" }, { "--interval", "0" }, { "--interval", "soon" },
		{ "--archive-max-size", "10%" }, { "--now", "yesterday" },
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", bad[i][0], bad[i][1], NULL);
		if (r.status != 64 || !strstr(r.err, bad[i][0]))
			fail_msg("%s '%s': exit %d, stderr: %s", bad[i][0], bad[i][1], r.status,
				 r.err);
		assert_non_null(strstr(r.err, "--help"));
		assert_string_equal(r.out, "");
		run_free(&r);
	}
	/* Combinations that make no sense, and junk. */
	run_gc(&r, "--once", "--interval", "1h", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "--once and --interval"));
	run_free(&r);
	run_gc(&r, "--archive-max-size", "1G", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "needs --archive"));
	run_free(&r);
	run_gc(&r, "--bogus", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
	run_gc(&r, "--root", FIXTURES "/stash", "stray", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "stray"));
	run_free(&r);
	/* --json: a usage error is still an object on stdout. */
	run_gc(&r, "--json", "--max-size", "lots", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.out, "\"exit\":64"));
	run_free(&r);
	/* A percentage is of a mount's limit: a copy has none. */
	run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--max-size", "50%", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "percentage"));
	run_free(&r);
}

/* What the units mean: the limits the tool reports back. */
static void test_units(void **state)
{
	static const struct {
		const char *opt, *arg, *key;
		unsigned long long want;
	} ok[] = {
		{ "--max-age", "7d", "max_age_ns", 7 * 86400 * SEC },
		{ "--max-age", "12h", "max_age_ns", 12 * 3600 * SEC },
		{ "--max-age", "30min", "max_age_ns", 1800 * SEC },
		{ "--max-age", "1s", "max_age_ns", SEC },
		{ "--max-age", "90", "max_age_ns", 90 * SEC },
		{ "--max-age", "1h 30min", "max_age_ns", 5400 * SEC },
		{ "--max-age", "1.5h", "max_age_ns", 5400 * SEC },
		{ "--max-age", "2w", "max_age_ns", 14 * 86400 * SEC },
		{ "--max-age", "500ms", "max_age_ns", SEC / 2 },
		{ "--max-age", "0", "max_age_ns", 0 },
		{ "--max-size", "512M", "max_bytes", 512ULL << 20 },
		{ "--max-size", "1G", "max_bytes", 1ULL << 30 },
		{ "--max-size", "4096", "max_bytes", 4096 },
		{ "--max-size", "1.5K", "max_bytes", 1536 },
		{ "--max-size", "2KiB", "max_bytes", 2048 },
		{ "--max-size", "0", "max_bytes", 0 },
		{ "--max-entries", "100000", "max_entries", 100000 },
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--json", "--now", NOW_ARG,
		       ok[i].opt, ok[i].arg, NULL);
		if (r.status != 0 && r.status != 73)
			fail_msg("%s '%s': exit %d: %s", ok[i].opt, ok[i].arg, r.status, r.err);
		if (json_u64(r.out, ok[i].key) != ok[i].want)
			fail_msg("%s '%s': %s = %llu, want %llu", ok[i].opt, ok[i].arg, ok[i].key,
				 json_u64(r.out, ok[i].key), ok[i].want);
		run_free(&r);
	}
}

static void test_bad_roots(void **state)
{
	char dir[] = "/tmp/bpfstash-gc-root-XXXXXX", path[PATH_MAX], link[PATH_MAX];
	struct run r;
	int fd;

	assert_non_null(mkdtemp(dir));
	/* Not a stash: files, a non-entry directory, an entry-named dir without meta. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fixture_write_path(path, "x", 1);
	snprintf(path, sizeof(path), "%s/0123456789abcdef0123456789abcdef01234567", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	run_gc(&r, "--root", dir, "--max-entries", "0", "--max-age", "1s", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "refusing --root"));
	run_free(&r);
	assert_true(tree_has(dir, "notes.txt"));
	assert_true(tree_has(dir, "0123456789abcdef0123456789abcdef01234567"));

	/* A symbolic link to a real stash copy is not followed. */
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(FIXTURES "/stash", link), 0);
	run_gc(&r, "--root", link, "--dry-run", "--max-entries", "1", NULL);
	assert_int_equal(r.status, 64);
	assert_non_null(strstr(r.err, "symbolic link"));
	run_free(&r);

	/* A file, and nothing at all. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	run_gc(&r, "--root", path, "--dry-run", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/absent", dir);
	run_gc(&r, "--root", path, "--dry-run", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);

	/* An empty directory is no stash; with the marker, it is an empty one. */
	snprintf(path, sizeof(path), "%s/empty", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	run_gc(&r, "--root", path, "--max-entries", "1", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
	snprintf(link, sizeof(link), "%s/.bpfstash-copy", path);
	fd = open(link, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	run_gc(&r, "--root", path, "--max-entries", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "removed 0 of 0 entries"));
	run_free(&r);
	fixture_rmtree(dir);
}

/* --max-age: strictly older than the cutoff goes; ±1 s around it. */
static void test_age_boundaries(void **state)
{
	/* The first one is made with no extra nanosecond: exactly 1 h. */
	static const struct spec specs[] = {
		{ 3600, 3500 },		/* 0: exactly 1 h: stays */
		{ 3601, 3500 },		/* 1: 1 h + 1 s (- 1 ns): goes */
		{ 7200, 7000 },		/* 2: 2 h */
		{ 3599, 3500 },		/* 3: 1 h - 1 s: stays */
		{ 10, 5 },		/* 4 */
		{ 100000, LOADED },	/* 5: old, but loaded */
	};
	static const int gone[] = { 1, 2, -1 };
	struct tree t;
	struct run r;

	tree_make(&t, specs, 6);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1h", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_removed(&t, r.out, "remove", gone);
	assert_int_equal(json_u64(r.out, "kept_live"), 1);
	assert_int_equal(json_u64(r.out, "entries_after"), 4);
	run_free(&r);
	/* Again: nothing more to do. */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1h", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "removed"), 0);
	run_free(&r);
	/* One nanosecond later, entry 0 is older than 1 h. */
	run_gc(&r, "--root", t.dir, "--now", "1800000000.000000001", "--max-age", "1h", "--json",
	       NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "removed"), 1);
	assert_non_null(strstr(r.out, t.names[0]));
	assert_false(tree_has(t.dir, t.names[0]));
	run_free(&r);
	/* One second later, entry 3 (1 h - 1 s + 3 ns) is still not. */
	run_gc(&r, "--root", t.dir, "--now", "1800000001", "--max-age", "1h", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "removed"), 0);
	assert_true(tree_has(t.dir, t.names[3]));
	run_free(&r);
	tree_free(&t);
}

/* --age-by unload and access age by those times, not the load time. */
static void test_age_by(void **state)
{
	static const struct spec specs[] = {
		{ 7200, 60 },		/* 0: loaded long ago, unloaded a minute ago */
		{ 3000, 2000 },		/* 1 */
		{ 9000, 8000 },		/* 2 */
		{ 100, LOADED },	/* 3 */
	};
	struct timespec ts[2];
	char path[PATH_MAX];
	struct tree t;
	struct run r;

	tree_make(&t, specs, 4);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "30min", "--age-by", "unload",
	       "--dry-run", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_removed(&t, r.out, "would_remove", (const int[]){ 1, 2, -1 });
	run_free(&r);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "30min", "--age-by", "load",
	       "--dry-run", "--json", NULL);
	assert_removed(&t, r.out, "would_remove", (const int[]){ 0, 1, 2, -1 });
	run_free(&r);

	/* access: the entry directory's atime; only entry 2 was read lately. */
	for (int i = 0; i < 4; i++) {
		ts[0] = (struct timespec){ .tv_sec = NOW - (i == 2 ? 60 : 4000) };
		ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
		snprintf(path, sizeof(path), "%s/%s", t.dir, t.names[i]);
		assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
	}
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1h", "--age-by", "access",
	       "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_removed(&t, r.out, "remove", (const int[]){ 0, 1, -1 });
	assert_int_equal(json_u64(r.out, "kept_live"), 1);
	run_free(&r);
	tree_free(&t);
}

/* Ten entries of 1000 bytes, oldest first: --max-size around 5000. */
static const struct spec ten[] = {
	{ 1000, 900, 1000 }, { 900, 800, 1000 }, { 800, 700, 1000 }, { 700, 600, 1000 },
	{ 600, 500, 1000 }, { 500, 400, 1000 }, { 400, 300, 1000 }, { 300, 200, 1000 },
	{ 200, 100, 1000 }, { 100, 50, 1000 },
};

static void test_size_policy(void **state)
{
	static const struct {
		const char *max;
		int removed;
	} cases[] = {
		{ "5001", 5 }, { "5000", 5 }, { "4999", 6 }, { "10000", 0 }, { "9999", 1 },
		{ "0", 0 }, { "1", 10 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int gone[11], k;
		struct tree t;
		struct run r;

		tree_make(&t, ten, 10);
		for (k = 0; k < cases[i].removed; k++)
			gone[k] = k;
		gone[k] = -1;
		run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-size", cases[i].max,
		       "--json", NULL);
		assert_int_equal(r.status, 0);
		assert_removed(&t, r.out, "remove", gone);
		assert_int_equal(json_u64(r.out, "bytes_after"), 10000 - 1000 * cases[i].removed);
		assert_int_equal(json_u64(r.out, "removed_bytes"), 1000 * cases[i].removed);
		run_free(&r);
		tree_free(&t);
	}
}

static void test_count_policy(void **state)
{
	static const struct {
		const char *max;
		int removed;
	} cases[] = { { "3", 7 }, { "10", 0 }, { "9", 1 }, { "11", 0 }, { "1", 9 }, { "0", 0 } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int gone[11], k;
		struct tree t;
		struct run r;

		tree_make(&t, ten, 10);
		for (k = 0; k < cases[i].removed; k++)
			gone[k] = k;
		gone[k] = -1;
		run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", cases[i].max,
		       "--json", NULL);
		assert_int_equal(r.status, 0);
		assert_removed(&t, r.out, "remove", gone);
		assert_int_equal(json_u64(r.out, "entries_after"), 10 - cases[i].removed);
		run_free(&r);
		tree_free(&t);
	}
}

/* All three at once: the oldest go until every one holds. */
static void test_all_three(void **state)
{
	static const struct {
		const char *age, *size, *count;
		int removed;
	} cases[] = {
		/* age alone: 2 (older than 801 s), size: 3, count: 4 -> 4 */
		{ "801s", "7000", "6", 4 },
		/* age: 5, size: 3, count: 4 -> 5 */
		{ "501s", "7000", "6", 5 },
		/* age: 0, size: 6, count: 1 -> 6 */
		{ "1d", "4000", "9", 6 },
		/* each alone would do nothing */
		{ "2000s", "10000", "10", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int gone[11], k;
		struct tree t;
		struct run r;

		tree_make(&t, ten, 10);
		for (k = 0; k < cases[i].removed; k++)
			gone[k] = k;
		gone[k] = -1;
		run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", cases[i].age,
		       "--max-size", cases[i].size, "--max-entries", cases[i].count, "--json", NULL);
		assert_int_equal(r.status, 0);
		assert_removed(&t, r.out, "remove", gone);
		run_free(&r);
		tree_free(&t);
	}
}

/* Equal times: by name, so that every run picks the same ones. */
static void test_ties_by_name(void **state)
{
	static const struct spec same[] = {
		{ 500, 400, 1000 }, { 500, 400, 1000 }, { 500, 400, 1000 }, { 500, 400, 1000 },
	};
	char sorted[4][41], (*rep)[41];
	struct tree t;
	struct run r;
	size_t n;

	tree_make(&t, same, 4);
	/* make_entry adds the variant's number in ns: make them equal to the ns. */
	for (int i = 0; i < 4; i++) {
		char path[PATH_MAX];
		struct bpfstash_meta *m;
		size_t size;

		snprintf(path, sizeof(path), "%s/%s/meta", t.dir, t.names[i]);
		m = fixture_read_path(path, &size);
		m->load_time_real = (NOW - 500) * SEC;
		fixture_write_path(path, m, size);
		free(m);
		memcpy(sorted[i], t.names[i], 41);
	}
	qsort(sorted, 4, 41, cmp_name);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", "2", "--json", NULL);
	assert_int_equal(r.status, 0);
	rep = calloc(4, 41);
	n = json_names(r.out, "remove", rep, 4);
	assert_int_equal(n, 2);
	assert_string_equal(rep[0], sorted[0]);
	assert_string_equal(rep[1], sorted[1]);
	assert_true(tree_has(t.dir, sorted[2]) && tree_has(t.dir, sorted[3]));
	free(rep);
	run_free(&r);
	tree_free(&t);
}

static long long rnd(unsigned int *seed, long long lo, long long hi)
{
	return lo + rand_r(seed) % (hi - lo + 1);
}

/* A dry run removes nothing and reports what the real run then removes. */
static void test_dry_run_matches(void **state)
{
	char (*before)[41], (*after)[41], (*dry)[41], (*real)[41], arch[PATH_MAX];
	struct spec specs[60] = {};
	unsigned int seed = 4242;
	size_t nb, na, nd, nr, i, j;
	struct tree t;
	struct run r;

	for (i = 0; i < 60; i++) {
		specs[i].load = rnd(&seed, 10, 20000);
		specs[i].unload = i % 9 == 4 ? LOADED : specs[i].load - rnd(&seed, 1, 9);
		specs[i].bytes = rnd(&seed, 500, 5000);
	}
	tree_make(&t, specs, 60);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);
	before = calloc(61, 41);
	after = calloc(61, 41);
	dry = calloc(61, 41);
	real = calloc(61, 41);

	nb = list_entries(t.dir, before, 61);
	assert_int_equal(nb, 60);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "4h", "--max-size", "80K",
	       "--max-entries", "25", "--archive", arch, "--dry-run", "--json", NULL);
	assert_int_equal(r.status, 0);
	nd = json_names(r.out, "would_remove", dry, 61);
	assert_int_equal(json_names(r.out, "would_archive", after, 61), nd);
	assert_true(nd > 20);	/* the limits do bite */
	assert_int_equal(json_u64(r.out, "removed"), nd);
	run_free(&r);
	/* Nothing changed: same entries, no marker, no archive directory. */
	na = list_entries(t.dir, after, 61);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb * 41);
	assert_false(tree_has(t.dir, ".bpfstash-copy"));
	assert_false(exists(arch));

	/* The human form says the same, entry by entry. */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "4h", "--max-size", "80K",
	       "--max-entries", "25", "--dry-run", NULL);
	for (i = 0; i < nd; i++) {
		char line[80];

		snprintf(line, sizeof(line), "Would remove %s:", dry[i]);
		assert_non_null(strstr(r.err, line));
	}
	assert_non_null(strstr(r.out, "would remove"));
	run_free(&r);

	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "4h", "--max-size", "80K",
	       "--max-entries", "25", "--archive", arch, "--json", NULL);
	assert_int_equal(r.status, 0);
	nr = json_names(r.out, "remove", real, 61);
	assert_int_equal(nr, nd);
	assert_memory_equal(real, dry, nd * 41);	/* and in the same order */
	assert_int_equal(json_u64(r.out, "archived"), nd);
	run_free(&r);
	/* The tree lost exactly those, and each is archived. */
	na = list_entries(t.dir, after, 61);
	assert_int_equal(na, nb - nd);
	for (i = 0; i < nb; i++) {
		bool removed = false, left = false;

		for (j = 0; j < nd; j++)
			removed |= !strcmp(before[i], dry[j]);
		for (j = 0; j < na; j++)
			left |= !strcmp(before[i], after[j]);
		assert_true(removed != left);
		if (removed) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%.2s/%s.tar.zst", arch, before[i],
				 before[i]);
			assert_true(exists(path));
		}
	}
	/* Live ones all stayed. */
	for (i = 0; i < 60; i++)
		if (specs[i].unload == LOADED)
			assert_true(tree_has(t.dir, t.names[i]));
	free(before);
	free(after);
	free(dry);
	free(real);
	fixture_rmtree(arch);
	tree_free(&t);
}

/* Loaded programs' entries stay; a quota only they break is exit 73. */
static void test_live_protected(void **state)
{
	static const struct spec specs[] = {
		{ 1000, LOADED, 1000 }, { 900, 800, 1000 }, { 800, LOADED, 1000 },
		{ 700, 600, 1000 }, { 600, 500, 1000 }, { 500, LOADED, 1000 },
	};
	struct tree t;
	struct run r;

	/* 6000 bytes, at most 3000: three non-live go, the live ones are skipped. */
	tree_make(&t, specs, 6);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-size", "3000", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_removed(&t, r.out, "remove", (const int[]){ 1, 3, 4, -1 });
	assert_int_equal(json_u64(r.out, "kept_live"), 2);
	run_free(&r);
	/* Now only live ones: 2 entries cannot be met, and it says so. */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", "2", NULL);
	assert_int_equal(r.status, 73);
	assert_non_null(strstr(r.out, "--max-entries cannot be met"));
	assert_true(tree_has(t.dir, t.names[0]) && tree_has(t.dir, t.names[2]) &&
		    tree_has(t.dir, t.names[5]));
	run_free(&r);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-size", "1", "--json", NULL);
	assert_int_equal(r.status, 73);
	assert_non_null(strstr(r.out, "\"limits_met\":false"));
	assert_int_equal(json_u64(r.out, "entries_after"), 3);
	run_free(&r);
	/* Old live entries are not an age failure. */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "kept_live"), 3);
	assert_int_equal(json_u64(r.out, "removed"), 0);
	run_free(&r);
	tree_free(&t);
}

static void on_alarm(int sig)
{
	static const char msg[] = "test_fifo_meta: blocked for 30 s opening a FIFO\n";

	write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

/*
 * A copied stash whose entry holds a FIFO (or a device) named meta: the
 * GC and the library open only regular files, without blocking, and say
 * which entry is bad; the other entries are handled as usual.
 */
static void test_fifo_meta(void **state)
{
	static const struct spec specs[] = {
		{ 1000, 900, 1000 }, { 800, 700, 1000 }, { 600, 500, 1000 },
	};
	struct bpfstash_entry *e = NULL;
	struct bpfstash *stash;
	char path[PATH_MAX];
	struct tree t;
	struct run r;

	tree_make(&t, specs, 3);
	snprintf(path, sizeof(path), "%s/%s/meta", t.dir, t.names[1]);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", NULL);
	if (!strstr(r.err, t.names[1]))
		fail_msg("gc does not name the entry with a FIFO meta: %s", r.err);
	assert_false(tree_has(t.dir, t.names[0]));
	assert_true(tree_has(t.dir, t.names[1]));
	assert_false(tree_has(t.dir, t.names[2]));
	print_message("gc, exit %d: %s", r.status, r.err);
	run_free(&r);
	assert_int_equal(bpfstash_open(t.dir, &stash), 0);
	assert_int_equal(bpfstash_entry_load(stash, t.names[1], 0, &e), -EBADMSG);
	bpfstash_close(stash);
	alarm(0);
	tree_free(&t);
}

/* Nothing but entries is touched; nothing is followed. */
static void test_only_entries(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 800, 700 } };
	char path[PATH_MAX], target[] = "/tmp/bpfstash-gc-target-XXXXXX", tpath[PATH_MAX];
	struct fixture f;
	struct tree t;
	struct run r;

	tree_make(&t, specs, 2);
	/* A real entry outside, reachable through an entry-named symlink. */
	assert_non_null(mkdtemp(target));
	fixture_get("large", &f);
	fixture_copy(&f, target);
	snprintf(tpath, sizeof(tpath), "%s/%s", target, f.hash);
	snprintf(path, sizeof(path), "%s/%s", t.dir, f.hash);
	assert_int_equal(symlink(tpath, path), 0);
	/* Non-entries: a file, upper-case hex, a 41-digit name, an entry-named file. */
	snprintf(path, sizeof(path), "%s/README", t.dir);
	fixture_write_path(path, "x", 1);
	snprintf(path, sizeof(path), "%s/0123456789ABCDEF0123456789abcdef01234567", t.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/0123456789abcdef0123456789abcdef012345678", t.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/fedcba9876543210fedcba9876543210fedcba98", t.dir);
	fixture_write_path(path, "x", 1);
	/* A file of an entry that is a symlink to something outside. */
	snprintf(path, sizeof(path), "%s/%s/info", t.dir, t.names[0]);
	snprintf(tpath, sizeof(tpath), "%s/%s/jited", target, f.hash);
	assert_int_equal(symlink(tpath, path), 0);

	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_removed(&t, r.out, "remove", (const int[]){ 0, 1, -1 });
	assert_int_equal(json_u64(r.out, "skipped"), 2);	/* the symlink, the file */
	run_free(&r);
	assert_true(tree_has(t.dir, "README"));
	assert_true(tree_has(t.dir, "0123456789ABCDEF0123456789abcdef01234567"));
	assert_true(tree_has(t.dir, "0123456789abcdef0123456789abcdef012345678"));
	assert_true(tree_has(t.dir, "fedcba9876543210fedcba9876543210fedcba98"));
	assert_true(tree_has(t.dir, f.hash));	/* the link itself */
	/* The outside entry is whole. */
	{
		struct bpfstash_entry *e;
		int dfd = open(target, O_RDONLY | O_DIRECTORY);

		assert_int_equal(bpfstash_entry_load_at(dfd, f.hash, 0, &e), 0);
		assert_int_equal(bpfstash_entry_verify(e), 0);
		bpfstash_entry_free(e);
		close(dfd);
	}
	fixture_rmtree(target);
	tree_free(&t);
}

/* A filesystem mounted on an entry-named directory is not crossed. */
static void test_no_crossing_mounts(void **state)
{
	static const struct spec specs[] = { { 1000, 900 } };
	char path[PATH_MAX];
	struct tree t;
	struct run r;

	tree_make(&t, specs, 1);
	snprintf(path, sizeof(path), "%s/%s", t.dir, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_int_equal(mkdir(path, 0755), 0);
	if (mount("none", path, "tmpfs", 0, NULL)) {
		print_message("# cannot mount tmpfs here: %s\n", strerror(errno));
		tree_free(&t);
		skip();
	}
	{
		char meta[PATH_MAX];

		snprintf(meta, sizeof(meta), "%s/meta", path);
		fixture_write_path(meta, "x", 1);
	}
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "another filesystem"));
	assert_true(tree_has(path, "meta"));
	assert_false(tree_has(t.dir, t.names[0]));
	run_free(&r);
	umount(path);
	tree_free(&t);
}

/* The archive: extract, verify, the ELF carries the hash as build-id. */
static void check_archive(const char *arch, const char *name)
{
	char cmd[3 * PATH_MAX], x[] = "/tmp/bpfstash-gc-x-XXXXXX", path[PATH_MAX];
	struct bpfstash_entry *e;
	uint8_t hash[BPFSTASH_HASH_SIZE], *elf;
	size_t size, i;
	bool found = false;
	int dfd;

	assert_non_null(mkdtemp(x));
	snprintf(cmd, sizeof(cmd), "tar --zstd -m -C '%s' -xf '%s/%.2s/%s.tar.zst'", x, arch, name,
		 name);
	assert_int_equal(system(cmd), 0);
	dfd = open(x, O_RDONLY | O_DIRECTORY);
	assert_int_equal(bpfstash_entry_load_at(dfd, name, 0, &e), 0);
	assert_int_equal(bpfstash_entry_verify(e), 0);
	bpfstash_entry_free(e);
	close(dfd);
	/* The build-id note: "GNU\0" then the 20 bytes of the hash. */
	snprintf(path, sizeof(path), "%s/%s.debug", x, name);
	elf = fixture_read_path(path, &size);
	assert_int_equal(memcmp(elf, "\177ELF", 4), 0);
	assert_int_equal(bpfstash_hash_parse(name, hash), 0);
	for (i = 0; i + 24 <= size && !found; i++)
		found = !memcmp(elf + i, "GNU\0", 4) && !memcmp(elf + i + 4, hash, 20);
	assert_true(found);
	free(elf);
	fixture_rmtree(x);
}

static void test_archive_round_trip(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 800, 700 }, { 600, LOADED } };
	char arch[PATH_MAX], path[PATH_MAX];
	struct fixture large, subprogs;
	struct tree t;
	struct run r;
	size_t i;

	tree_make(&t, specs, 3);
	/* And the kernel's own entries, verbatim: a big one, and a loaded one. */
	fixture_get("large", &large);
	fixture_get("subprogs", &subprogs);
	fixture_copy(&large, t.dir);
	fixture_copy(&subprogs, t.dir);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);

	run_gc(&r, "--root", t.dir, "--max-entries", "1", "--archive", arch, "--json", NULL);
	assert_int_equal(r.status, 73);	/* two loaded entries, at most one wanted */
	assert_int_equal(json_u64(r.out, "archived"), 3);
	assert_int_equal(json_u64(r.out, "removed"), 3);
	run_free(&r);
	for (i = 0; i < 2; i++)
		check_archive(arch, t.names[i]);
	check_archive(arch, large.hash);
	assert_false(tree_has(t.dir, large.hash));
	assert_true(tree_has(t.dir, subprogs.hash));
	snprintf(path, sizeof(path), "%s/%.2s/%s.tar.zst", arch, subprogs.hash, subprogs.hash);
	assert_false(exists(path));
	fixture_rmtree(arch);
	tree_free(&t);
}

/* debuginfod serves the archive as it is. */
static void test_archive_debuginfod(void **state)
{
	static const struct spec specs[] = { { 1000, 900 } };
	char arch[PATH_MAX], db[PATH_MAX], cmd[4 * PATH_MAX], port[16];
	struct fixture large;
	struct tree t;
	struct run r;
	pid_t pid;
	int i, rc = -1;

	if (access("/usr/bin/debuginfod", X_OK) || access("/usr/bin/debuginfod-find", X_OK)) {
		print_message("# debuginfod not installed (apt-get install debuginfod)\n");
		skip();
	}
	tree_make(&t, specs, 1);
	fixture_get("large", &large);
	fixture_copy(&large, t.dir);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--archive", arch, NULL);
	assert_int_equal(r.status, 0);
	run_free(&r);

	snprintf(db, sizeof(db), "%s.db", t.dir);
	snprintf(port, sizeof(port), "%d", 20000 + getpid() % 20000);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl("/usr/bin/debuginfod", "debuginfod", "-d", db, "-p", port, "-Z", ".tar.zst",
		      "-t", "1", arch, NULL);
		_exit(127);
	}
	/*
	 * Until it has scanned: ask for both kinds, for each entry, with a
	 * new client cache each time (the client caches misses too).
	 */
	for (i = 0; i < 60 && rc; i++) {
		usleep(250000);
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && export DEBUGINFOD_URLS=http://127.0.0.1:%s "
			 "DEBUGINFOD_CACHE_PATH='%s.cache-%d' && "
			 "debuginfod-find executable %s >/dev/null 2>&1 && "
			 "debuginfod-find debuginfo %s >/dev/null 2>&1 && "
			 "cmp \"$(debuginfod-find debuginfo %s)\" \"$(debuginfod-find executable %s)\" && "
			 "readelf -n \"$(debuginfod-find debuginfo %s)\" | grep -q %s",
			 t.dir, port, t.dir, i, large.hash, t.names[0], large.hash, large.hash,
			 large.hash, large.hash);
		rc = system(cmd);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'.cache-* '%s'-*", db, t.dir, db);
	(void)system(cmd);
	fixture_rmtree(arch);
	tree_free(&t);
	assert_int_equal(rc, 0);
}

/* The archive quota: oldest archives go first; one too big keeps its entry. */
static void test_archive_quota(void **state)
{
	struct spec specs[12] = {};
	char arch[PATH_MAX], path[PATH_MAX];
	struct tree t;
	struct run r;
	struct stat st;
	unsigned long long one;
	int i, kept = 0;

	for (i = 0; i < 12; i++)
		specs[i] = (struct spec){ 1200 - 100 * i, 1100 - 100 * i, 1000 };
	tree_make(&t, specs, 12);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);
	/* One entry first, to learn an archive's size (they are all alike). */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", "11", "--archive", arch,
	       "--json", NULL);
	assert_int_equal(r.status, 0);
	one = json_u64(r.out, "archived_bytes");
	assert_true(one > 0);
	run_free(&r);
	/* Room for 3.5 archives: 8 more go, the archive keeps the 3 last ones. */
	snprintf(path, sizeof(path), "%llu", one * 7 / 2);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", "3", "--archive", arch,
	       "--archive-max-size", path, "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "archived"), 8);
	assert_int_equal(json_u64(r.out, "archive_evicted"), 6);
	assert_true(json_u64(r.out, "archive_bytes") <= one * 7 / 2);
	run_free(&r);
	for (i = 0; i < 12; i++) {
		snprintf(path, sizeof(path), "%s/%.2s/%s.tar.zst", arch, t.names[i], t.names[i]);
		if (!stat(path, &st)) {
			kept++;
			assert_true(i >= 6 && i <= 8);	/* the newest archived */
		}
	}
	assert_int_equal(kept, 3);
	/* A quota smaller than one archive: nothing is removed, exit 73. */
	snprintf(path, sizeof(path), "%llu", one / 2);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-entries", "2", "--archive", arch,
	       "--archive-max-size", path, NULL);
	assert_int_equal(r.status, 73);
	assert_non_null(strstr(r.err, "over --archive-max-size"));
	assert_true(tree_has(t.dir, t.names[9]));
	run_free(&r);
	fixture_rmtree(arch);
	tree_free(&t);
}

/* A corrupt or incomplete entry is not archived, so not removed. */
static void test_archive_refuses_corrupt(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 900, 850 }, { 800, 700 } };
	char arch[PATH_MAX], path[PATH_MAX];
	unsigned char *buf;
	struct tree t;
	struct run r;
	size_t size;

	tree_make(&t, specs, 3);
	snprintf(path, sizeof(path), "%s/%s/jited", t.dir, t.names[0]);
	buf = fixture_read_path(path, &size);
	buf[0] ^= 1;
	fixture_write_path(path, buf, size);
	free(buf);
	snprintf(path, sizeof(path), "%s/%s/btf", t.dir, t.names[1]);
	assert_int_equal(unlink(path), 0);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--archive", arch,
	       "--json", NULL);
	assert_int_equal(r.status, 73);
	assert_int_equal(json_u64(r.out, "errors"), 2);
	assert_int_equal(json_u64(r.out, "removed"), 1);	/* the good one: go on */
	assert_true(tree_has(t.dir, t.names[0]));
	assert_true(tree_has(t.dir, t.names[1]));
	assert_false(tree_has(t.dir, t.names[2]));
	run_free(&r);
	fixture_rmtree(arch);
	tree_free(&t);
}

static void test_lock(void **state)
{
	static const struct spec specs[] = { { 1000, 900 } };
	struct tree t;
	struct run r;
	int fd;

	tree_make(&t, specs, 1);
	fd = open(t.dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", NULL);
	assert_int_equal(r.status, 69);
	assert_non_null(strstr(r.err, "another bpfstash-gc"));
	assert_true(tree_has(t.dir, t.names[0]));
	run_free(&r);
	/* A dry run shares the lock with other readers. */
	assert_int_equal(flock(fd, LOCK_SH), 0);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", "--dry-run", NULL);
	assert_int_equal(r.status, 0);
	run_free(&r);
	close(fd);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", NULL);
	assert_int_equal(r.status, 0);
	assert_false(tree_has(t.dir, t.names[0]));
	run_free(&r);
	tree_free(&t);
}

/* Output: one summary line; per-entry lines with priorities for journald. */
static void test_output(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 800, LOADED } };
	char *argv[] = { "bpfstash-gc", "--root", NULL, "--now", NOW_ARG, "--max-entries", "0",
			 "--max-age", "1s", NULL };
	struct tree t;
	struct run r;
	char line[80];

	tree_make(&t, specs, 2);
	argv[2] = t.dir;
	run_argv(&r, NULL, "journal", argv);
	assert_int_equal(r.status, 0);
	snprintf(line, sizeof(line), "<6>Removed %s:", t.names[0]);
	assert_non_null(strstr(r.err, line));
	snprintf(line, sizeof(line), "<5>Kept %s:", t.names[1]);
	assert_non_null(strstr(r.err, line));
	/* stdout is not the journal here: no prefix; one line. */
	assert_int_equal(strncmp(r.out, t.dir, strlen(t.dir)), 0);
	assert_non_null(strstr(r.out, "removed 1 of 2 entries"));
	assert_non_null(strstr(r.out, "kept-live 1, errors 0"));
	assert_ptr_equal(strchr(r.out, '\n'), r.out + strlen(r.out) - 1);
	run_free(&r);
	/* Without the journal nor -v: quiet but for the summary. */
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--max-age", "1s", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	run_free(&r);
	tree_free(&t);
}

/* Leftovers of a killed run are finished by the next one. */
static void test_leftovers(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 800, 700 } };
	char path[PATH_MAX], arch[PATH_MAX];
	struct tree t;
	struct run r;

	tree_make(&t, specs, 2);
	snprintf(arch, sizeof(arch), "%s.archive", t.dir);
	snprintf(path, sizeof(path), "%s/.gc-%s", t.dir, t.names[0]);
	{
		char from[PATH_MAX];

		snprintf(from, sizeof(from), "%s/%s", t.dir, t.names[0]);
		assert_int_equal(rename(from, path), 0);
	}
	snprintf(path, sizeof(path), "%s/%.2s", arch, t.names[1]);
	assert_int_equal(mkdir(arch, 0755), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%.2s/.%s.tar.zst.tmp", arch, t.names[1], t.names[1]);
	fixture_write_path(path, "partial", 7);
	run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--archive", arch, "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_u64(r.out, "cleaned"), 2);
	run_free(&r);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/.gc-%s", t.dir, t.names[0]);
	assert_false(exists(path));
	assert_true(tree_has(t.dir, t.names[1]));
	fixture_rmtree(arch);
	tree_free(&t);
}

/* ---- kill and restart ---- */

static char leftovers_found[PATH_MAX];

static int find_leftover(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t len = strlen(base);

	if (!strncmp(base, ".gc-", 4) ||
	    (len > 4 && !strcmp(base + len - 4, ".tmp"))) {
		snprintf(leftovers_found, sizeof(leftovers_found), "%s", path);
		return 1;
	}
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	size_t sa, sb;
	void *x, *y;
	bool same;

	x = fixture_read_path(a, &sa);
	y = fixture_read_path(b, &sb);
	same = sa == sb && !memcmp(x, y, sa);
	free(x);
	free(y);
	return same;
}

/*
 * After any run, killed or not: every entry of @ref_names missing from
 * @dir is archived in @arch, byte for byte as in @ref_arch (a complete
 * archive: the reference one was read back and verified).
 */
static void assert_nothing_lost(const char *dir, const char *arch, const char *ref_arch,
				char (*all)[41], size_t n)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		if (tree_has(dir, all[i]))
			continue;
		snprintf(a, sizeof(a), "%s/%.2s/%s.tar.zst", arch, all[i], all[i]);
		snprintf(b, sizeof(b), "%s/%.2s/%s.tar.zst", ref_arch, all[i], all[i]);
		if (!exists(a) || !same_file(a, b))
			fail_msg("%s is gone from the stash and %s", all[i],
				 exists(a) ? "its archive differs" : "not archived");
	}
}

/* The state after the run ended: the same entries and archives as @ref. */
static void assert_same_end(const char *dir, const char *arch, const char *ref_dir,
			    const char *ref_arch, char (*all)[41], size_t n)
{
	size_t i;

	leftovers_found[0] = '\0';
	if (nftw(dir, find_leftover, 16, FTW_PHYS) || nftw(arch, find_leftover, 16, FTW_PHYS))
		fail_msg("leftover: %s", leftovers_found);
	for (i = 0; i < n; i++) {
		char a[PATH_MAX], b[PATH_MAX];

		if (tree_has(dir, all[i]) != tree_has(ref_dir, all[i]))
			fail_msg("%s: %s here, %s after an uninterrupted run", all[i],
				 tree_has(dir, all[i]) ? "kept" : "removed",
				 tree_has(ref_dir, all[i]) ? "kept" : "removed");
		snprintf(a, sizeof(a), "%s/%.2s/%s.tar.zst", arch, all[i], all[i]);
		snprintf(b, sizeof(b), "%s/%.2s/%s.tar.zst", ref_arch, all[i], all[i]);
		if (exists(a) != exists(b) || (exists(a) && !same_file(a, b)))
			fail_msg("%s: the archive differs from an uninterrupted run's", all[i]);
	}
	assert_true(tree_has(dir, ".bpfstash-copy"));
}

struct killbed {
	struct tree t;
	char ref[PATH_MAX], ref_arch[PATH_MAX], work[PATH_MAX], work_arch[PATH_MAX];
	char *argv[16];
	double ref_seconds;
};

static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A template tree, and the end state of an uninterrupted run on a copy of it. */
static void killbed_init(struct killbed *k, size_t n, const char *max_entries)
{
	struct spec *specs = calloc(n, sizeof(*specs));
	struct run r;
	size_t i;
	double t0;

	for (i = 0; i < n; i++)
		specs[i] = (struct spec){ 100000 - 10 * i, 99000 - 10 * i, 1000 };
	specs[1].unload = LOADED;	/* a loaded one among the oldest */
	tree_make(&k->t, specs, n);
	free(specs);
	snprintf(k->ref, sizeof(k->ref), "%s.ref", k->t.dir);
	snprintf(k->ref_arch, sizeof(k->ref_arch), "%s.ref-archive", k->t.dir);
	snprintf(k->work, sizeof(k->work), "%s.work", k->t.dir);
	snprintf(k->work_arch, sizeof(k->work_arch), "%s.work-archive", k->t.dir);
	sh("cp -a '%s' '%s'", k->t.dir, k->ref);
	k->argv[0] = "bpfstash-gc";
	k->argv[1] = "--root";
	k->argv[2] = k->ref;
	k->argv[3] = "--now";
	k->argv[4] = NOW_ARG;
	k->argv[5] = "--max-entries";
	k->argv[6] = (char *)max_entries;
	k->argv[7] = "--archive";
	k->argv[8] = k->ref_arch;
	k->argv[9] = NULL;
	t0 = now_s();
	run_argv(&r, NULL, NULL, k->argv);
	k->ref_seconds = now_s() - t0;
	assert_int_equal(r.status, 0);
	run_free(&r);
	/* The reference archives are complete and verify. */
	for (i = 0; i < n; i++)
		if (!tree_has(k->ref, k->t.names[i]))
			check_archive(k->ref_arch, k->t.names[i]);
	k->argv[2] = k->work;
	k->argv[8] = k->work_arch;
}

static void killbed_fresh(struct killbed *k)
{
	sh("rm -rf '%s' '%s' && cp -a '%s' '%s'", k->work, k->work_arch, k->t.dir, k->work);
}

static void killbed_free(struct killbed *k)
{
	sh("rm -rf '%s' '%s' '%s' '%s'", k->ref, k->ref_arch, k->work, k->work_arch);
	tree_free(&k->t);
}

/* Every point where the tool changes something, in turn: kill it there. */
static void test_kill_every_point(void **state)
{
	struct killbed k;
	struct run r;
	int point, killed = 0;

	killbed_init(&k, 5, "2");
	for (point = 1; point < 10000; point++) {
		char at[16];

		killbed_fresh(&k);
		snprintf(at, sizeof(at), "%d", point);
		run_argv(&r, at, NULL, k.argv);
		if (r.status != 128 + SIGKILL) {
			/* Past the last point: the run completed. */
			assert_int_equal(r.status, 0);
			run_free(&r);
			break;
		}
		run_free(&r);
		killed++;
		assert_nothing_lost(k.work, k.work_arch, k.ref_arch, k.t.names, k.t.n);
		run_argv(&r, NULL, NULL, k.argv);
		if (r.status != 0)
			fail_msg("rerun after kill at %d: exit %d: %s", point, r.status, r.err);
		run_free(&r);
		assert_same_end(k.work, k.work_arch, k.ref, k.ref_arch, k.t.names, k.t.n);
	}
	print_message("# killed at %d points, each followed by a normal run\n", killed);
	assert_true(killed > 20);
	killbed_free(&k);
}

/* SIGKILL at random times, from outside, on a bigger tree. */
static void test_kill_random(void **state)
{
	unsigned int seed = 20261130;
	struct killbed k;
	struct run r;
	int i, killed = 0;

	killbed_init(&k, 120, "20");
	/* The reference run was the first (cold caches): time a warm one too. */
	for (i = 0; i < 2; i++) {
		double t0 = now_s();

		killbed_fresh(&k);
		t0 = now_s();
		run_argv(&r, NULL, NULL, k.argv);
		assert_int_equal(r.status, 0);
		run_free(&r);
		if (now_s() - t0 < k.ref_seconds)
			k.ref_seconds = now_s() - t0;
	}
	for (i = 0; i < 25; i++) {
		int ofd, efd;
		pid_t pid;

		killbed_fresh(&k);
		pid = spawn(k.argv, NULL, NULL, &ofd, &efd);
		/* Anywhere in the run; the last tenth is mostly exit. */
		usleep(rand_r(&seed) % (unsigned int)(k.ref_seconds * 0.9e6 + 1));
		kill(pid, SIGKILL);
		collect(&r, pid, ofd, efd);
		killed += r.status == 128 + SIGKILL;
		run_free(&r);
		assert_nothing_lost(k.work, k.work_arch, k.ref_arch, k.t.names, k.t.n);
		run_argv(&r, NULL, NULL, k.argv);
		assert_int_equal(r.status, 0);
		run_free(&r);
		assert_same_end(k.work, k.work_arch, k.ref, k.ref_arch, k.t.names, k.t.n);
	}
	print_message("# %d of 25 runs killed (an uninterrupted run takes %.0f ms)\n", killed,
		      k.ref_seconds * 1e3);
	assert_true(killed >= 15);
	killbed_free(&k);
}

/* --interval: a pass each interval, a summary each, until SIGTERM. */
static void test_interval(void **state)
{
	static const struct spec specs[] = { { 1000, 900 }, { 800, 700 }, { 600, 500 } };
	char *argv[] = { "bpfstash-gc", "--root", NULL, "--now", NOW_ARG, "--max-entries", "1",
			 "--interval", "100ms", NULL };
	struct tree t;
	struct run r;
	int ofd, efd, lines = 0;
	pid_t pid;
	char *p;

	tree_make(&t, specs, 3);
	argv[2] = t.dir;
	pid = spawn(argv, NULL, NULL, &ofd, &efd);
	usleep(450000);
	kill(pid, SIGTERM);
	collect(&r, pid, ofd, efd);
	assert_int_equal(r.status, 0);
	for (p = r.out; (p = strchr(p, '\n')); p++)
		lines++;
	assert_true(lines >= 3);	/* one summary per pass */
	assert_non_null(strstr(r.out, "removed 2 of 3 entries"));
	assert_non_null(strstr(r.out, "removed 0 of 1 entries"));
	run_free(&r);
	tree_free(&t);
}

/*
 * The units pass systemd-analyze verify once installed (make install
 * DESTDIR=...), the service's ExecStart naming the installed binary, and
 * the man page renders without a warning.
 */
static void test_install_and_units(void **state)
{
	char dir[] = "/tmp/bpfstash-gc-install-XXXXXX", cmd[8192];

	if (access("/usr/bin/systemd-analyze", X_OK)) {
		print_message("# systemd-analyze not installed (apt-get install systemd)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	/* Installed under @dir for real (no DESTDIR), so that ExecStart exists. */
	snprintf(cmd, sizeof(cmd),
		 "make -s -C %s/../../tools/bpfstash-gc install PREFIX=%s/usr SYSCONFDIR=%s/etc "
		 "O=%s/build >/dev/null", FIXTURES, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "test -x %s/usr/sbin/bpfstash-gc && test -f %s/etc/cron.d/bpfstash-gc && "
		 "grep -q '^ExecStart=%s/usr/sbin/bpfstash-gc ' "
		 "%s/usr/lib/systemd/system/bpfstash-gc.service", dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	/* The service and the timer; the man page is found through MANPATH. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s/usr/lib/systemd/system && MANPATH=%s/usr/share/man "
		 "systemd-analyze verify bpfstash-gc.service bpfstash-gc.timer > %s/verify.log 2>&1; "
		 "rc=$?; cat %s/verify.log; test $rc = 0 && test ! -s %s/verify.log",
		 dir, dir, dir, dir, dir);
	if (system(cmd))
		fail_msg("systemd-analyze verify complained: see above");
	/* The sandbox scores well (systemd-analyze security, offline). */
	snprintf(cmd, sizeof(cmd),
		 "systemd-analyze security --offline=yes --threshold=20 "
		 "%s/usr/lib/systemd/system/bpfstash-gc.service >/dev/null 2>&1", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l %s/usr/share/man/man8/bpfstash-gc.8 "
		 "2>&1 >/dev/null | grep . && exit 1; exit 0", dir);
	assert_int_equal(system(cmd), 0);
	fixture_rmtree(dir);
}

static int setup(void **state)
{
	if (access(GC_BIN, X_OK)) {
		fprintf(stderr, "%s not built (make tools)\n", GC_BIN);
		return -1;
	}
	return 0;
}

/*
 * An entry of a format bpfstash-gc does not read is left alone and named:
 * "format N, this reader knows M", exit 76 when nothing worse happened.
 */
static void test_other_formats(void **state)
{
	char dir[] = "/tmp/bpfstash-gc-formats-XXXXXX", newer[41], older[41];
	struct run r;

	fixture_other_formats(dir, newer, older);
	run_gc(&r, "--root", dir, "--dry-run", "--max-age", "1s", NULL);
	assert_int_equal(r.status, 76);
	if (!strstr(r.err, "format 4, this reader knows 3 (a newer bpfstash-gc reads it)") ||
	    !strstr(r.err, "format 2, this reader knows 3"))
		fail_msg("gc on other formats: %s", r.err);
	run_free(&r);
	run_gc(&r, "--root", dir, "--json", "--max-age", "1s", NULL);
	assert_int_equal(r.status, 76);
	assert_non_null(strstr(r.out, "\"format\":4"));
	assert_non_null(strstr(r.out, "\"format\":2"));
	run_free(&r);
	/* Left alone: still there. */
	assert_true(tree_has(dir, newer));
	assert_true(tree_has(dir, older));
	fixture_rmtree(dir);
}

/*
 * --loader-comm and --loader-cgroup: the limits apply to the entries of
 * that loader alone.  The fixtures were loaded by bpftool in the root
 * cgroup (id 1); two of them are unloaded.
 */
static void test_loader_filter(void **state)
{
	static const char *const none[][2] = {
		{ "--loader-comm", "nosuch" }, { "--loader-cgroup", "2" },
	};
	char names[8][41];
	struct run r;
	size_t i;

	run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--json", "--max-entries", "0",
	       "--max-age", "1s", "--loader-comm", "bpftool", "--loader-cgroup", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_names(r.out, "would_remove", names, 8), 2);
	run_free(&r);
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--json", "--max-age", "1s",
		       none[i][0], none[i][1], NULL);
		assert_int_equal(r.status, 0);
		if (json_names(r.out, "would_remove", names, 8))
			fail_msg("%s %s removed: %s", none[i][0], none[i][1], r.out);
		run_free(&r);
	}
	run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--loader-comm",
	       "a-name-longer-than-15", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
	run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--loader-cgroup", "x", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
	run_gc(&r, "--root", FIXTURES "/stash", "--dry-run", "--link-target", "", NULL);
	assert_int_equal(r.status, 64);
	run_free(&r);
}

/* --link-target: the entries whose last link's target matches a pattern. */
static void test_link_filter(void **state)
{
	static const struct spec specs[] = {
		{ 100, 90, 0, "kprobe:tcp_sendmsg" },
		{ 100, 90, 0, "kprobe:tcp_recvmsg" },
		{ 100, 90, 0, "raw_tracepoint:sched_switch" },
		{ 100, 90, 0, NULL },
	};
	static const struct {
		const char *glob;
		size_t n;
		int which[3];
	} cases[] = {
		{ "kprobe:tcp_*", 2, { 0, 1 } },
		{ "kprobe:tcp_sendmsg", 1, { 0 } },
		{ "*sched_switch", 1, { 2 } },
		{ "cgroup:*", 0, { 0 } },
		{ "*", 3, { 0, 1, 2 } },
	};
	char names[8][41];
	struct tree t;
	struct run r;
	size_t i, j, n;

	tree_make(&t, specs, 4);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_gc(&r, "--root", t.dir, "--now", NOW_ARG, "--dry-run", "--json", "--max-age",
		       "1s", "--link-target", cases[i].glob, NULL);
		assert_int_equal(r.status, 0);
		n = json_names(r.out, "would_remove", names, 8);
		if (n != cases[i].n)
			fail_msg("--link-target %s: %zu removed, not %zu: %s", cases[i].glob, n,
				 cases[i].n, r.out);
		for (j = 0; j < n; j++)
			if (!strstr(r.out, t.names[cases[i].which[j]]))
				fail_msg("--link-target %s: %s not removed: %s", cases[i].glob,
					 t.names[cases[i].which[j]], r.out);
		run_free(&r);
	}
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_formats),
		cmocka_unit_test(test_loader_filter),
		cmocka_unit_test(test_link_filter),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_bad_roots),
		cmocka_unit_test(test_age_boundaries),
		cmocka_unit_test(test_age_by),
		cmocka_unit_test(test_size_policy),
		cmocka_unit_test(test_count_policy),
		cmocka_unit_test(test_all_three),
		cmocka_unit_test(test_ties_by_name),
		cmocka_unit_test(test_dry_run_matches),
		cmocka_unit_test(test_live_protected),
		cmocka_unit_test(test_fifo_meta),
		cmocka_unit_test(test_only_entries),
		cmocka_unit_test(test_no_crossing_mounts),
		cmocka_unit_test(test_archive_round_trip),
		cmocka_unit_test(test_archive_debuginfod),
		cmocka_unit_test(test_archive_quota),
		cmocka_unit_test(test_archive_refuses_corrupt),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_install_and_units),
		cmocka_unit_test(test_kill_every_point),
		cmocka_unit_test(test_kill_random),
	};

	return cmocka_run_group_tests_name("gc", tests, setup, NULL);
}
