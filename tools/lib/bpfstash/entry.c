// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpfstash: opening a stash, loading and verifying entries.
 *
 * Everything read here is untrusted: a copy of a stash can be corrupted or
 * crafted.  Each file is read with a size cap, every count is checked
 * against the size of the file it describes, and every offset against the
 * buffer it points into, with overflow-safe arithmetic.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <elf.h>
#include <endian.h>

#include <bpf/btf.h>
#include <openssl/evp.h>

#include "libbpfstash.h"
#include "internal.h"

#ifndef BPFSTASH_MAGIC
#define BPFSTASH_MAGIC 0x62707374
#endif

static const char *const blob_files[BPFSTASH_NR_BLOB_FILES] = {
	[BPFSTASH_JITED]		= "jited",
	[BPFSTASH_LINE_INFO]		= "line_info",
	[BPFSTASH_JITED_LINE_INFO]	= "jited_line_info",
	[BPFSTASH_FUNC_INFO]		= "func_info",
	[BPFSTASH_BTF]			= "btf",
};

static __thread char error_detail[256];

void bst_set_error_detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(error_detail, sizeof(error_detail), fmt, ap);
	va_end(ap);
}

const char *bpfstash_error_detail(void)
{
	return error_detail;
}

const char *bpfstash_blob_file(enum bpfstash_blob blob)
{
	return (unsigned int)blob < BPFSTASH_NR_BLOB_FILES ? blob_files[blob] : NULL;
}

/*
 * An image's calls file and a program's pokes file: optional, so not blob
 * files (see libbpfstash.h).
 */
#define CALLS_FILE	"calls"
#define CALLS_MAX	((size_t)BPFSTASH_MAX_CALLS * sizeof(struct bpfstash_call))
#define POKES_FILE	"pokes"
#define POKES_MAX	((size_t)BPFSTASH_MAX_POKES * sizeof(struct bpfstash_poke))

/* The place of content.version in meta, the same in every version. */
#define META_VERSION_OFF	offsetof(struct bpfstash_meta, content.version)

static const char *const image_kinds[] = {
	[BPFSTASH_IMAGE_TRAMPOLINE]	= "trampoline",
	[BPFSTASH_IMAGE_STRUCT_OPS]	= "struct_ops",
	[BPFSTASH_IMAGE_DISPATCHER]	= "dispatcher",
};

static const char *const call_kinds[] = {
	[BPFSTASH_CALL_FENTRY]		= "fentry",
	[BPFSTASH_CALL_FEXIT]		= "fexit",
	[BPFSTASH_CALL_MODIFY_RETURN]	= "fmod_ret",
	[BPFSTASH_CALL_STRUCT_OPS]	= "struct_ops",
	[BPFSTASH_CALL_DISPATCH]	= "dispatch",
};

static const char *const poke_kinds[] = {
	[BPFSTASH_POKE_TAIL_CALL]	 = "tail_call",
	[BPFSTASH_POKE_TAIL_CALL_BYPASS] = "tail_call_bypass",
};

const char *bpfstash_image_kind_name(uint32_t kind)
{
	return kind < ARRAY_SIZE(image_kinds) ? image_kinds[kind] : NULL;
}

const char *bpfstash_poke_kind_name(uint32_t kind)
{
	return kind < ARRAY_SIZE(poke_kinds) ? poke_kinds[kind] : NULL;
}

const char *bpfstash_machine_name(uint32_t machine)
{
	switch (machine) {
	case EM_X86_64:		return "x86_64";
	case EM_AARCH64:	return "aarch64";
	case EM_RISCV:		return "riscv64";
	case EM_S390:		return "s390x";
	case EM_PPC64:		return "ppc64";
	case EM_LOONGARCH:	return "loongarch64";
	case EM_386:		return "i386";
	case EM_ARM:		return "arm";
	default:		return NULL;
	}
}

