// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <elf.h>
#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "proginfo.h"
#include "stashfs.h"
#include "entrycheck.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

/* Raw BTF of @btf_id, as the kernel returns it. */
static int btf_raw(__u32 btf_id, void **data, __u32 *size)
{
	struct bpf_btf_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_btf_get_fd_by_id(btf_id);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!err) {
		*size = info.btf_size;
		*data = calloc(1, info.btf_size + 1);
		info = (struct bpf_btf_info){ .btf = (__u64)(unsigned long)*data,
					      .btf_size = *size };
		len = sizeof(info);
		err = bpf_obj_get_info_by_fd(fd, &info, &len);
	}
	close(fd);
	return err;
}

/* The first line where @a and @b differ, 1-based; 0 if they are equal. */
static size_t first_diff_line(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i, line = 1;

	for (i = 0; i < alen && i < blen && a[i] == b[i]; i++)
		line += a[i] == '\n';
	return i == alen && i == blen ? 0 : line;
}

/* Line @n (1-based) of @s, for a message: at most 200 bytes. */
static const char *line_of(const char *s, size_t len, size_t n, char *buf, size_t size)
{
	const char *end = s + len, *nl;

	while (--n && s < end && (nl = memchr(s, '\n', end - s)))
		s = nl + 1;
	nl = s < end ? memchr(s, '\n', end - s) : NULL;
	snprintf(buf, size, "%.*s", (int)((nl ? nl : end) - s > 200 ? 200 : (nl ? nl : end) - s), s);
	return buf;
}

/* Whether the kernel's text files of @e are libbpfstash's rendering now. */
static bool entry_views_equal(const struct bpfstash_entry *e)
{
	const char *hex = bpfstash_entry_name(e), *file;
	bool equal = true;
	unsigned int i;

	for (i = 0; equal && (file = bpfstash_view_name(i)); i++) {
		char *want = NULL;
		void *got = NULL;
		size_t wlen, glen;

		equal = !bpfstash_entry_render(e, file, &want, &wlen) &&
			!stash_read(hex, file, &got, &glen) &&
			!first_diff_line(got, glen, want, wlen);
		free(want);
		free(got);
	}
	return equal;
}

/*
 * Both the kernel and libbpfstash could give '?' for a file name: the BTF
 * itself must resolve every line's file and source (it does for any
 * program clang compiled with -g).  @want is libbpfstash's "lines".
 */
static void check_lines_named(const struct bpfstash_entry *e, const char *want, size_t wlen,
			      const char *what)
{
	const char *bad;
	char ua[256];
	size_t n = 1;
	const char *p;

	if (!bpfstash_entry_meta(e)->content.btf_size)
		return;
	bad = strstr(want, "\t?:");
	if (!bad)
		bad = strstr(want, "\t?\n");
	if (!bad)
		return;
	for (p = want; p < bad; p++)
		n += *p == '\n';
	test__fail(__FILE__, __LINE__, "%s: %s/lines has '?' for a file or source line: line %zu: %s",
		   what, bpfstash_entry_name(e), n, line_of(want, wlen, n, ua, sizeof(ua)));
}

void check_entry_views(const struct bpfstash_entry *e, const char *what)
{
	const char *hex = bpfstash_entry_name(e);
	const char *file;
	unsigned int i;

	for (i = 0; (file = bpfstash_view_name(i)); i++) {
		char *want = NULL, ka[256], ua[256];
		void *got = NULL;
		size_t wlen, glen, line;

		if (!ASSERT_OK(bpfstash_entry_render(e, file, &want, &wlen), "render") ||
		    !ASSERT_OK(stash_read(hex, file, &got, &glen), file)) {
			free(want);
			free(got);
			continue;
		}
		line = first_diff_line(got, glen, want, wlen);
		if (line)
			test__fail(__FILE__, __LINE__,
				   "%s: the kernel's %s/%s differs from libbpfstash's rendering at line %zu:\n"
				   "  kernel:      %s\n  libbpfstash: %s", what, hex, file, line,
				   line_of(got, glen, line, ka, sizeof(ka)),
				   line_of(want, wlen, line, ua, sizeof(ua)));
		if (!strcmp(file, "lines"))
			check_lines_named(e, want, wlen, what);
		free(want);
		free(got);
	}
}

