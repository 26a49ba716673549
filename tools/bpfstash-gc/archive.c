// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc: the archive, where an entry goes before it is removed.
 *
 * Layout, one file per entry, in a tree debuginfod can serve:
 *
 *   <dir>/<2 hex>/<40 hex>.tar.zst     (debuginfod -Z .tar.zst <dir>)
 *
 * Each is a zstd-compressed tar (written with libarchive) of
 *
 *   <40 hex>/meta, funcs, jited, line_info, jited_line_info, func_info, btf,
 *             and calls and pokes in an entry that has them
 *   <40 hex>.debug      the entry as ELF (bpfstash_entry_export_elf()):
 *                       build-id = the hash, .text, symbols, .debug_line
 *
 * so that "tar xf" gives back an entry whose hash verifies (bpfstash verify,
 * libbpfstash) and debuginfod, which reads archives through libarchive and
 * indexes every ELF member by its build-id, serves the ELF as executable
 * and debuginfo.  A single compressed ELF would not do: debuginfod only
 * decompresses archives.  Members carry the entry's load time and no owner,
 * so an entry archived twice gives the same bytes.
 *
 * Nothing is lost: the archive is written under a temporary name, read back
 * and compared member by member (XXH3), fsynced, renamed into place and its
 * directory fsynced, and only then may the entry be removed.  A run killed
 * before the rename leaves a temporary file, which the next run removes
 * (under the archive directory's lock, so it is never another instance's).
 *
 * The archive has its own quota: after each archive is written, the oldest
 * archives (by file mtime, the time they were written, then by name) are
 * removed until the total size fits.  Only names of the layout above are
 * counted or removed.
 */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include "gc.h"

#define DEFAULT_QUOTA_MAX (4ULL << 30)

struct arec {
	uint64_t mtime_ns;
	uint64_t seq;		/* written by this run: in that order; else 0 */
	uint64_t size;
	bool dead;
	char name[BPFSTASH_HEX_LEN + 1];
};

struct gc_archive {
	int dir_fd;
	char *dir;
	bool dry_run;
	uint64_t max_bytes;
	uint64_t total;
	uint64_t cleaned;
	uint64_t newest_ns;	/* the newest archive's mtime */
	uint64_t seq;
	gc_evict_fn evict;
	void *ctx;
	struct arec *v;		/* every archive file, by index */
	size_t n, cap;
	size_t *heap;		/* indexes of v, oldest first */
	size_t hn;
	size_t *tab;		/* name -> index + 1, open addressing */
	size_t tab_size;
};

/*
 * The files of an entry, in archive order: the hash covers all but meta's
 * state.  The last two, an image's calls and the pokes, are optional:
 * archived when they are there (and not empty, which is the same as
 * missing).
 */
static const char *const entry_files[] = {
	"meta", "funcs", "jited", "line_info", "jited_line_info", "func_info", "btf", "calls",
	"pokes",
};
#define NR_FILES (sizeof(entry_files) / sizeof(entry_files[0]))
#define FILE_CALLS (NR_FILES - 2)
#define FILE_POKES (NR_FILES - 1)
/* Caps while reading, as libbpfstash's (above anything the kernel makes). */
static const size_t file_caps[NR_FILES] = {
	BPFSTASH_MAX_META,
	BPFSTASH_MAX_FUNCS * (sizeof(struct bpfstash_func) + 512),
	BPFSTASH_MAX_JITED,
	(size_t)BPFSTASH_MAX_LINES * sizeof(struct bpf_line_info),
	(size_t)BPFSTASH_MAX_LINES * sizeof(struct bpfstash_jited_line),
	(size_t)BPFSTASH_MAX_FUNC_INFO * sizeof(struct bpf_func_info),
	BPFSTASH_MAX_BTF,
	(size_t)BPFSTASH_MAX_CALLS * sizeof(struct bpfstash_call),
	(size_t)BPFSTASH_MAX_POKES * sizeof(struct bpfstash_poke),
};

