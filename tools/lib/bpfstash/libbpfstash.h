/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbpfstash: read, verify, resolve and export bpfstash entries.
 *
 * A stash is a directory with one subdirectory per entry, named by the
 * entry's content hash in hex: the mounted bpfstash filesystem, or a copy
 * of it on any filesystem (cp -r, tar, rsync).  Every file is treated as
 * untrusted input: every size, count and offset is checked before use, and
 * an entry whose content does not hash to its name is reported, never
 * used.  The layouts are in <linux/bpfstash.h>.
 *
 * Conventions (as libbpf): functions return 0 or a negative errno, or a
 * pointer and set errno; they never print and never exit.
 */
#ifndef __LIBBPFSTASH_H
#define __LIBBPFSTASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/bpfstash.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBBPFSTASH_MAJOR_VERSION 0
#define LIBBPFSTASH_MINOR_VERSION 2

#define BPFSTASH_DEFAULT_ROOT "/sys/fs/bpfstash"
#define BPFSTASH_HEX_LEN (BPFSTASH_HASH_SIZE * 2)

/* Sanity caps on untrusted input, above anything the kernel produces. */
#define BPFSTASH_MAX_JITED	(64u << 20)
#define BPFSTASH_MAX_LINES	(1u << 22)
#define BPFSTASH_MAX_BTF	(16u << 20)	/* BTF_MAX_SIZE */
#define BPFSTASH_MAX_FUNC_INFO	(1u << 20)

struct bpfstash;
struct bpfstash_entry;

/* Names of the entry files, indexed like the kernel's blobs. */
enum bpfstash_blob {
	BPFSTASH_JITED,
	BPFSTASH_LINE_INFO,
	BPFSTASH_JITED_LINE_INFO,
	BPFSTASH_FUNC_INFO,
	BPFSTASH_BTF,
	BPFSTASH_NR_BLOB_FILES,
};

const char *bpfstash_blob_file(enum bpfstash_blob blob);

/* Open the stash at @root (NULL: /sys/fs/bpfstash). */
int bpfstash_open(const char *root, struct bpfstash **stash);
void bpfstash_close(struct bpfstash *stash);
const char *bpfstash_root(const struct bpfstash *stash);
int bpfstash_dirfd(const struct bpfstash *stash);
/* Whether @stash is a mounted bpfstash filesystem (statfs magic). */
bool bpfstash_is_mounted(const struct bpfstash *stash);

/*
 * Whether the running kernel has bpfstash (a "bpfstash" line in
 * /proc/filesystems): 1 or 0, or a negative errno if that cannot be read.
 */
int bpfstash_kernel_supported(void);

/* Names: 40 lowercase hex digits. */
bool bpfstash_name_valid(const char *name);
int bpfstash_hash_parse(const char *hex, uint8_t hash[BPFSTASH_HASH_SIZE]);
void bpfstash_hash_format(const uint8_t hash[BPFSTASH_HASH_SIZE],
			  char hex[BPFSTASH_HEX_LEN + 1]);

/*
 * The names of the entries, sorted; *names is a NULL-terminated array to
 * free with bpfstash_names_free().  Other files in the root are ignored.
 */
int bpfstash_list(struct bpfstash *stash, char ***names, size_t *count);
void bpfstash_names_free(char **names);

/* Load flags. */
#define BPFSTASH_LOAD_META	(1u << 0)	/* only meta (fast: for ls, gc) */

/*
 * Load and check the entry @name.  Errors: -ENOENT (no such entry or a
 * file is missing), -EBADMSG (a file is truncated, oversized or
 * inconsistent with meta), -EPROTONOSUPPORT (unknown version), -ENOMEM,
 * or whatever open/read returned (-EPERM on a mounted stash without the
 * right to read it).  The hash is not checked: see bpfstash_entry_verify().
 */
int bpfstash_entry_load(struct bpfstash *stash, const char *name, unsigned int flags,
			struct bpfstash_entry **entry);
/* The same from a directory fd (for tests and fuzzing: a plain directory). */
int bpfstash_entry_load_at(int dirfd, const char *name, unsigned int flags,
			   struct bpfstash_entry **entry);
void bpfstash_entry_free(struct bpfstash_entry *entry);

const char *bpfstash_entry_name(const struct bpfstash_entry *entry);
const struct bpfstash_meta *bpfstash_entry_meta(const struct bpfstash_entry *entry);
uint32_t bpfstash_entry_nr_funcs(const struct bpfstash_entry *entry);
const struct bpfstash_func *bpfstash_entry_func(const struct bpfstash_entry *entry,
						uint32_t i);
