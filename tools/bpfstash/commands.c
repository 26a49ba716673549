// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash(8) commands: ls, show, lines, resolve, verify, export.
 *
 * Each reports what fails for one entry and goes on with the next; the exit
 * status says whether anything failed.  Addresses are printed in hex, and
 * in JSON as "0x..." strings: a JSON number cannot hold a kernel address
 * exactly in every reader (jq uses doubles).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "main.h"
#include "decode.h"

#define ADDR_FMT "%016" PRIx64

static void json_hex_field(const char *name, uint64_t v)
{
	jsonw_name(json_wtr, name);
	jsonw_printf(json_wtr, "\"0x%" PRIx64 "\"", v);
}

static void tag_hex(const uint8_t *tag, char *buf)
{
	int i;

	for (i = 0; i < BPFSTASH_TAG_SIZE; i++)
		sprintf(buf + 2 * i, "%02x", tag[i]);
}

/*
 * An image's kind (content.image_kind), or a call's: its name, or its
 * number for a kind this library does not know, as the kernel's "info".
 */
static const char *kind_str(const char *name, uint32_t kind, char *buf, size_t size)
{
	if (name)
		return name;
	snprintf(buf, size, "%u", kind);
	return buf;
}

static bool is_image(const struct bpfstash_meta *m)
{
	return m->content.image_kind;
}

static const char *image_kind(const struct bpfstash_meta *m, char *buf, size_t size)
{
	return kind_str(bpfstash_image_kind_name(m->content.image_kind),
			m->content.image_kind, buf, size);
}

/* The architecture of an entry's code, as uname -m names it. */
static const char *machine_str(const struct bpfstash_meta *m, char *buf, size_t size)
{
	return kind_str(bpfstash_machine_name(m->content.machine), m->content.machine, buf,
			size);
}

/* Who loaded the program (or attached the image), in JSON: null if unknown. */
static void json_loader(const struct bpfstash_meta *m)
{
	char comm[BPFSTASH_COMM_LEN + 1];

	jsonw_name(json_wtr, "loader");
	if (!m->loader_tgid) {
		jsonw_null(json_wtr);
		return;
	}
	snprintf(comm, sizeof(comm), "%.*s", BPFSTASH_COMM_LEN, m->loader_comm);
	jsonw_start_object(json_wtr);
	jsonw_uint_field(json_wtr, "pid", m->loader_tgid);
	jsonw_string_field(json_wtr, "comm", comm);
	jsonw_uint_field(json_wtr, "cgroup_id", m->loader_cgroup_id);
	jsonw_end_object(json_wtr);
}

/* The link type's name, as bpftool and fdinfo say it, or its number. */
static const char *link_type_str(uint32_t type, char *buf, size_t size)
{
	const char *s = libbpf_bpf_link_type_str(type);

	if (s)
		return s;
	snprintf(buf, size, "%u", type);
	return buf;
}

/* The last link the program was attached by, in JSON: null if none. */
static void json_link(const struct bpfstash_meta *m)
{
	char type[16];

	jsonw_name(json_wtr, "link");
	if (!m->link_type) {
		jsonw_null(json_wtr);
		return;
	}
	jsonw_start_object(json_wtr);
	jsonw_string_field(json_wtr, "type", link_type_str(m->link_type, type, sizeof(type)));
	jsonw_uint_field(json_wtr, "id", m->link_id);
	jsonw_string_field(json_wtr, "target", m->link_target);
	jsonw_end_object(json_wtr);
}

/* The same as text: "kprobe:tcp_sendmsg (perf_event link 12)", or "-". */
static const char *link_str(const struct bpfstash_meta *m, char *buf, size_t size)
{
	char type[16];

	if (!m->link_type)
		return "-";
	snprintf(buf, size, "%s (%s link %u)", m->link_target,
		 link_type_str(m->link_type, type, sizeof(type)), m->link_id);
	return buf;
}

/* The same as text: "pid 1234 comm foo cgroup 56", or "-". */
static const char *loader_str(const struct bpfstash_meta *m, char *buf, size_t size)
{
	if (!m->loader_tgid)
		return "-";
	snprintf(buf, size, "pid %u comm %.*s cgroup %llu", m->loader_tgid, BPFSTASH_COMM_LEN,
		 m->loader_comm, (unsigned long long)m->loader_cgroup_id);
	return buf;
}

/* Seconds since the entry was loaded, 0 if the clock says otherwise. */
static uint64_t entry_age(const struct bpfstash_meta *m)
{
	uint64_t now = now_real_ns();

	return m->load_time_real && now > m->load_time_real ?
	       (now - m->load_time_real) / 1000000000ull : 0;
}

