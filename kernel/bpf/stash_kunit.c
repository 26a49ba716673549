// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the pure logic of the bpfstash store: the digest, the
 * canonical serialisation behind an entry's name, the limits, and blob
 * deduplication and entry lifetime in the store.  Included from stash.c so
 * that the tests reach its static functions.
 *
 * The expected hashes were computed independently, with Python's hashlib
 * (sha256) over the serialisation documented in
 * include/uapi/linux/bpfstash.h.
 */
#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/bpf_verifier.h>
#include <linux/completion.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>

static void bpfstash_test_digest(struct kunit *test)
{
	/* FIPS 180-4's "abc" example, and the digest of nothing. */
	static const u8 abc[BPFSTASH_DIGEST_SIZE] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
		0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
		0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	static const u8 empty[BPFSTASH_DIGEST_SIZE] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
		0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
		0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
	};
	u8 out[BPFSTASH_DIGEST_SIZE];

	KUNIT_EXPECT_EQ(test, bpfstash_digest("abc", 3, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, abc, sizeof(abc));
	KUNIT_EXPECT_EQ(test, bpfstash_digest(NULL, 0, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, empty, sizeof(empty));
}

/*
 * Bytes held whole are hashed BPFSTASH_HASH_CHUNK at a time: the digest is
 * the one a single call over all of them gives, at and around the chunk's
 * multiples.
 */
static void bpfstash_test_digest_chunks(struct kunit *test)
{
	static const u32 sizes[] = { BPFSTASH_HASH_CHUNK - 1, BPFSTASH_HASH_CHUNK,
				     BPFSTASH_HASH_CHUNK + 1, 3 * BPFSTASH_HASH_CHUNK + 77 };
	u8 want[BPFSTASH_DIGEST_SIZE], got[BPFSTASH_DIGEST_SIZE];
	struct crypto_shash *tfm;
	u32 i, size;
	u8 *buf;

	tfm = crypto_alloc_shash("sha256", 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tfm));
	buf = kunit_kmalloc(test, sizes[ARRAY_SIZE(sizes) - 1], GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < sizes[ARRAY_SIZE(sizes) - 1]; i++)
		buf[i] = i * 131 + (i >> 8);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size = sizes[i];
		KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, buf, size, want), 0);
		KUNIT_ASSERT_EQ(test, bpfstash_digest(buf, size, got), 0);
		KUNIT_EXPECT_MEMEQ_MSG(test, got, want, sizeof(want), "size %u", size);
	}
	crypto_free_shash(tfm);
}

/* The vector: two functions, a 6-byte image, a 3-byte "BTF". */
struct bpfstash_test_vector {
	struct bpfstash_content content;
	u8 funcs[80];
	struct bpfstash_blob *blobs[BPFSTASH_NR_BLOBS];
};

static struct bpfstash_blob *bpfstash_test_blob(struct kunit *test,
						const void *data, u32 size)
{
	struct bpfstash_blob *b;

	b = kunit_kzalloc(test, struct_size(b, data, size), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	refcount_set(&b->ref, 1);
	b->size = size;
	memcpy(b->data, data, size);
	KUNIT_ASSERT_EQ(test, bpfstash_digest(b->data, size, b->digest), 0);
	return b;
}

static void bpfstash_test_vector_init(struct kunit *test,
				      struct bpfstash_test_vector *v)
{
	static const u8 image[] = { 0x55, 0x48, 0x89, 0xe5, 0xc9, 0xc3 };
	struct bpfstash_func *f = (struct bpfstash_func *)v->funcs;
	int i;

	memset(v, 0, sizeof(*v));
	v->content = (struct bpfstash_content){
		.version = cpu_to_le32(3), .machine = cpu_to_le16(62),
		.prog_type = cpu_to_le32(6), .nr_funcs = cpu_to_le32(2),
		.funcs_size = cpu_to_le32(80), .jited_len = cpu_to_le32(6),
		.line_info_rec_size = cpu_to_le32(16), .func_info_rec_size = cpu_to_le32(8),
		.btf_size = cpu_to_le32(3), .xlated_len = cpu_to_le32(16),
		.verified_insns = cpu_to_le32(2), .gpl_compatible = cpu_to_le32(1),
	};
	for (i = 0; i < BPFSTASH_TAG_SIZE; i++) {
		v->content.tag[i] = i + 1;
		f[0].tag[i] = i + 1;
		f[1].tag[i] = i + 9;
	}
	strscpy(v->content.name, "kunit", sizeof(v->content.name));
	f[0].addr = cpu_to_le64(0xffffffffc0001000ULL);
	f[0].len = cpu_to_le32(4);
	f[1].addr = cpu_to_le64(0xffffffffc0002000ULL);
	f[1].len = cpu_to_le32(2);
	f[1].offset = cpu_to_le32(4);
	f[1].name_off = cpu_to_le32(7);
	memcpy(f + 2, "f_main\0f_sub\0", 13);
	v->blobs[BPFSTASH_BLOB_JITED] = bpfstash_test_blob(test, image, sizeof(image));
	v->blobs[BPFSTASH_BLOB_BTF] = bpfstash_test_blob(test, "abc", 3);
}

static void bpfstash_test_content_hash(struct kunit *test)
{
	static const u8 want[BPFSTASH_HASH_SIZE] = {
		0x19, 0x13, 0xe9, 0xe7, 0xaf, 0xb2, 0xff, 0x15, 0xab, 0xcc,
		0x72, 0x55, 0x45, 0xb7, 0xb4, 0x84, 0x9f, 0xfe, 0x17, 0xbd,
	};
	struct bpfstash_hash_acct acct = {};
	struct bpfstash_test_vector v;
	u8 hash[BPFSTASH_HASH_SIZE];

	bpfstash_test_vector_init(test, &v);
	KUNIT_EXPECT_EQ(test, bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, &acct),
			0);
	KUNIT_EXPECT_MEMEQ(test, hash, want, sizeof(want));
	/* What it hashed: the domain, the content, the funcs, the digests. */
	KUNIT_EXPECT_EQ(test, acct.bytes,
			9 + sizeof(v.content) + le32_to_cpu(v.content.funcs_size) +
			BPFSTASH_NR_BLOBS * BPFSTASH_DIGEST_SIZE);
}

/*
 * The serialisation written out, with an image's calls blob: every blob's
 * digest, in order, that of nothing for an empty one.
 */
