// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: the filesystem, a read-only view of the store.
 *
 *   mount -t bpfstash none /sys/fs/bpfstash
 *
 * One global instance (the store is global), which only the initial user
 * namespace's CAP_SYS_ADMIN can mount.  The filesystem is a view: the
 * store runs from its start (bpfstash= at boot, "on" written to the
 * control file, or else the first mount) until "off" is written to the
 * control file, and unmounting drops nothing.  The root lists one
 * directory per entry, named by its hash in hex, plus "stats", "control"
 * and "index".  Nothing can be created, renamed or changed; rmdir deletes
 * an entry whose program is gone.
 *
 * Dentries and inodes are made on lookup and are reclaimable: the store,
 * not the dcache, holds the entries, so an entry costs no inode until it
 * is looked at, and loading a program never touches the VFS.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/security.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "internal.h"

#define BPFSTASH_DEFAULT_MODE	0700

/* The view's options; size= and max_entries= are the store's limits. */
struct bpfstash_fs_info {
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	u64 max_bytes;		/* size= if given, or 0: the start's limits */
	u32 max_entries;	/* max_entries= if given, or 0 */
	bool delegate_readers;	/* readers need no capability, see bpfstash_reader_ok() */
	unsigned int opts;	/* the options given, as BIT(Opt_*) */
};

enum {
	Opt_uid,
	Opt_gid,
	Opt_mode,
	Opt_size,
	Opt_max_entries,
	Opt_delegate_readers,
};

static const struct fs_parameter_spec bpfstash_param_specs[] = {
	fsparam_uid("uid", Opt_uid),
	fsparam_gid("gid", Opt_gid),
	fsparam_u32oct("mode", Opt_mode),
	fsparam_string("size", Opt_size),
	fsparam_u32("max_entries", Opt_max_entries),
	fsparam_flag_no("delegate_readers", Opt_delegate_readers),
	{}
};

static int bpfstash_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct bpfstash_fs_info *opts = fc->s_fs_info;
	struct fs_parse_result result;
	char *end;
	int opt;

	/* Unknown options are an error: a new filesystem has no tradition. */
	opt = fs_parse(fc, bpfstash_param_specs, param, &result);
	if (opt < 0)
		return opt;

	switch (opt) {
	case Opt_uid:
		opts->uid = result.uid;
		break;
	case Opt_gid:
		opts->gid = result.gid;
		break;
	case Opt_mode:
		if (result.uint_32 & ~S_IALLUGO)
			return invalfc(fc, "mode=%o has bits beyond 07777", result.uint_32);
		opts->mode = result.uint_32;
		break;
	case Opt_size:
		opts->max_bytes = memparse(param->string, &end);
		if (*end || end == param->string)
			return invalfc(fc, "size=%s is not a size in bytes (K, M, G allowed)",
				       param->string);
		if (!opts->max_bytes)
			return invalfc(fc, "size=0 would refuse every program");
		break;
	case Opt_max_entries:
		if (!result.uint_32)
			return invalfc(fc, "max_entries=0 would refuse every program");
		opts->max_entries = result.uint_32;
		break;
	case Opt_delegate_readers:
		opts->delegate_readers = !result.negated;
		break;
	}
	opts->opts |= BIT(opt);
	return 0;
}

/* Set the root's owner and mode from the options (all, or those given). */
static void bpfstash_apply_options(struct super_block *sb, bool remount)
{
	struct bpfstash_fs_info *fsi = sb->s_fs_info;
	struct inode *root = d_inode(sb->s_root);

	inode_lock(root);
	if (!remount || fsi->opts & BIT(Opt_mode))
		root->i_mode = S_IFDIR | fsi->mode;
	if (!remount || fsi->opts & BIT(Opt_uid))
		root->i_uid = fsi->uid;
	if (!remount || fsi->opts & BIT(Opt_gid))
		root->i_gid = fsi->gid;
	inode_unlock(root);
}

/*
 * The limits belong to the store (control, the boot parameter): a mount
 * starts a stopped store with the limits it gives, and changes no other.
 * Say so when it gives limits the store does not have.
 */
static void bpfstash_limits_kept(struct fs_context *fc, const struct bpfstash_fs_info *given)
{
	struct bpfstash_stats st;

	if (!given->max_bytes && !given->max_entries)
		return;
	bpfstash_store_get_stats(&st);
	if ((given->max_bytes && given->max_bytes != st.max_bytes) ||
	    (given->max_entries && given->max_entries != st.max_entries))
		warnfc(fc, "limits left as they are, size=%llu max_entries=%u: control sets them",
		       st.max_bytes, st.max_entries);
}

