// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash inject: the perf.data a perf without bpfstash can resolve BPF
 * programs in (see inject.h), modelled on perf inject --jit.
 *
 * The stream is copied record by record.  A KSYMBOL that registers a
 * program's function waits, with the records after it, for the
 * PERF_RECORD_BPF_EVENT that says which program it was (its id: the kernel
 * sends the KSYMBOLs of a program's functions, then that event; perf
 * record's synthesized ones for programs loaded before it started come in
 * the same order).  The entry is then the one with that program id and a
 * function at that address, of that name and length; a trampoline or
 * another image, which has no such event, is found by name, address and,
 * when the recording's clock is CLOCK_BOOTTIME (perf record -k boottime),
 * time.  Once found, the MMAP2 record goes before the KSYMBOL, with the
 * KSYMBOL's own sample_id fields (same time, same event id), so that
 * perf's time ordering keeps it first.
 *
 * The file layout (tools/perf/util/header.c): a header, the attributes and
 * their ids, the data section, then the index of the feature sections and
 * their contents.  Everything before the data section is copied as it is;
 * the data section is rewritten; the feature sections follow it again,
 * the build-id table (HEADER_BUILD_ID) with one record per injected
 * function added.  Files whose other sections point into the data section
 * (AUX area tracing) or that perf compressed are refused, with what to do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "inject.h"

#define PERF_MAGIC2		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_MAGIC2_SWAPPED	0x50455246494c4532ULL
#define FEAT_BITS		256
#define FEAT_BUILD_ID		2	/* HEADER_BUILD_ID */
#define FEAT_AUXTRACE		18	/* HEADER_AUXTRACE: offsets into the data */
#define FEAT_DIR_FORMAT		24	/* HEADER_DIR_FORMAT: perf record --threads */
#define FEAT_COMPRESSED		27	/* HEADER_COMPRESSED: perf record -z */

/* Record types of the user-space part of perf's stream (tools/lib/perf). */
#define REC_HEADER_ATTR		64
#define REC_HEADER_TRACING_DATA	66
#define REC_AUXTRACE		71
#define REC_COMPRESSED		81
#define REC_COMPRESSED2		83

#define MISC_BUILD_ID_SIZE	(1 << 15)	/* in a build-id table record */
#define NAME_ALIGN		64		/* of a build-id table record's name */
#define KSYM_NAME_MAX		512		/* KSYM_NAME_LEN */
#define BPF_TAG_LEN		8
#define CLOCK_BOOTTIME_ID	7

/* The records read (their layouts in <linux/perf_event.h>'s comments). */
struct ksym_rec {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	char name[];
};

struct bpf_ev_rec {
	struct perf_event_header header;
	uint16_t type;
	uint16_t flags;
	uint32_t id;
	uint8_t tag[BPF_TAG_LEN];
};

struct file_section {
	uint64_t offset;
	uint64_t size;
};

struct file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct file_section attrs;
	struct file_section data;
	struct file_section event_types;
	uint64_t features[FEAT_BITS / 64];
};

/* A record, as read: its bytes, and what inject makes of it. */
struct pend {
	uint8_t *rec;
	size_t len;		/* the record and a payload after it */
	bool ksym;		/* a BPF KSYMBOL register */
	bool wait;		/* for the program's BPF_EVENT */
	bool group;		/* waited for the BPF_EVENT being matched */
	bool found;
	bool has_tid;
	uint32_t tid;
	uint64_t time;
	bool has_time;
	int stash;
	uint32_t func;
	char hash[BPFSTASH_HEX_LEN + 1];
};

/* A function injected: for the build-id table, and to write its ELF once. */
struct func_rec {
	uint8_t bid[BPFSTASH_HASH_SIZE];
	char name[INJECT_NAME_LEN];
};

struct reader {
	int fd;
	uint8_t *buf;
	size_t len, pos;
	uint64_t off;		/* of buf[pos] in the input */
	uint64_t left;		/* bytes still to be read; UINT64_MAX: to EOF */
	bool eof;
};

struct state {
	struct inject *inj;
	struct reader r;
	int out_fd;
	uint64_t out_off;
	uint8_t *obuf;
	size_t olen;

	/* The attributes' sample_id layout, when they all share one. */
	bool id_all;
	bool layout_mixed;
	bool have_attr;
	uint64_t sample_type;
	bool boottime;		/* every attribute's clock is CLOCK_BOOTTIME */

	struct pend *q;		/* records held */
	size_t nq, capq, headq;
	size_t waiting;
	/*
	 * The KSYMBOLs a BPF_EVENT is matching (its program's functions, and
	 * with no thread to tell them apart, others'): [group, group + ngroup)
	 * of q, those marked group; ngroup is 0 outside prog_loaded().
	 */
	size_t group, ngroup;

	struct bpfstash_index *idx[INJECT_MAX_STASHES];
	struct bpfstash_entry *entry;	/* the last one loaded */
	int entry_stash;

	struct func_rec *funcs;
	size_t nr_funcs, cap_funcs;
	/* Open addressing on the name's hash: index + 1, 0 free. */
	uint32_t *fslot;
	size_t nr_fslot;

	unsigned int warnings;
	uint64_t scratch[65536 / 8];	/* an unaligned record, copied */
};

