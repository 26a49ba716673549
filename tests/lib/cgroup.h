/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroup v2 helpers for the in-guest tests, and writing a string to a file. */
#ifndef BPFSTASH_TEST_CGROUP_H
#define BPFSTASH_TEST_CGROUP_H

#define CG_ROOT "/sys/fs/cgroup"

/* Write @val to @path (no newline added): 0 or -errno. */
int write_file(const char *path, const char *val);
/* Move this process into the cgroup @cg (a directory under CG_ROOT). */
int cg_enter(const char *cg);
/*
 * A number from @cg's @file (@cg may be any directory): the file's only
 * number with @key NULL, else @key's in "key value" lines; -1 if absent.
 */
long long cg_value(const char *cg, const char *file, const char *key);
/* Kernel memory charged to @cg, to the byte: slab and vmalloc. */
long long cg_kmem(const char *cg);

#endif
