// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The profiler agent's interface (libbpfstash.h, "Agents"): every CPU's
 * PERF_RECORD_MMAP3 stream, an index of address ranges with their load
 * and unload times, and recovery from the stash after lost records.
 *
 * Records come from one ring per CPU.  A poll drains every ring into one
 * batch and applies it in time order, so that a program loaded on one CPU
 * and unloaded on another is seen in that order.  Loads come from
 * PERF_RECORD_MMAP3 (one record per function), unloads from
 * PERF_RECORD_BPF_EVENT PERF_BPF_EVENT_PROG_UNLOAD (one per program, sent
 * where bpfstash sets meta.unload_time) and, for images, which have no
 * program id, from PERF_RECORD_KSYMBOL with
 * PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER (sent where bpfstash sets the
 * image's meta.unload_time, with its start and name), when the rings ask
 * for them (BPFSTASH_AGENT_IMAGE_UNLOADS).  Times are CLOCK_BOOTTIME, the
 * clock of meta.load_time and meta.unload_time, so that what the records
 * say and what recovery reads from the stash agree.
 *
 * The index is an array of ranges sorted by (start, load time), searched
 * by bisection; a range belongs to a program, which holds the times.
 * Ranges of programs that held the same address at different times sit
 * side by side, and the time picks one.  New ranges wait in a small
 * unsorted array that is sorted and merged in at the end of the poll.
 *
 * Memory is bounded: a program unloaded longer ago than opts.forget_ns
 * before the newest record applied is forgotten at a poll, and at most
 * opts.max_entries entries are kept for line lookups (the least recently
 * used goes).  Threads: one poller (poll, flush, feed, recover) and any
 * number of lookups.  The poller holds a.lock for writing while it
 * changes the index, lookups hold it for reading; the entry cache has its
 * own mutex, taken under a.lock.  Events are emitted with a.lock held for
 * writing: a lookup from the event callback runs in the poller's thread,
 * which bst_writer names, and takes no lock.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "internal.h"

#define BST_MMAP3_STASHED		(1U << 0)
/* Defaults of opts.forget_ns and opts.max_entries. */
#define BST_FORGET_NS			(600ull * 1000000000ull)
#define BST_MAX_ENTRIES			256
/* How long a poll waits at most while records are held back. */
#define BST_HOLD_MS			10
/* A record this far ahead of the clock did not come from a ring. */
#define BST_FUTURE_NS			1000000000ull

struct bst_mmap3 {
	struct perf_event_header header;
	uint64_t addr;
	uint64_t len;
	uint32_t id;
	uint32_t flags;
	uint16_t type;
	uint16_t func_idx;
	uint8_t hash_size;
	uint8_t __reserved_1;
	uint16_t __reserved_2;
	uint8_t hash[20];
	uint32_t __reserved_3;
	/* char name[], then sample_id: u64 time */
};

struct bst_bpf_event {
	struct perf_event_header header;
	uint16_t type;
	uint16_t flags;
	uint32_t id;
	uint8_t tag[8];
	/* sample_id: u64 time */
};

struct bst_ksymbol {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	/* char name[], then sample_id: u64 time */
};

struct bst_lost {
	struct perf_event_header header;
	uint64_t id;
	uint64_t lost;
	/* sample_id: u64 time */
};

static_assert(offsetof(struct perf_event_attr, read_format) + 8 == BST_ATTR_FLAGS_OFF,
	      "perf_event_attr layout");
static_assert(offsetof(struct perf_event_attr, wakeup_events) == BST_ATTR_FLAGS_OFF + 8,
	      "perf_event_attr layout");
static_assert(sizeof(struct bst_mmap3) == 64, "PERF_RECORD_MMAP3 layout");

/* A program, as the index knows it: the public view plus its storage. */
struct bst_prog {
	struct bpfstash_agent_prog pub;
	struct bpfstash_agent_func *funcs;	/* pub.funcs, by index */
	uint32_t funcs_cap;
	bool announced;			/* its load event was emitted */
	bool in_id_map;
	struct bpfstash_entry *entry;	/* loaded on the first line lookup */
	int entry_err;
	uint64_t entry_used;		/* a.entry_clock at its last line lookup */
	bool forgotten;
};

struct bst_range {
	uint64_t start;
	uint64_t end;
	struct bst_prog *prog;
	uint32_t func;
};

struct bst_ring {
	int fd;
	void *base;
	size_t data_size;
	uint64_t lost;		/* the event's lost count (PERF_FORMAT_LOST), as last read */
};

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

struct bpfstash_agent {
	struct bpfstash_agent_opts opts;
	/* A fed record's sample_id: its bytes, and those after its time. */
	uint32_t feed_id_len, feed_after_time;
	char *root;
	struct bpfstash *stash;		/* opened on first use */
	int epfd;
	struct bst_ring *rings;
	int nr_rings;
	/*
	 * Records read and not applied yet, copied out of the rings or fed:
	 * first those held back by the last poll, in time order, then the
	 * new ones (batch_held bytes are held ones).
	 */
	uint8_t *batch;
	size_t batch_len, batch_cap, batch_held;
	/*
	 * CLOCK_BOOTTIME when the last poll began (at open, when the agent
	 * was opened): every record older than it has been read by now.
	 */
	uint64_t horizon;
	/* The index. */
	struct bst_range *ranges, *pending;
	size_t nr_ranges, cap_ranges, nr_pending, cap_pending;
	uint64_t max_len;
	struct bst_prog **progs;	/* every program, in arrival order */
	size_t nr_progs, cap_progs;
	struct bst_prog **fresh;	/* programs whose load is not announced yet */
	size_t nr_fresh, cap_fresh;
	void *by_hash;			/* tsearch: stashed programs by hash */
	void *by_id;			/* tsearch: loaded programs by id */
	struct bpfstash_agent_stats stats;
	uint64_t lost_unrecovered;	/* records lost since the last recovery */
	bool settle;			/* look at the stash once more after a recovery */
	uint64_t newest;		/* the newest record's time applied */
	uint64_t forget_ns, max_entries;
	pthread_rwlock_t lock;		/* the index: the poller writes, lookups read */
	pthread_mutex_t entry_lock;	/* the entry cache and a.stash */
	uint64_t entry_clock, nr_entries, entries_evicted;	/* under entry_lock */
};

/* The agent whose lock this thread holds for writing (its event callback). */
static __thread const struct bpfstash_agent *bst_writer;

static void write_lock(struct bpfstash_agent *a)
{
	pthread_rwlock_wrlock(&a->lock);
	bst_writer = a;
}

static void write_unlock(struct bpfstash_agent *a)
{
	bst_writer = NULL;
	pthread_rwlock_unlock(&a->lock);
}

/* Lookups: no lock in the poller's own event callback, which holds it. */
static bool read_lock(struct bpfstash_agent *a)
{
	if (bst_writer == a)
		return false;
	pthread_rwlock_rdlock(&a->lock);
	return true;
}

static void read_unlock(struct bpfstash_agent *a, bool locked)
{
	if (locked)
		pthread_rwlock_unlock(&a->lock);
}

static int prog_hash_cmp(const void *a, const void *b)
{
	const struct bst_prog *x = a, *y = b;

	return memcmp(x->pub.hash, y->pub.hash, BPFSTASH_HEX_LEN);
}

static int prog_id_cmp(const void *a, const void *b)
{
	const struct bst_prog *x = a, *y = b;

	return x->pub.id < y->pub.id ? -1 : x->pub.id > y->pub.id;
}

static struct bst_prog *find_hash(struct bpfstash_agent *a, const char *hex)
{
	struct bst_prog key;
	void **p;

	memcpy(key.pub.hash, hex, sizeof(key.pub.hash));
	p = tfind(&key, &a->by_hash, prog_hash_cmp);
	return p ? *p : NULL;
}

/* The program of @id; never an image, which has no id (0). */
static struct bst_prog *find_id(struct bpfstash_agent *a, uint32_t id)
{
	struct bst_prog key;
	void **p;

	if (!id)
		return NULL;
	key.pub.id = id;
	p = tfind(&key, &a->by_id, prog_id_cmp);
	return p ? *p : NULL;
}

static void emit(struct bpfstash_agent *a, const struct bpfstash_agent_event *ev)
{
	if (a->opts.event_fn)
		a->opts.event_fn(ev, a->opts.ctx);
}

/* Who loaded @p, from meta @m. */
static void set_origin(struct bst_prog *p, const struct bpfstash_meta *m)
{
	p->pub.has_origin = true;
	p->pub.loader_tgid = m->loader_tgid;
	p->pub.loader_cgroup_id = m->loader_cgroup_id;
	memcpy(p->pub.loader_comm, m->loader_comm, sizeof(p->pub.loader_comm));
	p->pub.loader_comm[sizeof(p->pub.loader_comm) - 1] = '\0';
	memcpy(p->pub.boot_id, m->boot_id, sizeof(p->pub.boot_id));
	p->pub.link_type = m->link_type;
	p->pub.link_id = m->link_id;
	memcpy(p->pub.link_target, m->link_target, sizeof(p->pub.link_target));
	p->pub.link_target[sizeof(p->pub.link_target) - 1] = '\0';
}

static int open_stash(struct bpfstash_agent *a);

/* With BPFSTASH_AGENT_ORIGIN, read who loaded a stashed program from its meta. */
static void read_origin(struct bpfstash_agent *a, struct bst_prog *p)
{
	struct bpfstash_entry *e;

	if (!(a->opts.flags & BPFSTASH_AGENT_ORIGIN) || p->pub.has_origin || !p->pub.stashed ||
	    open_stash(a) || bpfstash_entry_load(a->stash, p->pub.hash, BPFSTASH_LOAD_META, &e))
		return;
	set_origin(p, bpfstash_entry_meta(e));
	bpfstash_entry_free(e);
}

/*
 * At the unload, with BPFSTASH_AGENT_ORIGIN: the meta again, for the link
 * made after the load.  An entry gone meanwhile leaves what was read.
 */
static void reread_origin(struct bpfstash_agent *a, struct bst_prog *p)
{
	struct bpfstash_entry *e;

	if (!(a->opts.flags & BPFSTASH_AGENT_ORIGIN) || !p->pub.stashed ||
	    open_stash(a) || bpfstash_entry_load(a->stash, p->pub.hash, BPFSTASH_LOAD_META, &e))
		return;
	set_origin(p, bpfstash_entry_meta(e));
	bpfstash_entry_free(e);
}

static void announce(struct bpfstash_agent *a, struct bst_prog *p)
{
	struct bpfstash_agent_event ev = {
		.type = BPFSTASH_AGENT_LOAD,
		.time = p->pub.load_time,
		.prog = &p->pub,
	};

	if (p->announced)
		return;
	p->announced = true;
	read_origin(a, p);
	emit(a, &ev);
}

static struct bst_prog *prog_new(struct bpfstash_agent *a)
{
	struct bst_prog *p, **progs;

	if (a->nr_progs == a->cap_progs) {
		size_t cap = a->cap_progs ? a->cap_progs * 2 : 64;

		progs = realloc(a->progs, cap * sizeof(*progs));
		if (!progs)
			return NULL;
		a->progs = progs;
		a->cap_progs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	a->progs[a->nr_progs++] = p;
	a->stats.programs++;
	if (a->nr_fresh == a->cap_fresh) {
		size_t cap = a->cap_fresh ? a->cap_fresh * 2 : 64;

		progs = realloc(a->fresh, cap * sizeof(*progs));
		if (!progs)
			return p;	/* announced at its unload, or never: no harm */
		a->fresh = progs;
		a->cap_fresh = cap;
	}
	a->fresh[a->nr_fresh++] = p;
	return p;
}

/* Index @p by its program id; an image, which has none (0), is not. */
static int id_map_add(struct bpfstash_agent *a, struct bst_prog *p)
{
	struct bst_prog *old;

	if (!p->pub.id)
		return 0;
	/* An id is only reused once its program is gone. */
	old = find_id(a, p->pub.id);
	if (old && old != p) {
		tdelete(old, &a->by_id, prog_id_cmp);
		old->in_id_map = false;
	}
	if (!tsearch(p, &a->by_id, prog_id_cmp))
		return -ENOMEM;
	p->in_id_map = true;
	return 0;
}

static void id_map_del(struct bpfstash_agent *a, struct bst_prog *p)
{
	if (p->in_id_map)
		tdelete(p, &a->by_id, prog_id_cmp);
	p->in_id_map = false;
}

/* Add function @func [@addr, @addr + @len) named @name to @p and the index. */
static int prog_add_func(struct bpfstash_agent *a, struct bst_prog *p, uint32_t func,
			 uint64_t addr, uint64_t len, const char *name)
{
	struct bpfstash_agent_func *f;
	struct bst_range *r;
	uint32_t i;

	if (func >= BPFSTASH_MAX_FUNCS || !len || len > UINT32_MAX || addr + len < addr)
		return -EBADMSG;
	for (i = 0; i < p->pub.nr_funcs; i++)
		if (p->funcs[i].index == func)
			return 0;	/* seen already (recovered, then its record) */
	if (p->pub.nr_funcs == p->funcs_cap) {
		uint32_t cap = p->funcs_cap ? p->funcs_cap * 2 : 1;

		f = realloc(p->funcs, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->funcs = f;
		p->funcs_cap = cap;
	}
	if (a->nr_pending == a->cap_pending) {
		size_t cap = a->cap_pending ? a->cap_pending * 2 : 256;

		r = realloc(a->pending, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		a->pending = r;
		a->cap_pending = cap;
	}
	f = &p->funcs[p->pub.nr_funcs];
	memset(f, 0, sizeof(*f));
	f->index = func;
	f->addr = addr;
	f->len = len;
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	/* Keep the functions in index order, as the entry has them. */
	for (i = p->pub.nr_funcs; i > 0 && p->funcs[i - 1].index > func; i--) {
		struct bpfstash_agent_func t = p->funcs[i - 1];

		p->funcs[i - 1] = p->funcs[i];
		p->funcs[i] = t;
	}
	p->pub.nr_funcs++;
	p->pub.funcs = p->funcs;

	r = &a->pending[a->nr_pending++];
	r->start = addr;
	r->end = addr + len;
	r->prog = p;
	r->func = func;
	if (len > a->max_len)
		a->max_len = len;
	a->stats.ranges++;
	return 0;
}

static int range_cmp(const void *x, const void *y)
{
	const struct bst_range *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->prog->pub.load_time != b->prog->pub.load_time)
		return a->prog->pub.load_time < b->prog->pub.load_time ? -1 : 1;
	return 0;
}

/* Sort the new ranges and merge them into the index. */
static int index_merge(struct bpfstash_agent *a)
{
	size_t i, j, k, n;
	struct bst_range *out;

	if (!a->nr_pending)
		return 0;
	qsort(a->pending, a->nr_pending, sizeof(*a->pending), range_cmp);
	n = a->nr_ranges + a->nr_pending;
	if (n > a->cap_ranges) {
		size_t cap = a->cap_ranges ? a->cap_ranges : 1024;

		while (cap < n)
			cap *= 2;
		out = realloc(a->ranges, cap * sizeof(*out));
		if (!out)
			return -ENOMEM;
		a->ranges = out;
		a->cap_ranges = cap;
	}
	/* Merge from the back, in place. */
	i = a->nr_ranges;
	j = a->nr_pending;
	k = n;
	while (j > 0) {
		if (i > 0 && range_cmp(&a->ranges[i - 1], &a->pending[j - 1]) > 0)
			a->ranges[--k] = a->ranges[--i];
		else
			a->ranges[--k] = a->pending[--j];
	}
	a->nr_ranges = n;
	a->nr_pending = 0;
	return 0;
}

/* Whether @p held its code at @time (0: now, i.e. it is still loaded). */
static bool prog_at(const struct bst_prog *p, uint64_t time)
{
	if (!time)
		return !p->pub.unload_time;
	return p->pub.load_time <= time && (!p->pub.unload_time || time < p->pub.unload_time);
}

/* The first range in [lo, hi) whose start is above @addr (or at or above it: @incl). */
static size_t first_after(const struct bst_range *r, size_t lo, size_t hi, uint64_t addr, bool incl)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (incl ? r[mid].start < addr : r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int bst_resolve(const struct bpfstash_agent *a, uint64_t addr, uint64_t time,
		       struct bpfstash_agent_sym *sym)
{
	const struct bst_range *rs;
	size_t hi;

	memset(sym, 0, sizeof(*sym));
	rs = a->ranges;
	hi = first_after(rs, 0, a->nr_ranges, addr, false);
	/*
	 * Walk back over the starts close enough to hold @addr, one start at
	 * a time.  The ranges at one start are in load order, and programs
	 * held it one after the other: the last one loaded at or before
	 * @time is the only one that can have held it then (with no time,
	 * the last one loaded).  A reused address costs a bisection, not a
	 * walk over every program that ever sat there.
	 */
	while (hi > 0) {
		uint64_t start = rs[hi - 1].start;
		size_t g0, c;

		if (addr - start >= a->max_len)
			break;
		g0 = first_after(rs, 0, hi, start, true);
		if (time) {
			size_t lo = g0, h = hi;

			while (lo < h) {
				size_t mid = lo + (h - lo) / 2;

				if (rs[mid].prog->pub.load_time <= time)
					lo = mid + 1;
				else
					h = mid;
			}
			if (lo == g0) {
				hi = g0;
				continue;
			}
			c = lo - 1;
		} else {
			c = hi - 1;
		}
		if (addr < rs[c].end && prog_at(rs[c].prog, time)) {
			const struct bst_prog *p = rs[c].prog;
			uint32_t i;

			sym->prog = &p->pub;
			for (i = 0; i < p->pub.nr_funcs; i++)
				if (p->funcs[i].index == rs[c].func)
					sym->func = &p->funcs[i];
			sym->offset = addr - rs[c].start;
			return 0;
		}
		hi = g0;
	}
	return -ENOENT;
}

int bpfstash_agent_resolve(struct bpfstash_agent *a, uint64_t addr, uint64_t time,
			   struct bpfstash_agent_sym *sym)
{
	bool locked = read_lock(a);
	int err = bst_resolve(a, addr, time, sym);

	read_unlock(a, locked);
	return err;
}

static int open_stash(struct bpfstash_agent *a)
{
	if (a->stash)
		return 0;
	return bpfstash_open(a->root, &a->stash);
}

/*
 * @p's entry, read on first use; with a.entry_lock held.  Past
 * opts.max_entries, the least recently used program's entry goes.
 */
static int entry_get(struct bpfstash_agent *a, struct bst_prog *p)
{
	p->entry_used = ++a->entry_clock;
	if (p->entry || p->entry_err)
		return p->entry_err;
	if (a->nr_entries >= a->max_entries) {
		struct bst_prog *lru = NULL;
		size_t i;

		for (i = 0; i < a->nr_progs; i++) {
			struct bst_prog *q = a->progs[i];

			if (q->entry && (!lru || q->entry_used < lru->entry_used))
				lru = q;
		}
		if (lru) {
			bpfstash_entry_free(lru->entry);
			lru->entry = NULL;
			a->nr_entries--;
			a->entries_evicted++;
		}
	}
	p->entry_err = open_stash(a);
	if (!p->entry_err)
		p->entry_err = bpfstash_entry_load(a->stash, p->pub.hash, 0, &p->entry);
	if (!p->entry_err)
		a->nr_entries++;
	return p->entry_err;
}

int bpfstash_agent_resolve_line(struct bpfstash_agent *a, const struct bpfstash_agent_sym *sym,
				const struct bpfstash_entry **entry, struct bpfstash_location *loc)
{
	struct bst_prog *p;
	bool locked;
	int err;

	if (!sym->prog || !sym->func)
		return -EINVAL;
	p = (struct bst_prog *)sym->prog;
	if (!p->pub.stashed)
		return -ENODATA;
	locked = read_lock(a);
	pthread_mutex_lock(&a->entry_lock);
	err = entry_get(a, p);
	if (!err && entry)
		*entry = p->entry;
	if (!err)
		err = bpfstash_entry_resolve(p->entry, sym->func->addr + sym->offset, loc);
	pthread_mutex_unlock(&a->entry_lock);
	read_unlock(a, locked);
	return err;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

int bpfstash_agent_lookup(struct bpfstash_agent *a, uint64_t addr, uint64_t time,
			  unsigned int flags, struct bpfstash_agent_hit *hit)
{
	struct bpfstash_agent_hit h = { .sz = sizeof(h) };
	struct bpfstash_agent_sym sym;
	size_t sz = hit->sz;
	bool locked;
	int err;

	if (sz < offsetof(struct bpfstash_agent_hit, line) ||
	    (flags & ~BPFSTASH_AGENT_LOOKUP_LINE) ||
	    ((flags & BPFSTASH_AGENT_LOOKUP_LINE) && sz < sizeof(h)))
		return -EINVAL;
	locked = read_lock(a);
	err = bst_resolve(a, addr, time, &sym);
	if (!err) {
		const struct bst_prog *p = (const struct bst_prog *)sym.prog;

		h.prog_id = p->pub.id;
		h.stashed = p->pub.stashed;
		h.load_time = p->pub.load_time;
		h.unload_time = p->pub.unload_time;
		copy_str(h.hash, sizeof(h.hash), p->pub.hash);
		copy_str(h.prog_name, sizeof(h.prog_name), p->pub.name);
		if (sym.func) {
			h.func_index = sym.func->index;
			h.func_addr = sym.func->addr;
			h.func_len = sym.func->len;
			copy_str(h.func_name, sizeof(h.func_name), sym.func->name);
		}
		h.offset = sym.offset;
	}
	if (!err && (flags & BPFSTASH_AGENT_LOOKUP_LINE) && sym.func) {
		struct bst_prog *p = (struct bst_prog *)sym.prog;
		struct bpfstash_location loc;

		h.line_err = -ENODATA;
		if (p->pub.stashed) {
			pthread_mutex_lock(&a->entry_lock);
			h.line_err = entry_get(a, p);
			if (!h.line_err)
				h.line_err = bpfstash_entry_resolve(p->entry, addr, &loc);
			if (!h.line_err && loc.has_line) {
				h.has_line = true;
				h.line = loc.line;
				h.col = loc.col;
				copy_str(h.file, sizeof(h.file), loc.file);
				copy_str(h.source, sizeof(h.source), loc.source);
			}
			pthread_mutex_unlock(&a->entry_lock);
		}
	}
	read_unlock(a, locked);
	/* The caller's struct: as much of ours as it holds, zero past ours. */
	memcpy(hit, &h, sz < sizeof(h) ? sz : sizeof(h));
	if (sz > sizeof(h))
		memset((uint8_t *)hit + sizeof(h), 0, sz - sizeof(h));
	hit->sz = sz;
	return err;
}

/* "bpf_prog_<16 hex>_<name>": the tag and the program's name. */
static void parse_ksym(struct bst_prog *p, const char *ksym)
{
	static const char pre[] = "bpf_prog_";
	const char *s = ksym + sizeof(pre) - 1;
	int i;

	if (strncmp(ksym, pre, sizeof(pre) - 1) || strlen(s) < 16)
		return;
	for (i = 0; i < 8; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return;
		p->pub.tag[i] = b;
	}
	if (s[16] == '_')
		snprintf(p->pub.name, sizeof(p->pub.name), "%.*s",
			 (int)sizeof(p->pub.name) - 1, s + 17);
}

static uint64_t record_time(const struct perf_event_header *h)
{
	uint64_t t;

	memcpy(&t, (const uint8_t *)h + h->size - sizeof(t), sizeof(t));
	return t;
}

/*
 * The NUL-padded name that follows a record's fixed part of @fixed bytes,
 * up to its sample_id time, into @name of @size.  The caller has checked
 * that the record holds its fixed part and the time.
 */
static void record_name(const struct perf_event_header *h, size_t fixed, char *name,
			size_t size)
{
	snprintf(name, size, "%.*s", (int)(h->size - fixed - sizeof(uint64_t)),
		 (const char *)h + fixed);
}

static int on_mmap3(struct bpfstash_agent *a, const struct perf_event_header *h)
{
	const struct bst_mmap3 *m = (const void *)h;
	char name[512], hex[BPFSTASH_HEX_LEN + 1] = "";
	bool stashed = m->flags & BST_MMAP3_STASHED;
	struct bst_prog *p;
	int err;

	if (h->size < sizeof(*m) + sizeof(uint64_t))
		return -EBADMSG;
	if (m->type != PERF_RECORD_KSYMBOL_TYPE_BPF)
		return 0;
	record_name(h, sizeof(*m), name, sizeof(name));
	if (stashed) {
		if (m->hash_size != BPFSTASH_HASH_SIZE)
			return -EBADMSG;
		bpfstash_hash_format(m->hash, hex);
	}
	a->stats.records++;

	/*
	 * Images (trampolines, dispatchers, struct_ops) have no program id:
	 * each has one record, and is found again only by its hash.
	 */
	p = find_id(a, m->id);
	if (p && (stashed ? strcmp(p->pub.hash, hex) : p->pub.stashed))
		p = NULL;	/* another program under a reused id */
	if (!p && stashed) {
		p = find_hash(a, hex);	/* recovered before its records came */
		/*
		 * The same content loaded again at the same address has the
		 * same hash (the kernel reuses the entry): a new program, or
		 * a new image once the last one is gone.
		 */
		if (p && (p->pub.id != m->id || p->pub.unload_time)) {
			tdelete(p, &a->by_hash, prog_hash_cmp);
			p = NULL;
		}
	}
	if (!p) {
		p = prog_new(a);
		if (!p)
			return -ENOMEM;
		p->pub.id = m->id;
		p->pub.stashed = stashed;
		p->pub.flags = m->flags;
		p->pub.load_time = record_time(h);
		p->pub.source = BPFSTASH_AGENT_FROM_RECORD;
		memcpy(p->pub.hash, hex, sizeof(hex));
		if (stashed && !tsearch(p, &a->by_hash, prog_hash_cmp))
			return -ENOMEM;
		err = id_map_add(a, p);
		if (err)
			return err;
	}
	/* Function 0 is the program: its name holds the program's tag and name. */
	if (m->func_idx == 0 && p->pub.source == BPFSTASH_AGENT_FROM_RECORD)
		parse_ksym(p, name);
	return prog_add_func(a, p, m->func_idx, m->addr, m->len, name);
}

static void prog_unloaded(struct bpfstash_agent *a, struct bst_prog *p, uint64_t time,
			  bool recovered)
{
	struct bpfstash_agent_event ev = {
		.type = BPFSTASH_AGENT_UNLOAD,
		.time = time,
		.prog = &p->pub,
		.recovered = recovered,
	};

	announce(a, p);
	if (!recovered)
		reread_origin(a, p);
	p->pub.unload_time = time;
	id_map_del(a, p);
	emit(a, &ev);
}

static int on_bpf_event(struct bpfstash_agent *a, const struct perf_event_header *h)
{
	const struct bst_bpf_event *b = (const void *)h;
	struct bst_prog *p;

	if (h->size < sizeof(*b) + sizeof(uint64_t))
		return -EBADMSG;
	if (b->type != PERF_BPF_EVENT_PROG_UNLOAD)
		return 0;
	a->stats.records++;
	p = find_id(a, b->id);
	if (!p) {
		/* Loaded before the agent, not JITed, or recorded nowhere. */
		a->stats.unknown_unloads++;
		return 0;
	}
	prog_unloaded(a, p, record_time(h), false);
	return 0;
}

static bool live_image_at(const struct bst_range *r, uint64_t addr, const char *name)
{
	const struct bst_prog *p = r->prog;

	return r->start == addr && !p->pub.id && !p->pub.unload_time && p->pub.nr_funcs == 1 &&
	       !strcmp(p->funcs[0].name, name);
}

/*
 * The image still loaded whose function starts at @addr with @name, or
 * NULL.  Only one can be, unless an unload record was lost: then the last
 * one loaded, the one a lookup finds.  The new ranges are looked through
 * rather than merged, which a record of every program's functions would
 * cost.
 */
static struct bst_prog *find_live_image(struct bpfstash_agent *a, uint64_t addr,
					const char *name)
{
	const struct bst_range *rs = a->ranges;
	struct bst_prog *found = NULL;
	size_t i;

	/* Ranges at one start are in load order. */
	for (i = first_after(rs, 0, a->nr_ranges, addr, true);
	     i < a->nr_ranges && rs[i].start == addr; i++)
		if (live_image_at(&rs[i], addr, name))
			found = rs[i].prog;
	for (i = 0; i < a->nr_pending; i++)
		if (live_image_at(&a->pending[i], addr, name) &&
		    (!found || a->pending[i].prog->pub.load_time >= found->pub.load_time))
			found = a->pending[i].prog;
	return found;
}

/*
 * An image's unload.  The kernel sends no PERF_RECORD_BPF_EVENT for a
 * trampoline or a struct_ops image, which has no program id, only the
 * KSYMBOL unregister of its start and name (bpf_image_ksym_del()).
 * Programs' own KSYMBOL records say nothing that MMAP3 and BPF_EVENT do
 * not, and a dispatcher keeps its symbol across versions (each version's
 * unload is learnt from the stash): both are passed over.
 */
static int on_ksymbol(struct bpfstash_agent *a, const struct perf_event_header *h)
{
	const struct bst_ksymbol *k = (const void *)h;
	char name[512];
	struct bst_prog *p;

	if (h->size < sizeof(*k) + sizeof(uint64_t))
		return -EBADMSG;
	if (k->ksym_type != PERF_RECORD_KSYMBOL_TYPE_BPF ||
	    !(k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER))
		return 0;
	record_name(h, sizeof(*k), name, sizeof(name));
	p = find_live_image(a, k->addr, name);
	if (!p)
		return 0;	/* a program's function, or an image never indexed */
	a->stats.records++;
	prog_unloaded(a, p, record_time(h), false);
	return 0;
}

static int apply(struct bpfstash_agent *a, const struct perf_event_header *h)
{
	switch (h->type) {
	case BST_PERF_RECORD_MMAP3:
		return on_mmap3(a, h);
	case PERF_RECORD_BPF_EVENT:
		return on_bpf_event(a, h);
	case PERF_RECORD_KSYMBOL:
		return on_ksymbol(a, h);
	case PERF_RECORD_LOST:
		if (h->size < sizeof(struct bst_lost))
			return -EBADMSG;
		/*
		 * Our own rings' losses are read from their counters (drain()),
		 * which know them at once: a LOST record only comes with the
		 * next record the ring has room for.
		 */
		if (a->nr_rings)
			return 0;
		a->stats.lost += ((const struct bst_lost *)h)->lost;
		a->lost_unrecovered += ((const struct bst_lost *)h)->lost;
		return 0;
	default:
		return 0;
	}
}

/*
 * The funcs file of entry @name, checked for the @nr functions its meta
 * says: their ranges are all the agent keeps, so a recovery at 100 000
 * entries reads two files of each (meta and funcs) rather than all of
 * them.  A line lookup loads the entry whole, and checks the rest then.
 */
static int read_entry_funcs(struct bpfstash_agent *a, const char *name, uint32_t nr,
			    void **out)
{
	const struct bpfstash_func *f;
	size_t size, names_len;
	const char *names;
	uint32_t i, off;
	void *buf;
	int err;

	*out = NULL;
	err = bst_read_file_at(a->stash->dirfd, name, "funcs", BST_FUNCS_MAX, &buf, &size);
	if (err)
		return err;
	f = buf;
	if (!nr || nr > BPFSTASH_MAX_FUNCS || size < (size_t)nr * sizeof(*f)) {
		free(buf);
		return bst_bad("funcs: %zu bytes hold fewer than nr_funcs %u records", size, nr);
	}
	names = (const char *)(f + nr);
	names_len = size - (size_t)nr * sizeof(*f);
	for (i = 0; i < nr; i++) {
		off = le32toh(f[i].name_off);
		if (off >= names_len || !memchr(names + off, '\0', names_len - off)) {
			free(buf);
			return bst_bad("funcs: function %u: name at %u does not end in the file",
				       i, off);
		}
	}
	*out = buf;
	return 0;
}

/* The @nr functions of a funcs file read_entry_funcs() checked, into @p. */
static int add_entry_funcs(struct bpfstash_agent *a, struct bst_prog *p, const void *buf,
			   uint32_t nr)
{
	const struct bpfstash_func *f = buf;
	const char *names = (const char *)(f + nr);
	uint32_t i;
	int err = 0;

	for (i = 0; i < nr && !err; i++)
		err = prog_add_func(a, p, i, le64toh(f[i].addr), le32toh(f[i].len),
				    names + le32toh(f[i].name_off));
	return err;
}

/*
 * @p, new from the stash with its functions: index it and say so, with
 * its unload if it is gone.
 */
static int prog_recovered(struct bpfstash_agent *a, struct bst_prog *p, uint32_t *loads,
			  uint32_t *unloads)
{
	int err = 0;

	if (!tsearch(p, &a->by_hash, prog_hash_cmp))
		err = -ENOMEM;
	if (!err && !p->pub.unload_time)
		err = id_map_add(a, p);
	if (err)
		return err;
	announce(a, p);
	++*loads;
	if (p->pub.unload_time) {
		struct bpfstash_agent_event ev = {
			.type = BPFSTASH_AGENT_UNLOAD,
			.time = p->pub.unload_time,
			.prog = &p->pub,
			.recovered = true,
		};

		emit(a, &ev);
		++*unloads;
	}
	return 0;
}

/*
 * Whether a program unloaded at @unload_time, that the agent does not
 * know, would be forgotten at once.
 */
static bool forgotten_at_once(const struct bpfstash_agent *a, uint64_t unload_time)
{
	return unload_time && a->newest > a->forget_ns && unload_time < a->newest - a->forget_ns;
}

/*
 * scan_stash() from the kernel's index file: every entry's state and
 * ranges in one read.  1 when done, 0 when there is no such file (a copy
 * of a stash, an older kernel) or it cannot be used, or -ENOMEM.
 */
static int scan_index(struct bpfstash_agent *a, enum bpfstash_agent_source source,
		      uint32_t *loads, uint32_t *unloads)
{
	struct bst_index_file f;
	uint32_t i, j;
	size_t size;
	void *buf;
	int err;

	if (!a->stash->mounted)
		return 0;
	err = bst_read_index_file(a->stash->dirfd, &buf, &size);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (bst_index_file_check(buf, size, &f)) {
		free(buf);
		return 0;
	}
	for (i = 0; i < f.nr_entries && !err; i++) {
		const struct bpfstash_index_entry *ie = bst_index_file_entry(&f, i);
		uint64_t unload_time = le64toh(ie->unload_time);
		uint32_t first = le32toh(ie->first_range), nr = le32toh(ie->nr_ranges);
		char hex[BPFSTASH_HEX_LEN + 1];
		struct bst_prog *p;

		bst_hex(hex, ie->hash, BPFSTASH_HASH_SIZE);
		p = find_hash(a, hex);
		if (p) {
			/* Known: only its lost unload is left to learn. */
			if (!p->pub.unload_time && unload_time) {
				prog_unloaded(a, p, unload_time, true);
				++*unloads;
			}
			continue;
		}
		if (forgotten_at_once(a, unload_time))
			continue;
		p = prog_new(a);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		p->pub.id = le32toh(ie->prog_id);
		p->pub.stashed = true;
		p->pub.flags = BST_MMAP3_STASHED;
		p->pub.load_time = le64toh(ie->load_time);
		p->pub.unload_time = unload_time;
		p->pub.source = source;
		memcpy(p->pub.hash, hex, sizeof(p->pub.hash));
		memcpy(p->pub.tag, ie->tag, sizeof(p->pub.tag));
		snprintf(p->pub.name, sizeof(p->pub.name), "%.*s", BPFSTASH_NAME_LEN, ie->name);
		for (j = 0; j < nr && !err; j++) {
			const struct bpfstash_index_range *r = bst_index_file_range(&f, first + j);

			err = prog_add_func(a, p, j, le64toh(r->addr), le32toh(r->len),
					    f.names + le32toh(r->name_off));
		}
		if (!err)
			err = prog_recovered(a, p, loads, unloads);
	}
	free(buf);
	return err ? err : 1;
}

/*
 * Index the stash's entries that the records did not bring, and close the
 * programs whose unload record was lost: the stash holds both times.
 */
static int scan_stash(struct bpfstash_agent *a, enum bpfstash_agent_source source,
		      uint32_t *loads, uint32_t *unloads)
{
	char **names;
	size_t n, i;
	int err;

	*loads = *unloads = 0;
	err = open_stash(a);
	if (err)
		return err;
	err = scan_index(a, source, loads, unloads);
	if (err)
		return err < 0 ? err : 0;
	err = bpfstash_list(a->stash, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct bst_prog *p = find_hash(a, names[i]);
		const struct bpfstash_meta *m;
		struct bpfstash_entry *e;
		void *funcs;

		if (p && p->pub.unload_time)
			continue;	/* nothing left to learn */
		if (bpfstash_entry_load(a->stash, names[i], BPFSTASH_LOAD_META, &e))
			continue;	/* deleted meanwhile, or unreadable: no answer */
		m = bpfstash_entry_meta(e);
		if (!p && forgotten_at_once(a, m->unload_time)) {
			bpfstash_entry_free(e);	/* would be forgotten at once */
			continue;
		}
		if (p) {
			if (m->unload_time) {
				prog_unloaded(a, p, m->unload_time, true);
				++*unloads;
			}
			bpfstash_entry_free(e);
			continue;
		}
		/* Unreadable or corrupt: no answer. */
		if (read_entry_funcs(a, names[i], m->content.nr_funcs, &funcs)) {
			bpfstash_entry_free(e);
			continue;
		}
		p = prog_new(a);
		if (!p) {
			free(funcs);
			bpfstash_entry_free(e);
			err = -ENOMEM;
			break;
		}
		p->pub.id = m->prog_id;
		p->pub.stashed = true;
		p->pub.flags = BST_MMAP3_STASHED;
		p->pub.load_time = m->load_time;
		p->pub.unload_time = m->unload_time;
		p->pub.source = source;
		memcpy(p->pub.hash, names[i], sizeof(p->pub.hash));
		memcpy(p->pub.tag, m->content.tag, sizeof(p->pub.tag));
		snprintf(p->pub.name, sizeof(p->pub.name), "%.*s", BPFSTASH_NAME_LEN,
			 m->content.name);
		set_origin(p, m);
		err = add_entry_funcs(a, p, funcs, m->content.nr_funcs);
		free(funcs);
		bpfstash_entry_free(e);
		if (!err)
			err = prog_recovered(a, p, loads, unloads);
		if (err)
			break;
	}
	bpfstash_names_free(names);
	return err;
}

static int recover(struct bpfstash_agent *a)
{
	struct bpfstash_agent_event ev = { .type = BPFSTASH_AGENT_RECOVERED };
	struct timespec ts;
	int err;

	err = scan_stash(a, BPFSTASH_AGENT_FROM_RECOVERY, &ev.loads, &ev.unloads);
	if (err)
		return err;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	ev.time = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	ev.lost = a->lost_unrecovered;
	a->lost_unrecovered = 0;
	a->stats.recoveries++;
	a->stats.recovered_loads += ev.loads;
	a->stats.recovered_unloads += ev.unloads;
	emit(a, &ev);
	return 0;
}

/* Copy every ring's records into the batch; returns how many. */
static int drain(struct bpfstash_agent *a)
{
	long page = sysconf(_SC_PAGESIZE);
	int i, n = 0;

	for (i = 0; i < a->nr_rings; i++) {
		struct bst_ring *r = &a->rings[i];
		struct perf_event_mmap_page *pc = r->base;
		uint8_t *data = (uint8_t *)r->base + page;
		uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = pc->data_tail;

		while (tail < head) {
			struct perf_event_header hdr;
			size_t off = tail % r->data_size, first;
			uint8_t *dst;

			first = r->data_size - off;
			if (first >= sizeof(hdr)) {
				memcpy(&hdr, data + off, sizeof(hdr));
			} else {
				memcpy(&hdr, data + off, first);
				memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
			}
			if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
				break;	/* cannot happen: the kernel writes whole records */
			if (a->batch_len + hdr.size > a->batch_cap) {
				size_t cap = a->batch_cap ? a->batch_cap * 2 : 65536;

				while (cap < a->batch_len + hdr.size)
					cap *= 2;
				dst = realloc(a->batch, cap);
				if (!dst)
					return -ENOMEM;
				a->batch = dst;
				a->batch_cap = cap;
			}
			dst = a->batch + a->batch_len;
			if (first >= hdr.size) {
				memcpy(dst, data + off, hdr.size);
			} else {
				memcpy(dst, data + off, first);
				memcpy(dst + first, data, hdr.size - first);
			}
			a->batch_len += hdr.size;
			tail += hdr.size;
			n++;
		}
		__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
		/*
		 * Records dropped until now are counted now: their entries are
		 * already in the stash (the kernel makes an entry visible before
		 * it emits the record), so the recovery that follows finds them.
		 */
		{
			uint64_t v[2];

			if (read(r->fd, v, sizeof(v)) == sizeof(v) && v[1] > r->lost) {
				a->stats.lost += v[1] - r->lost;
				a->lost_unrecovered += v[1] - r->lost;
				r->lost = v[1];
			}
		}
	}
	return n;
}

struct bst_rec {
	uint64_t time;
	size_t off;
};

/* Take the ranges of forgotten programs out of the @n ranges at @r. */
static size_t ranges_drop(struct bst_range *r, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!r[i].prog->forgotten)
			r[k++] = r[i];
	return k;
}

/*
 * Forget the programs unloaded longer than opts.forget_ns before the
 * newest record applied: their ranges, names and entries.  With a.lock
 * held for writing.  A lookup at such a time finds nothing, as it would
 * once the stash's entry was gone.
 */
static void forget(struct bpfstash_agent *a)
{
	size_t i, k, n = 0;

	if (a->newest <= a->forget_ns)
		return;
	for (i = 0; i < a->nr_progs; i++) {
		struct bst_prog *p = a->progs[i];

		if (p->pub.unload_time && p->announced &&
		    p->pub.unload_time < a->newest - a->forget_ns) {
			p->forgotten = true;
			n++;
		}
	}
	if (!n)
		return;
	a->nr_ranges = ranges_drop(a->ranges, a->nr_ranges);
	a->nr_pending = ranges_drop(a->pending, a->nr_pending);
	for (i = 0, k = 0; i < a->nr_progs; i++) {
		struct bst_prog *p = a->progs[i];
		uint32_t f;

		if (!p->forgotten) {
			a->progs[k++] = p;
			continue;
		}
		if (p->pub.stashed && find_hash(a, p->pub.hash) == p)
			tdelete(p, &a->by_hash, prog_hash_cmp);
		a->stats.ranges -= p->pub.nr_funcs;
		for (f = 0; f < p->pub.nr_funcs; f++)
			free((char *)p->funcs[f].name);
		if (p->entry) {
			bpfstash_entry_free(p->entry);
			a->nr_entries--;
		}
		free(p->funcs);
		free(p);
	}
	a->nr_progs = k;
	a->stats.programs -= n;
	a->stats.forgotten += n;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int rec_cmp(const void *x, const void *y)
{
	const struct bst_rec *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;	/* stable: ring order */
}

/*
 * Apply, in time order, the records older than @a->horizon, the start of
 * the previous poll, and hold the others back for the next poll; then
 * announce, then recover if needed.  This is perf's rule for ordered
 * events across rings (tools/perf/util/ordered-events.c, flushed by
 * round): each ring is in time order, but the rings are read one after
 * another, so a record of one ring can be older than a record of a ring
 * read earlier.  Once a poll has begun, a record older than the previous
 * poll's start is in some ring already, and this poll has read it.
 * @start is this poll's start.  Returns the records read by this poll.
 */
static int process(struct bpfstash_agent *a, uint64_t start)
{
	struct bst_rec *recs = NULL;
	size_t off, n = 0, i, fresh = 0, apply_n, future;
	uint8_t *held = NULL;
	size_t held_len = 0;
	int err = 0, ret;

	for (off = 0; off < a->batch_len; n++) {
		if (off >= a->batch_held)
			fresh++;
		off += ((struct perf_event_header *)(a->batch + off))->size;
	}
	if (n) {
		recs = malloc(n * sizeof(*recs));
		if (!recs)
			return -ENOMEM;
	}
	for (off = 0, i = 0; off < a->batch_len; i++) {
		const struct perf_event_header *h = (const void *)(a->batch + off);

		/* Too short for a time: apply() counts it as bad, at once. */
		recs[i].time = h->size >= sizeof(*h) + 8 ? record_time(h) : 0;
		recs[i].off = off;
		off += h->size;
	}
	if (n)
		qsort(recs, n, sizeof(*recs), rec_cmp);
	/*
	 * A record timed more than BST_FUTURE_NS after this poll began did
	 * not come from a ring: nothing older can come after it, so it is
	 * applied now rather than held for ever.
	 */
	apply_n = 0;
	while (apply_n < n && recs[apply_n].time < a->horizon)
		apply_n++;
	future = n;
	while (future > apply_n && recs[future - 1].time > start + BST_FUTURE_NS)
		future--;
	if (apply_n < future) {
		held_len = 0;
		for (i = apply_n; i < future; i++)
			held_len += ((struct perf_event_header *)(a->batch + recs[i].off))->size;
		held = malloc(held_len);
		if (!held) {
			free(recs);
			return -ENOMEM;
		}
		for (off = 0, i = apply_n; i < future; i++) {
			const struct perf_event_header *h = (const void *)(a->batch + recs[i].off);

			memcpy(held + off, h, h->size);
			off += h->size;
		}
	}
	for (i = 0; i < n; i++) {
		if (i == apply_n)
			i = future;
		if (i == n)
			break;
		if (recs[i].time > a->newest)
			a->newest = recs[i].time;
		ret = apply(a, (const void *)(a->batch + recs[i].off));
		if (ret == -EBADMSG)
			a->stats.bad_records++;
		else if (ret && !err)
			err = ret;
	}
	free(recs);
	/* The held records, in time order, start the next poll's batch. */
	if (held)
		memcpy(a->batch, held, held_len);
	free(held);
	a->batch_len = held_len;
	a->batch_held = held_len;
	a->horizon = start;
	for (i = 0; i < a->nr_fresh; i++)
		announce(a, a->fresh[i]);
	a->nr_fresh = 0;
	if (a->lost_unrecovered) {
		struct bpfstash_agent_event ev = {
			.type = BPFSTASH_AGENT_LOST,
			.lost = a->lost_unrecovered,
		};

		ev.time = boottime_ns();
		emit(a, &ev);
		ret = recover(a);
		if (ret && !err)
			err = ret;
		a->settle = true;
	} else if (a->settle) {
		uint32_t l, u;

		/*
		 * The kernel marks an entry unloaded just after it sends the
		 * unload record: a record lost in that instant is learnt here,
		 * one poll later.
		 */
		a->settle = false;
		ret = scan_stash(a, BPFSTASH_AGENT_FROM_RECOVERY, &l, &u);
		a->stats.recovered_loads += l;
		a->stats.recovered_unloads += u;
		if (ret && !err)
			err = ret;
	}
	if (!err)
		err = index_merge(a);
	forget(a);
	return err ? err : (int)fresh;
}

int bpfstash_agent_feed(struct bpfstash_agent *a, const struct perf_event_header *rec)
{
	struct perf_event_header *h;
	uint64_t time;
	size_t size;
	uint8_t *b;

	if (rec->size < sizeof(*rec) || rec->size % 8)
		return -EINVAL;
	if (rec->type == PERF_RECORD_SAMPLE)
		return 0;
	if (rec->size < sizeof(*rec) + a->feed_id_len)
		return -EINVAL;
	/* Queued as the agent's own rings give it: the time ends the record. */
	size = rec->size - a->feed_id_len + sizeof(time);
	if (a->batch_len + size > a->batch_cap) {
		size_t cap = a->batch_cap ? a->batch_cap * 2 : 65536;

		while (cap < a->batch_len + size)
			cap *= 2;
		b = realloc(a->batch, cap);
		if (!b)
			return -ENOMEM;
		a->batch = b;
		a->batch_cap = cap;
	}
	memcpy(&time, (const uint8_t *)rec + rec->size - a->feed_after_time - sizeof(time),
	       sizeof(time));
	h = (void *)(a->batch + a->batch_len);
	memcpy(h, rec, rec->size - a->feed_id_len);
	memcpy((uint8_t *)h + size - sizeof(time), &time, sizeof(time));
	h->size = size;
	a->batch_len += size;
	return 0;
}

/*
 * Read every ring and apply what is old enough, or with @all everything
 * read: the poller's work, under the index's write lock.  The clock is
 * read before the rings (see process()).
 */
static int read_and_apply(struct bpfstash_agent *a, bool all)
{
	uint64_t start = boottime_ns();
	int err;

	write_lock(a);
	err = drain(a);
	if (err >= 0) {
		if (all)
			a->horizon = UINT64_MAX;
		err = process(a, start);
	}
	write_unlock(a);
	return err;
}

int bpfstash_agent_poll(struct bpfstash_agent *a, int timeout_ms)
{
	struct epoll_event evs[8];
	int err;

	/* Records held back are applied by the next poll: come back soon. */
	if (a->batch_held && (timeout_ms < 0 || timeout_ms > BST_HOLD_MS))
		timeout_ms = BST_HOLD_MS;
	if (a->nr_rings && timeout_ms) {
		err = epoll_wait(a->epfd, evs, 8, timeout_ms);
		if (err < 0 && errno != EINTR)
			return -errno;
	}
	return read_and_apply(a, false);
}

int bpfstash_agent_flush(struct bpfstash_agent *a)
{
	return read_and_apply(a, true);
}

int bpfstash_agent_recover(struct bpfstash_agent *a)
{
	int err;

	write_lock(a);
	err = recover(a);
	if (!err)
		err = index_merge(a);
	write_unlock(a);
	return err;
}

void bpfstash_agent_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_type = PERF_SAMPLE_TIME;
	attr->read_format = PERF_FORMAT_LOST;
	attr->sample_id_all = 1;
	attr->bpf_event = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_BOOTTIME;
	bst_attr_set_mmap3(attr, true);
}

int bpfstash_agent_attr_sized(struct perf_event_attr *attr, size_t size)
{
	struct perf_event_attr ours;

	if (size < offsetof(struct perf_event_attr, clockid) + sizeof(ours.clockid))
		return -EINVAL;
	bpfstash_agent_attr(&ours);
	memset(attr, 0, size);
	memcpy(attr, &ours, size < sizeof(ours) ? size : sizeof(ours));
	attr->size = size;
	return 0;
}

/*
 * Set or clear perf_event_attr::mmap3 by its name in the bit-field, as the
 * kernel declares it (see struct bst_attr_flags): a shift would pick
 * another bit where bit-fields fill from the top (big-endian ABIs).
 */
void bst_attr_set_mmap3(struct perf_event_attr *attr, bool on)
{
	struct bst_attr_flags flags;

	memcpy(&flags, (uint8_t *)attr + BST_ATTR_FLAGS_OFF, sizeof(flags));
	flags.mmap3 = on;
	memcpy((uint8_t *)attr + BST_ATTR_FLAGS_OFF, &flags, sizeof(flags));
}

bool bst_attr_mmap3(const struct perf_event_attr *attr)
{
	struct bst_attr_flags flags;

	memcpy(&flags, (const uint8_t *)attr + BST_ATTR_FLAGS_OFF, sizeof(flags));
	return flags.mmap3;
}

static int perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * perf_event_open() failed with @err on @cpu: if the attributes open
 * without mmap3, this kernel has no PERF_RECORD_MMAP3 (it refuses an
 * unknown bit with EINVAL, or E2BIG from a kernel whose attr is shorter
 * than the caller's), and the answer is -EOPNOTSUPP; otherwise @err.
 */
static int no_mmap3(const struct perf_event_attr *attr, int cpu, int err)
{
	struct perf_event_attr probe = *attr;
	int fd;

	if (err != -EINVAL && err != -E2BIG)
		return err;
	bst_attr_set_mmap3(&probe, false);
	fd = perf_event_open(&probe, cpu);
	if (fd < 0)
		return err;
	close(fd);
	return -EOPNOTSUPP;
}

static int open_rings(struct bpfstash_agent *a)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = a->opts.ring_pages ? a->opts.ring_pages : 64;
	struct perf_event_attr attr;
	int cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (pages & (pages - 1))
		return -EINVAL;
	if (ncpu < 1)
		ncpu = 1;
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epfd < 0)
		return -errno;
	a->rings = calloc(ncpu, sizeof(*a->rings));
	if (!a->rings)
		return -ENOMEM;
	bpfstash_agent_attr(&attr);
	if (a->opts.flags & BPFSTASH_AGENT_IMAGE_UNLOADS)
		attr.ksymbol = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct bst_ring *r = &a->rings[a->nr_rings];
		struct epoll_event ev = { .events = EPOLLIN };

		r->fd = perf_event_open(&attr, cpu);
		if (r->fd < 0) {
			if (errno == ENODEV || (errno == EINVAL && a->nr_rings > 0))
				continue;	/* an offline or absent CPU */
			return no_mmap3(&attr, cpu, -errno);
		}
		r->data_size = pages * page;
		r->base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);
		if (r->base == MAP_FAILED) {
			int err = -errno;

			close(r->fd);
			return err;
		}
		ev.data.u32 = a->nr_rings;
		if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, r->fd, &ev))
			return -errno;
		a->nr_rings++;
	}
	return a->nr_rings ? 0 : -ENODEV;
}

