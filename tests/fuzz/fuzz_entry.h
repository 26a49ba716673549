/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fuzzer's input format, shared by the target and the seed builder:
 *
 *   u8 mode                      FUZZ_FIXUP, FUZZ_META_ONLY
 *   then for each file, in fuzz_files order:
 *     u32 length (little endian), then that many bytes (fewer if the
 *     input ends first); a file whose length field is cut off is missing.
 *
 * FUZZ_FIXUP rewrites the sizes and counts in meta from the files' sizes,
 * makes the function records tile the jited file and the jited line
 * records point inside their functions, so that mutations of the files
 * reach resolution and export behind the consistency checks, and then
 * names the entry by its recomputed hash, so that verification can
 * succeed too.
 */
#ifndef BPFSTASH_FUZZ_ENTRY_H
#define BPFSTASH_FUZZ_ENTRY_H

#define FUZZ_FIXUP	(1u << 0)
#define FUZZ_META_ONLY	(1u << 1)

/*
 * The optional files come last, an image's calls then the pokes: an input
 * that ends before one has none.
 */
enum { FUZZ_META, FUZZ_FUNCS, FUZZ_BLOB0, FUZZ_CALLS = FUZZ_BLOB0 + 5, FUZZ_POKES,
       FUZZ_NR_FILES };

static const char *const fuzz_files[FUZZ_NR_FILES] = {
	"meta", "funcs", "jited", "line_info", "jited_line_info", "func_info", "btf", "calls",
	"pokes",
};

#endif
