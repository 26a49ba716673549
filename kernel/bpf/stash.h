/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash: the internals of the store, shared by stash.c (entries, hooks,
 * control) and stash_blob.c (the blob store: pieces, dedup, digests).
 * Nothing outside kernel/bpf/ includes this: the view and the rest of the
 * kernel use include/linux/bpfstash.h.
 */
#ifndef _KERNEL_BPF_STASH_H
#define _KERNEL_BPF_STASH_H

#include <linux/atomic.h>
#include <linux/bpfstash.h>
#include <linux/llist.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/seqlock.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <linux/xarray.h>
#include <kunit/visibility.h>

struct btf;
struct mem_cgroup;

/* The blobs of an entry, in the order the content hash covers them. */
enum bpfstash_blob_id {
	BPFSTASH_BLOB_JITED = BPFSTASH_DATA_JITED,
	BPFSTASH_BLOB_LINE_INFO = BPFSTASH_DATA_LINE_INFO,
	BPFSTASH_BLOB_JITED_LINE_INFO = BPFSTASH_DATA_JITED_LINE_INFO,
	BPFSTASH_BLOB_FUNC_INFO = BPFSTASH_DATA_FUNC_INFO,
	BPFSTASH_BLOB_BTF = BPFSTASH_DATA_BTF,
	BPFSTASH_BLOB_CALLS = BPFSTASH_DATA_CALLS,	/* images only */
	BPFSTASH_BLOB_POKES = BPFSTASH_DATA_POKES,
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
 *	(bpfstash_blob_cost() in stash_blob.c)
 * @nr_segs: 0 if @data holds the bytes, else the number of pieces in @seg
 * @listed: in the table (under the store's lock); a snapshot's new blobs
 *	are not, until the snapshot is stored
 * @seen: in the table by bytes (under the store's lock)
 * @digest: SHA-256 of the bytes
 * @rcu: frees the struct after a grace period.  It overlays @digest,
 *	which only lookups under the store's lock read, and those never find
 *	a dying blob; lockless lookups (by @seen_key) do not read it
 * @data: the bytes, for a blob that fits its allocation well
 * @seg: the pieces of any other blob, each a kmalloc() of exactly its size:
 *	pieces of the largest kmalloc cache (8 KiB with 4 KiB pages), then
 *	the tail in power-of-two pieces down to 256 bytes as it needs them,
 *	then the rest (bpfstash_blob_seg_len()).  A
 *	blob one contiguous allocation held would waste up to a page, or half
 *	a kmalloc bucket; in pieces it wastes less than 64 bytes plus a
 *	pointer per piece.  Use bpfstash_blob_at() to read either kind.
 *
 * Lookups are lockless: the struct is freed after a grace period, by
 * kvfree_rcu() through @rcu, which never blocks (the image hooks run under
 * ftrace's direct_mutex and RTNL); the pieces as soon as the last
 * reference is gone, since only a holder of a reference reads them.
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
	union {
		u8 digest[BPFSTASH_DIGEST_SIZE];
		struct rcu_head rcu;
	};
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
 * @content: the hashed part of meta, little-endian as it is hashed;
 *	immutable
 * @hash: the entry's name, the content hash
 * @state: the rest of meta: the ids, times and loader of the current or
 *	last load, rewritten when the program is loaded again (same content)
 *	and when it is unloaded, under the store's state seqlock; read it
 *	with bpfstash_entry_state().  Its flags and bytes are made on read.
 * @attach_func_name: what the program is attached to, by name; immutable
 * @funcs_segs: 0 if @funcs holds the funcs file, else its number of pieces
 * @funcs: the funcs file, content.funcs_size bytes: struct
 *	bpfstash_func[content.nr_funcs], then the names.  Held as a blob
 *	holds its bytes: here, or in the pieces whose addresses are here when
 *	one allocation would waste more (a kmalloc() bucket, up to half of
 *	it).  Use bpfstash_funcs_at() to read it.
 * @blobs: the blobs, NULL when empty
 * @owner: for a live image's entry, where the image keeps it (its
 *	bpf_ksym's stash), so that stopping the store can detach it; else NULL
 * @image_node: in bpfstash_store.images while @owner is set
 *	(@owner and @image_node change under bpfstash_store.state)
 * @rcu: frees the entry after a grace period...
 * @free_node: ...in process context, from a list (bpfstash_entry_free_work())
 */
struct bpfstash_entry {
	struct rhash_head node;
	refcount_t ref;
	u32 index;
	unsigned long flags;
	atomic64_t last_access;
	struct bpfstash_content content;
	u8 hash[BPFSTASH_HASH_SIZE];
	struct bpfstash_state state;
	char attach_func_name[BPFSTASH_ATTACH_NAME_LEN];
	u32 funcs_segs;
	void *funcs;
	struct bpfstash_blob *blobs[BPFSTASH_NR_BLOBS];
	struct bpfstash_entry __rcu **owner;
	struct list_head image_node;
	struct rcu_head rcu;
	struct llist_node free_node;
};

static inline bool bpfstash_entry_live(const struct bpfstash_entry *e)
{
	return test_bit(BPFSTASH_ENTRY_LIVE, &e->flags);
}

/**
 * struct bpfstash_store - the store: its tables, limits and counters
 *
 * One instance, bpfstash_store.  The locking is described at the top of
 * stash.c.
 */
struct bpfstash_store {
	/* Serialises changes to the tables, the index, limits and state. */
	struct mutex lock;
	/*
	 * The state of every entry (the meta fields that are not content,
	 * and BPFSTASH_ENTRY_LIVE) changes under this, so that a reader
	 * never sees one load's id with another's times.  The unload hook
	 * writes it from softirq context: writers disable bottom halves.
	 */
	seqlock_t state;
	bool active;
	struct rhashtable entries;	/* by meta.hash */
	struct rhashtable blobs;	/* by digest */
	struct rhashtable blobs_seen;	/* by a key of the bytes, see bpfstash_blob_seen_key() */
	struct xarray index;		/* listing order -> entry */
	struct list_head images;	/* entries of live images, under @state */
	/*
	 * Bumped under @state with each change the index file shows (an
	 * entry stored or deleted, or its state changed), and also under
	 * @lock when the set of entries changes: see bpfstash_store_entries().
	 */
	u64 generation;
	u32 next_index;
	struct obj_cgroup __rcu *objcg;	/* charged for entries, or NULL */

	/*
	 * Under lock; @bytes and @max_bytes are also read without it, by
	 * the hook's check before its snapshot, whole on 32-bit too.
	 */
	atomic64_t bytes;
	u64 peak_bytes;
	atomic64_t max_bytes;
	u32 nr_entries;
	u32 max_entries;
	u32 nr_blobs;
	atomic_t nr_live;

	/* Counters, updated without the lock. */
	atomic64_t considered;
	atomic64_t stored;
	atomic64_t preexisting;
	atomic64_t reloaded;
	atomic64_t refused_full;
	atomic64_t refused_nomem;
	atomic64_t skipped_hardened;
	atomic64_t skipped_unlisted;
	atomic64_t deleted;
	atomic64_t blob_dedup;
	atomic64_t btf_hash_cached;
	atomic64_t hashed_bytes;
};

extern struct bpfstash_store bpfstash_store;

/*
 * The fewest buckets the store's tables shrink to.  With rhashtable's own
 * minimum, 4, a store of a few entries resizes as programs come and go:
 * deleting the last entries shrinks the tables (in a deferred work), and
 * storing the next program with its blobs grows two of them again, which
 * schedules that work from the load hook, every time.  64 buckets,
 * rhashtable's initial size, take 512 bytes per table on 64-bit.
 */
#define BPFSTASH_TABLE_MIN_SIZE	64

/*
 * Allocations on the load path: charged to the memory cgroup of whoever
 * started the store (see bpfstash_charge_begin()), never retried hard,
 * never warned about: failing is a counted, normal outcome.
 */
#define BPFSTASH_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)

/*
 * What one load hashed, for the bpfstash_store tracepoint: counted and
 * timed only while the event is enabled, so that otherwise the load path
 * reads no clock (callers pass NULL then).
 */
struct bpfstash_hash_acct {
	u64 bytes;
	u64 ns;
};

/* What storing one program or image came to, for the bpfstash_store tracepoint. */
struct bpfstash_result {
	int outcome;			/* enum bpfstash_outcome */
	u64 bytes;			/* what the store grew by */
	struct bpfstash_hash_acct hashed;
};

/**
 * struct bpfstash_owner - what bpfstash_store_owner() stores, for whom
 * @slot: where the program or image keeps its entry (bpf_prog_aux::stash,
 *	bpf_ksym::stash)
 * @image: @slot is an image's
 * @min_bytes: bpfstash_min_bytes() of what @snapshot will make
 * @snapshot: fill a new entry with the content, its state and its hash;
 *	on error the caller frees the entry with what it holds
 */
struct bpfstash_owner {
	struct bpfstash_entry __rcu **slot;
	bool image;
	u64 min_bytes;
	int (*snapshot)(const struct bpfstash_owner *o, struct bpfstash_entry *e,
			struct bpfstash_hash_acct *acct);
};

/*
 * What the passes over a program's jited line info need of a function:
 * where its image is, how long it is, and its first line.  The walk that
 * writes the functions' records gathers them (bpfstash_snapshot_funcs()),
 * so that the passes read them from one array rather than through each
 * function's bpf_prog and bpf_prog_aux.
 */
struct bpfstash_span {
	unsigned long lo;
	u32 len;
	u32 first_line;
};

/* A program's jited line info, and its functions' spans. */
struct bpfstash_lines {
	void *const *jited_linfo;
	const struct bpfstash_span *spans;
	u32 nr_funcs;
	u32 nr;		/* lines */
};

/*
 * What an entry of a program needs before anything is copied: the size
 * of its "funcs" file (its records, then the names) and of its image.
 */
struct bpfstash_sizes {
	u32 funcs;
	u32 jited;
};

/*
 * Where a pass over the jited line info is: the function of its lines and
 * the first line of the next function.  A pass visits the lines in order,
 * piece by piece of a blob, so the walk carries on from piece to piece and
 * looks each function up once; the samples of a key jump ahead with
 * bpfstash_line_walk_seek().
 */
struct bpfstash_line_walk {
	const struct bpfstash_lines *l;
	u32 f;		/* the function of the lines before @next */
	u32 next;	/* the first line of the function after @f, or U32_MAX */
};

/* stash.c: entries */
struct bpfstash_entry *bpfstash_entry_alloc(void);
void bpfstash_entry_free(struct bpfstash_entry *e);
int bpfstash_funcs_alloc(struct bpfstash_entry *e, u32 size);
void bpfstash_entry_set_load_time(struct bpfstash_entry *e, u64 boot);
void bpfstash_entry_set_loader(struct bpfstash_entry *e);
void bpfstash_content_init(struct bpfstash_content *c);
void bpfstash_entry_unloaded(struct bpfstash_entry *e, bool gone);
u64 bpfstash_min_bytes(u32 funcs_size, u32 jited_len);
int bpfstash_store_owner(const struct bpfstash_owner *o, bool preexisting,
			 struct bpfstash_entry **out, struct bpfstash_result *res);
extern u64 bpfstash_default_max_bytes;
extern u32 bpfstash_default_max_entries;
struct mem_cgroup *bpfstash_charge_begin(struct mem_cgroup **old);
void bpfstash_charge_end(struct mem_cgroup *memcg, struct mem_cgroup *old);
int bpfstash_store_activate(u64 max_bytes, u32 max_entries);
void bpfstash_store_deactivate(void);

/* stash_prog.c: programs */
bool bpfstash_kallsyms_shown(void);
const struct bpf_prog *bpfstash_func(const struct bpf_prog *prog, u32 i);
void bpfstash_walk_progs(bool store_them);

/*
 * The arch code hashes each crypto_shash_update() in one FPU section, with
 * preemption off: no call gets more bytes than this, the largest piece of
 * a blob with 4 KiB pages, so that a blob held in pieces is hashed with
 * one call a piece and only bytes held whole are split.
 */
#define BPFSTASH_HASH_CHUNK	SZ_8K

/* The largest piece of a segmented blob, and the smallest but its last. */
#define BPFSTASH_BLOB_PIECE_MAX	KMALLOC_MAX_CACHE_SIZE
#define BPFSTASH_BLOB_PIECE_MIN	256

/**
 * bpfstash_blob_seg_len - the size of a piece of a segmented blob
 * @rest: bytes from the start of the piece to the end of the blob
 *
 * Every piece but the last is a power of two of at least
 * BPFSTASH_BLOB_PIECE_MIN bytes and starts at a multiple of it, so a
 * record whose size is a power of two up to that never straddles two.
 */
static inline u32 bpfstash_blob_seg_len(u32 rest)
{
	if (rest >= BPFSTASH_BLOB_PIECE_MAX)
		return BPFSTASH_BLOB_PIECE_MAX;
	if (rest >= BPFSTASH_BLOB_PIECE_MIN)
		return rounddown_pow_of_two(rest);
	return rest;
}

/* Each piece in order: @p its address, @off its offset, @n its size. */
#define for_each_piece(base, nr, size, off, p, n)			\
	for ((off) = 0; (off) < (size) &&				\
	     ((p) = bpfstash_piece(base, nr, size, off, &(n)), true); (off) += (n))

#define for_each_blob_piece(b, off, p, n)				\
	for_each_piece((b)->data, (b)->nr_segs, (b)->size, off, p, n)

/**
 * struct bpfstash_writer - writes bytes held as bpfstash_piece() reads them,
 *	front to back
 * @base: the bytes, or their pieces
 * @nr: the number of pieces, 0 for one allocation
 * @size: the number of bytes
 * @off: the offset of the next byte written
 * @room: the bytes from @p to the end of its piece; 0 until it is looked up
 * @p: the address of byte @off, when @room is not 0
 *
 * The load hook writes a record, a name and an image per function, 256 of
 * each for the largest programs: a writer finds the place of each in
 * constant time, without walking the pieces as bpfstash_piece() does.
 */
struct bpfstash_writer {
	void *base;
	u32 nr;
	u32 size;
	u32 off;
	u32 room;
	u8 *p;
};

static inline void bpfstash_writer_init(struct bpfstash_writer *w, void *base, u32 nr,
					u32 size, u32 off)
{
	*w = (struct bpfstash_writer){ .base = base, .nr = nr, .size = size, .off = off };
}

void __bpfstash_write(struct bpfstash_writer *w, const void *src, u32 len);

/*
 * The place of the next @len bytes of @w, which the caller writes, and
 * move past them; NULL, and @w unmoved, when they do not fit in the rest
 * of the piece (or it is not looked up yet).  For a record built in place,
 * field by field, rather than on the stack and copied: the copy reloads
 * the fields as words before they have left the store buffer.
 */
static __always_inline void *bpfstash_write_place(struct bpfstash_writer *w, u32 len)
{
	u8 *p = w->p;

	if (unlikely(len > w->room))
		return NULL;
	w->p += len;
	w->room -= len;
	w->off += len;
	return p;
}

/* Write @len bytes of @src at @w's offset, and move past them. */
static __always_inline void bpfstash_write(struct bpfstash_writer *w, const void *src,
					   u32 len)
{
	if (likely(len <= w->room)) {
		memcpy(w->p, src, len);
		w->p += len;
		w->room -= len;
		w->off += len;
		return;
	}
	__bpfstash_write(w, src, len);
}

/*
 * Write a function's image of @len bytes to @w.  An image of 8 to 64
 * bytes is copied here, a word at a time with the last word overlapping
 * the one before it, rather than by a call of memcpy(): a program of 256
 * functions has 256 images of a few dozen bytes each.
 */
static __always_inline void bpfstash_write_image(struct bpfstash_writer *w,
						 const u8 *src, u32 len)
{
	u8 *dst = len <= 64 && len >= sizeof(u64) ? bpfstash_write_place(w, len) : NULL;
	u32 i;

	if (!dst) {
		bpfstash_write(w, src, len);
		return;
	}
	for (i = 0; i + sizeof(u64) < len; i += sizeof(u64))
		put_unaligned(get_unaligned((const u64 *)(src + i)), (u64 *)(dst + i));
	i = len - sizeof(u64);
	put_unaligned(get_unaligned((const u64 *)(src + i)), (u64 *)(dst + i));
}

/*
 * Bytes of a blob sampled at its head, middle and tail for the key that
 * finds it again by its bytes (bpfstash_blob_seen_key()).
 */
#define BPFSTASH_SEEN_SAMPLE	64

/* stash_blob.c: memory */
size_t bpfstash_alloc_size(size_t bytes);
void *bpfstash_alloc(size_t bytes);
size_t bpfstash_pieces_cost(u32 size, size_t head, u32 *nr);
int bpfstash_pieces_alloc(void **seg, u32 nr, u32 size);
void bpfstash_pieces_free(void **seg, u32 nr);
void *bpfstash_piece(const void *base, u32 nr, u32 size, u32 off, u32 *len);
void bpfstash_pieces_write(void *base, u32 nr, u32 size, u32 off,
			   const void *src, u32 len);

/* stash_blob.c: blobs */
int bpfstash_blobs_init(void);
size_t bpfstash_blob_cost(u32 size, u32 *nr);
u64 bpfstash_blob_bytes(const struct bpfstash_blob *b);
struct bpfstash_blob *bpfstash_blob_alloc(u32 size);
void bpfstash_blob_write(struct bpfstash_blob *b, u32 off, const void *src, u32 len);
void bpfstash_blob_writer(struct bpfstash_writer *w, struct bpfstash_blob *b);
const void *bpfstash_blob_at(const struct bpfstash_blob *b, u32 off, u32 *len);
struct bpfstash_blob *bpfstash_blob_candidate(u32 size, u32 key);
struct bpfstash_blob *bpfstash_blob_new(const void *data, u32 size,
					atomic64_t *reused,
					struct bpfstash_hash_acct *acct);
struct bpfstash_blob *bpfstash_btf_blob(const struct btf *btf,
					struct bpfstash_hash_acct *acct);
struct bpfstash_blob *bpfstash_blob_find(const struct bpfstash_blob *b);
int bpfstash_blob_list(struct bpfstash_blob *b);
void bpfstash_blob_put(struct bpfstash_blob *b);

/* stash_blob.c: digests and names */
int bpfstash_hash_setup(void);
int bpfstash_blob_digest(struct bpfstash_blob *b, struct bpfstash_hash_acct *acct);
u64 bpfstash_content_hashed(const struct bpfstash_content *content,
			    struct bpfstash_blob *const blobs[BPFSTASH_NR_BLOBS]);
int bpfstash_content_hash(const struct bpfstash_content *content, const void *funcs,
			  u32 funcs_segs, struct bpfstash_blob *const blobs[BPFSTASH_NR_BLOBS],
			  u8 hash[BPFSTASH_HASH_SIZE], struct bpfstash_hash_acct *acct);

#if IS_ENABLED(CONFIG_KUNIT)
/* What the KUnit tests (stash_kunit.c) check besides. */
int bpfstash_digest(const void *data, size_t len, u8 out[BPFSTASH_DIGEST_SIZE]);
void bpfstash_blob_free(struct bpfstash_blob *b);
bool bpfstash_bytes_equal(const void *a, const void *b, size_t len);
bool bpfstash_blob_equal(const struct bpfstash_blob *b, const void *data);
u32 bpfstash_blob_seen_key(const void *data, u32 size);
void bpfstash_prog_sizes(const struct bpf_prog *prog, struct bpfstash_sizes *sz);
int bpfstash_snapshot_funcs(const struct bpf_prog *prog, u32 nr_funcs,
			    const struct bpfstash_sizes *sz, struct bpfstash_entry *e,
			    struct bpfstash_span *spans);
void bpfstash_line_walk_init(struct bpfstash_line_walk *w, const struct bpfstash_lines *l);
int bpfstash_jited_lines(struct bpfstash_line_walk *w, u32 first, u32 n, u64 *out, const u64 *cmp);
int bpfstash_jited_lines_key(const struct bpfstash_lines *l, u32 *key);
int bpfstash_jited_lines_blob(const struct bpfstash_lines *l, struct bpfstash_blob *b,
			      bool compare);
#endif

#endif /* _KERNEL_BPF_STASH_H */
