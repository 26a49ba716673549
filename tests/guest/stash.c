// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bpfstash store and filesystem, against the real kernel: entries are
 * what bpf_prog_get_info_by_fd() returns, byte for byte, they outlive their
 * programs, limits refuse and count, the namespace is read-only, only
 * those who may see kernel addresses can read it, and the store outlives
 * its view: unmounting drops nothing, stopping drops everything.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../lib/entrycheck.h"
#include "../lib/stashtrace.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

static void test_entries_match_info(void)
{
	static const char *const objs[] = { "subprogs", "tiny" };
	int before, fd;
	size_t i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct bpf_object *obj = test_prog_load(objs[i], &fd);

		if (!ASSERT_PTR_OK(obj, objs[i]))
			continue;
		check_entry_matches(fd, objs[i]);
		bpf_object__close(obj);
	}
	/* No BTF, no line info: still exactly one entry, still equal. */
	before = stash_count();
	fd = load_raw_prog("stash_nobtf");
	if (ASSERT_GE(fd, 0, "load without BTF")) {
		ASSERT_EQ(stash_count(), before + 1, "one entry per program");
		check_entry_matches(fd, "nobtf");
		close(fd);
	}
	stash_umount();
}

/* The point of the feature: the program is gone, its entry is not. */
static void test_unloaded_entry_complete(void)
{
	struct bpfstash_entry *e;
	struct bpfstash *stash;
	struct bpf_object *obj;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char hex[41];
	int fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	obj = test_prog_load("subprogs", &fd);
	if (!ASSERT_PTR_OK(obj, "load"))
		goto out;
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info");
	bpf_object__close(obj);		/* the last reference */

	if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry after close"))
		goto out;
	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open"))
		goto out;
	if (ASSERT_OK(bpfstash_entry_load(stash, hex, 0, &e), "load entry")) {
		const struct bpfstash_meta *m = bpfstash_entry_meta(e);

		ASSERT_OK(bpfstash_entry_verify(e), "complete: verifies");
		ASSERT_FALSE(bpfstash_entry_loaded(e), "marked unloaded");
		ASSERT_GT(m->unload_time, m->load_time, "unload_time > load_time");
		ASSERT_GE(m->unload_time_real, m->load_time_real, "unload_time_real");
		ASSERT_EQ(bpfstash_entry_nr_funcs(e), info.nr_jited_ksyms, "all functions");
		check_entry_views(e, "unloaded");
		bpfstash_entry_free(e);
	}
	bpfstash_close(stash);
out:
	stash_umount();
}

/* Bytes of file @name of the entry of program @fd, or -1. */
static long long entry_file_size(int fd, const char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char hex[41], path[128];
	struct stat st;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || stash_find_prog(info.id, hex))
		return -1;
	snprintf(path, sizeof(path), STASH_ROOT "/%s/%s", hex, name);
	return stat(path, &st) ? -1 : st.st_size;
}

/*
 * Programs written outside the project, from the 6.12 tree's BPF
 * selftests (tests/Makefile), loaded by libbpf as their tests load them:
 * every program of each object has an entry equal to what the kernel
 * reports, and its text files equal libbpfstash's rendering.  Their BTF
 * runs to 12 KB, held in pieces.
 */
static void test_external_programs(void)
{
	static const char *const objs[] = {
		"ext/test_l4lb", "ext/test_l4lb_noinline", "ext/test_xdp_noinline",
		"ext/strobemeta_nounroll1", "ext/pyperf_subprogs",
	};
	long long btf, max_btf = 0;
	size_t i, nprogs = 0;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct bpf_program *prog;
		struct bpf_object *obj;
		char what[128];
		int err;

		obj = bpf_object__open_file(test_prog_path(objs[i]), NULL);
		if (!ASSERT_PTR_OK(obj, objs[i]))
			continue;
		err = bpf_object__load(obj);
		if (!ASSERT_OK(err, objs[i])) {
			bpf_object__close(obj);
			continue;
		}
		bpf_object__for_each_program(prog, obj) {
			snprintf(what, sizeof(what), "%s/%s", objs[i], bpf_program__name(prog));
			check_entry_matches(bpf_program__fd(prog), what);
			btf = entry_file_size(bpf_program__fd(prog), "btf");
			max_btf = btf > max_btf ? btf : max_btf;
			nprogs++;
		}
		bpf_object__close(obj);
	}
	test__note("%zu programs of %zu objects, BTF up to %lld bytes", nprogs,
		   sizeof(objs) / sizeof(objs[0]), max_btf);
	/* Held in pieces, as a BTF blob of more than a few hundred bytes is. */
	ASSERT_GT(max_btf, 8192, "multi-kilobyte BTF");
	/* And once they are unloaded. */
	check_stash_views("external, unloaded", 64);
	stash_umount();
}

/*
 * A program loaded again while the first copy is still loaded: only its
 * JITed image is new (it holds addresses).  Line info, jited line info,
 * func info and BTF are found again by their bytes, so the second load
 * hashes exactly their sizes less than the first (libbpf's probe program,
 * loaded with each object, hashes the same both times).  The second entry
 * is still byte for byte what bpf_prog_get_info_by_fd() returns.
 */
static void test_reload_shares_blobs(void)
{
	static const char *const objs[] = { "subprogs", "large" };
	static const char *const shared[] = {
		"line_info", "jited_line_info", "func_info", "btf",
	};
	size_t i, j;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		long long h0, h1, btf, dedup, bytes = 0;
		struct bpf_object *first, *again;
		int fd1, fd2;

		h0 = stash_stat("hashed_bytes");
		first = test_prog_load(objs[i], &fd1);
		if (!ASSERT_PTR_OK(first, objs[i]))
			continue;
		h1 = stash_stat("hashed_bytes");
		btf = stash_stat("btf_hash_cached");
		dedup = stash_stat("blob_dedup");
		for (j = 0; j < sizeof(shared) / sizeof(shared[0]); j++) {
			long long n = entry_file_size(fd1, shared[j]);

			ASSERT_GT(n, 0, shared[j]);
			bytes += n;
		}
		again = test_prog_load(objs[i], &fd2);
		if (ASSERT_PTR_OK(again, "load again")) {
			ASSERT_EQ((h1 - h0) - (stash_stat("hashed_bytes") - h1), bytes,
				  "only the image hashed again");
			ASSERT_GE(stash_stat("blob_dedup"), dedup + 3,
				  "line info, jited line info and func info shared");
			ASSERT_EQ(stash_stat("btf_hash_cached"), btf + 1, "BTF shared");
			check_entry_matches(fd2, objs[i]);
			bpf_object__close(again);
		}
		check_entry_matches(fd1, objs[i]);
		bpf_object__close(first);
	}
	check_stash_views("reloaded, unloaded", 64);
	stash_umount();
}

/* Memory the entry of program @fd holds (meta.bytes), or -1. */
static long long entry_held_bytes(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	long long v = -1;
	size_t size;
	char hex[41];
	void *meta;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || stash_find_prog(info.id, hex) ||
	    stash_read(hex, "meta", &meta, &size))
		return -1;
	if (size >= sizeof(struct bpfstash_meta))
		v = ((struct bpfstash_meta *)meta)->bytes;
	free(meta);
	return v;
}

/*
 * What an entry holds beyond its content: per-entry and per-blob
 * structures and allocator rounding.  Blobs and the funcs file are held in
 * pieces, so that nothing rounds up to a page or to a kmalloc bucket: the
 * large program's 49 KB of line info and 24 KB of jited line info did
 * (9.6 KB over), and so did the funcs file of the program of 256 functions
 * (17.6 KB: 2.9 KB over).  The target is 1 KiB, for a program of a few
 * functions with BTF and line info, for the largest number of functions,
 * and for a program of 200 KB of JITed code.  On the debug kernel as on
 * the bench kernel (the entry holds no lock or work item that lockdep
 * would grow): 670, 714, 947 and 402 B.
 */