static void bpfstash_test_content_hash_calls(struct kunit *test)
{
	static const char domain[] = BPFSTASH_HASH_DOMAIN;
	static const char calls[] = "calls";
	struct bpfstash_hash_acct acct = {};
	struct bpfstash_test_vector v;
	u8 hash[BPFSTASH_HASH_SIZE], want[BPFSTASH_DIGEST_SIZE];
	u8 buf[sizeof(domain) + sizeof(v.content) + sizeof(v.funcs) +
	       BPFSTASH_NR_BLOBS * BPFSTASH_DIGEST_SIZE];
	size_t at = 0;
	int i;

	bpfstash_test_vector_init(test, &v);
	v.blobs[BPFSTASH_BLOB_CALLS] = bpfstash_test_blob(test, calls, sizeof(calls));
	KUNIT_ASSERT_EQ(test, bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash,
						    &acct), 0);
	/* The serialisation, written out: all seven digests. */
	memcpy(buf + at, domain, sizeof(domain));
	at += sizeof(domain);
	memcpy(buf + at, &v.content, sizeof(v.content));
	at += sizeof(v.content);
	memcpy(buf + at, v.funcs, le32_to_cpu(v.content.funcs_size));
	at += le32_to_cpu(v.content.funcs_size);
	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		KUNIT_ASSERT_EQ(test, bpfstash_digest(v.blobs[i] ? v.blobs[i]->data : NULL,
						      v.blobs[i] ? v.blobs[i]->size : 0,
						      buf + at), 0);
		at += BPFSTASH_DIGEST_SIZE;
	}
	KUNIT_ASSERT_EQ(test, bpfstash_digest(buf, at, want), 0);
	KUNIT_EXPECT_MEMEQ(test, hash, want, BPFSTASH_HASH_SIZE);
	KUNIT_EXPECT_EQ(test, acct.bytes, at);
}

/* Every byte that is content changes the name: flip each one in turn. */
static void bpfstash_test_hash_covers_content(struct kunit *test)
{
	struct bpfstash_test_vector v;
	u8 base[BPFSTASH_HASH_SIZE], hash[BPFSTASH_HASH_SIZE];
	u8 *p;
	size_t i;
	int b;

	bpfstash_test_vector_init(test, &v);
	bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, base, NULL);

	p = (u8 *)&v.content;
	for (i = 0; i < sizeof(v.content); i++) {
		/* funcs_size says how much of v.funcs is read: below. */
		if (i >= offsetof(struct bpfstash_content, funcs_size) &&
		    i < offsetofend(struct bpfstash_content, funcs_size))
			continue;
		p[i] ^= 0x01;
		bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, NULL);
		KUNIT_EXPECT_MEMNEQ_MSG(test, hash, base, sizeof(hash),
					"content byte %zu not covered", i);
		p[i] ^= 0x01;
	}
	/* Only ever smaller than v.funcs: a larger size would read past it. */
	v.content.funcs_size = cpu_to_le32(sizeof(v.funcs) - 8);
	bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, NULL);
	KUNIT_EXPECT_MEMNEQ_MSG(test, hash, base, sizeof(hash), "funcs_size not covered");
	v.content.funcs_size = cpu_to_le32(sizeof(v.funcs));
	for (i = 0; i < sizeof(v.funcs); i++) {
		v.funcs[i] ^= 0x80;
		bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, NULL);
		KUNIT_EXPECT_MEMNEQ_MSG(test, hash, base, sizeof(hash),
					"funcs byte %zu not covered", i);
		v.funcs[i] ^= 0x80;
	}
	for (b = 0; b < BPFSTASH_NR_BLOBS; b++) {
		struct bpfstash_blob *saved = v.blobs[b];

		/* An empty blob and a one-byte blob must differ too. */
		v.blobs[b] = saved ? NULL : bpfstash_test_blob(test, "", 1);
		bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, NULL);
		KUNIT_EXPECT_MEMNEQ_MSG(test, hash, base, sizeof(hash),
					"blob %d not covered", b);
		v.blobs[b] = saved;
	}
	bpfstash_content_hash(&v.content, v.funcs, 0, v.blobs, hash, NULL);
	KUNIT_EXPECT_MEMEQ(test, hash, base, sizeof(hash));
}

struct bpfstash_limits_case {
	const char *desc;
	u64 bytes, add, max_bytes;
	u32 entries, max_entries;
	bool over;
};

static const struct bpfstash_limits_case bpfstash_limits_cases[] = {
	{ "empty store, small entry", 0, 100, 1000, 0, 10, false },
	{ "exactly fills size", 900, 100, 1000, 9, 10, false },
	{ "one byte over size", 901, 100, 1000, 9, 10, true },
	{ "entry larger than size", 0, 1001, 1000, 0, 10, true },
	{ "count reached", 0, 1, 1000, 10, 10, true },
	{ "count one below", 0, 1, 1000, 9, 10, false },
	{ "size=0 refuses all", 0, 1, 0, 0, 10, true },
	{ "max_entries=0 refuses all", 0, 1, 1000, 0, 0, true },
	{ "no overflow near U64_MAX", U64_MAX - 10, 100, U64_MAX, 0, 10, true },
	{ "huge limit, huge entry", 0, U64_MAX, U64_MAX, 0, 10, false },
};

static void bpfstash_limits_desc(const struct bpfstash_limits_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bpfstash_limits, bpfstash_limits_cases, bpfstash_limits_desc);

static void bpfstash_test_limits(struct kunit *test)
{
	const struct bpfstash_limits_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, bpfstash_over_limits(c->bytes, c->add, c->max_bytes,
						   c->entries, c->max_entries),
			c->over);
}

/*
 * The store itself: a fake program per entry, so that the tests do not
 * depend on the verifier or the JIT.  They run at boot, before userspace
 * can start the store, and leave it stopped and empty; if bpfstash=on
 * started it, they skip rather than drop what it holds.
 */
struct bpfstash_test_prog {
	struct bpf_prog prog;
	struct bpf_prog_aux aux;
};

static struct bpf_prog *bpfstash_test_prog(struct kunit *test)
{
	struct bpfstash_test_prog *p;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->prog.aux = &p->aux;
	return &p->prog;
}

/* An unlisted entry with its own copies of @image and @btf. */
static struct bpfstash_entry *bpfstash_test_entry(struct kunit *test,
						  const char *image, const char *btf)
{
	struct bpfstash_entry *e;
	int i;

	e = bpfstash_entry_alloc();
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->blobs[BPFSTASH_BLOB_JITED] = bpfstash_blob_new(image, strlen(image),
							  &bpfstash_store.blob_dedup, NULL);
	e->blobs[BPFSTASH_BLOB_BTF] = bpfstash_blob_new(btf, strlen(btf),
							&bpfstash_store.btf_hash_cached, NULL);
	for (i = 0; i < BPFSTASH_NR_BLOBS; i++)
		KUNIT_ASSERT_FALSE(test, IS_ERR(e->blobs[i]));
	e->content.jited_len = cpu_to_le32(strlen(image));
	e->content.btf_size = cpu_to_le32(strlen(btf));
	bpfstash_content_hash(&e->content, NULL, 0, e->blobs, e->hash, NULL);
	return e;
}

static void bpfstash_test_settle(void)
{
	bpfstash_store_drain();
	rcu_barrier();	/* the blobs' kvfree_rcu */
}

