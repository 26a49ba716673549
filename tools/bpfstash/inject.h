/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash inject: a perf.data for a perf without bpfstash.  Before each
 * PERF_RECORD_KSYMBOL that registers a BPF function the stash has, one
 * kernel PERF_RECORD_MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID is put:
 *
 *   name      "[bpfstash_<entry hash>_<function index>]": perf takes a
 *             kernel mmap named "[...]" for a kernel module's, one dso per
 *             name (any other name would be the kernel itself);
 *   build-id  bpfstash_entry_func_build_id(): one per function, as one ELF
 *             file per function (bpfstash_entry_export_func_elf()) is
 *             what perf's build-id cache holds under it.
 *
 * perf then finds the module's ELF in its build-id cache, where inject
 * writes it, and gives samples their function and source line, after the
 * program is gone and on another machine (perf archive).  The KSYMBOL
 * records stay (perf adds their symbol to the module's dso); so does their
 * unregister, which removes the module's map, so an address reused by the
 * next program gets its own.
 *
 * The input is untrusted: every size is checked before use, and a record
 * that does not fit is an error that names its offset.  Pure of any global
 * state but its arguments: tests/fuzz/fuzz_inject.c runs it on anything.
 */
#ifndef BPFSTASH_TOOL_INJECT_H
#define BPFSTASH_TOOL_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libbpfstash.h"

/* The stashes an injection looks in, in order; NULL ones are skipped. */
#define INJECT_MAX_STASHES 2

struct inject_stats {
	uint64_t records;		/* read from the input */
	uint64_t bytes_in;		/* the input's size */
	uint64_t bytes_out;		/* the output's */
	uint64_t ksymbols;		/* KSYMBOL registers of BPF functions */
	uint64_t injected;		/* MMAP2 records put before them */
	uint64_t not_found;		/* in no stash (refused, removed, another machine) */
	uint64_t ambiguous;		/* several entries, nothing to tell them apart */
	uint64_t elsewhere;		/* entries of its name, at other addresses only */
	uint64_t reloaded;		/* of injected: by the entry of a later load, same code */
	uint64_t malformed;		/* KSYMBOL records too long to follow */
	uint64_t elf_written;		/* files written into the build-id cache */
	uint64_t elf_present;		/* already there */
	uint64_t elf_failed;		/* could not be written */
	uint64_t functions;		/* distinct functions injected */
	bool pipe;			/* the input is in perf's pipe format */
	bool used_time;			/* sample times were CLOCK_BOOTTIME */
};

struct inject {
	/* Where entries are looked up (the stash, the archive): may be NULL. */
	struct bpfstash *stash[INJECT_MAX_STASHES];
	/* perf's build-id cache; NULL: no file written (tests, fuzzing). */
	const char *buildid_dir;
	/* Records held while a KSYMBOL waits for its PERF_RECORD_BPF_EVENT. */
	size_t max_pending;
	/* The first error, for the caller to print. */
	char err[512];
	struct inject_stats stats;
	/* "Not found" and "ambiguous" lines on stderr, at most this many. */
	unsigned int max_warnings;
	bool quiet;
};

/*
 * Copy the perf.data on @in_fd to @out_fd with the records above.  A file
 * (perf.data, "PERFILE2") needs a seekable output, which gets the same
 * layout with its data section and feature sections moved, and the
 * injected functions added to the build-id table; a pipe's stream (perf
 * record -o -) gives a stream.  0, or -1 with @inj->err set.
 */
int inject_run(struct inject *inj, int in_fd, int out_fd);

/* The name of a function's module, as in the MMAP2 record and the cache. */
#define INJECT_NAME_LEN (sizeof("[bpfstash_") + BPFSTASH_HEX_LEN + sizeof("_4294967295]"))
void inject_func_name(const char *hash, uint32_t func, char *buf, size_t size);

#endif
