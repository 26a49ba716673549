// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the store: its entries, the load and unload hooks, and
 * starting and stopping it.  The blobs that hold an entry's bytes are in
 * stash_blob.c; stash.h is what the two files share.  The filesystem view
 * (fs/bpfstash/) uses only include/linux/bpfstash.h.
 *
 * While the store runs, every eBPF program that is JITed and gets a
 * kallsyms entry is snapshotted when bpf_prog_load() makes it
 * public: the JITed image of each function with its address, length and
 * kallsyms name, the jited line info as (function, offset), the BTF line
 * and func info and the raw BTF, and the metadata that
 * bpf_prog_get_info_by_fd() reports.  The snapshot is named by a content
 * hash (include/uapi/linux/bpfstash.h) and perf is told the hash in-band
 * with PERF_RECORD_MMAP3, so that a sample can be resolved at any later
 * time, including after the program was unloaded.
 *
 * Rules that shape this file:
 *
 * - Storing is best effort.  The hooks are void, allocate with
 *   __GFP_NORETRY | __GFP_NOWARN, and count what they could not store.
 *   When the store is full it refuses and counts; it never evicts, which is
 *   policy and belongs to userspace (bpfstash-gc).
 *
 * - The store runs from when it is started (the bpfstash= boot parameter,
 *   the filesystem's "control" file, or the first mount if neither did)
 *   until it is stopped (the control file); the filesystem is only its
 *   view, and unmounting it drops nothing.  While the store is stopped the
 *   load hook costs one static branch.  Starting it stores the programs
 *   that are already loaded; stopping it drops every entry.
 *
 * - The unload hook may run in softirq context: it only writes the unload
 *   time and clears a bit (under a seqlock, bottom halves off) and drops a
 *   reference.  Entries are freed from a
 *   workqueue after an RCU grace period.
 *
 * - Identical blobs are stored once: a blob is addressed by its SHA-256
 *   digest.  Programs of one object share their BTF; that and the other
 *   blobs that stay the same when a program is loaded again are found by
 *   their bytes, not hashed again (bpfstash_blob_seen()).
 *
 * - A blob larger than a small kmalloc() is held in pieces (8 KiB, then
 *   power-of-two tails) rather than in one allocation, which would round
 *   it up to a page or a kmalloc bucket: see struct bpfstash_blob.
 *   Entries come from a cache of their own, without kmalloc's rounding.
 *
 * Locking: bpfstash_store.lock (a mutex) serialises inserting and removing entries
 * and blobs, activation and limits.  bpfstash_store.state (a seqlock) covers the
 * state of entries, which loading a program again and unloading it
 * rewrite; readers copy it with bpfstash_entry_state().  Lookups of
 * entries and blobs are lockless under RCU and take a reference with
 * refcount_inc_not_zero().  A blob's count only drops to zero under
 * bpfstash_store.lock (refcount_dec_and_mutex_lock()), so a blob found in the table
 * under the lock is never dying.  Lock order: inode locks (VFS) ->
 * bpfstash_store.lock -> bpfstash_store.state, prog_idr_lock.
 *
 * The image hooks are called with the callers' locks held, outermost
 * first: a trampoline's, ftrace's direct_mutex (when ftrace asks BPF to
 * share an IPMODIFY'd function) -> bpf_trampoline::mutex; the
 * dispatcher's, RTNL (an XDP attach) -> bpf_dispatcher::mutex; a
 * struct_ops map's, none.  Under them the hooks take bpfstash_store.lock,
 * then bpfstash_store.state, and allocate with GFP_KERNEL; nothing they
 * call waits for an RCU grace period (entries go with call_rcu(), blobs
 * with kvfree_rcu() through their rcu_head), and the store never calls
 * into ftrace, RTNL or BPF with its own locks held.  The program hooks
 * hold none of those; the unload hook can run in softirq context and takes
 * only bpfstash_store.state, with bottom halves off everywhere.
 */
#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/bpfstash.h>
#include <linux/btf.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/error-injection.h>
#include <linux/filter.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/prefetch.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/seqlock.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/xxhash.h>
#include <asm/word-at-a-time.h>

#define CREATE_TRACE_POINTS
#include <trace/events/bpfstash.h>

#include "stash.h"

DEFINE_STATIC_KEY_FALSE(bpfstash_active);

/* Frees entries; flushed when the store stops, so that memory is back then. */
static struct workqueue_struct *bpfstash_wq;
static struct kmem_cache *bpfstash_entry_cache;

struct bpfstash_store bpfstash_store = {
	.lock = __MUTEX_INITIALIZER(bpfstash_store.lock),
	/* bpfstash_store_stop() sets them back to the defaults below. */
	.state = __SEQLOCK_UNLOCKED(bpfstash_store.state),
	.index = XARRAY_INIT(bpfstash_store.index, XA_FLAGS_ALLOC),
	.images = LIST_HEAD_INIT(bpfstash_store.images),
	.max_bytes = ATOMIC64_INIT(BPFSTASH_DEFAULT_MAX_BYTES),
	.max_entries = BPFSTASH_DEFAULT_MAX_ENTRIES,
};

/* The limits a start without limits gets: built in, or from bpfstash=. */
static u64 bpfstash_default_max_bytes = BPFSTASH_DEFAULT_MAX_BYTES;
static u32 bpfstash_default_max_entries = BPFSTASH_DEFAULT_MAX_ENTRIES;

static const struct rhashtable_params bpfstash_entry_params = {
	.key_len	= BPFSTASH_HASH_SIZE,
	.key_offset	= offsetof(struct bpfstash_entry, hash),
	.head_offset	= offsetof(struct bpfstash_entry, node),
	.min_size	= BPFSTASH_TABLE_MIN_SIZE,
	.automatic_shrinking = true,
};

/* Where byte @off of @e's funcs file is, and in @len how far it is contiguous. */
static const void *bpfstash_funcs_at(const struct bpfstash_entry *e, u32 off, u32 *len)
{
	return bpfstash_piece(e->funcs, e->funcs_segs, le32_to_cpu(e->content.funcs_size), off,
			      len);
}

/*
 * Whether an entry of @add_bytes more would exceed the limits.  A limit of
 * zero is not "unlimited": it refuses everything, as the options say.
 */
static bool bpfstash_over_limits(u64 bytes, u64 add_bytes, u64 max_bytes,
				 u32 entries, u32 max_entries)
{
	if (entries >= max_entries)
		return true;
	return add_bytes > max_bytes || bytes > max_bytes - add_bytes;
}

/*
 * Charging, as a BPF map charges its creator (bpf_map_get_memcg()): the
 * memory cgroup of whoever started the store, through an obj_cgroup, so
 * that once that cgroup is removed its charges and the store's next ones go
 * to its parent and nothing pins the dying cgroup.  Nothing is charged to
 * a cgroup (the root is) when the starter was in the root cgroup or the
 * kernel was booted with cgroup.memory=nobpf.
 */
static struct mem_cgroup *bpfstash_charge_begin(struct mem_cgroup **old)
{
	struct mem_cgroup *memcg = NULL;

#ifdef CONFIG_MEMCG
	struct obj_cgroup *objcg;

	/* The store's stop puts the obj_cgroup after a grace period. */
	rcu_read_lock();
	objcg = rcu_dereference(bpfstash_store.objcg);
	memcg = objcg ? get_mem_cgroup_from_objcg(objcg) : root_mem_cgroup;
	rcu_read_unlock();
#endif
	*old = set_active_memcg(memcg);
	return memcg;
}

static void bpfstash_charge_end(struct mem_cgroup *memcg, struct mem_cgroup *old)
{
	set_active_memcg(old);
	mem_cgroup_put(memcg);
}

/* Under bpfstash_store.lock: charge @objcg from now on, and return the last one. */
static struct obj_cgroup *bpfstash_set_objcg(struct obj_cgroup *objcg)
{
	return rcu_replace_pointer(bpfstash_store.objcg, objcg,
				   lockdep_is_held(&bpfstash_store.lock));
}

static void bpfstash_put_objcg(struct obj_cgroup *objcg)
{
#ifdef CONFIG_MEMCG
	if (objcg) {
		synchronize_rcu();
		obj_cgroup_put(objcg);
	}
#endif
}

/* The memory an entry's funcs file of @size bytes holds (bpfstash_funcs_alloc()). */
static size_t bpfstash_funcs_cost(u32 size)
{
	u32 nr;

	return bpfstash_pieces_cost(size, 0, &nr);
}

static u64 bpfstash_entry_bytes(const struct bpfstash_entry *e)
{
	return kmem_cache_size(bpfstash_entry_cache) +
	       bpfstash_funcs_cost(le32_to_cpu(e->content.funcs_size));
}

/*
 * The funcs file of @e, of @size bytes, for the snapshot to write every
 * byte of (it is not zeroed): in one allocation, or in pieces as a blob is held
 * when one allocation would waste more (up to half its size in a kmalloc()
 * bucket).
 */
int bpfstash_funcs_alloc(struct bpfstash_entry *e, u32 size)
{
	u32 nr;

	bpfstash_pieces_cost(size, 0, &nr);
	if (!nr) {
		e->funcs = bpfstash_alloc(size);
		return e->funcs ? 0 : -ENOMEM;
	}
	e->funcs = bpfstash_alloc(nr * sizeof(void *));
	if (!e->funcs)
		return -ENOMEM;
	if (bpfstash_pieces_alloc(e->funcs, nr, size)) {
		kfree(e->funcs);
		e->funcs = NULL;
		return -ENOMEM;
	}
	e->funcs_segs = nr;
	return 0;
}

static void bpfstash_funcs_free(struct bpfstash_entry *e)
{
	bpfstash_pieces_free(e->funcs, e->funcs_segs);
	kvfree(e->funcs);
}

/*
 * Free an entry that never made it into the store, or one whose grace
 * period is over.  Its blobs are its own, except those found stored, on
 * which it holds a reference.
 */
void bpfstash_entry_free(struct bpfstash_entry *e)
{
	int i;

	for (i = 0; i < BPFSTASH_NR_BLOBS; i++)
		bpfstash_blob_put(e->blobs[i]);
	bpfstash_funcs_free(e);
	kfree(e->state.link_target);
	kmem_cache_free(bpfstash_entry_cache, e);
}

/*
 * Entries whose grace period is over, freed together by one work item:
 * putting their blobs takes bpfstash_store.lock.  An rcu_work in each entry would
 * do the same for 32 bytes more per entry (72 with lockdep).
 */
static LLIST_HEAD(bpfstash_free_list);

static void bpfstash_entry_free_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&bpfstash_free_list);
	struct bpfstash_entry *e, *next;

	llist_for_each_entry_safe(e, next, list, free_node) {
		bpfstash_entry_free(e);
		cond_resched();
	}
}