int do_ls(int argc, char **argv)
{
	struct bpfstash *stash;
	size_t count, i;
	char **names;
	int err, ret;

	if (argc)
		return usage_error("ls takes no argument, '%s' given", argv[0]);
	ret = stash_open(&stash);
	if (ret)
		return ret;
	err = bpfstash_list(stash, &names, &count);
	if (err) {
		p_err("cannot list %s: %s", opts.root, strerror(-err));
		bpfstash_close(stash);
		return EXIT_NOSTASH;
	}
	if (json_wtr)
		jsonw_start_array(json_wtr);
	else
		printf("%-40s  %-16s %5s %8s %9s %-9s %5s\n", "HASH", "NAME", "FUNCS",
		       "JITED", "BYTES", "STATE", "AGE");
	for (i = 0; i < count; i++) {
		const struct bpfstash_meta *m;
		struct bpfstash_entry *e;
		char age[32], when[32], kind[16], label[BPFSTASH_NAME_LEN + 2], buf[96];
		char boot_id[BPFSTASH_BOOT_ID_LEN + 1];
		uint32_t nr_calls;

		/* meta alone: listing 100 000 entries reads one file each */
		err = bpfstash_entry_load(stash, names[i], BPFSTASH_LOAD_META, &e);
		if (err) {
			const char *why = entry_errstr(stash, names[i], err, buf, sizeof(buf));

			if (json_wtr) {
				jsonw_start_object(json_wtr);
				jsonw_string_field(json_wtr, "hash", names[i]);
				jsonw_string_field(json_wtr, "error", why);
				jsonw_end_object(json_wtr);
			} else {
				fprintf(stderr, "Error: %s: %s\n", names[i], why);
			}
			/* A newer format says so, whatever else failed. */
			if (ret != EXIT_FORMAT)
				ret = entry_exit(err);
			continue;
		}
		m = bpfstash_entry_meta(e);
		format_age(entry_age(m), age, sizeof(age));
		/* a META load has an image's calls: its "info" shows them */
		bpfstash_entry_calls(e, &nr_calls);
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "hash", names[i]);
			jsonw_string_field(json_wtr, "name", m->content.name);
			jsonw_uint_field(json_wtr, "prog_id", m->prog_id);
			jsonw_uint_field(json_wtr, "prog_type", m->content.prog_type);
			if (is_image(m)) {
				jsonw_string_field(json_wtr, "image", image_kind(m, kind, sizeof(kind)));
				jsonw_uint_field(json_wtr, "nr_calls", nr_calls);
			}
			jsonw_uint_field(json_wtr, "nr_funcs", m->content.nr_funcs);
			jsonw_uint_field(json_wtr, "jited_len", m->content.jited_len);
			jsonw_uint_field(json_wtr, "bytes", m->bytes);
			jsonw_bool_field(json_wtr, "loaded", bpfstash_entry_loaded(e));
			format_time(m->load_time_real, when, sizeof(when));
			jsonw_string_field(json_wtr, "load_time", when);
			format_time(m->unload_time_real, when, sizeof(when));
			jsonw_string_field(json_wtr, "unload_time", when);
			jsonw_uint_field(json_wtr, "age_s", entry_age(m));
			json_loader(m);
			json_link(m);
			bpfstash_boot_id_format(m->boot_id, boot_id);
			jsonw_string_field(json_wtr, "boot_id", boot_id);
			jsonw_end_object(json_wtr);
		} else {
			/* an image as [kind]: no program's name has brackets */
			if (is_image(m))
				snprintf(label, sizeof(label), "[%.*s]", BPFSTASH_NAME_LEN - 2,
					 image_kind(m, kind, sizeof(kind)));
			else
				snprintf(label, sizeof(label), "%s",
					 m->content.name[0] ? m->content.name : "-");
			printf("%-40s  %-16s %5u %8u %9llu %-9s %5s\n", names[i],
			       label, m->content.nr_funcs,
			       m->content.jited_len, (unsigned long long)m->bytes,
			       bpfstash_entry_loaded(e) ? "loaded" : "unloaded", age);
		}
		bpfstash_entry_free(e);
	}
	if (json_wtr)
		jsonw_end_array(json_wtr);
	bpfstash_names_free(names);
	bpfstash_close(stash);
	return ret;
}

/* Open the stash and load the one entry named by argv[0]. */
static int one_entry(int argc, char **argv, const char *cmd, struct bpfstash **stash,
		     struct bpfstash_entry **e)
{
	char name[BPFSTASH_HEX_LEN + 1];
	int ret;

	if (argc != 1)
		return usage_error("%s takes one HASH, %d arguments given", cmd, argc);
	ret = stash_open(stash);
	if (ret)
		return ret;
	ret = stash_lookup(*stash, argv[0], name);
	if (!ret)
		ret = stash_load(*stash, name, 0, e);
	if (ret)
		bpfstash_close(*stash);
	return ret;
}

