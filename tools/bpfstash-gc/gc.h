/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash-gc: the policy engine.  Expire stash entries by age, size and
 * count, oldest first, never those of loaded programs, optionally archiving
 * each entry before it goes.
 *
 * Like tools/lib: every function returns 0 or a negative errno and never
 * prints; what happens to each entry is reported through a callback, and
 * only main.c talks to the user.
 */
#ifndef BPFSTASH_GC_H
#define BPFSTASH_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libbpfstash.h"

#define NSEC_PER_SEC 1000000000ULL

/*
 * A copy of a stash (cp -r, tar, rsync) that bpfstash-gc may work on shows
 * at least one entry directory with a meta file, or holds this empty file.
 * bpfstash-gc writes it into a copy before it removes the copy's first
 * entry, so that a copy it emptied is still recognised as one.
 */
#define GC_MARKER ".bpfstash-copy"

/*
 * Names bpfstash-gc gives things it is in the middle of, so that a run
 * killed at any point is finished by the next: an entry of a copy being
 * removed is first renamed to GC_TRASH_PREFIX<name> (readers never see a
 * half-removed entry); an archive is written as .<name>.tar.zst.tmp.
 */
#define GC_TRASH_PREFIX ".gc-"
#define GC_ARCHIVE_SUFFIX ".tar.zst"
#define GC_ARCHIVE_TMP_SUFFIX ".tar.zst.tmp"

enum gc_age_by {
	GC_AGE_BY_LOAD,		/* meta.load_time_real; the directory's mtime */
	GC_AGE_BY_UNLOAD,	/* meta.unload_time_real; the directory's ctime */
	GC_AGE_BY_ACCESS,	/* the last open of a file of the entry; atime */
};

/* A limit on the stash: 0 disables it; a percentage is of the mount's limit. */
struct gc_limit {
	uint64_t value;
	bool percent;		/* value is 1..100 % of size= or max_entries= */
};

struct gc_event;
typedef void (*gc_event_fn)(const struct gc_event *ev, void *ctx);

struct gc_opts {
	const char *root;		/* NULL: BPFSTASH_DEFAULT_ROOT */
	uint64_t max_age_ns;		/* 0: no age limit */
	struct gc_limit max_bytes;
	struct gc_limit max_entries;
	enum gc_age_by age_by;
	const char *archive_dir;	/* NULL: no archive */
	uint64_t archive_max_bytes;	/* 0: no quota */
	bool archive_max_set;		/* else the default: 10% of its filesystem, at most 4G */
	bool dry_run;
	const char *loader_comm;	/* only entries whose loader had this comm */
	uint64_t loader_cgroup;		/* ... or was in this cgroup (v2 id) */
	bool loader_cgroup_set;
	const char *link_target;	/* ... or was attached by a link to this (glob) */
	uint64_t now_ns;		/* 0: the real time (CLOCK_REALTIME) */
	gc_event_fn event;		/* may be NULL */
	void *event_ctx;
};

enum gc_event_type {
	GC_EV_REMOVE,		/* removed (or would be, in a dry run) */
	GC_EV_ARCHIVE,		/* archived (or would be) before its removal */
	GC_EV_KEEP_LIVE,	/* a limit wanted it, but its program is loaded */
	GC_EV_ERROR,		/* could not archive or remove it; kept */
	GC_EV_SKIP,		/* entry-named, but not an entry: left alone */
	GC_EV_ARCHIVE_EVICT,	/* an old archive removed for the archive quota */
	GC_EV_CLEANUP,		/* a leftover of an interrupted run finished */
};

/* Which limit made an entry go. */
enum gc_reason {
	GC_REASON_NONE,
	GC_REASON_AGE,
	GC_REASON_SIZE,
	GC_REASON_ENTRIES,
};

struct gc_event {
	enum gc_event_type type;
	bool dry_run;
	const char *name;	/* entry name, or a path for archives/leftovers */
	enum gc_reason reason;
	uint64_t bytes;		/* the entry's meta.bytes, or the archive's size */
	uint64_t time_ns;	/* its age-by timestamp, ns since the epoch */
	const char *path;	/* GC_EV_ARCHIVE: the archive file */
	int err;		/* GC_EV_ERROR, GC_EV_SKIP: why */
	uint32_t format;	/* for -EPROTONOSUPPORT: the entry's format version */
	const char *what;	/* GC_EV_ERROR: the step that failed */
};

