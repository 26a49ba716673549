// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfdata_mangle: damage the PERF_RECORD_MMAP3 records of a perf.data
 * file, for the robustness tests of perf report.
 *
 *   perfdata_mangle corrupt|unhash IN OUT [EVERY]
 *
 * Of the programs named by MMAP3 records (distinct hashes, in the order
 * they first appear), every EVERY-th (default 10) is affected, all its
 * records alike:
 *
 *   corrupt  malformed records, in turn: hash_size 200; the name not
 *            NUL-terminated; header.size cut to the fixed part (the rest
 *            becomes a PERF_RECORD_HEADER_EVENT_TYPE, which perf skips,
 *            so the stream stays readable); flagged stashed with no hash;
 *   unhash   well-formed records whose hash is flipped, so that no store
 *            has an entry by that name.
 *
 * Prints the affected programs' original hashes, one per line, and the
 * number of records changed on stderr.  Same-endian files only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "perfring.h"

#define MAX_HASHES	65536
#define FIXED		64	/* PERF_RECORD_MMAP3 before name[] */
#define HEADER_EVENT_TYPE 65	/* PERF_RECORD_HEADER_EVENT_TYPE: skipped */

struct file_section {
	__u64 offset, size;
};

struct file_header {
	__u64 magic, size, attr_size;
	struct file_section attrs, data, event_types;
	__u64 features[4];
};

static unsigned char (*hashes)[20];
static size_t nr_hashes;

/* The index of @hash among the programs seen so far, adding it. */
static size_t hash_index(const unsigned char *hash)
{
	size_t i;

	for (i = 0; i < nr_hashes; i++)
		if (!memcmp(hashes[i], hash, 20))
			return i;
	if (nr_hashes < MAX_HASHES)
		memcpy(hashes[nr_hashes++], hash, 20);
	return i;
}

int main(int argc, char **argv)
{
	unsigned long every = argc > 4 ? strtoul(argv[4], NULL, 0) : 10, changed = 0;
	struct file_header fh;
	unsigned char *buf;
	int corrupt, *printed;
	size_t size, off, end;
	FILE *in, *out;

	if (argc < 4 || (strcmp(argv[1], "corrupt") && strcmp(argv[1], "unhash")) || !every) {
		fprintf(stderr, "usage: perfdata_mangle corrupt|unhash IN OUT [EVERY]\n");
		return 64;
	}
	corrupt = !strcmp(argv[1], "corrupt");
	in = fopen(argv[2], "rb");
	if (!in || fseek(in, 0, SEEK_END) || (long)(size = ftell(in)) < 0 ||
	    fseek(in, 0, SEEK_SET)) {
		perror(argv[2]);
		return 1;
	}
	buf = malloc(size);
	hashes = calloc(MAX_HASHES, 20);
	printed = calloc(MAX_HASHES, sizeof(*printed));
	if (!buf || !hashes || !printed || fread(buf, 1, size, in) != size) {
		perror(argv[2]);
		return 1;
	}
	fclose(in);
	memcpy(&fh, buf, sizeof(fh));
	if (size < sizeof(fh) || memcmp(&fh.magic, "PERFILE2", 8) ||
	    fh.data.offset + fh.data.size > size) {
		fprintf(stderr, "perfdata_mangle: %s is not a perf.data file of this byte order\n",
			argv[2]);
		return 1;
	}

	end = fh.data.offset + fh.data.size;
	for (off = fh.data.offset; off + sizeof(struct perf_event_header) <= end; ) {
		struct perf_event_header *h = (void *)(buf + off);
		struct mmap3_record *m = (void *)h;
		size_t i, rec = h->size;

		if (rec < sizeof(*h) || off + rec > end) {
			fprintf(stderr, "perfdata_mangle: bad record at %#zx\n", off);
			return 1;
		}
		if (h->type == PERF_RECORD_MMAP3 && rec >= FIXED + 8 &&
		    (m->flags & 1) && m->hash_size == 20) {
			size_t idx = hash_index(m->hash);

			if (idx % every == every - 1) {
				size_t k = (idx / every) % 4, name_pad;

				if (!printed[idx]++) {
					for (i = 0; i < 20; i++)
						printf("%02x", m->hash[i]);
					printf("\n");
				}
				changed++;
				if (!corrupt) {
					for (i = 0; i < 20; i++)
						m->hash[i] ^= 0xff;
				} else if (k == 0) {
					m->hash_size = 200;
				} else if (k == 1) {
					name_pad = (strnlen(m->name, rec - FIXED) + 1 + 7) & ~7UL;
					memset(m->name, 'A', name_pad);
				} else if (k == 2) {
					struct perf_event_header *rest = (void *)(buf + off + FIXED);

					h->size = FIXED;
					rest->type = HEADER_EVENT_TYPE;
					rest->misc = 0;
					rest->size = rec - FIXED;
				} else {
					m->hash_size = 0;
				}
			}
		}
		off += rec;
	}

	out = fopen(argv[3], "wb");
	if (!out || fwrite(buf, 1, size, out) != size || fclose(out)) {
		perror(argv[3]);
		return 1;
	}
	for (off = 0, end = 0; off < nr_hashes; off++)
		end += printed[off] != 0;
	fprintf(stderr, "perfdata_mangle: %s: %lu records of %zu programs changed\n",
		argv[1], changed, end);
	return 0;
}
