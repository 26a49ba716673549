// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lookups against a large stash, side by side: a per-query scan (what
 * bpfstash_resolve_at() does, and what `bpfstash decode` and `bpfstash
 * resolve` did for every frame and address: read the meta and funcs files
 * of every entry) against the per-run index (bpfstash_index_open() once,
 * then bpfstash_index_resolve_at() per lookup, as they do now).
 *
 *   index_bench [-n ENTRIES] [-f FRAMES] [-q QUERIES] [-s SCANS] [-d DIR]
 *
 * The stash is a copy on disk (default build/bench/index-stash-ENTRIES,
 * made once, reused): ENTRIES entries of the "subprogs" fixture (four
 * functions), each at its own addresses, its meta and funcs its own and
 * its blobs hard links to the fixture's.  FRAMES (default 30) is a trace
 * to decode, QUERIES (default 1000) the addresses of one `resolve`; the
 * scan is timed on SCANS lookups (default 3: each reads the whole stash)
 * and its total for FRAMES and QUERIES extrapolated from them, which the
 * output says.  Every answer of the scan is checked against the index's.
 * The stash is read once before anything is timed: the page cache is
 * warm for every figure.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"

#define STRIDE 0x1000ull	/* between two entries' images */

static const char *const blobs[] = { "jited", "line_info", "jited_line_info", "func_info",
				     "btf" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *slurp(const char *path, size_t *size)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		die(path);
	buf = malloc(st.st_size);
	if (!buf || read(fd, buf, st.st_size) != st.st_size)
		die(path);
	close(fd);
	*size = st.st_size;
	return buf;
}

static void spill(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0400);

	if (fd < 0 || write(fd, buf, size) != (ssize_t)size || close(fd))
		die(path);
}

static void entry_name(unsigned int i, char *name)
{
	snprintf(name, BPFSTASH_HEX_LEN + 1, "%08x%032x", i, 0x5eed);
}

