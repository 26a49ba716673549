// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scale of the view: stat of one hash, lookup (open+read meta), ls of the
 * root and rmdir, timed per operation at 1 000 and at 100 000 entries, and
 * the kernel memory an entry costs against its content.  Runs on the bench
 * kernel (tests/guest/SUITES.bench); STASH_SCALE sets the large size.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test.h"
#include "../lib/stashfs.h"
#include "../lib/entrycheck.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int load_unique(int from, int count)
{
	int i, ok = 0;

	for (i = from; i < from + count; i++) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "s%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	return ok;
}

/* Entries that were there before the test: left alone, not counted. */
static char (*preexisting)[41];
static int nr_preexisting;

static bool is_preexisting(const char *name)
{
	int i;

	for (i = 0; i < nr_preexisting; i++)
		if (!strcmp(preexisting[i], name))
			return true;
	return false;
}

/* All entry names, by readdir; returns the count and the time it took. */
static int list_names(char (**names)[41], double *secs)
{
	int n = 0, cap = 1024;
	struct dirent *de;
	double t0 = now_s();
	DIR *d = opendir(STASH_ROOT);

	*names = malloc(cap * 41);
	while (d && (de = readdir(d))) {
		if (strlen(de->d_name) != 40 || is_preexisting(de->d_name))
			continue;
		if (n == cap)
			*names = realloc(*names, (cap *= 2) * 41);
		memcpy((*names)[n++], de->d_name, 41);
	}
	if (d)
		closedir(d);
	*secs = now_s() - t0;
	return n;
}

struct figures {
	int entries;
	double ls_s, stat_cold_us, stat_warm_us, lookup_us, rmdir_us;
	double bytes_per_entry, kernel_bytes_per_entry;
	double index_s, entries_s, decode30_s, resolve1000_s, recovery_s;
};

/* An agent's recovery: every entry of the stash indexed, in seconds. */
static double agent_recovery(void)
{
	struct bpfstash_agent_opts ao = { .sz = sizeof(ao), .root = STASH_ROOT,
					  .flags = BPFSTASH_AGENT_NO_RINGS | BPFSTASH_AGENT_SCAN,
					  .forget_ns = ~0ull };
	struct bpfstash_agent_stats st = {};
	struct bpfstash_agent *a;
	double t0 = now_s(), t;

	if (!ASSERT_OK(bpfstash_agent_open(&ao, &a), "bpfstash_agent_open"))
		return 0;
	t = now_s() - t0;
	bpfstash_agent_get_stats(a, &st);
	ASSERT_EQ(st.programs, stash_stat("entries"), "the agent indexed every entry");
	bpfstash_agent_close(a);
	return t;
}

/*
 * Open the library's per-run index and look up @n of @addrs, each at its
 * time in @times (the JIT gives a closed program's address to the next):
 * seconds, all found.
 */
static double index_lookups(const unsigned long long *addrs, const unsigned long long *times,
			    int n)
{
	struct bpfstash_index *idx = NULL;
	struct bpfstash *s = NULL;
	double t0 = now_s(), t;
	int i, found = 0;

	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &s), "bpfstash_open"))
		return 0;
	if (ASSERT_OK(bpfstash_index_open(s, &idx), "bpfstash_index_open")) {
		for (i = 0; i < n; i++) {
			struct bpfstash_resolve_opts at = { .sz = sizeof(at),
							    .clock = BPFSTASH_CLOCK_BOOTTIME,
							    .time_ns = times[i] };
			struct bpfstash_loc loc = { .sz = sizeof(loc) };
			struct bpfstash_entry *e = NULL;

			if (!bpfstash_index_resolve_at(idx, addrs[i], &at, &e, &loc, NULL))
				found++;
			bpfstash_entry_free(e);
		}
		ASSERT_EQ(bpfstash_index_nr_entries(idx), stash_stat("entries"),
			  "the library's index has every entry");
	}
	t = now_s() - t0;
	ASSERT_EQ(found, n, "every address resolves");
	bpfstash_index_free(idx);
	bpfstash_close(s);
	return t;
}

/*
 * The index file against each entry's files, and what a symbolizer's
 * first lookups cost through it: a 30-frame trace, 1 000 addresses.
 */
static void measure_index(struct figures *f, char (*names)[41], int n)
{
	unsigned long long gen, addrs[1000], times[1000];
	int i;

	/* Every entry of the root, the test's own and those it leaves out. */
	ASSERT_EQ(check_index_file(&gen, &f->index_s, &f->entries_s), stash_stat("entries"),
		  "the index file holds every entry, as its files say");
	for (i = 0; i < 1000; i++) {
		struct bpfstash_func *fn;
		size_t size;
		void *buf;

		addrs[i] = times[i] = 0;
		if (!stash_read(names[(i * 7919) % n], "funcs", &buf, &size)) {
			fn = buf;
			addrs[i] = le64toh(fn->addr) + 1;
			free(buf);
		}
		if (!stash_read(names[(i * 7919) % n], "meta", &buf, &size)) {
			times[i] = le64toh(((struct bpfstash_meta *)buf)->load_time);
			free(buf);
		}
	}
	f->decode30_s = index_lookups(addrs, times, 30);
	f->resolve1000_s = index_lookups(addrs, times, 1000);
	f->recovery_s = agent_recovery();
	test__note("%6d entries: the index file %.3f s against each entry's meta and funcs "
		   "%.3f s (%.1fx); index and 30 lookups %.3f s, index and 1000 lookups %.3f s, "
		   "an agent's recovery %.3f s",
		   n, f->index_s, f->entries_s, f->entries_s / f->index_s, f->decode30_s,
		   f->resolve1000_s, f->recovery_s);
}

