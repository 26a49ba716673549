/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bpfstash: the on-disk ABI of the bpfstash filesystem.
 *
 * While a bpfstash filesystem is mounted (mount -t bpfstash none
 * /sys/fs/bpfstash), the kernel stores what a profiler needs of every eBPF
 * program that is JITed and gets a kallsyms entry, at the moment it is
 * loaded, and names it by a content hash.  Each entry is a directory
 * /sys/fs/bpfstash/<hash>/ where <hash> is BPFSTASH_HASH_SIZE bytes in
 * lowercase hex.  It holds:
 *
 *   meta             struct bpfstash_meta
 *   funcs            struct bpfstash_func[meta.content.nr_funcs], then the
 *                    functions' NUL-terminated kallsyms names
 *   jited            the JITed images of all functions, back to back, in
 *                    function order: bpf_prog_info::jited_prog_insns
 *   line_info        struct bpf_line_info[nr_line_info]: bpf_prog_info::line_info
 *   jited_line_info  struct bpfstash_jited_line[nr_jited_line_info]: where
 *                    each line_info record landed in the JITed code
 *   func_info        struct bpf_func_info[nr_func_info]: bpf_prog_info::func_info
 *   btf              the program's raw BTF (bpftool btf dump file btf)
 *   calls            struct bpfstash_call[]: the programs an image calls
 *                    (only in an image's entry, see below)
 *   info, lines, functions   the same, as text for people
 *
 * The root holds "stats" (text).  Multi-byte fields are in the kernel's
 * byte order; every struct is a multiple of 8 bytes and has no holes.
 *
 * The content hash
 * ----------------
 * hash = the first 20 bytes of SHA-256 (FIPS 180-4) over this canonical
 * serialisation:
 *
 *   "bpfstash-v2" and a NUL byte           (12 bytes)
 *   meta.content                           (struct bpfstash_content)
 *   the funcs file                         (content.funcs_size bytes)
 *   D(jited) D(line_info) D(jited_line_info) D(func_info) D(btf)
 *
 * then, only for an entry that has a calls file, D(calls); where D(x) is
 * the 32-byte SHA-256 digest of file x (of zero bytes when x is empty).
 * Hashing the blobs separately lets the kernel hash a
 * BTF object once for all the programs that share it, and store identical
 * blobs once.  Program id, times, uid and state are not covered: they are
 * not content.  The hash covers the functions' load addresses and JITed
 * bytes, so it identifies one load of a program, never two.
 *
 * Images
 * ------
 * BPF text that is not a program gets an entry too: a BPF trampoline
 * (the code that calls fentry, fexit, fmod_ret and LSM programs around a
 * kernel function), a struct_ops trampoline (one per member of a
 * registered struct_ops map), and the XDP dispatcher (one entry per
 * version of it).  Such an entry has content.prog_type 0
 * (BPF_PROG_TYPE_UNSPEC, which no program has), content.expected_attach_type
 * one of BPFSTASH_IMAGE_*, content.name the kind ("trampoline",
 * "struct_ops", "dispatcher"), one function named by its kallsyms name,
 * its bytes in jited, and no line info, func info or BTF.  The attach
 * fields name what a trampoline is attached to.  Its calls file lists the
 * programs the image calls, in the order it calls them, as they were
 * when the image was made.  meta.prog_id, uid and btf_id are 0.
 *
 * Reading anything of an entry, and listing the root, requires what
 * bpf_prog_get_info_by_fd() requires to see JITed images and addresses:
 * bpf_dump_raw_ok() for the opener's credentials (kptr_restrict and
 * CAP_SYSLOG), and no LOCKDOWN_BPF_READ_KERNEL lockdown.
 */
#ifndef _UAPI_LINUX_BPFSTASH_H
#define _UAPI_LINUX_BPFSTASH_H

#include <linux/types.h>

#define BPFSTASH_VERSION	2	/* 1 named entries by BLAKE2s */
#define BPFSTASH_HASH_SIZE	20	/* bytes, as a build-id */
#define BPFSTASH_DIGEST_SIZE	32	/* SHA-256, per blob */
#define BPFSTASH_HASH_DOMAIN	"bpfstash-v2"	/* followed by a NUL */
#define BPFSTASH_MAX_FUNCS	256	/* BPF_MAX_SUBPROGS */
#define BPFSTASH_NAME_LEN	16	/* BPF_OBJ_NAME_LEN */
#define BPFSTASH_TAG_SIZE	8	/* BPF_TAG_SIZE */
#define BPFSTASH_ATTACH_NAME_LEN 128

/*
 * The part of the metadata that is content, and covered by the hash.
 * Sizes and counts here bound every other file of the entry.
 */
