// SPDX-License-Identifier: GPL-2.0-only
/*
 * Image entries (a BPF trampoline, a struct_ops trampoline, the XDP
 * dispatcher: content.image_kind) and their "calls" file.
 *
 * The entries are built here as include/uapi/linux/bpfstash.h describes
 * them, until the kernel's own are captured into tests/fixtures, and each
 * is named by a content hash computed in this file with OpenSSL from the
 * header's text, never by libbpfstash: D() of every file, D(calls) and
 * D(pokes) after D(btf), of nothing when the file is missing.  The same
 * computation on a captured program's entry gives its name.
 * Then what reads or copies an entry: "info" against a text written out
 * here, the ELF export, bpfstash show and ls, bpfstash-gc's archive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include <libelf.h>
#include <openssl/evp.h>

#include "libbpfstash.h"
#include "fixtures.h"

#ifndef BPFSTASH_BIN
#error "BPFSTASH_BIN must name the bpfstash binary"
#endif
#ifndef BPFSTASH_GC_BIN
#error "BPFSTASH_GC_BIN must name the bpfstash-gc binary"
#endif

#define NS		1000000000ull
#define EPOCH		(1700000000ull * NS)	/* 2023-11-14T22:13:20Z */
#define JITED_LEN	64
#define IMAGE_ADDR	0xffffffffc0a01000ull
#define TRAMPOLINE	"bpf_trampoline_6442491234"

/* The files of an entry in binary, as the kernel writes them. */
struct image {
	struct bpfstash_meta meta;
	uint8_t funcs[sizeof(struct bpfstash_func) + 64];
	size_t funcs_size;
	uint8_t jited[JITED_LEN];
	struct bpfstash_call calls[4];
	uint32_t nr_calls;
	char hex[BPFSTASH_HEX_LEN + 1];
};

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	unsigned int len = 32;

	assert_int_equal(EVP_Digest(n ? p : "", n, out, &len, EVP_sha256(), NULL), 1);
	assert_int_equal(len, 32);
}

/*
 * The content hash as the uapi header defines it: SHA-256 of "bpfstash"
 * and a NUL, content, the funcs file, D() of jited, line_info,
 * jited_line_info, func_info, btf, calls and pokes (this test's entries
 * have none); its first 20 bytes, in hex.
 */
static void abi_hash(const struct bpfstash_content *c, const void *funcs, size_t funcs_size,
		     const void *const blobs[5], const size_t sizes[5], const void *calls,
		     size_t calls_size, char hex[BPFSTASH_HEX_LEN + 1])
{
	static const char domain[9] = "bpfstash";
	uint8_t d[32], out[32];
	unsigned int len = 32;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int i;

	assert_non_null(ctx);
	assert_int_equal(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL), 1);
	assert_int_equal(EVP_DigestUpdate(ctx, domain, sizeof(domain)), 1);
	assert_int_equal(EVP_DigestUpdate(ctx, c, sizeof(*c)), 1);
	assert_int_equal(EVP_DigestUpdate(ctx, funcs, funcs_size), 1);
	for (i = 0; i < 5; i++) {
		sha256(blobs[i], sizes[i], d);
		assert_int_equal(EVP_DigestUpdate(ctx, d, sizeof(d)), 1);
	}
	sha256(calls, calls_size, d);
	assert_int_equal(EVP_DigestUpdate(ctx, d, sizeof(d)), 1);
	sha256("", 0, d);	/* no pokes */
	assert_int_equal(EVP_DigestUpdate(ctx, d, sizeof(d)), 1);
	assert_int_equal(EVP_DigestFinal_ex(ctx, out, &len), 1);
	EVP_MD_CTX_free(ctx);
	for (i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", out[i]);
}

/*
 * An unloaded trampoline (or another image, by @kind and @name) with one
 * function, no line info, func info or BTF, and no calls yet.
 */
