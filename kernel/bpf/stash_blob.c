// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the blob store.
 *
 * The bytes of entries, held once per content: a blob is named by the
 * SHA-256 of its bytes (its digest) and shared by every entry with the same
 * bytes.  This file holds blobs in pieces when one allocation would waste
 * more, finds the blobs that a program loaded again brings again by their
 * bytes rather than by hashing them (bpfstash_blob_seen()), and computes
 * the digests and the content hash that names an entry.  The entries, the
 * hooks and the control of the store are in stash.c; kernel/bpf/stash.h is
 * what the two share.
 *
 * Locking: the blob tables change under bpfstash_store.lock; lookups are
 * lockless under RCU (see stash.c).
 */
#include <linux/btf.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <linux/xxhash.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>

#include "stash.h"

static const struct rhashtable_params bpfstash_blob_params = {
	.key_len	= BPFSTASH_DIGEST_SIZE,
	.key_offset	= offsetof(struct bpfstash_blob, digest),
	.head_offset	= offsetof(struct bpfstash_blob, node),
	.min_size	= BPFSTASH_TABLE_MIN_SIZE,
	.automatic_shrinking = true,
};

static const struct rhashtable_params bpfstash_blob_seen_params = {
	.key_len	= sizeof(u32),
	.key_offset	= offsetof(struct bpfstash_blob, seen_key),
	.head_offset	= offsetof(struct bpfstash_blob, seen_node),
	.min_size	= BPFSTASH_TABLE_MIN_SIZE,
	.automatic_shrinking = true,
};

/*
 * Memory an entry holds besides its blobs, and a blob holds: what the
 * allocator really hands out (kmalloc buckets, whole vmalloc pages), so
 * that size= limits real memory and stats show it.
 */
size_t bpfstash_alloc_size(size_t bytes)
{
	/* As bpfstash_alloc() allocates them. */
	return bytes > KMALLOC_MAX_CACHE_SIZE ? PAGE_ALIGN(bytes) : kmalloc_size_roundup(bytes);
}

/*
 * The content hash is SHA-256, through the crypto API because that is
 * where 6.12 keeps the arch code (sha256-ni, sha256-avx2; on arm64
 * sha256-ce): lib/crypto's sha256() is generic C only here.  SHA-256 is
 * also what every profiler, debuginfod and shell can recompute.
 *
 * The tfm is allocated at the first start (modules can be loaded then) and
 * kept: the hook needs no reference, and sha256 holds no key.  It is
 * published with cmpxchg_release(), paired with the smp_load_acquire() of
 * bpfstash_tfm(): whoever sees the pointer sees the transform it points
 * to.  Only a started store hashes, and the start publishes the transform
 * first, so bpfstash_tfm() is never NULL where it is used.
 */
static struct crypto_shash *bpfstash_sha256;