static void test_entry_overhead(void)
{
	static const char *const objs[] = { "subprogs", "large", "many", NULL };
	static const char *const files[] = {
		"meta", "funcs", "jited", "line_info", "jited_line_info", "func_info", "btf",
		"pokes",
	};
	size_t i, j;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		const char *what = objs[i] ? objs[i] : "straight-32768";
		struct bpf_object *obj = NULL;
		long long content = 0, held;
		int fd;

		if (objs[i]) {
			obj = test_prog_load(objs[i], &fd);
			if (!ASSERT_PTR_OK(obj, what))
				continue;
		} else {
			fd = load_straight_prog("stash_straight", 32768, 0);
			if (!ASSERT_GE(fd, 0, what))
				continue;
		}
		for (j = 0; j < sizeof(files) / sizeof(files[0]); j++) {
			long long n = entry_file_size(fd, files[j]);

			content += n > 0 ? n : 0;	/* an optional file: none */
		}
		held = entry_held_bytes(fd);
		test__note("%s: holds %lld B for %lld B of content, %lld B over",
			   what, held, content, held - content);
		ASSERT_GT(held, content, "holds at least its content");
		ASSERT_LE(held - content, 1024, "overhead per entry");
		if (obj)
			bpf_object__close(obj);
		else
			close(fd);
	}
	check_stash_views("overhead", 64);
	stash_umount();
}

/* Starting (here, mounting) stores what was loaded before; stopping drops everything. */
static void test_preexisting_programs(void)
{
	char hex[41];
	int fd;

	stash_umount();
	fd = load_raw_prog("stash_before");
	if (!ASSERT_GE(fd, 0, "load before mount"))
		return;
	if (ASSERT_OK(stash_mount(NULL), "mount")) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		bpf_obj_get_info_by_fd(fd, &info, &len);
		ASSERT_OK(stash_find_prog(info.id, hex), "entry of the earlier program");
		ASSERT_GE(stash_stat("preexisting"), 1, "counted as preexisting");
		check_entry_matches(fd, "preexisting");
		/* Loaded by someone else, before: no loader. */
		if (!stash_find_prog(info.id, hex)) {
			struct bpfstash_meta *m;
			size_t size;

			if (ASSERT_OK(stash_read(hex, "meta", (void **)&m, &size), "meta") &&
			    ASSERT_GE(size, sizeof(*m), "meta size")) {
				ASSERT_EQ(m->loader_tgid, 0, "no loader pid");
				ASSERT_STREQ(m->loader_comm, "", "no loader comm");
				ASSERT_EQ(m->loader_cgroup_id, 0, "no loader cgroup");
			}
			free(m);
		}
	}
	stash_umount();
	ASSERT_OK(stash_mount(NULL), "mount again");
	ASSERT_EQ(stash_stat("bytes") > 0, true, "the loaded program is stored again");
	close(fd);
	stash_umount();
	ASSERT_OK(stash_mount(NULL), "mount a third time");
	ASSERT_EQ(stash_count(), 0, "stopping dropped every entry");
	ASSERT_EQ(stash_stat("bytes"), 0, "no bytes held");
	stash_umount();
}

static void test_limits_refuse_and_count(void)
{
	long long considered, stored, reloaded, refused, entries;
	char opts[64];
	int loaded;

	if (!ASSERT_OK(stash_mount("max_entries=5"), "mount max_entries=5"))
		return;
	entries = stash_stat("entries");
	considered = stash_stat("considered");
	stored = stash_stat("stored");
	reloaded = stash_stat("reloaded");
	refused = stash_stat("refused_full");
	loaded = load_close_n(20);
	ASSERT_EQ(loaded, 20, "every load succeeds");
	ASSERT_EQ(stash_stat("entries"), 5, "entries capped at max_entries");
	/* A program identical to an unloaded one, at its address, reuses its entry. */
	ASSERT_EQ((stash_stat("stored") - stored) - (stash_stat("reloaded") - reloaded),
		  5 - entries, "new entries up to the limit");
	ASSERT_EQ(stash_stat("considered") - considered, 20, "considered == loads");
	ASSERT_EQ(stash_stat("stored") - stored + stash_stat("refused_full") - refused, 20,
		  "stored + refused == loads");
	ASSERT_GT(stash_stat("refused_full") - refused, 0, "refusals counted");

	/* size=: room for about two tiny entries more. */
	snprintf(opts, sizeof(opts), "size=%lld,max_entries=1000",
		 stash_stat("bytes") + 2 * 700);
	if (ASSERT_OK(stash_control(opts), "size= through control"))  {
		stored = stash_stat("stored");
		refused = stash_stat("refused_full");
		loaded = load_close_n(10);
		ASSERT_EQ(loaded, 10, "every load succeeds when full by size");
		ASSERT_LE(stash_stat("bytes"), stash_stat("max_bytes"), "bytes within size=");
		ASSERT_EQ(stash_stat("stored") - stored + stash_stat("refused_full") - refused,
			  10, "stored + refused == loads");
	}
	stash_umount();
}

/* Bad options, through the new mount API, which returns the message. */
static void test_bad_mount_options(void)
{
	static const struct { const char *key, *val; } bad[] = {
		{ "bogus", "1" }, { "mode", "8" }, { "mode", "17777" },
		{ "size", "abc" }, { "size", "12Q" }, { "size", "0" },
		{ "max_entries", "0" }, { "max_entries", "-1" }, { "max_entries", "x" },
		{ "uid", "4294967295" }, { "gid", "4294967295" }, { "uid", "root" },
	};
	size_t i;

	stash_umount();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char msg[256] = "";
		int fsfd, err;
		ssize_t n;

		fsfd = syscall(SYS_fsopen, "bpfstash", FSOPEN_CLOEXEC);
		if (!ASSERT_GE(fsfd, 0, "fsopen"))
			return;
		err = syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, bad[i].key,
			      bad[i].val, 0);
		if (err == 0)
			err = syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
		ASSERT_ERRNO(err, EINVAL, bad[i].key);
		n = read(fsfd, msg, sizeof(msg) - 1);
		msg[n > 0 ? n : 0] = '\0';
		ASSERT_TRUE(n > 0 && strstr(msg, bad[i].key), "a message naming the option");
		if (n > 0)
			test__note("%s=%s: %s", bad[i].key, bad[i].val, msg);
		close(fsfd);
	}
	ASSERT_FALSE(stash_mounted(), "nothing mounted");
}

static bool mounts_show(const char *needle)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " bpfstash ") && strstr(line, needle))
			found = true;
	if (f)
		fclose(f);
	return found;
}

