// SPDX-License-Identifier: GPL-2.0-only
/*
 * A KUnit benchmark of bpfstash's load hook, on real programs.
 *
 * Each case rebuilds one program as bpf_prog_load() presents it to
 * bpfstash_prog_load() (JITed functions, jited line info, line and func
 * info, BTF loaded with BPF_BTF_LOAD) from an entry that the store took
 * of the real program on x86-64, then calls the hook many times with the
 * store running and times it, each time after writing the program again
 * as the load writes it last before the hook (bench_prog_jit()) and
 * followed by SHA-256 over exactly the bytes that call hashed, with the
 * transform the hook uses and with lib/crypto's sha256; and times a call
 * without that writing, cold, and the least that copying the program's
 * bytes into the store costs, each round too.  Run as user-mode Linux,
 * this is the hook at the host CPU's own speed:
 *
 *   tools/testing/kunit/kunit.py run --arch=um \
 *	--kunitconfig=<bpfstash>/configs/kunit-bench.kunitconfig \
 *	--kconfig_add CONFIG_BPFSTASH_KUNIT_BENCH_PROGS='"<dir>"'
 *
 * <dir> holds one directory per program (trivial, subprogs, insns4096,
 * large, funcs256), each a copy of an entry of the bpfstash filesystem;
 * stash_bench_progs.S links them in.  Each case prints one line:
 *
 *   bpfstash_bench: prog=large ... hook_ns=... hash_ns=... beyond_ns=...
 *
 * hook_ns and hash_ns are medians, beyond_ns the median of their
 * difference in each round: what the hook costs beyond its hashing; the
 * *_iqm_ns are means of the middle half; cold_ns and beyond_cold_ns the
 * same of the cold calls; copy_ns the median of the copy floor (what
 * allocating and copying the stored bytes once costs, bench_copy_floor())
 * and beyond_copy_ns of what the hook costs beyond its hashing and that
 * floor, each round; copy_image_ns and copy_kept_ns the medians of two
 * parts of the floor (the image; the line info, func info and BTF, which
 * a store could copy at unload instead), beyond_kept_ns of beyond hashing
 * less the kept part, and beyond_image_ns of beyond hashing less all but
 * the image part (bench_copy_floor() says what each leaves out).  The
 * cases assert what can go
 * wrong in the measurement itself: every call stored the program, the
 * entry holds the captured bytes, its name is the SHA-256 recomputed here
 * over the bytes timed, and the store counted as many bytes hashed.  Whether
 * beyond_ns is within its bound depends on the load time of the same
 * program, which this benchmark does not know: bpfstash's make bench
 * compares the two.
 *
 * Without a JIT the hook never sees a JITed program from bpf_prog_load(),
 * so it is only called here.  Not a test: not run with KUNIT_ALL_TESTS.
 */
#include <kunit/test.h>
#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/bpfstash.h>
#include <linux/btf.h>
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>

#include "stash.h"

/* Calls per program: the medians are of this many samples. */
#define BENCH_ROUNDS	201

/* The files of an entry, in the order stash_bench_progs.S links them. */
enum bench_file {
	BENCH_META,
	BENCH_FUNCS,
	BENCH_JITED,
	BENCH_LINE_INFO,
	BENCH_JITED_LINE_INFO,
	BENCH_FUNC_INFO,
	BENCH_BTF,
	BENCH_NR_FILES,
};

/* Where the blob of each file of an entry is: enum bpfstash_blob_id. */
static const enum bench_file bench_blob_file[BPFSTASH_NR_BLOBS] = {
	[BPFSTASH_BLOB_JITED]		= BENCH_JITED,
	[BPFSTASH_BLOB_LINE_INFO]	= BENCH_LINE_INFO,
	[BPFSTASH_BLOB_JITED_LINE_INFO]	= BENCH_JITED_LINE_INFO,
	[BPFSTASH_BLOB_FUNC_INFO]	= BENCH_FUNC_INFO,
	[BPFSTASH_BLOB_BTF]		= BENCH_BTF,
};

/* One captured entry: where each file starts and ends in @data. */
struct bench_entry {
	u32 file[BENCH_NR_FILES][2];
	u8 data[];
};

struct bench_case {
	const char *name;
	const struct bench_entry *entry;
};

#ifdef CONFIG_BPFSTASH_KUNIT_BENCH_PROGS_SET
extern const struct bench_entry bpfstash_bench_trivial, bpfstash_bench_subprogs,
	bpfstash_bench_insns4096, bpfstash_bench_large, bpfstash_bench_funcs256;

