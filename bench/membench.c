// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory a stash entry costs, against the bytes of its content:
 *
 *   one    one large program (20 KB JITed, 3000 line records, BTF)
 *   funcs  one program of 256 functions (BPF_MAX_SUBPROGS): a 17.6 KB funcs file
 *   image  one program of 200 KB of JITed code (32768 instructions, no BTF)
 *   shared N loads of one object: same BTF, same line and func info, only
 *          the images differ (they hold load addresses)
 *   tiny   N distinct minimal programs: the fixed cost of an entry
 *
 * "content" is what the entry's files hold (meta, funcs and the blobs, as
 * if nothing were shared); "accounted" is what the stash counts (stats
 * bytes: unique blobs plus per-entry structures, in allocator sizes);
 * "charged" is what the memory cgroup that mounted the stash was charged,
 * which is every allocation of the store, its tables included: membench
 * mounts from a cgroup of its own and leaves it before loading.
 * "overhead" is, for the entry where it is largest, the memory the entry
 * holds (meta's "bytes": its own structures and its share of each blob,
 * the blob divided among the entries holding it) less its content: what
 * an entry costs beyond its bytes.  It is negative when every entry shares
 * its blobs with others (shared, and tiny programs whose code is the
 * same).  "charged" comes from memory.current, which a memory cgroup
 * takes in batches of 64 pages per CPU: it means something for hundreds
 * of entries, and reads 0 or a batch for one or two.
 *
 *   membench [-n N] [--csv] OBJ_DIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/bpfstash.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "stashfs.h"

static long long stat_of(const char *key)
{
	char line[128], k[64];
	long long v, found = 0;
	FILE *f = fopen(STASH_ROOT "/stats", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	if (f)
		fclose(f);
	return found;
}

#define CG "/sys/fs/cgroup/bpfstash-membench"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -1 : 0;
}

/* Bytes charged to the stash's memory cgroup. */
static long long charged(void)
{
	char buf[64] = "";
	int fd = open(CG "/memory.current", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	if (fd >= 0)
		close(fd);
	return atoll(buf);
}

/* The memory an entry holds, from its meta file, or -1. */
static long long entry_bytes(const char *name)
{
	struct bpfstash_meta meta;
	char path[256];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), STASH_ROOT "/%s/meta", name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, &meta, sizeof(meta));
		close(fd);
	}
	return n == sizeof(meta) ? (long long)meta.bytes : -1;	/* little-endian, as the host */
}

/*
 * Sum of the sizes of the files of every entry: the content, unshared; and
 * the largest overhead of an entry over its own content.
 */
static long long content_bytes(int *entries, long long *max_overhead)
{
	static const char *const files[] = {
		"meta", "funcs", "jited", "line_info", "jited_line_info", "func_info", "btf",
	};
	struct dirent *de;
	long long total = 0;
	DIR *d = opendir(STASH_ROOT);

	*entries = 0;
	*max_overhead = LLONG_MIN;	/* none known; may end negative */
	while (d && (de = readdir(d))) {
		long long own = 0, held;
		char path[256];
		struct stat st;
		size_t i;

		if (strlen(de->d_name) != 40)
			continue;
		(*entries)++;
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), STASH_ROOT "/%s/%s", de->d_name, files[i]);
			if (!stat(path, &st))
				own += st.st_size;
		}
		total += own;
		held = entry_bytes(de->d_name);
		if (held >= 0 && held - own > *max_overhead)
			*max_overhead = held - own;
	}
	if (d)
		closedir(d);
	return total;
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return 0;
}

static int load_obj(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);

	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "membench: cannot load %s\n", path);
		return -1;
	}
	bpf_object__close(obj);	/* closed: the entry stays */
	return 0;
}

static int load_tiny(int i)
{
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "mem%d", i);
	fd = load_raw_prog(name);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* A socket filter of @n straight-line instructions, without BTF. */
