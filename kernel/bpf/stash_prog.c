// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: a program's snapshot, and the program hooks.
 *
 * __bpfstash_prog_load() snapshots a program that bpf_prog_load() makes
 * public: each function's JITed image, with the text that text_poke()
 * changes once the program runs put back as the JIT wrote it, the jited
 * line info as (function, offset), the BTF line and func info, the raw
 * BTF and the metadata; bpfstash_store_owner() (stash.c) names and stores
 * it.  The unload and link hooks write into the program's entry.  The
 * rules the hooks keep, and the locks, are described in stash.c.
 */

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/bpfstash.h>
#include <linux/btf.h>
#include <linux/filter.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/prefetch.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <linux/xxhash.h>
#include <asm/word-at-a-time.h>

#include <trace/events/bpfstash.h>

#include "stash.h"

/* The programs the stash may show: exactly those /proc/kallsyms lists. */
/*
 * Whether /proc/kallsyms shows BPF text now, for programs and images alike;
 * counted as skipped_hardened when it does not (bpf_jit_harden).
 */
bool bpfstash_kallsyms_shown(void)
{
	if (IS_ENABLED(CONFIG_BPF_JIT) && !bpf_jit_kallsyms_enabled()) {
		atomic64_inc(&bpfstash_store.skipped_hardened);
		return false;
	}
	return true;
}

static bool bpfstash_prog_eligible(const struct bpf_prog *prog)
{
	if (!prog->jited || bpf_prog_is_offloaded(prog->aux) ||
	    list_empty(&prog->aux->ksym.lnode)) {
		atomic64_inc(&bpfstash_store.skipped_unlisted);
		return false;
	}
	/*
	 * Without a JIT nothing is JITed and this is never reached; user-mode
	 * Linux has none, and runs KUnit's benchmark of this hook there.
	 */
	return bpfstash_kallsyms_shown();
}

const struct bpf_prog *bpfstash_func(const struct bpf_prog *prog, u32 i)
{
	/* Function 0 is the main program, which holds the kallsyms name. */
	return i ? prog->aux->func[i] : prog;
}

/*
 * The length of a kallsyms name, a word at a time: lib/string.c's strlen()
 * reads a byte at a time, and the hook measures the names of up to 256
 * functions for the size of the funcs file before it copies them.  @name
 * is a whole KSYM_NAME_LEN array, NUL-terminated within it, so its
 * aligned words never reach past it.
 */
static u32 bpfstash_name_len(const char *name)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	const unsigned long *w = (const unsigned long *)name;
	unsigned long c, data;
	u32 len;

	BUILD_BUG_ON(offsetof(struct bpf_ksym, name) % sizeof(long) ||
		     KSYM_NAME_LEN % sizeof(long));
	for (len = 0; len < KSYM_NAME_LEN; len += sizeof(long)) {
		c = *w++;
		if (has_zero(c, &data, &constants)) {
			data = prep_zero_mask(c, data, &constants);
			data = create_zero_mask(data);
			return len + find_zero(data);
		}
	}
	/* Never reached: bpf_get_prog_name() terminates names. */
	return KSYM_NAME_LEN - 1;
}

/*
 * Write the name of a function with its NUL to @w, and return how many
 * bytes that was.  A piece with room for any name gets it a word at a
 * time as bpfstash_name_len() reads it, with zeroes after the NUL to the
 * end of its word (the next name, or the padding after the last, is
 * written over them): one read of the name and no call of memcpy() for a
 * few dozen bytes.  At the end of a piece, the name is measured, then
 * copied.
 */
static u32 bpfstash_write_name(struct bpfstash_writer *w, const char *name)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	const unsigned long *src = (const unsigned long *)name;
	unsigned long c, data;
	u32 len;

	if (w->room < KSYM_NAME_LEN) {
		len = bpfstash_name_len(name);
		bpfstash_write(w, name, len);
		bpfstash_write(w, "", 1);
		return len + 1;
	}
	for (len = 0; len < KSYM_NAME_LEN; len += sizeof(long)) {
		c = *src++;
		if (has_zero(c, &data, &constants)) {
			data = prep_zero_mask(c, data, &constants);
			data = create_zero_mask(data);
			put_unaligned(c & zero_bytemask(data), (unsigned long *)(w->p + len));
			len += find_zero(data) + 1;
			break;
		}
		put_unaligned(c, (unsigned long *)(w->p + len));
	}
	/* Never unterminated, but if it were: cut as bpfstash_name_len() counts it. */
	if (len == KSYM_NAME_LEN)
		w->p[len - 1] = '\0';
	w->p += len;
	w->room -= len;
	w->off += len;
	return len;
}

/* Programs of up to this many functions keep their spans on the stack. */
#define BPFSTASH_SPANS_ON_STACK	8

