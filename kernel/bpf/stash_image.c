// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: images, the BPF text that is not a program.
 *
 * A BPF trampoline (around a kernel function or a program, calling its
 * fentry, fexit, fmod_ret and LSM programs), a struct_ops trampoline (one
 * per member of a registered struct_ops map) and the XDP dispatcher are
 * JITed text that profiles hit, with a kallsyms name and a KSYMBOL record
 * but no program id.  Each version of one is stored as an entry like a
 * program's, under the same limits, gate and GC: one function named by the
 * image's kallsyms name, its bytes, what it is attached to, and the
 * programs it calls (the calls blob).  The layout is in
 * include/uapi/linux/bpfstash.h.
 *
 * The image keeps its entry in its bpf_ksym's stash, which is set here and
 * cleared by bpfstash_image_unload() when the image goes, or by stopping
 * the store (bpfstash_detach_images()).
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "stash.h"

/**
 * struct bpfstash_image - an image to store
 * @owner: for bpfstash_store_owner(); its slot is @ksym's stash
 * @ksym: the image's kallsyms entry: its name
 * @start: the image's first byte, which need not be @ksym's
 * @size: the image's bytes
 * @kind: enum bpfstash_image_kind
 * @target: a program attached through the image, whose attach fields name
 *	what the image is attached to, or NULL
 * @nr_calls: programs the image calls
 * @call: the @i-th of them, and how it is called (enum bpfstash_call_kind)
 * @arg: for @call
 * @funcs_size: the funcs file's bytes: one record and the name
 */
struct bpfstash_image {
	struct bpfstash_owner owner;
	struct bpf_ksym *ksym;
	const void *start;
	u32 size;
	u32 kind;
	const struct bpf_prog *target;
	u32 nr_calls;
	const struct bpf_prog *(*call)(const void *arg, u32 i, u32 *kind);
	const void *arg;
	u32 funcs_size;
};

static const char *const bpfstash_image_names[] = {
	[BPFSTASH_IMAGE_TRAMPOLINE]	= "trampoline",
	[BPFSTASH_IMAGE_STRUCT_OPS]	= "struct_ops",
	[BPFSTASH_IMAGE_DISPATCHER]	= "dispatcher",
};

/* The calls blob: one struct bpfstash_call per program the image calls. */
static int bpfstash_image_calls(const struct bpfstash_image *im, struct bpfstash_entry *e,
				struct bpfstash_hash_acct *acct)
{
	struct bpfstash_blob *b;
	u32 i;

	if (!im->nr_calls)
		return 0;
	b = bpfstash_blob_alloc(im->nr_calls * sizeof(struct bpfstash_call));
	if (!b)
		return -ENOMEM;
	b->seen_key = 0;	/* addresses inside, as in an image */
	e->blobs[BPFSTASH_BLOB_CALLS] = b;
	for (i = 0; i < im->nr_calls; i++) {
		struct bpfstash_call rec = {};
		const struct bpf_prog *prog;
		struct bpfstash_entry *pe;
		u32 kind;

		prog = im->call(im->arg, i, &kind);
		rec.kind = cpu_to_le32(kind);
		rec.addr = cpu_to_le64((unsigned long)prog->bpf_func);
		rec.prog_id = cpu_to_le32(prog->aux->id);
		memcpy(rec.tag, prog->tag, BPFSTASH_TAG_SIZE);
		memcpy(rec.name, prog->aux->name, BPFSTASH_NAME_LEN);
		/* An entry's name never changes; the entry lasts the grace period. */
		rcu_read_lock();
		pe = rcu_dereference(prog->aux->stash);
		if (pe)
			memcpy(rec.hash, pe->hash, BPFSTASH_HASH_SIZE);
		rcu_read_unlock();
		bpfstash_blob_write(b, i * sizeof(rec), &rec, sizeof(rec));
	}
	return bpfstash_blob_digest(b, acct);
}