static void test_options_show_and_remount(void)
{
	struct stat st;

	if (!ASSERT_OK(stash_mount("mode=0750,uid=1000,gid=1000,size=8M,max_entries=100"), "mount"))
		return;
	ASSERT_TRUE(mounts_show("uid=1000,gid=1000,mode=750,size=8388608,max_entries=100"),
		    "/proc/mounts shows the options");
	ASSERT_OK(stat(STASH_ROOT, &st), "stat root");
	ASSERT_EQ(st.st_mode & 07777, 0750, "root mode");
	ASSERT_EQ(st.st_uid, 1000, "root uid");
	ASSERT_EQ(stash_stat("max_entries"), 100, "max_entries applied");

	/*
	 * Remount changes what is given of the view, nothing else; the
	 * running store's limits belong to control.
	 */
	ASSERT_OK(stash_remount("max_entries=200,mode=0770"), "remount");
	ASSERT_OK(stat(STASH_ROOT, &st), "stat root");
	ASSERT_EQ(st.st_mode & 07777, 0770, "mode changed");
	ASSERT_EQ(st.st_uid, 1000, "uid kept");
	ASSERT_EQ(stash_stat("max_entries"), 100, "max_entries kept: a mount does not change it");
	ASSERT_EQ(stash_stat("max_bytes"), 8 << 20, "size kept");
	ASSERT_OK(stash_control("max_entries=200"), "max_entries through control");
	ASSERT_EQ(stash_stat("max_entries"), 200, "max_entries changed");
	{
		/* A mount of the running store that asks for other limits is told so. */
		char msg[512] = "";
		int fsfd, err;
		ssize_t n;

		fsfd = syscall(SYS_fsopen, "bpfstash", FSOPEN_CLOEXEC);
		if (ASSERT_GE(fsfd, 0, "fsopen")) {
			err = syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "size", "1M", 0);
			if (!err)
				err = syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
			ASSERT_OK(err, "a mount of the running store with size=1M succeeds");
			n = read(fsfd, msg, sizeof(msg) - 1);
			msg[n > 0 ? n : 0] = '\0';
			ASSERT_TRUE(n > 0 && msg[0] == 'w' && strstr(msg, "limits left as they are") &&
				    strstr(msg, "size=8388608 max_entries=200"),
				    "a warning with the limits the store keeps");
			if (n > 0)
				test__note("mount with size=1M: %s", msg);
			close(fsfd);
		}
		ASSERT_EQ(stash_stat("max_bytes"), 8 << 20, "size kept");
	}
	ASSERT_ERRNO(stash_remount("bogus=1"), EINVAL, "remount with a bad option");
	ASSERT_FALSE(mounts_show("delegate_readers"), "no delegation unless given");
	ASSERT_OK(stash_remount("delegate_readers"), "remount with delegate_readers");
	ASSERT_TRUE(mounts_show("mode=770,delegate_readers"), "/proc/mounts shows the delegation");
	ASSERT_OK(stash_remount("nodelegate_readers"), "remount with nodelegate_readers");
	ASSERT_FALSE(mounts_show("delegate_readers"), "and its end");
	stash_umount();

	if (ASSERT_OK(stash_mount(NULL), "mount with defaults")) {
		ASSERT_OK(stat(STASH_ROOT, &st), "stat root");
		ASSERT_EQ(st.st_mode & 07777, 0700, "default mode 0700");
		ASSERT_EQ(st.st_uid, 0, "default owner root");
		ASSERT_FALSE(mounts_show("mode="), "defaults are not shown");
	}
	stash_umount();
}

static void test_readonly_namespace(void)
{
	char hex[41], path[256], path2[256];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, pfd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	pfd = load_raw_prog("stash_ro");
	bpf_obj_get_info_by_fd(pfd, &info, &len);
	if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
		goto out;
	snprintf(path, sizeof(path), STASH_ROOT "/%s/jited", hex);

	ASSERT_ERR(open(STASH_ROOT "/newfile", O_CREAT | O_WRONLY, 0600), "create in root");
	snprintf(path2, sizeof(path2), STASH_ROOT "/%s/new", hex);
	ASSERT_ERR(open(path2, O_CREAT | O_WRONLY, 0600), "create in entry");
	ASSERT_ERR(mkdir(STASH_ROOT "/newdir", 0700), "mkdir");
	snprintf(path2, sizeof(path2), STASH_ROOT "/%s", hex);
	ASSERT_ERR(rename(path2, STASH_ROOT "/renamed"), "rename entry");
	ASSERT_ERR(rename(path, STASH_ROOT "/renamed"), "rename file");
	ASSERT_ERR(chmod(path, 0644), "chmod file");
	ASSERT_ERR(chmod(path2, 0755), "chmod entry");
	ASSERT_ERR(chmod(STASH_ROOT, 0755), "chmod root");
	ASSERT_ERR(chown(path, 1000, 1000), "chown");
	ASSERT_ERR(truncate(path, 0), "truncate");
	ASSERT_ERR(open(path, O_WRONLY), "open for write");
	ASSERT_ERR(open(path, O_RDWR), "open read-write");
	ASSERT_ERR(open(path, O_RDONLY | O_TRUNC), "open with O_TRUNC");
	ASSERT_ERR(link(path, STASH_ROOT "/hardlink"), "link");
	ASSERT_ERR(symlink("x", STASH_ROOT "/symlink"), "symlink");
	ASSERT_ERR(unlink(path), "unlink a file of an entry");
	ASSERT_ERR(unlink(STASH_ROOT "/stats"), "unlink stats");
	ASSERT_ERR(rmdir(STASH_ROOT "/stats"), "rmdir stats");
	fd = open(STASH_ROOT "/stats", O_WRONLY);
	ASSERT_ERR(fd, "write stats");
	ASSERT_ERRNO(rmdir(path2), EBUSY, "rmdir of a loaded program's entry");

	/* Nothing changed. */
	ASSERT_OK(access(path, R_OK), "entry still there");
	check_entry_matches(pfd, "unchanged");
	close(pfd);
	ASSERT_OK(rmdir(path2), "rmdir once unloaded");
	ASSERT_ERRNO(access(path2, F_OK), ENOENT, "gone");
	ASSERT_ERRNO(rmdir(path2), ENOENT, "rmdir again");
	ASSERT_EQ(stash_stat("deleted"), 1, "deleted counted");
out:
	stash_umount();
}

/* An open file keeps the entry's data after rmdir: no torn reads. */
static void test_open_file_survives_rmdir(void)
{
	char hex[41], path[256];
	void *before = NULL, *after;
	size_t size = 0;
	ssize_t n;
	int pfd, fd;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	{
		struct bpf_object *obj = test_prog_load("subprogs", &pfd);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!ASSERT_PTR_OK(obj, "load"))
			goto out;
		bpf_obj_get_info_by_fd(pfd, &info, &len);
		bpf_object__close(obj);
		if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
			goto out;
	}
	if (!ASSERT_OK(stash_read(hex, "jited", &before, &size), "read"))
		goto out;
	snprintf(path, sizeof(path), STASH_ROOT "/%s/jited", hex);
	fd = open(path, O_RDONLY);
	ASSERT_GE(fd, 0, "open");
	snprintf(path, sizeof(path), STASH_ROOT "/%s", hex);
	ASSERT_OK(rmdir(path), "rmdir while open");
	after = calloc(1, size + 1);
	n = read(fd, after, size + 1);
	ASSERT_EQ(n, (ssize_t)size, "whole file still readable");
	ASSERT_MEMEQ(after, before, size, "same bytes");
	free(after);
	close(fd);
	free(before);
out:
	stash_umount();
}

static int try_read_entry(void *arg)
{
	char path[256];
	int fd;

	/* 0: denied everywhere; 1: listed the root; 2: opened a file. */
	if (opendir(STASH_ROOT))
		return 1;
	snprintf(path, sizeof(path), STASH_ROOT "/%s/jited", (char *)arg);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		return 2;
	return 0;
}

