// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpfstash: address -> function, offset, file:line:col and source.
 *
 * At load, the line records are ordered by (function, offset) once, so a
 * lookup is a binary search: profilers resolve many samples per entry.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "internal.h"

static const struct bpfstash_jited_line *jlines(const struct bpfstash_entry *e)
{
	return e->blobs[BPFSTASH_JITED_LINE_INFO];
}

/* qsort_r() is a GNU extension; keep the entry in a thread-local instead. */
static __thread const struct bpfstash_jited_line *sort_lines;

static int cmp_line(const void *a, const void *b)
{
	const struct bpfstash_jited_line *x = &sort_lines[*(const uint32_t *)a];
	const struct bpfstash_jited_line *y = &sort_lines[*(const uint32_t *)b];

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* Stable: the later record at one address wins, as in the kernel. */
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int bst_libbpf_silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/*
 * libbpf prints what it finds wrong in a BTF blob, through the process's
 * one print function: the library promises not to print, so the caller's
 * function is set aside for the call and put back.  One lock keeps two of
 * our calls from putting back each other's silence; a print function the
 * caller sets from another thread meanwhile is replaced when the call
 * ends.
 */
static struct btf *bst_btf_new(const void *data, uint32_t size)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	libbpf_print_fn_t prev;
	struct btf *btf;

	pthread_mutex_lock(&lock);
	prev = libbpf_set_print(bst_libbpf_silent);
	btf = btf__new(data, size);
	libbpf_set_print(prev);
	pthread_mutex_unlock(&lock);
	return btf;
}

int bst_entry_index(struct bpfstash_entry *e)
{
	const struct bpfstash_content *c = &e->meta.content;
	uint32_t i;

	if (c->btf_size) {
		e->btf = bst_btf_new(e->blobs[BPFSTASH_BTF], c->btf_size);
		if (!e->btf)
			return bst_bad("btf: libbpf cannot parse it");
	}
	if (!c->nr_jited_line_info)
		return 0;
	e->line_order = malloc(c->nr_jited_line_info * sizeof(*e->line_order));
	if (!e->line_order)
		return -ENOMEM;
	for (i = 0; i < c->nr_jited_line_info; i++)
		e->line_order[i] = i;
	sort_lines = jlines(e);
	qsort(e->line_order, c->nr_jited_line_info, sizeof(*e->line_order), cmp_line);
	sort_lines = NULL;
	return 0;
}

static const char *btf_str(const struct bpfstash_entry *e, uint32_t off)
{
	const char *s = e->btf ? btf__name_by_offset(e->btf, off) : NULL;

	return s ? s : "?";
}

/* The BTF name of function @func, through func_info. */
static const char *btf_func_name(const struct bpfstash_entry *e, uint32_t func)
{
	const struct bpf_func_info *fi = e->blobs[BPFSTASH_FUNC_INFO];
	const struct btf_type *t;

	if (!e->btf || func >= e->meta.content.nr_func_info)
		return NULL;
	t = btf__type_by_id(e->btf, fi[func].type_id);
	if (!t || !btf_is_func(t))
		return NULL;
	return btf__name_by_offset(e->btf, t->name_off);
}

/* Fill @loc's line part from line record @idx (of function loc->func). */
static void set_line(const struct bpfstash_entry *e, uint32_t idx, struct bpfstash_location *loc)
{
	const struct bpf_line_info *li = e->blobs[BPFSTASH_LINE_INFO];

	li += idx;
	loc->line_idx = idx;
	loc->has_line = true;
	loc->line_addr = loc->func_addr + jlines(e)[idx].off;
	loc->file = btf_str(e, li->file_name_off);
	loc->line = BPF_LINE_INFO_LINE_NUM(li->line_col);
	loc->col = BPF_LINE_INFO_LINE_COL(li->line_col);
	loc->source = btf_str(e, li->line_off);
	if (!strcmp(loc->source, "?"))
		loc->source = "";
	while (*loc->source == ' ' || *loc->source == '\t')
		loc->source++;
}

static void fill_line(const struct bpfstash_entry *e, uint32_t func, uint32_t off,
		      struct bpfstash_location *loc)
{
	const struct bpfstash_content *c = &e->meta.content;
	const struct bpfstash_jited_line *jl = jlines(e);
	uint32_t lo = 0, hi = c->nr_jited_line_info, best = UINT32_MAX;