static const struct bench_case bench_cases[] = {
	{ "trivial", &bpfstash_bench_trivial },
	{ "subprogs", &bpfstash_bench_subprogs },
	{ "insns4096", &bpfstash_bench_insns4096 },
	{ "large", &bpfstash_bench_large },
	{ "funcs256", &bpfstash_bench_funcs256 },
};
#else
static const struct bench_case bench_cases[] = {
	{ "none", NULL },
};
#endif

/*
 * BPF_BTF_LOAD from the kernel, as the light skeletons of
 * kernel/bpf/preload do (tools/lib/bpf/skel_internal.h declares it for
 * them; no header of the kernel does).
 */
int kern_sys_bpf(int cmd, union bpf_attr *attr, unsigned int size);

static const void *bench_data(const struct bench_entry *b, enum bench_file f, u32 *size)
{
	*size = b->file[f][1] - b->file[f][0];
	return b->data + b->file[f][0];
}

/* A program of the entry, as bpf_prog_load() hands it to the hook. */
struct bench_prog {
	struct bpf_prog *prog;
	struct list_head ksyms;
	struct btf *btf;
	const struct bench_entry *entry;
	void **images;		/* each function's image */
	u32 sink;		/* what bench_prog_jit() read */
};

static struct bpf_prog *bench_prog_alloc(struct kunit *test)
{
	struct bpf_prog *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->aux = kunit_kzalloc(test, sizeof(*p->aux), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->aux);
	p->aux->prog = p;
	return p;
}

static void *bench_dup(struct kunit *test, const void *data, u32 size)
{
	void *p;

	if (!size)
		return NULL;
	p = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	return memcpy(p, data, size);
}

static void bench_btf_put(void *btf)
{
	btf_put(btf);
}

/* The program's BTF, loaded and checked by the kernel as libbpf loads it. */
static struct btf *bench_btf_load(struct kunit *test, const void *data, u32 size)
{
	union bpf_attr attr = {};
	struct btf *btf;
	int fd;

	attr.btf = (unsigned long)data;
	attr.btf_size = size;
	fd = kern_sys_bpf(BPF_BTF_LOAD, &attr, sizeof(attr));
	KUNIT_ASSERT_GE_MSG(test, fd, 0, "BPF_BTF_LOAD of the captured BTF");
	btf = btf_get_by_fd(fd);
	close_fd(fd);
	KUNIT_ASSERT_FALSE(test, IS_ERR(btf));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bench_btf_put, btf), 0);
	return btf;
}

/*
 * What bpf_prog_load() writes last of the program before it calls the
 * hook, written again from the captured entry: the JIT's last pass over
 * each function writes its image and its jited line info
 * (bpf_prog_fill_jited_linfo()), then bpf_prog_kallsyms_add() gives each
 * function its address and name (jit_subprogs() for the subprograms,
 * bpf_prog_load() for the main program, right before the hook).  The
 * hook reads these as the load leaves them, in the cache; without this,
 * a round's call would read them as the previous round left them.
 */
static void bench_prog_jit(struct bench_prog *bp)
{
	const struct bench_entry *b = bp->entry;
	const struct bpfstash_meta *meta;
	const struct bpfstash_jited_line *jl;
	const struct bpfstash_func *rec;
	struct bpf_prog *prog = bp->prog;
	const u8 *jited, *names;
	u32 size, nr, i, l, nr_funcs, sink = 0;

	meta = bench_data(b, BENCH_META, &size);
	nr_funcs = le32_to_cpu(meta->content.nr_funcs);
	rec = bench_data(b, BENCH_FUNCS, &size);
	names = (const u8 *)(rec + nr_funcs);
	jited = bench_data(b, BENCH_JITED, &size);
	jl = bench_data(b, BENCH_JITED_LINE_INFO, &size);
	nr = le32_to_cpu(meta->content.nr_jited_line_info);

	/*
	 * The JIT's last pass, a function at a time: its image, then, from
	 * its first line (linfo_idx), each of its lines' insn_off read and
	 * jited line written.
	 */
	for (i = 0, l = 0; i < nr_funcs; i++) {
		struct bpf_prog *fp = i ? prog->aux->func[i] : prog;

		memcpy(bp->images[i], jited + le32_to_cpu(rec[i].offset), le32_to_cpu(rec[i].len));
		for (l = fp->aux->linfo_idx; l < nr && le32_to_cpu(jl[l].func) == i; l++) {
			sink += READ_ONCE(prog->aux->linfo[l].insn_off);
			prog->aux->jited_linfo[l] = bp->images[i] + le32_to_cpu(jl[l].off);
		}
	}
	bp->sink = sink;
	for (i = 0; i < nr_funcs; i++) {
		struct bpf_prog *fp = i ? prog->aux->func[i] : prog;

		fp->aux->ksym.start = (unsigned long)fp->bpf_func;
		fp->aux->ksym.end = fp->aux->ksym.start + fp->jited_len;
		strscpy(fp->aux->ksym.name, names + le32_to_cpu(rec[i].name_off), KSYM_NAME_LEN);
	}
}