static void test_unprivileged_denied(void)
{
	char hex[41], old_kptr[16] = "", old_paranoid[16] = "";
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int pfd;

	/* mode=0755 and a group: DAC lets uid 1000 in; the second gate must not. */
	if (!ASSERT_OK(stash_mount("mode=0755,gid=1000"), "mount"))
		return;
	pfd = load_raw_prog("stash_unpriv");
	ASSERT_GE(pfd, 0, "load");
	ASSERT_OK(bpf_obj_get_info_by_fd(pfd, &info, &len), "info");
	ASSERT_OK(stash_find_prog(info.id, hex), "entry");
	sysctl_set("/proc/sys/kernel/kptr_restrict", "1", old_kptr, sizeof(old_kptr));
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "2", old_paranoid,
		   sizeof(old_paranoid));
	ASSERT_EQ(run_unprivileged(try_read_entry, hex), 0, "kptr_restrict=1: unprivileged denied");
	sysctl_set("/proc/sys/kernel/kptr_restrict", "0", NULL, 0);
	ASSERT_EQ(run_unprivileged(try_read_entry, hex), 0,
		  "kptr_restrict=0, perf_event_paranoid=2: denied");
	/*
	 * kallsyms_show_value(): kptr_restrict=0 and paranoid<=1 show to
	 * anyone; the stash, only to CAP_PERFMON or CAP_SYS_ADMIN unless the
	 * mount delegates reading to whom DAC lets in.
	 */
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "1", NULL, 0);
	ASSERT_EQ(run_unprivileged(try_read_entry, hex), 0,
		  "kptr_restrict=0, perf_event_paranoid=1, no delegate_readers: denied");
	ASSERT_OK(stash_remount("delegate_readers"), "remount with delegate_readers");
	ASSERT_EQ(run_unprivileged(try_read_entry, hex), 1,
		  "kptr_restrict=0, perf_event_paranoid=1, delegate_readers: allowed, as kallsyms");
	ASSERT_OK(stash_remount("nodelegate_readers"), "remount with nodelegate_readers");
	ASSERT_EQ(run_unprivileged(try_read_entry, hex), 0, "denied again");

	/* kptr_restrict=2: not even root. */
	sysctl_set("/proc/sys/kernel/kptr_restrict", "2", NULL, 0);
	ASSERT_EQ(try_read_entry(hex), 0, "kptr_restrict=2: root denied too");

	sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old_paranoid, NULL, 0);
	close(pfd);
	stash_umount();
}

/* SCM_RIGHTS helpers for the confused-deputy test. */
static int send_fd(int sock, int fd)
{
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

struct deputy {
	int sock;
	char path[256];
};

static int unpriv_open_and_send(void *arg)
{
	struct deputy *d = arg;
	int fd = open(d->path, O_RDONLY);

	if (fd < 0)
		return 1;
	/* Wait until the parent tightened kptr_restrict, then hand the fd over. */
	if (send_fd(d->sock, fd))
		return 2;
	return 0;
}

static int unpriv_recv_and_read(void *arg)
{
	struct deputy *d = arg;
	char buf[64];
	int fd = recv_fd(d->sock);

	if (fd < 0)
		return 1;
	return read(fd, buf, sizeof(buf)) > 0 ? 0 : 2;
}

static void test_f_cred_confused_deputy(void)
{
	char hex[41], old_kptr[16] = "", old_paranoid[16] = "", buf[64];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct deputy d;
	int sv[2], pfd, fd;
	ssize_t n;

	if (!ASSERT_OK(stash_mount("mode=0755,gid=1000,delegate_readers"), "mount"))
		return;
	pfd = load_raw_prog("stash_deputy");
	ASSERT_GE(pfd, 0, "load");
	ASSERT_OK(bpf_obj_get_info_by_fd(pfd, &info, &len), "info");
	if (!ASSERT_OK(stash_find_prog(info.id, hex), "entry"))
		goto out;
	snprintf(d.path, sizeof(d.path), STASH_ROOT "/%s/jited", hex);
	sysctl_set("/proc/sys/kernel/kptr_restrict", "0", old_kptr, sizeof(old_kptr));
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "1", old_paranoid,
		   sizeof(old_paranoid));

	/* 1. An unprivileged opener's fd, read by root after the rules tightened. */
	ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	d.sock = sv[1];
	ASSERT_EQ(run_unprivileged(unpriv_open_and_send, &d), 0, "unprivileged open (allowed now)");
	sysctl_set("/proc/sys/kernel/kptr_restrict", "1", NULL, 0);
	fd = recv_fd(sv[0]);
	if (ASSERT_GE(fd, 0, "root received the fd")) {
		n = read(fd, buf, sizeof(buf));
		ASSERT_ERRNO(n, EPERM, "root reading the unprivileged opener's fd");
		close(fd);
	}

	/* 2. Root's fd, read by an unprivileged process: root opened it. */
	fd = open(d.path, O_RDONLY);
	if (ASSERT_GE(fd, 0, "root opens")) {
		ASSERT_OK(send_fd(sv[0], fd), "send");
		ASSERT_EQ(run_unprivileged(unpriv_recv_and_read, &d), 0,
			  "unprivileged reads root's fd (f_cred is root's)");
		close(fd);
	}
	close(sv[0]);
	close(sv[1]);
	sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old_paranoid, NULL, 0);
out:
	close(pfd);
	stash_umount();
}

static int mount_in_userns(void *arg)
{
	char map[64];
	int fd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return 10;
	fd = open("/proc/self/uid_map", O_WRONLY);
	snprintf(map, sizeof(map), "0 %d 1", 1000);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 11;
	close(fd);
	/* Root in the namespace, with every capability there. */
	if (!mount("none", STASH_ROOT, "bpfstash", 0, NULL))
		return 0;
	return errno == EPERM ? 1 : 12;
}

static void test_userns_mount_denied(void)
{
	stash_umount();
	ASSERT_EQ(run_unprivileged(mount_in_userns, NULL), 1, "EPERM inside a user namespace");
	ASSERT_FALSE(stash_mounted(), "not mounted");
}

static int install_seccomp(void *arg)
{
	struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &insn };
	int i;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 1;
	for (i = 0; i < 50; i++)
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			return 2;
	for (i = 0; i < 50; i++) {
		int s = socket(AF_UNIX, SOCK_DGRAM, 0);

		if (s < 0 || setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
			return 3;
		close(s);
	}
	return 0;
}

static void test_classic_bpf_not_stashed(void)
{
	int before;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	before = stash_count();
	ASSERT_EQ(run_unprivileged(install_seccomp, NULL), 0,
		  "50 seccomp filters and 50 SO_ATTACH_FILTER, unprivileged");
	ASSERT_OK(install_seccomp(NULL) == 0 ? 0 : -1, "the same as root");
	ASSERT_EQ(stash_count(), before, "no entries for classic BPF");
	stash_umount();
}


static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Load a program and close it: the id its entry names. */
static __u32 load_and_close(const char *name)
{
	int fd = load_raw_prog(name);
	__u32 id;

	if (fd < 0)
		return 0;
	id = prog_id_of(fd);
	close(fd);
	return id;
}

/*
 * The filesystem is a view of the store: unmounting it drops nothing, the
 * store goes on storing while nothing is mounted, and every mount, second
 * mount point and remount shows the same entries.
 */
