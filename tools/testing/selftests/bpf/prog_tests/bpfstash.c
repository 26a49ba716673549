// SPDX-License-Identifier: GPL-2.0
/*
 * bpfstash: while its store runs, the kernel keeps what
 * bpf_prog_get_info_by_fd() returns of each program it loads, in an entry
 * of the bpfstash filesystem that outlives the program
 * (Documentation/filesystems/bpfstash.rst).
 */
#include <test_progs.h>
#include <dirent.h>
#include <endian.h>
#include <mntent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/bpfstash.h>
#include "bpfstash.skel.h"

/*
 * With no view mounted, the test cannot tell a running store from a
 * stopped one before mounting, since a mount starts a stopped store.  It
 * mounts with this limit: a store the mount started has it, one that was
 * running keeps its own (a mount changes no limit of a running store).
 */
#define PROBE_MAX_ENTRIES 65521

static char root[32];
static bool mounted;
static bool was_running;

/* The entry of one program, found by its id. */
struct stash_entry {
	char hex[2 * BPFSTASH_HASH_SIZE + 1];
	struct bpfstash_meta meta;
};

/* What bpf_prog_get_info_by_fd() says of a program, with its arrays. */
struct prog_dump {
	struct bpf_prog_info info;
	__u8 *jited;
	__u64 *ksyms;
	__u32 *func_lens;
	__u8 *tags;
};

static void prog_dump_free(struct prog_dump *d)
{
	free(d->jited);
	free(d->ksyms);
	free(d->func_lens);
	free(d->tags);
	memset(d, 0, sizeof(*d));
}

static int prog_dump_get(int fd, struct prog_dump *d)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	memset(d, 0, sizeof(*d));
	err = bpf_prog_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	d->jited = calloc(info.jited_prog_len + 1, 1);
	d->ksyms = calloc(info.nr_jited_ksyms + 1, sizeof(__u64));
	d->func_lens = calloc(info.nr_jited_func_lens + 1, sizeof(__u32));
	d->tags = calloc(info.nr_prog_tags + 1, BPF_TAG_SIZE);
	if (!d->jited || !d->ksyms || !d->func_lens || !d->tags) {
		prog_dump_free(d);
		return -ENOMEM;
	}
	d->info.jited_prog_len = info.jited_prog_len;
	d->info.jited_prog_insns = ptr_to_u64(d->jited);
	d->info.nr_jited_ksyms = info.nr_jited_ksyms;
	d->info.jited_ksyms = ptr_to_u64(d->ksyms);
	d->info.nr_jited_func_lens = info.nr_jited_func_lens;
	d->info.jited_func_lens = ptr_to_u64(d->func_lens);
	d->info.nr_prog_tags = info.nr_prog_tags;
	d->info.prog_tags = ptr_to_u64(d->tags);
	len = sizeof(d->info);
	err = bpf_prog_get_info_by_fd(fd, &d->info, &len);
	if (err)
		prog_dump_free(d);
	return err;
}

/* Read @name under the root (@hex NULL) or under entry @hex. */
static int stash_read(const char *hex, const char *name, void **buf, size_t *size)
{
	size_t cap = 4096, len = 0;
	char path[PATH_MAX];
	char *p, *q;
	ssize_t n;
	int fd;

	if (hex)
		snprintf(path, sizeof(path), "%s/%s/%s", root, hex, name);
	else
		snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = malloc(cap + 1);
	while (p && (n = read(fd, p + len, cap - len)) > 0) {
		len += n;
		if (len < cap)
			continue;
		cap *= 2;
		q = realloc(p, cap + 1);
		if (!q)
			free(p);
		p = q;
	}
	n = !p ? -ENOMEM : n < 0 ? -errno : 0;
	close(fd);
	if (n) {
		free(p);
		return n;
	}
	p[len] = '\0';
	*buf = p;
	*size = len;
	return 0;
}

/* The value of @key in a "key value" text file, or NULL; freed by free(). */
static char *text_value(const char *hex, const char *file, const char *key)
{
	char *text, *line, *save, *val = NULL;
	size_t size, klen = strlen(key);

	if (stash_read(hex, file, (void **)&text, &size))
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, key, klen) || (line[klen] != ' ' && line[klen] != '\t'))
			continue;
		line += klen;
		val = strdup(line + strspn(line, " \t"));
		break;
	}
	free(text);
	return val;
}

static long long stash_stat(const char *key)
{
	char *val = text_value(NULL, "stats", key);
	long long v = val ? atoll(val) : -1;

	free(val);
	return v;
}