static void bpfstash_test_store(struct kunit *test)
{
	struct bpf_prog *p1 = bpfstash_test_prog(test);
	struct bpf_prog *p2 = bpfstash_test_prog(test);
	struct bpf_prog *p3 = bpfstash_test_prog(test);
	struct bpfstash_entry *e1, *e2, *e3, *found, *stored;
	u64 added;
	struct bpfstash_blob *b;
	struct bpfstash_hash_acct acct = {};
	struct bpfstash_stats st;
	u64 dedup = atomic64_read(&bpfstash_store.blob_dedup);
	u64 one_btf;
	int err;

	if (bpfstash_store_running())
		kunit_skip(test, "the store was started at boot (bpfstash=on)");
	KUNIT_ASSERT_EQ(test, bpfstash_store_activate(1 << 20, 2), 0);
	KUNIT_EXPECT_EQ(test, bpfstash_store_activate(1 << 20, 2), -EBUSY);

	/* Two programs of one object: different images, one BTF. */
	e1 = bpfstash_test_entry(test, "image one", "shared btf");
	e2 = bpfstash_test_entry(test, "image two", "shared btf");
	KUNIT_ASSERT_EQ(test, bpfstash_store_insert(&p1->aux->stash, false, e1, &stored,
						    &added), 0);
	KUNIT_ASSERT_EQ(test, bpfstash_store_insert(&p2->aux->stash, false, e2, &stored,
						    &added), 0);
	KUNIT_EXPECT_PTR_EQ(test, e1->blobs[BPFSTASH_BLOB_BTF], e2->blobs[BPFSTASH_BLOB_BTF]);
	KUNIT_EXPECT_EQ(test, refcount_read(&e1->blobs[BPFSTASH_BLOB_BTF]->ref), 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&bpfstash_store.blob_dedup), dedup + 1);
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(p1->aux->stash), e1);

	bpfstash_store_get_stats(&st);
	KUNIT_EXPECT_EQ(test, st.entries, 2);
	KUNIT_EXPECT_EQ(test, st.live_entries, 2);
	KUNIT_EXPECT_EQ(test, st.blobs, 3);
	one_btf = bpfstash_blob_bytes(e1->blobs[BPFSTASH_BLOB_BTF]);
	/* The shared BTF is counted once. */
	KUNIT_EXPECT_EQ(test, st.bytes,
			bpfstash_entry_bytes(e1) + bpfstash_entry_bytes(e2) +
			bpfstash_blob_bytes(e1->blobs[BPFSTASH_BLOB_JITED]) +
			bpfstash_blob_bytes(e2->blobs[BPFSTASH_BLOB_JITED]) + one_btf);

	/*
	 * Stored bytes are found again by their bytes, not hashed again:
	 * the tracepoint's account of a load says so.
	 */
	b = bpfstash_blob_new("shared btf", 10, &bpfstash_store.btf_hash_cached, &acct);
	KUNIT_EXPECT_PTR_EQ(test, b, e1->blobs[BPFSTASH_BLOB_BTF]);
	KUNIT_EXPECT_EQ(test, refcount_read(&e1->blobs[BPFSTASH_BLOB_BTF]->ref), 3);
	KUNIT_EXPECT_EQ(test, acct.bytes, 0);
	bpfstash_blob_put(b);
	/* Other bytes of the same size are not. */
	b = bpfstash_blob_new("shared BTF", 10, &bpfstash_store.btf_hash_cached, &acct);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(b));
	KUNIT_EXPECT_FALSE(test, b->listed);
	KUNIT_EXPECT_EQ(test, acct.bytes, 10);
	bpfstash_blob_put(b);

	/* max_entries=2: refused, and the snapshot is untouched. */
	e3 = bpfstash_test_entry(test, "image three", "shared btf");
	err = bpfstash_store_insert(&p3->aux->stash, false, e3, &stored, &added);
	KUNIT_EXPECT_EQ(test, err, -ENOSPC);
	/* Its BTF was found by its bytes: the stored blob, one more reference. */
	KUNIT_EXPECT_PTR_EQ(test, e3->blobs[BPFSTASH_BLOB_BTF], e1->blobs[BPFSTASH_BLOB_BTF]);
	KUNIT_EXPECT_EQ(test, refcount_read(&e1->blobs[BPFSTASH_BLOB_BTF]->ref), 3);
	KUNIT_EXPECT_FALSE(test, e3->blobs[BPFSTASH_BLOB_JITED]->listed);
	bpfstash_entry_free(e3);
	KUNIT_EXPECT_EQ(test, refcount_read(&e1->blobs[BPFSTASH_BLOB_BTF]->ref), 2);

	/* A program has one entry. */
	e3 = bpfstash_test_entry(test, "image one again", "shared btf");
	bpfstash_store_set_limits(1 << 20, 10);
	KUNIT_EXPECT_EQ(test, bpfstash_store_insert(&p1->aux->stash, false, e3, &stored,
						    &added), -EEXIST);
	bpfstash_entry_free(e3);

	/* Lookup by name, and deletion only once unloaded. */
	found = bpfstash_entry_lookup(e1->hash);
	KUNIT_EXPECT_PTR_EQ(test, found, e1);
	if (found)
		bpfstash_entry_put(found);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), -EBUSY);
	__bpfstash_prog_unload(p1);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(p1->aux->stash));
	KUNIT_EXPECT_FALSE(test, bpfstash_entry_live(e1));
	KUNIT_EXPECT_NE(test, e1->state.unload_time, 0);

	/* Loaded again at the same address, identical: the same entry, live. */
	e3 = bpfstash_test_entry(test, "image one", "shared btf");
	KUNIT_EXPECT_EQ(test, bpfstash_store_insert(&p3->aux->stash, false, e3, &stored,
						    &added), 0);
	KUNIT_EXPECT_PTR_EQ(test, stored, e1);
	bpfstash_entry_free(e3);
	KUNIT_EXPECT_TRUE(test, bpfstash_entry_live(e1));
	KUNIT_EXPECT_EQ(test, e1->state.unload_time, 0);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), -EBUSY);
	__bpfstash_prog_unload(p3);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), 0);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), -ENOENT);
	KUNIT_EXPECT_NULL(test, bpfstash_entry_lookup(e1->hash));

	/* Stopping drops the rest, including the loaded program's entry. */
	bpfstash_store_deactivate();
	/* The fake program is not in the IDR: let go of it by hand. */
	__bpfstash_prog_unload(p2);
	bpfstash_test_settle();
	bpfstash_store_get_stats(&st);
	KUNIT_EXPECT_EQ(test, st.entries, 0);
	KUNIT_EXPECT_EQ(test, st.blobs, 0);
	KUNIT_EXPECT_EQ(test, st.bytes, 0);
	KUNIT_EXPECT_EQ(test, st.live_entries, 0);
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&bpfstash_active));
}

/*
 * The generation the index file carries changes with every change it
 * shows, and with nothing else; bpfstash_store_entries() takes the
 * entries with the generation they are of.
 */
