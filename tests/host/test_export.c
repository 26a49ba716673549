// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ELF export of entries captured from the kernel, read back with
 * libelf and with tools nobody here wrote: readelf, objdump, addr2line
 * (binutils) and eu-addr2line (libdw, as perf uses it).  The expected
 * values come from the fixture's manifest and from what bpftool printed
 * while the program was loaded, not from the entry being exported.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include <libelf.h>
#include <openssl/sha.h>

#include "libbpfstash.h"
#include "internal.h"
#include "fixtures.h"

static const char *const fixture_names[] = { "subprogs", "tiny", "large" };
#define NR_FIXTURES (sizeof(fixture_names) / sizeof(fixture_names[0]))

struct exported {
	struct fixture fx;
	struct bpfstash_entry *e;
	char path[64];
	uint8_t *image;		/* bpftool's raw image of the program */
	size_t image_size;
};

static void export_fixture(const char *name, struct exported *x)
{
	int fd;

	fixture_get(name, &x->fx);
	x->e = fixture_load(&x->fx);
	snprintf(x->path, sizeof(x->path), "/tmp/bpfstash-export-XXXXXX");
	fd = mkstemp(x->path);
	assert_true(fd >= 0);
	assert_int_equal(bpfstash_entry_export_elf(x->e, fd), 0);
	close(fd);
	x->image = fixture_read_file(FIXTURES "/bpftool", name, ".jited", &x->image_size);
}

static void exported_free(struct exported *x)
{
	unlink(x->path);
	bpfstash_entry_free(x->e);
	free(x->image);
}

/* Run @cmd with the shell, its stdout into a new string; returns the exit status. */
static int run(const char *cmd, char **out)
{
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap);
	FILE *p;
	int st;

	assert_non_null(buf);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int have(const char *tool)
{
	char cmd[128], *out;
	int rc;

	snprintf(cmd, sizeof(cmd), "command -v %s", tool);
	rc = run(cmd, &out);
	free(out);
	return rc == 0;
}

/* The .text section at @addr, or NULL. */
static Elf_Scn *text_at(Elf *elf, uint64_t addr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (sh->sh_flags & SHF_EXECINSTR) && sh->sh_addr == addr)
			return scn;
	return NULL;
}

/* libelf: the build-id note, a .text and a PT_LOAD per function, the symbols. */
static void test_elf_contents(void **state)
{
	size_t k;

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	for (k = 0; k < NR_FIXTURES; k++) {
		uint8_t want_id[BPFSTASH_HASH_SIZE];
		size_t shstrndx, nphdr, texts = 0, i;
		bool note_seen = false, pt_note = false;
		struct exported x;
		GElf_Ehdr ehdr;
		GElf_Shdr sh;
		Elf_Scn *scn = NULL, *symscn = NULL;
		Elf *elf;
		int fd;

		export_fixture(fixture_names[k], &x);
		assert_int_equal(bpfstash_hash_parse(x.fx.hash, want_id), 0);
		fd = open(x.path, O_RDONLY);
		assert_true(fd >= 0);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		assert_non_null(elf);
		assert_int_equal(elf_kind(elf), ELF_K_ELF);
		assert_non_null(gelf_getehdr(elf, &ehdr));
		assert_int_equal(ehdr.e_type, ET_EXEC);
#ifdef __x86_64__
		assert_int_equal(ehdr.e_machine, EM_X86_64);
#endif
		assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);

		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;

			assert_non_null(gelf_getshdr(scn, &sh));
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			assert_non_null(name);
			if (sh.sh_type == SHT_SYMTAB)
				symscn = scn;
			if (sh.sh_flags & SHF_EXECINSTR) {
				assert_string_equal(name, ".text");
				texts++;
			}
			if (sh.sh_type == SHT_NOTE) {
				Elf_Data *d = elf_getdata(scn, NULL);
				size_t off = 0, name_off, desc_off;
				GElf_Nhdr nh;

				assert_string_equal(name, ".note.gnu.build-id");
				assert_non_null(d);
				off = gelf_getnote(d, off, &nh, &name_off, &desc_off);
				assert_true(off > 0);
				assert_int_equal(nh.n_type, NT_GNU_BUILD_ID);
				assert_int_equal(nh.n_namesz, 4);
				assert_memory_equal((char *)d->d_buf + name_off, "GNU", 4);
				assert_int_equal(nh.n_descsz, BPFSTASH_HASH_SIZE);
				assert_memory_equal((uint8_t *)d->d_buf + desc_off, want_id,
						    BPFSTASH_HASH_SIZE);
				note_seen = true;
			}
		}
		assert_true(note_seen);
		assert_int_equal(texts, bpfstash_entry_nr_funcs(x.e));

		/* Each function: its bytes, as bpftool dumped them, at its address. */
		assert_int_equal(elf_getphdrnum(elf, &nphdr), 0);
		for (i = 0; i < bpfstash_entry_nr_funcs(x.e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(x.e, i);
			Elf_Data *d;
			bool loaded = false;
			size_t p;

			scn = text_at(elf, f->addr, &sh);
			assert_non_null(scn);
			assert_int_equal(sh.sh_size, f->len);
			assert_int_equal(sh.sh_type, SHT_PROGBITS);
			assert_true(sh.sh_flags & SHF_ALLOC);
			d = elf_getdata(scn, NULL);
			assert_non_null(d);
			assert_int_equal(d->d_size, f->len);
			assert_true(f->offset + f->len <= x.image_size);
			assert_memory_equal(d->d_buf, x.image + f->offset, f->len);
			for (p = 0; p < nphdr; p++) {
				GElf_Phdr ph;

				assert_non_null(gelf_getphdr(elf, p, &ph));
				if (ph.p_type == PT_NOTE)
					pt_note = true;
				if (ph.p_type != PT_LOAD || ph.p_vaddr != f->addr)
					continue;
				assert_int_equal(ph.p_filesz, f->len);
				assert_int_equal(ph.p_memsz, f->len);
				assert_int_equal(ph.p_offset, sh.sh_offset);
				assert_int_equal(ph.p_offset % ph.p_align, ph.p_vaddr % ph.p_align);
				assert_true(ph.p_flags & PF_X);
				loaded = true;
			}
			assert_true(loaded);
		}
		assert_true(pt_note);

		/* A global function symbol per function, named as in kallsyms. */
		assert_non_null(symscn);
		for (i = 0; i < bpfstash_entry_nr_funcs(x.e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(x.e, i);
			Elf_Data *d = elf_getdata(symscn, NULL);
			GElf_Shdr symsh;
			bool found = false;
			size_t s;

			assert_non_null(gelf_getshdr(symscn, &symsh));
			for (s = 0; s < symsh.sh_size / symsh.sh_entsize; s++) {
				GElf_Sym sym;
				const char *name;

				assert_non_null(gelf_getsym(d, s, &sym));
				name = elf_strptr(elf, symsh.sh_link, sym.st_name);
				if (!name || strcmp(name, bpfstash_entry_func_name(x.e, i)))
					continue;
				assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_FUNC);
				assert_int_equal(GELF_ST_BIND(sym.st_info), STB_GLOBAL);
				assert_true(sym.st_value == f->addr);
				assert_int_equal(sym.st_size, f->len);
				assert_int_equal(elf_ndxscn(text_at(elf, f->addr, &sh)), sym.st_shndx);
				found = true;
			}
			assert_true(found);
		}
		elf_end(elf);
		close(fd);
		exported_free(&x);
	}
}

