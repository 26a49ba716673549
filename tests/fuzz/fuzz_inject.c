// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for bpfstash inject (tools/bpfstash/inject.c), built
 * with libbpfstash's sources, ASan and UBSan (tests/fuzz/Makefile): the
 * input is a perf.data, given to inject_run() on a memfd twice,
 *
 *   as it is: perf's file layout, or a pipe's stream if it starts so;
 *   with its first 16 bytes made a pipe's header (magic, 16): the record
 *   parser at once, whatever the input's first bytes were, and with few
 *   records held while a KSYMBOL waits (max_pending 1 to 8), so that the
 *   queue's overflow is reached too.
 *
 * The functions are looked up in tests/fixtures/stash, opened once, so
 * that the seeds (mkseed_inject.c) find and inject one; no build-id
 * directory (nothing is written), quiet.
 *
 * What must hold: nothing reads outside the input, and nothing leaks,
 * whatever it holds; a failure says why; and a success writes what its
 * statistics say, records that tile the output (the data section of a
 * file, which lies inside it with its feature sections after it, or the
 * stream) one for each read plus one MMAP2 per injection, with at least
 * as many MMAP2s of a build-id and a "[bpfstash_...]" name inside them.
 *
 * About 100 inputs a second: each inject_run() allocates its 1 MiB
 * buffers, which ASan maps and unmaps every time.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/libbpf.h>

#include "libbpfstash.h"
#include "inject.h"

#ifndef FUZZ_STASH
#define FUZZ_STASH "tests/fixtures/stash"
#endif

#define PERF_MAGIC2		0x32454c4946524550ULL
#define REC_HEADER_TRACING_DATA	66
#define REC_AUXTRACE		71

static struct bpfstash *stash;
static int in_fd = -1, out_fd = -1;
static bool verbose;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_inject: %s\n", what);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* FUZZ_INJECT_STASH: another stash, for a reproducer made elsewhere. */
	const char *root = getenv("FUZZ_INJECT_STASH") ?: FUZZ_STASH;
	int err;

	/* FUZZ_INJECT_VERBOSE=1: what each run gave, to see a seed inject. */
	verbose = getenv("FUZZ_INJECT_VERBOSE");
	libbpf_set_print(quiet);
	err = bpfstash_open(root, &stash);
	if (err) {
		fprintf(stderr, "fuzz_inject: %s: %s\n", root, strerror(-err));
		abort();
	}
	in_fd = memfd_create("fuzz-inject-in", MFD_CLOEXEC);
	out_fd = memfd_create("fuzz-inject-out", MFD_CLOEXEC);
	must(in_fd >= 0 && out_fd >= 0, "memfd_create");
	return 0;
}

/*
 * The records of @b[@off, @end), with their payloads (AUXTRACE's data, a
 * stream's TRACING_DATA), as perf reads them: how many, or -1 if they do
 * not tile it; *@mmap2: the MMAP2s with a build-id and a bpfstash name.
 */