static void bpfstash_test_generation(struct kunit *test)
{
	struct bpf_prog *p1 = bpfstash_test_prog(test);
	struct bpf_prog *p2 = bpfstash_test_prog(test);
	struct bpfstash_entry *e1, *e2, *stored, **v;
	u64 gen, g, added;
	u32 nr;

	if (bpfstash_store_running())
		kunit_skip(test, "the store was started at boot (bpfstash=on)");
	KUNIT_ASSERT_EQ(test, bpfstash_store_activate(1 << 20, 1), 0);
	gen = bpfstash_store_generation();

	e1 = bpfstash_test_entry(test, "gen one", "gen btf");
	KUNIT_ASSERT_EQ(test, bpfstash_store_insert(&p1->aux->stash, false, e1, &stored,
						    &added), 0);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 1);
	v = bpfstash_store_entries(&nr, &g);
	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_EXPECT_EQ(test, nr, 1);
	KUNIT_EXPECT_PTR_EQ(test, v[0], e1);
	KUNIT_EXPECT_EQ(test, g, gen + 1);
	bpfstash_entries_put(v, nr);

	/* Refused (max_entries=1): nothing changed. */
	e2 = bpfstash_test_entry(test, "gen two", "gen btf");
	KUNIT_EXPECT_EQ(test, bpfstash_store_insert(&p2->aux->stash, false, e2, &stored,
						    &added), -ENOSPC);
	bpfstash_entry_free(e2);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 1);

	__bpfstash_prog_unload(p1);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 2);
	e2 = bpfstash_test_entry(test, "gen one", "gen btf");
	KUNIT_EXPECT_EQ(test, bpfstash_store_insert(&p2->aux->stash, false, e2, &stored,
						    &added), 0);
	KUNIT_EXPECT_PTR_EQ(test, stored, e1);
	bpfstash_entry_free(e2);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 3);
	__bpfstash_prog_unload(p2);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 4);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), 0);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 5);
	KUNIT_EXPECT_EQ(test, bpfstash_entry_delete(e1->hash), -ENOENT);
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 5);

	v = bpfstash_store_entries(&nr, &g);
	KUNIT_EXPECT_EQ(test, nr, 0);
	KUNIT_EXPECT_EQ(test, g, gen + 5);
	bpfstash_entries_put(v, nr);

	bpfstash_store_deactivate();
	KUNIT_EXPECT_EQ(test, bpfstash_store_generation(), gen + 6);
	bpfstash_test_settle();
}

/*
 * The key that finds a blob by its bytes only samples them: bytes that
 * differ outside the sample give the same key, and must still never be
 * taken for the stored blob.
 */
static void bpfstash_test_seen_sample(struct kunit *test)
{
	const u32 size = 4096;
	struct bpf_prog *p = bpfstash_test_prog(test);
	struct bpfstash_entry *e, *stored;
	u64 added;
	struct bpfstash_blob *b;
	u8 *one, *other;
	int i;

	one = kunit_kmalloc(test, size, GFP_KERNEL);
	other = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, one);
	KUNIT_ASSERT_NOT_NULL(test, other);
	for (i = 0; i < size; i++)
		one[i] = i * 7;
	memcpy(other, one, size);
	other[1000] ^= 1;	/* outside the head, middle and tail samples */
	KUNIT_ASSERT_EQ(test, bpfstash_blob_seen_key(one, size),
			bpfstash_blob_seen_key(other, size));

	if (bpfstash_store_running())
		kunit_skip(test, "the store was started at boot (bpfstash=on)");
	KUNIT_ASSERT_EQ(test, bpfstash_store_activate(1 << 20, 10), 0);
	e = bpfstash_entry_alloc();
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->blobs[BPFSTASH_BLOB_BTF] = bpfstash_blob_new(one, size,
							&bpfstash_store.btf_hash_cached, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(e->blobs[BPFSTASH_BLOB_BTF]));
	e->content.btf_size = cpu_to_le32(size);
	bpfstash_content_hash(&e->content, NULL, 0, e->blobs, e->hash, NULL);
	KUNIT_ASSERT_EQ(test, bpfstash_store_insert(&p->aux->stash, false, e, &stored, &added), 0);
	KUNIT_EXPECT_TRUE(test, e->blobs[BPFSTASH_BLOB_BTF]->seen);

	/* The same bytes: the stored blob. */
	b = bpfstash_blob_new(one, size, &bpfstash_store.btf_hash_cached, NULL);
	KUNIT_EXPECT_PTR_EQ(test, b, e->blobs[BPFSTASH_BLOB_BTF]);
	bpfstash_blob_put(b);

	/* Same key, other bytes: a copy of its own, hashed. */
	b = bpfstash_blob_new(other, size, &bpfstash_store.btf_hash_cached, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(b));
	KUNIT_EXPECT_PTR_NE(test, b, e->blobs[BPFSTASH_BLOB_BTF]);
	KUNIT_EXPECT_FALSE(test, b->listed);
	KUNIT_EXPECT_TRUE(test, bpfstash_blob_equal(b, other));
	KUNIT_EXPECT_NE(test, memcmp(b->digest, e->blobs[BPFSTASH_BLOB_BTF]->digest,
				     BPFSTASH_DIGEST_SIZE), 0);
	bpfstash_blob_put(b);

	bpfstash_store_deactivate();
	__bpfstash_prog_unload(p);
	bpfstash_test_settle();
}

/*
 * A program's lines and its functions' spans, read from the program: what
 * bpfstash_snapshot_funcs() gathers on its way for the hook.
 */
static void bpfstash_prog_lines(const struct bpf_prog *prog, u32 nr_funcs,
				struct bpfstash_span *spans, struct bpfstash_lines *l)
{
	u32 i;

	for (i = 0; i < nr_funcs; i++) {
		const struct bpf_prog *f = bpfstash_func(prog, i);

		spans[i] = (struct bpfstash_span){
			.lo = (unsigned long)f->bpf_func,
			.len = f->jited_len,
			.first_line = f->aux->linfo_idx,
		};
	}
	*l = (struct bpfstash_lines){
		.jited_linfo = prog->aux->jited_linfo,
		.spans = spans,
		.nr_funcs = nr_funcs,
		.nr = prog->aux->nr_linfo,
	};
}

/* bpfstash_jited_lines() in a pass of its own. */
static int bpfstash_test_lines(const struct bpfstash_lines *l, u32 first, u32 n,
			       u64 *out, const u64 *cmp)
{
	struct bpfstash_line_walk w;

	bpfstash_line_walk_init(&w, l);
	return bpfstash_jited_lines(&w, first, n, out, cmp);
}

/*
 * Jited line info, computed from a program of three functions: the key
 * taken from the sample alone is the key of all the records, and the
 * records compare equal to themselves and unequal to any other.  An odd
 * number of lines puts the middle sample across a record.
 */