static void test_readelf_build_id(void **state)
{
	size_t k;

	if (!have("readelf"))
		skip();
	for (k = 0; k < NR_FIXTURES; k++) {
		char cmd[256], want[128], *out;
		struct exported x;

		export_fixture(fixture_names[k], &x);
		snprintf(cmd, sizeof(cmd), "readelf -n %s", x.path);
		assert_int_equal(run(cmd, &out), 0);
		snprintf(want, sizeof(want), "Build ID: %s\n", x.fx.hash);
		if (!strstr(out, want))
			fail_msg("readelf -n: no '%s' in:\n%s", want, out);
		free(out);
		exported_free(&x);
	}
}

/*
 * objdump -d over each function: it is named by its symbol, decodes
 * without "(bad)", and the bytes it shows are bpftool's image.
 */
static void test_objdump_disassembles(void **state)
{
	size_t k;

	if (!have("objdump"))
		skip();
	for (k = 0; k < NR_FIXTURES; k++) {
		struct exported x;
		uint32_t i;

		export_fixture(fixture_names[k], &x);
		for (i = 0; i < bpfstash_entry_nr_funcs(x.e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(x.e, i);
			char cmd[512], want[256], *out, *line, *save = NULL;
			uint8_t *bytes = malloc(f->len + 16);
			size_t n = 0, insns = 0;

			assert_non_null(bytes);
			snprintf(cmd, sizeof(cmd),
				 "objdump -d --start-address=0x%llx --stop-address=0x%llx %s",
				 (unsigned long long)f->addr,
				 (unsigned long long)(f->addr + f->len), x.path);
			assert_int_equal(run(cmd, &out), 0);
			snprintf(want, sizeof(want), "%016llx <%s>:", (unsigned long long)f->addr,
				 bpfstash_entry_func_name(x.e, i));
			if (!strstr(out, want))
				fail_msg("objdump: no '%s' in:\n%s", want, out);
			assert_null(strstr(out, "(bad)"));
			/* "<addr>:\t<hex bytes> \t<insn>", long ones on more lines */
			for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
				char *tab = strchr(line, '\t'), *p;
				unsigned int b;
				int used;

				if (!tab || tab[-1] != ':' || strspn(line, " 0123456789abcdef") != (size_t)(tab - 1 - line))
					continue;
				insns += strchr(tab + 1, '\t') != NULL;
				for (p = tab + 1; sscanf(p, " %2x%n", &b, &used) == 1 && (p[used] == ' ' || p[used] == '\t' || !p[used]); p += used) {
					assert_true(n < f->len);
					bytes[n++] = b;
					if (p[used] == '\t')
						break;
				}
			}
			assert_int_equal(n, f->len);
			assert_memory_equal(bytes, x.image + f->offset, f->len);
			assert_true(insns >= 3);
			free(bytes);
			free(out);
		}
		exported_free(&x);
	}
}

