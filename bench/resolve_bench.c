// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpfstash speed on a real entry (by default the fixture with the most
 * line records, tests/fixtures "large": 3083 records, 20 KB of code):
 *
 *   - resolve throughput: every byte address of every function, in a
 *     shuffled order, through bpfstash_entry_resolve() on a loaded entry
 *     (what a profiler does per sample), and through bpfstash_resolve()
 *     on the stash (what `bpfstash resolve ADDR` does: it loads entries);
 *   - export time per entry: bpfstash_entry_export_elf() into a temporary
 *     file, and bpfstash_entry_export_build_id() with its fsync and rename;
 *   - load and verify time, for scale.
 *
 *   resolve_bench [-r ROOT] [-e HASH] [-t SECONDS]
 *
 * ROOT defaults to tests/fixtures/stash under $BPFSTASH_TOP or the current
 * directory.  Each figure is measured for about SECONDS (default 1), in
 * wall-clock time and in this thread's CPU time, which a busy machine
 * inflates less.
 */
#define _GNU_SOURCE
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

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: what a busy machine does not inflate. */
static double cpu(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The entry with the most line records. */
static int pick_largest(struct bpfstash *s, char *out)
{
	uint32_t best = 0;
	size_t n, i;
	char **names;
	int err;

	err = bpfstash_list(s, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct bpfstash_entry *e;

		if (bpfstash_entry_load(s, names[i], BPFSTASH_LOAD_META, &e))
			continue;
		if (!out[0] || bpfstash_entry_meta(e)->content.nr_line_info > best) {
			best = bpfstash_entry_meta(e)->content.nr_line_info;
			strcpy(out, names[i]);
		}
		bpfstash_entry_free(e);
	}
	bpfstash_names_free(names);
	return out[0] ? 0 : -ENOENT;
}

int main(int argc, char **argv)
{
	char root[4096], name[BPFSTASH_HEX_LEN + 1] = "", tmpdir[] = "/tmp/resolve-bench-XXXXXX";
	const char *top = getenv("BPFSTASH_TOP");
	double secs = 1, t0, t, c0, c, *samples, *csamples;
	struct bpfstash_location loc;
	struct bpfstash_entry *e;
	struct bpfstash *s;
	uint64_t *addrs, sink = 0, total = 0, lookups, i, n;
	size_t ns = 0, cap = 1 << 16;
	uint32_t f;
	int opt, err, fd;

	snprintf(root, sizeof(root), "%s/tests/fixtures/stash", top ? top : ".");
	while ((opt = getopt(argc, argv, "r:e:t:h")) != -1) {
		switch (opt) {
		case 'r':
			snprintf(root, sizeof(root), "%s", optarg);
			break;
		case 'e':
			snprintf(name, sizeof(name), "%s", optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-r ROOT] [-e HASH] [-t SECONDS]\n", argv[0]);
			return 64;
		}
	}
	libbpf_set_print(quiet);
	err = bpfstash_open(root, &s);
	if (!err && !name[0])
		err = pick_largest(s, name);
	if (err) {
		fprintf(stderr, "resolve_bench: %s: %s\n", root, strerror(-err));
		return 69;
	}
	samples = malloc(cap * sizeof(*samples));
	csamples = malloc(cap * sizeof(*csamples));
	if (!samples || !csamples)
		return 1;

	/* load and verify */
	for (ns = 0, t0 = now(); ns < cap && (now() - t0 < secs || ns < 5); ns++) {
		t = now();
		c = cpu();
		err = bpfstash_entry_load(s, name, 0, &e);
		samples[ns] = now() - t;
		csamples[ns] = cpu() - c;
		if (err) {
			fprintf(stderr, "resolve_bench: %s: %s\n", name, strerror(-err));
			return 1;
		}
		bpfstash_entry_free(e);
	}
	bpfstash_entry_load(s, name, 0, &e);
	printf("entry            %s %s: %u functions, %u bytes of code, %u line records\n",
	       name, bpfstash_entry_meta(e)->content.name, bpfstash_entry_nr_funcs(e),
	       bpfstash_entry_meta(e)->content.jited_len, bpfstash_entry_nr_lines(e));
	printf("load             %.1f us/entry (median of %zu; CPU time %.1f us)\n",
	       median(samples, ns) * 1e6, ns, median(csamples, ns) * 1e6);
	for (ns = 0, t0 = now(); ns < cap && (now() - t0 < secs || ns < 5); ns++) {
		t = now();
		if (bpfstash_entry_verify(e))
			return 1;
		samples[ns] = now() - t;
	}
	printf("verify           %.1f us/entry (median of %zu)\n", median(samples, ns) * 1e6, ns);

	/* every byte of every function, shuffled (xorshift, fixed seed) */
	for (f = 0; f < bpfstash_entry_nr_funcs(e); f++)
		total += bpfstash_entry_func(e, f)->len;
	addrs = malloc(total * sizeof(*addrs));
	if (!addrs)
		return 1;
	for (n = 0, f = 0; f < bpfstash_entry_nr_funcs(e); f++)
		for (i = 0; i < bpfstash_entry_func(e, f)->len; i++)
			addrs[n++] = bpfstash_entry_func(e, f)->addr + i;
	{
		uint64_t x = 88172645463325252ull;

		for (i = n - 1; i > 0; i--) {
			uint64_t j, tmp;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			j = x % (i + 1);
			tmp = addrs[i];
			addrs[i] = addrs[j];
			addrs[j] = tmp;
		}
	}
	lookups = 0;
	c0 = cpu();
	t0 = now();
	do {
		for (i = 0; i < n; i++) {
			if (bpfstash_entry_resolve(e, addrs[i], &loc))
				return 1;
			sink += loc.line + loc.func;
		}
		lookups += n;
		t = now() - t0;
	} while (t < secs);
	c = cpu() - c0;
	printf("resolve (entry)  %.0f addresses/s (%.1f ns/address; CPU time: %.0f/s, %.1f ns; %llu lookups over %llu distinct addresses)\n",
	       lookups / t, t / lookups * 1e9, lookups / c, c / lookups * 1e9,
	       (unsigned long long)lookups, (unsigned long long)n);

	lookups = 0;
	c0 = cpu();
	t0 = now();
	do {
		struct bpfstash_entry *got;

		if (bpfstash_resolve(s, addrs[lookups % n], &got, &loc))
			return 1;
		sink += loc.line;
		bpfstash_entry_free(got);
		lookups++;
		t = now() - t0;
	} while (t < secs);
	c = cpu() - c0;
	printf("resolve (stash)  %.0f addresses/s (%.1f us/address; CPU time: %.0f/s, %.1f us; reads every entry's meta and funcs, loads the one)\n",
	       lookups / t, t / lookups * 1e6, lookups / c, c / lookups * 1e6);

	/* export */
	if (!mkdtemp(tmpdir))
		return 1;
	{
		char path[4200];
		struct stat st;

		snprintf(path, sizeof(path), "%s/elf", tmpdir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 1;
		for (ns = 0, t0 = now(); ns < cap && (now() - t0 < secs || ns < 5); ns++) {
			t = now();
			c = cpu();
			if (bpfstash_entry_export_elf(e, fd))
				return 1;
			samples[ns] = now() - t;
			csamples[ns] = cpu() - c;
		}
		fstat(fd, &st);
		close(fd);
		unlink(path);
		printf("export ELF       %.1f us/entry (median of %zu; CPU time %.1f us; %lld bytes)\n",
		       median(samples, ns) * 1e6, ns, median(csamples, ns) * 1e6,
		       (long long)st.st_size);
		for (ns = 0, t0 = now(); ns < cap && (now() - t0 < secs || ns < 5); ns++) {
			t = now();
			if (bpfstash_entry_export_build_id(e, tmpdir, path, sizeof(path)))
				return 1;
			samples[ns] = now() - t;
		}
		printf("export build-id  %.1f us/entry (median of %zu; with fsync and rename, in %s)\n",
		       median(samples, ns) * 1e6, ns, "/tmp");
		snprintf(path, sizeof(path), "rm -rf '%s'", tmpdir);
		if (system(path))
			return 1;
	}
	bpfstash_entry_free(e);
	bpfstash_close(s);
	free(addrs);
	free(samples);
	free(csamples);
	return sink == 42 ? 2 : 0;	/* keep the lookups */
}