	loc->has_line = false;
	loc->file = "?";
	loc->source = "";
	/* The last record with (func, off') <= (func, off), in func. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct bpfstash_jited_line *m = &jl[e->line_order[mid]];

		if (m->func < func || (m->func == func && m->off <= off)) {
			if (m->func == func)
				best = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (best != UINT32_MAX)
		set_line(e, e->line_order[best], loc);
}

static void set_func(const struct bpfstash_entry *e, uint32_t i, uint64_t addr,
		     struct bpfstash_location *loc)
{
	const struct bpfstash_func *f = bpfstash_entry_func(e, i);

	memset(loc, 0, sizeof(*loc));
	loc->addr = addr;
	loc->func = i;
	loc->func_addr = f->addr;
	loc->func_off = addr - f->addr;
	loc->func_name = bpfstash_entry_func_name(e, i);
	loc->btf_name = btf_func_name(e, i);
}

const char *bpfstash_entry_func_btf_name(const struct bpfstash_entry *e, uint32_t i)
{
	if (i >= bpfstash_entry_nr_funcs(e))
		return NULL;
	return btf_func_name(e, i);
}

uint32_t bpfstash_entry_nr_lines(const struct bpfstash_entry *e)
{
	return e->meta_only ? 0 : e->meta.content.nr_jited_line_info;
}

int bpfstash_entry_line(const struct bpfstash_entry *e, uint32_t i,
			struct bpfstash_location *loc)
{
	const struct bpfstash_jited_line *jl;
	uint32_t idx;

	if (i >= bpfstash_entry_nr_lines(e)) {
		memset(loc, 0, sizeof(*loc));
		return -ENOENT;
	}
	idx = e->line_order[i];
	jl = &jlines(e)[idx];
	set_func(e, jl->func, bpfstash_entry_func(e, jl->func)->addr + jl->off, loc);
	set_line(e, idx, loc);
	return 0;
}

int bpfstash_entry_resolve(const struct bpfstash_entry *e, uint64_t addr,
			   struct bpfstash_location *loc)
{
	uint32_t i, n = bpfstash_entry_nr_funcs(e);

	memset(loc, 0, sizeof(*loc));
	loc->addr = addr;
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		if (addr < f->addr || addr - f->addr >= f->len)
			continue;
		set_func(e, i, addr, loc);
		fill_line(e, i, loc->func_off, loc);
		return 0;
	}
	return -ENOENT;
}

int bpfstash_entry_resolve_offset(const struct bpfstash_entry *e, uint64_t offset,
				  struct bpfstash_location *loc)
{
	uint32_t i, n = bpfstash_entry_nr_funcs(e);

	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		/* This function, even if a crafted entry overlaps another. */
		if (offset >= f->offset && offset - f->offset < f->len) {
			set_func(e, i, f->addr + (offset - f->offset), loc);
			fill_line(e, i, loc->func_off, loc);
			return 0;
		}
	}
	memset(loc, 0, sizeof(*loc));
	return -ENOENT;
}

/* An entry whose code may hold the address, and how it ranks. */
struct candidate {
	const char *name;
	bool loaded;
	uint64_t load_time;
};

/* Addresses are reused: the loaded program first, then the newest. */
static int cmp_candidates(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->loaded != y->loaded)
		return x->loaded ? -1 : 1;
	if (x->load_time != y->load_time)
		return x->load_time > y->load_time ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The meta and funcs files of entry @name, read for a quick test: false
 * unless both read and meta has its size.  The caller frees both.
 */
static bool quick_read(int dirfd, const char *name, void **meta, void **funcs, size_t *fsize)
{
	size_t msize;

	if (bst_read_file_at(dirfd, name, "meta", BPFSTASH_MAX_META, meta, &msize))
		return false;
	if (msize < sizeof(struct bpfstash_meta) ||
	    le32toh(((struct bpfstash_meta *)*meta)->content.version) != BPFSTASH_VERSION ||
	    bst_read_file_at(dirfd, name, "funcs", BST_FUNCS_MAX, funcs, fsize)) {
		free(*meta);
		return false;
	}
	return true;
}

/*
 * Whether entry @name holds @addr, from its meta and funcs files alone: a
 * cheap test before the full load (the sizes checked only as far as this
 * reads them; the full load checks everything).
 */
static bool quick_holds(int dirfd, const char *name, uint64_t addr, struct candidate *c)
{
	const struct bpfstash_func *f;
	struct bpfstash_meta *m;
	void *meta, *funcs;
	size_t fsize;
	bool found = false;
	uint32_t i, nr;

	if (!quick_read(dirfd, name, &meta, &funcs, &fsize))
		return false;
	m = meta;
	f = funcs;
	/* The files as read: little-endian. */
	nr = le32toh(m->content.nr_funcs);
	if (nr <= BPFSTASH_MAX_FUNCS && fsize >= (size_t)nr * sizeof(*f)) {
		for (i = 0; i < nr && !found; i++)
			found = addr >= le64toh(f[i].addr) &&
				addr - le64toh(f[i].addr) < le32toh(f[i].len);
	}
	c->name = name;
	c->loaded = le32toh(m->flags) & BPFSTASH_META_LOADED;
	c->load_time = le64toh(m->load_time);
	free(meta);
	free(funcs);
	return found;
}

int bpfstash_resolve(struct bpfstash *s, uint64_t addr, struct bpfstash_entry **out,
		     struct bpfstash_location *loc)
{
	struct candidate *cands = NULL, *tmp;
	size_t count, i, n = 0, cap = 0;
	struct bpfstash_entry *e;
	char **names;
	int err;

	*out = NULL;
	err = bpfstash_list(s, &names, &count);
	if (err)
		return err;
	for (i = 0; i < count; i++) {
		struct candidate c;

		if (!quick_holds(s->dirfd, names[i], addr, &c))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			tmp = realloc(cands, cap * sizeof(*cands));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			cands = tmp;
		}
		cands[n++] = c;
	}
	if (n > 1)
		qsort(cands, n, sizeof(*cands), cmp_candidates);
	/* The best that loads whole (unreadable or corrupt is not an answer). */
	err = -ENOENT;
	for (i = 0; i < n; i++) {
		if (bpfstash_entry_load(s, cands[i].name, 0, &e))
			continue;
		if (!bpfstash_entry_resolve(e, addr, loc)) {
			*out = e;
			err = 0;
			break;
		}
		bpfstash_entry_free(e);
	}