const char *bpfstash_entry_func_name(const struct bpfstash_entry *entry, uint32_t i);
const void *bpfstash_entry_blob(const struct bpfstash_entry *entry,
				enum bpfstash_blob blob, size_t *size);
bool bpfstash_entry_loaded(const struct bpfstash_entry *entry);

/*
 * Recompute the content hash (see <linux/bpfstash.h>) and compare it with
 * the name: 0 if it matches, -EBADMSG if not, -EINVAL for a META-only load.
 */
int bpfstash_entry_verify(const struct bpfstash_entry *entry);
/* The content hash of a loaded entry, whatever its name. */
int bpfstash_entry_compute_hash(const struct bpfstash_entry *entry,
				uint8_t hash[BPFSTASH_HASH_SIZE]);

/* Where an address of an entry's code comes from. */
struct bpfstash_location {
	uint64_t addr;		/* the address looked up */
	uint32_t func;		/* index in funcs */
	uint64_t func_addr;	/* start of that function */
	uint32_t func_off;	/* addr - func_addr */
	const char *func_name;	/* kallsyms name (bpf_prog_<tag>_<name>) */
	const char *btf_name;	/* the function's name in BTF, or NULL */
	/*
	 * The line info record in effect at addr (the last one at or before
	 * it, within the function), or has_line == false.
	 */
	bool has_line;
	uint32_t line_idx;
	uint64_t line_addr;	/* where that record starts */
	const char *file;	/* from BTF, or "?" */
	uint32_t line;
	uint32_t col;
	const char *source;	/* the source line, from BTF, or "" */
};

/*
 * Resolve an absolute address inside the entry's functions.
 * -ENOENT if it is outside all of them (one past the end included).
 */
int bpfstash_entry_resolve(const struct bpfstash_entry *entry, uint64_t addr,
			   struct bpfstash_location *loc);
/* Resolve an offset into the entry's jited file (hash+offset form). */
int bpfstash_entry_resolve_offset(const struct bpfstash_entry *entry, uint64_t offset,
				  struct bpfstash_location *loc);

/* The name of function @i in BTF (through func_info), or NULL. */
const char *bpfstash_entry_func_btf_name(const struct bpfstash_entry *entry, uint32_t i);

/*
 * The line info records in address order (by function, then offset; at one
 * address, in record order): bpfstash_entry_line() fills @loc for the @i-th
 * as if its address had been resolved, with that very record.  -ENOENT
 * past the last.
 */
uint32_t bpfstash_entry_nr_lines(const struct bpfstash_entry *entry);
int bpfstash_entry_line(const struct bpfstash_entry *entry, uint32_t i,
			struct bpfstash_location *loc);

/*
 * Find the entry whose code holds @addr: a loaded program's if there is
 * one, else the most recently loaded.  This guesses when the address was
 * reused: bpfstash_resolve_at() says so instead.  Returns the entry (free it) and
 * fills @loc, or -ENOENT.
 */
int bpfstash_resolve(struct bpfstash *stash, uint64_t addr,
		     struct bpfstash_entry **entry, struct bpfstash_location *loc);

/*
 * Time-aware resolution.  Addresses are reused once a program is unloaded,
 * so an address (or a kallsyms name and offset) can be held by several
 * entries; each entry's meta says when its program was loaded and unloaded
 * (unload time 0: still loaded, open-ended).  A time picks the entry whose
 * program held the address then; without one, an address held by several
 * entries is ambiguous, and reported as such, never decided silently.
 */
enum bpfstash_clock {
	BPFSTASH_CLOCK_NONE,		/* no time given */
	BPFSTASH_CLOCK_BOOTTIME,	/* ns since boot: meta.load_time, unload_time */
	BPFSTASH_CLOCK_REALTIME,	/* ns since the epoch: meta.*_time_real */
};

/*
 * Options of bpfstash_resolve_at() and bpfstash_resolve_symbol(), as
 * libbpf's: sz is sizeof(struct bpfstash_resolve_opts) of the caller's
 * header, so the struct can grow.  NULL: no time.
 */
struct bpfstash_resolve_opts {
	size_t sz;
	enum bpfstash_clock clock;
	uint64_t time_ns;
	/*
	 * The time is anywhere in [time_ns, time_ns + span_ns]: the precision
	 * it was printed with (dmesg truncates to microseconds: 999 ns).
	 */
	uint64_t span_ns;
};

