// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash-gc: the policy engine.
 *
 * The algorithm is journald's vacuum (journal_directory_vacuum()): list the
 * entries, sort them oldest first, and remove in that order until every
 * limit holds at once; a limit of 0 is off.  Like systemd-tmpfiles, age is
 * one named timestamp (--age-by), a dry run walks the very same loop and
 * only skips the system calls, the first error is remembered and the walk
 * goes on, and an entry that is already gone counts as removed.
 *
 * Safety rules, in the order they are applied:
 *
 *   - the root must be a mounted bpfstash (statfs magic) or a directory
 *     with the stash layout: anything else is refused before a single
 *     name is looked at;
 *   - only names of 40 lowercase hex digits are candidates ("we do not
 *     vacuum unknown files"), only directories, and only on the root's
 *     filesystem (st_dev): nothing is followed, nothing crossed;
 *   - everything is relative to directory file descriptors opened with
 *     O_NOFOLLOW, so no path is resolved twice;
 *   - entries of loaded programs are never removed: a size or count limit
 *     that cannot be met without them is reported (the kernel refuses
 *     with EBUSY anyway); the age limit is about programs that are gone;
 *   - with an archive, an entry is removed only after its archive file is
 *     on disk for good (written, read back, fsynced, renamed, directory
 *     fsynced);
 *   - one flock(2) on the root per run: two instances never interleave.
 *
 * On a mounted stash, the entry directory's own times are its metadata
 * (mtime: load, ctime: unload or load, atime: last open of one of its
 * files) and its size is meta.bytes, so scanning opens no file but the
 * meta of entries whose ctime is their mtime: those of loaded programs,
 * and of programs unloaded within the clock's tick of their load (a
 * jiffies clocksource), which only meta's LOADED flag tells apart.  It is
 * opened with O_NOATIME, which the view does not count as an access (the
 * access time is what --age-by=access ages by).  A copy has no such
 * times, so its meta files are read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "gc.h"

#ifndef BPFSTASH_MAGIC
#define BPFSTASH_MAGIC 0x62707374
#endif

struct gc_ent {
	uint64_t key;		/* the age-by time; UINT64_MAX: not aged (loaded) */
	uint64_t load_ns;
	uint64_t bytes;
	bool loaded;
	char name[BPFSTASH_HEX_LEN + 1];
};

struct gc {
	const struct gc_opts *o;
	struct gc_result *r;
	int root_fd;
	dev_t dev;
	bool mounted;
	bool marker_done;
	struct gc_archive *ar;
	struct gc_ent *v;
	size_t n, cap;
};