static void measure(int entries, struct figures *f, long mem_before_kb)
{
	char (*names)[41], path[128];
	const int probes = 1000;
	struct stat st;
	double t0;
	int n, i, fd;

	memset(f, 0, sizeof(*f));
	/* Drop cached dentries so that the first stat is a real lookup. */
	sysctl_set("/proc/sys/vm/drop_caches", "2", NULL, 0);
	n = list_names(&names, &f->ls_s);
	f->entries = n;
	ASSERT_EQ(n, entries, "ls lists every entry");
	f->bytes_per_entry = (double)stash_stat("bytes") / n;
	f->kernel_bytes_per_entry = (double)(meminfo_kb("Slab") + meminfo_kb("VmallocUsed") -
					     mem_before_kb) * 1024 / n;

	t0 = now_s();
	for (i = 0; i < probes; i++) {
		snprintf(path, sizeof(path), STASH_ROOT "/%s", names[(i * 7919) % n]);
		ASSERT_OK(stat(path, &st), "stat");
	}
	f->stat_cold_us = (now_s() - t0) * 1e6 / probes;
	t0 = now_s();
	for (i = 0; i < probes; i++) {
		snprintf(path, sizeof(path), STASH_ROOT "/%s", names[(i * 7919) % n]);
		stat(path, &st);
	}
	f->stat_warm_us = (now_s() - t0) * 1e6 / probes;
	t0 = now_s();
	for (i = 0; i < probes; i++) {
		struct bpfstash_meta m;

		snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", names[(i * 104729) % n]);
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, &m, sizeof(m)) != sizeof(m))
			test__fail(__FILE__, __LINE__, "lookup %s failed", path);
		if (fd >= 0)
			close(fd);
	}
	f->lookup_us = (now_s() - t0) * 1e6 / probes;
	measure_index(f, names, n);
	t0 = now_s();
	for (i = 0; i < probes && i < n; i++) {
		snprintf(path, sizeof(path), STASH_ROOT "/%s", names[n - 1 - i]);
		ASSERT_OK(rmdir(path), "rmdir");
	}
	f->rmdir_us = (now_s() - t0) * 1e6 / probes;
	free(names);
	test__note("%6d entries: ls %.3f s (%.2f us/entry), stat %.1f us cold / %.1f us warm, "
		   "open+read meta %.1f us, rmdir %.1f us; %.0f bytes/entry accounted, "
		   "%.0f bytes/entry of slab+vmalloc",
		   n, f->ls_s, f->ls_s * 1e6 / n, f->stat_cold_us, f->stat_warm_us,
		   f->lookup_us, f->rmdir_us, f->bytes_per_entry, f->kernel_bytes_per_entry);
}

static void test_scale(void)
{
	const char *s = getenv("STASH_SCALE");
	int big = s ? atoi(s) : 100000, loaded;
	struct figures small, large;
	double secs;
	long mem0;

	if (!ASSERT_OK(stash_mount("max_entries=1000000,size=2G"), "mount"))
		return;
	sysctl_set("/proc/sys/vm/drop_caches", "3", NULL, 0);
	mem0 = meminfo_kb("Slab") + meminfo_kb("VmallocUsed");
	/*
	 * Left out of the counts: programs still loaded from earlier suites
	 * (the mount stored them), and libbpf's feature probes, which its
	 * first load in this process makes (one load here triggers them).
	 */
	load_unique(-1, 1);
	nr_preexisting = list_names(&preexisting, &secs);
	ASSERT_EQ(nr_preexisting, stash_stat("entries"), "entries before the test's own");
	if (nr_preexisting)
		test__note("%d entries there before the test's own, left out", nr_preexisting);
	loaded = load_unique(0, 1000);
	ASSERT_EQ(loaded, 1000, "1000 programs");
	measure(1000, &small, mem0);
	loaded = load_unique(1000, big - 1000 + 1000);	/* 1000 were just deleted */
	ASSERT_EQ(loaded, big, "the rest");
	measure(big, &large, mem0);

	/* Fast: per-operation costs do not grow with the number of entries. */
	ASSERT_LTF(large.stat_cold_us, 4 * small.stat_cold_us + 20, "stat stays fast");
	ASSERT_LTF(large.lookup_us, 4 * small.lookup_us + 20, "lookup stays fast");
	ASSERT_LTF(large.rmdir_us, 4 * small.rmdir_us + 20, "rmdir stays fast");
	ASSERT_LTF(large.ls_s / large.entries, 4 * small.ls_s / small.entries + 1e-5,
		  "ls stays linear");
	/*
	 * One read beats 2 opens per entry, and a symbolizer starts in the
	 * time of a fraction of them (the target is 1 s for each of the
	 * two, which the note prints; asserted with room for a loaded
	 * emulated guest, but not for a lookup that loads every program
	 * that ever had the address, which took 89 s).
	 */
	ASSERT_LTF(large.index_s, large.entries_s / 4, "the index file is faster than the entries");
	ASSERT_LTF(large.decode30_s, large.entries_s / 4, "index and a 30-frame trace");
	ASSERT_LTF(large.resolve1000_s, large.entries_s / 2, "index and 1000 addresses");
	ASSERT_LTF(large.resolve1000_s, 3.0, "index and 1000 addresses within 3 s");
	/* Memory: entry overhead beyond the unique bytes stays under 1 KiB. */
	ASSERT_LTF(large.bytes_per_entry, 1024 + 64, "accounted bytes per tiny entry");
	stash_umount();
	free(preexisting);
}

static const struct test tests[] = {
	{ "scale", test_scale },
	{}
};

int main(int argc, char **argv)
{
	return test_main("scale", tests, argc, argv);
}
