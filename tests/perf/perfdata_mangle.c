// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfdata_mangle: damage the PERF_RECORD_MMAP3 records of a perf.data
 * file, for the robustness tests of perf report.
 *
 *   perfdata_mangle corrupt|unhash IN OUT [EVERY]
 *   perfdata_mangle strip IN OUT
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
 *            has an entry by that name;
 *   strip    no record changed: the header's feature bit 255 cleared, so
 *            that the file is the one a perf without bpfstash would have
 *            written of the same stream (the feature's section is the last
 *            of the table: the others are found where they were).
 *
 * The records are those of the data section (a pipe's recording) and those
 * perf record keeps in the header (HEADER_BPFSTASH_MMAP3, feature bit 255),
 * whose framing (each record's size before it) stays as it was: there the
 * cut record is one whose header.size is not its size.
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
#define FEAT_MMAP3	255	/* HEADER_BPFSTASH_MMAP3 */

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

static unsigned long every = 10, changed;
static int corrupt, *printed;

/* Damages the record at @h, of @rec bytes, if it is of a program chosen. */
static void mangle(struct perf_event_header *h, size_t rec)
{
	struct mmap3_record *m = (void *)h;
	size_t idx, i, k, name_pad;

	if (h->type != PERF_RECORD_MMAP3 || rec < FIXED + 8 || !(m->flags & 1) ||
	    m->hash_size != 20)
		return;
	idx = hash_index(m->hash);
	if (idx % every != every - 1)
		return;
	k = (idx / every) % 4;
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
		struct perf_event_header *rest = (void *)((char *)h + FIXED);

		h->size = FIXED;
		rest->type = HEADER_EVENT_TYPE;
		rest->misc = 0;
		rest->size = rec - FIXED;
	} else {
		m->hash_size = 0;
	}
}

/*
 * The header's records: the section of feature bit 255, the last of the
 * table after the data section.  Returns -1 if its framing is wrong.
 */
static int mangle_header(unsigned char *buf, size_t size, const struct file_header *fh)
{
	struct file_section sec;
	size_t nr_feats = 0, off, end, i;
	__u32 nr, n;

	if (!(fh->features[FEAT_MMAP3 / 64] & (1ULL << (FEAT_MMAP3 % 64))))
		return 0;
	for (i = 0; i < 4; i++)
		nr_feats += __builtin_popcountll(fh->features[i]);
	off = fh->data.offset + fh->data.size + (nr_feats - 1) * sizeof(sec);
	if (off + sizeof(sec) > size)
		return -1;
	memcpy(&sec, buf + off, sizeof(sec));
	if (sec.offset > size || sec.size > size - sec.offset || sec.size < 8)
		return -1;
	off = sec.offset;
	end = sec.offset + sec.size;
	memcpy(&nr, buf + off + 4, 4);
	off += 8;
	for (n = 0; n < nr; n++) {
		__u32 rec;

		if (end - off < 16)
			return -1;
		memcpy(&rec, buf + off + 12, 4);
		off += 16;
		if (rec < sizeof(struct perf_event_header) || rec > end - off)
			return -1;
		mangle((void *)(buf + off), rec);
		off += rec;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct file_header fh;
	unsigned char *buf;
	size_t size, off, end;
	FILE *in, *out;

	if (argc < 4 || (strcmp(argv[1], "corrupt") && strcmp(argv[1], "unhash") &&
			 strcmp(argv[1], "strip")) ||
	    (argc > 4 && (!strcmp(argv[1], "strip") || !strtoul(argv[4], NULL, 0)))) {
		fprintf(stderr, "usage: perfdata_mangle corrupt|unhash IN OUT [EVERY]\n"
				"       perfdata_mangle strip IN OUT\n");
		return 64;
	}
	corrupt = !strcmp(argv[1], "corrupt");
	if (argc > 4)
		every = strtoul(argv[4], NULL, 0);
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

	if (!strcmp(argv[1], "strip")) {
		__u64 bit = 1ULL << (FEAT_MMAP3 % 64);

		if (!(fh.features[FEAT_MMAP3 / 64] & bit)) {
			fprintf(stderr, "perfdata_mangle: %s has no feature %d to strip\n",
				argv[2], FEAT_MMAP3);
			return 1;
		}
		fh.features[FEAT_MMAP3 / 64] &= ~bit;
		memcpy(buf, &fh, sizeof(fh));
		goto write;
	}

	/* The header's records first: the order perf replays them in. */
	if (mangle_header(buf, size, &fh)) {
		fprintf(stderr, "perfdata_mangle: %s: the header's MMAP3 section is malformed\n",
			argv[2]);
		return 1;
	}
	end = fh.data.offset + fh.data.size;
	for (off = fh.data.offset; off + sizeof(struct perf_event_header) <= end; ) {
		struct perf_event_header *h = (void *)(buf + off);
		size_t rec = h->size;

		if (rec < sizeof(*h) || off + rec > end) {
			fprintf(stderr, "perfdata_mangle: bad record at %#zx\n", off);
			return 1;
		}
		mangle(h, rec);
		off += rec;
	}

write:
	out = fopen(argv[3], "wb");
	if (!out || fwrite(buf, 1, size, out) != size || fclose(out)) {
		perror(argv[3]);
		return 1;
	}
	if (!strcmp(argv[1], "strip")) {
		fprintf(stderr, "perfdata_mangle: strip: feature %d cleared\n", FEAT_MMAP3);
		return 0;
	}
	for (off = 0, end = 0; off < nr_hashes; off++)
		end += printed[off] != 0;
	fprintf(stderr, "perfdata_mangle: %s: %lu records of %zu programs changed\n",
		argv[1], changed, end);
	return 0;
}