int do_show(int argc, char **argv)
{
	const struct bpfstash_content *c;
	const struct bpfstash_meta *m;
	struct bpfstash_entry *e;
	struct bpfstash *stash;
	char tag[2 * BPFSTASH_TAG_SIZE + 1], load[32], unload[32], kind[16], machine[16];
	char entry[BPFSTASH_HEX_LEN + 1], boot_id[BPFSTASH_BOOT_ID_LEN + 1], loader[64];
	char link[BPFSTASH_LINK_TARGET_LEN + 48];
	const struct bpfstash_call *calls;
	uint32_t i, nr_calls;
	int ret, verified;

	ret = one_entry(argc, argv, "show", &stash, &e);
	if (ret)
		return ret;
	m = bpfstash_entry_meta(e);
	c = &m->content;
	tag_hex(c->tag, tag);
	format_time(m->load_time_real, load, sizeof(load));
	format_time(m->unload_time_real, unload, sizeof(unload));
	verified = bpfstash_entry_verify(e);
	calls = bpfstash_entry_calls(e, &nr_calls);
	bpfstash_boot_id_format(m->boot_id, boot_id);

	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "hash", bpfstash_entry_name(e));
		jsonw_string_field(json_wtr, "name", c->name);
		jsonw_uint_field(json_wtr, "prog_id", m->prog_id);
		jsonw_uint_field(json_wtr, "prog_type", c->prog_type);
		if (is_image(m))
			jsonw_string_field(json_wtr, "image", image_kind(m, kind, sizeof(kind)));
		jsonw_uint_field(json_wtr, "expected_attach_type", c->expected_attach_type);
		jsonw_string_field(json_wtr, "tag", tag);
		jsonw_bool_field(json_wtr, "loaded", bpfstash_entry_loaded(e));
		jsonw_string_field(json_wtr, "load_time", load);
		jsonw_string_field(json_wtr, "unload_time", unload);
		jsonw_u64_string_field(json_wtr, "load_time_ns", m->load_time_real);
		jsonw_u64_string_field(json_wtr, "unload_time_ns", m->unload_time_real);
		jsonw_uint_field(json_wtr, "uid", m->uid);
		json_loader(m);
		json_link(m);
		jsonw_string_field(json_wtr, "boot_id", boot_id);
		jsonw_string_field(json_wtr, "machine", machine_str(m, machine, sizeof(machine)));
		jsonw_uint_field(json_wtr, "jited_len", c->jited_len);
		jsonw_uint_field(json_wtr, "nr_pokes", c->nr_pokes);
		jsonw_uint_field(json_wtr, "xlated_len", c->xlated_len);
		jsonw_uint_field(json_wtr, "verified_insns", c->verified_insns);
		jsonw_uint_field(json_wtr, "nr_line_info", c->nr_line_info);
		jsonw_uint_field(json_wtr, "nr_jited_line_info", c->nr_jited_line_info);
		jsonw_uint_field(json_wtr, "nr_func_info", c->nr_func_info);
		jsonw_uint_field(json_wtr, "btf_size", c->btf_size);
		jsonw_uint_field(json_wtr, "btf_id", m->btf_id);
		jsonw_bool_field(json_wtr, "gpl_compatible", c->gpl_compatible);
		jsonw_string_field(json_wtr, "attach_func_name", m->attach_func_name);
		jsonw_uint_field(json_wtr, "bytes", m->bytes);
		jsonw_bool_field(json_wtr, "verified", verified == 0);
		jsonw_name(json_wtr, "functions");
		jsonw_start_array(json_wtr);
	} else {
		printf("hash             %s\n", bpfstash_entry_name(e));
		printf("name             %s\n", c->name[0] ? c->name : "-");
		printf("prog_id          %u\n", m->prog_id);
		printf("prog_type        %u\n", c->prog_type);
		if (is_image(m))
			printf("image            %s (%u call%s)\n", image_kind(m, kind, sizeof(kind)),
			       nr_calls, nr_calls == 1 ? "" : "s");
		printf("tag              %s\n", tag);
		printf("state            %s\n", bpfstash_entry_loaded(e) ? "loaded" : "unloaded");
		printf("load_time        %s\n", load);
		printf("unload_time      %s\n", unload);
		printf("uid              %u\n", m->uid);
		printf("loader           %s\n", loader_str(m, loader, sizeof(loader)));
		printf("boot_id          %s\n", boot_id);
		printf("machine          %s\n", machine_str(m, machine, sizeof(machine)));
		printf("jited_bytes      %u (%u poke site%s)\n", c->jited_len, c->nr_pokes,
		       c->nr_pokes == 1 ? "" : "s");
		printf("xlated_bytes     %u\n", c->xlated_len);
		printf("verified_insns   %u\n", c->verified_insns);
		printf("line_info        %u (jited: %u)\n", c->nr_line_info, c->nr_jited_line_info);
		printf("func_info        %u\n", c->nr_func_info);
		printf("btf_bytes        %u (btf_id %u at load)\n", c->btf_size, m->btf_id);
		printf("attach_target    %s\n", m->attach_func_name[0] ? m->attach_func_name : "-");
		printf("link             %s\n", link_str(m, link, sizeof(link)));
		printf("bytes            %llu\n", (unsigned long long)m->bytes);
		printf("content          %s\n", verified ? "MISMATCH: does not hash to its name" :
		       "verified");
		printf("functions:\n  %-3s %-16s %-16s %5s %-16s %s\n", "idx", "start", "end",
		       "size", "tag", "name");
	}
	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		const char *btf_name = bpfstash_entry_func_btf_name(e, i);

		tag_hex(f->tag, tag);
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "name", bpfstash_entry_func_name(e, i));
			if (btf_name)
				jsonw_string_field(json_wtr, "btf_name", btf_name);
			json_hex_field("addr", f->addr);
			jsonw_uint_field(json_wtr, "len", f->len);
			jsonw_uint_field(json_wtr, "offset", f->offset);
			jsonw_string_field(json_wtr, "tag", tag);
			jsonw_end_object(json_wtr);
		} else {
			printf("  %3u " ADDR_FMT " " ADDR_FMT " %5u %s %s%s%s%s\n", i, (uint64_t)f->addr,
			       (uint64_t)(f->addr + f->len), f->len, tag, bpfstash_entry_func_name(e, i),
			       btf_name ? " (" : "", btf_name ? btf_name : "", btf_name ? ")" : "");
		}
	}
	/* The programs an image calls, in its order; "entry": theirs, if stashed. */
	if (json_wtr) {
		jsonw_end_array(json_wtr);
		jsonw_name(json_wtr, "calls");
		jsonw_start_array(json_wtr);
	} else if (nr_calls) {
		printf("calls:\n  %-3s %-10s %8s %-16s %-40s %s\n", "idx", "kind", "prog_id",
		       "tag", "entry", "name");
	}
	for (i = 0; i < nr_calls; i++) {
		const struct bpfstash_call *cl = &calls[i];
		static const uint8_t zeros[BPFSTASH_HASH_SIZE];
		bool stashed = memcmp(cl->hash, zeros, sizeof(zeros));
		char name[BPFSTASH_NAME_LEN + 1];
		const char *ck;

		tag_hex(cl->tag, tag);
		bpfstash_hash_format(cl->hash, entry);
		snprintf(name, sizeof(name), "%.*s", BPFSTASH_NAME_LEN, cl->name);
		ck = kind_str(bpfstash_call_kind_name(cl->kind), cl->kind, kind, sizeof(kind));
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "kind", ck);
			jsonw_uint_field(json_wtr, "prog_id", cl->prog_id);
			jsonw_string_field(json_wtr, "tag", tag);
			jsonw_string_field(json_wtr, "name", name);
			json_hex_field("addr", cl->addr);
			if (stashed)
				jsonw_string_field(json_wtr, "entry", entry);
			else
				jsonw_null_field(json_wtr, "entry");
			jsonw_end_object(json_wtr);
		} else {
			printf("  %3u %-10s %8u %s %-40s %s\n", i, ck, cl->prog_id, tag,
			       stashed ? entry : "-", name[0] ? name : "-");
		}
	}
	if (json_wtr) {
		jsonw_end_array(json_wtr);
		jsonw_end_object(json_wtr);
	}
	bpfstash_entry_free(e);
	bpfstash_close(stash);
	return verified ? EXIT_FAIL : EXIT_OK;
}