/*
 * Rebuild the program an entry was taken of: each function's image in an
 * allocation of its own (the JIT's are not contiguous either), the jited
 * line info pointing into them, the subprograms with their tags, names
 * and first line, the line and func info, and the BTF.
 */
static void bench_prog_init(struct kunit *test, const struct bench_entry *b,
			    struct bench_prog *bp)
{
	const struct bpfstash_meta *meta;
	const struct bpfstash_content *c;
	const struct bpfstash_jited_line *jl;
	const struct bpfstash_func *rec;
	const u8 *jited, *names;
	struct bpf_prog_aux *aux;
	const void *data;
	struct bpf_prog *prog;
	u32 size, nr, i, f, nr_funcs, funcs_size, jited_len;
	void **images;

	/* The captured files are little-endian: their counts, for this CPU. */
	meta = bench_data(b, BENCH_META, &size);
	KUNIT_ASSERT_EQ(test, size, sizeof(*meta));
	c = &meta->content;
	nr_funcs = le32_to_cpu(c->nr_funcs);
	funcs_size = le32_to_cpu(c->funcs_size);
	jited_len = le32_to_cpu(c->jited_len);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(c->version), BPFSTASH_VERSION);
	KUNIT_ASSERT_TRUE(test, nr_funcs >= 1 && nr_funcs <= BPF_MAX_SUBPROGS);
	rec = bench_data(b, BENCH_FUNCS, &size);
	KUNIT_ASSERT_EQ(test, size, funcs_size);
	names = (const u8 *)(rec + nr_funcs);
	jited = bench_data(b, BENCH_JITED, &size);
	KUNIT_ASSERT_EQ(test, size, jited_len);
	jl = bench_data(b, BENCH_JITED_LINE_INFO, &size);
	nr = le32_to_cpu(c->nr_jited_line_info);
	KUNIT_ASSERT_EQ(test, size, nr * sizeof(*jl));

	prog = bench_prog_alloc(test);
	aux = prog->aux;
	images = kunit_kcalloc(test, nr_funcs, sizeof(*images), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, images);
	if (nr_funcs > 1) {
		aux->func = kunit_kcalloc(test, nr_funcs, sizeof(*aux->func), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, aux->func);
		aux->func_cnt = nr_funcs;
	}
	for (i = 0; i < nr_funcs; i++) {
		struct bpf_prog *fp = i ? bench_prog_alloc(test) : prog;
		u32 off = le32_to_cpu(rec[i].offset), len = le32_to_cpu(rec[i].len);
		u32 name_off = le32_to_cpu(rec[i].name_off);

		KUNIT_ASSERT_LE(test, off + len, jited_len);
		KUNIT_ASSERT_LT(test, name_off, funcs_size);
		KUNIT_ASSERT_LT(test, strnlen(names + name_off, funcs_size - name_off),
				KSYM_NAME_LEN);
		images[i] = bench_dup(test, jited + off, len);
		fp->jited = 1;
		fp->bpf_func = images[i];
		fp->jited_len = len;
		fp->aux->linfo_idx = nr;
		if (!aux->func)
			continue;
		/* func[0] is the main subprogram, a program of its own. */
		if (!i) {
			aux->func[0] = bench_prog_alloc(test);
			aux->func[0]->bpf_func = images[0];
			aux->func[0]->jited_len = le32_to_cpu(rec[0].len);
		}
		aux->func[i] = i ? fp : aux->func[0];
		memcpy(aux->func[i]->tag, rec[i].tag, BPF_TAG_SIZE);
	}
	/* A function's line info starts at its first record. */
	for (i = nr; i-- > 0;) {
		f = le32_to_cpu(jl[i].func);
		KUNIT_ASSERT_LT(test, f, le32_to_cpu(c->nr_funcs));
		KUNIT_ASSERT_LT(test, le32_to_cpu(jl[i].off), le32_to_cpu(rec[f].len));
		(f ? aux->func[f] : prog)->aux->linfo_idx = i;
	}
	if (nr) {
		aux->jited_linfo = kunit_kcalloc(test, nr, sizeof(void *), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, aux->jited_linfo);
	}

	prog->type = le32_to_cpu(c->prog_type);
	prog->expected_attach_type = le32_to_cpu(c->expected_attach_type);
	prog->gpl_compatible = le32_to_cpu(c->gpl_compatible);
	prog->len = le32_to_cpu(c->xlated_len) / sizeof(struct bpf_insn);
	memcpy(prog->tag, c->tag, BPF_TAG_SIZE);
	memcpy(aux->name, c->name, sizeof(aux->name));
	aux->verified_insns = le32_to_cpu(c->verified_insns);
	aux->attach_btf_id = le32_to_cpu(c->attach_btf_id);
	aux->user = current_user();
	aux->id = 1;
	data = bench_data(b, BENCH_LINE_INFO, &size);
	aux->linfo = bench_dup(test, data, size);
	aux->nr_linfo = size / sizeof(struct bpf_line_info);
	KUNIT_ASSERT_EQ(test, aux->nr_linfo, le32_to_cpu(c->nr_line_info));
	data = bench_data(b, BENCH_FUNC_INFO, &size);
	aux->func_info = bench_dup(test, data, size);
	aux->func_info_cnt = size / sizeof(struct bpf_func_info);
	KUNIT_ASSERT_EQ(test, aux->func_info_cnt, le32_to_cpu(c->nr_func_info));
	data = bench_data(b, BENCH_BTF, &size);
	KUNIT_ASSERT_EQ(test, size, le32_to_cpu(c->btf_size));
	if (size)
		aux->btf = bench_btf_load(test, data, size);
	/* In kallsyms, as bpf_prog_load() left it. */
	INIT_LIST_HEAD(&bp->ksyms);
	list_add(&aux->ksym.lnode, &bp->ksyms);
	bp->prog = prog;
	bp->btf = aux->btf;
	bp->entry = b;
	bp->images = images;
	bench_prog_jit(bp);
}