int check_stash_views(const char *what, size_t max)
{
	struct bpfstash *stash;
	size_t i, count, checked = 0;
	char **names;

	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open stash"))
		return 0;
	if (!ASSERT_OK(bpfstash_list(stash, &names, &count), "list stash")) {
		bpfstash_close(stash);
		return 0;
	}
	/* Names sort by hash: with more than @max, an even spread is a sample. */
	for (i = 0; i < count && checked < max; i++) {
		struct bpfstash_entry *e;
		size_t k = count <= max ? i : i * count / max;
		bool equal;
		int err;

		if (k >= count)
			break;
		err = bpfstash_entry_load(stash, names[k], 0, &e);
		if (err == -ENOENT)	/* deleted meanwhile */
			continue;
		if (!ASSERT_OK(err, names[k]))
			continue;
		/*
		 * A live entry may be unloaded between libbpfstash's read and
		 * the kernel's (an image is freed a grace period after its
		 * detach): read it again then, and compare the same state.
		 */
		equal = entry_views_equal(e);
		for (int tries = 0; tries < 5 && !equal && bpfstash_entry_loaded(e); tries++) {
			struct bpfstash_entry *again;

			usleep(100 * 1000);
			if (bpfstash_entry_load(stash, names[k], 0, &again))
				break;
			bpfstash_entry_free(e);
			e = again;
			equal = entry_views_equal(e);
		}
		/*
		 * Found equal: the kernel's files are not read again (the
		 * entry could be unloaded meanwhile); only the lines' names
		 * are left to check.  Otherwise, say where they differ.
		 */
		if (equal) {
			char *lines = NULL;
			size_t len;

			if (ASSERT_OK(bpfstash_entry_render(e, "lines", &lines, &len), "render"))
				check_lines_named(e, lines, len, what);
			free(lines);
		} else {
			check_entry_views(e, what);
		}
		bpfstash_entry_free(e);
		checked++;
	}
	test__note("%s: the text files of %zu of %zu entries equal libbpfstash's", what,
		   checked, count);
	bpfstash_names_free(names);
	bpfstash_close(stash);
	return checked;
}

/*
 * Who made an entry, as meta says: this process loaded it (its pid, comm
 * and cgroup v2 id, the inode number of its cgroup's directory), in this
 * boot, on this machine.  Checked for entries this process loaded.
 */
void check_entry_origin(const struct bpfstash_meta *m, const char *what)
{
	char comm[32] = "", path[600] = "/sys/fs/cgroup", line[512];
	struct stat st;
	FILE *f;

	ASSERT_EQ(m->loader_tgid, (__u32)getpid(), "loader_tgid == getpid()");
	f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	ASSERT_STREQ(m->loader_comm, comm, "loader_comm == /proc/self/comm");
	/* "0::/path" in a cgroup v2 hierarchy; the id is its directory's inode. */
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
		}
	if (f)
		fclose(f);
	/* In the root cgroup, with or without cgroup2 mounted, the id is 1. */
	if (!strcmp(path, "/sys/fs/cgroup/"))
		ASSERT_EQ(m->loader_cgroup_id, 1, "loader_cgroup_id == 1 (the root cgroup)");
	else if (!stat(path, &st))
		ASSERT_EQ(m->loader_cgroup_id, (__u64)st.st_ino, "loader_cgroup_id == cgroup ino");
	else
		test__note("%s: no cgroup v2 directory at %s: loader_cgroup_id %llu unchecked",
			   what, path, (unsigned long long)m->loader_cgroup_id);
	check_entry_boot(m);
}

/* meta names this boot and this machine. */
void check_entry_boot(const struct bpfstash_meta *m)
{
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];
	char boot[64] = "";
	FILE *f;

	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (fgets(boot, sizeof(boot), f))
			boot[strcspn(boot, "\n")] = '\0';
		fclose(f);
	}
	if (ASSERT_OK(bpfstash_boot_id_parse(boot, boot_id), "boot_id of this boot"))
		ASSERT_MEMEQ(m->boot_id, boot_id, sizeof(boot_id), "boot_id == this boot's");
