// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the files of an entry, and the root's stats and control files.
 *
 * Binary files are the blobs as the store holds them, with the layouts of
 * include/uapi/linux/bpfstash.h.  Text files are generated on read from
 * the same data, for people with cat(1); "lines" resolves each jited line
 * info record to file:line:col and the source line, from the entry's BTF.
 */
#include <linux/btf.h>
#include <linux/capability.h>
#include <linux/dcache.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/security.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>
#include <uapi/linux/btf.h>

#include "internal.h"

static int bpfstash_file_open(struct inode *inode, struct file *file)
{
	struct bpfstash_entry *e = bpfstash_inode_entry(inode);
	int err;

	/* Root bypasses the 0400 mode; nothing here is writable by anyone. */
	if (file->f_mode & FMODE_WRITE)
		return -EPERM;
	err = bpfstash_open_gate(file);
	if (err)
		return err;
	/* O_NOATIME (the owner's, or CAP_FOWNER's: may_open()) is no access. */
	if (!(file->f_flags & O_NOATIME))
		bpfstash_entry_accessed(e);
	return 0;
}

loff_t bpfstash_file_size(const struct bpfstash_entry *e, const struct bpfstash_file *f)
{
	return f->size ? f->size(e, f) : 0;	/* text files: 0, as in procfs */
}

static loff_t bpfstash_meta_size(const struct bpfstash_entry *e, const struct bpfstash_file *f)
{
	return sizeof(struct bpfstash_meta);
}

static loff_t bpfstash_data_size(const struct bpfstash_entry *e, const struct bpfstash_file *f)
{
	return bpfstash_entry_size(e, f->data);
}

/* Read the data of a binary file, piece by piece. */
static ssize_t bpfstash_data_copy(const struct bpfstash_entry *e,
				  const struct bpfstash_file *f, char __user *buf,
				  size_t count, loff_t *ppos)
{
	loff_t pos = *ppos, size = bpfstash_file_size(e, f);
	size_t done = 0;

	if (pos < 0 || pos >= size)
		return pos < 0 ? -EINVAL : 0;
	while (done < count && pos < size) {
		const void *p;
		size_t n;
		u32 len;

		p = bpfstash_entry_at(e, f->data, pos, &len);
		n = min_t(size_t, len, count - done);
		if (copy_to_user(buf + done, p, n)) {
			if (!done)
				return -EFAULT;
			break;
		}
		done += n;
		pos += n;
	}
	*ppos = pos;
	return done;
}

static ssize_t bpfstash_data_read(struct file *file, char __user *buf, size_t count,
				  loff_t *ppos)
{
	const struct bpfstash_entry *e = bpfstash_inode_entry(file_inode(file));
	const struct bpfstash_file *f = file->private_data;

	/* The opener's credentials, also at read time (as kallsyms decides). */
	if (!bpfstash_reader_ok(file->f_cred, file_inode(file)->i_sb))
		return -EPERM;
	return bpfstash_data_copy(e, f, buf, count, ppos);
}

static ssize_t bpfstash_meta_read(struct file *file, char __user *buf, size_t count,
				  loff_t *ppos)
{
	const struct bpfstash_entry *e = bpfstash_inode_entry(file_inode(file));
	struct bpfstash_meta m;

	if (!bpfstash_reader_ok(file->f_cred, file_inode(file)->i_sb))
		return -EPERM;
	bpfstash_entry_meta(e, &m);
	return simple_read_from_buffer(buf, count, ppos, &m, sizeof(m));
}

static int bpfstash_data_open(struct inode *inode, struct file *file)
{
	int err = bpfstash_file_open(inode, file);

	if (err)
		return err;
	file->private_data = (void *)bpfstash_dentry_file(file->f_path.dentry);
	return 0;
}

static const struct file_operations bpfstash_data_fops = {
	.open		= bpfstash_data_open,
	.read		= bpfstash_data_read,
	.llseek		= default_llseek,
};

static const struct file_operations bpfstash_meta_fops = {
	.open		= bpfstash_file_open,
	.read		= bpfstash_meta_read,
	.llseek		= default_llseek,
};

/* Text files: seq_file over the entry, which the inode keeps alive. */

/*
 * A field of the struct bpf_line_info and bpf_func_info records an entry
 * holds: little-endian, as every record of an entry.
 */
