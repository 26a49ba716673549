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

#define LIBBPFSTASH_MAJOR_VERSION 1
#define LIBBPFSTASH_MINOR_VERSION 3

/*
 * The version of the library running, which can be later than the headers
 * a program was built with (LIBBPFSTASH_1.1): a caller checks the minor
 * version before it calls what a later one added.  The string is
 * "v<major>.<minor>".
 */
uint32_t libbpfstash_major_version(void);
uint32_t libbpfstash_minor_version(void);
const char *libbpfstash_version_string(void);

#define BPFSTASH_DEFAULT_ROOT "/sys/fs/bpfstash"
#define BPFSTASH_HEX_LEN (BPFSTASH_HASH_SIZE * 2)

/*
 * Sanity caps on untrusted input, well above anything a kernel produces
 * today (6.12's verifier allows 256 functions, BPF_MAX_SUBPROGS): they bound
 * what a crafted copy can make the library allocate, and are not part of
 * the format.
 */
#define BPFSTASH_MAX_FUNCS	4096u
#define BPFSTASH_MAX_META	(64u << 10)
#define BPFSTASH_MAX_POKES	(1u << 20)
#define BPFSTASH_MAX_JITED	(64u << 20)
#define BPFSTASH_MAX_LINES	(1u << 22)
#define BPFSTASH_MAX_BTF	(16u << 20)	/* BTF_MAX_SIZE */
#define BPFSTASH_MAX_FUNC_INFO	(1u << 20)
#define BPFSTASH_MAX_CALLS	4096u	/* records in an image's calls file */

struct bpfstash;
struct bpfstash_entry;

/*
 * Names of the entry files, indexed like the kernel's blobs.  An image's
 * optional "calls" file is not one of them (it is not in every entry, and
 * BPFSTASH_NR_BLOB_FILES is part of the ABI): see bpfstash_entry_calls().
 */
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

/*
 * Which check of an entry failed, and on what ("funcs: function 3: length
 * 0 at 0x..."), the last time one did in this thread, or "" if none did
 * (LIBBPFSTASH_1.2): right after a call returned -EBADMSG, why it did.  A
 * call that succeeds may have skipped a corrupt entry, and said why here.
 */
const char *bpfstash_error_detail(void);

/*
 * Load flags.  BPFSTASH_LOAD_META reads meta, and the calls file of an
 * image (content.prog_type 0) so that its "info" can be rendered; a
 * program's entry is not checked for a stray calls file then.
 */
#define BPFSTASH_LOAD_META	(1u << 0)	/* only meta (fast: for ls, gc) */

/*
 * Load and check the entry @name.  Errors: -ENOENT (no such entry or a
 * file is missing), -EBADMSG (a file is truncated, oversized or
 * inconsistent with meta, or is not a regular file), -EPROTONOSUPPORT (a
 * format version this library does not read: bpfstash_entry_version()
 * says which), -ENOMEM, or whatever open/read returned (-EPERM on a
 * mounted stash without the right to read it).  The hash is not checked:
 * see bpfstash_entry_verify().
 *
 * Every multi-byte field of an entry's files is little-endian; the
 * library hands them over in the host's byte order (struct bpfstash_meta,
 * bpfstash_func, bpfstash_call, bpfstash_poke, and the line and func info
 * records), whatever machine made the entry.  A meta larger than this
 * library's struct bpfstash_meta (a later kernel's, with more state) is
 * read up to what the library knows.
 */
int bpfstash_entry_load(struct bpfstash *stash, const char *name, unsigned int flags,
			struct bpfstash_entry **entry);
/* The same from a directory fd (for tests and fuzzing: a plain directory). */
int bpfstash_entry_load_at(int dirfd, const char *name, unsigned int flags,
			   struct bpfstash_entry **entry);
void bpfstash_entry_free(struct bpfstash_entry *entry);