static void image_init(struct image *im, uint32_t kind, const char *name, const char *func)
{
	struct bpfstash_content *c = &im->meta.content;
	struct bpfstash_func *f = (struct bpfstash_func *)im->funcs;
	int i;

	memset(im, 0, sizeof(*im));
	im->meta.meta_size = sizeof(im->meta);
	c->version = 3;
	c->machine = 62;	/* EM_X86_64 */
	c->image_kind = kind;
	c->nr_funcs = 1;
	c->jited_len = JITED_LEN;
	c->attach_btf_id = 12345;
	memcpy(c->tag, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	snprintf(c->name, sizeof(c->name), "%s", name);
	f->addr = IMAGE_ADDR;
	f->len = JITED_LEN;
	strcpy((char *)(f + 1), func);
	im->funcs_size = sizeof(*f) + strlen(func) + 1;
	c->funcs_size = im->funcs_size;
	for (i = 0; i < JITED_LEN; i++)
		im->jited[i] = 0x90 ^ (i * 7);
	im->meta.load_time = 5 * NS;
	im->meta.load_time_real = EPOCH + 5 * NS;
	im->meta.unload_time = 7 * NS;
	im->meta.unload_time_real = EPOCH + 7 * NS;
	im->meta.bytes = 4096;
	im->meta.attach_btf_obj_id = 1;
	strcpy(im->meta.attach_func_name, "tcp_sendmsg");
}

static void image_call(struct image *im, uint32_t kind, const char *entry, uint32_t prog_id,
		       uint8_t tag0, const char *name)
{
	struct bpfstash_call *cl = &im->calls[im->nr_calls++];
	int i;

	memset(cl, 0, sizeof(*cl));
	if (entry)
		assert_int_equal(bpfstash_hash_parse(entry, cl->hash), 0);
	cl->kind = kind;
	cl->addr = 0xffffffffc0b00000ull + prog_id * 0x1000;
	cl->prog_id = prog_id;
	for (i = 0; i < 8; i++)
		cl->tag[i] = tag0 + i;
	snprintf(cl->name, sizeof(cl->name), "%s", name);
}

/* Name the image by its hash and write its files into @root/<hash>/. */
static void image_write(struct image *im, const char *root)
{
	const void *blobs[5] = { im->jited, "", "", "", "" };
	const size_t sizes[5] = { JITED_LEN, 0, 0, 0, 0 };
	static const char *const empty[] = {
		"line_info", "jited_line_info", "func_info", "btf",
	};
	uint8_t meta[sizeof(struct bpfstash_meta)];
	char dir[PATH_MAX], path[PATH_MAX + 32];
	size_t i;

	abi_hash(&im->meta.content, im->funcs, im->funcs_size, blobs, sizes, im->calls,
		 im->nr_calls * sizeof(im->calls[0]), im->hex);
	assert_int_equal(bpfstash_hash_parse(im->hex, im->meta.hash), 0);
	snprintf(dir, sizeof(dir), "%s/%s", root, im->hex);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/meta", dir);
	memcpy(meta, &im->meta, sizeof(meta));
	fixture_write_path(path, meta, sizeof(meta));
	snprintf(path, sizeof(path), "%s/funcs", dir);
	fixture_write_path(path, im->funcs, im->funcs_size);
	snprintf(path, sizeof(path), "%s/jited", dir);
	fixture_write_path(path, im->jited, JITED_LEN);
	for (i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, empty[i]);
		fixture_write_path(path, "", 0);
	}
	if (im->nr_calls) {
		snprintf(path, sizeof(path), "%s/calls", dir);
		fixture_write_path(path, im->calls, im->nr_calls * sizeof(im->calls[0]));
	}
}

/* A trampoline calling two programs: one with an entry (tiny's), one without. */
static void trampoline(struct image *im, const char *root)
{
	struct fixture tiny;

	fixture_get("tiny", &tiny);
	image_init(im, BPFSTASH_IMAGE_TRAMPOLINE, "trampoline", TRAMPOLINE);
	image_call(im, BPFSTASH_CALL_FENTRY, tiny.hash, 42, 0xa1, "on_enter");
	image_call(im, BPFSTASH_CALL_FEXIT, NULL, 43, 0xb1, "on_exit");
	image_write(im, root);
}

static int load(const char *root, const char *name, unsigned int flags,
		struct bpfstash_entry **e)
{
	int dfd = open(root, O_RDONLY | O_DIRECTORY), err;

	assert_true(dfd >= 0);
	*e = NULL;
	err = bpfstash_entry_load_at(dfd, name, flags, e);
	close(dfd);
	return err;
}

/* Load and verify: 0, or the first error. */
static int load_verify(const char *root, const char *name)
{
	struct bpfstash_entry *e;
	int err = load(root, name, 0, &e);

	if (!err)
		err = bpfstash_entry_verify(e);
	bpfstash_entry_free(e);
	return err;
}

static void entry_path(char *path, size_t size, const char *root, const char *name,
		       const char *file)
{
	snprintf(path, size, "%s/%s/%s", root, name, file);
}