/* JITed bytes [from, to) of a function, 16 to a line, offsets in front. */
static void print_bytes(const uint8_t *code, uint32_t from, uint32_t to)
{
	uint32_t i;

	for (i = from; i < to; i++) {
		if (i == from || !((i - from) % 16))
			printf("%s%4x:\t", i == from ? "" : "\n", i);
		printf("%02x%s", code[i], i + 1 < to && (i - from) % 16 != 15 ? " " : "");
	}
	if (to > from)
		printf("\n");
}

int do_lines(int argc, char **argv)
{
	struct bpfstash_location loc, next;
	struct bpfstash_entry *e;
	struct bpfstash *stash;
	const uint8_t *jited;
	uint32_t i, k = 0, nlines;
	size_t size;
	int ret;

	ret = one_entry(argc, argv, "lines", &stash, &e);
	if (ret)
		return ret;
	jited = bpfstash_entry_blob(e, BPFSTASH_JITED, &size);
	nlines = bpfstash_entry_nr_lines(e);
	if (json_wtr)
		jsonw_start_array(json_wtr);
	for (i = 0; i < bpfstash_entry_nr_funcs(e); i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);
		const char *btf_name = bpfstash_entry_func_btf_name(e, i);
		const uint8_t *code = jited + f->offset;
		uint32_t done = 0;

		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "name", bpfstash_entry_func_name(e, i));
			if (btf_name)
				jsonw_string_field(json_wtr, "btf_name", btf_name);
			json_hex_field("addr", f->addr);
			jsonw_uint_field(json_wtr, "len", f->len);
			jsonw_name(json_wtr, "lines");
			jsonw_start_array(json_wtr);
		} else {
			printf("%s%s%s:\n", btf_name ? btf_name : "", btf_name ? ": " : "",
			       bpfstash_entry_func_name(e, i));
		}
		/* The records come by (function, offset): this function's are next. */
		for (; k < nlines && !bpfstash_entry_line(e, k, &loc) && loc.func == i; k++) {
			uint32_t end = f->len;

			if (k + 1 < nlines && !bpfstash_entry_line(e, k + 1, &next) &&
			    next.func == i)
				end = next.func_off;
			if (json_wtr) {
				jsonw_start_object(json_wtr);
				jsonw_uint_field(json_wtr, "off", loc.func_off);
				json_hex_field("addr", loc.addr);
				jsonw_uint_field(json_wtr, "len", end - loc.func_off);
				jsonw_string_field(json_wtr, "file", loc.file);
				jsonw_uint_field(json_wtr, "line", loc.line);
				jsonw_uint_field(json_wtr, "col", loc.col);
				jsonw_string_field(json_wtr, "source", loc.source);
				jsonw_end_object(json_wtr);
				continue;
			}
			if (loc.func_off > done)	/* code before the first record */
				print_bytes(code, done, loc.func_off);
			printf("; %s [file:%s line_num:%u line_col:%u]\n", loc.source, loc.file,
			       loc.line, loc.col);
			print_bytes(code, loc.func_off, end);
			done = end > done ? end : done;
		}
		if (json_wtr) {
			jsonw_end_array(json_wtr);
			jsonw_end_object(json_wtr);
		} else {
			if (done < f->len)
				print_bytes(code, done, f->len);
			printf("\n");
		}
	}
	if (json_wtr)
		jsonw_end_array(json_wtr);
	bpfstash_entry_free(e);
	bpfstash_close(stash);
	return EXIT_OK;
}