/*
 * Format versions (LIBBPFSTASH_1.0).  bpfstash_format_version() is the
 * version this library reads (BPFSTASH_VERSION when it was built).
 * bpfstash_entry_version() reads the version of the entry @name from its
 * meta, whatever it is (the two fields at the start of meta keep their
 * place in every version): 0 and *@version, -EBADMSG if meta is too short
 * to hold it, or the error of reading it.  For the message a reader gives
 * when a load fails with -EPROTONOSUPPORT: "format N, this reader knows M".
 */
uint32_t bpfstash_format_version(void);
int bpfstash_entry_version(struct bpfstash *stash, const char *name, uint32_t *version);
int bpfstash_entry_version_at(int dirfd, const char *name, uint32_t *version);

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
 * Images (LIBBPFSTASH_0.4): BPF text that is not a program (a BPF
 * trampoline, a struct_ops trampoline, the XDP dispatcher) has an entry
 * with content.image_kind its enum bpfstash_image_kind, one function, no
 * line info, func info or BTF, and a "calls" file: the programs it calls.
 * The file is optional (missing and empty are the same: no calls); a load
 * refuses it (-EBADMSG) in a program's entry, when its size is not a
 * multiple of sizeof(struct bpfstash_call) or above BPFSTASH_MAX_CALLS
 * records, or when a record has a non-zero __reserved or a name without a
 * NUL.
 *
 * bpfstash_entry_calls() returns the records (NULL and *@nr 0 without any).
 * bpfstash_image_kind_name() and bpfstash_call_kind_name() name a kind
 * ("trampoline", "struct_ops", "dispatcher"; "fentry", "fexit", "fmod_ret",
 * "struct_ops", "dispatch") as the kernel's "info" does, or return NULL for
 * a kind this library does not know (the kernel prints its number).
 */
const struct bpfstash_call *bpfstash_entry_calls(const struct bpfstash_entry *entry,
						 uint32_t *nr);
const char *bpfstash_image_kind_name(uint32_t kind);
const char *bpfstash_call_kind_name(uint32_t kind);

/*
 * Poke sites (LIBBPFSTASH_1.0): the ranges of an entry's code that other
 * paths rewrite while the program lives, which the jited file holds as the
 * JIT emitted them (see <linux/bpfstash.h>): where a trampoline attaches
 * at a function's start (its funcs record's entry_poke_off and _len), and
 * a direct tail call's two sites (the "pokes" file).  The file is optional
 * (missing and empty are the same); a load refuses it (-EBADMSG) when its
 * size is not content.nr_pokes records or a range is outside its function.
 * bpfstash_entry_pokes() returns the records (NULL and *@nr 0 without
 * any); bpfstash_poke_kind_name() names a kind ("tail_call",
 * "tail_call_bypass") or returns NULL.
 */
const struct bpfstash_poke *bpfstash_entry_pokes(const struct bpfstash_entry *entry,
						 uint32_t *nr);
const char *bpfstash_poke_kind_name(uint32_t kind);

/*
 * Boot ids (meta.boot_id, LIBBPFSTASH_1.0), as /proc/sys/kernel/random/boot_id
 * shows them: 36 characters, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" in
 * lowercase hex.  bpfstash_boot_id_parse() takes that form (and 32 hex
 * digits without dashes): 0 or -EINVAL.  bpfstash_boot_id_current() reads
 * the running kernel's: 0 or -errno.
 */
#define BPFSTASH_BOOT_ID_LEN 36
void bpfstash_boot_id_format(const uint8_t id[BPFSTASH_BOOT_ID_SIZE],
			     char str[BPFSTASH_BOOT_ID_LEN + 1]);
int bpfstash_boot_id_parse(const char *str, uint8_t id[BPFSTASH_BOOT_ID_SIZE]);
int bpfstash_boot_id_current(uint8_t id[BPFSTASH_BOOT_ID_SIZE]);

