/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BPFSTASH_TEST_ENTRYCHECK_H
#define BPFSTASH_TEST_ENTRYCHECK_H

#include <stddef.h>

/*
 * Assert that the stash entry of the program behind @prog_fd matches what
 * bpf_prog_get_info_by_fd() returns for it, file by file, and that its name
 * is the hash of its content.  Failures are reported as test failures.
 */
void check_entry_matches(int prog_fd, const char *what);

struct bpfstash_meta;
/* meta names this process, this boot and this machine as the entry's maker. */
void check_entry_origin(const struct bpfstash_meta *m, const char *what);
/* meta names this boot and this machine. */
void check_entry_boot(const struct bpfstash_meta *m);

struct bpfstash_entry;

/*
 * Assert that the kernel's text files of entry @e ("info", "functions",
 * "lines") are byte for byte what libbpfstash renders from its binary
 * files, and that "lines" names a file and a source line for every record
 * of an entry with BTF.  check_entry_matches() does this too.
 */
void check_entry_views(const struct bpfstash_entry *e, const char *what);

/*
 * check_entry_views() on every entry of the mounted stash, or on @max of
 * them spread over all when there are more: the entries of every program a
 * test loaded, loaded or not.  Returns the number checked.
 */
int check_stash_views(const char *what, size_t max);

/*
 * Assert that the kernel's index file (read whole, from one open) lists
 * every entry the root lists, in the same order, with its meta's fields
 * and its funcs file's ranges and names, as read from each entry's own
 * files.  Sets *@generation to the file's, *@index_s and *@entries_s to
 * the time the index took and the time reading each entry's meta and
 * funcs took.  Returns the entries compared, or -1 (the test failed).
 */
int check_index_file(unsigned long long *generation, double *index_s, double *entries_s);

#endif
