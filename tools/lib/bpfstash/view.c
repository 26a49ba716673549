// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpfstash: the text files of an entry directory, rendered from its
 * binary files.
 *
 * The kernel generates "info", "functions" and "lines" on read
 * (fs/bpfstash/file.c).  This is a second rendering of the same text,
 * written from the ABI (include/uapi/linux/bpfstash.h) and libbpf rather
 * than from the kernel's code: a copy of a stash without its text files
 * gets them back, and the tests compare the kernel's text with this one
 * byte for byte, so that neither can drift (a name the kernel cannot find
 * in BTF shows up as a difference, not as a '?' nobody reads).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/btf.h>

#include "libbpfstash.h"
#include "internal.h"

#define KEY "%-16s "

static void print_hex(FILE *f, const uint8_t *p, size_t n)
{
	while (n--)
		fprintf(f, "%02x", *p++);
}

/* "2026-12-02T06:51:33.000000001Z (boot +12.000000003 s)", or "-". */
static void print_time(FILE *f, const char *key, uint64_t real_ns, uint64_t boot_ns)
{
	time_t secs = real_ns / 1000000000;
	struct tm tm;

	if (!real_ns || !gmtime_r(&secs, &tm)) {
		fprintf(f, KEY "-\n", key);
		return;
	}
	fprintf(f, KEY "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRIu64 "Z (boot +%" PRIu64 ".%09" PRIu64
		" s)\n", key, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		tm.tm_sec, real_ns % 1000000000, boot_ns / 1000000000, boot_ns % 1000000000);
}

/* A kind by its name, or by its number if this library does not know it. */
static void print_kind(FILE *f, const char *name, uint32_t kind)
{
	if (name)
		fprintf(f, "%s", name);
	else
		fprintf(f, "%u", kind);
}

/*
 * What "info" adds for an image (content.image_kind): its kind, then one
 * line per program it calls, in the calls file's order; "entry -" for a
 * program the stash has no entry of (its hash is all zeros).
 */
static void render_image(const struct bpfstash_entry *e, FILE *f)
{
	static const uint8_t zeros[BPFSTASH_HASH_SIZE];
	const struct bpfstash_call *calls;
	uint32_t i, nr;

	fprintf(f, KEY, "image");
	print_kind(f, bpfstash_image_kind_name(e->meta.content.image_kind),
		   e->meta.content.image_kind);
	fprintf(f, "\n");
	calls = bpfstash_entry_calls(e, &nr);
	for (i = 0; i < nr; i++) {
		const struct bpfstash_call *cl = &calls[i];

		fprintf(f, KEY, "call");
		print_kind(f, bpfstash_call_kind_name(cl->kind), cl->kind);
		fprintf(f, " prog_id %u tag ", cl->prog_id);
		print_hex(f, cl->tag, sizeof(cl->tag));
		fprintf(f, " entry ");
		if (memcmp(cl->hash, zeros, sizeof(zeros)))
			print_hex(f, cl->hash, sizeof(cl->hash));
		else
			fprintf(f, "-");
		/* NUL-terminated within: checked at load */
		fprintf(f, " name %.*s\n", BPFSTASH_NAME_LEN, cl->name);
	}
}

static void render_info(const struct bpfstash_entry *e, FILE *f)
{
	const struct bpfstash_meta *m = &e->meta;
	const struct bpfstash_content *c = &m->content;
	bool loaded = m->flags & BPFSTASH_META_LOADED;
	char boot_id[BPFSTASH_BOOT_ID_LEN + 1];

	fprintf(f, KEY, "hash");
	print_hex(f, m->hash, sizeof(m->hash));
	fprintf(f, "\n" KEY "%s\n", "name", c->name);
	fprintf(f, KEY "%u\n", "prog_id", m->prog_id);
	fprintf(f, KEY "%u\n", "prog_type", c->prog_type);
	fprintf(f, KEY, "tag");
	print_hex(f, c->tag, sizeof(c->tag));
	fprintf(f, "\n" KEY "%s\n", "state", loaded ? "loaded" : "unloaded");
	print_time(f, "load_time", m->load_time_real, m->load_time);
	print_time(f, "unload_time", m->unload_time_real, m->unload_time);
	fprintf(f, KEY "%u\n", "uid", m->uid);
	if (m->loader_tgid)
		fprintf(f, KEY "pid %u comm %.*s cgroup %" PRIu64 "\n", "loader", m->loader_tgid,
			(int)strnlen(m->loader_comm, sizeof(m->loader_comm)), m->loader_comm,
			(uint64_t)m->loader_cgroup_id);
	else
		fprintf(f, KEY "-\n", "loader");
	fprintf(f, KEY, "boot_id");
	bpfstash_boot_id_format(m->boot_id, boot_id);
	fprintf(f, "%s\n", boot_id);
	fprintf(f, KEY "%u\n", "functions", c->nr_funcs);
	fprintf(f, KEY "%u\n", "jited_bytes", c->jited_len);
	fprintf(f, KEY "%u\n", "pokes", c->nr_pokes);
	fprintf(f, KEY "%u\n", "xlated_bytes", c->xlated_len);
	fprintf(f, KEY "%u\n", "verified_insns", c->verified_insns);
	fprintf(f, KEY "%u\n", "line_info", c->nr_line_info);
	fprintf(f, KEY "%u\n", "jited_line_info", c->nr_jited_line_info);
	fprintf(f, KEY "%u\n", "func_info", c->nr_func_info);
	fprintf(f, KEY "%u\n", "btf_id", m->btf_id);
	fprintf(f, KEY "%u\n", "btf_bytes", c->btf_size);
	fprintf(f, KEY "%u\n", "gpl_compatible", c->gpl_compatible);
	fprintf(f, KEY "%u\n", "expected_attach", c->expected_attach_type);
	fprintf(f, KEY "%s (btf_id %u, btf obj %u)\n", "attach_target",
		m->attach_func_name[0] ? m->attach_func_name : "-", c->attach_btf_id,
		m->attach_btf_obj_id);
	fprintf(f, KEY "%" PRIu64 "\n", "bytes", (uint64_t)m->bytes);
	if (c->image_kind)
		render_image(e, f);
}

static void render_functions(const struct bpfstash_entry *e, FILE *f)
{
	uint32_t i;

	fprintf(f, "# idx start            end              size  tag              name\n");
	for (i = 0; i < e->meta.content.nr_funcs; i++) {
		const struct bpfstash_func *fn = bpfstash_entry_func(e, i);

		fprintf(f, "%5u %016" PRIx64 " %016" PRIx64 " %5u ", i, (uint64_t)fn->addr,
			(uint64_t)(fn->addr + fn->len), fn->len);
		print_hex(f, fn->tag, sizeof(fn->tag));
		fprintf(f, " %s\n", bpfstash_entry_func_name(e, i));
	}
}

/* A string of the entry's BTF, or "?" as the kernel writes one it cannot find. */
static const char *view_str(const struct bpfstash_entry *e, uint32_t off)
{
	const char *s = e->btf ? btf__str_by_offset(e->btf, off) : NULL;

	return s ? s : "?";
}

/*
 * The kernel drops leading white space from a source line with
 * skip_spaces(), and the kernel's isspace() is true for the C locale's six
 * characters and for 0xa0 (Latin-1 no-break space, lib/ctype.c).
 */
static const char *skip_kernel_spaces(const char *s)
{
	while (*s == ' ' || (*s >= '\t' && *s <= '\r') || (unsigned char)*s == 0xa0)
		s++;
	return s;
}

/*
 * One line per line_info record, in record order: where the JITed code of
 * the record starts (its function and offset), or "- insn N" for a record
 * without jited line info, then file:line:col and the source line.
 */
static void render_lines(const struct bpfstash_entry *e, FILE *f)
{
	const struct bpfstash_content *c = &e->meta.content;
	const struct bpf_line_info *li = e->blobs[BPFSTASH_LINE_INFO];
	const struct bpfstash_jited_line *jl = e->blobs[BPFSTASH_JITED_LINE_INFO];
	uint32_t i;

	fprintf(f, "# address         function+offset\tfile:line:col\tsource\n");
	for (i = 0; i < c->nr_line_info; i++) {
		if (i < c->nr_jited_line_info && jl[i].func < c->nr_funcs)
			fprintf(f, "%016" PRIx64 " %s+0x%x",
				(uint64_t)(bpfstash_entry_func(e, jl[i].func)->addr + jl[i].off),
				bpfstash_entry_func_name(e, jl[i].func), jl[i].off);
		else
			fprintf(f, "%-16s insn %u", "-", li[i].insn_off);
		fprintf(f, "\t%s:%u:%u\t%s\n", view_str(e, li[i].file_name_off),
			BPF_LINE_INFO_LINE_NUM(li[i].line_col),
			BPF_LINE_INFO_LINE_COL(li[i].line_col),
			skip_kernel_spaces(view_str(e, li[i].line_off)));
	}
}

static const struct {
	const char *name;
	void (*render)(const struct bpfstash_entry *e, FILE *f);
} views[] = {
	{ "info",	render_info },
	{ "functions",	render_functions },
	{ "lines",	render_lines },
};

const char *bpfstash_view_name(unsigned int i)
{
	return i < ARRAY_SIZE(views) ? views[i].name : NULL;
}

int bpfstash_entry_render(const struct bpfstash_entry *e, const char *file, char **text,
			  size_t *len)
{
	unsigned int i;
	FILE *f;

	*text = NULL;
	*len = 0;
	for (i = 0; bpfstash_view_name(i); i++)
		if (!strcmp(views[i].name, file))
			break;
	if (!bpfstash_view_name(i))
		return -ENOENT;
	if (e->meta_only && strcmp(file, "info"))
		return -EINVAL;
	f = open_memstream(text, len);
	if (!f)
		return -errno;
	views[i].render(e, f);
	if (ferror(f)) {
		fclose(f);
		free(*text);
		*text = NULL;
		*len = 0;
		return -ENOMEM;
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		*len = 0;
		return -ENOMEM;
	}
	return 0;
}