/* The flags this library knows. */
#define BST_AGENT_FLAGS	(BPFSTASH_AGENT_NO_RINGS | BPFSTASH_AGENT_SCAN | \
			 BPFSTASH_AGENT_IMAGE_UNLOADS | BPFSTASH_AGENT_ORIGIN)

/* What sample_id_all adds to a record (perf_event_open(2): sample_id), in order. */
#define BST_SAMPLE_ID_AFTER_TIME (PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
				  PERF_SAMPLE_IDENTIFIER)
#define BST_SAMPLE_ID_ALL	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | BST_SAMPLE_ID_AFTER_TIME)

/* Bytes @from to @to of @p are zero: fields of a later header, unset. */
static bool bst_zero_tail(const void *p, size_t from, size_t to)
{
	const uint8_t *b = p;

	for (; from < to; from++)
		if (b[from])
			return false;
	return true;
}

int bpfstash_agent_open(const struct bpfstash_agent_opts *opts, struct bpfstash_agent **out)
{
	struct bpfstash_agent *a;
	uint32_t l, u;
	int err;

	*out = NULL;
	if (opts && (opts->sz < offsetof(struct bpfstash_agent_opts, ctx) + sizeof(void *) ||
		     !bst_zero_tail(opts, sizeof(*opts), opts->sz) ||
		     (opts->flags & ~BST_AGENT_FLAGS) ||
		     (opts->sz > offsetof(struct bpfstash_agent_opts, feed_sample_type) &&
		      opts->feed_sample_type && !(opts->feed_sample_type & PERF_SAMPLE_TIME))))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->epfd = -1;
	a->horizon = boottime_ns();
	{
		pthread_rwlockattr_t attr;

		/* Lookups in a loop must not keep the poller out. */
		pthread_rwlockattr_init(&attr);
		pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&a->lock, &attr);
		pthread_rwlockattr_destroy(&attr);
		pthread_mutex_init(&a->entry_lock, NULL);
	}
	if (opts)
		memcpy(&a->opts, opts, opts->sz < sizeof(a->opts) ? opts->sz : sizeof(a->opts));
	a->opts.sz = sizeof(a->opts);
	if (!a->opts.feed_sample_type)
		a->opts.feed_sample_type = PERF_SAMPLE_TIME;
	a->feed_id_len = 8 * __builtin_popcountll(a->opts.feed_sample_type &
						  BST_SAMPLE_ID_ALL);
	a->feed_after_time = 8 * __builtin_popcountll(a->opts.feed_sample_type &
						      BST_SAMPLE_ID_AFTER_TIME);
	a->root = strdup(a->opts.root ? a->opts.root : BPFSTASH_DEFAULT_ROOT);
	if (!a->root) {
		free(a);
		return -ENOMEM;
	}
	a->opts.root = a->root;
	a->forget_ns = a->opts.forget_ns ? a->opts.forget_ns : BST_FORGET_NS;
	a->max_entries = a->opts.max_entries ? a->opts.max_entries : BST_MAX_ENTRIES;
	err = 0;
	if (!(a->opts.flags & BPFSTASH_AGENT_NO_RINGS))
		err = open_rings(a);
	/* Rings first, then the scan: a program loaded between is in one of them. */
	if (!err && (a->opts.flags & BPFSTASH_AGENT_SCAN))
		err = scan_stash(a, BPFSTASH_AGENT_FROM_SCAN, &l, &u);
	if (!err)
		err = index_merge(a);
	if (err) {
		bpfstash_agent_close(a);
		return err;
	}
	*out = a;
	return 0;
}