static void test_view_detached_keeps_entries(void)
{
	const char *second = "/tmp/stash-second";
	long long stored, max;
	__u32 before, during;
	char hex[41], hex2[41], path[128];
	struct stat st;
	int n;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	before = load_and_close("view_before");
	if (!ASSERT_NEQ(before, 0, "load and close a program"))
		goto out;
	ASSERT_OK(stash_find_prog(before, hex), "its entry");
	n = stash_count();

	stash_detach();
	ASSERT_FALSE(stash_mounted(), "unmounted");
	during = load_and_close("view_during");
	ASSERT_NEQ(during, 0, "load and close a program while nothing is mounted");

	if (!ASSERT_OK(mount("none", STASH_ROOT, "bpfstash", 0, NULL), "mount again"))
		goto out;
	ASSERT_OK(stash_find_prog(before, hex), "the entry from before the unmount is still there");
	ASSERT_OK(stash_find_prog(during, hex2), "the program of while it was unmounted is stored");
	ASSERT_EQ(stash_count(), n + 1, "every entry, and one more");
	stored = stash_stat("stored");
	ASSERT_GE(stored, 2, "counters go on across the unmount");

	max = stash_stat("max_entries");
	ASSERT_OK(stash_remount("max_entries=1000"), "remount");
	ASSERT_EQ(stash_count(), n + 1, "the same entries after a remount");
	ASSERT_EQ(stash_stat("max_entries"), max, "the remount changes no limit");

	mkdir(second, 0700);
	if (ASSERT_OK(mount("none", second, "bpfstash", 0, NULL), "a second mount point")) {
		snprintf(path, sizeof(path), "%s/%s/meta", second, hex2);
		ASSERT_OK(stat(path, &st), "it shows the same entries");
		ASSERT_EQ(stash_stat("max_entries"), max, "and leaves the limits alone");
		ASSERT_OK(umount(second), "unmount the second");
	}
	ASSERT_OK(stash_find_prog(during, hex2), "the first still shows the entry");
	ASSERT_EQ(stash_stat("stored"), stored, "and nothing was stored again");
	check_stash_views("detached", 16);
out:
	stash_umount();
}

/* Whether @name is listed in the root. */
static bool root_lists(const char *name)
{
	struct dirent *d;
	bool found = false;
	DIR *dir = opendir(STASH_ROOT);

	while (dir && (d = readdir(dir)))
		if (!strcmp(d->d_name, name))
			found = true;
	if (dir)
		closedir(dir);
	return found;
}

/* open(2) of the control file, in a child that is root with only @caps: 0 or errno. */
static int control_open_as(__u64 caps, int flags)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		set_caps_only(caps);
		fd = open(STASH_ROOT "/control", flags);
		_exit(fd < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The control file starts and stops the store and changes its limits;
 * stopping drops every entry and the limits go back to their defaults;
 * bad words are refused whole.
 */
static void test_control_start_stop(void)
{
	static const char *const bad[] = {
		"bogus", "On", "size=abc", "size=12Q", "size=0", "max_entries=0",
		"max_entries=-1", "max_entries=4294967296", "on,off", "off size=1M",
		"on;size=1M",
	};
	char line[128], want[128], longw[200], hex[41];
	__u32 closed_while_off, id;
	long long considered;
	struct stat st;
	int fd = -1;
	size_t i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	ASSERT_TRUE(root_lists("control"), "the root lists control");
	ASSERT_TRUE(root_lists("stats"), "and stats");
	ASSERT_OK(stat(STASH_ROOT "/control", &st), "stat control");
	ASSERT_EQ(st.st_mode & 07777, 0600, "control is 0600");
	ASSERT_EQ(st.st_uid, 0, "and root's");
	ASSERT_ERRNO(chmod(STASH_ROOT "/control", 0644), EPERM, "its mode cannot change");
	ASSERT_ERRNO(truncate(STASH_ROOT "/control", 1), EPERM, "nor its size");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	ASSERT_STREQ(line, "on size=67108864 max_entries=65536", "on, with the default limits");

	ASSERT_OK(stash_control("size=1M max_entries=10"), "change the limits");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	ASSERT_STREQ(line, "on size=1048576 max_entries=10", "the new limits");
	ASSERT_EQ(stash_stat("max_bytes"), 1 << 20, "stats shows size");
	ASSERT_EQ(stash_stat("max_entries"), 10, "stats shows max_entries");
	ASSERT_TRUE(mounts_show("size=1048576,max_entries=10"), "/proc/mounts shows them");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "write \"%s\"", bad[i]);
		ASSERT_EQ(stash_control(bad[i]), -EINVAL, want);
	}
	memset(longw, ' ', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = 0;
	ASSERT_EQ(stash_control(longw), -EINVAL, "a write of 199 bytes");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	ASSERT_STREQ(line, "on size=1048576 max_entries=10", "nothing changed by bad writes");
	/* Root that may read entries, but not mount: reads, cannot write. */
	ASSERT_EQ(control_open_as(1ULL << CAP_PERFMON | 1ULL << CAP_SYSLOG | 1ULL << CAP_BPF,
				  O_RDONLY), 0, "read without CAP_SYS_ADMIN");
	ASSERT_EQ(control_open_as(1ULL << CAP_PERFMON | 1ULL << CAP_SYSLOG | 1ULL << CAP_BPF,
				  O_WRONLY), EPERM, "no writing without CAP_SYS_ADMIN");

	id = load_and_close("ctl_on");
	ASSERT_OK(stash_find_prog(id, hex), "a program is stored");
	fd = load_raw_prog("ctl_kept");
	ASSERT_GE(fd, 0, "load a program and keep it");

	ASSERT_OK(stash_control("off"), "stop");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	ASSERT_STREQ(line, "off size=67108864 max_entries=65536", "off, limits back to the defaults");
	ASSERT_EQ(stash_count(), 0, "no entries");
	ASSERT_EQ(stash_stat("bytes"), 0, "no bytes");
	snprintf(want, sizeof(want), STASH_ROOT "/%s", hex);
	ASSERT_ERRNO(stat(want, &st), ENOENT, "a cached entry's name is gone too");
	ASSERT_OK(stash_control("off"), "stopping a stopped store");
	/* The counters of the last run stay until the next start. */
	considered = stash_stat("considered");
	closed_while_off = load_and_close("ctl_off");
	ASSERT_EQ(stash_stat("considered"), considered, "nothing is considered while stopped");

	ASSERT_OK(stash_control("on max_entries=100"), "start with a limit");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	ASSERT_STREQ(line, "on size=67108864 max_entries=100", "on, with that limit");
	ASSERT_EQ(stash_find_prog(closed_while_off, hex), -ENOENT,
		  "a program loaded and closed while stopped is not there");
	ASSERT_OK(stash_find_prog(prog_id_of(fd), hex), "a loaded program is stored at the start");
	ASSERT_EQ(stash_stat("preexisting"), 1, "counted as preexisting");
	ASSERT_OK(stash_control("on"), "starting a started store");
	ASSERT_EQ(stash_stat("preexisting"), 1, "changes nothing");
	if (fd >= 0)
		close(fd);
	stash_umount();
	ASSERT_OK(stash_mount(NULL), "mount again");
	ASSERT_EQ(stash_count(), 0, "stopped before the unmount: empty");
	stash_umount();
}

/* The records of the tracepoint since the last read, copied. */
struct trace_recs {
	struct stash_trace_rec r[16];
	int n;
};

static void trace_keep(const struct stash_trace_rec *r, void *ctx)
{
	struct trace_recs *t = ctx;

	if (t->n < 16)
		t->r[t->n] = *r;
	t->n++;
}