/*
 * A line-table reader on every address bpftool annotated: @cmd reads
 * addresses on stdin, prints one "file:line[:col]" each.
 */
static void check_line_tool(const char *tool, bool with_col)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		char addrs[] = "/tmp/bpfstash-addrs-XXXXXX", cmd[512], *out, *line, *save = NULL;
		struct linum_row *rows;
		struct exported x;
		size_t n, r, checked = 0;
		FILE *f;
		int fd;

		export_fixture(fixture_names[k], &x);
		rows = fixture_linum(fixture_names[k], x.e, &n);
		fd = mkstemp(addrs);
		assert_true(fd >= 0);
		f = fdopen(fd, "w");
		for (r = 0; r < n; r++)
			fprintf(f, "0x%llx\n", (unsigned long long)
				(bpfstash_entry_func(x.e, rows[r].func)->addr + rows[r].off));
		fclose(f);
		snprintf(cmd, sizeof(cmd), "%s -e %s < %s", tool, x.path, addrs);
		assert_int_equal(run(cmd, &out), 0);
		line = strtok_r(out, "\n", &save);
		for (r = 0; r < n; r++, line = strtok_r(NULL, "\n", &save)) {
			char want[1200], *disc;

			if (!line)
				fail_msg("%s: %zu lines for %zu addresses", tool, r, n);
			disc = strstr(line, " (discriminator");
			if (disc)
				*disc = '\0';
			if (!rows[r].has_line) {
				if (strncmp(line, "??", 2))
					fail_msg("%s: %s+0x%x has no line in bpftool, got %s", tool,
						 bpfstash_entry_func_name(x.e, rows[r].func), rows[r].off, line);
				continue;
			}
			if (with_col && rows[r].col)
				snprintf(want, sizeof(want), "%s:%u:%u", rows[r].file, rows[r].line,
					 rows[r].col);
			else
				snprintf(want, sizeof(want), "%s:%u", rows[r].file, rows[r].line);
			if (strcmp(line, want))
				fail_msg("%s: %s+0x%x: %s, bpftool %s", tool,
					 bpfstash_entry_func_name(x.e, rows[r].func), rows[r].off, line, want);
			checked++;
		}
		assert_null(line);
		assert_true(checked * 10 >= n * 9);
		free(out);
		free(rows);
		unlink(addrs);
		exported_free(&x);
	}
}

static void test_addr2line_matches_bpftool(void **state)
{
	if (!have("addr2line"))
		skip();
	check_line_tool("addr2line", false);
}

/* libdw, the DWARF reader perf uses, prints the column too. */
static void test_libdw_matches_bpftool(void **state)
{
	if (!have("eu-addr2line"))
		skip();
	check_line_tool("eu-addr2line", true);
}

/* DIR/.build-id/xx/<38 hex>.debug, complete, readable, and replaced whole. */
static void test_build_id_tree(void **state)
{
	char dir[] = "/tmp/bpfstash-tree-XXXXXX", path[4096], want[4200], cmd[4300], *out;
	struct exported x;
	struct stat st;
	void *a, *b;
	size_t asz, bsz;

	export_fixture("subprogs", &x);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bpfstash_entry_export_build_id(x.e, dir, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/.build-id/%.2s/%s.debug", dir, x.fx.hash, x.fx.hash + 2);
	assert_string_equal(path, want);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644);
	/* the same bytes as bpfstash_entry_export_elf() */
	a = fixture_read_path(path, &asz);
	b = fixture_read_path(x.path, &bsz);
	assert_int_equal(asz, bsz);
	assert_memory_equal(a, b, asz);
	free(a);
	free(b);
	/* again: replaced, and no temporary file left beside it */
	assert_int_equal(bpfstash_entry_export_build_id(x.e, dir, path, sizeof(path)), 0);
	snprintf(cmd, sizeof(cmd), "ls -A %s/.build-id/%.2s", dir, x.fx.hash);
	assert_int_equal(run(cmd, &out), 0);
	snprintf(want, sizeof(want), "%s.debug\n", x.fx.hash + 2);
	assert_string_equal(out, want);
	free(out);

	/* errors: a path too long for the buffer, a file in the way */
	assert_int_equal(bpfstash_entry_export_build_id(x.e, dir, path, 10), -ENAMETOOLONG);
	snprintf(want, sizeof(want), "%s/file", dir);
	fixture_write_path(want, "x", 1);
	assert_int_equal(bpfstash_entry_export_build_id(x.e, want, path, sizeof(path)), -ENOTDIR);
	assert_int_equal(bpfstash_entry_export_build_id(x.e, "", path, sizeof(path)), -EINVAL);
	fixture_rmtree(dir);
	exported_free(&x);
}

