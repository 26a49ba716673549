/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BPFSTASH_TEST_ENTRYCHECK_H
#define BPFSTASH_TEST_ENTRYCHECK_H

/*
 * Assert that the stash entry of the program behind @prog_fd matches what
 * bpf_prog_get_info_by_fd() returns for it, file by file, and that its name
 * is the hash of its content.  Failures are reported as test failures.
 */
void check_entry_matches(int prog_fd, const char *what);

#endif