static int load_straight(int n)
{
	int fd = load_straight_prog("mem_image", n, 0);

	if (fd < 0) {
		fprintf(stderr, "membench: cannot load %d instructions\n", n);
		return -1;
	}
	close(fd);
	return 0;
}

static void report(const char *what, long long charged0, int csv)
{
	long long ch = charged() - charged0, overhead;
	int entries;
	long long content = content_bytes(&entries, &overhead);
	long long accounted = stat_of("bytes");
	char ov[32] = "";

	if (!entries)
		return;
	/* No entry's meta read: no figure (a CSV's empty field). */
	if (overhead != LLONG_MIN)
		snprintf(ov, sizeof(ov), "%lld", overhead);
	if (csv)
		printf("%s,%d,%.0f,%.0f,%.0f,%lld,%lld,%s\n", what, entries,
		       (double)content / entries, (double)accounted / entries,
		       (double)ch / entries, stat_of("blobs"),
		       stat_of("blob_dedup") + stat_of("btf_hash_cached"), ov);
	else
		printf("%-7s %6d entries: content %8.0f B/entry, accounted %8.0f B/entry "
		       "(%.2fx content), charged %8.0f B/entry; %lld blobs, %lld shared; "
		       "overhead at most %s B/entry\n",
		       what, entries, (double)content / entries, (double)accounted / entries,
		       (double)accounted / content, (double)ch / entries, stat_of("blobs"),
		       stat_of("blob_dedup") + stat_of("btf_hash_cached"), ov[0] ? ov : "unknown");
}

/* Mount from the membench cgroup, which the stash then charges, and leave it. */
static int remount(void)
{
	char pid[32];
	int err;

	stash_umount();
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_str(CG "/cgroup.procs", pid))
		return -1;
	err = mount("none", STASH_ROOT, "bpfstash", 0, "max_entries=1000000,size=2G");
	write_str("/sys/fs/cgroup/cgroup.procs", pid);
	return err;
}

int main(int argc, char **argv)
{
	int n = 500, csv = 0, i, c;
	char path[512];
	const char *dir;
	long long kb0;

	while ((c = getopt(argc, argv, "n:c")) != -1) {
		if (c == 'n')
			n = atoi(optarg);
		else if (c == 'c')
			csv = 1;
		else
			return 64;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: membench [-n N] [-c] OBJ_DIR\n");
		return 64;
	}
	dir = argv[optind];
	libbpf_set_print(quiet);
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	mkdir(CG, 0755);
	if (csv)
		printf("case,entries,content_bytes,accounted_bytes,charged_bytes,blobs,shared,"
		       "max_overhead_bytes\n");

	/* libbpf probes kernel features once per process: before measuring. */
	stash_umount();
	snprintf(path, sizeof(path), "%s/tiny.bpf.o", dir);
	if (load_obj(path))
		return 1;
	if (remount())
		return perror("membench: mount"), 1;
	kb0 = charged();
	snprintf(path, sizeof(path), "%s/large.bpf.o", dir);
	if (load_obj(path))
		return 1;
	report("one", kb0, csv);

	remount();
	kb0 = charged();
	snprintf(path, sizeof(path), "%s/many.bpf.o", dir);
	if (load_obj(path))
		return 1;
	report("funcs", kb0, csv);

	remount();
	kb0 = charged();
	if (load_straight(32768))
		return 1;
	report("image", kb0, csv);

	remount();
	kb0 = charged();
	snprintf(path, sizeof(path), "%s/subprogs.bpf.o", dir);
	for (i = 0; i < n; i++)
		if (load_obj(path))
			return 1;
	report("shared", kb0, csv);

	remount();
	kb0 = charged();
	for (i = 0; i < n * 4; i++)
		if (load_tiny(i))
			return 1;
	report("tiny", kb0, csv);
	stash_umount();
	rmdir(CG);
	return 0;
}