static void tmpdir(char *dir)
{
	strcpy(dir, "/tmp/bpfstash-image-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

/* The image verifies, with D(calls) in its hash, and gives its calls back. */
static void test_image_verifies(void **state)
{
	const struct bpfstash_call *calls;
	struct bpfstash_entry *e;
	struct image im;
	char root[64];
	uint32_t nr;

	tmpdir(root);
	trampoline(&im, root);
	assert_int_equal(load(root, im.hex, 0, &e), 0);
	assert_int_equal(bpfstash_entry_verify(e), 0);
	calls = bpfstash_entry_calls(e, &nr);
	assert_int_equal(nr, 2);
	assert_memory_equal(calls, im.calls, 2 * sizeof(*calls));
	assert_int_equal(bpfstash_entry_nr_funcs(e), 1);
	assert_string_equal(bpfstash_entry_func_name(e, 0), TRAMPOLINE);
	assert_int_equal(bpfstash_entry_nr_lines(e), 0);
	assert_string_equal(bpfstash_image_kind_name(BPFSTASH_IMAGE_STRUCT_OPS), "struct_ops");
	assert_string_equal(bpfstash_call_kind_name(BPFSTASH_CALL_MODIFY_RETURN), "fmod_ret");
	assert_null(bpfstash_image_kind_name(0));
	assert_null(bpfstash_call_kind_name(6));
	bpfstash_entry_free(e);

	/* A META-only load reads an image's calls too (its "info" has them). */
	assert_int_equal(load(root, im.hex, BPFSTASH_LOAD_META, &e), 0);
	bpfstash_entry_calls(e, &nr);
	assert_int_equal(nr, 2);
	bpfstash_entry_free(e);
	fixture_rmtree(root);
}

/*
 * The hash covers calls: without the file, the same entry does not hash to
 * its name; an image without calls is named with D() of nothing, and an
 * empty calls file is no file.
 */
static void test_calls_in_hash(void **state)
{
	char root[64], path[PATH_MAX];
	struct image im, none;

	tmpdir(root);
	trampoline(&im, root);
	entry_path(path, sizeof(path), root, im.hex, "calls");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(load_verify(root, im.hex), -EBADMSG);
	/* One record more, well-formed: another content. */
	im.calls[2] = im.calls[1];
	fixture_write_path(path, im.calls, 3 * sizeof(im.calls[0]));
	assert_int_equal(load_verify(root, im.hex), -EBADMSG);

	image_init(&none, BPFSTASH_IMAGE_DISPATCHER, "dispatcher", "bpf_dispatcher_xdp");
	image_write(&none, root);
	assert_int_equal(load_verify(root, none.hex), 0);
	entry_path(path, sizeof(path), root, none.hex, "calls");
	fixture_write_path(path, "", 0);
	assert_int_equal(load_verify(root, none.hex), 0);
	fixture_rmtree(root);
}

/* Every byte of calls counts: flipped, the load or the hash says so. */
static void test_calls_tampered(void **state)
{
	char root[64], path[PATH_MAX];
	uint8_t *buf;
	struct image im;
	size_t size, i;

	tmpdir(root);
	trampoline(&im, root);
	entry_path(path, sizeof(path), root, im.hex, "calls");
	buf = fixture_read_path(path, &size);
	assert_int_equal(size, 2 * sizeof(struct bpfstash_call));
	for (i = 0; i < size; i++) {
		buf[i] ^= 0x01;
		fixture_write_path(path, buf, size);
		buf[i] ^= 0x01;
		if (!load_verify(root, im.hex))
			fail_msg("calls byte %zu flipped and not detected", i);
	}
	fixture_write_path(path, buf, size);
	assert_int_equal(load_verify(root, im.hex), 0);
	free(buf);
	fixture_rmtree(root);
}

/*
 * Refused at load, -EBADMSG: calls in a program's entry, a calls file of
 * partial records or beyond the cap, a record with __reserved set or a name
 * without its NUL; a symlink is not followed.
 */
static void test_calls_refused(void **state)
{
	struct bpfstash_entry *e;
	struct bpfstash_call bad;
	char root[64], path[PATH_MAX];
	struct fixture tiny;
	struct image im;
	uint8_t *buf;
	size_t size;

	tmpdir(root);
	trampoline(&im, root);
	fixture_get("tiny", &tiny);
	fixture_copy(&tiny, root);

	/* A program's entry: a record is refused, an empty file is no file. */
	entry_path(path, sizeof(path), root, tiny.hash, "calls");
	fixture_write_path(path, &im.calls[0], sizeof(im.calls[0]));
	assert_int_equal(load(root, tiny.hash, 0, &e), -EBADMSG);
	assert_null(e);
	fixture_write_path(path, "", 0);
	assert_int_equal(load_verify(root, tiny.hash), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(load_verify(root, tiny.hash), 0);

	entry_path(path, sizeof(path), root, im.hex, "calls");
	buf = fixture_read_path(path, &size);
	buf = realloc(buf, size + 1);
	buf[size] = 0;
	fixture_write_path(path, buf, size - 1);
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);
	fixture_write_path(path, buf, size + 1);
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);
	assert_int_equal(load(root, im.hex, BPFSTASH_LOAD_META, &e), -EBADMSG);
	fixture_write_path(path, buf, sizeof(struct bpfstash_call) / 2);
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);
	/* Above the cap: refused without reading it all. */
	fixture_write_huge(path, (size_t)(BPFSTASH_MAX_CALLS + 1) * sizeof(struct bpfstash_call));
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);

	bad = im.calls[0];
	bad.__reserved = 1;
	fixture_write_path(path, &bad, sizeof(bad));
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);
	bad = im.calls[0];
	memset(bad.name, 'x', sizeof(bad.name));
	fixture_write_path(path, &bad, sizeof(bad));
	assert_int_equal(load(root, im.hex, 0, &e), -EBADMSG);
	assert_int_equal(load(root, im.hex, BPFSTASH_LOAD_META, &e), -EBADMSG);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_not_equal(load(root, im.hex, 0, &e), 0);
	assert_null(e);

	/* Restored: the entry is whole again. */
	assert_int_equal(unlink(path), 0);
	fixture_write_path(path, buf, size);
	assert_int_equal(load_verify(root, im.hex), 0);
	free(buf);
	fixture_rmtree(root);
}