#if defined(__x86_64__)
	ASSERT_EQ(m->content.machine, EM_X86_64, "machine");
#elif defined(__aarch64__)
	ASSERT_EQ(m->content.machine, EM_AARCH64, "machine");
#endif
}

/*
 * The entry of the program behind @prog_fd matches what the kernel reports
 * for it, file by file, and its name is the hash of its content.
 */
void check_entry_matches(int prog_fd, const char *what)
{
	struct bpfstash_entry *e = NULL;
	struct prog_info_full pi;
	struct bpfstash *stash;
	const struct bpfstash_meta *m;
	const struct bpfstash_jited_line *jl;
	const void *blob;
	char hex[41];
	size_t size;
	__u32 i;

	if (!ASSERT_OK(prog_info_full_get(prog_fd, &pi), "get info"))
		return;
	if (!ASSERT_OK(stash_find_prog(pi.info.id, hex), what))
		goto out_info;
	if (!ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "open stash"))
		goto out_info;
	if (!ASSERT_OK(bpfstash_entry_load(stash, hex, 0, &e), "load entry"))
		goto out;
	ASSERT_OK(bpfstash_entry_verify(e), "hash of content == name");

	m = bpfstash_entry_meta(e);
	ASSERT_TRUE(bpfstash_entry_loaded(e), "loaded flag");
	ASSERT_EQ(m->content.prog_type, pi.info.type, "type");
	ASSERT_MEMEQ(m->content.tag, pi.info.tag, 8, "tag");
	ASSERT_STREQ(m->content.name, pi.info.name, "name");
	ASSERT_EQ(m->load_time, pi.info.load_time, "load_time");
	ASSERT_EQ(m->content.xlated_len, pi.info.xlated_prog_len, "xlated_len");
	ASSERT_EQ(m->content.verified_insns, pi.info.verified_insns, "verified_insns");
	ASSERT_EQ(m->btf_id, pi.info.btf_id, "btf_id");
	ASSERT_EQ(m->uid, getuid(), "uid");
	/*
	 * Loaded by this process: it is the loader.  By another (a tool the
	 * test ran): its comm, while it lives.  Stored by the start's walk:
	 * no known loader.
	 */
	if (m->loader_tgid == (__u32)getpid()) {
		check_entry_origin(m, what);
	} else {
		char path[64], comm[32] = "";
		FILE *f;

		ASSERT_TRUE(m->loader_tgid || (!m->loader_comm[0] && !m->loader_cgroup_id),
			    "a loader, or none at all");
		snprintf(path, sizeof(path), "/proc/%u/comm", m->loader_tgid);
		f = m->loader_tgid ? fopen(path, "re") : NULL;
		if (f && fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			ASSERT_STREQ(m->loader_comm, comm, "loader_comm == /proc/<loader>/comm");
		}
		if (f)
			fclose(f);
		check_entry_boot(m);
	}

	/* jited_prog_insns, jited_ksyms, jited_func_lens */
	blob = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
	if (ASSERT_EQ(size, pi.info.jited_prog_len, "jited size"))
		ASSERT_MEMEQ(blob, pi.jited, size, "jited bytes");
	if (ASSERT_EQ(bpfstash_entry_nr_funcs(e), pi.info.nr_jited_ksyms, "nr funcs")) {
		for (i = 0; i < pi.info.nr_jited_ksyms; i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(e, i);

			ASSERT_EQ(f->addr, pi.ksyms[i], "func addr == jited_ksyms[i]");
			ASSERT_EQ(f->len, pi.func_lens[i], "func len == jited_func_lens[i]");
		}
	}
	/* line_info, jited_line_info, func_info */
	blob = bpfstash_entry_blob(e, BPFSTASH_LINE_INFO, &size);
	if (ASSERT_EQ(size, pi.info.nr_line_info * pi.info.line_info_rec_size, "line_info size"))
		ASSERT_MEMEQ(blob, pi.line_info, size, "line_info bytes");
	jl = bpfstash_entry_blob(e, BPFSTASH_JITED_LINE_INFO, &size);
	if (ASSERT_EQ(size / sizeof(*jl), pi.info.nr_jited_line_info, "jited_line_info count")) {
		for (i = 0; i < pi.info.nr_jited_line_info; i++)
			if (!ASSERT_EQ(bpfstash_entry_func(e, jl[i].func)->addr + jl[i].off,
				       pi.jited_line_info[i], "(func, off) == jited_line_info[i]"))
				break;
	}
	blob = bpfstash_entry_blob(e, BPFSTASH_FUNC_INFO, &size);
	if (ASSERT_EQ(size, pi.info.nr_func_info * pi.info.func_info_rec_size, "func_info size"))
		ASSERT_MEMEQ(blob, pi.func_info, size, "func_info bytes");

	/* BTF */
	blob = bpfstash_entry_blob(e, BPFSTASH_BTF, &size);
	if (pi.info.btf_id) {
		void *raw = NULL;
		__u32 raw_size = 0;

		if (ASSERT_OK(btf_raw(pi.info.btf_id, &raw, &raw_size), "btf get info") &&
		    ASSERT_EQ(size, raw_size, "btf size"))
			ASSERT_MEMEQ(blob, raw, size, "btf bytes");
		free(raw);
	} else {
		ASSERT_EQ(size, 0, "no btf");
	}

	/* The kernel's text files against an independent rendering. */
	check_entry_views(e, what);
	bpfstash_entry_free(e);
