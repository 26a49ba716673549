// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpfstash: an entry as an ELF file that tools nobody here wrote accept.
 *
 * The file is an ET_EXEC for the host's machine, as if a linker had placed
 * each JITed function at its load address:
 *
 *   - one SHT_PROGBITS ".text" section and one PT_LOAD per function, at
 *     sh_addr = p_vaddr = the function's address, holding its JITed bytes
 *     and nothing else (functions of one program are not contiguous);
 *   - .symtab: one global STT_FUNC per function, named as in kallsyms;
 *   - .note.gnu.build-id (and a PT_NOTE): NT_GNU_BUILD_ID, the hash.  It
 *     is not loaded: giving it an address could collide with code;
 *   - DWARF 4: .debug_line built from line_info and jited_line_info, one
 *     sequence per function, and a compile unit in .debug_info whose
 *     DW_AT_ranges (.debug_ranges, .debug_aranges) list the functions, with
 *     a DW_TAG_subprogram each.  Strings are inline (DW_FORM_string).
 *
 * That is what objdump -dl, addr2line, readelf, libdw (perf) and
 * debuginfod need, and the build-id tree layout is theirs too.
 *
 * One function alone (bpfstash_entry_export_func_elf()) is the same file
 * with only that function: its .text, PT_LOAD, symbol, subprogram, range
 * and line sequence, the files its lines name, and its own build-id
 * (bpfstash_entry_func_build_id()) in the note.
 *
 * The entry has been checked at load (every jited_line_info record points
 * inside its function, the functions' offsets tile the jited file), but
 * this file still bounds every buffer it builds, and refuses functions that
 * overlap, which no linker output has.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>

#include "libbpfstash.h"
#include "internal.h"

/*
 * The ELF machine is the entry's (content.machine): an entry made on one
 * architecture exports the same on any other.  The ELF's data encoding is
 * the host's, in which this file writes its tables, so an entry of a
 * machine of the other byte order is refused.
 */
static bool machine_known(uint32_t machine)
{
	switch (machine) {
	case EM_X86_64:
	case EM_AARCH64:
	case EM_RISCV:
	case EM_LOONGARCH:
		return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	case EM_S390:
		return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	case EM_PPC64:
		return true;
	default:
		return false;
	}
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EXPORT_DATA ELFDATA2LSB
#else
#define EXPORT_DATA ELFDATA2MSB
#endif

/* No section built here may grow past this: far above any valid entry. */
#define EXPORT_MAX_SECTION	(1ull << 31)
/* Code alignment kept between file offset and address (p_align). */
#define EXPORT_TEXT_ALIGN	16
#define STR_(x)			#x
#define STR(x)			STR_(x)
#define EXPORT_PRODUCER		"libbpfstash " STR(LIBBPFSTASH_MAJOR_VERSION) "." \
				STR(LIBBPFSTASH_MINOR_VERSION)

/* A growable byte buffer; the first failure sticks and is reported once. */
struct obuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;
};

static void ob_put(struct obuf *b, const void *data, size_t n)
{
	size_t cap;
	uint8_t *tmp;

	if (b->err)
		return;
	if (n > EXPORT_MAX_SECTION - b->len) {
		b->err = -E2BIG;
		return;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		tmp = realloc(b->p, cap);
		if (!tmp) {
			b->err = -ENOMEM;
			return;
		}
		b->p = tmp;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void ob_u8(struct obuf *b, uint8_t v)
{
	ob_put(b, &v, 1);
}

static void ob_u16(struct obuf *b, uint16_t v)
{
	ob_put(b, &v, 2);
}

static void ob_u32(struct obuf *b, uint32_t v)
{
	ob_put(b, &v, 4);
}

static void ob_u64(struct obuf *b, uint64_t v)
{
	ob_put(b, &v, 8);
}

static void ob_str(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s) + 1);
}

static void ob_uleb(struct obuf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		ob_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void ob_sleb(struct obuf *b, int64_t v)
{
	bool more;

	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;	/* arithmetic: gcc and clang define it */
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		ob_u8(b, byte | (more ? 0x80 : 0));
	} while (more);
}

/* Overwrite a 32-bit length field at @at once its extent is known. */
static void ob_patch_u32(struct obuf *b, size_t at, uint64_t v)
{
	uint32_t v32 = v;

	if (b->err)
		return;
	if (v > UINT32_MAX) {
		b->err = -E2BIG;
		return;
	}
	memcpy(b->p + at, &v32, 4);
}

/* Everything the writer needs, built before libelf sees any of it. */
struct export {
	const struct bpfstash_entry *e;
	int only;			/* the one function exported, or -1: all */
	const uint8_t *build_id;	/* BPFSTASH_HASH_SIZE bytes, for the note */
	uint32_t nr_funcs;		/* exported: 1 with @only */
	uint32_t *order;		/* function indices by address */
	uint32_t *files;		/* distinct BTF offsets of file names, sorted */
	uint32_t nr_files;
	struct obuf note, abbrev, info, aranges, ranges, line, symtab, strtab, shstrtab;
};

static const struct bpfstash_func *func(const struct export *x, uint32_t i)
{
	return bpfstash_entry_func(x->e, i);
}

static const char *btf_string(const struct bpfstash_entry *e, uint32_t off)
{
	const char *s = e->btf ? btf__name_by_offset(e->btf, off) : NULL;

	return s ? s : "";
}

/* qsort_r() is a GNU extension: the array goes through a thread-local. */
static __thread const struct bpfstash_func *sort_funcs;

static int cmp_func_addr(const void *a, const void *b)
{
	uint64_t x = sort_funcs[*(const uint32_t *)a].addr;
	uint64_t y = sort_funcs[*(const uint32_t *)b].addr;

	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Functions by address; overlapping functions are not a program, and an
 * entry that has some exports none of them.  With @only, that one alone.
 */
static int order_funcs(struct export *x)
{
	uint32_t i, n = bpfstash_entry_nr_funcs(x->e);

	x->order = malloc(n * sizeof(*x->order));
	if (!x->order)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		x->order[i] = i;
	sort_funcs = func(x, 0);
	qsort(x->order, n, sizeof(*x->order), cmp_func_addr);
	sort_funcs = NULL;
	for (i = 1; i < n; i++) {
		const struct bpfstash_func *p = func(x, x->order[i - 1]);

		if (p->addr + p->len > func(x, x->order[i])->addr)
			return bst_bad("funcs: functions %u and %u overlap", x->order[i - 1],
				       x->order[i]);
	}
	if (x->only >= 0) {
		x->order[0] = x->only;
		n = 1;
	}
	x->nr_funcs = n;
	return 0;
}

/* Whether line record @r belongs to a function exported. */
static bool line_exported(const struct export *x, uint32_t r)
{
	const struct bpfstash_jited_line *jl = x->e->blobs[BPFSTASH_JITED_LINE_INFO];

	return x->only < 0 || jl[r].func == (uint32_t)x->only;
}

/* The entry point and the compile unit's function: the main one, or @only. */
static uint32_t main_func(const struct export *x)
{
	return x->only < 0 ? 0 : x->only;
}

/* The distinct file name offsets of the exported line info, for the file table. */
static int collect_files(struct export *x)
{
	const struct bpfstash_content *c = &x->e->meta.content;
	const struct bpf_line_info *li = x->e->blobs[BPFSTASH_LINE_INFO];
	uint32_t i, m = 0, n = 0;

	if (!c->nr_jited_line_info)
		return 0;
	x->files = malloc(c->nr_jited_line_info * sizeof(*x->files));
	if (!x->files)
		return -ENOMEM;
	for (i = 0; i < c->nr_jited_line_info; i++)
		if (line_exported(x, i))
			x->files[m++] = li[i].file_name_off;
	qsort(x->files, m, sizeof(*x->files), cmp_u32);
	for (i = 0; i < m; i++)
		if (!n || x->files[n - 1] != x->files[i])
			x->files[n++] = x->files[i];
	x->nr_files = n;
	return 0;
}

/* DWARF file number (1-based) of a file name offset. */
static uint32_t file_index(const struct export *x, uint32_t off)
{
	const uint32_t *p = bsearch(&off, x->files, x->nr_files, sizeof(*x->files), cmp_u32);

	return p ? (uint32_t)(p - x->files) + 1 : 1;
}

/* A name the line table can hold: an empty string would end the list. */
static const char *file_name(const struct export *x, uint32_t off)
{
	const char *s = btf_string(x->e, off);

	return *s ? s : "<unknown>";
}

static void build_note(struct export *x)
{
	static const char owner[4] = "GNU";

	ob_u32(&x->note, sizeof(owner));
	ob_u32(&x->note, BPFSTASH_HASH_SIZE);
	ob_u32(&x->note, NT_GNU_BUILD_ID);
	ob_put(&x->note, owner, sizeof(owner));
	ob_put(&x->note, x->build_id, BPFSTASH_HASH_SIZE);
	/* BPFSTASH_HASH_SIZE is a multiple of 4: no padding. */
}

/*
 * .debug_line, DWARF 4: a header with the file table, then one sequence
 * per function exported, rows at each line record's address.  Records
 * that share an address keep the last one, as the kernel and
 * bpfstash_entry_resolve() do.
 */
static void build_line(struct export *x)
{
	static const uint8_t std_lengths[] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	const struct bpfstash_entry *e = x->e;
	const struct bpfstash_content *c = &e->meta.content;
	const struct bpfstash_jited_line *jl = e->blobs[BPFSTASH_JITED_LINE_INFO];
	const struct bpf_line_info *li = e->blobs[BPFSTASH_LINE_INFO];
	struct obuf *b = &x->line;
	size_t unit, hdr;
	uint32_t i, k = 0;

	unit = b->len;
	ob_u32(b, 0);			/* unit_length, patched */
	ob_u16(b, 4);			/* version */
	hdr = b->len;
	ob_u32(b, 0);			/* header_length, patched */
	ob_u8(b, 1);			/* minimum_instruction_length */
	ob_u8(b, 1);			/* maximum_operations_per_instruction */
	ob_u8(b, 1);			/* default_is_stmt */
	ob_u8(b, (uint8_t)-5);		/* line_base */
	ob_u8(b, 14);			/* line_range */
	ob_u8(b, sizeof(std_lengths) + 1);	/* opcode_base */
	ob_put(b, std_lengths, sizeof(std_lengths));
	ob_u8(b, 0);			/* include_directories: none */
	for (i = 0; i < x->nr_files; i++) {
		ob_str(b, file_name(x, x->files[i]));
		ob_uleb(b, 0);		/* directory: none (the names are whole) */
		ob_uleb(b, 0);		/* mtime */
		ob_uleb(b, 0);		/* length */
	}
	if (!x->nr_files) {
		/* A file table with no file confuses some readers. */
		ob_str(b, "<unknown>");
		ob_uleb(b, 0);
		ob_uleb(b, 0);
		ob_uleb(b, 0);
	}
	ob_u8(b, 0);
	ob_patch_u32(b, hdr, b->len - hdr - 4);

	/* line_order lists the records by (func, off). */
	while (k < c->nr_jited_line_info) {
		uint32_t fi = jl[e->line_order[k]].func;
		const struct bpfstash_func *f = func(x, fi);
		uint64_t cur_off = 0;
		uint32_t cur_file = 1, cur_col = 0;
		int64_t cur_line = 1;
		bool started = false;

		if (!line_exported(x, e->line_order[k])) {
			while (k < c->nr_jited_line_info && jl[e->line_order[k]].func == fi)
				k++;
			continue;
		}
		for (; k < c->nr_jited_line_info && jl[e->line_order[k]].func == fi; k++) {
			uint32_t r = e->line_order[k];
			uint32_t file, col;
			int64_t line;

			if (k + 1 < c->nr_jited_line_info &&
			    jl[e->line_order[k + 1]].func == fi &&
			    jl[e->line_order[k + 1]].off == jl[r].off)
				continue;
			file = file_index(x, li[r].file_name_off);
			line = BPF_LINE_INFO_LINE_NUM(li[r].line_col);
			col = BPF_LINE_INFO_LINE_COL(li[r].line_col);
			if (!started) {
				ob_u8(b, 0);	/* extended: DW_LNE_set_address */
				ob_uleb(b, 9);
				ob_u8(b, DW_LNE_set_address);
				ob_u64(b, f->addr + jl[r].off);
				cur_off = jl[r].off;
				started = true;
			} else if (jl[r].off > cur_off) {
				ob_u8(b, DW_LNS_advance_pc);
				ob_uleb(b, jl[r].off - cur_off);
				cur_off = jl[r].off;
			}
			if (file != cur_file) {
				ob_u8(b, DW_LNS_set_file);
				ob_uleb(b, file);
				cur_file = file;
			}
			if (line != cur_line) {
				ob_u8(b, DW_LNS_advance_line);
				ob_sleb(b, line - cur_line);
				cur_line = line;
			}
			if (col != cur_col) {
				ob_u8(b, DW_LNS_set_column);
				ob_uleb(b, col);
				cur_col = col;
			}
			ob_u8(b, DW_LNS_copy);
		}
		if (started) {
			/* The sequence ends one past the function's last byte. */
			ob_u8(b, DW_LNS_advance_pc);
			ob_uleb(b, f->len - cur_off);
			ob_u8(b, 0);
			ob_uleb(b, 1);
			ob_u8(b, DW_LNE_end_sequence);
		}
	}
	ob_patch_u32(b, unit, b->len - unit - 4);
}

enum { ABBREV_CU = 1, ABBREV_SUBPROGRAM };

static void build_abbrev(struct obuf *b)
{
	ob_uleb(b, ABBREV_CU);
	ob_uleb(b, DW_TAG_compile_unit);
	ob_u8(b, DW_CHILDREN_yes);
	ob_uleb(b, DW_AT_producer);	ob_uleb(b, DW_FORM_string);
	ob_uleb(b, DW_AT_name);		ob_uleb(b, DW_FORM_string);
	ob_uleb(b, DW_AT_stmt_list);	ob_uleb(b, DW_FORM_sec_offset);
	ob_uleb(b, DW_AT_low_pc);	ob_uleb(b, DW_FORM_addr);
	ob_uleb(b, DW_AT_ranges);	ob_uleb(b, DW_FORM_sec_offset);
	ob_uleb(b, 0);			ob_uleb(b, 0);

	ob_uleb(b, ABBREV_SUBPROGRAM);
	ob_uleb(b, DW_TAG_subprogram);
	ob_u8(b, DW_CHILDREN_no);
	ob_uleb(b, DW_AT_name);		ob_uleb(b, DW_FORM_string);
	ob_uleb(b, DW_AT_linkage_name);	ob_uleb(b, DW_FORM_string);
	ob_uleb(b, DW_AT_external);	ob_uleb(b, DW_FORM_flag_present);
	ob_uleb(b, DW_AT_low_pc);	ob_uleb(b, DW_FORM_addr);
	ob_uleb(b, DW_AT_high_pc);	ob_uleb(b, DW_FORM_data4);
	ob_uleb(b, 0);			ob_uleb(b, 0);

	ob_uleb(b, 0);
}

/*
 * The name of the compile unit: the first file of the main function (of
 * the one exported), if any.
 */
static const char *cu_name(const struct export *x)
{
	const struct bpfstash_entry *e = x->e;
	const struct bpfstash_jited_line *jl = e->blobs[BPFSTASH_JITED_LINE_INFO];
	const struct bpf_line_info *li = e->blobs[BPFSTASH_LINE_INFO];
	uint32_t k, fi = main_func(x);

	/* line_order lists the records by (func, off). */
	for (k = 0; k < e->meta.content.nr_jited_line_info; k++) {
		uint32_t r = e->line_order[k];

		if (jl[r].func == fi)
			return file_name(x, li[r].file_name_off);
		if (jl[r].func > fi)
			break;
	}
	return e->meta.content.name[0] ? e->meta.content.name : "bpf";
}

static void build_info(struct export *x)
{
	struct bpfstash_location loc;
	struct obuf *b = &x->info;
	size_t unit;
	uint32_t i;

	unit = b->len;
	ob_u32(b, 0);			/* unit_length, patched */
	ob_u16(b, 4);			/* version */
	ob_u32(b, 0);			/* debug_abbrev_offset */
	ob_u8(b, 8);			/* address_size */

	ob_uleb(b, ABBREV_CU);
	ob_str(b, EXPORT_PRODUCER);
	ob_str(b, cu_name(x));
	ob_u32(b, 0);			/* DW_AT_stmt_list */
	ob_u64(b, 0);			/* DW_AT_low_pc: base of the ranges */
	ob_u32(b, 0);			/* DW_AT_ranges */

	for (i = 0; i < x->nr_funcs; i++) {
		const struct bpfstash_func *f = func(x, x->order[i]);
		const char *ksym = bpfstash_entry_func_name(x->e, x->order[i]);
		const char *name = ksym;

		if (!bpfstash_entry_resolve(x->e, f->addr, &loc) && loc.btf_name && *loc.btf_name)
			name = loc.btf_name;
		ob_uleb(b, ABBREV_SUBPROGRAM);
		ob_str(b, name);
		ob_str(b, ksym);
		ob_u64(b, f->addr);
		ob_u32(b, f->len);
	}
	ob_u8(b, 0);			/* end of the CU's children */
	ob_patch_u32(b, unit, b->len - unit - 4);

	/* .debug_ranges: absolute pairs (the CU's base is 0), then (0, 0). */
	for (i = 0; i < x->nr_funcs; i++) {
		const struct bpfstash_func *f = func(x, x->order[i]);

		ob_u64(&x->ranges, f->addr);
		ob_u64(&x->ranges, f->addr + f->len);
	}
	ob_u64(&x->ranges, 0);
	ob_u64(&x->ranges, 0);

	/* .debug_aranges: libdw before 0.19x looks for CUs only there. */
	b = &x->aranges;
	unit = b->len;
	ob_u32(b, 0);
	ob_u16(b, 2);			/* version */
	ob_u32(b, 0);			/* debug_info_offset */
	ob_u8(b, 8);			/* address_size */
	ob_u8(b, 0);			/* segment_selector_size */
	ob_u32(b, 0);			/* pad the header to 2 * address_size */
	for (i = 0; i < x->nr_funcs; i++) {
		const struct bpfstash_func *f = func(x, x->order[i]);

		ob_u64(b, f->addr);
		ob_u64(b, f->len);
	}
	ob_u64(b, 0);
	ob_u64(b, 0);
	ob_patch_u32(b, unit, b->len - unit - 4);
}

/* First section index of the functions' .text sections (after the note). */
#define SCN_NOTE	1
#define SCN_TEXT	2

static void build_symtab(struct export *x)
{
	Elf64_Sym null = {};
	uint32_t i;

	ob_u8(&x->strtab, 0);
	ob_put(&x->symtab, &null, sizeof(null));
	for (i = 0; i < x->nr_funcs; i++) {
		Elf64_Sym s = {};
		uint32_t fi = x->order[i];

		s.st_name = x->strtab.len;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_other = STV_DEFAULT;
		s.st_shndx = SCN_TEXT + i;
		s.st_value = func(x, fi)->addr;
		s.st_size = func(x, fi)->len;
		ob_str(&x->strtab, bpfstash_entry_func_name(x->e, fi));
		ob_put(&x->symtab, &s, sizeof(s));
	}
	if (!x->strtab.err && x->strtab.len > UINT32_MAX)
		x->strtab.err = -E2BIG;
}

static void export_free(struct export *x)
{
	struct obuf *bufs[] = { &x->note, &x->abbrev, &x->info, &x->aranges, &x->ranges,
				&x->line, &x->symtab, &x->strtab, &x->shstrtab };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		free(bufs[i]->p);
	free(x->order);
	free(x->files);
}

static int export_build(struct export *x)
{
	struct obuf *bufs[] = { &x->note, &x->abbrev, &x->info, &x->aranges, &x->ranges,
				&x->line, &x->symtab, &x->strtab };
	size_t i;
	int err;

	err = order_funcs(x);
	if (!err)
		err = collect_files(x);
	if (err)
		return err;
	build_note(x);
	build_abbrev(&x->abbrev);
	build_info(x);
	build_line(x);
	build_symtab(x);
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		if (bufs[i]->err)
			return bufs[i]->err;
	return 0;
}

/* One section to write: where it goes and what it holds. */
struct section {
	const char *name;
	uint32_t type;
	uint64_t flags;
	uint64_t addr;
	const void *data;
	size_t size;
	uint64_t align;
	uint32_t link;
	uint32_t info;
	uint64_t entsize;
	uint64_t offset;	/* in the file, set by the layout */
	uint32_t name_off;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Largest power of two (up to EXPORT_TEXT_ALIGN) that divides @addr. */
static uint64_t addr_align(uint64_t addr)
{
	uint64_t a = EXPORT_TEXT_ALIGN;

	while (a > 1 && (addr & (a - 1)))
		a >>= 1;
	return a;
}

static int elf_err(void)
{
	/* libelf keeps its own error; errno tells an I/O failure apart. */
	return errno ? -errno : -EIO;
}

static int write_elf(struct export *x, struct section *scn, uint32_t nr_scn, int fd)
{
	const size_t nr_phdr = x->nr_funcs + 1;
	GElf_Ehdr ehdr;
	GElf_Phdr ph;
	GElf_Shdr sh;
	uint64_t off;
	Elf_Scn *s;
	Elf_Data *d;
	uint32_t i;
	Elf *elf;
	int err = 0;

	/* Layout: ELF header, program headers, sections, section headers. */
	off = sizeof(Elf64_Ehdr) + nr_phdr * sizeof(Elf64_Phdr);
	for (i = 1; i < nr_scn; i++) {
		off = align_up(off, scn[i].align);
		if (scn[i].flags & SHF_EXECINSTR)
			/* p_offset % p_align == p_vaddr % p_align, as ld does */
			off += (scn[i].addr - off) & (EXPORT_TEXT_ALIGN - 1);
		scn[i].offset = off;
		off += scn[i].size;
	}
	off = align_up(off, 8);

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	/* libelf leaves the gaps between sections as it finds them. */
	if (ftruncate(fd, 0))
		return -errno;
	errno = 0;
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf)
		return elf_err();
	elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);

	if (!gelf_newehdr(elf, ELFCLASS64) || !gelf_getehdr(elf, &ehdr))
		goto elf_fail;
	memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
	ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	ehdr.e_ident[EI_DATA] = EXPORT_DATA;
	ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	ehdr.e_ident[EI_OSABI] = ELFOSABI_NONE;
	ehdr.e_type = ET_EXEC;
	ehdr.e_machine = bpfstash_entry_meta(x->e)->content.machine;
	ehdr.e_version = EV_CURRENT;
	ehdr.e_entry = func(x, main_func(x))->addr;
	ehdr.e_phoff = sizeof(Elf64_Ehdr);
	ehdr.e_shoff = off;
	ehdr.e_shstrndx = nr_scn - 1;
	if (!gelf_update_ehdr(elf, &ehdr))
		goto elf_fail;

	for (i = 1; i < nr_scn; i++) {
		s = elf_newscn(elf);
		if (!s || elf_ndxscn(s) != i)
			goto elf_fail;
		d = elf_newdata(s);
		if (!d)
			goto elf_fail;
		/* libelf only reads d_buf for ELF_T_BYTE when writing. */
		d->d_buf = (void *)scn[i].data;
		d->d_size = scn[i].size;
		d->d_type = ELF_T_BYTE;
		d->d_align = 1;
		d->d_off = 0;
		d->d_version = EV_CURRENT;
		if (!gelf_getshdr(s, &sh))
			goto elf_fail;
		sh.sh_name = scn[i].name_off;
		sh.sh_type = scn[i].type;
		sh.sh_flags = scn[i].flags;
		sh.sh_addr = scn[i].addr;
		sh.sh_offset = scn[i].offset;
		sh.sh_size = scn[i].size;
		sh.sh_link = scn[i].link;
		sh.sh_info = scn[i].info;
		sh.sh_addralign = scn[i].align;
		sh.sh_entsize = scn[i].entsize;
		if (!gelf_update_shdr(s, &sh))
			goto elf_fail;
	}

	if (!gelf_newphdr(elf, nr_phdr))
		goto elf_fail;
	/* PT_LOADs first, by address (the ELF rule), then the note. */
	for (i = 0; i < x->nr_funcs; i++) {
		const struct section *t = &scn[SCN_TEXT + i];

		ph = (GElf_Phdr){
			.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			.p_offset = t->offset, .p_vaddr = t->addr, .p_paddr = t->addr,
			.p_filesz = t->size, .p_memsz = t->size, .p_align = EXPORT_TEXT_ALIGN,
		};
		if (!gelf_update_phdr(elf, i, &ph))
			goto elf_fail;
	}
	ph = (GElf_Phdr){
		.p_type = PT_NOTE, .p_flags = PF_R,
		.p_offset = scn[SCN_NOTE].offset,
		.p_filesz = scn[SCN_NOTE].size, .p_memsz = scn[SCN_NOTE].size,
		.p_align = 4,
	};
	if (!gelf_update_phdr(elf, x->nr_funcs, &ph))
		goto elf_fail;

	errno = 0;
	if (elf_update(elf, ELF_C_WRITE) < 0)
		goto elf_fail;
	elf_end(elf);
	return 0;

elf_fail:
	err = elf_err();
	elf_end(elf);
	return err;
}

/* The entry, or its function @only alone (-1: all), as an ELF file to @fd. */
static int export_elf(const struct bpfstash_entry *e, int only, int fd)
{
	struct export x = { .e = e, .only = only };
	uint8_t build_id[BPFSTASH_HASH_SIZE];
	struct section *scn = NULL;
	const uint8_t *jited;
	size_t jited_size;
	uint32_t i, n, nr_scn;
	int err;

	if (!e || e->meta_only || fd < 0)
		return -EINVAL;
	if (!machine_known(bpfstash_entry_meta(e)->content.machine))
		return -EOPNOTSUPP;
	jited = bpfstash_entry_blob(e, BPFSTASH_JITED, &jited_size);
	if (only >= 0) {
		err = bpfstash_entry_func_build_id(e, only, build_id);
		if (err)
			return err;
		x.build_id = build_id;
	} else {
		x.build_id = e->meta.hash;
	}

	err = export_build(&x);
	if (err)
		goto out;

	/* null, note, one .text per function, 5 DWARF, symtab, strtab, shstrtab */
	nr_scn = 2 + x.nr_funcs + 5 + 3;
	scn = calloc(nr_scn, sizeof(*scn));
	if (!scn) {
		err = -ENOMEM;
		goto out;
	}
	n = 1;
	scn[n++] = (struct section){ ".note.gnu.build-id", SHT_NOTE, 0, 0,
				     x.note.p, x.note.len, 4 };
	for (i = 0; i < x.nr_funcs; i++) {
		const struct bpfstash_func *f = func(&x, x.order[i]);

		scn[n++] = (struct section){ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					     f->addr, jited + f->offset, f->len,
					     addr_align(f->addr) };
	}
	scn[n++] = (struct section){ ".debug_abbrev", SHT_PROGBITS, 0, 0,
				     x.abbrev.p, x.abbrev.len, 1 };
	scn[n++] = (struct section){ ".debug_info", SHT_PROGBITS, 0, 0,
				     x.info.p, x.info.len, 1 };
	scn[n++] = (struct section){ ".debug_aranges", SHT_PROGBITS, 0, 0,
				     x.aranges.p, x.aranges.len, 1 };
	scn[n++] = (struct section){ ".debug_ranges", SHT_PROGBITS, 0, 0,
				     x.ranges.p, x.ranges.len, 1 };
	scn[n++] = (struct section){ ".debug_line", SHT_PROGBITS, 0, 0,
				     x.line.p, x.line.len, 1 };
	/* .symtab links to .strtab, the next one; sh_info: first global. */
	scn[n] = (struct section){ ".symtab", SHT_SYMTAB, 0, 0, x.symtab.p, x.symtab.len, 8,
				   n + 1, 1, sizeof(Elf64_Sym) };
	n++;
	scn[n++] = (struct section){ ".strtab", SHT_STRTAB, 0, 0, x.strtab.p, x.strtab.len, 1 };
	scn[n++] = (struct section){ ".shstrtab", SHT_STRTAB, 0, 0, NULL, 0, 1 };

	/* .shstrtab: one copy of each distinct name, ".text" once. */
	ob_u8(&x.shstrtab, 0);
	for (i = 1; i < nr_scn; i++) {
		if (i > SCN_TEXT && i < SCN_TEXT + x.nr_funcs) {
			scn[i].name_off = scn[SCN_TEXT].name_off;
			continue;
		}
		scn[i].name_off = x.shstrtab.len;
		ob_str(&x.shstrtab, scn[i].name);
	}
	if (x.shstrtab.err) {
		err = x.shstrtab.err;
		goto out;
	}
	scn[nr_scn - 1].data = x.shstrtab.p;
	scn[nr_scn - 1].size = x.shstrtab.len;

	err = write_elf(&x, scn, nr_scn, fd);
out:
	free(scn);
	export_free(&x);
	return err;
}

int bpfstash_entry_export_elf(const struct bpfstash_entry *e, int fd)
{
	return export_elf(e, -1, fd);
}

int bpfstash_entry_export_func_elf(const struct bpfstash_entry *e, uint32_t func, int fd)
{
	if (!e || func >= bpfstash_entry_nr_funcs(e))
		return -EINVAL;
	return export_elf(e, func, fd);
}

int bpfstash_entry_func_build_id(const struct bpfstash_entry *e, uint32_t func,
				 uint8_t build_id[BPFSTASH_HASH_SIZE])
{
	static const char domain[] = "bpfstash-func-v1";	/* without its NUL */
	enum { DOMAIN_LEN = sizeof(domain) - 1, INDEX_OFF = DOMAIN_LEN + BPFSTASH_HASH_SIZE };
	uint8_t buf[INDEX_OFF + 4];
	uint8_t digest[BPFSTASH_DIGEST_SIZE];
	int err;

	if (!e || func >= e->meta.content.nr_funcs)
		return -EINVAL;
	memcpy(buf, domain, DOMAIN_LEN);
	memcpy(buf + DOMAIN_LEN, e->meta.hash, BPFSTASH_HASH_SIZE);
	/* The index little-endian, whatever the host. */
	buf[INDEX_OFF] = func;
	buf[INDEX_OFF + 1] = func >> 8;
	buf[INDEX_OFF + 2] = func >> 16;
	buf[INDEX_OFF + 3] = func >> 24;
	err = bst_sha256(buf, sizeof(buf), digest);
	if (err)
		return err;
	memcpy(build_id, digest, BPFSTASH_HASH_SIZE);
	return 0;
}

/* mkdir -p, for the directories of @path up to its last '/'. */
static int mkdirs(char *path)
{
	char *p;

	for (p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, err = 0;

	dir = slash ? strndup(path, slash - path) : strdup(".");
	if (!dir)
		return -ENOMEM;
	fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd))
		err = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return err;
}