int bpfstash_hash_setup(void)
{
	struct crypto_shash *tfm;

	/* Pairs with the cmpxchg_release() below, of another start. */
	if (smp_load_acquire(&bpfstash_sha256))
		return 0;
	tfm = crypto_alloc_shash("sha256", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	if (cmpxchg_release(&bpfstash_sha256, NULL, tfm))
		crypto_free_shash(tfm);
	return 0;
}

static struct crypto_shash *bpfstash_tfm(void)
{
	/* Pairs with the cmpxchg_release() of bpfstash_hash_setup(). */
	return smp_load_acquire(&bpfstash_sha256);
}

/* At most BPFSTASH_HASH_CHUNK bytes per call. */
static int bpfstash_hash_update(struct shash_desc *desc, const u8 *p, size_t len)
{
	int err = 0;

	while (len && !err) {
		size_t n = min_t(size_t, len, BPFSTASH_HASH_CHUNK);

		err = crypto_shash_update(desc, p, n);
		p += n;
		len -= n;
	}
	return err;
}

/*
 * Count @bytes hashed in the stats, and turn the crypto API's @err into
 * the hook's: an unkeyed shash does not fail; if it ever did, the entry is
 * refused rather than named wrongly.
 */
static int bpfstash_hashed(size_t bytes, int err)
{
	atomic64_add(bytes, &bpfstash_store.hashed_bytes);
	return WARN_ON_ONCE(err) ? -EINVAL : 0;
}

static u64 bpfstash_acct_start(const struct bpfstash_hash_acct *acct)
{
	return acct ? ktime_get_ns() : 0;
}

static void bpfstash_acct_end(struct bpfstash_hash_acct *acct, u64 bytes, u64 start)
{
	if (acct) {
		acct->bytes += bytes;
		acct->ns += ktime_get_ns() - start;
	}
}

/*
 * More than BPFSTASH_HASH_CHUNK bytes held whole.  Out of line: the
 * descriptor on its stack (zeroed on entry where the stack is initialised)
 * is for these only.
 */
static noinline int bpfstash_digest_chunks(const void *data, size_t len,
					   u8 out[BPFSTASH_DIGEST_SIZE])
{
	SHASH_DESC_ON_STACK(desc, bpfstash_tfm());
	int err;

	desc->tfm = bpfstash_tfm();
	err = crypto_shash_init(desc) ?:
	      bpfstash_hash_update(desc, data, len) ?:
	      crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return err;
}

/* SHA-256 of @len bytes at @data, counted in the stats. */
VISIBLE_IF_KUNIT int bpfstash_digest(const void *data, size_t len,
				     u8 out[BPFSTASH_DIGEST_SIZE])
{
	if (len <= BPFSTASH_HASH_CHUNK)
		return bpfstash_hashed(len, crypto_shash_tfm_digest(bpfstash_tfm(), data, len,
								    out));
	return bpfstash_hashed(len, bpfstash_digest_chunks(data, len, out));
}

/*
 * Bytes held as a blob holds them, at @base: there, when @nr is 0, or in
 * the @nr pieces whose addresses are there.  A blob's @data and @seg share
 * one address, as do an entry's @funcs bytes and pieces.  The address of
 * byte @off of @size, and in @len how many bytes from there are contiguous:
 * to the end of its piece.
 */
void *bpfstash_piece(const void *base, u32 nr, u32 size, u32 off, u32 *len)
{
	void *const *seg = base;
	u32 i, start, n;

	if (!nr) {
		*len = size - off;
		return (void *)base + off;
	}
	/* Whole pieces first: the piece of @off, or the first of the tail. */
	i = off / BPFSTASH_BLOB_PIECE_MAX;
	start = i * BPFSTASH_BLOB_PIECE_MAX;
	for (;;) {
		n = bpfstash_blob_seg_len(size - start);
		if (off - start < n)
			break;
		start += n;
		i++;
	}
	*len = start + n - off;
	return seg[i] + (off - start);
}

static void *bpfstash_blob_piece(const struct bpfstash_blob *b, u32 off, u32 *len)
{
	return bpfstash_piece(b->data, b->nr_segs, b->size, off, len);
}

/**
 * bpfstash_blob_at - where a byte of a blob is
 * @b: the blob
 * @off: the offset of the byte, below @b->size
 * @len: set to the number of bytes from there that are contiguous
 *
 * Return: the address of the byte.
 */
const void *bpfstash_blob_at(const struct bpfstash_blob *b, u32 off, u32 *len)
{
	return bpfstash_blob_piece(b, off, len);
}

/* bpfstash_write() across the end of a piece, or before the first lookup. */
void __bpfstash_write(struct bpfstash_writer *w, const void *src, u32 len)
{
	u32 n;

	while (len) {
		if (!w->room)
			w->p = bpfstash_piece(w->base, w->nr, w->size, w->off, &w->room);
		n = min(len, w->room);
		memcpy(w->p, src, n);
		w->p += n;
		w->room -= n;
		w->off += n;
		src += n;
		len -= n;
	}
}

/* Copy @len bytes of @src to byte @off of the bytes at @base (see bpfstash_piece()). */
void bpfstash_pieces_write(void *base, u32 nr, u32 size, u32 off,
			   const void *src, u32 len)
{
	struct bpfstash_writer w;

	bpfstash_writer_init(&w, base, nr, size, off);
	__bpfstash_write(&w, src, len);
}

void bpfstash_blob_write(struct bpfstash_blob *b, u32 off, const void *src, u32 len)
{
	bpfstash_pieces_write(b->data, b->nr_segs, b->size, off, src, len);
}

/* A writer of blob @b, from its first byte. */
void bpfstash_blob_writer(struct bpfstash_writer *w, struct bpfstash_blob *b)
{
	bpfstash_writer_init(w, b->data, b->nr_segs, b->size, 0);
}

/* The SHA-256 of a blob's bytes, in its @digest, accounted in @acct. */
int bpfstash_blob_digest(struct bpfstash_blob *b, struct bpfstash_hash_acct *acct)
{
	SHASH_DESC_ON_STACK(desc, bpfstash_tfm());
	u64 start = bpfstash_acct_start(acct);
	void *p;
	u32 off, n;
	int err;

	if (!b->nr_segs) {
		err = bpfstash_digest(b->data, b->size, b->digest);
	} else {
		desc->tfm = bpfstash_tfm();
		err = crypto_shash_init(desc);
		for_each_blob_piece(b, off, p, n)
			err = err ?: bpfstash_hash_update(desc, p, n);
		err = err ?: crypto_shash_final(desc, b->digest);
		shash_desc_zero(desc);
		err = bpfstash_hashed(b->size, err);
	}
	bpfstash_acct_end(acct, b->size, start);
	return err;
}

/* The bytes bpfstash_content_hash() hashes for @content and @blobs. */
u64 bpfstash_content_hashed(const struct bpfstash_content *content,
			    struct bpfstash_blob *const blobs[BPFSTASH_NR_BLOBS])
{
	return sizeof(BPFSTASH_HASH_DOMAIN) + sizeof(*content) +
	       le32_to_cpu(content->funcs_size) + BPFSTASH_NR_BLOBS * BPFSTASH_DIGEST_SIZE;
}

/**
 * bpfstash_content_hash - the name of an entry, over its canonical form
 * @content: the hashed part of the metadata, little-endian
 * @funcs: the funcs file, @content->funcs_size bytes, held as
 *	bpfstash_piece() reads them
 * @funcs_segs: its number of pieces, 0 if it is in one
 * @blobs: the entry's blobs, NULL for an empty one
 * @hash: set to the entry's BPFSTASH_HASH_SIZE-byte name
 * @acct: what a load hashed, or NULL
 *
 * The serialisation is documented in include/uapi/linux/bpfstash.h, and
 * userspace recomputes it to verify an entry.
 *
 * Return: 0, or -EINVAL if the hash could not be computed.
 */
int bpfstash_content_hash(const struct bpfstash_content *content, const void *funcs,
			  u32 funcs_segs, struct bpfstash_blob *const blobs[BPFSTASH_NR_BLOBS],
			  u8 hash[BPFSTASH_HASH_SIZE], struct bpfstash_hash_acct *acct)
{
	static const char domain[] = BPFSTASH_HASH_DOMAIN;
	/* SHA-256 of nothing: the digest of an empty blob. */
	static const u8 empty[BPFSTASH_DIGEST_SIZE] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
		0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
		0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
	};
	SHASH_DESC_ON_STACK(desc, bpfstash_tfm());
	u8 digest[BPFSTASH_DIGEST_SIZE];
	u64 start = bpfstash_acct_start(acct), hashed;
	u32 off, n;
	void *p;
	int err, i;

	BUILD_BUG_ON(sizeof(domain) != 9);
	BUILD_BUG_ON(BPFSTASH_NR_BLOBS != 7);

	desc->tfm = bpfstash_tfm();
	err = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, domain, sizeof(domain)) ?:
	      crypto_shash_update(desc, (const u8 *)content, sizeof(*content));
	for_each_piece(funcs, funcs_segs, le32_to_cpu(content->funcs_size), off, p, n)
		err = err ?: bpfstash_hash_update(desc, p, n);
	for (i = 0; i < BPFSTASH_NR_BLOBS && !err; i++)
		err = crypto_shash_update(desc, blobs[i] ? blobs[i]->digest : empty,
					  BPFSTASH_DIGEST_SIZE);
	err = err ?: crypto_shash_final(desc, digest);
	shash_desc_zero(desc);
	memcpy(hash, digest, BPFSTASH_HASH_SIZE);
	hashed = bpfstash_content_hashed(content, blobs);
	bpfstash_acct_end(acct, hashed, start);
	return bpfstash_hashed(hashed, err);
}