/*
 * The name of an ELF machine (content.machine) as uname -m says it
 * ("x86_64", "aarch64", ...), or NULL for one this library does not know.
 */
const char *bpfstash_machine_name(uint32_t machine);

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
 * struct bpfstash_location keeps the layout 1.0 gave it, for the calls that
 * take it.  struct bpfstash_loc (LIBBPFSTASH_1.2) holds the same and can
 * grow: the caller sets @sz to its sizeof(struct bpfstash_loc); the
 * library writes @sz bytes at most, zero past the fields it knows, and
 * refuses (-EINVAL) a @sz that does not reach @source.
 */
struct bpfstash_loc {
	size_t sz;
	uint64_t addr;
	uint32_t func;
	uint64_t func_addr;
	uint32_t func_off;
	const char *func_name;
	const char *btf_name;
	bool has_line;
	uint32_t line_idx;
	uint64_t line_addr;
	const char *file;
	uint32_t line;
	uint32_t col;
	const char *source;
};

/* bpfstash_entry_lookup(): @addr is an offset into the entry's jited file. */
#define BPFSTASH_LOOKUP_OFFSET	(1u << 0)

/*
 * bpfstash_entry_resolve() (with BPFSTASH_LOOKUP_OFFSET,
 * bpfstash_entry_resolve_offset()) into a struct bpfstash_loc: 0, -ENOENT,
 * or -EINVAL for an unknown flag or a @loc->sz too small.
 * (LIBBPFSTASH_1.2)
 */
int bpfstash_entry_lookup(const struct bpfstash_entry *entry, uint64_t addr, unsigned int flags,
			  struct bpfstash_loc *loc);

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
	/*
	 * LIBBPFSTASH_1.0: only entries made in the boot with this id
	 * (BPFSTASH_BOOT_ID_SIZE bytes, meta.boot_id), or NULL: any boot.
	 * Copies of stashes from several boots hold entries whose boot-time
	 * clocks overlap; without a boot, a time can then be held by entries of
	 * two boots, which is ambiguous, never decided.
	 */
	const uint8_t *boot_id;
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
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];	/* LIBBPFSTASH_1.0: meta.boot_id */
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

/* bpfstash_resolve_at() into a struct bpfstash_loc (LIBBPFSTASH_1.2). */
int bpfstash_lookup_at(struct bpfstash *stash, uint64_t addr,
		       const struct bpfstash_resolve_opts *opts, struct bpfstash_entry **entry,
		       struct bpfstash_loc *loc, struct bpfstash_candidates **cands);

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
 * A per-run index (LIBBPFSTASH_1.2): every entry's functions, by address
 * and by kallsyms name, so that a run of lookups (decode of a trace,
 * resolve of many addresses) reads the stash once rather than once per
 * lookup, as bpfstash_resolve_at() does.  From a mounted stash whose
 * kernel has the root's "index" file, it is one read of that file;
 * otherwise (a copy of a stash, an older kernel, a file it cannot use)
 * each entry's meta and funcs files.  A lookup loads only the entries
 * that hold the address whole, and takes their times as their meta says
 * them then; but an entry that was unloaded when the index was read, and
 * not loaded at the time asked, is a candidate as the index has it,
 * without loading it (the JIT gives one address to many programs in turn:
 * at 100 000 entries, thousands).  Entries stored or deleted since the
 * index was read are seen
 * after bpfstash_index_refresh(), which reads the stash again (of a
 * mounted stash, only if its generation moved).  The index keeps @stash,
 * which must outlive it.  One thread at a time.
 */
struct bpfstash_index;
int bpfstash_index_open(struct bpfstash *stash, struct bpfstash_index **idx);
int bpfstash_index_refresh(struct bpfstash_index *idx);
void bpfstash_index_free(struct bpfstash_index *idx);
/* The entries listed, and the function ranges of those that could be read. */
size_t bpfstash_index_nr_entries(const struct bpfstash_index *idx);
size_t bpfstash_index_nr_ranges(const struct bpfstash_index *idx);
/* bpfstash_lookup_at() and bpfstash_resolve_symbol(), on the index. */
int bpfstash_index_resolve_at(struct bpfstash_index *idx, uint64_t addr,
			      const struct bpfstash_resolve_opts *opts,
			      struct bpfstash_entry **entry, struct bpfstash_loc *loc,
			      struct bpfstash_candidates **cands);