out:
	bpfstash_close(stash);
out_info:
	prog_info_full_free(&pi);
}


static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hex_of(char out[41], const unsigned char *p)
{
	int i;

	for (i = 0; i < 20; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* One entry's record and ranges against its meta and funcs files. */
static void check_index_entry(const struct bpfstash_index_header *h, const unsigned char *base,
			      unsigned int i, const char *hex, const void *meta,
			      const void *funcs, size_t fsize)
{
	const struct bpfstash_index_entry *ie =
		(const void *)(base + le32toh(h->header_size) + i * le32toh(h->entry_size));
	const unsigned char *ranges = base + le32toh(h->header_size) +
				      (size_t)le32toh(h->nr_entries) * le32toh(h->entry_size);
	const char *names = (const char *)ranges +
			    (size_t)le32toh(h->nr_ranges) * le32toh(h->range_size);
	const struct bpfstash_meta *m = meta;
	const struct bpfstash_func *f = funcs;
	unsigned int nr = le32toh(m->content.nr_funcs), j, first;
	char ihex[41];

	hex_of(ihex, ie->hash);
	if (!ASSERT_STREQ(ihex, hex, "index entry in listing order"))
		return;
	ASSERT_EQ(memcmp(ie->hash, m->hash, 20), 0, "hash is meta's");
	ASSERT_EQ(le32toh(ie->flags), le32toh(m->flags), "flags");
	ASSERT_EQ(le32toh(ie->prog_id), le32toh(m->prog_id), "prog_id");
	ASSERT_EQ(le32toh(ie->image_kind), le32toh(m->content.image_kind), "image_kind");
	ASSERT_EQ(le32toh(ie->prog_type), le32toh(m->content.prog_type), "prog_type");
	ASSERT_EQ(le32toh(ie->uid), le32toh(m->uid), "uid");
	ASSERT_EQ(le64toh(ie->load_time), le64toh(m->load_time), "load_time");
	ASSERT_EQ(le64toh(ie->load_time_real), le64toh(m->load_time_real), "load_time_real");
	ASSERT_EQ(le64toh(ie->unload_time), le64toh(m->unload_time), "unload_time");
	ASSERT_EQ(le64toh(ie->unload_time_real), le64toh(m->unload_time_real),
		  "unload_time_real");
	ASSERT_EQ(memcmp(ie->name, m->content.name, sizeof(ie->name)), 0, "name");
	ASSERT_EQ(memcmp(ie->tag, m->content.tag, sizeof(ie->tag)), 0, "tag");
	if (!ASSERT_EQ(le32toh(ie->nr_ranges), nr, "a range per function") ||
	    !ASSERT_GE(fsize, nr * sizeof(*f), "funcs holds its records"))
		return;
	first = le32toh(ie->first_range);
	for (j = 0; j < nr; j++) {
		const struct bpfstash_index_range *r =
			(const void *)(ranges + (size_t)(first + j) * le32toh(h->range_size));
		const char *fname = (const char *)(f + nr) + le32toh(f[j].name_off);

		ASSERT_EQ(le64toh(r->addr), le64toh(f[j].addr), "range addr");
		ASSERT_EQ(le32toh(r->len), le32toh(f[j].len), "range len");
		ASSERT_EQ(le32toh(r->entry), i, "range entry");
		ASSERT_EQ(le32toh(r->func), j, "range func");
		if (ASSERT_LT(le32toh(r->name_off), le32toh(h->names_size), "name in names"))
			ASSERT_STREQ(names + le32toh(r->name_off), fname, "range name");
	}
}

int check_index_file(unsigned long long *generation, double *index_s, double *entries_s)
{
	const struct bpfstash_index_header *h;
	char (*hexes)[41] = NULL, bootid[64] = "", boot[16];
	unsigned int nr = 0, cap = 0, i;
	struct dirent *de;
	void *buf = NULL;
	double t0, t;
	size_t size;
	FILE *fp;
	DIR *d;

	t0 = mono_s();
	if (!ASSERT_OK(stash_read(".", "index", &buf, &size), "read the index file"))
		return -1;
	*index_s = mono_s() - t0;
	h = buf;
	if (!ASSERT_GE(size, sizeof(*h), "index: a header") ||
	    !ASSERT_EQ(le32toh(h->magic), BPFSTASH_INDEX_MAGIC, "index: magic") ||
	    !ASSERT_EQ(le32toh(h->version), BPFSTASH_INDEX_VERSION, "index: version") ||
	    !ASSERT_EQ(le32toh(h->header_size), sizeof(*h), "index: header size") ||
	    !ASSERT_EQ(le32toh(h->entry_size), sizeof(struct bpfstash_index_entry),
		       "index: entry size") ||
	    !ASSERT_EQ(le32toh(h->range_size), sizeof(struct bpfstash_index_range),
		       "index: range size") ||
	    !ASSERT_EQ(le64toh(h->size), size, "index: size") ||
	    !ASSERT_EQ(sizeof(*h) + (size_t)le32toh(h->nr_entries) * le32toh(h->entry_size) +
		       (size_t)le32toh(h->nr_ranges) * le32toh(h->range_size) +
		       le32toh(h->names_size), size, "index: sections fill it")) {
		free(buf);
		return -1;
	}
	*generation = le64toh(h->generation);
	ASSERT_EQ(le32toh(h->flags) & ~BPFSTASH_INDEX_CHANGING, 0, "index: known flags only");
	fp = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (fp && fgets(bootid, sizeof(bootid), fp)) {
		for (i = 0; i < 16; i++) {
			while (bootid[2 * i] == '-')
				memmove(bootid + 2 * i, bootid + 2 * i + 1, strlen(bootid + 2 * i));
			sscanf(bootid + 2 * i, "%2hhx", &boot[i]);
		}
		ASSERT_EQ(memcmp(boot, h->boot_id, 16), 0, "index: this boot");
	}
	if (fp)
		fclose(fp);

	t0 = mono_s();
	d = opendir(STASH_ROOT);
	while (d && (de = readdir(d))) {
		if (strlen(de->d_name) != 40)
			continue;
		if (nr == cap)
			hexes = realloc(hexes, (cap = cap ? 2 * cap : 1024) * sizeof(*hexes));
		memcpy(hexes[nr++], de->d_name, 41);
	}
	if (d)
		closedir(d);
	t = mono_s() - t0;
	if (!ASSERT_EQ(le32toh(h->nr_entries), nr, "index: every entry listed")) {
		free(hexes);
		free(buf);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		void *meta = NULL, *funcs = NULL;
		size_t msize, fsize;

		t0 = mono_s();
		if (ASSERT_OK(stash_read(hexes[i], "meta", &meta, &msize), "read meta") &&
		    ASSERT_OK(stash_read(hexes[i], "funcs", &funcs, &fsize), "read funcs")) {
			t += mono_s() - t0;
			check_index_entry(h, buf, i, hexes[i], meta, funcs, fsize);
		}
		free(meta);
		free(funcs);
	}
	*entries_s = t;
	free(hexes);
	free(buf);
	return nr;
}