/* A program's hash, computed here from its files: what the kernel named it. */
static void test_program_hash_as_documented(void **state)
{
	static const char *const names[] = { "tiny", "subprogs", "large" };
	static const char *const blob_files[5] = {
		"jited", "line_info", "jited_line_info", "func_info", "btf",
	};
	size_t i, k;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char dir[256], hex[BPFSTASH_HEX_LEN + 1];
		const void *blobs[5];
		size_t sizes[5], msize, fsize;
		struct bpfstash_meta *m;
		struct fixture f;
		void *funcs;

		fixture_get(names[i], &f);
		snprintf(dir, sizeof(dir), FIXTURES "/stash/%s/", f.hash);
		m = fixture_read_file(dir, "meta", "", &msize);
		assert_int_equal(msize, sizeof(*m));
		funcs = fixture_read_file(dir, "funcs", "", &fsize);
		for (k = 0; k < 5; k++)
			blobs[k] = fixture_read_file(dir, blob_files[k], "", &sizes[k]);
		abi_hash(&m->content, funcs, fsize, blobs, sizes, NULL, 0, hex);
		assert_string_equal(hex, f.hash);
		assert_int_equal(load_verify(FIXTURES "/stash", f.hash), 0);
		for (k = 0; k < 5; k++)
			free((void *)blobs[k]);
		free(funcs);
		free(m);
	}
}

