// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc on the real filesystem: it brings the stash under its quota
 * and keeps every loaded program's entry, archives every entry it removes
 * (and the archive verifies), is not fooled into removing anything but
 * entries, survives SIGKILL at any point, and still works inside the
 * sandbox its systemd unit sets up.  Programs are loaded and closed in
 * the hundreds; each is "r0 = <n>; exit" with its own n, so that each is
 * its own entry (same bytes at the same address would be one entry).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <archive.h>
#include <archive_entry.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

#define ARCHIVE "/tmp/gc-archive"
#define MAX_ENTRIES 8192

static char gc_bin[512];

/* ---- programs ---- */

static int load_nth(int n)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = n },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "gc_test", "GPL", insns, 2, NULL);
}

static int next_n = 1;

/* The same with @insns instructions: bigger entries, as many. */
static int load_nth_sized(int n, int insns)
{
	struct bpf_insn *v = calloc(insns, sizeof(*v));
	int i, fd;

	if (!v)
		return -ENOMEM;
	v[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
				  .imm = n };
	for (i = 1; i < insns - 1; i++)
		v[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K,
					  .dst_reg = BPF_REG_0, .imm = i };
	v[insns - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "gc_test", "GPL", v, insns, NULL);
	free(v);
	return fd;
}

/* Load and close @n distinct programs: @n unloaded entries. */
static int load_close(int n)
{
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		int fd = load_nth(next_n++);

		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	return ok;
}

/* ---- the stash, listed ---- */

struct ent {
	char name[41];
	struct stat st;
};

static int cmp_ent_age(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->st.st_mtim.tv_sec != y->st.st_mtim.tv_sec)
		return x->st.st_mtim.tv_sec < y->st.st_mtim.tv_sec ? -1 : 1;
	if (x->st.st_mtim.tv_nsec != y->st.st_mtim.tv_nsec)
		return x->st.st_mtim.tv_nsec < y->st.st_mtim.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Every entry with its stat; returns how many, sorted by name. */
static int list(struct ent *v, int max)
{
	struct dirent *de;
	DIR *d = opendir(STASH_ROOT);
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		if (!bpfstash_name_valid(de->d_name))
			continue;
		memcpy(v[n].name, de->d_name, 41);
		if (fstatat(dirfd(d), de->d_name, &v[n].st, AT_SYMLINK_NOFOLLOW))
			continue;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))strcmp);
	return n;
}

static bool in(const struct ent *v, int n, const char *name)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(v[mid].name, name);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

/* The meta of an entry (this updates its access time). */
static int read_meta(const char *name, struct bpfstash_meta *m)
{
	void *buf;
	size_t size;
	int err = stash_read(name, "meta", &buf, &size);

	if (err)
		return err;
	if (size != sizeof(*m)) {
		free(buf);
		return -EBADMSG;
	}
	memcpy(m, buf, sizeof(*m));
	free(buf);
	return 0;
}

/* ---- running bpfstash-gc ---- */

struct gc_run {
	int status;
	char *out;
	double seconds;		/* wall */
	double cpu;		/* user + system of the child */
	double user, sys;
	long maxrss_kb;
};

struct gc_env {
	const char *kill_at;	/* BPFSTASH_GC_KILL_AT */
	double kill_after;	/* > 0: SIGKILL after this many seconds */
	bool sandbox;		/* the caps and NoNewPrivileges of the service */
	__u64 caps;		/* with sandbox: the capabilities kept */
	const char *exe;	/* another program than bpfstash-gc (PATH) */
	bool quiet;		/* stderr to /dev/null, not the (slow) console */
};