/* What the store holds of @e equals what was captured of the program. */
static void bench_check_entry(struct kunit *test, const struct bench_entry *b,
			      struct bpfstash_entry *e)
{
	const struct bpfstash_meta *meta;
	const struct bpfstash_func *rec, *got;
	u32 size, off, n, i;
	const u8 *want;

	meta = bench_data(b, BENCH_META, &size);
	KUNIT_EXPECT_MEMEQ(test, &e->content, &meta->content, sizeof(meta->content));
	/* A program has every blob but an image's calls. */
	KUNIT_EXPECT_NULL(test, e->blobs[BPFSTASH_BLOB_CALLS]);
	for (i = 0; i < BPFSTASH_BLOB_CALLS; i++) {
		want = bench_data(b, bench_blob_file[i], &size);
		KUNIT_ASSERT_EQ_MSG(test, bpfstash_entry_size(e, i), size, "blob %u", i);
		for (off = 0; off < size; off += n) {
			const void *p = bpfstash_blob_at(e->blobs[i], off, &n);

			KUNIT_ASSERT_MEMEQ_MSG(test, p, want + off, n, "blob %u at %u", i, off);
		}
	}
	/*
	 * The funcs file, but for the load addresses, which are this
	 * kernel's: the records, then the names and the zeroes after them.
	 */
	rec = bench_data(b, BENCH_FUNCS, &size);
	KUNIT_ASSERT_EQ(test, bpfstash_entry_size(e, BPFSTASH_DATA_FUNCS), size);
	for (i = 0; i < le32_to_cpu(meta->content.nr_funcs); i++) {
		got = bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, i * sizeof(*got), &n);
		KUNIT_EXPECT_MEMEQ_MSG(test, &got->len, &rec[i].len,
				       sizeof(*got) - offsetof(struct bpfstash_func, len),
				       "funcs record %u", i);
	}
	want = (const u8 *)rec;
	for (off = i * sizeof(*rec); off < size; off += n) {
		const void *p = bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, off, &n);

		KUNIT_ASSERT_MEMEQ_MSG(test, p, want + off, n, "funcs names at %u", off);
	}
}

/*
 * The hook's hashing, redone: SHA-256 of each blob (in the pieces the
 * store holds it in, as bpfstash_blob_digest() hashes it), then of the
 * canonical serialisation (include/uapi/linux/bpfstash.h).  With @tfm,
 * the transform the hook gets from crypto_alloc_shash("sha256"); without,
 * lib/crypto's sha256.
 */
static void bench_hash_bytes(struct crypto_shash *tfm, struct shash_desc *desc,
			     struct sha256_state *lib, const void *p, u32 n)
{
	if (tfm)
		crypto_shash_update(desc, p, n);
	else
		sha256_update(lib, p, n);
}

static void bench_hash_start(struct crypto_shash *tfm, struct shash_desc *desc,
			     struct sha256_state *lib)
{
	if (tfm)
		crypto_shash_init(desc);
	else
		sha256_init(lib);
}

static void bench_hash_end(struct crypto_shash *tfm, struct shash_desc *desc,
			   struct sha256_state *lib, u8 *out)
{
	if (tfm)
		crypto_shash_final(desc, out);
	else
		sha256_final(lib, out);
}

static const u8 bench_empty_digest[SHA256_DIGEST_SIZE] = {
	0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
	0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
	0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
};

