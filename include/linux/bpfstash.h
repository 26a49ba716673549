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
#include <uapi/linux/bpfstash.h>

struct bpfstash_entry;

/*
 * What an entry holds besides its state, as the view's binary files show
 * it: the blobs, in the order the content hash covers them, then the funcs
 * file.  Layouts in include/uapi/linux/bpfstash.h.
 */
enum bpfstash_data {
	BPFSTASH_DATA_JITED,
	BPFSTASH_DATA_LINE_INFO,
	BPFSTASH_DATA_JITED_LINE_INFO,
	BPFSTASH_DATA_FUNC_INFO,
	BPFSTASH_DATA_BTF,
	BPFSTASH_DATA_CALLS,
	BPFSTASH_DATA_POKES,
	BPFSTASH_DATA_FUNCS,
	BPFSTASH_NR_DATA,
};

/* What a link attached a program to: made when the link is, freed after RCU. */
struct bpfstash_link_target {
	struct rcu_head rcu;
	char name[];
};

/*
 * The state of an entry: what its meta file holds besides the content and
 * the name (struct bpfstash_meta), in the CPU's byte order.
 */
struct bpfstash_state {
	u32 flags;		/* BPFSTASH_META_* */
	u32 prog_id;
	u32 uid;
	u32 btf_id;
	u32 attach_btf_obj_id;
	u32 loader_tgid;
	u64 load_time;
	u64 load_time_real;
	u64 unload_time;
	u64 unload_time_real;
	u64 loader_cgroup_id;
	u64 bytes;		/* the entry's share of the store's memory */
	char loader_comm[BPFSTASH_COMM_LEN];
	u32 link_type;		/* the last link made for the program */
	u32 link_id;
	/* its target, NULL if none: dereferenced under rcu_read_lock() */
	const struct bpfstash_link_target *link_target;
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
void __bpfstash_prog_linked(struct bpf_prog *prog, u32 type, u32 id, const char *target);

/*
 * The store, for fs/bpfstash/.  Entries are returned with a reference; what
 * they hold is read through the functions below, never directly, so that
 * the view does not depend on how the store keeps it.
 */
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
u64 bpfstash_store_generation(void);
struct bpfstash_entry **bpfstash_store_entries(u32 *nr, u64 *generation);
void bpfstash_entries_put(struct bpfstash_entry **v, u32 nr);
void bpfstash_entry_get(struct bpfstash_entry *e);
void bpfstash_entry_put(struct bpfstash_entry *e);

bool bpfstash_entry_stored(const struct bpfstash_entry *e);
u32 bpfstash_entry_index(const struct bpfstash_entry *e);
const u8 *bpfstash_entry_hash(const struct bpfstash_entry *e);
const struct bpfstash_content *bpfstash_entry_content(const struct bpfstash_entry *e);
void bpfstash_entry_state(const struct bpfstash_entry *e, struct bpfstash_state *st);
void bpfstash_entry_meta(const struct bpfstash_entry *e, struct bpfstash_meta *m);
const char *bpfstash_entry_attach_name(const struct bpfstash_entry *e);
const u8 *bpfstash_boot_id(void);
u32 bpfstash_entry_size(const struct bpfstash_entry *e, enum bpfstash_data d);
const void *bpfstash_entry_at(const struct bpfstash_entry *e, enum bpfstash_data d,
			      u32 off, u32 *len);
void bpfstash_entry_accessed(struct bpfstash_entry *e);
u64 bpfstash_entry_last_access(const struct bpfstash_entry *e);

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
	if (rcu_access_pointer(prog->aux->stash))
		__bpfstash_prog_unload(prog);
}

/*
 * bpfstash_prog_stashed - whether a program has an entry
 * @prog: a program the caller holds
 *
 * For bpf_link_settle(), which then describes the link's target for
 * __bpfstash_prog_linked() (the link's type, id, and target as text),
 * once the link is attached and before its fd is installed.
 */
static inline bool bpfstash_prog_stashed(const struct bpf_prog *prog)
{
	return rcu_access_pointer(prog->aux->stash);
}

/*
 * Images: BPF text that is not a program (kernel/bpf/stash_image.c).  Each
 * load hook is called when a new image is written and read-only, before
 * anything calls it, in process context; the image keeps its entry in its
 * bpf_ksym.  Costs a static branch while the store is stopped.
 */
void __bpfstash_trampoline_load(struct bpf_tramp_image *im, struct bpf_tramp_links *tlinks);
void __bpfstash_struct_ops_load(struct bpf_ksym *ksym, struct bpf_prog *prog);
void __bpfstash_dispatcher_load(struct bpf_dispatcher *d, void *image, u32 size);
void bpfstash_image_unload(struct bpf_ksym *ksym);

static inline void bpfstash_trampoline_load(struct bpf_tramp_image *im,
					    struct bpf_tramp_links *tlinks)
{
	if (static_branch_unlikely(&bpfstash_active))
		__bpfstash_trampoline_load(im, tlinks);
}

static inline void bpfstash_struct_ops_load(struct bpf_ksym *ksym, struct bpf_prog *prog)
{
	if (static_branch_unlikely(&bpfstash_active))
		__bpfstash_struct_ops_load(ksym, prog);
}

static inline void bpfstash_dispatcher_load(struct bpf_dispatcher *d, void *image, u32 size)
{
	if (static_branch_unlikely(&bpfstash_active))
		__bpfstash_dispatcher_load(d, image, size);
}

#else /* !CONFIG_BPFSTASH */

static inline void bpfstash_prog_load(struct bpf_prog *prog) { }
static inline void bpfstash_prog_unload(struct bpf_prog *prog) { }
static inline void bpfstash_trampoline_load(struct bpf_tramp_image *im,
					    struct bpf_tramp_links *tlinks) { }
static inline void bpfstash_struct_ops_load(struct bpf_ksym *ksym, struct bpf_prog *prog) { }
static inline void bpfstash_dispatcher_load(struct bpf_dispatcher *d, void *image,
					    u32 size) { }
static inline void bpfstash_image_unload(struct bpf_ksym *ksym) { }

#endif /* CONFIG_BPFSTASH */

#endif /* _LINUX_BPFSTASH_H */