/*
 * Anything past the largest kmalloc cache goes to vmalloc directly:
 * kvmalloc() would first try the page allocator, which rounds up to a
 * power of two pages (a 20 KiB image would hold 32 KiB); vmalloc rounds up
 * to a page.  vmalloc takes no reclaim modifier (__GFP_NORETRY): it gets
 * the rest of the flags.  Freed with kvfree().
 */
void *bpfstash_alloc(size_t bytes)
{
	if (bytes > KMALLOC_MAX_CACHE_SIZE)
		return __vmalloc(bytes, BPFSTASH_GFP & ~__GFP_NORETRY);
	return kmalloc(bytes, BPFSTASH_GFP);
}

void bpfstash_pieces_free(void **seg, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		kfree(seg[i]);
}

static void bpfstash_blob_free_pieces(struct bpfstash_blob *b)
{
	bpfstash_pieces_free(b->seg, b->nr_segs);
}

VISIBLE_IF_KUNIT void bpfstash_blob_free(struct bpfstash_blob *b)
{
	bpfstash_blob_free_pieces(b);
	kvfree(b);
}

/*
 * The memory @size bytes hold after a header of @head bytes, and in *@nr
 * the number of their pieces, 0 for one allocation with the header: that
 * when it wastes no more than pieces would.  Pieces are kmalloc()s of
 * power-of-two sizes, so they waste nothing but the last one's rounding,
 * less than 64 bytes, and a pointer each after the header.
 */