void bpfstash_boot_id_format(const uint8_t id[BPFSTASH_BOOT_ID_SIZE],
			     char str[BPFSTASH_BOOT_ID_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t i, at = 0;

	for (i = 0; i < BPFSTASH_BOOT_ID_SIZE; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			str[at++] = '-';
		str[at++] = digits[id[i] >> 4];
		str[at++] = digits[id[i] & 15];
	}
	str[at] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int bpfstash_boot_id_parse(const char *str, uint8_t id[BPFSTASH_BOOT_ID_SIZE])
{
	size_t len = strlen(str), i, at = 0;
	bool dashes = len == BPFSTASH_BOOT_ID_LEN;

	if (!dashes && len != 2 * BPFSTASH_BOOT_ID_SIZE)
		return -EINVAL;
	for (i = 0; i < BPFSTASH_BOOT_ID_SIZE; i++) {
		int hi, lo;

		if (dashes && (i == 4 || i == 6 || i == 8 || i == 10) && str[at++] != '-')
			return -EINVAL;
		hi = hex_digit(str[at++]);
		lo = hex_digit(str[at++]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		id[i] = hi << 4 | lo;
	}
	return 0;
}

int bpfstash_boot_id_current(uint8_t id[BPFSTASH_BOOT_ID_SIZE])
{
	char buf[BPFSTASH_BOOT_ID_LEN + 2] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int err;

	if (!f)
		return -errno;
	err = fgets(buf, sizeof(buf), f) ? 0 : -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return err ?: bpfstash_boot_id_parse(buf, id);
}

uint32_t bpfstash_format_version(void)
{
	return BPFSTASH_VERSION;
}

uint32_t libbpfstash_major_version(void)
{
	return LIBBPFSTASH_MAJOR_VERSION;
}

uint32_t libbpfstash_minor_version(void)
{
	return LIBBPFSTASH_MINOR_VERSION;
}

#define BST_STR(x) #x
#define BST_VERSION_STRING(major, minor) "v" BST_STR(major) "." BST_STR(minor)

const char *libbpfstash_version_string(void)
{
	return BST_VERSION_STRING(LIBBPFSTASH_MAJOR_VERSION, LIBBPFSTASH_MINOR_VERSION);
}

const char *bpfstash_call_kind_name(uint32_t kind)
{
	return kind < ARRAY_SIZE(call_kinds) ? call_kinds[kind] : NULL;
}

int bpfstash_open(const char *root, struct bpfstash **out)
{
	struct bpfstash *s;
	struct statfs sfs;
	int err;

	*out = NULL;
	if (!root)
		root = BPFSTASH_DEFAULT_ROOT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->root = strdup(root);
	if (!s->root) {
		free(s);
		return -ENOMEM;
	}
	s->dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		err = -errno;
		free(s->root);
		free(s);
		return err;
	}
	if (!fstatfs(s->dirfd, &sfs) && sfs.f_type == BPFSTASH_MAGIC)
		s->mounted = true;
	*out = s;
	return 0;
}

void bpfstash_close(struct bpfstash *s)
{
	if (!s)
		return;
	close(s->dirfd);
	free(s->root);
	free(s);
}

const char *bpfstash_root(const struct bpfstash *s)
{
	return s->root;
}

int bpfstash_dirfd(const struct bpfstash *s)
{
	return s->dirfd;
}

bool bpfstash_is_mounted(const struct bpfstash *s)
{
	return s->mounted;
}

int bpfstash_kernel_supported(void)
{
	char line[128];
	int found = 0;
	FILE *f;

	f = fopen("/proc/filesystems", "re");
	if (!f)
		return -errno;
	/* "nodev\tbpfstash\n" */
	while (!found && fgets(line, sizeof(line), f)) {
		const char *name = strrchr(line, '\t');

		found = name && !strcmp(name + 1, "bpfstash\n");
	}
	fclose(f);
	return found;
}

bool bpfstash_name_valid(const char *name)
{
	size_t i;

	for (i = 0; i < BPFSTASH_HEX_LEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		      (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return name[i] == '\0';
}

int bpfstash_hash_parse(const char *hex, uint8_t hash[BPFSTASH_HASH_SIZE])
{
	size_t i;

	if (!bpfstash_name_valid(hex))
		return -EINVAL;
	for (i = 0; i < BPFSTASH_HASH_SIZE; i++) {
		unsigned int hi = hex[2 * i], lo = hex[2 * i + 1];

		hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
		lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
		hash[i] = hi << 4 | lo;
	}
	return 0;
}

void bpfstash_hash_format(const uint8_t hash[BPFSTASH_HASH_SIZE],
			  char hex[BPFSTASH_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < BPFSTASH_HASH_SIZE; i++) {
		hex[2 * i] = digits[hash[i] >> 4];
		hex[2 * i + 1] = digits[hash[i] & 15];
	}
	hex[BPFSTASH_HEX_LEN] = '\0';
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bpfstash_list(struct bpfstash *s, char ***out, size_t *count)
{
	size_t n = 0, cap = 0;
	char **names = NULL, **tmp;
	struct dirent *de;
	DIR *dir;
	int fd, err = 0;

	*out = NULL;
	*count = 0;
	fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while ((de = readdir(dir))) {
		if (!bpfstash_name_valid(de->d_name))
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 256;
			tmp = realloc(names, cap * sizeof(*names));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			names = tmp;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			goto out;
		}
		names[++n] = NULL;
		errno = 0;
	}
	if (errno)
		err = -errno;
out:
	closedir(dir);
	if (err) {
		if (names)
			names[n] = NULL;
		bpfstash_names_free(names);
		return err;
	}
	if (!names) {
		names = calloc(1, sizeof(*names));
		if (!names)
			return -ENOMEM;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*count = n;
	return 0;
}

void bpfstash_names_free(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/*
 * Read all of "@name/@file" into a new buffer.  More than @max bytes is an
 * error (-EBADMSG), never a reason to allocate.  A symlink is refused.
 */
int bst_read_file_at(int dirfd, const char *name, const char *file, size_t max,
		     void **buf, size_t *size)
{
	char path[BPFSTASH_HEX_LEN + 32];
	size_t cap, len = 0;
	uint8_t *p = NULL, *tmp;
	struct stat st;
	ssize_t n;
	int fd, err;

	*buf = NULL;
	*size = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", name, file) >= sizeof(path))
		return -ENAMETOOLONG;
	/*
	 * A copied stash can hold anything under an entry's names: open only
	 * a regular file, without blocking (a FIFO's open waits for a writer,
	 * a device's can act), and make sure it is still the file looked at.
	 */
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return bst_bad("%s: not a regular file", path);
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = bst_bad("%s: not a regular file", path);
		goto out;
	}
	/* st_size is a hint only: bpfstash text files report 0. */
	cap = st.st_size > 0 && (uint64_t)st.st_size <= max ? (size_t)st.st_size + 1 : 4096;
	for (;;) {
		if (len == cap || !p) {
			if (p)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			tmp = realloc(p, cap ? cap : 1);
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			p = tmp;
		}
		n = read(fd, p + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += n;
		if (len > max) {
			err = bst_bad("%s: larger than %zu bytes", path, max);
			goto out;
		}
	}
	*buf = p;
	*size = len;
	p = NULL;
	err = 0;
out:
	free(p);
	close(fd);
	return err;
}

void bpfstash_entry_free(struct bpfstash_entry *e)
{
	int i;

	if (!e)
		return;
	free(e->funcs);
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++)
		free(e->blobs[i]);
	free(e->calls);
	free(e->pokes);
	free(e->line_order);
	btf__free(e->btf);
	free(e);
}

static bool mul_fits(uint64_t a, uint64_t b, uint64_t want)
{
	return b == 0 ? want == 0 : (a <= UINT64_MAX / b && a * b == want);
}

/* Check meta, funcs and the blob sizes against each other. */
static int entry_check(struct bpfstash_entry *e)
{
	const struct bpfstash_content *c = &e->meta.content;
	const struct bpfstash_func *f;
	const char *names;
	size_t names_len;
	uint64_t offset = 0;
	uint32_t i;

	if (c->nr_funcs < 1 || c->nr_funcs > BPFSTASH_MAX_FUNCS)
		return bst_bad("meta: nr_funcs %u is not in 1..%u", c->nr_funcs,
			       BPFSTASH_MAX_FUNCS);
	if (c->nr_pokes > BPFSTASH_MAX_POKES)
		return bst_bad("meta: nr_pokes %u is above %u", c->nr_pokes, BPFSTASH_MAX_POKES);
	if (c->__reserved_1 || c->__reserved_2)
		return bst_bad("meta: a reserved field of content is not 0");
	if (c->jited_len > BPFSTASH_MAX_JITED)
		return bst_bad("meta: jited_len %u is above %u", c->jited_len, BPFSTASH_MAX_JITED);
	if (c->nr_line_info > BPFSTASH_MAX_LINES)
		return bst_bad("meta: nr_line_info %u is above %u", c->nr_line_info,
			       BPFSTASH_MAX_LINES);
	if (c->nr_func_info > BPFSTASH_MAX_FUNC_INFO)
		return bst_bad("meta: nr_func_info %u is above %u", c->nr_func_info,
			       BPFSTASH_MAX_FUNC_INFO);
	if (c->btf_size > BPFSTASH_MAX_BTF)
		return bst_bad("meta: btf_size %u is above %u", c->btf_size, BPFSTASH_MAX_BTF);
	if (c->nr_jited_line_info && c->nr_jited_line_info != c->nr_line_info)
		return bst_bad("meta: nr_jited_line_info %u is neither 0 nor nr_line_info %u",
			       c->nr_jited_line_info, c->nr_line_info);
	if (c->nr_line_info && c->line_info_rec_size != sizeof(struct bpf_line_info))
		return bst_bad("meta: line_info_rec_size %u is not %zu", c->line_info_rec_size,
			       sizeof(struct bpf_line_info));
	if (c->nr_func_info && c->func_info_rec_size != sizeof(struct bpf_func_info))
		return bst_bad("meta: func_info_rec_size %u is not %zu", c->func_info_rec_size,
			       sizeof(struct bpf_func_info));
	if (!memchr(c->name, '\0', sizeof(c->name)))
		return bst_bad("meta: name is not NUL-terminated");
	if (!memchr(e->meta.attach_func_name, '\0', sizeof(e->meta.attach_func_name)))
		return bst_bad("meta: attach_func_name is not NUL-terminated");
	if (!memchr(e->meta.link_target, '\0', sizeof(e->meta.link_target)))
		return bst_bad("meta: link_target is not NUL-terminated");

	/*
	 * Only an image calls programs.  Unknown kinds are kept (a newer
	 * kernel's), as the kernel's "info" prints their number; the
	 * reserved field must be 0 so that it can get a meaning.
	 */
	if (e->nr_calls && !c->image_kind)
		return bst_bad("calls: a program (image_kind 0) has calls");
	for (i = 0; i < e->nr_calls; i++) {
		if (e->calls[i].__reserved)
			return bst_bad("calls: record %u: reserved field is not 0", i);
		if (!memchr(e->calls[i].name, '\0', sizeof(e->calls[i].name)))
			return bst_bad("calls: record %u: name is not NUL-terminated", i);
	}

	if (e->meta_only)
		return 0;

	/* funcs: the records, then names that each end inside the file. */
	if (e->funcs_size != c->funcs_size)
		return bst_bad("funcs: %zu bytes, meta's funcs_size says %u", e->funcs_size,
			       c->funcs_size);
	if (e->funcs_size < (uint64_t)c->nr_funcs * sizeof(*f))
		return bst_bad("funcs: %zu bytes hold fewer than nr_funcs %u records",
			       e->funcs_size, c->nr_funcs);
	f = (const struct bpfstash_func *)e->funcs;
	names = (const char *)(f + c->nr_funcs);
	names_len = e->funcs_size - c->nr_funcs * sizeof(*f);
	for (i = 0; i < c->nr_funcs; i++) {
		if (f[i].offset != offset)
			return bst_bad("funcs: function %u: offset %u, not %llu", i,
				       f[i].offset, (unsigned long long)offset);
		if (f[i].len == 0 || f[i].addr + f[i].len < f[i].addr)
			return bst_bad("funcs: function %u: length %u at 0x%llx", i, f[i].len,
				       (unsigned long long)f[i].addr);
		/* The entry patch site, if any, inside the function. */
		if ((f[i].entry_poke_len &&
		     (uint32_t)f[i].entry_poke_off + f[i].entry_poke_len > f[i].len) ||
		    (!f[i].entry_poke_len && f[i].entry_poke_off))
			return bst_bad("funcs: function %u: entry patch site %u+%u is outside it",
				       i, f[i].entry_poke_off, f[i].entry_poke_len);
		if (f[i].name_off >= names_len ||
		    !memchr(names + f[i].name_off, '\0', names_len - f[i].name_off))
			return bst_bad("funcs: function %u: name at %u does not end in the file",
				       i, f[i].name_off);
		offset += f[i].len;
	}
	if (offset != c->jited_len)
		return bst_bad("funcs: the functions hold %llu bytes, meta's jited_len says %u",
			       (unsigned long long)offset, c->jited_len);

	/* pokes: the records meta counts, each inside its function. */
	if (e->nr_pokes != c->nr_pokes)
		return bst_bad("pokes: %u records, meta's nr_pokes says %u", e->nr_pokes,
			       c->nr_pokes);
	for (i = 0; i < e->nr_pokes; i++) {
		const struct bpfstash_poke *p = &e->pokes[i];

		if (p->func >= c->nr_funcs || !p->len || p->len > f[p->func].len ||
		    p->off > f[p->func].len - p->len)
			return bst_bad("pokes: record %u is not inside a function", i);
	}

	if (e->sizes[BPFSTASH_JITED] != c->jited_len)
		return bst_bad("jited: %zu bytes, meta's jited_len says %u",
			       e->sizes[BPFSTASH_JITED], c->jited_len);
	if (!mul_fits(c->nr_line_info, sizeof(struct bpf_line_info),
		      e->sizes[BPFSTASH_LINE_INFO]))
		return bst_bad("line_info: %zu bytes, not nr_line_info %u records",
			       e->sizes[BPFSTASH_LINE_INFO], c->nr_line_info);
	if (!mul_fits(c->nr_jited_line_info, sizeof(struct bpfstash_jited_line),
		      e->sizes[BPFSTASH_JITED_LINE_INFO]))
		return bst_bad("jited_line_info: %zu bytes, not nr_jited_line_info %u records",
			       e->sizes[BPFSTASH_JITED_LINE_INFO], c->nr_jited_line_info);
	if (!mul_fits(c->nr_func_info, sizeof(struct bpf_func_info),
		      e->sizes[BPFSTASH_FUNC_INFO]))
		return bst_bad("func_info: %zu bytes, not nr_func_info %u records",
			       e->sizes[BPFSTASH_FUNC_INFO], c->nr_func_info);
	if (e->sizes[BPFSTASH_BTF] != c->btf_size)
		return bst_bad("btf: %zu bytes, meta's btf_size says %u", e->sizes[BPFSTASH_BTF],
			       c->btf_size);

	if (c->nr_jited_line_info) {
		const struct bpfstash_jited_line *jl = e->blobs[BPFSTASH_JITED_LINE_INFO];

		for (i = 0; i < c->nr_jited_line_info; i++)
			if (jl[i].func >= c->nr_funcs || jl[i].off >= f[jl[i].func].len)
				return bst_bad("jited_line_info: record %u is outside the code", i);
	}
	return 0;
}

/* Size caps of the files, so that a crafted copy never makes us allocate much. */
static const size_t blob_caps[BPFSTASH_NR_BLOB_FILES] = {
	[BPFSTASH_JITED] = BPFSTASH_MAX_JITED,
	[BPFSTASH_LINE_INFO] = (size_t)BPFSTASH_MAX_LINES * sizeof(struct bpf_line_info),
	[BPFSTASH_JITED_LINE_INFO] =
		(size_t)BPFSTASH_MAX_LINES * sizeof(struct bpfstash_jited_line),
	[BPFSTASH_FUNC_INFO] = (size_t)BPFSTASH_MAX_FUNC_INFO * sizeof(struct bpf_func_info),
	[BPFSTASH_BTF] = BPFSTASH_MAX_BTF,
};

static struct bpfstash_entry *entry_new(unsigned int flags)
{
	struct bpfstash_entry *e = calloc(1, sizeof(*e));

	if (e)
		e->meta_only = flags & BPFSTASH_LOAD_META;
	return e;
}

/*
 * The format version in a meta file of @size bytes: -EBADMSG if too short.
 * Formats 1 and 2 had it first, where meta_size is now, which is never
 * below the 12 bytes that hold both.
 */
static int meta_version(const void *buf, size_t size, uint32_t *version)
{
	uint32_t v;

	if (size < sizeof(v))
		return bst_bad("meta: %zu bytes, too short for a version", size);
	memcpy(&v, buf, sizeof(v));
	if (le32toh(v) == 1 || le32toh(v) == 2) {
		*version = le32toh(v);
		return 0;
	}
	if (size < META_VERSION_OFF + sizeof(v))
		return bst_bad("meta: %zu bytes, too short for a version", size);
	memcpy(&v, (const uint8_t *)buf + META_VERSION_OFF, sizeof(v));
	*version = le32toh(v);
	return 0;
}

int bpfstash_entry_version_at(int dirfd, const char *name, uint32_t *version)
{
	size_t size;
	void *buf;
	int err;

	if (!bpfstash_name_valid(name))
		return -EINVAL;
	err = bst_read_file_at(dirfd, name, "meta", BPFSTASH_MAX_META, &buf, &size);
	if (err)
		return err;
	err = meta_version(buf, size, version);
	free(buf);
	return err;
}

int bpfstash_entry_version(struct bpfstash *s, const char *name, uint32_t *version)
{
	return bpfstash_entry_version_at(s->dirfd, name, version);
}

/*
 * Take meta, and the entry's name: @name, which meta must repeat (a copy
 * renamed by hand is not this entry), or meta's if @name is NULL.  A meta
 * of another version is not read further; one larger than this library
 * knows (a later kernel's state) must say its size, and is read as far as
 * the library knows it.
 */
static int entry_set_meta(struct bpfstash_entry *e, const char *name, const void *buf,
			  size_t size)
{
	char hex[BPFSTASH_HEX_LEN + 1];
	uint32_t version, meta_size;
	int err;

	err = meta_version(buf, size, &version);
	if (err)
		return err;
	if (version != BPFSTASH_VERSION)
		return -EPROTONOSUPPORT;
	memcpy(&meta_size, buf, sizeof(meta_size));
	if (size < sizeof(e->meta) || le32toh(meta_size) != size)
		return bst_bad("meta: %zu bytes, its meta_size says %u (at least %zu)", size,
			       le32toh(meta_size), sizeof(e->meta));
	memcpy(&e->meta, buf, sizeof(e->meta));
	if (BST_HOST_BE)
		bst_swab_meta(&e->meta);
	bpfstash_hash_format(e->meta.hash, hex);
	if (name && strcmp(hex, name))
		return bst_bad("meta: names the entry %s", hex);
	memcpy(e->name, hex, sizeof(e->name));
	return 0;
}

/*
 * Take an optional file of records of @rec bytes, at most @max bytes
 * (@buf, @size; NULL if there is none): whole records only, and an empty
 * file is no file, as the hash has it.  *@out and *@nr, or -EBADMSG.
 */
static int take_records(const char *what, void *buf, size_t size, size_t rec, size_t max,
			void **out, uint32_t *nr)
{
	if (size % rec || size > max) {
		free(buf);
		return bst_bad("%s: %zu bytes, not whole records of %zu up to %zu", what, size,
			       rec, max);
	}
	if (!size) {
		free(buf);
		return 0;
	}
	*out = buf;
	*nr = size / rec;
	return 0;
}

/* The calls file of an image. */
static int entry_set_calls(struct bpfstash_entry *e, void *buf, size_t size)
{
	return take_records("calls", buf, size, sizeof(struct bpfstash_call), CALLS_MAX,
			    (void **)&e->calls, &e->nr_calls);
}

/* The pokes file of a program with direct tail calls. */
static int entry_set_pokes(struct bpfstash_entry *e, void *buf, size_t size)
{
	return take_records("pokes", buf, size, sizeof(struct bpfstash_poke), POKES_MAX,
			    (void **)&e->pokes, &e->nr_pokes);
}

/*
 * Whether a load reads the calls file: always for a whole entry; for a
 * META-only one only an image's, which its "info" shows (one more file for
 * the few images, none for the many programs that ls and gc go through).
 */
static bool wants_calls(const struct bpfstash_entry *e)
{
	return !e->meta_only || e->meta.content.image_kind;
}

/*
 * The files of a whole entry are little-endian: in the host's order from
 * here on (nothing to do on a little-endian host).
 */
static void entry_to_host(struct bpfstash_entry *e)
{
	const struct bpfstash_content *c = &e->meta.content;

	if (!BST_HOST_BE)
		return;
	bst_swab_calls(e->calls, e->nr_calls);
	if (e->meta_only)
		return;
	bst_swab_funcs(e->funcs, e->funcs_size, c->nr_funcs);
	bst_swab_u32s(e->blobs[BPFSTASH_LINE_INFO], e->sizes[BPFSTASH_LINE_INFO]);
	bst_swab_u32s(e->blobs[BPFSTASH_JITED_LINE_INFO], e->sizes[BPFSTASH_JITED_LINE_INFO]);
	bst_swab_u32s(e->blobs[BPFSTASH_FUNC_INFO], e->sizes[BPFSTASH_FUNC_INFO]);
	bst_swab_u32s(e->pokes, (size_t)e->nr_pokes * sizeof(*e->pokes));
}

/* Check what was read, index it, and hand the entry over. */
static int entry_finish(struct bpfstash_entry *e, struct bpfstash_entry **out)
{
	int err;

	entry_to_host(e);
	err = entry_check(e);
	if (!err && !e->meta_only)
		err = bst_entry_index(e);
	if (err) {
		bpfstash_entry_free(e);
		return err;
	}
	*out = e;
	return 0;
}

int bpfstash_entry_load_at(int dirfd, const char *name, unsigned int flags,
			   struct bpfstash_entry **out)
{
	struct bpfstash_entry *e;
	void *buf;
	size_t size;
	int err, i;

	*out = NULL;
	if (!bpfstash_name_valid(name))
		return -EINVAL;
	e = entry_new(flags);
	if (!e)
		return -ENOMEM;

	err = bst_read_file_at(dirfd, name, "meta", BPFSTASH_MAX_META, &buf, &size);
	if (err)
		goto err;
	err = entry_set_meta(e, name, buf, size);
	free(buf);
	if (err)
		goto err;

	if (wants_calls(e)) {
		err = bst_read_file_at(dirfd, name, CALLS_FILE, CALLS_MAX, &buf, &size);
		if (err == -ENOENT)
			err = 0;	/* the file of an image, or of no entry */
		else if (!err)
			err = entry_set_calls(e, buf, size);
		if (err)
			goto err;
	}
	if (!e->meta_only) {
		err = bst_read_file_at(dirfd, name, "funcs", BST_FUNCS_MAX, &buf, &e->funcs_size);
		if (err)
			goto err;
		e->funcs = buf;
		for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++) {
			err = bst_read_file_at(dirfd, name, blob_files[i], blob_caps[i],
					       &e->blobs[i], &e->sizes[i]);
			if (err)
				goto err;
		}
		err = bst_read_file_at(dirfd, name, POKES_FILE, POKES_MAX, &buf, &size);
		if (err == -ENOENT)
			err = 0;	/* an image's, or a program's on a JIT without any */
		else if (!err)
			err = entry_set_pokes(e, buf, size);
		if (err)
			goto err;
	}
	return entry_finish(e, out);
err:
	bpfstash_entry_free(e);
	return err;
}

static void *dup_mem(const void *p, size_t size)
{
	void *q = malloc(size ? size : 1);

	if (q && size)
		memcpy(q, p, size);
	return q;
}

/*
 * The same checks on files already in memory (the fuzzer's way in, with
 * no I/O).  Each buffer is copied into an allocation of exactly its size,
 * so that a read past the end is one past an allocation for ASan.
 */
int bst_entry_load_mem(const char *name, const struct bst_entry_files *f, unsigned int flags,
		       struct bpfstash_entry **out)
{
	struct bpfstash_entry *e;
	int err, i;

	*out = NULL;
	if (name && !bpfstash_name_valid(name))
		return -EINVAL;
	if (!f->meta)
		return -ENOENT;
	e = entry_new(flags);
	if (!e)
		return -ENOMEM;
	err = entry_set_meta(e, name, f->meta, f->meta_size);
	if (err)
		goto err;
	if (wants_calls(e) && f->calls) {
		void *calls;

		if (f->calls_size > CALLS_MAX) {
			err = bst_bad("calls: %zu bytes, above %zu", f->calls_size,
				      (size_t)CALLS_MAX);
			goto err;
		}
		err = -ENOMEM;
		calls = dup_mem(f->calls, f->calls_size);
		if (!calls)
			goto err;
		err = entry_set_calls(e, calls, f->calls_size);
		if (err)
			goto err;
	}
	if (!e->meta_only) {
		err = -ENOENT;
		if (!f->funcs)
			goto err;
		for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++)
			if (!f->blobs[i])
				goto err;
		if (f->funcs_size > BST_FUNCS_MAX) {
			err = bst_bad("funcs: %zu bytes, above %zu", f->funcs_size,
				      (size_t)BST_FUNCS_MAX);
			goto err;
		}
		for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++) {
			if (f->sizes[i] > blob_caps[i]) {
				err = bst_bad("%s: %zu bytes, above %zu", blob_files[i],
					      f->sizes[i], blob_caps[i]);
				goto err;
			}
		}
		err = -ENOMEM;
		e->funcs = dup_mem(f->funcs, f->funcs_size);
		if (!e->funcs)
			goto err;
		e->funcs_size = f->funcs_size;
		for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++) {
			e->blobs[i] = dup_mem(f->blobs[i], f->sizes[i]);
			if (!e->blobs[i])
				goto err;
			e->sizes[i] = f->sizes[i];
		}
		if (f->pokes) {
			void *pokes;

			if (f->pokes_size > POKES_MAX) {
				err = bst_bad("pokes: %zu bytes, above %zu", f->pokes_size,
					      (size_t)POKES_MAX);
				goto err;
			}
			err = -ENOMEM;
			pokes = dup_mem(f->pokes, f->pokes_size);
			if (!pokes)
				goto err;
			err = entry_set_pokes(e, pokes, f->pokes_size);
			if (err)
				goto err;
		}
	}
	return entry_finish(e, out);
err:
	bpfstash_entry_free(e);
	return err;
}

int bpfstash_entry_load(struct bpfstash *s, const char *name, unsigned int flags,
			struct bpfstash_entry **entry)
{
	return bpfstash_entry_load_at(s->dirfd, name, flags, entry);
}

const char *bpfstash_entry_name(const struct bpfstash_entry *e)
{
	return e->name;
}

const struct bpfstash_meta *bpfstash_entry_meta(const struct bpfstash_entry *e)
{
	return &e->meta;
}

bool bpfstash_entry_loaded(const struct bpfstash_entry *e)
{
	return e->meta.flags & BPFSTASH_META_LOADED;
}

uint32_t bpfstash_entry_nr_funcs(const struct bpfstash_entry *e)
{
	return e->meta_only ? 0 : e->meta.content.nr_funcs;
}

const struct bpfstash_func *bpfstash_entry_func(const struct bpfstash_entry *e, uint32_t i)
{
	if (i >= bpfstash_entry_nr_funcs(e))
		return NULL;
	return (const struct bpfstash_func *)e->funcs + i;
}

const char *bpfstash_entry_func_name(const struct bpfstash_entry *e, uint32_t i)
{
	const struct bpfstash_func *f = bpfstash_entry_func(e, i);

	if (!f)
		return NULL;
	return (const char *)((const struct bpfstash_func *)e->funcs +
			      e->meta.content.nr_funcs) + f->name_off;
}

const struct bpfstash_call *bpfstash_entry_calls(const struct bpfstash_entry *e, uint32_t *nr)
{
	*nr = e->nr_calls;
	return e->calls;
}

const struct bpfstash_poke *bpfstash_entry_pokes(const struct bpfstash_entry *e, uint32_t *nr)
{
	*nr = e->nr_pokes;
	return e->pokes;
}

const void *bpfstash_entry_blob(const struct bpfstash_entry *e, enum bpfstash_blob blob,
				size_t *size)
{
	if ((unsigned int)blob >= BPFSTASH_NR_BLOB_FILES || e->meta_only) {
		*size = 0;
		return NULL;
	}
	*size = e->sizes[blob];
	return e->blobs[blob];
}

int bst_sha256(const void *data, size_t len, uint8_t out[BPFSTASH_DIGEST_SIZE])
{
	unsigned int n = BPFSTASH_DIGEST_SIZE;

	return EVP_Digest(data ? data : "", len, out, &n, EVP_sha256(), NULL) &&
	       n == BPFSTASH_DIGEST_SIZE ? 0 : -EIO;
}

/*
 * The digest of @n bytes of records at @p as the entry's file holds them,
 * little-endian: on a big-endian host (@swab), of a copy swapped back with
 * @fn.
 */
static int digest_le(const void *p, size_t n, bool swab, void (*fn)(void *, size_t),
		     uint8_t out[BPFSTASH_DIGEST_SIZE])
{
	void *copy;
	int err;

	if (!swab || !n)
		return bst_sha256(p, n, out);
	copy = dup_mem(p, n);
	if (!copy)
		return -ENOMEM;
	fn(copy, n);
	err = bst_sha256(copy, n, out);
	free(copy);
	return err;
}

static void swab_calls_bytes(void *p, size_t n)
{
	bst_swab_calls(p, n / sizeof(struct bpfstash_call));
}

int bst_entry_compute_hash(const struct bpfstash_entry *e, bool host_be,
			   uint8_t hash[BPFSTASH_HASH_SIZE])
{
	static const char domain[] = BPFSTASH_HASH_DOMAIN;
	/* The files in the order the serialisation has them. */
	uint8_t d[BPFSTASH_NR_BLOB_FILES + 2][BPFSTASH_DIGEST_SIZE];
	struct bpfstash_content content = e->meta.content;
	uint8_t out[BPFSTASH_DIGEST_SIZE];
	unsigned int n = sizeof(out);
	uint8_t *funcs = e->funcs;
	EVP_MD_CTX *ctx;
	int i, ok, err = 0;

	if (e->meta_only)
		return -EINVAL;
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES && !err; i++)
		err = digest_le(e->blobs[i], e->sizes[i],
				host_be && i != BPFSTASH_JITED && i != BPFSTASH_BTF,
				bst_swab_u32s, d[i]);
	err = err ?: digest_le(e->calls, (size_t)e->nr_calls * sizeof(*e->calls), host_be,
			       swab_calls_bytes, d[i++]);
	err = err ?: digest_le(e->pokes, (size_t)e->nr_pokes * sizeof(*e->pokes), host_be,
			       bst_swab_u32s, d[i]);
	if (err)
		return err == -ENOMEM ? err : -EIO;
	if (host_be) {
		funcs = dup_mem(e->funcs, e->funcs_size);
		if (!funcs)
			return -ENOMEM;
		bst_swab_funcs(funcs, e->funcs_size, content.nr_funcs);
		bst_swab_content(&content);
	}
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, domain, sizeof(domain)) &&
	     EVP_DigestUpdate(ctx, &content, sizeof(content)) &&
	     EVP_DigestUpdate(ctx, funcs, e->funcs_size) &&
	     EVP_DigestUpdate(ctx, d, sizeof(d)) &&
	     EVP_DigestFinal_ex(ctx, out, &n);
	EVP_MD_CTX_free(ctx);
	if (funcs != e->funcs)
		free(funcs);
	if (!ok || n != sizeof(out))
		return -EIO;
	memcpy(hash, out, BPFSTASH_HASH_SIZE);
	return 0;
}

int bpfstash_entry_compute_hash(const struct bpfstash_entry *e,
				uint8_t hash[BPFSTASH_HASH_SIZE])
{
	return bst_entry_compute_hash(e, BST_HOST_BE, hash);
}

int bpfstash_entry_verify(const struct bpfstash_entry *e)
{
	uint8_t hash[BPFSTASH_HASH_SIZE];
	char hex[BPFSTASH_HEX_LEN + 1];
	int err;

	err = bpfstash_entry_compute_hash(e, hash);
	if (err)
		return err;
	bpfstash_hash_format(hash, hex);
	if (strcmp(hex, e->name))
		return bst_bad("the content hashes to %s", hex);
	return 0;
}