static bool is_entry_name(const char *s)
{
	return strlen(s) == 2 * BPFSTASH_HASH_SIZE &&
	       strspn(s, "0123456789abcdef") == 2 * BPFSTASH_HASH_SIZE;
}

static int entry_meta(const char *hex, struct bpfstash_meta *meta)
{
	void *buf;
	size_t size;
	int err;

	err = stash_read(hex, "meta", &buf, &size);
	if (err)
		return err;
	memset(meta, 0, sizeof(*meta));
	memcpy(meta, buf, size < sizeof(*meta) ? size : sizeof(*meta));
	free(buf);
	return size < sizeof(*meta) ? -EPROTO : 0;
}

/* Number of entries in the root; -errno on error. */
static int stash_count(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(root);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += is_entry_name(de->d_name);
	closedir(d);
	return n;
}

static int find_entry(__u32 prog_id, struct stash_entry *e)
{
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	d = opendir(root);
	if (!d)
		return -errno;
	while (err && (de = readdir(d))) {
		if (!is_entry_name(de->d_name) || entry_meta(de->d_name, &e->meta))
			continue;
		if (le32toh(e->meta.prog_id) != prog_id)
			continue;
		memcpy(e->hex, de->d_name, sizeof(e->hex));
		err = 0;
	}
	closedir(d);
	return err;
}

/* Unloading may be deferred: wait up to a second for the entry to say so. */
static bool entry_unloaded(struct stash_entry *e)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (entry_meta(e->hex, &e->meta))
			return false;
		if (!(le32toh(e->meta.flags) & BPFSTASH_META_LOADED))
			return true;
		usleep(10000);
	}
	return false;
}

static int control_write(const char *words)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/control", root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, words, strlen(words));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Is the store on, with which max_entries, as @dir/control says? */
static int control_state(const char *dir, bool *on, unsigned long *max_entries)
{
	char path[PATH_MAX], line[128] = "";
	char *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/control", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	p = strstr(line, "max_entries=");
	if (strncmp(line, "on ", 3) && strncmp(line, "off ", 4))
		return -EPROTO;
	*on = !strncmp(line, "on ", 3);
	*max_entries = p ? strtoul(p + strlen("max_entries="), NULL, 0) : 0;
	return 0;
}

static bool fs_supported(void)
{
	char line[128];
	bool found = false;
	FILE *f;

	f = fopen("/proc/filesystems", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, "nodev\tbpfstash\n");
	fclose(f);
	return found;
}

/* Whether a view mounted before the test shows a running store: -1, none. */
static int mounted_state(void)
{
	unsigned long max_entries;
	struct mntent *ent;
	int state = -1;
	bool on;
	FILE *f;

	f = setmntent("/proc/mounts", "re");
	if (!f)
		return -1;
	while (state < 0 && (ent = getmntent(f)))
		if (!strcmp(ent->mnt_type, "bpfstash") &&
		    !control_state(ent->mnt_dir, &on, &max_entries))
			state = on;
	endmntent(f);
	return state;
}

/*
 * Mount a view of the store at a directory of our own, which starts the
 * store if it is stopped, and remember whether it ran before.
 */
static int stash_setup(void)
{
	char opts[64] = "";
	unsigned long max_entries;
	int state;
	bool on;

	/* Until known otherwise, never stop a store the test did not start. */
	was_running = true;
	state = mounted_state();
	if (state < 0)
		snprintf(opts, sizeof(opts), "max_entries=%d", PROBE_MAX_ENTRIES);
	snprintf(root, sizeof(root), "/tmp/bpfstash_XXXXXX");
	if (!ASSERT_OK_PTR(mkdtemp(root), "mkdtemp"))
		return -1;
	if (!ASSERT_OK(mount("none", root, "bpfstash", 0, opts[0] ? opts : NULL), "mount")) {
		rmdir(root);
		return -1;
	}
	mounted = true;
	if (!ASSERT_OK(control_state(root, &on, &max_entries), "control"))
		return -1;
	if (state >= 0)
		was_running = state;
	else
		was_running = on && max_entries != PROBE_MAX_ENTRIES;
	if (!on && !ASSERT_OK(control_write("on"), "control on"))
		return -1;
	return 0;
}

/* Stop the store if the test started it, and unmount the view. */
static void stash_teardown(void)
{
	if (!mounted)
		return;
	if (!was_running)
		ASSERT_OK(control_write("off"), "control off");
	ASSERT_OK(umount(root), "umount");
	rmdir(root);
	mounted = false;
}