size_t bpfstash_pieces_cost(u32 size, size_t head, u32 *nr)
{
	size_t pieces, whole;
	u32 off, n;

	/*
	 * Whole pieces at once: this is also how a blob's bytes are counted,
	 * a few times per load.  A piece of a power of two of at least
	 * BPFSTASH_BLOB_PIECE_MIN bytes is a kmalloc() bucket of its own
	 * size; only a shorter last piece is rounded up.
	 */
	*nr = size / BPFSTASH_BLOB_PIECE_MAX;
	off = *nr * BPFSTASH_BLOB_PIECE_MAX;
	pieces = off;
	for (; off < size; off += n, (*nr)++) {
		n = bpfstash_blob_seg_len(size - off);
		pieces += n >= BPFSTASH_BLOB_PIECE_MIN ? n : kmalloc_size_roundup(n);
	}
	whole = bpfstash_alloc_size(head + size);
	pieces += bpfstash_alloc_size(head + *nr * sizeof(void *));
	if (whole <= pieces || *nr > U16_MAX) {
		*nr = 0;
		return whole;
	}
	return pieces;
}

/* The same for a blob: @size bytes after a struct bpfstash_blob. */
size_t bpfstash_blob_cost(u32 size, u32 *nr)
{
	/* One cache line: 64 bytes are what a small blob pays per entry. */
	BUILD_BUG_ON(IS_ENABLED(CONFIG_64BIT) && offsetof(struct bpfstash_blob, data) != 64);
	return bpfstash_pieces_cost(size, offsetof(struct bpfstash_blob, data), nr);
}

u64 bpfstash_blob_bytes(const struct bpfstash_blob *b)
{
	u32 nr;

	return bpfstash_blob_cost(b->size, &nr);
}

/* Allocate the @nr pieces of @size bytes into @seg; all or none. */
int bpfstash_pieces_alloc(void **seg, u32 nr, u32 size)
{
	u32 i, off, n;

	for (i = 0, off = 0; i < nr; i++, off += n) {
		n = bpfstash_blob_seg_len(size - off);
		seg[i] = kmalloc(n, BPFSTASH_GFP);
		if (!seg[i]) {
			bpfstash_pieces_free(seg, i);
			return -ENOMEM;
		}
	}
	return 0;
}

/* A blob for @size bytes, held as bpfstash_blob_cost() says. */
struct bpfstash_blob *bpfstash_blob_alloc(u32 size)
{
	struct bpfstash_blob *b;
	u32 nr;

	bpfstash_blob_cost(size, &nr);
	if (!nr) {
		b = bpfstash_alloc(struct_size(b, data, size));
		if (!b)
			return NULL;
	} else {
		b = bpfstash_alloc(struct_size(b, seg, nr));
		if (!b)
			return NULL;
		if (bpfstash_pieces_alloc(b->seg, nr, size)) {
			kvfree(b);
			return NULL;
		}
	}
	b->nr_segs = nr;
	refcount_set(&b->ref, 1);
	b->size = size;
	b->listed = false;
	b->seen = false;
	return b;
}

/*
 * Blobs that do not change when a program is loaded again (line info, func
 * info, BTF, jited line info) are found again by their bytes: a key picks a
 * stored blob, and a comparison confirms it, so such a blob is not hashed
 * again.  The key is the low 32 bits of an xxh64 of the size and of a
 * sample of the bytes (head, middle and tail), not of all of them: the
 * comparison reads every byte anyway, and a key over all of them would
 * read them twice.  A blob whose key
 * another stored blob already has (same size and sample, other bytes, or
 * a 32-bit collision) is only hashed each time; it is never confused with
 * that blob.
 */