/* Both sizes in one walk: each function is a few cache misses of its own. */
VISIBLE_IF_KUNIT void bpfstash_prog_sizes(const struct bpf_prog *prog, struct bpfstash_sizes *sz)
{
	u32 nr_funcs = prog->aux->func_cnt ?: 1, names = 0, jited = 0, i;

	for (i = 0; i < nr_funcs; i++) {
		const struct bpf_prog *f = bpfstash_func(prog, i);

		names += bpfstash_name_len(f->aux->ksym.name) + 1;
		jited += f->jited_len;
		/*
		 * What the next walks read of the function, on its way
		 * meanwhile: the start of its image, and its first line.
		 */
		prefetch(f->bpf_func);
		prefetch(&f->aux->linfo_idx);
	}
	sz->funcs = nr_funcs * sizeof(struct bpfstash_func) + round_up(names, 8);
	sz->jited = jited;
}

/*
 * The bytes of a function's code that bpf_arch_text_poke() rewrites while
 * the program lives, as the JIT emitted them.  On x86-64: the 5-byte nop
 * at the function's entry (after ENDBR), where a trampoline attaching to
 * the function puts its call, and for each direct tail call the jump past
 * the call (while the slot is empty) and the nop that becomes a jump to
 * its target (emit_prologue(), emit_bpf_tail_call_direct(),
 * bpf_arch_poke_desc_update()).  On arm64: the nop after "mov x9, lr" (and
 * BTI) at the function's entry, where a trampoline's "bl" goes
 * (build_prologue(), POKE_OFFSET); its tail calls are indirect, never
 * poked.  The entry holds them as emitted, never as the copy caught them
 * (a poke in flight has an int3 in its first byte on x86), and says where
 * they are: the entry's in each funcs record, the tail calls' in the pokes
 * file.
 */
#define BPFSTASH_POKE_LEN	5

static const u8 bpfstash_nop5[BPFSTASH_POKE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
#if defined(CONFIG_X86_64)
static const u8 bpfstash_endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
#define BPFSTASH_ENTRY_SITE	bpfstash_nop5
#elif defined(CONFIG_ARM64)
/* A64 instructions, which are little-endian whatever the data's order. */
#define BPFSTASH_A64_INSN	4
static const u8 bpfstash_a64_nop[BPFSTASH_A64_INSN] = { 0x1f, 0x20, 0x03, 0xd5 };
static const u8 bpfstash_a64_mov_x9_lr[BPFSTASH_A64_INSN] = { 0xc9, 0x03, 0x00, 0x91 };
#define BPFSTASH_ENTRY_SITE	bpfstash_a64_nop
#else
#define BPFSTASH_ENTRY_SITE	bpfstash_nop5
#endif
#define BPFSTASH_SITE_LEN	sizeof(BPFSTASH_ENTRY_SITE)

/* Where function @f's entry patch site is, or -1 where it has none. */
static int bpfstash_entry_poke(const struct bpf_prog *f)
{
#if defined(CONFIG_X86_64)
	u32 off = 0;

	if (f->jited_len >= sizeof(bpfstash_endbr64) + BPFSTASH_SITE_LEN &&
	    !memcmp(f->bpf_func, bpfstash_endbr64, sizeof(bpfstash_endbr64)))
		off = sizeof(bpfstash_endbr64);
	return f->jited_len >= off + BPFSTASH_SITE_LEN ? off : -1;
#elif defined(CONFIG_ARM64)
	/* [bti jc,] mov x9, lr (add x9, x30, #0), nop: the site follows the mov. */
	u32 off = (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) ? 2 : 1) * BPFSTASH_A64_INSN;
	const u8 *code = (const u8 *)f->bpf_func;

	if (f->jited_len < off + BPFSTASH_SITE_LEN ||
	    memcmp(code + off - BPFSTASH_A64_INSN, bpfstash_a64_mov_x9_lr, BPFSTASH_A64_INSN))
		return -1;
	return off;
#else
	return -1;
#endif
}

/*
 * Write function @f's image to @w with its entry patch site at @entry
 * (-1: none) as emitted.
 */
static void bpfstash_write_func_image(struct bpfstash_writer *w, const struct bpf_prog *f,
				      int entry)
{
	const u8 *src = (const u8 *)f->bpf_func;

	if (entry < 0) {
		bpfstash_write_image(w, src, f->jited_len);
		return;
	}
	if (entry)
		bpfstash_write(w, src, entry);
	bpfstash_write(w, BPFSTASH_ENTRY_SITE, BPFSTASH_SITE_LEN);
	bpfstash_write_image(w, src + entry + BPFSTASH_SITE_LEN,
			     f->jited_len - entry - BPFSTASH_SITE_LEN);
}

/* Whether @poke is a direct tail call in function @i of @prog. */
static bool bpfstash_poke_in(const struct bpf_prog *prog, u32 i,
			     const struct bpf_jit_poke_descriptor *poke)
{
	if (poke->reason != BPF_POKE_REASON_TAIL_CALL)
		return false;
	/* jit_subprogs() gives each its function's aux; alone, it has none. */
	if (prog->aux->func_cnt)
		return poke->aux == prog->aux->func[i]->aux;
	return !poke->aux || poke->aux == prog->aux;
}