int bpfstash_index_resolve_symbol(struct bpfstash_index *idx, const char *symbol, uint64_t off,
				  uint64_t size, const struct bpfstash_resolve_opts *opts,
				  struct bpfstash_entry **entry, struct bpfstash_loc *loc,
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

/*
 * One function of an entry on its own (LIBBPFSTASH_1.3), for tools that
 * take each function for a module of its own, as perf takes a file in its
 * build-id cache at a function's address for a kernel module's.
 *
 * bpfstash_entry_func_build_id() gives function @func's build-id, which is
 * part of the format: a tool outside this library recomputes it as the
 * first BPFSTASH_HASH_SIZE (20) bytes of the SHA-256 of the 40 bytes
 *
 *	"bpfstash-func-v1"	16 bytes of ASCII, without a NUL
 *	meta.hash		the entry's hash, which names it: BPFSTASH_HASH_SIZE bytes
 *	func			its index in funcs, a u32, little-endian (4 bytes)
 *
 * It depends on nothing else, so a META-only load gives it too.  0, -EINVAL
 * for a NULL @entry or @func not below content.nr_funcs, or -EIO if the
 * digest cannot be computed.
 *
 * bpfstash_entry_export_func_elf() writes function @func alone as
 * bpfstash_entry_export_elf() writes the whole entry: the same ELF (the
 * entry's machine, ET_EXEC, the same layout), with one .text section and
 * one PT_LOAD at the function's load address holding its JITed bytes, one
 * STT_FUNC symbol (its kallsyms name), an NT_GNU_BUILD_ID note with its
 * build-id (not the entry's hash), and DWARF for it alone: its line
 * sequence, the files its lines name, and a compile unit with its one
 * subprogram and its one range, at absolute addresses.  The same function
 * of the same entry always gives the same bytes.  Errors as
 * bpfstash_entry_export_elf(), and -EINVAL for @func out of range.
 */
int bpfstash_entry_func_build_id(const struct bpfstash_entry *entry, uint32_t func,
				 uint8_t build_id[BPFSTASH_HASH_SIZE]);
int bpfstash_entry_export_func_elf(const struct bpfstash_entry *entry, uint32_t func, int fd);

/*
 * Agents (LIBBPFSTASH_0.3): for a long-running profiler that resolves
 * samples as they come.  An agent opens one perf ring per CPU for
 * PERF_RECORD_MMAP3 (each function of each program loaded: range, hash,
 * stashed or refused) and PERF_RECORD_BPF_EVENT (unloads), keeps an index
 * of address ranges with their load and unload times, and resolves
 * (address, time) without reading anything: a bisection over the ranges
 * (and one over the loads at each start near a reused address).  When a
 * ring's lost count (PERF_FORMAT_LOST) goes up, it recovers from the
 * stash itself: every entry holds its functions and both times, so every
 * stashed program is indexed again and every unload it missed is learnt
 * (from the kernel's index file in one read, where the stash is mounted
 * and the kernel has it; else from each entry's meta and funcs).
 * Programs the stash refused (full) and whose records were lost stay
 * unknown: the stash has nothing to recover them from.
 *
 * Images (trampolines, dispatchers, struct_ops) are indexed as programs
 * of id 0 with one function, each on its own.  The kernel sends no
 * PERF_RECORD_BPF_EVENT when an image goes.  With
 * BPFSTASH_AGENT_IMAGE_UNLOADS the agent learns a trampoline's or
 * struct_ops image's unload from its PERF_RECORD_KSYMBOL unregister (start
 * and name), stashed or refused.  Otherwise, and for a replaced dispatcher
 * version (the dispatcher keeps its symbol from version to version), an
 * image's unload comes only from the stash (the scan at open, recovery),
 * and a refused image's never.
 *
 * Times are CLOCK_BOOTTIME nanoseconds, the clock of meta.load_time: open
 * the sampling events with use_clockid = 1 and clockid = CLOCK_BOOTTIME
 * so that sample times compare with them.
 */
struct perf_event_attr;
struct perf_event_header;
struct bpfstash_agent;

/*
 * The type of PERF_RECORD_MMAP3, for agents with rings of their own that
 * build against headers without it.  A kernel's <linux/perf_event.h> with
 * bpfstash has the same number, and perf_event_attr::mmap3; with other
 * headers, bpfstash_agent_attr() sets the bit.
 */
#define BPFSTASH_PERF_RECORD_MMAP3	63

/* One function of a program, as MMAP3 (or the stash) gave it. */
struct bpfstash_agent_func {
	uint32_t index;		/* in the program: bpf_prog_info::jited_ksyms order */
	uint32_t len;
	uint64_t addr;
	const char *name;	/* kallsyms name: bpf_prog_<tag>_<name> */
};

enum bpfstash_agent_source {
	BPFSTASH_AGENT_FROM_RECORD,	/* its PERF_RECORD_MMAP3 */
	BPFSTASH_AGENT_FROM_SCAN,	/* the stash, at open (BPFSTASH_AGENT_SCAN) */
	BPFSTASH_AGENT_FROM_RECOVERY,	/* the stash, after lost records */
};

/*
 * A program the agent tracks.  Valid until bpfstash_agent_close().  The
 * library allocates it: fields are only ever added at its end.
 */
struct bpfstash_agent_prog {
	uint32_t id;			/* bpf_prog_info::id; 0: an image */
	char name[BPFSTASH_NAME_LEN];
	uint8_t tag[BPFSTASH_TAG_SIZE];
	bool stashed;			/* hash names an entry; else refused */
	uint32_t flags;			/* PERF_RECORD_MMAP3_* */
	char hash[BPFSTASH_HEX_LEN + 1];	/* "" if refused */
	uint64_t load_time;		/* CLOCK_BOOTTIME ns */
	uint64_t unload_time;		/* 0 while loaded */
	enum bpfstash_agent_source source;
	uint32_t nr_funcs;
	const struct bpfstash_agent_func *funcs;	/* by index */
	/*
	 * LIBBPFSTASH_1.0: who loaded it, from its entry's meta (see
	 * BPFSTASH_AGENT_ORIGIN): has_origin false until then, and for a
	 * program the stash refused; loader_tgid 0 for one stored when the
	 * store started.
	 */
	bool has_origin;
	uint32_t loader_tgid;		/* in the initial pid namespace */
	uint64_t loader_cgroup_id;	/* cgroup v2 id */
	char loader_comm[BPFSTASH_COMM_LEN];
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];
	/*
	 * LIBBPFSTASH_1.0: what its last BPF link attached it to (struct
	 * bpfstash_meta's link_type, link_id, link_target), from the same
	 * meta.  A link comes after the load, so the meta is read again at
	 * the unload: a BPFSTASH_AGENT_UNLOAD event carries the link the
	 * program had; a load, none unless the stash already had one (a scan
	 * or a recovery).  0 and "" without.
	 */
	uint32_t link_type;		/* enum bpf_link_type */
	uint32_t link_id;
	char link_target[BPFSTASH_LINK_TARGET_LEN];
};

