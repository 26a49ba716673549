/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bpfstash: the on-disk ABI of the bpfstash filesystem.
 *
 * While the bpfstash store runs, the kernel stores what a profiler needs
 * of every eBPF program that is JITed and gets a kallsyms entry, at the
 * moment it is loaded, and names it by a content hash.  Mounted (mount -t
 * bpfstash none /sys/fs/bpfstash), each entry is a directory
 * /sys/fs/bpfstash/<hash>/ where <hash> is BPFSTASH_HASH_SIZE bytes in
 * lowercase hex.  It holds:
 *
 *   meta             struct bpfstash_meta
 *   funcs            struct bpfstash_func[meta.content.nr_funcs], then the
 *                    functions' NUL-terminated kallsyms names
 *   jited            the JITed images of all functions, back to back, in
 *                    function order: bpf_prog_info::jited_prog_insns, with
 *                    the poke sites as the JIT emitted them (below)
 *   line_info        struct bpf_line_info[nr_line_info]: bpf_prog_info::line_info
 *   jited_line_info  struct bpfstash_jited_line[nr_jited_line_info]: where
 *                    each line_info record landed in the JITed code
 *   func_info        struct bpf_func_info[nr_func_info]: bpf_prog_info::func_info
 *   btf              the program's raw BTF (bpftool btf dump file btf)
 *   calls            struct bpfstash_call[]: the programs an image calls
 *                    (only in an image's entry, see below)
 *   pokes            struct bpfstash_poke[nr_pokes]: the bytes of jited
 *                    that other paths rewrite while the program lives
 *   info, lines, functions   the same, as text for people
 *
 * The root holds "stats" and "control" (text), and "index": every entry's
 * ranges, ids, names and times in one read (struct bpfstash_index_header,
 * below).
 *
 * Byte order and growth
 * ---------------------
 * Every multi-byte field of the structs below, and of the struct
 * bpf_line_info and struct bpf_func_info records, is little-endian,
 * whatever the byte order of the machine that made the entry, so that an
 * entry reads and verifies the same anywhere.  jited holds the code as it
 * was in memory, and btf is BTF as the kernel had it (its magic says its
 * byte order).  Every struct is a multiple of 8 bytes and has no holes.
 *
 * meta starts with its own size and the format version, whose place never
 * changes (formats before 3 had the version first: a meta_size of 1 or 2
 * is such a version).  A reader reads meta_size bytes (at least what it
 * knows), takes the fields it knows and ignores the rest, which a later
 * kernel may add to the state without a new version.  A change to what is hashed (the
 * content, a file's layout, the serialisation) is a new BPFSTASH_VERSION,
 * and a reader that meets a version it does not know says so ("format N,
 * this reader knows M"), distinctly from a corrupt entry.
 *
 * Images
 * ------
 * BPF text that is not a program gets an entry too: a BPF trampoline
 * (the code that calls fentry, fexit, fmod_ret and LSM programs around a
 * kernel function), a struct_ops trampoline (one per member of a
 * registered struct_ops map), and the XDP dispatcher (one entry per
 * version of it).  Such an entry has content.image_kind one of
 * BPFSTASH_IMAGE_*, content.prog_type and expected_attach_type 0,
 * content.name the kind ("trampoline", "struct_ops", "dispatcher"), one
 * function named by its kallsyms name, its bytes in jited, and no line
 * info, func info or BTF.  The attach fields name what a trampoline is
 * attached to.  Its calls file lists the programs the image calls, in the
 * order it calls them, as they were when the image was made.
 * meta.prog_id, uid and btf_id are 0.
 *
 * Who made it
 * -----------
 * meta names the boot the entry was made in and the task that loaded the
 * program (or attached the image): its process, comm and cgroup, as they
 * were at the load.  They are 0 and "" for the programs stored when the
 * store started, which were loaded before it.  Only who may read the entry
 * can read them.
 */
#ifndef _UAPI_LINUX_BPFSTASH_H
#define _UAPI_LINUX_BPFSTASH_H

#include <linux/types.h>

#define BPFSTASH_HASH_SIZE	20	/* bytes, as a build-id */
#define BPFSTASH_DIGEST_SIZE	32	/* SHA-256, per file */
#define BPFSTASH_NAME_LEN	16	/* BPF_OBJ_NAME_LEN */
#define BPFSTASH_TAG_SIZE	8	/* BPF_TAG_SIZE */
#define BPFSTASH_ATTACH_NAME_LEN 128
#define BPFSTASH_COMM_LEN	16	/* TASK_COMM_LEN */
#define BPFSTASH_LINK_TARGET_LEN 128
#define BPFSTASH_BOOT_ID_SIZE	16	/* a UUID */

/* BEGIN the hashed serialisation: tests/abi pins its text to the version. */
#define BPFSTASH_VERSION	3
#define BPFSTASH_HASH_DOMAIN	"bpfstash"	/* followed by a NUL */

/*
 * The content hash
 * ----------------
 * hash = the first 20 bytes of SHA-256 (FIPS 180-4) over:
 *
 *   BPFSTASH_HASH_DOMAIN and a NUL byte     (9 bytes)
 *   meta.content                           (struct bpfstash_content)
 *   the funcs file                         (content.funcs_size bytes)
 *   D(jited) D(line_info) D(jited_line_info) D(func_info) D(btf) D(calls)
 *   D(pokes)
 *
 * where D(x) is the 32-byte SHA-256 digest of file x, of zero bytes when
 * x is empty or absent.  Hashing the files separately lets the kernel hash
 * a BTF object once for all the programs that share it, and store
 * identical files once.  Program id, times, uid, the loader and the boot
 * are not covered: they are not content.  The hash covers the functions'
 * load addresses and JITed bytes, so it identifies one load of a program,
 * never two.
 *
 * The part of the metadata that is content, and covered by the hash.
 * Sizes and counts here bound every other file of the entry.
 */
struct bpfstash_content {
	__le32	version;		/* BPFSTASH_VERSION: first, always */
	__le16	machine;		/* ELF e_machine of the code: EM_X86_64, ... */
	__le16	__reserved_1;		/* 0 */
	__le32	prog_type;		/* enum bpf_prog_type; 0 for an image */
	__le32	expected_attach_type;	/* enum bpf_attach_type; 0 for an image */
	__le32	image_kind;		/* 0 for a program, else enum bpfstash_image_kind */
	__le32	nr_funcs;		/* records in funcs, >= 1 */
	__le32	funcs_size;		/* bytes in funcs, records and names */
	__le32	jited_len;		/* bytes in jited */
	__le32	nr_line_info;		/* records in line_info */
	__le32	line_info_rec_size;	/* sizeof(struct bpf_line_info) */
	__le32	nr_func_info;		/* records in func_info */
	__le32	func_info_rec_size;	/* sizeof(struct bpf_func_info) */
	__le32	btf_size;		/* bytes in btf, 0 without BTF */
	__le32	xlated_len;		/* bpf_prog_info::xlated_prog_len */
	__le32	verified_insns;		/* bpf_prog_info::verified_insns */
	__le32	attach_btf_id;		/* bpf_prog_info::attach_btf_id */
	__le32	gpl_compatible;		/* 0 or 1 */
	__le32	nr_jited_line_info;	/* nr_line_info, or 0 if not JITed with it */
	__le32	nr_pokes;		/* records in pokes */
	__le32	__reserved_2;		/* 0 */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::tag */
	char	name[BPFSTASH_NAME_LEN];	/* bpf_prog_info::name */
};

/*
 * One record of the "funcs" file per JITed function, in jited_ksyms order.
 * @entry_poke_off and @entry_poke_len give the patch site at the start of
 * the function, where a trampoline attaching to it puts its call (len 0:
 * none): jited holds it as the JIT emitted it (see pokes below).
 */
struct bpfstash_func {
	__le64	addr;			/* bpf_prog_info::jited_ksyms[i] */
	__le32	len;			/* bpf_prog_info::jited_func_lens[i] */
	__le32	offset;			/* of this function's image in jited */
	__le32	name_off;		/* of its name, from the end of the records */
	__le16	entry_poke_off;		/* of the patch site, in the function */
	__le16	entry_poke_len;		/* its bytes; 0: none */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::prog_tags[i] */
};

/*
 * One record of "jited_line_info" per line_info record: line_info[i] starts
 * at funcs[func].addr + off, which is bpf_prog_info::jited_line_info[i].
 */
struct bpfstash_jited_line {
	__le32	func;
	__le32	off;
};

/*
 * One record of "calls" per program an image calls.  @hash names the
 * program's own entry, if it has one (all zeros if the stash refused it).
 */
struct bpfstash_call {
	__u8	hash[BPFSTASH_HASH_SIZE];	/* the program's entry, or zeros */
	__le32	kind;			/* enum bpfstash_call_kind */
	__le64	addr;			/* the program's address */
	__le32	prog_id;		/* bpf_prog_info::id */
	__le32	__reserved;		/* 0 */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* bpf_prog_info::tag */
	char	name[BPFSTASH_NAME_LEN];	/* bpf_prog_info::name */
};

/*
 * Code that other paths rewrite while the program lives
 * (bpf_arch_text_poke()): the patch site at the start of each function
 * (in its funcs record), where a trampoline attaches to it, and a direct
 * tail call's two sites, re-poked on every update of its prog array, one
 * record of "pokes" each.  jited holds these bytes as the JIT emitted them
 * before anything was poked (no trampoline attached, the tail call's slot
 * empty: a jump past the call, and a nop where the jump to the target
 * goes), so that the entry never holds a half-written jump and one load's
 * content does not depend on its prog arrays.  Records are by function,
 * and in the order of the tail calls in it.
 */
struct bpfstash_poke {
	__le32	func;			/* the function, in funcs */
	__le32	off;			/* of the range, in the function */
	__le32	len;			/* bytes */
	__le32	kind;			/* enum bpfstash_poke_kind */
};

/* END the hashed serialisation */

/* content.image_kind: BPF text that is not a program */
enum bpfstash_image_kind {
	BPFSTASH_IMAGE_TRAMPOLINE = 1,	/* bpf_trampoline_<key> */
	BPFSTASH_IMAGE_STRUCT_OPS = 2,	/* bpf__<struct>_<member> */
	BPFSTASH_IMAGE_DISPATCHER = 3,	/* bpf_dispatcher_<name> */
};

/* bpfstash_call::kind: how the image calls the program */
enum bpfstash_call_kind {
	BPFSTASH_CALL_FENTRY = 1,	/* before the traced function */
	BPFSTASH_CALL_FEXIT = 2,	/* after it */
	BPFSTASH_CALL_MODIFY_RETURN = 3, /* instead of it, or before it */
	BPFSTASH_CALL_STRUCT_OPS = 4,	/* as the struct_ops member */
	BPFSTASH_CALL_DISPATCH = 5,	/* dispatched to, by its address */
};

/* bpfstash_poke::kind */
enum bpfstash_poke_kind {
	BPFSTASH_POKE_TAIL_CALL = 1,	/* a direct tail call's jump to its target */
	BPFSTASH_POKE_TAIL_CALL_BYPASS = 2, /* its jump past it, while the slot is empty */
};

/* meta.flags */
#define BPFSTASH_META_LOADED	(1U << 0)	/* the program is still loaded */

/*
 * The "meta" file: its size, then the content above, then the state of
 * the entry, which is not covered by the hash.  The state changes when
 * the program is unloaded, and when a program of the same content is
 * loaded again (at the same address after the first one was unloaded):
 * the ids, times and loader are then those of the latest load.
 */
struct bpfstash_meta {
	__le32	meta_size;		/* bytes in this file: sizeof() when written */
	__le32	flags;			/* BPFSTASH_META_* */
	struct bpfstash_content content;	/* hashed; content.version at 8 */
	__u8	hash[BPFSTASH_HASH_SIZE];	/* this entry's name */
	__le32	prog_id;		/* bpf_prog_info::id, while it was loaded */
	__le32	uid;			/* loader's uid, in the initial user namespace */
	__le32	btf_id;			/* bpf_prog_info::btf_id, at load time */
	__le32	attach_btf_obj_id;	/* bpf_prog_info::attach_btf_obj_id */
	__le32	loader_tgid;		/* loader's process (initial pid namespace) */
	__le64	load_time;		/* bpf_prog_info::load_time: ns since boot */
	__le64	load_time_real;		/* load time, ns since the epoch */
	__le64	unload_time;		/* ns since boot; 0 while loaded */
	__le64	unload_time_real;	/* ns since the epoch; 0 while loaded */
	__le64	bytes;			/* this entry's share of the store's memory */
	__le64	loader_cgroup_id;	/* loader's cgroup v2 id; 0 if none */
	__u8	boot_id[BPFSTASH_BOOT_ID_SIZE];	/* /proc/sys/kernel/random/boot_id */
	char	loader_comm[BPFSTASH_COMM_LEN];	/* loader's comm; "" if unknown */
	char	attach_func_name[BPFSTASH_ATTACH_NAME_LEN]; /* "" if none */
	/*
	 * The last BPF link made for the program while it was loaded: its
	 * enum bpf_link_type (0 if none), its id, and what it attached to, as
	 * "kprobe:<function>[+<offset>]", "kretprobe:...", "uprobe:<path>+<offset>",
	 * "tracepoint:<name>", "raw_tracepoint:<name>", "tracing:<function>",
	 * "cgroup:<cgroup v2 id>", or the link type's name alone
	 * (bpf_link_type_strs[], as /proc/<pid>/fdinfo shows it) for others.
	 * Set when the link is made, after the load: "" until then.
	 */
	__le32	link_type;
	__le32	link_id;
	char	link_target[BPFSTASH_LINK_TARGET_LEN];
};

/*
 * The "index" file
 * ----------------
 * One read gives what a symbolizer needs of every entry: its name, state
 * and times, and the address range and kallsyms name of each of its
 * functions, so that a profiler builds its map of the stash without
 * opening every entry's meta and funcs.  The file is made when it is
 * opened, and reads the same until it is closed: read it whole, from one
 * open.  Its layout, little-endian like every file of the stash:
 *
 *   struct bpfstash_index_header        header_size bytes
 *   struct bpfstash_index_entry[nr_entries]   entry_size bytes each
 *   struct bpfstash_index_range[nr_ranges]    range_size bytes each
 *   names                               names_size bytes: NUL-terminated
 *
 * Entries are in the order the root lists them; ranges are by entry, an
 * entry's first_range to first_range + nr_ranges - 1, one per function in
 * the order of its funcs file, and are not sorted by address.  A reader
 * takes the sizes from the header and the fields it knows of each record,
 * and ignores the rest, which a later kernel may add at the end of a
 * record or of the header without a new version; a new version is a
 * change of what the fields it has mean.  A version it does not know, or a
 * magic that is not BPFSTASH_INDEX_MAGIC, it refuses.
 *
 * @generation changes whenever what the file shows does (an entry stored or
 * deleted, a program unloaded or loaded again, the store stopped), and
 * never goes back within a boot: a reader that finds the generation of its
 * last read has nothing new to read.  The flag BPFSTASH_INDEX_CHANGING says
 * the store kept changing while the file was made: each entry's record is
 * as it was at one moment, not all at the same, and the generation is the
 * oldest of them; read again for a settled view.
 */
#define BPFSTASH_INDEX_MAGIC	0x78697362	/* "bsix" in a little-endian file */
#define BPFSTASH_INDEX_VERSION	1

/* bpfstash_index_header::flags */
#define BPFSTASH_INDEX_CHANGING	(1U << 0)

struct bpfstash_index_header {
	__le32	magic;			/* BPFSTASH_INDEX_MAGIC */
	__le32	version;		/* BPFSTASH_INDEX_VERSION */
	__le32	header_size;		/* bytes of this header: entries follow */
	__le32	flags;			/* BPFSTASH_INDEX_* */
	__le64	generation;		/* of the store, when the file was made */
	__le64	size;			/* bytes in the file */
	__le32	nr_entries;
	__le32	entry_size;		/* bytes of each entry record */
	__le32	nr_ranges;
	__le32	range_size;		/* bytes of each range record */
	__le32	names_size;		/* bytes of names, at the end */
	__le32	__reserved;		/* 0 */
	__u8	boot_id[BPFSTASH_BOOT_ID_SIZE];	/* the boot of every entry */
};

/* One record per entry: its meta's fields of the same names. */
struct bpfstash_index_entry {
	__u8	hash[BPFSTASH_HASH_SIZE];	/* the entry's name */
	__le32	flags;			/* BPFSTASH_META_* */
	__le32	prog_id;
	__le32	image_kind;		/* content.image_kind */
	__le32	first_range;		/* of its functions' range records */
	__le32	nr_ranges;		/* content.nr_funcs */
	__le64	load_time;
	__le64	load_time_real;
	__le64	unload_time;		/* 0 while loaded */
	__le64	unload_time_real;
	__le32	prog_type;		/* content.prog_type */
	__le32	uid;
	char	name[BPFSTASH_NAME_LEN];	/* content.name */
	__u8	tag[BPFSTASH_TAG_SIZE];	/* content.tag */
};

/* One record per function: its funcs record's address, length and name. */
struct bpfstash_index_range {
	__le64	addr;
	__le32	len;
	__le32	entry;			/* its entry record */
	__le32	func;			/* the function, in the entry's funcs */
	__le32	name_off;		/* of its kallsyms name, in names */
};

#endif /* _UAPI_LINUX_BPFSTASH_H */