static void bpfstash_test_jited_lines(struct kunit *test)
{
	static const u32 starts[] = { 0, 40, 77 }, nrs[] = { 101, 20 };
	struct bpfstash_span spans[ARRAY_SIZE(starts)];
	struct bpf_prog *progs[ARRAY_SIZE(starts)];
	struct bpfstash_lines l;
	struct bpfstash_jited_line *jl;
	struct bpfstash_blob *b;
	u32 k, i, f;

	for (f = 0; f < ARRAY_SIZE(starts); f++) {
		progs[f] = bpfstash_test_prog(test);
		progs[f]->aux->linfo_idx = starts[f];
		progs[f]->bpf_func = (void *)(-0x40000000UL + f * 0x10000);
		progs[f]->jited_len = 0x1000;
	}
	progs[0]->aux->func = progs;
	progs[0]->aux->func_cnt = ARRAY_SIZE(starts);

	for (k = 0; k < ARRAY_SIZE(nrs); k++) {
		u32 nr = nrs[k], size = nr * sizeof(*jl);
		void **addrs = kunit_kcalloc(test, nr, sizeof(*addrs), GFP_KERNEL);
		u32 key;

		jl = kunit_kcalloc(test, nr, sizeof(*jl), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, addrs);
		KUNIT_ASSERT_NOT_NULL(test, jl);
		for (i = 0, f = 0; i < nr; i++) {
			while (f + 1 < ARRAY_SIZE(starts) && i >= starts[f + 1])
				f++;
			addrs[i] = (void *)((unsigned long)progs[f]->bpf_func + i * 3);
		}
		progs[0]->aux->jited_linfo = addrs;
		progs[0]->aux->nr_linfo = nr;
		bpfstash_prog_lines(progs[0], ARRAY_SIZE(starts), spans, &l);

		KUNIT_ASSERT_EQ(test, bpfstash_test_lines(&l, 0, nr,
							  (u64 *)jl, NULL), 0);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(jl[nr - 1].func), nr > starts[2] ? 2 : 0);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(jl[nr - 1].off), (nr - 1) * 3);
		KUNIT_ASSERT_EQ(test, bpfstash_jited_lines_key(&l, &key), 0);
		KUNIT_EXPECT_EQ(test, key, bpfstash_blob_seen_key(jl, size));
		KUNIT_EXPECT_EQ(test, bpfstash_test_lines(&l, 0, nr,
							  NULL, (u64 *)jl), 0);

		/*
		 * One record off, in either field, at every position of a
		 * step of four, at the ends of each function and in the tail
		 * of a function's last step.
		 */
		for (i = 0; i < nr; i++) {
			if (i > 8 && i + 4 < nr && i != nr / 2 &&
			    (i + 1 < starts[1] || i > starts[1] + 4) &&
			    (i + 1 < starts[2] || i > starts[2] + 4))
				continue;
			jl[i].off ^= cpu_to_le32(1);
			KUNIT_EXPECT_EQ_MSG(test, bpfstash_test_lines(&l,
								      0, nr, NULL, (u64 *)jl), 1,
					    "offset of line %u of %u", i, nr);
			jl[i].off ^= cpu_to_le32(1);
			jl[i].func ^= cpu_to_le32(1);
			KUNIT_EXPECT_EQ_MSG(test, bpfstash_test_lines(&l,
								      0, nr, NULL, (u64 *)jl), 1,
					    "function of line %u of %u", i, nr);
			jl[i].func ^= cpu_to_le32(1);
		}
		KUNIT_EXPECT_EQ(test, bpfstash_test_lines(&l, 0, nr,
							  NULL, (u64 *)jl), 0);
		/* A part of the lines, as a piece of a blob compares them. */
		KUNIT_EXPECT_EQ(test, bpfstash_test_lines(&l, 3, nr - 5,
							  NULL, (u64 *)(jl + 3)), 0);
		KUNIT_EXPECT_EQ(test, bpfstash_test_lines(&l, 3, nr - 5,
							  NULL, (u64 *)jl), 1);

		/* The same, into and against a blob held in pieces. */
		b = bpfstash_blob_alloc(size);
		KUNIT_ASSERT_NOT_NULL(test, b);
		if (size > 512)
			KUNIT_EXPECT_GT(test, b->nr_segs, 1);
		KUNIT_EXPECT_EQ(test, bpfstash_jited_lines_blob(&l, b, false), 0);
		KUNIT_EXPECT_TRUE(test, bpfstash_blob_equal(b, jl));
		KUNIT_EXPECT_EQ(test, bpfstash_jited_lines_blob(&l, b, true), 0);

		jl[nr / 3].off ^= cpu_to_le32(1);
		KUNIT_EXPECT_EQ(test, bpfstash_test_lines(&l, 0, nr,
							  NULL, (u64 *)jl), 1);
		bpfstash_blob_write(b, size - sizeof(*jl), &jl[nr / 3], sizeof(*jl));
		KUNIT_EXPECT_EQ(test, bpfstash_jited_lines_blob(&l, b, true), 1);
		bpfstash_blob_free(b);
	}
}

/*
 * bpfstash_bytes_equal() at every length up to a few steps of eight words,
 * from an odd address: equal bytes are equal, and one byte changed
 * anywhere, in a full step or in the tail, is seen.
 */
static void bpfstash_test_bytes_equal(struct kunit *test)
{
	const size_t max = 3 * 8 * sizeof(long) + 9;
	u8 *a = kunit_kmalloc(test, max + 1, GFP_KERNEL);
	u8 *b = kunit_kmalloc(test, max + 1, GFP_KERNEL);
	size_t len, i;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	for (i = 0; i <= max; i++)
		a[i] = i * 7 + 1;
	memcpy(b, a, max + 1);
	for (len = 0; len <= max; len++) {
		KUNIT_EXPECT_TRUE_MSG(test, bpfstash_bytes_equal(a + 1, b + 1, len),
				      "%zu equal bytes", len);
		for (i = 0; i < len; i++) {
			b[1 + i] ^= 0x80;
			KUNIT_EXPECT_FALSE_MSG(test, bpfstash_bytes_equal(a + 1, b + 1, len),
					       "byte %zu of %zu changed", i, len);
			b[1 + i] ^= 0x80;
		}
		/* A byte past the end does not count. */
		if (len < max) {
			b[1 + len] ^= 0x80;
			KUNIT_EXPECT_TRUE(test, bpfstash_bytes_equal(a + 1, b + 1, len));
			b[1 + len] ^= 0x80;
		}
	}
}

/*
 * Blobs in pieces: every byte where bpfstash_blob_at() says, pieces that
 * start at multiples of BPFSTASH_BLOB_PIECE_MIN, the digest of the bytes
 * and less than 64 bytes of waste besides the pointers; and a blob in one
 * allocation only when that costs no more.
 */