/* The stash of @n copies of fixture @fx (a directory), in @dir. */
static void make_stash(const char *fx, unsigned int n, const char *dir)
{
	char path[4096], src[4096], name[BPFSTASH_HEX_LEN + 1], done[4200];
	size_t msize, fsize;
	uint8_t *meta, *funcs;
	struct bpfstash_meta *m;
	struct bpfstash_func *f;
	uint32_t nr, j, k;
	unsigned int i;

	snprintf(done, sizeof(done), "%s/.done", dir);
	if (!access(done, F_OK))
		return;
	fprintf(stderr, "index_bench: making %u entries in %s (once)\n", n, dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		die(dir);
	snprintf(path, sizeof(path), "%s/meta", fx);
	meta = slurp(path, &msize);
	snprintf(path, sizeof(path), "%s/funcs", fx);
	funcs = slurp(path, &fsize);
	m = (struct bpfstash_meta *)meta;
	nr = le32toh(m->content.nr_funcs);
	for (i = 0; i < n; i++) {
		uint8_t *mi = malloc(msize), *fi = malloc(fsize);

		entry_name(i, name);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (mkdir(path, 0700) && errno != EEXIST)
			die(path);
		memcpy(mi, meta, msize);
		memcpy(fi, funcs, fsize);
		m = (struct bpfstash_meta *)mi;
		for (k = 0; k < BPFSTASH_HASH_SIZE; k++)
			sscanf(name + 2 * k, "%2hhx", &m->hash[k]);
		m->prog_id = htole32(i + 1);
		f = (struct bpfstash_func *)fi;
		for (j = 0; j < nr; j++)
			f[j].addr = htole64(le64toh(f[j].addr) + i * STRIDE);
		snprintf(path, sizeof(path), "%s/%s/meta", dir, name);
		spill(path, mi, msize);
		snprintf(path, sizeof(path), "%s/%s/funcs", dir, name);
		spill(path, fi, fsize);
		for (k = 0; k < sizeof(blobs) / sizeof(blobs[0]); k++) {
			/* A file of its own per 60 000 links: ext4 allows 65 000. */
			snprintf(src, sizeof(src), "%s/.pool-%u", dir, i / 60000);
			if (mkdir(src, 0700) && errno != EEXIST)
				die(src);
			snprintf(src, sizeof(src), "%s/.pool-%u/%s", dir, i / 60000, blobs[k]);
			if (access(src, F_OK)) {
				size_t bsize;
				void *b;

				snprintf(path, sizeof(path), "%s/%s", fx, blobs[k]);
				b = slurp(path, &bsize);
				spill(src, b, bsize);
				free(b);
			}
			snprintf(path, sizeof(path), "%s/%s/%s", dir, name, blobs[k]);
			if (link(src, path) && errno != EEXIST)
				die(path);
		}
		free(mi);
		free(fi);
	}
	spill(done, "", 0);
	free(meta);
	free(funcs);
}

int main(int argc, char **argv)
{
	unsigned int n = 100000, frames = 30, queries = 1000, scans = 3, i;
	const char *top = getenv("BPFSTASH_TOP") ?: ".";
	char dir[4096] = "", fx[4096];
	struct bpfstash_loc loc = { .sz = sizeof(loc) };
	struct bpfstash_location old_loc;
	struct bpfstash_index *x;
	struct bpfstash_entry *e;
	struct bpfstash *s;
	const struct bpfstash_func *fn;
	uint64_t *addrs, base, span;
	double t0, t_open, t_frames, t_queries, t_scan;
	uint32_t nr_funcs;
	int opt, err;

	while ((opt = getopt(argc, argv, "n:f:q:s:d:")) != -1) {
		switch (opt) {
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'f': frames = strtoul(optarg, NULL, 0); break;
		case 'q': queries = strtoul(optarg, NULL, 0); break;
		case 's': scans = strtoul(optarg, NULL, 0); break;
		case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
		default:
			fprintf(stderr, "usage: index_bench [-n ENTRIES] [-f FRAMES] [-q QUERIES] "
				"[-s SCANS] [-d DIR]\n");
			return 64;
		}
	}
	if (!n || !scans || scans > frames || scans > queries) {
		fprintf(stderr, "index_bench: ENTRIES > 0, 0 < SCANS <= FRAMES, QUERIES\n");
		return 64;
	}
	libbpf_set_print(quiet);
	if (!*dir)
		snprintf(dir, sizeof(dir), "%s/build/bench/index-stash-%u", top, n);
	/* The fixture by its manifest name. */
	{
		char line[256], fname[64], hash[64];
		FILE *mf;

		snprintf(fx, sizeof(fx), "%s/tests/fixtures/manifest", top);
		mf = fopen(fx, "r");
		if (!mf)
			die(fx);
		fx[0] = '\0';
		while (fgets(line, sizeof(line), mf))
			if (sscanf(line, "%63s %63s", fname, hash) == 2 && !strcmp(fname, "subprogs"))
				snprintf(fx, sizeof(fx), "%s/tests/fixtures/stash/%s", top, hash);
		fclose(mf);
		if (!*fx) {
			fprintf(stderr, "index_bench: no subprogs fixture in the manifest\n");
			return 1;
		}
	}
	make_stash(fx, n, dir);

	err = bpfstash_open(dir, &s);
	if (err) {
		fprintf(stderr, "index_bench: %s: %s\n", dir, strerror(-err));
		return 1;
	}
	/* Addresses inside random entries' functions, one query each. */
	{
		char name[BPFSTASH_HEX_LEN + 1];

		entry_name(0, name);
		if (bpfstash_entry_load(s, name, 0, &e))
			die("loading the first entry");
		nr_funcs = bpfstash_entry_nr_funcs(e);
		base = bpfstash_entry_func(e, 0)->addr;
		span = 0;
		srand(20261206);
		addrs = calloc(queries > frames ? queries : frames, sizeof(*addrs));
		for (i = 0; i < (queries > frames ? queries : frames); i++) {
			fn = bpfstash_entry_func(e, rand() % nr_funcs);
			addrs[i] = fn->addr + rand() % fn->len + (uint64_t)(rand() % n) * STRIDE;
		}
		(void)base;
		(void)span;
		bpfstash_entry_free(e);
	}

	/* One untimed read first: every figure below is with the page cache warm. */
	if (bpfstash_index_open(s, &x))
		die("bpfstash_index_open");
	bpfstash_index_free(x);

	/* The index: one read of the stash, then each lookup. */
	t0 = now();
	if (bpfstash_index_open(s, &x))
		die("bpfstash_index_open");
	t_open = now() - t0;
	if (bpfstash_index_nr_entries(x) != n) {
		fprintf(stderr, "index_bench: %zu entries indexed, %u made\n",
			bpfstash_index_nr_entries(x), n);
		return 1;
	}
	t0 = now();
	for (i = 0; i < frames; i++) {
		if (bpfstash_index_resolve_at(x, addrs[i], NULL, &e, &loc, NULL))
			die("a frame the index does not resolve");
		bpfstash_entry_free(e);
	}
	t_frames = now() - t0;
	t0 = now();
	for (i = 0; i < queries; i++) {
		if (bpfstash_index_resolve_at(x, addrs[i], NULL, &e, &loc, NULL))
			die("a query the index does not resolve");
		bpfstash_entry_free(e);
	}
	t_queries = now() - t0;

	/* The scan, on a few lookups: the same answers. */
	t0 = now();
	for (i = 0; i < scans; i++) {
		struct bpfstash_entry *ie;

		if (bpfstash_resolve_at(s, addrs[i], NULL, &e, &old_loc, NULL))
			die("a lookup the scan does not resolve");
		if (bpfstash_index_resolve_at(x, addrs[i], NULL, &ie, &loc, NULL) ||
		    strcmp(bpfstash_entry_name(e), bpfstash_entry_name(ie)) ||
		    old_loc.func != loc.func || old_loc.line != loc.line ||
		    strcmp(old_loc.file, loc.file)) {
			fprintf(stderr, "index_bench: scan and index disagree on 0x%llx\n",
				(unsigned long long)addrs[i]);
			return 1;
		}
		bpfstash_entry_free(e);
		bpfstash_entry_free(ie);
	}
	t_scan = (now() - t0) / scans;

	printf("index_bench: %u entries (%zu function ranges) in %s\n", n,
	       bpfstash_index_nr_ranges(x), dir);
	printf("  index read once:                 %8.3f s\n", t_open);
	printf("  %-5u-frame decode    scan %9.3f s (%u measured, x%.0f)  index %8.3f s  "
	       "(%.3f s with its read)  ratio %.0fx\n", frames, t_scan * frames, scans,
	       (double)frames / scans, t_frames, t_open + t_frames,
	       t_scan * frames / (t_open + t_frames));
	printf("  %-5u-address resolve scan %9.3f s (%u measured, x%.0f)  index %8.3f s  "
	       "(%.3f s with its read)  ratio %.0fx\n", queries, t_scan * queries, scans,
	       (double)queries / scans, t_queries, t_open + t_queries,
	       t_scan * queries / (t_open + t_queries));
	printf("  per lookup: scan %.3f ms, index %.1f us\n", t_scan * 1e3,
	       t_queries / queries * 1e6);

	/*
	 * An agent's recovery, which reads the whole stash: each entry's meta
	 * and funcs (as it does now) against each entry loaded whole (as it
	 * did), timed on the same stash.
	 */
	{
		struct bpfstash_agent_opts ao = { .sz = sizeof(ao), .root = dir,
						  .flags = BPFSTASH_AGENT_NO_RINGS |
							   BPFSTASH_AGENT_SCAN,
						  .forget_ns = ~0ull };
		struct bpfstash_agent_stats st;
		struct bpfstash_agent *a;
		double t_agent, t_full;
		char **names;
		size_t count, j, loaded = 0;

		t0 = now();
		if (bpfstash_agent_open(&ao, &a))
			die("bpfstash_agent_open");
		t_agent = now() - t0;
		bpfstash_agent_get_stats(a, &st);
		bpfstash_agent_close(a);
		if (st.programs != n) {
			fprintf(stderr, "index_bench: the agent found %llu programs, %u made\n",
				(unsigned long long)st.programs, n);
			return 1;
		}
		t0 = now();
		if (bpfstash_list(s, &names, &count))
			die("bpfstash_list");
		for (j = 0; j < count; j++) {
			if (bpfstash_entry_load(s, names[j], 0, &e))
				continue;
			loaded++;
			bpfstash_entry_free(e);
		}
		bpfstash_names_free(names);
		t_full = now() - t0;
		printf("  agent recovery       full loads %6.3f s (%zu entries)  meta and funcs "
		       "%6.3f s  ratio %.1fx\n", t_full, loaded, t_agent, t_full / t_agent);
	}
	bpfstash_index_free(x);
	bpfstash_close(s);
	free(addrs);
	return 0;
}