static void bench_hash_entry(struct crypto_shash *tfm, const struct bpfstash_entry *e,
			     u8 hash[SHA256_DIGEST_SIZE])
{
	static const char domain[] = BPFSTASH_HASH_DOMAIN;
	/* Every blob's digest, that of nothing for an empty one. */
	u8 digests[BPFSTASH_NR_BLOBS][SHA256_DIGEST_SIZE];
	SHASH_DESC_ON_STACK(desc, tfm);
	struct sha256_state lib;
	const void *p;
	u32 off, n;
	int i;

	desc->tfm = tfm;
	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		const struct bpfstash_blob *b = e->blobs[i];

		/* The hook knows the digest of nothing, as does this. */
		if (!b) {
			memcpy(digests[i], bench_empty_digest, SHA256_DIGEST_SIZE);
			continue;
		}
		bench_hash_start(tfm, desc, &lib);
		for (off = 0; off < b->size; off += n) {
			p = bpfstash_blob_at(b, off, &n);
			bench_hash_bytes(tfm, desc, &lib, p, n);
		}
		bench_hash_end(tfm, desc, &lib, digests[i]);
	}
	bench_hash_start(tfm, desc, &lib);
	bench_hash_bytes(tfm, desc, &lib, domain, sizeof(domain));
	bench_hash_bytes(tfm, desc, &lib, &e->content, sizeof(e->content));
	for (off = 0; off < le32_to_cpu(e->content.funcs_size); off += n) {
		p = bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, off, &n);
		bench_hash_bytes(tfm, desc, &lib, p, n);
	}
	bench_hash_bytes(tfm, desc, &lib, digests, sizeof(digests));
	bench_hash_end(tfm, desc, &lib, hash);
	if (tfm)
		shash_desc_zero(desc);
}

/*
 * The bytes bench_hash_entry() hashes; in @calls, the size of each hash,
 * comma-separated: the blobs that are not empty, then the name.
 */
static u64 bench_hashed_bytes(const struct bpfstash_entry *e, char *calls, size_t len)
{
	u64 name = sizeof(BPFSTASH_HASH_DOMAIN) + sizeof(e->content) +
		   le32_to_cpu(e->content.funcs_size) + BPFSTASH_NR_BLOBS * SHA256_DIGEST_SIZE;
	u64 bytes = name;
	int i, at = 0;

	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		if (!bpfstash_entry_size(e, i))
			continue;
		bytes += bpfstash_entry_size(e, i);
		at += scnprintf(calls + at, len - at, "%u,", bpfstash_entry_size(e, i));
	}
	scnprintf(calls + at, len - at, "%llu", name);
	return bytes;
}

