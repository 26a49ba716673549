// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkperfdata: a synthetic perf.data for bench/inject_bench.sh, shaped like
 * perf record -a -g on a machine where BPF programs come and go, with the
 * programs of real stash entries, so that bpfstash inject finds them.
 *
 *   mkperfdata -o OUT -s MB [-l LOADS_PER_MB] [-p] [-r SEED] STASH...
 *
 * OUT gets about MB megabytes of records (perf's file layout, or with -p
 * a pipe's stream): mostly PERF_RECORD_SAMPLEs of 4 CPUs with a kernel
 * callchain of 3 to 24 frames (IDENTIFIER, IP, TID, TIME, CPU, PERIOD,
 * CALLCHAIN: 88 to 256 bytes, 172 on average), and LOADS_PER_MB (default
 * 20) times per megabyte a program load, as the kernel reports one: a
 * KSYMBOL register per function, the PERF_BPF_EVENT_PROG_LOAD with the
 * program's id and tag, then samples of which a quarter land in its
 * functions, then its KSYMBOL unregisters and PERF_BPF_EVENT_PROG_UNLOAD.
 * The programs are the entries of the STASH directories, each in turn
 * (their functions' addresses, lengths and names, the entry's prog_id and
 * tag), one loaded at a time, so that their addresses never overlap.
 *
 * A file has an empty HEADER_BUILD_ID feature, which perf report reads
 * (and bpfstash inject fills).  Prints "records functions loads
 * distinct_functions bpf_samples bytes" on stdout (functions: KSYMBOL
 * registers; bpf_samples: samples in a program's function).  The same
 * SEED gives the same file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "perfdata.h"

#define SAMPLE_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			 PERF_SAMPLE_CALLCHAIN)
#define NR_CPUS		4
#define KERNEL_TEXT	0xffffffff81000000ULL
#define KERNEL_SIZE	(16 << 20)
#define LOADER_PID	4242

struct prog {
	uint32_t id;
	uint8_t tag[8];
	uint32_t nr;
	uint64_t *addr;
	uint32_t *len;
	char **name;
};

static uint64_t rng = 88172645463325252ULL;
static uint64_t bpf_samples;

/* xorshift64: the same file for the same seed, on any libc. */
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int load_stash(const char *root, struct prog **progs, size_t *nr)
{
	struct bpfstash *stash;
	char **names;
	size_t n, i;
	uint32_t f;
	int err;

	err = bpfstash_open(root, &stash);
	if (err)
		return err;
	err = bpfstash_list(stash, &names, &n);
	for (i = 0; !err && i < n; i++) {
		struct bpfstash_entry *e;
		const struct bpfstash_meta *m;
		struct prog *p;

		if (bpfstash_entry_load(stash, names[i], 0, &e))
			continue;
		m = bpfstash_entry_meta(e);
		/* Programs only: an image has no BPF_EVENT, and no id. */
		if (!m->prog_id || m->content.image_kind) {
			bpfstash_entry_free(e);
			continue;
		}
		*progs = realloc(*progs, (*nr + 1) * sizeof(**progs));
		if (!*progs)
			return -ENOMEM;
		p = &(*progs)[(*nr)++];
		p->id = m->prog_id;
		memcpy(p->tag, m->content.tag, 8);
		p->nr = bpfstash_entry_nr_funcs(e);
		p->addr = calloc(p->nr, sizeof(*p->addr));
		p->len = calloc(p->nr, sizeof(*p->len));
		p->name = calloc(p->nr, sizeof(*p->name));
		if (!p->addr || !p->len || !p->name)
			return -ENOMEM;
		for (f = 0; f < p->nr; f++) {
			p->addr[f] = bpfstash_entry_func(e, f)->addr;
			p->len[f] = bpfstash_entry_func(e, f)->len;
			p->name[f] = strdup(bpfstash_entry_func_name(e, f));
		}
		bpfstash_entry_free(e);
	}
	if (!err)
		bpfstash_names_free(names);
	bpfstash_close(stash);
	return err;
}

/* One sample: in @p's functions a quarter of the time, else in the kernel. */
static int sample(struct pd *pd, const struct prog *p, uint64_t *time)
{
	struct pd_sid sid;
	uint64_t chain[32], ip;
	uint32_t depth = 3 + rnd() % 22, i;

	sid.cpu = rnd() % NR_CPUS;
	sid.pid = sid.tid = 1000 + rnd() % 64;
	*time += 250000 / NR_CPUS;	/* 4 kHz on each CPU */
	sid.time = *time;
	if (p && rnd() % 4 == 0) {
		uint32_t f = rnd() % p->nr;

		ip = p->addr[f] + rnd() % p->len[f];
		bpf_samples++;
	} else {
		ip = KERNEL_TEXT + rnd() % KERNEL_SIZE;
	}
	chain[0] = PERF_CONTEXT_KERNEL;
	chain[1] = ip;
	for (i = 2; i < depth; i++)
		chain[i] = KERNEL_TEXT + rnd() % KERNEL_SIZE;
	return pd_sample(pd, ip, &sid, 4000, chain, depth);
}

/* A program's load or unload as the kernel reports it: KSYMBOLs, then the BPF_EVENT. */
static int bpf_load(struct pd *pd, const struct prog *p, bool unload, uint64_t *time)
{
	struct pd_sid sid = { .pid = LOADER_PID, .tid = LOADER_PID, .cpu = 0 };
	uint32_t f;
	int err = 0;

	*time += 1000;
	sid.time = *time;
	for (f = 0; f < p->nr && !err; f++)
		err = pd_ksymbol(pd, p->addr[f], p->len[f], p->name[f], unload, &sid);
	return err ?: pd_bpf_event(pd, unload ? PERF_BPF_EVENT_PROG_UNLOAD : PERF_BPF_EVENT_PROG_LOAD,
				   p->id, p->tag, &sid);
}

int main(int argc, char **argv)
{
	struct pd_sid sid = { .pid = LOADER_PID, .tid = LOADER_PID };
	const char *out_path = NULL;
	struct prog *progs = NULL;
	size_t nr_progs = 0, i, next = 0;
	uint64_t target = 0, loads_per_mb = 20, every, time = 1000000000000ULL;
	uint64_t functions = 0, loads = 0, distinct = 0;
	const struct prog *live = NULL;
	bool pipe = false, *seen;
	struct pd pd;
	FILE *out;
	int c, err;

	while ((c = getopt(argc, argv, "o:s:l:pr:")) != -1) {
		switch (c) {
		case 'o': out_path = optarg; break;
		case 's': target = strtoull(optarg, NULL, 0) << 20; break;
		case 'l': loads_per_mb = strtoull(optarg, NULL, 0); break;
		case 'p': pipe = true; break;
		case 'r': rng = strtoull(optarg, NULL, 0) | 1; break;
		default: goto usage;
		}
	}
	if (!out_path || !target || optind == argc) {
usage:
		fprintf(stderr, "usage: mkperfdata -o OUT -s MB [-l LOADS_PER_MB] [-p] [-r SEED] "
			"STASH...\n");
		return 64;
	}
	libbpf_set_print(quiet);
	for (; optind < argc; optind++) {
		err = load_stash(argv[optind], &progs, &nr_progs);
		if (err) {
			fprintf(stderr, "mkperfdata: %s: %s\n", argv[optind], strerror(-err));
			return 1;
		}
	}
	if (!nr_progs) {
		fprintf(stderr, "mkperfdata: no program entry in the stashes given\n");
		return 1;
	}
	seen = calloc(nr_progs, sizeof(*seen));
	out = fopen(out_path, "w+");
	if (!seen || !out) {
		fprintf(stderr, "mkperfdata: %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	/* Big writes: the generator should not be what a run waits for. */
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	err = pd_begin(&pd, out, pipe, SAMPLE_TYPE, 1);
	sid.time = time;
	err = err ?: pd_comm(&pd, "bpf_loader", &sid);
	/* Without loads (-l 0): samples only, the pass-through's own cost. */
	every = loads_per_mb ? (1 << 20) / loads_per_mb : target;
	while (!err && pd.data_size < target) {
		uint64_t until = pd.data_size + every;

		if (live)
			err = bpf_load(&pd, live, true, &time);
		live = loads_per_mb ? &progs[next] : NULL;
		if (live && !err) {
			err = bpf_load(&pd, live, false, &time);
			functions += live->nr;
			loads++;
			if (!seen[next]) {
				seen[next] = true;
				distinct += live->nr;
			}
			next = (next + 1) % nr_progs;
		}
		while (!err && pd.data_size < until && pd.data_size < target)
			err = sample(&pd, live, &time);
	}
	if (live && !err)
		err = bpf_load(&pd, live, true, &time);
	err = err ?: pd_end(&pd);
	if (fclose(out) || err) {
		fprintf(stderr, "mkperfdata: %s: write failed\n", out_path);
		return 1;
	}
	printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
	       pd.records, functions, loads, distinct, bpf_samples, pd.data_size);
	for (i = 0; i < nr_progs; i++) {
		for (c = 0; c < (int)progs[i].nr; c++)
			free(progs[i].name[c]);
		free(progs[i].name);
		free(progs[i].addr);
		free(progs[i].len);
	}
	free(progs);
	free(seen);
	return 0;
}