static int64_t walk(const uint8_t *b, uint64_t off, uint64_t end, bool pipe, uint64_t *mmap2)
{
	int64_t n = 0;

	while (off < end) {
		struct perf_event_header h;
		uint64_t payload = 0;

		if (end - off < sizeof(h))
			return -1;
		memcpy(&h, b + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > end - off)
			return -1;
		if (h.type == REC_AUXTRACE && h.size >= 16)
			memcpy(&payload, b + off + 8, 8);
		if (pipe && h.type == REC_HEADER_TRACING_DATA && h.size >= 12) {
			uint32_t k;

			memcpy(&k, b + off + 8, 4);
			payload = ((uint64_t)k + 7) & ~7ULL;
		}
		/*
		 * header, pid, tid, addr, len, pgoff, build-id, prot, flags: 72
		 * bytes, then the name.  The input's own MMAP2s pass as they are,
		 * so only the well-formed ones are counted.
		 */
		if (h.type == PERF_RECORD_MMAP2 && (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		    h.size > 82 && b[off + 40] == BPFSTASH_HASH_SIZE &&
		    !memcmp(b + off + 72, "[bpfstash_", 10) && memchr(b + off + 72, 0, h.size - 72))
			(*mmap2)++;
		off += h.size;
		if (payload > end - off)
			return -1;
		off += payload;
		n++;
	}
	return n;
}

static void check_output(const struct inject *inj, bool pipe)
{
	const struct inject_stats *st = &inj->stats;
	uint64_t mmap2 = 0, data_end, nr_feat = 0, i;
	struct stat sb;
	uint8_t *out;
	int64_t n;

	must(!fstat(out_fd, &sb), "fstat the output");
	must((uint64_t)sb.st_size == st->bytes_out, "bytes_out is not the output's size");
	must(st->injected <= st->ksymbols && st->functions <= st->injected,
	     "more injected than registered, or more functions than injections");
	if (!sb.st_size)
		return;
	out = mmap(NULL, sb.st_size, PROT_READ, MAP_SHARED, out_fd, 0);
	must(out != MAP_FAILED, "mmap the output");
	if (pipe) {
		must(sb.st_size >= 16, "a stream without its header");
		n = walk(out, 16, sb.st_size, true, &mmap2);
	} else {
		uint64_t hdr[13];	/* magic, size, attr_size, 3 sections, 4 feature words */

		must(sb.st_size >= (off_t)sizeof(hdr), "a file without its header");
		memcpy(hdr, out, sizeof(hdr));
		must(hdr[0] == PERF_MAGIC2, "the output's magic");
		must(hdr[5] <= (uint64_t)sb.st_size && hdr[6] <= sb.st_size - hdr[5],
		     "the output's data section is not inside it");
		data_end = hdr[5] + hdr[6];
		n = walk(out, hdr[5], data_end, false, &mmap2);
		for (i = 0; i < 4; i++)
			nr_feat += __builtin_popcountll(hdr[9 + i]);
		must(nr_feat * 16 <= sb.st_size - data_end, "the output's feature index");
		/* An empty section's offset is passed on as it was: only the others'. */
		for (i = 0; i < nr_feat; i++) {
			uint64_t sec[2];

			memcpy(sec, out + data_end + i * 16, 16);
			must(!sec[1] || (sec[0] >= data_end + nr_feat * 16 &&
					 sec[0] <= (uint64_t)sb.st_size && sec[1] <= sb.st_size - sec[0]),
			     "a feature section outside the output, or over its index");
		}
	}
	must(n >= 0, "the output's records do not tile it");
	must((uint64_t)n == st->records + st->injected,
	     "the output's records are not the input's plus the injected ones");
	must(mmap2 >= st->injected, "fewer bpfstash MMAP2 records than injections");
	munmap(out, sb.st_size);
}

static void run(const uint8_t *data, size_t size, bool pipe_header, size_t max_pending)
{
	struct inject inj = { .stash = { stash }, .quiet = true, .max_pending = max_pending };
	size_t done = 0;
	ssize_t k;
	int ret;

	must(!ftruncate(in_fd, 0) && !ftruncate(out_fd, 0), "ftruncate");
	while (done < size) {
		k = pwrite(in_fd, data + done, size - done, done);
		must(k > 0, "pwrite the input");
		done += k;
	}
	must(lseek(in_fd, 0, SEEK_SET) == 0 && lseek(out_fd, 0, SEEK_SET) == 0, "lseek");
	ret = inject_run(&inj, in_fd, out_fd);
	if (verbose)
		fprintf(stderr, "fuzz_inject: %s: %s, %" PRIu64 " records, %" PRIu64
			" injected, %" PRIu64 " -> %" PRIu64 " bytes\n",
			pipe_header ? "as a stream" : "as it is", ret ? inj.err : "ok",
			inj.stats.records, inj.stats.injected, inj.stats.bytes_in,
			inj.stats.bytes_out);
	if (ret) {
		must(inj.err[0] != '\0', "a failure without a reason");
		return;
	}
	must(inj.err[0] == '\0', "a success with an error");
	if (inj.stats.pipe)
		must(inj.stats.bytes_in == size, "a stream not read to its end");
	must(!pipe_header || inj.stats.pipe, "a pipe's header not taken for one");
	check_output(&inj, inj.stats.pipe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t pipe_header[2] = { PERF_MAGIC2, 16 };
	size_t len = size < 16 ? 16 : size;
	uint8_t *copy;

	run(data, size, false, 0);

	copy = calloc(1, len);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memcpy(copy, pipe_header, 16);
	run(copy, len, true, 1 + size % 8);
	free(copy);
	return 0;
}
