/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash: the kernel store of JITed BPF programs for profilers.
 *
 * kernel/bpf/stash.c owns the entries (the store); fs/bpfstash/ shows them
 * (the view), as pstore's filesystem shows pstore's records.  The rest of
 * the kernel only calls the two hooks at the end of this file.  They are
 * void on purpose: storing a program is best effort and can never change
 * the result of the load it observes.
 */
#ifndef _LINUX_BPFSTASH_H
#define _LINUX_BPFSTASH_H

#include <linux/bpf.h>
#include <linux/jump_label.h>
#include <linux/llist.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <uapi/linux/bpfstash.h>

/* The blobs of an entry, in the order the content hash covers them. */
enum bpfstash_blob_id {
	BPFSTASH_BLOB_JITED,
	BPFSTASH_BLOB_LINE_INFO,
	BPFSTASH_BLOB_JITED_LINE_INFO,
	BPFSTASH_BLOB_FUNC_INFO,
	BPFSTASH_BLOB_BTF,
	BPFSTASH_NR_BLOBS,
};

/**
 * struct bpfstash_blob - immutable bytes, stored once per content
 * @node: in the store's blob table, keyed by @digest
 * @seen_node: in the store's table of blobs found by their bytes, keyed by
 *	@seen_key, if @seen
 * @seen_key: xxh64 of a sample of the bytes, its low 32 bits; 0 for bytes
 *	never seen again (a JITed image)
 * @ref: one per entry using the blob
 * @size: bytes in the blob; what it holds in memory follows from it
 *	(bpfstash_blob_cost() in kernel/bpf/stash.c)
 * @nr_segs: 0 if @data holds the bytes, else the number of pieces in @seg
 * @listed: in the table (under the store's lock); a snapshot's new blobs
 *	are not, until the snapshot is stored
 * @seen: in the table by bytes (under the store's lock)
 * @digest: SHA-256 of the bytes
 * @data: the bytes, for a blob that fits its allocation well
 * @seg: the pieces of any other blob, each a kmalloc() of exactly its size:
 *	pieces of the largest kmalloc cache (8 KiB with 4 KiB pages), then
 *	the tail in power-of-two pieces down to 256 bytes as it needs them,
 *	then the rest (bpfstash_blob_seg_len() in kernel/bpf/stash.c).  A
 *	blob one contiguous allocation held would waste up to a page, or half
 *	a kmalloc bucket; in pieces it wastes less than 64 bytes plus a
 *	pointer per piece.  Use bpfstash_blob_at() to read either kind.
 *
 * Lookups are lockless: the struct is freed after a grace period
 * (kvfree_rcu_mightsleep(), without an rcu_head: 16 bytes less per blob),
 * the pieces as soon as the last reference is gone, since only a holder of
 * a reference reads them.
 */
struct bpfstash_blob {
	struct rhash_head node;
	struct rhash_head seen_node;
	u32 seen_key;
	refcount_t ref;
	u32 size;
	u16 nr_segs;
	bool listed;
	bool seen;
	u8 digest[BPFSTASH_DIGEST_SIZE];
	union {
		DECLARE_FLEX_ARRAY(u8, data);
		DECLARE_FLEX_ARRAY(void *, seg);
	};
};

/* bpfstash_entry::flags */
enum {
	BPFSTASH_ENTRY_LIVE,	/* the program is still loaded */
	BPFSTASH_ENTRY_STORED,	/* in the store (not deleted) */
};

/**
 * struct bpfstash_entry - what a profiler needs of one loaded program
 * @node: in the store's entry table, keyed by @meta.hash
 * @ref: the store's, the live program's, and one per inode showing it
 * @index: position in listing order (load order)
 * @flags: BPFSTASH_ENTRY_* bits
 * @last_access: ns since the epoch when a file of the entry was last opened
 * @meta: content (immutable) and state: the ids and times of the current
 *	or last load, rewritten when the program is loaded again (same
 *	content) and when it is unloaded, under the store's state seqlock;
 *	read them with bpfstash_entry_state()
 * @funcs_segs: 0 if @funcs holds the funcs file, else its number of pieces
 * @funcs: the funcs file, meta.content.funcs_size bytes: struct
 *	bpfstash_func[meta.content.nr_funcs], then the names.  Held as a blob
 *	holds its bytes: here, or in the pieces whose addresses are here when
 *	one allocation would waste more (a kmalloc() bucket, up to half of
 *	it).  Use bpfstash_funcs_at() to read it.
 * @blobs: the blobs, NULL when empty
 * @rcu: frees the entry after a grace period...
 * @free_node: ...in process context, from a list (bpfstash_entry_free_work())
 */
struct bpfstash_entry {
	struct rhash_head node;
	refcount_t ref;
	u32 index;
	unsigned long flags;
	u64 last_access;
	struct bpfstash_meta meta;
	u32 funcs_segs;
	void *funcs;
	struct bpfstash_blob *blobs[BPFSTASH_NR_BLOBS];
	struct rcu_head rcu;
	struct llist_node free_node;
};