/* Remount, or a second mount of the one instance: the view's options given. */
static void bpfstash_view_update(struct fs_context *fc)
{
	struct super_block *sb = fc->root->d_sb;
	struct bpfstash_fs_info *cur = sb->s_fs_info;
	struct bpfstash_fs_info *new = fc->s_fs_info;

	/* Remount changes what is given, and only that (tracefs semantics). */
	if (new->opts & BIT(Opt_uid))
		cur->uid = new->uid;
	if (new->opts & BIT(Opt_gid))
		cur->gid = new->gid;
	if (new->opts & BIT(Opt_mode))
		cur->mode = new->mode;
	if (new->opts & BIT(Opt_delegate_readers))
		WRITE_ONCE(cur->delegate_readers, new->delegate_readers);
	cur->opts = new->opts;
	bpfstash_apply_options(sb, true);
}

static int bpfstash_reconfigure(struct fs_context *fc)
{
	bpfstash_view_update(fc);
	bpfstash_limits_kept(fc, fc->s_fs_info);
	return 0;
}

static int bpfstash_show_options(struct seq_file *m, struct dentry *root)
{
	struct bpfstash_fs_info *fsi = root->d_sb->s_fs_info;
	struct bpfstash_stats st;

	if (!uid_eq(fsi->uid, GLOBAL_ROOT_UID))
		seq_printf(m, ",uid=%u", from_kuid_munged(&init_user_ns, fsi->uid));
	if (!gid_eq(fsi->gid, GLOBAL_ROOT_GID))
		seq_printf(m, ",gid=%u", from_kgid_munged(&init_user_ns, fsi->gid));
	if (fsi->mode != BPFSTASH_DEFAULT_MODE)
		seq_printf(m, ",mode=%o", fsi->mode);
	if (READ_ONCE(fsi->delegate_readers))
		seq_puts(m, ",delegate_readers");
	/* The limits the store runs with, however they were set. */
	bpfstash_store_get_stats(&st);
	if (st.max_bytes != BPFSTASH_DEFAULT_MAX_BYTES)
		seq_printf(m, ",size=%llu", st.max_bytes);
	if (st.max_entries != BPFSTASH_DEFAULT_MAX_ENTRIES)
		seq_printf(m, ",max_entries=%u", st.max_entries);
	return 0;
}

static int bpfstash_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct bpfstash_stats st;

	/* Exact bytes: one "block" is one byte. */
	bpfstash_store_get_stats(&st);
	buf->f_type = BPFSTASH_MAGIC;
	buf->f_bsize = 1;
	buf->f_blocks = st.max_bytes;
	buf->f_bfree = st.max_bytes - min(st.bytes, st.max_bytes);
	buf->f_bavail = buf->f_bfree;
	buf->f_files = st.max_entries;
	buf->f_ffree = st.max_entries - min(st.entries, st.max_entries);
	buf->f_namelen = BPFSTASH_HASH_SIZE * 2;
	return 0;
}

