// SPDX-License-Identifier: GPL-2.0-only
/*
 * Seed corpus for fuzz_inject: the smallest perf.data in which bpfstash
 * inject injects a function, in perf's file layout and as a pipe's stream,
 * and truncations of both.
 *
 *   mkseed_inject OUTDIR STASH [HASH]
 *
 * The function is the first of entry HASH of the stash at STASH (default:
 * the program entry with the fewest functions, tests/fixtures' "tiny"),
 * taken from the entry itself so that the seeds follow the fixtures when
 * they are captured again.  The records are what perf record writes for a
 * program loaded while it runs, with sample_type TID|TIME|IDENTIFIER and
 * sample_id_all:
 *
 *   KSYMBOL (register) of the function, BPF_EVENT PROG_LOAD of its program
 *   (the entry's prog_id and tag), a SAMPLE, the KSYMBOL's unregister;
 *
 * and the file layout's empty HEADER_BUILD_ID feature (inject grows it).
 * Each valid seed injects one function (bpfstash inject --root STASH).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "perfdata.h"

#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER)

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int write_seed(const char *dir, const char *name, const struct bpfstash_entry *e,
		      bool pipe, uint8_t **bytes, size_t *size)
{
	const struct bpfstash_meta *m = bpfstash_entry_meta(e);
	const struct bpfstash_func *f = bpfstash_entry_func(e, 0);
	const char *sym = bpfstash_entry_func_name(e, 0);
	struct pd_sid sid = { .pid = 176, .tid = 176, .time = 1000000000, .cpu = 0 };
	char path[4096];
	struct pd pd;
	FILE *out;
	long n;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w+");
	if (!out)
		return -errno;
	err = pd_begin(&pd, out, pipe, SAMPLE_TYPE, 1);
	err = err || pd_ksymbol(&pd, f->addr, f->len, sym, false, &sid);
	sid.time += 1000;
	err = err || pd_bpf_event(&pd, PERF_BPF_EVENT_PROG_LOAD, m->prog_id, m->content.tag, &sid);
	sid.time += 1000000;
	sid.pid = sid.tid = 200;
	err = err || pd_sample(&pd, f->addr + f->len / 2, &sid, 1, NULL, 0);
	sid.time += 1000000;
	sid.pid = sid.tid = 176;
	err = err || pd_ksymbol(&pd, f->addr, f->len, sym, true, &sid);
	err = err || pd_end(&pd);
	/* Read back whole, for the truncated variants. */
	if (!err && (n = ftell(out)) > 0 && !fseek(out, 0, SEEK_SET)) {
		*bytes = malloc(n);
		err = !*bytes || fread(*bytes, 1, n, out) != (size_t)n;
		*size = n;
	}
	if (fclose(out) || err)
		return -EIO;
	return 0;
}

static int write_bytes(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (!out || fwrite(b, 1, n, out) != n || fclose(out))
		return -EIO;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpfstash_entry *e = NULL;
	struct bpfstash *stash;
	uint8_t *file = NULL, *stream = NULL;
	size_t file_len = 0, stream_len = 0, i, n;
	char **names;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUTDIR STASH [HASH]\n", argv[0]);
		return 64;
	}
	libbpf_set_print(quiet);
	err = bpfstash_open(argv[2], &stash);
	if (err) {
		fprintf(stderr, "mkseed_inject: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	if (argc > 3) {
		err = bpfstash_entry_load(stash, argv[3], 0, &e);
	} else {
		/* The program with the fewest functions: the smallest seed. */
		err = bpfstash_list(stash, &names, &n);
		for (i = 0; !err && i < n; i++) {
			struct bpfstash_entry *c;

			if (bpfstash_entry_load(stash, names[i], 0, &c))
				continue;
			if (!bpfstash_entry_meta(c)->prog_id ||
			    bpfstash_entry_meta(c)->content.image_kind ||
			    (e && bpfstash_entry_nr_funcs(c) >= bpfstash_entry_nr_funcs(e))) {
				bpfstash_entry_free(c);
				continue;
			}
			bpfstash_entry_free(e);
			e = c;
		}
		if (!err)
			bpfstash_names_free(names);
		if (!err && !e)
			err = -ENOENT;
	}
	if (err) {
		fprintf(stderr, "mkseed_inject: no program entry in %s: %s\n", argv[2],
			strerror(-err));
		return 1;
	}

	err = write_seed(argv[1], "file", e, false, &file, &file_len);
	err = err ?: write_seed(argv[1], "pipe", e, true, &stream, &stream_len);
	/*
	 * Truncations: inside the header, the attribute, a record of the data
	 * section, the feature index; inside the stream's ATTR record, after it,
	 * inside the KSYMBOL (waiting for its BPF_EVENT), one byte short.
	 */
	err = err ?: write_bytes(argv[1], "file-cut-header", file, 40);
	err = err ?: write_bytes(argv[1], "file-cut-attr", file, 150);
	err = err ?: write_bytes(argv[1], "file-cut-data", file, file_len - 60);
	err = err ?: write_bytes(argv[1], "file-cut-index", file, file_len - 8);
	err = err ?: write_bytes(argv[1], "pipe-cut-attr", stream, 60);
	err = err ?: write_bytes(argv[1], "pipe-cut-after-attr", stream, 16 + 8 + PD_ATTR_SIZE + 8);
	err = err ?: write_bytes(argv[1], "pipe-cut-ksymbol", stream,
				 16 + 8 + PD_ATTR_SIZE + 8 + 40);
	err = err ?: write_bytes(argv[1], "pipe-cut-last", stream, stream_len - 1);
	if (err)
		fprintf(stderr, "mkseed_inject: %s: %s\n", argv[1], strerror(-err));
	else
		printf("mkseed_inject: seeds of %s (%s, program %u)\n", bpfstash_entry_name(e),
		       bpfstash_entry_func_name(e, 0), bpfstash_entry_meta(e)->prog_id);
	free(file);
	free(stream);
	bpfstash_entry_free(e);
	bpfstash_close(stash);
	return err ? 1 : 0;
}
