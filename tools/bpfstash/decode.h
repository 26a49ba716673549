/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpfstash decode: finding BPF frames in text (stack traces of oops, WARN
 * and dmesg, bpftrace's kstack, /proc/PID/stack, perf script), and the
 * times they were printed at.  Pure functions of their input, which is
 * untrusted: tests/fuzz/fuzz_decode.c runs them on anything.
 */
#ifndef BPFSTASH_TOOL_DECODE_H
#define BPFSTASH_TOOL_DECODE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libbpfstash.h"

/* Longest kallsyms name (KSYM_NAME_LEN). */
#define DECODE_SYM_MAX 512
/* Longer lines are copied through without being looked at. */
#define DECODE_LINE_MAX (64u << 10)

struct decode_frame {
	bool has_symbol;	/* bpf_prog_<tag>_<name>+off[/size] */
	char symbol[DECODE_SYM_MAX];
	uint64_t off;
	uint64_t size;		/* 0: not given */
	bool has_addr;		/* a kernel address: 0xffff... or ffff..., 16 digits */
	uint64_t addr;
	bool has_time;		/* "[  123.456789]" at the start (after "<N>") */
	struct bpfstash_resolve_opts when;
	bool has_hash;		/* ".../bpfstash/HASH" (perf script's DSO): the entry */
	char hash[BPFSTASH_HEX_LEN + 1];
	/*
	 * Neither a BPF symbol nor an address: the first "sym+off[/size]"
	 * (off decimal, or 0x hex), which may name a BPF address after the
	 * kernel symbol before it (bpftrace's kstack once the program is
	 * gone): kallsyms decides.
	 */
	bool has_ksym;
	char ksym[DECODE_SYM_MAX];
	uint64_t ksym_off;
	bool renamed;		/* decode: has_addr recomputed from ksym */
};

/*
 * Find the first BPF frame of @line (@len bytes, may hold NULs), or a
 * frame of a kernel symbol that kallsyms may show is misnamed; false if
 * neither.
 */
bool decode_scan(const char *line, size_t len, struct decode_frame *f);

/*
 * A time: "123.456" seconds since boot (CLOCK_BOOTTIME), "@1733000000.5"
 * seconds since the epoch, or an ISO 8601 UTC date
 * "2026-12-01T02:08:48[.frac][Z]" (or with a space for the T).  The span
 * is the precision written (123.456: 999999 ns).  0 or -EINVAL.
 */
int decode_parse_time(const char *s, size_t len, struct bpfstash_resolve_opts *o);

/*
 * --archive DIR: bpfstash-gc's archives, extracted into a private
 * directory (@dir) opened as a stash.  decode_archive_open() reports its
 * errors and returns EXIT_*; archives it cannot read are reported, counted
 * in @skipped and left out.
 */
struct decode_archive {
	char dir[PATH_MAX];
	struct bpfstash *stash;
	unsigned int entries;
	unsigned int skipped;
	unsigned int newer;	/* of a format this bpfstash does not read */
	unsigned int unread;	/* left once the extraction limit was reached */
	bool full;
};

int decode_archive_open(const char *dir, struct decode_archive *ar);
void decode_archive_close(struct decode_archive *ar);

/* Where a frame is, from the DWARF line table of an entry's ELF file. */
struct decode_line {
	char file[1024];
	unsigned int line;
	unsigned int col;
};

/*
 * The line of frame @f (which has a hash, and an address or a symbol)
 * from the ELF file debuginfod serves for its hash ($DEBUGINFOD_URLS).
 * 0, -ENOENT if there is no server or it has no such entry or line, or
 * another negative errno.
 */
int decode_debuginfod(const struct decode_frame *f, struct decode_line *out);

/*
 * A kallsyms file (/proc/kallsyms, or a copy from the boot a trace comes
 * from): its symbols by address and by name.
 */
struct decode_ksyms;

/*
 * Read @path.  NULL with errno set if it cannot be read, or ENODATA when
 * every address is 0 (kptr_restrict hides them from this reader).
 */
struct decode_ksyms *decode_ksyms_load(const char *path);
void decode_ksyms_free(struct decode_ksyms *k);
/*
 * Whether "@name+@off" names an address past the end of @name (the next
 * symbol's address): a wrongly named address, its real address in
 * *@addr.  False for a symbol kallsyms lacks, holds more than once, or
 * whose offset lies within it.
 */
bool decode_ksyms_misnamed(const struct decode_ksyms *k, const char *name, uint64_t off,
			   uint64_t *addr);

#endif
