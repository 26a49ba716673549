// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the root's "index" file, every entry's ranges in one read.
 *
 * A profiler that symbolizes against the stash needs each entry's
 * functions (address, length, kallsyms name) and its state; reading them
 * from every entry's meta and funcs is two opens per entry.  The index
 * file is made whole when it is opened, from the entries the store holds
 * at that moment, and reads the same until it is closed.  Its layout is
 * struct bpfstash_index_header's, in include/uapi/linux/bpfstash.h.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "internal.h"

/* Tries at a file whose entries' states are all of one generation. */
#define BPFSTASH_INDEX_TRIES	3

/* The largest index file made: the sizes in its header are 32-bit. */
#define BPFSTASH_INDEX_MAX	((u64)INT_MAX)

struct bpfstash_index_buf {
	size_t size;
	u8 data[];
};

/* Bytes of @e's names: its funcs file past the records. */
static u32 bpfstash_index_names(const struct bpfstash_entry *e)
{
	u32 nr = le32_to_cpu(bpfstash_entry_content(e)->nr_funcs);

	return bpfstash_entry_size(e, BPFSTASH_DATA_FUNCS) - nr * sizeof(struct bpfstash_func);
}

/* @e's record, its ranges from @range on, and its names at @names. */
static void bpfstash_index_fill_entry(const struct bpfstash_entry *e, u32 i, u32 range,
				      struct bpfstash_index_entry *ie,
				      struct bpfstash_index_range *ir, u8 *names,
				      u32 names_off)
{
	const struct bpfstash_content *c = bpfstash_entry_content(e);
	u32 nr = le32_to_cpu(c->nr_funcs), recs = nr * sizeof(struct bpfstash_func);
	u32 f, off, len, size = bpfstash_entry_size(e, BPFSTASH_DATA_FUNCS);
	struct bpfstash_state st;

	bpfstash_entry_state(e, &st);
	memcpy(ie->hash, bpfstash_entry_hash(e), sizeof(ie->hash));
	ie->flags = cpu_to_le32(st.flags);
	ie->prog_id = cpu_to_le32(st.prog_id);
	ie->image_kind = c->image_kind;
	ie->first_range = cpu_to_le32(range);
	ie->nr_ranges = c->nr_funcs;
	ie->load_time = cpu_to_le64(st.load_time);
	ie->load_time_real = cpu_to_le64(st.load_time_real);
	ie->unload_time = cpu_to_le64(st.unload_time);
	ie->unload_time_real = cpu_to_le64(st.unload_time_real);
	ie->prog_type = c->prog_type;
	ie->uid = cpu_to_le32(st.uid);
	memcpy(ie->name, c->name, sizeof(ie->name));
	memcpy(ie->tag, c->tag, sizeof(ie->tag));

	for (f = 0; f < nr; f++) {
		/* Records never straddle two pieces of the funcs file. */
		const struct bpfstash_func *rec =
			bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, f * sizeof(*rec), &len);

		ir[f].addr = rec->addr;
		ir[f].len = rec->len;
		ir[f].entry = cpu_to_le32(i);
		ir[f].func = cpu_to_le32(f);
		ir[f].name_off = cpu_to_le32(names_off + le32_to_cpu(rec->name_off));
	}
	/* Names can straddle pieces: copy them as they come. */
	for (off = recs; off < size; off += len) {
		const void *p = bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, off, &len);

		len = min(len, size - off);
		memcpy(names + off - recs, p, len);
	}
}