static void bpfstash_test_blob_pieces(struct kunit *test)
{
	static const u32 sizes[] = {
		1, 100, 255, 256, 808, 1106, 4095, 4096, 4097, 20252, 24664, 49328,
	};
	u8 digest[BPFSTASH_DIGEST_SIZE];
	struct bpfstash_blob *b;
	u32 k, off, n, prev;
	u8 *src;

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		u32 size = sizes[k], i;
		size_t hdr, whole;

		src = kunit_kmalloc(test, size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, src);
		for (i = 0; i < size; i++)
			src[i] = i * 13 + (i >> 8);
		b = bpfstash_blob_alloc(size);
		KUNIT_ASSERT_NOT_NULL(test, b);
		/* Written in odd lengths, across pieces. */
		for (off = 0; off < size; off += n) {
			n = min(size - off, 1001U);
			bpfstash_blob_write(b, off, src + off, n);
		}
		for (off = 0; off < size; off++) {
			const u8 *p = bpfstash_blob_at(b, off, &n);

			KUNIT_ASSERT_GE(test, n, 1);
			KUNIT_ASSERT_LE(test, off + n, size);
			KUNIT_ASSERT_EQ_MSG(test, *p, src[off], "size %u off %u", size, off);
		}
		prev = 0;
		for (off = 0; off < size; off += n) {
			bpfstash_blob_at(b, off, &n);
			if (off + n < size) {
				KUNIT_EXPECT_EQ(test, off % BPFSTASH_BLOB_PIECE_MIN, 0);
				KUNIT_EXPECT_TRUE(test, is_power_of_2(n));
			}
			prev++;
		}
		KUNIT_EXPECT_EQ(test, prev, max_t(u32, b->nr_segs, 1));

		whole = bpfstash_alloc_size(struct_size(b, data, size));
		if (b->nr_segs) {
			hdr = bpfstash_alloc_size(struct_size(b, seg, b->nr_segs));
			KUNIT_EXPECT_LE_MSG(test, bpfstash_blob_bytes(b), size + hdr + 63,
					    "size %u", size);
			KUNIT_EXPECT_LT(test, bpfstash_blob_bytes(b), whole);
		} else {
			KUNIT_EXPECT_EQ(test, bpfstash_blob_bytes(b), whole);
		}

		KUNIT_ASSERT_EQ(test, bpfstash_blob_digest(b, NULL), 0);
		KUNIT_ASSERT_EQ(test, bpfstash_digest(src, size, digest), 0);
		KUNIT_EXPECT_EQ(test, memcmp(b->digest, digest, sizeof(digest)), 0);
		KUNIT_EXPECT_TRUE(test, bpfstash_blob_equal(b, src));
		src[size - 1] ^= 1;
		KUNIT_EXPECT_FALSE(test, bpfstash_blob_equal(b, src));
		bpfstash_blob_free(b);
	}
	/*
	 * What a blob's pieces cost, counted as bpfstash_pieces_cost() does
	 * (a piece of a power of two of at least BPFSTASH_BLOB_PIECE_MIN
	 * bytes is its own kmalloc() bucket), equals what the allocator says
	 * of each piece, at every size up to the largest funcs file.
	 */
	for (n = BPFSTASH_BLOB_PIECE_MIN; n <= BPFSTASH_BLOB_PIECE_MAX; n *= 2)
		KUNIT_EXPECT_EQ(test, kmalloc_size_roundup(n), n);
	for (k = 1; k <= BPF_MAX_SUBPROGS * (32 + KSYM_NAME_LEN); k += 13) {
		size_t want = 0, whole = bpfstash_alloc_size(64 + k), got;
		u32 nr, pieces = 0;

		for (off = 0; off < k; off += n, pieces++) {
			n = bpfstash_blob_seg_len(k - off);
			want += kmalloc_size_roundup(n);
		}
		want += bpfstash_alloc_size(64 + pieces * sizeof(void *));
		got = bpfstash_pieces_cost(k, 64, &nr);
		if (whole <= want || pieces > U16_MAX) {
			KUNIT_EXPECT_EQ_MSG(test, got, whole, "size %u", k);
			KUNIT_EXPECT_EQ_MSG(test, nr, 0, "size %u", k);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, got, want, "size %u", k);
			KUNIT_EXPECT_EQ_MSG(test, nr, pieces, "size %u", k);
		}
	}

	/* The large program's line info: six 8 KiB pieces and a 176-byte tail. */
	BUILD_BUG_ON(BPFSTASH_BLOB_PIECE_MAX != 8192 && PAGE_SIZE == 4096);
	b = bpfstash_blob_alloc(49328);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, b->nr_segs, 7);
	KUNIT_EXPECT_LE(test, bpfstash_blob_bytes(b), 49328 + 256);
	bpfstash_blob_free(b);
}

/*
 * The funcs file of an entry: held with less than 64 bytes of waste
 * besides its piece pointers, at every size a program's can have (256
 * functions with names of up to KSYM_NAME_LEN); read back byte for byte
 * from its pieces; and hashed into the name as the same bytes in one
 * buffer are.
 */
static void bpfstash_test_funcs_pieces(struct kunit *test)
{
	static const u32 sizes[] = { 72, 1040, 2056, 8192 + 8448 };
	struct bpfstash_blob *none[BPFSTASH_NR_BLOBS] = {};
	u8 want[BPFSTASH_HASH_SIZE], hash[BPFSTASH_HASH_SIZE];
	struct bpfstash_content c = { .version = cpu_to_le32(BPFSTASH_VERSION) };
	u32 k, size, off, n, nr;
	struct bpfstash_entry *e;
	u8 *src;

	for (size = 1; size <= BPF_MAX_SUBPROGS * (32 + KSYM_NAME_LEN); size += 7) {
		for (nr = 0, off = 0; off < size; off += bpfstash_blob_seg_len(size - off))
			nr++;
		KUNIT_ASSERT_LE_MSG(test, bpfstash_funcs_cost(size),
				    size + 63 + bpfstash_alloc_size(nr * sizeof(void *)),
				    "size %u", size);
	}

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		size = sizes[k];
		src = kunit_kmalloc(test, size, GFP_KERNEL);
		e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, src);
		KUNIT_ASSERT_NOT_NULL(test, e);
		for (off = 0; off < size; off++)
			src[off] = off * 7 + (off >> 9);
		KUNIT_ASSERT_EQ(test, bpfstash_funcs_alloc(e, size), 0);
		e->content.funcs_size = cpu_to_le32(size);
		/* 1040 bytes would take a 2 KiB bucket, 16 KiB three pages. */
		if (size > 1024)
			KUNIT_EXPECT_GT_MSG(test, e->funcs_segs, 1, "size %u", size);
		for (off = 0; off < size; off += n) {
			n = min(size - off, 333U);
			bpfstash_pieces_write(e->funcs, e->funcs_segs, size, off, src + off, n);
		}
		for (off = 0; off < size; off++) {
			const u8 *p = bpfstash_funcs_at(e, off, &n);

			KUNIT_ASSERT_LE(test, off + n, size);
			KUNIT_ASSERT_EQ_MSG(test, *p, src[off], "size %u off %u", size, off);
		}
		c.funcs_size = cpu_to_le32(size);
		KUNIT_ASSERT_EQ(test, bpfstash_content_hash(&c, src, 0, none, want, NULL), 0);
		KUNIT_ASSERT_EQ(test, bpfstash_content_hash(&c, e->funcs, e->funcs_segs,
							    none, hash, NULL), 0);
		KUNIT_EXPECT_MEMEQ(test, hash, want, sizeof(want));
		bpfstash_funcs_free(e);
	}
}