static int bpfstash_snapshot_image(const struct bpfstash_owner *o, struct bpfstash_entry *e,
				   struct bpfstash_hash_acct *acct)
{
	const struct bpfstash_image *im = container_of(o, struct bpfstash_image, owner);
	const char *name = im->ksym->name;
	struct bpfstash_content *c = &e->content;
	struct bpfstash_func rec = {
		.addr = cpu_to_le64((unsigned long)im->start),
		.len = cpu_to_le32(im->size),
	};
	static const u8 zeroes[8];
	struct bpfstash_writer w;
	struct bpfstash_blob *b;
	int err;

	err = bpfstash_funcs_alloc(e, im->funcs_size);
	if (err)
		return err;
	c->funcs_size = cpu_to_le32(im->funcs_size);
	/* Every byte: the record, the name, the zeroes after it. */
	bpfstash_writer_init(&w, e->funcs, e->funcs_segs, im->funcs_size, 0);
	bpfstash_write(&w, &rec, sizeof(rec));
	bpfstash_write(&w, name, strlen(name) + 1);
	bpfstash_write(&w, zeroes, im->funcs_size - w.off);

	bpfstash_content_init(c);
	c->image_kind = cpu_to_le32(im->kind);
	c->nr_funcs = cpu_to_le32(1);
	c->jited_len = cpu_to_le32(im->size);
	strscpy(c->name, bpfstash_image_names[im->kind], sizeof(c->name));

	b = bpfstash_blob_alloc(im->size);
	if (!b)
		return -ENOMEM;
	b->seen_key = 0;
	bpfstash_blob_write(b, 0, im->start, im->size);
	e->blobs[BPFSTASH_BLOB_JITED] = b;
	err = bpfstash_blob_digest(b, acct);
	if (err)
		return err;
	err = bpfstash_image_calls(im, e, acct);
	if (err)
		return err;

	if (im->target) {
		const struct bpf_prog_aux *aux = im->target->aux;

		c->attach_btf_id = cpu_to_le32(aux->attach_btf_id);
		e->state.attach_btf_obj_id = aux->attach_btf ? btf_obj_id(aux->attach_btf) : 0;
		if (aux->attach_func_name)
			strscpy(e->attach_func_name, aux->attach_func_name,
				sizeof(e->attach_func_name));
	}
	bpfstash_entry_set_load_time(e, ktime_get_boottime_ns());

	return bpfstash_content_hash(c, e->funcs, e->funcs_segs, e->blobs, e->hash, acct);
}

/*
 * Store @im, and emit PERF_RECORD_MMAP3 for it.  The gate is a program's:
 * images are in /proc/kallsyms exactly when programs are.
 */
static void bpfstash_store_image(struct bpfstash_image *im)
{
	struct bpfstash_entry *e;
	int flags;

	if (!bpfstash_kallsyms_shown())
		return;
	im->funcs_size = sizeof(struct bpfstash_func) + round_up(strlen(im->ksym->name) + 1, 8);
	im->owner.slot = &im->ksym->stash;
	im->owner.image = true;
	im->owner.snapshot = bpfstash_snapshot_image;
	im->owner.min_bytes = bpfstash_min_bytes(im->funcs_size, im->size);
	flags = bpfstash_store_owner(&im->owner, false, &e, NULL);
	if (flags >= 0)
		perf_event_bpf_image_mmap3(im->ksym->name, (unsigned long)im->start, im->size,
					   e ? e->hash : NULL,
					   e ? BPFSTASH_HASH_SIZE : 0, flags);
	if (e)
		bpfstash_entry_put(e);
}

static const struct bpf_prog *bpfstash_trampoline_call(const void *arg, u32 i, u32 *kind)
{
	static const u32 kinds[BPF_TRAMP_MAX] = {
		[BPF_TRAMP_FENTRY]		= BPFSTASH_CALL_FENTRY,
		[BPF_TRAMP_FEXIT]		= BPFSTASH_CALL_FEXIT,
		[BPF_TRAMP_MODIFY_RETURN]	= BPFSTASH_CALL_MODIFY_RETURN,
	};
	const struct bpf_tramp_links *tlinks = arg;
	int k;

	/* In the order the trampoline calls them, kind by kind. */
	for (k = 0; k < BPF_TRAMP_MAX; k++) {
		if (i < tlinks[k].nr_links) {
			*kind = kinds[k];
			return tlinks[k].links[i]->link.prog;
		}
		i -= tlinks[k].nr_links;
	}
	return NULL;
}