static void bpfstash_put_poke(struct bpfstash_poke *rec, struct bpfstash_blob *image,
			      u32 func_off, u32 i, u32 off, u32 kind, const u8 *bytes)
{
	*rec = (struct bpfstash_poke){
		.func = cpu_to_le32(i),
		.off = cpu_to_le32(off),
		.len = cpu_to_le32(BPFSTASH_POKE_LEN),
		.kind = cpu_to_le32(kind),
	};
	bpfstash_blob_write(image, func_off + off, bytes, BPFSTASH_POKE_LEN);
}

/*
 * Write the direct tail calls' sites of function @i, at @func_off in
 * @image, as the JIT emitted them, and their records from @recs on.
 * Returns the number of records.
 */
static u32 bpfstash_func_pokes(const struct bpf_prog *prog, u32 i, struct bpfstash_blob *image,
			       u32 func_off, struct bpfstash_poke *recs)
{
	const struct bpf_prog *f = bpfstash_func(prog, i);
	unsigned long lo = (unsigned long)f->bpf_func;
	u8 jmp[BPFSTASH_POKE_LEN];
	u32 n = 0, j;

	for (j = 0; j < prog->aux->size_poke_tab; j++) {
		const struct bpf_jit_poke_descriptor *poke = &prog->aux->poke_tab[j];
		unsigned long bypass = (unsigned long)poke->tailcall_bypass;
		unsigned long target = (unsigned long)poke->tailcall_target;

		if (!bpfstash_poke_in(prog, i, poke))
			continue;
		if (WARN_ON_ONCE(bypass < lo || bypass - lo > f->jited_len - BPFSTASH_POKE_LEN ||
				 target < lo || target - lo > f->jited_len - BPFSTASH_POKE_LEN))
			continue;
		/* jmp rel32, to just past the target's site */
		jmp[0] = 0xe9;
		put_unaligned_le32(target - bypass, jmp + 1);
		bpfstash_put_poke(&recs[n++], image, func_off, i, bypass - lo,
				  BPFSTASH_POKE_TAIL_CALL_BYPASS, jmp);
		bpfstash_put_poke(&recs[n++], image, func_off, i, target - lo,
				  BPFSTASH_POKE_TAIL_CALL, bpfstash_nop5);
	}
	return n;
}

/* Programs of up to this many tail calls' sites build their records on the stack. */
#define BPFSTASH_POKES_ON_STACK	8

/*
 * Write the direct tail calls' sites of @prog's image, already copied into
 * @e's jited blob, as emitted, and make its pokes blob.  Before the image
 * is hashed; nothing to do for a program without direct tail calls.
 */
static int bpfstash_snapshot_pokes(const struct bpf_prog *prog, u32 nr_funcs,
				   struct bpfstash_entry *e, struct bpfstash_hash_acct *acct)
{
	struct bpfstash_poke few[BPFSTASH_POKES_ON_STACK], *recs = few;
	u32 max = 2 * prog->aux->size_poke_tab, n = 0, i, off = 0;
	struct bpfstash_blob *b;

	if (!IS_ENABLED(CONFIG_X86_64) || !max)
		return 0;
	if (max > ARRAY_SIZE(few)) {
		recs = kmalloc_array(max, sizeof(*recs), BPFSTASH_GFP);
		if (!recs)
			return -ENOMEM;
	}
	for (i = 0; i < nr_funcs; i++) {
		n += bpfstash_func_pokes(prog, i, e->blobs[BPFSTASH_BLOB_JITED], off, recs + n);
		off += bpfstash_func(prog, i)->jited_len;
	}
	e->content.nr_pokes = cpu_to_le32(n);
	b = bpfstash_blob_new(recs, n * sizeof(*recs), &bpfstash_store.blob_dedup, acct);
	if (recs != few)
		kfree(recs);
	if (IS_ERR(b))
		return PTR_ERR(b);
	e->blobs[BPFSTASH_BLOB_POKES] = b;
	return 0;
}

/*
 * Build the "funcs" file (one struct bpfstash_func per function, then the
 * names, then zeroes to a multiple of 8 bytes) and the image (the
 * functions back to back: they are not contiguous) in one walk over the
 * functions, of the sizes bpfstash_prog_sizes() found, and fill in each
 * function's span for the passes over the lines.  Offsets into the jited
 * file follow bpf_prog_get_info_by_fd().  Every byte of both is written
 * here.
 */
VISIBLE_IF_KUNIT int bpfstash_snapshot_funcs(const struct bpf_prog *prog, u32 nr_funcs,
					     const struct bpfstash_sizes *sz,
					     struct bpfstash_entry *e, struct bpfstash_span *spans)
{
	static const u8 zeroes[8];
	struct bpfstash_writer recs, names, image;
	u32 i, name_off = 0, offset = 0;
	struct bpfstash_blob *b;
	int err;

