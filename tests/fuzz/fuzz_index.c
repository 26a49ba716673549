// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the kernel's index file as libbpfstash reads it
 * (bst_index_file_check(), then every record the way the per-run index
 * and the agent's recovery walk them), built with the library's sources,
 * ASan and UBSan (tests/fuzz/Makefile).  Seeded with tests/vectors/index.
 *
 * What must hold: nothing reads outside the input, whatever it holds; and
 * a file the check accepts has its sections inside it, each entry's ranges
 * in order and its own, and every name NUL-terminated inside the names.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libbpfstash.h"
#include "internal.h"

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_index: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bst_index_file f;
	uint8_t *copy = malloc(size ? size : 1);	/* exactly its size, for ASan */
	uint32_t i, j;

	memcpy(copy, data, size);
	if (bst_index_file_check(copy, size, &f)) {
		free(copy);
		return 0;
	}
	must(f.entries >= copy && f.names + f.names_size == (const char *)copy + size,
	     "sections inside the file");
	for (i = 0; i < f.nr_entries; i++) {
		const struct bpfstash_index_entry *e = bst_index_file_entry(&f, i);
		uint32_t first = le32toh(e->first_range), nr = le32toh(e->nr_ranges);
		char hex[BPFSTASH_HEX_LEN + 1];

		bst_hex(hex, e->hash, sizeof(e->hash));
		must(nr >= 1 && first + nr <= f.nr_ranges, "an entry's ranges in the file");
		for (j = first; j < first + nr; j++) {
			const struct bpfstash_index_range *r = bst_index_file_range(&f, j);
			const char *name = f.names + le32toh(r->name_off);

			must(le32toh(r->entry) == i && le32toh(r->func) == j - first,
			     "a range is its entry's");
			must(strlen(name) < f.names_size - le32toh(r->name_off), "a name ends inside");
		}
	}
	free(copy);
	return 0;
}