static void hex_of(const __u8 *b, int n, char *out)
{
	int i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* Write @val to the tracefs file @name, truncating it; 0 or -errno. */
static int tracefs_write(const char *name, const char *val)
{
	const char *dir = stash_tracefs();
	char path[256];
	int fd, err = 0;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (*val && write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The line of ftrace's text for program @id, or -1. */
static int ftrace_line(__u32 id, char *line, size_t size)
{
	const char *dir = stash_tracefs();
	char want[32], path[256];
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir ? dir : "/sys/kernel/tracing");
	f = fopen(path, "r");
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "bpfstash_store: id=%u ", id);
	while (fgets(line, size, f))
		if (strstr(line, want)) {
			found = 0;
			break;
		}
	fclose(f);
	return found;
}

/*
 * bpfstash:bpfstash_store, read through perf on every CPU as perf record
 * -a would: one record per load while the store runs, none while it is
 * stopped, its fields those of the entry and of the stats, and ftrace's
 * text of the same event what its fields say.
 */
/*
 * Poke sites.  Each function starts with a nop where a trampoline
 * attaching to it puts its call.  tests/progs/tailcall.bpf.c makes two
 * direct tail calls,
 * which the JIT emits as a jump past the call (its "bypass") and a nop
 * that becomes a jump to the target when the prog array has one; every
 * update of the array re-pokes both, and a load with targets in the array
 * pokes them before the program is stored.  Loaded as many times as a
 * second, with another thread updating the array all the while, each
 * entry holds the sites as emitted (a nop at each function's entry and
 * each target, a jump past the call), lists them in pokes, equals what
 * the kernel reports of the program everywhere else, and verifies.  On
 * arm64 the entry's site is the nop after "mov x9, lr", and tail calls
 * are indirect: the entry lists no tail call's site, and still equals the
 * kernel's view.
 */
struct poke_updater {
	int map_fd, target_fd;
	volatile bool stop;
	unsigned long updates;
};

static void *poke_updater_run(void *arg)
{
	struct poke_updater *u = arg;
	__u32 key;

	while (!u->stop) {
		for (key = 0; key < 2; key++) {
			bpf_map_update_elem(u->map_fd, &key, &u->target_fd, BPF_ANY);
			bpf_map_delete_elem(u->map_fd, &key);
		}
		u->updates += 2;
	}
	return NULL;
}

/*
 * The program stash_tailcall of tailcall.bpf.o, loaded alone with @map_fd
 * as its prog array; its object (close it), *@fd its fd.
 */
static struct bpf_object *load_tailcall(int map_fd, int *fd)
{
	struct bpf_object *obj = bpf_object__open_file(test_prog_path("tailcall"), NULL);
	struct bpf_program *p;

	if (!obj)
		return NULL;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "stash_tailcall"));
	if (bpf_map__reuse_fd(bpf_object__find_map_by_name(obj, "stash_jmp"), map_fd) ||
	    bpf_object__load(obj)) {
		bpf_object__close(obj);
		return NULL;
	}
	*fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "stash_tailcall"));
	return obj;
}

/*
 * The entry of program @fd against the kernel's view of it: the poke
 * sites hold what the JIT emitted, everything else what the kernel
 * reports.  Returns the number of tail calls' sites found, or -1.
 */
#if defined(__aarch64__)
/* The nop after [bti jc,] mov x9, lr; tail calls are indirect, never poked. */
static const __u8 entry_site[4] = { 0x1f, 0x20, 0x03, 0xd5 };
#define ENTRY_SITE_MAX_OFF	8
#define TAIL_CALL_SITES		0
#else
/* The 5-byte nop, after ENDBR or not; a direct tail call has two sites. */
static const __u8 entry_site[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
#define ENTRY_SITE_MAX_OFF	4
#define TAIL_CALL_SITES		2
#endif

static int check_pokes(int fd, char hex[41])
{
	static const __u8 nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const struct bpfstash_poke *pokes;
	struct bpfstash_entry *e = NULL;
	struct prog_info_full pi;
	struct bpfstash *stash = NULL;
	__u8 *want = NULL;
	const __u8 *jited;
	__u32 nr, i, tail = 0, bypass = 0, entry = 0;
	size_t size;
	int ret = -1;

	if (!ASSERT_OK(prog_info_full_get(fd, &pi), "info") ||
	    !ASSERT_OK(stash_find_prog(pi.info.id, hex), "entry") ||
	    !ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open") ||
	    !ASSERT_OK(bpfstash_entry_load(stash, hex, 0, &e), "load entry"))
		goto out;
	ASSERT_OK(bpfstash_entry_verify(e), "verifies");
	jited = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
	if (!ASSERT_EQ(size, pi.info.jited_prog_len, "jited size"))
		goto out;
	/* What the kernel reports, with the sites written as emitted. */
	want = malloc(size);
	if (!ASSERT_PTR_OK(want, "malloc"))
		goto out;
	memcpy(want, pi.jited, size);
	/* Each function's entry patch site (entry_site above). */
	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		if (!ASSERT_EQ(f->entry_poke_len, sizeof(entry_site), "an entry patch site") ||
		    !ASSERT_LE(f->entry_poke_off, ENTRY_SITE_MAX_OFF, "at the function's start"))
			goto out;
		memcpy(want + f->offset + f->entry_poke_off, entry_site, sizeof(entry_site));
		entry++;
	}
	pokes = bpfstash_entry_pokes(e, &nr);
	for (i = 0; i < nr; i++) {
		const struct bpfstash_poke *p = &pokes[i];
		__u32 at = bpfstash_entry_func(e, p->func)->offset + p->off;

		if (!ASSERT_EQ(p->len, 5, "poke site of 5 bytes") || at + 5 > size)
			goto out;
		switch (p->kind) {
		case BPFSTASH_POKE_TAIL_CALL:
			memcpy(want + at, nop5, 5);
			tail++;
			break;
		case BPFSTASH_POKE_TAIL_CALL_BYPASS:
			/* a jump past the call: to the end of its target's site */
			want[at] = 0xe9;
			if (i + 1 < nr && pokes[i + 1].kind == BPFSTASH_POKE_TAIL_CALL) {
				__s32 rel = pokes[i + 1].off - p->off;

				memcpy(want + at + 1, &rel, 4);
			}
			bypass++;
			break;
		default:
			ASSERT_TRUE(false, "a poke kind this test knows");
			goto out;
		}
	}
	ASSERT_EQ(entry, bpfstash_entry_nr_funcs(e), "an entry site per function");
	ASSERT_EQ(tail, bypass, "a bypass per tail call");
	if (ASSERT_MEMEQ(jited, want, size, "jited == the kernel's, sites as emitted"))
		ret = tail;
out:
	free(want);
	bpfstash_entry_free(e);
	bpfstash_close(stash);
	prog_info_full_free(&pi);
	return ret;
}

static void test_pokes_tail_call(void)
{
	struct poke_updater u = {};
	struct bpf_object *base, *obj;
	int i, fd, loads = 0, sites = -1;
	pthread_t th;
	char hex[41];

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	base = bpf_object__open_file(test_prog_path("tailcall"), NULL);
	if (!ASSERT_PTR_OK(base, "open") || !ASSERT_OK(bpf_object__load(base), "load"))
		goto out;
	u.map_fd = bpf_map__fd(bpf_object__find_map_by_name(base, "stash_jmp"));
	u.target_fd = bpf_program__fd(bpf_object__find_program_by_name(base, "stash_tail_target"));
	if (!ASSERT_OK(pthread_create(&th, NULL, poke_updater_run, &u), "updater"))
		goto out;
	for (i = 0; i < 60; i++) {
		obj = load_tailcall(u.map_fd, &fd);
		if (!ASSERT_PTR_OK(obj, "load stash_tailcall"))
			break;
		sites = check_pokes(fd, hex);
		bpf_object__close(obj);
		if (!ASSERT_EQ(sites, TAIL_CALL_SITES, "the tail calls' sites"))
			break;
		loads++;
	}
	u.stop = true;
	pthread_join(th, NULL);
	test__note("%d loads checked while the prog array was updated %lu times", loads,
		   u.updates);
	ASSERT_GT(u.updates, loads, "updates ran during the loads");
out:
	bpf_object__close(base);
	stash_umount();
}

/*
 * One load's content does not depend on its prog array: loaded, unloaded,
 * then loaded again with the array full (the JIT's fixup then pokes both
 * jumps before the store sees the program), at the same address, the
 * program has the same entry, named by the same hash.
 */
