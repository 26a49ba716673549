// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf_truth: how many samples in bpf_churn's programs did perf resolve to
 * the right function and source line?  The truth comes from the kernel,
 * not from perf: bpf_churn's log says which program (bpfstash hash) ran
 * when, and the program's stash entry (libbpfstash) says which function
 * and line table entry each address is in.
 *
 *   perf script -F time,ip,sym,srcline --ns -i perf.data > script.txt
 *   perf_truth [--root STASH] [--misses N] [--split HASHES] CHURN_LOG script.txt
 *
 * Prints one line:
 *
 *   samples <n> function <n> <pct>% function+line <n> <pct>%
 *
 * and with --split, the programs whose hash is listed in the file HASHES
 * (one per line) are counted apart, on a second line starting "split".
 *
 * and the first N mismatches on stderr.  Exit status 0, or 1 on bad input.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/lib/bpfstash/libbpfstash.h"

struct prog {
	unsigned long long t0, t1;
	struct bpfstash_entry *entry;
	bool split;
};

struct count {
	unsigned long n, func_ok, line_ok;
};

static struct prog *progs;
static size_t nr_progs;

static bool listed(const char *hash, const char *list_path)
{
	char line[128];
	bool found = false;
	FILE *f;

	if (!list_path)
		return false;
	f = fopen(list_path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, hash, 40);
	fclose(f);
	return found;
}

static int load_log(struct bpfstash *stash, const char *path, const char *split)
{
	unsigned long long t0, t1;
	char hash[64], line[512];
	unsigned int i, id;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct prog *p;
		int err;

		if (sscanf(line, "prog %u id %u hash %63s t0 %llu t1 %llu", &i, &id, hash,
			   &t0, &t1) != 5 || !strcmp(hash, "-"))
			continue;
		p = realloc(progs, (nr_progs + 1) * sizeof(*progs));
		if (!p)
			return -1;
		progs = p;
		p = &progs[nr_progs];
		p->t0 = t0;
		p->t1 = t1;
		p->split = listed(hash, split);
		err = bpfstash_entry_load(stash, hash, 0, &p->entry);
		if (err) {
			fprintf(stderr, "perf_truth: entry %s: %s\n", hash, strerror(-err));
			return -1;
		}
		nr_progs++;
	}
	fclose(f);
	return nr_progs ? 0 : -1;
}

/* The program running at @t whose code holds @ip. */
static struct prog *find_prog(unsigned long long t, uint64_t ip,
			      struct bpfstash_location *loc)
{
	size_t i;

	for (i = 0; i < nr_progs; i++) {
		if (t < progs[i].t0 || t > progs[i].t1)
			continue;
		if (!bpfstash_entry_resolve(progs[i].entry, ip, loc))
			return &progs[i];
	}
	return NULL;
}

/* "<sec>.<nsec>: <ip> <sym>", with the time in ns. */
static bool parse_sample(const char *line, unsigned long long *t, uint64_t *ip, char *sym)
{
	unsigned long long sec, nsec;

	*sym = '\0';
	if (sscanf(line, " %llu.%llu: %" SCNx64 " %1023s", &sec, &nsec, ip, sym) < 3)
		return false;
	*t = sec * 1000000000ULL + nsec;
	return true;
}

/* "<basename>:<line>" of the line table record in effect at the address. */
static void expected_srcline(const struct bpfstash_location *loc, char *buf, size_t size)
{
	char *file = strdup(loc->file ? loc->file : "?");

	snprintf(buf, size, "%s:%u", file ? basename(file) : "?", loc->line);
	free(file);
}

static void print_count(const char *what, const struct count *c)
{
	printf("%s %lu function %lu %.2f%% function+line %lu %.2f%%\n", what, c->n,
	       c->func_ok, c->n ? 100.0 * c->func_ok / c->n : 0.0,
	       c->line_ok, c->n ? 100.0 * c->line_ok / c->n : 0.0);
}

int main(int argc, char **argv)
{
	unsigned long misses = 0, max_misses = 10;
	struct count all = {}, apart = {}, *c;
	const char *root = NULL, *split = NULL;
	char cur[4096], next[4096];
	struct bpfstash *stash;
	bool have_next;
	FILE *script;
	int opt, err;

	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "misses", required_argument, NULL, 'm' },
		{ "split", required_argument, NULL, 's' },
		{}
	};
	while ((opt = getopt_long(argc, argv, "r:m:s:", opts, NULL)) != -1) {
		if (opt == 'r')
			root = optarg;
		else if (opt == 'm')
			max_misses = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			split = optarg;
		else
			return 64;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: perf_truth [--root STASH] [--misses N] [--split HASHES] CHURN_LOG SCRIPT\n");
		return 64;
	}
	err = bpfstash_open(root, &stash);
	if (err) {
		fprintf(stderr, "perf_truth: %s: %s\n", root ?: BPFSTASH_DEFAULT_ROOT, strerror(-err));
		return 1;
	}
	if (load_log(stash, argv[optind], split))
		return 1;
	script = fopen(argv[optind + 1], "r");
	if (!script) {
		perror(argv[optind + 1]);
		return 1;
	}

	/*
	 * perf script -F time,ip,sym,srcline prints a sample as
	 * "<sec>.<ns>:  <ip> <sym>" and, when it knows one, its srcline on
	 * the next line, indented.
	 */
	have_next = fgets(next, sizeof(next), script) != NULL;
	while (have_next) {
		unsigned long long t, nt;
		char sym[1024], nsym[1024], srcline[1024] = "", want[1100];
		struct bpfstash_location loc;
		uint64_t ip, nip;
		struct prog *p;
		bool fok, lok;

		memcpy(cur, next, sizeof(cur));
		have_next = fgets(next, sizeof(next), script) != NULL;
		if (!parse_sample(cur, &t, &ip, sym))
			continue;
		if (have_next && !parse_sample(next, &nt, &nip, nsym) &&
		    isspace((unsigned char)next[0]))
			sscanf(next, " %1023s", srcline);

		p = find_prog(t, ip, &loc);
		if (!p)
			continue;
		c = p->split ? &apart : &all;
		c->n++;
		expected_srcline(&loc, want, sizeof(want));
		fok = !strcmp(sym, loc.func_name);
		lok = fok && loc.has_line && !strcmp(srcline, want);
		c->func_ok += fok;
		c->line_ok += lok;
		if (!lok && !p->split && misses++ < max_misses)
			fprintf(stderr, "  miss: %llu %#" PRIx64 ": perf says %s %s, the line table %s %s\n",
				t, ip, sym, *srcline ? srcline : "(no srcline)",
				loc.func_name, loc.has_line ? want : "(no line)");
	}
	fclose(script);
	print_count("samples", &all);
	if (split)
		print_count("split", &apart);
	return 0;
}