static u32 bpfstash_le32(u32 v)
{
	return le32_to_cpu((__force __le32)v);
}

static const struct bpfstash_func *bpfstash_func_rec(const struct bpfstash_entry *e, u32 i)
{
	u32 len;

	/* Records never straddle two pieces. */
	return bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, i * sizeof(struct bpfstash_func), &len);
}

/* The name of function @i, which can straddle two pieces of the funcs file. */
static void bpfstash_print_func_name(struct seq_file *m, const struct bpfstash_entry *e,
				     u32 i)
{
	const struct bpfstash_content *c = bpfstash_entry_content(e);
	u32 off = le32_to_cpu(c->nr_funcs) * sizeof(struct bpfstash_func) +
		  le32_to_cpu(bpfstash_func_rec(e, i)->name_off);
	u32 len;
	size_t n;

	while (off < le32_to_cpu(c->funcs_size)) {
		const char *p = bpfstash_entry_at(e, BPFSTASH_DATA_FUNCS, off, &len);

		n = strnlen(p, len);
		seq_write(m, p, n);
		if (n < len)
			break;
		off += n;
	}
}

static void bpfstash_print_time(struct seq_file *m, const char *key, u64 real_ns,
				u64 boot_ns)
{
	struct tm tm;

	if (!real_ns) {
		seq_printf(m, "%-16s -\n", key);
		return;
	}
	time64_to_tm(div_u64(real_ns, NSEC_PER_SEC), 0, &tm);
	seq_printf(m, "%-16s %04ld-%02d-%02dT%02d:%02d:%02d.%09uZ (boot +%llu.%09llu s)\n",
		   key, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		   tm.tm_min, tm.tm_sec, (u32)do_div(real_ns, NSEC_PER_SEC),
		   div_u64(boot_ns, NSEC_PER_SEC), boot_ns % NSEC_PER_SEC);
}

/* A name from a table of names, or the number when it is not in it. */
static void bpfstash_show_name(struct seq_file *m, const char *const *names, u32 nr, u32 v)
{
	if (v < nr && names[v])
		seq_puts(m, names[v]);
	else
		seq_printf(m, "%u", v);
}

/* The lines an image's info has besides a program's: its kind, its calls. */
static void bpfstash_image_show(struct seq_file *m, const struct bpfstash_entry *e,
				const struct bpfstash_content *c)
{
	static const char *const images[] = {
		[BPFSTASH_IMAGE_TRAMPOLINE]	= "trampoline",
		[BPFSTASH_IMAGE_STRUCT_OPS]	= "struct_ops",
		[BPFSTASH_IMAGE_DISPATCHER]	= "dispatcher",
	};
	static const char *const kinds[] = {
		[BPFSTASH_CALL_FENTRY]		= "fentry",
		[BPFSTASH_CALL_FEXIT]		= "fexit",
		[BPFSTASH_CALL_MODIFY_RETURN]	= "fmod_ret",
		[BPFSTASH_CALL_STRUCT_OPS]	= "struct_ops",
		[BPFSTASH_CALL_DISPATCH]	= "dispatch",
	};
	static const u8 none[BPFSTASH_HASH_SIZE];
	u32 size = bpfstash_entry_size(e, BPFSTASH_DATA_CALLS), off, len;
	const struct bpfstash_call *call;

	seq_printf(m, "%-16s ", "image");
	bpfstash_show_name(m, images, ARRAY_SIZE(images), le32_to_cpu(c->image_kind));
	seq_putc(m, '\n');
	/* Records are 64 bytes: they never straddle two pieces. */
	for (off = 0; off + sizeof(*call) <= size; off += sizeof(*call)) {
		call = bpfstash_entry_at(e, BPFSTASH_DATA_CALLS, off, &len);
		seq_printf(m, "%-16s ", "call");
		bpfstash_show_name(m, kinds, ARRAY_SIZE(kinds), le32_to_cpu(call->kind));
		seq_printf(m, " prog_id %u tag %*phN entry ", le32_to_cpu(call->prog_id),
			   BPFSTASH_TAG_SIZE, call->tag);
		if (memcmp(call->hash, none, sizeof(none)))
			seq_printf(m, "%*phN", BPFSTASH_HASH_SIZE, call->hash);
		else
			seq_putc(m, '-');
		seq_printf(m, " name %.*s\n", BPFSTASH_NAME_LEN, call->name);
	}
}