static void bpfstash_evict_inode(struct inode *inode)
{
	struct bpfstash_entry *e = bpfstash_inode_entry(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (e)
		bpfstash_entry_put(e);
}

static const struct super_operations bpfstash_super_ops = {
	.statfs		= bpfstash_statfs,
	.evict_inode	= bpfstash_evict_inode,
	.drop_inode	= generic_delete_inode,
	.show_options	= bpfstash_show_options,
};

static bool bpfstash_cred_capable(const struct cred *cred, int cap)
{
	return !security_capable(cred, &init_user_ns, cap, CAP_OPT_NOAUDIT);
}

/**
 * bpfstash_reader_ok - whether @cred may list the stash and read entries
 * @cred: the opener's credentials
 * @sb: the view
 *
 * What bpf_prog_get_info_by_fd() needs to show a JITed image
 * (bpf_dump_raw_ok(): kptr_restrict and perf_event_paranoid, as
 * /proc/kallsyms decides), and CAP_PERFMON or CAP_SYS_ADMIN in the initial
 * user namespace: reading another user's program through bpf() takes
 * CAP_SYS_ADMIN, and a profiler CAP_PERFMON.  The mount option
 * delegate_readers drops the capability, leaving it to uid=, gid= and
 * mode= whom to let in.  Names are as sensitive as addresses, since they
 * hash the loaded bytes.
 */
bool bpfstash_reader_ok(const struct cred *cred, const struct super_block *sb)
{
	const struct bpfstash_fs_info *fsi = sb->s_fs_info;

	if (!bpf_dump_raw_ok(cred))
		return false;
	return READ_ONCE(fsi->delegate_readers) ||
	       bpfstash_cred_capable(cred, CAP_PERFMON) ||
	       bpfstash_cred_capable(cred, CAP_SYS_ADMIN);
}

/*
 * Looking an entry up by its name, and what a lookup shows of it (its
 * inodes' attributes): a reader, or CAP_SYS_ADMIN, who may delete an entry
 * whose name it knows even where kptr_restrict hides it from everyone.
 */
static bool bpfstash_lookup_ok(const struct super_block *sb)
{
	return bpfstash_reader_ok(current_cred(), sb) ||
	       bpfstash_cred_capable(current_cred(), CAP_SYS_ADMIN);
}

/*
 * Listing the root and opening anything of an entry: a reader, with the
 * opener's credentials (f_cred), like /proc/kallsyms, so that a file
 * descriptor passed to a privileged process gains nothing; and no
 * confidentiality lockdown.
 */
int bpfstash_open_gate(struct file *file)
{
	if (!bpfstash_reader_ok(file->f_cred, file_inode(file)->i_sb))
		return -EPERM;
	return security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
}

/* Nothing in the namespace can be changed, not even by root. */
static int bpfstash_setattr(struct mnt_idmap *idmap, struct dentry *dentry,
			    struct iattr *iattr)
{
	return -EPERM;
}

static int bpfstash_parse_name(const struct qstr *name, u8 *hash)
{
	/* Exactly 40 lowercase hex digits: one spelling per entry. */
	if (name->len != BPFSTASH_HASH_SIZE * 2)
		return -ENOENT;
	for (unsigned int i = 0; i < name->len; i++)
		if (!isdigit(name->name[i]) && !(name->name[i] >= 'a' && name->name[i] <= 'f'))
			return -ENOENT;
	if (hex2bin(hash, name->name, BPFSTASH_HASH_SIZE))
		return -ENOENT;
	return 0;
}

static struct inode *bpfstash_new_inode(struct super_block *sb, unsigned long ino,
					umode_t mode)
{
	struct bpfstash_fs_info *fsi = sb->s_fs_info;
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = ino;
	inode->i_mode = mode;
	inode->i_uid = fsi->uid;
	inode->i_gid = fsi->gid;
	simple_inode_init_ts(inode);
	return inode;
}

/* Files and directories of an entry are readable by the owner, and the group if given. */
static umode_t bpfstash_entry_mode(struct super_block *sb, umode_t type)
{
	struct bpfstash_fs_info *fsi = sb->s_fs_info;
	umode_t mode = type == S_IFDIR ? 0500 : 0400;

	if (fsi->opts & BIT(Opt_gid) || !gid_eq(fsi->gid, GLOBAL_ROOT_GID))
		mode |= mode >> 3;
	return type | mode;
}

/*
 * The times of an entry's inodes, and the size of its directory: mtime
 * loaded, ctime unloaded (or loaded), atime last opened; the directory's
 * size is the entry's share of the store's memory, so that du(1) of the
 * stash adds up to the "bytes" of stats.
 */
static void bpfstash_entry_times(struct inode *inode, const struct bpfstash_entry *e)
{
	struct bpfstash_state st;

	bpfstash_entry_state(e, &st);
	inode_set_mtime_to_ts(inode, ns_to_timespec64(st.load_time_real));
	inode_set_ctime_to_ts(inode, ns_to_timespec64(st.unload_time_real ?: st.load_time_real));
	inode_set_atime_to_ts(inode, ns_to_timespec64(bpfstash_entry_last_access(e)));
	if (S_ISDIR(inode->i_mode))
		i_size_write(inode, st.bytes);
}

static int bpfstash_entry_getattr(struct mnt_idmap *idmap, const struct path *path,
				  struct kstat *stat, u32 request_mask,
				  unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);

	/* A cached dentry skips the lookup and its gate. */
	if (!bpfstash_lookup_ok(inode->i_sb))
		return -EPERM;
	/* The unload time and last access change under a cached inode. */
	bpfstash_entry_times(inode, bpfstash_inode_entry(inode));
	generic_fillattr(idmap, request_mask, inode, stat);
	return 0;
}

static const struct inode_operations bpfstash_file_iops = {
	.setattr	= bpfstash_setattr,
	.getattr	= bpfstash_entry_getattr,
};