VISIBLE_IF_KUNIT u32 bpfstash_blob_seen_key(const void *data, u32 size)
{
	const u8 *p = data;
	struct xxh64_state state;

	if (size <= 3 * BPFSTASH_SEEN_SAMPLE)
		return lower_32_bits(xxh64(data, size, size));
	xxh64_reset(&state, size);
	xxh64_update(&state, p, BPFSTASH_SEEN_SAMPLE);
	xxh64_update(&state, p + size / 2 - BPFSTASH_SEEN_SAMPLE / 2,
		     BPFSTASH_SEEN_SAMPLE);
	xxh64_update(&state, p + size - BPFSTASH_SEEN_SAMPLE, BPFSTASH_SEEN_SAMPLE);
	return lower_32_bits(xxh64_digest(&state));
}

/*
 * Whether @a and @b hold the same @len bytes: memcmp() without the order,
 * eight words per step with one branch.  Line info and jited line info of
 * a large program are tens of KiB compared at every load.
 */
VISIBLE_IF_KUNIT bool bpfstash_bytes_equal(const void *a, const void *b, size_t len)
{
	const unsigned long *x = a, *y = b;
	size_t i, n = len / (8 * sizeof(long)) * 8;

	for (i = 0; i < n; i += 8) {
		if ((get_unaligned(x + i) ^ get_unaligned(y + i)) |
		    (get_unaligned(x + i + 1) ^ get_unaligned(y + i + 1)) |
		    (get_unaligned(x + i + 2) ^ get_unaligned(y + i + 2)) |
		    (get_unaligned(x + i + 3) ^ get_unaligned(y + i + 3)) |
		    (get_unaligned(x + i + 4) ^ get_unaligned(y + i + 4)) |
		    (get_unaligned(x + i + 5) ^ get_unaligned(y + i + 5)) |
		    (get_unaligned(x + i + 6) ^ get_unaligned(y + i + 6)) |
		    (get_unaligned(x + i + 7) ^ get_unaligned(y + i + 7)))
			return false;
	}
	return !memcmp(x + n, y + n, len - n * sizeof(long));
}

/* The stored blob of @size bytes that @key picks, with a reference, or NULL. */
struct bpfstash_blob *bpfstash_blob_candidate(u32 size, u32 key)
{
	struct bpfstash_blob *b;

	rcu_read_lock();
	b = rhashtable_lookup(&bpfstash_store.blobs_seen, &key, bpfstash_blob_seen_params);
	if (b && (b->size != size || !refcount_inc_not_zero(&b->ref)))
		b = NULL;
	rcu_read_unlock();
	return b;
}

/* Whether blob @b holds the @b->size bytes at @data. */
VISIBLE_IF_KUNIT bool bpfstash_blob_equal(const struct bpfstash_blob *b, const void *data)
{
	u32 off, n;
	void *p;

	for_each_blob_piece(b, off, p, n)
		if (!bpfstash_bytes_equal(p, data + off, n))
			return false;
	return true;
}

/* A stored blob with exactly @size bytes @data, with a reference, or NULL. */
static struct bpfstash_blob *bpfstash_blob_seen(const void *data, u32 size, u32 key)
{
	struct bpfstash_blob *b = bpfstash_blob_candidate(size, key);

	if (b && !bpfstash_blob_equal(b, data)) {
		bpfstash_blob_put(b);
		b = NULL;
	}
	return b;
}

/* Under bpfstash_store.lock, as @b is listed: make it findable by its bytes. */
static void bpfstash_blob_see(struct bpfstash_blob *b)
{
	lockdep_assert_held(&bpfstash_store.lock);
	b->seen = b->seen_key &&
		!rhashtable_lookup_insert_fast(&bpfstash_store.blobs_seen, &b->seen_node,
					       bpfstash_blob_seen_params);
}

/* Under bpfstash_store.lock, as @b is unlisted. */
static void bpfstash_blob_unsee(struct bpfstash_blob *b)
{
	lockdep_assert_held(&bpfstash_store.lock);
	if (b->seen)
		rhashtable_remove_fast(&bpfstash_store.blobs_seen, &b->seen_node,
				       bpfstash_blob_seen_params);
	b->seen = false;
}