static int bpfstash_info_show(struct seq_file *m, void *v)
{
	const struct bpfstash_entry *e = m->private;
	const struct bpfstash_content *c = bpfstash_entry_content(e);
	const char *attach = bpfstash_entry_attach_name(e);
	struct bpfstash_state st;

	bpfstash_entry_state(e, &st);
	seq_printf(m, "%-16s %*phN\n", "hash", BPFSTASH_HASH_SIZE, bpfstash_entry_hash(e));
	seq_printf(m, "%-16s %.*s\n", "name", BPFSTASH_NAME_LEN, c->name);
	seq_printf(m, "%-16s %u\n", "prog_id", st.prog_id);
	seq_printf(m, "%-16s %u\n", "prog_type", le32_to_cpu(c->prog_type));
	seq_printf(m, "%-16s %*phN\n", "tag", BPFSTASH_TAG_SIZE, c->tag);
	seq_printf(m, "%-16s %s\n", "state", st.flags & BPFSTASH_META_LOADED ?
		   "loaded" : "unloaded");
	bpfstash_print_time(m, "load_time", st.load_time_real, st.load_time);
	bpfstash_print_time(m, "unload_time", st.unload_time_real, st.unload_time);
	seq_printf(m, "%-16s %u\n", "uid", st.uid);
	if (st.loader_tgid)
		seq_printf(m, "%-16s pid %u comm %.*s cgroup %llu\n", "loader", st.loader_tgid,
			   BPFSTASH_COMM_LEN, st.loader_comm, st.loader_cgroup_id);
	else
		seq_printf(m, "%-16s -\n", "loader");
	seq_printf(m, "%-16s %pU\n", "boot_id", bpfstash_boot_id());
	seq_printf(m, "%-16s %u\n", "functions", le32_to_cpu(c->nr_funcs));
	seq_printf(m, "%-16s %u\n", "jited_bytes", le32_to_cpu(c->jited_len));
	seq_printf(m, "%-16s %u\n", "pokes", le32_to_cpu(c->nr_pokes));
	seq_printf(m, "%-16s %u\n", "xlated_bytes", le32_to_cpu(c->xlated_len));
	seq_printf(m, "%-16s %u\n", "verified_insns", le32_to_cpu(c->verified_insns));
	seq_printf(m, "%-16s %u\n", "line_info", le32_to_cpu(c->nr_line_info));
	seq_printf(m, "%-16s %u\n", "jited_line_info", le32_to_cpu(c->nr_jited_line_info));
	seq_printf(m, "%-16s %u\n", "func_info", le32_to_cpu(c->nr_func_info));
	seq_printf(m, "%-16s %u\n", "btf_id", st.btf_id);
	seq_printf(m, "%-16s %u\n", "btf_bytes", le32_to_cpu(c->btf_size));
	seq_printf(m, "%-16s %u\n", "gpl_compatible", le32_to_cpu(c->gpl_compatible));
	seq_printf(m, "%-16s %u\n", "expected_attach", le32_to_cpu(c->expected_attach_type));
	seq_printf(m, "%-16s %s (btf_id %u, btf obj %u)\n", "attach_target",
		   attach[0] ? attach : "-", le32_to_cpu(c->attach_btf_id),
		   st.attach_btf_obj_id);
	seq_printf(m, "%-16s %llu\n", "bytes", st.bytes);
	if (c->image_kind)
		bpfstash_image_show(m, e, c);
	return 0;
}

static int bpfstash_functions_show(struct seq_file *m, void *v)
{
	const struct bpfstash_entry *e = m->private;
	const struct bpfstash_func *f;
	u32 i;

	seq_puts(m, "# idx start            end              size  tag              name\n");
	for (i = 0; i < le32_to_cpu(bpfstash_entry_content(e)->nr_funcs); i++) {
		f = bpfstash_func_rec(e, i);
		seq_printf(m, "%5u %016llx %016llx %5u %*phN ", i, le64_to_cpu(f->addr),
			   le64_to_cpu(f->addr) + le32_to_cpu(f->len), le32_to_cpu(f->len),
			   BPFSTASH_TAG_SIZE, f->tag);
		bpfstash_print_func_name(m, e, i);
		seq_putc(m, '\n');
	}
	return 0;
}