/* "info" of an image: the program's lines, then the kernel's image lines. */
static void test_image_info(void **state)
{
	static const char *const views[] = { "info", "functions", "lines" };
	char root[64], *text, *want, *meta_text;
	struct bpfstash_entry *e;
	struct fixture tiny;
	struct image im;
	size_t len, mlen, i;

	tmpdir(root);
	fixture_get("tiny", &tiny);
	trampoline(&im, root);
	assert_true(asprintf(&want,
		"hash             %s\n"
		"name             trampoline\n"
		"prog_id          0\n"
		"prog_type        0\n"
		"tag              0102030405060708\n"
		"state            unloaded\n"
		"load_time        2023-11-14T22:13:25.000000000Z (boot +5.000000000 s)\n"
		"unload_time      2023-11-14T22:13:27.000000000Z (boot +7.000000000 s)\n"
		"uid              0\n"
		"loader           -\n"
		"boot_id          00000000-0000-0000-0000-000000000000\n"
		"functions        1\n"
		"jited_bytes      64\n"
		"pokes            0\n"
		"xlated_bytes     0\n"
		"verified_insns   0\n"
		"line_info        0\n"
		"jited_line_info  0\n"
		"func_info        0\n"
		"btf_id           0\n"
		"btf_bytes        0\n"
		"gpl_compatible   0\n"
		"expected_attach  0\n"
		"attach_target    tcp_sendmsg (btf_id 12345, btf obj 1)\n"
		"bytes            4096\n"
		"image            trampoline\n"
		"call             fentry prog_id 42 tag a1a2a3a4a5a6a7a8 entry %s name on_enter\n"
		"call             fexit prog_id 43 tag b1b2b3b4b5b6b7b8 entry - name on_exit\n",
		im.hex, tiny.hash) > 0);
	assert_int_equal(load(root, im.hex, 0, &e), 0);
	assert_int_equal(bpfstash_entry_render(e, "info", &text, &len), 0);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
	assert_int_equal(bpfstash_entry_render(e, "functions", &text, &len), 0);
	assert_string_equal(text,
		"# idx start            end              size  tag              name\n"
		"    0 ffffffffc0a01000 ffffffffc0a01040    64 0000000000000000 " TRAMPOLINE "\n");
	free(text);
	assert_int_equal(bpfstash_entry_render(e, "lines", &text, &len), 0);
	assert_string_equal(text, "# address         function+offset\tfile:line:col\tsource\n");
	free(text);
	bpfstash_entry_free(e);

	/* META-only: the same info. */
	assert_int_equal(load(root, im.hex, BPFSTASH_LOAD_META, &e), 0);
	assert_int_equal(bpfstash_entry_render(e, "info", &meta_text, &mlen), 0);
	assert_string_equal(meta_text, want);
	free(meta_text);
	bpfstash_entry_free(e);
	free(want);

	/* What the tool prints is the library's. */
	for (i = 0; i < 3; i++) {
		char cmd[PATH_MAX], *lib;
		size_t llen, n;
		FILE *p;

		assert_int_equal(load(root, im.hex, 0, &e), 0);
		assert_int_equal(bpfstash_entry_render(e, views[i], &lib, &llen), 0);
		bpfstash_entry_free(e);
		snprintf(cmd, sizeof(cmd), BPFSTASH_BIN " --root %s render %s %s", root, im.hex,
			 views[i]);
		p = popen(cmd, "r");
		assert_non_null(p);
		text = calloc(1, llen + 2);
		assert_non_null(text);
		n = fread(text, 1, llen + 1, p);
		assert_int_equal(pclose(p), 0);
		assert_int_equal(n, llen);
		assert_memory_equal(text, lib, llen);
		free(text);
		free(lib);
	}
	fixture_rmtree(root);
}

/* Kinds this library does not know: their numbers, as the kernel prints them. */
static void test_unknown_kinds(void **state)
{
	struct bpfstash_entry *e;
	char root[64], *text, *tail;
	struct image im;
	size_t len;

	tmpdir(root);
	image_init(&im, 9, "image9", "bpf_image_9");
	image_call(&im, 77, NULL, 7, 0, "x");
	image_write(&im, root);
	assert_int_equal(load_verify(root, im.hex), 0);
	assert_int_equal(load(root, im.hex, 0, &e), 0);
	assert_int_equal(bpfstash_entry_render(e, "info", &text, &len), 0);
	tail = strstr(text, "bytes            4096\n");
	assert_non_null(tail);
	assert_string_equal(tail, "bytes            4096\n"
			    "image            9\n"
			    "call             77 prog_id 7 tag 0001020304050607 entry - name x\n");
	free(text);
	bpfstash_entry_free(e);
	fixture_rmtree(root);
}

/* The ELF export of an image: its one function, no line table to speak of. */
static void test_image_export(void **state)
{
	struct bpfstash_entry *e;
	Elf_Scn *scn = NULL;
	struct image im;
	char root[64];
	bool found = false;
	Elf *elf;
	int fd;

	tmpdir(root);
	trampoline(&im, root);
	assert_int_equal(load(root, im.hex, 0, &e), 0);
	fd = memfd_create("image-elf", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bpfstash_entry_export_elf(e, fd), 0);
	bpfstash_entry_free(e);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym sym;
		size_t i;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			assert_non_null(gelf_getsym(data, i, &sym));
			if (!strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), TRAMPOLINE)) {
				assert_int_equal(sym.st_value, IMAGE_ADDR);
				assert_int_equal(sym.st_size, JITED_LEN);
				found = true;
			}
		}
	}
	assert_true(found);
	elf_end(elf);
	close(fd);
	fixture_rmtree(root);
}