/*
 * The funcs file and the image of a program of 200 functions, as the load
 * hook builds them, against the same built here byte by byte as the uapi
 * header describes them: names of every length from 1 to 120 bytes and
 * the longest kallsyms allows, so that some end in each byte of a word,
 * some cross the end of a piece and some are written a word at a time
 * (bpfstash_write_name()); images of every length from 1 to 97 bytes.
 */
static void bpfstash_test_snapshot_funcs(struct kunit *test)
{
	const u32 nr = 200;
	struct bpf_prog **progs = kunit_kcalloc(test, nr, sizeof(*progs), GFP_KERNEL);
	u8 *images = kunit_kmalloc(test, nr * 97, GFP_KERNEL);
	u32 size, off, n, i, names = 0, offset = 0;
	struct bpfstash_span *spans = kunit_kcalloc(test, nr, sizeof(*spans), GFP_KERNEL);
	struct bpfstash_sizes sz;
	struct bpfstash_entry *e;
	u8 *want, *jited;

	KUNIT_ASSERT_NOT_NULL(test, progs);
	KUNIT_ASSERT_NOT_NULL(test, images);
	KUNIT_ASSERT_NOT_NULL(test, spans);
	for (i = 0; i < nr * 97; i++)
		images[i] = i * 13 + (i >> 8);
	for (i = 0; i < nr; i++) {
		struct bpf_prog *f = progs[i] = bpfstash_test_prog(test);
		u32 len = i == 7 ? KSYM_NAME_LEN - 1 : 1 + i * 37 % 120;

		memset(f->aux->ksym.name, 'a' + i % 26, len);
		f->bpf_func = (void *)(images + i * 97);
		f->jited_len = 1 + i * 61 % 97;
		f->aux->linfo_idx = i * 3;
		memset(f->tag, i, sizeof(f->tag));
		names += len + 1;
		offset += f->jited_len;
	}
	progs[0]->aux->func = progs;
	progs[0]->aux->func_cnt = nr;

	size = nr * sizeof(struct bpfstash_func) + round_up(names, 8);
	want = kunit_kzalloc(test, size, GFP_KERNEL);
	jited = kunit_kmalloc(test, offset, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, jited);
	for (i = 0, names = 0, offset = 0; i < nr; i++) {
		static const u8 nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
		static const u8 endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
		static const u8 a64_nop[] = { 0x1f, 0x20, 0x03, 0xd5 };
		static const u8 a64_mov_x9_lr[] = { 0xc9, 0x03, 0x00, 0x91 };
		struct bpfstash_func *rec = (struct bpfstash_func *)want + i;
		const struct bpf_prog *f = progs[i];
		/*
		 * The entry patch site: on x86-64 a nop of 5, after ENDBR if
		 * any; on arm64 the nop after [bti jc,] mov x9, lr.
		 */
		u32 entry = f->jited_len >= 9 && !memcmp(f->bpf_func, endbr, 4) ? 4 : 0;
		bool poke = IS_ENABLED(CONFIG_X86_64) && f->jited_len >= entry + 5;
		const u8 *site = nop5;
		u32 site_len = sizeof(nop5);

		if (IS_ENABLED(CONFIG_ARM64)) {
			entry = IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) ? 8 : 4;
			poke = f->jited_len >= entry + 4 &&
			       !memcmp((const u8 *)f->bpf_func + entry - 4, a64_mov_x9_lr, 4);
			site = a64_nop;
			site_len = sizeof(a64_nop);
		}

		rec->addr = cpu_to_le64((unsigned long)f->bpf_func);
		rec->len = cpu_to_le32(f->jited_len);
		rec->offset = cpu_to_le32(offset);
		rec->name_off = cpu_to_le32(names);
		rec->entry_poke_off = cpu_to_le16(poke ? entry : 0);
		rec->entry_poke_len = cpu_to_le16(poke ? site_len : 0);
		memcpy(rec->tag, f->tag, sizeof(rec->tag));
		n = strlen(f->aux->ksym.name) + 1;
		memcpy(want + nr * sizeof(*rec) + names, f->aux->ksym.name, n);
		memcpy(jited + offset, f->bpf_func, f->jited_len);
		if (poke)
			memcpy(jited + offset + entry, site, site_len);
		names += n;
		offset += f->jited_len;
	}

	bpfstash_prog_sizes(progs[0], &sz);
	KUNIT_ASSERT_EQ(test, sz.funcs, size);
	KUNIT_ASSERT_EQ(test, sz.jited, offset);
	e = bpfstash_entry_alloc();
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_EQ(test, bpfstash_snapshot_funcs(progs[0], nr, &sz, e, spans), 0);
	KUNIT_EXPECT_GT(test, e->funcs_segs, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e->content.funcs_size), size);
	for (off = 0; off < size; off += n) {
		const u8 *p = bpfstash_funcs_at(e, off, &n);

		KUNIT_EXPECT_MEMEQ_MSG(test, p, want + off, n, "funcs at %u", off);
	}
	KUNIT_EXPECT_EQ(test, bpfstash_entry_size(e, BPFSTASH_DATA_JITED), offset);
	for (off = 0; off < offset; off += n) {
		const u8 *p = bpfstash_blob_at(e->blobs[BPFSTASH_BLOB_JITED], off, &n);

		KUNIT_EXPECT_MEMEQ_MSG(test, p, jited + off, n, "jited at %u", off);
	}
	/* Each function's span, for the passes over the lines. */
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ_MSG(test, spans[i].lo, (unsigned long)progs[i]->bpf_func,
				    "span %u", i);
		KUNIT_EXPECT_EQ_MSG(test, spans[i].len, progs[i]->jited_len, "span %u", i);
		KUNIT_EXPECT_EQ_MSG(test, spans[i].first_line, i * 3, "span %u", i);
	}
	bpfstash_entry_free(e);
}

/* The words of bpfstash= and of the control file. */
struct bpfstash_control_case {
	const char *s;
	int err, on;
	u64 max_bytes;
	u32 max_entries;
	const char *bad;
};

static const struct bpfstash_control_case bpfstash_control_cases[] = {
	{ "on", 0, 1 },
	{ "off", 0, 0 },
	{ "", 0, -1 },
	{ "on,size=64M,max_entries=1000", 0, 1, 64 << 20, 1000 },
	{ "on size=4096\n", 0, 1, 4096 },
	{ "size=1G", 0, -1, 1ULL << 30 },
	{ " max_entries=7 , on ", 0, 1, 0, 7 },
	{ "on,on", 0, 1 },
	{ "On", -EINVAL, 0, 0, 0, "On" },
	{ "on,off", -EINVAL, 0, 0, 0, "off" },
	{ "off,size=1M", -EINVAL, 0, 0, 0, "off" },
	{ "on,size=", -EINVAL, 0, 0, 0, "size=" },
	{ "on,size=abc", -EINVAL, 0, 0, 0, "size=abc" },
	{ "size=12Q", -EINVAL, 0, 0, 0, "size=12Q" },
	{ "size=0", -EINVAL, 0, 0, 0, "size=0" },
	{ "max_entries=0", -EINVAL, 0, 0, 0, "max_entries=0" },
	{ "max_entries=-1", -EINVAL, 0, 0, 0, "max_entries=-1" },
	{ "max_entries=4294967296", -EINVAL, 0, 0, 0, "max_entries=4294967296" },
	{ "on;size=1M", -EINVAL, 0, 0, 0, "on;size=1M" },
};