static const struct inode_operations bpfstash_stats_iops = {
	.setattr	= bpfstash_setattr,
};

/*
 * "echo off > control" opens with O_TRUNC, which sets the size: a
 * truncation of a file that has none changes nothing.  Owner, mode and
 * times stay refused.
 */
static int bpfstash_control_setattr(struct mnt_idmap *idmap, struct dentry *dentry,
				    struct iattr *iattr)
{
	if (iattr->ia_valid & ~(ATTR_SIZE | ATTR_MTIME | ATTR_CTIME | ATTR_OPEN | ATTR_FILE) ||
	    ((iattr->ia_valid & ATTR_SIZE) && iattr->ia_size))
		return -EPERM;
	return 0;
}

static const struct inode_operations bpfstash_control_iops = {
	.setattr	= bpfstash_control_setattr,
};

static struct dentry *bpfstash_entry_lookup_file(struct inode *dir, struct dentry *dentry,
						 unsigned int flags)
{
	struct bpfstash_entry *e = bpfstash_inode_entry(dir);
	struct inode *inode = NULL;
	unsigned int i;

	for (i = 0; i < bpfstash_nr_files; i++) {
		const struct bpfstash_file *f = &bpfstash_files[i];

		if (strlen(f->name) != dentry->d_name.len ||
		    memcmp(f->name, dentry->d_name.name, dentry->d_name.len))
			continue;
		if (!bpfstash_has_file(e, f))
			break;
		inode = bpfstash_new_inode(dir->i_sb, dir->i_ino + 1 + i,
					   bpfstash_entry_mode(dir->i_sb, S_IFREG));
		if (!inode)
			return ERR_PTR(-ENOMEM);
		bpfstash_entry_get(e);
		inode->i_private = e;
		inode->i_op = &bpfstash_file_iops;
		inode->i_fop = f->fops;
		inode->i_size = bpfstash_file_size(e, f);
		bpfstash_entry_times(inode, e);
		dentry->d_fsdata = (void *)f;
		break;
	}
	return d_splice_alias(inode, dentry);
}

static int bpfstash_entry_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct bpfstash_entry *e = bpfstash_inode_entry(dir);
	unsigned int i;

	if (!dir_emit_dots(file, ctx))
		return 0;
	for (i = ctx->pos - 2; i < bpfstash_nr_files; i++) {
		const struct bpfstash_file *f = &bpfstash_files[i];

		if (bpfstash_has_file(e, f) &&
		    !dir_emit(ctx, f->name, strlen(f->name), dir->i_ino + 1 + i, DT_REG))
			return 0;
		ctx->pos++;
	}
	return 0;
}

static int bpfstash_dir_open(struct inode *inode, struct file *file)
{
	if (file->f_mode & FMODE_WRITE)
		return -EISDIR;
	return bpfstash_open_gate(file);
}

static const struct file_operations bpfstash_entry_dir_fops = {
	.open		= bpfstash_dir_open,
	.read		= generic_read_dir,
	.iterate_shared	= bpfstash_entry_iterate,
	.llseek		= generic_file_llseek,
};

static const struct inode_operations bpfstash_entry_dir_iops = {
	.lookup		= bpfstash_entry_lookup_file,
	.setattr	= bpfstash_setattr,
	.getattr	= bpfstash_entry_getattr,
};