static int fail(struct state *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct state *s, const char *fmt, ...)
{
	va_list ap;

	if (s->inj->err[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(s->inj->err, sizeof(s->inj->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void warn(struct state *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct state *s, const char *fmt, ...)
{
	va_list ap;

	if (s->inj->quiet || s->warnings >= s->inj->max_warnings) {
		s->warnings++;
		return;
	}
	if (++s->warnings == s->inj->max_warnings)
		fprintf(stderr, "bpfstash inject: (further warnings not shown)\n");
	fprintf(stderr, "bpfstash inject: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

void inject_func_name(const char *hash, uint32_t func, char *buf, size_t size)
{
	snprintf(buf, size, "[bpfstash_%s_%u]", hash, func);
}

/* Input: buffered, from the current offset of @fd, @left bytes at most. */
#define RBUF (1u << 20)

static int rd_fill(struct state *s, size_t want)
{
	struct reader *r = &s->r;
	ssize_t n;

	if (r->pos && r->pos < r->len)
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->len -= r->pos;
	r->pos = 0;
	while (r->len < want && !r->eof) {
		size_t room = RBUF - r->len;

		if (r->left != UINT64_MAX && room > r->left)
			room = r->left;
		if (!room) {
			r->eof = true;
			break;
		}
		n = read(r->fd, r->buf + r->len, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(s, "reading the input: %s", strerror(errno));
		}
		if (!n) {
			r->eof = true;
			break;
		}
		r->len += n;
		s->inj->stats.bytes_in += n;
		if (r->left != UINT64_MAX)
			r->left -= n;
	}
	return 0;
}

/* The next @n bytes in *@p, or 0 bytes at the end (*@got). */
static int rd_peek(struct state *s, size_t n, const uint8_t **p, size_t *got)
{
	struct reader *r = &s->r;

	if (r->len - r->pos < n && rd_fill(s, n))
		return -1;
	*p = r->buf + r->pos;
	*got = r->len - r->pos < n ? r->len - r->pos : n;
	return 0;
}

static void rd_skip(struct state *s, size_t n)
{
	s->r.pos += n;
	s->r.off += n;
}

/* Output, buffered. */
#define OBUF (1u << 20)

static int out_flush(struct state *s)
{
	size_t done = 0;
	ssize_t n;

	while (done < s->olen) {
		n = write(s->out_fd, s->obuf + done, s->olen - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(s, "writing the output: %s", strerror(errno));
		}
		done += n;
	}
	s->olen = 0;
	return 0;
}

static int out_put(struct state *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		size_t k = OBUF - s->olen < n ? OBUF - s->olen : n;

		memcpy(s->obuf + s->olen, b, k);
		s->olen += k;
		s->out_off += k;
		s->inj->stats.bytes_out += k;
		b += k;
		n -= k;
		if (s->olen == OBUF && out_flush(s))
			return -1;
	}
	return 0;
}

static int out_zero(struct state *s, size_t n)
{
	static const uint8_t zero[64];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		if (out_put(s, zero, k))
			return -1;
		n -= k;
	}
	return 0;
}

/*
 * sample_id_all: the fields after a non-sample record's own, from its end
 * backwards, as perf_evsel__parse_id_sample() reads them.
 */
static size_t id_size(uint64_t type)
{
	size_t n = 0;

	if (type & PERF_SAMPLE_TID)
		n += 8;
	if (type & PERF_SAMPLE_TIME)
		n += 8;
	if (type & PERF_SAMPLE_ID)
		n += 8;
	if (type & PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (type & PERF_SAMPLE_CPU)
		n += 8;
	if (type & PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return n;
}

static void parse_id(const struct state *s, const uint8_t *end, size_t room, struct pend *p)
{
	uint64_t type = s->sample_type;
	const uint8_t *q = end;

	if (!s->id_all || s->layout_mixed || !s->have_attr || id_size(type) > room)
		return;
	if (type & PERF_SAMPLE_IDENTIFIER)
		q -= 8;
	if (type & PERF_SAMPLE_CPU)
		q -= 8;
	if (type & PERF_SAMPLE_STREAM_ID)
		q -= 8;
	if (type & PERF_SAMPLE_ID)
		q -= 8;
	if (type & PERF_SAMPLE_TIME) {
		q -= 8;
		memcpy(&p->time, q, 8);
		p->has_time = true;
	}
	if (type & PERF_SAMPLE_TID) {
		q -= 8;
		memcpy(&p->tid, q + 4, 4);
		p->has_tid = true;
	}
}

/* An attribute (its first @size bytes): what its records' ids look like. */
static int take_attr(struct state *s, const uint8_t *a, size_t size)
{
	struct perf_event_attr attr = {};
	bool boottime;

	if (size < PERF_ATTR_SIZE_VER0)
		return fail(s, "an event attribute of %zu bytes (at least %d)", size,
			    PERF_ATTR_SIZE_VER0);
	memcpy(&attr, a, size < sizeof(attr) ? size : sizeof(attr));
	boottime = attr.use_clockid && attr.clockid == CLOCK_BOOTTIME_ID;
	if (!s->have_attr) {
		s->have_attr = true;
		s->sample_type = attr.sample_type;
		s->id_all = attr.sample_id_all;
		s->boottime = boottime;
		return 0;
	}
	if ((attr.sample_type ^ s->sample_type) &
	    (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
	     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER) || attr.sample_id_all != s->id_all)
		s->layout_mixed = true;
	s->boottime = s->boottime && boottime;
	return 0;
}

/* The hash table of injected functions, by name. */
static uint64_t name_hash(const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 1099511628211ULL;
	return h;
}

static struct func_rec *func_find(struct state *s, const char *name)
{
	size_t i;

	if (!s->nr_fslot)
		return NULL;
	for (i = name_hash(name) & (s->nr_fslot - 1); s->fslot[i];
	     i = (i + 1) & (s->nr_fslot - 1))
		if (!strcmp(s->funcs[s->fslot[i] - 1].name, name))
			return &s->funcs[s->fslot[i] - 1];
	return NULL;
}

static int func_add(struct state *s, const char *name, const uint8_t *bid)
{
	size_t i;

	if ((s->nr_funcs + 1) * 2 > s->nr_fslot) {
		size_t n = s->nr_fslot ? s->nr_fslot * 2 : 256;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (!slots)
			return fail(s, "out of memory");
		for (i = 0; i < s->nr_funcs; i++) {
			size_t k = name_hash(s->funcs[i].name) & (n - 1);

			while (slots[k])
				k = (k + 1) & (n - 1);
			slots[k] = i + 1;
		}
		free(s->fslot);
		s->fslot = slots;
		s->nr_fslot = n;
	}
	if (s->nr_funcs == s->cap_funcs) {
		size_t n = s->cap_funcs ? s->cap_funcs * 2 : 256;
		struct func_rec *f = realloc(s->funcs, n * sizeof(*f));

		if (!f)
			return fail(s, "out of memory");
		s->funcs = f;
		s->cap_funcs = n;
	}
	snprintf(s->funcs[s->nr_funcs].name, sizeof(s->funcs[0].name), "%s", name);
	memcpy(s->funcs[s->nr_funcs].bid, bid, BPFSTASH_HASH_SIZE);
	for (i = name_hash(name) & (s->nr_fslot - 1); s->fslot[i]; i = (i + 1) & (s->nr_fslot - 1))
		;
	s->fslot[i] = ++s->nr_funcs;
	s->inj->stats.functions++;
	return 0;
}

static int mkdirs(char *path)
{
	char *p;

	for (p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

/*
 * perf's build-id cache: DIR/NAME/BUILD-ID/elf, as perf buildid-cache -a
 * lays a module out, and DIR/.build-id/xx/<38 hex> -> ../../NAME/BUILD-ID/elf,
 * the link to the file itself (the cache's older layout, which every perf
 * reads) rather than to its directory: perf up to 6.x takes a kernel dso
 * whose name does not start with '/' for kallsyms, and looks for
 * <link>/kallsyms in a linked directory.  Written to a temporary file and
 * renamed, so that a reader never sees half of it.
 */
static void cache_elf(struct state *s, const struct bpfstash_entry *e, uint32_t func,
		      const char *name, const uint8_t *bid)
{
	const char *dir = s->inj->buildid_dir;
	char sbid[BPFSTASH_HEX_LEN + 1], path[PATH_MAX], tmp[PATH_MAX], link[PATH_MAX];
	char target[PATH_MAX];
	struct stat st;
	int fd, err;

	bpfstash_hash_format(bid, sbid);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s/elf", dir, name, sbid) >= sizeof(path) ||
	    (size_t)snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, sbid, sbid + 2) >=
		    sizeof(link)) {
		s->inj->stats.elf_failed++;
		warn(s, "%s: the build-id directory's path is too long", dir);
		return;
	}
	snprintf(target, sizeof(target), "../../%s/%s/elf", name, sbid);
	snprintf(tmp, sizeof(tmp), "%s/%s/%s/.elf.XXXXXX", dir, name, sbid);
	if (!stat(path, &st) && S_ISREG(st.st_mode) && !lstat(link, &st)) {
		s->inj->stats.elf_present++;
		return;
	}
	err = mkdirs(tmp);
	if (err)
		goto fail;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	err = bpfstash_entry_export_func_elf(e, func, fd);
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		goto fail;
	}
	err = mkdirs(link);
	if (!err && symlink(target, link) && errno != EEXIST)
		err = -errno;
	if (err)
		goto fail;
	s->inj->stats.elf_written++;
	return;
fail:
	s->inj->stats.elf_failed++;
	warn(s, "%s: %s", path, strerror(-err));
}

/* The entry @hash of stash @k, from the one loaded last if it is. */
static struct bpfstash_entry *entry_get(struct state *s, int k, const char *hash)
{
	int err;

	if (s->entry && s->entry_stash == k && !strcmp(bpfstash_entry_name(s->entry), hash))
		return s->entry;
	bpfstash_entry_free(s->entry);
	s->entry = NULL;
	err = bpfstash_entry_load(s->inj->stash[k], hash, 0, &s->entry);
	if (err) {
		warn(s, "entry %s: %s", hash, strerror(-err));
		s->entry = NULL;
		return NULL;
	}
	s->entry_stash = k;
	return s->entry;
}

/*
 * An entry of the same content as an earlier load describes the latest
 * load (its id and times: struct bpfstash_meta): a program loaded, closed
 * and loaded again byte for byte at the same address has one entry, with
 * the second load's id.  A KSYMBOL of the first load is that entry's when
 * there is only one entry at the address with the function's name and
 * length whose every function is one of the program's KSYMBOLs, and its
 * program's tag (its instructions) is the BPF_EVENT's: the same
 * instructions, JITed at the same addresses to the same lengths.
 */
struct reload {
	int n;			/* distinct entries */
	int stash;
	uint32_t func;
	char hash[BPFSTASH_HEX_LEN + 1];
};

/* A KSYMBOL of the program that the BPF_EVENT being matched is, at @addr, @len long. */
static bool group_has(const struct state *s, uint64_t addr, uint32_t len)
{
	size_t i;

	for (i = s->group; i < s->group + s->ngroup; i++) {
		const struct pend *p = &s->q[i];
		const struct ksym_rec *k = (const void *)p->rec;

		if (p->group && k->addr == addr && k->len == len)
			return true;
	}
	return false;
}

/*
 * Entry @hash of stash @stash is the program's, loaded again since: every
 * one of its functions is one of the program's KSYMBOLs, same address,
 * same length.  (Another program of the same instructions loaded at the
 * same main address has its other functions elsewhere.)
 */
static bool reload_layout_ok(struct state *s, int stash, const char *hash)
{
	const struct bpfstash_entry *e;
	uint32_t i, n;

	if (!s->ngroup)
		return true;
	e = entry_get(s, stash, hash);
	if (!e)
		return false;
	n = bpfstash_entry_nr_funcs(e);
	for (i = 0; i < n; i++) {
		const struct bpfstash_func *f = bpfstash_entry_func(e, i);

		if (!f || !group_has(s, f->addr, f->len))
			return false;
	}
	return true;
}

static void reload_add(struct state *s, struct reload *r, int stash, const char *hash,
		       uint32_t func)
{
	if (r->n && !strcmp(r->hash, hash))
		return;
	if (!reload_layout_ok(s, stash, hash))
		return;
	if (!r->n++) {
		r->stash = stash;
		r->func = func;
		snprintf(r->hash, sizeof(r->hash), "%s", hash);
	}
}

static bool reload_tag_ok(struct state *s, const struct reload *r, const uint8_t *tag)
{
	const struct bpfstash_entry *e;
	const struct bpfstash_meta *m;

	if (r->n != 1 || !tag)
		return false;
	e = entry_get(s, r->stash, r->hash);
	m = e ? bpfstash_entry_meta(e) : NULL;
	return m && !memcmp(m->content.tag, tag, BPF_TAG_LEN);
}

/*
 * Which entry holds the function of KSYMBOL @p: of program @prog_id (0: any
 * program, or an image) whose tag is @tag (NULL: unknown), with a function
 * of its name and length at its address, and when the clock allows it,
 * loaded at its time.  Sets p->found, or says why not (when @final: it
 * waits no more).
 */
static void find(struct state *s, struct pend *p, uint32_t prog_id, const uint8_t *tag, bool final)
{
	const struct ksym_rec *k = (const void *)p->rec;
	struct bpfstash_resolve_opts at = { .sz = sizeof(at) };
	char hash[BPFSTASH_HEX_LEN + 1] = "";
	int stash = -1, n = 0, pass, elsewhere = 0, next_stash = -1;
	bool image = !prog_id && strncmp(k->name, "bpf_prog_", 9);
	char next_hash[BPFSTASH_HEX_LEN + 1] = "";
	uint64_t next = UINT64_MAX;
	bool refreshed = false;
	uint32_t func = 0, next_func = 0;
	struct reload reload;

again:
	memset(&reload, 0, sizeof(reload));
	for (pass = 0; pass < 2 && !n; pass++) {
		const struct bpfstash_resolve_opts *o = NULL;
		int i;

		/* With a time first; synthesized records may have none that fits. */
		if (pass == 0) {
			if (!s->boottime || !p->has_time)
				continue;
			at.clock = BPFSTASH_CLOCK_BOOTTIME;
			at.time_ns = p->time;
			o = &at;
		}
		for (i = 0; i < INJECT_MAX_STASHES; i++) {
			struct bpfstash_candidates *c = NULL;
			struct bpfstash_entry *e = NULL;
			struct bpfstash_loc loc = { .sz = sizeof(loc) };
			size_t j;

			if (!s->idx[i])
				continue;
			/*
			 * An image's KSYMBOL has the length of its allocation (a
			 * trampoline's: a page), its entry the length of its code.
			 */
			bpfstash_index_resolve_symbol(s->idx[i], k->name, 0, image ? 0 : k->len, o,
						      &e, &loc, &c);
			for (j = 0; j < bpfstash_candidates_count(c); j++) {
				const struct bpfstash_candidate *cd = bpfstash_candidates_get(c, j);

				if (cd->addr != k->addr) {
					/* The same code, stored when it was loaded elsewhere. */
					elsewhere++;
					continue;
				}
				/*
				 * An image is stored once it is live, after its
				 * KSYMBOL (a trampoline: once attached): the first
				 * stored after that record, within a second.
				 */
				if (!o && image && s->boottime && p->has_time &&
				    cd->load_time >= p->time && cd->load_time - p->time < 1000000000ULL &&
				    cd->load_time < next) {
					next = cd->load_time;
					snprintf(next_hash, sizeof(next_hash), "%s", cd->hash);
					next_stash = i;
					next_func = cd->func;
				}
				if (prog_id && cd->prog_id != prog_id) {
					reload_add(s, &reload, i, cd->hash, cd->func);
					continue;
				}
				if (!cd->at_time)
					continue;
				/* The same entry twice: in the stash and in its archive. */
				if (n && !strcmp(hash, cd->hash))
					continue;
				if (!n) {
					snprintf(hash, sizeof(hash), "%s", cd->hash);
					stash = i;
					func = cd->func;
				}
				n++;
			}
			bpfstash_candidates_free(c);
			/* The entry the lookup loaded: the one emit_mmap2() will want. */
			if (e && n == 1 && stash == i && !strcmp(bpfstash_entry_name(e), hash)) {
				bpfstash_entry_free(s->entry);
				s->entry = e;
				s->entry_stash = i;
			} else {
				bpfstash_entry_free(e);
			}
		}
	}
	/*
	 * A program's function under another name: perf record names the
	 * functions of the programs loaded before it started itself, "F" for
	 * a subprogram whose BTF it could not read.  By the program's id and
	 * the address, then: the function of that entry that starts there.
	 */
	if (!n && prog_id && !reload.n) {
		int i;

		for (i = 0; i < INJECT_MAX_STASHES && n != 1; i++) {
			struct bpfstash_candidates *c = NULL;
			struct bpfstash_entry *e = NULL;
			struct bpfstash_loc loc = { .sz = sizeof(loc) };
			size_t j;

			if (!s->idx[i])
				continue;
			bpfstash_index_resolve_at(s->idx[i], k->addr, NULL, &e, &loc, &c);
			bpfstash_entry_free(e);
			for (j = 0; j < bpfstash_candidates_count(c) && n != 1; j++) {
				const struct bpfstash_candidate *cd = bpfstash_candidates_get(c, j);
				const struct bpfstash_func *f;
				struct bpfstash_entry *ce;

				ce = entry_get(s, i, cd->hash);
				f = ce ? bpfstash_entry_func(ce, cd->func) : NULL;
				if (!f || f->addr != k->addr)
					continue;
				if (cd->prog_id != prog_id) {
					reload_add(s, &reload, i, cd->hash, cd->func);
					continue;
				}
				n = 1;
				snprintf(hash, sizeof(hash), "%s", cd->hash);
				stash = i;
				func = cd->func;
			}
			bpfstash_candidates_free(c);
		}
	}
	/* Loaded again since, at the same address: its entry is the latest load's. */
	if (!n && reload_tag_ok(s, &reload, tag)) {
		n = 1;
		memcpy(hash, reload.hash, sizeof(hash));
		stash = reload.stash;
		func = reload.func;
		s->inj->stats.reloaded++;
	}
	if (n != 1 && next != UINT64_MAX) {
		n = 1;
		memcpy(hash, next_hash, sizeof(hash));
		stash = next_stash;
		func = next_func;
	}
	/*
	 * Entries stored since the index was read (inject reading a recording
	 * as it is made, from a pipe): the mounted stash's index is read
	 * again, once per miss, which costs one read of its generation when
	 * nothing changed.  A copy (an archive) does not change.
	 */
	if (!n && final && !refreshed) {
		bool moved = false;
		int i;

		for (i = 0; i < INJECT_MAX_STASHES; i++)
			if (s->idx[i] && bpfstash_is_mounted(s->inj->stash[i]) &&
			    bpfstash_index_refresh(s->idx[i]) == 0)
				moved = true;
		refreshed = true;
		if (moved) {
			elsewhere = 0;
			goto again;
		}
	}
	if (n == 1) {
		p->found = true;
		p->wait = false;
		p->stash = stash;
		p->func = func;
		memcpy(p->hash, hash, sizeof(hash));
		return;
	}
	if (!final)
		return;
	p->wait = false;
	if (n > 1) {
		s->inj->stats.ambiguous++;
		warn(s, "%s at 0x%" PRIx64 ": held by %d entries%s; left as it is", k->name,
		     (uint64_t)k->addr, n,
		     s->boottime ? "" : " (a recording with perf record -k boottime tells them apart)");
	} else if (reload.n > 1) {
		s->inj->stats.ambiguous++;
		warn(s, "%s at 0x%" PRIx64 ": program %" PRIu32 " is in none, %d entries of later "
		     "loads at its address have its name; left as it is", k->name,
		     (uint64_t)k->addr, prog_id, reload.n);
	} else if (reload.n) {
		s->inj->stats.not_found++;
		warn(s, "%s at 0x%" PRIx64 ": program %" PRIu32 " is in no stash; the entry of a "
		     "later load at its address has other instructions (tag); left as it is",
		     k->name, (uint64_t)k->addr, prog_id);
	} else if (elsewhere) {
		/*
		 * Entries with a function of this name and length, none at
		 * this address: other programs of the same source, or this
		 * one's entry removed.  perf keeps the KSYMBOL's name for it.
		 */
		s->inj->stats.elsewhere++;
		warn(s, "%s at 0x%" PRIx64 ": in no stash at this address (entries of that name "
		     "hold it at others only); left as it is", k->name, (uint64_t)k->addr);
	} else {
		s->inj->stats.not_found++;
		warn(s, "%s at 0x%" PRIx64 "%s%.0" PRIu32 ": in no stash; left as it is", k->name,
		     (uint64_t)k->addr, prog_id ? ", program " : "", prog_id);
	}
}

/* The MMAP2 record for a function found, with @p's sample_id fields. */
static int emit_mmap2(struct state *s, const struct pend *p, size_t id_off)
{
	const struct ksym_rec *k = (const void *)p->rec;
	struct bpfstash_entry *e = entry_get(s, p->stash, p->hash);
	uint8_t bid[BPFSTASH_HASH_SIZE];
	char name[INJECT_NAME_LEN];
	struct {
		struct perf_event_header header;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint8_t build_id_size, res1;
		uint16_t res2;
		uint8_t build_id[20];
		uint32_t prot, flags;
	} m = {};
	size_t name_len, trailer = p->len - id_off;

	/*
	 * What follows a KSYMBOL's name is its sample_id fields, 48 bytes at
	 * most: more is a malformed record, passed on as it is.
	 */
	if (trailer > 64) {
		s->inj->stats.malformed++;
		warn(s, "%s: a KSYMBOL record with %zu bytes after its name; left as it is",
		     k->name, trailer);
		return 0;
	}
	if (!e || bpfstash_entry_func_build_id(e, p->func, bid)) {
		s->inj->stats.not_found++;
		return 0;
	}
	inject_func_name(p->hash, p->func, name, sizeof(name));
	name_len = (strlen(name) + 1 + 7) & ~(size_t)7;
	if (!func_find(s, name)) {
		if (func_add(s, name, bid))
			return -1;
		if (s->inj->buildid_dir)
			cache_elf(s, e, p->func, name, bid);
	}
	m.header.type = PERF_RECORD_MMAP2;
	m.header.misc = PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_MMAP_BUILD_ID;
	m.header.size = sizeof(m) + name_len + trailer;
	m.pid = UINT32_MAX;	/* the kernel's, as perf synthesizes modules */
	m.addr = k->addr;
	m.len = k->len;
	m.build_id_size = BPFSTASH_HASH_SIZE;
	memcpy(m.build_id, bid, sizeof(bid));
	m.prot = PROT_READ | PROT_EXEC;
	if (out_put(s, &m, sizeof(m)) || out_put(s, name, strlen(name)) ||
	    out_zero(s, name_len - strlen(name)) || out_put(s, p->rec + id_off, trailer))
		return -1;
	s->inj->stats.injected++;
	return 0;
}

/* Where a KSYMBOL's sample_id fields start: after its padded name. */
static size_t ksym_id_off(const uint8_t *rec, size_t len)
{
	size_t off = offsetof(struct ksym_rec, name);
	size_t n = strnlen((const char *)rec + off, len - off);

	return off + ((n + 1 + 7) & ~(size_t)7);
}

static int emit(struct state *s, struct pend *p)
{
	if (p->ksym && p->found && emit_mmap2(s, p, ksym_id_off(p->rec, p->len)))
		return -1;
	return out_put(s, p->rec, p->len);
}

static int q_push(struct state *s, const uint8_t *rec, size_t len, struct pend *tmpl)
{
	struct pend *p;

	if (s->nq == s->capq) {
		size_t n = s->capq ? s->capq * 2 : 64;
		struct pend *q;

		if (s->headq) {
			memmove(s->q, s->q + s->headq, (s->nq - s->headq) * sizeof(*s->q));
			s->nq -= s->headq;
			s->headq = 0;
		}
		if (s->nq == s->capq) {
			q = realloc(s->q, n * sizeof(*q));
			if (!q)
				return fail(s, "out of memory");
			s->q = q;
			s->capq = n;
		}
	}
	p = &s->q[s->nq++];
	*p = *tmpl;
	p->rec = malloc(len);
	if (!p->rec)
		return fail(s, "out of memory");
	memcpy(p->rec, rec, len);
	p->len = len;
	if (p->wait)
		s->waiting++;
	return 0;
}

static int q_flush(struct state *s, bool all)
{
	while (s->headq < s->nq) {
		struct pend *p = &s->q[s->headq];

		if (p->wait) {
			if (!all && s->nq - s->headq <= s->inj->max_pending)
				break;
			find(s, p, 0, NULL, true);
			s->waiting--;
		}
		if (emit(s, p))
			return -1;
		free(p->rec);
		s->headq++;
	}
	if (s->headq == s->nq)
		s->headq = s->nq = 0;
	return 0;
}

/* A program's BPF_EVENT: the KSYMBOLs before it that are its functions. */
static void prog_loaded(struct state *s, const struct bpf_ev_rec *b,
			const struct pend *ev)
{
	size_t i;

	s->group = s->headq;
	s->ngroup = s->nq - s->headq;
	for (i = s->headq; i < s->nq; i++) {
		struct pend *p = &s->q[i];

		p->group = p->wait && !(ev->has_tid && p->has_tid && ev->tid != p->tid);
	}
	for (i = s->headq; i < s->nq && s->waiting; i++) {
		struct pend *p = &s->q[i];

		if (!p->wait || (ev->has_tid && p->has_tid && ev->tid != p->tid))
			continue;
		/* With the loader's thread known, these are its: found or not. */
		find(s, p, b->id, b->tag, ev->has_tid && p->has_tid);
		if (!p->wait)
			s->waiting--;
	}
	for (i = s->headq; i < s->nq; i++)
		s->q[i].group = false;
	s->ngroup = 0;
}

/* One record of the data section (or the stream), whole, at @rec. */
static int record(struct state *s, const uint8_t *rec, size_t len)
{
	const struct perf_event_header *h = (const void *)rec;
	struct pend p = {};

	s->inj->stats.records++;
	if (h->type == PERF_RECORD_KSYMBOL) {
		const struct ksym_rec *k = (const void *)rec;
		size_t fixed = offsetof(struct ksym_rec, name);

		if (h->size < fixed + 1 || !memchr(k->name, 0, h->size - fixed))
			return fail(s, "a KSYMBOL record of %u bytes at offset %" PRIu64
				    " has no name", h->size, s->r.off);
		if (k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF &&
		    !(k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) && k->len) {
			size_t id_off = ksym_id_off(rec, len);

			s->inj->stats.ksymbols++;
			p.ksym = true;
			if (id_off > len)
				return fail(s, "a KSYMBOL record of %u bytes at offset %" PRIu64
					    " is shorter than its name", h->size, s->r.off);
			parse_id(s, rec + len, len - id_off, &p);
			if (!strncmp(k->name, "bpf_prog_", 9)) {
				p.wait = true;
			} else {
				/* An image: no BPF_EVENT will say more. */
				p.rec = (uint8_t *)rec;
				p.len = len;
				find(s, &p, 0, NULL, true);
			}
		}
	}
	if (p.ksym || s->nq) {
		if (q_push(s, rec, len, &p))
			return -1;
		if (h->type == PERF_RECORD_BPF_EVENT && h->size >= sizeof(struct bpf_ev_rec)) {
			const struct bpf_ev_rec *b = (const void *)rec;
			struct pend ev = {};

			if (b->type == PERF_BPF_EVENT_PROG_LOAD && s->waiting) {
				parse_id(s, rec + len, len - sizeof(*b), &ev);
				prog_loaded(s, b, &ev);
			}
		}
		return q_flush(s, false);
	}
	return out_put(s, rec, len);
}

/* A record's payload after header.size: AUX data, a pipe's tracing data. */
static int payload_of(struct state *s, const uint8_t *b, const struct perf_event_header *h,
		      uint64_t *payload)
{
	*payload = 0;
	if (h->type == REC_AUXTRACE) {
		if (h->size < 16)
			return fail(s, "an AUXTRACE record of %u bytes at offset %" PRIu64,
				    h->size, s->r.off);
		memcpy(payload, b + 8, 8);
	} else if (s->inj->stats.pipe && h->type == REC_HEADER_TRACING_DATA) {
		uint32_t n;

		if (h->size < 12)
			return fail(s, "a TRACING_DATA record of %u bytes at offset %" PRIu64,
				    h->size, s->r.off);
		memcpy(&n, b + 8, 4);
		*payload = ((uint64_t)n + 7) & ~7ULL;
	}
	return 0;
}

/* Copy @n bytes of the input through, as they come. */
static int copy_through(struct state *s, uint64_t n)
{
	while (n) {
		const uint8_t *b;
		size_t got, want = n < RBUF ? n : RBUF;

		if (rd_peek(s, want, &b, &got))
			return -1;
		if (!got)
			return fail(s, "the input ends inside a record's payload, %" PRIu64
				    " bytes short, at offset %" PRIu64, n, s->r.off);
		if (out_put(s, b, got))
			return -1;
		rd_skip(s, got);
		n -= got;
	}
	return 0;
}

static int read_records(struct state *s)
{
	for (;;) {
		struct perf_event_header h;
		const uint8_t *b;
		uint64_t payload;
		size_t got;

		if (rd_peek(s, sizeof(h), &b, &got))
			return -1;
		if (!got)
			break;
		if (got < sizeof(h))
			return fail(s, "the input ends inside a record's header at offset %" PRIu64,
				    s->r.off);
		memcpy(&h, b, sizeof(h));
		if (h.size < sizeof(h))
			return fail(s, "a record of %u bytes (type %u) at offset %" PRIu64
				    ": shorter than its header", h.size, h.type, s->r.off);
		if (h.type == REC_COMPRESSED || h.type == REC_COMPRESSED2)
			return fail(s, "compressed records (perf record -z) at offset %" PRIu64
				    ": decompress them first (perf inject -i IN -o OUT)", s->r.off);
		if (rd_peek(s, h.size, &b, &got))
			return -1;
		if (got < h.size)
			return fail(s, "the input ends inside a record of %u bytes (type %u) at "
				    "offset %" PRIu64, h.size, h.type, s->r.off);
		if (payload_of(s, b, &h, &payload))
			return -1;
		if (s->inj->stats.pipe && h.type == REC_HEADER_ATTR) {
			uint32_t size;

			if (h.size < sizeof(h) + PERF_ATTR_SIZE_VER0)
				return fail(s, "an ATTR record of %u bytes at offset %" PRIu64,
					    h.size, s->r.off);
			memcpy(&size, b + sizeof(h) + offsetof(struct perf_event_attr, size), 4);
			if (!size)
				size = PERF_ATTR_SIZE_VER0;
			if (size > h.size - sizeof(h))
				return fail(s, "an ATTR record at offset %" PRIu64 " says its "
					    "attribute has %u bytes, in %zu", s->r.off, size,
					    h.size - sizeof(h));
			if (take_attr(s, b + sizeof(h), size))
				return -1;
		}
		if (payload) {
			/* Passed as it comes: what waits is decided now. */
			if (q_flush(s, true) || out_put(s, b, h.size))
				return -1;
			s->inj->stats.records++;
			rd_skip(s, h.size);
			if (copy_through(s, payload))
				return -1;
			continue;
		}
		/*
		 * Records are read in place, where a record of a size that is
		 * not a multiple of 8 before this one leaves it unaligned:
		 * parsed from an aligned copy then.
		 */
		if ((uintptr_t)b & 7) {
			memcpy(s->scratch, b, h.size);
			b = (const uint8_t *)s->scratch;
		}
		if (record(s, b, h.size))
			return -1;
		rd_skip(s, h.size);
	}
	return q_flush(s, true);
}

static int pread_all(struct state *s, void *buf, size_t n, uint64_t off, const char *what)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = pread(s->r.fd, (uint8_t *)buf + done, n - done, off + done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail(s, "reading %s: %s", what, strerror(errno));
		if (!k)
			return fail(s, "%s: the file ends %zu bytes short", what, n - done);
		done += k;
	}
	return 0;
}

/* Copy the input's bytes [@off, @off + @n) to the output. */
static int copy_range(struct state *s, uint64_t off, uint64_t n, const char *what)
{
	uint8_t *buf = malloc(RBUF);
	int err = 0;

	if (!buf)
		return fail(s, "out of memory");
	while (n && !err) {
		size_t k = n < RBUF ? n : RBUF;

		err = pread_all(s, buf, k, off, what) || out_put(s, buf, k);
		off += k;
		n -= k;
	}
	free(buf);
	return err ? -1 : 0;
}

static bool feat_test(const struct file_header *h, unsigned int bit)
{
	return h->features[bit / 64] & (1ULL << (bit % 64));
}

/* The build-id table records of the functions injected. */
static int put_build_ids(struct state *s)
{
	size_t i;

	for (i = 0; i < s->nr_funcs; i++) {
		const struct func_rec *f = &s->funcs[i];
		size_t name_len = (strlen(f->name) + 1 + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1);
		struct {
			struct perf_event_header header;
			int32_t pid;
			uint8_t data[20];
			uint8_t size, res1;
			uint16_t res2;
		} __attribute__((packed)) b = {};

		b.header.misc = PERF_RECORD_MISC_KERNEL | MISC_BUILD_ID_SIZE;
		b.header.size = sizeof(b) + name_len;
		b.pid = -1;		/* HOST_KERNEL_ID */
		memcpy(b.data, f->bid, sizeof(b.data));
		b.size = BPFSTASH_HASH_SIZE;
		if (out_put(s, &b, sizeof(b)) || out_put(s, f->name, strlen(f->name)) ||
		    out_zero(s, name_len - strlen(f->name)))
			return -1;
	}
	return 0;
}

static uint64_t build_ids_size(const struct state *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->nr_funcs; i++)
		n += 36 + ((strlen(s->funcs[i].name) + 1 + NAME_ALIGN - 1) &
			   ~(uint64_t)(NAME_ALIGN - 1));
	return n;
}

static int run_file(struct state *s, uint64_t file_size)
{
	struct file_section in_feat[FEAT_BITS], out_feat[FEAT_BITS], sec[FEAT_BITS];
	uint64_t end, off, data_end, tail, add, ins_at;
	struct file_header h;
	unsigned int bit, nr = 0, i;
	bool had_build_id;
	int64_t shift;
	uint8_t *attr;

	if (pread_all(s, &h, sizeof(h), 0, "the perf.data header"))
		return -1;
	if (h.size != sizeof(h))
		return fail(s, "a perf.data header of %" PRIu64 " bytes (this reader knows %zu)",
			    h.size, sizeof(h));
	if (h.attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct file_section) ||
	    h.attr_size > 4096)
		return fail(s, "perf.data attributes of %" PRIu64 " bytes each", h.attr_size);
	if (h.data.offset < sizeof(h) || h.data.offset > file_size ||
	    h.data.size > file_size - h.data.offset)
		return fail(s, "the data section (%" PRIu64 " bytes at %" PRIu64 ") is not inside "
			    "the file (%" PRIu64 " bytes)", h.data.size, h.data.offset, file_size);
	if (h.attrs.offset < sizeof(h) || h.attrs.offset > h.data.offset ||
	    h.attrs.size > h.data.offset - h.attrs.offset || h.attrs.size % h.attr_size ||
	    !h.attrs.size)
		return fail(s, "the attribute section (%" PRIu64 " bytes at %" PRIu64 ") is not "
			    "whole attributes before the data section", h.attrs.size, h.attrs.offset);
	if (h.event_types.size && h.event_types.offset >= h.data.offset)
		return fail(s, "an event type section after the data section: a layout this "
			    "reader does not copy");
	if (feat_test(&h, FEAT_AUXTRACE))
		return fail(s, "AUX area tracing data (HEADER_AUXTRACE indexes the data section "
			    "by offset): not supported");
	if (feat_test(&h, FEAT_DIR_FORMAT))
		return fail(s, "a perf.data directory's header (perf record --threads): not "
			    "supported");
	if (feat_test(&h, FEAT_COMPRESSED))
		return fail(s, "a compressed recording (perf record -z): decompress it first "
			    "(perf inject -i IN -o OUT)");

	attr = malloc(h.attr_size);
	if (!attr)
		return fail(s, "out of memory");
	for (off = 0; off < h.attrs.size; off += h.attr_size) {
		uint32_t size;

		if (pread_all(s, attr, h.attr_size, h.attrs.offset + off, "an attribute")) {
			free(attr);
			return -1;
		}
		memcpy(&size, attr + offsetof(struct perf_event_attr, size), 4);
		if (!size || size > h.attr_size - sizeof(struct file_section))
			size = h.attr_size - sizeof(struct file_section);
		if (take_attr(s, attr, size)) {
			free(attr);
			return -1;
		}
	}
	free(attr);

	/* The feature sections' index, right after the data section. */
	data_end = h.data.offset + h.data.size;
	for (bit = 0; bit < FEAT_BITS; bit++)
		if (feat_test(&h, bit))
			nr++;
	if (nr * sizeof(struct file_section) > file_size - data_end)
		return fail(s, "the feature index (%u sections) is not inside the file", nr);
	if (pread_all(s, in_feat, nr * sizeof(struct file_section), data_end,
		      "the feature index"))
		return -1;
	for (i = 0; i < nr; i++)
		if (in_feat[i].offset > file_size || in_feat[i].size > file_size - in_feat[i].offset)
			return fail(s, "feature section %u (%" PRIu64 " bytes at %" PRIu64 ") is "
				    "not inside the file", i, in_feat[i].size, in_feat[i].offset);

	/* Everything before the data section, as it is. */
	if (copy_range(s, 0, h.data.offset, "the header and attributes"))
		return -1;
	if (lseek(s->r.fd, h.data.offset, SEEK_SET) < 0)
		return fail(s, "seeking the input: %s", strerror(errno));
	s->r.left = h.data.size;
	s->r.off = h.data.offset;
	if (read_records(s))
		return -1;
	h.data.size = s->out_off - h.data.offset;

	/*
	 * The feature sections after it, where they were relative to one
	 * another (perf can leave gaps, a slot of the index it did not fill):
	 * the bytes after the index are copied as they are, with the new
	 * build-id records inserted at the end of the build-id table, or, if
	 * the file had none, a table added at the end with a slot in the index.
	 */
	memset(sec, 0, sizeof(sec));
	for (i = 0, bit = 0; bit < FEAT_BITS; bit++)
		if (feat_test(&h, bit))
			sec[bit] = in_feat[i++];
	tail = data_end + nr * sizeof(struct file_section);
	for (bit = 0; bit < FEAT_BITS; bit++)
		if (feat_test(&h, bit) && sec[bit].size && sec[bit].offset < tail)
			return fail(s, "feature section %u lies before the end of the feature index: "
				    "a layout this reader does not copy", bit);
	add = build_ids_size(s);
	had_build_id = feat_test(&h, FEAT_BUILD_ID);
	ins_at = had_build_id ? sec[FEAT_BUILD_ID].offset + sec[FEAT_BUILD_ID].size : file_size;
	if (ins_at < tail)	/* an empty table where the index is */
		ins_at = tail;
	if (add && !had_build_id) {
		h.features[FEAT_BUILD_ID / 64] |= 1ULL << (FEAT_BUILD_ID % 64);
		sec[FEAT_BUILD_ID].offset = file_size;
		nr++;
	}
	/* Where the old tail goes: after the new data section and the index. */
	shift = (int64_t)(s->out_off + nr * sizeof(struct file_section)) - (int64_t)tail;
	for (i = 0, bit = 0; bit < FEAT_BITS; bit++) {
		if (!feat_test(&h, bit))
			continue;
		out_feat[i] = sec[bit];
		out_feat[i].offset += shift;
		if (bit == FEAT_BUILD_ID)
			out_feat[i].size += add;
		else if (sec[bit].offset >= ins_at && had_build_id && add)
			out_feat[i].offset += add;
		i++;
	}
	if (out_put(s, out_feat, nr * sizeof(out_feat[0])) ||
	    copy_range(s, tail, ins_at - tail, "the feature sections") ||
	    put_build_ids(s) ||
	    copy_range(s, ins_at, file_size - ins_at, "the feature sections"))
		return -1;
	end = s->out_off;
	if (out_flush(s))
		return -1;
	if (pwrite(s->out_fd, &h, sizeof(h), 0) != sizeof(h) || ftruncate(s->out_fd, end))
		return fail(s, "writing the output's header: %s", strerror(errno));
	return 0;
}

int inject_run(struct inject *inj, int in_fd, int out_fd)
{
	struct state s = { .inj = inj, .out_fd = out_fd, .r = { .fd = in_fd, .left = UINT64_MAX } };
	struct stat st_in, st_out;
	uint64_t magic[2];
	const uint8_t *b;
	size_t got;
	int err = -1, i;

	inj->err[0] = '\0';
	memset(&inj->stats, 0, sizeof(inj->stats));
	if (!inj->max_pending)
		inj->max_pending = 4096;
	s.r.buf = malloc(RBUF);
	s.obuf = malloc(OBUF);
	if (!s.r.buf || !s.obuf) {
		fail(&s, "out of memory");
		goto out;
	}
	for (i = 0; i < INJECT_MAX_STASHES; i++) {
		int e;

		if (!inj->stash[i])
			continue;
		e = bpfstash_index_open(inj->stash[i], &s.idx[i]);
		if (e) {
			fail(&s, "%s: %s", bpfstash_root(inj->stash[i]), strerror(-e));
			goto out;
		}
	}
	if (fstat(in_fd, &st_in) || fstat(out_fd, &st_out)) {
		fail(&s, "fstat: %s", strerror(errno));
		goto out;
	}
	if (S_ISREG(st_in.st_mode) && S_ISREG(st_out.st_mode) && st_in.st_dev == st_out.st_dev &&
	    st_in.st_ino == st_out.st_ino) {
		fail(&s, "the output is the input");
		goto out;
	}
	if (rd_peek(&s, 16, &b, &got))
		goto out;
	if (got < 8) {
		fail(&s, "%s", got ? "the input is too short to be a perf.data" : "the input is empty");
		goto out;
	}
	memcpy(magic, b, got < 16 ? 8 : 16);
	if (magic[0] == PERF_MAGIC2_SWAPPED) {
		fail(&s, "a perf.data of the other byte order: not supported");
		goto out;
	}
	if (magic[0] != PERF_MAGIC2) {
		fail(&s, "not a perf.data (no PERFILE2 magic)");
		goto out;
	}
	if (got == 16 && magic[1] == 16) {
		/* A pipe's stream: its header is the magic and its size. */
		inj->stats.pipe = true;
		if (out_put(&s, b, 16))
			goto out;
		rd_skip(&s, 16);
		err = read_records(&s);
		if (!err)
			err = out_flush(&s);
	} else if (!S_ISREG(st_in.st_mode)) {
		fail(&s, "a perf.data file's layout arrives on a pipe: give it as -i FILE");
	} else if (!S_ISREG(st_out.st_mode)) {
		fail(&s, "the output of a perf.data file must be a file (-o FILE), not a pipe "
		     "(perf record -o - makes a stream that can go to one)");
	} else if (ftruncate(out_fd, 0) || lseek(out_fd, 0, SEEK_SET)) {
		fail(&s, "the output: %s", strerror(errno));
	} else {
		s.r.len = s.r.pos = 0;
		s.r.eof = false;
		inj->stats.bytes_in = st_in.st_size;
		err = run_file(&s, st_in.st_size);
		inj->stats.bytes_in = st_in.st_size;
	}
	inj->stats.used_time = s.boottime && s.id_all && !s.layout_mixed &&
			       (s.sample_type & PERF_SAMPLE_TIME);
out:
	while (s.headq < s.nq)
		free(s.q[s.headq++].rec);
	free(s.q);
	for (i = 0; i < INJECT_MAX_STASHES; i++)
		bpfstash_index_free(s.idx[i]);
	bpfstash_entry_free(s.entry);
	free(s.funcs);
	free(s.fslot);
	free(s.r.buf);
	free(s.obuf);
	return err ? -1 : 0;
}