static void bpfstash_control_desc(const struct bpfstash_control_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%s\"", c->s);
}

KUNIT_ARRAY_PARAM(bpfstash_control, bpfstash_control_cases, bpfstash_control_desc);

static void bpfstash_test_control(struct kunit *test)
{
	const struct bpfstash_control_case *want = test->param_value;
	struct bpfstash_control c;
	char *s = kunit_kstrdup(test, want->s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, bpfstash_parse_control(s, &c), want->err);
	if (want->err) {
		KUNIT_ASSERT_NOT_NULL(test, c.bad);
		KUNIT_EXPECT_STREQ(test, c.bad, want->bad);
		KUNIT_EXPECT_NOT_NULL(test, c.why);
		return;
	}
	KUNIT_EXPECT_NULL(test, c.bad);
	KUNIT_EXPECT_EQ(test, c.on, want->on);
	KUNIT_EXPECT_EQ(test, c.max_bytes, want->max_bytes);
	KUNIT_EXPECT_EQ(test, c.max_entries, want->max_entries);
}

/*
 * Loading a program again and unloading it rewrite an entry's state while
 * readers copy it (the meta file, info, inode times).  A writer on another
 * CPU loads and unloads the entry as fast as it can; every copy the reader
 * takes must be one load's: all the ids and load times of one load, and
 * unload times exactly when the entry is not loaded.
 */
struct bpfstash_state_race {
	struct bpfstash_entry *e;
	struct bpf_prog *prog;
	unsigned int loads;
	struct completion done;
	bool stop;
};

static int bpfstash_state_writer(void *arg)
{
	struct bpfstash_state_race *r = arg;
	struct bpfstash_state load = {};
	u32 n;

	for (n = 1; n <= r->loads && !READ_ONCE(r->stop); n++) {
		load.prog_id = n;
		load.uid = n;
		load.btf_id = n;
		load.attach_btf_obj_id = n;
		load.load_time = 2ULL * n;
		load.load_time_real = 2ULL * n + 1;
		mutex_lock(&bpfstash_store.lock);
		bpfstash_entry_reload(r->e, &load);
		atomic_inc(&bpfstash_store.nr_live);	/* as bpfstash_store_insert() */
		mutex_unlock(&bpfstash_store.lock);
		/* The unload hook drops the program's reference. */
		bpfstash_entry_get(r->e);
		rcu_assign_pointer(r->prog->aux->stash, r->e);
		__bpfstash_prog_unload(r->prog);
		if (!(n % 64))
			cond_resched();
	}
	complete(&r->done);
	return 0;
}

static bool bpfstash_state_one_load(const struct bpfstash_state *m)
{
	u32 n = m->prog_id;
	bool loaded = m->flags & BPFSTASH_META_LOADED;

	if (m->uid != n || m->btf_id != n || m->attach_btf_obj_id != n ||
	    m->load_time != 2ULL * n || m->load_time_real != 2ULL * n + 1)
		return false;
	return loaded == (!m->unload_time && !m->unload_time_real);
}

static void bpfstash_test_state_race(struct kunit *test)
{
	struct bpfstash_state_race r = { .loads = 20000 };
	struct task_struct *writer;
	u64 reads = 0, mixed = 0, changes = 0;
	struct bpfstash_state m;
	unsigned int reader_cpu;
	u32 last = 0;

	if (num_online_cpus() < 2)
		kunit_skip(test, "one CPU: the writer and the reader would not overlap");
	r.e = bpfstash_test_entry(test, "image", "btf");
	r.prog = bpfstash_test_prog(test);
	init_completion(&r.done);
	/* The reader on one CPU, the writer on another. */
	reader_cpu = raw_smp_processor_id();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(reader_cpu)), 0);
	writer = kthread_create(bpfstash_state_writer, &r, "bpfstash_test_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(writer));
	kthread_bind(writer, cpumask_any_but(cpu_online_mask, reader_cpu));
	wake_up_process(writer);

	while (!completion_done(&r.done)) {
		bpfstash_entry_state(r.e, &m);
		reads++;
		if (m.prog_id && !bpfstash_state_one_load(&m) && !mixed++)
			kunit_info(test, "mixed: prog_id %u uid %u btf_id %u load %llu unload %llu loaded %d",
				   m.prog_id, m.uid, m.btf_id, m.load_time, m.unload_time,
				   !!(m.flags & BPFSTASH_META_LOADED));
		if (m.prog_id != last) {
			changes++;
			last = m.prog_id;
		}
		if (!(reads % 64))
			cond_resched();
		if (mixed > 100)
			WRITE_ONCE(r.stop, true);
	}
	wait_for_completion(&r.done);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	kunit_info(test, "%llu reads, %llu mixed, %llu changes seen", reads, mixed, changes);
	KUNIT_EXPECT_EQ(test, mixed, 0);
	/* Else the two did not overlap, and the test proved nothing. */
	KUNIT_EXPECT_GE(test, changes, 10);
	bpfstash_entry_free(r.e);
}

static struct kunit_case bpfstash_test_cases[] = {
	KUNIT_CASE(bpfstash_test_digest),
	KUNIT_CASE(bpfstash_test_digest_chunks),
	KUNIT_CASE(bpfstash_test_content_hash),
	KUNIT_CASE(bpfstash_test_content_hash_calls),
	KUNIT_CASE(bpfstash_test_hash_covers_content),
	KUNIT_CASE_PARAM(bpfstash_test_limits, bpfstash_limits_gen_params),
	KUNIT_CASE(bpfstash_test_store),
	KUNIT_CASE(bpfstash_test_generation),
	KUNIT_CASE(bpfstash_test_seen_sample),
	KUNIT_CASE(bpfstash_test_jited_lines),
	KUNIT_CASE(bpfstash_test_bytes_equal),
	KUNIT_CASE(bpfstash_test_blob_pieces),
	KUNIT_CASE(bpfstash_test_funcs_pieces),
	KUNIT_CASE(bpfstash_test_snapshot_funcs),
	KUNIT_CASE_PARAM(bpfstash_test_control, bpfstash_control_gen_params),
	KUNIT_CASE_SLOW(bpfstash_test_state_race),
	{}
};

/* The tests hash before any start has set up the transform. */
static int bpfstash_test_suite_init(struct kunit_suite *suite)
{
	return bpfstash_hash_setup();
}

static struct kunit_suite bpfstash_test_suite = {
	.name = "bpfstash",
	.suite_init = bpfstash_test_suite_init,
	.test_cases = bpfstash_test_cases,
};

kunit_test_suite(bpfstash_test_suite);