static struct dentry *bpfstash_root_lookup(struct inode *dir, struct dentry *dentry,
					   unsigned int flags)
{
	struct super_block *sb = dir->i_sb;
	u8 hash[BPFSTASH_HASH_SIZE];
	struct bpfstash_entry *e;
	struct inode *inode;

	if (dentry->d_name.len == 5 && !memcmp(dentry->d_name.name, "stats", 5)) {
		inode = bpfstash_new_inode(sb, BPFSTASH_STATS_INO, S_IFREG | 0444);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_op = &bpfstash_stats_iops;
		inode->i_fop = &bpfstash_stats_fops;
		return d_splice_alias(inode, dentry);
	}
	if (dentry->d_name.len == 7 && !memcmp(dentry->d_name.name, "control", 7)) {
		/* root's, whatever uid= and gid= say: it starts and stops the store. */
		inode = bpfstash_new_inode(sb, BPFSTASH_CONTROL_INO, S_IFREG | 0600);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_uid = GLOBAL_ROOT_UID;
		inode->i_gid = GLOBAL_ROOT_GID;
		inode->i_op = &bpfstash_control_iops;
		inode->i_fop = &bpfstash_control_fops;
		return d_splice_alias(inode, dentry);
	}
	if (dentry->d_name.len == 5 && !memcmp(dentry->d_name.name, "index", 5)) {
		/* An entry's file, of all of them: owned and gated as one. */
		inode = bpfstash_new_inode(sb, BPFSTASH_INDEX_INO,
					   bpfstash_entry_mode(sb, S_IFREG));
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_op = &bpfstash_stats_iops;
		inode->i_fop = &bpfstash_index_fops;
		return d_splice_alias(inode, dentry);
	}

	if (bpfstash_parse_name(&dentry->d_name, hash))
		return d_splice_alias(NULL, dentry);
	if (!bpfstash_lookup_ok(sb))
		return ERR_PTR(-EPERM);
	e = bpfstash_entry_lookup(hash);
	if (!e)
		return d_splice_alias(NULL, dentry);

	inode = bpfstash_new_inode(sb, BPFSTASH_ENTRY_INO(bpfstash_entry_index(e)),
				   bpfstash_entry_mode(sb, S_IFDIR));
	if (!inode) {
		bpfstash_entry_put(e);
		return ERR_PTR(-ENOMEM);
	}
	inode->i_private = e;		/* the lookup's reference */
	inode->i_op = &bpfstash_entry_dir_iops;
	inode->i_fop = &bpfstash_entry_dir_fops;
	set_nlink(inode, 2);
	bpfstash_entry_times(inode, e);
	return d_splice_alias(inode, dentry);
}

static int bpfstash_root_iterate(struct file *file, struct dir_context *ctx)
{
	char name[BPFSTASH_HASH_SIZE * 2 + 1];
	struct bpfstash_entry *e;
	unsigned long index;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		if (!dir_emit(ctx, "stats", 5, BPFSTASH_STATS_INO, DT_REG))
			return 0;
		ctx->pos++;
	}
	if (ctx->pos == 3) {
		if (!dir_emit(ctx, "control", 7, BPFSTASH_CONTROL_INO, DT_REG))
			return 0;
		ctx->pos++;
	}
	if (ctx->pos == 4) {
		if (!dir_emit(ctx, "index", 5, BPFSTASH_INDEX_INO, DT_REG))
			return 0;
		ctx->pos++;
	}
	/* Positions from 5 on are listing indexes, which deletion leaves stable. */
	index = ctx->pos - 5;
	while ((e = bpfstash_entry_next(&index))) {
		u64 ino = BPFSTASH_ENTRY_INO(bpfstash_entry_index(e));

		bin2hex(name, bpfstash_entry_hash(e), BPFSTASH_HASH_SIZE);
		bpfstash_entry_put(e);
		ctx->pos = index + 5;
		if (!dir_emit(ctx, name, BPFSTASH_HASH_SIZE * 2, ino, DT_DIR))
			return 0;
		ctx->pos++;
		index++;
		cond_resched();
	}
	return 0;
}

static int bpfstash_root_permission(struct mnt_idmap *idmap, struct inode *inode,
				    int mask)
{
	int err = generic_permission(idmap, inode, mask);

	if (err)
		return err;
	/*
	 * Listing reveals names: gate it like reading an entry.  Not the
	 * path walk (MAY_EXEC), which reaches control and stats, and entry
	 * names through bpfstash_root_lookup()'s own gate.
	 */
	if ((mask & MAY_READ) && !bpfstash_reader_ok(current_cred(), inode->i_sb))
		return -EPERM;
	return 0;
}

static int bpfstash_root_rmdir(struct inode *dir, struct dentry *dentry)
{
	u8 hash[BPFSTASH_HASH_SIZE];
	int err;

	if (bpfstash_parse_name(&dentry->d_name, hash))
		return -ENOTDIR;
	/* The dentry may be cached, its lookup's gate passed by someone else. */
	if (!bpfstash_lookup_ok(dir->i_sb))
		return -EPERM;
	err = bpfstash_entry_delete(hash);
	if (err)
		return err;
	/* Open files keep the entry (and their inode) until closed. */
	clear_nlink(d_inode(dentry));
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
	return 0;
}

static const struct inode_operations bpfstash_root_iops = {
	.lookup		= bpfstash_root_lookup,
	.rmdir		= bpfstash_root_rmdir,
	.permission	= bpfstash_root_permission,
	.setattr	= bpfstash_setattr,
};