struct gc_result {
	bool mounted;			/* the root is a mounted bpfstash */
	uint64_t now_ns;
	uint64_t max_bytes, max_entries;	/* the limits in effect (resolved %) */
	uint64_t entries, bytes;	/* before */
	uint64_t live;			/* entries of loaded programs */
	uint64_t removed, removed_bytes;
	uint64_t archived, archived_bytes;	/* archive files written, their size */
	uint64_t archive_evicted, archive_evicted_bytes;
	uint64_t kept_live;		/* entries a limit wanted, kept: loaded */
	uint64_t skipped;		/* entry-named, not entries */
	uint64_t other_format;		/* of them, entries of a format we do not read */
	uint64_t filtered;		/* entries the loader filter leaves out */
	uint64_t cleaned;		/* leftovers of interrupted runs */
	uint64_t errors;
	int first_err;			/* the first error, remembered (tmpfiles) */
	uint64_t entries_left, bytes_left;	/* after */
	bool limits_met;		/* size and count limits hold afterwards */
	uint64_t archive_bytes, archive_max_bytes;	/* the archive, after */
	const char *failed_step;	/* gc_run() failed: at which step */
};

/* scan_one(): an entry the loader filter leaves out (not an error). */
#define GC_FILTERED	1

/* Errors of gc_run() beyond errno values of the system. */
#define GC_ENOTSTASH	EMEDIUMTYPE	/* the root is neither a mount nor a copy */

/*
 * One pass over the stash: open and check the root, take the lock, finish
 * what an interrupted run left, expire.  Returns 0 when the pass ran (the
 * result says how it went, errors included), or a negative errno when it
 * could not start: -GC_ENOTSTASH, -ENOENT, -ENOTDIR, -ELOOP (a bad root),
 * -EWOULDBLOCK (another instance holds the lock), -EACCES, -EPERM, ...
 */
int gc_run(const struct gc_opts *opts, struct gc_result *res);

/*
 * Open @name under @dir_fd for reading, | @flags, only if it is a regular
 * file: a FIFO or a device under a stash copy's names would block the
 * open or act on it.  An fd, or -errno (-EBADMSG: not a regular file).
 */
int gc_open_file(int dir_fd, const char *name, int flags);

/* Parsers for the command line (units.c): 0 or -EINVAL / -ERANGE. */
int gc_parse_duration(const char *s, uint64_t *ns);
int gc_parse_size(const char *s, struct gc_limit *lim);
int gc_parse_count(const char *s, struct gc_limit *lim);
int gc_parse_epoch(const char *s, uint64_t *ns);
/* "1.5M", "12h" for people; buf of at least 32 bytes. */
const char *gc_format_size(uint64_t bytes, char *buf, size_t size);
const char *gc_format_duration(uint64_t ns, char *buf, size_t size);

/* Archive (archive.c). */
struct gc_archive;
typedef void (*gc_evict_fn)(const char *path, uint64_t size, void *ctx);
/*
 * Open (and create) the archive directory @dir and lock it; remove the
 * temporary files of interrupted runs and, when it is over its quota, its
 * oldest archives (@evict is called for each).  @max_bytes 0 is no quota;
 * !@max_set: 10% of the directory's filesystem, at most 4 GiB.  A dry run
 * creates and removes nothing.
 */
int gc_archive_open(const char *dir, bool dry_run, uint64_t max_bytes, bool max_set,
		    gc_evict_fn evict, void *ctx, struct gc_archive **ar);
void gc_archive_close(struct gc_archive *ar);
uint64_t gc_archive_max_bytes(const struct gc_archive *ar);
uint64_t gc_archive_bytes(const struct gc_archive *ar);
/* Leftover temporary files removed when the archive was opened. */
uint64_t gc_archive_cleaned(const struct gc_archive *ar);
/*
 * Archive the entry @name of the stash @root_fd, whose directory @entry_fd
 * was opened without following symlinks and checked: verify its hash,
 * write <dir>/<2 hex>/<name>.tar.zst (the entry's binary files under
 * <name>/, and <name>.debug, its ELF export) to a temporary file, read it
 * back and compare, fsync, rename into place, fsync the directory.  Then
 * keep the archive under its quota by removing the oldest other archives.
 * -EDQUOT if this archive alone is over the quota (it is removed again);
 * -EBADMSG if the entry does not verify.
 */
int gc_archive_entry(struct gc_archive *ar, int root_fd, int entry_fd, const char *name,
		     uint64_t load_ns, char *path, size_t path_size, uint64_t *size);

/*
 * Testing aid: BPFSTASH_GC_KILL_AT=N in the environment makes the Nth
 * gc_checkpoint() (one after each step that changes something) SIGKILL
 * the process, so that tests can stop a run at every point, in order.
 */
void gc_checkpoint(void);

#endif
