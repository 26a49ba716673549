/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_BPFSTASH_H
#define __PERF_BPFSTASH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "synthetic-events.h"

struct dso;
struct map;
struct machine;

/*
 * A bpfstash entry is a BPF program's JITed functions, line info and BTF,
 * stored by the kernel under a content hash and announced to perf with
 * PERF_RECORD_MMAP3.  perf gives each entry one DSO whose build-id is the
 * hash and whose long name is the entry's directory in the stash, so that
 * the entry, exported as an ELF file (libbpfstash), is found wherever a
 * build-id is found.
 */
#define BPFSTASH_PERF_ROOT	"/sys/fs/bpfstash"

struct perf_tool;

bool bpfstash__mounted(void);
int perf_event__synthesize_bpfstash(const struct perf_tool *tool,
				    perf_event__handler_t process,
				    struct machine *machine);

bool bpfstash__is_dso_name(const char *name);
void dso__set_bpfstash(struct dso *dso);
struct dso *machine__findnew_bpfstash_dso(struct machine *machine,
					  const u8 *hash, size_t hash_size,
					  const char *prog_name);

int dso__load_bpfstash(struct dso *dso, struct map *map);
int bpfstash__cache_build_id(struct dso *dso);

/* Entries found in no store since the start, and a summary of them. */
unsigned int bpfstash__nr_missing(void);
void bpfstash__warn_missing(void);

#endif /* __PERF_BPFSTASH_H */