static const struct file_operations bpfstash_root_fops = {
	.open		= bpfstash_dir_open,
	.read		= generic_read_dir,
	.iterate_shared	= bpfstash_root_iterate,
	.llseek		= generic_file_llseek,
};

/*
 * Entries appear and, when the store stops, go without the VFS knowing: a
 * cached negative dentry may be stale by the next lookup, so never trust
 * one, nor the directory of an entry that is no longer stored.
 */
static int bpfstash_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct inode *inode = d_inode_rcu(dentry);

	if (!inode)
		return 0;
	if (S_ISDIR(inode->i_mode) && inode->i_private &&
	    !bpfstash_entry_stored(bpfstash_inode_entry(inode)))
		return 0;
	return 1;
}

static const struct dentry_operations bpfstash_dentry_ops = {
	.d_revalidate	= bpfstash_d_revalidate,
};

static int bpfstash_fill_super(struct super_block *sb, struct fs_context *fc)
{
	/* sget_fc() handed the options over to the superblock. */
	struct bpfstash_fs_info *fsi = sb->s_fs_info;
	struct inode *root;

	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = BPFSTASH_MAGIC;
	sb->s_op = &bpfstash_super_ops;
	sb->s_d_op = &bpfstash_dentry_ops;
	sb->s_time_gran = 1;

	root = bpfstash_new_inode(sb, BPFSTASH_ROOT_INO, S_IFDIR | fsi->mode);
	if (!root)
		return -ENOMEM;
	root->i_op = &bpfstash_root_iops;
	root->i_fop = &bpfstash_root_fops;
	set_nlink(root, 2);
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	return 0;
}

static int bpfstash_get_tree(struct fs_context *fc)
{
	struct bpfstash_fs_info *given = fc->s_fs_info;
	int err;

	err = security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
	if (err)
		return err;
	/*
	 * A stopped store starts here, with the limits given, before there
	 * is a superblock: the start's walk and hashing of the programs
	 * already loaded do not run under s_umount.  A running store keeps
	 * its limits.
	 */
	err = bpfstash_store_start(given->max_bytes, given->max_entries);
	if (err == -EBUSY) {
		bpfstash_limits_kept(fc, given);
	} else if (err) {
		errorfc(fc, "cannot start the store: %pe", ERR_PTR(err));
		return err;
	}
	err = get_tree_single(fc, bpfstash_fill_super);
	if (err)
		return err;
	/*
	 * A second mount of the one instance keeps the options in @fc
	 * (sget_fc() moves them to a new superblock only): apply its view's.
	 */
	if (fc->s_fs_info)
		bpfstash_view_update(fc);
	return 0;
}

static void bpfstash_free_fc(struct fs_context *fc)
{
	kfree(fc->s_fs_info);
}

static const struct fs_context_operations bpfstash_context_ops = {
	.free		= bpfstash_free_fc,
	.parse_param	= bpfstash_parse_param,
	.get_tree	= bpfstash_get_tree,
	.reconfigure	= bpfstash_reconfigure,
};

static int bpfstash_init_fs_context(struct fs_context *fc)
{
	struct bpfstash_fs_info *fsi;

	fsi = kzalloc(sizeof(*fsi), GFP_KERNEL);
	if (!fsi)
		return -ENOMEM;
	fsi->uid = GLOBAL_ROOT_UID;
	fsi->gid = GLOBAL_ROOT_GID;
	fsi->mode = BPFSTASH_DEFAULT_MODE;
	fc->s_fs_info = fsi;
	fc->ops = &bpfstash_context_ops;
	return 0;
}

/* The store goes on without its view: evicting the inodes drops only their references. */
static void bpfstash_kill_sb(struct super_block *sb)
{
	struct bpfstash_fs_info *fsi = sb->s_fs_info;

	kill_anon_super(sb);
	kfree(fsi);
}

/* No FS_USERNS_MOUNT: the store shows every namespace's programs. */
static struct file_system_type bpfstash_fs_type = {
	.owner		= THIS_MODULE,
	.name		= "bpfstash",
	.init_fs_context = bpfstash_init_fs_context,
	.parameters	= bpfstash_param_specs,
	.kill_sb	= bpfstash_kill_sb,
};

static int __init bpfstash_fs_init(void)
{
	int err;

	err = sysfs_create_mount_point(fs_kobj, "bpfstash");
	if (err)
		return err;
	err = register_filesystem(&bpfstash_fs_type);
	if (err)
		sysfs_remove_mount_point(fs_kobj, "bpfstash");
	return err;
}
fs_initcall(bpfstash_fs_init);