	err = bpfstash_funcs_alloc(e, sz->funcs);
	if (err)
		return err;
	e->content.funcs_size = cpu_to_le32(sz->funcs);
	b = bpfstash_blob_alloc(sz->jited);
	if (!b)
		return -ENOMEM;
	b->seen_key = 0;	/* addresses inside: never the same bytes again */
	e->blobs[BPFSTASH_BLOB_JITED] = b;

	bpfstash_writer_init(&recs, e->funcs, e->funcs_segs, sz->funcs, 0);
	bpfstash_writer_init(&names, e->funcs, e->funcs_segs, sz->funcs,
			     nr_funcs * sizeof(struct bpfstash_func));
	bpfstash_blob_writer(&image, b);
	for (i = 0; i < nr_funcs; i++) {
		const struct bpf_prog *f = bpfstash_func(prog, i);
		/* prog_tags[] holds each subprogram's own tag. */
		const u8 *tag = prog->aux->func_cnt ? prog->aux->func[i]->tag : prog->tag;
		struct bpfstash_func *r = bpfstash_write_place(&recs, sizeof(*r));
		int entry = bpfstash_entry_poke(f);

		if (likely(r)) {
			r->addr = cpu_to_le64((unsigned long)f->bpf_func);
			r->len = cpu_to_le32(f->jited_len);
			r->offset = cpu_to_le32(offset);
			r->name_off = cpu_to_le32(name_off);
			r->entry_poke_off = cpu_to_le16(entry < 0 ? 0 : entry);
			r->entry_poke_len = cpu_to_le16(entry < 0 ? 0 : BPFSTASH_SITE_LEN);
			memcpy(r->tag, tag, BPFSTASH_TAG_SIZE);
		} else {
			struct bpfstash_func rec = {
				.addr = cpu_to_le64((unsigned long)f->bpf_func),
				.len = cpu_to_le32(f->jited_len),
				.offset = cpu_to_le32(offset),
				.name_off = cpu_to_le32(name_off),
				.entry_poke_off = cpu_to_le16(entry < 0 ? 0 : entry),
				.entry_poke_len = cpu_to_le16(entry < 0 ? 0 : BPFSTASH_SITE_LEN),
			};

			memcpy(rec.tag, tag, BPFSTASH_TAG_SIZE);
			bpfstash_write(&recs, &rec, sizeof(rec));
		}
		name_off += bpfstash_write_name(&names, f->aux->ksym.name);
		bpfstash_write_func_image(&image, f, entry);
		spans[i] = (struct bpfstash_span){
			.lo = (unsigned long)f->bpf_func,
			.len = f->jited_len,
			.first_line = f->aux->linfo_idx,
		};
		offset += f->jited_len;
	}
	bpfstash_write(&names, zeroes, sz->funcs - names.off);
	return 0;
}

/* The first line of the function after @f, U32_MAX after the last one. */
static u32 bpfstash_next_func_line(const struct bpfstash_lines *l, u32 f)
{
	return f + 1 < l->nr_funcs ? l->spans[f + 1].first_line : U32_MAX;
}

/* A struct bpfstash_jited_line as one word, in memory order. */
static __always_inline u64 bpfstash_jited_line_word(u32 func, u32 off)
{
	struct bpfstash_jited_line l = { .func = cpu_to_le32(func), .off = cpu_to_le32(off) };
	u64 word;

	BUILD_BUG_ON(sizeof(l) != sizeof(word));
	memcpy(&word, &l, sizeof(word));
	return word;
}

/*
 * Lines [@i, @stop) of one function, at @lo of @len bytes, compared with
 * @cmp: four at a time, without a branch per line (the lines of a large
 * program are compared at every load of it).  Returns 0, 1 when @cmp
 * differs, or -EINVAL when a line is outside the function.
 */
static __always_inline int
bpfstash_jited_lines_cmp_func(void *const *jited_linfo, u32 i, u32 stop, u32 f,
			      unsigned long lo, unsigned long len, const u64 *cmp)
{
	const unsigned long *p = (const unsigned long *)jited_linfo + i;
	const unsigned long *end = (const unsigned long *)jited_linfo + stop;
	/* The largest offset: below lo, the difference wraps past len. */
	unsigned long top = 0;
	u64 diff = 0;

	for (; end - p >= 4; p += 4, cmp += 4) {
		unsigned long o0 = p[0] - lo, o1 = p[1] - lo;
		unsigned long o2 = p[2] - lo, o3 = p[3] - lo;

		top = max3(top, max(o0, o1), max(o2, o3));
		diff |= (bpfstash_jited_line_word(f, o0) ^ cmp[0]) |
			(bpfstash_jited_line_word(f, o1) ^ cmp[1]) |
			(bpfstash_jited_line_word(f, o2) ^ cmp[2]) |
			(bpfstash_jited_line_word(f, o3) ^ cmp[3]);
	}
	for (; p < end; p++, cmp++) {
		top = max(top, *p - lo);
		diff |= bpfstash_jited_line_word(f, *p - lo) ^ *cmp;
	}
	if (WARN_ON_ONCE(top >= len))
		return -EINVAL;
	return diff ? 1 : 0;
}