/**
 * __bpfstash_trampoline_load - store a BPF trampoline's new image
 * @im: the image, written and read-only, not called yet
 * @tlinks: the links whose programs it calls, BPF_TRAMP_MAX of them
 */
void __bpfstash_trampoline_load(struct bpf_tramp_image *im, struct bpf_tramp_links *tlinks)
{
	struct bpfstash_image image = {
		.ksym = &im->ksym,
		.start = im->image,
		.size = im->size,
		.kind = BPFSTASH_IMAGE_TRAMPOLINE,
		.call = bpfstash_trampoline_call,
		.arg = tlinks,
	};
	int k;

	for (k = 0; k < BPF_TRAMP_MAX; k++) {
		if (tlinks[k].nr_links && !image.target)
			image.target = tlinks[k].links[0]->link.prog;
		image.nr_calls += tlinks[k].nr_links;
	}
	bpfstash_store_image(&image);
}

static const struct bpf_prog *bpfstash_struct_ops_call(const void *arg, u32 i, u32 *kind)
{
	*kind = BPFSTASH_CALL_STRUCT_OPS;
	return arg;
}

/**
 * __bpfstash_struct_ops_load - store the trampoline of a struct_ops member
 * @ksym: its kallsyms entry, which covers the trampoline exactly
 * @prog: the member's program, which it calls
 */
void __bpfstash_struct_ops_load(struct bpf_ksym *ksym, struct bpf_prog *prog)
{
	struct bpfstash_image image = {
		.ksym = ksym,
		.start = (void *)ksym->start,
		.size = ksym->end - ksym->start,
		.kind = BPFSTASH_IMAGE_STRUCT_OPS,
		.target = prog,
		.nr_calls = 1,
		.call = bpfstash_struct_ops_call,
		.arg = prog,
	};

	bpfstash_store_image(&image);
}

static const struct bpf_prog *bpfstash_dispatcher_call(const void *arg, u32 i, u32 *kind)
{
	const struct bpf_dispatcher *d = arg;
	int k;

	*kind = BPFSTASH_CALL_DISPATCH;
	for (k = 0; k < BPF_DISPATCHER_MAX; k++) {
		if (d->progs[k].prog && !i--)
			return d->progs[k].prog;
	}
	return NULL;
}

/**
 * __bpfstash_dispatcher_load - store a new version of a BPF dispatcher
 * @d: the dispatcher, whose previous version's entry is already unloaded
 * @image: the half of its page now written, not jumped to yet
 * @size: its bytes
 */
void __bpfstash_dispatcher_load(struct bpf_dispatcher *d, void *image, u32 size)
{
	struct bpfstash_image im = {
		.ksym = &d->ksym,
		.start = image,
		.size = size,
		.kind = BPFSTASH_IMAGE_DISPATCHER,
		.nr_calls = d->num_progs,
		.call = bpfstash_dispatcher_call,
		.arg = d,
	};

	bpfstash_store_image(&im);
}

/**
 * bpfstash_image_unload - mark an image's entry as unloaded
 * @ksym: the image's kallsyms entry, being removed
 *
 * Called where an image's kallsyms entry goes, before its memory is
 * freed, and by the dispatcher before it replaces its image.  Not behind
 * the static branch: an image stored before the store stopped may still
 * be detached by bpfstash_detach_images(), which needs the image's memory
 * until here.
 */
void bpfstash_image_unload(struct bpf_ksym *ksym)
{
	struct bpfstash_entry *e;

	/* Set before the image could go; cleared only here or at stop. */
	if (!rcu_access_pointer(ksym->stash))
		return;
	write_seqlock_bh(&bpfstash_store.state);
	e = rcu_dereference_protected(ksym->stash, lockdep_is_held(&bpfstash_store.state.lock));
	if (e) {
		RCU_INIT_POINTER(ksym->stash, NULL);
		list_del_init(&e->image_node);
		e->owner = NULL;
	}
	write_sequnlock_bh(&bpfstash_store.state);
	if (!e)
		return;
	bpfstash_entry_unloaded(e, true);
	bpfstash_entry_put(e);
}