enum bpfstash_agent_event_type {
	BPFSTASH_AGENT_LOAD,
	BPFSTASH_AGENT_UNLOAD,
	BPFSTASH_AGENT_LOST,		/* the kernel dropped @lost records */
	BPFSTASH_AGENT_RECOVERED,	/* the stash was read again after a loss */
};

struct bpfstash_agent_event {
	enum bpfstash_agent_event_type type;
	uint64_t time;				/* CLOCK_BOOTTIME ns */
	const struct bpfstash_agent_prog *prog;	/* LOAD, UNLOAD */
	bool recovered;				/* UNLOAD learnt from the stash */
	uint64_t lost;				/* LOST, RECOVERED: records lost */
	uint32_t loads, unloads;		/* RECOVERED: what the stash gave back */
};

typedef void (*bpfstash_agent_event_fn)(const struct bpfstash_agent_event *event, void *ctx);

/* bpfstash_agent_opts.flags */
#define BPFSTASH_AGENT_NO_RINGS	(1u << 0)	/* records come from bpfstash_agent_feed() */
#define BPFSTASH_AGENT_SCAN	(1u << 1)	/* index the stash's entries at open */
/*
 * Also open the rings for PERF_RECORD_KSYMBOL, from which the agent learns
 * images' unloads (see above).  Off by default: every program then adds a
 * KSYMBOL record per function at load and at unload, about twice the
 * bytes in the rings, and more losses in a storm.  Agents with their own
 * rings set attr.ksymbol for the same; bpfstash_agent_feed() takes the
 * records either way.
 */
