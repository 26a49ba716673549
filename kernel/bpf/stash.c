// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the store: its entries, and storing, finding and dropping
 * them.  A program's snapshot and the program hooks are in
 * stash_prog.c, starting and stopping the store in stash_control.c, the
 * blobs that hold an entry's bytes in stash_blob.c and images in
 * stash_image.c; stash.h is what they share.  The filesystem view
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
u64 bpfstash_default_max_bytes = BPFSTASH_DEFAULT_MAX_BYTES;
u32 bpfstash_default_max_entries = BPFSTASH_DEFAULT_MAX_ENTRIES;

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
struct mem_cgroup *bpfstash_charge_begin(struct mem_cgroup **old)
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

void bpfstash_charge_end(struct mem_cgroup *memcg, struct mem_cgroup *old)
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
	bpfstash_store.generation++;
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
	bpfstash_store.generation++;
	write_sequnlock_bh(&bpfstash_store.state);
	if (live)
		atomic_dec(&bpfstash_store.nr_live);
}

/* Under bpfstash_store.lock: the set of entries changed. */
static void bpfstash_store_changed(void)
{
	lockdep_assert_held(&bpfstash_store.lock);
	write_seqlock_bh(&bpfstash_store.state);
	bpfstash_store.generation++;
	write_sequnlock_bh(&bpfstash_store.state);
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
	bpfstash_store_changed();
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
int bpfstash_store_activate(u64 max_bytes, u32 max_entries)
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
void bpfstash_store_deactivate(void)
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
	bpfstash_store_changed();
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
 * bpfstash_store_generation - the store's generation
 *
 * It changes with every change to the set of entries or to an entry's
 * state, in the same write section as the change, and only grows.
 *
 * Return: the generation now.
 */
u64 bpfstash_store_generation(void)
{
	unsigned int seq;
	u64 gen;

	do {
		seq = read_seqbegin(&bpfstash_store.state);
		gen = bpfstash_store.generation;
	} while (read_seqretry(&bpfstash_store.state, seq));
	return gen;
}

/**
 * bpfstash_store_entries - every stored entry at once
 * @nr: set to their number
 * @generation: set to the store's generation they were taken at
 *
 * The entries are in listing order, each with a reference: drop them with
 * bpfstash_entries_put().  The set is the store's at one moment (stores
 * and deletes are held off while it is taken); entries' states go on
 * changing, and bpfstash_store_generation() says whether they did.
 *
 * Return: a kvmalloc()ed array, or NULL if memory ran out (*@nr 0: none).
 */
struct bpfstash_entry **bpfstash_store_entries(u32 *nr, u64 *generation)
{
	struct bpfstash_entry **v = NULL, *e;
	unsigned long index;
	u32 room = 0, n;

	for (;;) {
		mutex_lock(&bpfstash_store.lock);
		if (bpfstash_store.nr_entries <= room)
			break;
		room = bpfstash_store.nr_entries;
		mutex_unlock(&bpfstash_store.lock);
		/* Allocated without the lock, which loads take. */
		kvfree(v);
		room += room / 8 + 16;
		v = kvmalloc_array(room, sizeof(*v), GFP_KERNEL_ACCOUNT);
		if (!v)
			return NULL;
	}
	n = 0;
	xa_for_each(&bpfstash_store.index, index, e) {
		if (WARN_ON_ONCE(n == room))
			break;
		/* Stored entries hold the store's reference. */
		refcount_inc(&e->ref);
		v[n++] = e;
	}
	*generation = bpfstash_store_generation();
	mutex_unlock(&bpfstash_store.lock);
	*nr = n;
	return v ?: ZERO_SIZE_PTR;
}

/**
 * bpfstash_entries_put - drop what bpfstash_store_entries() returned
 * @v: the array
 * @nr: its entries
 */
void bpfstash_entries_put(struct bpfstash_entry **v, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		bpfstash_entry_put(v[i]);
	kvfree(v);
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
	bpfstash_store_changed();
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