/* The same bytes every time, whatever the file held before; no pipes. */
static void test_export_deterministic(void **state)
{
	char path[] = "/tmp/bpfstash-junk-XXXXXX";
	struct exported x;
	void *a, *b, *junk;
	size_t asz, bsz;
	int fd, p[2];

	export_fixture("large", &x);
	a = fixture_read_path(x.path, &asz);
	junk = malloc(asz * 2);
	assert_non_null(junk);
	memset(junk, 0xa5, asz * 2);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, asz * 2), (ssize_t)asz * 2);
	assert_int_equal(bpfstash_entry_export_elf(x.e, fd), 0);
	close(fd);
	b = fixture_read_path(path, &bsz);
	assert_int_equal(asz, bsz);
	assert_memory_equal(a, b, asz);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(bpfstash_entry_export_elf(x.e, p[1]), -EINVAL);
	close(p[0]);
	close(p[1]);
	unlink(path);
	free(a);
	free(b);
	free(junk);
	exported_free(&x);
}

/* Only a fully loaded entry can be exported. */
static void test_export_needs_full_entry(void **state)
{
	struct bpfstash_entry *e;
	struct fixture fx;
	struct bpfstash *s;
	int fd;

	fixture_get("tiny", &fx);
	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_int_equal(bpfstash_entry_load(s, fx.hash, BPFSTASH_LOAD_META, &e), 0);
	fd = open("/dev/null", O_WRONLY);
	assert_int_equal(bpfstash_entry_export_elf(e, fd), -EINVAL);
	close(fd);
	bpfstash_entry_free(e);
	bpfstash_close(s);
}

/*
 * An entry carries its machine: made on another architecture (tiny's
 * entry as an arm64 kernel would name it: content.machine EM_AARCH64,
 * named by its hash), it verifies here and exports with that e_machine,
 * whatever this host is; one of a machine this library does not know is
 * not exported (-EOPNOTSUPP), and still verifies.
 */
static void test_export_other_machine(void **state)
{
	static const char *const files[] = {
		"funcs", "jited", "line_info", "jited_line_info", "func_info", "btf",
	};
	static const uint16_t machines[] = { EM_AARCH64, 0x7777 };
	char dir[] = "/tmp/bpfstash-machine-XXXXXX", path[600], hex[BPFSTASH_HEX_LEN + 1];
	uint8_t hash[BPFSTASH_HASH_SIZE];
	struct bpfstash_entry *e, *other;
	struct fixture fx;
	struct bpfstash *s;
	GElf_Ehdr ehdr;
	Elf *elf;
	size_t k;
	int fd;

	fixture_get("tiny", &fx);
	assert_non_null(mkdtemp(dir));
	for (k = 0; k < sizeof(machines) / sizeof(machines[0]); k++) {
		struct bpfstash_meta m;

		e = fixture_load(&fx);
		e->meta.content.machine = machines[k];
		assert_int_equal(bpfstash_entry_compute_hash(e, hash), 0);
		bpfstash_hash_format(hash, hex);
		m = e->meta;
		memcpy(m.hash, hash, sizeof(hash));
		assert_int_equal(fixture_sh("mkdir %s/%s && cd %s/stash/%s && cp %s %s %s %s %s %s "
					    "%s/%s/", dir, hex, FIXTURES, fx.hash, files[0], files[1],
					    files[2], files[3], files[4], files[5], dir, hex), 0);
		snprintf(path, sizeof(path), "%s/%s/meta", dir, hex);
		fixture_write_path(path, &m, sizeof(m));
		bpfstash_entry_free(e);

		assert_int_equal(bpfstash_open(dir, &s), 0);
		assert_int_equal(bpfstash_entry_load(s, hex, 0, &other), 0);
		assert_int_equal(bpfstash_entry_verify(other), 0);
		snprintf(path, sizeof(path), "%s/%s.debug", dir, hex);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		if (machines[k] == 0x7777) {
			assert_int_equal(bpfstash_entry_export_elf(other, fd), -EOPNOTSUPP);
		} else {
			assert_int_equal(bpfstash_entry_export_elf(other, fd), 0);
			assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
			elf = elf_begin(fd, ELF_C_READ, NULL);
			assert_non_null(elf);
			assert_non_null(gelf_getehdr(elf, &ehdr));
			assert_int_equal(ehdr.e_machine, EM_AARCH64);
			elf_end(elf);
		}
		close(fd);
		bpfstash_entry_free(other);
		bpfstash_close(s);
	}
	fixture_rmtree(dir);
}

/*
 * One function alone (LIBBPFSTASH_1.3).  Its build-id, recomputed here
 * from the header's words: the first 20 bytes of SHA-256 over
 * "bpfstash-func-v1", the entry's hash and the index as a little-endian u32.
 */
static void func_build_id_want(const char *hash_hex, uint32_t func,
			       uint8_t want[BPFSTASH_HASH_SIZE])
{
	uint8_t buf[16 + BPFSTASH_HASH_SIZE + 4], md[SHA256_DIGEST_LENGTH];

	memcpy(buf, "bpfstash-func-v1", 16);
	assert_int_equal(bpfstash_hash_parse(hash_hex, buf + 16), 0);
	buf[36] = func & 0xff;
	buf[37] = (func >> 8) & 0xff;
	buf[38] = (func >> 16) & 0xff;
	buf[39] = func >> 24;
	SHA256(buf, sizeof(buf), md);
	memcpy(want, md, BPFSTASH_HASH_SIZE);
}