int bpfstash_entry_export_build_id(const struct bpfstash_entry *e, const char *dir,
				   char *path, size_t path_size)
{
	char hex[BPFSTASH_HEX_LEN + 1];
	char *final = NULL, *tmp = NULL;
	size_t len;
	int fd = -1, err;

	if (!e || !dir || !*dir)
		return -EINVAL;
	if (path && path_size)
		path[0] = '\0';
	bpfstash_hash_format(e->meta.hash, hex);
	/* dir/.build-id/xx/<38 hex>.debug, and a hidden temporary beside it. */
	len = strlen(dir) + sizeof("/.build-id/xx/.") + BPFSTASH_HEX_LEN + sizeof(".debug.XXXXXX");
	final = malloc(len);
	tmp = malloc(len);
	if (!final || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(final, len, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	snprintf(tmp, len, "%s/.build-id/%.2s/.%s.debug.XXXXXX", dir, hex, hex + 2);
	if (path && path_size && strlen(final) >= path_size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	err = mkdirs(tmp);
	if (err)
		goto out;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = bpfstash_entry_export_elf(e, fd);
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err && rename(tmp, final))
		err = -errno;
	if (err) {
		unlink(tmp);
		goto out;
	}
	err = fsync_dir_of(final);
	if (!err && path && path_size)
		snprintf(path, path_size, "%s", final);
out:
	free(final);
	free(tmp);
	return err;
}