/**
 * bpfstash_blob_find - the stored blob with the bytes of a snapshot's blob
 * @b: the snapshot's blob, hashed
 *
 * Under bpfstash_store.lock, where no stored blob is dying.
 *
 * Return: the stored blob with @b's digest and size, with a reference, or NULL.
 */
struct bpfstash_blob *bpfstash_blob_find(const struct bpfstash_blob *b)
{
	struct bpfstash_blob *old;

	lockdep_assert_held(&bpfstash_store.lock);
	old = rhashtable_lookup_fast(&bpfstash_store.blobs, b->digest,
				     bpfstash_blob_params);
	if (!old || old->size != b->size)
		return NULL;
	refcount_inc(&old->ref);
	return old;
}

/**
 * bpfstash_blob_list - store a snapshot's new blob
 * @b: the blob, hashed, not found stored (bpfstash_blob_find())
 *
 * Under bpfstash_store.lock.  The caller accounts its bytes.
 *
 * Return: 0, or the rhashtable's error.
 */
int bpfstash_blob_list(struct bpfstash_blob *b)
{
	int err;

	lockdep_assert_held(&bpfstash_store.lock);
	err = rhashtable_insert_fast(&bpfstash_store.blobs, &b->node, bpfstash_blob_params);
	if (err)
		return err;
	b->listed = true;
	bpfstash_blob_see(b);
	bpfstash_store.nr_blobs++;
	return 0;
}

void bpfstash_blob_put(struct bpfstash_blob *b)
{
	if (!b)
		return;
	if (!b->listed) {
		/* A snapshot's own blob, never shown to anyone. */
		bpfstash_blob_free(b);
		return;
	}
	if (!refcount_dec_and_mutex_lock(&b->ref, &bpfstash_store.lock))
		return;
	rhashtable_remove_fast(&bpfstash_store.blobs, &b->node, bpfstash_blob_params);
	bpfstash_blob_unsee(b);
	b->listed = false;
	atomic64_sub(bpfstash_blob_bytes(b), &bpfstash_store.bytes);
	bpfstash_store.nr_blobs--;
	mutex_unlock(&bpfstash_store.lock);
	/*
	 * Lockless lookups may still see the struct, never the pieces.  The
	 * rcu_head's kvfree_rcu() never waits for a grace period: this runs
	 * under the image hooks' locks too.
	 */
	bpfstash_blob_free_pieces(b);
	kvfree_rcu(b, rcu);
}

/*
 * The blob of @size bytes @data: a stored one with the same bytes (counted
 * in @reused), or a new copy, hashed.
 */
struct bpfstash_blob *bpfstash_blob_new(const void *data, u32 size,
					atomic64_t *reused,
					struct bpfstash_hash_acct *acct)
{
	struct bpfstash_blob *b;
	u32 key;

	if (!size)
		return NULL;
	key = bpfstash_blob_seen_key(data, size);
	b = bpfstash_blob_seen(data, size, key);
	if (b) {
		atomic64_inc(reused);
		return b;
	}
	b = bpfstash_blob_alloc(size);
	if (!b)
		return ERR_PTR(-ENOMEM);
	bpfstash_blob_write(b, 0, data, size);
	b->seen_key = key;
	if (bpfstash_blob_digest(b, acct)) {
		bpfstash_blob_put(b);
		return ERR_PTR(-EINVAL);
	}
	return b;
}

/*
 * The BTF of a program: shared by all the programs of an object, and the
 * same bytes again when the object is loaded again, so usually a stored
 * blob (counted in btf_hash_cached).
 */
struct bpfstash_blob *bpfstash_btf_blob(const struct btf *btf,
					struct bpfstash_hash_acct *acct)
{
	const void *data;
	u32 size;

	if (!btf)
		return NULL;
	data = btf_get_raw_data(btf, &size);
	return bpfstash_blob_new(data, size, &bpfstash_store.btf_hash_cached, acct);
}

int __init bpfstash_blobs_init(void)
{
	int err;

	err = rhashtable_init(&bpfstash_store.blobs, &bpfstash_blob_params);
	if (err)
		return err;
	err = rhashtable_init(&bpfstash_store.blobs_seen, &bpfstash_blob_seen_params);
	if (err)
		rhashtable_destroy(&bpfstash_store.blobs);
	return err;
}