/* Deterministic, one per function, as recomputed; a META-only load gives it too. */
static void test_func_build_id(void **state)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		uint8_t id[BPFSTASH_HASH_SIZE], want[BPFSTASH_HASH_SIZE], hash[BPFSTASH_HASH_SIZE];
		uint8_t (*ids)[BPFSTASH_HASH_SIZE];
		struct bpfstash_entry *e, *meta;
		struct fixture fx;
		struct bpfstash *s;
		uint32_t i, j, n;

		fixture_get(fixture_names[k], &fx);
		e = fixture_load(&fx);
		n = bpfstash_entry_nr_funcs(e);
		assert_true(n >= 1);
		assert_int_equal(bpfstash_hash_parse(fx.hash, hash), 0);
		ids = calloc(n, sizeof(*ids));
		assert_non_null(ids);
		assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
		assert_int_equal(bpfstash_entry_load(s, fx.hash, BPFSTASH_LOAD_META, &meta), 0);
		for (i = 0; i < n; i++) {
			assert_int_equal(bpfstash_entry_func_build_id(e, i, ids[i]), 0);
			assert_int_equal(bpfstash_entry_func_build_id(e, i, id), 0);
			assert_memory_equal(id, ids[i], BPFSTASH_HASH_SIZE);
			func_build_id_want(fx.hash, i, want);
			assert_memory_equal(ids[i], want, BPFSTASH_HASH_SIZE);
			assert_memory_not_equal(ids[i], hash, BPFSTASH_HASH_SIZE);
			assert_int_equal(bpfstash_entry_func_build_id(meta, i, id), 0);
			assert_memory_equal(id, ids[i], BPFSTASH_HASH_SIZE);
			for (j = 0; j < i; j++)
				assert_memory_not_equal(ids[i], ids[j], BPFSTASH_HASH_SIZE);
		}
		assert_int_equal(bpfstash_entry_func_build_id(e, n, id), -EINVAL);
		assert_int_equal(bpfstash_entry_func_build_id(meta, n, id), -EINVAL);
		assert_int_equal(bpfstash_entry_func_build_id(e, UINT32_MAX, id), -EINVAL);
		assert_int_equal(bpfstash_entry_func_build_id(NULL, 0, id), -EINVAL);
		bpfstash_entry_free(meta);
		bpfstash_close(s);
		bpfstash_entry_free(e);
		free(ids);
	}
}

/*
 * Known answers, computed apart (Python's hashlib), for subprogs: its
 * function 1, and an index of four distinct bytes (the entry told it has
 * that many functions) for their order.
 */
static void test_func_build_id_known_answers(void **state)
{
	uint8_t id[BPFSTASH_HASH_SIZE], want[BPFSTASH_HASH_SIZE];
	char hex[BPFSTASH_HEX_LEN + 1];
	struct bpfstash_entry *e;
	struct fixture fx;
	uint32_t n;

	fixture_get("subprogs", &fx);
	assert_string_equal(fx.hash, "0e350f1c17cfc693eac4004149f3881d258a0181");
	e = fixture_load(&fx);
	assert_int_equal(bpfstash_entry_func_build_id(e, 1, id), 0);
	bpfstash_hash_format(id, hex);
	assert_string_equal(hex, "91e1e3c21736000633796e2ff0fb8a39c2412437");
	n = e->meta.content.nr_funcs;
	e->meta.content.nr_funcs = 0x01020305;
	assert_int_equal(bpfstash_entry_func_build_id(e, 0x01020304, id), 0);
	bpfstash_hash_format(id, hex);
	assert_string_equal(hex, "f7a3ea0c29a3259f293733e829a71dd776d3bd84");
	func_build_id_want(fx.hash, 0x01020304, want);
	assert_memory_equal(id, want, BPFSTASH_HASH_SIZE);
	e->meta.content.nr_funcs = n;
	bpfstash_entry_free(e);
}