/* Hex digits, with an optional 0x, into @v; false if not a number. */
/*
 * An entry's text file as the kernel shows it, rendered here from the
 * binary files: for copies of a stash without the text files, and to check
 * the kernel's text against it.
 */
int do_render(int argc, char **argv)
{
	struct bpfstash_entry *e;
	struct bpfstash *stash;
	const char *file;
	unsigned int i;
	size_t len;
	char *text;
	int ret;

	if (argc != 2)
		return usage_error("render takes HASH and FILE, %d arguments given", argc);
	file = argv[1];
	for (i = 0; bpfstash_view_name(i); i++)
		if (!strcmp(bpfstash_view_name(i), file))
			break;
	if (!bpfstash_view_name(i))
		return usage_error("render: '%s' is not a text file of an entry "
				   "(info, functions or lines)", file);
	ret = one_entry(1, argv, "render", &stash, &e);
	if (ret)
		return ret;
	ret = bpfstash_entry_render(e, file, &text, &len);
	if (ret) {
		p_err("%s: cannot render %s: %s", bpfstash_entry_name(e), file, errstr(ret));
	} else if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "hash", bpfstash_entry_name(e));
		jsonw_string_field(json_wtr, "file", file);
		jsonw_string_field(json_wtr, "text", text);
		jsonw_end_object(json_wtr);
	} else {
		fwrite(text, 1, len, stdout);
	}
	free(text);
	bpfstash_entry_free(e);
	bpfstash_close(stash);
	return ret ? EXIT_FAIL : EXIT_OK;
}