struct bpfstash_content {
	__u32	version;		/* BPFSTASH_VERSION */
	__u32	prog_type;		/* enum bpf_prog_type */
	__u32	expected_attach_type;	/* enum bpf_attach_type */
	__u32	nr_funcs;		/* records in funcs, >= 1 */
	__u32	funcs_size;		/* bytes in funcs, records and names */
	__u32	jited_len;		/* bytes in jited */
	__u32	nr_line_info;		/* records in line_info and jited_line_info */
	__u32	line_info_rec_size;	/* sizeof(struct bpf_line_info) */
	__u32	nr_func_info;		/* records in func_info */
	__u32	func_info_rec_size;	/* sizeof(struct bpf_func_info) */
	__u32	btf_size;		/* bytes in btf, 0 without BTF */
	__u32	xlated_len;		/* bpf_prog_info::xlated_prog_len */
	__u32	verified_insns;		/* bpf_prog_info::verified_insns */
	__u32	attach_btf_id;		/* bpf_prog_info::attach_btf_id */
	__u32	gpl_compatible;		/* 0 or 1 */
	__u32	nr_jited_line_info;	/* nr_line_info, or 0 if not JITed with it */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::tag */
	char	name[BPFSTASH_NAME_LEN];	/* bpf_prog_info::name */
};

/* content.expected_attach_type of an image (content.prog_type 0) */
enum bpfstash_image_kind {
	BPFSTASH_IMAGE_TRAMPOLINE = 1,	/* bpf_trampoline_<key> */
	BPFSTASH_IMAGE_STRUCT_OPS = 2,	/* bpf__<struct>_<member> */
	BPFSTASH_IMAGE_DISPATCHER = 3,	/* bpf_dispatcher_<name> */
};

/* meta.flags */
#define BPFSTASH_META_LOADED	(1U << 0)	/* the program is still loaded */

/*
 * The "meta" file: the content above, then the state of the entry, which
 * changes when the program is unloaded and is not covered by the hash.
 */
struct bpfstash_meta {
	struct bpfstash_content content;
	__u8	hash[BPFSTASH_HASH_SIZE];	/* this entry's name */
	__u32	flags;			/* BPFSTASH_META_* */
	__u32	prog_id;		/* bpf_prog_info::id, while it was loaded */
	__u32	uid;			/* loader's uid, in the initial user namespace */
	__u32	btf_id;			/* bpf_prog_info::btf_id, at load time */
	__u32	attach_btf_obj_id;	/* bpf_prog_info::attach_btf_obj_id */
	__u64	load_time;		/* bpf_prog_info::load_time: ns since boot */
	__u64	load_time_real;		/* load time, ns since the epoch */
	__u64	unload_time;		/* ns since boot; 0 while loaded */
	__u64	unload_time_real;	/* ns since the epoch; 0 while loaded */
	__u64	bytes;			/* memory the entry holds, shared blobs included */
	char	attach_func_name[BPFSTASH_ATTACH_NAME_LEN]; /* "" if none */
};

/* One record of the "funcs" file per JITed function, in jited_ksyms order. */
struct bpfstash_func {
	__u64	addr;			/* bpf_prog_info::jited_ksyms[i] */
	__u32	len;			/* bpf_prog_info::jited_func_lens[i] */
	__u32	offset;			/* of this function's image in jited */
	__u32	name_off;		/* of its name, from the end of the records */
	__u32	__reserved;		/* 0 */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::prog_tags[i] */
};

/* bpfstash_call::kind: how the image calls the program */
enum bpfstash_call_kind {
	BPFSTASH_CALL_FENTRY = 1,	/* before the traced function */
	BPFSTASH_CALL_FEXIT = 2,	/* after it */
	BPFSTASH_CALL_MODIFY_RETURN = 3, /* instead of it, or before it */
	BPFSTASH_CALL_STRUCT_OPS = 4,	/* as the struct_ops member */
	BPFSTASH_CALL_DISPATCH = 5,	/* dispatched to, by its address */
};

/*
 * One record of "calls" per program an image calls.  @hash names the
 * program's own entry, if it has one (all zeros if the stash refused it).
 */
struct bpfstash_call {
	__u8	hash[BPFSTASH_HASH_SIZE];	/* the program's entry, or zeros */
	__u32	kind;			/* enum bpfstash_call_kind */
	__u64	addr;			/* the program's address */
	__u32	prog_id;		/* bpf_prog_info::id */
	__u32	__reserved;		/* 0 */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::tag */
	char	name[BPFSTASH_NAME_LEN];	/* bpf_prog_info::name */
};

/*
 * One record of "jited_line_info" per line_info record: line_info[i] starts
 * at funcs[func].addr + off, which is bpf_prog_info::jited_line_info[i].
 */
struct bpfstash_jited_line {
	__u32	func;
	__u32	off;
};

#endif /* _UAPI_LINUX_BPFSTASH_H */