/*
 * Lines [@i, @stop) of one function, at @lo of @len bytes, written to
 * @out: four at a time, and checked to be inside the function once after
 * them rather than with a branch per line (a large program has thousands).
 * Returns 0, or -EINVAL when a line is outside the function.
 */
static __always_inline int
bpfstash_jited_lines_put_func(void *const *jited_linfo, u32 i, u32 stop, u32 f,
			      unsigned long lo, unsigned long len, u64 *out)
{
	const unsigned long *p = (const unsigned long *)jited_linfo + i;
	const unsigned long *end = (const unsigned long *)jited_linfo + stop;
	/* The largest offset: below lo, the difference wraps past len. */
	unsigned long top = 0;

	for (; end - p >= 4; p += 4, out += 4) {
		unsigned long o0 = p[0] - lo, o1 = p[1] - lo;
		unsigned long o2 = p[2] - lo, o3 = p[3] - lo;

		top = max3(top, max(o0, o1), max(o2, o3));
		out[0] = bpfstash_jited_line_word(f, o0);
		out[1] = bpfstash_jited_line_word(f, o1);
		out[2] = bpfstash_jited_line_word(f, o2);
		out[3] = bpfstash_jited_line_word(f, o3);
	}
	for (; p < end; p++, out++) {
		top = max(top, *p - lo);
		*out = bpfstash_jited_line_word(f, *p - lo);
	}
	if (WARN_ON_ONCE(top >= len))
		return -EINVAL;
	return 0;
}

VISIBLE_IF_KUNIT void bpfstash_line_walk_init(struct bpfstash_line_walk *w,
					      const struct bpfstash_lines *l)
{
	w->l = l;
	w->f = 0;
	w->next = bpfstash_next_func_line(l, 0);
}

/*
 * Move @w forward to the function of line @i, by bisection: functions'
 * first lines increase with the function (the verifier requires line info
 * sorted by instruction, with a line at the start of each subprogram), so
 * the samples of a key cost a few lookups rather than one per function.
 */
static void bpfstash_line_walk_seek(struct bpfstash_line_walk *w, u32 i)
{
	/* The last function's next line is U32_MAX: @i is before it. */
	u32 lo = w->f, hi = w->l->nr_funcs - 1, mid;

	if (i < w->next)
		return;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (bpfstash_next_func_line(w->l, mid) > i)
			hi = mid;
		else
			lo = mid + 1;
	}
	w->f = lo;
	w->next = bpfstash_next_func_line(w->l, lo);
}

static __always_inline int
__bpfstash_jited_lines(struct bpfstash_line_walk *w, u32 first, u32 n,
		       u64 *out, const u64 *cmp, const bool compare)
{
	/* Locals: the stores below could alias *w and what it points to. */
	const struct bpfstash_lines *l = w->l;
	void *const *jited_linfo = l->jited_linfo;
	u32 i = first, end = first + n;
	int err;

	while (i < end) {
		unsigned long lo, len;
		u32 f, stop;

		while (i >= w->next)
			w->next = bpfstash_next_func_line(l, ++w->f);
		f = w->f;
		lo = l->spans[f].lo;
		len = l->spans[f].len;
		stop = min(w->next, end);

		if (compare) {
			err = bpfstash_jited_lines_cmp_func(jited_linfo, i, stop, f,
							    lo, len, cmp);
			cmp += stop - i;
		} else {
			err = bpfstash_jited_lines_put_func(jited_linfo, i, stop, f,
							    lo, len, out);
			out += stop - i;
		}
		if (err)
			return err;
		i = stop;
	}
	return 0;
}

/*
 * jited_line_info as (function, offset): the line info of function f
 * starts at its linfo_idx, as the JIT and bpf_prog_get_info_by_fd() see it.
 * Lines [@first, @first + @n) are written to @out or, if @cmp is given,
 * compared with @cmp instead, without a store; @first is not before the
 * lines @w has passed.  Returns 0, 1 when @cmp differs, or -EINVAL when
 * the JIT put a line outside its function.
 */
VISIBLE_IF_KUNIT int bpfstash_jited_lines(struct bpfstash_line_walk *w, u32 first, u32 n,
					  u64 *out, const u64 *cmp)
{
	/*
	 * Two inlined copies, each with its own inner loop.  @compare is a
	 * constant for that: the kernel builds with
	 * -fno-delete-null-pointer-checks, so a test of @cmp would stay in the loop.
	 */
	if (cmp)
		return __bpfstash_jited_lines(w, first, n, NULL, cmp, true);
	return __bpfstash_jited_lines(w, first, n, out, NULL, false);
}

/*
 * The key bpfstash_blob_seen_key() gives the @nr records of jited line
 * info, from the records its sample covers: the lines are computed again
 * for the few bytes it reads, not stored.
 */