/* An entry that holds the address looked up (or the symbol). */
struct bpfstash_candidate {
	char hash[BPFSTASH_HEX_LEN + 1];
	char prog_name[BPFSTASH_NAME_LEN];
	uint32_t prog_id;
	bool loaded;
	bool at_time;		/* its lifetime covers the time (true without one) */
	uint64_t load_time;	/* meta's four times */
	uint64_t unload_time;
	uint64_t load_time_real;
	uint64_t unload_time_real;
	uint64_t addr;		/* the address in this entry */
	uint32_t func;		/* the function holding it */
};

struct bpfstash_candidates;
size_t bpfstash_candidates_count(const struct bpfstash_candidates *cands);
/* The @i-th candidate, by load time; NULL past the last. */
const struct bpfstash_candidate *bpfstash_candidates_get(const struct bpfstash_candidates *cands,
							 size_t i);
void bpfstash_candidates_free(struct bpfstash_candidates *cands);

/*
 * Find the entry whose program held @addr at the time in @opts (NULL or
 * BPFSTASH_CLOCK_NONE: at any time).  Entries that cannot be loaded whole
 * are no answer.  Returns 0 with *@entry (free it) and @loc filled;
 * -EADDRNOTAVAIL if several entries qualify; -ENOENT if none does (with a
 * time: perhaps some hold it at other times); -EINVAL for bad @opts; or
 * the error of listing the stash.  @cands (may be NULL) receives, whatever
 * the result, every entry that holds the address, with at_time set for
 * those that qualified (free it with bpfstash_candidates_free()).
 */
int bpfstash_resolve_at(struct bpfstash *stash, uint64_t addr,
			const struct bpfstash_resolve_opts *opts, struct bpfstash_entry **entry,
			struct bpfstash_location *loc, struct bpfstash_candidates **cands);

/*
 * The same for a kallsyms name and offset, as stack traces print them
 * (bpf_prog_<tag>_<name>+@off/@size): the entries with a function of that
 * name, of @size bytes unless @size is 0, holding @off.
 */
int bpfstash_resolve_symbol(struct bpfstash *stash, const char *symbol, uint64_t off,
			    uint64_t size, const struct bpfstash_resolve_opts *opts,
			    struct bpfstash_entry **entry, struct bpfstash_location *loc,
			    struct bpfstash_candidates **cands);

/*
 * The text files the kernel generates in an entry directory, rendered from
 * the entry's binary files with the same bytes: "info", "functions" and
 * "lines" (see Documentation/filesystems/bpfstash.rst).  For copies of a
 * stash that lack them, and to check the kernel's rendering against an
 * independent one.  "info" shows the state in meta as it was read.
 * *@text is a NUL-terminated malloc()ed string of *@len bytes (free it).
 * -ENOENT for another @file, -EINVAL for all but "info" of a META-only
 * load, -ENOMEM.  bpfstash_view_name(i) is the name of the i-th such file,
 * NULL past the last.
 */
int bpfstash_entry_render(const struct bpfstash_entry *entry, const char *file, char **text,
			  size_t *len);
const char *bpfstash_view_name(unsigned int i);

/*
 * Write the entry as an ELF file to @fd: a .text section per function at
 * its load address, a symbol per function, an NT_GNU_BUILD_ID note with
 * the hash, and .debug_line (DWARF 4) from the line info, so that
 * objdump -dl, addr2line, perf and debuginfod work on it unchanged.
 * @fd must be a regular file (or a memfd) open for writing: it is truncated
 * and written from offset 0 (-EINVAL for a pipe).  The same entry always
 * gives the same bytes.  The hash is not checked
 * here (see bpfstash_entry_verify()): the note holds the entry's name.
 */
int bpfstash_entry_export_elf(const struct bpfstash_entry *entry, int fd);

/*
 * Export into a build-id tree under @dir (the layout of /usr/lib/debug, where
 * gdb, elfutils and perf look for a build-id, and which debuginfod -F can
 * serve): @dir/.build-id/<2 hex>/<38 hex>.debug, mode 0644,
 * written to a temporary file beside it, fsynced and renamed over any
 * older copy; the directories are created as needed.  @path (may be NULL)
 * receives the file's path: -ENAMETOOLONG if @path_size is too small.
 */
int bpfstash_entry_export_build_id(const struct bpfstash_entry *entry, const char *dir,
				   char *path, size_t path_size);

#ifdef __cplusplus
}
#endif

#endif /* __LIBBPFSTASH_H */