/* Function @i of @e exported alone into a new temporary file, its path in @path. */
static void export_func(const struct bpfstash_entry *e, uint32_t i, char path[64])
{
	int fd;

	snprintf(path, 64, "/tmp/bpfstash-func-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(bpfstash_entry_export_func_elf(e, i, fd), 0);
	close(fd);
}

/*
 * libelf: one .text and one PT_LOAD at the function's address with its
 * bytes as bpftool dumped them, one FUNC symbol, the function's build-id.
 */
static void check_func_elf(struct exported *x, uint32_t i, const char *path)
{
	const struct bpfstash_func *f = bpfstash_entry_func(x->e, i);
	uint8_t want_id[BPFSTASH_HASH_SIZE];
	size_t shstrndx, nphdr, p, s, texts = 0, loads = 0, notes = 0, funcs = 0;
	GElf_Ehdr ehdr;
	GElf_Shdr sh, symsh;
	Elf_Scn *scn = NULL, *symscn = NULL;
	Elf_Data *d;
	Elf *elf;
	int fd;

	assert_int_equal(bpfstash_entry_func_build_id(x->e, i, want_id), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &ehdr));
	assert_int_equal(ehdr.e_type, ET_EXEC);
	assert_int_equal(ehdr.e_machine, bpfstash_entry_meta(x->e)->content.machine);
	assert_true(ehdr.e_entry == f->addr);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		assert_non_null(name);
		if (sh.sh_type == SHT_SYMTAB) {
			assert_null(symscn);
			symscn = scn;
		}
		if (!strcmp(name, ".text") || (sh.sh_flags & SHF_EXECINSTR)) {
			assert_string_equal(name, ".text");
			assert_true(sh.sh_addr == f->addr);
			assert_int_equal(sh.sh_size, f->len);
			assert_int_equal(sh.sh_type, SHT_PROGBITS);
			assert_true(sh.sh_flags & SHF_ALLOC);
			d = elf_getdata(scn, NULL);
			assert_non_null(d);
			assert_int_equal(d->d_size, f->len);
			assert_true(f->offset + f->len <= x->image_size);
			assert_memory_equal(d->d_buf, x->image + f->offset, f->len);
			texts++;
		}
		if (sh.sh_type == SHT_NOTE) {
			size_t name_off, desc_off;
			GElf_Nhdr nh;

			assert_string_equal(name, ".note.gnu.build-id");
			d = elf_getdata(scn, NULL);
			assert_non_null(d);
			assert_true(gelf_getnote(d, 0, &nh, &name_off, &desc_off) > 0);
			assert_int_equal(nh.n_type, NT_GNU_BUILD_ID);
			assert_int_equal(nh.n_namesz, 4);
			assert_memory_equal((char *)d->d_buf + name_off, "GNU", 4);
			assert_int_equal(nh.n_descsz, BPFSTASH_HASH_SIZE);
			assert_memory_equal((uint8_t *)d->d_buf + desc_off, want_id,
					    BPFSTASH_HASH_SIZE);
			notes++;
		}
	}
	assert_int_equal(texts, 1);
	assert_int_equal(notes, 1);

	assert_int_equal(elf_getphdrnum(elf, &nphdr), 0);
	assert_int_equal(nphdr, 2);
	for (p = 0; p < nphdr; p++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(elf, p, &ph));
		if (ph.p_type != PT_LOAD) {
			assert_int_equal(ph.p_type, PT_NOTE);
			continue;
		}
		assert_true(ph.p_vaddr == f->addr);
		assert_int_equal(ph.p_filesz, f->len);
		assert_int_equal(ph.p_memsz, f->len);
		assert_int_equal(ph.p_offset, text_at(elf, f->addr, &sh) ? sh.sh_offset : 0);
		assert_int_equal(ph.p_offset % ph.p_align, ph.p_vaddr % ph.p_align);
		assert_true(ph.p_flags & PF_X);
		loads++;
	}
	assert_int_equal(loads, 1);

	assert_non_null(symscn);
	assert_non_null(gelf_getshdr(symscn, &symsh));
	d = elf_getdata(symscn, NULL);
	assert_non_null(d);
	for (s = 0; s < symsh.sh_size / symsh.sh_entsize; s++) {
		GElf_Sym sym;

		assert_non_null(gelf_getsym(d, s, &sym));
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		assert_string_equal(elf_strptr(elf, symsh.sh_link, sym.st_name),
				    bpfstash_entry_func_name(x->e, i));
		assert_int_equal(GELF_ST_BIND(sym.st_info), STB_GLOBAL);
		assert_true(sym.st_value == f->addr);
		assert_int_equal(sym.st_size, f->len);
		assert_int_equal(elf_ndxscn(text_at(elf, f->addr, &sh)), sym.st_shndx);
		funcs++;
	}
	assert_int_equal(funcs, 1);
	elf_end(elf);
	close(fd);
}

/* The distinct files that function @i's line records name, as resolve gives them. */
static size_t func_files(const struct bpfstash_entry *e, uint32_t i, const char ***files)
{
	uint32_t r, nr = bpfstash_entry_nr_lines(e);
	const char **v = calloc(nr + 1, sizeof(*v));
	size_t n = 0, j;

	assert_non_null(v);
	for (r = 0; r < nr; r++) {
		struct bpfstash_location loc;

		assert_int_equal(bpfstash_entry_line(e, r, &loc), 0);
		if (loc.func != i)
			continue;
		for (j = 0; j < n && strcmp(v[j], loc.file); j++)
			;
		if (j == n)
			v[n++] = loc.file;
	}
	*files = v;
	return n;
}

/*
 * readelf: the function's build-id; DWARF with its one subprogram, its
 * one address range, its one line sequence and the files its lines name.
 */
