// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash decode: scripts/decode_stacktrace.sh for BPF frames.  Copies
 * stdin to stdout, and after each BPF frame it can resolve appends
 * " file:line:col" (with -s, ": source"); every other byte passes through
 * unchanged.  A frame held by several entries at that time (or at any
 * time, without one) gets " (ambiguous: N entries)": never a guess.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "main.h"
#include "decode.h"

/*
 * The time of a "perf script" sample header ("comm pid [cpu] 123.456789:
 * event:"), which holds for the callchain lines after it.
 */
static bool perf_header_time(const char *line, size_t len, struct bpfstash_resolve_opts *o)
{
	size_t i, j;

	for (i = 1; i < len; i++) {
		if (line[i - 1] != ' ' || line[i] < '0' || line[i] > '9')
			continue;
		for (j = i; j < len && ((line[j] >= '0' && line[j] <= '9') || line[j] == '.'); j++)
			;
		if (j < len && line[j] == ':' && (j + 1 == len || line[j + 1] == ' ') &&
		    memchr(line + i, '.', j - i) && !decode_parse_time(line + i, j - i, o))
			return true;
	}
	return false;
}

struct decoder {
	struct bpfstash *stash;			/* --root, or NULL with only --archive */
	struct decode_archive archive;		/* --archive, or no stash */
	struct bpfstash_resolve_opts at;	/* --at, or clock NONE */
	struct bpfstash_resolve_opts perf;	/* the last perf sample's time */
	int err;				/* the first failure to read the stash */
	struct decode_ksyms *ksyms;		/* --kallsyms, or /proc/kallsyms once needed */
	bool ksyms_tried;
	/*
	 * The sources' indexes, read at the first frame: one read of each for
	 * the whole trace.  A frame that no entry holds reads a source again,
	 * since a trace read as it is written (dmesg -w) has frames of
	 * programs loaded after decode started; but not sooner than ten times
	 * the last read took after it (and a second), so that a trace full of
	 * addresses of no entry costs a tenth more at most.
	 */
	struct bpfstash_index *index[2];
	double next_read[2];
};

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read source @src's index (again), and when it may be read next. */
static int read_index(struct decoder *d, int src, struct bpfstash *s)
{
	double t0 = monotonic(), took;
	int err;

	err = d->index[src] ? bpfstash_index_refresh(d->index[src]) :
			      bpfstash_index_open(s, &d->index[src]);
	took = monotonic() - t0;
	d->next_read[src] = monotonic() + (10 * took > 1 ? 10 * took : 1);
	return err;
}

/*
 * A frame "sym+off" whose offset lies past sym's end: its address,
 * recomputed from kallsyms, decoded as a bare address would be.  The
 * kallsyms of this boot are read at the first such frame; if they show no
 * addresses, that is said once and such frames are left alone.
 */
static bool rename_frame(struct decoder *d, struct decode_frame *f)
{
	if (!d->ksyms && !d->ksyms_tried) {
		d->ksyms_tried = true;
		d->ksyms = decode_ksyms_load("/proc/kallsyms");
		if (!d->ksyms)
			p_info("/proc/kallsyms: %s: frames named after the wrong kernel symbol "
			       "(bpftrace's, once a program is gone) are left as they are; "
			       "run as root, or give --kallsyms FILE",
			       errno == ENODATA ? "it shows this user no addresses" :
			       strerror(errno));
	}
	if (!d->ksyms || !decode_ksyms_misnamed(d->ksyms, f->ksym, f->ksym_off, &f->addr))
		return false;
	f->has_addr = true;
	f->renamed = true;
	return true;
}

/* One source's answer for a frame. */
struct lookup {
	int err;
	struct bpfstash_entry *e;
	struct bpfstash_loc loc;
	struct bpfstash_candidates *cands;
};

static void query(struct bpfstash_index *x, const struct decode_frame *f,
		  const struct bpfstash_resolve_opts *when, struct lookup *l)
{
	if (f->has_symbol)
		l->err = bpfstash_index_resolve_symbol(x, f->symbol, f->off, f->size, when, &l->e,
						       &l->loc, &l->cands);
	else
		l->err = bpfstash_index_resolve_at(x, f->addr, when, &l->e, &l->loc, &l->cands);
}

static void lookup(struct decoder *d, int src, struct bpfstash *s, const struct decode_frame *f,
		   const struct bpfstash_resolve_opts *at_time, struct lookup *l)
{
	struct bpfstash_resolve_opts at = { .sz = sizeof(at) }, *when = &at;

	/* --boot-id: only that boot's entries (archives hold several boots'). */
	if (at_time)
		at = *at_time;
	at.sz = sizeof(at);
	if (opts.boot_id_given)
		at.boot_id = opts.boot_id;
	memset(l, 0, sizeof(*l));
	l->loc.sz = sizeof(l->loc);
	if (!s) {
		l->err = -ENOENT;
		return;
	}
	if (!d->index[src]) {
		l->err = read_index(d, src, s);
		if (l->err)
			return;
	}
	query(d->index[src], f, when, l);
	if (l->err == -ENOENT && !bpfstash_candidates_count(l->cands) &&
	    monotonic() >= d->next_read[src]) {
		bpfstash_candidates_free(l->cands);
		l->cands = NULL;
		l->err = read_index(d, src, s);
		if (!l->err)
			query(d->index[src], f, when, l);
	}
}