/* bpfstash show and ls name the image's kind, and show its calls. */
static void test_cli_show_ls(void **state)
{
	struct fixture tiny;
	struct image im;
	char root[64];

	tmpdir(root);
	fixture_get("tiny", &tiny);
	trampoline(&im, root);
	fixture_copy(&tiny, root);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j show %s | jq -e '"
			     ".image == \"trampoline\" and .prog_type == 0 and .verified and "
			     "(.calls | length) == 2 and "
			     ".calls[0] == {\"kind\": \"fentry\", \"prog_id\": 42, "
			     "\"tag\": \"a1a2a3a4a5a6a7a8\", \"name\": \"on_enter\", "
			     "\"addr\": \"0xffffffffc0b2a000\", \"entry\": \"%s\"} and "
			     ".calls[1].kind == \"fexit\" and .calls[1].entry == null' >/dev/null",
			     root, im.hex, tiny.hash), 0);
	/* A program's entry: no image, no calls. */
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j show %s | jq -e "
			     "'(has(\"image\") | not) and .calls == []' >/dev/null",
			     root, tiny.hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s show %s | grep -q "
			     "'^image            trampoline (2 calls)$'", root, im.hex), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s show %s | grep -Eq "
			     "'^ +0 fentry +42 a1a2a3a4a5a6a7a8 %s on_enter$'",
			     root, im.hex, tiny.hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s -j ls | jq -e '"
			     "(map(select(.hash == \"%s\"))[0] | .image == \"trampoline\" and "
			     ".nr_calls == 2) and "
			     "(map(select(.hash == \"%s\"))[0] | has(\"image\") | not)' >/dev/null",
			     root, im.hex, tiny.hash), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s ls | grep -q '^%s  \\[trampoline\\] '",
			     root, im.hex), 0);
	assert_int_equal(fixture_sh(BPFSTASH_BIN " --root %s verify >/dev/null", root), 0);
	fixture_rmtree(root);
}

/* bpfstash-gc's archive carries calls: extracted, the image verifies. */
static void test_gc_archive(void **state)
{
	char root[64], arch[80], x[64], path[PATH_MAX];
	struct fixture tiny;
	struct image im;

	tmpdir(root);
	tmpdir(x);
	fixture_get("tiny", &tiny);
	trampoline(&im, root);
	fixture_copy(&tiny, root);
	fixture_set_times(root, tiny.hash, 1, 2);
	snprintf(arch, sizeof(arch), "%s.archive", root);
	assert_int_equal(fixture_sh(BPFSTASH_GC_BIN " --root %s --max-age 1s --archive %s >/dev/null",
			     root, arch), 0);
	entry_path(path, sizeof(path), root, im.hex, "meta");
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(fixture_sh("tar --zstd -tf %s/%.2s/%s.tar.zst | grep -qx '%s/calls'", arch,
			     im.hex, im.hex, im.hex), 0);
	/* a program's archive has none */
	assert_int_not_equal(fixture_sh("tar --zstd -tf %s/%.2s/%s.tar.zst | grep -q '/calls$'", arch,
				 tiny.hash, tiny.hash), 0);
	assert_int_equal(fixture_sh("tar --zstd -m -C %s -xf %s/%.2s/%s.tar.zst", x, arch, im.hex,
			     im.hex), 0);
	assert_int_equal(load_verify(x, im.hex), 0);
	/* decode --archive takes it too: an address in the trampoline is its. */
	assert_int_equal(fixture_sh("echo ' ffffffffc0a01010' | " BPFSTASH_BIN
			     " --root %s decode --archive %s | grep -qF '(%.8s: no line info)'",
			     root, arch, im.hex), 0);
	fixture_rmtree(arch);
	fixture_rmtree(x);
	fixture_rmtree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_verifies),
		cmocka_unit_test(test_calls_in_hash),
		cmocka_unit_test(test_calls_tampered),
		cmocka_unit_test(test_calls_refused),
		cmocka_unit_test(test_program_hash_as_documented),
		cmocka_unit_test(test_image_info),
		cmocka_unit_test(test_unknown_kinds),
		cmocka_unit_test(test_image_export),
		cmocka_unit_test(test_cli_show_ls),
		cmocka_unit_test(test_gc_archive),
	};

	return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