static void check_func_readelf(struct exported *x, uint32_t i, const char *path)
{
	const struct bpfstash_func *f = bpfstash_entry_func(x->e, i);
	char cmd[256], want[128], hex[BPFSTASH_HEX_LEN + 1], *out, *p, *line, *save = NULL;
	uint8_t id[BPFSTASH_HASH_SIZE];
	size_t nr_files, seen = 0, j;
	const char **files;
	int count = 0;

	assert_int_equal(bpfstash_entry_func_build_id(x->e, i, id), 0);
	bpfstash_hash_format(id, hex);
	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	assert_int_equal(run(cmd, &out), 0);
	snprintf(want, sizeof(want), "Build ID: %s\n", hex);
	if (!strstr(out, want))
		fail_msg("readelf -n: no '%s' in:\n%s", want, out);
	free(out);

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=info,aranges %s", path);
	assert_int_equal(run(cmd, &out), 0);
	for (p = out; (p = strstr(p, "DW_TAG_subprogram")); p++)
		count++;
	assert_int_equal(count, 1);
	snprintf(want, sizeof(want), "DW_AT_low_pc      : 0x%llx\n", (unsigned long long)f->addr);
	if (!strstr(out, want))
		fail_msg("readelf: no '%s' in:\n%s", want, out);
	/* the one range, then the terminating pair */
	snprintf(want, sizeof(want), "%016llx %016x\n    %016x %016x\n",
		 (unsigned long long)f->addr, f->len, 0, 0);
	if (!strstr(out, want))
		fail_msg("readelf: no aranges '%s' in:\n%s", want, out);
	free(out);

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=rawline %s", path);
	assert_int_equal(run(cmd, &out), 0);
	nr_files = func_files(x->e, i, &files);
	count = 0;
	for (p = out; (p = strstr(p, "End of Sequence")); p++)
		count++;
	assert_int_equal(count, nr_files ? 1 : 0);
	/* the file table: "  <n>\t0\t0\t0\t<name>" */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[1024];
		unsigned int n;

		if (sscanf(line, " %u\t0\t0\t0\t%1023[^\n]", &n, name) != 2)
			continue;
		seen++;
		for (j = 0; j < nr_files && strcmp(files[j], name); j++)
			;
		if (j == nr_files && (nr_files || strcmp(name, "<unknown>")))
			fail_msg("readelf: %s alone names %s", bpfstash_entry_func_name(x->e, i),
				 name);
	}
	assert_int_equal(seen, nr_files ? nr_files : 1);
	free(files);
	free(out);
}

/* Each function of every fixture, alone: read back with libelf, and by readelf. */
static void test_func_elf_contents(void **state)
{
	size_t k;

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	for (k = 0; k < NR_FIXTURES; k++) {
		struct exported x;
		uint32_t i;

		export_fixture(fixture_names[k], &x);
		for (i = 0; i < bpfstash_entry_nr_funcs(x.e); i++) {
			char path[64];
			void *a, *b;
			size_t asz, bsz;

			export_func(x.e, i, path);
			check_func_elf(&x, i, path);
			/* the same bytes every time */
			a = fixture_read_path(path, &asz);
			assert_int_equal(unlink(path), 0);
			export_func(x.e, i, path);
			b = fixture_read_path(path, &bsz);
			assert_int_equal(asz, bsz);
			assert_memory_equal(a, b, asz);
			free(a);
			free(b);
			if (have("readelf"))
				check_func_readelf(&x, i, path);
			unlink(path);
		}
		exported_free(&x);
	}
}

/*
 * A line-table reader on every address of each function exported alone
 * gives what bpfstash_entry_resolve() gives for it, and nothing for the
 * other functions' addresses, which the file does not hold.
 */
static void check_func_line_tool(const char *tool, bool with_col)
{
	size_t k;

	for (k = 0; k < NR_FIXTURES; k++) {
		struct exported x;
		uint32_t i, j;

		export_fixture(fixture_names[k], &x);
		for (i = 0; i < bpfstash_entry_nr_funcs(x.e); i++) {
			const struct bpfstash_func *f = bpfstash_entry_func(x.e, i);
			char addrs[] = "/tmp/bpfstash-addrs-XXXXXX", path[64], cmd[512];
			char *out, *line, *save = NULL;
			size_t with_line = 0;
			uint32_t off;
			FILE *fp;
			int fd;

			export_func(x.e, i, path);
			fd = mkstemp(addrs);
			assert_true(fd >= 0);
			fp = fdopen(fd, "w");
			assert_non_null(fp);
			for (off = 0; off < f->len; off++)
				fprintf(fp, "0x%llx\n", (unsigned long long)(f->addr + off));
			for (j = 0; j < bpfstash_entry_nr_funcs(x.e); j++)
				if (j != i)
					fprintf(fp, "0x%llx\n", (unsigned long long)
						bpfstash_entry_func(x.e, j)->addr);
			fclose(fp);
			snprintf(cmd, sizeof(cmd), "%s -e %s < %s", tool, path, addrs);
			assert_int_equal(run(cmd, &out), 0);
			line = strtok_r(out, "\n", &save);
			for (off = 0; off < f->len; off++, line = strtok_r(NULL, "\n", &save)) {
				struct bpfstash_location loc;
				char want[1200], *disc;

				if (!line)
					fail_msg("%s: %u lines for %u addresses", tool, off,
						 f->len);
				disc = strstr(line, " (discriminator");
				if (disc)
					*disc = '\0';
				assert_int_equal(bpfstash_entry_resolve(x.e, f->addr + off, &loc),
						 0);
				assert_int_equal(loc.func, i);
				if (!loc.has_line) {
					if (strncmp(line, "??", 2))
						fail_msg("%s: %s+0x%x has no line, got %s", tool,
							 loc.func_name, off, line);
					continue;
				}
				if (with_col && loc.col)
					snprintf(want, sizeof(want), "%s:%u:%u", loc.file, loc.line,
						 loc.col);
				else
					snprintf(want, sizeof(want), "%s:%u", loc.file, loc.line);
				if (strcmp(line, want))
					fail_msg("%s: %s+0x%x: %s, bpfstash_entry_resolve() %s",
						 tool, loc.func_name, off, line, want);
				with_line++;
			}
			for (j = 0; j + 1 < bpfstash_entry_nr_funcs(x.e); j++) {
				if (!line)
					fail_msg("%s: too few lines for the other functions", tool);
				if (strncmp(line, "??", 2))
					fail_msg("%s: another function's address in %s: %s", tool,
						 bpfstash_entry_func_name(x.e, i), line);
				line = strtok_r(NULL, "\n", &save);
			}
			assert_null(line);
			/* functions with line info: most of their bytes have a line */
			if (bpfstash_entry_meta(x.e)->content.nr_jited_line_info)
				assert_true(with_line * 2 >= f->len);
			free(out);
			unlink(addrs);
			unlink(path);
		}
		exported_free(&x);
	}
}

