/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __LIBBPFSTASH_INTERNAL_H
#define __LIBBPFSTASH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libbpfstash.h"

struct btf;

/*
 * -EBADMSG, with the reason bpfstash_error_detail() gives this thread
 * until the next one: which check failed, and on what.
 */
#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif
void bst_set_error_detail(const char *fmt, ...) __printf(1, 2);
#define bst_bad(...) (bst_set_error_detail(__VA_ARGS__), -EBADMSG)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

struct bpfstash {
	int dirfd;
	char *root;
	bool mounted;
};

struct bpfstash_entry {
	char name[BPFSTASH_HEX_LEN + 1];
	bool meta_only;
	struct bpfstash_meta meta;
	uint8_t *funcs;
	size_t funcs_size;
	void *blobs[BPFSTASH_NR_BLOB_FILES];
	size_t sizes[BPFSTASH_NR_BLOB_FILES];
	/* The optional "calls" file of an image: NULL and 0 without one. */
	struct bpfstash_call *calls;
	uint32_t nr_calls;
	/* The optional "pokes" file: NULL and 0 without one. */
	struct bpfstash_poke *pokes;
	uint32_t nr_pokes;
	/* Derived at load: line records ordered by (func, off), and the BTF. */
	uint32_t *line_order;
	struct btf *btf;
};

/*
 * PERF_RECORD_MMAP3 and perf_event_attr::mmap3, as the bpfstash kernel's
 * include/uapi/linux/perf_event.h declares them, repeated so that the
 * library builds against any distribution's headers.  They are ABI: the
 * number is the last of the kernel's record types (perf's own start at
 * 64), the bit the last of the attr's bit-field word, both away from
 * those mainline assigns in sequence (22 and the bits after sigtrap are
 * the deferred callchain's there).  The bit is set by its name in this
 * mirror of the word, never by a shift: the order in which bit-fields
 * fill a word is the ABI's, and differs with the byte order.
 * tests/abi/perf_abi.c checks both against the kernel's and mainline's.
 */
#define BST_PERF_RECORD_MMAP3	BPFSTASH_PERF_RECORD_MMAP3
#define BST_ATTR_FLAGS_OFF	40	/* the u64 of bit-fields, after read_format */

struct bst_attr_flags {
	uint64_t	named		: 38,	/* disabled ... sigtrap, in 6.12 */
			__reserved_1	: 25,
			mmap3		:  1;
};

struct perf_event_attr;
void bst_attr_set_mmap3(struct perf_event_attr *attr, bool on);
bool bst_attr_mmap3(const struct perf_event_attr *attr);

/* The largest funcs file: every record, and room for the names. */
#define BST_FUNCS_MAX (BPFSTASH_MAX_FUNCS * (sizeof(struct bpfstash_func) + 512))

/* Byte order (endian.c): the files are little-endian, the library's view the host's. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BST_HOST_BE	true
#else
#define BST_HOST_BE	false
#endif
void bst_swab_content(struct bpfstash_content *c);
void bst_swab_meta(struct bpfstash_meta *m);
void bst_swab_funcs(void *funcs, size_t size, uint32_t nr);
void bst_swab_u32s(void *p, size_t size);
void bst_swab_calls(struct bpfstash_call *c, uint32_t nr);
/* The content hash as a host of the other byte order computes it (tests). */
int bst_entry_compute_hash(const struct bpfstash_entry *e, bool host_be,
			   uint8_t hash[BPFSTASH_HASH_SIZE]);

/* SHA-256 of @len bytes at @data (NULL with 0: the empty string): 0 or -EIO. */
int bst_sha256(const void *data, size_t len, uint8_t out[BPFSTASH_DIGEST_SIZE]);

int bst_read_file_at(int dirfd, const char *name, const char *file, size_t max,
		     void **buf, size_t *size);
int bst_entry_index(struct bpfstash_entry *e);

/* The largest kernel index file read: the kernel makes none larger. */
#define BST_INDEX_MAX	((size_t)INT32_MAX)

/*
 * The kernel's index file (struct bpfstash_index_header), checked by
 * bst_index_file_check(): every record lies in the file, the ranges are
 * by entry as the header says, and every name ends in the file.  Records
 * are read at the sizes the file gives, which may be larger than ours.
 */
struct bst_index_file {
	uint32_t flags;
	uint64_t generation;
	uint32_t nr_entries, entry_size;
	uint32_t nr_ranges, range_size;
	uint32_t names_size;
	const uint8_t *entries, *ranges;
	const char *names;
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];
};

int bst_index_file_check(const void *buf, size_t size, struct bst_index_file *f);
/* The root's index file of the mounted stash @dirfd, read whole from one open. */
int bst_read_index_file(int dirfd, void **buf, size_t *size);

static inline const struct bpfstash_index_entry *
bst_index_file_entry(const struct bst_index_file *f, uint32_t i)
{
	return (const void *)(f->entries + (size_t)i * f->entry_size);
}

static inline const struct bpfstash_index_range *
bst_index_file_range(const struct bst_index_file *f, uint32_t i)
{
	return (const void *)(f->ranges + (size_t)i * f->range_size);
}

/* @n bytes of @p as lowercase hex into @out, NUL-terminated. */
static inline void bst_hex(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* An entry's files in memory: NULL for a missing file. */
struct bst_entry_files {
	const void *meta;
	size_t meta_size;
	const void *funcs;
	size_t funcs_size;
	const void *blobs[BPFSTASH_NR_BLOB_FILES];
	size_t sizes[BPFSTASH_NR_BLOB_FILES];
	const void *calls;	/* NULL: no calls file, as an empty one */
	size_t calls_size;
	const void *pokes;	/* NULL: no pokes file, as an empty one */
	size_t pokes_size;
};

/*
 * Load an entry from files in memory, with the checks of
 * bpfstash_entry_load_at(); @name NULL takes the name from meta.
 */
int bst_entry_load_mem(const char *name, const struct bst_entry_files *files,
		       unsigned int flags, struct bpfstash_entry **entry);

#endif