static void check_meta_names(const struct stash_entry *e, const struct prog_dump *d,
			     const char *name)
{
	const struct bpfstash_content *c = &e->meta.content;
	char hex[sizeof(e->hex)];
	char cname[BPFSTASH_NAME_LEN + 1] = {};
	int i;

	memcpy(cname, c->name, BPFSTASH_NAME_LEN);
	ASSERT_STREQ(cname, name, "meta name");
	ASSERT_STREQ(cname, d->info.name, "meta name is info name");
	ASSERT_EQ(le32toh(c->version), BPFSTASH_VERSION, "meta version");
	ASSERT_EQ(le32toh(c->prog_type), d->info.type, "meta prog_type");
	ASSERT_OK(memcmp(c->tag, d->info.tag, BPF_TAG_SIZE), "meta tag");
	for (i = 0; i < BPFSTASH_HASH_SIZE; i++)
		sprintf(hex + 2 * i, "%02x", e->meta.hash[i]);
	ASSERT_STREQ(hex, e->hex, "meta hash is the entry's name");
}

static void check_jited(const struct stash_entry *e, const __u8 *image, __u32 len)
{
	const __u8 *jited;
	size_t size, i;

	ASSERT_EQ(le32toh(e->meta.content.jited_len), len, "meta jited_len");
	if (!ASSERT_OK(stash_read(e->hex, "jited", (void **)&jited, &size), "read jited"))
		return;
	if (ASSERT_EQ(size, len, "jited size")) {
		for (i = 0; i < len && jited[i] == image[i]; i++)
			;
		ASSERT_EQ(i, len, "jited is jited_prog_insns up to byte");
	}
	free((void *)jited);
}

static void check_text(const struct stash_entry *e, const char *key, const char *expect)
{
	char *val = text_value(e->hex, "info", key);

	if (ASSERT_OK_PTR(val, key))
		ASSERT_STREQ(val, expect, key);
	free(val);
}

/*
 * A program loaded while the store runs has an entry: the JITed image
 * bpf_prog_get_info_by_fd() returns, and metadata naming the program.
 */
static void test_entry_matches_info(void)
{
	struct prog_dump d = {};
	struct stash_entry e;
	struct bpfstash *skel;
	char id[16];

	skel = bpfstash__open_and_load();
	if (!ASSERT_OK_PTR(skel, "bpfstash__open_and_load"))
		return;
	if (!ASSERT_OK(prog_dump_get(bpf_program__fd(skel->progs.stash_tiny), &d), "prog info"))
		goto out;
	if (!ASSERT_GT(d.info.jited_prog_len, 0, "jited_prog_len"))
		goto out;
	if (!ASSERT_OK(find_entry(d.info.id, &e), "entry of the program"))
		goto out;
	check_meta_names(&e, &d, "stash_tiny");
	ASSERT_TRUE(le32toh(e.meta.flags) & BPFSTASH_META_LOADED, "meta flags loaded");
	ASSERT_EQ(le32toh(e.meta.content.nr_funcs), 1, "meta nr_funcs");
	check_jited(&e, d.jited, d.info.jited_prog_len);
	snprintf(id, sizeof(id), "%u", d.info.id);
	check_text(&e, "name", "stash_tiny");
	check_text(&e, "prog_id", id);
	check_text(&e, "state", "loaded");
out:
	prog_dump_free(&d);
	bpfstash__destroy(skel);
}

/*
 * The entry outlives its program: after the last close it still holds the
 * same image and says unloaded; only then can it be removed.
 */
static void test_entry_survives_unload(void)
{
	struct prog_dump d = {};
	struct stash_entry e;
	struct bpfstash *skel;
	char path[PATH_MAX];
	struct stat st;
	__u64 load_time;
	int err;

	skel = bpfstash__open_and_load();
	if (!ASSERT_OK_PTR(skel, "bpfstash__open_and_load"))
		return;
	if (!ASSERT_OK(prog_dump_get(bpf_program__fd(skel->progs.stash_subprogs), &d),
		       "prog info"))
		goto out;
	if (!ASSERT_OK(find_entry(d.info.id, &e), "entry of the program"))
		goto out;
	snprintf(path, sizeof(path), "%s/%s", root, e.hex);
	err = rmdir(path);
	if (!ASSERT_ERR(err, "rmdir while loaded"))
		goto out;
	ASSERT_EQ(errno, EBUSY, "rmdir while loaded: EBUSY");
	load_time = le64toh(e.meta.load_time);

	bpfstash__destroy(skel);
	skel = NULL;

	if (!ASSERT_TRUE(entry_unloaded(&e), "meta flags unloaded"))
		goto out;
	check_meta_names(&e, &d, "stash_subprogs");
	ASSERT_EQ(le32toh(e.meta.prog_id), d.info.id, "meta prog_id kept");
	ASSERT_EQ(le64toh(e.meta.load_time), load_time, "meta load_time kept");
	ASSERT_GE(le64toh(e.meta.unload_time), load_time, "meta unload_time");
	check_jited(&e, d.jited, d.info.jited_prog_len);
	check_text(&e, "state", "unloaded");

	if (ASSERT_OK(rmdir(path), "rmdir once unloaded"))
		ASSERT_ERR(stat(path, &st), "entry gone");
out:
	prog_dump_free(&d);
	bpfstash__destroy(skel);
}