#define BPFSTASH_AGENT_IMAGE_UNLOADS	(1u << 2)
/*
 * LIBBPFSTASH_1.0: before its load event, read each stashed program's meta
 * for who loaded it (the prog's loader fields), and again before its
 * unload event for the link made since (its link fields): two small reads
 * per program.  Programs indexed from the stash (the scan, recovery) have
 * them whatever the flags.
 */
#define BPFSTASH_AGENT_ORIGIN		(1u << 3)

/*
 * As libbpf's opts: @sz is the caller's sizeof, so that the struct can
 * grow; a caller built against a later header may pass a larger one
 * whose fields this library does not know only if they are zero.  Unknown
 * flags, or non-zero unknown fields, are -EINVAL.
 */
struct bpfstash_agent_opts {
	size_t sz;			/* sizeof(struct bpfstash_agent_opts) */
	const char *root;		/* the stash (NULL: /sys/fs/bpfstash) */
	size_t ring_pages;		/* per CPU, a power of two; 0: 64 */
	unsigned int flags;
	bpfstash_agent_event_fn event_fn;	/* may be NULL */
	void *ctx;
	/*
	 * LIBBPFSTASH_1.1: the memory bound.  A program unloaded longer than
	 * @forget_ns before the newest record applied is forgotten (0: 600 s);
	 * at most @max_entries entries are kept for line lookups, the least
	 * recently used goes (0: 256).  ~0: never.
	 */
	uint64_t forget_ns;
	size_t max_entries;
	/*
	 * LIBBPFSTASH_1.2: the sample_type of the events whose records
	 * bpfstash_agent_feed() gets, opened with sample_id_all: it says
	 * where in each record's sample_id its time is.  It must hold
	 * PERF_SAMPLE_TIME (-EINVAL otherwise); 0 is PERF_SAMPLE_TIME alone,
	 * what bpfstash_agent_attr() asks for.
	 */
	uint64_t feed_sample_type;
};

/*
 * Open the rings (perf_event_open() needs what perf_allow_kernel() asks:
 * CAP_PERFMON, or perf_event_paranoid <= 1) and, with BPFSTASH_AGENT_SCAN,
 * index what the stash holds.  0 or -errno: -EOPNOTSUPP when the kernel
 * has no PERF_RECORD_MMAP3 (it opens the same events without the bit).
 */