static bool parse_hex(const char *s, uint64_t *v)
{
	char *end;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	if (!*s || strlen(s) > 16 || strspn(s, "0123456789abcdefABCDEF") != strlen(s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	return !errno && !*end;
}

/* An offset: 0x for hex, else decimal. */
static bool parse_offset(const char *s, uint64_t *v)
{
	char *end;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		return parse_hex(s, v);
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static void print_location(const struct bpfstash_entry *e, const struct bpfstash_location *l)
{
	if (json_wtr) {
		jsonw_start_object(json_wtr);
		json_hex_field("addr", l->addr);
		jsonw_string_field(json_wtr, "hash", bpfstash_entry_name(e));
		jsonw_string_field(json_wtr, "prog_name", bpfstash_entry_meta(e)->content.name);
		jsonw_bool_field(json_wtr, "loaded", bpfstash_entry_loaded(e));
		jsonw_string_field(json_wtr, "func", l->func_name);
		if (l->btf_name)
			jsonw_string_field(json_wtr, "btf_name", l->btf_name);
		json_hex_field("func_addr", l->func_addr);
		jsonw_uint_field(json_wtr, "func_off", l->func_off);
		if (l->has_line) {
			jsonw_string_field(json_wtr, "file", l->file);
			jsonw_uint_field(json_wtr, "line", l->line);
			jsonw_uint_field(json_wtr, "col", l->col);
			jsonw_string_field(json_wtr, "source", l->source);
			json_hex_field("line_addr", l->line_addr);
		}
		jsonw_end_object(json_wtr);
		return;
	}
	/* Tab-separated, source last (it may hold anything). */
	printf(ADDR_FMT "\t%s\t%s\t%s+0x%x\t", l->addr, bpfstash_entry_name(e),
	       bpfstash_entry_loaded(e) ? "loaded" : "unloaded", l->func_name, l->func_off);
	if (l->has_line)
		printf("%s:%u:%u\t%s\n", l->file, l->line, l->col, l->source);
	else
		printf("?\t\n");
}

/* When a candidate's program was loaded: "LOAD..UNLOAD (boot +S..+S s)". */
static void format_span(const struct bpfstash_candidate *c, char *buf, size_t size)
{
	char a[32], b[32] = "";
	char ub[40] = "";

	format_time(c->load_time_real, a, sizeof(a));
	if (c->unload_time) {
		format_time(c->unload_time_real, b, sizeof(b));
		snprintf(ub, sizeof(ub), "+%llu.%09llu",
			 (unsigned long long)(c->unload_time / 1000000000ull),
			 (unsigned long long)(c->unload_time % 1000000000ull));
	}
	snprintf(buf, size, "%s..%s (boot +%llu.%09llu..%s s)%s", a, b,
		 (unsigned long long)(c->load_time / 1000000000ull),
		 (unsigned long long)(c->load_time % 1000000000ull), ub,
		 c->unload_time ? "" : " still loaded");
}

void print_candidates(const struct bpfstash_candidates *cands, bool only_at_time)
{
	const struct bpfstash_candidate *c;
	char when[160], a[32], b[32];
	size_t i;

	for (i = 0; (c = bpfstash_candidates_get(cands, i)); i++) {
		if (only_at_time && !c->at_time)
			continue;
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "hash", c->hash);
			jsonw_string_field(json_wtr, "prog_name", c->prog_name);
			jsonw_uint_field(json_wtr, "prog_id", c->prog_id);
			jsonw_bool_field(json_wtr, "loaded", c->loaded);
			jsonw_bool_field(json_wtr, "at_time", c->at_time);
			json_hex_field("addr", c->addr);
			jsonw_u64_string_field(json_wtr, "load_time_boot_ns", c->load_time);
			jsonw_u64_string_field(json_wtr, "unload_time_boot_ns", c->unload_time);
			format_time(c->load_time_real, a, sizeof(a));
			format_time(c->unload_time_real, b, sizeof(b));
			jsonw_string_field(json_wtr, "load_time", a);
			jsonw_string_field(json_wtr, "unload_time", b);
			jsonw_u64_string_field(json_wtr, "load_time_ns", c->load_time_real);
			jsonw_u64_string_field(json_wtr, "unload_time_ns", c->unload_time_real);
			jsonw_end_object(json_wtr);
		} else {
			format_span(c, when, sizeof(when));
			fprintf(stderr, "  candidate %s %-16s %s\n", c->hash,
				c->prog_name[0] ? c->prog_name : "-", when);
		}
	}
}

int parse_at(const char *arg, struct bpfstash_resolve_opts *o)
{
	if (decode_parse_time(arg, strlen(arg), o))
		return usage_error("--at '%s' is not a time: SECONDS.FRACTION since boot, "
				   "@SECONDS since the epoch, or YYYY-MM-DDTHH:MM:SS[.F][Z] (UTC)",
				   arg);
	return EXIT_OK;
}

/* Report a failed time-aware resolution; returns EXIT_*. */
static int report_unresolved(int err, const char *what, const struct bpfstash_resolve_opts *o,
			     const struct bpfstash_candidates *cands)
{
	size_t n = bpfstash_candidates_count(cands);

	if (err == -EADDRNOTAVAIL) {
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "query", what);
			jsonw_string_field(json_wtr, "error", o->clock ?
					   "ambiguous: several entries held it at that time" :
					   "ambiguous: the address was reused; give a time (--at)");
			jsonw_name(json_wtr, "candidates");
			jsonw_start_array(json_wtr);
			print_candidates(cands, true);
			jsonw_end_array(json_wtr);
			jsonw_end_object(json_wtr);
		} else {
			fprintf(stderr, "Error: %s: ambiguous: held by %zu entries%s\n", what, n,
				o->clock ? " at that time" : "; give a time (--at)");
			print_candidates(cands, true);
		}
		return EXIT_FAIL;
	}
	if (err == -ENOENT && n) {
		if (json_wtr) {
			jsonw_start_object(json_wtr);
			jsonw_string_field(json_wtr, "query", what);
			jsonw_string_field(json_wtr, "error", "no entry held it at that time");
			jsonw_name(json_wtr, "candidates");
			jsonw_start_array(json_wtr);
			print_candidates(cands, false);
			jsonw_end_array(json_wtr);
			jsonw_end_object(json_wtr);
		} else {
			fprintf(stderr, "Error: %s: no entry held it at that time; %zu did at other "
				"times:\n", what, n);
			print_candidates(cands, false);
		}
		return EXIT_FAIL;
	}
	if (err == -ENOENT) {
		p_err("%s: in no entry of %s", what, opts.root);
		return EXIT_FAIL;
	}
	p_err("%s: %s", opts.root, strerror(-err));
	return EXIT_NOSTASH;
}