static DECLARE_WORK(bpfstash_free_work, bpfstash_entry_free_work);

/* After a grace period, in softirq context: hand the entry to the work. */
static void bpfstash_entry_free_rcu(struct rcu_head *rcu)
{
	struct bpfstash_entry *e = container_of(rcu, struct bpfstash_entry, rcu);

	if (llist_add(&e->free_node, &bpfstash_free_list))
		queue_work(bpfstash_wq, &bpfstash_free_work);
}

/* A new entry, unlisted, with one reference. */
struct bpfstash_entry *bpfstash_entry_alloc(void)
{
	struct bpfstash_entry *e;

	e = kmem_cache_zalloc(bpfstash_entry_cache, BPFSTASH_GFP);
	if (!e)
		return NULL;
	refcount_set(&e->ref, 1);
	return e;
}

/**
 * bpfstash_entry_put - drop a reference to an entry
 * @e: the entry
 *
 * Safe in any context: the last reference queues the free.
 */
void bpfstash_entry_put(struct bpfstash_entry *e)
{
	if (refcount_dec_and_test(&e->ref))
		call_rcu(&e->rcu, bpfstash_entry_free_rcu);
}

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

static const struct bpf_prog *bpfstash_func(const struct bpf_prog *prog, u32 i)
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

/* Programs of up to this many functions keep their spans on the stack. */
#define BPFSTASH_SPANS_ON_STACK	8

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

/* Both sizes in one walk: each function is a few cache misses of its own. */
static void bpfstash_prog_sizes(const struct bpf_prog *prog, struct bpfstash_sizes *sz)
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
 * bpf_arch_poke_desc_update()).  The entry holds them as emitted, never
 * as the copy caught them (a poke in flight has an int3 in its first
 * byte), and says where they are: the entry's in each funcs record, the
 * tail calls' in the pokes file.
 */
#define BPFSTASH_POKE_LEN	5