static const char *func_name(const char *names, size_t size, __u32 off)
{
	return off < size && memchr(names + off, '\0', size - off) ? names + off : "";
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * A program with subprograms gets one function record per JITed function,
 * in jited_ksyms order, each with its address, length, tag and name.
 */
static void test_subprog_funcs(void)
{
	static const char * const subprogs[] = { "_stash_mix", "_stash_fold" };
	const struct bpfstash_content *c;
	struct bpfstash_func *f = NULL;
	struct prog_dump d = {};
	struct stash_entry e;
	struct bpfstash *skel;
	const char *names;
	__u32 i, nr, off = 0;
	size_t size, nsize;
	int j, seen[2] = {};

	skel = bpfstash__open_and_load();
	if (!ASSERT_OK_PTR(skel, "bpfstash__open_and_load"))
		return;
	if (!ASSERT_OK(prog_dump_get(bpf_program__fd(skel->progs.stash_subprogs), &d),
		       "prog info"))
		goto out;
	nr = d.info.nr_jited_ksyms;
	if (!ASSERT_EQ(nr, 3, "nr_jited_ksyms") ||
	    !ASSERT_EQ(d.info.nr_jited_func_lens, nr, "nr_jited_func_lens") ||
	    !ASSERT_EQ(d.info.nr_prog_tags, nr, "nr_prog_tags"))
		goto out;
	if (!ASSERT_OK(find_entry(d.info.id, &e), "entry of the program"))
		goto out;
	c = &e.meta.content;
	ASSERT_EQ(le32toh(c->nr_func_info), d.info.nr_func_info, "meta nr_func_info");
	ASSERT_EQ(le32toh(c->nr_func_info), nr, "a func_info record per function");
	ASSERT_EQ(le32toh(c->nr_line_info), d.info.nr_line_info, "meta nr_line_info");
	ASSERT_EQ(le32toh(c->nr_jited_line_info), d.info.nr_jited_line_info,
		  "meta nr_jited_line_info");
	ASSERT_GT(le32toh(c->btf_size), 0, "meta btf_size");
	if (!ASSERT_EQ(le32toh(c->nr_funcs), nr, "meta nr_funcs"))
		goto out;
	if (!ASSERT_OK(stash_read(e.hex, "funcs", (void **)&f, &size), "read funcs"))
		goto out;
	if (!ASSERT_EQ(size, le32toh(c->funcs_size), "funcs size") ||
	    !ASSERT_GE(size, nr * sizeof(*f), "funcs records"))
		goto out;
	names = (const char *)(f + nr);
	nsize = size - nr * sizeof(*f);
	for (i = 0; i < nr; i++) {
		const char *name = func_name(names, nsize, le32toh(f[i].name_off));

		ASSERT_EQ(le64toh(f[i].addr), d.ksyms[i], "func addr is jited_ksyms");
		ASSERT_EQ(le32toh(f[i].len), d.func_lens[i], "func len is jited_func_lens");
		ASSERT_EQ(le32toh(f[i].offset), off, "func offset in jited");
		ASSERT_OK(memcmp(f[i].tag, d.tags + i * BPF_TAG_SIZE, BPF_TAG_SIZE),
			  "func tag is prog_tags");
		ASSERT_STRNEQ(name, "bpf_prog_", strlen("bpf_prog_"), "func kallsyms name");
		if (i == 0)
			ASSERT_TRUE(has_suffix(name, "_stash_subprogs"), "func 0 is the program");
		for (j = 0; j < ARRAY_SIZE(subprogs); j++)
			seen[j] += has_suffix(name, subprogs[j]);
		off += d.func_lens[i];
	}
	ASSERT_EQ(off, le32toh(c->jited_len), "funcs cover jited");
	for (j = 0; j < ARRAY_SIZE(subprogs); j++)
		ASSERT_EQ(seen[j], 1, subprogs[j] + 1);
out:
	free(f);
	prog_dump_free(&d);
	bpfstash__destroy(skel);
}

struct stash_stats {
	long long entries, live_entries, considered, stored, reloaded, deleted, bytes;
};

static void stats_get(struct stash_stats *s)
{
	s->entries = stash_stat("entries");
	s->live_entries = stash_stat("live_entries");
	s->considered = stash_stat("considered");
	s->stored = stash_stat("stored");
	s->reloaded = stash_stat("reloaded");
	s->deleted = stash_stat("deleted");
	s->bytes = stash_stat("bytes");
}

/*
 * The stats file counts the store: each load considered and stored (or an
 * unloaded entry of the same content reused), loaded and unloaded entries,
 * deletions, and as many entries as the root lists.
 */
/*
 * The stats file counts the store: each load considered and stored (as a
 * new entry, or reloaded into an unloaded entry of the same content),
 * loaded and unloaded entries, deletions, and as many entries as the root
 * lists.  The programs are loaded with bpf_prog_load(), one load each:
 * libbpf's object loading adds probe programs of its own.
 */
static void test_stats_count(void)
{
	const struct bpf_insn insns[] = {
		BPF_MOV64_IMM(BPF_REG_0, 0),
		BPF_EXIT_INSN(),
	};
	struct stash_stats s0, s1, s2, s3;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd[2] = { -1, -1 };
	struct stash_entry e;
	char path[PATH_MAX];
	int i;

	stats_get(&s0);
	if (!ASSERT_GE(s0.considered, 0, "stats considered") ||
	    !ASSERT_GE(s0.live_entries, 0, "stats live_entries"))
		return;
	ASSERT_EQ(s0.entries, stash_count(), "stats entries before");

	for (i = 0; i < ARRAY_SIZE(fd); i++) {
		fd[i] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER,
				      i ? "stash_stats1" : "stash_stats0", "GPL",
				      insns, ARRAY_SIZE(insns), NULL);
		if (!ASSERT_OK_FD(fd[i], "bpf_prog_load"))
			goto out;
	}
	stats_get(&s1);
	ASSERT_EQ(s1.considered - s0.considered, 2, "stats considered: two loads");
	ASSERT_EQ(s1.stored - s0.stored, 2, "stats stored: two loads");
	ASSERT_EQ(s1.entries - s0.entries, 2 - (s1.reloaded - s0.reloaded),
		  "stats entries: new ones");
	ASSERT_EQ(s1.live_entries - s0.live_entries, 2, "stats live_entries: two loaded");
	ASSERT_EQ(s1.entries, stash_count(), "stats entries: listed");
	ASSERT_GT(s1.bytes, 0, "stats bytes");

	if (!ASSERT_OK(bpf_prog_get_info_by_fd(fd[0], &info, &len), "prog info"))
		goto out;
	for (i = 0; i < ARRAY_SIZE(fd); i++) {
		close(fd[i]);
		fd[i] = -1;
	}
	if (!ASSERT_OK(find_entry(info.id, &e), "entry of the program") ||
	    !ASSERT_TRUE(entry_unloaded(&e), "unloaded"))
		goto out;
	stats_get(&s2);
	ASSERT_EQ(s2.live_entries, s0.live_entries, "stats live_entries: unloaded");
	ASSERT_EQ(s2.entries, s1.entries, "stats entries: kept");

	snprintf(path, sizeof(path), "%s/%s", root, e.hex);
	if (!ASSERT_OK(rmdir(path), "rmdir"))
		goto out;
	stats_get(&s3);
	ASSERT_EQ(s3.deleted - s2.deleted, 1, "stats deleted");
	ASSERT_EQ(s3.entries, s2.entries - 1, "stats entries: deleted");
	ASSERT_LT(s3.bytes, s2.bytes, "stats bytes: freed");
	ASSERT_EQ(s3.entries, stash_count(), "stats entries: listed after rmdir");
out:
	for (i = 0; i < ARRAY_SIZE(fd); i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

void serial_test_bpfstash(void)
{
	if (!fs_supported()) {
		printf("%s:SKIP:no bpfstash filesystem (CONFIG_BPFSTASH)\n", __func__);
		test__skip();
		return;
	}
	if (!env.jit_enabled) {
		printf("%s:SKIP:bpfstash stores JITed programs only\n", __func__);
		test__skip();
		return;
	}
	if (stash_setup())
		goto out;

	if (test__start_subtest("entry_matches_info"))
		test_entry_matches_info();
	if (test__start_subtest("entry_survives_unload"))
		test_entry_survives_unload();
	if (test__start_subtest("subprog_funcs"))
		test_subprog_funcs();
	if (test__start_subtest("stats_count"))
		test_stats_count();
out:
	stash_teardown();
}