static void noop_free(void *p)
{
}

void bpfstash_agent_close(struct bpfstash_agent *a)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;
	int r;

	if (!a)
		return;
	for (r = 0; r < a->nr_rings; r++) {
		munmap(a->rings[r].base, a->rings[r].data_size + page);
		close(a->rings[r].fd);
	}
	free(a->rings);
	if (a->epfd >= 0)
		close(a->epfd);
	tdestroy(a->by_hash, noop_free);
	tdestroy(a->by_id, noop_free);
	for (i = 0; i < a->nr_progs; i++) {
		uint32_t f;

		for (f = 0; f < a->progs[i]->pub.nr_funcs; f++)
			free((char *)a->progs[i]->funcs[f].name);
		bpfstash_entry_free(a->progs[i]->entry);
		free(a->progs[i]->funcs);
		free(a->progs[i]);
	}
	free(a->progs);
	free(a->fresh);
	free(a->ranges);
	free(a->pending);
	free(a->batch);
	bpfstash_close(a->stash);
	free(a->root);
	pthread_rwlock_destroy(&a->lock);
	pthread_mutex_destroy(&a->entry_lock);
	free(a);
}

int bpfstash_agent_fd(const struct bpfstash_agent *a)
{
	return a->epfd;
}

int bpfstash_agent_get_stats_sized(struct bpfstash_agent *a, struct bpfstash_agent_stats *stats,
				   size_t size)
{
	struct bpfstash_agent_stats st;
	bool locked;

	if (size < offsetof(struct bpfstash_agent_stats, forgotten))
		return -EINVAL;
	locked = read_lock(a);
	st = a->stats;
	pthread_mutex_lock(&a->entry_lock);
	st.entries_cached = a->nr_entries;
	st.entries_evicted = a->entries_evicted;
	pthread_mutex_unlock(&a->entry_lock);
	read_unlock(a, locked);
	memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	if (size > sizeof(st))
		memset((uint8_t *)stats + sizeof(st), 0, size - sizeof(st));
	return 0;
}

/* The struct as LIBBPFSTASH_0.3 had it: the fields before forgotten. */
void bpfstash_agent_get_stats(const struct bpfstash_agent *a, struct bpfstash_agent_stats *stats)
{
	bpfstash_agent_get_stats_sized((struct bpfstash_agent *)a, stats,
				       offsetof(struct bpfstash_agent_stats, forgotten));
}