static void gc_runv(struct gc_run *r, const struct gc_env *env, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	size_t len = 0, cap = 65536;
	int p[2], status;
	pid_t pid;
	ssize_t n;

	r->out = calloc(1, cap);
	if (pipe2(p, O_CLOEXEC) || !r->out) {
		r->status = -1;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (env && env->quiet) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 2);
		}
		if (env && env->kill_at)
			setenv("BPFSTASH_GC_KILL_AT", env->kill_at, 1);
		if (env && env->sandbox) {
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			set_caps_only(env->caps);
		}
		if (env && env->exe)
			execvp(env->exe, argv);
		else
			execv(gc_bin, argv);
		_exit(127);
	}
	close(p[1]);
	if (env && env->kill_after > 0) {
		/* The output is small: read it after the kill. */
		struct timespec d = { (time_t)env->kill_after,
				      (long)((env->kill_after - (time_t)env->kill_after) * 1e9) };

		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
	}
	while ((n = read(p[0], r->out + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap) {
			r->out = realloc(r->out, cap *= 2);
			if (!r->out)
				break;
		}
	}
	if (r->out)
		r->out[len] = '\0';
	close(p[0]);
	wait4(pid, &status, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	r->user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	r->sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	r->cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	r->maxrss_kb = ru.ru_maxrss;
}

static void gc(struct gc_run *r, const struct gc_env *env, ...)
{
	char *argv[32];
	va_list ap;
	int n = 0;

	argv[n++] = "bpfstash-gc";
	va_start(ap, env);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	gc_runv(r, env, argv);
}

static unsigned long long json_u64(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = json ? strstr(json, pat) : NULL;
	return p ? strtoull(p + strlen(pat), NULL, 10) : ~0ULL;
}

/* Names reported for @action, in order, into @names (41 bytes each). */
static int json_names(const char *json, const char *action, char (*names)[41], int max)
{
	char pat[64];
	const char *p = json;
	int n = 0;

	snprintf(pat, sizeof(pat), "{\"action\":\"%s\",\"name\":\"", action);
	while (p && (p = strstr(p, pat)) && n < max) {
		p += strlen(pat);
		memcpy(names[n], p, 40);
		names[n++][40] = '\0';
	}
	return n;
}

static bool archived(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%.2s/%.40s.tar.zst", dir, name, name);
	return !access(path, F_OK);
}

/*
 * Extract an archive (libarchive, in this process: spawning tar is slow in
 * this guest) and check it: the entry's files verify against its name,
 * and the ELF member carries the name as its build-id.
 */
static int archive_verifies(const char *dir, const char *name)
{
	char path[512], x[] = "/tmp/gc-x-XXXXXX", cmd[64];
	struct archive_entry *ae;
	struct bpfstash_entry *e;
	uint8_t hash[BPFSTASH_HASH_SIZE];
	bool build_id = false;
	struct archive *a;
	int dfd, err = 0, r;

	if (!mkdtemp(x))
		return -errno;
	snprintf(path, sizeof(path), "%s/%.2s/%.40s.tar.zst", dir, name, name);
	bpfstash_hash_parse(name, hash);
	a = archive_read_new();
	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	dfd = open(x, O_RDONLY | O_DIRECTORY);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		err = -EIO;
		goto out;
	}
	while (!err && (r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(ae);
		size_t size = archive_entry_size(ae), i;
		char *buf;
		int fd;

		if (archive_entry_filetype(ae) == AE_IFDIR) {
			if (mkdirat(dfd, p, 0755) && errno != EEXIST)
				err = -errno;
			continue;
		}
		buf = malloc(size + 1);
		if (!buf || archive_read_data(a, buf, size) != (la_ssize_t)size) {
			free(buf);
			err = -EIO;
			break;
		}
		if (strstr(p, ".debug")) {
			for (i = 0; i + 24 <= size && !build_id; i++)
				build_id = !memcmp(buf + i, "GNU", 4) && !memcmp(buf + i + 4, hash, 20);
		}
		fd = openat(dfd, p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
			err = -EIO;
		if (fd >= 0)
			close(fd);
		free(buf);
	}
	if (!err) {
		err = bpfstash_entry_load_at(dfd, name, 0, &e);
		if (!err) {
			err = bpfstash_entry_verify(e);
			bpfstash_entry_free(e);
		}
	}
	if (!err && !build_id)
		err = -ENODATA;
out:
	archive_read_free(a);
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x);
	(void)system(cmd);
	return err;
}

static int tmp_found;

static int find_tmp(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t len = strlen(path);

	tmp_found += len > 4 && !strcmp(path + len - 4, ".tmp");
	return 0;
}

/* Leftovers anywhere under @dir: temporary archives. */
static int count_tmp(const char *dir)
{
	tmp_found = 0;
	if (nftw(dir, find_tmp, 16, FTW_PHYS) && errno != ENOENT)
		return -1;
	return tmp_found;
}

/* Programs with BTF and line info: the same BTF blob shared between them. */
static int load_objects(int n, struct bpf_object **objs)
{
	int i, fd, ok = 0;

	for (i = 0; i < n; i++) {
		objs[i] = test_prog_load("subprogs", &fd);
		ok += objs[i] != NULL;
	}
	return ok;
}

/* ---- tests ---- */

/*
 * A few hundred programs come and go, some stay loaded: a size quota is
 * met in the kernel's own count, every loaded program's entry stays, and
 * every removed entry is in the archive, where it verifies.
 */
static void test_size_quota_and_archive(void)
{
	static struct ent before[MAX_ENTRIES], after[MAX_ENTRIES];
	struct bpf_object *objs[8] = {};
	int live_fds[20], nb, na, i, live = 0, missing_archive = 0, bad = 0, checked = 0;
	long long bytes, quota, live_bytes = 0;
	struct gc_run r = {};
	char qarg[32];

	if (!ASSERT_OK(stash_mount("size=256M,max_entries=100000"), "mount"))
		return;
	system("rm -rf " ARCHIVE);
	ASSERT_EQ(load_close(150), 150, "150 programs loaded and closed");
	for (i = 0; i < 20; i++) {
		live_fds[i] = load_nth(next_n++);
		live += live_fds[i] >= 0;
	}
	ASSERT_EQ(live, 20, "20 programs stay loaded");
	ASSERT_EQ(load_objects(8, objs), 8, "8 objects with BTF and line info");
	for (i = 0; i < 4; i++) {	/* half of them unloaded again */
		bpf_object__close(objs[i]);
		objs[i] = NULL;
	}
	ASSERT_EQ(load_close(150), 150, "150 more programs loaded and closed");

	nb = list(before, MAX_ENTRIES);
	bytes = stash_stat("bytes");
	for (i = 0; i < nb; i++) {
		struct bpfstash_meta m;

		if (before[i].st.st_ctim.tv_sec == before[i].st.st_mtim.tv_sec &&
		    before[i].st.st_ctim.tv_nsec == before[i].st.st_mtim.tv_nsec)
			live_bytes += before[i].st.st_size;
		/* The GC tells loaded entries by ctime == mtime: meta agrees. */
		if (!read_meta(before[i].name, &m) &&
		    !!(m.flags & BPFSTASH_META_LOADED) !=
		    (before[i].st.st_ctim.tv_sec == before[i].st.st_mtim.tv_sec &&
		     before[i].st.st_ctim.tv_nsec == before[i].st.st_mtim.tv_nsec))
			test__fail(__FILE__, __LINE__, "%s: ctime == mtime disagrees with meta",
				   before[i].name);
	}
	ASSERT_GE(nb, 300, "entries before");
	quota = bytes / 3;
	ASSERT_GT(quota, live_bytes, "the quota can be met without loaded entries");
	snprintf(qarg, sizeof(qarg), "%lld", quota);
	test__note("%d entries, %lld bytes (%lld of loaded programs); --max-size %s", nb, bytes,
		   live_bytes, qarg);

	gc(&r, NULL, "--max-size", qarg, "--archive", ARCHIVE, "--json", NULL);
	ASSERT_EQ(r.status, 0, "exit 0");
	ASSERT_LE(stash_stat("bytes"), quota, "the stash is under the quota (stats)");
	/* What it reports is what the kernel said (frees may still be landing). */
	ASSERT_LE(stash_stat("bytes"), json_u64(r.out, "bytes_after"), "stats <= reported");
	ASSERT_LE(json_u64(r.out, "bytes_after"), quota, "reported under the quota");
	na = list(after, MAX_ENTRIES);
	ASSERT_EQ(json_u64(r.out, "removed"), nb - na, "reported = removed");
	ASSERT_EQ(json_u64(r.out, "archived"), nb - na, "each removed entry archived");
	test__note("removed %d entries in %.2f s (%.2f s CPU, %ld KB peak RSS)", nb - na,
		   r.seconds, r.cpu, r.maxrss_kb);

	/* Every loaded program's entry is there; every gone entry archived. */
	for (i = 0; i < nb; i++) {
		bool loaded = before[i].st.st_ctim.tv_sec == before[i].st.st_mtim.tv_sec &&
			      before[i].st.st_ctim.tv_nsec == before[i].st.st_mtim.tv_nsec;

		if (loaded && !in(after, na, before[i].name))
			test__fail(__FILE__, __LINE__, "%s: loaded, and removed", before[i].name);
		if (in(after, na, before[i].name))
			continue;
		if (!archived(ARCHIVE, before[i].name)) {
			missing_archive++;
			continue;
		}
		/* 40 of them: extracting is slow in this guest. */
		if (checked < 40) {
			checked++;
			bad += archive_verifies(ARCHIVE, before[i].name) != 0;
		}
	}
	ASSERT_EQ(missing_archive, 0, "removed entries without an archive");
	ASSERT_EQ(bad, 0, "archives that do not verify");
	test__note("%d archives extracted and verified", checked);
	ASSERT_EQ(count_tmp(ARCHIVE), 0, "no temporary file left");

	/* The oldest went first: nothing left is older than anything removed. */
	{
		struct timespec newest_gone = {};

		for (i = 0; i < nb; i++) {
			bool loaded = before[i].st.st_ctim.tv_sec == before[i].st.st_mtim.tv_sec &&
				      before[i].st.st_ctim.tv_nsec == before[i].st.st_mtim.tv_nsec;

			if (!in(after, na, before[i].name) &&
			    (before[i].st.st_mtim.tv_sec > newest_gone.tv_sec ||
			     (before[i].st.st_mtim.tv_sec == newest_gone.tv_sec &&
			      before[i].st.st_mtim.tv_nsec > newest_gone.tv_nsec)))
				newest_gone = before[i].st.st_mtim;
			(void)loaded;
		}
		for (i = 0; i < na; i++) {
			bool loaded = after[i].st.st_ctim.tv_sec == after[i].st.st_mtim.tv_sec &&
				      after[i].st.st_ctim.tv_nsec == after[i].st.st_mtim.tv_nsec;

			if (!loaded && (after[i].st.st_mtim.tv_sec < newest_gone.tv_sec ||
					(after[i].st.st_mtim.tv_sec == newest_gone.tv_sec &&
					 after[i].st.st_mtim.tv_nsec < newest_gone.tv_nsec)))
				test__fail(__FILE__, __LINE__, "%s kept, but older than a removed one",
					   after[i].name);
		}
	}
	free(r.out);

	/* The same again does nothing. */
	gc(&r, NULL, "--max-size", qarg, "--archive", ARCHIVE, "--json", NULL);
	ASSERT_EQ(r.status, 0, "second run: exit 0");
	ASSERT_EQ(json_u64(r.out, "removed"), 0, "second run: nothing to remove");
	free(r.out);

	for (i = 0; i < 20; i++)
		if (live_fds[i] >= 0)
			close(live_fds[i]);
	for (i = 0; i < 8; i++)
		if (objs[i])
			bpf_object__close(objs[i]);
	system("rm -rf " ARCHIVE);
	stash_umount();
}

/* A dry run on the mount reports exactly what the real run removes. */
static void test_dry_run_matches(void)
{
	static char dry[400][41], real[400][41];
	struct gc_run r = {};
	int nd, nr, fds[5], i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	load_close(100);
	for (i = 0; i < 5; i++)
		fds[i] = load_nth(next_n++);
	load_close(100);
	gc(&r, NULL, "--max-entries", "80", "--dry-run", "--json", NULL);
	ASSERT_EQ(r.status, 0, "dry run");
	nd = json_names(r.out, "would_remove", dry, 400);
	free(r.out);
	ASSERT_EQ(stash_count(), 205, "a dry run removes nothing");
	gc(&r, NULL, "--max-entries", "80", "--json", NULL);
	ASSERT_EQ(r.status, 0, "real run");
	nr = json_names(r.out, "remove", real, 400);
	free(r.out);
	ASSERT_EQ(nd, 125, "would remove 125");
	ASSERT_EQ(nr, nd, "removed as many");
	ASSERT_TRUE(nr == nd && !memcmp(dry, real, sizeof(dry[0]) * nd), "the same, in order");
	ASSERT_EQ(stash_count(), 80, "80 left");
	for (i = 0; i < 5; i++)
		close(fds[i]);
	stash_umount();
}

/* A count that only loaded programs' entries exceed: kept, and exit 73. */
static void test_limit_not_met(void)
{
	struct gc_run r = {};
	int fds[10], i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	load_close(30);
	for (i = 0; i < 10; i++)
		fds[i] = load_nth(next_n++);
	gc(&r, NULL, "--max-entries", "5", "--json", NULL);
	ASSERT_EQ(r.status, 73, "exit 73");
	ASSERT_EQ(json_u64(r.out, "removed"), 30, "every unloaded entry removed");
	ASSERT_EQ(json_u64(r.out, "kept_live"), 10, "the loaded ones kept");
	ASSERT_TRUE(r.out && strstr(r.out, "\"limits_met\":false"), "limits_met false");
	ASSERT_EQ(stash_count(), 10, "10 left");
	free(r.out);
	for (i = 0; i < 10; i++)
		close(fds[i]);
	/* Unloaded now: the next run meets the limit. */
	gc(&r, NULL, "--max-entries", "5", NULL);
	ASSERT_EQ(r.status, 0, "exit 0 once unloaded");
	ASSERT_EQ(stash_count(), 5, "5 left");
	free(r.out);
	stash_umount();
}

/*
 * --age-by access ages by the last open of a file of the entry, and the
 * GC's own pass changes no access time (it only stats directories).
 */
static void test_age_by_access(void)
{
	static struct ent v[64];
	struct bpfstash_meta m;
	struct gc_run r = {};
	struct stat st1, st2;
	struct timespec now;
	char path[256], now_arg[32];
	int n;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	load_close(10);
	n = list(v, 64);
	ASSERT_EQ(n, 10, "10 entries");
	sleep(2);
	ASSERT_OK(read_meta(v[3].name, &m), "read one entry");	/* its atime: now */
	/* Runs take a while on this kernel: pin "now" to just after the read. */
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(now_arg, sizeof(now_arg), "%lld.%09ld", (long long)now.tv_sec + 0, now.tv_nsec);
	snprintf(path, sizeof(path), STASH_ROOT "/%s", v[3].name);
	stat(path, &st1);
	gc(&r, NULL, "--max-age", "1s", "--age-by", "access", "--now", now_arg, "--dry-run",
	   "--json", NULL);
	ASSERT_EQ(json_u64(r.out, "removed"), 9, "dry run: 9 would go");
	free(r.out);
	stat(path, &st2);
	ASSERT_TRUE(st1.st_atim.tv_sec == st2.st_atim.tv_sec &&
		    st1.st_atim.tv_nsec == st2.st_atim.tv_nsec, "the dry run did not touch atime");
	gc(&r, NULL, "--max-age", "1s", "--age-by", "access", "--now", now_arg, "--json", NULL);
	ASSERT_EQ(r.status, 0, "exit 0");
	ASSERT_EQ(stash_count(), 1, "the one read lately stays");
	ASSERT_OK(access(path, F_OK), "it is that one");
	free(r.out);
	stash_umount();
}

static bool same_atime(const struct stat *a, const struct stat *b)
{
	return a->st_atim.tv_sec == b->st_atim.tv_sec && a->st_atim.tv_nsec == b->st_atim.tv_nsec;
}

/*
 * An open with O_NOATIME is not an access.  The GC reads the meta of the
 * entries whose ctime is their mtime that way (a loaded program's, or one
 * unloaded within the clock's tick of its load, which only meta's LOADED
 * flag tells apart), so its pass leaves every access time as it was.
 */
static void test_noatime(void)
{
	static struct ent v[4];
	struct gc_run r = {};
	struct stat st1, st2, st3, st4;
	char path[256], meta[300];
	int fd, mfd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	fd = load_nth(next_n++);
	if (!ASSERT_EQ(list(v, 4), 1, "one entry") || !ASSERT_GE(fd, 0, "load"))
		goto out;
	snprintf(path, sizeof(path), STASH_ROOT "/%s", v[0].name);
	snprintf(meta, sizeof(meta), "%s/meta", path);
	ASSERT_TRUE(v[0].st.st_ctim.tv_sec == v[0].st.st_mtim.tv_sec &&
		    v[0].st.st_ctim.tv_nsec == v[0].st.st_mtim.tv_nsec, "loaded: ctime is mtime");
	stat(path, &st1);
	usleep(20000);
	mfd = open(meta, O_RDONLY | O_NOATIME);
	ASSERT_GE(mfd, 0, "open meta with O_NOATIME");
	close(mfd);
	stat(path, &st2);
	ASSERT_TRUE(same_atime(&st1, &st2), "an O_NOATIME open is no access");
	mfd = open(meta, O_RDONLY);
	close(mfd);
	stat(path, &st3);
	ASSERT_FALSE(same_atime(&st2, &st3), "a plain open is an access");
	/* Over any quota: the entry would go, but for meta's LOADED. */
	gc(&r, NULL, "--max-size", "1", "--json", NULL);
	ASSERT_EQ(r.status, 73, "exit 73: the quota cannot be met");
	ASSERT_EQ(json_u64(r.out, "kept_live"), 1, "the loaded entry kept, from meta's LOADED");
	free(r.out);
	stat(path, &st4);
	ASSERT_TRUE(same_atime(&st3, &st4), "the GC's pass did not touch its atime");
out:
	if (fd >= 0)
		close(fd);
	stash_umount();
}

/* Only a bpfstash or a copy of one: sysfs is refused, unmounted is 69. */
static void test_refuses_other_roots(void)
{
	struct gc_run r = {};

	stash_umount();
	gc(&r, NULL, "--max-entries", "1", NULL);
	ASSERT_EQ(r.status, 69, "default root not mounted: 69");
	free(r.out);
	gc(&r, NULL, "--root", "/sys/fs", "--max-entries", "1", NULL);
	ASSERT_EQ(r.status, 64, "sysfs: refused, 64");
	free(r.out);
	gc(&r, NULL, "--root", "/proc", "--max-age", "1s", NULL);
	ASSERT_EQ(r.status, 64, "procfs: refused, 64");
	free(r.out);
}

/*
 * Runs killed with SIGKILL at random points, each followed by a normal
 * run, on the real filesystem with an archive: 12 on the debug kernel,
 * where starting a process alone takes a second; 50 on the bench kernel
 * (BPFSTASH_GC_KILL_ROUNDS=50, tests/guest/SUITES.bench).  Between rounds, new
 * programs come and go, so that each run has work to do.  Afterwards:
 * every entry that left the stash is archived (and verifies), no
 * temporary file is left, and each round ends as an uninterrupted run
 * would: the newest 40 unloaded entries, and every loaded one.
 */
static void test_kill_restart(void)
{
	static struct ent before[MAX_ENTRIES], after[MAX_ENTRIES], killed_state[MAX_ENTRIES];
	static char gone[64][41];
	const char *env_rounds = getenv("BPFSTASH_GC_KILL_ROUNDS");
	int rounds = env_rounds ? atoi(env_rounds) : 12;
	int round, killed = 0, ngone = 0, bad = 0, i, fds[3];
	unsigned int seed = 0x6c;
	struct gc_run r = {};
	double full = 0;

	if (!ASSERT_OK(stash_mount("max_entries=100000"), "mount"))
		return;
	system("rm -rf " ARCHIVE);
	for (i = 0; i < 3; i++)
		fds[i] = load_nth(next_n++);
	/* How long a run takes here, to kill within it. */
	load_close(40);
	gc(&r, NULL, "--max-entries", "40", "--archive", ARCHIVE, NULL);
	free(r.out);
	load_close(10);
	gc(&r, NULL, "--max-entries", "40", "--archive", ARCHIVE, NULL);
	full = r.seconds;
	free(r.out);
	test__note("a run removing 10 entries takes %.2f s", full);

	for (round = 0; round < rounds; round++) {
		struct gc_env env = {};
		bool sampled = false;
		char at[16];
		int nb, nk, na, j, expect_left;

		load_close(10);
		nb = list(before, MAX_ENTRIES);
		if (round % 2) {
			/* A random step: about 7 per removal, 10 removals. */
			snprintf(at, sizeof(at), "%d", 1 + rand_r(&seed) % 75);
			env.kill_at = at;
		} else {
			env.kill_after = full * (rand_r(&seed) % 1000) / 1000.0;
		}
		gc(&r, &env, "--max-entries", "40", "--archive", ARCHIVE, NULL);
		killed += r.status == 128 + SIGKILL;
		free(r.out);
		/* Right after the kill: what is gone is archived, completely. */
		nk = list(killed_state, MAX_ENTRIES);
		for (j = 0; j < nb; j++) {
			if (in(killed_state, nk, before[j].name))
				continue;
			if (!archived(ARCHIVE, before[j].name))
				test__fail(__FILE__, __LINE__, "round %d: %s gone, not archived",
					   round, before[j].name);
			else if (!sampled && ngone < 64) {
				/* One per round is extracted and verified at the end. */
				memcpy(gone[ngone++], before[j].name, 41);
				sampled = true;
			}
		}
		gc(&r, NULL, "--max-entries", "40", "--archive", ARCHIVE, NULL);
		if (r.status != 0)
			test__fail(__FILE__, __LINE__, "round %d: rerun exit %d", round, r.status);
		free(r.out);
		/* As if uninterrupted: the newest entries, by (load time, name). */
		qsort(before, nb, sizeof(*before), cmp_ent_age);
		na = list(after, MAX_ENTRIES);
		expect_left = 0;
		for (j = nb - 1; j >= 0; j--) {
			bool loaded = before[j].st.st_ctim.tv_sec == before[j].st.st_mtim.tv_sec &&
				      before[j].st.st_ctim.tv_nsec == before[j].st.st_mtim.tv_nsec;
			bool keep = loaded || expect_left < 40 - 3;

			/* 40 in all, 3 of them loaded (the oldest: kept anyway). */
			if (keep && !loaded)
				expect_left++;
			if (keep != in(after, na, before[j].name)) {
				test__fail(__FILE__, __LINE__, "round %d: %s %s", round,
					   before[j].name, keep ? "removed, should stay" :
					   "kept, should be removed");
				break;
			}
			if (!keep && !archived(ARCHIVE, before[j].name))
				test__fail(__FILE__, __LINE__, "round %d: %s not archived", round,
					   before[j].name);
		}
		if (count_tmp(ARCHIVE))
			test__fail(__FILE__, __LINE__, "round %d: temporary files left", round);
		if (test__failed)
			break;
	}
	test__note("%d of %d runs were killed before they ended", killed, round);
	ASSERT_GE(killed, rounds / 2, "most runs were killed");
	/* Every entry that left during a killed run: its archive verifies. */
	for (i = 0; i < ngone; i++)
		bad += archive_verifies(ARCHIVE, gone[i]) != 0;
	ASSERT_EQ(bad, 0, "archives of entries removed by killed runs verify");
	test__note("%d archives of entries removed by killed runs extracted and verified", ngone);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	system("rm -rf " ARCHIVE);
	stash_umount();
}

/* Set or clear MOUNT_ATTR_RDONLY on @path and every mount below it. */
static int mount_rdonly(const char *path, bool ro)
{
	struct mount_attr attr = {
		.attr_set = ro ? MOUNT_ATTR_RDONLY : 0,
		.attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY,
	};

	return syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr));
}