void gc_checkpoint(void)
{
	static long kill_at = -1, n;

	if (kill_at < 0) {
		const char *s = getenv("BPFSTASH_GC_KILL_AT");

		kill_at = s ? atol(s) : 0;
	}
	if (kill_at > 0 && ++n == kill_at)
		raise(SIGKILL);
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec < 0 ? 0 : (uint64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static void emit(struct gc *g, struct gc_event ev)
{
	ev.dry_run = g->o->dry_run;
	if (g->o->event)
		g->o->event(&ev, g->o->event_ctx);
}

static void fail(struct gc *g, const char *name, const char *what, int err)
{
	uint32_t format = 0;

	g->r->errors++;
	if (!g->r->first_err)
		g->r->first_err = err;
	/* Archiving an entry of a format libbpfstash does not read: which. */
	if (err == -EPROTONOSUPPORT) {
		g->r->other_format++;
		if (bpfstash_entry_version_at(g->root_fd, name, &format))
			format = 0;
	}
	emit(g, (struct gc_event){ .type = GC_EV_ERROR, .name = name, .what = what,
				   .err = err, .format = format });
}

/*
 * The root's "stats" file (mounted stash only): the kernel's own count of
 * the bytes it holds, which blobs shared between entries make different
 * from the sum of the entries' meta.bytes.
 */
int gc_open_file(int dir_fd, const char *name, int flags)
{
	struct stat st;
	int fd;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADMSG;
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

static int read_stats(int root_fd, uint64_t *bytes, uint64_t *max_bytes,
		      uint64_t *max_entries)
{
	char buf[4096], *line, *save = NULL;
	ssize_t n, len = 0;
	int fd, found = 0;

	fd = gc_open_file(root_fd, "stats", 0);
	if (fd < 0)
		return fd;
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32];
		unsigned long long v;

		if (sscanf(line, "%31s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "bytes") && bytes) {
			*bytes = v;
			found++;
		} else if (!strcmp(key, "max_bytes") && max_bytes) {
			*max_bytes = v;
		} else if (!strcmp(key, "max_entries") && max_entries) {
			*max_entries = v;
		}
	}
	return found ? 0 : -EBADMSG;
}

/* Open @name under @dir_fd as a directory on our filesystem, never a link. */
static int open_dir_at(struct gc *g, int dir_fd, const char *name, struct stat *st)
{
	struct stat tmp;
	int fd, err;

	if (!st)
		st = &tmp;
	fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (st->st_dev != g->dev) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

/*
 * An entry's meta, read from the entry directory @efd: of a version we
 * know (-EPROTONOSUPPORT, with *@version, for another), at least the
 * struct we know and as large as it says, naming this entry; its fields
 * in the host's byte order (those the GC reads).
 */
static int read_meta(int efd, const char *name, struct bpfstash_meta *m, uint32_t *version,
		     int flags)
{
	char hex[BPFSTASH_HEX_LEN + 1];
	struct stat st;
	ssize_t n, len = 0;
	char buf[BPFSTASH_MAX_META + 1];
	uint32_t v;
	int fd, err = 0;

	fd = gc_open_file(efd, "meta", flags);
	/* O_NOATIME is the owner's or CAP_FOWNER's: without it, an access. */
	if (fd == -EPERM && flags)
		fd = gc_open_file(efd, "meta", 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EBADMSG;
		goto out;
	}
	while (len < (ssize_t)sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		len += n;
	}
	/*
	 * meta_size and content.version keep their place from format 3 on;
	 * formats 1 and 2 had the version first.
	 */
	if (len < (ssize_t)offsetof(struct bpfstash_meta, content.version) + 4) {
		err = -EBADMSG;
		goto out;
	}
	memcpy(&v, buf, sizeof(v));
	if (le32toh(v) != 1 && le32toh(v) != 2)
		memcpy(&v, buf + offsetof(struct bpfstash_meta, content.version), sizeof(v));
	*version = le32toh(v);
	if (*version != BPFSTASH_VERSION) {
		err = -EPROTONOSUPPORT;
		goto out;
	}
	memcpy(&v, buf, sizeof(v));
	if (len < (ssize_t)sizeof(*m) || le32toh(v) != len) {
		err = -EBADMSG;
		goto out;
	}
	memcpy(m, buf, sizeof(*m));
	m->flags = le32toh(m->flags);
	m->load_time_real = le64toh(m->load_time_real);
	m->unload_time_real = le64toh(m->unload_time_real);
	m->bytes = le64toh(m->bytes);
	m->loader_cgroup_id = le64toh(m->loader_cgroup_id);
	bpfstash_hash_format(m->hash, hex);
	if (strcmp(hex, name))
		err = -EBADMSG;
out:
	close(fd);
	return err;
}

/*
 * A directory stream of its own on the directory @fd (readdir() positions
 * are per open file): NULL with errno set on failure.
 */
static DIR *opendir_at(int fd)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (dfd < 0)
		return NULL;
	d = fdopendir(dfd);
	if (!d) {
		int err = errno;

		close(dfd);
		errno = err;
	}
	return d;
}

/*
 * A copy is recognised by the marker, or by an entry-named directory
 * holding a regular meta file.  Looking stops at the first one.
 */
static int check_layout(struct gc *g)
{
	struct dirent *de;
	struct stat st;
	int found = 0;
	DIR *d;

	if (!fstatat(g->root_fd, GC_MARKER, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
		return 0;
	d = opendir_at(g->root_fd);
	if (!d)
		return -errno;
	while (!found && (de = readdir(d))) {
		int efd;

		if (!bpfstash_name_valid(de->d_name))
			continue;
		efd = open_dir_at(g, g->root_fd, de->d_name, NULL);
		if (efd < 0)
			continue;
		if (!fstatat(efd, "meta", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			found = 1;
		close(efd);
	}
	closedir(d);
	return found ? 0 : -GC_ENOTSTASH;
}

static int open_root(struct gc *g, const char *root)
{
	struct statfs sfs;
	struct stat st;
	int err;

	g->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g->root_fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(g->root_fd, &st) || fstatfs(g->root_fd, &sfs))
		return -errno;
	g->dev = st.st_dev;
	g->mounted = sfs.f_type == BPFSTASH_MAGIC;
	if (g->mounted)
		return 0;
	err = check_layout(g);
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct gc_ent *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int push(struct gc *g, const struct gc_ent *e)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		struct gc_ent *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = *e;
	return 0;
}

static void skip(struct gc *g, const char *name, int err, uint32_t format)
{
	g->r->skipped++;
	if (err == -EPROTONOSUPPORT)
		g->r->other_format++;
	emit(g, (struct gc_event){ .type = GC_EV_SKIP, .name = name, .err = err,
				   .format = format });
}

/*
 * Whether the loader and link meta names are those --loader-comm,
 * --loader-cgroup and --link-target ask for.
 */
static bool loader_matches(const struct gc_opts *o, const struct bpfstash_meta *m)
{
	char target[BPFSTASH_LINK_TARGET_LEN + 1];

	if (o->loader_comm && strncmp(m->loader_comm, o->loader_comm, sizeof(m->loader_comm)))
		return false;
	if (o->loader_cgroup_set && m->loader_cgroup_id != o->loader_cgroup)
		return false;
	if (o->link_target) {
		/* No link, no target: not even "*" matches it. */
		snprintf(target, sizeof(target), "%.*s", BPFSTASH_LINK_TARGET_LEN, m->link_target);
		if (!target[0] || fnmatch(o->link_target, target, 0))
			return false;
	}
	return true;
}

static bool loader_filter(const struct gc_opts *o)
{
	return o->loader_comm || o->loader_cgroup_set || o->link_target;
}

/*
 * One entry-named directory entry: fill @e, or say why it is not an entry
 * (*@format: the version of one of another format), or GC_FILTERED for
 * an entry --loader-comm or --loader-cgroup leave out.
 */
static int scan_one(struct gc *g, const char *name, struct gc_ent *e, uint32_t *format)
{
	struct bpfstash_meta m;
	struct stat st, est;
	uint64_t unload_ns, access_ns;
	int efd, err;

	if (fstatat(g->root_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_dev != g->dev)
		return -EXDEV;

	*e = (struct gc_ent){};
	memcpy(e->name, name, sizeof(e->name));
	access_ns = ts_ns(&st.st_atim);
	if (g->mounted) {
		uint64_t ctime_ns = ts_ns(&st.st_ctim);

		e->load_ns = ts_ns(&st.st_mtim);
		e->loaded = ctime_ns == e->load_ns;
		unload_ns = e->loaded ? 0 : ctime_ns;
		e->bytes = st.st_size;
	}
	/*
	 * A copy's state is in meta; on a mount, a filter needs it, and so
	 * does an entry whose times cannot say whether it is loaded.
	 */
	if (!g->mounted || loader_filter(g->o) || e->loaded) {
		efd = open_dir_at(g, g->root_fd, name, &est);
		if (efd < 0)
			return efd;
		err = -ESTALE;
		if (est.st_ino == st.st_ino)
			err = read_meta(efd, name, &m, format, g->mounted ? O_NOATIME : 0);
		close(efd);
		if (err)
			return err;
		if (!loader_matches(g->o, &m))
			return GC_FILTERED;
	}
	if (g->mounted && e->loaded && !(m.flags & BPFSTASH_META_LOADED)) {
		e->loaded = false;	/* unloaded within a tick of its load */
		unload_ns = ts_ns(&st.st_ctim);
	}
	if (!g->mounted) {
		e->load_ns = m.load_time_real;
		e->loaded = m.flags & BPFSTASH_META_LOADED;
		unload_ns = m.unload_time_real;
		e->bytes = m.bytes;
	}

	switch (g->o->age_by) {
	case GC_AGE_BY_LOAD:
		e->key = e->load_ns;
		break;
	case GC_AGE_BY_UNLOAD:
		e->key = e->loaded ? UINT64_MAX : unload_ns;
		break;
	case GC_AGE_BY_ACCESS:
		e->key = access_ns;
		break;
	}
	return 0;
}

static int scan(struct gc *g)
{
	struct dirent *de;
	struct gc_ent e;
	int err = 0;
	DIR *d;

	d = opendir_at(g->root_fd);
	if (!d)
		return -errno;
	for (errno = 0; (de = readdir(d)); errno = 0) {
		uint32_t format = 0;

		if (!bpfstash_name_valid(de->d_name))
			continue;
		err = scan_one(g, de->d_name, &e, &format);
		if (err == -ENOENT || err == GC_FILTERED) {
			/* gone since readdir, or not one the filter asks for */
			g->r->filtered += err == GC_FILTERED;
			err = 0;
			continue;
		}
		if (err) {
			skip(g, de->d_name, err, format);
			err = 0;
			continue;
		}
		err = push(g, &e);
		if (err)
			break;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	return err;
}

/* Remove every file of the directory @fd (never a subdirectory). */
static int purge_files(struct gc *g, int fd)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir_at(fd);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* unlinkat() without AT_REMOVEDIR fails on a directory: EISDIR. */
		if (unlinkat(fd, de->d_name, 0) && errno != ENOENT) {
			err = -errno;
			break;
		}
		gc_checkpoint();
	}
	closedir(d);
	return err;
}

/* An entry holds files only: anything else is not ours to remove. */
static int only_files(int fd)
{
	struct dirent *de;
	struct stat st;
	int err = 0;
	DIR *d;

	d = opendir_at(fd);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			err = errno == ENOENT ? 0 : -errno;
		else if (S_ISDIR(st.st_mode))
			err = -EISDIR;
	}
	closedir(d);
	return err;
}

/* Finish removing the directory @name of the root, renamed there earlier. */
static int purge_dir(struct gc *g, const char *name)
{
	int fd, err;

	fd = open_dir_at(g, g->root_fd, name, NULL);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	err = purge_files(g, fd);
	close(fd);
	if (err)
		return err;
	if (unlinkat(g->root_fd, name, AT_REMOVEDIR) && errno != ENOENT)
		return -errno;
	gc_checkpoint();
	return 0;
}

static bool is_trash_name(const char *name)
{
	size_t len = strlen(GC_TRASH_PREFIX);

	return !strncmp(name, GC_TRASH_PREFIX, len) && bpfstash_name_valid(name + len);
}

/* Entries of a copy that a killed run had started to remove. */
static void cleanup_copy(struct gc *g)
{
	struct dirent *de;
	DIR *d;

	d = opendir_at(g->root_fd);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int err;

		if (!is_trash_name(de->d_name))
			continue;
		err = purge_dir(g, de->d_name);
		if (err) {
			fail(g, de->d_name, "finish removing", err);
			continue;
		}
		g->r->cleaned++;
		emit(g, (struct gc_event){ .type = GC_EV_CLEANUP, .name = de->d_name });
	}
	closedir(d);
}

static int ensure_marker(struct gc *g)
{
	struct stat st;
	int fd;

	if (g->marker_done)
		return 0;
	if (fstatat(g->root_fd, GC_MARKER, &st, AT_SYMLINK_NOFOLLOW)) {
		fd = openat(g->root_fd, GC_MARKER,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return -errno;
		if (fd >= 0) {
			if (fsync(fd)) {
				close(fd);
				return -errno;
			}
			close(fd);
			if (fsync(g->root_fd))
				return -errno;
			gc_checkpoint();
		}
	}
	g->marker_done = true;
	return 0;
}

/*
 * Remove an entry of a copy: its files, then its directory.  It is first
 * renamed out of the entry namespace, so that no reader (nor the next run)
 * sees half an entry; a run killed after the rename is finished by
 * cleanup_copy().  @efd: the entry directory, opened and checked.
 */
static int remove_copy_entry(struct gc *g, const char *name, int efd, const char **what)
{
	char trash[sizeof(GC_TRASH_PREFIX) + BPFSTASH_HEX_LEN];
	struct stat st, tst;
	int err;

	*what = "check";
	err = only_files(efd);
	if (err)
		return err;
	*what = "mark the copy";
	err = ensure_marker(g);
	if (err)
		return err;
	if (fstat(efd, &st))
		return -errno;
	snprintf(trash, sizeof(trash), GC_TRASH_PREFIX "%s", name);
	*what = "rename";
	if (renameat2(g->root_fd, name, g->root_fd, trash, RENAME_NOREPLACE)) {
		if (errno == ENOENT)
			return 0;	/* already gone: removed */
		if (errno != EEXIST)
			return -errno;
		/* A leftover of the same name: finish it, then go on. */
		err = purge_dir(g, trash);
		if (err)
			return err;
		if (renameat2(g->root_fd, name, g->root_fd, trash, RENAME_NOREPLACE))
			return errno == ENOENT ? 0 : -errno;
	}
	gc_checkpoint();
	/* What we renamed must be what we checked. */
	*what = "remove";
	if (fstatat(g->root_fd, trash, &tst, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (tst.st_ino != st.st_ino || tst.st_dev != st.st_dev)
		return -ESTALE;
	err = purge_files(g, efd);
	if (err)
		return err;
	if (unlinkat(g->root_fd, trash, AT_REMOVEDIR) && errno != ENOENT)
		return -errno;
	gc_checkpoint();
	return 0;
}

static void on_evict(const char *path, uint64_t size, void *ctx)
{
	struct gc *g = ctx;

	g->r->archive_evicted++;
	g->r->archive_evicted_bytes += size;
	emit(g, (struct gc_event){ .type = GC_EV_ARCHIVE_EVICT, .name = path, .bytes = size });
}

/* Archive (if asked) and remove one entry.  0 also when it was already gone. */
static int remove_entry(struct gc *g, const struct gc_ent *e, enum gc_reason reason,
			const char **what)
{
	char path[PATH_MAX];
	uint64_t size = 0;
	int efd = -1, err = 0;

	if (g->o->dry_run) {
		if (g->ar)
			emit(g, (struct gc_event){ .type = GC_EV_ARCHIVE, .name = e->name,
						   .reason = reason, .bytes = e->bytes });
		return 0;
	}
	if (g->ar || !g->mounted) {
		*what = "open";
		efd = open_dir_at(g, g->root_fd, e->name, NULL);
		if (efd == -ENOENT)
			return 0;
		if (efd < 0)
			return efd;
	}
	if (g->ar) {
		*what = "archive";
		err = gc_archive_entry(g->ar, g->root_fd, efd, e->name, e->load_ns, path,
				       sizeof(path), &size);
		if (err == -ENOENT) {
			struct stat st;

			/* Gone meanwhile: nothing left to lose.  Else a file is missing. */
			if (fstatat(g->root_fd, e->name, &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT) {
				err = 0;
				goto out;
			}
		}
		if (err)
			goto out;
		g->r->archived++;
		g->r->archived_bytes += size;
		emit(g, (struct gc_event){ .type = GC_EV_ARCHIVE, .name = e->name, .path = path,
					   .reason = reason, .bytes = size });
	}
	if (g->mounted) {
		*what = "rmdir";
		if (unlinkat(g->root_fd, e->name, AT_REMOVEDIR) && errno != ENOENT)
			err = -errno;
		else
			gc_checkpoint();
	} else {
		err = remove_copy_entry(g, e->name, efd, what);
	}
out:
	if (efd >= 0)
		close(efd);
	return err;
}

static uint64_t now_ns(const struct gc_opts *o)
{
	struct timespec ts;

	if (o->now_ns)
		return o->now_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

/* A limit as a number: percentages are of the mount's own limit. */
static int resolve(const struct gc_limit *l, bool mounted, uint64_t of, uint64_t *out)
{
	if (!l->percent) {
		*out = l->value;
		return 0;
	}
	if (!mounted || !of)
		return -EOPNOTSUPP;
	*out = of / 100 * l->value + of % 100 * l->value / 100;
	if (!*out)
		*out = 1;
	return 0;
}

/*
 * The kernel's byte count once the frees of removed entries are done: the
 * store releases an entry's blobs an RCU grace period after its rmdir, so
 * the count settles shortly after.  Wait until it stops changing (at most
 * about a second); -ETIMEDOUT with the last value read if it does not.
 */
static int settled_bytes(struct gc *g, uint64_t *bytes)
{
	const struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	uint64_t prev = UINT64_MAX, cur;
	int err, same = 0, i;

	for (i = 0; i < 50; i++) {
		err = read_stats(g->root_fd, &cur, NULL, NULL);
		if (err)
			return err;
		*bytes = cur;
		same = cur == prev ? same + 1 : 0;
		if (same == 2)
			return 0;
		prev = cur;
		nanosleep(&tick, NULL);
	}
	return -ETIMEDOUT;
}

static void expire(struct gc *g)
{
	const struct gc_opts *o = g->o;
	struct gc_result *r = g->r;
	uint64_t cutoff = 0, left = r->entries, bytes = r->bytes;
	bool recount = g->mounted && !o->dry_run && r->max_bytes;
	size_t i;

	if (o->max_age_ns)
		cutoff = r->now_ns > o->max_age_ns ? r->now_ns - o->max_age_ns : 0;
	qsort(g->v, g->n, sizeof(*g->v), entry_cmp);

	for (i = 0; i < g->n; i++) {
		const struct gc_ent *e = &g->v[i];
		bool old = o->max_age_ns && e->key < cutoff;
		bool big = r->max_bytes && bytes > r->max_bytes;
		bool many = r->max_entries && left > r->max_entries;
		enum gc_reason reason;
		const char *what = "remove";
		int err;

		/*
		 * Oldest first: once every limit holds, the rest are younger.
		 * Bytes are counted as meta.bytes, as in a dry run.  On a
		 * mount, blobs shared between entries (one BTF for all the
		 * programs of an object) are freed with their last user, not
		 * with the entry whose meta counts them: so ask the kernel
		 * before stopping, and go on from here if it says otherwise.
		 */
		if (!old && !big && !many) {
			if (!recount || settled_bytes(g, &bytes) == -EBADMSG ||
			    bytes <= r->max_bytes)
				break;
			big = true;
		}
		reason = old ? GC_REASON_AGE : big ? GC_REASON_SIZE : GC_REASON_ENTRIES;
		if (e->loaded) {
			r->kept_live++;
			emit(g, (struct gc_event){ .type = GC_EV_KEEP_LIVE, .name = e->name,
						   .reason = reason, .bytes = e->bytes,
						   .time_ns = e->key });
			continue;
		}
		err = remove_entry(g, e, reason, &what);
		if (err == -EBUSY) {
			/* Loaded again since the scan (same content, same address). */
			r->kept_live++;
			emit(g, (struct gc_event){ .type = GC_EV_KEEP_LIVE, .name = e->name,
						   .reason = reason, .bytes = e->bytes,
						   .time_ns = e->key });
			continue;
		}
		if (err) {
			fail(g, e->name, what, err);
			continue;
		}
		r->removed++;
		r->removed_bytes += e->bytes;
		left--;
		bytes = bytes > e->bytes ? bytes - e->bytes : 0;
		emit(g, (struct gc_event){ .type = GC_EV_REMOVE, .name = e->name, .reason = reason,
					   .bytes = e->bytes, .time_ns = e->key });
	}
	/* Ran out of entries: what the kernel says, if it says. */
	if (recount && i == g->n)
		(void)settled_bytes(g, &bytes);
	r->entries_left = left;
	r->bytes_left = bytes;
	r->limits_met = !(r->max_bytes && bytes > r->max_bytes) &&
			!(r->max_entries && left > r->max_entries);
}

int gc_run(const struct gc_opts *o, struct gc_result *r)
{
	struct gc g = { .o = o, .r = r, .root_fd = -1 };
	uint64_t stat_bytes = 0, stat_max_bytes = 0, stat_max_entries = 0;
	size_t i;
	int err;

	*r = (struct gc_result){};
	r->failed_step = "root";
	err = open_root(&g, o->root ? o->root : BPFSTASH_DEFAULT_ROOT);
	if (err)
		goto out;
	r->mounted = g.mounted;
	r->now_ns = now_ns(o);

	/* A dry run only reads: it may share the root with other dry runs. */
	r->failed_step = "lock";
	if (flock(g.root_fd, (o->dry_run ? LOCK_SH : LOCK_EX) | LOCK_NB)) {
		err = -errno;
		goto out;
	}
	r->failed_step = "stats";
	if (g.mounted) {
		err = read_stats(g.root_fd, &stat_bytes, &stat_max_bytes, &stat_max_entries);
		if (err)
			goto out;
	}
	r->failed_step = "limits";
	err = resolve(&o->max_bytes, g.mounted, stat_max_bytes, &r->max_bytes);
	if (!err)
		err = resolve(&o->max_entries, g.mounted, stat_max_entries, &r->max_entries);
	if (err)
		goto out;

	r->failed_step = "archive";
	if (o->archive_dir) {
		err = gc_archive_open(o->archive_dir, o->dry_run, o->archive_max_bytes,
				      o->archive_max_set, on_evict, &g, &g.ar);
		if (err)
			goto out;
		r->cleaned += gc_archive_cleaned(g.ar);
	}
	if (!g.mounted && !o->dry_run)
		cleanup_copy(&g);

	r->failed_step = "scan";
	err = scan(&g);
	if (err)
		goto out;
	r->entries = g.n;
	for (i = 0; i < g.n; i++) {
		r->live += g.v[i].loaded;
		if (!g.mounted)
			r->bytes += g.v[i].bytes;
	}
	if (g.mounted)
		r->bytes = stat_bytes;

	expire(&g);
	r->failed_step = NULL;
	if (g.ar) {
		r->archive_bytes = gc_archive_bytes(g.ar);
		r->archive_max_bytes = gc_archive_max_bytes(g.ar);
	}
out:
	gc_archive_close(g.ar);
	free(g.v);
	if (g.root_fd >= 0)
		close(g.root_fd);	/* and the lock with it */
	return err;
}
