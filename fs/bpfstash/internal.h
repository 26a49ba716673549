/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _BPFSTASH_INTERNAL_H
#define _BPFSTASH_INTERNAL_H

#include <linux/bpfstash.h>
#include <linux/fs.h>

/*
 * Inode numbers: 1 is the root, 2 the stats file, 3 the control file, and
 * each entry owns a block of BPFSTASH_INO_STRIDE numbers from its listing
 * index: the directory, then its files in bpfstash_files[] order.  Fixed
 * numbers make `ls -i` and find(1) stable across dentry reclaim.
 */
#define BPFSTASH_ROOT_INO	1
#define BPFSTASH_STATS_INO	2
#define BPFSTASH_CONTROL_INO	3
#define BPFSTASH_INDEX_INO	4
#define BPFSTASH_INO_STRIDE	16
#define BPFSTASH_ENTRY_INO(index) (((u64)(index) + 1) * BPFSTASH_INO_STRIDE)

/*
 * The files of an entry directory: binary files show one of the entry's
 * data (@data) as the store holds it, text files are rendered on read by
 * @fops.  @size gives i_size; NULL for text files, which have none.  An
 * @optional file is only there in entries where it is not empty (an
 * image's calls).
 */
struct bpfstash_file {
	const char *name;
	const struct file_operations *fops;
	loff_t (*size)(const struct bpfstash_entry *e, const struct bpfstash_file *f);
	enum bpfstash_data data;
	bool optional;
};

/* Whether @e's directory has the file @f. */
static inline bool bpfstash_has_file(const struct bpfstash_entry *e,
				     const struct bpfstash_file *f)
{
	return !f->optional || bpfstash_entry_size(e, f->data);
}

extern const struct bpfstash_file bpfstash_files[];
extern const unsigned int bpfstash_nr_files;
extern const struct file_operations bpfstash_stats_fops;
extern const struct file_operations bpfstash_control_fops;
extern const struct file_operations bpfstash_index_fops;

/* The entry an inode of an entry directory shows (the inode holds a ref). */
static inline struct bpfstash_entry *bpfstash_inode_entry(const struct inode *inode)
{
	return inode->i_private;
}

/* The file a dentry of an entry directory shows (set by its lookup). */
static inline const struct bpfstash_file *bpfstash_dentry_file(const struct dentry *dentry)
{
	return dentry->d_fsdata;
}

bool bpfstash_reader_ok(const struct cred *cred, const struct super_block *sb);
int bpfstash_open_gate(struct file *file);
loff_t bpfstash_file_size(const struct bpfstash_entry *e, const struct bpfstash_file *f);

#endif /* _BPFSTASH_INTERNAL_H */