/* Limits and counters, as the "stats" file shows them. */
struct bpfstash_stats {
	u64 bytes;		/* held by stored entries and their blobs */
	u64 max_bytes;		/* size= */
	u64 peak_bytes;		/* high-water mark of @bytes since the start */
	u32 entries;		/* stored entries */
	u32 max_entries;	/* max_entries= */
	u32 live_entries;	/* entries whose program is loaded */
	u32 blobs;		/* distinct blobs */
	u64 considered;		/* programs seen: stored + refused_* */
	u64 stored;
	u64 preexisting;	/* of @stored, loaded before the start */
	u64 reloaded;		/* of @stored, identical to an unloaded entry */
	u64 refused_full;
	u64 refused_nomem;
	u64 skipped_hardened;	/* bpf_jit_harden hides them from kallsyms */
	u64 skipped_unlisted;	/* no kallsyms entry: no CAP_BPF, not JITed */
	u64 deleted;		/* entries removed with rmdir */
	u64 blob_dedup;		/* blobs found already stored (BTF aside) */
	u64 btf_hash_cached;	/* BTF blobs found by their bytes, not hashed */
	u64 hashed_bytes;	/* bytes hashed on the load path, names included */
};

/* What the bpfstash= boot parameter and the control file say. */
struct bpfstash_control {
	int on;			/* 1 "on", 0 "off", -1 neither */
	u64 max_bytes;		/* size=, or 0 */
	u32 max_entries;	/* max_entries=, or 0 */
	const char *bad;	/* on error: the word refused... */
	const char *why;	/* ...and why */
};

/* Defaults for size= and max_entries=. */
#define BPFSTASH_DEFAULT_MAX_BYTES	(64ULL << 20)
#define BPFSTASH_DEFAULT_MAX_ENTRIES	65536U

#ifdef CONFIG_BPFSTASH

DECLARE_STATIC_KEY_FALSE(bpfstash_active);

void __bpfstash_prog_load(struct bpf_prog *prog);
void __bpfstash_prog_unload(struct bpf_prog *prog);

/* The store, for fs/bpfstash/.  Entries are returned with a reference. */
int bpfstash_store_start(u64 max_bytes, u32 max_entries);
bool bpfstash_store_stop(void);
bool bpfstash_store_running(void);
int bpfstash_parse_control(char *s, struct bpfstash_control *c);
void bpfstash_store_set_limits(u64 max_bytes, u32 max_entries);
void bpfstash_store_drain(void);
void bpfstash_store_get_stats(struct bpfstash_stats *stats);
struct bpfstash_entry *bpfstash_entry_lookup(const u8 *hash);
struct bpfstash_entry *bpfstash_entry_next(unsigned long *index);
int bpfstash_entry_delete(const u8 *hash);
void bpfstash_entry_put(struct bpfstash_entry *e);

static inline void bpfstash_entry_get(struct bpfstash_entry *e)
{
	refcount_inc(&e->ref);
}

static inline bool bpfstash_entry_live(const struct bpfstash_entry *e)
{
	return test_bit(BPFSTASH_ENTRY_LIVE, &e->flags);
}

static inline bool bpfstash_entry_stored(const struct bpfstash_entry *e)
{
	return test_bit(BPFSTASH_ENTRY_STORED, &e->flags);
}

static inline u32 bpfstash_blob_size(const struct bpfstash_entry *e, int id)
{
	return e->blobs[id] ? e->blobs[id]->size : 0;
}

void bpfstash_entry_state(const struct bpfstash_entry *e, struct bpfstash_meta *m);
const void *bpfstash_blob_at(const struct bpfstash_blob *b, u32 off, u32 *len);
const void *bpfstash_funcs_at(const struct bpfstash_entry *e, u32 off, u32 *len);

/**
 * bpfstash_prog_load - store a program that bpf_prog_load() just exposed
 * @prog: the program, JITed, with its id and kallsyms entry in place
 *
 * Called from bpf_prog_load() after the program became public and before
 * its fd is installed, in process context with no locks held.  Costs a
 * static branch while the store is stopped.
 */
static inline void bpfstash_prog_load(struct bpf_prog *prog)
{
	if (static_branch_unlikely(&bpfstash_active))
		__bpfstash_prog_load(prog);
}

/**
 * bpfstash_prog_unload - mark a program's entry as unloaded
 * @prog: the program whose last reference is gone
 *
 * Called where PERF_BPF_EVENT_PROG_UNLOAD is emitted.  That can be softirq
 * context, so this neither sleeps nor takes a sleeping lock.
 */
static inline void bpfstash_prog_unload(struct bpf_prog *prog)
{
	if (READ_ONCE(prog->aux->stash))
		__bpfstash_prog_unload(prog);
}

#else /* !CONFIG_BPFSTASH */

static inline void bpfstash_prog_load(struct bpf_prog *prog) { }
static inline void bpfstash_prog_unload(struct bpf_prog *prog) { }

#endif /* CONFIG_BPFSTASH */

#endif /* _LINUX_BPFSTASH_H */