static bool has_candidate(const struct bpfstash_candidates *cands, const char *hash)
{
	const struct bpfstash_candidate *c;
	size_t i;

	for (i = 0; (c = bpfstash_candidates_get(cands, i)); i++)
		if (!strcmp(c->hash, hash))
			return true;
	return false;
}

/*
 * The entries of both sources that hold the frame (at that time if
 * @at_time), each once: an entry can be both archived and, loaded again,
 * in the stash.
 */
static size_t count_candidates(const struct lookup *a, const struct lookup *b, bool at_time)
{
	const struct bpfstash_candidate *c;
	size_t i, n = 0;

	for (i = 0; (c = bpfstash_candidates_get(a->cands, i)); i++)
		n += !at_time || c->at_time;
	for (i = 0; (c = bpfstash_candidates_get(b->cands, i)); i++)
		n += (!at_time || c->at_time) && !has_candidate(a->cands, c->hash);
	return n;
}

/* The address of frame @f in entry @e: its address, or its symbol's; false if none. */
static bool frame_addr(const struct bpfstash_entry *e, const struct decode_frame *f,
		       uint64_t *addr)
{
	const struct bpfstash_func *fn;
	uint32_t i;

	if (f->has_addr) {
		*addr = f->addr;
		return true;
	}
	for (i = 0; f->has_symbol && i < bpfstash_entry_nr_funcs(e); i++) {
		fn = bpfstash_entry_func(e, i);
		if (!strcmp(bpfstash_entry_func_name(e, i), f->symbol) && f->off < fn->len) {
			*addr = fn->addr + f->off;
			return true;
		}
	}
	return false;
}

/*
 * A frame that names its entry (perf script's DSO): resolved in that
 * entry, whenever it was loaded, from the stash, the archive, or else
 * debuginfod.  False if none of them has the entry.
 */
static bool annotate_by_hash(struct decoder *d, const struct decode_frame *f, char *buf,
			     size_t size)
{
	struct bpfstash *sources[] = { d->stash, d->archive.stash };
	struct bpfstash_location loc;
	struct bpfstash_entry *e;
	struct decode_line dl;
	uint64_t addr;
	unsigned int i;
	int err;

	for (i = 0; i < 2; i++) {
		if (!sources[i] || bpfstash_entry_load(sources[i], f->hash, 0, &e))
			continue;
		err = frame_addr(e, f, &addr) ? bpfstash_entry_resolve(e, addr, &loc) : -ENOENT;
		if (!err && loc.has_line)
			snprintf(buf, size, " %s:%u:%u%s%s", loc.file, loc.line, loc.col,
				 opts.source ? ": " : "", opts.source ? loc.source : "");
		else if (!err)
			snprintf(buf, size, " (%.8s: no line info)", bpfstash_entry_name(e));
		bpfstash_entry_free(e);
		return true;	/* the entry, whether or not it holds the frame */
	}
	err = decode_debuginfod(f, &dl);
	if (err)
		return false;
	/* The ELF file has the line table, not the source text. */
	snprintf(buf, size, " %s:%u:%u", dl.file, dl.line, dl.col);
	return true;
}

/* The annotation for one frame into @buf ("" if it is no frame of ours). */
static void annotate(struct decoder *d, const struct decode_frame *f, char *buf, size_t size)
{
	const struct bpfstash_resolve_opts *when = &d->at;
	const struct lookup *found = NULL;
	struct lookup a, b;
	size_t n = 0;

	buf[0] = '\0';
	if (f->has_hash && annotate_by_hash(d, f, buf, size))
		return;
	if (!f->has_symbol && !f->has_addr)
		return;
	if (f->has_time)
		when = &f->when;
	else if (d->perf.clock != BPFSTASH_CLOCK_NONE)
		when = &d->perf;
	lookup(d, 0, d->stash, f, when, &a);
	lookup(d, 1, d->archive.stash, f, when, &b);

	/* A failure to read a source is reported at the end; it has no answer. */
	if (a.err && a.err != -ENOENT && a.err != -EADDRNOTAVAIL) {
		d->err = d->err ?: a.err;
		a.err = -ENOENT;
	}
	if (b.err && b.err != -ENOENT && b.err != -EADDRNOTAVAIL) {
		d->err = d->err ?: b.err;
		b.err = -ENOENT;
	}
	/* One answer: from one source, the other having none at that time. */
	if (!a.err && (b.err == -ENOENT ||
		       (!b.err && !strcmp(bpfstash_entry_name(a.e), bpfstash_entry_name(b.e)))))
		found = &a;
	else if (!b.err && a.err == -ENOENT)
		found = &b;

	/*
	 * A recomputed address says what it is first, when an entry holds it
	 * (at that time or another).
	 */
	if (f->renamed && found)
		n = snprintf(buf, size, " (0x%llx: %s+0x%x)", (unsigned long long)f->addr,
			     found->loc.func_name, found->loc.func_off);
	else if (f->renamed && (a.err != -ENOENT || b.err != -ENOENT ||
				count_candidates(&a, &b, false)))
		n = snprintf(buf, size, " (0x%llx)", (unsigned long long)f->addr);
	if (n >= size)
		n = 0;
	buf += n;
	size -= n;
	if (found && found->loc.has_line)
		snprintf(buf, size, " %s:%u:%u%s%s", found->loc.file, found->loc.line,
			 found->loc.col, opts.source ? ": " : "",
			 opts.source ? found->loc.source : "");
	else if (found)
		snprintf(buf, size, " (%.8s: no line info)", bpfstash_entry_name(found->e));
	else if (a.err != -ENOENT || b.err != -ENOENT)
		snprintf(buf, size, " (ambiguous: %zu entries)", count_candidates(&a, &b, true));
	else if (count_candidates(&a, &b, false))
		snprintf(buf, size, " (not loaded at that time: %zu entries at other times)",
			 count_candidates(&a, &b, false));
	bpfstash_entry_free(a.e);
	bpfstash_entry_free(b.e);
	bpfstash_candidates_free(a.cands);
	bpfstash_candidates_free(b.cands);
}