static const u8 bpfstash_nop5[BPFSTASH_POKE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const u8 bpfstash_endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* Where function @f's entry patch site is, or -1 where it has none. */
static int bpfstash_entry_poke(const struct bpf_prog *f)
{
	u32 off = 0;

	if (!IS_ENABLED(CONFIG_X86_64))
		return -1;
	if (f->jited_len >= sizeof(bpfstash_endbr64) + BPFSTASH_POKE_LEN &&
	    !memcmp(f->bpf_func, bpfstash_endbr64, sizeof(bpfstash_endbr64)))
		off = sizeof(bpfstash_endbr64);
	return f->jited_len >= off + BPFSTASH_POKE_LEN ? off : -1;
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
	bpfstash_write(w, bpfstash_nop5, BPFSTASH_POKE_LEN);
	bpfstash_write_image(w, src + entry + BPFSTASH_POKE_LEN,
			     f->jited_len - entry - BPFSTASH_POKE_LEN);
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
static int bpfstash_snapshot_funcs(const struct bpf_prog *prog, u32 nr_funcs,
				   const struct bpfstash_sizes *sz, struct bpfstash_entry *e,
				   struct bpfstash_span *spans)
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
			r->entry_poke_len = cpu_to_le16(entry < 0 ? 0 : BPFSTASH_POKE_LEN);
			memcpy(r->tag, tag, BPFSTASH_TAG_SIZE);
		} else {
			struct bpfstash_func rec = {
				.addr = cpu_to_le64((unsigned long)f->bpf_func),
				.len = cpu_to_le32(f->jited_len),
				.offset = cpu_to_le32(offset),
				.name_off = cpu_to_le32(name_off),
				.entry_poke_off = cpu_to_le16(entry < 0 ? 0 : entry),
				.entry_poke_len = cpu_to_le16(entry < 0 ? 0 : BPFSTASH_POKE_LEN),
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

static void bpfstash_line_walk_init(struct bpfstash_line_walk *w,
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
static int bpfstash_jited_lines(struct bpfstash_line_walk *w, u32 first, u32 n,
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
static int bpfstash_jited_lines_key(const struct bpfstash_lines *l, u32 *key)
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
static int bpfstash_jited_lines_blob(const struct bpfstash_lines *l,
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

/* The boot id, read once when the store first starts. */
static u8 bpfstash_boot_id_bytes[BPFSTASH_BOOT_ID_SIZE];

/**
 * bpfstash_boot_id - the boot the entries are made in
 *
 * Return: /proc/sys/kernel/random/boot_id's BPFSTASH_BOOT_ID_SIZE bytes.
 */
const u8 *bpfstash_boot_id(void)
{
	return bpfstash_boot_id_bytes;
}

/**
 * bpfstash_content_init - the fields of a new entry's content that every
 *	entry has the same
 * @c: the content, zeroed
 */
void bpfstash_content_init(struct bpfstash_content *c)
{
	c->version = cpu_to_le32(BPFSTASH_VERSION);
	c->machine = cpu_to_le16(ELF_ARCH);
}

/**
 * bpfstash_entry_set_loader - note who loads the program (or attaches the
 *	image) of a new entry
 * @e: the entry
 *
 * The current task, in process context.  A program stored by the start's
 * walk was loaded by someone else, before: the walk leaves these empty.
 */
void bpfstash_entry_set_loader(struct bpfstash_entry *e)
{
	e->state.loader_tgid = task_tgid_nr(current);
	get_task_comm(e->state.loader_comm, current);
#ifdef CONFIG_CGROUPS
	rcu_read_lock();
	e->state.loader_cgroup_id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
#endif
}

/* A new entry's load time, @boot ns since boot, and the same as wall time. */
void bpfstash_entry_set_load_time(struct bpfstash_entry *e, u64 boot)
{
	u64 now_boot = ktime_get_boottime_ns(), now_real = ktime_get_real_ns();

	e->state.load_time = boot;
	e->state.load_time_real = now_real - min(now_real, now_boot - boot);
	atomic64_set(&e->last_access, e->state.load_time_real);
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

/*
 * Under bpfstash_store.lock: the unloaded entry @e is loaded again, by the
 * load @load describes (a snapshot's meta).  Its state becomes that load's
 * in one write section, so that bpfstash_entry_state() never returns some
 * fields of the last load and some of this one.
 */
static void bpfstash_entry_reload(struct bpfstash_entry *e, const struct bpfstash_state *load)
{
	const struct bpfstash_link_target *old;

	lockdep_assert_held(&bpfstash_store.lock);
	write_seqlock_bh(&bpfstash_store.state);
	old = e->state.link_target;
	e->state = *load;
	e->state.unload_time = 0;
	e->state.unload_time_real = 0;
	/* This load has made no link yet. */
	e->state.link_type = 0;
	e->state.link_id = 0;
	e->state.link_target = NULL;
	set_bit(BPFSTASH_ENTRY_LIVE, &e->flags);
	write_sequnlock_bh(&bpfstash_store.state);
	if (old)
		kfree_rcu((struct bpfstash_link_target *)old, rcu);
}

/*
 * Under bpfstash_store.lock: give the live program or image whose entry
 * pointer is @slot the entry @e, with a reference of its own.  An image's
 * entry is also listed, so that stopping the store can take it back.
 */
static void bpfstash_entry_attach(struct bpfstash_entry *e, struct bpfstash_entry __rcu **slot,
				  bool image)
{
	lockdep_assert_held(&bpfstash_store.lock);
	refcount_inc(&e->ref);
	if (!image) {
		rcu_assign_pointer(*slot, e);
		return;
	}
	write_seqlock_bh(&bpfstash_store.state);
	e->owner = slot;
	list_add(&e->image_node, &bpfstash_store.images);
	rcu_assign_pointer(*slot, e);
	write_sequnlock_bh(&bpfstash_store.state);
}

/*
 * The program or image of @e is gone (@gone), or the store stops and takes
 * @e from it: clear BPFSTASH_ENTRY_LIVE, with the unload time if @gone, in
 * one write section.  The caller took @e from its owner.  Any context.
 */
void bpfstash_entry_unloaded(struct bpfstash_entry *e, bool gone)
{
	bool live;

	write_seqlock_bh(&bpfstash_store.state);
	if (gone) {
		e->state.unload_time = ktime_get_boottime_ns();
		e->state.unload_time_real = ktime_get_real_ns();
	}
	live = test_and_clear_bit(BPFSTASH_ENTRY_LIVE, &e->flags);
	write_sequnlock_bh(&bpfstash_store.state);
	if (live)
		atomic_dec(&bpfstash_store.nr_live);
}

/*
 * Make a snapshot visible, deduplicating its blobs against stored ones,
 * and give it to the program or image whose entry pointer is @slot (@image
 * says which).  Returns 0 with *@stored set to the entry now held there:
 * @e, or an unloaded entry with the same content (a program loaded again
 * at the address of an identical one that is gone), whose state then
 * describes this load.  Or -ENOSPC when the limits refuse it, -ENOMEM,
 * -ENODEV when the store is not active, -EEXIST when the owner already
 * has an entry.  Unless *@stored == @e, the snapshot is left as it was for
 * the caller to free: that also keeps fault injection (fail_function) on
 * this function leak-free.
 */
static noinline int bpfstash_store_insert(struct bpfstash_entry __rcu **slot, bool image,
					  struct bpfstash_entry *e,
					  struct bpfstash_entry **stored, u64 *added)
{
	struct bpfstash_blob *dups[BPFSTASH_NR_BLOBS] = {};
	bool fresh[BPFSTASH_NR_BLOBS] = {};
	u64 add = bpfstash_entry_bytes(e);
	struct bpfstash_entry *old_entry;
	int err, i;
	u32 index;

	mutex_lock(&bpfstash_store.lock);
	if (!bpfstash_store.active) {
		err = -ENODEV;
		goto unlock;
	}
	if (rcu_access_pointer(*slot)) {
		err = -EEXIST;
		goto unlock;
	}

	old_entry = rhashtable_lookup_fast(&bpfstash_store.entries, e->hash,
					   bpfstash_entry_params);
	if (old_entry) {
		/* Same content: only one program can be loaded at an address. */
		if (bpfstash_entry_live(old_entry)) {
			err = -EEXIST;
			goto unlock;
		}
		bpfstash_entry_reload(old_entry, &e->state);
		atomic64_set(&old_entry->last_access, atomic64_read(&e->last_access));
		atomic_inc(&bpfstash_store.nr_live);
		bpfstash_entry_attach(old_entry, slot, image);
		mutex_unlock(&bpfstash_store.lock);
		atomic64_inc(&bpfstash_store.reloaded);
		*stored = old_entry;
		return 0;
	}

	/* Dedup against stored blobs; count only what is new. */
	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		struct bpfstash_blob *b = e->blobs[i], *old;

		if (!b || b->listed)
			continue;	/* empty, or a stored blob found by its bytes */
		old = bpfstash_blob_find(b);
		if (old) {
			dups[i] = b;
			e->blobs[i] = old;
			continue;
		}
		fresh[i] = true;
		add += bpfstash_blob_bytes(b);
	}

	if (bpfstash_over_limits(atomic64_read(&bpfstash_store.bytes), add,
				 atomic64_read(&bpfstash_store.max_bytes),
				 bpfstash_store.nr_entries, bpfstash_store.max_entries)) {
		err = -ENOSPC;
		goto undo;
	}

	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		if (!fresh[i])
			continue;
		err = bpfstash_blob_list(e->blobs[i]);
		if (err)
			goto undo;
	}
	/*
	 * Lookups are lockless, so the entry is published only when nothing
	 * can fail any more: its listing position is reserved first (a
	 * reserved slot reads as empty, and filling it allocates nothing).
	 */
	err = xa_alloc_cyclic(&bpfstash_store.index, &index, NULL, xa_limit_32b,
			      &bpfstash_store.next_index, BPFSTASH_GFP);
	if (err < 0)
		goto undo;
	err = rhashtable_insert_fast(&bpfstash_store.entries, &e->node, bpfstash_entry_params);
	if (err) {
		xa_erase(&bpfstash_store.index, index);
		goto undo;
	}
	WARN_ON_ONCE(xa_is_err(xa_store(&bpfstash_store.index, index, e, BPFSTASH_GFP)));
	e->index = index;

	bpfstash_store.peak_bytes = max_t(u64, bpfstash_store.peak_bytes,
					  atomic64_add_return(add, &bpfstash_store.bytes));
	bpfstash_store.nr_entries++;
	*added = add;
	set_bit(BPFSTASH_ENTRY_STORED, &e->flags);
	set_bit(BPFSTASH_ENTRY_LIVE, &e->flags);
	atomic_inc(&bpfstash_store.nr_live);
	/* The initial reference is the store's; the owner takes one. */
	bpfstash_entry_attach(e, slot, image);
	mutex_unlock(&bpfstash_store.lock);

	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		if (dups[i]) {
			atomic64_inc(&bpfstash_store.blob_dedup);
			bpfstash_blob_put(dups[i]);
		}
	}
	*stored = e;
	return 0;

undo:
	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		/*
		 * A blob listed here may already have been found by a lockless
		 * lookup, and have a reference: it stays stored, and the
		 * snapshot's free drops it as any stored blob's.
		 */
		if (fresh[i] && e->blobs[i]->listed)
			atomic64_add(bpfstash_blob_bytes(e->blobs[i]), &bpfstash_store.bytes);
		if (dups[i]) {
			/* Hand the snapshot its own blob back. */
			refcount_dec(&e->blobs[i]->ref);
			e->blobs[i] = dups[i];
		}
	}
unlock:
	mutex_unlock(&bpfstash_store.lock);
	if (err == -EBUSY || err == -E2BIG)
		err = -ENOMEM;	/* rhashtable could not grow */
	return err;
}
ALLOW_ERROR_INJECTION(bpfstash_store_insert, ERRNO);

/*
 * The memory an entry will hold at least, to the byte: the entry, its funcs
 * file of @funcs_size bytes and its image of @jited_len.  Other blobs may be
 * found stored, and then cost nothing.  A store with less room left refuses
 * the program or image before copying or hashing anything, so a full store
 * costs a load next to nothing.
 */
u64 bpfstash_min_bytes(u32 funcs_size, u32 jited_len)
{
	u32 nr;

	return kmem_cache_size(bpfstash_entry_cache) + bpfstash_funcs_cost(funcs_size) +
	       bpfstash_blob_cost(jited_len, &nr);
}

/* The entry in @slot (a program's or an image's), with a reference, or NULL. */
static struct bpfstash_entry *bpfstash_slot_entry(struct bpfstash_entry __rcu **slot)
{
	struct bpfstash_entry *e;

	/* Entries are freed after a grace period; stopping may detach this one. */
	rcu_read_lock();
	e = rcu_dereference(*slot);
	if (e && !refcount_inc_not_zero(&e->ref))
		e = NULL;
	rcu_read_unlock();
	return e;
}

/**
 * bpfstash_store_owner - store a snapshot for a program or an image
 * @o: what to store, and for whom
 * @preexisting: found by the start's walk, not loaded now
 * @out: set to the entry (with a reference) when there is one
 * @res: set to what happened, for the tracepoint, or NULL
 *
 * Checks the limits, takes a snapshot with @o->snapshot into a new entry,
 * charged to the store's memory cgroup, and stores it in @o->slot.
 * Returns the PERF_RECORD_MMAP3 flags that describe the outcome, with
 * *@out set when there is an entry: a program the start's walk stored
 * first still gets its records.  Returns -ENOENT when no record is due:
 * @o->slot had an entry already and @preexisting, or the store stopped.
 */
int bpfstash_store_owner(const struct bpfstash_owner *o, bool preexisting,
			 struct bpfstash_entry **out, struct bpfstash_result *res)
{
	struct bpfstash_result dummy = {}, *r = res ?: &dummy;
	struct bpfstash_entry *e, *stored = NULL;
	struct mem_cgroup *memcg, *old_memcg;
	int err;

	*out = bpfstash_slot_entry(o->slot);
	if (*out) {
		r->outcome = BPFSTASH_PRESENT;
		if (!preexisting)
			return PERF_RECORD_MMAP3_STASHED;
		bpfstash_entry_put(*out);
		*out = NULL;
		return -ENOENT;
	}

	atomic64_inc(&bpfstash_store.considered);
	/* A full store refuses before any copy or hash. */
	if (bpfstash_over_limits(atomic64_read(&bpfstash_store.bytes), o->min_bytes,
				 atomic64_read(&bpfstash_store.max_bytes),
				 READ_ONCE(bpfstash_store.nr_entries),
				 READ_ONCE(bpfstash_store.max_entries))) {
		atomic64_inc(&bpfstash_store.refused_full);
		r->outcome = BPFSTASH_REFUSED_FULL;
		return PERF_RECORD_MMAP3_REFUSED_FULL;
	}

	memcg = bpfstash_charge_begin(&old_memcg);
	e = bpfstash_entry_alloc();
	err = e ? 0 : -ENOMEM;
	if (!err) {
		err = o->snapshot(o, e, res ? &res->hashed : NULL);
		if (!err) {
			if (!preexisting)
				bpfstash_entry_set_loader(e);
			err = bpfstash_store_insert(o->slot, o->image, e, &stored, &r->bytes);
		}
		if (err || stored != e)
			bpfstash_entry_free(e);
		e = stored;
	}
	bpfstash_charge_end(memcg, old_memcg);

	switch (err) {
	case 0:
		atomic64_inc(&bpfstash_store.stored);
		if (preexisting)
			atomic64_inc(&bpfstash_store.preexisting);
		r->outcome = r->bytes ? BPFSTASH_STORED : BPFSTASH_RELOADED;
		bpfstash_entry_get(e);
		*out = e;
		return PERF_RECORD_MMAP3_STASHED;
	case -EEXIST:
		/* Stored meanwhile by the start's walk: not a new program. */
		atomic64_dec(&bpfstash_store.considered);
		*out = preexisting ? NULL : bpfstash_slot_entry(o->slot);
		if (!*out)
			return -ENOENT;
		r->outcome = BPFSTASH_PRESENT;
		return PERF_RECORD_MMAP3_STASHED;
	case -ENODEV:
		/* Stopped meanwhile. */
		atomic64_dec(&bpfstash_store.considered);
		return -ENOENT;
	case -ENOSPC:
		atomic64_inc(&bpfstash_store.refused_full);
		r->outcome = BPFSTASH_REFUSED_FULL;
		return PERF_RECORD_MMAP3_REFUSED_FULL;
	default:
		atomic64_inc(&bpfstash_store.refused_nomem);
		r->outcome = BPFSTASH_REFUSED_NOMEM;
		return PERF_RECORD_MMAP3_REFUSED_NOMEM;
	}
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
 * An entry's share of the store's memory: the entry and its funcs file,
 * and of each blob its bytes divided among the entries that hold it, so
 * that the shares of all entries add up to the store's bytes (to within a
 * byte per shared blob).  It changes as entries sharing its blobs come
 * and go.
 */
static u64 bpfstash_entry_share(const struct bpfstash_entry *e)
{
	u64 bytes = bpfstash_entry_bytes(e);
	int i;

	for (i = 0; i < BPFSTASH_NR_BLOBS; i++) {
		const struct bpfstash_blob *b = e->blobs[i];

		if (b)
			bytes += div_u64(bpfstash_blob_bytes(b),
					 max(refcount_read(&b->ref), 1U));
	}
	return bytes;
}

/**
 * bpfstash_entry_state - an entry's state, as it is now
 * @e: the entry
 * @st: filled with @e's state (ids, times, loader, BPFSTASH_META_LOADED)
 *	as one load of the program left it, never a mix of two, and its
 *	share of the store's memory; the unload times are 0 while the
 *	program is loaded
 */
void bpfstash_entry_state(const struct bpfstash_entry *e, struct bpfstash_state *st)
{
	unsigned int seq;
	bool live;

	do {
		seq = read_seqbegin(&bpfstash_store.state);
		*st = e->state;
		live = bpfstash_entry_live(e);
	} while (read_seqretry(&bpfstash_store.state, seq));
	st->flags = live ? BPFSTASH_META_LOADED : 0;
	st->bytes = bpfstash_entry_share(e);
}

/**
 * bpfstash_entry_meta - an entry's meta file
 * @e: the entry
 * @m: filled with the meta file's bytes (struct bpfstash_meta,
 *	little-endian): the content, the name, and the state as
 *	bpfstash_entry_state() reads it
 */
void bpfstash_entry_meta(const struct bpfstash_entry *e, struct bpfstash_meta *m)
{
	struct bpfstash_state st;

	rcu_read_lock();
	bpfstash_entry_state(e, &st);
	*m = (struct bpfstash_meta){
		.meta_size = cpu_to_le32(sizeof(*m)),
		.flags = cpu_to_le32(st.flags),
		.content = e->content,
		.prog_id = cpu_to_le32(st.prog_id),
		.uid = cpu_to_le32(st.uid),
		.btf_id = cpu_to_le32(st.btf_id),
		.attach_btf_obj_id = cpu_to_le32(st.attach_btf_obj_id),
		.loader_tgid = cpu_to_le32(st.loader_tgid),
		.load_time = cpu_to_le64(st.load_time),
		.load_time_real = cpu_to_le64(st.load_time_real),
		.unload_time = cpu_to_le64(st.unload_time),
		.unload_time_real = cpu_to_le64(st.unload_time_real),
		.bytes = cpu_to_le64(st.bytes),
		.loader_cgroup_id = cpu_to_le64(st.loader_cgroup_id),
	};
	memcpy(m->hash, e->hash, sizeof(m->hash));
	memcpy(m->boot_id, bpfstash_boot_id(), sizeof(m->boot_id));
	memcpy(m->loader_comm, st.loader_comm, sizeof(m->loader_comm));
	memcpy(m->attach_func_name, e->attach_func_name, sizeof(m->attach_func_name));
	m->link_type = cpu_to_le32(st.link_type);
	m->link_id = cpu_to_le32(st.link_id);
	if (st.link_target)
		strscpy_pad(m->link_target, st.link_target->name, sizeof(m->link_target));
	rcu_read_unlock();
}

/**
 * bpfstash_entry_attach_name - what an entry's program is attached to
 * @e: the entry
 *
 * Return: the name of the BTF attach target, "" if none; valid while @e is
 * held.
 */
const char *bpfstash_entry_attach_name(const struct bpfstash_entry *e)
{
	return e->attach_func_name;
}

/**
 * bpfstash_entry_get - take a reference to an entry
 * @e: an entry the caller holds a reference to
 */
void bpfstash_entry_get(struct bpfstash_entry *e)
{
	refcount_inc(&e->ref);
}

/**
 * bpfstash_entry_stored - whether an entry is in the store
 * @e: the entry
 *
 * Return: false once it is deleted or the store stopped, for good.
 */
bool bpfstash_entry_stored(const struct bpfstash_entry *e)
{
	return test_bit(BPFSTASH_ENTRY_STORED, &e->flags);
}

/**
 * bpfstash_entry_index - an entry's position in listing (load) order
 * @e: the entry
 *
 * Return: a number no other stored entry has, fixed for the entry's life.
 */
u32 bpfstash_entry_index(const struct bpfstash_entry *e)
{
	return e->index;
}

/**
 * bpfstash_entry_hash - an entry's name
 * @e: the entry
 *
 * Return: its BPFSTASH_HASH_SIZE-byte content hash, valid while @e is held.
 */
const u8 *bpfstash_entry_hash(const struct bpfstash_entry *e)
{
	return e->hash;
}

/**
 * bpfstash_entry_content - the hashed, immutable part of an entry's metadata
 * @e: the entry
 *
 * Return: it, little-endian as the meta file holds it, valid while @e is
 * held.  The state (ids, times) changes: read it with bpfstash_entry_state().
 */
const struct bpfstash_content *bpfstash_entry_content(const struct bpfstash_entry *e)
{
	return &e->content;
}

/**
 * bpfstash_entry_size - how many bytes of data an entry holds
 * @e: the entry
 * @d: which data
 *
 * Return: the size of @d, 0 when the entry has none.
 */
u32 bpfstash_entry_size(const struct bpfstash_entry *e, enum bpfstash_data d)
{
	if (d == BPFSTASH_DATA_FUNCS)
		return le32_to_cpu(e->content.funcs_size);
	if (WARN_ON_ONCE((unsigned int)d >= BPFSTASH_NR_BLOBS))
		return 0;
	return e->blobs[d] ? e->blobs[d]->size : 0;
}

/**
 * bpfstash_entry_at - where a byte of an entry's data is
 * @e: the entry
 * @d: which data
 * @off: the offset of the byte, below bpfstash_entry_size(@e, @d)
 * @len: set to the number of bytes from there that are contiguous
 *
 * The data may be held in pieces.  Records whose size is a power of two up
 * to 256 bytes, from offset 0, never straddle two: func records (32 bytes),
 * line info (16) and jited line info (8) can be read in place.  Names in
 * the funcs file and BTF may straddle.
 *
 * Return: the address of the byte, valid while @e is held.
 */
const void *bpfstash_entry_at(const struct bpfstash_entry *e, enum bpfstash_data d,
			      u32 off, u32 *len)
{
	BUILD_BUG_ON(sizeof(struct bpf_line_info) > BPFSTASH_BLOB_PIECE_MIN);
	if (d == BPFSTASH_DATA_FUNCS)
		return bpfstash_funcs_at(e, off, len);
	return bpfstash_blob_at(e->blobs[d], off, len);
}

/**
 * bpfstash_entry_accessed - note that a file of an entry was opened
 * @e: the entry
 *
 * bpfstash-gc expires entries by this time (the atime of its files).
 */
void bpfstash_entry_accessed(struct bpfstash_entry *e)
{
	atomic64_set(&e->last_access, ktime_get_real_ns());
}

/**
 * bpfstash_entry_last_access - when a file of an entry was last opened
 * @e: the entry
 *
 * Return: ns since the epoch; the load time until a file was opened.
 */
u64 bpfstash_entry_last_access(const struct bpfstash_entry *e)
{
	return atomic64_read(&e->last_access);
}

/*
 * Detach the entries of loaded programs (at stop), or store the loaded
 * programs that have none (at start), walking the program IDR.
 */
static void bpfstash_walk_progs(bool store_them)
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

/*
 * Take the entries of live images from them, at stop.  Under the state
 * lock an image's unload (bpfstash_image_unload()) and this each find the
 * entry in its owner or not at all, and the owner's memory is only freed
 * after its unload: *@e->owner is still there here.
 */
static void bpfstash_detach_images(void)
{
	struct bpfstash_entry *e, *next;
	LIST_HEAD(detached);

	write_seqlock_bh(&bpfstash_store.state);
	list_splice_init(&bpfstash_store.images, &detached);
	list_for_each_entry(e, &detached, image_node) {
		RCU_INIT_POINTER(*e->owner, NULL);
		e->owner = NULL;
	}
	write_sequnlock_bh(&bpfstash_store.state);

	list_for_each_entry_safe(e, next, &detached, image_node) {
		list_del_init(&e->image_node);
		bpfstash_entry_unloaded(e, false);
		bpfstash_entry_put(e);
	}
}

/**
 * bpfstash_store_activate - start storing programs
 * @max_bytes: size= limit, or 0 to keep the current one
 * @max_entries: max_entries= limit, or 0 to keep the current one
 *
 * Stores every program that is already loaded, so that nothing loaded
 * before the start is missing.  New allocations are charged to the
 * caller's memory cgroup.  Callers other than tests go through
 * bpfstash_store_start().
 *
 * Return: 0, -EBUSY if the store is already active, or the error of
 * allocating the SHA-256 transform.
 */
static int bpfstash_store_activate(u64 max_bytes, u32 max_entries)
{
	struct obj_cgroup *objcg = NULL;
	int err;

	err = bpfstash_hash_setup();
	if (err)
		return err;
	/* The same every time: read before any entry is, in process context. */
	get_boot_id(bpfstash_boot_id_bytes);
	mutex_lock(&bpfstash_store.lock);
	if (bpfstash_store.active) {
		mutex_unlock(&bpfstash_store.lock);
		return -EBUSY;
	}
	WRITE_ONCE(bpfstash_store.active, true);
	if (max_bytes)
		atomic64_set(&bpfstash_store.max_bytes, max_bytes);
	if (max_entries)
		bpfstash_store.max_entries = max_entries;
	bpfstash_store.peak_bytes = atomic64_read(&bpfstash_store.bytes);
	/* Counters describe this run of the store. */
	atomic64_set(&bpfstash_store.considered, 0);
	atomic64_set(&bpfstash_store.stored, 0);
	atomic64_set(&bpfstash_store.preexisting, 0);
	atomic64_set(&bpfstash_store.reloaded, 0);
	atomic64_set(&bpfstash_store.refused_full, 0);
	atomic64_set(&bpfstash_store.refused_nomem, 0);
	atomic64_set(&bpfstash_store.skipped_hardened, 0);
	atomic64_set(&bpfstash_store.skipped_unlisted, 0);
	atomic64_set(&bpfstash_store.deleted, 0);
	atomic64_set(&bpfstash_store.blob_dedup, 0);
	atomic64_set(&bpfstash_store.btf_hash_cached, 0);
	atomic64_set(&bpfstash_store.hashed_bytes, 0);
#ifdef CONFIG_MEMCG
	/* NULL in the root cgroup; none at all with cgroup.memory=nobpf. */
	if (memcg_bpf_enabled())
		objcg = get_obj_cgroup_from_current();
#endif
	objcg = bpfstash_set_objcg(objcg);
	mutex_unlock(&bpfstash_store.lock);
	bpfstash_put_objcg(objcg);

	static_branch_enable(&bpfstash_active);
	bpfstash_walk_progs(true);
	return 0;
}

/**
 * bpfstash_store_set_limits - change size= and max_entries=
 * @max_bytes: the new size= limit, or 0 to keep the current one
 * @max_entries: the new max_entries= limit, or 0 to keep the current one
 *
 * Lowering a limit below what is stored refuses new entries until
 * bpfstash-gc has deleted enough; nothing is evicted.  The limits of a
 * stopped store are those its next start gets, unless that gives its own.
 */
void bpfstash_store_set_limits(u64 max_bytes, u32 max_entries)
{
	mutex_lock(&bpfstash_store.lock);
	if (max_bytes)
		atomic64_set(&bpfstash_store.max_bytes, max_bytes);
	if (max_entries)
		bpfstash_store.max_entries = max_entries;
	mutex_unlock(&bpfstash_store.lock);
}

/**
 * bpfstash_store_deactivate - stop storing and drop every entry
 *
 * Entries still open keep their data until the last file is closed.  The
 * limits go back to their defaults.  Callers other than tests go through
 * bpfstash_store_stop().
 */
static void bpfstash_store_deactivate(void)
{
	struct bpfstash_entry *e;
	struct obj_cgroup *objcg;
	unsigned long index;

	static_branch_disable(&bpfstash_active);

	mutex_lock(&bpfstash_store.lock);
	WRITE_ONCE(bpfstash_store.active, false);
	atomic64_set(&bpfstash_store.max_bytes, bpfstash_default_max_bytes);
	bpfstash_store.max_entries = bpfstash_default_max_entries;
	xa_for_each(&bpfstash_store.index, index, e) {
		xa_erase(&bpfstash_store.index, index);
		rhashtable_remove_fast(&bpfstash_store.entries, &e->node, bpfstash_entry_params);
		clear_bit(BPFSTASH_ENTRY_STORED, &e->flags);
		atomic64_sub(bpfstash_entry_bytes(e), &bpfstash_store.bytes);
		bpfstash_store.nr_entries--;
		bpfstash_entry_put(e);
	}
	objcg = bpfstash_set_objcg(NULL);
	mutex_unlock(&bpfstash_store.lock);

	/* Loaded programs and images hold their entries; let go of them too. */
	bpfstash_walk_progs(false);
	bpfstash_detach_images();

	bpfstash_put_objcg(objcg);
}

/**
 * bpfstash_store_drain - wait until dropped entries are freed
 *
 * Entries are freed after a grace period, by a work item: after the
 * store and the filesystem's inodes let go of them, this waits for that,
 * so that stopping the store returns the memory.  Entries of files still
 * open are freed when they are closed.
 */
void bpfstash_store_drain(void)
{
	rcu_barrier();
	flush_workqueue(bpfstash_wq);
}

/* Serialises starting and stopping, whoever asks (boot, control, mount). */
static DEFINE_MUTEX(bpfstash_control_lock);

/**
 * bpfstash_store_start - start the store
 * @max_bytes: size=, or 0 for the current limit
 * @max_entries: max_entries=, or 0 for the current limit
 *
 * The bpfstash= boot parameter, a write of "on" to the control file and
 * a mount of a stopped store all come here.  Process context, no
 * filesystem lock held: the start walks and stores the programs already
 * loaded.
 *
 * Return: 0; -EBUSY if the store runs already (its limits unchanged: only
 * control changes them, with bpfstash_store_set_limits()); or the error of
 * allocating the SHA-256 transform.
 */
int bpfstash_store_start(u64 max_bytes, u32 max_entries)
{
	int err;

	mutex_lock(&bpfstash_control_lock);
	err = bpfstash_store_activate(max_bytes, max_entries);
	mutex_unlock(&bpfstash_control_lock);
	return err;
}

/**
 * bpfstash_store_stop - stop the store and drop every entry
 *
 * The filesystem's cached inodes still hold the entries they show: the
 * caller prunes them and then waits with bpfstash_store_drain().
 *
 * Return: true if the store was running.
 */
bool bpfstash_store_stop(void)
{
	bool running;

	mutex_lock(&bpfstash_control_lock);
	running = READ_ONCE(bpfstash_store.active);
	if (running)
		bpfstash_store_deactivate();
	mutex_unlock(&bpfstash_control_lock);
	return running;
}

/**
 * bpfstash_store_running - whether programs are being stored
 */
bool bpfstash_store_running(void)
{
	return READ_ONCE(bpfstash_store.active);
}

/**
 * bpfstash_parse_control - parse the words of bpfstash= and of the control file
 * @s: "on", "off", "size=SIZE" (K, M, G allowed) and "max_entries=N",
 *     separated by commas or white space; modified
 * @c: filled in: @c->on is 1, 0, or -1 if neither was given; a limit not
 *     given is 0
 *
 * Return: 0, or -EINVAL with @c->bad pointing at the word refused and
 * @c->why saying why.
 */
int bpfstash_parse_control(char *s, struct bpfstash_control *c)
{
	char *w, *end;

	memset(c, 0, sizeof(*c));
	c->on = -1;
	while ((w = strsep(&s, ", \t\n"))) {
		if (!*w)
			continue;
		c->bad = w;
		if (!strcmp(w, "on") || !strcmp(w, "off")) {
			int on = w[1] == 'n';

			if (c->on >= 0 && c->on != on) {
				c->why = "on and off at once";
				return -EINVAL;
			}
			c->on = on;
		} else if (str_has_prefix(w, "size=")) {
			c->max_bytes = memparse(w + 5, &end);
			if (end == w + 5 || *end) {
				c->why = "not a size in bytes (K, M, G allowed)";
				return -EINVAL;
			}
			if (!c->max_bytes) {
				c->why = "would refuse every program";
				return -EINVAL;
			}
		} else if (str_has_prefix(w, "max_entries=")) {
			if (kstrtou32(w + 12, 10, &c->max_entries)) {
				c->why = "not a number of entries";
				return -EINVAL;
			}
			if (!c->max_entries) {
				c->why = "would refuse every program";
				return -EINVAL;
			}
		} else {
			c->why = "unknown (on, off, size=, max_entries=)";
			return -EINVAL;
		}
	}
	if (c->on == 0 && (c->max_bytes || c->max_entries)) {
		c->bad = "off";
		c->why = "stopping takes no limits";
		return -EINVAL;
	}
	c->bad = NULL;
	return 0;
}

static bool bpfstash_boot_on __initdata;

/*
 * bpfstash=on,size=64M,max_entries=65536: start the store before the first
 * program is loaded.  The limits also become the defaults that a start
 * without limits gets.  A bad value is refused whole, with a message, and
 * the boot goes on.
 */
static int __init bpfstash_setup(char *str)
{
	struct bpfstash_control c;
	char buf[96];

	if (strscpy(buf, str, sizeof(buf)) < 0) {
		pr_err("bpfstash: bpfstash=%s: too long; ignored\n", str);
		return 1;
	}
	if (bpfstash_parse_control(buf, &c)) {
		pr_err("bpfstash: bpfstash=%s: %s: %s; ignored\n", str, c.bad, c.why);
		return 1;
	}
	if (c.on >= 0)
		bpfstash_boot_on = c.on;
	if (c.max_bytes) {
		bpfstash_default_max_bytes = c.max_bytes;
		atomic64_set(&bpfstash_store.max_bytes, c.max_bytes);
	}
	if (c.max_entries) {
		bpfstash_default_max_entries = c.max_entries;
		bpfstash_store.max_entries = c.max_entries;
	}
	return 1;
}
__setup("bpfstash=", bpfstash_setup);

/*
 * Userspace loads its first program after the initcalls, and the few the
 * kernel loads itself are stored by the start's walk of the loaded ones.
 * At late_initcall, built-in SHA-256 drivers have registered.
 */
static int __init bpfstash_boot_start(void)
{
	int err;

	if (!bpfstash_boot_on)
		return 0;
	/* As mount and "on" refuse under confidentiality lockdown. */
	err = security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
	if (err) {
		pr_err("bpfstash: not storing programs from boot: the kernel is locked down\n");
		return 0;
	}
	err = bpfstash_store_start(0, 0);
	if (err)
		pr_err("bpfstash: cannot start the store at boot: %pe\n", ERR_PTR(err));
	else
		pr_info("bpfstash: storing programs from boot (size=%llu max_entries=%u)\n",
			(u64)atomic64_read(&bpfstash_store.max_bytes), bpfstash_store.max_entries);
	return 0;
}
late_initcall(bpfstash_boot_start);

/**
 * bpfstash_entry_lookup - find a stored entry by its hash
 * @hash: BPFSTASH_HASH_SIZE bytes
 *
 * Return: the entry with a reference, or NULL.
 */
struct bpfstash_entry *bpfstash_entry_lookup(const u8 *hash)
{
	struct bpfstash_entry *e;

	rcu_read_lock();
	e = rhashtable_lookup(&bpfstash_store.entries, hash, bpfstash_entry_params);
	if (e && !refcount_inc_not_zero(&e->ref))
		e = NULL;
	rcu_read_unlock();
	return e;
}

/**
 * bpfstash_entry_next - the first stored entry at or after a listing position
 * @index: the position; set to the entry's
 *
 * Return: the entry with a reference, or NULL at the end.
 */
struct bpfstash_entry *bpfstash_entry_next(unsigned long *index)
{
	struct bpfstash_entry *e;

	rcu_read_lock();
	for (;;) {
		e = xa_find(&bpfstash_store.index, index, ULONG_MAX, XA_PRESENT);
		if (!e || refcount_inc_not_zero(&e->ref))
			break;
		(*index)++;
	}
	rcu_read_unlock();
	return e;
}

/**
 * bpfstash_entry_delete - remove an entry from the store
 * @hash: its BPFSTASH_HASH_SIZE-byte name
 *
 * Open files of the entry keep its data until they are closed.
 *
 * Return: 0, -ENOENT if there is no such entry, or -EBUSY if its program
 * is still loaded.
 */
int bpfstash_entry_delete(const u8 *hash)
{
	struct bpfstash_entry *e;

	mutex_lock(&bpfstash_store.lock);
	e = rhashtable_lookup_fast(&bpfstash_store.entries, hash, bpfstash_entry_params);
	if (!e) {
		mutex_unlock(&bpfstash_store.lock);
		return -ENOENT;
	}
	if (bpfstash_entry_live(e)) {
		mutex_unlock(&bpfstash_store.lock);
		return -EBUSY;
	}
	rhashtable_remove_fast(&bpfstash_store.entries, &e->node, bpfstash_entry_params);
	xa_erase(&bpfstash_store.index, e->index);
	clear_bit(BPFSTASH_ENTRY_STORED, &e->flags);
	atomic64_sub(bpfstash_entry_bytes(e), &bpfstash_store.bytes);
	bpfstash_store.nr_entries--;
	mutex_unlock(&bpfstash_store.lock);

	atomic64_inc(&bpfstash_store.deleted);
	bpfstash_entry_put(e);
	return 0;
}

/**
 * bpfstash_store_get_stats - a consistent copy of the limits and counters
 * @st: filled in
 */
void bpfstash_store_get_stats(struct bpfstash_stats *st)
{
	mutex_lock(&bpfstash_store.lock);
	st->bytes = atomic64_read(&bpfstash_store.bytes);
	st->max_bytes = atomic64_read(&bpfstash_store.max_bytes);
	st->peak_bytes = bpfstash_store.peak_bytes;
	st->entries = bpfstash_store.nr_entries;
	st->max_entries = bpfstash_store.max_entries;
	st->blobs = bpfstash_store.nr_blobs;
	st->live_entries = atomic_read(&bpfstash_store.nr_live);
	mutex_unlock(&bpfstash_store.lock);

	st->considered = atomic64_read(&bpfstash_store.considered);
	st->stored = atomic64_read(&bpfstash_store.stored);
	st->preexisting = atomic64_read(&bpfstash_store.preexisting);
	st->reloaded = atomic64_read(&bpfstash_store.reloaded);
	st->refused_full = atomic64_read(&bpfstash_store.refused_full);
	st->refused_nomem = atomic64_read(&bpfstash_store.refused_nomem);
	st->skipped_hardened = atomic64_read(&bpfstash_store.skipped_hardened);
	st->skipped_unlisted = atomic64_read(&bpfstash_store.skipped_unlisted);
	st->deleted = atomic64_read(&bpfstash_store.deleted);
	st->blob_dedup = atomic64_read(&bpfstash_store.blob_dedup);
	st->btf_hash_cached = atomic64_read(&bpfstash_store.btf_hash_cached);
	st->hashed_bytes = atomic64_read(&bpfstash_store.hashed_bytes);
}

static int __init bpfstash_store_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct bpfstash_content) != 104);
	BUILD_BUG_ON(offsetof(struct bpfstash_meta, content.version) != 8);
	BUILD_BUG_ON(sizeof(struct bpfstash_meta) != 496);
	BUILD_BUG_ON(sizeof(struct bpfstash_func) != 32);
	BUILD_BUG_ON(sizeof(struct bpfstash_jited_line) != 8);
	BUILD_BUG_ON(sizeof(struct bpfstash_call) != 64);
	BUILD_BUG_ON(sizeof(struct bpfstash_poke) != 16);
	BUILD_BUG_ON(BPFSTASH_COMM_LEN != TASK_COMM_LEN);
	BUILD_BUG_ON(BPFSTASH_BOOT_ID_SIZE != UUID_SIZE);
	BUILD_BUG_ON(BPFSTASH_HASH_SIZE > PERF_RECORD_MMAP3_HASH_MAX);
	BUILD_BUG_ON(BPFSTASH_NAME_LEN != BPF_OBJ_NAME_LEN);
	BUILD_BUG_ON(BPFSTASH_TAG_SIZE != BPF_TAG_SIZE);

	bpfstash_entry_cache = KMEM_CACHE(bpfstash_entry, SLAB_ACCOUNT);
	if (!bpfstash_entry_cache)
		return -ENOMEM;
	bpfstash_wq = alloc_workqueue("bpfstash", WQ_UNBOUND, 0);
	if (!bpfstash_wq) {
		err = -ENOMEM;
		goto err_cache;
	}
	err = rhashtable_init(&bpfstash_store.entries, &bpfstash_entry_params);
	if (err)
		goto err_wq;
	err = bpfstash_blobs_init();
	if (err)
		goto err_entries;
	return 0;
err_entries:
	rhashtable_destroy(&bpfstash_store.entries);
err_wq:
	destroy_workqueue(bpfstash_wq);
err_cache:
	kmem_cache_destroy(bpfstash_entry_cache);
	return err;
}
core_initcall(bpfstash_store_init);

#if IS_BUILTIN(CONFIG_BPFSTASH_KUNIT_TEST)
#include "stash_kunit.c"
#endif