/* The "lines" file: the entry and the string section of its BTF. */
struct bpfstash_lines {
	const struct bpfstash_entry *e;
	void *btf;		/* the BTF in one piece, if the blob is not */
	const char *strs;
	u32 strs_len;
};

/*
 * The string section of the entry's raw BTF, checked: the entry holds BTF
 * that btf_parse() accepted, but this code does not rely on that.  A
 * BTF blob held in pieces is copied in one piece first, for as long as the
 * file is open: a string can straddle two pieces.
 */
static int bpfstash_btf_strings(struct bpfstash_lines *l)
{
	u32 size = bpfstash_entry_size(l->e, BPFSTASH_DATA_BTF);
	const struct btf_header *hdr;
	u32 off, n;
	u64 start;

	if (!size)
		return 0;
	hdr = bpfstash_entry_at(l->e, BPFSTASH_DATA_BTF, 0, &n);
	if (n < size) {
		l->btf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
		if (!l->btf)
			return -ENOMEM;
		/*
		 * Two statements: as one memcpy(dst, bpfstash_entry_at(e, d,
		 * off, &n), n), the compiler may read n before the call sets it.
		 */
		for (off = 0; off < size; off += n) {
			const void *piece = bpfstash_entry_at(l->e, BPFSTASH_DATA_BTF, off, &n);

			memcpy(l->btf + off, piece, n);
		}
		hdr = l->btf;
	}
	/* btf_parse() refused anything else: a failure here is a bug of ours. */
	if (WARN_ON_ONCE(size < sizeof(*hdr) || hdr->magic != BTF_MAGIC ||
			 hdr->hdr_len > size))
		return 0;
	start = (u64)hdr->hdr_len + hdr->str_off;
	if (WARN_ON_ONCE(start > size || hdr->str_len > size - start))
		return 0;
	l->strs_len = hdr->str_len;
	l->strs = (const char *)hdr + start;
	return 0;
}

static const char *bpfstash_btf_str(const char *strs, u32 len, u32 off)
{
	if (!strs || off >= len || !strnchr(strs + off, len - off, '\0'))
		return "?";
	return strs + off;
}

static void *bpfstash_lines_start(struct seq_file *m, loff_t *pos)
{
	const struct bpfstash_lines *l = m->private;
	const struct bpfstash_entry *e = l->e;

	/* Records are 1-based positions, shifted past SEQ_START_TOKEN. */
	if (*pos == 0)
		return SEQ_START_TOKEN;
	if (*pos > le32_to_cpu(bpfstash_entry_content(e)->nr_line_info))
		return NULL;
	return (void *)(uintptr_t)(*pos + 1);
}

static void *bpfstash_lines_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return bpfstash_lines_start(m, pos);
}

static void bpfstash_lines_stop(struct seq_file *m, void *v)
{
}

static int bpfstash_lines_show(struct seq_file *m, void *v)
{
	const struct bpfstash_lines *l = m->private;
	const struct bpfstash_entry *e = l->e;
	const struct bpfstash_content *c = bpfstash_entry_content(e);
	const struct bpfstash_jited_line *jl = NULL;
	const struct bpf_line_info *li;
	const char *src;
	u32 i, len;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# address         function+offset\tfile:line:col\tsource\n");
		return 0;
	}
	i = (uintptr_t)v - 2;
	/* Records never straddle two pieces of a blob. */
	li = bpfstash_entry_at(e, BPFSTASH_DATA_LINE_INFO, i * sizeof(*li), &len);
	if (i < bpfstash_entry_size(e, BPFSTASH_DATA_JITED_LINE_INFO) / sizeof(*jl))
		jl = bpfstash_entry_at(e, BPFSTASH_DATA_JITED_LINE_INFO, i * sizeof(*jl), &len);

	if (jl && i < le32_to_cpu(c->nr_jited_line_info) &&
	    le32_to_cpu(jl->func) < le32_to_cpu(c->nr_funcs)) {
		u32 func = le32_to_cpu(jl->func), off = le32_to_cpu(jl->off);

		seq_printf(m, "%016llx ", le64_to_cpu(bpfstash_func_rec(e, func)->addr) + off);
		bpfstash_print_func_name(m, e, func);
		seq_printf(m, "+0x%x", off);
	} else {
		seq_printf(m, "%-16s insn %u", "-", bpfstash_le32(li->insn_off));
	}
	src = bpfstash_btf_str(l->strs, l->strs_len, bpfstash_le32(li->line_off));
	seq_printf(m, "\t%s:%u:%u\t%s\n",
		   bpfstash_btf_str(l->strs, l->strs_len, bpfstash_le32(li->file_name_off)),
		   BPF_LINE_INFO_LINE_NUM(bpfstash_le32(li->line_col)),
		   BPF_LINE_INFO_LINE_COL(bpfstash_le32(li->line_col)), skip_spaces(src));
	return 0;
}