static int bench_cmp(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Summaries of @n samples: sort them first.  UML's clock counts in steps
 * of 256 ns (TIMER_MULTIPLIER); the mean of the middle half of the samples
 * resolves less than a step, which a median cannot.
 */
static void bench_sort(s64 *ns, u32 n)
{
	sort(ns, n, sizeof(*ns), bench_cmp, NULL);
}

static s64 bench_pct(const s64 *ns, u32 n, u32 pct)
{
	return ns[(n - 1) * pct / 100];
}

static s64 bench_iqm(const s64 *ns, u32 n)
{
	s64 sum = 0;
	u32 i;

	for (i = n / 4; i < n - n / 4; i++)
		sum += ns[i];
	return div_s64(sum, n - 2 * (n / 4));
}

/*
 * Unload the program and delete its entry, then wait until the entry and
 * its blobs are freed: the next call stores the program as new, hashing
 * every blob, rather than finding them stored.
 */
static void bench_forget(struct kunit *test, struct bpf_prog *prog, const u8 *hash)
{
	bpfstash_prog_unload(prog);
	KUNIT_ASSERT_EQ(test, bpfstash_entry_delete(hash), 0);
	bpfstash_store_drain();
	rcu_barrier();	/* the blobs' kvfree_rcu() */
}

static void bench_free_shash(void *tfm)
{
	crypto_free_shash(tfm);
}

static void bench_store_stop(void *unused)
{
	bpfstash_store_stop();
	bpfstash_store_drain();
	rcu_barrier();
}

/*
 * One call of the hook on @bp, as a program never seen, timed; @stats
 * before and after it.
 */
/* The entry of a program the benchmark stored; it holds the program. */
static struct bpfstash_entry *bench_prog_entry(struct bench_prog *bp)
{
	return rcu_dereference_protected(bp->prog->aux->stash, true);
}

static u64 bench_hook_call(struct kunit *test, struct bench_prog *bp, u32 round,
			   struct bpfstash_stats *before, struct bpfstash_stats *after)
{
	u64 t;

	bpfstash_store_get_stats(before);
	t = ktime_get_ns();
	bpfstash_prog_load(bp->prog);
	t = ktime_get_ns() - t;
	bpfstash_store_get_stats(after);
	KUNIT_ASSERT_NOT_NULL_MSG(test, rcu_access_pointer(bp->prog->aux->stash),
				  "call %u did not store the program", round);
	KUNIT_ASSERT_EQ(test, after->stored, before->stored + 1);
	KUNIT_ASSERT_EQ(test, after->blob_dedup + after->btf_hash_cached,
			before->blob_dedup + before->btf_hash_cached);
	return t;
}

/* Parts of the copy floor, by what a store could do with them. */
struct bench_floor {
	u64 image;	/* the JITed image */
	u64 kept;	/* line info, func info, BTF */
};

/*
 * What storing the program's bytes costs at the least, timed: for each
 * blob the hook made and for its funcs file, an allocation of the same
 * size in the pieces the store holds it in (bpfstash_blob_alloc()) and
 * one copy of each byte with the store's copy (bpfstash_blob_write(); the
 * images as the hook writes them, bpfstash_write_image()), from where the
 * hook reads it: each function's image, the line and func info, the BTF
 * and, for the jited line info, which the hook computes, as many bytes
 * from the addresses it is computed from; the funcs file from the
 * captured one.  The copies are freed after the clock stops, as the
 * hook's are when the entry goes.  A snapshot taken at load costs at
 * least this beyond its hashing.
 *
 * @part gets two parts of it, timed on their own.  The image: only the
 * load can copy it as it was hashed, since bpf_arch_text_poke() patches
 * it later (a tail call's jump when its map changes, the attach point when
 * a trampoline attaches to the program).  The kept bytes: the line info,
 * func info and BTF are copied as they are from memory the program keeps,
 * unchanged, until the unload hook has run (__bpf_prog_put_noref() frees
 * them after it), so a store could copy them then instead.  The rest, the
 * funcs file and the jited line info, are built from the program; a store
 * must build them at load to hash them, and could only keep them too if it
 * built them twice.
 */
static u64 bench_copy_floor(struct kunit *test, const struct bench_prog *bp,
			    const struct bpfstash_content *c, struct bench_floor *part)
{
	const struct bpf_prog_aux *aux = bp->prog->aux;
	struct bpfstash_blob *copy[BPFSTASH_NR_BLOBS + 1] = {};
	const struct bpfstash_func *rec;
	const void *funcs, *btf = NULL;
	u32 size, btf_size = 0, i;
	struct bpfstash_writer w;
	u64 t, t1, t2, t3;

	funcs = bench_data(bp->entry, BENCH_FUNCS, &size);
	if (bp->btf)
		btf = btf_get_raw_data(bp->btf, &btf_size);
	rec = funcs;

	t = ktime_get_ns();
	copy[1] = bpfstash_blob_alloc(le32_to_cpu(c->jited_len));
	if (copy[1]) {
		bpfstash_blob_writer(&w, copy[1]);
		for (i = 0; i < le32_to_cpu(c->nr_funcs); i++)
			bpfstash_write_image(&w, bp->images[i], le32_to_cpu(rec[i].len));
	}
	t1 = ktime_get_ns();
	copy[0] = bpfstash_blob_alloc(le32_to_cpu(c->funcs_size));
	if (copy[0])
		bpfstash_blob_write(copy[0], 0, funcs, le32_to_cpu(c->funcs_size));
	size = le32_to_cpu(c->nr_jited_line_info) * sizeof(struct bpfstash_jited_line);
	copy[3] = size ? bpfstash_blob_alloc(size) : NULL;
	if (copy[3])
		bpfstash_blob_write(copy[3], 0, aux->jited_linfo, size);
	t2 = ktime_get_ns();
	if (aux->nr_linfo) {
		size = aux->nr_linfo * sizeof(struct bpf_line_info);
		copy[2] = bpfstash_blob_alloc(size);
		if (copy[2])
			bpfstash_blob_write(copy[2], 0, aux->linfo, size);
	}
	if (aux->func_info_cnt) {
		size = aux->func_info_cnt * sizeof(struct bpf_func_info);
		copy[4] = bpfstash_blob_alloc(size);
		if (copy[4])
			bpfstash_blob_write(copy[4], 0, aux->func_info, size);
	}
	if (btf_size) {
		copy[5] = bpfstash_blob_alloc(btf_size);
		if (copy[5])
			bpfstash_blob_write(copy[5], 0, btf, btf_size);
	}
	t3 = ktime_get_ns();
	part->image = t1 - t;
	part->kept = t3 - t2;

	KUNIT_EXPECT_TRUE(test, copy[0] && copy[1] && (!aux->nr_linfo || copy[2]) &&
			  (!le32_to_cpu(c->nr_jited_line_info) || copy[3]) &&
			  (!aux->func_info_cnt || copy[4]) && (!btf_size || copy[5]));
	for (i = 0; i < ARRAY_SIZE(copy); i++)
		bpfstash_blob_put(copy[i]);
	return t3 - t;
}

static void bpfstash_bench_hook(struct kunit *test)
{
	const struct bench_case *bc = test->param_value;
	const struct bench_entry *b = bc->entry;
	u8 hash[BPFSTASH_HASH_SIZE], digest[SHA256_DIGEST_SIZE], lib_digest[SHA256_DIGEST_SIZE];
	char calls[8 * (BPFSTASH_NR_BLOBS + 1)];
	s64 *hook_ns, *hash_ns, *lib_ns, *beyond_ns, *cold_ns, *beyond_cold_ns;
	s64 *copy_ns, *beyond_copy_ns, *copy_image_ns, *copy_kept_ns;
	s64 *beyond_kept_ns, *beyond_image_ns;
	struct bench_floor floor;
	u64 t, hashed, bytes = 0;
	struct bpfstash_stats before, after;
	struct bpfstash_content content;
	struct crypto_shash *tfm;
	struct bpfstash_entry *e;
	struct bench_prog bp;
	u32 i;

	if (!b)
		kunit_skip(test, "no captured programs (CONFIG_BPFSTASH_KUNIT_BENCH_PROGS)");
	if (bpfstash_store_running())
		kunit_skip(test, "the store is running: the benchmark would change its contents");

	bench_prog_init(test, b, &bp);
	hook_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	hash_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	lib_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	beyond_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	cold_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	beyond_cold_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	copy_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	beyond_copy_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	copy_image_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	copy_kept_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	beyond_kept_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	beyond_image_ns = kunit_kcalloc(test, BENCH_ROUNDS, sizeof(s64), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, hook_ns && hash_ns && lib_ns && beyond_ns && cold_ns &&
			  beyond_cold_ns && copy_ns && beyond_copy_ns && copy_image_ns &&
			  copy_kept_ns && beyond_kept_ns && beyond_image_ns);
	tfm = crypto_alloc_shash("sha256", 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tfm));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bench_free_shash, tfm), 0);

	KUNIT_ASSERT_EQ(test, bpfstash_store_start(256 << 20, 16), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bench_store_stop, NULL), 0);

	/*
	 * Each round, two calls of the hook, each storing the program as new
	 * (the entry is dropped after each).  The first finds the program as
	 * the previous round left it: cold.  Before the second, the program
	 * is written as bpf_prog_load() writes it last before its call of the
	 * hook (bench_prog_jit()): the hook as a load runs it.  After that
	 * one, SHA-256 of the bytes it hashed (the entry's blobs, in the
	 * pieces it hashed them in, and its name), with the hook's transform
	 * and with lib/crypto's.  Timing the calls and the hashing in the
	 * same round pairs them, so that what the host does meanwhile cancels
	 * out of their difference.  Round 0 warms up and is not counted.
	 */
	for (i = 0; i <= BENCH_ROUNDS; i++) {
		u64 cold = bench_hook_call(test, &bp, i, &before, &after);

		memcpy(hash, bench_prog_entry(&bp)->hash, sizeof(hash));
		bench_forget(test, bp.prog, hash);
		bench_prog_jit(&bp);
		t = bench_hook_call(test, &bp, i, &before, &after);
		e = bench_prog_entry(&bp);
		hashed = after.hashed_bytes - before.hashed_bytes;
		memcpy(hash, e->hash, sizeof(hash));
		if (!i) {
			/* The stored entry is the captured one, and named right. */
			bench_check_entry(test, b, e);
			content = e->content;
			bytes = bench_hashed_bytes(e, calls, sizeof(calls));
			KUNIT_EXPECT_EQ(test, hashed, bytes);
			bench_hash_entry(tfm, e, digest);
			bench_hash_entry(NULL, e, lib_digest);
			KUNIT_EXPECT_MEMEQ(test, digest, e->hash, BPFSTASH_HASH_SIZE);
			KUNIT_EXPECT_MEMEQ(test, lib_digest, digest, sizeof(digest));
		} else {
			KUNIT_EXPECT_EQ(test, hashed, bytes);
			hook_ns[i - 1] = t;
			t = ktime_get_ns();
			bench_hash_entry(tfm, e, digest);
			hash_ns[i - 1] = ktime_get_ns() - t;
			t = ktime_get_ns();
			bench_hash_entry(NULL, e, lib_digest);
			lib_ns[i - 1] = ktime_get_ns() - t;
			beyond_ns[i - 1] = hook_ns[i - 1] - hash_ns[i - 1];
			cold_ns[i - 1] = cold;
			beyond_cold_ns[i - 1] = cold - hash_ns[i - 1];
			/* The copy floor, of the program as a load leaves it. */
			bench_prog_jit(&bp);
			copy_ns[i - 1] = bench_copy_floor(test, &bp, &content, &floor);
			copy_image_ns[i - 1] = floor.image;
			copy_kept_ns[i - 1] = floor.kept;
			beyond_copy_ns[i - 1] = beyond_ns[i - 1] - copy_ns[i - 1];
			/*
			 * Beyond hashing, less the copies a store could make
			 * after the load: of the kept bytes; of all but the
			 * image (a bound: the built ones are built to hash).
			 */
			beyond_kept_ns[i - 1] = beyond_ns[i - 1] - floor.kept;
			beyond_image_ns[i - 1] = beyond_ns[i - 1] - (copy_ns[i - 1] - floor.image);
		}
		bench_forget(test, bp.prog, hash);
	}

	bench_sort(hook_ns, BENCH_ROUNDS);
	bench_sort(hash_ns, BENCH_ROUNDS);
	bench_sort(lib_ns, BENCH_ROUNDS);
	bench_sort(beyond_ns, BENCH_ROUNDS);
	bench_sort(cold_ns, BENCH_ROUNDS);
	bench_sort(beyond_cold_ns, BENCH_ROUNDS);
	bench_sort(copy_ns, BENCH_ROUNDS);
	bench_sort(beyond_copy_ns, BENCH_ROUNDS);
	bench_sort(copy_image_ns, BENCH_ROUNDS);
	bench_sort(copy_kept_ns, BENCH_ROUNDS);
	bench_sort(beyond_kept_ns, BENCH_ROUNDS);
	bench_sort(beyond_image_ns, BENCH_ROUNDS);
	kunit_info(test,
		   "bpfstash_bench: prog=%s funcs=%u xlated_insns=%u jited_bytes=%u line_info=%u btf_bytes=%u hashed_bytes=%llu rounds=%u hook_ns=%lld hook_iqm_ns=%lld hook_p10_ns=%lld hook_p90_ns=%lld hook_p99_ns=%lld hash_ns=%lld hash_iqm_ns=%lld lib_hash_ns=%lld beyond_ns=%lld beyond_iqm_ns=%lld cold_ns=%lld beyond_cold_ns=%lld copy_ns=%lld beyond_copy_ns=%lld copy_image_ns=%lld copy_kept_ns=%lld beyond_kept_ns=%lld beyond_image_ns=%lld hash_calls=%s hash_driver=%s\n",
		   bc->name, content.nr_funcs,
		   content.xlated_len / (u32)sizeof(struct bpf_insn),
		   content.jited_len, content.nr_line_info,
		   content.btf_size, bytes, BENCH_ROUNDS,
		   bench_pct(hook_ns, BENCH_ROUNDS, 50), bench_iqm(hook_ns, BENCH_ROUNDS),
		   bench_pct(hook_ns, BENCH_ROUNDS, 10), bench_pct(hook_ns, BENCH_ROUNDS, 90),
		   bench_pct(hook_ns, BENCH_ROUNDS, 99),
		   bench_pct(hash_ns, BENCH_ROUNDS, 50), bench_iqm(hash_ns, BENCH_ROUNDS),
		   bench_pct(lib_ns, BENCH_ROUNDS, 50),
		   bench_pct(beyond_ns, BENCH_ROUNDS, 50), bench_iqm(beyond_ns, BENCH_ROUNDS),
		   bench_pct(cold_ns, BENCH_ROUNDS, 50),
		   bench_pct(beyond_cold_ns, BENCH_ROUNDS, 50),
		   bench_pct(copy_ns, BENCH_ROUNDS, 50),
		   bench_pct(beyond_copy_ns, BENCH_ROUNDS, 50),
		   bench_pct(copy_image_ns, BENCH_ROUNDS, 50),
		   bench_pct(copy_kept_ns, BENCH_ROUNDS, 50),
		   bench_pct(beyond_kept_ns, BENCH_ROUNDS, 50),
		   bench_pct(beyond_image_ns, BENCH_ROUNDS, 50),
		   calls, crypto_shash_driver_name(tfm));
}

static void bench_case_desc(const struct bench_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bench, bench_cases, bench_case_desc);

static struct kunit_case bpfstash_bench_cases[] = {
	KUNIT_CASE_PARAM_ATTR(bpfstash_bench_hook, bench_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite bpfstash_bench_suite = {
	.name = "bpfstash_bench",
	.test_cases = bpfstash_bench_cases,
};

kunit_test_suite(bpfstash_bench_suite);