out:
	free(cands);
	bpfstash_names_free(names);
	return err;
}

/*
 * Time-aware resolution: every entry that holds the address is a
 * candidate; the time, if any, keeps those whose program was loaded then.
 */
struct bpfstash_candidates {
	size_t n, cap;
	struct bpfstash_candidate *v;
};

size_t bpfstash_candidates_count(const struct bpfstash_candidates *c)
{
	return c ? c->n : 0;
}

const struct bpfstash_candidate *bpfstash_candidates_get(const struct bpfstash_candidates *c,
							 size_t i)
{
	return c && i < c->n ? &c->v[i] : NULL;
}

void bpfstash_candidates_free(struct bpfstash_candidates *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

/* What is looked up: an address, or a kallsyms name, offset and size. */
struct query {
	uint64_t addr;
	const char *symbol;
	uint64_t size;
};

/*
 * A per-run index: every entry's functions, from its meta and funcs files
 * alone (the full load of a match checks everything), by address and by
 * kallsyms name.
 */
struct bst_irow {
	uint64_t addr;
	uint32_t len;
	uint32_t entry;		/* in bpfstash_index::names */
	uint32_t func;
	const char *name;	/* kallsyms name, in the entry's funcs bytes */
};

/* An entry's state as the index read it (its meta, or the kernel's record). */
struct bst_ientry {
	bool known;
	bool loaded;
	uint32_t prog_id;
	uint64_t load_time, unload_time, load_time_real, unload_time_real;
	char prog_name[BPFSTASH_NAME_LEN];
	uint8_t boot_id[BPFSTASH_BOOT_ID_SIZE];
};

struct bpfstash_index {
	struct bpfstash *stash;
	char **names;		/* the entries listed, bpfstash_list()'s */
	struct bst_ientry *info;	/* by entry, as names */
	size_t nr_names;
	void **funcs;		/* each entry's funcs bytes, or NULL */
	struct bst_irow *rows;	/* by address */
	struct bst_irow **by_name;
	size_t nr_rows;
	uint64_t max_len;	/* the longest function */
	/* From the kernel's index file: its bytes, names in one block. */
	void *kfile;
	char *knames;
	uint64_t generation;	/* the file's, if it was settled; else 0 */
};

static void index_clear(struct bpfstash_index *x)
{
	size_t i;

	if (x->kfile) {
		free(x->names);
		free(x->knames);
		free(x->kfile);
	} else {
		for (i = 0; i < x->nr_names; i++)
			free(x->funcs[i]);
		bpfstash_names_free(x->names);
	}
	free(x->funcs);
	free(x->info);
	free(x->rows);
	free(x->by_name);
	x->funcs = NULL;
	x->info = NULL;
	x->names = NULL;
	x->kfile = NULL;
	x->knames = NULL;
	x->rows = NULL;
	x->by_name = NULL;
	x->nr_names = 0;
	x->nr_rows = 0;
	x->max_len = 0;
	x->generation = 0;
}

int bst_index_file_check(const void *buf, size_t size, struct bst_index_file *f)
{
	const struct bpfstash_index_header *h = buf;
	const uint8_t *p = buf;
	uint64_t entries, ranges, names, end;
	uint32_t i, v, next = 0;

	memset(f, 0, sizeof(*f));
	if (size < offsetof(struct bpfstash_index_header, version) + sizeof(h->version))
		return bst_bad("index: %zu bytes, too short for a header", size);
	if (le32toh(h->magic) != BPFSTASH_INDEX_MAGIC)
		return bst_bad("index: magic %#x is not %#x", le32toh(h->magic),
			       BPFSTASH_INDEX_MAGIC);
	v = le32toh(h->version);
	if (v != BPFSTASH_INDEX_VERSION) {
		bst_set_error_detail("index: format %u, this reader knows %u", v,
				     BPFSTASH_INDEX_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (size < sizeof(*h) || le32toh(h->header_size) < sizeof(*h) ||
	    le32toh(h->header_size) % 8)
		return bst_bad("index: header of %u bytes in a file of %zu, %zu known",
			       size < sizeof(*h) ? 0 : le32toh(h->header_size), size, sizeof(*h));
	f->entry_size = le32toh(h->entry_size);
	f->range_size = le32toh(h->range_size);
	f->nr_entries = le32toh(h->nr_entries);
	f->nr_ranges = le32toh(h->nr_ranges);
	f->names_size = le32toh(h->names_size);
	if (f->entry_size < sizeof(struct bpfstash_index_entry) || f->entry_size % 8 ||
	    f->range_size < sizeof(struct bpfstash_index_range) || f->range_size % 8)
		return bst_bad("index: records of %u and %u bytes, not multiples of 8 >= %zu, %zu",
			       f->entry_size, f->range_size, sizeof(struct bpfstash_index_entry),
			       sizeof(struct bpfstash_index_range));
	entries = le32toh(h->header_size);
	ranges = entries + (uint64_t)f->nr_entries * f->entry_size;
	names = ranges + (uint64_t)f->nr_ranges * f->range_size;
	end = names + f->names_size;
	if (end != size || le64toh(h->size) != size)
		return bst_bad("index: its sizes add up to %llu bytes, it says %llu, it has %zu",
			       (unsigned long long)end, (unsigned long long)le64toh(h->size), size);
	f->flags = le32toh(h->flags);
	f->generation = le64toh(h->generation);
	f->entries = p + entries;
	f->ranges = p + ranges;
	f->names = (const char *)p + names;
	memcpy(f->boot_id, h->boot_id, sizeof(f->boot_id));

	/* Ranges are by entry, each entry's after the last one's. */
	for (i = 0; i < f->nr_entries; i++) {
		const struct bpfstash_index_entry *e = bst_index_file_entry(f, i);
		uint32_t first = le32toh(e->first_range), n = le32toh(e->nr_ranges);

		if (first != next || n < 1 || n > BPFSTASH_MAX_FUNCS || n > f->nr_ranges - first)
			return bst_bad("index: entry %u: ranges %u..+%u, not in order in %u",
				       i, first, n, f->nr_ranges);
		next = first + n;
	}
	if (next != f->nr_ranges)
		return bst_bad("index: %u ranges, %u of them the entries'", f->nr_ranges, next);
	for (i = 0; i < f->nr_ranges; i++) {
		const struct bpfstash_index_range *r = bst_index_file_range(f, i);
		uint32_t e = le32toh(r->entry), off = le32toh(r->name_off);
		const struct bpfstash_index_entry *ent;

		if (e >= f->nr_entries)
			return bst_bad("index: range %u: entry %u of %u", i, e, f->nr_entries);
		ent = bst_index_file_entry(f, e);
		if (i - le32toh(ent->first_range) >= le32toh(ent->nr_ranges) ||
		    le32toh(r->func) != i - le32toh(ent->first_range))
			return bst_bad("index: range %u: function %u is not entry %u's", i,
				       le32toh(r->func), e);
		if (off >= f->names_size || !memchr(f->names + off, '\0', f->names_size - off))
			return bst_bad("index: range %u: name at %u runs past the file", i, off);
	}
	return 0;
}

static int cmp_row_addr(const void *a, const void *b)
{
	const struct bst_irow *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int cmp_row_name(const void *a, const void *b)
{
	const struct bst_irow *const *x = a, *const *y = b;
	int c = strcmp((*x)->name, (*y)->name);

	if (c)
		return c;
	return (*x)->entry < (*y)->entry ? -1 : (*x)->entry > (*y)->entry;
}

/* Entry @k's functions into the rows (@cap grown as needed). */
static int index_entry(struct bpfstash_index *x, size_t k, size_t *cap)
{
	const struct bpfstash_func *f;
	const struct bpfstash_meta *m;
	size_t fsize, names_len;
	void *meta, *funcs;
	const char *names;
	uint32_t i, n;

	if (!quick_read(x->stash->dirfd, x->names[k], &meta, &funcs, &fsize))
		return 0;	/* not an entry this library reads: no answer */
	m = meta;
	f = funcs;
	/* The files as read: little-endian. */
	n = le32toh(m->content.nr_funcs);
	x->info[k] = (struct bst_ientry){
		.known = true,
		.loaded = le32toh(m->flags) & BPFSTASH_META_LOADED,
		.prog_id = le32toh(m->prog_id),
		.load_time = le64toh(m->load_time),
		.unload_time = le64toh(m->unload_time),
		.load_time_real = le64toh(m->load_time_real),
		.unload_time_real = le64toh(m->unload_time_real),
	};
	memcpy(x->info[k].prog_name, m->content.name, sizeof(x->info[k].prog_name));
	memcpy(x->info[k].boot_id, m->boot_id, sizeof(x->info[k].boot_id));
	free(meta);
	if (n > BPFSTASH_MAX_FUNCS || fsize < (size_t)n * sizeof(*f)) {
		free(funcs);
		return 0;
	}
	names = (const char *)(f + n);
	names_len = fsize - (size_t)n * sizeof(*f);
	if (x->nr_rows + n > *cap) {
		size_t c = *cap ? *cap : 1024;
		struct bst_irow *r;

		while (c < x->nr_rows + n)
			c *= 2;
		r = realloc(x->rows, c * sizeof(*r));
		if (!r) {
			free(funcs);
			return -ENOMEM;
		}
		x->rows = r;
		*cap = c;
	}
	for (i = 0; i < n; i++) {
		struct bst_irow *r = &x->rows[x->nr_rows];
		uint32_t name_off = le32toh(f[i].name_off);

		r->addr = le64toh(f[i].addr);
		r->len = le32toh(f[i].len);
		r->entry = k;
		r->func = i;
		/* A name that does not end in the file matches no symbol. */
		r->name = name_off < names_len &&
			  memchr(names + name_off, '\0', names_len - name_off) ?
			  names + name_off : "";
		if (r->len > x->max_len)
			x->max_len = r->len;
		x->nr_rows++;
	}
	x->funcs[k] = funcs;
	return 0;
}

/*
 * The rows from the kernel's index file, read whole into @buf (@size
 * bytes), which the index then keeps: 0, -ENOMEM, or the file's error
 * (then the caller reads the entries instead).
 */
static int index_from_file(struct bpfstash_index *x, void *buf, size_t size)
{
	struct bst_index_file f;
	uint32_t i;
	int err;

	err = bst_index_file_check(buf, size, &f);
	if (err)
		return err;
	x->names = calloc((size_t)f.nr_entries + 1, sizeof(*x->names));
	x->knames = malloc((size_t)f.nr_entries * (BPFSTASH_HEX_LEN + 1) + 1);
	x->rows = malloc(((size_t)f.nr_ranges ? f.nr_ranges : 1) * sizeof(*x->rows));
	x->funcs = calloc(1, sizeof(*x->funcs));
	x->info = calloc((size_t)f.nr_entries + 1, sizeof(*x->info));
	x->kfile = buf;
	if (!x->names || !x->knames || !x->rows || !x->funcs || !x->info)
		return -ENOMEM;
	for (i = 0; i < f.nr_entries; i++) {
		const struct bpfstash_index_entry *e = bst_index_file_entry(&f, i);
		struct bst_ientry *in = &x->info[i];

		x->names[i] = x->knames + (size_t)i * (BPFSTASH_HEX_LEN + 1);
		bst_hex(x->names[i], e->hash, BPFSTASH_HASH_SIZE);
		in->known = true;
		in->loaded = le32toh(e->flags) & BPFSTASH_META_LOADED;
		in->prog_id = le32toh(e->prog_id);
		in->load_time = le64toh(e->load_time);
		in->unload_time = le64toh(e->unload_time);
		in->load_time_real = le64toh(e->load_time_real);
		in->unload_time_real = le64toh(e->unload_time_real);
		memcpy(in->prog_name, e->name, sizeof(in->prog_name));
		memcpy(in->boot_id, f.boot_id, sizeof(in->boot_id));
	}
	x->nr_names = f.nr_entries;
	for (i = 0; i < f.nr_ranges; i++) {
		const struct bpfstash_index_range *r = bst_index_file_range(&f, i);
		struct bst_irow *row = &x->rows[i];

		row->addr = le64toh(r->addr);
		row->len = le32toh(r->len);
		row->entry = le32toh(r->entry);
		row->func = le32toh(r->func);
		row->name = f.names + le32toh(r->name_off);
		if (row->len > x->max_len)
			x->max_len = row->len;
	}
	x->nr_rows = f.nr_ranges;
	/* A file made while the store kept changing has no generation to compare. */
	x->generation = f.flags & BPFSTASH_INDEX_CHANGING ? 0 : f.generation;
	return 0;
}

/*
 * The mounted stash's index file, if the kernel has one: 1 with the rows
 * read, 0 if the entries must be read one by one, or -ENOMEM.
 */
static int index_read_file(struct bpfstash_index *x)
{
	void *buf;
	size_t size;
	int err;

	if (!x->stash->mounted)
		return 0;	/* a copy: an "index" file in it says nothing */
	err = bst_read_index_file(x->stash->dirfd, &buf, &size);
	if (err)
		return err == -ENOMEM ? err : 0;	/* an older kernel: no file */
	err = index_from_file(x, buf, size);
	if (err) {
		if (!x->kfile)
			free(buf);
		index_clear(x);
		return err == -ENOMEM ? err : 0;
	}
	return 1;
}

int bst_read_index_file(int dirfd, void **buf, size_t *size)
{
	const size_t first = sizeof(struct bpfstash_index_header);
	struct bpfstash_index_header h;
	size_t len = 0, want;
	uint8_t *p = NULL;
	struct stat st;
	ssize_t n;
	int fd, err;

	*buf = NULL;
	*size = 0;
	/* Of the mounted bpfstash filesystem: a regular file, made at open. */
	fd = openat(dirfd, "index", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = bst_bad("index: not a regular file");
		goto out;
	}
	/* The header says the size: one allocation, one copy. */
	want = first;
	for (;;) {
		n = read(fd, len < first ? (uint8_t *)&h + len : p + len, want - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		len += n;
		if (!n || len == want) {
			if (len < want && len < first) {
				err = bst_bad("index: %zu bytes, too short for a header", len);
				goto out;
			}
			if (p)
				break;
			want = le64toh(h.size);
			if (want < first || want > BST_INDEX_MAX) {
				err = bst_bad("index: its header says %zu bytes", want);
				goto out;
			}
			p = malloc(want + 1);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(p, &h, first);
			want++;		/* one byte more: the end must come there */
			if (!n)
				break;
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

/* The generation the stash's stats file says, or 0. */
static uint64_t stash_generation(const struct bpfstash *s)
{
	unsigned long long gen = 0;
	char line[128];
	FILE *fp;
	int fd;

	fd = openat(s->dirfd, "stats", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return 0;
	}
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "generation %llu", &gen) == 1)
			break;
	fclose(fp);
	return gen;
}

int bpfstash_index_refresh(struct bpfstash_index *x)
{
	size_t i, cap = 0;
	int err;

	/* Nothing changed since the kernel's index was read: keep it. */
	if (x->kfile && x->generation && x->stash->mounted &&
	    stash_generation(x->stash) == x->generation)
		return 0;
	index_clear(x);
	err = index_read_file(x);
	if (err < 0)
		goto fail;
	if (err > 0)
		goto sort;
	err = bpfstash_list(x->stash, &x->names, &x->nr_names);
	if (err)
		return err;
	x->funcs = calloc(x->nr_names ? x->nr_names : 1, sizeof(*x->funcs));
	x->info = calloc(x->nr_names ? x->nr_names : 1, sizeof(*x->info));
	if (!x->funcs || !x->info) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < x->nr_names; i++) {
		err = index_entry(x, i, &cap);
		if (err)
			goto fail;
	}
sort:
	/* By name only when a symbol is first looked up: decode may never. */
	qsort(x->rows, x->nr_rows, sizeof(*x->rows), cmp_row_addr);
	return 0;
fail:
	index_clear(x);
	return err;
}

int bpfstash_index_open(struct bpfstash *stash, struct bpfstash_index **out)
{
	struct bpfstash_index *x = calloc(1, sizeof(*x));
	int err;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->stash = stash;
	err = bpfstash_index_refresh(x);
	if (err) {
		free(x);
		return err;
	}
	*out = x;
	return 0;
}

void bpfstash_index_free(struct bpfstash_index *x)
{
	if (!x)
		return;
	index_clear(x);
	free(x);
}

size_t bpfstash_index_nr_entries(const struct bpfstash_index *x)
{
	return x->nr_names;
}

size_t bpfstash_index_nr_ranges(const struct bpfstash_index *x)
{
	return x->nr_rows;
}

/* Whether [t, t + span] meets the candidate's lifetime [load, unload]. */
static bool alive_at(const struct bpfstash_candidate *c, const struct bpfstash_resolve_opts *o)
{
	uint64_t load, unload, end = o->time_ns + o->span_ns;

	if (end < o->time_ns)
		end = UINT64_MAX;
	if (o->clock == BPFSTASH_CLOCK_BOOTTIME) {
		load = c->load_time;
		unload = c->unload_time;
	} else {
		load = c->load_time_real;
		unload = c->unload_time_real;
	}
	return end >= load && (!unload || o->time_ns <= unload);
}

static int cmp_cand(const void *a, const void *b)
{
	const struct bpfstash_candidate *x = a, *y = b;

	if (x->load_time_real != y->load_time_real)
		return x->load_time_real < y->load_time_real ? -1 : 1;
	return strcmp(x->hash, y->hash);
}

/* Append @r to the @n rows of @v (room for @cap); -ENOMEM leaves them. */
static int row_push(const struct bst_irow ***v, size_t *n, size_t *cap, const struct bst_irow *r)
{
	const struct bst_irow **tmp;

	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;

		tmp = realloc(*v, c * sizeof(**v));
		if (!tmp)
			return -ENOMEM;
		*v = tmp;
		*cap = c;
	}
	(*v)[(*n)++] = r;
	return 0;
}

/* The rows that hold @q, in address order (an address) or name order. */
static int query_rows(const struct bpfstash_index *x, const struct query *q,
		      const struct bst_irow ***out, size_t *nr)
{
	const struct bst_irow **v = NULL;
	size_t n = 0, cap = 0, lo, hi, mid;

	*out = NULL;
	*nr = 0;
	if (!q->symbol) {
		/* The first row past @addr, then back over those that can reach it. */
		lo = 0;
		hi = x->nr_rows;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (x->rows[mid].addr <= q->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo-- > 0 && q->addr - x->rows[lo].addr < x->max_len) {
			const struct bst_irow *r = &x->rows[lo];

			if (q->addr - r->addr >= r->len)
				continue;
			if (row_push(&v, &n, &cap, r)) {
				free(v);
				return -ENOMEM;
			}
		}
	} else {
		lo = 0;
		hi = x->nr_rows;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (strcmp(x->by_name[mid]->name, q->symbol) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < x->nr_rows && !strcmp(x->by_name[lo]->name, q->symbol); lo++) {
			const struct bst_irow *r = x->by_name[lo];

			if ((q->size && q->size != r->len) || q->addr >= r->len)
				continue;
			if (row_push(&v, &n, &cap, r)) {
				free(v);
				return -ENOMEM;
			}
		}
	}
	*out = v;
	*nr = n;
	return 0;
}

/* @o from the caller's @uopts (NULL: no time): 0 or -EINVAL. */
static int resolve_opts(const struct bpfstash_resolve_opts *uopts, struct bpfstash_resolve_opts *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	if (!uopts)
		return 0;
	if (uopts->sz < sizeof(*o)) {
		/* an older, smaller struct: its fields, zeros for the rest */
		if (uopts->sz < offsetof(struct bpfstash_resolve_opts, span_ns))
			return -EINVAL;
		memcpy(o, uopts, uopts->sz);
	} else {
		const char *extra = (const char *)uopts + sizeof(*o);

		for (i = 0; i < uopts->sz - sizeof(*o); i++)
			if (extra[i])	/* a newer field we do not know */
				return -EINVAL;
		memcpy(o, uopts, sizeof(*o));
	}
	o->sz = sizeof(*o);
	return o->clock > BPFSTASH_CLOCK_REALTIME ? -EINVAL : 0;
}

/* The rows by kallsyms name, made at the first lookup of a symbol. */
static int index_by_name(struct bpfstash_index *x)
{
	size_t i;

	if (x->by_name)
		return 0;
	x->by_name = malloc((x->nr_rows ? x->nr_rows : 1) * sizeof(*x->by_name));
	if (!x->by_name)
		return -ENOMEM;
	for (i = 0; i < x->nr_rows; i++)
		x->by_name[i] = &x->rows[i];
	qsort(x->by_name, x->nr_rows, sizeof(*x->by_name), cmp_row_name);
	return 0;
}

/* Append @c to @cands: 0 or -ENOMEM. */
static int cand_push(struct bpfstash_candidates *cands, const struct bpfstash_candidate *c)
{
	if (cands->n == cands->cap) {
		size_t cap = cands->cap ? 2 * cands->cap : 4;
		struct bpfstash_candidate *v = realloc(cands->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		cands->v = v;
		cands->cap = cap;
	}
	cands->v[cands->n++] = *c;
	return 0;
}

static int index_query(struct bpfstash_index *x, const struct query *q,
		       const struct bpfstash_resolve_opts *uopts, struct bpfstash_entry **out,
		       struct bpfstash_location *loc, struct bpfstash_candidates **cands_out)
{
	struct bpfstash_resolve_opts o;
	struct bpfstash_candidates *cands;
	struct bpfstash_entry *e, *best = NULL;
	struct bpfstash_location l, best_loc;
	const struct bst_irow **rows;
	size_t nr, i, nmatch = 0;
	int err;

	*out = NULL;
	if (cands_out)
		*cands_out = NULL;
	err = resolve_opts(uopts, &o);
	if (err)
		return err;
	if (q->symbol && index_by_name(x))
		return -ENOMEM;
	cands = calloc(1, sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	err = query_rows(x, q, &rows, &nr);
	if (err) {
		free(cands);
		return err;
	}
	for (i = 0; i < nr; i++) {
		const struct bst_ientry *in = &x->info[rows[i]->entry];
		const struct bpfstash_meta *m;
		struct bpfstash_candidate c = {};
		const char *name = x->names[rows[i]->entry];

		c.addr = q->symbol ? rows[i]->addr + q->addr : q->addr;
		c.func = rows[i]->func;
		/*
		 * An entry that was unloaded when the index was read, and not
		 * loaded at the time asked (or of another boot): a candidate
		 * that does not match, as the index has it, without loading
		 * it.  The JIT gives one address to many programs in turn, so
		 * these are most of them.
		 */
		if (o.clock != BPFSTASH_CLOCK_NONE && in->known && !in->loaded) {
			memcpy(c.hash, name, BPFSTASH_HEX_LEN);
			memcpy(c.prog_name, in->prog_name, sizeof(in->prog_name));
			c.prog_name[sizeof(c.prog_name) - 1] = '\0';
			c.prog_id = in->prog_id;
			c.load_time = in->load_time;
			c.unload_time = in->unload_time;
			c.load_time_real = in->load_time_real;
			c.unload_time_real = in->unload_time_real;
			memcpy(c.boot_id, in->boot_id, sizeof(c.boot_id));
			if (!alive_at(&c, &o) ||
			    (o.boot_id && memcmp(c.boot_id, o.boot_id, sizeof(c.boot_id)))) {
				err = cand_push(cands, &c);
				if (err)
					goto out;
				continue;
			}
			memset(&c, 0, sizeof(c));
			c.addr = q->symbol ? rows[i]->addr + q->addr : q->addr;
			c.func = rows[i]->func;
		}
		/* An entry that does not load whole is no answer. */
		if (bpfstash_entry_load(x->stash, name, 0, &e))
			continue;
		if (bpfstash_entry_resolve(e, c.addr, &l)) {
			bpfstash_entry_free(e);
			continue;
		}
		/* The state as the entry has it now, not as the index read it. */
		m = bpfstash_entry_meta(e);
		memcpy(c.hash, name, BPFSTASH_HEX_LEN);
		memcpy(c.prog_name, m->content.name, sizeof(c.prog_name));
		c.prog_name[sizeof(c.prog_name) - 1] = '\0';
		c.prog_id = m->prog_id;
		c.loaded = m->flags & BPFSTASH_META_LOADED;
		c.load_time = m->load_time;
		c.unload_time = m->unload_time;
		c.load_time_real = m->load_time_real;
		c.unload_time_real = m->unload_time_real;
		memcpy(c.boot_id, m->boot_id, sizeof(c.boot_id));
		c.at_time = (o.clock == BPFSTASH_CLOCK_NONE || alive_at(&c, &o)) &&
			    (!o.boot_id || !memcmp(c.boot_id, o.boot_id, sizeof(c.boot_id)));
		err = cand_push(cands, &c);
		if (err) {
			bpfstash_entry_free(e);
			goto out;
		}
		if (c.at_time && !nmatch++) {
			best = e;
			best_loc = l;
		} else {
			bpfstash_entry_free(e);
		}
	}
	if (cands->n > 1)
		qsort(cands->v, cands->n, sizeof(*cands->v), cmp_cand);
	if (nmatch == 1) {
		*out = best;
		*loc = best_loc;
		best = NULL;
		err = 0;
	} else {
		err = nmatch ? -EADDRNOTAVAIL : -ENOENT;
	}
out:
	free(rows);
	bpfstash_entry_free(best);
	if (!err || err == -EADDRNOTAVAIL || err == -ENOENT) {
		if (cands_out) {
			*cands_out = cands;
			cands = NULL;
		}
	}
	bpfstash_candidates_free(cands);
	return err;
}

/* One query, on an index made for it: the stash as it is now. */
static int resolve_query(struct bpfstash *s, const struct query *q,
			 const struct bpfstash_resolve_opts *uopts, struct bpfstash_entry **out,
			 struct bpfstash_location *loc, struct bpfstash_candidates **cands_out)
{
	struct bpfstash_resolve_opts o;
	struct bpfstash_index *x;
	int err;

	*out = NULL;
	if (cands_out)
		*cands_out = NULL;
	err = resolve_opts(uopts, &o);
	if (err)
		return err;
	err = bpfstash_index_open(s, &x);
	if (err)
		return err;
	err = index_query(x, q, uopts, out, loc, cands_out);
	bpfstash_index_free(x);
	return err;
}

int bpfstash_resolve_at(struct bpfstash *s, uint64_t addr, const struct bpfstash_resolve_opts *opts,
			struct bpfstash_entry **entry, struct bpfstash_location *loc,
			struct bpfstash_candidates **cands)
{
	struct query q = { .addr = addr };

	return resolve_query(s, &q, opts, entry, loc, cands);
}

/* Whether the caller's struct bpfstash_loc holds every field this library fills. */
static bool loc_valid(const struct bpfstash_loc *loc)
{
	return loc && loc->sz >= offsetof(struct bpfstash_loc, source) + sizeof(loc->source);
}

/* @in into the caller's @out: its @sz bytes at most, zero past what is known. */
static void loc_out(const struct bpfstash_location *in, struct bpfstash_loc *out)
{
	struct bpfstash_loc l = {
		.addr = in->addr, .func = in->func, .func_addr = in->func_addr,
		.func_off = in->func_off, .func_name = in->func_name, .btf_name = in->btf_name,
		.has_line = in->has_line, .line_idx = in->line_idx, .line_addr = in->line_addr,
		.file = in->file, .line = in->line, .col = in->col, .source = in->source,
	};
	size_t sz = out->sz;

	l.sz = sz;
	memcpy(out, &l, sz < sizeof(l) ? sz : sizeof(l));
	if (sz > sizeof(l))
		memset((uint8_t *)out + sizeof(l), 0, sz - sizeof(l));
}

int bpfstash_entry_lookup(const struct bpfstash_entry *e, uint64_t addr, unsigned int flags,
			  struct bpfstash_loc *loc)
{
	struct bpfstash_location l;
	int err;

	if (!loc_valid(loc) || (flags & ~BPFSTASH_LOOKUP_OFFSET))
		return -EINVAL;
	err = flags & BPFSTASH_LOOKUP_OFFSET ? bpfstash_entry_resolve_offset(e, addr, &l) :
					       bpfstash_entry_resolve(e, addr, &l);
	if (!err)
		loc_out(&l, loc);
	return err;
}

int bpfstash_lookup_at(struct bpfstash *s, uint64_t addr, const struct bpfstash_resolve_opts *opts,
		       struct bpfstash_entry **entry, struct bpfstash_loc *loc,
		       struct bpfstash_candidates **cands)
{
	struct bpfstash_location l;
	int err;

	if (!loc_valid(loc)) {
		*entry = NULL;
		if (cands)
			*cands = NULL;
		return -EINVAL;
	}
	err = bpfstash_resolve_at(s, addr, opts, entry, &l, cands);
	if (!err)
		loc_out(&l, loc);
	return err;
}

int bpfstash_resolve_symbol(struct bpfstash *s, const char *symbol, uint64_t off, uint64_t size,
			    const struct bpfstash_resolve_opts *opts, struct bpfstash_entry **entry,
			    struct bpfstash_location *loc, struct bpfstash_candidates **cands)
{
	struct query q = { .addr = off, .symbol = symbol, .size = size };

	if (!symbol || !*symbol) {
		*entry = NULL;
		if (cands)
			*cands = NULL;
		return -EINVAL;
	}
	return resolve_query(s, &q, opts, entry, loc, cands);
}

int bpfstash_index_resolve_at(struct bpfstash_index *x, uint64_t addr,
			      const struct bpfstash_resolve_opts *opts,
			      struct bpfstash_entry **entry, struct bpfstash_loc *loc,
			      struct bpfstash_candidates **cands)
{
	struct query q = { .addr = addr };
	struct bpfstash_location l;
	int err;

	*entry = NULL;
	if (cands)
		*cands = NULL;
	if (!loc_valid(loc))
		return -EINVAL;
	err = index_query(x, &q, opts, entry, &l, cands);
	if (!err)
		loc_out(&l, loc);
	return err;
}

int bpfstash_index_resolve_symbol(struct bpfstash_index *x, const char *symbol, uint64_t off,
				  uint64_t size, const struct bpfstash_resolve_opts *opts,
				  struct bpfstash_entry **entry, struct bpfstash_loc *loc,
				  struct bpfstash_candidates **cands)
{
	struct query q = { .addr = off, .symbol = symbol, .size = size };
	struct bpfstash_location l;
	int err;

	*entry = NULL;
	if (cands)
		*cands = NULL;
	if (!loc_valid(loc) || !symbol || !*symbol)
		return -EINVAL;
	err = index_query(x, &q, opts, entry, &l, cands);
	if (!err)
		loc_out(&l, loc);
	return err;
}