static const struct seq_operations bpfstash_lines_sops = {
	.start	= bpfstash_lines_start,
	.next	= bpfstash_lines_next,
	.stop	= bpfstash_lines_stop,
	.show	= bpfstash_lines_show,
};

static int bpfstash_lines_release(struct inode *inode, struct file *file)
{
	struct bpfstash_lines *l = ((struct seq_file *)file->private_data)->private;

	kvfree(l->btf);
	return seq_release_private(inode, file);
}

static int bpfstash_lines_open(struct inode *inode, struct file *file)
{
	struct bpfstash_lines *l;
	int err = bpfstash_file_open(inode, file);

	if (err)
		return err;
	l = __seq_open_private(file, &bpfstash_lines_sops, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->e = bpfstash_inode_entry(inode);
	err = bpfstash_btf_strings(l);
	if (err)
		bpfstash_lines_release(inode, file);
	return err;
}

static int bpfstash_info_open(struct inode *inode, struct file *file)
{
	int err = bpfstash_file_open(inode, file);

	return err ?: single_open(file, bpfstash_info_show, bpfstash_inode_entry(inode));
}

static int bpfstash_functions_open(struct inode *inode, struct file *file)
{
	int err = bpfstash_file_open(inode, file);

	return err ?: single_open(file, bpfstash_functions_show,
				  bpfstash_inode_entry(inode));
}

static ssize_t bpfstash_text_read(struct file *file, char __user *buf, size_t count,
				  loff_t *ppos)
{
	if (!bpfstash_reader_ok(file->f_cred, file_inode(file)->i_sb))
		return -EPERM;
	return seq_read(file, buf, count, ppos);
}

static const struct file_operations bpfstash_info_fops = {
	.open		= bpfstash_info_open,
	.read		= bpfstash_text_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static const struct file_operations bpfstash_functions_fops = {
	.open		= bpfstash_functions_open,
	.read		= bpfstash_text_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static const struct file_operations bpfstash_lines_fops = {
	.open		= bpfstash_lines_open,
	.read		= bpfstash_text_read,
	.llseek		= seq_lseek,
	.release	= bpfstash_lines_release,
};

/* Order matters: it fixes the inode numbers (see internal.h). */
const struct bpfstash_file bpfstash_files[] = {
	{ "meta",		&bpfstash_meta_fops,	bpfstash_meta_size },
	{ "funcs",		&bpfstash_data_fops,	bpfstash_data_size, BPFSTASH_DATA_FUNCS },
	{ "jited",		&bpfstash_data_fops,	bpfstash_data_size, BPFSTASH_DATA_JITED },
	{ "line_info",		&bpfstash_data_fops,	bpfstash_data_size,
				BPFSTASH_DATA_LINE_INFO },
	{ "jited_line_info",	&bpfstash_data_fops,	bpfstash_data_size,
				BPFSTASH_DATA_JITED_LINE_INFO },
	{ "func_info",		&bpfstash_data_fops,	bpfstash_data_size,
				BPFSTASH_DATA_FUNC_INFO },
	{ "btf",		&bpfstash_data_fops,	bpfstash_data_size, BPFSTASH_DATA_BTF },
	{ "info",		&bpfstash_info_fops },
	{ "functions",		&bpfstash_functions_fops },
	{ "lines",		&bpfstash_lines_fops },
	{ "calls",		&bpfstash_data_fops,	bpfstash_data_size, BPFSTASH_DATA_CALLS,
				.optional = true },
	{ "pokes",		&bpfstash_data_fops,	bpfstash_data_size, BPFSTASH_DATA_POKES,
				.optional = true },
};

const unsigned int bpfstash_nr_files = ARRAY_SIZE(bpfstash_files);

static int bpfstash_stats_show(struct seq_file *m, void *v)
{
	struct bpfstash_stats st;

	bpfstash_store_get_stats(&st);
	seq_printf(m, "entries %u\n", st.entries);
	seq_printf(m, "max_entries %u\n", st.max_entries);
	seq_printf(m, "live_entries %u\n", st.live_entries);
	seq_printf(m, "bytes %llu\n", st.bytes);
	seq_printf(m, "max_bytes %llu\n", st.max_bytes);
	seq_printf(m, "peak_bytes %llu\n", st.peak_bytes);
	seq_printf(m, "blobs %u\n", st.blobs);
	seq_printf(m, "considered %llu\n", st.considered);
	seq_printf(m, "stored %llu\n", st.stored);
	seq_printf(m, "preexisting %llu\n", st.preexisting);
	seq_printf(m, "reloaded %llu\n", st.reloaded);
	seq_printf(m, "refused_full %llu\n", st.refused_full);
	seq_printf(m, "refused_nomem %llu\n", st.refused_nomem);
	seq_printf(m, "skipped_hardened %llu\n", st.skipped_hardened);
	seq_printf(m, "skipped_unlisted %llu\n", st.skipped_unlisted);
	seq_printf(m, "deleted %llu\n", st.deleted);
	seq_printf(m, "blob_dedup %llu\n", st.blob_dedup);
	seq_printf(m, "btf_hash_cached %llu\n", st.btf_hash_cached);
	seq_printf(m, "hashed_bytes %llu\n", st.hashed_bytes);
	seq_printf(m, "generation %llu\n", bpfstash_store_generation());
	return 0;
}

static int bpfstash_stats_open(struct inode *inode, struct file *file)
{
	if (file->f_mode & FMODE_WRITE)
		return -EPERM;
	return single_open(file, bpfstash_stats_show, NULL);
}

const struct file_operations bpfstash_stats_fops = {
	.open		= bpfstash_stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/*
 * "control": the store's state and limits, "on size=N max_entries=N" or
 * "off size=N max_entries=N", and what starts and stops it.  A write is
 * the words of the bpfstash= boot parameter (bpfstash_parse_control()):
 * "on" starts the store (with the limits given, if any), "off" stops it
 * and frees every entry, limits alone change them.  Writing needs what
 * mounting needs.
 */
static ssize_t bpfstash_control_read(struct file *file, char __user *buf,
				     size_t count, loff_t *ppos)
{
	struct bpfstash_stats st;
	char line[64];
	int len;

	bpfstash_store_get_stats(&st);
	len = scnprintf(line, sizeof(line), "%s size=%llu max_entries=%u\n",
			bpfstash_store_running() ? "on" : "off",
			st.max_bytes, st.max_entries);
	return simple_read_from_buffer(buf, count, ppos, line, len);
}

#define BPFSTASH_CONTROL_MAX	128

static ssize_t bpfstash_control_write(struct file *file, const char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	struct super_block *sb = file_inode(file)->i_sb;
	struct bpfstash_control c;
	char *buf;
	int err;

	if (count >= BPFSTASH_CONTROL_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = bpfstash_parse_control(buf, &c);
	if (err) {
		/* The word is the writer's: escaped, as it may hold anything. */
		pr_warn_ratelimited("bpfstash: control: %*pE: %s\n",
				    (int)strlen(c.bad), c.bad, c.why);
		goto out;
	}
	if (c.on == 0) {
		/* The cached inodes of entries hold them: prune, then wait. */
		if (bpfstash_store_stop()) {
			shrink_dcache_sb(sb);
			bpfstash_store_drain();
		}
	} else if (c.on == 1) {
		err = security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
		if (!err)
			err = bpfstash_store_start(c.max_bytes, c.max_entries);
		/* "on" to a running store: it takes the limits given. */
		if (err == -EBUSY) {
			bpfstash_store_set_limits(c.max_bytes, c.max_entries);
			err = 0;
		}
	} else {
		bpfstash_store_set_limits(c.max_bytes, c.max_entries);
	}
out:
	kfree(buf);
	return err ?: count;
}

static int bpfstash_control_open(struct inode *inode, struct file *file)
{
	if ((file->f_mode & FMODE_WRITE) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

const struct file_operations bpfstash_control_fops = {
	.open		= bpfstash_control_open,
	.read		= bpfstash_control_read,
	.write		= bpfstash_control_write,
	.llseek		= default_llseek,
};