static uint64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec < 0 ? 0 : (uint64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

/* ---- the index: archives by age (a heap) and by name (a hash table) ---- */

static bool older(const struct gc_archive *ar, size_t a, size_t b)
{
	const struct arec *x = &ar->v[a], *y = &ar->v[b];

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns;
	if (x->seq != y->seq)
		return x->seq < y->seq;
	return strcmp(x->name, y->name) < 0;
}

static void heap_swap(struct gc_archive *ar, size_t i, size_t j)
{
	size_t t = ar->heap[i];

	ar->heap[i] = ar->heap[j];
	ar->heap[j] = t;
}

static void heap_push(struct gc_archive *ar, size_t idx)
{
	size_t i = ar->hn++;

	ar->heap[i] = idx;
	while (i && older(ar, ar->heap[i], ar->heap[(i - 1) / 2])) {
		heap_swap(ar, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static size_t heap_pop(struct gc_archive *ar)
{
	size_t top = ar->heap[0], i = 0;

	ar->heap[0] = ar->heap[--ar->hn];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < ar->hn && older(ar, ar->heap[l], ar->heap[m]))
			m = l;
		if (r < ar->hn && older(ar, ar->heap[r], ar->heap[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(ar, i, m);
		i = m;
	}
	return top;
}

static size_t name_slot(const struct gc_archive *ar, const char *name)
{
	uint8_t hash[BPFSTASH_HASH_SIZE];
	uint64_t h;
	size_t i;

	/* Names are hashes already: their first bytes spread well. */
	bpfstash_hash_parse(name, hash);
	memcpy(&h, hash, sizeof(h));
	for (i = h & (ar->tab_size - 1); ar->tab[i];
	     i = (i + 1) & (ar->tab_size - 1))
		if (!strcmp(ar->v[ar->tab[i] - 1].name, name))
			break;
	return i;
}

static int tab_grow(struct gc_archive *ar)
{
	size_t old_size = ar->tab_size, *old = ar->tab, i;

	ar->tab_size = old_size ? old_size * 2 : 1024;
	ar->tab = calloc(ar->tab_size, sizeof(*ar->tab));
	if (!ar->tab) {
		ar->tab = old;
		ar->tab_size = old_size;
		return -ENOMEM;
	}
	for (i = 0; i < old_size; i++)
		if (old[i])
			ar->tab[name_slot(ar, ar->v[old[i] - 1].name)] = old[i];
	free(old);
	return 0;
}

/*
 * Record an archive file; one of the same name is replaced.  Those written
 * now (@seq) are newer than every other even when the clock is too coarse
 * to tell (file times tick with the jiffy), and ordered as written.
 */
static int index_add(struct gc_archive *ar, const char *name, uint64_t size, uint64_t mtime_ns,
		     bool written, size_t *idx)
{
	size_t slot;
	int err;

	if (ar->n == ar->cap) {
		size_t cap = ar->cap ? ar->cap * 2 : 1024;
		struct arec *v = realloc(ar->v, cap * sizeof(*v));
		size_t *heap;

		if (!v)
			return -ENOMEM;
		ar->v = v;
		heap = realloc(ar->heap, cap * sizeof(*heap));
		if (!heap)
			return -ENOMEM;
		ar->heap = heap;
		ar->cap = cap;
	}
	if ((ar->n + 1) * 2 > ar->tab_size) {
		err = tab_grow(ar);
		if (err)
			return err;
	}
	slot = name_slot(ar, name);
	if (ar->tab[slot]) {
		struct arec *old = &ar->v[ar->tab[slot] - 1];

		old->dead = true;	/* stays in the heap, skipped when it comes up */
		ar->total -= old->size;
	}
	if (written) {
		if (mtime_ns < ar->newest_ns)
			mtime_ns = ar->newest_ns;
		ar->v[ar->n] = (struct arec){ .mtime_ns = mtime_ns, .seq = ++ar->seq, .size = size };
	} else {
		ar->v[ar->n] = (struct arec){ .mtime_ns = mtime_ns, .size = size };
	}
	if (mtime_ns > ar->newest_ns)
		ar->newest_ns = mtime_ns;
	memcpy(ar->v[ar->n].name, name, sizeof(ar->v[ar->n].name));
	ar->tab[slot] = ar->n + 1;
	heap_push(ar, ar->n);
	ar->total += size;
	*idx = ar->n++;
	return 0;
}

static void arec_path(const struct gc_archive *ar, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%.2s/%s" GC_ARCHIVE_SUFFIX, ar->dir, name, name);
}

/* Remove the oldest archives other than @keep until the total fits. */
static void enforce_quota(struct gc_archive *ar, size_t keep)
{
	char path[PATH_MAX], sub[3];
	bool held = false;

	while (ar->max_bytes && ar->total > ar->max_bytes && ar->hn) {
		size_t idx = heap_pop(ar);
		struct arec *a = &ar->v[idx];
		int fd;

		if (a->dead)
			continue;
		if (idx == keep) {
			held = true;	/* the caller checked that it fits alone */
			continue;
		}
		memcpy(sub, a->name, 2);
		sub[2] = '\0';
		fd = openat(ar->dir_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			char file[BPFSTASH_HEX_LEN + sizeof(GC_ARCHIVE_SUFFIX)];
			int err = 0;

			snprintf(file, sizeof(file), "%s" GC_ARCHIVE_SUFFIX, a->name);
			if (!ar->dry_run && unlinkat(fd, file, 0) && errno != ENOENT)
				err = -errno;
			close(fd);
			if (err)
				continue;	/* still there, still counted; tried again next run */
		}
		a->dead = true;
		ar->total -= a->size;
		arec_path(ar, a->name, path, sizeof(path));
		if (ar->evict)
			ar->evict(path, a->size, ar->ctx);
		if (!ar->dry_run)
			gc_checkpoint();
	}
	if (held)
		heap_push(ar, keep);
}

/* "<40 hex>" + @suffix, exactly: returns the name's length, else 0. */
static bool has_layout_name(const char *s, const char *suffix, char name[BPFSTASH_HEX_LEN + 1])
{
	if (strlen(s) != BPFSTASH_HEX_LEN + strlen(suffix) ||
	    strcmp(s + BPFSTASH_HEX_LEN, suffix))
		return false;
	memcpy(name, s, BPFSTASH_HEX_LEN);
	name[BPFSTASH_HEX_LEN] = '\0';
	return bpfstash_name_valid(name);
}

static int scan_subdir(struct gc_archive *ar, const char *sub)
{
	char name[BPFSTASH_HEX_LEN + 1];
	struct dirent *de;
	struct stat st;
	size_t idx;
	int fd, dfd, err = 0;
	DIR *d;

	fd = openat(ar->dir_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
	dfd = dup(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return -ENOMEM;
	}
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    has_layout_name(de->d_name + 1, GC_ARCHIVE_TMP_SUFFIX, name) &&
		    !strncmp(name, sub, 2)) {
			if (!ar->dry_run && !unlinkat(fd, de->d_name, 0)) {
				ar->cleaned++;
				gc_checkpoint();
			}
			continue;
		}
		if (!has_layout_name(de->d_name, GC_ARCHIVE_SUFFIX, name) || strncmp(name, sub, 2))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		err = index_add(ar, name, st.st_size, ts_ns(&st.st_mtim), false, &idx);
	}
	closedir(d);
	close(fd);
	return err;
}

static int mkdir_p(const char *dir)
{
	char *p, *path = strdup(dir);
	int err = 0;

	if (!path)
		return -ENOMEM;
	for (p = path + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			err = -errno;
			break;
		}
		*p = c;
		if (!c)
			break;
	}
	free(path);
	return err;
}

int gc_archive_open(const char *dir, bool dry_run, uint64_t max_bytes, bool max_set,
		    gc_evict_fn evict, void *ctx, struct gc_archive **out)
{
	static const char hex[] = "0123456789abcdef";
	struct gc_archive *ar;
	struct statvfs sv;
	int err, i, j;

	*out = NULL;
	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return -ENOMEM;
	ar->dir_fd = -1;
	ar->dry_run = dry_run;
	ar->evict = evict;
	ar->ctx = ctx;
	ar->dir = strdup(dir);
	if (!ar->dir) {
		err = -ENOMEM;
		goto err;
	}
	if (!dry_run) {
		err = mkdir_p(dir);
		if (err)
			goto err;
	}
	ar->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ar->dir_fd < 0) {
		err = -errno;
		/* A dry run with no archive yet: an empty one. */
		if (dry_run && err == -ENOENT) {
			ar->max_bytes = max_set ? max_bytes : DEFAULT_QUOTA_MAX;
			*out = ar;
			return 0;
		}
		goto err;
	}
	/* One writer per archive directory, whatever stash it archives. */
	if (flock(ar->dir_fd, (dry_run ? LOCK_SH : LOCK_EX) | LOCK_NB)) {
		err = -errno;
		goto err;
	}
	if (max_set) {
		ar->max_bytes = max_bytes;
	} else {
		/* journald's SystemMaxUse= default: 10% of the filesystem, capped. */
		if (fstatvfs(ar->dir_fd, &sv)) {
			err = -errno;
			goto err;
		}
		ar->max_bytes = (uint64_t)sv.f_blocks * sv.f_frsize / 10;
		if (ar->max_bytes > DEFAULT_QUOTA_MAX)
			ar->max_bytes = DEFAULT_QUOTA_MAX;
	}
	for (i = 0; i < 16; i++) {
		for (j = 0; j < 16; j++) {
			char sub[3] = { hex[i], hex[j], '\0' };

			err = scan_subdir(ar, sub);
			if (err)
				goto err;
		}
	}
	enforce_quota(ar, SIZE_MAX);
	*out = ar;
	return 0;
err:
	gc_archive_close(ar);
	return err;
}

void gc_archive_close(struct gc_archive *ar)
{
	if (!ar)
		return;
	if (ar->dir_fd >= 0)
		close(ar->dir_fd);
	free(ar->dir);
	free(ar->v);
	free(ar->heap);
	free(ar->tab);
	free(ar);
}

uint64_t gc_archive_max_bytes(const struct gc_archive *ar)
{
	return ar->max_bytes;
}

uint64_t gc_archive_bytes(const struct gc_archive *ar)
{
	return ar->total;
}

uint64_t gc_archive_cleaned(const struct gc_archive *ar)
{
	return ar->cleaned;
}

/* ---- one entry ---- */

struct member {
	char path[BPFSTASH_HEX_LEN + 32];
	const void *data;
	size_t size;
	uint64_t xxh;
};

struct files {
	void *buf[NR_FILES];
	size_t size[NR_FILES];
	void *elf;
	size_t elf_size;
};

static void files_free(struct files *f)
{
	size_t i;

	for (i = 0; i < NR_FILES; i++)
		free(f->buf[i]);
	if (f->elf)
		munmap(f->elf, f->elf_size);
}

/* Read @file of the entry directory @efd, at most @max bytes, no symlink. */
static int read_file(int efd, const char *file, size_t max, void **buf, size_t *size)
{
	struct stat st;
	size_t cap, len = 0;
	char *p = NULL, *tmp;
	ssize_t n;
	int fd, err = 0;

	fd = gc_open_file(efd, file, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	cap = st.st_size > 0 && (uint64_t)st.st_size <= max ? (size_t)st.st_size + 1 : 4096;
	for (;;) {
		if (!p || len == cap) {
			if (p)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			tmp = realloc(p, cap);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			p = tmp;
		}
		n = read(fd, p + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
		if (len > max) {
			err = -EBADMSG;
			break;
		}
	}
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	*buf = p;
	*size = len;
	return 0;
}

/*
 * The entry's files, read through @efd, and the same entry loaded by
 * libbpfstash to verify its hash and export it: the two must agree byte
 * for byte, so that what is archived is what was verified, and was read
 * without following any link.
 */
static int load_entry(int root_fd, int efd, const char *name, struct files *f)
{
	struct bpfstash_entry *e = NULL;
	const struct bpfstash_meta *m;
	const void *data;
	size_t size, i;
	int fd = -1, err;

	for (i = 0; i < NR_FILES; i++) {
		err = read_file(efd, entry_files[i], file_caps[i], &f->buf[i], &f->size[i]);
		if (err == -ENOENT && (i == FILE_CALLS || i == FILE_POKES))
			err = 0;
		if (err)
			return err;
	}
	err = bpfstash_entry_load_at(root_fd, name, 0, &e);
	if (err)
		return err;
	err = bpfstash_entry_verify(e);
	if (err)
		goto out;

	err = -ESTALE;
	/*
	 * The content and the name: what was verified.  The state may change
	 * between the two reads (an unload; the entry's share of blobs, as
	 * other entries go), and a later kernel's meta is larger.  (The
	 * library's records are in the host's order, the files' little-endian:
	 * on a big-endian host they differ, and nothing is archived.)
	 */
	m = bpfstash_entry_meta(e);
	if (f->size[0] < sizeof(*m) ||
	    memcmp((uint8_t *)f->buf[0] + offsetof(struct bpfstash_meta, content), &m->content,
		   offsetof(struct bpfstash_meta, prog_id) - offsetof(struct bpfstash_meta, content)))
		goto out;
	data = bpfstash_entry_func(e, 0);
	if (f->size[1] != m->content.funcs_size || memcmp(f->buf[1], data, f->size[1]))
		goto out;
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++) {
		size_t k;

		for (k = 2; k < NR_FILES; k++)
			if (!strcmp(entry_files[k], bpfstash_blob_file(i)))
				break;
		data = bpfstash_entry_blob(e, i, &size);
		if (k == NR_FILES || size != f->size[k] || (size && memcmp(data, f->buf[k], size)))
			goto out;
	}
	{
		uint32_t nr;

		data = bpfstash_entry_calls(e, &nr);
		size = (size_t)nr * sizeof(struct bpfstash_call);
		if (size != f->size[FILE_CALLS] || (size && memcmp(data, f->buf[FILE_CALLS], size)))
			goto out;
		data = bpfstash_entry_pokes(e, &nr);
		size = (size_t)nr * sizeof(struct bpfstash_poke);
		if (size != f->size[FILE_POKES] || (size && memcmp(data, f->buf[FILE_POKES], size)))
			goto out;
	}

	/* The ELF, in memory: its size goes in the tar header first. */
	fd = memfd_create("bpfstash-gc-elf", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = bpfstash_entry_export_elf(e, fd);
	if (err)
		goto out;
	{
		struct stat st;

		if (fstat(fd, &st)) {
			err = -errno;
			goto out;
		}
		f->elf_size = st.st_size;
		f->elf = mmap(NULL, f->elf_size ? f->elf_size : 1, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->elf == MAP_FAILED) {
			f->elf = NULL;
			err = -errno;
			goto out;
		}
	}
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	bpfstash_entry_free(e);
	return err;
}

static int ar_err(struct archive *a)
{
	int err = archive_errno(a);

	return err > 0 ? -err : -EIO;
}

static int write_tar(int fd, const struct member *mem, size_t n, const char *name,
		     uint64_t mtime_ns)
{
	struct archive_entry *ae;
	struct archive *a;
	size_t i;
	int err = 0;

	a = archive_write_new();
	if (!a)
		return -ENOMEM;
	ae = archive_entry_new();
	if (!ae) {
		archive_write_free(a);
		return -ENOMEM;
	}
	if (archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		err = ar_err(a);
		goto out;
	}
	/* The directory first, as tar would write it. */
	{
		char dir[BPFSTASH_HEX_LEN + 2];

		snprintf(dir, sizeof(dir), "%s/", name);
		archive_entry_set_pathname(ae, dir);
		archive_entry_set_filetype(ae, AE_IFDIR);
		archive_entry_set_perm(ae, 0555);
		archive_entry_set_mtime(ae, mtime_ns / NSEC_PER_SEC, mtime_ns % NSEC_PER_SEC);
		if (archive_write_header(a, ae) != ARCHIVE_OK) {
			err = ar_err(a);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, mem[i].path);
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_perm(ae, 0444);
		archive_entry_set_size(ae, mem[i].size);
		archive_entry_set_mtime(ae, mtime_ns / NSEC_PER_SEC, mtime_ns % NSEC_PER_SEC);
		if (archive_write_header(a, ae) != ARCHIVE_OK ||
		    (mem[i].size &&
		     archive_write_data(a, mem[i].data, mem[i].size) != (la_ssize_t)mem[i].size)) {
			err = ar_err(a);
			goto out;
		}
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		err = ar_err(a);
out:
	archive_entry_free(ae);
	archive_write_free(a);
	return err;
}

/* Read the archive at @fd back: every member there, whole, and equal. */
static int check_tar(int fd, const struct member *mem, size_t n)
{
	struct archive_entry *ae;
	struct archive *a;
	size_t seen = 0, i;
	char buf[65536];
	int r, err = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	a = archive_read_new();
	if (!a)
		return -ENOMEM;
	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_fd(a, fd, sizeof(buf)) != ARCHIVE_OK) {
		err = ar_err(a);
		goto out;
	}
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		const char *path = archive_entry_pathname(ae);
		XXH3_state_t *st;
		la_ssize_t got;
		uint64_t total = 0;

		if (archive_entry_filetype(ae) == AE_IFDIR)
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(path, mem[i].path))
				break;
		if (i == n || (seen & (1UL << i))) {
			err = -EBADMSG;
			goto out;
		}
		st = XXH3_createState();
		if (!st) {
			err = -ENOMEM;
			goto out;
		}
		XXH3_64bits_reset(st);
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0) {
			XXH3_64bits_update(st, buf, got);
			total += got;
		}
		if (got < 0 || total != mem[i].size || XXH3_64bits_digest(st) != mem[i].xxh)
			err = -EBADMSG;
		XXH3_freeState(st);
		if (err)
			goto out;
		seen |= 1UL << i;
	}
	if (r != ARCHIVE_EOF)
		err = ar_err(a);
	else if (seen != (1UL << n) - 1)
		err = -EBADMSG;
out:
	archive_read_free(a);
	return err;
}

int gc_archive_entry(struct gc_archive *ar, int root_fd, int efd, const char *name,
		     uint64_t load_ns, char *path, size_t path_size, uint64_t *size)
{
	char sub[3] = { name[0], name[1], '\0' };
	char tmp[BPFSTASH_HEX_LEN + sizeof(GC_ARCHIVE_TMP_SUFFIX) + 1];
	char final[BPFSTASH_HEX_LEN + sizeof(GC_ARCHIVE_SUFFIX)];
	struct member mem[NR_FILES + 1];
	struct files f = {};
	struct stat st;
	bool created = false;
	size_t i, n, idx;
	int sub_fd = -1, fd = -1, err;

	if (ar->dry_run || ar->dir_fd < 0)
		return -EROFS;
	err = load_entry(root_fd, efd, name, &f);
	if (err)
		goto out;
	for (i = n = 0; i < NR_FILES; i++) {
		if ((i == FILE_CALLS || i == FILE_POKES) && !f.size[i])
			continue;	/* no calls (a program's), no pokes (an image's) */
		snprintf(mem[n].path, sizeof(mem[n].path), "%s/%s", name, entry_files[i]);
		mem[n].data = f.buf[i];
		mem[n].size = f.size[i];
		n++;
	}
	snprintf(mem[n].path, sizeof(mem[n].path), "%s.debug", name);
	mem[n].data = f.elf;
	mem[n].size = f.elf_size;
	n++;
	for (i = 0; i < n; i++)
		mem[i].xxh = XXH3_64bits(mem[i].data, mem[i].size);

	if (mkdirat(ar->dir_fd, sub, 0755))  {
		if (errno != EEXIST) {
			err = -errno;
			goto out;
		}
	} else {
		created = true;
	}
	sub_fd = openat(ar->dir_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub_fd < 0) {
		err = -errno;
		goto out;
	}
	if (created) {
		if (fsync(ar->dir_fd)) {
			err = -errno;
			goto out;
		}
		gc_checkpoint();
	}

	snprintf(tmp, sizeof(tmp), ".%s" GC_ARCHIVE_TMP_SUFFIX, name);
	snprintf(final, sizeof(final), "%s" GC_ARCHIVE_SUFFIX, name);
	fd = openat(sub_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	gc_checkpoint();
	err = write_tar(fd, mem, n, name, load_ns);
	if (err)
		goto out_unlink;
	gc_checkpoint();
	err = check_tar(fd, mem, n);
	if (err)
		goto out_unlink;
	if (fsync(fd) || fstat(fd, &st)) {
		err = -errno;
		goto out_unlink;
	}
	gc_checkpoint();
	if (st.st_size && (uint64_t)st.st_size > ar->max_bytes && ar->max_bytes) {
		err = -EDQUOT;
		goto out_unlink;
	}
	if (renameat(sub_fd, tmp, sub_fd, final)) {
		err = -errno;
		goto out_unlink;
	}
	gc_checkpoint();
	if (fsync(sub_fd)) {
		err = -errno;
		goto out;
	}
	gc_checkpoint();

	err = index_add(ar, name, st.st_size, ts_ns(&st.st_mtim), true, &idx);
	if (err)
		goto out;
	enforce_quota(ar, idx);
	snprintf(path, path_size, "%s/%s/%s", ar->dir, sub, final);
	*size = st.st_size;
	goto out;

out_unlink:
	(void)unlinkat(sub_fd, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	if (sub_fd >= 0)
		close(sub_fd);
	files_free(&f);
	return err;
}