/* The file for the entries @v: -EFBIG past BPFSTASH_INDEX_MAX, -ENOMEM. */
static struct bpfstash_index_buf *bpfstash_index_fill(struct bpfstash_entry **v, u32 nr,
						      u64 gen)
{
	struct bpfstash_index_header *h;
	struct bpfstash_index_entry *ie;
	struct bpfstash_index_range *ir;
	struct bpfstash_index_buf *buf;
	u64 ranges = 0, names = 0, size;
	u32 i, range, names_off;
	u8 *np;

	for (i = 0; i < nr; i++) {
		ranges += le32_to_cpu(bpfstash_entry_content(v[i])->nr_funcs);
		names += bpfstash_index_names(v[i]);
	}
	size = sizeof(*h) + (u64)nr * sizeof(*ie) + ranges * sizeof(*ir) + names;
	if (size > BPFSTASH_INDEX_MAX)
		return ERR_PTR(-EFBIG);
	buf = kvzalloc(struct_size(buf, data, size), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->size = size;

	h = (void *)buf->data;
	ie = (void *)(h + 1);
	ir = (void *)(ie + nr);
	np = (u8 *)(ir + ranges);
	*h = (struct bpfstash_index_header){
		.magic = cpu_to_le32(BPFSTASH_INDEX_MAGIC),
		.version = cpu_to_le32(BPFSTASH_INDEX_VERSION),
		.header_size = cpu_to_le32(sizeof(*h)),
		.generation = cpu_to_le64(gen),
		.size = cpu_to_le64(size),
		.nr_entries = cpu_to_le32(nr),
		.entry_size = cpu_to_le32(sizeof(*ie)),
		.nr_ranges = cpu_to_le32(ranges),
		.range_size = cpu_to_le32(sizeof(*ir)),
		.names_size = cpu_to_le32(names),
	};
	memcpy(h->boot_id, bpfstash_boot_id(), sizeof(h->boot_id));

	range = 0;
	names_off = 0;
	for (i = 0; i < nr; i++) {
		bpfstash_index_fill_entry(v[i], i, range, &ie[i], &ir[range], np + names_off,
					  names_off);
		range += le32_to_cpu(ie[i].nr_ranges);
		names_off += bpfstash_index_names(v[i]);
		if (!(i % 1024))
			cond_resched();
	}
	return buf;
}

/*
 * The entries as one moment left them, if the store lets the file be made
 * between two of its changes; else the last try, marked as changing.
 */
static struct bpfstash_index_buf *bpfstash_index_make(void)
{
	struct bpfstash_index_buf *buf = NULL;
	struct bpfstash_entry **v;
	int tries;
	u64 gen;
	u32 nr;

	for (tries = 0; tries < BPFSTASH_INDEX_TRIES; tries++) {
		kvfree(buf);	/* the last try's: never an error here */
		v = bpfstash_store_entries(&nr, &gen);
		if (!v)
			return ERR_PTR(-ENOMEM);
		buf = bpfstash_index_fill(v, nr, gen);
		bpfstash_entries_put(v, nr);
		if (IS_ERR(buf) || bpfstash_store_generation() == gen)
			return buf;
	}
	((struct bpfstash_index_header *)buf->data)->flags =
		cpu_to_le32(BPFSTASH_INDEX_CHANGING);
	return buf;
}

static int bpfstash_index_open(struct inode *inode, struct file *file)
{
	struct bpfstash_index_buf *buf;
	int err;

	if (file->f_mode & FMODE_WRITE)
		return -EPERM;
	/* It lists every entry's name: gated as listing the root is. */
	err = bpfstash_open_gate(file);
	if (err)
		return err;
	buf = bpfstash_index_make();
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	file->private_data = buf;
	return 0;
}

static ssize_t bpfstash_index_read(struct file *file, char __user *ubuf, size_t count,
				   loff_t *ppos)
{
	const struct bpfstash_index_buf *buf = file->private_data;

	/* The opener's credentials, also at read time (as kallsyms decides). */
	if (!bpfstash_reader_ok(file->f_cred, file_inode(file)->i_sb))
		return -EPERM;
	return simple_read_from_buffer(ubuf, count, ppos, buf->data, buf->size);
}

static int bpfstash_index_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

const struct file_operations bpfstash_index_fops = {
	.open		= bpfstash_index_open,
	.read		= bpfstash_index_read,
	.llseek		= default_llseek,
	.release	= bpfstash_index_release,
};