/* One line (without its end) out, annotated if it holds a frame. */
static void decode_line(struct decoder *d, const char *line, size_t len, const char *eol)
{
	static char note[2 * DECODE_SYM_MAX + 4096];
	struct decode_frame f;
	size_t body = len;

	/* The annotation goes before a "\r" of a "\r\n". */
	if (*eol == '\n' && body && line[body - 1] == '\r')
		body--;
	note[0] = '\0';
	if (decode_scan(line, body, &f) && (f.has_symbol || f.has_addr || rename_frame(d, &f)))
		annotate(d, &f, note, sizeof(note));
	else
		perf_header_time(line, body, &d->perf);
	fwrite(line, 1, body, stdout);
	fputs(note, stdout);
	fwrite(line + body, 1, len - body, stdout);
	fputs(eol, stdout);
}

int do_decode(int argc, char **argv)
{
	struct decoder d = {};
	size_t len = 0;
	char *line;
	int c, ret = 0;

	if (argc)
		return usage_error("decode reads stdin and takes no argument, '%s' given", argv[0]);
	if (json_wtr)
		return usage_error("decode writes text (resolve has --json)");
	d.at.sz = sizeof(d.at);
	if (opts.at && parse_at(opts.at, &d.at))
		return EXIT_USAGE;
	if (opts.kallsyms) {
		d.ksyms = decode_ksyms_load(opts.kallsyms);
		if (!d.ksyms) {
			p_err("--kallsyms %s: %s", opts.kallsyms, errno == ENODATA ?
			      "every address is 0 (copied by a user kptr_restrict hides them from)" :
			      strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (opts.archive) {
		ret = decode_archive_open(opts.archive, &d.archive);
		if (ret) {
			decode_ksyms_free(d.ksyms);
			return ret;
		}
	}
	/*
	 * With an archive, the mounted stash is used if there is one (decoding
	 * on another machine, there is none); --root is always used.
	 */
	if (!opts.archive || opts.root_given || default_stash_mounted())
		ret = stash_open(&d.stash);
	if (ret) {
		decode_archive_close(&d.archive);
		decode_ksyms_free(d.ksyms);
		return ret;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	line = malloc(DECODE_LINE_MAX + 1);
	if (!line) {
		bpfstash_close(d.stash);
		decode_archive_close(&d.archive);
		decode_ksyms_free(d.ksyms);
		p_err("out of memory");
		return EXIT_FAIL;
	}
	/*
	 * By hand, not getline(): a line may hold NULs, and one without end
	 * must not take all memory.  What is longer than DECODE_LINE_MAX is
	 * copied through as it comes.
	 */
	while ((c = getc_unlocked(stdin)) != EOF) {
		if (c == '\n') {
			decode_line(&d, line, len, "\n");
			len = 0;
			continue;
		}
		line[len++] = c;
		if (len < DECODE_LINE_MAX)
			continue;
		fwrite(line, 1, len, stdout);
		len = 0;
		while ((c = getc_unlocked(stdin)) != EOF && c != '\n')
			putc_unlocked(c, stdout);
		if (c == '\n')
			putc_unlocked('\n', stdout);
	}
	if (len)
		decode_line(&d, line, len, "");
	free(line);
	bpfstash_index_free(d.index[0]);
	bpfstash_index_free(d.index[1]);
	bpfstash_close(d.stash);
	decode_archive_close(&d.archive);
	decode_ksyms_free(d.ksyms);
	if (ferror(stdin) || fflush(stdout) || ferror(stdout)) {
		p_err("decode: %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (d.err) {
		p_err("%s: %s", d.stash ? opts.root : opts.archive, strerror(-d.err));
		return EXIT_NOSTASH;
	}
	return d.archive.newer ? EXIT_FORMAT : EXIT_OK;
}