/*
 * What bpfstash-gc.service does to the process, without systemd (the
 * guest's PID 1 is a shell script): in a private mount namespace,
 * ProtectKernelTunables= makes /sys read-only (recursively, as systemd
 * does with mount_setattr), ReadWritePaths=/sys/fs/bpfstash makes the
 * stash writable again, NoNewPrivileges=yes and CapabilityBoundingSet=
 * CAP_SYSLOG CAP_PERFMON leave root with those capabilities only, under
 * kptr_restrict=1.
 */
static void test_service_sandbox(void)
{
	const struct gc_env unit = { .sandbox = true,
				     .caps = 1ULL << CAP_SYSLOG | 1ULL << CAP_PERFMON };
	const struct gc_env syslog_only = { .sandbox = true, .caps = 1ULL << CAP_SYSLOG };
	const struct gc_env no_caps = { .sandbox = true, .caps = 0 };
	char old_kptr[16] = "";
	struct gc_run r = {};
	int status;
	pid_t pid;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	load_close(40);
	if (!ASSERT_OK(sysctl_set("/proc/sys/kernel/kptr_restrict", "1", old_kptr,
				  sizeof(old_kptr)), "kptr_restrict=1"))
		goto out;

	pid = fork();
	if (pid == 0) {
		/* The child is the service: its own mount namespace. */
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(10);
		if (mount_rdonly("/sys", true))
			_exit(11);
		/* Without ReadWritePaths: rmdir fails with EROFS, nothing removed. */
		gc(&r, &unit, "--max-entries", "30", "--json", NULL);
		if (r.status != 73 || !strstr(r.out, "Read-only file system"))
			_exit(12);
		if (stash_count() != 40)
			_exit(13);
		free(r.out);
		if (mount_rdonly(STASH_ROOT, false))
			_exit(14);
		/* No capability at all: the stash cannot even be read. */
		gc(&r, &no_caps, "--max-entries", "30", NULL);
		if (r.status != 69)
			_exit(15);
		free(r.out);
		/* CAP_SYSLOG shows addresses, but reading entries takes CAP_PERFMON too. */
		gc(&r, &syslog_only, "--max-entries", "30", NULL);
		if (r.status != 69)
			_exit(19);
		free(r.out);
		/* The unit's two are enough. */
		gc(&r, &unit, "--max-entries", "30", "--json", NULL);
		if (r.status != 0 || json_u64(r.out, "removed") != 10)
			_exit(16);
		if (stash_count() != 30)
			_exit(17);
		/* And /sys around it is still read-only. */
		if (!mkdir("/sys/fs/bpfstash-gc-test", 0700) || errno != EROFS)
			_exit(18);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (!ASSERT_TRUE(WIFEXITED(status), "sandboxed child exited"))
		goto out;
	switch (WEXITSTATUS(status)) {
	case 0:
		break;
	case 10: case 11: case 14:
		test__fail(__FILE__, __LINE__, "could not set up the mount sandbox (step %d)",
			   WEXITSTATUS(status));
		break;
	case 12: case 13:
		test__fail(__FILE__, __LINE__, "read-only /sys: expected EROFS and exit 73 (%d)",
			   WEXITSTATUS(status));
		break;
	case 15:
		test__fail(__FILE__, __LINE__, "without CAP_SYSLOG the stash should be unreadable");
		break;
	case 19:
		test__fail(__FILE__, __LINE__, "with CAP_SYSLOG alone the stash should be unreadable");
		break;
	default:
		test__fail(__FILE__, __LINE__, "with CAP_SYSLOG and CAP_PERFMON: step %d failed",
			   WEXITSTATUS(status));
	}
	/* Outside the namespace nothing was made read-only. */
	ASSERT_EQ(stash_count(), 30, "30 entries left, seen from outside");
out:
	if (old_kptr[0])
		sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	stash_umount();
}

/*
 * Scan and expire at scale, on the real filesystem: a dry run (the scan
 * and the sort) and a real run, each one process; wall, CPU and peak RSS.
 * BPFSTASH_GC_SCALE sets the number of entries (bench/gc_scale.sh runs
 * 100 000 on the bench kernel); make check runs 1000.
 */
static void test_scale(void)
{
	const char *s = getenv("BPFSTASH_GC_SCALE"), *ins = getenv("BPFSTASH_GC_SCALE_INSNS");
	int n = s ? atoi(s) : 1000, insns = ins ? atoi(ins) : 2, loaded = 0, i;
	const struct gc_env find_env = { .exe = "find" }, quiet = { .quiet = true };
	struct gc_run r = {};
	char opts[64], keep[32], want[96];
	struct timespec t0, t1;

	snprintf(opts, sizeof(opts), "size=4G,max_entries=%d", n + 1000);
	if (!ASSERT_OK(stash_mount(opts), "mount"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		int fd = insns > 2 ? load_nth_sized(next_n++, insns) : load_nth(next_n++);

		if (fd >= 0) {
			loaded++;
			close(fd);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT_EQ(loaded, n, "programs loaded");
	ASSERT_EQ(stash_count(), n, "entries");
	test__note("%d programs of %d instructions loaded and closed in %.1f s; the stash "
		   "holds %lld bytes", n, insns,
		   (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, stash_stat("bytes"));
	/* What starting the tool costs here, apart from its work. */
	gc(&r, NULL, "--version", NULL);
	test__note("starting bpfstash-gc (--version): %.3f s wall, %.3f s CPU, %ld KB peak RSS",
		   r.seconds, r.cpu, r.maxrss_kb);
	free(r.out);

	/*
	 * The floor: what listing and stat()ing every entry costs the kernel,
	 * with find(1).  Cold (the first lookups make the inodes), then warm.
	 */
	gc(&r, &find_env, "find", STASH_ROOT, "-maxdepth", "1", "-printf", "%T@ %C@ %s\n", NULL);
	test__note("%d entries: find -printf (readdir + lstat each), cold: %.3f s wall, "
		   "%.3f s CPU (%.3f user, %.3f sys)", n, r.seconds, r.cpu, r.user, r.sys);
	free(r.out);

	snprintf(keep, sizeof(keep), "%d", n / 10);
	snprintf(want, sizeof(want), "would remove %d of %d entries", n - n / 10, n);
	/* A dry run says "Would remove" for each: not to the serial console. */
	gc(&r, &quiet, "--max-entries", keep, "--dry-run", NULL);
	ASSERT_EQ(r.status, 0, "dry run");
	ASSERT_TRUE(r.out && strstr(r.out, want), want);
	test__note("%d entries: bpfstash-gc scan and sort (dry run): %.3f s wall, %.3f s CPU "
		   "(%.3f user, %.3f sys), %ld KB peak RSS", n, r.seconds, r.cpu, r.user, r.sys,
		   r.maxrss_kb);
	free(r.out);

	gc(&r, &find_env, "find", STASH_ROOT, "-maxdepth", "1", "-printf", "%T@ %C@ %s\n", NULL);
	test__note("%d entries: find -printf, warm: %.3f s wall, %.3f s CPU (%.3f user, %.3f sys)",
		   n, r.seconds, r.cpu, r.user, r.sys);
	free(r.out);

	gc(&r, NULL, "--max-entries", keep, NULL);
	ASSERT_EQ(r.status, 0, "real run");
	ASSERT_EQ(stash_count(), n / 10, "10% left");
	test__note("%d entries: bpfstash-gc expire %d: %.3f s wall, %.3f s CPU (%.3f user, "
		   "%.3f sys), %ld KB peak RSS", n, n - n / 10, r.seconds, r.cpu, r.user, r.sys,
		   r.maxrss_kb);
	free(r.out);
	stash_umount();
}

static const struct test tests[] = {
	{ "size_quota_and_archive", test_size_quota_and_archive },
	{ "dry_run_matches", test_dry_run_matches },
	{ "limit_not_met", test_limit_not_met },
	{ "age_by_access", test_age_by_access },
	{ "noatime", test_noatime },
	{ "refuses_other_roots", test_refuses_other_roots },
	{ "kill_restart", test_kill_restart },
	{ "service_sandbox", test_service_sandbox, true },
	{ "scale", test_scale },
	{}
};

int main(int argc, char **argv)
{
	const char *top = getenv("BPFSTASH_TOP");

	snprintf(gc_bin, sizeof(gc_bin), "%s/build/bpfstash-gc/bpfstash-gc", top ? top : ".");
	if (access(gc_bin, X_OK)) {
		printf("FAIL gc: %s not built (make tools)\n", gc_bin);
		return 1;
	}
	/*
	 * libbpf probes the kernel with programs of its own the first time it
	 * loads one: let it do so now, while no stash is mounted, so that the
	 * tests count their own entries only.
	 */
	stash_umount();
	close(load_nth(0));
	return test_main("gc", tests, argc, argv);
}
