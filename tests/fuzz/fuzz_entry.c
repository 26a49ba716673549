// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: an entry's files from one byte buffer (fuzz_entry.h),
 * loaded through the library's in-memory path (no I/O), then verified,
 * resolved at the edges of every function and at addresses taken from the
 * input, and exported as ELF into a memfd.
 *
 *   clang -fsanitize=fuzzer,address,undefined ...   (scripts/check-fuzz.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "internal.h"
#include "fuzz_entry.h"

static int memfd = -1;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	libbpf_set_print(quiet);
	memfd = memfd_create("bpfstash-fuzz", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	return 0;
}

/* Touch every string of a location, so a bad pointer shows. */
static size_t use_location(const struct bpfstash_location *l)
{
	size_t n = 0;

	n += l->func_name ? strlen(l->func_name) : 0;
	n += l->btf_name ? strlen(l->btf_name) : 0;
	n += l->file ? strlen(l->file) : 0;
	n += l->source ? strlen(l->source) : 0;
	return n + l->line + l->col;
}

static void exercise(const struct bpfstash_entry *e, const uint8_t *data, size_t size)
{
	uint8_t hash[BPFSTASH_HASH_SIZE];
	const struct bpfstash_call *calls;
	struct bpfstash_location loc;
	volatile size_t sink = 0;
	uint32_t i, n;
	size_t bsize;

	bpfstash_entry_verify(e);
	bpfstash_entry_compute_hash(e, hash);
	sink += strlen(bpfstash_entry_name(e));
	sink += bpfstash_entry_loaded(e);
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++)
		sink += !!bpfstash_entry_blob(e, i, &bsize);
	calls = bpfstash_entry_calls(e, &n);
	for (i = 0; i < n; i++) {
		const char *kind = bpfstash_call_kind_name(calls[i].kind);

		sink += strlen(calls[i].name) + calls[i].prog_id + (kind ? strlen(kind) : 0);
	}
	if (bpfstash_image_kind_name(bpfstash_entry_meta(e)->content.expected_attach_type))
		sink++;

	n = bpfstash_entry_nr_funcs(e);
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		uint64_t probes[] = { f->addr, f->addr + f->len / 2, f->addr + f->len - 1,
				      f->addr + f->len, f->addr - 1 };
		size_t k;

		sink += strlen(bpfstash_entry_func_name(e, i));
		if (bpfstash_entry_func_btf_name(e, i))
			sink += strlen(bpfstash_entry_func_btf_name(e, i));
		for (k = 0; k < sizeof(probes) / sizeof(probes[0]); k++)
			if (!bpfstash_entry_resolve(e, probes[k], &loc))
				sink += use_location(&loc);
		if (!bpfstash_entry_resolve_offset(e, f->offset + f->len - 1, &loc))
			sink += use_location(&loc);
	}
	/* Every line record, as bpfstash lines walks them. */
	n = bpfstash_entry_nr_lines(e);
	for (i = 0; i <= n && i < 1024; i++)
		if (!bpfstash_entry_line(e, i, &loc))
			sink += use_location(&loc);
	/* Addresses and offsets from the input's last bytes. */
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t v;

		memcpy(&v, data + size - 8 - i, 8);
		if (!bpfstash_entry_resolve(e, v, &loc))
			sink += use_location(&loc);
		if (!bpfstash_entry_resolve_offset(e, v & 0xffffff, &loc))
			sink += use_location(&loc);
	}

	if (ftruncate(memfd, 0) == 0 && lseek(memfd, 0, SEEK_SET) == 0)
		bpfstash_entry_export_elf(e, memfd);
	(void)sink;
}

/*
 * FUZZ_FIXUP: make meta, funcs and jited_line_info consistent with the
 * files' sizes, keeping the fuzzer's values where they can be kept (the
 * addresses, lengths, names, offsets modulo what fits), so that mutations
 * get past entry_check() into resolution and export: overlapping functions,
 * odd line orders, any BTF string offsets.  @funcs and @jl are writable
 * copies of those files.
 */
static void fixup(struct bpfstash_meta *m, struct bst_entry_files *f, uint8_t *funcs,
		  struct bpfstash_jited_line *jl)
{
	struct bpfstash_content *c = &m->content;
	struct bpfstash_func *fn = (struct bpfstash_func *)funcs;
	size_t nr_li, nr_jl, names_len;
	uint32_t i, nr, left;
	char *names;

