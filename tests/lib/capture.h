/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Replaying the exact BPF_PROG_LOAD that libbpf issues for an object's
 * program: libbpf calls syscall(2), and the test binary's syscall() comes
 * first in symbol resolution, so it sees the attributes.  They point into
 * the object, which stays open, so the load can be repeated at will, for
 * example once per fail-nth step.
 */
#ifndef BPFSTASH_TEST_CAPTURE_H
#define BPFSTASH_TEST_CAPTURE_H

#include <linux/bpf.h>
#include <bpf/libbpf.h>

struct captured_prog {
	struct bpf_object *obj;
	union bpf_attr attr;
};

/* Open and load tests/progs/@name.bpf.o, capturing its first program's load. */
int capture_prog_load(const char *name, struct captured_prog *cp);
/* Issue the captured load again; returns the new fd or -1 with errno. */
int capture_prog_reload(const struct captured_prog *cp);
void capture_prog_close(struct captured_prog *cp);

#endif