static void test_pokes_reload_same_name(void)
{
	struct bpf_object *base, *obj;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), key;
	__u64 addr = 0;
	char first[41] = "", again[41];
	int i, fd, map_fd, target_fd, tries = 0;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	base = bpf_object__open_file(test_prog_path("tailcall"), NULL);
	if (!ASSERT_PTR_OK(base, "open") || !ASSERT_OK(bpf_object__load(base), "load"))
		goto out;
	map_fd = bpf_map__fd(bpf_object__find_map_by_name(base, "stash_jmp"));
	target_fd = bpf_program__fd(bpf_object__find_program_by_name(base, "stash_tail_target"));
	obj = load_tailcall(map_fd, &fd);
	if (!ASSERT_PTR_OK(obj, "first load") ||
	    !ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info") ||
	    !ASSERT_OK(stash_find_prog(info.id, first), "first entry")) {
		bpf_object__close(obj);
		goto out;
	}
	{
		__u64 ksym = 0;
		struct bpf_prog_info ki = { .nr_jited_ksyms = 1,
					    .jited_ksyms = (__u64)(unsigned long)&ksym };
		__u32 klen = sizeof(ki);

		if (ASSERT_OK(bpf_obj_get_info_by_fd(fd, &ki, &klen), "ksym"))
			addr = ksym;
	}
	bpf_object__close(obj);
	for (key = 0; key < 2; key++)
		ASSERT_OK(bpf_map_update_elem(map_fd, &key, &target_fd, BPF_ANY), "fill the array");
	/* The pack gives the freed space back once the program is freed. */
	for (i = 0; i < 40; i++) {
		struct bpf_prog_info ki = {};
		__u64 ksym = 0;
		__u32 klen = sizeof(ki);

		usleep(50000);
		obj = load_tailcall(map_fd, &fd);
		if (!ASSERT_PTR_OK(obj, "load again"))
			goto out;
		tries++;
		ki.nr_jited_ksyms = 1;
		ki.jited_ksyms = (__u64)(unsigned long)&ksym;
		if (!bpf_obj_get_info_by_fd(fd, &ki, &klen) && ksym == addr &&
		    ASSERT_OK(stash_find_prog(ki.id, again), "entry again")) {
			ASSERT_STREQ(again, first, "the same name, the array full or not");
			check_pokes(fd, again);
			test__note("loaded again at %#llx after %d tries: entry %s", addr, tries,
				   again);
			bpf_object__close(obj);
			goto out;
		}
		bpf_object__close(obj);
	}
	test__skip("the program never loaded again at %#llx in %d tries (the pack gave another "
		   "address)", addr, tries);
out:
	bpf_object__close(base);
	stash_umount();
}

static void test_tracepoint(void)
{
	long long h0, h1, refused, hashed;
	struct trace_recs t = {};
	struct stash_trace *trace;
	struct bpf_object *obj;
	char hex[41], got[41], line[512], want[512];
	const char *text;
	__u32 id;
	int fd, i;

	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	trace = stash_trace_open();
	if (!ASSERT_TRUE(trace != NULL, "open bpfstash:bpfstash_store"))
		goto out;
	/* libbpf probes the kernel's features with loads, once per process. */
	obj = test_prog_load("tiny", &fd);
	if (obj)
		bpf_object__close(obj);
	stash_trace_read(trace, NULL, NULL);

	/* Stored: the entry's name, its bytes, the bytes hashed. */
	h0 = stash_stat("hashed_bytes");
	obj = test_prog_load("subprogs", &fd);
	if (!ASSERT_PTR_OK(obj, "load subprogs"))
		goto out;
	h1 = stash_stat("hashed_bytes");
	id = prog_id_of(fd);
	/* libbpf loads a probe of its own with every object: two loads. */
	ASSERT_EQ(stash_trace_read(trace, trace_keep, &t), 2, "one record per load");
	for (i = 0, hashed = 0; i < t.n && i < 16; i++)
		hashed += t.r[i].hashed;
	ASSERT_EQ(hashed, h1 - h0, "hashed: as the stats count");
	for (i = 0; i < t.n && i < 16 && t.r[i].id != id; i++)
		;
	if (ASSERT_OK(stash_find_prog(id, hex), "entry") &&
	    ASSERT_LT(i, t.n, "a record of the program")) {
		t.r[0] = t.r[i];
		hex_of(t.r[0].hash, 20, got);
		ASSERT_EQ(t.r[0].id, id, "id");
		ASSERT_STREQ(stash_trace_outcome(t.r[0].outcome), "stored", "outcome");
		ASSERT_STREQ(got, hex, "hash: the entry's name");
		ASSERT_EQ((long long)t.r[0].bytes, entry_held_bytes(fd), "bytes: the entry's");
		ASSERT_GT(t.r[0].hashed, t.r[0].bytes / 2, "hashed: its content");
		ASSERT_GT(t.r[0].hash_ns, 0, "hash_ns");
		ASSERT_GT(t.r[0].ns, t.r[0].hash_ns, "ns, more than its hashing");
		ASSERT_EQ(t.r[0].tid, (__u32)syscall(SYS_gettid), "in the loading task");
	}
	bpf_object__close(obj);

	/* Refused: a full store stores and hashes nothing. */
	refused = stash_stat("refused_full");
	if (ASSERT_OK(stash_control("max_entries=1"), "max_entries=1 through control")) {
		t.n = 0;
		id = load_and_close("tp_refused");
		ASSERT_EQ(stash_stat("refused_full"), refused + 1, "refused");
		ASSERT_EQ(stash_trace_read(trace, trace_keep, &t), 1, "one record");
		if (t.n == 1) {
			static const __u8 zero[20];

			ASSERT_EQ(t.r[0].id, id, "refused: id");
			ASSERT_STREQ(stash_trace_outcome(t.r[0].outcome), "refused_full",
				     "refused: outcome");
			ASSERT_EQ(t.r[0].bytes + t.r[0].hashed + t.r[0].hash_ns, 0,
				  "refused: nothing stored or hashed");
			ASSERT_MEMEQ(t.r[0].hash, zero, 20, "refused: no hash");
			ASSERT_STREQ(t.r[0].name, "tp_refused", "refused: name");
		}
		stash_control("max_entries=65536");
	}

	/* ftrace's text of one event: what perf read of the same one. */
	if (ASSERT_OK(tracefs_write("trace", ""), "clear ftrace") &&
	    ASSERT_OK(tracefs_write("events/bpfstash/bpfstash_store/enable", "1"),
		      "enable in ftrace")) {
		t.n = 0;
		id = load_and_close("tp_text");
		tracefs_write("events/bpfstash/bpfstash_store/enable", "0");
		stash_trace_read(trace, trace_keep, &t);
		if (ASSERT_EQ(t.n, 1, "one record") &&
		    ASSERT_OK(ftrace_line(id, line, sizeof(line)), "ftrace has it")) {
			hex_of(t.r[0].hash, 20, got);
			snprintf(want, sizeof(want),
				 "bpfstash_store: id=%u name=%s outcome=%s hash=%s bytes=%llu "
				 "hashed=%llu ns=%llu hash_ns=%llu\n",
				 t.r[0].id, t.r[0].name, stash_trace_outcome(t.r[0].outcome), got,
				 (unsigned long long)t.r[0].bytes, (unsigned long long)t.r[0].hashed,
				 (unsigned long long)t.r[0].ns, (unsigned long long)t.r[0].hash_ns);
			text = strstr(line, "bpfstash_store: ");
			ASSERT_STREQ(text, want, "ftrace's text");
		}
	}

	/* Stopped: the hook does not run, nothing is traced. */
	if (ASSERT_OK(stash_control("off"), "stop")) {
		t.n = 0;
		load_and_close("tp_stopped");
		ASSERT_EQ(stash_trace_read(trace, trace_keep, &t), 0, "no record while stopped");
	}
	ASSERT_EQ(stash_trace_lost(trace), 0, "no record lost");
out:
	stash_trace_close(trace);
	stash_umount();
}