/* The sized location, as the calls of struct bpfstash_location give it. */
static void loc_from(const struct bpfstash_loc *l, struct bpfstash_location *loc)
{
	*loc = (struct bpfstash_location){
		.addr = l->addr, .func = l->func, .func_addr = l->func_addr,
		.func_off = l->func_off, .func_name = l->func_name, .btf_name = l->btf_name,
		.has_line = l->has_line, .line_idx = l->line_idx, .line_addr = l->line_addr,
		.file = l->file, .line = l->line, .col = l->col, .source = l->source,
	};
}

/*
 * One argument; addresses through @idx, made at the first one: one read
 * of the stash for all the addresses of the command line.
 */
static int resolve_one(struct bpfstash *stash, struct bpfstash_index **idx, const char *arg,
		       const struct bpfstash_resolve_opts *when)
{
	struct bpfstash_loc l = { .sz = sizeof(l) };
	struct bpfstash_candidates *cands = NULL;
	struct bpfstash_location loc;
	struct bpfstash_entry *e;
	const char *plus = strchr(arg, '+');
	char what[32];
	uint64_t v;
	int err, ret;

	if (plus) {
		char hash[BPFSTASH_HEX_LEN + 1], name[BPFSTASH_HEX_LEN + 1];
		size_t len = plus - arg;

		if (len > BPFSTASH_HEX_LEN || !parse_offset(plus + 1, &v))
			return usage_error("'%s' is not HASH+OFFSET", arg);
		memcpy(hash, arg, len);
		hash[len] = '\0';
		ret = stash_lookup(stash, hash, name);
		if (!ret)
			ret = stash_load(stash, name, 0, &e);
		if (ret)
			return ret;
		err = bpfstash_entry_resolve_offset(e, v, &loc);
		if (err)
			p_err("%s: offset 0x%" PRIx64 " is past the end of the jited file", arg, v);
		else
			print_location(e, &loc);
		bpfstash_entry_free(e);
		return err ? EXIT_FAIL : EXIT_OK;
	}
	if (!parse_hex(arg, &v))
		return usage_error("'%s' is not an address or HASH+OFFSET", arg);
	if (!*idx) {
		err = bpfstash_index_open(stash, idx);
		if (err) {
			p_err("%s: %s", opts.root, strerror(-err));
			return EXIT_NOSTASH;
		}
	}
	/* Never a guess: a reused address without a time is ambiguous. */
	err = bpfstash_index_resolve_at(*idx, v, when, &e, &l, &cands);
	if (!err)
		loc_from(&l, &loc);
	if (err) {
		snprintf(what, sizeof(what), ADDR_FMT, v);
		ret = report_unresolved(err, what, when, cands);
		bpfstash_candidates_free(cands);
		return ret;
	}
	print_location(e, &loc);
	bpfstash_entry_free(e);
	bpfstash_candidates_free(cands);
	return EXIT_OK;
}

int do_resolve(int argc, char **argv)
{
	struct bpfstash_resolve_opts when = { .sz = sizeof(when) };
	struct bpfstash_index *idx = NULL;
	struct bpfstash *stash;
	int i, ret, worst = EXIT_OK;

	if (!argc)
		return usage_error("resolve needs an ADDR or HASH+OFFSET");
	if (opts.at && parse_at(opts.at, &when))
		return EXIT_USAGE;
	if (opts.boot_id_given)
		when.boot_id = opts.boot_id;
	ret = stash_open(&stash);
	if (ret)
		return ret;
	if (json_wtr)
		jsonw_start_array(json_wtr);
	for (i = 0; i < argc; i++) {
		ret = resolve_one(stash, &idx, argv[i], &when);
		/* the gravest wins: usage, then no stash, then not found */
		if (ret == EXIT_USAGE || (ret && worst != EXIT_USAGE && ret > worst))
			worst = ret;
	}
	if (json_wtr)
		jsonw_end_array(json_wtr);
	bpfstash_index_free(idx);
	bpfstash_close(stash);
	return worst;
}

