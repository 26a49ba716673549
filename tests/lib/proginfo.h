/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the in-guest tests: load a test object, fetch info. */
#ifndef BPFSTASH_PROGINFO_H
#define BPFSTASH_PROGINFO_H

#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

/* Everything bpf_prog_get_info_by_fd() returns for a program, arrays included. */
struct prog_info_full {
	struct bpf_prog_info info;
	__u8 *jited;			/* info.jited_prog_len bytes */
	__u64 *ksyms;			/* info.nr_jited_ksyms */
	__u32 *func_lens;		/* info.nr_jited_func_lens */
	__u8 *func_info;		/* nr_func_info * func_info_rec_size */
	__u8 *line_info;		/* nr_line_info * line_info_rec_size */
	__u64 *jited_line_info;		/* nr_jited_line_info */
};

int prog_info_full_get(int prog_fd, struct prog_info_full *pi);
void prog_info_full_free(struct prog_info_full *pi);

/* Path of a compiled test program: $BPFSTASH_TOP/build/tests/progs/<name>.bpf.o */
const char *test_prog_path(const char *name);

/*
 * Open and load the object <name>.bpf.o; *prog_fd is the fd of its first
 * program.  Returns the object (to be closed with bpf_object__close()), or
 * NULL with errno set.
 */
struct bpf_object *test_prog_load(const char *name, int *prog_fd);

/* The address of @name in /proc/kallsyms, or 0. */
__u64 kallsyms_addr(const char *name);

#endif