	c->version = BPFSTASH_VERSION;
	c->funcs_size = f->funcs_size;
	c->jited_len = f->sizes[BPFSTASH_JITED];
	nr_li = f->sizes[BPFSTASH_LINE_INFO] / sizeof(struct bpf_line_info);
	nr_jl = f->sizes[BPFSTASH_JITED_LINE_INFO] / sizeof(struct bpfstash_jited_line);
	if (nr_jl && nr_jl < nr_li)
		nr_li = nr_jl;
	f->sizes[BPFSTASH_LINE_INFO] = nr_li * sizeof(struct bpf_line_info);
	if (nr_jl)
		f->sizes[BPFSTASH_JITED_LINE_INFO] = nr_li * sizeof(struct bpfstash_jited_line);
	c->nr_line_info = nr_li;
	c->line_info_rec_size = sizeof(struct bpf_line_info);
	c->nr_jited_line_info = nr_jl ? nr_li : 0;
	c->nr_func_info = f->sizes[BPFSTASH_FUNC_INFO] / sizeof(struct bpf_func_info);
	f->sizes[BPFSTASH_FUNC_INFO] = c->nr_func_info * sizeof(struct bpf_func_info);
	c->func_info_rec_size = sizeof(struct bpf_func_info);
	c->btf_size = f->sizes[BPFSTASH_BTF];
	c->name[sizeof(c->name) - 1] = '\0';
	m->attach_func_name[sizeof(m->attach_func_name) - 1] = '\0';

	/* funcs: records that tile jited, names inside the file */
	if (!funcs || f->funcs_size <= sizeof(*fn) || !c->jited_len)
		return;
	nr = c->nr_funcs;
	if (nr < 1 || nr > BPFSTASH_MAX_FUNCS)
		nr = 1 + nr % BPFSTASH_MAX_FUNCS;
	if (nr > (f->funcs_size - 1) / sizeof(*fn))
		nr = (f->funcs_size - 1) / sizeof(*fn);
	if (nr > c->jited_len)
		nr = c->jited_len;
	c->nr_funcs = nr;
	names = (char *)(fn + nr);
	names_len = f->funcs_size - nr * sizeof(*fn);
	names[names_len - 1] = '\0';
	for (i = 0, left = c->jited_len; i < nr; i++) {
		uint32_t room = left - (nr - 1 - i);	/* leave a byte for each next one */

		fn[i].offset = c->jited_len - left;
		fn[i].len = i + 1 == nr ? left : 1 + fn[i].len % room;
		left -= fn[i].len;
		if (fn[i].addr + fn[i].len < fn[i].addr)
			fn[i].addr -= fn[i].len;
		fn[i].name_off %= names_len;
	}
	for (i = 0; jl && i < c->nr_jited_line_info; i++) {
		jl[i].func %= nr;
		jl[i].off %= fn[jl[i].func].len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bst_entry_files files = {};
	struct bpfstash_entry *e = NULL;
	struct bpfstash_jited_line *jl = NULL;
	struct bpfstash_meta meta;
	uint8_t *funcs = NULL;
	const uint8_t *p = data, *end = data + size;
	unsigned int mode, flags;
	int i;

	if (size < 1)
		return 0;
	mode = *p++;
	for (i = 0; i < FUZZ_NR_FILES; i++) {
		uint32_t len;

		if (end - p < 4)
			break;
		memcpy(&len, p, 4);
		p += 4;
		if (len > (size_t)(end - p))
			len = end - p;
		if (i == FUZZ_META) {
			files.meta = p;
			files.meta_size = len;
		} else if (i == FUZZ_FUNCS) {
			files.funcs = p;
			files.funcs_size = len;
		} else if (i == FUZZ_CALLS) {
			files.calls = p;
			files.calls_size = len;
		} else if (i == FUZZ_POKES) {
			files.pokes = p;
			files.pokes_size = len;
		} else {
			files.blobs[i - FUZZ_BLOB0] = p;
			files.sizes[i - FUZZ_BLOB0] = len;
		}
		p += len;
	}
	flags = mode & FUZZ_META_ONLY ? BPFSTASH_LOAD_META : 0;

	if ((mode & FUZZ_FIXUP) && files.meta && files.meta_size == sizeof(meta)) {
		memcpy(&meta, files.meta, sizeof(meta));
		if (files.funcs) {
			funcs = malloc(files.funcs_size + 1);
			memcpy(funcs, files.funcs, files.funcs_size);
			files.funcs = funcs;
		}
		if (files.blobs[BPFSTASH_JITED_LINE_INFO]) {
			jl = malloc(files.sizes[BPFSTASH_JITED_LINE_INFO] + 1);
			memcpy(jl, files.blobs[BPFSTASH_JITED_LINE_INFO],
			       files.sizes[BPFSTASH_JITED_LINE_INFO]);
			files.blobs[BPFSTASH_JITED_LINE_INFO] = jl;
		}
		fixup(&meta, &files, funcs, jl);
		files.meta = &meta;
		/* Once loaded, rename it by its content: verification passes. */
		if (!bst_entry_load_mem(NULL, &files, flags, &e))
			bpfstash_entry_compute_hash(e, meta.hash);
		bpfstash_entry_free(e);
		e = NULL;
	}
	if (!bst_entry_load_mem(NULL, &files, flags, &e)) {
		exercise(e, data, size);
		bpfstash_entry_free(e);
	}
	free(funcs);
	free(jl);
	return 0;
}