/* The entries named on the command line, or all of them. */
static int collect_names(struct bpfstash *stash, int argc, char **argv, char ***out,
			 size_t *count)
{
	char **names;
	int i, ret;

	if (!argc) {
		ret = bpfstash_list(stash, out, count);
		if (ret) {
			p_err("cannot list %s: %s", opts.root, strerror(-ret));
			return EXIT_NOSTASH;
		}
		return EXIT_OK;
	}
	names = calloc(argc + 1, sizeof(*names));
	if (!names)
		return EXIT_FAIL;
	*count = 0;
	for (i = 0; i < argc; i++) {
		char name[BPFSTASH_HEX_LEN + 1];

		ret = stash_lookup(stash, argv[i], name);
		if (ret) {
			bpfstash_names_free(names);
			return ret;
		}
		names[(*count)++] = strdup(name);
		if (!names[*count - 1]) {
			bpfstash_names_free(names);
			return EXIT_FAIL;
		}
	}
	*out = names;
	return EXIT_OK;
}

static void report(const char *name, const char *key, const char *value, const char *error)
{
	if (json_wtr) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "hash", name);
		jsonw_bool_field(json_wtr, "ok", !error);
		if (value)
			jsonw_string_field(json_wtr, key, value);
		if (error)
			jsonw_string_field(json_wtr, "error", error);
		jsonw_end_object(json_wtr);
	} else if (error) {
		printf("FAIL %s: %s\n", name, error);
	} else {
		printf("%s%s%s%s\n", key ? "" : "OK ", name, value ? " " : "", value ? value : "");
	}
}

int do_verify(int argc, char **argv)
{
	struct bpfstash *stash;
	size_t count, i, failed = 0;
	bool newer = false;
	char **names, buf[352];
	int ret;

	ret = stash_open(&stash);
	if (ret)
		return ret;
	ret = collect_names(stash, argc, argv, &names, &count);
	if (ret) {
		bpfstash_close(stash);
		return ret;
	}
	if (json_wtr)
		jsonw_start_array(json_wtr);
	for (i = 0; i < count; i++) {
		struct bpfstash_entry *e;
		int err = bpfstash_entry_load(stash, names[i], 0, &e);

		if (!err) {
			err = bpfstash_entry_verify(e);
			bpfstash_entry_free(e);
			if (err == -EBADMSG) {
				/* "the content hashes to <hash>" */
				snprintf(buf, sizeof(buf), "content does not hash to its name (%s)",
					 bpfstash_error_detail());
				report(names[i], NULL, NULL, buf);
				failed++;
				continue;
			}
		}
		if (err) {
			report(names[i], NULL, NULL, err == -ENOENT ?
			       "missing (the entry, or one of its files)" :
			       entry_errstr(stash, names[i], err, buf, sizeof(buf)));
			failed++;
			newer |= err == -EPROTONOSUPPORT;
			continue;
		}
		report(names[i], NULL, NULL, NULL);
	}
	if (json_wtr)
		jsonw_end_array(json_wtr);
	else
		p_info("%zu entries verified, %zu failed", count, failed);
	bpfstash_names_free(names);
	bpfstash_close(stash);
	return newer ? EXIT_FORMAT : failed ? EXIT_FAIL : EXIT_OK;
}

int do_export(int argc, char **argv)
{
	struct bpfstash *stash;
	size_t count, i, failed = 0;
	bool newer = false;
	char **names, buf[352];
	char path[4096];
	int ret;

	if (!opts.to)
		return usage_error("export needs --to DIR");
	if (!argc)
		return usage_error("export needs at least one HASH");
	ret = stash_open(&stash);
	if (ret)
		return ret;
	ret = collect_names(stash, argc, argv, &names, &count);
	if (ret) {
		bpfstash_close(stash);
		return ret;
	}
	if (json_wtr)
		jsonw_start_array(json_wtr);
	for (i = 0; i < count; i++) {
		struct bpfstash_entry *e;
		int err = bpfstash_entry_load(stash, names[i], 0, &e);

		/* A build-id must name what the file holds: verify first. */
		if (!err) {
			err = bpfstash_entry_verify(e);
			if (!err)
				err = bpfstash_entry_export_build_id(e, opts.to, path,
								     sizeof(path));
			bpfstash_entry_free(e);
		}
		if (err) {
			if (err == -EBADMSG)
				snprintf(buf, sizeof(buf), "%s: not exported", errstr(err));
			report(names[i], NULL, NULL, err == -EBADMSG ? buf :
			       err == -EOPNOTSUPP ?
			       "its code is of an architecture this tool cannot export" :
			       entry_errstr(stash, names[i], err, buf, sizeof(buf)));
			failed++;
			newer |= err == -EPROTONOSUPPORT;
			continue;
		}
		report(names[i], "path", path, NULL);
	}
	if (json_wtr)
		jsonw_end_array(json_wtr);
	bpfstash_names_free(names);
	bpfstash_close(stash);
	return newer ? EXIT_FORMAT : failed ? EXIT_FAIL : EXIT_OK;
}