int bpfstash_agent_open(const struct bpfstash_agent_opts *opts, struct bpfstash_agent **agent);
void bpfstash_agent_close(struct bpfstash_agent *agent);
/* An fd that polls readable when a ring has records (epoll); -1 with NO_RINGS. */
int bpfstash_agent_fd(const struct bpfstash_agent *agent);
/*
 * Wait up to @timeout_ms (0: not at all, -1: forever) for records, read
 * every ring, apply in time order (calling event_fn) the records older
 * than the start of the previous poll, and, if records were lost, recover
 * from the stash.  The rings are read one after another, so a record can
 * be older than one read before it from another ring: a record is applied
 * once no older one can still come (perf's rule for ordered events), by
 * the next poll or the one after.  While records are held back, a poll
 * waits 10 ms at most.  Returns the number of records read, or -errno.
 */
int bpfstash_agent_poll(struct bpfstash_agent *agent, int timeout_ms);
/*
 * Read every ring and apply every record read, held back or not: for the
 * end of a session, as perf flushes its ordered events when it stops.  A
 * record older than the last one applied that a ring gives afterwards is
 * applied out of order.  Returns the number of records read, or -errno.
 * (LIBBPFSTASH_1.1)
 */
int bpfstash_agent_flush(struct bpfstash_agent *agent);
/*
 * For agents with rings of their own, opened with bpfstash_agent_attr()'s
 * attributes (sample_id_all with PERF_SAMPLE_TIME only, CLOCK_BOOTTIME):
 * queue one record.  Feed what your rings hold right before each
 * bpfstash_agent_poll(), which applies it with the agent's own records,
 * once it is older than the start of the previous poll (records timed
 * before the agent was opened: by the next poll).
 */
int bpfstash_agent_feed(struct bpfstash_agent *agent, const struct perf_event_header *record);
/*
 * A record's sample_id holds what its event's sample_type asks for, in
 * this order, 8 bytes each: TID (pid and tid), TIME, ID, STREAM_ID, CPU
 * (cpu and a reserved u32), IDENTIFIER.  bpfstash_agent_feed() takes the
 * time where opts.feed_sample_type puts it (LIBBPFSTASH_1.2; before, from
 * the record's last 8 bytes whatever the event asked for); a record too
 * short for its sample_id is -EINVAL, and PERF_RECORD_SAMPLE, which has
 * no sample_id, is not queued.
 */
void bpfstash_agent_attr(struct perf_event_attr *attr);
/*
 * The same into a struct perf_event_attr of @size bytes, the caller's
 * (LIBBPFSTASH_1.1): bpfstash_agent_attr() writes the library's
 * sizeof(struct perf_event_attr), which overruns a caller built against
 * older headers or laid out in another language.  Writes @size bytes,
 * zero beyond what the library knows, and sets attr->size to @size.
 * 0, or -EINVAL when @size is smaller than the fields it sets need
 * (PERF_ATTR_SIZE_VER3, 96 bytes: clockid).
 */
int bpfstash_agent_attr_sized(struct perf_event_attr *attr, size_t size);
/* Read the whole stash again now (what a loss triggers).  0 or -errno. */
int bpfstash_agent_recover(struct bpfstash_agent *agent);

/* Where an address is: the program, its function, the offset in it. */
struct bpfstash_agent_sym {
	const struct bpfstash_agent_prog *prog;
	const struct bpfstash_agent_func *func;
	uint64_t offset;
};

/*
 * Threads (LIBBPFSTASH_1.1): one thread polls (bpfstash_agent_poll(),
 * _flush(), _feed(), _recover()); any number of others look up at the
 * same time (bpfstash_agent_lookup(), which copies what it finds into the
 * caller's struct, and bpfstash_agent_get_stats_sized()).  The pointers
 * bpfstash_agent_resolve() and _resolve_line() hand out point into the
 * agent's index: they stay valid until the next poll, and only while no
 * poll runs; a program forgotten or an entry evicted takes its strings
 * with it.  Use them from the polling thread (the event callback
 * included), or use bpfstash_agent_lookup().
 *
 * The program that held @addr at @time (CLOCK_BOOTTIME ns; 0: now, a
 * loaded program's): 0 and @sym filled, or -ENOENT.  At a reused address
 * the time decides; a program is held from its load time, included, to
 * its unload time, excluded.
 */