static void test_func_addr2line(void **state)
{
	if (!have("addr2line"))
		skip();
	check_func_line_tool("addr2line", false);
}

static void test_func_libdw(void **state)
{
	if (!have("eu-addr2line"))
		skip();
	check_func_line_tool("eu-addr2line", true);
}

/*
 * The one-function entry (tiny) alone is its whole export but for the
 * build-id: the same layout, sections and DWARF, byte for byte.
 */
static void test_func_elf_one_func_entry(void **state)
{
	uint8_t id[BPFSTASH_HASH_SIZE], hash[BPFSTASH_HASH_SIZE];
	struct exported x;
	char path[64];
	uint8_t *a, *b, *at;
	size_t asz, bsz, i;

	export_fixture("tiny", &x);
	assert_int_equal(bpfstash_entry_nr_funcs(x.e), 1);
	export_func(x.e, 0, path);
	a = fixture_read_path(x.path, &asz);
	b = fixture_read_path(path, &bsz);
	assert_int_equal(asz, bsz);
	assert_int_equal(bpfstash_hash_parse(x.fx.hash, hash), 0);
	assert_int_equal(bpfstash_entry_func_build_id(x.e, 0, id), 0);
	at = memmem(a, asz, hash, sizeof(hash));
	assert_non_null(at);
	assert_null(memmem(at + 1, asz - (at + 1 - a), hash, sizeof(hash)));
	assert_memory_equal(b + (at - a), id, sizeof(id));
	for (i = 0; i < asz; i++)
		if (a[i] != b[i] && (i < (size_t)(at - a) || i >= (size_t)(at - a) + sizeof(id)))
			fail_msg("byte 0x%zx differs outside the build-id", i);
	free(a);
	free(b);
	unlink(path);
	exported_free(&x);
}

/* Out of range, a META-only load, no entry: -EINVAL, and nothing written. */
static void test_func_elf_errors(void **state)
{
	struct bpfstash_entry *e;
	struct exported x;
	struct bpfstash *s;
	struct stat st;
	char path[64];
	uint32_t n;
	int fd, p[2];

	export_fixture("subprogs", &x);
	n = bpfstash_entry_nr_funcs(x.e);
	snprintf(path, sizeof(path), "/tmp/bpfstash-func-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(bpfstash_entry_export_func_elf(x.e, n, fd), -EINVAL);
	assert_int_equal(bpfstash_entry_export_func_elf(x.e, UINT32_MAX, fd), -EINVAL);
	assert_int_equal(bpfstash_entry_export_func_elf(NULL, 0, fd), -EINVAL);
	assert_int_equal(bpfstash_entry_export_func_elf(x.e, 0, -1), -EINVAL);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(bpfstash_entry_export_func_elf(x.e, 0, p[1]), -EINVAL);
	close(p[0]);
	close(p[1]);
	assert_int_equal(bpfstash_open(FIXTURES "/stash", &s), 0);
	assert_int_equal(bpfstash_entry_load(s, x.fx.hash, BPFSTASH_LOAD_META, &e), 0);
	assert_int_equal(bpfstash_entry_export_func_elf(e, 0, fd), -EINVAL);
	bpfstash_entry_free(e);
	bpfstash_close(s);
	close(fd);
	unlink(path);
	exported_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_other_machine),
		cmocka_unit_test(test_elf_contents),
		cmocka_unit_test(test_readelf_build_id),
		cmocka_unit_test(test_objdump_disassembles),
		cmocka_unit_test(test_addr2line_matches_bpftool),
		cmocka_unit_test(test_libdw_matches_bpftool),
		cmocka_unit_test(test_build_id_tree),
		cmocka_unit_test(test_export_deterministic),
		cmocka_unit_test(test_export_needs_full_entry),
		cmocka_unit_test(test_func_build_id),
		cmocka_unit_test(test_func_build_id_known_answers),
		cmocka_unit_test(test_func_elf_contents),
		cmocka_unit_test(test_func_addr2line),
		cmocka_unit_test(test_func_libdw),
		cmocka_unit_test(test_func_elf_one_func_entry),
		cmocka_unit_test(test_func_elf_errors),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