/*
 * The kernel's index file is, byte for byte, what the test vectors' tool
 * (tests/vectors/mkindex.c) makes of the entries' meta and funcs files,
 * in the root's order, at generation @gen.
 */
static void check_index_vectors_tool(unsigned long long gen)
{
	const char *tests = getenv("BPFSTASH_TESTS");
	size_t len, nk = 0, nt = 0, cap = 1 << 16;
	char *cmd, *tool = NULL;
	void *kernel = NULL;
	struct dirent *de;
	FILE *p;
	DIR *d;

	if (!tests) {
		test__skip("BPFSTASH_TESTS unset: no mkindex to compare with");
		return;
	}
	cmd = malloc(cap);
	len = snprintf(cmd, cap, "%s/vectors/mkindex -g %llu " STASH_ROOT, tests, gen);
	d = opendir(STASH_ROOT);
	while (d && (de = readdir(d)))
		if (strlen(de->d_name) == 40 && len + 42 < cap)
			len += snprintf(cmd + len, cap - len, " %s", de->d_name);
	if (d)
		closedir(d);
	p = popen(cmd, "r");
	if (ASSERT_PTR_OK(p, "run mkindex")) {
		size_t tcap = 1 << 20;

		tool = malloc(tcap);
		nt = fread(tool, 1, tcap, p);
		ASSERT_EQ(pclose(p), 0, "mkindex succeeds");
	}
	if (ASSERT_OK(stash_read(".", "index", &kernel, &nk), "read the index") && tool) {
		ASSERT_EQ(nk, nt, "the kernel's index is mkindex's size");
		ASSERT_OK(nk != nt || memcmp(kernel, tool, nk), "and mkindex's bytes");
	}
	free(kernel);
	free(tool);
	free(cmd);
}

static int try_read_index(void *arg)
{
	char buf[64];
	int fd = open(STASH_ROOT "/index", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0;
}

/*
 * The index file: every entry with its state and ranges in one read, as
 * each entry's own files give them, and a generation that changes with
 * every change it shows, and only then.
 */
static void test_index_file(void)
{
	unsigned long long g0, g1, g2, g3, g;
	char hex[41], path[128], old_kptr[16] = "", old_paranoid[16] = "";
	size_t na = 0, nb = 0;
	void *a = NULL, *b = NULL;
	struct bpf_object *obj;
	double ti, te;
	struct stat st;
	int fd, pfd;
	__u32 id;

	/* mode= and a group: DAC lets uid 1000 in; the reader gate must not. */
	if (!ASSERT_OK(stash_mount("mode=0755,gid=1000"), "mount"))
		return;
	obj = test_prog_load("subprogs", &fd);
	if (!ASSERT_PTR_OK(obj, "load subprogs"))
		goto out;
	id = prog_id_of(fd);
	ASSERT_OK(stash_find_prog(id, hex), "its entry");
	ASSERT_GE(check_index_file(&g0, &ti, &te), 1, "the index lists the entries");
	check_index_vectors_tool(g0);
	ASSERT_EQ(g0, stash_stat("generation"), "stats shows the index's generation");
	if (ASSERT_OK(stash_read(".", "index", &a, &na), "read again") &&
	    ASSERT_OK(stash_read(".", "index", &b, &nb), "and again"))
		ASSERT_OK(na != nb || memcmp(a, b, na), "nothing changed: the same bytes");
	free(a);
	free(b);
	if (ASSERT_OK(stat(STASH_ROOT "/index", &st), "stat index")) {
		ASSERT_TRUE(S_ISREG(st.st_mode), "a regular file");
		ASSERT_EQ(st.st_mode & 07777, 0440, "an entry's mode: owner and group= read");
		ASSERT_EQ(st.st_gid, 1000, "gid=");
	}

	bpf_object__close(obj);
	g1 = stash_stat("generation");
	ASSERT_GT(g1, g0, "an unload changes the generation");
	ASSERT_GE(check_index_file(&g, &ti, &te), 1, "the index shows the unload");
	ASSERT_EQ(g, g1, "and its generation");

	pfd = load_raw_prog("stash_index");
	ASSERT_GE(pfd, 0, "load");
	g2 = stash_stat("generation");
	ASSERT_GT(g2, g1, "a load changes the generation");
	snprintf(path, sizeof(path), STASH_ROOT "/%s", hex);
	ASSERT_OK(rmdir(path), "rmdir the unloaded entry");
	g3 = stash_stat("generation");
	ASSERT_GT(g3, g2, "a delete changes the generation");
	ASSERT_GE(check_index_file(&g, &ti, &te), 1, "the index after the delete");
	ASSERT_EQ(g, g3, "and its generation");
	ASSERT_EQ(stash_stat("generation"), g3, "reading changes nothing");

	/* Gated as listing is: DAC alone does not let a reader in. */
	sysctl_set("/proc/sys/kernel/kptr_restrict", "0", old_kptr, sizeof(old_kptr));
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", "1", old_paranoid,
		   sizeof(old_paranoid));
	ASSERT_EQ(run_unprivileged(try_read_index, NULL), 0, "no capability: denied");
	ASSERT_OK(stash_remount("delegate_readers"), "remount with delegate_readers");
	ASSERT_EQ(run_unprivileged(try_read_index, NULL), 1, "delegate_readers: allowed");
	ASSERT_OK(stash_remount("nodelegate_readers"), "remount with nodelegate_readers");
	sysctl_set("/proc/sys/kernel/kptr_restrict", "2", NULL, 0);
	ASSERT_EQ(try_read_index(NULL), 0, "kptr_restrict=2: root denied too");
	sysctl_set("/proc/sys/kernel/kptr_restrict", old_kptr, NULL, 0);
	sysctl_set("/proc/sys/kernel/perf_event_paranoid", old_paranoid, NULL, 0);
	if (pfd >= 0)
		close(pfd);
out:
	stash_umount();
}

static const struct test tests[] = {
	{ "entries_match_info", test_entries_match_info },
	{ "external_programs", test_external_programs },
	{ "unloaded_entry_complete", test_unloaded_entry_complete },
	{ "reload_shares_blobs", test_reload_shares_blobs },
	{ "entry_overhead", test_entry_overhead },
	{ "preexisting_programs", test_preexisting_programs },
	{ "limits_refuse_and_count", test_limits_refuse_and_count },
	{ "bad_mount_options", test_bad_mount_options },
	{ "options_show_and_remount", test_options_show_and_remount },
	{ "readonly_namespace", test_readonly_namespace },
	{ "open_file_survives_rmdir", test_open_file_survives_rmdir },
	{ "unprivileged_denied", test_unprivileged_denied, true },
	{ "f_cred_confused_deputy", test_f_cred_confused_deputy, true },
	{ "userns_mount_denied", test_userns_mount_denied },
	{ "classic_bpf_not_stashed", test_classic_bpf_not_stashed },
	{ "view_detached_keeps_entries", test_view_detached_keeps_entries },
	{ "control_start_stop", test_control_start_stop },
	{ "tracepoint", test_tracepoint },
	{ "pokes_tail_call", test_pokes_tail_call },
	{ "pokes_reload_same_name", test_pokes_reload_same_name },
	{ "index_file", test_index_file, true },
	{}
};

int main(int argc, char **argv)
{
	return test_main("stash", tests, argc, argv);
}