VISIBLE_IF_KUNIT int bpfstash_jited_lines_key(const struct bpfstash_lines *l, u32 *key)
{
	/* All the records of a small blob, or the 9 one sample can span. */
	u64 buf[3 * BPFSTASH_SEEN_SAMPLE / sizeof(u64) + 1];
	u32 nr = l->nr, size = nr * sizeof(struct bpfstash_jited_line), part, i;
	const u32 at[3] = {
		0, size / 2 - BPFSTASH_SEEN_SAMPLE / 2, size - BPFSTASH_SEEN_SAMPLE,
	};
	struct bpfstash_line_walk w;
	struct xxh64_state state;
	int err;

	BUILD_BUG_ON(BPFSTASH_SEEN_SAMPLE % sizeof(buf[0]));
	bpfstash_line_walk_init(&w, l);
	if (size <= 3 * BPFSTASH_SEEN_SAMPLE) {
		err = bpfstash_jited_lines(&w, 0, nr, buf, NULL);
		*key = lower_32_bits(xxh64(buf, size, size));
		return err;
	}
	xxh64_reset(&state, size);
	for (part = 0; part < 3; part++) {
		u32 rec = at[part] / sizeof(buf[0]);
		u32 cnt = min_t(u32, BPFSTASH_SEEN_SAMPLE / sizeof(buf[0]) + 1, nr - rec);

		bpfstash_line_walk_seek(&w, rec);
		err = bpfstash_jited_lines(&w, rec, cnt, buf, NULL);
		if (err)
			return err;
		i = at[part] % sizeof(buf[0]);
		xxh64_update(&state, (u8 *)buf + i, BPFSTASH_SEEN_SAMPLE);
	}
	*key = lower_32_bits(xxh64_digest(&state));
	return 0;
}

/*
 * The lines of blob @b, piece by piece (pieces hold whole records): written
 * to it, or compared with it.
 */
VISIBLE_IF_KUNIT int bpfstash_jited_lines_blob(const struct bpfstash_lines *l,
					       struct bpfstash_blob *b, bool compare)
{
	struct bpfstash_line_walk w;
	u32 off, n;
	void *p;
	int err;