int bpfstash_agent_resolve(struct bpfstash_agent *agent, uint64_t addr, uint64_t time,
			   struct bpfstash_agent_sym *sym);
/*
 * File, line, column and source of @sym: the program's entry is read from
 * the stash on first use and kept.  *@entry (may be NULL) receives it, owned
 * by the agent.  -ENODATA for a program the stash refused, or the error
 * of reading its entry.
 */
int bpfstash_agent_resolve_line(struct bpfstash_agent *agent, const struct bpfstash_agent_sym *sym,
				const struct bpfstash_entry **entry, struct bpfstash_location *loc);

/*
 * What a lookup found, copied (LIBBPFSTASH_1.1): the caller sets @sz to
 * its sizeof, and gets as much as it holds; a later library with a
 * larger struct zeroes nothing past @sz.  Strings are cut to their arrays.
 */
struct bpfstash_agent_hit {
	size_t sz;
	uint32_t prog_id;		/* 0: an image */
	uint32_t func_index;
	uint64_t func_addr;
	uint64_t offset;		/* in the function */
	uint32_t func_len;
	bool stashed;
	uint64_t load_time, unload_time;	/* CLOCK_BOOTTIME ns; unload 0: loaded */
	char hash[BPFSTASH_HEX_LEN + 1];	/* "" if refused */
	char prog_name[BPFSTASH_NAME_LEN];
	char func_name[128];		/* kallsyms name */
	/* With BPFSTASH_AGENT_LOOKUP_LINE (and @sz covering them): */
	int line_err;			/* 0, -ENODATA (refused), or reading the entry */
	bool has_line;
	uint32_t line, col;
	char file[256];
	char source[256];
};

#define BPFSTASH_AGENT_LOOKUP_LINE	(1u << 0)	/* file, line, column and source */

/*
 * bpfstash_agent_resolve() (and with BPFSTASH_AGENT_LOOKUP_LINE,
 * _resolve_line()) into @hit, safe beside a polling thread: 0, -ENOENT,
 * or -EINVAL for an unknown flag or a @hit->sz too small (the line's
 * fields need the whole struct of this header).
 */
int bpfstash_agent_lookup(struct bpfstash_agent *agent, uint64_t addr, uint64_t time,
			  unsigned int flags, struct bpfstash_agent_hit *hit);

struct bpfstash_agent_stats {
	uint64_t records;		/* MMAP3 and unload records applied */
	uint64_t lost;			/* records the kernel dropped */
	uint64_t programs;		/* tracked, loaded or not */
	uint64_t ranges;
	uint64_t unknown_unloads;	/* unloads of programs never seen */
	uint64_t bad_records;		/* too short to parse */
	uint64_t recoveries;
	uint64_t recovered_loads;
	uint64_t recovered_unloads;
	/* LIBBPFSTASH_1.1, through bpfstash_agent_get_stats_sized() only: */
	uint64_t forgotten;		/* programs forgotten (opts.forget_ns) */
	uint64_t entries_cached;	/* entries kept for line lookups now */
	uint64_t entries_evicted;	/* over opts.max_entries */
};

/* The fields up to recovered_unloads (LIBBPFSTASH_0.3's struct). */
void bpfstash_agent_get_stats(const struct bpfstash_agent *agent,
			      struct bpfstash_agent_stats *stats);
/*
 * All of them, into a struct of @size bytes, the caller's sizeof
 * (LIBBPFSTASH_1.1): zero past what this library knows.  0, or -EINVAL if
 * @size does not reach forgotten.
 */
int bpfstash_agent_get_stats_sized(struct bpfstash_agent *agent, struct bpfstash_agent_stats *stats,
				   size_t size);

#ifdef __cplusplus
}
#endif

#endif /* __LIBBPFSTASH_H */
