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
	struct bpfstash *stash;
	struct bpfstash_resolve_opts at;	/* --at, or clock NONE */
	struct bpfstash_resolve_opts perf;	/* the last perf sample's time */
	int err;				/* the first failure to read the stash */
};

/* The annotation for one frame into @buf ("" if it is no frame of ours). */
static void annotate(struct decoder *d, const struct decode_frame *f, char *buf, size_t size)
{
	const struct bpfstash_resolve_opts *when = &d->at;
	struct bpfstash_candidates *cands = NULL;
	const struct bpfstash_candidate *c;
	struct bpfstash_location loc;
	struct bpfstash_entry *e = NULL;
	size_t i, n = 0;
	int err;

	buf[0] = '\0';
	if (f->has_time)
		when = &f->when;
	else if (d->perf.clock != BPFSTASH_CLOCK_NONE)
		when = &d->perf;
	if (f->has_symbol)
		err = bpfstash_resolve_symbol(d->stash, f->symbol, f->off, f->size, when, &e,
					      &loc, &cands);
	else
		err = bpfstash_resolve_at(d->stash, f->addr, when, &e, &loc, &cands);
	for (i = 0; (c = bpfstash_candidates_get(cands, i)); i++)
		n += c->at_time;
	if (!err && loc.has_line)
		snprintf(buf, size, " %s:%u:%u%s%s", loc.file, loc.line, loc.col,
			 opts.source ? ": " : "", opts.source ? loc.source : "");
	else if (!err)
		snprintf(buf, size, " (%.8s: no line info)", bpfstash_entry_name(e));
	else if (err == -EADDRNOTAVAIL)
		snprintf(buf, size, " (ambiguous: %zu entries)", n);
	else if (err == -ENOENT && bpfstash_candidates_count(cands))
		snprintf(buf, size, " (not loaded at that time: %zu entries at other times)",
			 bpfstash_candidates_count(cands));
	else if (err != -ENOENT && !d->err)
		d->err = err;
	bpfstash_entry_free(e);
	bpfstash_candidates_free(cands);
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
	if (decode_scan(line, body, &f))
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
	int c, ret;

	if (argc)
		return usage_error("decode reads stdin and takes no argument, '%s' given", argv[0]);
	if (json_wtr)
		return usage_error("decode writes text (resolve has --json)");
	d.at.sz = sizeof(d.at);
	if (opts.at && parse_at(opts.at, &d.at))
		return EXIT_USAGE;
	ret = stash_open(&d.stash);
	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	line = malloc(DECODE_LINE_MAX + 1);
	if (!line) {
		bpfstash_close(d.stash);
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
	bpfstash_close(d.stash);
	if (ferror(stdin) || fflush(stdout) || ferror(stdout)) {
		p_err("decode: %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (d.err) {
		p_err("%s: %s", opts.root, strerror(-d.err));
		return EXIT_NOSTASH;
	}
	return EXIT_OK;
}