	bpfstash_line_walk_init(&w, l);
	for_each_blob_piece(b, off, p, n) {
		err = bpfstash_jited_lines(&w, off / sizeof(u64), n / sizeof(u64),
					   compare ? NULL : p, compare ? p : NULL);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The jited line info blob: offsets, not addresses, so the same when the
 * program is loaded again.  A stored blob that the key finds is compared
 * with the lines as they are computed, without building them; only lines
 * never seen are built into a new blob.
 */
static int bpfstash_snapshot_jited_lines(const struct bpfstash_lines *l,
					 struct bpfstash_blob **blob,
					 struct bpfstash_hash_acct *acct)
{
	u32 size = l->nr * sizeof(struct bpfstash_jited_line);
	struct bpfstash_blob *b;
	u32 key;
	int err;

	*blob = NULL;
	if (!l->nr || !l->jited_linfo)
		return 0;
	err = bpfstash_jited_lines_key(l, &key);
	if (err)
		return err;
	b = bpfstash_blob_candidate(size, key);
	if (b) {
		err = bpfstash_jited_lines_blob(l, b, true);
		if (!err) {
			atomic64_inc(&bpfstash_store.blob_dedup);
			*blob = b;
			return 0;
		}
		bpfstash_blob_put(b);
		if (err < 0)
			return err;
	}

	b = bpfstash_blob_alloc(size);
	if (!b)
		return -ENOMEM;
	err = bpfstash_jited_lines_blob(l, b, false) ?:
	      bpfstash_blob_digest(b, acct);
	if (err) {
		bpfstash_blob_put(b);
		return err;
	}
	b->seen_key = key;
	*blob = b;
	return 0;
}

/*
 * A copy of @n bytes of records of 32-bit fields at @src, little-endian as
 * an entry holds them: @src itself on a little-endian machine, else @buf
 * (allocated here, the caller frees it).
 */
static const void *bpfstash_le32_records(const void *src, u32 n, void **buf)
{
	*buf = NULL;
#ifdef __BIG_ENDIAN
	if (n) {
		const u32 *from = src;
		__le32 *to = kmalloc(n, BPFSTASH_GFP);
		u32 i;

		if (!to)
			return NULL;
		for (i = 0; i < n / sizeof(u32); i++)
			to[i] = cpu_to_le32(from[i]);
		*buf = to;
		return to;
	}
#endif
	return src;
}

/*
 * A blob of @n bytes of records of 32-bit fields (struct bpf_line_info,
 * struct bpf_func_info), little-endian.
 */
static struct bpfstash_blob *bpfstash_le32_blob(const void *src, u32 n,
						struct bpfstash_hash_acct *acct)
{
	struct bpfstash_blob *b;
	const void *data;
	void *buf;

	data = bpfstash_le32_records(src, n, &buf);
	if (!data && n)
		return ERR_PTR(-ENOMEM);
	b = bpfstash_blob_new(data, n, &bpfstash_store.blob_dedup, acct);
	kfree(buf);
	return b;
}

/*
 * Copy what bpf_prog_get_info_by_fd() would return for @prog into a new,
 * unlisted entry, and name it.  @sz is what bpfstash_prog_sizes() found,
 * which the caller has already used to check the limits; @spans has room
 * for each function's.
 */
static int __bpfstash_snapshot(struct bpf_prog *prog, const struct bpfstash_sizes *sz,
			       struct bpfstash_entry *e, struct bpfstash_hash_acct *acct,
			       struct bpfstash_span *spans)
{
	struct bpf_prog_aux *aux = prog->aux;
	u32 nr_funcs = aux->func_cnt ?: 1;
	struct bpfstash_content *c;
	struct bpfstash_lines lines;
	struct bpfstash_blob *b;
	int err;

	err = bpfstash_snapshot_funcs(prog, nr_funcs, sz, e, spans) ?:
	      bpfstash_snapshot_pokes(prog, nr_funcs, e, acct) ?:
	      bpfstash_blob_digest(e->blobs[BPFSTASH_BLOB_JITED], acct);
	if (err)
		return err;

	c = &e->content;
	bpfstash_content_init(c);
	c->prog_type = cpu_to_le32(prog->type);
	c->expected_attach_type = cpu_to_le32(prog->expected_attach_type);
	c->nr_funcs = cpu_to_le32(nr_funcs);
	c->jited_len = cpu_to_le32(sz->jited);
	c->nr_line_info = cpu_to_le32(aux->nr_linfo);
	c->line_info_rec_size = cpu_to_le32(sizeof(struct bpf_line_info));
	c->nr_func_info = cpu_to_le32(aux->func_info_cnt);
	c->func_info_rec_size = cpu_to_le32(sizeof(struct bpf_func_info));
	c->xlated_len = cpu_to_le32(bpf_prog_insn_size(prog));
	c->verified_insns = cpu_to_le32(aux->verified_insns);
	c->attach_btf_id = cpu_to_le32(aux->attach_btf_id);
	c->gpl_compatible = cpu_to_le32(prog->gpl_compatible);
	c->nr_jited_line_info = cpu_to_le32(aux->jited_linfo ? aux->nr_linfo : 0);
	memcpy(c->tag, prog->tag, BPFSTASH_TAG_SIZE);
	memcpy(c->name, aux->name, BPFSTASH_NAME_LEN);

	b = bpfstash_le32_blob(aux->linfo, aux->nr_linfo * sizeof(struct bpf_line_info), acct);
	if (IS_ERR(b))
		return PTR_ERR(b);
	e->blobs[BPFSTASH_BLOB_LINE_INFO] = b;

	lines = (struct bpfstash_lines){
		.jited_linfo = aux->jited_linfo,
		.spans = spans,
		.nr_funcs = nr_funcs,
		.nr = aux->nr_linfo,
	};
	err = bpfstash_snapshot_jited_lines(&lines, &e->blobs[BPFSTASH_BLOB_JITED_LINE_INFO],
					    acct);
	if (err)
		return err;

	b = bpfstash_le32_blob(aux->func_info, aux->func_info_cnt * sizeof(struct bpf_func_info),
			       acct);
	if (IS_ERR(b))
		return PTR_ERR(b);
	e->blobs[BPFSTASH_BLOB_FUNC_INFO] = b;

	b = bpfstash_btf_blob(aux->btf, acct);
	if (IS_ERR(b))
		return PTR_ERR(b);
	e->blobs[BPFSTASH_BLOB_BTF] = b;
	c->btf_size = cpu_to_le32(b ? b->size : 0);

	/* State: not hashed. */
	e->state.prog_id = aux->id;
	e->state.uid = from_kuid_munged(&init_user_ns, aux->user->uid);
	e->state.btf_id = aux->btf ? btf_obj_id(aux->btf) : 0;
	e->state.attach_btf_obj_id = aux->attach_btf ? btf_obj_id(aux->attach_btf) : 0;
	if (aux->attach_func_name)
		strscpy(e->attach_func_name, aux->attach_func_name, sizeof(e->attach_func_name));
	bpfstash_entry_set_load_time(e, aux->load_time);

	return bpfstash_content_hash(c, e->funcs, e->funcs_segs, e->blobs, e->hash, acct);
}

static int bpfstash_snapshot(struct bpf_prog *prog, const struct bpfstash_sizes *sz,
			     struct bpfstash_entry *e, struct bpfstash_hash_acct *acct)
{
	struct bpfstash_span few[BPFSTASH_SPANS_ON_STACK], *spans = few;
	u32 nr_funcs = prog->aux->func_cnt ?: 1;
	int err;

	if (nr_funcs > ARRAY_SIZE(few)) {
		spans = kmalloc_array(nr_funcs, sizeof(*spans), BPFSTASH_GFP);
		if (!spans)
			return -ENOMEM;
	}
	err = __bpfstash_snapshot(prog, sz, e, acct, spans);
	if (spans != few)
		kfree(spans);
	return err;
}

/* What a program's snapshot needs besides the owner. */
struct bpfstash_prog_owner {
	struct bpfstash_owner owner;
	struct bpf_prog *prog;
	struct bpfstash_sizes sz;
};

static int bpfstash_snapshot_prog(const struct bpfstash_owner *o, struct bpfstash_entry *e,
				  struct bpfstash_hash_acct *acct)
{
	const struct bpfstash_prog_owner *po = container_of(o, struct bpfstash_prog_owner, owner);

	return bpfstash_snapshot(po->prog, &po->sz, e, acct);
}

/* Store @prog: bpfstash_store_owner(), for a program the stash may show. */
static int bpfstash_store_prog(struct bpf_prog *prog, bool preexisting,
			       struct bpfstash_entry **out, struct bpfstash_result *res)
{
	struct bpfstash_prog_owner po = {
		.owner.slot = &prog->aux->stash,
		.owner.snapshot = bpfstash_snapshot_prog,
		.prog = prog,
	};

	*out = NULL;
	if (res)
		res->outcome = BPFSTASH_SKIPPED;
	if (!bpfstash_prog_eligible(prog))
		return -ENOENT;
	bpfstash_prog_sizes(prog, &po.sz);
	po.owner.min_bytes = bpfstash_min_bytes(po.sz.funcs, po.sz.jited);
	return bpfstash_store_owner(&po.owner, preexisting, out, res);
}

void __bpfstash_prog_load(struct bpf_prog *prog)
{
	/* The tracepoint's figures cost nothing while it is disabled. */
	bool traced = trace_bpfstash_store_enabled();
	struct bpfstash_result res = {};
	u64 start = traced ? ktime_get_ns() : 0;
	struct bpfstash_entry *e;
	int flags;

	flags = bpfstash_store_prog(prog, false, &e, traced ? &res : NULL);
	if (flags >= 0)
		perf_event_bpf_mmap3(prog, e ? e->hash : NULL,
				     e ? BPFSTASH_HASH_SIZE : 0, flags);
	if (traced)
		trace_bpfstash_store(prog, e ? e->hash : NULL, res.outcome, res.bytes,
				     res.hashed.bytes, ktime_get_ns() - start, res.hashed.ns);
	if (e)
		bpfstash_entry_put(e);
}

void __bpfstash_prog_unload(struct bpf_prog *prog)
{
	struct bpfstash_entry *e = unrcu_pointer(xchg(&prog->aux->stash, NULL));

	if (!e)
		return;
	bpfstash_entry_unloaded(e, true);
	bpfstash_entry_put(e);
}

/*
 * The link @prog was attached by: its type, id and target (see struct
 * bpfstash_meta), the last one made while the program is loaded.  Process
 * context; the entry may be leaving the store meanwhile (it is freed after
 * an RCU grace period), which makes the write useless, not unsafe.
 */
void __bpfstash_prog_linked(struct bpf_prog *prog, u32 type, u32 id, const char *target)
{
	size_t len = strnlen(target, BPFSTASH_LINK_TARGET_LEN - 1);
	const struct bpfstash_link_target *old = NULL;
	struct bpfstash_link_target *t;
	struct mem_cgroup *memcg, *prev;
	struct bpfstash_entry *e;

	/* Out of line: most programs are never linked, or once. */
	memcg = bpfstash_charge_begin(&prev);
	t = kmalloc(struct_size(t, name, len + 1), BPFSTASH_GFP);
	bpfstash_charge_end(memcg, prev);
	if (t) {
		memcpy(t->name, target, len);
		t->name[len] = '\0';
	}

	rcu_read_lock();
	e = rcu_dereference(prog->aux->stash);
	if (e) {
		write_seqlock_bh(&bpfstash_store.state);
		old = e->state.link_target;
		e->state.link_type = type;
		e->state.link_id = id;
		e->state.link_target = t;
		write_sequnlock_bh(&bpfstash_store.state);
	} else {
		old = t;
	}
	rcu_read_unlock();
	if (old)
		kfree_rcu((struct bpfstash_link_target *)old, rcu);
}

/*
 * Detach the entries of loaded programs (at stop), or store the loaded
 * programs that have none (at start), walking the program IDR.
 */
void bpfstash_walk_progs(bool store_them)
{
	struct bpfstash_entry *e;
	struct bpf_prog *prog;
	u32 id = 0;

	for (;; id++) {
		prog = bpf_prog_get_curr_or_next(&id);
		if (!prog)
			break;
		if (store_them) {
			if (bpfstash_store_prog(prog, true, &e, NULL) >= 0 && e)
				bpfstash_entry_put(e);
		} else {
			e = unrcu_pointer(xchg(&prog->aux->stash, NULL));
			if (e) {
				bpfstash_entry_unloaded(e, false);
				bpfstash_entry_put(e);
			}
		}
		bpf_prog_put(prog);
		cond_resched();
	}
}
